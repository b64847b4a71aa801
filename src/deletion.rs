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

use serde_json::value::RawValue;

use crate::request::{DeleteOptions, Metadata, Object, Text};

/// The finalizer that orphans an object's dependents (`metav1.FinalizerOrphanDependents`).
const ORPHAN: &str = "orphan";
/// The finalizer of a foreground deletion (`metav1.FinalizerDeleteDependents`).
const FOREGROUND: &str = "foregroundDeletion";

/// Metadata fields the API server maintains itself, which a write that finishes a deletion may
/// see change: `resourceVersion` on every write, `managedFields` with every field manager,
/// `generation` as the strategy counts changes.
const MAINTAINED: [&str; 3] = ["resourceVersion", "managedFields", "generation"];

/// Whether a request only finishes a deletion that has begun: the stored object `old` is
/// terminating, and
///
/// | request | finishes the deletion when |
/// |---|---|
/// | DELETE (`new` is `None`) | it shortens no grace period and changes no propagation |
/// | UPDATE | it removes finalizers or changes `status`, and nothing else |
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

/// Whether `new` differs from `old` only in removed finalizers, `status`, and the fields the
/// API server maintains. Fields are compared as the JSON text the API server sent, which it
/// writes the same way for both objects; text that differs for equal values makes the write be
/// judged, never skipped.
fn only_finalizers_or_status(old: &Object<'_>, new: &Object<'_>) -> bool {
    let (old_meta, new_meta) = (&old.metadata, &new.metadata);
    let finalizers_removed = new_meta
        .finalizers
        .iter()
        .all(|finalizer| old_meta.finalizers.contains(finalizer));
    let annotations_equal =
        old_meta.annotations.len() == new_meta.annotations.len()
            && old_meta.annotations.iter().zip(&new_meta.annotations).all(
                |((old_key, old), (new_key, new))| old_key == new_key && old.get() == new.get(),
            );
    finalizers_removed
        && old_meta.name == new_meta.name
        && old_meta.labels == new_meta.labels
        && annotations_equal
        && raw(old_meta.deletion_timestamp) == raw(new_meta.deletion_timestamp)
        && old_meta.deletion_grace_period_seconds == new_meta.deletion_grace_period_seconds
        && same_fields(&old_meta.fields, &new_meta.fields, &MAINTAINED)
        && same_fields(&old.fields, &new.fields, &["status"])
}

fn raw(value: Option<&RawValue>) -> Option<&str> {
    value.map(RawValue::get)
}

/// Whether two lists of fields are equal, but for the fields named in `except`.
fn same_fields(
    old: &[(Text<'_>, &RawValue)],
    new: &[(Text<'_>, &RawValue)],
    except: &[&str],
) -> bool {
    let kept = |fields: &[(Text<'_>, &RawValue)]| {
        fields
            .iter()
            .filter(|(key, _)| !except.contains(&&**key))
            .count()
    };
    kept(old) == kept(new)
        && new
            .iter()
            .filter(|(key, _)| !except.contains(&&**key))
            .all(|(key, value)| {
                old.iter()
                    .any(|(old_key, old_value)| old_key == key && old_value.get() == value.get())
            })
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
            (changed("/metadata/finalizers", json!([])), true),
            (changed("/metadata/finalizers", Value::Null), true),
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
        let removes_finalizer = changed("/metadata/finalizers", json!([]));
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
