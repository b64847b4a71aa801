//! Finishing a deletion: the writes that complete a deletion which has already begun.
//!
//! Once the stored object has `deletionTimestamp`, its deletion was judged when it began, and
//! what follows only finishes it: finalizers are removed by the controllers that own them, the
//! status is written, and the object is DELETEd again — by the kubelet when its Pod has stopped,
//! by the garbage collector, by `kubectl delete` run twice. Under `writes: Owner` such a write
//! needs no owner (see the table on [`finishes`]). A write that changes anything else, or a
//! re-DELETE that changes how the deletion proceeds, is a new write and judged as one.
//!
//! What a re-DELETE can change is read from the API server's code:
//! - the grace period: `BeforeDelete` in `k8s.io/apiserver/pkg/registry/rest/delete.go` lets a
//!   DELETE of a terminating object only shorten `deletionGracePeriodSeconds` ("only a shorter
//!   grace period may be provided by a user"): a force delete (`--grace-period=0`) of another
//!   owner's Pod;
//! - the propagation: `deletionFinalizersForGarbageCollection` in
//!   `k8s.io/apiserver/pkg/registry/generic/registry/store.go` rewrites the `orphan` and
//!   `foregroundDeletion` finalizers from an explicit `propagationPolicy` or `orphanDependents`,
//!   and keeps them when the DELETE sets neither.

use crate::edit;
use crate::request::{DeleteOptions, Metadata, Object};

pub use edit::{FOREGROUND, ORPHAN};

/// Whether a request only finishes a deletion that has begun: the stored object `old` is
/// terminating, and
///
/// | request | finishes the deletion when |
/// |---|---|
/// | DELETE (`new` is `None`) | it shortens no grace period and changes no propagation |
/// | UPDATE | it removes finalizers (not `orphan` or `foregroundDeletion`) or changes `status`, and nothing else |
pub fn finishes(old: &Object<'_>, new: Option<&Object<'_>>, options: &DeleteOptions<'_>) -> bool {
    if old.metadata.deletion_timestamp.is_none() {
        return false;
    }
    match new {
        None => !shortens_grace(&old.metadata, options) && !changes_propagation(old, options),
        Some(new) => only_finalizers_or_status(old, new),
    }
}

/// Whether a DELETE shortens the grace period of a deletion under way.
fn shortens_grace(old: &Metadata<'_>, options: &DeleteOptions<'_>) -> bool {
    match (
        old.deletion_grace_period_seconds,
        options.grace_period_seconds,
    ) {
        (Some(current), Some(asked)) => current > 0 && asked < current,
        _ => false,
    }
}

/// Whether a DELETE sets a propagation other than the one the object's finalizers hold.
fn changes_propagation(old: &Object<'_>, options: &DeleteOptions<'_>) -> bool {
    // (orphan, foreground) as `deletionFinalizersForGarbageCollection` would set them.
    let asked = match (
        options.orphan_dependents,
        options.propagation_policy.as_deref(),
    ) {
        (Some(orphan), _) => (orphan, false),
        (None, Some("Orphan")) => (true, false),
        (None, Some("Background")) => (false, false),
        (None, Some("Foreground")) => (false, true),
        (None, Some(_)) => return true,
        (None, None) => return false,
    };
    let has = |finalizer: &str| old.metadata.finalizers.iter().any(|f| **f == *finalizer);
    asked != (has(ORPHAN), has(FOREGROUND))
}

