//! Handoff between owners: offer, accept, withdraw, and every misuse of the offer annotation.

use serde_json::{Value, json};
mod common;

use common::{evaluate, merged, verdict};

const OFFER: &str = "single-owner-policy.io/offer";
const CAMEL: &str = "camel.apache.org/operator.id";
const OLM_NAME: &str = "olm.operatorframework.io/owner-name";
const OLM_KIND: &str = "olm.operatorframework.io/owner-kind";
const OPERATOR_1: &str = "system:serviceaccount:camel-k:camel-k-operator";
const OPERATOR_2: &str = "system:serviceaccount:camel-k-next:camel-k-operator";
const STRANGER: &str = "system:serviceaccount:camel-k-old:camel-k-operator";

/// Labels and annotations of one side of an update.
#[derive(Clone, Copy)]
struct Side<'a> {
    labels: &'a [(&'a str, &'a str)],
    offer: Option<&'a str>,
}

const fn owned_by<'a>(labels: &'a [(&'a str, &'a str)], offer: Option<&'a str>) -> Side<'a> {
    Side { labels, offer }
}

fn object(kind: &str, side: Side) -> Value {
    let labels: serde_json::Map<String, Value> = side
        .labels
        .iter()
        .map(|&(k, v)| (k.to_owned(), json!(v)))
        .collect();
    let mut annotations =
        json!({"kubectl.kubernetes.io/last-applied-configuration": "{\"spec\":{}}"});
    if let Some(offer) = side.offer {
        annotations[OFFER] = json!(offer);
    }
    json!({"kind": kind, "metadata": {"name": "x", "labels": labels, "annotations": annotations}})
}

fn update(user: &str, kind: &str, namespace: &str, old: Side, new: Side) -> Value {
    let (group, kind) = kind.split_once('/').unwrap();
    json!({
        "uid": "h", "kind": {"group": group, "version": "v1", "kind": kind},
        "operation": "UPDATE", "namespace": namespace, "name": "x",
        "userInfo": {"username": user, "groups": ["system:serviceaccounts"]},
        "object": object(kind, new), "oldObject": object(kind, old),
    })
}

fn camel_k(extra: Value) -> Value {
    let base = json!({
        "ownerLabels": [{"key": CAMEL}],
        "identities": [
            {"owners": ["operator-1"], "users": [OPERATOR_1]},
            {"owners": ["operator-2"], "users": [OPERATOR_2]},
            {"owners": ["operator-0"], "users": [STRANGER]},
        ],
    });
    merged(base, &extra)
}

const OP_1: &[(&str, &str)] = &[(CAMEL, "operator-1")];
const OP_2: &[(&str, &str)] = &[(CAMEL, "operator-2")];
const NOBODY: &[(&str, &str)] = &[];
const INTEGRATION: &str = "camel.apache.org/Integration";

/// user, old side, new side, verdict — Camel K operators with identities, the policy validating.
type Row = (&'static str, Side<'static>, Side<'static>, &'static str);

