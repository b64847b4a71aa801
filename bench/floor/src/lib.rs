//! The floor: the least a waPC policy written with the Kubewarden SDK can do with a request.
//!
//! `validate` reads the whole payload as JSON, skipping every value (no tree, no copies), and
//! accepts. Whatever a real policy costs above this module is the price of its decision; this
//! module exists only to be measured against (`bench/compare`).

use kubewarden_policy_sdk::settings::SettingsValidationResponse;
use serde::de::IgnoredAny;
use wapc_guest::CallResult;

/// Registers the waPC entry points, as `src/lib.rs` does for the policy. Only in the Wasm
/// module: natively the rlib is linked next to the policy, which exports the same symbol.
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

/// Checks that the payload is JSON, skipping every value, and accepts the request.
pub fn validate(payload: &[u8]) -> CallResult {
    serde_json::from_slice::<IgnoredAny>(payload)?;
    kubewarden_policy_sdk::accept_request()
}

/// Accepts any settings.
pub fn validate_settings(_payload: &[u8]) -> CallResult {
    Ok(serde_json::to_vec(&SettingsValidationResponse {
        valid: true,
        message: None,
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_any_json_and_rejects_the_rest() {
        let answer = validate(br#"{"request": {"object": {"a": [1, "\u00e9", null]}}}"#).unwrap();
        assert_eq!(answer, kubewarden_policy_sdk::accept_request().unwrap());
        assert!(validate(b"{\"request\": ").is_err());
        assert!(validate(b"{} trailing").is_err());
    }
}
