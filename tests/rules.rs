//! The policy's rules, table by table, through `policy::validate` with whole payloads.

mod common;

use rstest::rstest;
use serde_json::{Value, json};
use single_owner_policy::policy::{self, EXEMPTION_ANNOTATION};
use single_owner_policy::{InvalidOwner, Reason, Violation};

use common::Expect::{self, Allowed, Denied, DeniedBecause};
use common::{
    APP_ID_KEY, CAMEL, CONFIG_MAP, CRD, DEPLOYMENT, FLUX_NAME, FLUX_NAMESPACE, HELM_NAME,
    HELM_NAMESPACE, INTEGRATION, NAMESPACE, OLM_KIND, OLM_NAME, POD, Pairs, Request, SCALE, Side,
    TRACKING, app_id_shape, argo_cd_shape, camel_k_shape, evaluate, flux_shape, helm_shape, merged,
    olm_shape, opaque_label_shape, verdict,
};

const NONE: Pairs = &[];
const FIRST: Pairs = &[(APP_ID_KEY, "ClusterExtension.first")];
const SECOND: Pairs = &[(APP_ID_KEY, "ClusterExtension.second")];
const PAIR_FIRST: Pairs = &[(OLM_KIND, "ClusterExtension"), (OLM_NAME, "first")];
const PAIR_SECOND: Pairs = &[(OLM_KIND, "ClusterExtension"), (OLM_NAME, "second")];
const HALF_FIRST: Pairs = &[(OLM_NAME, "first")];
const OP_1: Pairs = &[(CAMEL, "operator-1")];
const OP_2: Pairs = &[(CAMEL, "operator-2")];
const WEB: Pairs = &[(HELM_NAME, "web"), (HELM_NAMESPACE, "shop")];
const API: Pairs = &[(HELM_NAME, "api"), (HELM_NAMESPACE, "shop")];
const WEB_WITHOUT_NAMESPACE: Pairs = &[(HELM_NAME, "web")];

/// An object with no marks.
const UNMARKED: Side = Side::labelled(NONE);
/// Camel K's operator id, as the annotation Camel K writes.
const ANNOTATED_OP_1: Side = Side::annotated(OP_1);
const ANNOTATED_OP_2: Side = Side::annotated(OP_2);
/// The Helm CLI's release `shop/web`, and `shop/api`.
const RELEASE_WEB: Side = Side::annotated(WEB);
const RELEASE_API: Side = Side::annotated(API);

/// `shape` with adoption and orphaning denied.
fn deny_both(shape: Value) -> Value {
    merged(shape, &json!({"adoption": "Deny", "orphaning": "Deny"}))
}

