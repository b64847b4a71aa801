//! Handoff between owners: offer, accept, withdraw, and every misuse of the offer annotation.
//! An offer reads `<mark>: <from> -> <to>`, or `<mark>: <from> -> <other mark>: <to>` to hand the
//! object to another mark's owner.

mod common;

use rstest::rstest;
use serde_json::{Value, json};
use single_owner_policy::policy;
use single_owner_policy::{Act, NotActing, Reason, Standing};

use common::Expect::{self, Allowed, Denied, DeniedBecause};
use common::{
    APP_ID_KEY, CAMEL, CRD, DEPLOYMENT, FLUX_NAME, FLUX_NAMESPACE, HELM_NAME, HELM_NAMESPACE,
    INTEGRATION, LAST_APPLIED, OFFER, OLM_KIND, OLM_NAME, Pairs, Request, Side, TRACKING,
    app_id_shape, argo_cd_shape, camel_k_shape, evaluate, flux_shape, merged, olm_shape, verdict,
};

const OPERATOR_1: &str = "system:serviceaccount:camel-k:camel-k-operator";
const OPERATOR_2: &str = "system:serviceaccount:camel-k-next:camel-k-operator";
const STRANGER: &str = "system:serviceaccount:camel-k-old:camel-k-operator";

/// What `kubectl apply` leaves on every object here: an offer comes and goes among other
/// annotations.
const APPLIED: (&str, &str) = (LAST_APPLIED, "{\"spec\":{}}");

/// One side of an update: owned through the annotations `marks`, offered as `offer` says.
const fn owned_by<'a>(marks: Pairs<'a>, offer: Option<&'a str>) -> Side<'a> {
    Side {
        labels: &[],
        offer,
        annotations: marks,
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

/// Camel K's operator id, the annotation, beside what `kubectl apply` leaves.
const OP_0: Pairs = &[(CAMEL, "operator-0"), APPLIED];
const OP_1: Pairs = &[(CAMEL, "operator-1"), APPLIED];
const OP_2: Pairs = &[(CAMEL, "operator-2"), APPLIED];
const NOBODY: Pairs = &[APPLIED];

/// Offers of an Integration owned by `operator-1`, and a stale one (its `from` is no longer the
/// owner).
const TO_0: &str = "camel.apache.org/operator.id: operator-1 -> operator-0";
const TO_1: &str = "camel.apache.org/operator.id: operator-1 -> operator-1";
const TO_2: &str = "camel.apache.org/operator.id: operator-1 -> operator-2";
const STALE_TO_2: &str = "camel.apache.org/operator.id: operator-0 -> operator-2";
const TO_1_FROM_2: &str = "camel.apache.org/operator.id: operator-2 -> operator-1";
/// An offer in the form before 0.2.0: the receiver alone.
const BARE: &str = "operator-2";

/// An update of an Integration in `shop` by `user`.
fn update(user: &'static str, old: Side<'static>, new: Side<'static>) -> Request<'static> {
    Request::update(INTEGRATION, "shop", old, new).by(user)
}

/// Camel K operators with identities, the policy validating (not stamping: an accepting update
/// that keeps the offer is denied rather than mutated).
#[rstest]
// offer: by the owner, or by a stranger
#[case::owner_offers(
    update(OPERATOR_1, owned_by(OP_1, None), owned_by(OP_1, Some(TO_2))),
    Allowed
)]
#[case::stranger_offers(update(STRANGER, owned_by(OP_1, None), owned_by(OP_1, Some(TO_0))),
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer owned by "operator-1""#],
        |r| matches!(r, Reason::NotActing(NotActing { act: Act::Offer, .. }))))]
#[case::offer_to_the_current_owner(update(OPERATOR_1, owned_by(OP_1, None), owned_by(OP_1, Some(TO_1))),
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer owned by "operator-1""#],
        |r| matches!(r, Reason::OfferToItself { to: "operator-1" })))]
#[case::offer_of_an_unowned_object(update(OPERATOR_1, owned_by(NOBODY, None), owned_by(NOBODY, Some(TO_2))),
    DeniedBecause(&["annotation single-owner-policy.io/offer: offer owned by none"],
        |r| matches!(r, Reason::OfferOfNothing { .. })))]
// an offer names the owner that makes it, under a guarded mark, in the form of 0.2.0
#[case::offer_from_another_owner(update(OPERATOR_1, owned_by(OP_1, None), owned_by(OP_1, Some(STALE_TO_2))),
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer owned by "operator-1""#],
        |r| matches!(r, Reason::OfferByAnother { from: "operator-0", .. })))]
