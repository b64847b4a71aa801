//! What a denial says: which rule failed, for which mark and object, between which owners, and
//! why — one shape for every rule.
//!
//! ```text
//! {mark}: {rule} denied for {object} from {old} to {new}: {reason}
//! {mark}: {rule} denied for {operation} of {object}, owned by {owner}: {reason}
//! ```
//!
//! `{mark}` is the mark as the settings write it (`label appID`, `annotation
//! meta.helm.sh/release-name`), then ` in {template}` for a mark in a workload's template
//! (`label appID in spec.template`). The second form is for a rule that fails while the owner
//! stays: writes under `writes: Owner`, offers. An audit replay judges a stored object's state,
//! not an act:
//!
//! ```text
//! {mark}: {rule}: {object} is owned by {owner}: {reason}
//! ```
//!
//! Several violations are one per line: no reason holds a line break.

use std::fmt;

mod found;
mod reason;

pub use found::{Finding, Found, OwnerFinding, OwnerFound};
pub use reason::{Act, NotActing, Reason, Standing};

use crate::owner::{Claim, MarkName};
use crate::request::{AdmissionRequest, Object, Operation};

/// Every rule the policy applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// An owner changes into another one (transition table).
    OwnerChange,
    /// An owner is set on an unowned object while `adoption: Deny`.
    Adoption,
    /// An owner is removed while `orphaning: Deny`.
    Orphaning,
    /// An owner mark names no valid owner.
    OwnerValue,
    /// A mark sets a second owner beside another mark's.
    OneOwner,
    /// A namespaced owner claims a cluster-scoped object.
    ClusterScope,
    /// A namespaced owner claims an object in another namespace.
    NamespaceScope,
    /// The requester does not act for the owner it sets or removes.
    Identity,
    /// Under `writes: Owner`, the requester does not act for the owner of what it writes.
    OwnerWrites,
    /// In an audit, a derived object's mark differs from its controller's.
    Controller,
    /// In an audit, an object's owner is gone.
    Leftover,
    /// A Binding carries an owner mark, which the API server would copy onto its Pod.
    Binding,
    /// An offer made, withdrawn or left behind against the handoff rules.
    Offer,
}

impl Rule {
    /// Every rule, in the order messages and docs list them.
    pub const ALL: [Rule; 13] = [
        Rule::OwnerChange,
        Rule::Adoption,
        Rule::Orphaning,
        Rule::OwnerValue,
        Rule::OneOwner,
        Rule::ClusterScope,
        Rule::NamespaceScope,
        Rule::Identity,
        Rule::OwnerWrites,
        Rule::Controller,
        Rule::Leftover,
        Rule::Binding,
        Rule::Offer,
    ];

    /// The rule's name, as messages give it.
    pub fn name(self) -> &'static str {
        match self {
            Rule::OwnerChange => "owner change",
            Rule::Adoption => "adoption",
            Rule::Orphaning => "orphaning",
            Rule::OwnerValue => "owner value",
            Rule::OneOwner => "one owner",
            Rule::ClusterScope => "cluster scope",
            Rule::NamespaceScope => "namespace scope",
            Rule::Identity => "identity",
            Rule::OwnerWrites => "owner writes",
            Rule::Controller => "controller",
            Rule::Leftover => "leftover",
            Rule::Binding => "binding",
            Rule::Offer => "offer",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The owner before and after a request: the same one when the request keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change<'a> {
    /// The stored object's owner (none on CREATE).
    pub old: Claim<'a>,
    /// The new object's owner (the stored one on DELETE).
    pub new: Claim<'a>,
}

impl<'a> Change<'a> {
    /// A request that keeps `owner`.
    pub fn kept(owner: Claim<'a>) -> Change<'a> {
        Change {
            old: owner,
            new: owner,
        }
    }
}

/// A rule that denies a request, with everything its message says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation<'a> {
    /// The label or annotation the rule guards.
    pub mark: MarkName<'a>,
    /// The template that carries the mark, when it is not the object's own.
    pub template: Option<&'a str>,
    /// The operation and the object it is on.
    pub subject: Subject<'a>,
    /// The owners the request moves between.
    pub change: Change<'a>,
    /// Why the rule denies, and what to do instead.
    pub reason: Reason<'a>,
    /// What the lookup of the object's controller found, when the rules read it
    /// ([`crate::derivation`]): why the mark was not inherited from it.
    pub controller: Option<Found>,
    /// What the lookup of the owner the request moves found, when the rules read it
    /// ([`crate::leftover`]).
    pub owner: Option<OwnerFound>,
}

impl Violation<'_> {
    /// The rule that failed.
    pub fn rule(&self) -> Rule {
        self.reason.rule()
    }
}

