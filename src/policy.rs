//! The edge: the `validate` and `validate_settings` payloads in, Kubewarden's responses out.
//!
//! The decision ([`crate::decision`]) says what the rules make of a request; here the
//! exemptions are applied to a denial, a mutation becomes the mutated object, and each outcome
//! becomes the response policy-server expects.

use kubewarden_policy_sdk::response::ValidationResponse;
use kubewarden_policy_sdk::settings::SettingsValidationResponse;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;

use crate::autoscaler;
use crate::binding;
use crate::children;
use crate::decision::{self, Decision};
use crate::derivation::{NoHost, Parents};
use crate::error_path;
use crate::mutation;
use crate::reach::{Reach, Reached, Refusal};
use crate::request::AdmissionRequest;
use crate::scale;
use crate::settings::Settings;
use crate::violation::{self, Violation};

/// The HTTP code of a denial.
pub const DENIED: u16 = 403;
/// The HTTP code of a request the policy cannot read.
pub const BAD_REQUEST: u16 = 400;
/// The audit annotation that records a bypassed rule.
pub const EXEMPTION_ANNOTATION: &str = "single-owner-policy-exemption";

/// Evaluates a `validate` payload: `{"request": AdmissionRequest, "settings": Settings}`,
/// with no host to read controllers from: a copy of a controller's marks is judged as a claim.
pub fn validate(payload: &[u8]) -> ValidationResponse {
    validate_with(payload, &NoHost)
}

/// Evaluates a `validate` payload into the JSON of its response, as policy-server reads it;
/// controllers are read through `parents` when the rules ask.
pub fn answer(payload: &[u8], parents: &dyn Parents) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(&validate_with(payload, parents))
}

/// Evaluates a `validate` payload, reading controllers through `parents` when the rules ask.
/// A write the rules allow is then judged as a write of each object it reaches
/// ([`REACHES`]), read through `parents`.
pub fn validate_with(payload: &[u8], parents: &dyn Parents) -> ValidationResponse {
    let parsed = match Payload::parse(payload) {
        Ok(parsed) => parsed,
        Err(error) => return Verdict::Unreadable(error).response(),
    };
    let own = parsed.verdict(parents).response();
    if !own.accepted || !parents.reads() {
        return own;
    }
    let ValidatePayload { request, settings } = &parsed.parsed;
    let reached = (REACHES.iter()).find_map(|reach| reach(parsed.text, request, settings, parents));
    match reached {
        None => own,
        Some(Ok(Reached { payload, because })) => {
            let judged = validate_with(&payload, parents);
            match (judged.accepted, judged.message) {
                (false, Some(message)) => {
                    let lines: Vec<String> = (message.lines())
                        .map(|line| format!("{line}{because}"))
                        .collect();
                    reject(lines.join("\n"), judged.code.unwrap_or(DENIED))
                }
                (false, None) => reject(because, judged.code.unwrap_or(DENIED)),
                (true, _) => with_notes(own, judged.warnings, judged.audit_annotations),
            }
        }
        Some(Err(Refusal::Denied(why))) => reject(why, DENIED),
        Some(Err(Refusal::Unreadable(why))) => Verdict::Unreadable(why).response(),
    }
}

/// The writes that reach another object, which the host reads, in the order they are tried:
/// a `scale` its target, a Binding its Pod, an HPA what it scales, a write of an unmarked
/// object its controllers' owner. A request reaches one at most.
const REACHES: [Reaching; 4] = [
    scale::reach,
    binding::reach,
    autoscaler::reach,
    children::reach,
];

/// A write's reach: its payload's text, the request read from it, the settings, the host.
type Reaching = for<'a> fn(&str, &'a AdmissionRequest<'a>, &Settings, &dyn Parents) -> Reach;

/// `own`, an acceptance, with the warnings and audit annotations of the acceptance of what
/// the request reaches (an exempt requester's, which say what it bypassed there).
fn with_notes(
    mut own: ValidationResponse,
    warnings: Option<Vec<String>>,
    annotations: Option<HashMap<String, String>>,
) -> ValidationResponse {
    if let Some(warnings) = warnings {
        own.warnings.get_or_insert_default().extend(warnings);
    }
    for (key, value) in annotations.into_iter().flatten() {
        let notes = own.audit_annotations.get_or_insert_default();
        notes
            .entry(key)
            .and_modify(|note| *note = format!("{note}; {value}"))
            .or_insert(value);
    }
    own
}

/// A `validate` payload, read.
pub struct Payload<'a> {
    /// The payload's text, checked to be UTF-8 once, here.
    text: &'a str,
    parsed: ValidatePayload<'a>,
}

/// What the policy answers a `validate` payload, before it becomes Kubewarden's response.
#[derive(Debug, PartialEq)]
pub enum Verdict<'a> {
    /// Admitted as it is.
    Allow,
    /// Admitted as this object (stamped, or with a consumed offer removed).
    Mutate(Value),
    /// Denied: every rule that failed.
    Deny(Vec<Violation<'a>>),
    /// Admitted, though these rules failed, because the requester is exempt (`who`).
    Exempt {
        /// Who is exempt, as warnings name them.
        who: String,
        /// The rules the request bypasses.
        violations: Vec<Violation<'a>>,
    },
    /// The request cannot be read; why.
    Unreadable(String),
}

