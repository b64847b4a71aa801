//! The world: owner mark shapes, places, owners, and what an offer says.

use std::collections::BTreeMap;
use std::fmt;

use proptest::sample::Index;
use serde_json::{Value, json};

use crate::common::{
    APP_ID_KEY, CAMEL, CONFIG_MAP, CRD, DEPLOYMENT, FLUX_NAME, FLUX_NAMESPACE, HELM_NAME,
    HELM_NAMESPACE, INTEGRATION, JOB, NAMESPACE, OLM_KIND, OLM_NAME, POD, TRACKING,
};

/// Labels or annotations.
pub(crate) type Labels = BTreeMap<String, String>;

/// What one mark writes on an object or a template: its key's and its companion's values.
pub(crate) type Written = Vec<(String, String)>;

/// Where a mark is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spot {
    Label,
    Annotation,
}

impl Spot {
    /// `label` or `annotation`, as settings and messages write it.
    fn name(self) -> &'static str {
        match self {
            Spot::Label => "label",
            Spot::Annotation => "annotation",
        }
    }

    pub(crate) fn other(self) -> Spot {
        match self {
            Spot::Label => Spot::Annotation,
            Spot::Annotation => Spot::Label,
        }
    }
}

/// One shape of owner mark (README, "The owner model"), each as a tool writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// The label `appID: ClusterExtension.<name>` or `Extension.<namespace>.<name>`.
    AppId,
    /// OLM v1's kind/name pair of labels, kinds `ClusterExtension` and `Extension`.
    Olm,
    /// Camel K's opaque operator id, an annotation.
    Camel,
    /// The Helm CLI's release, a name/namespace pair of annotations: `<namespace>/<name>`.
    Helm,
    /// Flux helm-controller's labels, a name/namespace pair naming the owner Helm's annotations
    /// name (`sameOwnerAs`, where Helm's mark is guarded too).
    Flux,
    /// Argo CD's tracking id, an annotation `<app>:<group>/<kind>:<namespace>/<name>`: the app,
    /// when the id names the object it is on.
    Argo,
}

/// Owners of the cluster kind.
const CLUSTER_OWNERS: [&str; 3] = [
    "ClusterExtension.cert-manager",
    "ClusterExtension.argocd",
    "ClusterExtension.prometheus",
];
/// Owners of the namespaced kind.
const NAMESPACED_OWNERS: [&str; 4] = [
    "Extension.team-a.argocd",
    "Extension.team-a.cert-manager",
    "Extension.team-b.argocd",
    "Extension.team-b.cert-manager",
];
/// Camel K operators.
const OPERATORS: [&str; 3] = ["operator-1", "operator-2", "operator-3"];
/// Helm releases and Flux HelmReleases, `<namespace>/<name>`.
const RELEASES: [&str; 4] = ["shop/web", "shop/api", "team-a/web", "team-b/db"];
/// Argo CD Applications.
const APPS: [&str; 3] = ["guestbook-prod", "guestbook-dev", "billing-prod"];
/// An owner of no configured kind (an opaque id where Camel K's or Argo CD's mark is set).
pub(crate) const UNKNOWN_KIND: &str = "Operator.x";
/// The name of every object the properties write, which tracking ids name.
const OBJECT_NAME: &str = "x";

impl Shape {
    pub(crate) const ALL: [Shape; 6] = [
        Shape::AppId,
        Shape::Olm,
        Shape::Camel,
        Shape::Helm,
        Shape::Flux,
        Shape::Argo,
    ];

