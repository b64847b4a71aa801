//! Owner values: what an object's owner label, and its companion kind label, say about its owner.
//!
//! Three shapes are read, as an [`OwnerLabel`] entry configures:
//! - kind in the value: `ClusterExtension.<name>`, `Extension.<namespace>.<name>`;
//! - kind in a companion label (`kindKey`): value `<name>` or `<namespace>.<name>`;
//! - opaque ids (no kinds configured): any non-empty value.

use std::fmt;

use serde::Deserialize;

use crate::request::Labels;

/// One guarded owner label, and how to read an owner out of it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OwnerLabel {
    /// The label whose value names the owner.
    pub key: String,
    /// A companion label that holds the owner's kind; without it the kind leads the value.
    #[serde(default)]
    pub kind_key: Option<String>,
    /// Owner kinds that may own cluster-scoped objects and objects in any namespace.
    #[serde(default)]
    pub cluster_kinds: Vec<String>,
    /// Owner kinds confined to objects in their own namespace.
    #[serde(default)]
    pub namespaced_kinds: Vec<String>,
}

impl OwnerLabel {
    /// Whether owner values carry a kind (and so obey the scope rules) or are opaque ids.
    pub fn has_kinds(&self) -> bool {
        !self.cluster_kinds.is_empty() || !self.namespaced_kinds.is_empty()
    }

    /// The label keys this entry guards, with the setting that names each.
    pub fn keys(&self) -> impl Iterator<Item = (&'static str, &str)> {
        std::iter::once(("key", self.key.as_str()))
            .chain(self.kind_key.as_deref().map(|key| ("kindKey", key)))
    }
}

/// What an object's labels say for one owner label entry, exactly as written.
///
/// Two claims are the same owner when they are equal: an unchanged claim is never re-judged.
/// Equality compares what the labels say, not how the entry reads them (`paired`), so that the
/// missing claim of a side without the labels — a CREATE's old side, a template new in an
/// update — equals an empty claim of any entry.
#[derive(Debug, Clone, Copy, Default, Eq)]
pub struct Claim<'a> {
    /// The owner label's value.
    pub value: Option<&'a str>,
    /// The companion kind label's value (only with `kindKey`).
    pub kind: Option<&'a str>,
    /// Whether the entry reads a kind/name pair (`kindKey` is set).
    pub paired: bool,
}

impl PartialEq for Claim<'_> {
    fn eq(&self, other: &Self) -> bool {
        (self.value, self.kind) == (other.value, other.kind)
    }
}

/// An owner, read from a valid claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner<'a> {
    /// An owner of a cluster-level kind: may own objects anywhere.
    Cluster { kind: &'a str, name: &'a str },
    /// An owner of a namespaced kind: may own objects in its own namespace only.
    Namespaced {
        kind: &'a str,
        namespace: &'a str,
        name: &'a str,
    },
    /// An opaque owner id: scope rules do not apply.
    Opaque { id: &'a str },
}

/// Why a claim names no valid owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvalidOwner {
    /// The owner label is set but empty.
    Empty,
    /// The kind is not one of the entry's configured kinds.
    UnknownKind { kind: String, expected: String },
    /// A kind without the rest of the value.
    Incomplete { expected: String },
    /// Only one label of a kind/name pair is set.
    HalfPair { present: String, missing: String },
}