#[case::offer_under_an_unguarded_mark(update(OPERATOR_1, owned_by(OP_1, None), owned_by(OP_1, Some("appID: operator-1 -> operator-2"))),
    DeniedBecause(&["annotation single-owner-policy.io/offer: offer owned by none"],
        |r| matches!(r, Reason::OfferNamesNoMark { key: "appID", .. })))]
#[case::offer_to_an_unguarded_mark(update(OPERATOR_1, owned_by(OP_1, None), owned_by(OP_1, Some("camel.apache.org/operator.id: operator-1 -> appID: operator-2"))),
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer owned by "operator-1""#],
        |r| matches!(r, Reason::OfferNamesNoMark { key: "appID", .. })))]
#[case::offer_in_the_old_form(update(OPERATOR_1, owned_by(OP_1, None), owned_by(OP_1, Some(BARE))),
    DeniedBecause(&["annotation single-owner-policy.io/offer: offer owned by none"],
        |r| matches!(r, Reason::OfferMalformed { text: "operator-2" })))]
// change and withdraw: the owner's act too
#[case::owner_changes_its_offer(
    update(OPERATOR_1, owned_by(OP_1, Some(TO_2)), owned_by(OP_1, Some(TO_0))),
    Allowed
)]
#[case::owner_withdraws_its_offer(
    update(OPERATOR_1, owned_by(OP_1, Some(TO_2)), owned_by(OP_1, None)),
    Allowed
)]
#[case::receiver_withdraws_the_offer(update(OPERATOR_2, owned_by(OP_1, Some(TO_2)), owned_by(OP_1, None)),
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer owned by "operator-1""#],
        |r| matches!(r, Reason::NotActing(NotActing { act: Act::Withdraw, .. }))))]
// a stale offer, or one that does not parse, hands nothing over: anyone may remove it
#[case::stranger_removes_a_stale_offer(
    update(STRANGER, owned_by(OP_1, Some(STALE_TO_2)), owned_by(OP_1, None)),
    Allowed
)]
#[case::stranger_removes_an_offer_in_the_old_form(
    update(STRANGER, owned_by(OP_1, Some(BARE)), owned_by(OP_1, None)),
    Allowed
)]
// accept: by the named receiver, consuming the offer
#[case::receiver_accepts(
    update(OPERATOR_2, owned_by(OP_1, Some(TO_2)), owned_by(OP_2, None)),
    Allowed
)]
// accept without consuming the offer (the policy is not mutating here)
#[case::accept_keeping_the_offer(update(OPERATOR_2, owned_by(OP_1, Some(TO_2)), owned_by(OP_2, Some(TO_2))),
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer from "operator-1" to "operator-2""#],
        |r| matches!(r, Reason::OfferNotConsumed { .. })))]
// accept by a third party, for itself or on the receiver's behalf
#[case::third_party_accepts_for_itself(update(STRANGER, owned_by(OP_1, Some(TO_2)), owned_by(OP_0, None)),
    DeniedBecause(&[r#"annotation camel.apache.org/operator.id: owner change from "operator-1" to "operator-0""#],
        |r| matches!(r, Reason::OwnerChange { pending: Some("camel.apache.org/operator.id: operator-1 -> operator-2"), .. })))]
#[case::third_party_accepts_for_the_receiver(update(STRANGER, owned_by(OP_1, Some(TO_2)), owned_by(OP_2, None)),
    Denied(&[r#"annotation camel.apache.org/operator.id: identity from "operator-1" to "operator-2""#]))]
// accept without an offer, or after it was withdrawn (the stored object has none)
#[case::accept_without_an_offer(update(OPERATOR_2, owned_by(OP_1, None), owned_by(OP_2, None)),
    DeniedBecause(&[r#"annotation camel.apache.org/operator.id: owner change from "operator-1" to "operator-2""#],
        |r| matches!(r, Reason::OwnerChange { pending: None, .. })))]
// accept a stale offer, or one in the old form: it hands nothing over
#[case::accept_a_stale_offer(update(OPERATOR_2, owned_by(OP_1, Some(STALE_TO_2)), owned_by(OP_2, None)),
    DeniedBecause(&[r#"annotation camel.apache.org/operator.id: owner change from "operator-1" to "operator-2""#],
        |r| matches!(r, Reason::OwnerChange { pending: Some("camel.apache.org/operator.id: operator-0 -> operator-2"), .. })))]
