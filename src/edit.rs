//! What an update changes, for the rules that let some changes through whoever makes them
//! ([`crate::deletion`], [`crate::writes`]).
//!
//! Fields are compared as the JSON text the API server sent, which it writes the same way for
//! the stored and the new object (one encoder, one field order); text that differs for equal
//! values makes the write be judged, never let through.

use serde_json::value::RawValue;

use crate::lookup;
use crate::request::{GroupVersionKind, Metadata, Object, Text};

/// The finalizer that orphans an object's dependents (`metav1.FinalizerOrphanDependents`).
pub const ORPHAN: &str = "orphan";
/// The finalizer of a foreground deletion (`metav1.FinalizerDeleteDependents`).
pub const FOREGROUND: &str = "foregroundDeletion";

/// Metadata fields the API server maintains itself, which any write may see change:
/// `resourceVersion` on every write, `managedFields` with every field manager, `generation` as
/// the strategy counts changes.
const MAINTAINED: [&str; 3] = ["resourceVersion", "managedFields", "generation"];

/// Where each kind keeps the CA bundles a CA injector writes: the top-level field, and the path
/// in it (`[]` for every item of a list). cert-manager's cainjector writes these four
/// (cert-manager pkg/controller/cainjector/injectables.go); ingress-nginx's
/// `kube-webhook-certgen patch` the webhooks'.
const CA_BUNDLES: [(&str, &str, &str, &[&str]); 4] = [
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        "webhooks",
        &["[]", "clientConfig", "caBundle"],
    ),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        "webhooks",
        &["[]", "clientConfig", "caBundle"],
    ),
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "spec",
        &["conversion", "webhook", "clientConfig", "caBundle"],
    ),
    (
        "apiregistration.k8s.io",
        "APIService",
        "spec",
        &["caBundle"],
    ),
];

/// What an update changes, as `writes: Owner` tells updates apart ([`crate::writes`]).
///
/// | the update changes                                                   | edit             |
/// |----------------------------------------------------------------------|------------------|
/// | nothing, written to the object itself (not through a subresource)   | `Unchanged`      |
/// | only finalizers, adding some, none of them `orphan` or `foregroundDeletion` | `AddsFinalizers` |
/// | only the CA bundles of its kind ([`CA_BUNDLES`])                     | `InjectsCa`      |
/// | anything else                                                        | `Other`          |
///
/// The fields the API server maintains change with every write ([`MAINTAINED`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// Changes nothing: a controller's repeated update of an object as it is stored.
    Unchanged,
    /// Adds finalizers that only hold the deletion until their controller has cleaned up.
    AddsFinalizers,
    /// Writes CA bundles, and nothing else.
    InjectsCa,
    /// Anything else.
    Other,
}

/// What the update of `old` to `new`, objects of `kind`, changes; through a subresource
/// (`subresource`), what it changes of the metadata ([`crate::persisted`]): its strategy resets
/// the rest, or the rest is the subresource's own.
pub fn of(
    kind: &GroupVersionKind<'_>,
    old: &Object<'_>,
    new: &Object<'_>,
    subresource: bool,
) -> Edit {
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
    if adds_finalizers && only(old, new, leeway) {
        return Edit::AddsFinalizers;
    }
    let bundles = CA_BUNDLES
        .iter()
        .find(|(group, kind_, ..)| *kind.group == **group && *kind.kind == **kind_);
    match bundles {
        Some((_, _, field, path))
            if old_finalizers == new_finalizers && only(old, new, Leeway::At(field, path)) =>
        {
            Edit::InjectsCa
        }
        _ => Edit::Other,
    }
}

