//! Cases: settings and a request, as models and as JSON, and what the model says each case is
//! due.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};

use super::response::{Response, annotations_in, labels_in, respond};
use super::world::{
    Claim, Labels, Marks, OfferText, Owner, Place, Shape, Spot, Written, parse_offer,
};
use crate::common::{LAST_APPLIED, OFFER, Request, SCALE, Side};
use crate::{oracle, trust};

/// An identity of the settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    pub(crate) owners: Vec<String>,
    pub(crate) users: Vec<String>,
    pub(crate) groups: Vec<String>,
    pub(crate) access: Access,
}

/// What an identity lets the requesters it binds do for its owners (README, "Identities").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Everything an owner does: set, remove, offer, stamp, and write what it owns.
    Own,
    /// Only UPDATE and DELETE what the owners own, under `writes: Owner`, keeping the marks.
    Write,
}

/// An identity with `access: Own`, the default.
pub(crate) fn identity(owners: &[&str], users: &[&str], groups: &[&str]) -> Identity {
    let strings = |list: &[&str]| list.iter().map(|&item| item.to_owned()).collect();
    Identity {
        owners: strings(owners),
        users: strings(users),
        groups: strings(groups),
        access: Access::Own,
    }
}

/// A writer the settings add to the trusted control plane (`trustedWriters`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TrustedWriter {
    pub(crate) users: &'static [&'static str],
    pub(crate) resources: &'static [&'static str],
    pub(crate) operations: &'static [&'static str],
}

/// The settings' trusted writers a case may have: an OpenShift-like service CA that updates
/// Secrets, a CI bot and k3s' controller, a GitOps deleter, and OpenShift's service accounts.
pub(crate) const SETTINGS_WRITERS: [TrustedWriter; 4] = [
    TrustedWriter {
        users: &["system:serviceaccount:openshift-service-ca:service-ca"],
        resources: &["secrets"],
        operations: &["UPDATE"],
    },
    TrustedWriter {
        users: &["ci-*", "system:k3s-controller"],
        resources: &[
            "deployments.apps",
            "pods/status",
            "integrations.camel.apache.org",
        ],
        operations: &["CREATE", "UPDATE"],
    },
    TrustedWriter {
        users: &["flux"],
        resources: &["*"],
        operations: &["DELETE"],
    },
    TrustedWriter {
        users: &["system:serviceaccount:openshift-*:*"],
        resources: &[
            "configmaps",
            "customresourcedefinitions.apiextensions.k8s.io",
        ],
        operations: &["UPDATE", "DELETE"],
    },
];

/// The settings, as a model.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) shapes: Vec<Shape>,
    pub(crate) adoption: &'static str,
    pub(crate) orphaning: &'static str,
    pub(crate) exempt_users: Vec<String>,
    pub(crate) exempt_groups: Vec<String>,
    pub(crate) identities: Vec<Identity>,
    pub(crate) writes: &'static str,
    pub(crate) stamp: bool,
    pub(crate) offer_key: &'static str,
    /// The settings' trusted writers; none unless a property about the control plane adds them.
    pub(crate) trusted: Vec<TrustedWriter>,
}

impl Settings {
    pub(crate) fn json(&self) -> Value {
        let identities: Vec<_> = (self.identities.iter())
            .map(|identity| {
                let mut json = json!({"owners": identity.owners, "users": identity.users,
                       "groups": identity.groups});
                if identity.access == Access::Write {
                    json["access"] = json!("Write");
                }
                json
            })
            .collect();
        let marks: Vec<_> = (self.shapes.iter())
            .map(|shape| shape.entry(&self.shapes))
            .collect();
        let mut settings = json!({
            "ownerMarks": marks,
            "adoption": self.adoption,
            "orphaning": self.orphaning,
            "exemptions": {"users": self.exempt_users, "groups": self.exempt_groups},
            "identities": identities,
            "writes": self.writes,
            "stamp": self.stamp,
            "offerAnnotation": self.offer_key,
        });
        if !self.trusted.is_empty() {
            let writers: Vec<_> = (self.trusted.iter())
                .map(|writer| {
                    json!({"users": writer.users, "resources": writer.resources,
                           "operations": writer.operations})
                })
                .collect();
            settings["trustedWriters"] = json!(writers);
        }
        settings
    }
}

