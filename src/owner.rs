//! Owner marks: the labels and annotations in which tools name an object's owner, and how an
//! owner is read out of them.
//!
//! An [`OwnerMark`] is a label or an annotation (`label:` or `annotation:` in the settings),
//! read in one of five shapes:
//!
//! | shape | settings | value | owner id | scope rules |
//! |---|---|---|---|---|
//! | kind in the value | `clusterKinds`, `namespacedKinds` | `ClusterExtension.<name>`, `Extension.<namespace>.<name>` | the value | yes |
//! | kind in a companion key | `kindKey` and kinds | `<name>` or `<namespace>.<name>`, kind beside it | `<kind>.<value>` | yes |
//! | opaque id | nothing more | any non-empty value | the value | no |
//! | namespace in a companion key | `namespaceKey` | `<name>`, namespace beside it | `<namespace>/<name>` | no |
//! | Argo CD tracking id | `format: ArgoCDTrackingID` | `<app>:<group>/<kind>:<namespace>/<name>` | `<app>` | no |
//!
//! A companion key lives where its mark does (both labels or both annotations). A tracking id is
//! split as Argo CD's `ParseAppInstanceValue` (`util/argo/resource_tracking.go`) splits it; one
//! whose object part names another object — a Pod that copied its Deployment's id — names no
//! owner, as Argo CD reads it: it does not count such a live object as the app's, nor prune it
//! (`isSelfReferencedObj`), though it syncs it when the app's manifests hold it, writing the
//! app's id — an adoption, judged as one. Nor does a tracking id in a template name an owner. With apps in any namespace the app is `<namespace>_<app>`
//! (`AppInstanceName`); Argo CD's installation id is an annotation of its own, not guarded.

use std::fmt;

mod lookup;
mod mark;

pub use lookup::{HelmDriver, OwnerLookup, Whereabouts};
pub use mark::{Format, MarkName, OwnerMark, Place};

use crate::request::Labels;

/// The shapes an owner is read in (see the module's table).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Shape {
    /// One value: the kind in it, or an opaque id.
    #[default]
    Single,
    /// A name and a companion kind.
    KindPair,
    /// A name and a companion namespace.
    NamespacePair,
    /// An Argo CD tracking id.
    Tracking,
}

/// The object a mark is on, as a tracking id names it; `None` for a template, whose objects
/// are not made yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tracked<'a> {
    /// The API group (empty for the core group).
    pub group: &'a str,
    /// The kind.
    pub kind: &'a str,
    /// The namespace; empty for a cluster-scoped object.
    pub namespace: &'a str,
    /// The name.
    pub name: &'a str,
}

impl Tracked<'_> {
    /// Whether a tracking id's object part names this object, as Argo CD's
    /// `isSelfReferencedObj` (`controller/state.go`) compares them: group, kind and name, and
    /// the namespace unless the object is cluster-scoped (whose id carries the Application's
    /// destination namespace).
    pub fn is(&self, id: &Tracked<'_>) -> bool {
        (self.group, self.kind, self.name) == (id.group, id.kind, id.name)
            && (self.namespace.is_empty() || self.namespace == id.namespace)
    }
}

/// The metadata marks are read from: labels, and the decoded values of the guarded annotations.
#[derive(Debug, Clone, Copy)]
pub struct Marks<'a> {
    /// The labels.
    pub labels: &'a Labels<'a>,
    /// The annotations (at least those the marks name).
    pub annotations: &'a Labels<'a>,
    /// The object itself, for tracking ids; `None` in a template.
    pub object: Option<Tracked<'a>>,
}

impl<'a> Marks<'a> {
    fn get(&self, place: Place, key: &str) -> Option<&'a str> {
        let map = match place {
            Place::Label => self.labels,
            Place::Annotation => self.annotations,
        };
        map.get(key).map(|value| &**value)
    }
}

