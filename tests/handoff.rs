//! Handoff between owners: offer, accept, withdraw, and every misuse of the offer annotation.

mod common;

use rstest::rstest;
use serde_json::{Value, json};

use common::Expect::{self, Allowed, Denied, DeniedSaying};
use common::{
    APP_ID_KEY, CAMEL, CRD, DEPLOYMENT, INTEGRATION, LAST_APPLIED, OFFER, OLM_KIND, OLM_NAME,
    Pairs, Request, Side, app_id_shape, camel_k_shape, evaluate, merged, olm_shape, verdict,
};

const OPERATOR_1: &str = "system:serviceaccount:camel-k:camel-k-operator";
const OPERATOR_2: &str = "system:serviceaccount:camel-k-next:camel-k-operator";
const STRANGER: &str = "system:serviceaccount:camel-k-old:camel-k-operator";

/// What `kubectl apply` leaves on every object here: an offer comes and goes among other
/// annotations.
const APPLIED: Pairs = &[(LAST_APPLIED, "{\"spec\":{}}")];

/// One side of an update: owned through `labels`, offered to `offer`, if any.
const fn owned_by<'a>(labels: Pairs<'a>, offer: Option<&'a str>) -> Side<'a> {
    Side {
        labels,
        offer,
        annotations: APPLIED,
    }
}

/// Camel K operators, each with its identity.
fn camel_k(extra: Value) -> Value {
    let identities = json!({"identities": [
        {"owners": ["operator-1"], "users": [OPERATOR_1]},
        {"owners": ["operator-2"], "users": [OPERATOR_2]},
        {"owners": ["operator-0"], "users": [STRANGER]},
    ]});
    merged(merged(camel_k_shape(), &identities), &extra)
}

const OP_0: Pairs = &[(CAMEL, "operator-0")];
const OP_1: Pairs = &[(CAMEL, "operator-1")];
const OP_2: Pairs = &[(CAMEL, "operator-2")];
const NOBODY: Pairs = &[];

/// An update of an Integration in `shop` by `user`.
fn update(user: &'static str, old: Side<'static>, new: Side<'static>) -> Request<'static> {
    Request::update(INTEGRATION, "shop", old, new).by(user)
}

/// Camel K operators with identities, the policy validating (not stamping: an accepting update
/// that keeps the offer is denied rather than mutated).
#[rstest]
// offer: by the owner, or by a stranger
#[case::owner_offers(
    update(OPERATOR_1, owned_by(OP_1, None), owned_by(OP_1, Some("operator-2"))),
    Allowed
)]
#[case::stranger_offers(update(STRANGER, owned_by(OP_1, None), owned_by(OP_1, Some("operator-0"))),
    Denied(&[r#"single-owner-policy.io/offer: offer owned by "operator-1""#]))]
#[case::offer_to_the_current_owner(update(OPERATOR_1, owned_by(OP_1, None), owned_by(OP_1, Some("operator-1"))),
    DeniedSaying(&[r#"single-owner-policy.io/offer: offer owned by "operator-1""#],
        r#"the offer names the current owner "operator-1""#))]
#[case::offer_of_an_unowned_object(update(OPERATOR_1, owned_by(NOBODY, None), owned_by(NOBODY, Some("operator-2"))),
    Denied(&["single-owner-policy.io/offer: offer owned by none"]))]
// change and withdraw: the owner's act too
#[case::owner_changes_its_offer(
    update(
        OPERATOR_1,
        owned_by(OP_1, Some("operator-2")),
        owned_by(OP_1, Some("operator-0"))
    ),
    Allowed
)]
#[case::owner_withdraws_its_offer(
    update(OPERATOR_1, owned_by(OP_1, Some("operator-2")), owned_by(OP_1, None)),
    Allowed
)]
#[case::receiver_withdraws_the_offer(update(OPERATOR_2, owned_by(OP_1, Some("operator-2")), owned_by(OP_1, None)),
    Denied(&[r#"single-owner-policy.io/offer: offer owned by "operator-1""#]))]
// accept: by the named receiver, consuming the offer
#[case::receiver_accepts(
    update(OPERATOR_2, owned_by(OP_1, Some("operator-2")), owned_by(OP_2, None)),
    Allowed
)]
// accept without consuming the offer (the policy is not mutating here)
#[case::accept_keeping_the_offer(update(OPERATOR_2, owned_by(OP_1, Some("operator-2")), owned_by(OP_2, Some("operator-2"))),
    DeniedSaying(&[r#"single-owner-policy.io/offer: offer from "operator-1" to "operator-2""#],
        "consumes the offer"))]
