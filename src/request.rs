//! A lean, typed view of an AdmissionRequest.
//!
//! Only what the rules read is parsed: operation, kind, resource, whether `requestResource` is
//! there, namespace, name, subresource, requester, the DeleteOptions, and of each object its
//! `metadata` (name, labels, finalizers, deletion; annotations as raw values, of which only the
//! guarded ones are decoded, on demand). Every other field — the `spec` of a 1 MiB CustomResourceDefinition
//! included — is kept as the raw JSON text it was sent as, a slice of the payload, never built
//! into a tree: the rule that finishes deletions compares it, and workloads' templates are read
//! from it on demand ([`crate::template`]). The strings that are kept borrow from the payload
//! unless they hold escapes.

use std::borrow::{Borrow, Cow};
use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;

use serde::de::{self, MapAccess};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

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

/// An object in a request: its metadata, parsed, and its other fields as they were sent.
#[derive(Debug, Default)]
pub struct Object<'a> {
    /// The object's metadata.
    pub metadata: Metadata<'a>,
    /// The other top-level fields (`apiVersion`, `spec`, `data`, `status`, …), unparsed.
    pub fields: Vec<(Text<'a>, &'a RawValue)>,
    /// The workload templates read from `spec`, once, on demand ([`crate::template`]).
    pub(crate) templates: OnceCell<Result<Vec<crate::template::Template<'a>>, String>>,
    /// The decoded values of the annotations that owner marks name, once, on demand.
    marks: OnceCell<Result<Labels<'a>, String>>,
}

impl<'a> Object<'a> {
    /// The string values of the annotations `keys` the object has, decoded on the first call
    /// and kept: every call of one evaluation names the same keys, the settings' owner marks.
    /// Only these are decoded: an annotation such as `last-applied-configuration` can be as
    /// large as the object.
    pub fn mark_annotations<'k>(
        &self,
        keys: impl Iterator<Item = &'k str>,
    ) -> Result<&Labels<'a>, String> {
        let decoded = self.marks.get_or_init(|| {
            let mut values = Labels::new();
            for key in keys {
                if let Some((key, raw)) = self.metadata.annotations.get_key_value(key) {
                    let value: Text<'a> = serde_json::from_str(raw.get())
                        .map_err(|error| format!("metadata.annotations.{key}: {error}"))?;
                    values.insert(key.clone(), value);
                }
            }
            Ok(values)
        });
        decoded.as_ref().map_err(Clone::clone)
    }

    /// A top-level field, as it was sent.
    pub fn field(&self, name: &str) -> Option<&'a RawValue> {
        self.fields
            .iter()
            .find(|(key, _)| &**key == name)
            .map(|(_, value)| *value)
    }
}

/// The parts of `metadata` the policy reads.
#[derive(Debug, Default)]
pub struct Metadata<'a> {
    /// The object's name.
    pub name: Text<'a>,
    /// The object's labels.
    pub labels: Labels<'a>,
    /// The object's annotations, their values left unparsed: an annotation such as
    /// `kubectl.kubernetes.io/last-applied-configuration` can be as large as the object.
    pub annotations: Annotations<'a>,
    /// The finalizers that hold the object's deletion.
    pub finalizers: Vec<Text<'a>>,
    /// When the object's deletion began; set from then on.
    pub deletion_timestamp: Option<&'a RawValue>,
    /// The grace period of a deletion that has begun, in seconds.
    pub deletion_grace_period_seconds: Option<i64>,
    /// Every other metadata field, as it was sent.
    pub fields: Vec<(Text<'a>, &'a RawValue)>,
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