    /// The settings entry, among the marks `shapes` (Flux's labels name the owner of Helm's
    /// annotations where those are guarded).
    pub(crate) fn entry(self, shapes: &[Shape]) -> Value {
        match self {
            Shape::AppId => json!({"label": APP_ID_KEY,
                "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}),
            Shape::Olm => json!({"label": OLM_NAME, "kindKey": OLM_KIND,
                "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}),
            Shape::Camel => json!({"annotation": CAMEL}),
            Shape::Helm => json!({"annotation": HELM_NAME, "namespaceKey": HELM_NAMESPACE}),
            Shape::Flux => {
                let mut entry = json!({"label": FLUX_NAME, "namespaceKey": FLUX_NAMESPACE});
                if shapes.contains(&Shape::Helm) {
                    entry["sameOwnerAs"] = json!([HELM_NAME]);
                }
                entry
            }
            Shape::Argo => json!({"annotation": TRACKING, "format": "ArgoCDTrackingID"}),
        }
    }

    /// Whether the mark is a label or an annotation.
    pub(crate) fn spot(self) -> Spot {
        match self {
            Shape::AppId | Shape::Olm | Shape::Flux => Spot::Label,
            Shape::Camel | Shape::Helm | Shape::Argo => Spot::Annotation,
        }
    }

    /// The key the owner's name (or id) is in.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Shape::AppId => APP_ID_KEY,
            Shape::Olm => OLM_NAME,
            Shape::Camel => CAMEL,
            Shape::Helm => HELM_NAME,
            Shape::Flux => FLUX_NAME,
            Shape::Argo => TRACKING,
        }
    }

    /// The companion key of a pair, and the character that joins its value before the name in
    /// the owner id (`<kind>.<name>`, `<namespace>/<name>`).
    pub(crate) fn companion(self) -> Option<(&'static str, char)> {
        match self {
            Shape::Olm => Some((OLM_KIND, '.')),
            Shape::Helm => Some((HELM_NAMESPACE, '/')),
            Shape::Flux => Some((FLUX_NAMESPACE, '/')),
            Shape::AppId | Shape::Camel | Shape::Argo => None,
        }
    }

    /// The mark as messages name it: `label appID`, `annotation camel.apache.org/operator.id`.
    pub(crate) fn name(self) -> String {
        format!("{} {}", self.spot().name(), self.key())
    }

    /// Whether the settings of `shapes` say that this mark and `other` name the same owner.
    pub(crate) fn linked(self, other: Shape, shapes: &[Shape]) -> bool {
        let pair = [self, other];
        pair.contains(&Shape::Flux) && pair.contains(&Shape::Helm) && shapes.contains(&Shape::Helm)
    }

    /// What `marks` claim for this mark, as read: an Argo CD tracking id claims its app only
    /// when it names the object it is on (never in a template); one that does not split as
    /// `<app>:<group>/<kind>:<namespace>/<name>` is a broken claim.
    pub(crate) fn read(self, marks: &Marks) -> Claim {
        let value = marks.get(self.spot(), self.key()).cloned();
        if self == Shape::Argo {
            let Some(id) = value else {
                return Claim::default();
            };
            return match split_tracking_id(&id) {
                Some((app, object)) if marks.object.is_some_and(|place| place.is(&object)) => {
                    Claim {
                        value: Some(app.to_owned()),
                        ..Claim::default()
                    }
                }
                Some(_) => Claim::default(),
                None => Claim {
                    value: Some(id),
                    part: None,
                    malformed: true,
                },
            };
        }
        let part = self.companion().and_then(|(key, joint)| {
            let part = marks.get(self.spot(), key)?;
            Some((joint, part.clone()))
        });
        Claim {
            value,
            part,
            malformed: false,
        }
    }

    /// What `written` claims on an object at `place`.
    pub(crate) fn read_written(self, written: &Written, place: Place) -> Claim {
        let map: Labels = written.iter().cloned().collect();
        let empty = Labels::new();
        let (labels, annotations) = match self.spot() {
            Spot::Label => (&map, &empty),
            Spot::Annotation => (&empty, &map),
        };
        self.read(&Marks {
            labels,
            annotations,
            object: Some(place),
        })
    }

    /// The claim, as read, of owner `id`: the id as the value, or for a pair split at its
    /// first joint into the companion's value and the name.
    pub(crate) fn claim_of(self, id: &str) -> Claim {
        let split = (self.companion()).and_then(|(_, joint)| {
            let (part, value) = id.split_once(joint)?;
            Some(((joint, part.to_owned()), value))
        });
        match split {
            Some((part, value)) => Claim {
                value: Some(value.to_owned()),
                part: Some(part),
                malformed: false,
            },
            None => Claim {
                value: Some(id.to_owned()),
                // An Argo CD application's name holds neither: no tracking id names such an app.
                malformed: self == Shape::Argo && id.contains([':', '/']),
                ..Claim::default()
            },
        }
    }

    /// What names owner `id` under this mark on an object at `place` (`None`: a template):
    /// the claim's values, or for Argo CD the tracking id of the object.
    pub(crate) fn write(self, id: &str, place: Option<Place>) -> Written {
        if self == Shape::Argo {
            let place = place.expect("a tracking id names an object");
            return vec![(TRACKING.to_owned(), place.tracking_id(id))];
        }
        self.written(&self.claim_of(id))
    }

    /// The keys and values that carry `claim`.
    fn written(self, claim: &Claim) -> Written {
        let value = claim.value.iter().map(|value| (self.key(), value));
        let part = (claim.part.iter()).filter_map(|(_, part)| Some((self.companion()?.0, part)));
        (value.chain(part))
            .map(|(key, value)| (key.to_owned(), value.clone()))
            .collect()
    }

    /// What an object without an owner under this mark may still carry: nothing, or for Argo
    /// CD a tracking id copied from another object (a Pod's of its Deployment), by `index`.
    pub(crate) fn nothing(self, place: Place, index: &Index) -> Written {
        if self != Shape::Argo {
            return Vec::new();
        }
        let app = pick(&APPS, index);
        let (group, kind) = place.kind.split_once('/').expect("group/Kind");
        let copied = match index.index(3) {
            0 => return Vec::new(),
            // another object of the kind
            1 => format!("{app}:{group}/{kind}:{}/web", place.id_namespace()),
            // the object's name in another namespace, or for a cluster-scoped object of
            // another kind
            _ => match place.scope() {
                Some(_) => format!("{app}:{group}/{kind}:argocd/{OBJECT_NAME}"),
                None => format!("{app}:apps/Deployment:argocd/{OBJECT_NAME}"),
            },
        };
        vec![(TRACKING.to_owned(), copied)]
    }

    /// The owner a claim names (README, "The owner model").
    pub(crate) fn owner(self, claim: &Claim) -> Owner {
        let part = claim.part.as_ref().map(|(_, part)| part.as_str());
        let value = claim.value.as_deref();
        if claim.malformed || value == Some("") || part == Some("") {
            return Owner::Invalid;
        }
        let (kind, rest) = match (self, part, value) {
            (Shape::Camel | Shape::Argo, _, Some(_)) => return Owner::Opaque,
            (Shape::Helm | Shape::Flux, Some(namespace), Some(_)) if !namespace.contains('/') => {
                return Owner::Opaque;
            }
            (Shape::AppId, _, Some(value)) => value.split_once('.').unwrap_or((value, "")),
            (Shape::Olm, Some(kind), Some(value)) => (kind, value),
            _ => return Owner::Invalid,
        };
        match (kind, rest.split_once('.')) {
            ("ClusterExtension", _) if !rest.is_empty() => Owner::Cluster,
            ("Extension", Some((namespace, name))) if !namespace.is_empty() && !name.is_empty() => {
                Owner::Namespaced(namespace.to_owned())
            }
            _ => Owner::Invalid,
        }
    }

    /// Whether `id` names a valid owner under this mark (whatever the scope).
    pub(crate) fn reads(self, id: &str) -> bool {
        self.owner(&self.claim_of(id)) != Owner::Invalid
    }

    /// Valid owners for this entry that may own an object at `place`.
    pub(crate) fn owners_in(self, place: Place) -> Vec<&'static str> {
        match self {
            Shape::Camel => OPERATORS.to_vec(),
            Shape::Helm | Shape::Flux => RELEASES.to_vec(),
            Shape::Argo => APPS.to_vec(),
            Shape::AppId | Shape::Olm => (CLUSTER_OWNERS.iter().chain(&NAMESPACED_OWNERS))
                .copied()
                .filter(|id| place.holds(&self.owner(&self.claim_of(id))))
                .collect(),
        }
    }

    /// Valid owners for this entry that may not own an object at `place`.
    pub(crate) fn owners_outside(self, place: Place) -> Vec<&'static str> {
        (NAMESPACED_OWNERS.iter().copied())
            .filter(|id| self.reads(id) && !place.holds(&self.owner(&self.claim_of(id))))
            .collect()
    }