#[case::accept_an_offer_in_the_old_form(update(OPERATOR_2, owned_by(OP_1, Some(BARE)), owned_by(OP_2, None)),
    Denied(&[r#"annotation camel.apache.org/operator.id: owner change from "operator-1" to "operator-2""#]))]
// replaying an old offer: the accepted object carries none, so the old owner cannot come back
#[case::replaying_an_old_offer(update(OPERATOR_1, owned_by(OP_2, None), owned_by(OP_1, Some(TO_2))),
    Denied(&[
        r#"annotation camel.apache.org/operator.id: owner change from "operator-2" to "operator-1""#,
        r#"annotation single-owner-policy.io/offer: offer from "operator-2" to "operator-1""#,
    ]))]
// a stale offer is no offer, whoever it names
#[case::a_stale_offer_back(update(OPERATOR_1, owned_by(OP_2, Some(TO_2)), owned_by(OP_1, None)),
    Denied(&[r#"annotation camel.apache.org/operator.id: owner change from "operator-2" to "operator-1""#]))]
#[case::the_offer_back(
    update(OPERATOR_1, owned_by(OP_2, Some(TO_1_FROM_2)), owned_by(OP_1, None)),
    Allowed
)]
// an offer does not survive its owner: orphaning must take it along
#[case::orphaning_leaves_the_offer(update(OPERATOR_1, owned_by(OP_1, Some(TO_2)), owned_by(NOBODY, Some(TO_2))),
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer from "operator-1" to none"#],
        |r| matches!(r, Reason::OfferNotConsumed { .. })))]
#[case::orphaning_takes_the_offer_along(
    update(OPERATOR_1, owned_by(OP_1, Some(TO_2)), owned_by(NOBODY, None)),
    Allowed
)]
// an offer is made on its own: not in the CREATE that sets the owner, nor in the update that
// moves it (the reason says which)
#[case::offer_made_in_the_create(Request::create(INTEGRATION, "shop", owned_by(OP_1, Some(TO_2))).by(OPERATOR_1),
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer from none to "operator-1""#],
        |r| matches!(r, Reason::OfferWithMove { creating: true, .. })))]
#[case::offer_made_with_the_move(update(OPERATOR_2, owned_by(OP_1, Some(TO_2)), owned_by(OP_2, Some(TO_1_FROM_2))),
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer from "operator-1" to "operator-2""#],
        |r| matches!(r, Reason::OfferWithMove { creating: false, .. })))]
// the offer is not re-judged while nothing about it changes
#[case::offer_unchanged(
    update(OPERATOR_1, owned_by(OP_1, Some(TO_2)), owned_by(OP_1, Some(TO_2))),
    Allowed
)]
#[case::stale_offer_unchanged(
    update(
        STRANGER,
        owned_by(OP_1, Some(STALE_TO_2)),
        owned_by(OP_1, Some(STALE_TO_2))
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
    let offer = update(OPERATOR_1, owned_by(OP_1, None), owned_by(OP_1, Some(TO_2))).json();
    let response = evaluate(&offer, &settings);
    Allowed.check(&response);
    let offered = match &response["mutated_object"] {
        Value::Null => offer["object"].clone(),
        mutated => mutated.clone(),
    };
    assert_eq!(offered["metadata"]["annotations"][CAMEL], "operator-1");

    let mut accept = update(OPERATOR_2, owned_by(OP_1, Some(TO_2)), owned_by(OP_2, None)).json();
    accept["oldObject"] = offered;
    let response = evaluate(&accept, &settings);
    Allowed.check(&response);
    let accepted = match &response["mutated_object"] {
        Value::Null => accept["object"].clone(),
        mutated => mutated.clone(),
    };
    assert_eq!(accepted["metadata"]["annotations"][CAMEL], "operator-2");
}

#[test]
fn deployed_mutating_the_policy_consumes_the_offer_itself() {
    let request = update(
        OPERATOR_2,
        owned_by(OP_1, Some(TO_2)),
        owned_by(OP_2, Some(TO_2)),
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
        owned_by(OP_1, Some(TO_2)),
    );
    Allowed.check(&evaluate(&offer.json(), &settings));
    let accept = Request::update(
        INTEGRATION,
        "shop",
        owned_by(OP_1, Some(TO_2)),
        owned_by(OP_2, None),
    );
    Allowed.check(&evaluate(&accept.json(), &settings));
}