/// An AdmissionRequest from `test_data/`.
fn fixture(name: &str) -> Value {
    let path = format!("{}/test_data/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// Each owner shape read from a whole request, where its tool writes it: a kind in the value, a
/// kind/name pair of labels, an opaque id in an annotation, a name/namespace pair of
/// annotations. Per shape, an owner kept and an owner changed, and the shape's own broken
/// values; the settings' `adoption` and `orphaning` once. The transition table's other rows are
/// src/transition.rs's. CRDs are cluster-scoped.
#[rstest]
#[case::app_id_adoption_denied(deny_both(app_id_shape()), NONE.into(), FIRST.into(),
    Denied(&[r#"label appID: adoption from none to "ClusterExtension.first""#]))]
#[case::app_id_orphaning_denied(deny_both(app_id_shape()), FIRST.into(), NONE.into(),
    Denied(&[r#"label appID: orphaning from "ClusterExtension.first" to none"#]))]
#[case::app_id_owner_change(app_id_shape(), FIRST.into(), SECOND.into(),
    DeniedBecause(&[r#"label appID: owner change from "ClusterExtension.first" to "ClusterExtension.second""#],
        |r| matches!(r, Reason::OwnerChange { pending: None, .. })))]
#[case::app_id_kept_under_deny_both(deny_both(app_id_shape()), FIRST.into(), FIRST.into(), Allowed)]
// an annotation of the label's key is no mark
#[case::app_id_as_an_annotation(
    app_id_shape(),
    Side::annotated(FIRST),
    Side::annotated(SECOND),
    Allowed
)]
#[case::olm_kept(olm_shape(), PAIR_FIRST.into(), PAIR_FIRST.into(), Allowed)]
#[case::olm_owner_change(olm_shape(), PAIR_FIRST.into(), PAIR_SECOND.into(),
    DeniedBecause(&[r#"label olm.operatorframework.io/owner-name: owner change from "ClusterExtension.first" to "ClusterExtension.second""#],
        |r| matches!(r, Reason::OwnerChange { pending: None, .. })))]
#[case::olm_kind_removed(olm_shape(), PAIR_FIRST.into(), HALF_FIRST.into(),
    Denied(&[r#"label olm.operatorframework.io/owner-name: owner value from "ClusterExtension.first" to name "first" without a kind"#]))]
#[case::olm_adopted_without_a_kind(olm_shape(), NONE.into(), HALF_FIRST.into(),
    Denied(&[r#"label olm.operatorframework.io/owner-name: owner value from none to name "first" without a kind"#]))]
#[case::camel_k_kept(camel_k_shape(), ANNOTATED_OP_1, ANNOTATED_OP_1, Allowed)]
#[case::camel_k_owner_change(camel_k_shape(), ANNOTATED_OP_1, ANNOTATED_OP_2,
    DeniedBecause(&[r#"annotation camel.apache.org/operator.id: owner change from "operator-1" to "operator-2""#],
        |r| matches!(r, Reason::OwnerChange { pending: None, .. })))]
#[case::camel_k_empty(camel_k_shape(), UNMARKED, Side::annotated(&[(CAMEL, "")]),
    DeniedBecause(&[r#"annotation camel.apache.org/operator.id: owner value from none to """#],
        |r| matches!(r, Reason::OwnerValue(InvalidOwner::Empty))))]
// a label of the annotation's key is no mark
#[case::camel_k_as_a_label(camel_k_shape(), OP_1.into(), OP_2.into(), Allowed)]
#[case::opaque_label_owner_change(opaque_label_shape(), OP_1.into(), OP_2.into(),
    Denied(&[r#"label camel.apache.org/operator.id: owner change from "operator-1" to "operator-2""#]))]
#[case::helm_kept(helm_shape(), RELEASE_WEB, RELEASE_WEB, Allowed)]
#[case::helm_owner_change(helm_shape(), RELEASE_WEB, RELEASE_API,
    DeniedBecause(&[r#"annotation meta.helm.sh/release-name: owner change from "shop/web" to "shop/api""#],
        |r| matches!(r, Reason::OwnerChange { pending: None, .. })))]
#[case::helm_namespace_removed(helm_shape(), RELEASE_WEB, Side::annotated(WEB_WITHOUT_NAMESPACE),
    DeniedBecause(&[r#"annotation meta.helm.sh/release-name: owner value from "shop/web" to name "web" without a namespace"#],
        |r| matches!(r, Reason::OwnerValue(InvalidOwner::HalfPair { .. }))))]
#[case::helm_adopted_without_a_name(helm_shape(), UNMARKED, Side::annotated(&[(HELM_NAMESPACE, "shop")]),
    DeniedBecause(&[r#"annotation meta.helm.sh/release-name: owner value from none to namespace "shop" without a name"#],
        |r| matches!(r, Reason::OwnerValue(InvalidOwner::HalfPair { .. }))))]
#[case::helm_as_labels(helm_shape(), WEB.into(), API.into(), Allowed)]
fn transitions_for_each_owner_shape(
    #[case] settings: Value,
    #[case] old: Side,
    #[case] new: Side,
    #[case] expected: Expect,
) {
    expected.check(&evaluate(
        &Request::update(CRD, "", old, new).json(),
        &settings,
    ));
}

/// An Argo CD tracking id names the object it is on, `<app>:<group>/<kind>:<namespace>/<name>`
/// (the objects here are all named `x`): only such an id claims the object for its app. A Pod
/// that copied its Deployment's id, or an id of another namespace, claims nothing; an id that
/// is not in that form is a broken claim. A cluster-scoped object's id carries any namespace.
#[rstest]
#[case::own_id_created(Request::create(DEPLOYMENT, "shop", Side::annotated(&[(TRACKING, "guestbook:apps/Deployment:shop/x")])),
    Allowed)]
#[case::own_id_of_an_app_in_any_namespace(Request::create(DEPLOYMENT, "shop", Side::annotated(&[(TRACKING, "argocd_guestbook:apps/Deployment:shop/x")])),
    Allowed)]
#[case::own_id_moved_to_another_app(Request::update(DEPLOYMENT, "shop",
    Side::annotated(&[(TRACKING, "guestbook:apps/Deployment:shop/x")]),
    Side::annotated(&[(TRACKING, "billing:apps/Deployment:shop/x")])),
    DeniedBecause(&[r#"annotation argocd.argoproj.io/tracking-id: owner change from "guestbook" to "billing""#],
        |r| matches!(r, Reason::OwnerChange { pending: None, .. })))]
#[case::own_id_removed(Request::update(DEPLOYMENT, "shop",
    Side::annotated(&[(TRACKING, "guestbook:apps/Deployment:shop/x")]), UNMARKED),
    Denied(&[r#"annotation argocd.argoproj.io/tracking-id: orphaning from "guestbook" to none"#]))]
#[case::copied_id_created(Request::create(POD, "shop", Side::annotated(&[(TRACKING, "guestbook:apps/Deployment:shop/x")])),
    Allowed)]