impl<'a> Claim<'a> {
    /// Reads the claim an object's labels make for one entry.
    pub fn read(entry: &OwnerLabel, labels: &'a Labels<'_>) -> Claim<'a> {
        let get = |key: &str| labels.get(key).map(|value| &**value);
        Claim {
            value: get(&entry.key),
            kind: entry.kind_key.as_deref().and_then(get),
            paired: entry.kind_key.is_some(),
        }
    }

    /// The claim an entry's labels make for an owner id (see [`Claim::id`]).
    pub fn of_owner(entry: &OwnerLabel, id: &'a str) -> Claim<'a> {
        let paired = entry.kind_key.is_some();
        let (kind, value) = match id.split_once('.') {
            Some((kind, value)) if paired => (Some(kind), value),
            _ => (None, id),
        };
        Claim {
            value: Some(value),
            kind,
            paired,
        }
    }

    /// The owner id identities name owners by: the value, or `kind.value` for a kind/name pair
    /// — the same text as the kind-in-value shape.
    pub fn id(&self) -> String {
        match (self.kind, self.value) {
            (Some(kind), value) => format!("{kind}.{}", value.unwrap_or("")),
            (None, value) => value.unwrap_or("").to_owned(),
        }
    }

    /// The labels that carry this claim, for stamping.
    pub fn labels<'e>(&self, entry: &'e OwnerLabel) -> Vec<(&'e str, &'a str)> {
        let value = self.value.map(|value| (entry.key.as_str(), value));
        let kind = entry.kind_key.as_deref().zip(self.kind);
        value.into_iter().chain(kind).collect()
    }

    /// Whether the object claims no owner at all.
    pub fn is_none(&self) -> bool {
        self.value.is_none() && self.kind.is_none()
    }

    /// Reads the owner out of the claim, or says why it names none.
    pub fn owner(&self, entry: &OwnerLabel) -> Result<Owner<'a>, InvalidOwner> {
        let (kind, rest) = match (&entry.kind_key, self.kind, self.value) {
            (_, _, Some("")) => return Err(InvalidOwner::Empty),
            _ if !entry.has_kinds() => {
                return Ok(Owner::Opaque {
                    id: self.value.unwrap_or(""),
                });
            }
            (None, _, Some(value)) => value.split_once('.').unwrap_or((value, "")),
            (Some(_), Some(kind), Some(value)) => (kind, value),
            (Some(kind_key), kind, value) => {
                let (present, missing) = match (kind, value) {
                    (Some(_), _) => (kind_key, &entry.key),
                    _ => (&entry.key, kind_key),
                };
                return Err(InvalidOwner::HalfPair {
                    present: present.clone(),
                    missing: missing.clone(),
                });
            }
            (None, _, None) => return Err(InvalidOwner::Empty),
        };
        let kind_of = |list: &[String]| list.iter().any(|known| known == kind);
        if kind_of(&entry.cluster_kinds) {
            return match rest {
                "" => Err(InvalidOwner::Incomplete {
                    expected: expected_form(entry, kind, false),
                }),
                name => Ok(Owner::Cluster { kind, name }),
            };
        }
        if kind_of(&entry.namespaced_kinds) {
            return match rest.split_once('.') {
                Some((namespace, name)) if !namespace.is_empty() && !name.is_empty() => {
                    Ok(Owner::Namespaced {
                        kind,
                        namespace,
                        name,
                    })
                }
                _ => Err(InvalidOwner::Incomplete {
                    expected: expected_form(entry, kind, true),
                }),
            };
        }
        Err(InvalidOwner::UnknownKind {
            kind: kind.to_owned(),
            expected: expected_forms(entry),
        })
    }
}

/// How a valid value of `kind` looks for this entry.
fn expected_form(entry: &OwnerLabel, kind: &str, namespaced: bool) -> String {
    let rest = if namespaced {
        "<namespace>.<name>"
    } else {
        "<name>"
    };
    match &entry.kind_key {
        None => format!("{kind}.{rest}"),
        Some(kind_key) => format!("{kind_key}={kind} with {}={rest}", entry.key),
    }
}

/// Every valid form for this entry, for messages about unknown kinds.
fn expected_forms(entry: &OwnerLabel) -> String {
    let cluster = entry
        .cluster_kinds
        .iter()
        .map(|kind| expected_form(entry, kind, false));
    let namespaced = entry
        .namespaced_kinds
        .iter()
        .map(|kind| expected_form(entry, kind, true));
    cluster.chain(namespaced).collect::<Vec<_>>().join(" or ")
}