/// What an object's metadata says for one owner mark, exactly as written.
///
/// Two claims are the same owner when they are equal: an unchanged claim is never re-judged.
/// Equality compares what the marks say, not the shape they are read in, so that the missing
/// claim of a side without metadata — a CREATE's old side, a template new in an update — equals
/// an empty claim of any mark.
#[derive(Debug, Clone, Copy, Default, Eq)]
pub struct Claim<'a> {
    /// The owner's name: the mark's value, or the app of a tracking id.
    pub value: Option<&'a str>,
    /// The companion key's value: the owner's kind or namespace (only for pairs).
    pub part: Option<&'a str>,
    /// The shape the mark is read in.
    pub shape: Shape,
    /// Whether the value is a tracking id that does not parse (then `value` is all of it).
    pub malformed: bool,
}

impl PartialEq for Claim<'_> {
    fn eq(&self, other: &Self) -> bool {
        (self.value, self.part, self.malformed) == (other.value, other.part, other.malformed)
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
    /// A `<namespace>/<name>` owner (a Helm release, a Flux Kustomization): it owns objects
    /// anywhere, so scope rules do not apply.
    Pair { namespace: &'a str, name: &'a str },
}

/// Why a claim names no valid owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvalidOwner {
    /// The mark is set but empty.
    Empty,
    /// The kind is not one of the mark's configured kinds.
    UnknownKind { kind: String, expected: String },
    /// A kind without the rest of the value.
    Incomplete { expected: String },
    /// Only one key of a pair is set.
    HalfPair { present: String, missing: String },
    /// The value is not in the form the mark reads.
    Malformed { expected: &'static str },
}

/// The form of an Argo CD tracking id.
const TRACKING_FORM: &str = "<application>:<group>/<kind>:<namespace>/<name>";

impl<'a> Claim<'a> {
    /// Reads the claim an object's (or a template's) metadata makes for one mark.
    pub fn read(mark: &OwnerMark, marks: &Marks<'a>) -> Claim<'a> {
        let shape = mark.shape();
        let value = marks.get(mark.place, &mark.key);
        let part = mark
            .companion_key()
            .and_then(|key| marks.get(mark.place, key));
        if shape != Shape::Tracking {
            return Claim {
                value,
                part,
                shape,
                malformed: false,
            };
        }
        // A template's objects are not made yet: no tracking id in it names them.
        let (Some(id), Some(own)) = (value, marks.object) else {
            return Claim::default();
        };
        match parse_tracking_id(id) {
            // As Argo CD reads it: an id that names another object is no one's mark here.
            Some((app, object)) if own.is(&object) => Claim {
                value: Some(app),
                shape,
                ..Claim::default()
            },
            Some(_) => Claim::default(),
            None => Claim {
                value: Some(id),
                shape,
                malformed: true,
                ..Claim::default()
            },
        }
    }

    /// The claim a mark makes for an owner id (see [`Claim::id`]).
    pub fn of_owner(mark: &OwnerMark, id: &'a str) -> Claim<'a> {
        let shape = mark.shape();
        let split = match shape {
            Shape::KindPair => id.split_once('.'),
            Shape::NamespacePair => id.split_once('/'),
            Shape::Single | Shape::Tracking => None,
        };
        let (part, value) = match split {
            Some((part, value)) => (Some(part), value),
            None => (None, id),
        };
        Claim {
            value: Some(value),
            part,
            shape,
            // An app name has neither, so no tracking id could name it.
            malformed: shape == Shape::Tracking && value.contains([':', '/']),
        }
    }

    /// The owner id identities and offers name owners by: the value, `<kind>.<value>` for a
    /// kind pair (the same text as the kind-in-value shape), `<namespace>/<name>` for a
    /// namespace pair, the app of a tracking id.
    pub fn id(&self) -> String {
        let value = self.value.unwrap_or("");
        match (self.shape, self.part) {
            (Shape::KindPair, Some(kind)) => format!("{kind}.{value}"),
            (Shape::NamespacePair, Some(namespace)) => format!("{namespace}/{value}"),
            _ => value.to_owned(),
        }
    }

    /// The keys and values that carry this claim, for stamping; `None` for a tracking id,
    /// which names the object too.
    pub fn values<'m>(&self, mark: &'m OwnerMark) -> Option<Vec<(&'m str, &'a str)>> {
        if self.shape == Shape::Tracking {
            return None;
        }
        let value = self.value.map(|value| (mark.key.as_str(), value));
        let part = mark.companion_key().zip(self.part);
        Some(value.into_iter().chain(part).collect())
    }

    /// Whether the object claims no owner at all.
    pub fn is_none(&self) -> bool {
        self.value.is_none() && self.part.is_none()
    }

    /// Reads the owner out of the claim, or says why it names none.
    pub fn owner(&self, mark: &OwnerMark) -> Result<Owner<'a>, InvalidOwner> {
        if self.value == Some("") || self.part == Some("") {
            return Err(InvalidOwner::Empty);
        }
        if self.malformed {
            return Err(InvalidOwner::Malformed {
                expected: TRACKING_FORM,
            });
        }
        let half = |present: &str, missing: &str| InvalidOwner::HalfPair {
            present: format!("{} {present}", mark.place.as_str()),
            missing: missing.to_owned(),
        };
        let (kind, rest) = match (self.shape, self.part, self.value) {
            (_, None, None) => return Err(InvalidOwner::Empty),
            (Shape::Single | Shape::Tracking, _, Some(id)) if !mark.has_kinds() => {
                return Ok(Owner::Opaque { id });
            }
            (Shape::NamespacePair, Some(namespace), Some(name)) => {
                if namespace.contains('/') {
                    return Err(InvalidOwner::Malformed {
                        expected: "a namespace name, without '/'",
                    });
                }
                return Ok(Owner::Pair { namespace, name });
            }
            (Shape::KindPair | Shape::NamespacePair, part, value) => {
                let companion = mark.companion_key().unwrap_or_default();
                match (part, value) {
                    (Some(kind), Some(value)) => (kind, value),
                    (Some(_), None) => return Err(half(companion, &mark.key)),
                    _ => return Err(half(&mark.key, companion)),
                }
            }
            (_, _, Some(value)) => value.split_once('.').unwrap_or((value, "")),
            (_, Some(_), None) => return Err(InvalidOwner::Empty),
        };
        let kind_of = |list: &[String]| list.iter().any(|known| known == kind);
        if kind_of(&mark.cluster_kinds) {
            return match rest {
                "" => Err(InvalidOwner::Incomplete {
                    expected: expected_form(mark, kind, false),
                }),
                name => Ok(Owner::Cluster { kind, name }),
            };
        }
        if kind_of(&mark.namespaced_kinds) {
            return match rest.split_once('.') {
                Some((namespace, name)) if !namespace.is_empty() && !name.is_empty() => {
                    Ok(Owner::Namespaced {
                        kind,
                        namespace,
                        name,
                    })
                }
                _ => Err(InvalidOwner::Incomplete {
                    expected: expected_form(mark, kind, true),
                }),
            };
        }
        Err(InvalidOwner::UnknownKind {
            kind: kind.to_owned(),
            expected: expected_forms(mark),
        })
    }
}

