//! Grants as narrow as a write (`identities[].changes`, `src/grant.rs`), through whole requests
//! under `writes: Owner`: each row a writer, what it changes in a tenant's object, and the
//! verdict; the rows mirror the module's table, which the unit rows there judge field by field.

mod common;

use serde_json::{Value, json};
use single_owner_policy::{Reason, Standing};

use common::{Expect, FLUX_NAME, FLUX_NAMESPACE, evaluate, flux_shape, merged};

const TENANT: &str = "system:serviceaccount:shop:flux-reconciler";
const KEDA: &str = "system:serviceaccount:keda:keda-operator";
const KARPENTER: &str = "system:serviceaccount:kube-system:karpenter";

/// The tenants' Flux, and two writers bound by what they change for every release.
fn settings() -> Value {
    merged(
        flux_shape(),
        &json!({"writes": "Owner", "identities": [
            {"owners": ["${namespace}/*"], "users": ["system:serviceaccount:*:flux-reconciler"]},
            {"owners": ["*/*"], "users": [KEDA], "changes": ["replicas"]},
            {"owners": ["shop/*"], "users": [KARPENTER],
             "changes": [{"annotations": ["karpenter.sh/nodepool-hash*"]}, "delete"]},
        ]}),
    )
}

/// A Deployment of the release shop/apps, as stored.
fn deployment() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "7",
                     "labels": {FLUX_NAME: "apps", FLUX_NAMESPACE: "shop"},
                     "annotations": {"karpenter.sh/nodepool-hash": "1"}},
        "spec": {"replicas": 2, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {}}}})
}

/// `base` with the values at these JSON pointers set.
fn with(base: &Value, edits: &[(&str, Value)]) -> Value {
    let mut value = base.clone();
    for (pointer, new) in edits {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        let key = key.replace("~1", "/");
        value.pointer_mut(parent).unwrap()[key] = new.clone();
    }
    value
}

/// An UPDATE (a DELETE when `new` is null) of the Deployment by `user`.
fn write(user: &str, old: Value, new: Value) -> Value {
    let namespace = user.split(':').nth(2).unwrap();
    let operation = if new.is_null() { "DELETE" } else { "UPDATE" };
    json!({"uid": "1", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
        "name": "web", "namespace": "shop", "operation": operation,
        "userInfo": {"username": user, "groups": ["system:serviceaccounts",
            format!("system:serviceaccounts:{namespace}"), "system:authenticated"]},
        "object": new, "oldObject": old})
}

/// What the first denial says the writer holds and the write changes beyond it, when it says.
fn standing(evaluated: &common::Evaluated) -> Option<(String, String)> {
    evaluated.violations(|violations| match &violations.first()?.reason {
        Reason::NotActing(not_acting) => match &not_acting.standing {
            Standing::Changes { grants, beyond } => Some((grants.clone(), beyond.clone())),
            _ => None,
        },
        _ => None,
    })
}

/// What a denial says the writer holds, and what the write changes beyond it.
type Held = Option<(&'static str, &'static str)>;

const OWNER_WRITES: &[&str] =
    &["label helm.toolkit.fluxcd.io/name: owner writes owned by \"shop/apps\""];

