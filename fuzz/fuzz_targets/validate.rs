//! Any bytes as the `validate` payload: the policy answers, and never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use single_owner_policy::policy;

fuzz_target!(|payload: &[u8]| {
    let response = policy::validate(payload);
    // What the guest hands back to the host must always serialize.
    let answer = serde_json::to_vec(&response).expect("a response serializes");
    // A rejection always says why.
    assert!(response.accepted || response.message.is_some(), "{}", String::from_utf8_lossy(&answer));
});