const CERT_MANAGER: Pairs = &[(APP_ID_KEY, "ClusterExtension.cert-manager")];

/// An offer names an owner that could own the object.
#[rstest]
#[case::valid_and_in_scope("ClusterExtension.cert-manager-v2", Allowed)]
#[case::out_of_scope("Extension.team-a.cert-manager",
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer owned by "ClusterExtension.cert-manager""#],
        |r| matches!(r, Reason::OfferToUnfit { to: "Extension.team-a.cert-manager", .. })))]
#[case::unknown_kind("Operator.x",
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer owned by "ClusterExtension.cert-manager""#],
        |r| matches!(r, Reason::OfferToUnfit { to: "Operator.x", .. })))]
fn offers_name_a_valid_owner_in_scope(#[case] to: &str, #[case] expected: Expect) {
    let offer = format!("appID: ClusterExtension.cert-manager -> {to}");
    let request = Request::update(
        CRD,
        "",
        Side::labelled(CERT_MANAGER),
        Side::labelled(CERT_MANAGER).offering(&offer),
    );
    expected.check(&evaluate(&request.json(), &app_id_shape()));
}

#[test]
fn with_a_kind_name_pair_kind_and_name_move_together() {
    let settings = olm_shape();
    let first: Pairs = &[(OLM_KIND, "ClusterExtension"), (OLM_NAME, "argocd")];
    let second: Pairs = &[(OLM_KIND, "Extension"), (OLM_NAME, "argocd.argocd-v2")];
    let text = "olm.operatorframework.io/owner-name: ClusterExtension.argocd -> Extension.argocd.argocd-v2";
    let offered = Side::labelled(first).offering(text);
    let offer = Request::update(DEPLOYMENT, "argocd", Side::labelled(first), offered);
    Allowed.check(&evaluate(&offer.json(), &settings));
    let accept = Request::update(DEPLOYMENT, "argocd", offered, Side::labelled(second));
    Allowed.check(&evaluate(&accept.json(), &settings));
    let name_only: Pairs = &[
        (OLM_KIND, "ClusterExtension"),
        (OLM_NAME, "argocd.argocd-v2"),
    ];
    let half = Request::update(DEPLOYMENT, "argocd", offered, Side::labelled(name_only));
    DeniedBecause(&[
            r#"label olm.operatorframework.io/owner-name: owner change from "ClusterExtension.argocd" to "ClusterExtension.argocd.argocd-v2""#,
        ],
        |r| matches!(r, Reason::OwnerChange { pending: Some("olm.operatorframework.io/owner-name: ClusterExtension.argocd -> Extension.argocd.argocd-v2"), .. }))
    .check(&evaluate(&half.json(), &settings));
}

const HELM_USER: &str = "system:serviceaccount:shop:helm";
const FLUX_USER: &str = "system:serviceaccount:flux-system:helm-controller";
const ARGOCD: &str = "system:serviceaccount:argocd:argocd-application-controller";
const WEB: Pairs = &[(HELM_NAME, "web"), (HELM_NAMESPACE, "shop"), APPLIED];
const WEB_IN_TEAM_A: Pairs = &[(HELM_NAME, "web"), (HELM_NAMESPACE, "team-a"), APPLIED];
const API: Pairs = &[(HELM_NAME, "api"), (HELM_NAMESPACE, "shop"), APPLIED];
const GUESTBOOK: Pairs = &[(TRACKING, "guestbook:apps/Deployment:shop/x"), APPLIED];
const BILLING: Pairs = &[(TRACKING, "billing:apps/Deployment:shop/x"), APPLIED];
const WEB_AND_GUESTBOOK: Pairs = &[
    (HELM_NAME, "web"),
    (HELM_NAMESPACE, "shop"),
    (TRACKING, "guestbook:apps/Deployment:shop/x"),
    APPLIED,
];
const WEB_TO_API: &str = "meta.helm.sh/release-name: shop/web -> shop/api";
const WEB_TO_TEAM_A: &str = "meta.helm.sh/release-name: shop/web -> team-a/web";
const WEB_TO_GUESTBOOK: &str =
    "meta.helm.sh/release-name: shop/web -> argocd.argoproj.io/tracking-id: guestbook";