    /// What names no valid owner for this entry: empty values, unknown kinds, half pairs,
    /// broken tracking ids.
    pub(crate) fn invalid_writes(self) -> Vec<Written> {
        let written = |pairs: &[(&str, &str)]| -> Written {
            (pairs.iter())
                .map(|&(key, value)| (key.to_owned(), value.to_owned()))
                .collect()
        };
        let lists: &[&[(&str, &str)]] = match self {
            Shape::AppId => &[
                &[(APP_ID_KEY, "")],
                &[(APP_ID_KEY, UNKNOWN_KIND)],
                &[(APP_ID_KEY, "ClusterExtension")],
                &[(APP_ID_KEY, "Extension.team-a")],
            ],
            Shape::Olm => &[
                &[(OLM_NAME, "argocd")],
                &[(OLM_KIND, "ClusterExtension")],
                &[(OLM_NAME, "x"), (OLM_KIND, "Operator")],
                &[(OLM_NAME, "argocd"), (OLM_KIND, "Extension")],
            ],
            Shape::Camel => &[&[(CAMEL, "")]],
            Shape::Helm => &[
                &[(HELM_NAME, "web")],
                &[(HELM_NAMESPACE, "shop")],
                &[(HELM_NAME, ""), (HELM_NAMESPACE, "shop")],
                &[(HELM_NAME, "web"), (HELM_NAMESPACE, "shop/x")],
            ],
            Shape::Flux => &[
                &[(FLUX_NAME, "web")],
                &[(FLUX_NAMESPACE, "shop")],
                &[(FLUX_NAME, "web"), (FLUX_NAMESPACE, "")],
            ],
            Shape::Argo => &[
                &[(TRACKING, "guestbook-prod")],
                &[(TRACKING, "")],
                &[(TRACKING, "a:guestbook-prod:apps/Deployment:shop/x")],
                &[(TRACKING, "guestbook-prod:apps/Deployment:shop/x/y")],
            ],
        };
        lists.iter().map(|pairs| written(pairs)).collect()
    }
}