impl fmt::Display for Violation<'_> {
    /// One line: line breaks that a value brings in (a user name, an annotation) are escaped,
    /// so that violations split on lines.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Violation {
            mark,
            template,
            subject,
            change,
            reason,
            controller,
            owner: found_owner,
        } = self;
        let key = match template {
            None => mark.to_string(),
            Some(template) => format!("{mark} in {template}"),
        };
        let rule = self.rule();
        let Subject {
            operation,
            object,
            audit,
        } = subject;
        let Change { old, new } = change;
        let line = if *audit {
            format!("{key}: {rule}: {object} is owned by {new}: {reason}")
        } else if old == new {
            format!("{key}: {rule} denied for {operation} of {object}, owned by {old}: {reason}")
        } else {
            format!("{key}: {rule} denied for {object} from {old} to {new}: {reason}")
        };
        let line = match controller {
            Some(found) => format!("{line}; {found}"),
            None => line,
        };
        let line = match found_owner {
            Some(found) => format!("{line}; {found}"),
            None => line,
        };
        if line.contains(['\n', '\r']) {
            f.write_str(&line.replace('\n', "\\n").replace('\r', "\\r"))
        } else {
            f.write_str(&line)
        }
    }
}

/// What a request does, to which object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subject<'a> {
    /// The request's operation.
    pub operation: Operation,
    /// The object, as messages name it.
    pub object: ObjectRef<'a>,
    /// Whether the request is an audit replay: the stored object's state, not an act, is
    /// judged, and messages say what is wrong with it (for a PolicyReport).
    pub audit: bool,
}

impl<'a> Subject<'a> {
    /// The subject of `request`, on `object` (the new object, or the stored one on DELETE).
    pub fn of(request: &'a AdmissionRequest<'a>, object: &'a Object<'a>) -> Subject<'a> {
        let name = if request.name.is_empty() {
            &object.metadata.name
        } else {
            &request.name
        };
        let namespace = request.object_scope().namespace();
        Subject {
            operation: request.operation,
            audit: request.is_audit_replay(),
            object: ObjectRef {
                kind: &request.kind.kind,
                namespace,
                name,
                subresource: &request.sub_resource,
            },
        }
    }
}

/// An object as messages name it: `Kind namespace/name`, or `Kind name` when cluster-scoped,
/// then the subresource written, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectRef<'a> {
    /// The object's kind.
    pub kind: &'a str,
    /// Its namespace; empty when cluster-scoped.
    pub namespace: &'a str,
    /// Its name; empty on a CREATE with `generateName`.
    pub name: &'a str,
    /// The subresource written; empty for the object itself.
    pub subresource: &'a str,
}

impl fmt::Display for ObjectRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = if self.name.is_empty() {
            "(generated name)"
        } else {
            self.name
        };
        match self.namespace {
            "" => write!(f, "{} {name}", self.kind)?,
            namespace => write!(f, "{} {namespace}/{name}", self.kind)?,
        }
        match self.subresource {
            "" => Ok(()),
            subresource => write!(f, " (subresource {subresource})"),
        }
    }
}