const API_TO_GUESTBOOK: &str =
    "meta.helm.sh/release-name: shop/api -> argocd.argoproj.io/tracking-id: guestbook";

/// Argo CD beside Helm releases, with identities: Helm runs as one service account, Argo CD's
/// application controller as another, acting for the apps `guestbook` and `billing`.
fn argo_cd(extra: Value) -> Value {
    let identities = json!({"identities": [
        {"owners": ["shop/*", "team-a/*"], "users": [HELM_USER]},
        {"owners": ["guestbook", "billing"], "users": [ARGOCD]},
    ]});
    merged(merged(argo_cd_shape(), &identities), &extra)
}

/// A Deployment `shop/x` from `old` to `new` by `user`.
fn deployment(user: &'static str, old: Side<'static>, new: Side<'static>) -> Request<'static> {
    Request::update(DEPLOYMENT, "shop", old, new).by(user)
}

/// Offers of a pair of annotations (`<namespace>/<name>` owners), and offers across marks: a
/// Helm release hands its object to an Argo CD app, which removes the release's annotations
/// and sets its tracking id in one update.
#[rstest]
#[case::release_offers_to_another_release(
    deployment(HELM_USER, owned_by(WEB, None), owned_by(WEB, Some(WEB_TO_API))),
    Allowed
)]
#[case::other_release_takes_it(
    deployment(HELM_USER, owned_by(WEB, Some(WEB_TO_API)), owned_by(API, None)),
    Allowed
)]
#[case::release_of_another_namespace_takes_it(
    deployment(
        HELM_USER,
        owned_by(WEB, Some(WEB_TO_TEAM_A)),
        owned_by(WEB_IN_TEAM_A, None)
    ),
    Allowed
)]
#[case::release_offers_to_an_app(
    deployment(HELM_USER, owned_by(WEB, None), owned_by(WEB, Some(WEB_TO_GUESTBOOK))),
    Allowed
)]
#[case::app_offers_for_the_release(deployment(ARGOCD, owned_by(WEB, None), owned_by(WEB, Some(WEB_TO_GUESTBOOK))),
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer owned by "shop/web""#],
        |r| matches!(r, Reason::NotActing(NotActing { standing: Standing::ActsFor(_), .. }))))]
#[case::app_takes_it(
    deployment(
        ARGOCD,
        owned_by(WEB, Some(WEB_TO_GUESTBOOK)),
        owned_by(GUESTBOOK, None)
    ),
    Allowed
)]
// the release's annotations stay: a second owner, and the release's offer is withdrawn by
// the app, which does not act for the release
#[case::app_takes_it_beside_the_release(deployment(ARGOCD, owned_by(WEB, Some(WEB_TO_GUESTBOOK)), owned_by(WEB_AND_GUESTBOOK, None)),
    DeniedBecause(&[
        r#"annotation argocd.argoproj.io/tracking-id: one owner from none to "guestbook""#,
        r#"annotation single-owner-policy.io/offer: offer owned by "shop/web""#,
    ],
        |r| matches!(r, Reason::SecondOwner { under, .. } if under.key == "meta.helm.sh/release-name")))]
// the offer left on the object
#[case::app_takes_it_keeping_the_offer(deployment(ARGOCD, owned_by(WEB, Some(WEB_TO_GUESTBOOK)), owned_by(GUESTBOOK, Some(WEB_TO_GUESTBOOK))),
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer from "shop/web" to none"#],
        |r| matches!(r, Reason::OfferNotConsumed { .. })))]