/// Splits an Argo CD tracking id into its app and the object it names, as Argo CD's
/// `ParseAppInstanceValue` does: three `:`-separated parts, the last two of two `/`-separated
/// parts each.
fn split_tracking_id(id: &str) -> Option<(&str, Tracked)> {
    let parts: Vec<&str> = id.split(':').collect();
    let [app, group_kind, namespace_name] = parts.as_slice() else {
        return None;
    };
    let halves = |text: &str| -> Option<(String, String)> {
        let (first, second) = text.split_once('/')?;
        (!second.contains('/')).then(|| (first.to_owned(), second.to_owned()))
    };
    let (group, kind) = halves(group_kind)?;
    let (namespace, name) = halves(namespace_name)?;
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

/// The object a tracking id names.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Tracked {
    group: String,
    kind: String,
    namespace: String,
    name: String,
}

/// The marks an object (or a template) carries, and the object, which tracking ids name;
/// `None` for a template.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Marks<'a> {
    pub(crate) labels: &'a Labels,
    pub(crate) annotations: &'a Labels,
    pub(crate) object: Option<Place>,
}

impl<'a> Marks<'a> {
    fn get(&self, spot: Spot, key: &str) -> Option<&'a String> {
        match spot {
            Spot::Label => self.labels.get(key),
            Spot::Annotation => self.annotations.get(key),
        }
    }
}