// accept by a third party, for itself or on the receiver's behalf
#[case::third_party_accepts_for_itself(update(STRANGER, owned_by(OP_1, Some("operator-2")), owned_by(OP_0, None)),
    DeniedSaying(&[r#"camel.apache.org/operator.id: owner change from "operator-1" to "operator-0""#],
        r#"the pending offer (single-owner-policy.io/offer) names "operator-2", not "operator-0""#))]
#[case::third_party_accepts_for_the_receiver(update(STRANGER, owned_by(OP_1, Some("operator-2")), owned_by(OP_2, None)),
    Denied(&[r#"camel.apache.org/operator.id: identity from "operator-1" to "operator-2""#]))]
// accept without an offer, or after it was withdrawn (the stored object has none)
#[case::accept_without_an_offer(update(OPERATOR_2, owned_by(OP_1, None), owned_by(OP_2, None)),
    DeniedSaying(&[r#"camel.apache.org/operator.id: owner change from "operator-1" to "operator-2""#],
        "by setting the annotation single-owner-policy.io/offer=operator-2,"))]
// replaying an old offer: the accepted object carries none, so the old owner cannot come back
#[case::replaying_an_old_offer(update(OPERATOR_1, owned_by(OP_2, None), owned_by(OP_1, Some("operator-2"))),
    Denied(&[
        r#"camel.apache.org/operator.id: owner change from "operator-2" to "operator-1""#,
        r#"single-owner-policy.io/offer: offer from "operator-2" to "operator-1""#,
    ]))]
// an offer does not survive its owner: orphaning must take it along
#[case::orphaning_leaves_the_offer(update(OPERATOR_1, owned_by(OP_1, Some("operator-2")), owned_by(NOBODY, Some("operator-2"))),
    DeniedSaying(&[r#"single-owner-policy.io/offer: offer from "operator-1" to none"#],
        "consumes the offer"))]
#[case::orphaning_takes_the_offer_along(
    update(OPERATOR_1, owned_by(OP_1, Some("operator-2")), owned_by(NOBODY, None)),
    Allowed
)]
// the offer is not re-judged while nothing about it changes
#[case::offer_unchanged(
    update(
        OPERATOR_1,
        owned_by(OP_1, Some("operator-2")),
        owned_by(OP_1, Some("operator-2"))
    ),
    Allowed
)]
fn camel_k_offer_accept_withdraw(#[case] request: Request, #[case] expected: Expect) {
    expected.check(&evaluate(&request.json(), &camel_k(json!({}))));
}

/// Offer then accept: after each step, the object as stored has an owner.
#[test]
fn a_full_move_never_leaves_the_object_unowned() {
    let settings = camel_k(json!({}));
    let offer = update(
        OPERATOR_1,
        owned_by(OP_1, None),
        owned_by(OP_1, Some("operator-2")),
    )
    .json();
    let response = evaluate(&offer, &settings);
    Allowed.check(&response);
    let offered = match &response["mutated_object"] {
        Value::Null => offer["object"].clone(),
        mutated => mutated.clone(),
    };
    assert_eq!(offered["metadata"]["labels"][CAMEL], "operator-1");

    let mut accept = update(
        OPERATOR_2,
        owned_by(OP_1, Some("operator-2")),
        owned_by(OP_2, None),
    )
    .json();
    accept["oldObject"] = offered;
    let response = evaluate(&accept, &settings);
    Allowed.check(&response);
    let accepted = match &response["mutated_object"] {
        Value::Null => accept["object"].clone(),
        mutated => mutated.clone(),
    };
    assert_eq!(accepted["metadata"]["labels"][CAMEL], "operator-2");
}

#[test]
fn deployed_mutating_the_policy_consumes_the_offer_itself() {
    let request = update(
        OPERATOR_2,
        owned_by(OP_1, Some("operator-2")),
        owned_by(OP_2, Some("operator-2")),
    )
    .json();
    let response = evaluate(&request, &camel_k(json!({"stamp": true})));
    Allowed.check(&response);
    let mut expected = request["object"].clone();
    expected["metadata"]["annotations"]
        .as_object_mut()
        .unwrap()
        .remove(OFFER);
    assert_eq!(response["mutated_object"], expected);
}

