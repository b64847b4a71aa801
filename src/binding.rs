//! The binding rule: the API server copies a Binding's annotations — and, in recent versions,
//! its labels — onto the Pod it binds (`BindingREST.Create`, `pkg/registry/core/pod/storage`),
//! so an owner mark on a Binding would set or change a Pod's owner where no rule sees the Pod.
//!
//! | `pods/binding` CREATE | verdict |
//! |---|---|
//! | the Binding carries no label or annotation | allowed (not judged: [`crate::facts::Sides`]) |
//! | the Binding carries a mark, valid or not | denied: marks are set on the Pod itself |
//! | under `writes: Owner`, it carries other labels or annotations, by a requester the control plane's table does not trust to bind | its Pod read, and the Binding judged as the UPDATE of the Pod that sets them (`owner writes`) |
//!
//! The scheduler's Bindings carry no labels or annotations (its `DefaultBinder`), and the trusted
//! control plane is allowed before any rule; a second scheduler that writes them is trusted in
//! `trustedWriters`. An offer on a Binding names no owner of the Binding's: the offer rules
//! refuse it.

use serde_json::{Value, json};

use crate::control_plane;
use crate::derivation::{Lookup, Parents};
use crate::facts::{Entry, Facts, carries_a_mark};
use crate::reach::{self, Reach, Reached, Refusal};
use crate::request::{AdmissionRequest, BINDING, BOUND, Operation};
use crate::settings::Settings;
use crate::violation::Reason;

/// The binding rule: why `entry`'s mark may not be carried by the request, if it may not.
pub fn rule<'a>(facts: &Facts<'a>, entry: &Entry<'a>) -> Option<Reason<'a>> {
    let carried = entry.new.is_some_and(|claim| !claim.is_none());
    let binding = facts.request.targets(BINDING) && facts.request.operation == Operation::Create;
    (carried && binding).then_some(Reason::ThroughBinding)
}

/// A Binding reaches its Pod (see the table): read, and the Binding rewritten as the Pod's
/// UPDATE.
pub fn reach<'a>(
    text: &str,
    request: &'a AdmissionRequest<'a>,
    settings: &Settings,
    parents: &dyn Parents,
) -> Reach {
    let pod = target(request, settings)?;
    let object = match parents.get(&pod) {
        Ok(object) => object,
        Err(error) => return Some(Err(Refusal::Denied(unreadable(&pod, &error)))),
    };
    Some(as_update(text, &object).map(|payload| Reached {
        payload,
        because: String::new(),
    }))
}

/// The Pod to read, when the request is a Binding the policy judges as a write of its Pod:
/// under `writes: Owner`, a `pods/binding` CREATE whose Binding carries labels or annotations
/// but no mark (a mark is denied without reading), by a requester the control plane's table
/// does not trust with it.
fn target<'a>(request: &'a AdmissionRequest<'a>, settings: &Settings) -> Option<Lookup<'a>> {
    let binding = request.object.as_ref()?;
    let metadata = &binding.metadata;
    let judged = settings.judges_writes()
        && request.operation == Operation::Create
        && request.targets(BINDING)
        && !(metadata.labels.is_empty() && metadata.annotations.is_empty())
        && !carries_a_mark(binding, settings)
        && !control_plane::trusts(request, None, &settings.trusted_writers);
    let (api_version, kind) = BOUND;
    judged.then_some(Lookup {
        api_version,
        kind,
        name: &request.name,
        namespace: Some(&request.namespace),
        disable_cache: false,
    })
}

/// The payload of a Binding's CREATE (its text), rewritten as the UPDATE of its Pod `pod` (the
/// JSON the host read) that the API server makes of it: the Binding's labels and annotations
/// set on the Pod (`BindingREST.Create`, `setPodNodeAndMetadata`). The policy reads the result
/// like any payload.
fn as_update(text: &str, pod: &str) -> Result<Vec<u8>, Refusal> {
    reach::rewritten(text, pod, "the Pod read for the Binding", |request, old| {
        let metadata = (request.get("object"))
            .and_then(|binding| binding.get("metadata"))
            .cloned()
            .unwrap_or_default();
        let mut new = old.clone();
        for field in ["labels", "annotations"] {
            let copied = metadata.get(field).and_then(Value::as_object);
            for (key, value) in copied.into_iter().flatten() {
                new["metadata"][field][key] = value.clone();
            }
        }
        request.insert(
            "kind".to_owned(),
            json!({"group": "", "version": "v1", "kind": "Pod"}),
        );
        request.insert("operation".to_owned(), json!("UPDATE"));
        request.insert("oldObject".to_owned(), old);
        request.insert("object".to_owned(), new);
    })
}

/// Why a Binding is denied when its Pod cannot be read.
fn unreadable(target: &Lookup<'_>, error: &str) -> String {
    format!(
        "cannot judge the Binding of Pod {}/{} under writes: Owner: reading the Pod failed \
         ({error}); grant policy-server's service account get on pods (see docs/deploying.md, \
         \"Derived objects\")",
        target.namespace.unwrap_or_default(),
        target.name
    )
}