/// What an object's marks say for one entry, as the entry reads them: the owner's name (or the
/// app of a tracking id, or all of a broken one) and, for a pair, the companion's value with
/// the character that joins it to the name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Claim {
    value: Option<String>,
    part: Option<(char, String)>,
    /// A tracking id that does not split as one.
    malformed: bool,
}

impl Claim {
    pub(crate) fn is_none(&self) -> bool {
        self.value.is_none() && self.part.is_none()
    }

    /// The owner id identities and offers name: the value, or `<kind>.<name>` and
    /// `<namespace>/<name>` for a pair.
    pub(crate) fn id(&self) -> String {
        match (&self.part, &self.value) {
            (Some((joint, part)), value) => {
                format!("{part}{joint}{}", value.as_deref().unwrap_or(""))
            }
            (None, value) => value.clone().unwrap_or_default(),
        }
    }
}

impl fmt::Display for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.is_none() {
            true => f.write_str("none"),
            false => write!(f, "{:?} ({self:?})", self.id()),
        }
    }
}

/// What a claim names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Owner {
    /// No valid owner.
    Invalid,
    /// A cluster-kind owner: may own objects anywhere.
    Cluster,
    /// A namespaced-kind owner, of this namespace.
    Namespaced(String),
    /// An opaque id, or a `<namespace>/<name>` pair: no scope.
    Opaque,
}

/// The object a request is about: its kind (`group/Kind`) and the request's namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place {
    pub(crate) kind: &'static str,
    pub(crate) namespace: &'static str,
}

pub(crate) const PLACES: [Place; 8] = [
    place(CRD, ""),
    place(NAMESPACE, ""),
    // The API server names a Namespace's own name as the request's namespace.
    place(NAMESPACE, "team-a"),
    place(CONFIG_MAP, "team-a"),
    place(CONFIG_MAP, "team-b"),
    place(POD, "team-a"),
    place(INTEGRATION, "team-b"),
    place(DEPLOYMENT, "shop"),
];

pub(crate) const fn place(kind: &'static str, namespace: &'static str) -> Place {
    Place { kind, namespace }
}

/// What a `status` write of an object stores of its metadata, beside the status: labels,
/// annotations, finalizers. Written from the API server's status strategies, not from the
/// policy: a Deployment's resets its labels (`deploymentStatusStrategy`), a Pod's its
/// ownerReferences (`podStatusStrategy`), a CRD's and a Namespace's nothing of the metadata; a
/// custom resource's resets all of it (apiextensions-apiserver `status_strategy.go`), and a
/// ConfigMap has no `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StatusStores {
    pub(crate) labels: bool,
    pub(crate) annotations: bool,
    pub(crate) finalizers: bool,
}

impl Place {
    /// What a `status` write of the object stores of its metadata.
    pub(crate) fn status_stores(self) -> StatusStores {
        let (labels, others) = match self.kind {
            CRD | NAMESPACE | POD => (true, true),
            DEPLOYMENT => (false, true),
            _ => (false, false),
        };
        StatusStores {
            labels,
            annotations: others,
            finalizers: others,
        }
    }