impl fmt::Display for Claim<'_> {
    /// `none`, the value, or `kind.value` for a kind/name pair — the same text as the
    /// kind-in-value shape, so an owner reads alike whichever labels carry it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind, self.value) {
            (None, None) => f.write_str("none"),
            (None, Some(value)) if self.paired => write!(f, "name {value:?} without a kind"),
            (None, Some(value)) => write!(f, "{value:?}"),
            (Some(kind), Some(value)) => write!(f, "\"{kind}.{value}\""),
            (Some(kind), None) => write!(f, "kind {kind:?} without a name"),
        }
    }
}

impl fmt::Display for InvalidOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidOwner::Empty => {
                f.write_str("the owner label is empty; name an owner or remove it")
            }
            InvalidOwner::UnknownKind { kind, expected } => {
                write!(f, "{kind:?} is not a configured owner kind; use {expected}")
            }
            InvalidOwner::Incomplete { expected } => {
                write!(f, "the owner is incomplete; use {expected}")
            }
            InvalidOwner::HalfPair { present, missing } => write!(
                f,
                "label {present} is set without {missing}; both are set and removed together"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Text;

    type Pairs<'a> = &'a [(&'a str, &'a str)];

    fn entry(json: &str) -> OwnerLabel {
        serde_json::from_str(json).unwrap()
    }

    fn labels<'a>(pairs: &[(&'a str, &'a str)]) -> Labels<'a> {
        pairs
            .iter()
            .map(|&(k, v)| (Text::from(k), Text::from(v)))
            .collect()
    }

    const APP_ID: &str = r#"{"key": "appID", "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}"#;
    const OLM: &str = r#"{"key": "olm.operatorframework.io/owner-name",
        "kindKey": "olm.operatorframework.io/owner-kind",
        "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}"#;
    const CAMEL: &str = r#"{"key": "camel.apache.org/operator.id"}"#;
    const OLM_NAME: &str = "olm.operatorframework.io/owner-name";
    const OLM_KIND: &str = "olm.operatorframework.io/owner-kind";

    #[test]
    fn owner_values_of_each_shape() {
        let cluster = |kind, name| Ok(Owner::Cluster { kind, name });
        let namespaced = |kind, namespace, name| {
            Ok(Owner::Namespaced {
                kind,
                namespace,
                name,
            })
        };
        #[rustfmt::skip]
        let rows: &[(&str, Pairs, Result<Owner, &str>)] = &[
            // kind in the value
            (APP_ID, &[("appID", "ClusterExtension.cert-manager")], cluster("ClusterExtension", "cert-manager")),
            (APP_ID, &[("appID", "ClusterExtension.a.b")], cluster("ClusterExtension", "a.b")),
            (APP_ID, &[("appID", "Extension.team-a.argocd")], namespaced("Extension", "team-a", "argocd")),
            (APP_ID, &[("appID", "Extension.team-a.my.op")], namespaced("Extension", "team-a", "my.op")),
            (APP_ID, &[("appID", "")], Err("the owner label is empty; name an owner or remove it")),
            (APP_ID, &[("appID", "Operator.x")], Err(r#""Operator" is not a configured owner kind; use ClusterExtension.<name> or Extension.<namespace>.<name>"#)),
            (APP_ID, &[("appID", "cert-manager")], Err(r#""cert-manager" is not a configured owner kind; use ClusterExtension.<name> or Extension.<namespace>.<name>"#)),
            (APP_ID, &[("appID", "ClusterExtension")], Err("the owner is incomplete; use ClusterExtension.<name>")),
            (APP_ID, &[("appID", "ClusterExtension.")], Err("the owner is incomplete; use ClusterExtension.<name>")),
            (APP_ID, &[("appID", "Extension.team-a")], Err("the owner is incomplete; use Extension.<namespace>.<name>")),
            (APP_ID, &[("appID", "Extension..x")], Err("the owner is incomplete; use Extension.<namespace>.<name>")),
            // kind in a companion label
            (OLM, &[(OLM_KIND, "ClusterExtension"), (OLM_NAME, "argocd")], cluster("ClusterExtension", "argocd")),
            (OLM, &[(OLM_KIND, "Extension"), (OLM_NAME, "team-a.argocd")], namespaced("Extension", "team-a", "argocd")),
            (OLM, &[(OLM_KIND, "Extension"), (OLM_NAME, "argocd")], Err("the owner is incomplete; use olm.operatorframework.io/owner-kind=Extension with olm.operatorframework.io/owner-name=<namespace>.<name>")),
            (OLM, &[(OLM_KIND, "Operator"), (OLM_NAME, "argocd")], Err(r#""Operator" is not a configured owner kind; use olm.operatorframework.io/owner-kind=ClusterExtension with olm.operatorframework.io/owner-name=<name> or olm.operatorframework.io/owner-kind=Extension with olm.operatorframework.io/owner-name=<namespace>.<name>"#)),
            (OLM, &[(OLM_NAME, "argocd")], Err("label olm.operatorframework.io/owner-name is set without olm.operatorframework.io/owner-kind; both are set and removed together")),
            (OLM, &[(OLM_KIND, "ClusterExtension")], Err("label olm.operatorframework.io/owner-kind is set without olm.operatorframework.io/owner-name; both are set and removed together")),
            (OLM, &[(OLM_KIND, "ClusterExtension"), (OLM_NAME, "")], Err("the owner label is empty; name an owner or remove it")),
            // opaque ids
            (CAMEL, &[("camel.apache.org/operator.id", "operator-1")], Ok(Owner::Opaque { id: "operator-1" })),
            (CAMEL, &[("camel.apache.org/operator.id", "")], Err("the owner label is empty; name an owner or remove it")),
        ];
        for (entry_json, pairs, expected) in rows {
            let labels = labels(pairs);
            let claim = Claim::read(&entry(entry_json), &labels);
            let got = claim
                .owner(&entry(entry_json))
                .map_err(|error| error.to_string());
            assert_eq!(got, expected.map_err(str::to_owned), "labels {pairs:?}");
        }
    }

    #[test]
    fn claims_read_only_their_own_labels_and_print_alike_across_shapes() {
        let all = labels(&[
            ("appID", "ClusterExtension.a"),
            (OLM_KIND, "ClusterExtension"),
            (OLM_NAME, "a"),
            ("app", "unrelated"),
        ]);
        let app_id = Claim::read(&entry(APP_ID), &all);
        let olm = Claim::read(&entry(OLM), &all);
        let camel = Claim::read(&entry(CAMEL), &all);
        assert_eq!(app_id.to_string(), r#""ClusterExtension.a""#);
        assert_eq!(olm.to_string(), r#""ClusterExtension.a""#);
        assert!(camel.is_none());
        assert_eq!(app_id.id(), "ClusterExtension.a");
        assert_eq!(olm.id(), "ClusterExtension.a");
        assert_eq!(Claim::of_owner(&entry(OLM), "ClusterExtension.a"), olm);
        assert_eq!(
            Claim::of_owner(&entry(APP_ID), "ClusterExtension.a"),
            app_id
        );
        assert_eq!(
            olm.labels(&entry(OLM)),
            [(OLM_NAME, "a"), (OLM_KIND, "ClusterExtension")]
        );
        assert_eq!(camel.to_string(), "none");
        let half = labels(&[(OLM_NAME, "a")]);
        let half_name = Claim::read(&entry(OLM), &half);
        assert_eq!(half_name.to_string(), r#"name "a" without a kind"#);
        let half = labels(&[(OLM_KIND, "Extension")]);
        let half_kind = Claim::read(&entry(OLM), &half);
        assert_eq!(half_kind.to_string(), r#"kind "Extension" without a name"#);
    }
}
