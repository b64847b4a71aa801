//! The decision: applies the transition, scope, identity and handoff rules to a request, then
//! the exemptions, and answers with a Kubewarden validation response — mutating the object when
//! the owner label is stamped or a consumed offer removed.

use std::collections::HashMap;
use std::fmt;

use kubewarden_policy_sdk::response::ValidationResponse;
use kubewarden_policy_sdk::settings::SettingsValidationResponse;

use crate::handoff::{self, OfferRule};
use crate::identity::Acting;
use crate::mutation::{self, Mutation};
use crate::owner::Claim;
use crate::request::{AdmissionRequest, Object, Operation, ValidatePayload};
use crate::scope::{self, ObjectScope};
use crate::settings::{OwnerLabel, Settings, Writes};
use crate::transition::{self, Denial, Judgement, Permissions};

/// The HTTP code of a denial.
pub const DENIED: u16 = 403;
/// The HTTP code of a request the policy cannot read.
pub const BAD_REQUEST: u16 = 400;
/// The audit annotation that records a bypassed rule.
pub const EXEMPTION_ANNOTATION: &str = "single-owner-policy-exemption";

/// Evaluates a `validate` payload: `{"request": AdmissionRequest, "settings": Settings}`.
pub fn validate(payload: &[u8]) -> ValidationResponse {
    let parsed = match ValidatePayload::from_json(payload) {
        Ok(parsed) => parsed,
        Err(error) => return unreadable(&error),
    };
    match evaluate(&parsed.request, &parsed.settings) {
        Verdict::Respond(response) => response,
        Verdict::Mutate(change) => match mutation::mutated_object(payload, &change) {
            Ok(object) => ValidationResponse {
                mutated_object: Some(object),
                ..accept()
            },
            Err(error) => unreadable(&error),
        },
    }
}

/// Evaluates a `validate_settings` payload.
pub fn validate_settings(payload: &[u8]) -> SettingsValidationResponse {
    match Settings::from_json(payload).and_then(|settings| settings.validate()) {
        Ok(()) => SettingsValidationResponse {
            valid: true,
            message: None,
        },
        Err(message) => SettingsValidationResponse {
            valid: false,
            message: Some(message),
        },
    }
}

/// What the policy answers to a request.
#[derive(Debug)]
pub enum Verdict {
    /// Answer with this response.
    Respond(ValidationResponse),
    /// Accept the object, changed so.
    Mutate(Mutation),
}

/// Applies every rule to a request.
pub fn evaluate(request: &AdmissionRequest<'_>, settings: &Settings) -> Verdict {
    let acting = (!settings.identities.is_empty())
        .then(|| Acting::of(&request.user_info, &settings.identities));
    let guards_deletes = acting.is_some() && settings.writes == Writes::Owner;
    let (old, new) = match (request.operation, &request.old_object, &request.object) {
        _ if request.is_subresource() && !subresource_changes_ownership(request, settings) => {
            return Verdict::Respond(accept());
        }
        (Operation::Create, _, Some(new)) => (None, Some(new)),
        (Operation::Update, Some(old), Some(new)) => (Some(old), Some(new)),
        (Operation::Delete, Some(old), _) if guards_deletes => (Some(old), None),
        (Operation::Delete, _, _) if guards_deletes => {
            return Verdict::Respond(unreadable("a DELETE request needs `oldObject`"));
        }
        (Operation::Delete | Operation::Connect, _, _) => return Verdict::Respond(accept()),
        (Operation::Create, _, None) => {
            return Verdict::Respond(unreadable("a CREATE request needs `object`"));
        }
        (Operation::Update, _, _) => {
            return Verdict::Respond(unreadable(
                "an UPDATE request needs `object` and `oldObject`",
            ));
        }
    };
    let offer = |object: Option<&Object<'_>>| match object {
        Some(object) => object
            .metadata
            .annotation(&settings.transfer_annotation)
            .map(|offer| offer.map(|text| text.0.into_owned())),
        None => Ok(None),
    };
    let (old_offer, new_offer) = match (offer(old), offer(new)) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(error), _) => return Verdict::Respond(unreadable(&format!("oldObject.{error}"))),
        (_, Err(error)) => return Verdict::Respond(unreadable(&format!("object.{error}"))),
    };
    let context = Context {
        request,
        settings,
        acting: acting.as_ref(),
        offered: old_offer.as_deref(),
    };
    let mut violations: Vec<Violation> = settings
        .owner_labels
        .iter()
        .filter_map(|entry| context.judge(entry, old, new))
        .collect();
    let mut change = Mutation::default();
    if let Some(new) = new {
        match context.judge_offer(old, new, new_offer.as_deref()) {
            Ok(false) => {}
            Ok(true) => change.remove_annotation = Some(settings.transfer_annotation.clone()),
            Err(offer_violations) => violations.extend(offer_violations),
        }
    }
    if violations.is_empty() {
        if let (true, Some(new), Some(acting), None) = (settings.stamp, new, context.acting, old) {
            change.labels = context.stamp(new, acting);
        }
        return if change == Mutation::default() {
            Verdict::Respond(accept())
        } else {
            Verdict::Mutate(change)
        };
    }
    let messages = violations.iter().map(ToString::to_string);
    Verdict::Respond(match exemption(request, settings) {
        Some(exempt) => accept_exempt(&exempt, messages.collect()),
        None => reject(messages.collect::<Vec<_>>().join("; "), DENIED),
    })
}

