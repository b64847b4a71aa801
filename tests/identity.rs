//! Requester identity: who may set, remove, keep and delete which owner, and label stamping.

use serde_json::{Value, json};
mod common;

use common::{evaluate, merged, verdict};

/// Labels, as `(key, value)` pairs.
type Pairs<'a> = &'a [(&'a str, &'a str)];

/// `writes`, user, operation, kind, namespace, old labels, new labels, verdict.
type IdentityRow = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Option<Pairs<'static>>,
    Option<Pairs<'static>>,
    &'static str,
);

/// User, extra settings, operation, kind, labels of the new object, stamped labels (or null).
type StampRow = (
    &'static str,
    Value,
    &'static str,
    &'static str,
    Option<Pairs<'static>>,
    Value,
);

const CERT_MANAGER: &str = "system:serviceaccount:operators:cert-manager-installer";
const PROMETHEUS: &str = "system:serviceaccount:operators:prometheus-installer";
const OLM: &str = "system:serviceaccount:olmv1-system:operator-controller-controller-manager";
const TEAM_A: &str = "system:serviceaccount:team-a:installer";
const ARGOCD: &str = "system:serviceaccount:team-a:argocd-installer";
const ADMIN: &str = "kubernetes-admin";
const CRD: &str = "apiextensions.k8s.io/CustomResourceDefinition";
const CONFIG_MAP: &str = "/ConfigMap";
const OWNED_BY_CM: Pairs = &[("appID", "ClusterExtension.cert-manager")];
const OWNED_BY_PROM: Pairs = &[("appID", "ClusterExtension.prometheus")];
const NO_LABELS: Pairs = &[];

/// The identities of the seed's appID setup: one installer per ClusterExtension, OLM's single
/// controller for all of them, and any `installer` service account for Extensions of its own
/// namespace.
fn settings(extra: Value) -> Value {
    let base = json!({
        "identities": [
            {"owners": ["ClusterExtension.cert-manager"], "users": [CERT_MANAGER]},
            {"owners": ["ClusterExtension.prometheus"], "users": [PROMETHEUS]},
            {"owners": ["ClusterExtension.*"], "users": [OLM]},
            {"owners": ["Extension.${namespace}.*"], "users": ["system:serviceaccount:*:installer"]},
            {"owners": ["ClusterExtension.${name}"], "groups": ["olmv1-installers"]},
            {"owners": ["Extension.team-a.argocd"], "users": [ARGOCD]},
        ],
        "exemptions": {"users": ["break-glass"]},
    });
    merged(base, &extra)
}

/// An admission request by `user` on an object `x` of `kind` (`group/Kind`) in `namespace`.
fn request(
    user: &str,
    operation: &str,
    kind: &str,
    namespace: &str,
    old: Option<Pairs>,
    new: Option<Pairs>,
) -> Value {
    let (group, kind) = kind.split_once('/').unwrap();
    let object = |pairs: Pairs| {
        let labels: serde_json::Map<String, Value> = pairs
            .iter()
            .map(|&(k, v)| (k.to_owned(), json!(v)))
            .collect();
        json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": "x", "labels": labels}, "spec": {"a": 1}})
    };
    let groups = if user.starts_with("system:serviceaccount:") {
        json!(["system:serviceaccounts", "system:authenticated"])
    } else {
        json!(["system:authenticated"])
    };
    json!({
        "uid": "7", "kind": {"group": group, "version": "v1", "kind": kind},
        "operation": operation, "namespace": namespace, "name": "x",
        "userInfo": {"username": user, "groups": groups},
        "object": new.map_or(Value::Null, object),
        "oldObject": old.map_or(Value::Null, object),
    })
}