// another app, a stale offer, a requester not acting for the app: the release's removal is
// its own, and needs acting for it
#[case::another_app_takes_it(deployment(ARGOCD, owned_by(WEB, Some(WEB_TO_GUESTBOOK)), owned_by(BILLING, None)),
    Denied(&[r#"annotation meta.helm.sh/release-name: identity from "shop/web" to none"#]))]
#[case::app_takes_it_by_a_stale_offer(deployment(ARGOCD, owned_by(WEB, Some(API_TO_GUESTBOOK)), owned_by(GUESTBOOK, None)),
    Denied(&[r#"annotation meta.helm.sh/release-name: identity from "shop/web" to none"#]))]
#[case::release_moves_it_to_the_app(deployment(HELM_USER, owned_by(WEB, Some(WEB_TO_GUESTBOOK)), owned_by(GUESTBOOK, None)),
    Denied(&[r#"annotation argocd.argoproj.io/tracking-id: identity from none to "guestbook""#]))]
// a same-mark offer is not one across marks
#[case::app_takes_an_offer_to_a_release(deployment(ARGOCD, owned_by(WEB, Some(WEB_TO_API)), owned_by(GUESTBOOK, None)),
    Denied(&[r#"annotation meta.helm.sh/release-name: identity from "shop/web" to none"#]))]
fn offers_of_releases_and_across_marks(#[case] request: Request, #[case] expected: Expect) {
    expected.check(&evaluate(&request.json(), &argo_cd(json!({}))));
}

/// Under `orphaning: Deny` (as examples/camel-k has it), a mark handed over across marks goes
/// all the same: the object is never unowned. Without a live offer to the owner the update
/// sets, the removal is an orphaning.
#[rstest]
#[case::app_takes_it(
    deployment(
        ARGOCD,
        owned_by(WEB, Some(WEB_TO_GUESTBOOK)),
        owned_by(GUESTBOOK, None)
    ),
    Allowed
)]
#[case::another_app_takes_it(deployment(ARGOCD, owned_by(WEB, Some(WEB_TO_GUESTBOOK)), owned_by(BILLING, None)),
    Denied(&[r#"annotation meta.helm.sh/release-name: orphaning from "shop/web" to none"#]))]
#[case::app_takes_it_by_a_stale_offer(deployment(ARGOCD, owned_by(WEB, Some(API_TO_GUESTBOOK)), owned_by(GUESTBOOK, None)),
    Denied(&[r#"annotation meta.helm.sh/release-name: orphaning from "shop/web" to none"#]))]
fn a_mark_handed_across_marks_is_no_orphaning(#[case] request: Request, #[case] expected: Expect) {
    expected.check(&evaluate(
        &request.json(),
        &argo_cd(json!({"orphaning": "Deny"})),
    ));
}

const RELEASED_OP_1: Pairs = &[
    (HELM_NAME, "web"),
    (HELM_NAMESPACE, "shop"),
    (CAMEL, "operator-1"),
    APPLIED,
];
const RELEASED_OP_2: Pairs = &[
    (HELM_NAME, "web"),
    (HELM_NAMESPACE, "shop"),
    (CAMEL, "operator-2"),
    APPLIED,
];
const OP_1_ONLY: Pairs = &[(CAMEL, "operator-1"), APPLIED];

/// Camel K's operator id and a Helm release on one object (an object that predates the
/// policy), under `writes: Any`: an offer is its mark's, made, changed or withdrawn by that
/// mark's owner only, judged against that mark alone, and consumed only by a move of its own
/// mark.
#[rstest]
// made by the operator beside the release, which is someone else's
#[case::made_beside_another_owner(
    false,
    deployment(
        OPERATOR_1,
        owned_by(RELEASED_OP_1, None),
        owned_by(RELEASED_OP_1, Some(TO_2))
    ),
    Allowed
)]
#[case::made_by_the_other_owner(false, deployment(HELM_USER, owned_by(RELEASED_OP_1, None), owned_by(RELEASED_OP_1, Some(TO_2))),
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer owned by "operator-1""#],
        |r| matches!(r, Reason::NotActing(NotActing { act: Act::Offer, .. }))))]
#[case::release_offers_beside_the_operator(
    false,
    deployment(
        HELM_USER,
        owned_by(RELEASED_OP_1, None),
        owned_by(
            RELEASED_OP_1,
            Some("meta.helm.sh/release-name: shop/web -> team-a/web")
        )
    ),
    Allowed
)]
// the release's reconciler removes its own mark and the operator's offer with it
#[case::withdrawn_beside_another_marks_move(false, deployment(HELM_USER, owned_by(RELEASED_OP_1, Some(TO_2)), owned_by(OP_1_ONLY, None)),
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer owned by "operator-1""#],
        |r| matches!(r, Reason::NotActing(NotActing { act: Act::Withdraw, .. }))))]