#[rustfmt::skip]
const CAMEL_ROWS: &[Row] = &[
    // offer: by the owner, or by a stranger
    (OPERATOR_1, owned_by(OP_1, None), owned_by(OP_1, Some("operator-2")), "allowed"),
    (STRANGER, owned_by(OP_1, None), owned_by(OP_1, Some("operator-0")),
     r#"single-owner-policy.io/offer: offer denied for UPDATE of Integration shop/x, owned by "operator-1": user system:serviceaccount:camel-k-old:camel-k-operator acts for "operator-0", not for "operator-1"; only a requester acting for an owner may offer it or withdraw an offer of it"#),
    (OPERATOR_1, owned_by(OP_1, None), owned_by(OP_1, Some("operator-1")),
     r#"single-owner-policy.io/offer: offer denied for UPDATE of Integration shop/x, owned by "operator-1": the offer names the current owner "operator-1"; name the receiving owner"#),
    (OPERATOR_1, owned_by(NOBODY, None), owned_by(NOBODY, Some("operator-2")),
     "single-owner-policy.io/offer: offer denied for UPDATE of Integration shop/x, owned by none: the object has no owner to hand it over"),
    // change and withdraw: the owner's act too
    (OPERATOR_1, owned_by(OP_1, Some("operator-2")), owned_by(OP_1, Some("operator-0")), "allowed"),
    (OPERATOR_1, owned_by(OP_1, Some("operator-2")), owned_by(OP_1, None), "allowed"),
    (OPERATOR_2, owned_by(OP_1, Some("operator-2")), owned_by(OP_1, None),
     r#"single-owner-policy.io/offer: offer denied for UPDATE of Integration shop/x, owned by "operator-1": user system:serviceaccount:camel-k-next:camel-k-operator acts for "operator-2", not for "operator-1"; only a requester acting for an owner may offer it or withdraw an offer of it"#),
    // accept: by the named receiver, consuming the offer
    (OPERATOR_2, owned_by(OP_1, Some("operator-2")), owned_by(OP_2, None), "allowed"),
    // accept without consuming the offer (the policy is not mutating here)
    (OPERATOR_2, owned_by(OP_1, Some("operator-2")), owned_by(OP_2, Some("operator-2")),
     r#"single-owner-policy.io/offer: offer denied for Integration shop/x from "operator-1" to "operator-2": an update that changes or removes the owner consumes the offer; remove the annotation single-owner-policy.io/offer in the same update"#),
    // accept by a third party, for itself or on the receiver's behalf
    (STRANGER, owned_by(OP_1, Some("operator-2")), owned_by(&[(CAMEL, "operator-0")], None),
     r#"camel.apache.org/operator.id: owner change denied for Integration shop/x from "operator-1" to "operator-0": an object has one owner; the pending offer (single-owner-policy.io/offer) names "operator-2", not "operator-0""#),
    (STRANGER, owned_by(OP_1, Some("operator-2")), owned_by(OP_2, None),
     r#"camel.apache.org/operator.id: identity denied for Integration shop/x from "operator-1" to "operator-2": user system:serviceaccount:camel-k-old:camel-k-operator acts for "operator-0", not for "operator-2"; only a requester acting for an owner may set it"#),
    // accept without an offer, or after it was withdrawn (the stored object has none)
    (OPERATOR_2, owned_by(OP_1, None), owned_by(OP_2, None),
     r#"camel.apache.org/operator.id: owner change denied for Integration shop/x from "operator-1" to "operator-2": an object has one owner; to hand it over, its owner offers it by setting the annotation single-owner-policy.io/offer=operator-2, then the new owner changes the owner label and removes the annotation"#),
    // replaying an old offer: the accepted object carries none, so the old owner cannot come back
    (OPERATOR_1, owned_by(OP_2, None), owned_by(OP_1, Some("operator-2")),
     r#"camel.apache.org/operator.id: owner change denied for Integration shop/x from "operator-2" to "operator-1": an object has one owner; to hand it over, its owner offers it by setting the annotation single-owner-policy.io/offer=operator-1, then the new owner changes the owner label and removes the annotation; single-owner-policy.io/offer: offer denied for Integration shop/x from "operator-2" to "operator-1": an offer (single-owner-policy.io/offer) is made in an update that keeps the owner; change the owner and make an offer in separate updates"#),
    // an offer does not survive its owner: orphaning must take it along
    (OPERATOR_1, owned_by(OP_1, Some("operator-2")), owned_by(NOBODY, Some("operator-2")),
     r#"single-owner-policy.io/offer: offer denied for Integration shop/x from "operator-1" to none: an update that changes or removes the owner consumes the offer; remove the annotation single-owner-policy.io/offer in the same update"#),
    (OPERATOR_1, owned_by(OP_1, Some("operator-2")), owned_by(NOBODY, None), "allowed"),
    // the offer is not re-judged while nothing about it changes
    (OPERATOR_1, owned_by(OP_1, Some("operator-2")), owned_by(OP_1, Some("operator-2")), "allowed"),
];

#[test]
fn camel_k_offer_accept_withdraw() {
    let settings = camel_k(json!({}));
    for &(user, old, new, expected) in CAMEL_ROWS {
        let response = evaluate(&update(user, INTEGRATION, "shop", old, new), &settings);
        assert_eq!(
            verdict(&response),
            expected,
            "{user}: {:?}/{:?} -> {:?}/{:?}",
            old.labels,
            old.offer,
            new.labels,
            new.offer
        );
        assert_eq!(response["mutated_object"], Value::Null);
    }
}

#[test]
fn a_full_move_never_leaves_the_object_unowned() {
    let settings = camel_k(json!({}));
    let steps = [
        (
            OPERATOR_1,
            owned_by(OP_1, None),
            owned_by(OP_1, Some("operator-2")),
        ),
        (
            OPERATOR_2,
            owned_by(OP_1, Some("operator-2")),
            owned_by(OP_2, None),
        ),
    ];
    for (user, old, new) in steps {
        assert!(!new.labels.is_empty(), "every step keeps an owner");
        let response = evaluate(&update(user, INTEGRATION, "shop", old, new), &settings);
        assert_eq!(verdict(&response), "allowed", "{user}");
    }
}

#[test]
fn deployed_mutating_the_policy_consumes_the_offer_itself() {
    let settings = camel_k(json!({"stamp": true}));
    let request = update(
        OPERATOR_2,
        INTEGRATION,
        "shop",
        owned_by(OP_1, Some("operator-2")),
        owned_by(OP_2, Some("operator-2")),
    );
    let response = evaluate(&request, &settings);
    assert_eq!(verdict(&response), "allowed");
    let mut expected = request["object"].clone();
    expected["metadata"]["annotations"]
        .as_object_mut()
        .unwrap()
        .remove(OFFER);
    assert_eq!(response["mutated_object"], expected);
}

#[test]
fn without_identities_anyone_the_rules_allow_may_offer_and_accept() {
    let settings = json!({"ownerLabels": [{"key": CAMEL}]});
    let offer = update(
        "kubernetes-admin",
        INTEGRATION,
        "shop",
        owned_by(OP_1, None),
        owned_by(OP_1, Some("operator-2")),
    );
    assert_eq!(verdict(&evaluate(&offer, &settings)), "allowed");
    let accept = update(
        "kubernetes-admin",
        INTEGRATION,
        "shop",
        owned_by(OP_1, Some("operator-2")),
        owned_by(OP_2, None),
    );
    assert_eq!(verdict(&evaluate(&accept, &settings)), "allowed");
}

#[test]
fn offers_name_a_valid_owner_in_scope() {
    let settings = json!({});
    let crd = "apiextensions.k8s.io/CustomResourceDefinition";
    let owner: &[(&str, &str)] = &[("appID", "ClusterExtension.cert-manager")];
    #[rustfmt::skip]
    let rows = [
        ("ClusterExtension.cert-manager-v2", "allowed"),
        ("Extension.team-a.cert-manager", r#"single-owner-policy.io/offer: offer denied for UPDATE of CustomResourceDefinition x, owned by "ClusterExtension.cert-manager": the offer names "Extension.team-a.cert-manager", which cannot own the object: a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner"#),
        ("Operator.x", r#"single-owner-policy.io/offer: offer denied for UPDATE of CustomResourceDefinition x, owned by "ClusterExtension.cert-manager": the offer names "Operator.x", which cannot own the object: "Operator" is not a configured owner kind; use ClusterExtension.<name> or Extension.<namespace>.<name>"#),
    ];
    for (to, expected) in rows {
        let request = update(
            "kubernetes-admin",
            crd,
            "",
            owned_by(owner, None),
            owned_by(owner, Some(to)),
        );
        assert_eq!(verdict(&evaluate(&request, &settings)), expected, "{to}");
    }
}

#[test]
fn with_a_kind_name_pair_kind_and_name_move_together() {
    let settings = json!({"ownerLabels": [{"key": OLM_NAME, "kindKey": OLM_KIND,
        "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}]});
    let deployment = "apps/Deployment";
    let first: &[(&str, &str)] = &[(OLM_KIND, "ClusterExtension"), (OLM_NAME, "argocd")];
    let second: &[(&str, &str)] = &[(OLM_KIND, "Extension"), (OLM_NAME, "argocd.argocd-v2")];
    let offered = owned_by(first, Some("Extension.argocd.argocd-v2"));
    let offer = update(
        "kubernetes-admin",
        deployment,
        "argocd",
        owned_by(first, None),
        offered,
    );
    assert_eq!(verdict(&evaluate(&offer, &settings)), "allowed");
    let accept = update(
        "kubernetes-admin",
        deployment,
        "argocd",
        offered,
        owned_by(second, None),
    );
    assert_eq!(verdict(&evaluate(&accept, &settings)), "allowed");
    let name_only: &[(&str, &str)] = &[
        (OLM_KIND, "ClusterExtension"),
        (OLM_NAME, "argocd.argocd-v2"),
    ];
    let half = update(
        "kubernetes-admin",
        deployment,
        "argocd",
        offered,
        owned_by(name_only, None),
    );
    assert_eq!(
        verdict(&evaluate(&half, &settings)),
        r#"olm.operatorframework.io/owner-name: owner change denied for Deployment argocd/x from "ClusterExtension.argocd" to "ClusterExtension.argocd.argocd-v2": an object has one owner; the pending offer (single-owner-policy.io/offer) names "Extension.argocd.argocd-v2", not "ClusterExtension.argocd.argocd-v2""#
    );
}

#[test]
fn the_transfer_annotation_is_a_setting() {
    let settings =
        json!({"ownerLabels": [{"key": CAMEL}], "transferAnnotation": "example.com/hand-over-to"});
    let mut request = update(
        "kubernetes-admin",
        INTEGRATION,
        "shop",
        owned_by(OP_1, None),
        owned_by(OP_2, None),
    );
    request["oldObject"]["metadata"]["annotations"]["example.com/hand-over-to"] =
        json!("operator-2");
    assert_eq!(verdict(&evaluate(&request, &settings)), "allowed");
    request["oldObject"]["metadata"]["annotations"]["example.com/hand-over-to"] = json!(2);
    let response = evaluate(&request, &settings);
    assert_eq!(response["code"], 400);
    assert!(verdict(&response).starts_with("cannot read the admission request: oldObject.metadata.annotations.example.com/hand-over-to: invalid type: integer `2`, expected a string"));
}