/// Several violations, one per line.
pub fn lines(violations: &[Violation<'_>]) -> String {
    violations
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::{Acting, Identity};
    use crate::owner::{InvalidOwner, OwnerMark, Place, Shape};
    use crate::request::{Text, UserInfo};
    use crate::scope::{ScopeViolation, Unfit};

    fn claim(value: &str) -> Claim<'_> {
        Claim {
            value: Some(value),
            ..Claim::default()
        }
    }

    fn object<'a>(kind: &'a str, namespace: &'a str, subresource: &'a str) -> ObjectRef<'a> {
        ObjectRef {
            kind,
            namespace,
            name: "x",
            subresource,
        }
    }

    fn violation<'a>(
        object: ObjectRef<'a>,
        change: Change<'a>,
        reason: Reason<'a>,
    ) -> Violation<'a> {
        Violation {
            mark: MarkName {
                place: Place::Label,
                key: "appID",
            },
            template: None,
            subject: Subject {
                operation: Operation::Update,
                object,
                audit: false,
            },
            change,
            reason,
            controller: None,
            owner: None,
        }
    }

    const ANNOTATION: &str = "single-owner-policy.io/offer";
    const CAMEL: &str = "camel.apache.org/operator.id";

    fn mark(json: &str) -> OwnerMark {
        serde_json::from_str(json).unwrap()
    }

    /// What `user` acts for under one identity binding it to `owners`.
    fn acting(owners: &[&str]) -> Acting {
        let user = UserInfo {
            username: Text::from("alice"),
            groups: Vec::new(),
        };
        let identity = Identity {
            owners: owners.iter().map(|&owner| owner.to_owned()).collect(),
            users: vec!["alice".to_owned()],
            groups: Vec::new(),
            access: None,
            changes: Vec::new(),
        };
        Acting::of(&user, &[identity])
    }

    /// Every reason's message, once: the only place the policy's texts are asserted (e2e
    /// shows a few through the host).
    #[test]
    fn every_reason_says_why_and_what_to_do() {
        let camel = mark(r#"{"annotation": "camel.apache.org/operator.id"}"#);
        let tracking = mark(
            r#"{"annotation": "argocd.argoproj.io/tracking-id", "format": "ArgoCDTrackingID"}"#,
        );
        let marks = [camel.clone(), tracking.clone()];
        let (one, two) = (claim("operator-1"), claim("operator-2"));
        let not_acting = |act, standing| {
            Reason::NotActing(NotActing {
                act,
                user: "alice",
                owner: one,
                standing,
                writer: None,
            })
        };
        let none = || Standing::ActsFor(acting(&[]));
        #[rustfmt::skip]
        let rows: Vec<(Reason, &str)> = vec![
            (Reason::OwnerChange { annotation: ANNOTATION, mark: CAMEL, from: one, to: two, pending: None },
             r#"an object has one owner; to hand it over, its owner offers it by setting the annotation single-owner-policy.io/offer="camel.apache.org/operator.id: operator-1 -> operator-2", then the new owner moves the mark and removes the annotation"#),
            (Reason::OwnerChange { annotation: ANNOTATION, mark: CAMEL, from: one, to: two, pending: Some("camel.apache.org/operator.id: operator-1 -> operator-3") },
             r#"an object has one owner; the pending offer (single-owner-policy.io/offer) is "camel.apache.org/operator.id: operator-1 -> operator-3", which does not hand it to "operator-2""#),
            (Reason::Adoption,
             "adoption is set to Deny; create objects with their owner mark instead of marking existing ones"),
            (Reason::Orphaning,
             "orphaning is set to Deny; the owner mark stays until the object is deleted, or its owner hands it over with an offer"),
            (Reason::OwnerValue(InvalidOwner::Empty),
             "the owner is empty; name an owner or remove it"),
            (Reason::OwnerValue(InvalidOwner::UnknownKind { kind: "Operator".to_owned(), expected: "ClusterExtension.<name>".to_owned() }),
             r#""Operator" is not a configured owner kind; use ClusterExtension.<name>"#),
            (Reason::OwnerValue(InvalidOwner::Incomplete { expected: "Extension.<namespace>.<name>".to_owned() }),
             "the owner is incomplete; use Extension.<namespace>.<name>"),
            (Reason::OwnerValue(InvalidOwner::HalfPair { present: "label a".to_owned(), missing: "b".to_owned() }),
             "label a is set without b; both are set and removed together"),
            (Reason::OwnerValue(InvalidOwner::Malformed { expected: "<application>:<group>/<kind>:<namespace>/<name>" }),
             "the value is not in the form <application>:<group>/<kind>:<namespace>/<name>"),
            (Reason::Scope(ScopeViolation::ClusterScopedObject { owner_kind: "Extension" }),
             "a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner"),
            (Reason::Scope(ScopeViolation::OtherNamespace { owner_kind: "Extension", owner_namespace: "team-a", object_namespace: "team-b" }),
             "Extension owners only own objects in their own namespace (team-a), not in team-b; use an owner from team-b or a cluster-level owner"),
            (Reason::SecondOwner { annotation: ANNOTATION, under: &camel, owner: one, mark: &tracking, second: Claim { shape: Shape::Tracking, ..claim("guestbook") } },
             r#"the object is owned by "operator-1" under annotation camel.apache.org/operator.id, and an object has one owner across tools; its owner hands it over with an offer (single-owner-policy.io/offer="camel.apache.org/operator.id: operator-1 -> argocd.argoproj.io/tracking-id: guestbook")"#),
            (not_acting(Act::Set, Standing::ActsFor(acting(&["operator-2", "Extension.*"]))),
             r#"user alice acts for "Extension.*", "operator-2", not for "operator-1"; only a requester acting for an owner may set it"#),
            (not_acting(Act::Remove, none()),
             r#"user alice acts for none, not for "operator-1"; only a requester acting for an owner may remove it"#),
            (not_acting(Act::Set, Standing::WritesOnly),
             r#"user alice only writes for "operator-1" (access: Write); only a requester acting for an owner may set it"#),
            (not_acting(Act::Write, none()),
             r#"user alice acts for none, not for "operator-1"; only a requester acting for an owner may update or delete it (writes: Owner)"#),
            (Reason::ThroughBinding,
             "the API server copies a Binding's labels and annotations onto its Pod, where no rule would judge them; set owner marks on the Pod itself"),
            (Reason::NotActing(NotActing { act: Act::Write, user: "system:serviceaccount:keda:keda-operator", owner: one, standing: none(), writer: Some("keda") }),
             r#"user system:serviceaccount:keda:keda-operator acts for none, not for "operator-1"; only a requester acting for an owner may update or delete it (writes: Owner); it is the writer keda of the catalogue: enable it with clusterWriters (docs/writers.md)"#),
            (not_acting(Act::Write, Standing::Changes { grants: "replicas".to_owned(), beyond: "spec.template".to_owned() }),
             r#"user alice only changes replicas in what "operator-1" owns (changes), and the write changes spec.template; only a requester acting for an owner may update or delete it (writes: Owner)"#),
            (not_acting(Act::Offer, none()),
             r#"user alice acts for none, not for "operator-1"; only a requester acting for an owner may offer it or withdraw an offer of it"#),
            (not_acting(Act::Withdraw, none()),
             r#"user alice acts for none, not for "operator-1"; only a requester acting for an owner may withdraw or change an offer of it"#),
            (not_acting(Act::Repoint, none()),
             r#"user alice acts for none, not for "operator-1"; only a requester acting for an owner may repoint it at another controller, whose marks it would follow (parentKinds)"#),
            (Reason::Repointed { owner: one },
             r#"its marks would follow a new controller's (parentKinds), and only one that carries its owner may take it; point it at a controller of "operator-1"'s, or hand it over with an offer first"#),
            (Reason::NotActing(NotActing { act: Act::Set, user: "", owner: one, standing: none(), writer: None }),
             r#"user "" acts for none, not for "operator-1"; only a requester acting for an owner may set it"#),
            (Reason::OfferNotConsumed { annotation: ANNOTATION },
             "an update that changes or removes the owner consumes the offer; remove the annotation single-owner-policy.io/offer in the same update"),
            (Reason::OfferWithMove { annotation: ANNOTATION, creating: false },
             "an offer (single-owner-policy.io/offer) is made in the update that changes the owner; change the owner and make an offer in separate updates"),
            (Reason::OfferWithMove { annotation: ANNOTATION, creating: true },
             "an offer (single-owner-policy.io/offer) is made in the CREATE that sets the owner; create the object, then offer it in an update of its own"),
            (Reason::OfferMalformed { text: "operator-2" },
             r#"the offer "operator-2" is not in the form <mark>: <from> -> <to>, or <mark>: <from> -> <other mark>: <to>"#),
            (Reason::OfferNamesNoMark { key: "appID", marks: &marks },
             r#"the offer names "appID", which is no owner mark; the marks are camel.apache.org/operator.id, argocd.argoproj.io/tracking-id"#),
            (Reason::OfferOfNothing { mark: &camel },
             "the object has no owner under annotation camel.apache.org/operator.id to hand over"),
            (Reason::OfferByAnother { from: "operator-0", owner: one },
             r#"the offer is made by "operator-0", but the object is owned by "operator-1"; only the owner offers it"#),
            (Reason::OfferToItself { to: "operator-1" },
             r#"the offer names the current owner "operator-1"; name the receiving owner"#),
            (Reason::OfferToUnfit { to: "Extension.team-b.x", why: Unfit::Scope(ScopeViolation::OtherNamespace { owner_kind: "Extension", owner_namespace: "team-b", object_namespace: "team-a" }) },
             r#"the offer names "Extension.team-b.x", which cannot own the object: Extension owners only own objects in their own namespace (team-b), not in team-a; use an owner from team-a or a cluster-level owner"#),
            (Reason::OfferToUnfit { to: "", why: Unfit::Value(InvalidOwner::Empty) },
             r#"the offer names "", which cannot own the object: the owner is empty; name an owner or remove it"#),
        ];
        for (reason, message) in rows {
            assert_eq!(reason.to_string(), message, "{reason:?}");
        }
    }

    #[test]
    fn each_reason_belongs_to_its_rule() {
        let one = claim("operator-1");
        let not_acting = |act| {
            Reason::NotActing(NotActing {
                act,
                user: "alice",
                owner: one,
                standing: Standing::WritesOnly,
                writer: None,
            })
        };
        #[rustfmt::skip]
        let rows = [
            (Reason::Adoption, Rule::Adoption),
            (Reason::Orphaning, Rule::Orphaning),
            (Reason::OwnerValue(InvalidOwner::Empty), Rule::OwnerValue),
            (Reason::Scope(ScopeViolation::ClusterScopedObject { owner_kind: "Extension" }), Rule::ClusterScope),
            (Reason::Scope(ScopeViolation::OtherNamespace { owner_kind: "E", owner_namespace: "a", object_namespace: "b" }), Rule::NamespaceScope),
            (not_acting(Act::Set), Rule::Identity),
            (not_acting(Act::Remove), Rule::Identity),
            (not_acting(Act::Repoint), Rule::Identity),
            (Reason::Repointed { owner: one }, Rule::Controller),
            (not_acting(Act::Write), Rule::OwnerWrites),
            (not_acting(Act::Offer), Rule::Offer),
            (not_acting(Act::Withdraw), Rule::Offer),
            (Reason::OfferToItself { to: "x" }, Rule::Offer),
            (Reason::from(Unfit::Value(InvalidOwner::Empty)), Rule::OwnerValue),
        ];
        for (reason, rule) in rows {
            assert_eq!(reason.rule(), rule, "{reason:?}");
        }
    }

    #[test]
    fn a_move_names_both_owners_and_a_kept_owner_the_operation() {
        let moved = Change {
            old: claim("a"),
            new: Claim::default(),
        };
        let cluster = object("CustomResourceDefinition", "", "");
        let one_owner = Reason::OfferToItself { to: "a" };
        #[rustfmt::skip]
        let rows = [
            (violation(cluster, moved, Reason::Orphaning),
             r#"label appID: orphaning denied for CustomResourceDefinition x from "a" to none: orphaning is set to Deny; the owner mark stays until the object is deleted, or its owner hands it over with an offer"#),
            (violation(object("Pod", "team-a", "status"), Change { old: claim("a"), new: claim("b") }, Reason::Adoption),
             r#"label appID: adoption denied for Pod team-a/x (subresource status) from "a" to "b": adoption is set to Deny; create objects with their owner mark instead of marking existing ones"#),
            (violation(ObjectRef { name: "", ..cluster }, Change::kept(Claim::default()), one_owner.clone()),
             r#"label appID: offer denied for UPDATE of CustomResourceDefinition (generated name), owned by none: the offer names the current owner "a"; name the receiving owner"#),
            (Violation { template: Some("spec.template"), ..violation(object("Deployment", "team-a", ""), Change { old: Claim::default(), new: claim("b") }, Reason::Adoption) },
             r#"label appID in spec.template: adoption denied for Deployment team-a/x from none to "b": adoption is set to Deny; create objects with their owner mark instead of marking existing ones"#),
        ];
        for (violation, message) in rows {
            assert_eq!(violation.to_string(), message);
        }
    }

    #[test]
    fn an_audit_replay_says_what_is_wrong_with_the_stored_object() {
        let owned = Change::kept(claim("Extension.team-a.argocd"));
        let reason = Reason::Scope(ScopeViolation::ClusterScopedObject {
            owner_kind: "Extension",
        });
        let mut violation = violation(object("CustomResourceDefinition", "", ""), owned, reason);
        violation.subject.operation = Operation::Create;
        violation.subject.audit = true;
        assert_eq!(
            violation.to_string(),
            r#"label appID: cluster scope: CustomResourceDefinition x is owned by "Extension.team-a.argocd": a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner"#
        );
    }

    /// The rules' names are the ones docs/rules.md lists, each once.
    #[test]
    fn every_rule_has_the_name_the_docs_give_it() {
        let docs = include_str!("../docs/rules.md");
        for rule in Rule::ALL {
            let name = format!("`{}`", rule.name());
            assert!(docs.contains(&name), "docs/rules.md does not name {name}");
        }
        let mut names: Vec<_> = Rule::ALL.map(Rule::name).into();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Rule::ALL.len(), "two rules share a name");
    }

    #[test]
    fn a_violation_is_one_line_whatever_its_values_hold() {
        let broken = violation(
            object("ConfigMap", "team-a", ""),
            Change::kept(claim("a")),
            Reason::NotActing(NotActing {
                act: Act::Write,
                user: "eve\nadmin\r",
                owner: claim("a"),
                standing: Standing::WritesOnly,
                writer: None,
            }),
        );
        assert_eq!(
            broken.to_string(),
            r#"label appID: owner writes denied for UPDATE of ConfigMap team-a/x, owned by "a": user eve\nadmin\r only writes for "a" (access: Write); only a requester acting for an owner may update or delete it (writes: Owner)"#
        );
    }

    #[test]
    fn several_violations_are_one_per_line() {
        let one = violation(
            object("ConfigMap", "team-a", ""),
            Change::kept(claim("a")),
            Reason::Adoption,
        );
        let two = Violation {
            mark: MarkName {
                place: Place::Annotation,
                key: CAMEL,
            },
            ..one.clone()
        };
        assert_eq!(lines(&[one.clone(), two.clone()]), format!("{one}\n{two}"));
    }
}
