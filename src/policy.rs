//! The decision: applies the transition and scope rules to a request, entry by entry, then the
//! exemptions, and answers with a Kubewarden validation response.

use std::collections::HashMap;
use std::fmt;

use kubewarden_policy_sdk::response::ValidationResponse;
use kubewarden_policy_sdk::settings::SettingsValidationResponse;

use crate::owner::Claim;
use crate::request::{AdmissionRequest, Object, Operation, ValidatePayload};
use crate::scope::{self, ObjectScope};
use crate::settings::{OwnerLabel, Settings};
use crate::transition::{self, Judgement, Permissions};

/// The HTTP code of a denial.
pub const DENIED: u16 = 403;
/// The HTTP code of a request the policy cannot read.
pub const BAD_REQUEST: u16 = 400;
/// The audit annotation that records a bypassed rule.
pub const EXEMPTION_ANNOTATION: &str = "single-owner-policy-exemption";

/// Evaluates a `validate` payload: `{"request": AdmissionRequest, "settings": Settings}`.
pub fn validate(payload: &[u8]) -> ValidationResponse {
    match ValidatePayload::from_json(payload) {
        Ok(payload) => evaluate(&payload.request, &payload.settings),
        Err(error) => reject(
            format!("cannot read the admission request: {error}"),
            BAD_REQUEST,
        ),
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

/// Applies every rule to a request.
pub fn evaluate(request: &AdmissionRequest<'_>, settings: &Settings) -> ValidationResponse {
    if !request.sub_resource.is_empty() {
        return accept();
    }
    let (old, new) = match (request.operation, &request.old_object, &request.object) {
        (Operation::Create, _, Some(new)) => (None, new),
        (Operation::Update, Some(old), Some(new)) => (Some(old), new),
        (Operation::Delete | Operation::Connect, _, _) => return accept(),
        (Operation::Create, _, None) => {
            return reject(
                "cannot read the admission request: a CREATE request needs `object`".to_owned(),
                BAD_REQUEST,
            );
        }
        (Operation::Update, _, _) => {
            return reject(
                "cannot read the admission request: an UPDATE request needs `object` and `oldObject`"
                    .to_owned(),
                BAD_REQUEST,
            );
        }
    };
    let violations: Vec<Violation> = settings
        .owner_labels
        .iter()
        .filter_map(|entry| judge_entry(entry, settings, request, old, new))
        .collect();
    if violations.is_empty() {
        return accept();
    }
    let messages = violations.iter().map(ToString::to_string);
    match exemption(request, settings) {
        Some(exempt) => accept_exempt(&exempt, messages.collect()),
        None => reject(messages.collect::<Vec<_>>().join("; "), DENIED),
    }
}

/// Applies the rules of one owner label entry.
fn judge_entry<'a>(
    entry: &'a OwnerLabel,
    settings: &Settings,
    request: &'a AdmissionRequest<'a>,
    old: Option<&'a Object<'a>>,
    new: &'a Object<'a>,
) -> Option<Violation<'a>> {
    let old_claim = old.map(|old| Claim::read(entry, &old.metadata.labels));
    let new_claim = Claim::read(entry, &new.metadata.labels);
    let permissions = Permissions {
        adoption: settings.adoption,
        orphaning: settings.orphaning,
    };
    let violation = |rule, reason| Violation {
        key: &entry.key,
        rule,
        object: ObjectRef::of(request, new),
        old: old_claim.unwrap_or_default(),
        new: new_claim,
        reason,
    };
    match transition::judge(old_claim, new_claim, permissions) {
        Judgement::Allow => None,
        Judgement::Deny(denial) => {
            let paired = entry.kind_key.is_some();
            Some(violation(denial.rule(), denial.reason(paired).to_owned()))
        }
        Judgement::CheckNewOwner => match new_claim.owner(entry) {
            Err(invalid) => Some(violation("owner value", invalid.to_string())),
            Ok(owner) => {
                let scope = request.object_scope();
                scope::check(&owner, scope).err().map(|outside| {
                    let rule = match scope {
                        ObjectScope::Cluster => "cluster scope",
                        ObjectScope::Namespace(_) => "namespace scope",
                    };
                    violation(rule, outside.to_string())
                })
            }
        },
    }
}

/// A rule that denies a request, with all a message needs.
struct Violation<'a> {
    key: &'a str,
    rule: &'static str,
    object: ObjectRef<'a>,
    old: Claim<'a>,
    new: Claim<'a>,
    reason: String,
}

impl fmt::Display for Violation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} denied for {} from {} to {}: {}",
            self.key, self.rule, self.object, self.old, self.new, self.reason
        )
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
