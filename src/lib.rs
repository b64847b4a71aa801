//! single-owner-policy: a Kubewarden policy that keeps every Kubernetes object to one owner.
//!
//! This file is only the waPC glue; [`policy`] turns payloads into responses. The modules form
//! a DAG (`tests/architecture.rs` checks it): each uses the modules it hangs under and those in
//! its parentheses, all above it.
//!
//! ```text
//! dns                          Kubernetes' DNS names: labels, subdomains
//! error_path                   the field a JSON error is in, for messages
//! lookup                       a key's value in the text of a JSON object
//! request                      the lean view of an AdmissionRequest: the request itself, its
//! │                            objects and their metadata, strings and optional fields
//! ├── owner                    owner marks (labels, annotations), claims and owners
//! │   └── scope                the scope table: where an owner may own objects
//! ├── identity (dns)           identities: which owners a requester acts for
//! │   └── control_plane        the trusted control plane and its table
//! ├── template                 the templates of workloads, read on demand
//! └── edit                     what an update changes: finalizers, CA bundles
//!     └── deletion             the writes that finish a deletion under way
//! offer                        the offer annotation's format
//! settings  (request, owner, identity, control_plane, dns, lookup)   the settings, their
//!                              validation
//! violation (request, owner, identity, scope, offer)   the rules, the typed reasons and the
//!                              one shape of a denial
//! facts     (all of the above) what the rules read of a request, once
//! ├── binding                  a Binding's marks, which the API server copies onto a Pod
//! ├── derivation               the object's controller, read on demand; inherited marks
//! ├── leftover (derivation)    an owner read on demand: one found gone leaves leftovers
//! ├── requester                the identity rules: what a requester may do for an owner
//! │   └── writes               `writes: Owner`
//! ├── one_owner                one owner across marks
//! ├── handoff (requester)      the offer table and rule, and an offer's part in a transition
//! │   ├── transition           the transition table and rule
//! │   └── audit (one_owner)    the audit replay
//! └── mutation                 stamping, and removing a consumed offer
//! decision  (the rules above, control_plane)   reads once and composes the rules
//! reach                        a write rewritten as one of the object it reaches
//! scale     (reach, request, control_plane, derivation, settings)   a `scale` write read as its
//!                              target's; an HPA's (autoscaler) as its target's `scale`
//! children  (reach, facts, derivation, identity, …)   an unmarked child's write as one of its
//!                              first marked controller's owner
//! policy    (decision, the reaches above, request, mutation, settings, violation)
//!                              exemptions, the writes that reach other objects, and
//!                              Kubewarden's responses, at the edge
//! stored    (decision, facts, request, settings)   a stored object read as the policy reads
//!                              one, for the inventory
//! ```

mod audit;
mod autoscaler;
mod binding;
mod children;
pub mod control_plane;
mod decision;
mod deletion;
mod derivation;
pub mod dns;
mod edit;
mod error_path;
mod facts;
mod grant;
mod handoff;
mod identity;
mod leftover;
mod lookup;
mod mutation;
mod offer;
mod one_owner;
mod owner;
mod persisted;
pub mod policy;
mod reach;
mod request;
mod requester;
mod scale;
mod scope;
mod settings;
pub mod stored;
pub mod template;
mod transition;
mod violation;
mod writes;

pub use children::CONTROLLERS;

/// The policy's version: the release that holds this module.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
pub use derivation::{ListLookup, Lookup, NoHost, Parents};
pub use identity::{
    Access, NAME_TEMPLATE, NAMESPACE_TEMPLATE, NODE_PREFIX, NODES_GROUP, SERVICE_ACCOUNT_PREFIX,
    SERVICE_ACCOUNTS_GROUP,
};
pub use owner::{
    Claim, Format, HelmDriver, InvalidOwner, MarkName, OwnerLookup, OwnerMark, Place as MarkPlace,
};
pub use persisted::PERSISTING;
pub use request::{BINDING, BOUND, DECLARING_SUBRESOURCES, SCALED};
pub use scope::{ScopeViolation, Unfit};
pub use settings::writers::{Binding, WRITERS, Writer};
pub use settings::{Permission, Settings};
pub use violation::{
    Act, Change, Finding, Found, NotActing, OwnerFinding, OwnerFound, Reason, Rule, Standing,
    Violation,
};

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
    Ok(policy::answer(payload, &Host)?)
}

/// Kubewarden's host, which reads an object's controller for the rules through the
/// `kubernetes/get_resource` capability (policy-server grants it the kinds of the policy's
/// `contextAwareResources`).
struct Host;

impl Parents for Host {
    /// The waPC call kubewarden-policy-sdk's `get_resource` makes.
    #[cfg(target_arch = "wasm32")]
    fn get(&self, lookup: &Lookup<'_>) -> Result<String, String> {
        kubernetes("get_resource", &lookup.payload())
    }

    /// Outside a module there is no waPC host to call.
    #[cfg(not(target_arch = "wasm32"))]
    fn get(&self, lookup: &Lookup<'_>) -> Result<String, String> {
        NoHost.get(lookup)
    }

    /// The waPC call kubewarden-policy-sdk's `list_resources_by_namespace` makes.
    #[cfg(target_arch = "wasm32")]
    fn list(&self, lookup: &ListLookup<'_>) -> Result<String, String> {
        kubernetes("list_resources_by_namespace", &lookup.payload())
    }

    /// Outside a module there is no waPC host to call.
    #[cfg(not(target_arch = "wasm32"))]
    fn list(&self, lookup: &ListLookup<'_>) -> Result<String, String> {
        NoHost.list(lookup)
    }

    fn reads(&self) -> bool {
        cfg!(target_arch = "wasm32")
    }
}

/// A call of Kubewarden's `kubernetes` capability with this payload, its answer kept as text.
#[cfg(target_arch = "wasm32")]
fn kubernetes(operation: &str, payload: &str) -> Result<String, String> {
    let answer = wapc_guest::host_call("kubewarden", "kubernetes", operation, payload.as_bytes())
        .map_err(|error| error.to_string())?;
    String::from_utf8(answer).map_err(|error| error.to_string())
}

fn validate_settings(payload: &[u8]) -> CallResult {
    Ok(serde_json::to_vec(&policy::validate_settings(payload))?)
}