impl<'a> Payload<'a> {
    /// Reads a payload; an error names the path of the offending field.
    pub fn parse(raw: &'a [u8]) -> Result<Payload<'a>, String> {
        let read = |text: &'a str| match serde_json::from_str(text) {
            Ok(parsed) => Ok(Payload { text, parsed }),
            Err(error) => Err(error_path::explain(raw, &error)),
        };
        error_path::utf8(raw).and_then(read).map_err(|why| {
            match raw.trim_ascii_start().starts_with(b"[") {
                true => "the payload must be a JSON object with `request` and `settings`, not \
                         an array"
                    .to_owned(),
                false => why,
            }
        })
    }

    /// What the rules, then the exemptions, make of the request; controllers are read through
    /// `parents`.
    pub fn verdict(&'a self, parents: &dyn Parents) -> Verdict<'a> {
        let ValidatePayload { request, settings } = &self.parsed;
        match decision::evaluate(request, settings, parents) {
            Decision::Allow => Verdict::Allow,
            Decision::Mutate(change) => match mutation::mutated_object(self.text, &change) {
                Ok(object) => Verdict::Mutate(object),
                Err(error) => Verdict::Unreadable(error),
            },
            Decision::Deny(violations) => match exemption(request, settings) {
                Some(who) => Verdict::Exempt { who, violations },
                None => Verdict::Deny(violations),
            },
            Decision::Unreadable(why) => Verdict::Unreadable(why),
        }
    }
}

impl Verdict<'_> {
    /// The response policy-server expects.
    pub fn response(self) -> ValidationResponse {
        let accepted = ValidationResponse {
            accepted: true,
            message: None,
            code: None,
            mutated_object: None,
            audit_annotations: None,
            warnings: None,
        };
        match self {
            Verdict::Allow => accepted,
            Verdict::Mutate(object) => ValidationResponse {
                mutated_object: Some(object),
                ..accepted
            },
            Verdict::Deny(violations) => reject(violation::lines(&violations), DENIED),
            Verdict::Exempt { who, violations } => ValidationResponse {
                audit_annotations: Some(HashMap::from([(
                    EXEMPTION_ANNOTATION.to_owned(),
                    format!("{who} bypassed: {}", violation::lines(&violations)),
                )])),
                warnings: Some(
                    (violations.iter())
                        .map(|violation| format!("{who} bypassed: {violation}"))
                        .collect(),
                ),
                ..accepted
            },
            Verdict::Unreadable(why) => reject(
                format!("cannot read the admission request: {why}"),
                BAD_REQUEST,
            ),
        }
    }
}

/// A rejection with `message` and `code`, and nothing else.
fn reject(message: String, code: u16) -> ValidationResponse {
    ValidationResponse {
        accepted: false,
        message: Some(message),
        code: Some(code),
        mutated_object: None,
        audit_annotations: None,
        warnings: None,
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

/// The payload of a `validate` call: the admission request and the policy settings.
#[derive(Debug, Deserialize)]
struct ValidatePayload<'a> {
    /// The AdmissionRequest under evaluation.
    #[serde(borrow)]
    request: AdmissionRequest<'a>,
    /// The policy settings; missing or `null` means the defaults.
    #[serde(default, deserialize_with = "Settings::in_payload")]
    settings: Settings,
}

/// Says who is exempt, when the requester is: by user name, or by the first exempt group.
fn exemption(request: &AdmissionRequest<'_>, settings: &Settings) -> Option<String> {
    let user = &request.user_info.username;
    let exemptions = &settings.exemptions;
    if exemptions.users.iter().any(|exempt| *exempt == **user) {
        return Some(format!("exempt user {user}"));
    }
    let group = request
        .user_info
        .groups
        .iter()
        .map(|group| &**group)
        .find(|group| exemptions.groups.iter().any(|exempt| exempt == group))?;
    Some(format!("user {user} of exempt group {group}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_payloads_are_explained_with_the_field_path() {
        let cases: &[(&[u8], &str)] = &[
            (b"not json", "expected ident at line 1 column 2"),
            (
                b"[]",
                "the payload must be a JSON object with `request` and `settings`, not an array",
            ),
            (b"{}", "missing field `request`"),
            (
                br#"{"request": {"operation": "CREATE"}}"#,
                "request: missing field `kind`",
            ),
            (
                br#"{"request": {"kind": {}, "operation": "PATCH"}}"#,
                "request.operation: unknown variant `PATCH`",
            ),
            (
                br#"{"request": {"kind": {}, "operation": "CREATE", "object": "x"}}"#,
                "request.object: invalid type: string \"x\", expected struct Object",
            ),
            (
                br#"{"request": {"kind": {}, "operation": "CREATE",
                     "object": {"metadata": {"labels": {"appID": 5}}}}}"#,
                "request.object.metadata.labels.appID: invalid type: integer `5`, expected a string",
            ),
            (
                br#"{"request": {"kind": {}, "operation": "CREATE",
                     "object": {"metadata": {"labels": ["appID"]}}}}"#,
                "request.object.metadata.labels: invalid type: sequence, expected a map",
            ),
            (
                b"{\"request\": {\"kind\": {}, \"operation\": \"CREATE\",
                   \"object\": {\"data\": {\"k\": \"\xff\"}}}}",
                // The key in `data`, which the policy keeps unparsed, is named too.
                "request.object.data.k: invalid unicode code point",
            ),
            (
                br#"{"request": {"kind": {}, "operation": "CREATE"}, "settings": {"adoption": 1}}"#,
                "settings.adoption: invalid type: integer `1`, expected a string",
            ),
        ];
        for (json, expected) in cases {
            let error = Payload::parse(json).err().expect(expected);
            assert!(
                error.contains(expected),
                "payload {}\n  gave: {error}\n  want: {expected}",
                String::from_utf8_lossy(json)
            );
        }
    }
}
