//! The AdmissionRequest itself: operation, kind, resource, namespace, name, subresource,
//! requester, the DeleteOptions, and where its object lives.

use std::fmt;

use serde::Deserialize;

use super::text::{null_as_default, present};
use super::{Object, Text};

/// The fields of an AdmissionRequest the policy reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest<'a> {
    /// The kind of the object (`group`, `version`, `kind`).
    #[serde(borrow)]
    pub kind: GroupVersionKind<'a>,
    /// The resource written (`group`, `resource`): what RBAC, and the trusted control plane's
    /// table, name.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub resource: GroupVersionResource<'a>,
    /// Whether the request names the resource the client asked for (`requestResource`): the
    /// API server always does, Kubewarden's audit scanner never.
    #[serde(default, rename = "requestResource", deserialize_with = "present")]
    pub names_request_resource: bool,
    /// CREATE, UPDATE, DELETE or CONNECT.
    pub operation: Operation,
    /// The namespace of the object; empty for cluster-scoped objects.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub namespace: Text<'a>,
    /// The name of the object; may be empty on CREATE with `generateName`.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub name: Text<'a>,
    /// The subresource (`status`, `scale`, …) when the request targets one.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub sub_resource: Text<'a>,
    /// Who is asking.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub user_info: UserInfo<'a>,
    /// The object as it will be stored (absent on DELETE).
    #[serde(default, borrow)]
    pub object: Option<Object<'a>>,
    /// The object as it is stored now (UPDATE and DELETE).
    #[serde(default, borrow)]
    pub old_object: Option<Object<'a>>,
    /// The operation's options; on DELETE, the DeleteOptions the rules read.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub options: DeleteOptions<'a>,
}

impl AdmissionRequest<'_> {
    /// Whether the request is Kubewarden's audit scanner replaying a stored object, which no
    /// request of the API server can pass for: a CREATE with no user name, no groups and no
    /// `requestResource`. The scanner (`newAdmissionRequest` in kubewarden-controller's
    /// `internal/audit-scanner/scanner`) sets none of them (`userInfo` arrives as `{}`); the API
    /// server always sets `requestResource` (`CreateV1AdmissionReview`,
    /// `k8s.io/apiserver/pkg/admission/plugin/webhook/request`) and gives every requester it
    /// authenticates `system:authenticated` or `system:unauthenticated`
    /// (`pkg/authentication/group`), while an empty user name is not refused by every
    /// authenticator. Anything else is judged in full.
    pub fn is_audit_replay(&self) -> bool {
        self.operation == Operation::Create
            && self.user_info.username.is_empty()
            && self.user_info.groups.is_empty()
            && !self.names_request_resource
    }

    /// Whether the request targets a subresource (`status`, `scale`, …) of the object.
    pub fn is_subresource(&self) -> bool {
        !self.sub_resource.is_empty()
    }

    /// Whether the body is the object as stored, templates included: a write of the object
    /// itself, a `scale` write rewritten as one of its target (`crate::scale`), or a Binding
    /// rewritten as the UPDATE of its Pod (`crate::binding`; the API server never sends a
    /// Binding's UPDATE).
    pub fn writes_the_object(&self) -> bool {
        !self.is_subresource()
            || (self.scaled().is_some() && !self.body_is_a_scale())
            || (self.targets(BINDING) && self.operation == Operation::Update)
    }

    /// The `(apiVersion, kind)` of the object whose `scale` the request targets, when it is of
    /// a kind of [`SCALED`].
    pub fn scaled(&self) -> Option<(&'static str, &'static str)> {
        let (_, _, api_version, kind) = SCALED.iter().find(|(group, resource, ..)| {
            *self.resource.group == **group && *self.resource.resource == **resource
        })?;
        (*self.sub_resource == *"scale").then_some((api_version, kind))
    }

    /// Whether the request targets this subresource of a core resource, as
    /// `(resource, subresource)`.
    pub fn targets(&self, (resource, subresource): (&str, &str)) -> bool {
        self.resource.group.is_empty()
            && *self.resource.resource == *resource
            && *self.sub_resource == *subresource
    }

    /// Whether the request's body is an `autoscaling` `Scale`, the body of every `scale`
    /// subresource: built from the object's replicas, it carries none of the object's labels,
    /// and the API server persists none of its own. (The other bodies of another kind than their
    /// object — `Binding`, `Eviction`, `TokenRequest` — come in CREATEs.)
    pub fn body_is_a_scale(&self) -> bool {
        &*self.kind.group == "autoscaling" && &*self.kind.kind == "Scale"
    }

    /// Where the request's object lives.
    pub fn object_scope(&self) -> ObjectScope<'_> {
        ObjectScope::of(&self.kind.group, &self.kind.kind, &self.namespace)
    }
}

/// The subresources whose UPDATE writes what an owner declared, in a body that is the object:
/// a Pod's ephemeral containers (`kubectl debug`) and its resources (`EphemeralContainersREST`,
/// `ResizeREST` in `pkg/registry/core/pod/storage/storage.go`).
pub const DECLARING_SUBRESOURCES: [(&str, &str); 2] =
    [("pods", "ephemeralcontainers"), ("pods", "resize")];

/// The subresource whose CREATE copies its body's annotations — and, in recent versions, its
/// labels — onto a Pod: a Binding (`BindingREST.Create`, `pkg/registry/core/pod/storage`).
pub const BINDING: (&str, &str) = ("pods", "binding");

/// The `(apiVersion, kind)` of what a Binding binds, which the policy reads under
/// `writes: Owner` to judge a Binding that carries labels or annotations (`crate::binding`).
pub const BOUND: (&str, &str) = ("v1", "Pod");

