//! A lean, typed view of an AdmissionRequest.
//!
//! Only what the rules read is parsed: operation, kind, resource, whether `requestResource` is
//! there, namespace, name, subresource, requester, the DeleteOptions, and of each object its
//! `metadata` (name, labels, finalizers, deletion; annotations as raw values, of which only the
//! guarded ones are decoded, on demand). Every other field — the `spec` of a 1 MiB CustomResourceDefinition
//! included — is kept as the raw JSON text it was sent as, a slice of the payload, never built
//! into a tree: the rule that finishes deletions compares it, and workloads' templates are read
//! from it on demand ([`crate::template`]). The strings that are kept borrow from the payload
//! unless they hold escapes.
//!
//! By concern: [`admission`] the request itself, [`object`] an object and its metadata,
//! [`references`] the owner references, read on demand, [`text`] the strings and the helpers that read optional fields.

mod admission;
mod object;
mod references;
mod text;

pub use admission::{
    AdmissionRequest, BINDING, BOUND, DECLARING_SUBRESOURCES, DeleteOptions, GroupVersionKind,
    ObjectScope, Operation, SCALED, UserInfo,
};
pub use object::{Labels, Metadata, Object, Template};
pub use references::OwnerReference;
pub use text::Text;
pub(crate) use text::null_as_default;