/// Whether a subresource request may change what the rules guard, and so is judged like a
/// request on the object itself: an UPDATE whose body is the object (a `Pod` on `pods/status`,
/// not the `Scale` of `deployments/scale`) and whose owner labels, kind labels or offer differ
/// from the stored object's. Most built-in kinds' status strategies persist label changes
/// (`podStatusStrategy.PrepareForUpdate` keeps the new object's metadata), so a status write can
/// move an object between owners; one that keeps them is accepted whoever sends it, since
/// kubelets and controllers write the status of every owner's objects.
fn subresource_changes_ownership(request: &AdmissionRequest<'_>, settings: &Settings) -> bool {
    let (Operation::Update, Some(old), Some(new)) =
        (request.operation, &request.old_object, &request.object)
    else {
        return false;
    };
    if request.body_is_a_scale() {
        return false;
    }
    let owners_differ = settings.owner_labels.iter().any(|entry| {
        Claim::read(entry, &old.metadata.labels) != Claim::read(entry, &new.metadata.labels)
    });
    fn offer<'o>(object: &'o Object<'_>, annotation: &str) -> Option<&'o str> {
        object
            .metadata
            .annotations
            .get(annotation)
            .map(|raw| raw.get())
    }
    let annotation = settings.transfer_annotation.as_str();
    owners_differ || offer(old, annotation) != offer(new, annotation)
}

/// What the rules read besides the owner labels.
struct Context<'a> {
    request: &'a AdmissionRequest<'a>,
    settings: &'a Settings,
    /// The owners the requester acts for; `None` without identities.
    acting: Option<&'a Acting>,
    /// The owner the stored object is offered to, if any.
    offered: Option<&'a str>,
}

