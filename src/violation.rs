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
    /// An offer made, withdrawn or left behind against the handoff rules.
    Offer,
}

impl Rule {
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
            Rule::Offer => "offer",
        }
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
    /// The rule that failed.
    pub rule: Rule,
    /// The label or annotation the rule guards.
    pub mark: MarkName<'a>,
    /// The template that carries the mark, when it is not the object's own.
    pub template: Option<&'a str>,
    /// The operation and the object it is on.
    pub subject: Subject<'a>,
    /// The owners the request moves between.
    pub change: Change<'a>,
    /// Why the rule denies, and what to do instead.
    pub reason: String,
}

impl fmt::Display for Violation<'_> {
    /// One line: line breaks that a value brings in (a user name, an annotation) are escaped,
    /// so that violations split on lines.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Violation {
            rule,
            mark,
            template,
            subject,
            change,
            reason,
        } = self;
        let key = match template {
            None => mark.to_string(),
            Some(template) => format!("{mark} in {template}"),
        };
        let rule = rule.name();
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
    use crate::owner::Place;

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

    fn violation<'a>(rule: Rule, object: ObjectRef<'a>, change: Change<'a>) -> Violation<'a> {
        Violation {
            rule,
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
            reason: "why".to_owned(),
        }
    }

    #[test]
    fn a_move_names_both_owners_and_a_kept_owner_the_operation() {
        let moved = Change {
            old: claim("a"),
            new: Claim::default(),
        };
        let cluster = object("CustomResourceDefinition", "", "");
        #[rustfmt::skip]
        let rows = [
            (violation(Rule::Orphaning, cluster, moved),
             r#"label appID: orphaning denied for CustomResourceDefinition x from "a" to none: why"#),
            (violation(Rule::OwnerWrites, object("Job", "team-a", ""), Change::kept(claim("a"))),
             r#"label appID: owner writes denied for UPDATE of Job team-a/x, owned by "a": why"#),
            (violation(Rule::OwnerChange, object("Pod", "team-a", "status"), Change { old: claim("a"), new: claim("b") }),
             r#"label appID: owner change denied for Pod team-a/x (subresource status) from "a" to "b": why"#),
            (violation(Rule::Offer, ObjectRef { name: "", ..cluster }, Change::kept(Claim::default())),
             "label appID: offer denied for UPDATE of CustomResourceDefinition (generated name), owned by none: why"),
            (Violation { template: Some("spec.template"), ..violation(Rule::Identity, object("Deployment", "team-a", ""), Change { old: Claim::default(), new: claim("b") }) },
             r#"label appID in spec.template: identity denied for Deployment team-a/x from none to "b": why"#),
        ];
        for (violation, message) in rows {
            assert_eq!(violation.to_string(), message);
        }
    }

    #[test]
    fn an_audit_replay_says_what_is_wrong_with_the_stored_object() {
        let owned = Change::kept(claim("Extension.team-a.argocd"));
        let mut violation = violation(
            Rule::ClusterScope,
            object("CustomResourceDefinition", "", ""),
            owned,
        );
        violation.subject.operation = Operation::Create;
        violation.subject.audit = true;
        assert_eq!(
            violation.to_string(),
            r#"label appID: cluster scope: CustomResourceDefinition x is owned by "Extension.team-a.argocd": why"#
        );
    }

    #[test]
    fn every_rule_has_its_name() {
        use Rule::*;
        let names: Vec<_> = [
            OwnerChange,
            Adoption,
            Orphaning,
            OwnerValue,
            ClusterScope,
            NamespaceScope,
            Identity,
            OwnerWrites,
            Offer,
        ]
        .map(Rule::name)
        .into();
        assert_eq!(
            names,
            [
                "owner change",
                "adoption",
                "orphaning",
                "owner value",
                "cluster scope",
                "namespace scope",
                "identity",
                "owner writes",
                "offer"
            ]
        );
    }

    #[test]
    fn a_violation_is_one_line_whatever_its_values_hold() {
        let mut broken = violation(
            Rule::OwnerChange,
            object("ConfigMap", "team-a", ""),
            Change {
                old: claim("a"),
                new: claim("b\nc"),
            },
        );
        broken.reason = "offer b\nc\r".to_owned();
        assert_eq!(
            broken.to_string(),
            r#"label appID: owner change denied for ConfigMap team-a/x from "a" to "b\nc": offer b\nc\r"#
        );
    }

    #[test]
    fn several_violations_are_one_per_line() {
        let one = violation(
            Rule::OwnerChange,
            object("ConfigMap", "team-a", ""),
            Change {
                old: claim("a"),
                new: claim("b"),
            },
        );
        let two = Violation {
            mark: MarkName {
                place: Place::Annotation,
                key: "camel.apache.org/operator.id",
            },
            ..one.clone()
        };
        assert_eq!(
            lines(&[one, two]),
            "label appID: owner change denied for ConfigMap team-a/x from \"a\" to \"b\": why\n\
             annotation camel.apache.org/operator.id: owner change denied for ConfigMap team-a/x from \
             \"a\" to \"b\": why"
        );
    }
}
