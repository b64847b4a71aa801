//! What an update changes, for the rules that let some changes through whoever makes them
//! ([`crate::deletion`], [`crate::writes`]).
//!
//! Fields are compared as the JSON text the API server sent, which it writes the same way for
//! the stored and the new object (one encoder, one field order); text that differs for equal
//! values makes the write be judged, never let through.

use serde_json::value::RawValue;

use crate::request::{Metadata, Object, Text};

/// The finalizer that orphans an object's dependents (`metav1.FinalizerOrphanDependents`).
pub const ORPHAN: &str = "orphan";
/// The finalizer of a foreground deletion (`metav1.FinalizerDeleteDependents`).
pub const FOREGROUND: &str = "foregroundDeletion";

/// Metadata fields the API server maintains itself, which any write may see change:
/// `resourceVersion` on every write, `managedFields` with every field manager, `generation` as
/// the strategy counts changes.
pub const MAINTAINED: [&str; 3] = ["resourceVersion", "managedFields", "generation"];

/// What an update changes, as `writes: Owner` tells updates apart ([`crate::writes`]).
///
/// | the update changes                                                   | edit             |
/// |----------------------------------------------------------------------|------------------|
/// | nothing, written to the object itself (not through a subresource)   | `Unchanged`      |
/// | only finalizers, adding some, none of them `orphan` or `foregroundDeletion` | `AddsFinalizers` |
/// | anything else                                                        | `Other`          |
///
/// The fields the API server maintains change with every write ([`MAINTAINED`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// Changes nothing: a controller's repeated update of an object as it is stored.
    Unchanged,
    /// Adds finalizers that only hold the deletion until their controller has cleaned up.
    AddsFinalizers,
    /// Anything else.
    Other,
}

/// What the update of `old` to `new`, objects of `kind`, changes; through a subresource
/// (`subresource`), what it changes of the metadata ([`crate::persisted`]): its strategy resets
/// the rest, or the rest is the subresource's own.
pub fn of(old: &Object<'_>, new: &Object<'_>, subresource: bool) -> Edit {
    let (old_finalizers, new_finalizers) = (&old.metadata.finalizers, &new.metadata.finalizers);
    let added = new_finalizers
        .iter()
        .filter(|f| !old_finalizers.contains(f));
    let adds_finalizers = old_finalizers.iter().all(|f| new_finalizers.contains(f))
        && added.clone().next().is_some()
        && added.clone().all(|f| **f != *ORPHAN && **f != *FOREGROUND);
    let leeway = match subresource {
        true => Leeway::Body,
        false => Leeway::Nothing,
    };
    // Through a subresource, what is written is read from the rewritten or stored sides the
    // policy judges it by (a `scale` as its target, a Binding as its Pod), which keep the
    // object as it is: such a write is never taken for one that changes nothing.
    if !subresource && old_finalizers == new_finalizers && only(old, new, Leeway::Nothing) {
        return Edit::Unchanged;
    }
    match adds_finalizers && only(old, new, leeway) {
        true => Edit::AddsFinalizers,
        false => Edit::Other,
    }
}

/// What else than the finalizers and the fields the API server maintains [`only`] lets differ.
#[derive(Debug, Clone, Copy)]
pub enum Leeway {
    /// Nothing.
    Nothing,
    /// `status`.
    Status,
    /// Everything but the metadata.
    Body,
}

/// Whether `new` differs from `old` in nothing but its finalizers (the caller compares them),
/// the fields the API server maintains, and the `leeway`.
pub fn only(old: &Object<'_>, new: &Object<'_>, leeway: Leeway) -> bool {
    let except: &[&str] = match leeway {
        Leeway::Nothing => &[],
        Leeway::Status => &["status"],
        Leeway::Body => return same_metadata(&old.metadata, &new.metadata),
    };
    same_metadata(&old.metadata, &new.metadata) && same_fields(&old.fields, &new.fields, except)
}

/// Whether two objects' metadata are equal but for their finalizers and the fields the API
/// server maintains.
fn same_metadata(old: &Metadata<'_>, new: &Metadata<'_>) -> bool {
    old.name == new.name
        && old.labels == new.labels
        && same_annotations(old, new)
        && raw(old.deletion_timestamp) == raw(new.deletion_timestamp)
        && old.deletion_grace_period_seconds == new.deletion_grace_period_seconds
        && same_fields(&old.fields, &new.fields, &MAINTAINED)
}

/// Whether two objects' annotations are equal, each value as the text it was sent as.
pub fn same_annotations(old: &Metadata<'_>, new: &Metadata<'_>) -> bool {
    old.annotations.len() == new.annotations.len()
        && (old.annotations.iter().zip(&new.annotations))
            .all(|((old_key, old), (new_key, new))| old_key == new_key && old.get() == new.get())
}

fn raw(value: Option<&RawValue>) -> Option<&str> {
    value.map(RawValue::get)
}