/// Whether `new` differs from `old` only in removed finalizers — not the propagation ones,
/// which say what happens to the dependents, and which the garbage collector removes itself —
/// `status`, and the fields the API server maintains ([`edit::only`]).
fn only_finalizers_or_status(old: &Object<'_>, new: &Object<'_>) -> bool {
    let (old_meta, new_meta) = (&old.metadata, &new.metadata);
    let propagation_kept = [ORPHAN, FOREGROUND].iter().all(|finalizer| {
        let has = |meta: &Metadata<'_>| meta.finalizers.iter().any(|f| **f == **finalizer);
        !has(old_meta) || has(new_meta)
    });
    let finalizers_removed = new_meta
        .finalizers
        .iter()
        .all(|finalizer| old_meta.finalizers.contains(finalizer));
    propagation_kept && finalizers_removed && edit::only(old, new, edit::Leeway::Status)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn object(json: &str) -> Object<'_> {
        serde_json::from_str(json).unwrap()
    }

    const TERMINATING: &str = r#"{"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "a", "resourceVersion": "7", "labels": {"appID": "ClusterExtension.a"},
                     "annotations": {"note": "n"}, "finalizers": ["example.com/cleanup", "orphan"],
                     "deletionTimestamp": "2026-12-01T10:00:00Z", "deletionGracePeriodSeconds": 30},
        "data": {"k": "v"}, "status": {"phase": "Terminating"}}"#;

    /// The terminating object as the API server would send it: written by one encoder.
    fn terminating() -> String {
        serde_json::from_str::<Value>(TERMINATING)
            .unwrap()
            .to_string()
    }

    /// The terminating object, changed at one JSON path.
    fn changed(pointer: &str, value: Value) -> String {
        let mut object: Value = serde_json::from_str(TERMINATING).unwrap();
        match value {
            Value::Null => {
                let (parent, key) = pointer.rsplit_once('/').unwrap();
                object
                    .pointer_mut(parent)
                    .unwrap()
                    .as_object_mut()
                    .unwrap()
                    .remove(key);
            }
            value => {
                let (parent, key) = pointer.rsplit_once('/').unwrap();
                let parent = object.pointer_mut(parent).unwrap().as_object_mut().unwrap();
                parent.insert(key.to_owned(), value);
            }
        }
        object.to_string()
    }

    #[test]
    fn an_update_of_a_terminating_object_finishes_it_when_it_only_removes_finalizers_or_writes_status()
     {
        let no_options = DeleteOptions::default();
        #[rustfmt::skip]
        let rows = [
            (changed("/metadata/finalizers", json!(["orphan"])), true),
            // the propagation finalizers are the garbage collector's to remove
            (changed("/metadata/finalizers", json!([])), false),
            (changed("/metadata/finalizers", Value::Null), false),
            (changed("/metadata/finalizers", json!(["example.com/cleanup"])), false),
            (changed("/status", json!({"phase": "Gone"})), true),
            (changed("/metadata/resourceVersion", json!("8")), true),
            (changed("/metadata/managedFields", json!([{"manager": "kubectl"}])), true),
            (terminating(), true),
            // a new write
            (changed("/metadata/finalizers", json!(["orphan", "example.com/other"])), false),
            (changed("/data", json!({"k": "w"})), false),
            (changed("/data", Value::Null), false),
            (changed("/metadata/labels", json!({"appID": "ClusterExtension.b"})), false),
            (changed("/metadata/annotations", json!({"note": "m"})), false),
            (changed("/metadata/annotations", json!({"note": "n", "other": "o"})), false),
            (changed("/metadata/ownerReferences", json!([{"kind": "X", "name": "y"}])), false),
        ];
        let old = terminating();
        let old = object(&old);
        for (new, finishes_it) in rows {
            assert_eq!(
                finishes(&old, Some(&object(&new)), &no_options),
                finishes_it,
                "{new}"
            );
        }
        let alive = changed("/metadata/deletionTimestamp", Value::Null);
        let removes_finalizer = changed("/metadata/finalizers", json!(["orphan"]));
        assert!(!finishes(
            &object(&alive),
            Some(&object(&removes_finalizer)),
            &no_options
        ));
    }

    #[test]
    fn a_re_delete_finishes_a_deletion_unless_it_shortens_it_or_changes_its_propagation() {
        let options = |json: Value| -> DeleteOptions<'static> {
            serde_json::from_str(Box::leak(json.to_string().into_boxed_str())).unwrap()
        };
        let finalized = changed("/metadata/finalizers", json!(["foregroundDeletion"]));
        let no_grace = changed("/metadata/deletionGracePeriodSeconds", json!(0));
        #[rustfmt::skip]
        let rows = [
            (terminating(), json!({}), true),
            (terminating(), json!({"gracePeriodSeconds": 30}), true),
            (terminating(), json!({"gracePeriodSeconds": 60}), true),
            (terminating(), json!({"gracePeriodSeconds": 0}), false),
            (terminating(), json!({"gracePeriodSeconds": 5}), false),
            (no_grace.clone(), json!({"gracePeriodSeconds": 0}), true),
            // the object holds `orphan`
            (terminating(), json!({"propagationPolicy": "Orphan"}), true),
            (terminating(), json!({"orphanDependents": true}), true),
            (terminating(), json!({"propagationPolicy": "Background"}), false),
            (terminating(), json!({"propagationPolicy": "Foreground"}), false),
            (finalized.clone(), json!({"propagationPolicy": "Foreground"}), true),
            (finalized.clone(), json!({"propagationPolicy": "Background"}), false),
            (finalized, json!({"orphanDependents": false}), false),
            (no_grace, json!({"propagationPolicy": "Sideways"}), false),
        ];
        for (old, asked, finishes_it) in rows {
            assert_eq!(
                finishes(&object(&old), None, &options(asked.clone())),
                finishes_it,
                "{old} {asked}"
            );
        }
        let alive = changed("/metadata/deletionTimestamp", Value::Null);
        assert!(!finishes(&object(&alive), None, &DeleteOptions::default()));
    }
}
