//! single-owner-policy: a Kubewarden policy that keeps every Kubernetes object to one owner.
//!
//! This file is only the waPC glue; [`policy`] turns payloads into responses. The modules form
//! a DAG (`tests/architecture.rs` checks it): each uses the modules it hangs under and those in
//! its parentheses, all above it.
//!
//! ```text
//! request                      the lean view of an AdmissionRequest: the request itself, its
//! │                            objects and their metadata, strings and optional fields
//! ├── owner                    owner marks (labels, annotations), claims and owners
//! │   └── scope                the scope table
//! ├── identity                 identities: which owners a requester acts for
//! │   └── control_plane        the trusted control plane and its table
//! ├── template                 the templates of workloads, read on demand
//! └── deletion                 the writes that finish a deletion under way
//! handoff, mutation            the offer table; the mutated object (they use no other module)
//! settings  (request, owner, identity, control_plane)  the settings document, its validation
//! violation (request, owner)   the rules' names and the one shape of a denial
//! transition (owner, settings, violation)   the transition table
//! decision  (all of the above) read, judge, decide; a module per rule beneath it
//! ├── sides                    which requests are judged, on which objects
//! ├── one_owner, acting        one owner across marks; identities, writes: Owner, stamping
//! └── offers, audit            the offer rules; the audit replay
//! policy    (decision, and request, mutation, settings, violation)   exemptions and
//!                              Kubewarden's responses, at the edge
//! ```

pub mod control_plane;
mod decision;
mod deletion;
mod handoff;
mod identity;
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