#[case::withdrawn_by_its_owner_beside_another_marks_move(false, deployment(OPERATOR_1, owned_by(RELEASED_OP_1, Some(TO_2)), owned_by(OP_1_ONLY, None)),
    Denied(&[r#"annotation meta.helm.sh/release-name: identity from "shop/web" to none"#]))]
// the offer kept while another mark moves: nothing consumes it, deployed mutating or not
#[case::kept_beside_another_marks_move(
    false,
    deployment(
        HELM_USER,
        owned_by(RELEASED_OP_1, Some(TO_2)),
        owned_by(OP_1_ONLY, Some(TO_2))
    ),
    Allowed
)]
#[case::kept_beside_another_marks_move_mutating(
    true,
    deployment(
        HELM_USER,
        owned_by(RELEASED_OP_1, Some(TO_2)),
        owned_by(OP_1_ONLY, Some(TO_2))
    ),
    Allowed
)]
// its own mark's move consumes it
#[case::accepted_beside_a_kept_release(false, deployment(OPERATOR_2, owned_by(RELEASED_OP_1, Some(TO_2)), owned_by(RELEASED_OP_2, None)),
    DeniedBecause(&[r#"annotation camel.apache.org/operator.id: one owner from "operator-1" to "operator-2""#],
        |r| matches!(r, Reason::SecondOwner { under, .. } if under.key == "meta.helm.sh/release-name")))]
fn an_offer_is_its_own_marks(
    #[case] stamp: bool,
    #[case] request: Request,
    #[case] expected: Expect,
) {
    let settings = json!({
        "ownerMarks": [
            {"annotation": HELM_NAME, "namespaceKey": HELM_NAMESPACE},
            {"annotation": CAMEL},
        ],
        "identities": [
            {"owners": ["shop/*"], "users": [HELM_USER]},
            {"owners": ["operator-1"], "users": [OPERATOR_1]},
            {"owners": ["operator-2"], "users": [OPERATOR_2]},
        ],
        "stamp": stamp,
    });
    let response = evaluate(&request.json(), &settings);
    expected.check(&response);
    assert_eq!(response["mutated_object"], Value::Null);
}

/// helm-controller's labels and Helm's annotations name one owner (`sameOwnerAs`); where they
/// name two (an object that predates the policy), each mark's owner offers under its own mark.
#[rstest]
#[case::helm_release_offers(
    HELM_USER,
    "meta.helm.sh/release-name: shop/web -> team-a/web",
    Allowed
)]
#[case::helm_release_offers_to_an_app(
    HELM_USER,
    "meta.helm.sh/release-name: shop/web -> camel.apache.org/operator.id: operator-2",
    Allowed
)]
#[case::flux_release_offers_for_helms(FLUX_USER, "meta.helm.sh/release-name: shop/web -> team-a/web",
    DeniedBecause(&[r#"annotation single-owner-policy.io/offer: offer owned by "shop/web""#],
        |r| matches!(r, Reason::NotActing(NotActing { standing: Standing::ActsFor(_), .. }))))]
#[case::flux_release_offers(
    FLUX_USER,
    "helm.toolkit.fluxcd.io/name: shop/api -> team-a/api",
    Allowed
)]
fn linked_marks_offer_each_under_its_own(
    #[case] user: &'static str,
    #[case] offer: &'static str,
    #[case] expected: Expect,
) {
    let settings = merged(
        flux_shape(),
        &json!({"identities": [
            {"owners": ["shop/web"], "users": [HELM_USER]},
            {"owners": ["shop/api"], "users": [FLUX_USER]},
        ]}),
    );
    let stored = Side {
        labels: &[(FLUX_NAME, "api"), (FLUX_NAMESPACE, "shop")],
        offer: None,
        annotations: WEB,
    };
    let request = deployment(user, stored, stored.offering(offer));
    expected.check(&evaluate(&request.json(), &settings));
}

