//! The SDK path: what a policy made from the Kubewarden Rust template pays before its own logic.
//!
//! `validate` builds the SDK's `ValidationRequest` — a typed `KubernetesAdmissionRequest` whose
//! `object` and `oldObject` are whole `serde_json::Value` trees — and accepts. This module exists
//! only to be measured against (`bench/compare`).

use kubewarden_policy_sdk::request::ValidationRequest;
use kubewarden_policy_sdk::settings::Validatable;
use serde::{Deserialize, Serialize};
use wapc_guest::CallResult;

/// Settings with nothing in them, as the template's before a policy adds its own.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

/// Registers the waPC entry points, as the template does. Only in the Wasm module: natively the
/// rlib is linked next to the policy, which exports the same symbol.
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    use wapc_guest::register_function;
    register_function("validate", validate);
    register_function("validate_settings", validate_settings);
    register_function(
        "protocol_version",
        kubewarden_policy_sdk::protocol_version_guest,
    );
}

/// Reads the payload into the SDK's `ValidationRequest` and accepts the request.
pub fn validate(payload: &[u8]) -> CallResult {
    let _request = ValidationRequest::<Settings>::new(payload)?;
    kubewarden_policy_sdk::accept_request()
}

/// Validates the settings the way the template does.
pub fn validate_settings(payload: &[u8]) -> CallResult {
    kubewarden_policy_sdk::validate_settings::<Settings>(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_a_request_and_rejects_what_the_sdk_cannot_read() {
        let payload = br#"{"settings": {}, "request": {"uid": "1", "operation": "CREATE",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "object": {"metadata": {"name": "a"}}}}"#;
        let answer = validate(payload).unwrap();
        assert_eq!(answer, kubewarden_policy_sdk::accept_request().unwrap());
        assert!(validate(br#"{"settings": {}, "request": {"uid": 5}}"#).is_err());
        let settings = validate_settings(b"{}").unwrap();
        assert_eq!(settings, br#"{"valid":true,"message":null}"#);
    }
}
