//! Requester identity: who may set, remove, keep and delete which owner, and stamping the owner
//! mark, a label or an annotation.

mod common;

use rstest::rstest;
use serde_json::{Value, json};

use common::Expect::{self, Allowed, Denied};
use common::{
    ADMIN, APP_ID_KEY, CAMEL, CONFIG_MAP, CRD, DEPLOYMENT, HELM_NAME, HELM_NAMESPACE, INTEGRATION,
    JOB, POD, Pairs, Request, Side, TRACKING, argo_cd_shape, camel_k_shape, evaluate, flux_shape,
    helm_shape, merged, olm_shape, verdict,
};

const CERT_MANAGER: &str = "system:serviceaccount:operators:cert-manager-installer";
const PROMETHEUS: &str = "system:serviceaccount:operators:prometheus-installer";
const OLM: &str = "system:serviceaccount:olmv1-system:operator-controller-controller-manager";
const TEAM_A: &str = "system:serviceaccount:team-a:installer";
const TEAM_B: &str = "system:serviceaccount:team-b:installer";
const ARGOCD: &str = "system:serviceaccount:team-a:argocd-installer";
const OWNED_BY_CM: Pairs = &[(APP_ID_KEY, "ClusterExtension.cert-manager")];
const OWNED_BY_PROM: Pairs = &[(APP_ID_KEY, "ClusterExtension.prometheus")];
const OWNED_BY_TEAM_A_ARGOCD: Pairs = &[(APP_ID_KEY, "Extension.team-a.argocd")];
const NO_LABELS: Pairs = &[];

/// The identities of the default appID shape: one installer per ClusterExtension, OLM's single
/// controller for all of them, and any `installer` service account for Extensions of its own
/// namespace; `extra` set over them.
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

