//! Any bytes as the `validate_settings` payload: the policy answers, and never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use single_owner_policy::policy;

fuzz_target!(|payload: &[u8]| {
    let response = policy::validate_settings(payload);
    serde_json::to_vec(&response).expect("a response serializes");
    // Invalid settings always say why.
    assert!(response.valid || response.message.is_some());
});