/// The kinds whose `scale` the policy judges under `writes: Owner`, from the object it reads
/// (`crate::scale`), as `(group, resource, apiVersion, kind)`: Kubernetes' own workloads with
/// replicas.
pub const SCALED: [(&str, &str, &str, &str); 4] = [
    ("apps", "deployments", "apps/v1", "Deployment"),
    ("apps", "replicasets", "apps/v1", "ReplicaSet"),
    ("apps", "statefulsets", "apps/v1", "StatefulSet"),
    ("", "replicationcontrollers", "v1", "ReplicationController"),
];

/// Where an object lives, as far as ownership is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectScope<'a> {
    /// A cluster-scoped object: a CustomResourceDefinition, a ClusterRole, a Namespace, …
    Cluster,
    /// An object in a namespace.
    Namespace(&'a str),
}

impl<'a> ObjectScope<'a> {
    /// The scope of a request's object. A `Namespace` is cluster-scoped whatever namespace the
    /// request carries (the API server sets it to the Namespace's own name).
    pub fn of(group: &str, kind: &str, namespace: &'a str) -> ObjectScope<'a> {
        if namespace.is_empty() || (group.is_empty() && kind == "Namespace") {
            ObjectScope::Cluster
        } else {
            ObjectScope::Namespace(namespace)
        }
    }

    /// The object's namespace as messages and tracking ids write it: empty when cluster-scoped.
    pub fn namespace(self) -> &'a str {
        match self {
            ObjectScope::Cluster => "",
            ObjectScope::Namespace(namespace) => namespace,
        }
    }
}

/// The admission operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Operation {
    /// An object is created.
    Create,
    /// An object is replaced or patched.
    Update,
    /// An object is deleted.
    Delete,
    /// A connection to a subresource (exec, attach, port-forward).
    Connect,
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        })
    }
}

/// The kind of the object in a request.
#[derive(Debug, Default, Deserialize)]
pub struct GroupVersionKind<'a> {
    /// The API group; empty for the core group.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub group: Text<'a>,
    /// The kind, such as `CustomResourceDefinition`.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub kind: Text<'a>,
}

/// The resource of the request, as RBAC names it.
#[derive(Debug, Default, Deserialize)]
pub struct GroupVersionResource<'a> {
    /// The API group; empty for the core group.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub group: Text<'a>,
    /// The resource, such as `endpointslices`.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub resource: Text<'a>,
}

/// What a DELETE asks of the API server, as far as finishing a deletion is concerned. The
/// options of other operations (CreateOptions, UpdateOptions) have none of these fields.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteOptions<'a> {
    /// The grace period asked for, in seconds.
    #[serde(default)]
    pub grace_period_seconds: Option<i64>,
    /// `Orphan`, `Background` or `Foreground`.
    #[serde(default, borrow)]
    pub propagation_policy: Option<Text<'a>>,
    /// The deprecated form of `propagationPolicy: Orphan`.
    #[serde(default)]
    pub orphan_dependents: Option<bool>,
}

/// The requester, as authenticated by the API server.
#[derive(Debug, Default, Deserialize)]
pub struct UserInfo<'a> {
    /// The user name, such as `system:serviceaccount:ns:name`.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub username: Text<'a>,
    /// The groups the user belongs to.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub groups: Vec<Text<'a>>,
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    fn read(json: &str) -> AdmissionRequest<'_> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn reads_only_the_fields_the_rules_need_and_borrows_them() {
        let request = read(
            r#"{
                "uid": "1", "kind": {"group": "apiextensions.k8s.io", "version": "v1",
                                     "kind": "CustomResourceDefinition"},
                "operation": "UPDATE", "name": "foos.example.com",
                "userInfo": {"username": "alice", "groups": ["dev", "system:authenticated"]},
                "object": {"metadata": {"name": "foos.example.com", "labels": {"appID": "ClusterExtension.a"}},
                           "spec": {"versions": [{"schema": {"deep": [1, 2, {"x": null}]}}]}},
                "oldObject": {"metadata": {"name": "foos.example.com", "labels": null}},
                "options": null
            }"#,
        );
        assert_eq!(request.operation, Operation::Update);
        assert_eq!(&*request.kind.kind, "CustomResourceDefinition");
        assert_eq!(&*request.namespace, "");
        assert_eq!(&*request.user_info.username, "alice");
        assert_eq!(request.user_info.groups.len(), 2);
        let labels = &request.object.as_ref().unwrap().metadata.labels;
        let owner = labels.get("appID").unwrap();
        assert_eq!(&**owner, "ClusterExtension.a");
        assert!(matches!(owner.0, Cow::Borrowed(_)));
        let old = request.old_object.as_ref().unwrap();
        assert!(old.metadata.labels.is_empty());
    }

    #[test]
    fn object_scope_follows_the_request_namespace_except_for_namespaces() {
        #[rustfmt::skip]
        let rows = [
            ("apiextensions.k8s.io", "CustomResourceDefinition", "", ObjectScope::Cluster),
            ("", "ConfigMap", "team-a", ObjectScope::Namespace("team-a")),
            ("batch", "Job", "team-a", ObjectScope::Namespace("team-a")),
            ("", "Namespace", "team-a", ObjectScope::Cluster),
            ("", "Namespace", "", ObjectScope::Cluster),
            ("example.com", "Namespace", "team-a", ObjectScope::Namespace("team-a")),
        ];
        for (group, kind, namespace, expected) in rows {
            assert_eq!(
                ObjectScope::of(group, kind, namespace),
                expected,
                "{group}/{kind}"
            );
        }
    }
}