/// The operation, and whether it goes through a subresource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Create,
    Update,
    Delete,
    /// An UPDATE of the `status` subresource, its body the object.
    Status,
    /// An UPDATE of `deployments/scale`, its body a `Scale`, not the object.
    Scale,
}

/// One side of a request: an object's labels, its offer and other annotations; its finalizers,
/// whether its deletion has begun, and top-level fields set over the builder's.
#[derive(Debug, Clone, Default)]
pub(crate) struct Object {
    pub(crate) labels: Labels,
    pub(crate) offer: Option<String>,
    pub(crate) annotations: Labels,
    /// `metadata.finalizers`.
    pub(crate) finalizers: Vec<String>,
    /// Whether `metadata.deletionTimestamp` is set, with `deletionGracePeriodSeconds: 30`.
    pub(crate) terminating: bool,
    /// Top-level fields (`data`, `status`, `spec` with its templates) over `"spec": {}`.
    pub(crate) fields: BTreeMap<String, Value>,
}

impl Object {
    /// The object's marks, the object at `place`.
    fn marks(&self, place: Place) -> Marks<'_> {
        Marks {
            labels: &self.labels,
            annotations: &self.annotations,
            object: Some(place),
        }
    }

    /// Writes what one mark of `shape` carries: its labels or annotations.
    pub(crate) fn put(&mut self, shape: Shape, written: &Written) {
        let map = match shape.spot() {
            Spot::Label => &mut self.labels,
            Spot::Annotation => &mut self.annotations,
        };
        map.extend(written.iter().cloned());
    }

    /// Sets what the request builder does not write on `object`, its JSON.
    fn extend(&self, object: &mut Value) {
        if !self.finalizers.is_empty() {
            object["metadata"]["finalizers"] = json!(self.finalizers);
        }
        if self.terminating {
            object["metadata"]["deletionTimestamp"] = json!(DELETION_TIMESTAMP);
            object["metadata"]["deletionGracePeriodSeconds"] = json!(GRACE_PERIOD);
        }
        for (field, value) in &self.fields {
            object[field] = value.clone();
        }
    }
}

/// When a terminating object's deletion began, and its grace period.
const DELETION_TIMESTAMP: &str = "2026-11-30T12:00:00Z";
pub(crate) const GRACE_PERIOD: i64 = 30;

/// The AdmissionRequest, as a model.
#[derive(Debug, Clone)]
pub(crate) struct Admission {
    pub(crate) op: Op,
    pub(crate) place: Place,
    pub(crate) user: String,
    pub(crate) groups: Vec<String>,
    pub(crate) old: Option<Object>,
    pub(crate) new: Option<Object>,
    /// The DeleteOptions of a DELETE, when it sends any.
    pub(crate) options: Option<Value>,
}

/// Settings and a request.
#[derive(Clone)]
pub(crate) struct Case {
    pub(crate) settings: Settings,
    pub(crate) admission: Admission,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "\n  settings: {}\n  request: {}\n",
            self.settings.json(),
            self.request_json()
        )
    }
}

/// A side's labels and annotations, borrowed as the request builder takes them.
type SidePairs<'a> = (Vec<(&'a str, &'a str)>, Vec<(&'a str, &'a str)>);

fn side_pairs<'a>(object: &'a Object, offer_key: &'a str) -> SidePairs<'a> {
    let pairs = |map: &'a Labels| {
        map.iter()
            .map(|(key, value)| (key.as_str(), value.as_str()))
    };
    let offer = object.offer.as_deref().map(|offer| (offer_key, offer));
    (
        pairs(&object.labels).collect(),
        pairs(&object.annotations).chain(offer).collect(),
    )
}

fn side<'a>(pairs: &'a SidePairs<'a>) -> Side<'a> {
    Side {
        labels: &pairs.0,
        offer: None,
        annotations: &pairs.1,
    }
}