/// The first field, but those named in `except`, whose value differs between two lists of
/// fields (or that only one has).
pub fn first_difference<'f>(
    old: &'f [(Text<'_>, &RawValue)],
    new: &'f [(Text<'_>, &RawValue)],
    except: &[&str],
) -> Option<&'f str> {
    let kept = |fields: &'f [(Text<'_>, &RawValue)]| {
        (fields.iter()).filter(|(key, _)| !except.contains(&&**key))
    };
    let found = |fields: &'f [(Text<'_>, &RawValue)], key: &str, value: &RawValue| {
        kept(fields).any(|(k, v)| **k == *key && v.get() == value.get())
    };
    (kept(old).find(|(key, value)| !found(new, key, value)))
        .or_else(|| kept(new).find(|(key, value)| !found(old, key, value)))
        .map(|(key, _)| &**key)
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
pub(crate) mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn object(value: &Value) -> Object<'static> {
        let text: &'static str = Box::leak(value.to_string().into_boxed_str());
        serde_json::from_str(text).unwrap()
    }

    /// A CRD whose conversion webhook carries a CA bundle.
    pub fn crd() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {"group": "example.com", "conversion": {"strategy": "Webhook",
                     "webhook": {"clientConfig": {"caBundle": "b2xk"}}}}
        })
    }

    /// `base` with the values at these JSON pointers replaced.
    pub fn changed(base: &Value, edits: &[(&str, Value)]) -> Value {
        let mut value = base.clone();
        for (pointer, new) in edits {
            let (parent, key) = pointer.rsplit_once('/').unwrap();
            let key = key.replace("~1", "/").replace("~0", "~");
            value.pointer_mut(parent).unwrap()[key] = new.clone();
        }
        value
    }

    #[test]
    fn edit_table() {
        let hook = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "hook", "resourceVersion": "1", "finalizers": ["a"]},
            "webhooks": [{"name": "a.example.com", "failurePolicy": "Fail",
                          "clientConfig": {"service": {"name": "s", "namespace": "n"}}}]
        });
        let crd = crd();
        use Edit::*;
        #[rustfmt::skip]
        let rows = [
            // the change to the stored object, what the update is
            (changed(&hook, &[("/metadata/finalizers", json!(["a", "finalizers.fluxcd.io"]))]), AddsFinalizers),
            (changed(&hook, &[("/metadata/finalizers", json!(["a", "b", "c"])), ("/metadata/resourceVersion", json!("2"))]), AddsFinalizers),
            (changed(&hook, &[("/metadata/finalizers", json!(["a", "orphan"]))]), Other),
            (changed(&hook, &[("/metadata/finalizers", json!(["a", "foregroundDeletion"]))]), Other),
            (changed(&hook, &[("/metadata/finalizers", json!(["b"]))]), Other),
            (changed(&hook, &[("/metadata/finalizers", json!(["a", "b"])), ("/metadata/labels", json!({"x": "y"}))]), Other),
            // what the API server maintains changes with every write
            (changed(&hook, &[("/metadata/resourceVersion", json!("2"))]), Unchanged),
            (changed(&hook, &[("/metadata/managedFields", json!([{"manager": "kyverno"}])), ("/metadata/generation", json!(2))]), Unchanged),
            (changed(&hook, &[("/webhooks/0/failurePolicy", json!("Ignore"))]), Other),
            (changed(&hook, &[("/metadata/labels", json!({"x": "y"}))]), Other),
            // what a grant may let through is still a change ([`crate::grant`])
            (changed(&hook, &[("/webhooks/0/clientConfig/caBundle", json!("bmV3"))]), Other),
        ];
        for (index, (new, expected)) in rows.into_iter().enumerate() {
            assert_eq!(
                of(&object(&hook), &object(&new), false),
                expected,
                "row {index}: {new}"
            );
        }
        // Through a subresource only the metadata counts: the strategy resets the rest, or it
        // is the subresource's own; and nothing it writes is taken for no change.
        let status = changed(
            &crd,
            &[("/status", json!({"acceptedNames": {"kind": "Thing"}}))],
        );
        #[rustfmt::skip]
        let rows = [
            (changed(&status, &[("/metadata/finalizers", json!(["finalizers.example.com"]))]), AddsFinalizers),
            (changed(&status, &[("/spec/group", json!("evil.example.com")), ("/metadata/finalizers", json!(["f"]))]), AddsFinalizers),
            (changed(&status, &[("/metadata/finalizers", json!(["orphan"]))]), Other),
            (changed(&status, &[("/metadata/annotations", json!({"a": "b"}))]), Other),
            (changed(&crd, &[("/metadata/resourceVersion", json!("2"))]), Other),
        ];
        for (new, expected) in rows {
            assert_eq!(of(&object(&crd), &object(&new), true), expected, "{new}");
        }
    }
}
