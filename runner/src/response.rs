//! The `AdmissionResponse` the runner prints, built from the guest's answer.
//!
//! The guest answers with the SDK's `ValidationResponse` (`kubewarden_policy_sdk::response`);
//! the host-side shape and the way it is built mirror
//! `policy_evaluator::admission_response::AdmissionResponse`, which is what `kwctl run` prints
//! and what policy-server answers with.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use base64::{Engine as _, engine::general_purpose::STANDARD};
use kubewarden_policy_sdk::response::ValidationResponse;
use serde::Serialize;
use serde_json::Value;

/// A Kubernetes `admission/v1` `AdmissionResponse`, serialised as kwctl prints it:
/// camelCase, `patchType`/`patch`/`status` left out when absent, and
/// `auditAnnotations`/`warnings` always present (`null` when absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    /// The UID of the request this answers (empty when the request has none).
    pub uid: String,
    /// Whether the request is admitted.
    pub allowed: bool,
    /// `"JSONPatch"` when `patch` is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<PatchType>,
    /// Base64 of the RFC 6902 JSON patch from the request's object to the mutated one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// Why the request was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Annotations for the audit log.
    pub audit_annotations: Option<BTreeMap<String, String>>,
    /// Warnings for the API client.
    pub warnings: Option<Vec<String>>,
}

/// The kind of patch carried by an [`AdmissionResponse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PatchType {
    /// An RFC 6902 JSON patch.
    #[serde(rename = "JSONPatch")]
    JsonPatch,
}

/// The `status` of an [`AdmissionResponse`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    /// Human-readable reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Suggested HTTP code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
}

/// The message policy-evaluator gives when a policy mutates a request without object.
const MUTATION_WITHOUT_OBJECT: &str = "Incoming object is null, which happens only with DELETE operations, but the policy is attempting a mutation. This is not allowed";

impl AdmissionResponse {
    /// A rejection with the given message and code.
    pub fn reject(uid: String, message: String, code: u16) -> Self {
        Self::denied(
            uid,
            Status {
                message: Some(message),
                code: Some(code),
            },
        )
    }

    fn denied(uid: String, status: Status) -> Self {
        Self {
            uid,
            allowed: false,
            patch_type: None,
            patch: None,
            status: Some(status),
            audit_annotations: None,
            warnings: None,
        }
    }

    /// The rejection policy-server gives when evaluating the policy failed
    /// (trap, deadline, bad answer): code 500, message prefixed as it does.
    pub fn reject_internal_server_error(uid: String, error: &anyhow::Error) -> Self {
        Self::reject(uid, format!("internal server error: {error:#}"), 500)
    }

    /// Build the response for a policy's verdict on a request whose object
    /// is `request_object` (`None` for a DELETE, whose object is null).
    pub fn from_validation_response(
        uid: String,
        request_object: Option<&Value>,
        response: ValidationResponse,
    ) -> Result<Self> {
        let ValidationResponse {
            accepted,
            message,
            code,
            mutated_object,
            audit_annotations,
            warnings,
        } = response;

        let patch = match (mutated_object, request_object) {
            (None, _) => None,
            (Some(_), None) => {
                let status = Status {
                    message: Some(MUTATION_WITHOUT_OBJECT.to_owned()),
                    code: None,
                };
                return Ok(Self::denied(uid, status));
            }
            (Some(mutated), Some(original)) => json_patch(original, &mutated)?,
        };

        let status = (message.is_some() || code.is_some()).then_some(Status { message, code });
        Ok(Self {
            uid,
            allowed: accepted,
            patch_type: patch.as_ref().map(|_| PatchType::JsonPatch),
            patch,
            status,
            // sorted, so that a run prints the same bytes every time
            audit_annotations: audit_annotations.map(|map| map.into_iter().collect()),
            warnings,
        })
    }
}