impl Case {
    pub(crate) fn request_json(&self) -> Value {
        let admission = &self.admission;
        let key = self.settings.offer_key;
        let old = admission.old.as_ref().map(|old| side_pairs(old, key));
        let new = admission.new.as_ref().map(|new| side_pairs(new, key));
        let kind = match admission.op {
            Op::Scale => SCALE,
            _ => admission.place.kind,
        };
        let namespace = admission.place.namespace;
        let request = match (admission.op, &old, &new) {
            (Op::Create, _, Some(new)) => Request::create(kind, namespace, side(new)),
            (Op::Delete, Some(old), _) => Request::delete(kind, namespace, side(old)),
            (_, Some(old), Some(new)) => Request::update(kind, namespace, side(old), side(new)),
            _ => unreachable!("{:?} without its sides", admission.op),
        };
        let groups: Vec<&str> = admission.groups.iter().map(String::as_str).collect();
        let request = request.by(&admission.user).in_groups(&groups);
        let mut json = match admission.op {
            Op::Status => request.subresource("status"),
            Op::Scale => request.subresource("scale").resource("apps", "deployments"),
            _ => request,
        }
        .json();
        for (field, object) in [("oldObject", &admission.old), ("object", &admission.new)] {
            if let Some(object) = object {
                object.extend(&mut json[field]);
            }
        }
        if let Some(options) = &admission.options {
            json["options"] = options.clone();
        }
        json
    }

    /// Whether the request is an UPDATE of the object itself that changes nothing: its object
    /// is the stored one (`Edit::Unchanged`, anyone's to send).
    pub(crate) fn unchanged(&self) -> bool {
        let json = self.request_json();
        self.admission.op == Op::Update && json["object"] == json["oldObject"]
    }

    pub(crate) fn respond(&self) -> Result<Response, TestCaseError> {
        respond(&self.request_json(), &self.settings.json())
    }

    /// What `object`'s marks claim for `shape`, on the request's object.
    pub(crate) fn claim(&self, shape: Shape, object: &Object) -> Claim {
        shape.read(&object.marks(self.admission.place))
    }

    /// What the marks of `object`, as JSON, claim for `shape`.
    pub(crate) fn claim_in(&self, shape: Shape, object: &Value) -> Claim {
        let (labels, annotations) = (labels_in(object), annotations_in(object));
        shape.read(&Marks {
            labels: &labels,
            annotations: &annotations,
            object: Some(self.admission.place),
        })
    }

    /// Whether the settings say that two marks name the same owner.
    pub(crate) fn linked(&self, a: Shape, b: Shape) -> bool {
        a.linked(b, &self.settings.shapes)
    }

    /// The stored offer, read: `(mark, from, receiving mark, to)`.
    pub(crate) fn stored_offer(&self) -> Option<OfferText> {
        let old = self.admission.old.as_ref()?;
        parse_offer(old.offer.as_deref()?)
    }

    /// Whether the stored object's offer hands `shape`'s owner to another mark's owner that
    /// the new object names: the owner's removal is then the receiver's to make.
    pub(crate) fn handed_across(&self, shape: Shape) -> bool {
        let (Some(old), Some(new), Some(offer)) = (
            &self.admission.old,
            &self.admission.new,
            self.stored_offer(),
        ) else {
            return false;
        };
        let from = self.claim(shape, old);
        offer.mark == shape.key()
            && offer.from == from.id()
            && offer.to_mark != shape.key()
            && (self.settings.shapes.iter()).any(|other| {
                other.key() == offer.to_mark && {
                    let claim = self.claim(*other, new);
                    !claim.is_none() && claim.id() == offer.to
                }
            })
    }

    /// The marks a request sets on the object: to a valid owner (whatever its scope) other
    /// than the stored one; on a CREATE, every mark with a valid owner.
    pub(crate) fn set_marks(&self) -> Vec<Shape> {
        let admission = &self.admission;
        let Some(new) = &admission.new else {
            return Vec::new();
        };
        if admission.op == Op::Scale {
            return Vec::new();
        }
        (self.settings.shapes.iter().copied())
            .filter(|&shape| {
                let after = self.claim(shape, new);
                let before = (admission.old.as_ref()).map(|old| self.claim(shape, old));
                shape.owner(&after) != Owner::Invalid && before.as_ref() != Some(&after)
            })
            .collect()
    }

    /// Whether two marks the settings do not link are set to valid owners in one request: the
    /// one listed later is a second owner, so the order of `ownerMarks` says which mark a
    /// `one owner` line names.
    pub(crate) fn race(&self) -> bool {
        let set = self.set_marks();
        (set.iter()).any(|&a| set.iter().any(|&b| a != b && !self.linked(a, b)))
    }

    /// The owner patterns the requester acts for.
    pub(crate) fn acting(&self) -> BTreeSet<String> {
        oracle::acting(&self.settings.identities, &self.admission)
    }

    pub(crate) fn acts_for(&self, owner: &str) -> bool {
        oracle::acts_for(&self.acting(), owner)
    }