    /// The namespace the object lives in; `None` when it is cluster-scoped.
    pub(crate) fn scope(self) -> Option<&'static str> {
        (!self.namespace.is_empty() && self.kind != NAMESPACE).then_some(self.namespace)
    }

    /// Whether `owner` may own the object (README, "Scope").
    pub(crate) fn holds(self, owner: &Owner) -> bool {
        match owner {
            Owner::Invalid => false,
            Owner::Cluster | Owner::Opaque => true,
            Owner::Namespaced(namespace) => self.scope() == Some(namespace.as_str()),
        }
    }

    /// The namespace a tracking id of the object names: its own, or for a cluster-scoped
    /// object the Application's destination namespace.
    pub(crate) fn id_namespace(self) -> &'static str {
        self.scope().unwrap_or("argocd")
    }

    /// The tracking id by which `app` tracks the object.
    fn tracking_id(self, app: &str) -> String {
        let (group, kind) = self.kind.split_once('/').expect("group/Kind");
        format!("{app}:{group}/{kind}:{}/{OBJECT_NAME}", self.id_namespace())
    }

    /// Whether a tracking id's object part names the object, as Argo CD's
    /// `isSelfReferencedObj` compares them: group, kind and name, and the namespace unless the
    /// object is cluster-scoped.
    fn is(self, id: &Tracked) -> bool {
        let (group, kind) = self.kind.split_once('/').expect("group/Kind");
        (group, kind, OBJECT_NAME) == (id.group.as_str(), id.kind.as_str(), id.name.as_str())
            && self
                .scope()
                .is_none_or(|namespace| namespace == id.namespace)
    }
}

/// More kinds, as `group/Kind`: what the control plane writes, and workloads with templates.
const SECRET: &str = "/Secret";
const ENDPOINT_SLICE: &str = "discovery.k8s.io/EndpointSlice";
const CLAIM: &str = "/PersistentVolumeClaim";
pub(crate) const STATEFUL_SET: &str = "apps/StatefulSet";
pub(crate) const CRON_JOB: &str = "batch/CronJob";

/// Objects of the resources the control plane writes, and of others.
pub(crate) const TRUST_PLACES: [Place; 11] = [
    place(CONFIG_MAP, "team-a"),
    place(SECRET, "team-a"),
    place(POD, "team-a"),
    place(POD, "team-b"),
    place(DEPLOYMENT, "team-a"),
    place(ENDPOINT_SLICE, "team-b"),
    place(CLAIM, "team-a"),
    place(JOB, "team-a"),
    place(CRD, ""),
    place(NAMESPACE, ""),
    place(INTEGRATION, "team-b"),
];

/// Workloads with a template each.
pub(crate) const TEMPLATE_PLACES: [Place; 3] = [
    place(DEPLOYMENT, "team-a"),
    place(STATEFUL_SET, "team-a"),
    place(CRON_JOB, "team-b"),
];

pub(crate) fn pick<T: Clone>(items: &[T], index: &Index) -> T {
    items[index.index(items.len())].clone()
}

/// An offer, as the oracle reads the offer annotation: `<mark>: <from> -> <to>`, or
/// `<mark>: <from> -> <other mark>: <to>`, each part without whitespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OfferText {
    pub(crate) mark: String,
    pub(crate) from: String,
    pub(crate) to_mark: String,
    pub(crate) to: String,
}

pub(crate) fn parse_offer(text: &str) -> Option<OfferText> {
    let (mark, rest) = text.split_once(": ")?;
    let (from, to) = rest.split_once(" -> ")?;
    let (to_mark, to) = to.split_once(": ").unwrap_or((mark, to));
    let words = [mark, from, to_mark, to];
    let blank = |word: &str| word.is_empty() || word.chars().any(char::is_whitespace);
    if words.iter().any(|word| blank(word)) {
        return None;
    }
    Some(OfferText {
        mark: mark.to_owned(),
        from: from.to_owned(),
        to_mark: to_mark.to_owned(),
        to: to.to_owned(),
    })
}

/// The text of an offer of `from`'s object under `mark` to `to` under `to_mark`.
pub(crate) fn offer_text(mark: Shape, from: &str, to_mark: Shape, to: &str) -> String {
    match mark == to_mark {
        true => format!("{}: {from} -> {to}", mark.key()),
        false => format!("{}: {from} -> {}: {to}", mark.key(), to_mark.key()),
    }
}