#[case::copied_id_moved_to_another_app(Request::update(POD, "shop",
    Side::annotated(&[(TRACKING, "guestbook:apps/Deployment:shop/x")]),
    Side::annotated(&[(TRACKING, "billing:apps/Deployment:shop/x")])),
    Allowed)]
#[case::copied_id_removed(Request::update(POD, "shop",
    Side::annotated(&[(TRACKING, "guestbook:apps/Deployment:shop/x")]), UNMARKED),
    Allowed)]
#[case::copied_id_replaced_by_an_own_id(Request::update(POD, "shop",
    Side::annotated(&[(TRACKING, "guestbook:apps/Deployment:shop/x")]),
    Side::annotated(&[(TRACKING, "guestbook:/Pod:shop/x")])),
    Denied(&[r#"annotation argocd.argoproj.io/tracking-id: adoption from none to "guestbook""#]))]
#[case::id_of_another_namespace_moved(Request::update(DEPLOYMENT, "shop",
    Side::annotated(&[(TRACKING, "guestbook:apps/Deployment:team-a/x")]),
    Side::annotated(&[(TRACKING, "billing:apps/Deployment:team-a/x")])),
    Allowed)]
#[case::id_of_another_name_moved(Request::update(DEPLOYMENT, "shop",
    Side::annotated(&[(TRACKING, "guestbook:apps/Deployment:shop/web")]),
    Side::annotated(&[(TRACKING, "billing:apps/Deployment:shop/web")])),
    Allowed)]
#[case::cluster_scoped_id_of_any_namespace_moved(Request::update(CRD, "",
    Side::annotated(&[(TRACKING, "guestbook:apiextensions.k8s.io/CustomResourceDefinition:argocd/x")]),
    Side::annotated(&[(TRACKING, "billing:apiextensions.k8s.io/CustomResourceDefinition:default/x")])),
    Denied(&[r#"annotation argocd.argoproj.io/tracking-id: owner change from "guestbook" to "billing""#]))]
#[case::malformed_id_created(Request::create(DEPLOYMENT, "shop", Side::annotated(&[(TRACKING, "guestbook")])),
    DeniedBecause(&[r#"annotation argocd.argoproj.io/tracking-id: owner value from none to "guestbook""#],
        |r| matches!(r, Reason::OwnerValue(InvalidOwner::Malformed { expected: "<application>:<group>/<kind>:<namespace>/<name>" }))))]
#[case::id_with_a_fourth_part_created(Request::create(DEPLOYMENT, "shop", Side::annotated(&[(TRACKING, "a:guestbook:apps/Deployment:shop/x")])),
    DeniedBecause(&[r#"annotation argocd.argoproj.io/tracking-id: owner value from none to "a:guestbook:apps/Deployment:shop/x""#],
        |r| matches!(r, Reason::OwnerValue(InvalidOwner::Malformed { expected: "<application>:<group>/<kind>:<namespace>/<name>" }))))]
// the legacy label of the same key is no mark
#[case::tracking_label_moved(Request::update(DEPLOYMENT, "shop",
    Side::labelled(&[(TRACKING, "guestbook")]), Side::labelled(&[(TRACKING, "billing")])),
    Allowed)]
fn tracking_ids_claim_only_the_object_they_name(
    #[case] request: Request,
    #[case] expected: Expect,
) {
    expected.check(&evaluate(&request.json(), &deny_both(argo_cd_shape())));
}

const CLUSTER_ARGOCD: Pairs = &[(APP_ID_KEY, "ClusterExtension.argocd")];
const TEAM_A_ARGOCD: Pairs = &[(APP_ID_KEY, "Extension.team-a.argocd")];
const PAIR_CLUSTER_ARGOCD: Pairs = &[(OLM_KIND, "ClusterExtension"), (OLM_NAME, "argocd")];
const PAIR_TEAM_A_ARGOCD: Pairs = &[(OLM_KIND, "Extension"), (OLM_NAME, "team-a.argocd")];

