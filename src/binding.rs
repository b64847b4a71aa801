//! The binding rule: the API server copies a Binding's annotations — and, in recent versions,
//! its labels — onto the Pod it binds (`BindingREST.Create`, `pkg/registry/core/pod/storage`),
//! so an owner mark on a Binding would set or change a Pod's owner where no rule sees the Pod.
//!
//! | `pods/binding` CREATE | verdict |
//! |---|---|
//! | the Binding carries no guarded mark | allowed (not judged: [`crate::facts::Sides`]) |
//! | the Binding carries a mark, valid or not | denied: marks are set on the Pod itself |
//!
//! The scheduler's Bindings carry no labels or annotations (its `DefaultBinder`), and the trusted
//! control plane is allowed before any rule. An offer on a Binding names no owner of the
//! Binding's: the offer rules refuse it.

use crate::facts::{Entry, Facts};
use crate::request::BINDING;
use crate::violation::Reason;

/// The binding rule: why `entry`'s mark may not be carried by the request, if it may not.
pub fn rule<'a>(facts: &Facts<'a>, entry: &Entry<'a>) -> Option<Reason<'a>> {
    let carried = entry.new.is_some_and(|claim| !claim.is_none());
    (carried && facts.request.targets(BINDING)).then_some(Reason::ThroughBinding)
}
