//! A lean, typed view of an AdmissionRequest.
//!
//! Only what the rules read is kept: operation, kind, namespace, name, subresource, requester
//! and each object's `metadata.{name,namespace,labels}`. Everything else — the `spec` of a 1 MiB
//! CustomResourceDefinition included — is skipped while parsing, never built into a tree, and the
//! strings that are kept borrow from the payload unless they hold escapes.

use std::borrow::{Borrow, Cow};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// The fields of an AdmissionRequest the policy reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest<'a> {
    /// The kind of the object (`group`, `version`, `kind`).
    #[serde(borrow)]
    pub kind: GroupVersionKind<'a>,
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
}

impl AdmissionRequest<'_> {
    /// Whether the request is Kubewarden's audit scanner replaying a stored object: a CREATE
    /// with no user name. The API server names every requester, `system:anonymous` at least;
    /// the scanner (`newAdmissionRequest` in kubewarden-controller's
    /// `internal/audit-scanner/scanner`) sends an empty `userInfo`.
    pub fn is_audit_replay(&self) -> bool {
        self.operation == Operation::Create && self.user_info.username.is_empty()
    }

    /// Whether the request targets a subresource (`status`, `scale`, …) of the object.
    pub fn is_subresource(&self) -> bool {
        !self.sub_resource.is_empty()
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

/// An object in a request: only its metadata is read.
#[derive(Debug, Default, Deserialize)]
pub struct Object<'a> {
    /// The object's metadata.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub metadata: Metadata<'a>,
}

/// The parts of `metadata` the policy reads.
#[derive(Debug, Default, Deserialize)]
pub struct Metadata<'a> {
    /// The object's name.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub name: Text<'a>,
    /// The object's labels.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub labels: Labels<'a>,
    /// The object's annotations, their values left unparsed: an annotation such as
    /// `kubectl.kubernetes.io/last-applied-configuration` can be as large as the object.
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    pub annotations: Annotations<'a>,
}

impl Metadata<'_> {
    /// The string value of an annotation, if the object has it.
    pub fn annotation(&self, key: &str) -> Result<Option<Text<'_>>, String> {
        let Some(raw) = self.annotations.get(key) else {
            return Ok(None);
        };
        serde_json::from_str(raw.get())
            .map(Some)
            .map_err(|error| format!("metadata.annotations.{key}: {error}"))
    }
}

/// An object's labels.
pub type Labels<'a> = BTreeMap<Text<'a>, Text<'a>>;

/// An object's annotations, each value the raw JSON text it was sent as.
pub type Annotations<'a> = BTreeMap<Text<'a>, &'a RawValue>;

/// A JSON string, borrowed from the payload when it holds no escapes and copied otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text<'a>(pub Cow<'a, str>);

impl Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text<'_> {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'a> From<&'a str> for Text<'a> {
    fn from(text: &'a str) -> Self {
        Text(Cow::Borrowed(text))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;

        impl<'de> serde::de::Visitor<'de> for TextVisitor {
            type Value = Text<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(text)))
            }

            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(text.to_owned())))
            }

            fn visit_string<E>(self, text: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(text)))
            }
        }

        deserializer.deserialize_str(TextVisitor)
    }
}

/// Reads an optional field whose `null` means the same as its absence.
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
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
    fn escaped_strings_are_read_too() {
        let request = read(
            r#"{"kind": {"kind": "ConfigMap"}, "operation": "CREATE",
                "object": {"metadata": {"labels": {"app\u0049D": "Cluster\u0045xtension.a"}}}}"#,
        );
        let labels = &request.object.unwrap().metadata.labels;
        assert_eq!(
            labels.get("appID").map(|v| &**v),
            Some("ClusterExtension.a")
        );
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
