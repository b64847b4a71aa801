//! What the generator refuses: every setting the policy in the API server cannot judge as the
//! module does, each named with why, and what to generate instead.

use single_owner_policy::Settings;

use super::{Split, trust};

/// What the settings ask that the policy in the API server cannot do, each with why; empty
/// when the whole policy fits. With the webhook beside it ([`Split::WithWebhook`]), what reads
/// other objects is the webhook's.
pub fn refusals(settings: &Settings, split: Split) -> Vec<String> {
    let mut refused = Vec::new();
    let mut refuse = |field: &str, why: &str| refused.push(format!("{field}: {why}"));
    let alone = split == Split::Alone;
    if alone && settings.judges_writes() {
        refuse(
            "writes",
            "a write of an unmarked child, an HPA or a scale is judged by reading the object it \
             reaches, which the API server cannot (kubernetes/kubernetes#133631); generate \
             --split to leave those writes to the webhook",
        );
    }
    if settings.stamp_only {
        refuse(
            "stampOnly",
            "the stamping twin of a Kubewarden pair; generate from the settings with `stamp: \
             true`, which write the MutatingAdmissionPolicy and the judging policy together",
        );
    }
    if alone && !settings.cluster_writers.is_empty() {
        refuse(
            "clusterWriters",
            "writers bound by name derive from their parents' marks, which the API server \
             cannot read (kubernetes/kubernetes#133631); generate --split to leave the writes \
             of derived objects to the webhook",
        );
    }
    if alone && !settings.parent_kinds.is_empty() {
        refuse(
            "parentKinds",
            "a child inherits from its controller, which the API server cannot read \
             (kubernetes/kubernetes#133631); generate --split to leave the writes of children \
             to the webhook",
        );
    }
    if let Err(why) = trust::condition(settings) {
        let (field, why) = why.split_once(": ").unwrap_or(("trustedWriters", &why));
        refuse(field, why);
    }
    for (index, mark) in settings.owner_marks.iter().enumerate() {
        let field = format!("ownerMarks[{index}]");
        if alone && mark.owner_lookup.is_some() {
            refuse(
                &format!("{field}.ownerLookup"),
                "a leftover is found by reading its owner, which the API server cannot \
                 (kubernetes/kubernetes#133631); generate --without-lookups for a policy that \
                 never lets another owner adopt a leftover, or --split to leave the moves of \
                 owners to the webhook",
            );
        }
    }
    refused
}