/// Splits an Argo CD tracking id, `<app>:<group>/<kind>:<namespace>/<name>`, into the app and
/// the object it names, as `ParseAppInstanceValue` in Argo CD's `resource_tracking.go` does:
/// three `:`-separated parts, the last two each two `/`-separated parts.
fn parse_tracking_id(id: &str) -> Option<(&str, Tracked<'_>)> {
    let mut parts = id.split(':');
    let (Some(app), Some(group_kind), Some(namespace_name), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let (group, kind) = split_two(group_kind)?;
    let (namespace, name) = split_two(namespace_name)?;
    Some((
        app,
        Tracked {
            group,
            kind,
            namespace,
            name,
        },
    ))
}

/// Splits `a/b` with exactly one `/`.
fn split_two(text: &str) -> Option<(&str, &str)> {
    let (first, second) = text.split_once('/')?;
    (!second.contains('/')).then_some((first, second))
}

/// How a valid value of `kind` looks for this mark.
fn expected_form(mark: &OwnerMark, kind: &str, namespaced: bool) -> String {
    let rest = if namespaced {
        "<namespace>.<name>"
    } else {
        "<name>"
    };
    match &mark.kind_key {
        None => format!("{kind}.{rest}"),
        Some(kind_key) => format!("{kind_key}={kind} with {}={rest}", mark.key),
    }
}

/// Every valid form for this mark, for messages about unknown kinds.
fn expected_forms(mark: &OwnerMark) -> String {
    let cluster = mark
        .cluster_kinds
        .iter()
        .map(|kind| expected_form(mark, kind, false));
    let namespaced = mark
        .namespaced_kinds
        .iter()
        .map(|kind| expected_form(mark, kind, true));
    cluster.chain(namespaced).collect::<Vec<_>>().join(" or ")
}

impl fmt::Display for Claim<'_> {
    /// `none`, or the owner id quoted — so an owner reads alike whichever marks carry it —
    /// or what a half pair holds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let companion = match self.shape {
            Shape::NamespacePair => "namespace",
            _ => "kind",
        };
        match (self.part, self.value) {
            (None, None) => f.write_str("none"),
            (None, Some(value)) if matches!(self.shape, Shape::KindPair | Shape::NamespacePair) => {
                write!(f, "name {value:?} without a {companion}")
            }
            (Some(part), None) => write!(f, "{companion} {part:?} without a name"),
            _ => write!(f, "{:?}", self.id()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Text;

    type Pairs<'a> = &'a [(&'a str, &'a str)];

    fn mark(json: &str) -> OwnerMark {
        serde_json::from_str(json).unwrap()
    }

    fn map<'a>(pairs: &[(&'a str, &'a str)]) -> Labels<'a> {
        pairs
            .iter()
            .map(|&(k, v)| (Text::from(k), Text::from(v)))
            .collect()
    }

    const APP_ID: &str = r#"{"label": "appID", "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}"#;
    const OLM: &str = r#"{"label": "olm.operatorframework.io/owner-name",
        "kindKey": "olm.operatorframework.io/owner-kind",
        "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}"#;
    const CAMEL: &str = r#"{"annotation": "camel.apache.org/operator.id"}"#;
    const HELM: &str = r#"{"annotation": "meta.helm.sh/release-name", "namespaceKey": "meta.helm.sh/release-namespace"}"#;
    const ARGO: &str =
        r#"{"annotation": "argocd.argoproj.io/tracking-id", "format": "ArgoCDTrackingID"}"#;
    const OLM_NAME: &str = "olm.operatorframework.io/owner-name";
    const OLM_KIND: &str = "olm.operatorframework.io/owner-kind";
    const RELEASE: &str = "meta.helm.sh/release-name";
    const RELEASE_NS: &str = "meta.helm.sh/release-namespace";
    const TRACKING: &str = "argocd.argoproj.io/tracking-id";

    /// The Deployment `shop/web` the rows' marks are on.
    const WEB: Tracked = Tracked {
        group: "apps",
        kind: "Deployment",
        namespace: "shop",
        name: "web",
    };

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
        let pair = |namespace, name| Ok(Owner::Pair { namespace, name });
        let opaque = |id| Ok(Owner::Opaque { id });
        let empty = || Err(InvalidOwner::Empty);
        let unknown = |kind: &str, expected: &str| {
            Err(InvalidOwner::UnknownKind {
                kind: kind.to_owned(),
                expected: expected.to_owned(),
            })
        };
        let incomplete = |expected: &str| {
            Err(InvalidOwner::Incomplete {
                expected: expected.to_owned(),
            })
        };
        let half = |present: &str, missing: &str| {
            Err(InvalidOwner::HalfPair {
                present: present.to_owned(),
                missing: missing.to_owned(),
            })
        };
        let malformed = || {
            Err(InvalidOwner::Malformed {
                expected: TRACKING_FORM,
            })
        };
        #[rustfmt::skip]
        let rows: &[(&str, Pairs, Pairs, Result<Owner, InvalidOwner>)] = &[
            // mark, labels, annotations, owner
            // kind in the value
            (APP_ID, &[("appID", "ClusterExtension.cert-manager")], &[], cluster("ClusterExtension", "cert-manager")),
            (APP_ID, &[("appID", "ClusterExtension.a.b")], &[], cluster("ClusterExtension", "a.b")),
            (APP_ID, &[("appID", "Extension.team-a.argocd")], &[], namespaced("Extension", "team-a", "argocd")),
            (APP_ID, &[("appID", "Extension.team-a.my.op")], &[], namespaced("Extension", "team-a", "my.op")),
            (APP_ID, &[("appID", "")], &[], empty()),
            (APP_ID, &[("appID", "Operator.x")], &[], unknown("Operator", "ClusterExtension.<name> or Extension.<namespace>.<name>")),
            (APP_ID, &[("appID", "cert-manager")], &[], unknown("cert-manager", "ClusterExtension.<name> or Extension.<namespace>.<name>")),
            (APP_ID, &[("appID", "ClusterExtension")], &[], incomplete("ClusterExtension.<name>")),
            (APP_ID, &[("appID", "ClusterExtension.")], &[], incomplete("ClusterExtension.<name>")),
            (APP_ID, &[("appID", "Extension.team-a")], &[], incomplete("Extension.<namespace>.<name>")),
            (APP_ID, &[("appID", "Extension..x")], &[], incomplete("Extension.<namespace>.<name>")),
            // an annotation of the same key is not the label
            (APP_ID, &[], &[("appID", "ClusterExtension.a")], empty()),
            // kind in a companion label
            (OLM, &[(OLM_KIND, "ClusterExtension"), (OLM_NAME, "argocd")], &[], cluster("ClusterExtension", "argocd")),
            (OLM, &[(OLM_KIND, "Extension"), (OLM_NAME, "team-a.argocd")], &[], namespaced("Extension", "team-a", "argocd")),
            (OLM, &[(OLM_KIND, "Extension"), (OLM_NAME, "argocd")], &[], incomplete("olm.operatorframework.io/owner-kind=Extension with olm.operatorframework.io/owner-name=<namespace>.<name>")),
            (OLM, &[(OLM_KIND, "Operator"), (OLM_NAME, "argocd")], &[], unknown("Operator", "olm.operatorframework.io/owner-kind=ClusterExtension with olm.operatorframework.io/owner-name=<name> or olm.operatorframework.io/owner-kind=Extension with olm.operatorframework.io/owner-name=<namespace>.<name>")),
            (OLM, &[(OLM_NAME, "argocd")], &[], half("label olm.operatorframework.io/owner-name", "olm.operatorframework.io/owner-kind")),
            (OLM, &[(OLM_KIND, "ClusterExtension")], &[], half("label olm.operatorframework.io/owner-kind", "olm.operatorframework.io/owner-name")),
            (OLM, &[(OLM_KIND, "ClusterExtension"), (OLM_NAME, "")], &[], empty()),
            // opaque ids, in an annotation
            (CAMEL, &[], &[("camel.apache.org/operator.id", "operator-1")], opaque("operator-1")),
            (CAMEL, &[], &[("camel.apache.org/operator.id", "")], empty()),
            // namespace in a companion annotation
            (HELM, &[], &[(RELEASE, "web"), (RELEASE_NS, "shop")], pair("shop", "web")),
            (HELM, &[], &[(RELEASE, "web")], half("annotation meta.helm.sh/release-name", "meta.helm.sh/release-namespace")),
            (HELM, &[], &[(RELEASE_NS, "shop")], half("annotation meta.helm.sh/release-namespace", "meta.helm.sh/release-name")),
            (HELM, &[], &[(RELEASE, "web"), (RELEASE_NS, "")], empty()),
            (HELM, &[(RELEASE, "web"), (RELEASE_NS, "shop")], &[], empty()),
            // Argo CD tracking ids: only one that names the object itself is an owner
            (ARGO, &[], &[(TRACKING, "guestbook:apps/Deployment:shop/web")], opaque("guestbook")),
            (ARGO, &[], &[(TRACKING, "shop_guestbook:apps/Deployment:shop/web")], opaque("shop_guestbook")),
            (ARGO, &[], &[(TRACKING, "guestbook:apps/Deployment:shop/web-7d9f")], empty()),
            (ARGO, &[], &[(TRACKING, "guestbook:/Pod:shop/web")], empty()),
            (ARGO, &[], &[(TRACKING, ":apps/Deployment:shop/web")], empty()),
            (ARGO, &[], &[(TRACKING, "guestbook")], malformed()),
            (ARGO, &[], &[(TRACKING, "a:b:apps/Deployment:shop/web")], malformed()),
        ];
        for (mark_json, labels, annotations, expected) in rows {
            let (labels, annotations) = (map(labels), map(annotations));
            let marks = Marks {
                labels: &labels,
                annotations: &annotations,
                object: Some(WEB),
            };
            let claim = Claim::read(&mark(mark_json), &marks);
            // A claim that names nothing is none: the rows above say it as empty.
            let got = match claim.is_none() {
                true => Err(InvalidOwner::Empty),
                false => claim.owner(&mark(mark_json)),
            };
            assert_eq!(&got, expected, "{labels:?} {annotations:?}");
        }
    }

    #[test]
    fn a_tracking_id_in_a_template_names_no_owner() {
        for id in ["guestbook:apps/Deployment:shop/web", "guestbook", ""] {
            let annotations = map(&[(TRACKING, id)]);
            let marks = Marks {
                labels: &Labels::new(),
                annotations: &annotations,
                object: None,
            };
            assert!(Claim::read(&mark(ARGO), &marks).is_none(), "{id:?}");
        }
    }

    #[test]
    fn claims_read_only_their_own_marks_and_print_alike_across_shapes() {
        let labels = map(&[
            ("appID", "ClusterExtension.a"),
            (OLM_KIND, "ClusterExtension"),
            (OLM_NAME, "a"),
            ("app", "unrelated"),
        ]);
        let annotations = map(&[(RELEASE, "web"), (RELEASE_NS, "shop")]);
        let marks = Marks {
            labels: &labels,
            annotations: &annotations,
            object: Some(WEB),
        };
        let app_id = Claim::read(&mark(APP_ID), &marks);
        let olm = Claim::read(&mark(OLM), &marks);
        let camel = Claim::read(&mark(CAMEL), &marks);
        let helm = Claim::read(&mark(HELM), &marks);
        assert_eq!(app_id.to_string(), r#""ClusterExtension.a""#);
        assert_eq!(olm.to_string(), r#""ClusterExtension.a""#);
        assert_eq!(helm.to_string(), r#""shop/web""#);
        assert!(camel.is_none());
        assert_eq!(app_id.id(), "ClusterExtension.a");
        assert_eq!(olm.id(), "ClusterExtension.a");
        assert_eq!(helm.id(), "shop/web");
        assert_eq!(Claim::of_owner(&mark(OLM), "ClusterExtension.a"), olm);
        assert_eq!(Claim::of_owner(&mark(APP_ID), "ClusterExtension.a"), app_id);
        assert_eq!(Claim::of_owner(&mark(HELM), "shop/web"), helm);
        // No tracking id names an app with ':' or '/'.
        assert!(
            Claim::of_owner(&mark(ARGO), "guestbook")
                .owner(&mark(ARGO))
                .is_ok()
        );
        assert!(
            Claim::of_owner(&mark(ARGO), "guestbook:x")
                .owner(&mark(ARGO))
                .is_err()
        );
        assert_eq!(
            olm.values(&mark(OLM)),
            Some(vec![(OLM_NAME, "a"), (OLM_KIND, "ClusterExtension")])
        );
        assert_eq!(
            helm.values(&mark(HELM)),
            Some(vec![(RELEASE, "web"), (RELEASE_NS, "shop")])
        );
        assert_eq!(camel.to_string(), "none");
        let half = map(&[(OLM_NAME, "a")]);
        let marks = Marks {
            labels: &half,
            ..marks
        };
        assert_eq!(
            Claim::read(&mark(OLM), &marks).to_string(),
            r#"name "a" without a kind"#
        );
        let half = map(&[(RELEASE_NS, "shop")]);
        let marks = Marks {
            annotations: &half,
            ..marks
        };
        assert_eq!(
            Claim::read(&mark(HELM), &marks).to_string(),
            r#"namespace "shop" without a name"#
        );
    }

    #[test]
    fn a_mark_is_a_label_or_an_annotation() {
        let error = |json: &str| {
            serde_json::from_str::<OwnerMark>(json)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            error(r#"{"label": "a", "annotation": "a"}"#),
            "set `label` or `annotation`, not both: a mark is kept in one place"
        );
        assert_eq!(
            error(r#"{"clusterKinds": ["X"]}"#),
            "set `label` or `annotation`: the key that names the owner"
        );
        assert_eq!(
            mark(CAMEL).name().to_string(),
            "annotation camel.apache.org/operator.id"
        );
        assert_eq!(mark(APP_ID).name().to_string(), "label appID");
    }
}