    /// The owner patterns the requester writes for: those it acts for, and those an identity
    /// with `access: Write` binds it to.
    pub(crate) fn writing(&self) -> BTreeSet<String> {
        oracle::writing(&self.settings.identities, &self.admission)
    }

    pub(crate) fn writes_for(&self, owner: &str) -> bool {
        oracle::acts_for(&self.writing(), owner)
    }

    /// The write as RBAC and the trust oracle see it.
    pub(crate) fn write(&self) -> trust::Write {
        let admission = &self.admission;
        let resource = match admission.op {
            Op::Scale => "deployments.apps/scale".to_owned(),
            _ => resource_of(admission.place.kind),
        };
        let (resource, verb) = match admission.op {
            Op::Create => (resource, trust::Verb::Create),
            Op::Update | Op::Scale => (resource, trust::Verb::Update),
            Op::Status => (format!("{resource}/status"), trust::Verb::Update),
            Op::Delete => (resource, trust::Verb::Delete),
        };
        trust::Write {
            user: admission.user.clone(),
            groups: admission.groups.clone(),
            resource,
            verb,
            terminating: admission.old.as_ref().is_some_and(|old| old.terminating),
        }
    }

    /// The audit scanner's replay of the stored object: a CREATE of it with an empty
    /// `userInfo`.
    pub(crate) fn replay_of_stored(&self) -> Option<Value> {
        let old = self.admission.old.as_ref()?;
        let pairs = side_pairs(old, self.settings.offer_key);
        let place = self.admission.place;
        let mut request = Request::create(place.kind, place.namespace, side(&pairs)).json();
        old.extend(&mut request["object"]);
        request["userInfo"] = json!({});
        Some(request)
    }

    /// Whether the trust oracle trusts the requester with this write.
    pub(crate) fn trusted(&self) -> bool {
        trust::trusts(&self.write(), &self.settings.trusted)
    }

    /// The same request by `user` in `groups`, and in the groups the case's requester has
    /// beyond those the API server gives it: every identity and exemption that names the case's
    /// requester names `user` instead, and those that named `user` are dropped, so that
    /// identities and exemptions see the two requesters alike.
    /// This case, where identities name the requester only if `user` in `groups` could be named:
    /// a name shaped like a service account's or a node's binds nothing without its groups, so
    /// a person compared with it must be bound by name to nothing either.
    pub(crate) fn named_only_if_vouched(self, user: &str, groups: &[String]) -> Case {
        if oracle::vouched(user, groups) {
            return self;
        }
        let mut case = self;
        let old = case.admission.user.clone();
        for identity in &mut case.settings.identities {
            for name in identity.users.iter_mut().filter(|name| **name == old) {
                *name = "someone-else".to_owned();
            }
        }
        case
    }

    pub(crate) fn with_requester(&self, user: &str, groups: &[String]) -> Case {
        let mut case = self.clone();
        let old = self.admission.user.as_str();
        let rename = |names: &mut Vec<String>| {
            names.retain(|name| name != user || user == old);
            for name in names.iter_mut().filter(|name| *name == old) {
                *name = user.to_owned();
            }
        };
        for identity in &mut case.settings.identities {
            rename(&mut identity.users);
        }
        rename(&mut case.settings.exempt_users);
        let server = groups_of(old);
        let extra = (self.admission.groups.iter()).filter(|group| !server.contains(group));
        case.admission.user = user.to_owned();
        case.admission.groups = groups.iter().chain(extra).cloned().collect();
        case
    }

    /// Who is exempt, as a bypass names them: the user, or the first of its groups that is
    /// exempt (src/policy.rs, `exemption`).
    pub(crate) fn exemption(&self) -> Option<String> {
        let (settings, user) = (&self.settings, &self.admission.user);
        if settings.exempt_users.contains(user) {
            return Some(format!("exempt user {user}"));
        }
        let groups = &self.admission.groups;
        let group = groups
            .iter()
            .find(|group| settings.exempt_groups.contains(group))?;
        Some(format!("user {user} of exempt group {group}"))
    }

    /// The mark a stamp goes into, with the owner: the first mark, not a tracking id (which
    /// names the object too), that reads the one owner the requester acts for as a valid owner
    /// in scope.
    pub(crate) fn stamp_target(&self) -> Option<(Shape, String)> {
        let acting = self.acting();
        let owner = oracle::single_owner(&acting)?;
        let place = self.admission.place;
        let shape = (self.settings.shapes.iter()).find(|shape| {
            **shape != Shape::Argo && place.holds(&shape.owner(&shape.claim_of(owner)))
        })?;
        Some((*shape, owner.to_owned()))
    }