/// What else than the finalizers and the fields the API server maintains [`only`] lets differ.
#[derive(Debug, Clone, Copy)]
pub enum Leeway {
    /// Nothing.
    Nothing,
    /// `status`.
    Status,
    /// The value at a path in a top-level field ([`CA_BUNDLES`]).
    At(&'static str, &'static [&'static str]),
    /// Everything but the metadata.
    Body,
}

/// Whether `new` differs from `old` in nothing but its finalizers (the caller compares them),
/// the fields the API server maintains, and the `leeway`.
pub fn only(old: &Object<'_>, new: &Object<'_>, leeway: Leeway) -> bool {
    let (field, path): (&str, &[&str]) = match leeway {
        Leeway::Nothing => ("", &[]),
        Leeway::Status => ("status", &[]),
        Leeway::At(field, path) => (field, path),
        Leeway::Body => return same_metadata(&old.metadata, &new.metadata),
    };
    same_metadata(&old.metadata, &new.metadata)
        && same_fields(&old.fields, &new.fields, &[field])
        && same_but(raw(old.field(field)), raw(new.field(field)), path)
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

/// Whether two JSON values are equal but for what is at `path` in them (`[]` steps into every
/// item of a list); any two values when `path` is empty. Members are compared in the order they
/// were sent, which the API server keeps for both objects; a value that is not what the path
/// says is not equal.
fn same_but(old: Option<&str>, new: Option<&str>, path: &[&str]) -> bool {
    let Some((step, rest)) = path.split_first() else {
        return true;
    };
    let (Some(old), Some(new)) = (old, new) else {
        return old == new;
    };
    if *step == "[]" {
        let (Some(mut old), Some(mut new)) = (lookup::items(old), lookup::items(new)) else {
            return false;
        };
        return loop {
            match (old.next().map(lookup::value), new.next().map(lookup::value)) {
                (None, None) => break true,
                (Some(o), Some(n)) if same_but(Some(o), Some(n), rest) => {}
                _ => break false,
            }
        };
    }
    let is_step = |name: &str| name.get(1..name.len() - 1) == Some(*step);
    let others =
        |object| lookup::members(object).map(|members| members.filter(|(name, _)| !is_step(name)));
    let at_step = |object| lookup::field(object, step).flatten().map(lookup::value);
    match (others(old), others(new)) {
        (Some(old_others), Some(new_others)) => {
            old_others.eq(new_others) && same_but(at_step(old), at_step(new), rest)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn object(value: &Value) -> Object<'static> {
        let text: &'static str = Box::leak(value.to_string().into_boxed_str());
        serde_json::from_str(text).unwrap()
    }

    fn kind(group: &'static str, kind: &'static str) -> GroupVersionKind<'static> {
        GroupVersionKind {
            group: Text::from(group),
            kind: Text::from(kind),
        }
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
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {"group": "example.com", "conversion": {"strategy": "Webhook",
                     "webhook": {"clientConfig": {"caBundle": "b2xk"}}}}
        });
        let api_service = json!({
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": "v1.example.com"},
            "spec": {"group": "example.com", "caBundle": "b2xk"}
        });
        let webhooks = kind(
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
        );
        let mutating = kind(
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
        );
        let crds = kind("apiextensions.k8s.io", "CustomResourceDefinition");
        let api_services = kind("apiregistration.k8s.io", "APIService");
        let config_maps = kind("", "ConfigMap");
        // a kind of the webhooks' group that holds no CA bundle of theirs
        let policies = kind("admissionregistration.k8s.io", "ValidatingAdmissionPolicy");
        let changed = |base: &Value, edits: &[(&str, Value)]| {
            let mut value = base.clone();
            for (pointer, new) in edits {
                let (parent, key) = pointer.rsplit_once('/').unwrap();
                value.pointer_mut(parent).unwrap()[key] = new.clone();
            }
            value
        };
        let bare_hook = changed(&hook, &[("/webhooks", json!([{"name": "a.example.com"}]))]);
        use Edit::*;
        #[rustfmt::skip]
        let rows = [
            // kind, stored, new, edit
            (&webhooks, &hook, changed(&hook, &[("/metadata/finalizers", json!(["a", "finalizers.fluxcd.io"]))]), AddsFinalizers),
            (&webhooks, &hook, changed(&hook, &[("/metadata/finalizers", json!(["a", "b", "c"])), ("/metadata/resourceVersion", json!("2"))]), AddsFinalizers),
            (&webhooks, &hook, changed(&hook, &[("/metadata/finalizers", json!(["a", "orphan"]))]), Other),
            (&webhooks, &hook, changed(&hook, &[("/metadata/finalizers", json!(["a", "foregroundDeletion"]))]), Other),
            (&webhooks, &hook, changed(&hook, &[("/metadata/finalizers", json!(["b"]))]), Other),
            (&webhooks, &hook, changed(&hook, &[("/metadata/finalizers", json!(["a", "b"])), ("/metadata/labels", json!({"x": "y"}))]), Other),
            // what the API server maintains changes with every write
            (&config_maps, &hook, changed(&hook, &[("/metadata/resourceVersion", json!("2"))]), Unchanged),
            (&webhooks, &hook, changed(&hook, &[("/metadata/managedFields", json!([{"manager": "kyverno"}])), ("/metadata/generation", json!(2))]), Unchanged),
            (&webhooks, &hook, changed(&hook, &[("/webhooks/0/failurePolicy", json!("Ignore"))]), Other),
            (&webhooks, &hook, changed(&hook, &[("/metadata/labels", json!({"x": "y"}))]), Other),
            (&webhooks, &hook, changed(&hook, &[("/webhooks/0/clientConfig/caBundle", json!("bmV3"))]), InjectsCa),
            (&mutating, &hook, changed(&hook, &[("/webhooks/0/clientConfig/caBundle", json!("bmV3"))]), InjectsCa),
            (&config_maps, &hook, changed(&hook, &[("/webhooks/0/clientConfig/caBundle", json!("bmV3"))]), Other),
            (&policies, &hook, changed(&hook, &[("/webhooks/0/clientConfig/caBundle", json!("bmV3"))]), Other),
            // a client config where the stored webhook had none is more than a CA bundle
            (&webhooks, &bare_hook, changed(&bare_hook, &[("/webhooks/0/clientConfig", json!({"url": "https://evil.example.com", "caBundle": "bmV3"}))]), Other),
            (&webhooks, &hook, changed(&hook, &[("/webhooks/0/clientConfig/caBundle", json!("bmV3")), ("/webhooks/0/failurePolicy", json!("Ignore"))]), Other),
            (&webhooks, &hook, changed(&hook, &[("/webhooks/0/clientConfig/url", json!("https://evil.example.com"))]), Other),
            (&webhooks, &hook, changed(&hook, &[("/webhooks/0/clientConfig/caBundle", json!("bmV3")), ("/metadata/annotations", json!({"a": "b"}))]), Other),
            (&webhooks, &hook, changed(&hook, &[("/webhooks", json!([]))]), Other),
            (&webhooks, &hook, changed(&hook, &[("/webhooks/0/clientConfig/caBundle", json!("bmV3")), ("/metadata/finalizers", json!(["a", "b"]))]), Other),
            (&crds, &crd, changed(&crd, &[("/spec/conversion/webhook/clientConfig/caBundle", json!("bmV3")), ("/metadata/generation", json!(2))]), InjectsCa),
            (&crds, &crd, changed(&crd, &[("/spec/conversion/webhook/clientConfig/service", json!({"name": "evil"}))]), Other),
            (&crds, &crd, changed(&crd, &[("/spec/group", json!("evil.example.com"))]), Other),
            (&crds, &crd, changed(&crd, &[("/spec/caBundle", json!("bmV3"))]), Other),
            (&api_services, &api_service, changed(&api_service, &[("/spec/caBundle", json!("bmV3"))]), InjectsCa),
            (&api_services, &api_service, changed(&api_service, &[("/spec/insecureSkipTLSVerify", json!(true))]), Other),
            (&crds, &api_service, changed(&api_service, &[("/spec/caBundle", json!("bmV3"))]), Other),
        ];
        for (index, (kind, old, new, expected)) in rows.into_iter().enumerate() {
            assert_eq!(
                of(kind, &object(old), &object(&new), false),
                expected,
                "row {index}: {new}"
            );
        }
        // Through a subresource only the metadata counts: the strategy resets the rest, or it
        // is the subresource's own.
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
            (changed(&status, &[("/spec/conversion/webhook/clientConfig/caBundle", json!("bmV3"))]), Other),
        ];
        for (new, expected) in rows {
            assert_eq!(
                of(&crds, &object(&crd), &object(&new), true),
                expected,
                "{new}"
            );
        }
    }
}
