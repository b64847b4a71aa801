//! single-owner-policy: a Kubewarden policy that keeps every Kubernetes object to one owner.
//!
//! This file is only the waPC glue; the decision lives in [`policy`].

pub mod handoff;
pub mod identity;
pub mod mutation;
pub mod owner;
pub mod policy;
pub mod request;
pub mod scope;
pub mod settings;
pub mod transition;

use kubewarden_policy_sdk::protocol_version_guest;
use wapc_guest::{CallResult, register_function};

/// Registers the waPC entry points Kubewarden's policy-server calls.
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    register_function("validate", validate);
    register_function("validate_settings", validate_settings);
    register_function("protocol_version", protocol_version_guest);
}

fn validate(payload: &[u8]) -> CallResult {
    Ok(serde_json::to_vec(&policy::validate(payload))?)
}

fn validate_settings(payload: &[u8]) -> CallResult {
    Ok(serde_json::to_vec(&policy::validate_settings(payload))?)
}