    /// The mark a stamp adds and its labels or annotations, when one is due (src/decision.rs,
    /// `stamp`): on a CREATE under `stamp: true`, into the stamp target, unless the object
    /// carries an owner mark already — any mark's claim, valid or not; a tracking id copied
    /// from another object claims nothing.
    pub(crate) fn stamp_due(&self) -> Option<(Shape, Written)> {
        let admission = &self.admission;
        let new = admission.new.as_ref()?;
        if !self.settings.stamp || admission.op != Op::Create {
            return None;
        }
        let (shape, owner) = self.stamp_target()?;
        let unmarked = (self.settings.shapes.iter()).all(|&any| self.claim(any, new).is_none());
        unmarked.then(|| (shape, shape.write(&owner, Some(admission.place))))
    }

    /// Whether an accepted request has its offer removed (src/decision.rs, `judge_offer`): an
    /// UPDATE under `stamp: true` that keeps the offer while the offer's own mark moves.
    pub(crate) fn consume_due(&self) -> bool {
        let admission = &self.admission;
        let (Some(old), Some(new)) = (&admission.old, &admission.new) else {
            return false;
        };
        let Some(offer) = self.stored_offer() else {
            return false;
        };
        let moved = (self.settings.shapes.iter())
            .filter(|shape| shape.key() == offer.mark)
            .any(|&shape| self.claim(shape, old) != self.claim(shape, new));
        self.settings.stamp
            && matches!(admission.op, Op::Update | Op::Status)
            && old.offer == new.offer
            && moved
    }

    /// The case with labels and annotations no mark guards and annotations other than the
    /// offer annotation on each side: other keys, and each mark's keys in the other place (an
    /// annotation of a label mark's key, a label of an annotation mark's).
    pub(crate) fn decorated(&self) -> Case {
        let other_offer = if self.settings.offer_key == OFFER {
            "example.com/handoff"
        } else {
            OFFER
        };
        let mut case = self.clone();
        let shapes = self.settings.shapes.clone();
        let sides = [&mut case.admission.old, &mut case.admission.new];
        for object in sides.into_iter().flatten() {
            for (key, value) in [
                ("app", "web"),
                ("appid", "Extension.team-b.argocd"),
                ("olm.operatorframework.io/owner-namespace", "team-b"),
                ("camel.apache.org/operator", "operator-9"),
                ("app.kubernetes.io/instance", "guestbook-prod"),
            ] {
                object.labels.insert(key.to_owned(), value.to_owned());
            }
            for (key, value) in [
                (
                    other_offer,
                    "appID: ClusterExtension.argocd -> ClusterExtension.prometheus",
                ),
                (LAST_APPLIED, "{}"),
            ] {
                object.annotations.insert(key.to_owned(), value.to_owned());
            }
            for shape in &shapes {
                let keys =
                    std::iter::once(shape.key()).chain(shape.companion().map(|(key, _)| key));
                for key in keys {
                    let guarded = (shapes.iter()).any(|other| {
                        other.spot() == shape.spot().other()
                            && (other.key() == key
                                || other
                                    .companion()
                                    .is_some_and(|(companion, _)| companion == key))
                    });
                    if guarded {
                        continue;
                    }
                    let map = match shape.spot().other() {
                        Spot::Label => &mut object.labels,
                        Spot::Annotation => &mut object.annotations,
                    };
                    map.insert(key.to_owned(), "team-b".to_owned());
                }
            }
        }
        case
    }