#[test]
fn the_offer_annotation_is_a_setting() {
    let settings = merged(
        camel_k_shape(),
        &json!({"offerAnnotation": "example.com/hand-over-to"}),
    );
    let mut request = Request::update(
        INTEGRATION,
        "shop",
        owned_by(OP_1, None),
        owned_by(OP_2, None),
    )
    .json();
    request["oldObject"]["metadata"]["annotations"]["example.com/hand-over-to"] = json!(TO_2);
    Allowed.check(&evaluate(&request, &settings));
    // the default annotation is no offer then
    let mut default = request.clone();
    default["oldObject"]["metadata"]["annotations"]
        .as_object_mut()
        .unwrap()
        .remove("example.com/hand-over-to");
    default["oldObject"]["metadata"]["annotations"][OFFER] = json!(TO_2);
    Denied(&[
        r#"annotation camel.apache.org/operator.id: owner change from "operator-1" to "operator-2""#,
    ])
    .check(&evaluate(&default, &settings));
    request["oldObject"]["metadata"]["annotations"]["example.com/hand-over-to"] = json!(2);
    let response = evaluate(&request, &settings);
    assert_eq!(response["code"], 400);
    assert!(verdict(&response).starts_with("cannot read the admission request: oldObject.metadata.annotations.example.com/hand-over-to: invalid type: integer `2`, expected a string"));
    // The setting's name before 0.2.0 says what to write instead.
    let renamed =
        policy::validate_settings(br#"{"transferAnnotation": "example.com/hand-over-to"}"#);
    assert!(!renamed.valid);
    assert_eq!(
        renamed.message.as_deref(),
        Some(
            "transferAnnotation was renamed to offerAnnotation in 0.2.0; offers now read \
             `<mark>: <from> -> <to>`"
        )
    );
}

/// kustomize-controller's labels: the Kustomization's name and namespace.
const KUSTOMIZE_NAME: &str = "kustomize.toolkit.fluxcd.io/name";
const KUSTOMIZE_NAMESPACE: &str = "kustomize.toolkit.fluxcd.io/namespace";

/// A HelmRelease's objects carry helm-controller's labels and Helm's annotations, linked
/// (`sameOwnerAs`): one offer, made under either, hands both over in the update that takes it
/// up — to another HelmRelease, or to a Kustomization — and nothing but an offer moves them.
#[rstest]
#[case::to_a_helm_release_offered_under_the_labels(
    Some("helm.toolkit.fluxcd.io/name: shop/web -> team-a/web"),
    Side { labels: &[(FLUX_NAME, "web"), (FLUX_NAMESPACE, "team-a")], offer: None, annotations: WEB_IN_TEAM_A },
    Allowed
)]
#[case::to_a_helm_release_offered_under_the_annotations(
    Some("meta.helm.sh/release-name: shop/web -> team-a/web"),
    Side { labels: &[(FLUX_NAME, "web"), (FLUX_NAMESPACE, "team-a")], offer: None, annotations: WEB_IN_TEAM_A },
    Allowed
)]
#[case::to_a_kustomization(
    Some("helm.toolkit.fluxcd.io/name: shop/web -> kustomize.toolkit.fluxcd.io/name: team-a/apps"),
    Side { labels: &[(KUSTOMIZE_NAME, "apps"), (KUSTOMIZE_NAMESPACE, "team-a")], offer: None, annotations: &[APPLIED] },
    Allowed
)]
#[case::without_an_offer(
    None,
    Side { labels: &[(FLUX_NAME, "web"), (FLUX_NAMESPACE, "team-a")], offer: None, annotations: WEB_IN_TEAM_A },
    Denied(&[
        r#"label helm.toolkit.fluxcd.io/name: owner change from "shop/web" to "team-a/web""#,
        r#"annotation meta.helm.sh/release-name: owner change from "shop/web" to "team-a/web""#,
    ])
)]
#[case::the_linked_mark_alone(
    Some("helm.toolkit.fluxcd.io/name: shop/web -> team-a/web"),
    Side {
        labels: &[(FLUX_NAME, "web"), (FLUX_NAMESPACE, "shop")],
        offer: Some("helm.toolkit.fluxcd.io/name: shop/web -> team-a/web"),
        annotations: WEB_IN_TEAM_A,
    },
    Denied(&[
        r#"label helm.toolkit.fluxcd.io/name: owner writes owned by "shop/web""#,
        r#"annotation meta.helm.sh/release-name: owner change from "shop/web" to "team-a/web""#,
    ])
)]
fn linked_marks_move_together(
    #[case] offer: Option<&'static str>,
    #[case] new: Side<'static>,
    #[case] expected: Expect,
) {
    let settings = json!({
        "ownerMarks": [
            {"label": KUSTOMIZE_NAME, "namespaceKey": KUSTOMIZE_NAMESPACE},
            {"label": FLUX_NAME, "namespaceKey": FLUX_NAMESPACE, "sameOwnerAs": [HELM_NAME]},
            {"annotation": HELM_NAME, "namespaceKey": HELM_NAMESPACE},
        ],
        "identities": [{"owners": ["team-a/*"], "users": [FLUX_USER]}],
        "writes": "Owner",
    });
    let stored = Side {
        labels: &[(FLUX_NAME, "web"), (FLUX_NAMESPACE, "shop")],
        offer,
        annotations: WEB,
    };
    let request = deployment(FLUX_USER, stored, new);
    expected.check(&evaluate(&request.json(), &settings));
}