impl<'de: 'a, 'a> Deserialize<'de> for Object<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<'a>(PhantomData<Object<'a>>);

        impl<'de: 'a, 'a> serde::de::Visitor<'de> for ObjectVisitor<'a> {
            type Value = Object<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("struct Object")
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Object<'a>, M::Error> {
                let mut metadata = None;
                let mut fields = Vec::new();
                while let Some(key) = map.next_key::<Text<'a>>()? {
                    if &*key == "metadata" {
                        if metadata.is_some() {
                            return Err(de::Error::duplicate_field("metadata"));
                        }
                        let value: Option<Metadata> = map.next_value()?;
                        metadata = Some(value.unwrap_or_default());
                    } else {
                        fields.push((key, map.next_value()?));
                    }
                }
                Ok(Object {
                    metadata: metadata.unwrap_or_default(),
                    fields,
                    templates: OnceCell::new(),
                    marks: OnceCell::new(),
                })
            }
        }

        deserializer.deserialize_map(ObjectVisitor(PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Metadata<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MetadataVisitor<'a>(PhantomData<Metadata<'a>>);

        impl<'de: 'a, 'a> serde::de::Visitor<'de> for MetadataVisitor<'a> {
            type Value = Metadata<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("struct Metadata")
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Metadata<'a>, M::Error> {
                /// Reads a field into its slot, once; `null` reads as `Some(None)`.
                fn once<'de, M: MapAccess<'de>, T: Deserialize<'de>>(
                    map: &mut M,
                    slot: &mut Option<Option<T>>,
                    name: &'static str,
                ) -> Result<(), M::Error> {
                    if slot.is_some() {
                        return Err(de::Error::duplicate_field(name));
                    }
                    *slot = Some(map.next_value()?);
                    Ok(())
                }
                let (mut name, mut labels, mut annotations, mut finalizers) =
                    (None, None, None, None);
                let (mut deletion_timestamp, mut deletion_grace_period_seconds) = (None, None);
                let mut fields = Vec::new();
                while let Some(key) = map.next_key::<Text<'a>>()? {
                    match &*key {
                        "name" => once(&mut map, &mut name, "name")?,
                        "labels" => once(&mut map, &mut labels, "labels")?,
                        "annotations" => once(&mut map, &mut annotations, "annotations")?,
                        "finalizers" => once(&mut map, &mut finalizers, "finalizers")?,
                        "deletionTimestamp" => {
                            once(&mut map, &mut deletion_timestamp, "deletionTimestamp")?
                        }
                        "deletionGracePeriodSeconds" => once(
                            &mut map,
                            &mut deletion_grace_period_seconds,
                            "deletionGracePeriodSeconds",
                        )?,
                        _ => fields.push((key, map.next_value()?)),
                    }
                }
                Ok(Metadata {
                    name: name.flatten().unwrap_or_default(),
                    labels: labels.flatten().unwrap_or_default(),
                    annotations: annotations.flatten().unwrap_or_default(),
                    finalizers: finalizers.flatten().unwrap_or_default(),
                    deletion_timestamp: deletion_timestamp.flatten(),
                    deletion_grace_period_seconds: deletion_grace_period_seconds.flatten(),
                    fields,
                })
            }
        }

        deserializer.deserialize_map(MetadataVisitor(PhantomData))
    }
}

/// Whether a field is there and not `null`, whatever it holds.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(Option::<de::IgnoredAny>::deserialize(deserializer)?.is_some())
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
    fn metadata_reads_deletion_and_finalizers_and_keeps_the_rest_raw() {
        let object: Object = serde_json::from_str(
            r#"{"apiVersion": "v1", "kind": "Pod", "spec": {"nodeName": "n1"},
                "metadata": {"name": "x", "uid": "u", "finalizers": ["a", "b"],
                             "deletionTimestamp": "2026-12-01T10:00:00Z",
                             "deletionGracePeriodSeconds": 30, "labels": null}}"#,
        )
        .unwrap();
        let metadata = &object.metadata;
        assert_eq!(&*metadata.name, "x");
        assert_eq!(metadata.finalizers.len(), 2);
        assert_eq!(metadata.deletion_grace_period_seconds, Some(30));
        assert!(metadata.deletion_timestamp.is_some() && metadata.labels.is_empty());
        assert_eq!(metadata.fields.len(), 1);
        assert_eq!(
            object.field("spec").map(RawValue::get),
            Some(r#"{"nodeName": "n1"}"#)
        );
        assert_eq!(object.fields.len(), 3);
        let alive: Object =
            serde_json::from_str(r#"{"metadata": {"deletionTimestamp": null}}"#).unwrap();
        assert!(alive.metadata.deletion_timestamp.is_none());
        for (json, error) in [
            (
                r#"{"metadata": {"labels": {}, "labels": {}}}"#,
                "duplicate field `labels`",
            ),
            (
                r#"{"metadata": {}, "metadata": {}}"#,
                "duplicate field `metadata`",
            ),
            (
                r#"{"metadata": {"finalizers": "a"}}"#,
                "invalid type: string \"a\", expected a sequence",
            ),
        ] {
            let got = serde_json::from_str::<Object>(json)
                .unwrap_err()
                .to_string();
            assert!(got.starts_with(error), "{json}: {got}");
        }
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