#[test]
fn a_writer_changes_only_what_it_is_granted() {
    let stored = deployment();
    let scaled = with(&stored, &[("/spec/replicas", json!(0))]);
    let restarted = with(
        &scaled,
        &[("/spec/template/metadata/annotations", json!({"a": "b"}))],
    );
    let hashed = with(
        &stored,
        &[(
            "/metadata/annotations/karpenter.sh~1nodepool-hash",
            json!("2"),
        )],
    );
    let annotated = with(&stored, &[("/metadata/annotations/other", json!("x"))]);
    let relabelled = with(
        &scaled,
        &[(
            "/metadata/labels/helm.toolkit.fluxcd.io~1name",
            json!("other"),
        )],
    );
    let settings = settings();
    #[rustfmt::skip]
    let rows: Vec<(&str, Value, Expect, Held)> = vec![
        ("KEDA scales a release's Deployment",          write(KEDA, stored.clone(), scaled.clone()), Expect::Allowed, None),
        ("KEDA scales and restarts it",                 write(KEDA, stored.clone(), restarted), Expect::Denied(OWNER_WRITES), Some(("replicas", "spec.template.metadata.annotations"))),
        ("KEDA deletes it: not granted",                write(KEDA, stored.clone(), Value::Null), Expect::Denied(OWNER_WRITES), Some(("replicas", "everything: it deletes the object"))),
        ("KEDA moves its mark: no grant moves one",     write(KEDA, stored.clone(), relabelled),
            Expect::Denied(&["label helm.toolkit.fluxcd.io/name: owner change from \"shop/apps\" to \"shop/other\""]), None),
        ("Karpenter writes its hash annotation",        write(KARPENTER, stored.clone(), hashed.clone()), Expect::Allowed, None),
        ("Karpenter writes another annotation",         write(KARPENTER, stored.clone(), annotated), Expect::Denied(OWNER_WRITES),
            Some(("annotations [karpenter.sh/nodepool-hash*], delete", "the annotation other"))),
        ("Karpenter deletes it",                        write(KARPENTER, stored.clone(), Value::Null), Expect::Allowed, None),
        ("Karpenter scales it: not granted",            write(KARPENTER, stored.clone(), scaled.clone()), Expect::Denied(OWNER_WRITES),
            Some(("annotations [karpenter.sh/nodepool-hash*], delete", "spec.replicas"))),
        ("the owner's reconciler writes anything",      write(TENANT, stored.clone(), with(&scaled, &[("/spec/template/spec", json!({"x": 1}))])), Expect::Allowed, None),
    ];
    for (name, request, expected, held) in rows {
        println!("{name}");
        let evaluated = evaluate(&request, &settings);
        expected.check(&evaluated);
        let held = held.map(|(grants, beyond)| (grants.to_owned(), beyond.to_owned()));
        assert_eq!(standing(&evaluated), held, "{name}");
    }
    // A grant for the releases of one namespace is none for another's.
    let elsewhere = with(
        &stored,
        &[(
            "/metadata/labels/helm.toolkit.fluxcd.io~1namespace",
            json!("team-b"),
        )],
    );
    let hashed_elsewhere = with(
        &elsewhere,
        &[(
            "/metadata/annotations/karpenter.sh~1nodepool-hash",
            json!("2"),
        )],
    );
    Expect::Denied(&["label helm.toolkit.fluxcd.io/name: owner writes owned by \"team-b/apps\""])
        .check(&evaluate(
            &write(KARPENTER, elsewhere, hashed_elsewhere),
            &settings,
        ));
}

/// `access: Restore` (a backup tool, Velero): it creates objects with the marks a backup kept,
/// and updates what owners own keeping them; it never removes a mark, nor deletes.
#[test]
fn a_restore_recreates_what_owners_owned_and_takes_nothing() {
    const VELERO: &str = "system:serviceaccount:velero:velero";
    let settings = merged(
        flux_shape(),
        &json!({"writes": "Owner", "identities": [
            {"owners": ["${namespace}/*"], "users": ["system:serviceaccount:*:flux-reconciler"]},
            {"owners": ["*"], "users": [VELERO], "access": "Restore"},
        ]}),
    );
    let stored = deployment();
    let mut create = write(VELERO, Value::Null, stored.clone());
    create["operation"] = json!("CREATE");
    let unmarked = with(&stored, &[("/metadata/labels", json!({}))]);
    let patched = with(&stored, &[("/spec/replicas", json!(3))]);
    #[rustfmt::skip]
    let rows: Vec<(&str, Value, Expect)> = vec![
        ("it creates a release's Deployment from a backup", create, Expect::Allowed),
        ("it patches it back to the backup",               write(VELERO, stored.clone(), patched), Expect::Allowed),
        ("it removes the release's mark",                  write(VELERO, stored.clone(), unmarked),
            Expect::Denied(&["label helm.toolkit.fluxcd.io/name: identity from \"shop/apps\" to none"])),
        ("it deletes it",                                  write(VELERO, stored.clone(), Value::Null), Expect::Denied(OWNER_WRITES)),
    ];
    for (name, request, expected) in rows {
        let evaluated = evaluate(&request, &settings);
        println!("{name}");
        expected.check(&evaluated);
    }
}