impl<'a> Context<'a> {
    /// Applies the rules of one owner label entry. `old` is `None` on CREATE, `new` on DELETE.
    fn judge(
        &self,
        entry: &'a OwnerLabel,
        old: Option<&'a Object<'a>>,
        new: Option<&'a Object<'a>>,
    ) -> Option<Violation<'a>> {
        let old_claim = old.map(|old| Claim::read(entry, &old.metadata.labels));
        let Some(new) = new else {
            // DELETE, under `writes: Owner`.
            let old = old?;
            let owner = old_claim.unwrap_or_default();
            return self.check_writes(entry, owner, old);
        };
        let new_claim = Claim::read(entry, &new.metadata.labels);
        let violation = |rule, reason| {
            self.violation(
                &entry.key,
                rule,
                new,
                old_claim.unwrap_or_default(),
                new_claim,
                reason,
            )
        };
        let permissions = Permissions {
            adoption: self.settings.adoption,
            orphaning: self.settings.orphaning,
        };
        match transition::judge(old_claim, new_claim, self.offered, permissions) {
            Judgement::Allow => None,
            Judgement::Deny(Denial::OwnerChange) => {
                // A receiver that could not own the object is the first thing to fix.
                if let Err((rule, reason)) = self.check_owner(entry, new_claim) {
                    return Some(violation(rule, reason));
                }
                let annotation = &self.settings.transfer_annotation;
                let hint = handoff::change_hint(annotation, self.offered, &new_claim.id());
                let reason = format!("{}; {hint}", Denial::OwnerChange.reason());
                Some(violation(Denial::OwnerChange.rule(), reason))
            }
            Judgement::Deny(denial) => Some(violation(denial.rule(), denial.reason().to_owned())),
            Judgement::Keep => self.check_writes(entry, new_claim, new),
            Judgement::Remove => self
                .not_acting_for(old_claim.unwrap_or_default(), "remove")
                .map(|reason| violation("identity", reason)),
            Judgement::Set | Judgement::Accept => {
                if let Err((rule, reason)) = self.check_owner(entry, new_claim) {
                    return Some(violation(rule, reason));
                }
                self.not_acting_for(new_claim, "set")
                    .map(|reason| violation("identity", reason))
            }
        }
    }

    /// Checks that a claim names a valid owner, in scope for the request's object.
    fn check_owner(
        &self,
        entry: &OwnerLabel,
        claim: Claim<'_>,
    ) -> Result<(), (&'static str, String)> {
        let owner = claim
            .owner(entry)
            .map_err(|invalid| ("owner value", invalid.to_string()))?;
        let scope = self.request.object_scope();
        scope::check(&owner, scope).map_err(|outside| {
            let rule = match scope {
                ObjectScope::Cluster => "cluster scope",
                ObjectScope::Namespace(_) => "namespace scope",
            };
            (rule, outside.to_string())
        })
    }

    /// Under `writes: Owner`, an UPDATE or DELETE of an owned object requires acting for its
    /// owner.
    fn check_writes(
        &self,
        entry: &'a OwnerLabel,
        owner: Claim<'a>,
        object: &'a Object<'a>,
    ) -> Option<Violation<'a>> {
        // Status writers act for every owner: a subresource write is judged on what it
        // changes, never on who writes it.
        let subresource = self.request.is_subresource();
        if self.settings.writes != Writes::Owner || owner.is_none() || subresource {
            return None;
        }
        let reason = self.not_acting_for(owner, "update or delete")?;
        let reason = format!("{reason} (writes: Owner)");
        Some(self.violation(&entry.key, "owner writes", object, owner, owner, reason))
    }

    /// Applies the handoff rules to the transfer annotation of a CREATE or UPDATE. `Ok(true)`
    /// when a consumed offer is to be removed by the policy.
    fn judge_offer(
        &self,
        old: Option<&'a Object<'a>>,
        new: &'a Object<'a>,
        new_offer: Option<&str>,
    ) -> Result<bool, Vec<Violation<'a>>> {
        let annotation = self.settings.transfer_annotation.as_str();
        let claims = self.settings.owner_labels.iter().map(|entry| {
            let old = old.map(|old| Claim::read(entry, &old.metadata.labels));
            (
                entry,
                old.unwrap_or_default(),
                Claim::read(entry, &new.metadata.labels),
            )
        });
        let moved = claims.clone().find(|(_, old, new)| old != new);
        let rule = handoff::judge(self.offered, new_offer, moved.is_some());
        let moved_violation = |(_, old_claim, new_claim): (&OwnerLabel, Claim<'a>, Claim<'a>)| {
            let reason = rule.reason(annotation);
            vec![self.violation(annotation, "offer", new, old_claim, new_claim, reason)]
        };
        match rule {
            OfferRule::Fine => Ok(false),
            OfferRule::Consume if self.settings.stamp => Ok(true),
            OfferRule::Consume | OfferRule::OfferWithMove => {
                Err(moved.map(moved_violation).unwrap_or_default())
            }
            OfferRule::Check { to } => {
                let owned: Vec<_> = claims.filter(|(_, _, claim)| !claim.is_none()).collect();
                if owned.is_empty() && to.is_some() {
                    let reason = "the object has no owner to hand it over".to_owned();
                    let none = Claim::default();
                    return Err(vec![
                        self.violation(annotation, "offer", new, none, none, reason),
                    ]);
                }
                let violations: Vec<_> = owned
                    .into_iter()
                    .filter_map(|(entry, _, owner)| {
                        let reason = self.check_offer(entry, owner, to)?;
                        Some(self.violation(annotation, "offer", new, owner, owner, reason))
                    })
                    .collect();
                if violations.is_empty() {
                    Ok(false)
                } else {
                    Err(violations)
                }
            }
        }
    }

    /// Why the requester may not make, change or withdraw an offer (`to`) of an object that
    /// `owner` owns, if it may not.
    fn check_offer(
        &self,
        entry: &OwnerLabel,
        owner: Claim<'_>,
        to: Option<&str>,
    ) -> Option<String> {
        if let Some(reason) = self.not_acting_for(owner, "offer it or withdraw an offer of") {
            return Some(reason);
        }
        let to = to?;
        if to == owner.id() {
            return Some(format!(
                "the offer names the current owner {to:?}; name the receiving owner"
            ));
        }
        let receiver = Claim::of_owner(entry, to);
        self.check_owner(entry, receiver)
            .err()
            .map(|(_, why)| format!("the offer names {to:?}, which cannot own the object: {why}"))
    }

    /// Why the requester may not `act` on `owner`, when identities are set and it does not act
    /// for that owner.
    fn not_acting_for(&self, owner: Claim<'_>, act: &str) -> Option<String> {
        let acting = self.acting?;
        if acting.acts_for(&owner.id()) {
            return None;
        }
        let user = &self.request.user_info.username;
        Some(format!(
            "user {user} acts for {acting}, not for {owner}; only a requester acting for an \
             owner may {act} it"
        ))
    }

    /// The labels that stamp the one owner the requester acts for on a new object: in the first
    /// owner label whose shape reads it as a valid owner in scope, unless the object already
    /// carries that label.
    fn stamp(&self, new: &Object<'_>, acting: &Acting) -> Vec<(String, String)> {
        let Some(owner) = acting.single_owner() else {
            return Vec::new();
        };
        let target = self.settings.owner_labels.iter().find_map(|entry| {
            let claim = Claim::of_owner(entry, owner);
            self.check_owner(entry, claim).ok()?;
            Some((entry, claim))
        });
        match target {
            Some((entry, claim)) if Claim::read(entry, &new.metadata.labels).is_none() => claim
                .labels(entry)
                .into_iter()
                .map(|(key, value)| (key.to_owned(), value.to_owned()))
                .collect(),
            _ => Vec::new(),
        }
    }

    fn violation(
        &self,
        key: &'a str,
        rule: &'static str,
        object: &'a Object<'a>,
        old: Claim<'a>,
        new: Claim<'a>,
        reason: String,
    ) -> Violation<'a> {
        Violation {
            key,
            rule,
            operation: self.request.operation,
            object: ObjectRef::of(self.request, object),
            old,
            new,
            reason,
        }
    }
}

