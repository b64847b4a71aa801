//! The decision: applies the transition, scope and identity rules to a request, entry by entry,
//! then the exemptions, and answers with a Kubewarden validation response — stamping the owner
//! label on a CREATE when the settings ask for it.

use std::collections::HashMap;
use std::fmt;

use kubewarden_policy_sdk::response::ValidationResponse;
use kubewarden_policy_sdk::settings::SettingsValidationResponse;

use crate::identity::Acting;
use crate::owner::Claim;
use crate::request::{AdmissionRequest, Object, Operation, ValidatePayload};
use crate::scope::{self, ObjectScope};
use crate::settings::{OwnerLabel, Settings, Writes};
use crate::stamp;
use crate::transition::{self, Judgement, Permissions};

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
        Verdict::Stamp(labels) => match stamp::stamped_object(payload, &labels) {
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
    /// Accept the object with these labels added: `(key, value)`.
    Stamp(Vec<(String, String)>),
}

/// Applies every rule to a request.
pub fn evaluate(request: &AdmissionRequest<'_>, settings: &Settings) -> Verdict {
    let acting = (!settings.identities.is_empty())
        .then(|| Acting::of(&request.user_info, &settings.identities));
    let guards_deletes = acting.is_some() && settings.writes == Writes::Owner;
    let (old, new) = match (request.operation, &request.old_object, &request.object) {
        _ if !request.sub_resource.is_empty() => return Verdict::Respond(accept()),
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
    let context = Context {
        request,
        settings,
        acting: acting.as_ref(),
    };
    let violations: Vec<Violation> = settings
        .owner_labels
        .iter()
        .filter_map(|entry| context.judge(entry, old, new))
        .collect();
    if violations.is_empty() {
        return match (settings.stamp, new, context.acting) {
            (true, Some(new), Some(acting)) if old.is_none() => context.stamp(new, acting),
            _ => Verdict::Respond(accept()),
        };
    }
    let messages = violations.iter().map(ToString::to_string);
    Verdict::Respond(match exemption(request, settings) {
        Some(exempt) => accept_exempt(&exempt, messages.collect()),
        None => reject(messages.collect::<Vec<_>>().join("; "), DENIED),
    })
}

/// What every entry's rules read.
struct Context<'a> {
    request: &'a AdmissionRequest<'a>,
    settings: &'a Settings,
    /// The owners the requester acts for; `None` without identities.
    acting: Option<&'a Acting>,
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
            return self.check_writes(entry, old_claim.unwrap_or_default(), None);
        };
        let new_claim = Claim::read(entry, &new.metadata.labels);
        let violation = |rule, reason| Violation {
            key: &entry.key,
            rule,
            object: ObjectRef::of(self.request, new),
            old: old_claim.unwrap_or_default(),
            new: Some(new_claim),
            reason,
        };
        let permissions = Permissions {
            adoption: self.settings.adoption,
            orphaning: self.settings.orphaning,
        };
        match transition::judge(old_claim, new_claim, permissions) {
            Judgement::Allow => None,
            Judgement::Deny(denial) => {
                let paired = entry.kind_key.is_some();
                Some(violation(denial.rule(), denial.reason(paired).to_owned()))
            }
            Judgement::Keep => self.check_writes(entry, new_claim, Some(new)),
            Judgement::Remove => self
                .not_acting_for(old_claim.unwrap_or_default(), "remove")
                .map(|reason| violation("identity", reason)),
            Judgement::Set => {
                let owner = match new_claim.owner(entry) {
                    Ok(owner) => owner,
                    Err(invalid) => return Some(violation("owner value", invalid.to_string())),
                };
                let scope = self.request.object_scope();
                if let Err(outside) = scope::check(&owner, scope) {
                    let rule = match scope {
                        ObjectScope::Cluster => "cluster scope",
                        ObjectScope::Namespace(_) => "namespace scope",
                    };
                    return Some(violation(rule, outside.to_string()));
                }
                self.not_acting_for(new_claim, "set")
                    .map(|reason| violation("identity", reason))
            }
        }
    }

    /// Under `writes: Owner`, an UPDATE (`object` given) or DELETE of an owned object requires
    /// acting for its owner.
    fn check_writes(
        &self,
        entry: &'a OwnerLabel,
        owner: Claim<'a>,
        object: Option<&'a Object<'a>>,
    ) -> Option<Violation<'a>> {
        if self.settings.writes != Writes::Owner || owner.is_none() {
            return None;
        }
        let reason = self.not_acting_for(owner, "update or delete")?;
        Some(Violation {
            key: &entry.key,
            rule: "owner writes",
            object: ObjectRef::of(self.request, object.or(self.request.old_object.as_ref())?),
            old: owner,
            new: object.map(|_| owner),
            reason: format!("{reason} (writes: Owner)"),
        })
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

    /// Stamps the one owner the requester acts for on a new object, in the first owner label
    /// whose shape reads it as a valid owner in scope. An object that already carries that
    /// owner, or any owner in that label, is left as it is.
    fn stamp(&self, new: &Object<'_>, acting: &Acting) -> Verdict {
        let Some(owner) = acting.single_owner() else {
            return Verdict::Respond(accept());
        };
        let scope = self.request.object_scope();
        let target = self.settings.owner_labels.iter().find_map(|entry| {
            let claim = Claim::of_owner(entry, owner);
            let valid = claim.owner(entry).ok()?;
            scope::check(&valid, scope).ok()?;
            Some((entry, claim))
        });
        match target {
            Some((entry, claim)) if Claim::read(entry, &new.metadata.labels).is_none() => {
                let labels = claim.labels(entry);
                let owned = labels
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v.to_owned()));
                Verdict::Stamp(owned.collect())
            }
            _ => Verdict::Respond(accept()),
        }
    }
}

/// A rule that denies a request, with all a message needs.
struct Violation<'a> {
    key: &'a str,
    rule: &'static str,
    object: ObjectRef<'a>,
    old: Claim<'a>,
    /// The new owner; `None` on DELETE.
    new: Option<Claim<'a>>,
    reason: String,
}

impl fmt::Display for Violation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Violation {
            key, rule, object, ..
        } = self;
        match self.new {
            None => write!(f, "{key}: {rule} denied for DELETE of {object}")?,
            Some(new) if new == self.old => {
                write!(f, "{key}: {rule} denied for UPDATE of {object}")?
            }
            Some(new) => write!(
                f,
                "{key}: {rule} denied for {object} from {} to {new}",
                self.old
            )?,
        }
        if self.new.is_none() || self.new == Some(self.old) {
            write!(f, ", owned by {}", self.old)?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// An object as messages name it: `Kind namespace/name`, or `Kind name` when cluster-scoped.
struct ObjectRef<'a> {
    kind: &'a str,
    namespace: &'a str,
    name: &'a str,
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
            "" => write!(f, "{} {name}", self.kind),
            namespace => write!(f, "{} {namespace}/{name}", self.kind),
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