#[rustfmt::skip]
const IDENTITY_ROWS: &[IdentityRow] = &[
    // writes, user, operation, kind, namespace, old, new, verdict
    // The two-step takeover: neither the release nor the adoption of a foreign owner is allowed.
    ("Any", PROMETHEUS, "UPDATE", CRD, "", Some(OWNED_BY_CM), Some(NO_LABELS),
     r#"appID: identity denied for CustomResourceDefinition x from "ClusterExtension.cert-manager" to none: user system:serviceaccount:operators:prometheus-installer acts for "ClusterExtension.prometheus", not for "ClusterExtension.cert-manager"; only a requester acting for an owner may remove it"#),
    ("Any", PROMETHEUS, "UPDATE", CRD, "", Some(NO_LABELS), Some(OWNED_BY_CM),
     r#"appID: identity denied for CustomResourceDefinition x from none to "ClusterExtension.cert-manager": user system:serviceaccount:operators:prometheus-installer acts for "ClusterExtension.prometheus", not for "ClusterExtension.cert-manager"; only a requester acting for an owner may set it"#),
    // An owner releases and adopts what is its own.
    ("Any", CERT_MANAGER, "UPDATE", CRD, "", Some(OWNED_BY_CM), Some(NO_LABELS), "allowed"),
    ("Any", CERT_MANAGER, "UPDATE", CRD, "", Some(NO_LABELS), Some(OWNED_BY_CM), "allowed"),
    // Creating with an owner label needs acting for it; a person bound to nothing acts for none.
    ("Any", CERT_MANAGER, "CREATE", CRD, "", None, Some(OWNED_BY_CM), "allowed"),
    ("Any", CERT_MANAGER, "CREATE", CRD, "", None, Some(OWNED_BY_PROM),
     r#"appID: identity denied for CustomResourceDefinition x from none to "ClusterExtension.prometheus": user system:serviceaccount:operators:cert-manager-installer acts for "ClusterExtension.cert-manager", not for "ClusterExtension.prometheus"; only a requester acting for an owner may set it"#),
    ("Any", ADMIN, "CREATE", CRD, "", None, Some(OWNED_BY_CM),
     r#"appID: identity denied for CustomResourceDefinition x from none to "ClusterExtension.cert-manager": user kubernetes-admin acts for none, not for "ClusterExtension.cert-manager"; only a requester acting for an owner may set it"#),
    ("Any", ADMIN, "CREATE", CRD, "", None, Some(NO_LABELS), "allowed"),
    // OLM v1's single controller acts for every ClusterExtension, and for nothing else.
    ("Any", OLM, "CREATE", CRD, "", None, Some(OWNED_BY_PROM), "allowed"),
    ("Any", OLM, "CREATE", CONFIG_MAP, "team-a", None, Some(&[("appID", "Extension.team-a.argocd")]),
     r#"appID: identity denied for ConfigMap team-a/x from none to "Extension.team-a.argocd": user system:serviceaccount:olmv1-system:operator-controller-controller-manager acts for "ClusterExtension.*", not for "Extension.team-a.argocd"; only a requester acting for an owner may set it"#),
    // Templated bindings: any `installer` service account acts for Extensions of its namespace.
    ("Any", TEAM_A, "CREATE", CONFIG_MAP, "team-a", None, Some(&[("appID", "Extension.team-a.argocd")]), "allowed"),
    ("Any", "system:serviceaccount:team-b:installer", "CREATE", CONFIG_MAP, "team-a", None, Some(&[("appID", "Extension.team-a.argocd")]),
     r#"appID: identity denied for ConfigMap team-a/x from none to "Extension.team-a.argocd": user system:serviceaccount:team-b:installer acts for "Extension.team-b.*", not for "Extension.team-a.argocd"; only a requester acting for an owner may set it"#),
    // Scope is judged before identity.
    ("Any", TEAM_A, "CREATE", CRD, "", None, Some(&[("appID", "Extension.team-a.argocd")]),
     r#"appID: cluster scope denied for CustomResourceDefinition x from none to "Extension.team-a.argocd": a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner"#),
    // writes: Any keeps label-only guarding: a hook of another install may patch the object.
    ("Any", PROMETHEUS, "UPDATE", CRD, "", Some(OWNED_BY_CM), Some(OWNED_BY_CM), "allowed"),
    ("Any", PROMETHEUS, "DELETE", CRD, "", Some(OWNED_BY_CM), None, "allowed"),
    // writes: Owner: only the owner's requesters update or delete what it owns.
    ("Owner", PROMETHEUS, "UPDATE", CRD, "", Some(OWNED_BY_CM), Some(OWNED_BY_CM),
     r#"appID: owner writes denied for UPDATE of CustomResourceDefinition x, owned by "ClusterExtension.cert-manager": user system:serviceaccount:operators:prometheus-installer acts for "ClusterExtension.prometheus", not for "ClusterExtension.cert-manager"; only a requester acting for an owner may update or delete it (writes: Owner)"#),
    ("Owner", PROMETHEUS, "DELETE", CRD, "", Some(OWNED_BY_CM), None,
     r#"appID: owner writes denied for DELETE of CustomResourceDefinition x, owned by "ClusterExtension.cert-manager": user system:serviceaccount:operators:prometheus-installer acts for "ClusterExtension.prometheus", not for "ClusterExtension.cert-manager"; only a requester acting for an owner may update or delete it (writes: Owner)"#),
    ("Owner", ADMIN, "DELETE", "batch/Job", "", Some(OWNED_BY_CM), None,
     r#"appID: owner writes denied for DELETE of Job x, owned by "ClusterExtension.cert-manager": user kubernetes-admin acts for none, not for "ClusterExtension.cert-manager"; only a requester acting for an owner may update or delete it (writes: Owner)"#),
    ("Owner", CERT_MANAGER, "UPDATE", CRD, "", Some(OWNED_BY_CM), Some(OWNED_BY_CM), "allowed"),
    ("Owner", CERT_MANAGER, "DELETE", CRD, "", Some(OWNED_BY_CM), None, "allowed"),
    ("Owner", OLM, "DELETE", CRD, "", Some(OWNED_BY_CM), None, "allowed"),
    ("Owner", PROMETHEUS, "DELETE", CRD, "", Some(NO_LABELS), None, "allowed"),
    ("Owner", PROMETHEUS, "UPDATE", CRD, "", Some(NO_LABELS), Some(NO_LABELS), "allowed"),
];

#[test]
fn who_may_set_remove_keep_and_delete_an_owner() {
    for &(writes, user, operation, kind, namespace, old, new, expected) in IDENTITY_ROWS {
        let request = request(user, operation, kind, namespace, old, new);
        let response = evaluate(&request, &settings(json!({"writes": writes})));
        assert_eq!(
            verdict(&response),
            expected,
            "{writes} {user} {operation} {kind} {old:?} -> {new:?}"
        );
        assert_eq!(response["mutated_object"], Value::Null);
    }
}

#[test]
fn camel_k_operators_act_for_their_own_operator_id() {
    let settings = json!({
        "ownerLabels": [{"key": "camel.apache.org/operator.id"}],
        "identities": [
            {"owners": ["operator-1"], "users": ["system:serviceaccount:camel-k:camel-k-operator"]},
            {"owners": ["operator-2"], "users": ["system:serviceaccount:camel-k-next:camel-k-operator"]},
        ],
    });
    let integration = "camel.apache.org/Integration";
    let op_1: Pairs = &[("camel.apache.org/operator.id", "operator-1")];
    let op_2: Pairs = &[("camel.apache.org/operator.id", "operator-2")];
    let first = "system:serviceaccount:camel-k:camel-k-operator";
    #[rustfmt::skip]
    let rows = [
        (first, "CREATE", None, Some(op_1), "allowed"),
        (first, "CREATE", None, Some(op_2), r#"camel.apache.org/operator.id: identity denied for Integration shop/x from none to "operator-2": user system:serviceaccount:camel-k:camel-k-operator acts for "operator-1", not for "operator-2"; only a requester acting for an owner may set it"#),
        (ADMIN, "UPDATE", Some(op_1), Some(NO_LABELS), r#"camel.apache.org/operator.id: identity denied for Integration shop/x from "operator-1" to none: user kubernetes-admin acts for none, not for "operator-1"; only a requester acting for an owner may remove it"#),
        (first, "UPDATE", Some(op_1), Some(NO_LABELS), "allowed"),
    ];
    for (user, operation, old, new, expected) in rows {
        let response = evaluate(
            &request(user, operation, integration, "shop", old, new),
            &settings,
        );
        assert_eq!(
            verdict(&response),
            expected,
            "{user} {operation} {old:?} -> {new:?}"
        );
    }
}

#[test]
fn exemptions_still_override_identity_rules() {
    let request = request(
        "break-glass",
        "UPDATE",
        CRD,
        "",
        Some(OWNED_BY_CM),
        Some(NO_LABELS),
    );
    let response = evaluate(&request, &settings(json!({"writes": "Owner"})));
    assert_eq!(verdict(&response), "allowed");
    let warning = response["warnings"][0].as_str().unwrap();
    assert_eq!(
        warning,
        r#"exempt user break-glass bypassed: appID: identity denied for CustomResourceDefinition x from "ClusterExtension.cert-manager" to none: user break-glass acts for none, not for "ClusterExtension.cert-manager"; only a requester acting for an owner may remove it"#
    );
    assert_eq!(
        response["audit_annotations"]["single-owner-policy-exemption"],
        warning
    );
}

#[test]
fn a_create_by_a_requester_acting_for_one_owner_is_stamped() {
    let olm_pair = json!({"ownerLabels": [{"key": "olm.operatorframework.io/owner-name",
        "kindKey": "olm.operatorframework.io/owner-kind", "clusterKinds": ["ClusterExtension"],
        "namespacedKinds": ["Extension"]}]});
    #[rustfmt::skip]
    let rows: [StampRow; 10] = [
        // stamped, in the shape of the owner label
        (CERT_MANAGER, json!({}), "CREATE", CRD, None, json!({"appID": "ClusterExtension.cert-manager"})),
        (CERT_MANAGER, olm_pair.clone(), "CREATE", CRD, None, json!({
            "olm.operatorframework.io/owner-name": "cert-manager",
            "olm.operatorframework.io/owner-kind": "ClusterExtension"})),
        // a templated binding that names one concrete owner
        ("system:serviceaccount:olmv1:argocd", json!({}), "CREATE", CRD, None, json!({"appID": "ClusterExtension.argocd"})),
        // not stamped: already labelled, an UPDATE, a wildcard-only requester, nobody's requester
        (CERT_MANAGER, json!({}), "CREATE", CRD, Some(OWNED_BY_CM), Value::Null),
        (CERT_MANAGER, json!({}), "UPDATE", CRD, Some(NO_LABELS), Value::Null),
        (OLM, json!({}), "CREATE", CRD, None, Value::Null),
        (TEAM_A, json!({}), "CREATE", CONFIG_MAP, None, Value::Null),
        (ADMIN, json!({}), "CREATE", CRD, None, Value::Null),
        // a namespaced owner is stamped in its namespace, and not where it is out of scope
        (ARGOCD, json!({}), "CREATE", CONFIG_MAP, None, json!({"appID": "Extension.team-a.argocd"})),
        (ARGOCD, json!({}), "CREATE", CRD, None, Value::Null),
    ];
    for (user, mut extra, operation, kind, labels, stamped) in rows {
        extra["stamp"] = json!(true);
        let old = (operation == "UPDATE").then_some(NO_LABELS);
        let mut request = request(
            user,
            operation,
            kind,
            if kind == CONFIG_MAP { "team-a" } else { "" },
            old,
            Some(labels.unwrap_or(NO_LABELS)),
        );
        if user == "system:serviceaccount:olmv1:argocd" {
            request["userInfo"]["groups"] = json!(["olmv1-installers"]);
        }
        let response = evaluate(&request, &settings(extra));
        assert_eq!(response["accepted"], true, "{user} {operation}: {response}");
        let what = format!("{user} {operation} {kind} {labels:?}");
        match stamped {
            Value::Null => assert_eq!(response["mutated_object"], Value::Null, "{what}"),
            labels => {
                let mut expected = request["object"].clone();
                expected["metadata"]["labels"] = labels;
                assert_eq!(response["mutated_object"], expected, "{what}");
            }
        }
    }
}