/// A rule that denies a request, with all a message needs.
struct Violation<'a> {
    /// The label or annotation the rule guards.
    key: &'a str,
    rule: &'static str,
    operation: Operation,
    object: ObjectRef<'a>,
    old: Claim<'a>,
    /// The new owner; the old one when it does not change (and on DELETE).
    new: Claim<'a>,
    reason: String,
}

impl fmt::Display for Violation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Violation {
            key,
            rule,
            operation,
            object,
            old,
            new,
            reason,
        } = self;
        if old == new {
            write!(
                f,
                "{key}: {rule} denied for {operation} of {object}, owned by {old}: {reason}"
            )
        } else {
            write!(
                f,
                "{key}: {rule} denied for {object} from {old} to {new}: {reason}"
            )
        }
    }
}

/// An object as messages name it: `Kind namespace/name`, or `Kind name` when cluster-scoped.
struct ObjectRef<'a> {
    kind: &'a str,
    namespace: &'a str,
    name: &'a str,
    /// The subresource written, if any.
    subresource: &'a str,
}

impl<'a> ObjectRef<'a> {
    fn of(request: &'a AdmissionRequest<'a>, object: &'a Object<'a>) -> ObjectRef<'a> {
        let name = if request.name.is_empty() {
            &object.metadata.name
        } else {
            &request.name
        };
        let namespace = match request.object_scope() {
            ObjectScope::Cluster => "",
            ObjectScope::Namespace(namespace) => namespace,
        };
        ObjectRef {
            kind: &request.kind.kind,
            namespace,
            name,
            subresource: &request.sub_resource,
        }
    }
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

/// Says who is exempt, when the requester is: by user name, or by the first exempt group.
fn exemption(request: &AdmissionRequest<'_>, settings: &Settings) -> Option<String> {
    let user = &request.user_info.username;
    let exemptions = &settings.exemptions;
    if exemptions.users.iter().any(|exempt| exempt == &**user) {
        return Some(format!("exempt user {user}"));
    }
    let group = request
        .user_info
        .groups
        .iter()
        .find(|group| exemptions.groups.iter().any(|exempt| exempt == &***group))?;
    Some(format!("user {user} of exempt group {group}"))
}

fn accept() -> ValidationResponse {
    ValidationResponse {
        accepted: true,
        message: None,
        code: None,
        mutated_object: None,
        audit_annotations: None,
        warnings: None,
    }
}

fn accept_exempt(exempt: &str, messages: Vec<String>) -> ValidationResponse {
    let bypassed = format!("{exempt} bypassed: {}", messages.join("; "));
    ValidationResponse {
        audit_annotations: Some(HashMap::from([(EXEMPTION_ANNOTATION.to_owned(), bypassed)])),
        warnings: Some(
            messages
                .into_iter()
                .map(|message| format!("{exempt} bypassed: {message}"))
                .collect(),
        ),
        ..accept()
    }
}

fn reject(message: String, code: u16) -> ValidationResponse {
    ValidationResponse {
        accepted: false,
        message: Some(message),
        code: Some(code),
        ..accept()
    }
}

/// Rejects a request the policy cannot read, saying why.
fn unreadable(why: &str) -> ValidationResponse {
    reject(
        format!("cannot read the admission request: {why}"),
        BAD_REQUEST,
    )
}