/// Who may set, remove, keep and delete an owner, under `writes`. Stamping is on, and stamps
/// none of these: each CREATE either carries its owner or comes from a requester acting for none.
#[rstest]
// The two-step takeover: neither the release nor the adoption of a foreign owner is allowed.
#[case::foreign_release("Any", Request::update(CRD, "", OWNED_BY_CM, NO_LABELS).by(PROMETHEUS),
    Denied(&[r#"label appID: identity from "ClusterExtension.cert-manager" to none"#]))]
#[case::foreign_adoption("Any", Request::update(CRD, "", NO_LABELS, OWNED_BY_CM).by(PROMETHEUS),
    Denied(&[r#"label appID: identity from none to "ClusterExtension.cert-manager""#]))]
// An owner releases and adopts what is its own.
#[case::own_release("Any", Request::update(CRD, "", OWNED_BY_CM, NO_LABELS).by(CERT_MANAGER), Allowed)]
#[case::own_adoption("Any", Request::update(CRD, "", NO_LABELS, OWNED_BY_CM).by(CERT_MANAGER), Allowed)]
// Creating with an owner mark needs acting for it; a person bound to nothing acts for none.
#[case::create_for_itself("Any", Request::create(CRD, "", OWNED_BY_CM).by(CERT_MANAGER), Allowed)]
#[case::create_for_another("Any", Request::create(CRD, "", OWNED_BY_PROM).by(CERT_MANAGER),
    Denied(&[r#"label appID: identity from none to "ClusterExtension.prometheus""#]))]
#[case::create_by_a_person_for_an_owner("Any", Request::create(CRD, "", OWNED_BY_CM).by(ADMIN),
    Denied(&[r#"label appID: identity from none to "ClusterExtension.cert-manager""#]))]
#[case::create_by_a_person_unowned("Any", Request::create(CRD, "", NO_LABELS).by(ADMIN), Allowed)]
// OLM v1's single controller acts for every ClusterExtension, and for nothing else.
#[case::olm_creates_for_a_cluster_extension("Any", Request::create(CRD, "", OWNED_BY_PROM).by(OLM), Allowed)]
#[case::olm_creates_for_an_extension("Any",
    Request::create(CONFIG_MAP, "team-a", OWNED_BY_TEAM_A_ARGOCD).by(OLM),
    Denied(&[r#"label appID: identity from none to "Extension.team-a.argocd""#]))]
// Templated bindings: any `installer` service account acts for Extensions of its namespace.
#[case::installer_in_its_namespace("Any",
    Request::create(CONFIG_MAP, "team-a", OWNED_BY_TEAM_A_ARGOCD).by(TEAM_A), Allowed)]
#[case::installer_of_another_namespace("Any",
    Request::create(CONFIG_MAP, "team-a", OWNED_BY_TEAM_A_ARGOCD).by(TEAM_B),
    Denied(&[r#"label appID: identity from none to "Extension.team-a.argocd""#]))]
// Scope is judged before identity.
#[case::scope_before_identity("Any", Request::create(CRD, "", OWNED_BY_TEAM_A_ARGOCD).by(TEAM_A),
    Denied(&[r#"label appID: cluster scope from none to "Extension.team-a.argocd""#]))]
// writes: Any keeps label-only guarding: a hook of another install may patch the object.
#[case::any_writes_foreign_update("Any", Request::update(CRD, "", OWNED_BY_CM, OWNED_BY_CM).by(PROMETHEUS), Allowed)]
#[case::any_writes_foreign_delete("Any", Request::delete(CRD, "", OWNED_BY_CM).by(PROMETHEUS), Allowed)]
// writes: Owner: only the owner's requesters update or delete what it owns.
#[case::owner_writes_foreign_update("Owner",
    Request::update(CRD, "", OWNED_BY_CM, OWNED_BY_CM).by(PROMETHEUS),
    Denied(&[r#"label appID: owner writes owned by "ClusterExtension.cert-manager""#]))]
#[case::owner_writes_foreign_delete("Owner", Request::delete(CRD, "", OWNED_BY_CM).by(PROMETHEUS),
    Denied(&[r#"label appID: owner writes owned by "ClusterExtension.cert-manager""#]))]
#[case::owner_writes_delete_by_a_person("Owner", Request::delete(JOB, "", OWNED_BY_CM).by(ADMIN),
    Denied(&[r#"label appID: owner writes owned by "ClusterExtension.cert-manager""#]))]
#[case::owner_writes_own_update("Owner", Request::update(CRD, "", OWNED_BY_CM, OWNED_BY_CM).by(CERT_MANAGER), Allowed)]
#[case::owner_writes_own_delete("Owner", Request::delete(CRD, "", OWNED_BY_CM).by(CERT_MANAGER), Allowed)]
#[case::owner_writes_delete_by_olm("Owner", Request::delete(CRD, "", OWNED_BY_CM).by(OLM), Allowed)]
#[case::owner_writes_unowned_delete("Owner", Request::delete(CRD, "", NO_LABELS).by(PROMETHEUS), Allowed)]
#[case::owner_writes_unowned_update("Owner", Request::update(CRD, "", NO_LABELS, NO_LABELS).by(PROMETHEUS), Allowed)]
fn who_may_set_remove_keep_and_delete_an_owner(
    #[case] writes: &str,
    #[case] request: Request,
    #[case] expected: Expect,
) {
    let response = evaluate(
        &request.json(),
        &settings(json!({"writes": writes, "stamp": true})),
    );
    expected.check(&response);
    assert_eq!(response["mutated_object"], Value::Null);
}

const FIRST_OPERATOR: &str = "system:serviceaccount:camel-k:camel-k-operator";
/// Camel K's operator id, the annotation Camel K writes.
const OP_1: Side = Side::annotated(&[(CAMEL, "operator-1")]);
const OP_2: Side = Side::annotated(&[(CAMEL, "operator-2")]);
const UNMARKED: Side = Side::annotated(&[]);

#[rstest]
#[case::create_for_its_own_id(Request::create(INTEGRATION, "shop", OP_1).by(FIRST_OPERATOR), Allowed)]
#[case::create_for_another_id(Request::create(INTEGRATION, "shop", OP_2).by(FIRST_OPERATOR),
    Denied(&[r#"annotation camel.apache.org/operator.id: identity from none to "operator-2""#]))]
#[case::release_by_a_person(Request::update(INTEGRATION, "shop", OP_1, UNMARKED).by(ADMIN),
    Denied(&[r#"annotation camel.apache.org/operator.id: identity from "operator-1" to none"#]))]
#[case::release_of_its_own_id(Request::update(INTEGRATION, "shop", OP_1, UNMARKED).by(FIRST_OPERATOR), Allowed)]
// the label of the annotation's key is no mark: whoever writes it, it names no one
#[case::label_of_another_id(Request::create(INTEGRATION, "shop", &[(CAMEL, "operator-2")]).by(FIRST_OPERATOR), Allowed)]
fn camel_k_operators_act_for_their_own_operator_id(
    #[case] request: Request,
    #[case] expected: Expect,
) {
    let settings = merged(
        camel_k_shape(),
        &json!({"identities": [
            {"owners": ["operator-1"], "users": [FIRST_OPERATOR]},
            {"owners": ["operator-2"], "users": ["system:serviceaccount:camel-k-next:camel-k-operator"]},
        ]}),
    );
    expected.check(&evaluate(&request.json(), &settings));
}

const SHOP_RECONCILER: &str = "system:serviceaccount:shop:flux-reconciler";
const WEB: Side = Side::annotated(&[(HELM_NAME, "web"), (HELM_NAMESPACE, "shop")]);
const TEAM_A_WEB: Side = Side::annotated(&[(HELM_NAME, "web"), (HELM_NAMESPACE, "team-a")]);
const HALF_WEB: Side = Side::annotated(&[(HELM_NAME, "web")]);

/// `<namespace>/<name>` owners: a tenant's service account acts for the releases of its
/// namespace (`${namespace}/*`, examples/flux), on objects anywhere: no scope rule applies.
#[rstest]
#[case::release_of_its_namespace(Request::create(CONFIG_MAP, "team-b", WEB).by(SHOP_RECONCILER), Allowed)]
#[case::release_of_another_namespace(Request::create(CONFIG_MAP, "shop", TEAM_A_WEB).by(SHOP_RECONCILER),
    Denied(&[r#"annotation meta.helm.sh/release-name: identity from none to "team-a/web""#]))]
#[case::release_removed_by_a_person(Request::update(DEPLOYMENT, "shop", WEB, UNMARKED).by(ADMIN),
    Denied(&[r#"annotation meta.helm.sh/release-name: identity from "shop/web" to none"#]))]
#[case::release_removed_by_its_reconciler(Request::update(DEPLOYMENT, "shop", WEB, UNMARKED).by(SHOP_RECONCILER), Allowed)]
// half a pair names no owner: it is judged as a value, and nobody's to remove
#[case::half_a_release_created(Request::create(DEPLOYMENT, "shop", HALF_WEB).by(SHOP_RECONCILER),
    Denied(&[r#"annotation meta.helm.sh/release-name: owner value from none to name "web" without a namespace"#]))]
#[case::half_a_release_removed_by_a_person(Request::update(DEPLOYMENT, "shop", HALF_WEB, UNMARKED).by(ADMIN), Allowed)]
// writes: Owner keeps a release's objects to its reconciler
#[case::release_object_updated_by_a_person(Request::update(DEPLOYMENT, "shop", WEB, WEB).by(ADMIN),
    Denied(&[r#"annotation meta.helm.sh/release-name: owner writes owned by "shop/web""#]))]
#[case::release_object_deleted_by_its_reconciler(Request::delete(DEPLOYMENT, "shop", WEB).by(SHOP_RECONCILER), Allowed)]
fn tenants_act_for_the_releases_of_their_namespace(
    #[case] request: Request,
    #[case] expected: Expect,
) {
    let settings = merged(
        flux_shape(),
        &json!({"identities": [
            {"owners": ["${namespace}/*"], "users": ["system:serviceaccount:*:flux-reconciler"]},
            {"owners": ["operator-1"], "users": [FIRST_OPERATOR]},
        ], "writes": "Owner"}),
    );
    expected.check(&evaluate(&request.json(), &settings));
}

#[test]
fn exemptions_still_override_identity_rules() {
    let request = Request::update(CRD, "", OWNED_BY_CM, NO_LABELS).by("break-glass");
    let response = evaluate(&request.json(), &settings(json!({"writes": "Owner"})));
    assert_eq!(verdict(&response), "allowed");
    let warning = response["warnings"][0].as_str().unwrap();
    assert!(
        warning.starts_with("exempt user break-glass bypassed: "),
        "{warning}"
    );
    assert_eq!(
        response.summaries(),
        [r#"label appID: identity from "ClusterExtension.cert-manager" to none"#]
    );
    assert_eq!(
        response["audit_annotations"]["single-owner-policy-exemption"],
        warning
    );
}

/// A service account bound to `ClusterExtension.${name}` through its group.
const OLMV1_ARGOCD: &str = "system:serviceaccount:olmv1:argocd";
const OLMV1_ARGOCD_GROUPS: &[&str] = &[
    "system:serviceaccounts",
    "system:serviceaccounts:olmv1",
    "olmv1-installers",
    "system:authenticated",
];

/// Identities of the marks below the default appID label's: a Camel K operator, a Helm
/// release's reconciler.
fn mark_identities() -> Value {
    json!({"identities": [
        {"owners": ["operator-1"], "users": [FIRST_OPERATOR]},
        {"owners": ["shop/web"], "users": [SHOP_RECONCILER]},
    ]})
}

/// A CREATE by a requester acting for one owner is stamped with it (`stamped`: the labels or
/// annotations it gets), into the first mark that reads the owner as a valid owner in scope —
/// never an Argo CD tracking id, which names the object too — unless the object carries an
/// owner mark already.
#[rstest]
// stamped, in the shape of the owner mark
#[case::app_id(json!({}), Request::create(CRD, "", NO_LABELS).by(CERT_MANAGER),
    Some(json!({"labels": {"appID": "ClusterExtension.cert-manager"}})))]
#[case::olm_pair(olm_shape(), Request::create(CRD, "", NO_LABELS).by(CERT_MANAGER),
    Some(json!({"labels": {"olm.operatorframework.io/owner-name": "cert-manager",
        "olm.operatorframework.io/owner-kind": "ClusterExtension"}})))]
// a templated binding that names one concrete owner
#[case::templated_binding(json!({}),
    Request::create(CRD, "", NO_LABELS).by(OLMV1_ARGOCD).in_groups(OLMV1_ARGOCD_GROUPS),
    Some(json!({"labels": {"appID": "ClusterExtension.argocd"}})))]
// stamped as annotations, where the mark is one
#[case::camel_k_annotation(merged(camel_k_shape(), &mark_identities()),
    Request::create(INTEGRATION, "shop", NO_LABELS).by(FIRST_OPERATOR),
    Some(json!({"annotations": {"camel.apache.org/operator.id": "operator-1"}})))]
#[case::helm_pair(merged(helm_shape(), &json!({"identities": [
        {"owners": ["shop/web"], "users": [SHOP_RECONCILER]}]})),
    Request::create(DEPLOYMENT, "shop", NO_LABELS).by(SHOP_RECONCILER),
    Some(json!({"annotations": {"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "shop"}})))]
// the first mark that reads the owner: Helm's pair, not Flux's labels before it
#[case::helm_pair_after_flux_labels(merged(flux_shape(), &mark_identities()),
    Request::create(DEPLOYMENT, "shop", NO_LABELS).by(SHOP_RECONCILER),
    Some(json!({"labels": {"helm.toolkit.fluxcd.io/name": "web", "helm.toolkit.fluxcd.io/namespace": "shop"}})))]
#[case::camel_k_after_helm(merged(flux_shape(), &mark_identities()),
    Request::create(INTEGRATION, "shop", NO_LABELS).by(FIRST_OPERATOR),
    Some(json!({"annotations": {"camel.apache.org/operator.id": "operator-1"}})))]
// never a tracking id: the release's pair after it
#[case::not_a_tracking_id(merged(argo_cd_shape(), &mark_identities()),
    Request::create(DEPLOYMENT, "shop", NO_LABELS).by(SHOP_RECONCILER),
    Some(json!({"annotations": {"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "shop"}})))]
// a tracking id copied from another object names no owner: the object carries none
#[case::beside_a_copied_tracking_id(merged(argo_cd_shape(), &mark_identities()),
    Request::create(POD, "shop", Side::annotated(&[(TRACKING, "guestbook:apps/Deployment:shop/x")])).by(SHOP_RECONCILER),
    Some(json!({"annotations": {"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "shop"}})))]
// not stamped: already labelled, an UPDATE, a wildcard-only requester, nobody's requester
#[case::already_labelled(json!({}), Request::create(CRD, "", OWNED_BY_CM).by(CERT_MANAGER), None)]
#[case::update(json!({}), Request::update(CRD, "", NO_LABELS, NO_LABELS).by(CERT_MANAGER), None)]
#[case::wildcard_only_requester(json!({}), Request::create(CRD, "", NO_LABELS).by(OLM), None)]
#[case::templated_wildcard_requester(json!({}),
    Request::create(CONFIG_MAP, "team-a", NO_LABELS).by(TEAM_A), None)]
#[case::nobodys_requester(json!({}), Request::create(CRD, "", NO_LABELS).by(ADMIN), None)]
// not stamped: the object carries another mark's owner (which it may, when it is the
// requester's own), or only a tracking id reads the owner
#[case::beside_its_own_tracking_id(merged(argo_cd_shape(), &json!({"identities": [
        {"owners": ["guestbook"], "users": [SHOP_RECONCILER]}]})),
    Request::create(DEPLOYMENT, "shop", Side::annotated(&[(TRACKING, "guestbook:apps/Deployment:shop/x")])).by(SHOP_RECONCILER),
    None)]
#[case::only_a_tracking_id_reads_the_owner(merged(argo_cd_shape(), &json!({"identities": [
        {"owners": ["guestbook"], "users": [SHOP_RECONCILER]}]})),
    Request::create(DEPLOYMENT, "shop", NO_LABELS).by(SHOP_RECONCILER), None)]
// a namespaced owner is stamped in its namespace, and not where it is out of scope
#[case::namespaced_owner_in_its_namespace(json!({}),
    Request::create(CONFIG_MAP, "team-a", NO_LABELS).by(ARGOCD),
    Some(json!({"labels": {"appID": "Extension.team-a.argocd"}})))]
#[case::namespaced_owner_out_of_scope(json!({}), Request::create(CRD, "", NO_LABELS).by(ARGOCD), None)]
fn a_create_by_a_requester_acting_for_one_owner_is_stamped(
    #[case] extra: Value,
    #[case] request: Request,
    #[case] stamped: Option<Value>,
) {
    let request = request.json();
    let response = evaluate(&request, &settings(merged(extra, &json!({"stamp": true}))));
    Allowed.check(&response);
    match stamped {
        None => assert_eq!(response["mutated_object"], Value::Null),
        Some(marks) => {
            let mut expected = request["object"].clone();
            for (place, stamped) in marks.as_object().unwrap() {
                for (key, value) in stamped.as_object().unwrap() {
                    expected["metadata"][place][key] = value.clone();
                }
            }
            assert_eq!(response["mutated_object"], expected);
        }
    }
}