#[test]
fn without_identities_anyone_the_rules_allow_may_offer_and_accept() {
    let settings = camel_k_shape();
    let offer = Request::update(
        INTEGRATION,
        "shop",
        owned_by(OP_1, None),
        owned_by(OP_1, Some("operator-2")),
    );
    Allowed.check(&evaluate(&offer.json(), &settings));
    let accept = Request::update(
        INTEGRATION,
        "shop",
        owned_by(OP_1, Some("operator-2")),
        owned_by(OP_2, None),
    );
    Allowed.check(&evaluate(&accept.json(), &settings));
}

const CERT_MANAGER: Pairs = &[(APP_ID_KEY, "ClusterExtension.cert-manager")];

/// An offer names an owner that could own the object.
#[rstest]
#[case::valid_and_in_scope("ClusterExtension.cert-manager-v2", Allowed)]
#[case::out_of_scope("Extension.team-a.cert-manager",
    DeniedSaying(&[r#"single-owner-policy.io/offer: offer owned by "ClusterExtension.cert-manager""#],
        r#"the offer names "Extension.team-a.cert-manager", which cannot own the object"#))]
#[case::unknown_kind("Operator.x",
    DeniedSaying(&[r#"single-owner-policy.io/offer: offer owned by "ClusterExtension.cert-manager""#],
        r#"the offer names "Operator.x", which cannot own the object"#))]
fn offers_name_a_valid_owner_in_scope(#[case] to: &str, #[case] expected: Expect) {
    let request = Request::update(
        CRD,
        "",
        owned_by(CERT_MANAGER, None),
        owned_by(CERT_MANAGER, Some(to)),
    );
    expected.check(&evaluate(&request.json(), &app_id_shape()));
}

#[test]
fn with_a_kind_name_pair_kind_and_name_move_together() {
    let settings = olm_shape();
    let first: Pairs = &[(OLM_KIND, "ClusterExtension"), (OLM_NAME, "argocd")];
    let second: Pairs = &[(OLM_KIND, "Extension"), (OLM_NAME, "argocd.argocd-v2")];
    let offered = owned_by(first, Some("Extension.argocd.argocd-v2"));
    let offer = Request::update(DEPLOYMENT, "argocd", owned_by(first, None), offered);
    Allowed.check(&evaluate(&offer.json(), &settings));
    let accept = Request::update(DEPLOYMENT, "argocd", offered, owned_by(second, None));
    Allowed.check(&evaluate(&accept.json(), &settings));
    let name_only: Pairs = &[
        (OLM_KIND, "ClusterExtension"),
        (OLM_NAME, "argocd.argocd-v2"),
    ];
    let half = Request::update(DEPLOYMENT, "argocd", offered, owned_by(name_only, None));
    DeniedSaying(
        &[
            r#"olm.operatorframework.io/owner-name: owner change from "ClusterExtension.argocd" to "ClusterExtension.argocd.argocd-v2""#,
        ],
        r#"the pending offer (single-owner-policy.io/offer) names "Extension.argocd.argocd-v2", not "ClusterExtension.argocd.argocd-v2""#,
    )
    .check(&evaluate(&half.json(), &settings));
}

#[test]
fn the_transfer_annotation_is_a_setting() {
    let settings = merged(
        camel_k_shape(),
        &json!({"transferAnnotation": "example.com/hand-over-to"}),
    );
    let mut request = Request::update(
        INTEGRATION,
        "shop",
        owned_by(OP_1, None),
        owned_by(OP_2, None),
    )
    .json();
    request["oldObject"]["metadata"]["annotations"]["example.com/hand-over-to"] =
        json!("operator-2");
    Allowed.check(&evaluate(&request, &settings));
    request["oldObject"]["metadata"]["annotations"]["example.com/hand-over-to"] = json!(2);
    let response = evaluate(&request, &settings);
    assert_eq!(response["code"], 400);
    assert!(verdict(&response).starts_with("cannot read the admission request: oldObject.metadata.annotations.example.com/hand-over-to: invalid type: integer `2`, expected a string"));
}