/// Scope on CREATE, from a whole request: the object's scope read from its kind and namespace,
/// and each shape's owner in or out of it. The scope table's other rows are src/scope.rs's.
#[rstest]
#[case::app_id_cluster_owner_of_a_crd(app_id_shape(), CRD, "", CLUSTER_ARGOCD.into(), Allowed)]
#[case::app_id_namespaced_owner_of_a_crd(app_id_shape(), CRD, "", TEAM_A_ARGOCD.into(),
    Denied(&[r#"label appID: cluster scope from none to "Extension.team-a.argocd""#]))]
#[case::app_id_namespaced_owner_in_another_namespace(app_id_shape(), CONFIG_MAP, "team-b", TEAM_A_ARGOCD.into(),
    Denied(&[r#"label appID: namespace scope from none to "Extension.team-a.argocd""#]))]
// a Namespace is cluster-scoped, whatever namespace the request carries
#[case::app_id_namespaced_owner_of_a_namespace(app_id_shape(), NAMESPACE, "team-a", TEAM_A_ARGOCD.into(),
    Denied(&[r#"label appID: cluster scope from none to "Extension.team-a.argocd""#]))]
#[case::app_id_unknown_kind(app_id_shape(), CRD, "", (&[(APP_ID_KEY, "Operator.argocd")]).into(),
    Denied(&[r#"label appID: owner value from none to "Operator.argocd""#]))]
#[case::app_id_empty(app_id_shape(), CRD, "", (&[(APP_ID_KEY, "")]).into(),
    Denied(&[r#"label appID: owner value from none to """#]))]
#[case::olm_cluster_owner_of_a_crd(olm_shape(), CRD, "", PAIR_CLUSTER_ARGOCD.into(), Allowed)]
#[case::olm_namespaced_owner_of_a_crd(olm_shape(), CRD, "", PAIR_TEAM_A_ARGOCD.into(),
    Denied(&[r#"label olm.operatorframework.io/owner-name: cluster scope from none to "Extension.team-a.argocd""#]))]
#[case::olm_namespaced_owner_in_its_namespace(
    olm_shape(),
    CONFIG_MAP,
    "team-a",
    PAIR_TEAM_A_ARGOCD.into(),
    Allowed
)]
#[case::olm_namespaced_owner_in_another_namespace(olm_shape(), CONFIG_MAP, "team-b", PAIR_TEAM_A_ARGOCD.into(),
    Denied(&[r#"label olm.operatorframework.io/owner-name: namespace scope from none to "Extension.team-a.argocd""#]))]
#[case::olm_kind_without_a_name(olm_shape(), CRD, "", (&[(OLM_KIND, "ClusterExtension")]).into(),
    Denied(&[r#"label olm.operatorframework.io/owner-name: owner value from none to kind "ClusterExtension" without a name"#]))]
// opaque ids: scope rules do not apply
#[case::camel_k_of_a_crd(camel_k_shape(), CRD, "", ANNOTATED_OP_1, Allowed)]
// `<namespace>/<name>` owners: a release installs objects anywhere
#[case::helm_in_another_namespace(helm_shape(), CONFIG_MAP, "team-b", RELEASE_WEB, Allowed)]
#[case::helm_namespace_with_a_slash(helm_shape(), CONFIG_MAP, "team-b",
    Side::annotated(&[(HELM_NAME, "web"), (HELM_NAMESPACE, "shop/x")]),
    DeniedBecause(&[r#"annotation meta.helm.sh/release-name: owner value from none to "shop/x/web""#],
        |r| matches!(r, Reason::OwnerValue(InvalidOwner::Malformed { expected: "a namespace name, without '/'" }))))]
fn scope_for_each_kinded_shape(
    #[case] settings: Value,
    #[case] kind: &str,
    #[case] namespace: &str,
    #[case] marks: Side,
    #[case] expected: Expect,
) {
    expected.check(&evaluate(
        &Request::create(kind, namespace, marks).json(),
        &settings,
    ));
}

/// Adoption is judged like a CREATE: the new owner must be valid and in scope.
#[test]
fn adoption_checks_the_new_owner() {
    let request = Request::update(CONFIG_MAP, "team-b", NONE, TEAM_A_ARGOCD);
    Denied(&[r#"label appID: namespace scope from none to "Extension.team-a.argocd""#])
        .check(&evaluate(&request.json(), &app_id_shape()));
}

/// An owner that predates the policy, even an invalid one, is not re-judged while unchanged.
#[rstest]
#[case::legacy(&[(APP_ID_KEY, "legacy-installer")])]
#[case::out_of_scope(TEAM_A_ARGOCD)]
fn unchanged_owners_are_not_rejudged(#[case] owner: Pairs) {
    let request = Request::update(CRD, "", owner, owner);
    Allowed.check(&evaluate(&request.json(), &app_id_shape()));
}

/// Each owner mark is guarded on its own, and every violation is reported, one a line.
#[test]
fn every_entry_is_guarded_and_reported() {
    let both = json!({"ownerMarks": [
        {"label": APP_ID_KEY, "clusterKinds": ["ClusterExtension"]},
        {"label": CAMEL}]});
    let old = [(APP_ID_KEY, "ClusterExtension.a"), (CAMEL, "operator-1")];
    let new = [(APP_ID_KEY, "ClusterExtension.b"), (CAMEL, "operator-2")];
    let response = evaluate(
        &Request::update(INTEGRATION, "camel", &old, &new).json(),
        &both,
    );
    Denied(&[
        r#"label appID: owner change from "ClusterExtension.a" to "ClusterExtension.b""#,
        r#"label camel.apache.org/operator.id: owner change from "operator-1" to "operator-2""#,
    ])
    .check(&response);
    let message = response["message"].as_str().unwrap();
    for line in message.lines() {
        assert!(line.contains("; to hand it over"), "{line}");
    }
}

const GUESTBOOK: Pairs = &[(TRACKING, "guestbook:apps/Deployment:shop/x")];
const WEB_AND_GUESTBOOK: Pairs = &[
    (HELM_NAME, "web"),
    (HELM_NAMESPACE, "shop"),
    (TRACKING, "guestbook:apps/Deployment:shop/x"),
];
/// What Argo CD and the Helm CLI write on a Deployment `shop/x`.
const TRACKED_BY_GUESTBOOK: Side = Side::annotated(GUESTBOOK);
const TRACKED_AND_RELEASED: Side = Side::annotated(WEB_AND_GUESTBOOK);

/// One owner across marks: a mark is not set beside another mark (not linked to it by
/// `sameOwnerAs`) that names a valid owner which stays, or which comes first in `ownerMarks`
/// and is set in the same request. Marks that predate the policy are not re-judged; a value
/// that names no owner, or a tracking id copied from another object, is no owner.
#[rstest]
// examples/argo-cd: the tracking id first, then the Helm release
#[case::app_syncs_a_release_object(argo_cd_shape(), Request::update(DEPLOYMENT, "shop", RELEASE_WEB, TRACKED_AND_RELEASED),
    DeniedBecause(&[r#"annotation argocd.argoproj.io/tracking-id: one owner from none to "guestbook""#],
        |r| matches!(r, Reason::SecondOwner { under, .. } if under.key == "meta.helm.sh/release-name")))]
#[case::release_installs_an_app_object(argo_cd_shape(), Request::update(DEPLOYMENT, "shop", TRACKED_BY_GUESTBOOK, TRACKED_AND_RELEASED),
    DeniedBecause(&[r#"annotation meta.helm.sh/release-name: one owner from none to "shop/web""#],
        |r| matches!(r, Reason::SecondOwner { under, .. } if under.key == "argocd.argoproj.io/tracking-id")))]
// both set at once: the mark listed first keeps the object
#[case::both_created(argo_cd_shape(), Request::create(DEPLOYMENT, "shop", TRACKED_AND_RELEASED),
    Denied(&[r#"annotation meta.helm.sh/release-name: one owner from none to "shop/web""#]))]
#[case::both_kept(
    argo_cd_shape(),
    Request::update(DEPLOYMENT, "shop", TRACKED_AND_RELEASED, TRACKED_AND_RELEASED),
    Allowed
)]
#[case::release_removed_beside_the_app(
    argo_cd_shape(),
    Request::update(DEPLOYMENT, "shop", TRACKED_AND_RELEASED, TRACKED_BY_GUESTBOOK),
    Allowed
)]
// the owner's value and scope are judged first
#[case::malformed_id_beside_a_release(argo_cd_shape(),
    Request::update(DEPLOYMENT, "shop", RELEASE_WEB, Side::annotated(&[(HELM_NAME, "web"), (HELM_NAMESPACE, "shop"), (TRACKING, "guestbook")])),
    Denied(&[r#"annotation argocd.argoproj.io/tracking-id: owner value from none to "guestbook""#]))]
#[case::adoption_denied_first(deny_both(argo_cd_shape()), Request::update(DEPLOYMENT, "shop", RELEASE_WEB, TRACKED_AND_RELEASED),
    Denied(&[r#"annotation argocd.argoproj.io/tracking-id: adoption from none to "guestbook""#]))]
// what names no owner is no second owner
#[case::copied_id_beside_a_release(
    argo_cd_shape(),
    Request::update(POD, "shop", RELEASE_WEB, TRACKED_AND_RELEASED),
    Allowed
)]
#[case::app_beside_half_a_release(argo_cd_shape(),
    Request::update(DEPLOYMENT, "shop", Side::annotated(&[(HELM_NAME, "web")]),
        Side::annotated(&[(HELM_NAME, "web"), (TRACKING, "guestbook:apps/Deployment:shop/x")])),
    Allowed)]
// a mark's key in the other place is no mark
#[case::tracking_label_beside_a_release(argo_cd_shape(),
    Request::update(DEPLOYMENT, "shop", RELEASE_WEB, Side { labels: GUESTBOOK, ..RELEASE_WEB }), Allowed)]
// examples/flux: helm-controller's labels name the owner Helm's annotations name
#[case::linked_marks_created(flux_shape(), Request::create(DEPLOYMENT, "shop",
    Side { labels: &[(FLUX_NAME, "web"), (FLUX_NAMESPACE, "shop")], ..RELEASE_WEB }), Allowed)]
#[case::linked_mark_added(flux_shape(), Request::update(DEPLOYMENT, "shop", RELEASE_WEB,
    Side { labels: &[(FLUX_NAME, "web"), (FLUX_NAMESPACE, "shop")], ..RELEASE_WEB }), Allowed)]
#[case::unlinked_annotation_added(flux_shape(), Request::update(DEPLOYMENT, "shop", RELEASE_WEB,
    Side::annotated(&[(HELM_NAME, "web"), (HELM_NAMESPACE, "shop"), (CAMEL, "operator-1")])),
    DeniedBecause(&[r#"annotation camel.apache.org/operator.id: one owner from none to "operator-1""#],
        |r| matches!(r, Reason::SecondOwner { under, .. } if under.key == "meta.helm.sh/release-name")))]
#[case::release_added_beside_a_camel_k_operator(flux_shape(), Request::update(DEPLOYMENT, "shop", ANNOTATED_OP_1,
    Side::annotated(&[(HELM_NAME, "web"), (HELM_NAMESPACE, "shop"), (CAMEL, "operator-1")])),
    Denied(&[r#"annotation meta.helm.sh/release-name: one owner from none to "shop/web""#]))]
// across kinds of marks: a label beside an annotation
#[case::label_beside_an_annotation(merged(app_id_shape(), &json!({"ownerMarks": [
        {"label": APP_ID_KEY, "clusterKinds": ["ClusterExtension"]}, {"annotation": CAMEL}]})),
    Request::update(INTEGRATION, "shop", Side { labels: &[(APP_ID_KEY, "ClusterExtension.a")], ..UNMARKED },
        Side { labels: &[(APP_ID_KEY, "ClusterExtension.a")], ..ANNOTATED_OP_1 }),
    Denied(&[r#"annotation camel.apache.org/operator.id: one owner from none to "operator-1""#]))]
fn an_object_has_one_owner_across_marks(
    #[case] settings: Value,
    #[case] request: Request,
    #[case] expected: Expect,
) {
    expected.check(&evaluate(&request.json(), &settings));
}

/// An audit replay reports a second owner as the one-owner rule it breaks.
#[test]
fn an_audit_replay_reports_a_second_owner() {
    let mut replay = Request::create(DEPLOYMENT, "shop", TRACKED_AND_RELEASED).json();
    replay["userInfo"] = json!({});
    DeniedBecause(
        &[r#"annotation meta.helm.sh/release-name: one owner owned by "shop/web""#],
        |r| matches!(r, Reason::SecondOwner { under, .. } if under.key == TRACKING),
    )
    .check(&evaluate(&replay, &argo_cd_shape()));
    let mut linked = Request::create(
        DEPLOYMENT,
        "shop",
        Side {
            labels: &[(FLUX_NAME, "web"), (FLUX_NAMESPACE, "shop")],
            ..RELEASE_WEB
        },
    )
    .json();
    linked["userInfo"] = json!({});
    assert_eq!(verdict(&evaluate(&linked, &flux_shape())), "allowed");
}

fn writers() -> Value {
    json!({"identities": [{"owners": ["ClusterExtension.a"], "users": ["installer-a"]}],
        "writes": "Owner"})
}

const A: Pairs = &[(APP_ID_KEY, "ClusterExtension.a")];
const B: Pairs = &[(APP_ID_KEY, "ClusterExtension.b")];
const TEAM_A_X: Pairs = &[(APP_ID_KEY, "Extension.team-a.x")];

/// A subresource UPDATE that changes owner marks is judged as an update of the object itself,
/// naming the subresource; one that keeps them, or whose body is a `Scale`, is accepted.
#[rstest]
#[case::status_keeping_the_owner(writers(), "status", POD, "team-b", A, A, Allowed)]
#[case::status_changing_other_labels(deny_both(app_id_shape()), "status", POD, "team-b", A,
    &[(APP_ID_KEY, "ClusterExtension.a"), ("app", "web")], Allowed)]
#[case::status_changing_the_owner(app_id_shape(), "status", POD, "team-b", A, B,
    Denied(&[r#"label appID: owner change from "ClusterExtension.a" to "ClusterExtension.b""#]))]
#[case::status_orphaning(deny_both(app_id_shape()), "status", POD, "team-b", A, NONE,
    Denied(&[r#"label appID: orphaning from "ClusterExtension.a" to none"#]))]
#[case::status_removing_an_owner_not_acted_for(writers(), "status", POD, "team-b", A, NONE,
    Denied(&[r#"label appID: identity from "ClusterExtension.a" to none"#]))]
#[case::status_adopting_out_of_namespace(app_id_shape(), "status", POD, "team-b", NONE, TEAM_A_X,
    Denied(&[r#"label appID: namespace scope from none to "Extension.team-a.x""#]))]
#[case::status_of_a_namespace_adopting_a_namespaced_owner(app_id_shape(), "status", NAMESPACE, "", NONE, TEAM_A_X,
    Denied(&[r#"label appID: cluster scope from none to "Extension.team-a.x""#]))]
#[case::finalize_changing_the_owner(app_id_shape(), "finalize", NAMESPACE, "", A, B,
    Denied(&[r#"label appID: owner change from "ClusterExtension.a" to "ClusterExtension.b""#]))]
#[case::scale(writers(), "scale", SCALE, "team-b", NONE, B, Allowed)]
fn subresource_updates_are_judged_on_what_they_change(
    #[case] settings: Value,
    #[case] subresource: &str,
    #[case] kind: &str,
    #[case] namespace: &str,
    #[case] old: Pairs,
    #[case] new: Pairs,
    #[case] expected: Expect,
) {
    let mut request = Request::update(kind, namespace, old, new).subresource(subresource);
    if kind == SCALE {
        request = request.resource("apps", "deployments");
    }
    let evaluated = evaluate(&request.json(), &settings);
    expected.check(&evaluated);
    let written = |violations: &[Violation]| {
        (violations.iter()).all(|violation| violation.subject.object.subresource == subresource)
    };
    assert!(evaluated.violations(written), "{evaluated}");
}

fn olm_cluster_only() -> Value {
    json!({"ownerMarks": [{"label": OLM_NAME, "kindKey": OLM_KIND,
        "clusterKinds": ["ClusterExtension"]}]})
}

/// Whole AdmissionRequests of real kinds, under the settings of each setup.
#[rstest]
#[case::crd_create_cluster_owner("crd-create-cluster-owner", app_id_shape(), Allowed)]
#[case::crd_create_namespaced_owner("crd-create-namespaced-owner", app_id_shape(),
    Denied(&[r#"label appID: cluster scope from none to "Extension.team-a.argocd""#]))]
#[case::crd_create_unknown_kind("crd-create-unknown-kind", app_id_shape(),
    Denied(&[r#"label appID: owner value from none to "Operator.argocd""#]))]
#[case::crd_update_owner_change("crd-update-owner-change", app_id_shape(),
    Denied(&[r#"label appID: owner change from "ClusterExtension.first" to "ClusterExtension.second""#]))]
#[case::crd_update_adoption("crd-update-adoption", app_id_shape(), Allowed)]
#[case::crd_update_adoption_denied("crd-update-adoption", deny_both(app_id_shape()),
    Denied(&[r#"label appID: adoption from none to "ClusterExtension.first""#]))]
#[case::crd_update_orphaning("crd-update-orphaning", app_id_shape(), Allowed)]
#[case::crd_update_orphaning_denied("crd-update-orphaning", deny_both(app_id_shape()),
    Denied(&[r#"label appID: orphaning from "ClusterExtension.first" to none"#]))]
// a status write that keeps the owner marks, and DELETE without `writes: Owner`, are not judged
#[case::crd_update_status("crd-update-status", deny_both(app_id_shape()), Allowed)]
#[case::pod_status_update_by_kubelet(
    "pod-status-update-by-kubelet",
    deny_both(app_id_shape()),
    Allowed
)]
#[case::namespace_status_update("namespace-status-update", deny_both(app_id_shape()), Allowed)]
#[case::deployment_scale_update("deployment-scale-update", deny_both(app_id_shape()), Allowed)]
#[case::crd_delete("crd-delete", deny_both(app_id_shape()), Allowed)]
#[case::job_update_legacy_owner("job-update-legacy-owner", app_id_shape(), Allowed)]
#[case::configmap_create_own_namespace("configmap-create-own-namespace", app_id_shape(), Allowed)]
#[case::configmap_create_other_namespace("configmap-create-other-namespace", app_id_shape(),
    Denied(&[r#"label appID: namespace scope from none to "Extension.team-a.argocd""#]))]
#[case::namespace_create_cluster_owner("namespace-create-cluster-owner", app_id_shape(), Allowed)]
#[case::namespace_create_namespaced_owner("namespace-create-namespaced-owner", app_id_shape(),
    Denied(&[r#"label appID: cluster scope from none to "Extension.team-a.argocd""#]))]
#[case::deployment_create_olm_owner("deployment-create-olm-owner", olm_cluster_only(), Allowed)]
#[case::deployment_update_olm_owner_change("deployment-update-olm-owner-change", olm_cluster_only(),
    Denied(&[r#"label olm.operatorframework.io/owner-name: owner change from "ClusterExtension.argocd" to "ClusterExtension.argocd-v2""#]))]
#[case::deployment_update_olm_half_pair("deployment-update-olm-half-pair", olm_cluster_only(),
    Denied(&[r#"label olm.operatorframework.io/owner-name: owner value from "ClusterExtension.argocd" to name "argocd" without a kind"#]))]
#[case::integration_update_operator_change("integration-update-operator-change", opaque_label_shape(),
    Denied(&[r#"label camel.apache.org/operator.id: owner change from "operator-1" to "operator-2""#]))]
#[case::integration_update_orphaning("integration-update-orphaning", opaque_label_shape(), Allowed)]
// marks the settings do not name change nothing: another label, an annotation of the key
#[case::integration_update_operator_change_under_camel_k_annotation(
    "integration-update-operator-change",
    camel_k_shape(),
    Allowed
)]
#[case::integration_update_operator_change_under_app_id(
    "integration-update-operator-change",
    app_id_shape(),
    Allowed
)]
fn sample_requests(#[case] name: &str, #[case] settings: Value, #[case] expected: Expect) {
    expected.check(&evaluate(&fixture(name), &settings));
}

/// Exempt users and groups are let through, with a warning and an audit annotation.
#[rstest]
#[case::exempt_user(json!({"users": ["system:serviceaccount:kube-system:helm-hooks"]}),
    Some("exempt user system:serviceaccount:kube-system:helm-hooks"))]
#[case::exempt_group(json!({"groups": ["cluster-admins", "system:serviceaccounts"]}),
    Some("user system:serviceaccount:kube-system:helm-hooks of exempt group system:serviceaccounts"))]
#[case::not_exempt(json!({"users": ["alice"], "groups": ["cluster-admins"]}), None)]
fn exemptions_bypass_with_warning_and_audit_annotation(
    #[case] exemptions: Value,
    #[case] exempt: Option<&str>,
) {
    const DENIAL: &[&str] = &[
        r#"label appID: owner change from "ClusterExtension.first" to "ClusterExtension.second""#,
    ];
    let response = evaluate(
        &fixture("crd-update-owner-change"),
        &json!({"exemptions": exemptions}),
    );
    let Some(who) = exempt else {
        Denied(DENIAL).check(&response);
        assert_eq!(response["warnings"], Value::Null);
        return;
    };
    Allowed.check(&response);
    let warnings = response["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{response}");
    let warning = warnings[0].as_str().unwrap();
    assert!(
        warning.starts_with(&format!("{who} bypassed: ")),
        "{warning}"
    );
    assert_eq!(response.summaries(), DENIAL);
    assert_eq!(
        response["audit_annotations"],
        json!({EXEMPTION_ANNOTATION: warning})
    );
}

/// A request the policy cannot read is rejected with code 400 and says what is wrong.
#[rstest]
#[case::empty(
    b"",
    "cannot read the admission request: EOF while parsing a value at line 1 column 0"
)]
#[case::request_not_an_object(
    b"{\"request\": 1}",
    "cannot read the admission request: request: invalid type: integer `1`, expected struct AdmissionRequest at line 1 column 13"
)]
#[case::update_without_old_object(
    br#"{"request": {"kind": {"kind": "ConfigMap"}, "operation": "UPDATE", "object": {}}}"#,
    "cannot read the admission request: an UPDATE request needs `object` and `oldObject`"
)]
#[case::create_without_object(
    br#"{"request": {"kind": {"kind": "ConfigMap"}, "operation": "CREATE"}}"#,
    "cannot read the admission request: a CREATE request needs `object`"
)]
#[case::null_label(
    br#"{"request": {"kind": {"kind": "ConfigMap"}, "operation": "CREATE",
              "object": {"metadata": {"labels": {"appID": null}}}}}"#,
    "cannot read the admission request: request.object.metadata.labels.appID: invalid type: null, expected a string at line 2 column 62"
)]
// an annotation mark is read as a string; other annotations are not read
#[case::annotation_mark_not_a_string(
    br#"{"request": {"kind": {"kind": "ConfigMap"}, "operation": "CREATE",
              "object": {"metadata": {"annotations": {"camel.apache.org/operator.id": 5}}}},
         "settings": {"ownerMarks": [{"annotation": "camel.apache.org/operator.id"}]}}"#,
    "cannot read the admission request: object.metadata.annotations.camel.apache.org/operator.id: invalid type: integer `5`, expected a string at line 1 column 1"
)]
#[case::companion_annotation_not_a_string(
    br#"{"request": {"kind": {"kind": "ConfigMap"}, "operation": "UPDATE",
              "oldObject": {"metadata": {"annotations": {"meta.helm.sh/release-namespace": ["shop"]}}},
              "object": {"metadata": {}}},
         "settings": {"ownerMarks": [{"annotation": "meta.helm.sh/release-name", "namespaceKey": "meta.helm.sh/release-namespace"}]}}"#,
    "cannot read the admission request: oldObject.metadata.annotations.meta.helm.sh/release-namespace: invalid type: sequence, expected a string at line 1 column 0"
)]
fn malformed_requests_are_rejected_with_a_reason(#[case] payload: &[u8], #[case] expected: &str) {
    let response = policy::validate(payload);
    assert!(!response.accepted);
    assert_eq!(response.code, Some(400));
    assert_eq!(response.message.as_deref(), Some(expected));
}