/// Base64 of the RFC 6902 patch turning `original` into `mutated`, or `None`
/// when they are equal.
fn json_patch(original: &Value, mutated: &Value) -> Result<Option<String>> {
    let patch = json_patch::diff(original, mutated);
    if patch.0.is_empty() {
        return Ok(None);
    }
    let text = serde_json::to_string(&patch).context("cannot serialise the JSON patch")?;
    Ok(Some(STANDARD.encode(text)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The guest's answer: accepted or not, nothing else said.
    fn answer(accepted: bool) -> ValidationResponse {
        ValidationResponse {
            accepted,
            message: None,
            code: None,
            mutated_object: None,
            audit_annotations: None,
            warnings: None,
        }
    }

    fn decode_patch(response: &AdmissionResponse) -> Value {
        let bytes = STANDARD
            .decode(response.patch.as_ref().expect("a patch"))
            .expect("valid base64");
        serde_json::from_slice(&bytes).expect("a JSON patch")
    }

    #[test]
    fn accepted_request_prints_like_kwctl() {
        let response = AdmissionResponse::from_validation_response(
            "uid-1".into(),
            Some(&json!({"kind": "Pod"})),
            answer(true),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&response).unwrap(),
            r#"{"uid":"uid-1","allowed":true,"auditAnnotations":null,"warnings":null}"#
        );
    }

    #[test]
    fn rejection_keeps_message_and_omits_missing_code() {
        let response = AdmissionResponse::from_validation_response(
            "uid-2".into(),
            Some(&json!({})),
            ValidationResponse {
                message: Some("no".into()),
                warnings: Some(vec!["careful".into()]),
                ..answer(false)
            },
        )
        .unwrap();
        assert_eq!(
            serde_json::to_value(&response).unwrap(),
            json!({
                "uid": "uid-2",
                "allowed": false,
                "status": {"message": "no"},
                "auditAnnotations": null,
                "warnings": ["careful"],
            })
        );
    }

    #[test]
    fn mutation_becomes_a_base64_json_patch() {
        let original = json!({"metadata": {"name": "p", "labels": {"a": "1"}}});
        let mutated = json!({"metadata": {"name": "p", "labels": {"a": "1", "b": "2"}}});
        let response = AdmissionResponse::from_validation_response(
            "uid-3".into(),
            Some(&original),
            ValidationResponse {
                mutated_object: Some(mutated),
                ..answer(true)
            },
        )
        .unwrap();
        assert_eq!(response.patch_type, Some(PatchType::JsonPatch));
        assert_eq!(
            decode_patch(&response),
            json!([{"op": "add", "path": "/metadata/labels/b", "value": "2"}])
        );
        let printed = serde_json::to_value(&response).unwrap();
        assert_eq!(printed["patchType"], "JSONPatch");
    }

    #[test]
    fn unchanged_mutated_object_gives_no_patch() {
        let object = json!({"metadata": {"name": "p"}});
        let response = AdmissionResponse::from_validation_response(
            String::new(),
            Some(&object),
            ValidationResponse {
                mutated_object: Some(object.clone()),
                ..answer(true)
            },
        )
        .unwrap();
        assert_eq!(response.patch, None);
        assert_eq!(response.patch_type, None);
    }

    #[test]
    fn mutating_a_request_without_object_is_rejected() {
        let response = AdmissionResponse::from_validation_response(
            "uid-4".into(),
            None,
            ValidationResponse {
                mutated_object: Some(json!({})),
                ..answer(true)
            },
        )
        .unwrap();
        assert!(!response.allowed);
        assert_eq!(
            response.status,
            Some(Status {
                message: Some(MUTATION_WITHOUT_OBJECT.into()),
                code: None
            })
        );
    }

    #[test]
    fn internal_error_is_a_500_rejection() {
        let error = anyhow::anyhow!("Guest call failure: boom");
        let response = AdmissionResponse::reject_internal_server_error("u".into(), &error);
        assert_eq!(
            serde_json::to_value(&response).unwrap(),
            json!({
                "uid": "u",
                "allowed": false,
                "status": {"message": "internal server error: Guest call failure: boom", "code": 500},
                "auditAnnotations": null,
                "warnings": null,
            })
        );
    }

    #[test]
    fn guest_response_with_missing_optional_fields_parses() {
        let response: ValidationResponse = serde_json::from_str(r#"{"accepted":false}"#).unwrap();
        assert!(!response.accepted);
        assert_eq!(response.message, None);
    }
}
