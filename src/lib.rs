//! single-owner-policy: a Kubewarden policy that keeps every Kubernetes object to one owner.
//!
//! This file is only the waPC glue; [`policy`] turns payloads into responses. The modules form
//! a DAG, each using only those above it:
//!
//! ```text
//! error_path                   the field a JSON error is in, for messages (no uses)
//! lookup                       a key's value in the text of a JSON object (no uses)
//! request                      the lean view of an AdmissionRequest
//! ├── owner                    owner marks (labels, annotations), claims and owners
//! │   └── scope                the scope table
//! ├── identity                 identities: which owners a requester acts for
//! ├── template                 the templates of workloads, read on demand
//! ├── deletion                 the writes that finish a deletion under way
//! └── control_plane (identity) the trusted control plane and its table
//! settings  (owner, identity, control_plane)  the settings document and its validation
//! violation (request, owner)   the rules' names and the one shape of a denial
//! transition (owner, settings, violation)   the transition table
//! handoff, mutation            the offer table; the mutated object
//! decision  (all of the above) read, judge, decide; a module per rule beneath it
//! ├── sides                    which requests are judged, on which objects
//! ├── one_owner, acting        one owner across marks; identities, writes: Owner, stamping
//! └── offers, audit            the offer rules; the audit replay
//! policy    (decision)         exemptions and Kubewarden's responses, at the edge
//! ```

pub mod control_plane;
mod decision;
mod deletion;
mod error_path;
mod handoff;
mod identity;
mod lookup;
mod mutation;
mod owner;
pub mod policy;
mod request;
mod scope;
mod settings;
pub mod template;
mod transition;
mod violation;

pub use owner::{Format, OwnerMark, Place as MarkPlace};
pub use settings::Settings;

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