    /// The `one owner` lines the request gets (src/decision.rs, `second_owner`): for each mark
    /// N set — a CREATE's, none → X unless `adoption: Deny`, A → X accepted through N's offer —
    /// to a valid owner in scope, when another mark not linked to N names a valid owner that
    /// stays, or is listed before N.
    pub(crate) fn one_owner_lines(&self) -> BTreeSet<String> {
        let admission = &self.admission;
        let place = admission.place;
        let shapes = &self.settings.shapes;
        let offer = self.stored_offer();
        let mut lines = BTreeSet::new();
        for (order, &n) in shapes.iter().enumerate() {
            if !self.set_marks().contains(&n) {
                continue;
            }
            let new = admission.new.as_ref().expect("a mark set");
            let after = self.claim(n, new);
            let before = admission.old.as_ref().map(|old| self.claim(n, old));
            let set = match &before {
                None => true,
                // A value that names no owner is nobody's: replacing it is an adoption.
                Some(before) if before.is_none() || n.owner(before) == Owner::Invalid => {
                    self.settings.adoption == "Allow"
                }
                Some(before) => offer.as_ref().is_some_and(|offer| {
                    offer.mark == n.key()
                        && offer.to_mark == n.key()
                        && offer.from == before.id()
                        && offer.to == after.id()
                }),
            };
            if !set || !place.holds(&n.owner(&after)) {
                continue;
            }
            let second = (shapes.iter().enumerate()).any(|(other_order, &m)| {
                let m_after = self.claim(m, new);
                let stays =
                    (admission.old.as_ref()).is_some_and(|old| self.claim(m, old) == m_after);
                m != n
                    && !self.linked(m, n)
                    && m.owner(&m_after) != Owner::Invalid
                    && (stays || other_order < order)
            });
            if second {
                lines.insert(format!("{}: one owner", n.name()));
            }
        }
        lines
    }

    /// The lines an update from `giver`'s owner to `receiver`'s gets, with the stored offer
    /// across marks (or a misuse of it), under `writes: Any` and `adoption: Allow`, the
    /// receiver's owner valid and in scope; and whether the policy consumes the offer (deployed
    /// mutating, without violations).
    pub(crate) fn across_lines(&self, giver: Shape, receiver: Shape) -> (BTreeSet<String>, bool) {
        let (old, new) = (
            self.admission.old.as_ref().expect("an UPDATE"),
            self.admission.new.as_ref().expect("an UPDATE"),
        );
        let with_identities = !self.settings.identities.is_empty();
        let acts = |owner: &str| !with_identities || self.acts_for(owner);
        let (from, kept) = (self.claim(giver, old), self.claim(giver, new));
        let taken = self.claim(receiver, new);
        let mut lines = BTreeSet::new();
        if kept.is_none() && !self.handed_across(giver) {
            if self.settings.orphaning == "Deny" {
                lines.insert(format!("{}: orphaning", giver.name()));
            } else if !acts(&from.id()) {
                lines.insert(format!("{}: identity", giver.name()));
            }
        }
        if !kept.is_none() && !self.linked(giver, receiver) {
            lines.insert(format!("{}: one owner", receiver.name()));
        } else if !acts(&taken.id()) {
            lines.insert(format!("{}: identity", receiver.name()));
        }
        let offer = self.stored_offer();
        let offer_moves = offer.as_ref().is_some_and(|offer| {
            (self.settings.shapes.iter()).any(|&shape| {
                shape.key() == offer.mark && self.claim(shape, old) != self.claim(shape, new)
            })
        });
        let offer_line = format!("annotation {}: offer", self.settings.offer_key);
        let mut consumed = false;
        if new.offer == old.offer {
            if offer_moves && !self.settings.stamp {
                lines.insert(offer_line);
            }
            consumed = offer_moves && self.settings.stamp;
        } else if !offer_moves {
            let live = offer.as_ref().is_some_and(|offer| {
                (self.settings.shapes.iter()).any(|&shape| {
                    let claim = self.claim(shape, new);
                    shape.key() == offer.mark && !claim.is_none() && claim.id() == offer.from
                })
            });
            if live && !acts(&from.id()) {
                lines.insert(offer_line);
            }
        }
        let consumed = consumed && lines.is_empty();
        (lines, consumed)
    }
}

/// The resource of a `group/Kind`, as RBAC names it (`resource[.group]`) and as the request
/// builder writes it: the kind in lowercase, plural.
pub(crate) fn resource_of(kind: &str) -> String {
    let (group, kind) = kind.split_once('/').expect("group/Kind");
    let plural = format!("{}s", kind.to_lowercase());
    match group {
        "" => plural,
        group => format!("{plural}.{group}"),
    }
}

/// The groups the API server gives `user`.
pub(crate) fn groups_of(user: &str) -> Vec<String> {
    let mut groups = Vec::new();
    if let Some((namespace, _)) = oracle::any_service_account(user) {
        groups.push("system:serviceaccounts".to_owned());
        groups.push(format!("system:serviceaccounts:{namespace}"));
    }
    groups.push("system:authenticated".to_owned());
    groups
}
