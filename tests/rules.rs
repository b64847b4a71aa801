//! The policy's rules, table by table, through `policy::validate` with whole payloads.

mod common;

use rstest::rstest;
use serde_json::{Value, json};
use single_owner_policy::policy::{self, EXEMPTION_ANNOTATION};

use common::Expect::{self, Allowed, Denied, DeniedSaying};
use common::{
    APP_ID_KEY, CAMEL, CONFIG_MAP, CRD, INTEGRATION, NAMESPACE, OLM_KIND, OLM_NAME, POD, Pairs,
    Request, SCALE, app_id_shape, camel_k_shape, evaluate, merged, olm_shape, summary,
};

const NONE: Pairs = &[];
const FIRST: Pairs = &[(APP_ID_KEY, "ClusterExtension.first")];
const SECOND: Pairs = &[(APP_ID_KEY, "ClusterExtension.second")];
const PAIR_FIRST: Pairs = &[(OLM_KIND, "ClusterExtension"), (OLM_NAME, "first")];
const PAIR_SECOND: Pairs = &[(OLM_KIND, "ClusterExtension"), (OLM_NAME, "second")];
const HALF_FIRST: Pairs = &[(OLM_NAME, "first")];
const OP_1: Pairs = &[(CAMEL, "operator-1")];
const OP_2: Pairs = &[(CAMEL, "operator-2")];

/// `shape` with adoption and orphaning denied.
fn deny_both(shape: Value) -> Value {
    merged(shape, &json!({"adoption": "Deny", "orphaning": "Deny"}))
}

/// An AdmissionRequest from `test_data/`.
fn fixture(name: &str) -> Value {
    let path = format!("{}/test_data/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// The transition table, for each of the three owner shapes. CRDs are cluster-scoped.
#[rstest]
#[case::app_id_unowned(app_id_shape(), NONE, NONE, Allowed)]
#[case::app_id_kept(app_id_shape(), FIRST, FIRST, Allowed)]
#[case::app_id_adopted(app_id_shape(), NONE, FIRST, Allowed)]
#[case::app_id_adoption_denied(deny_both(app_id_shape()), NONE, FIRST,
    Denied(&[r#"appID: adoption from none to "ClusterExtension.first""#]))]
#[case::app_id_orphaned(app_id_shape(), FIRST, NONE, Allowed)]
#[case::app_id_orphaning_denied(deny_both(app_id_shape()), FIRST, NONE,
    Denied(&[r#"appID: orphaning from "ClusterExtension.first" to none"#]))]
#[case::app_id_owner_change(app_id_shape(), FIRST, SECOND,
    DeniedSaying(&[r#"appID: owner change from "ClusterExtension.first" to "ClusterExtension.second""#],
        "by setting the annotation single-owner-policy.io/offer=ClusterExtension.second,"))]
#[case::app_id_kept_under_deny_both(deny_both(app_id_shape()), FIRST, FIRST, Allowed)]
#[case::olm_unowned(olm_shape(), NONE, NONE, Allowed)]
#[case::olm_kept(olm_shape(), PAIR_FIRST, PAIR_FIRST, Allowed)]
#[case::olm_adopted(olm_shape(), NONE, PAIR_FIRST, Allowed)]
#[case::olm_adoption_denied(deny_both(olm_shape()), NONE, PAIR_FIRST,
    Denied(&[r#"olm.operatorframework.io/owner-name: adoption from none to "ClusterExtension.first""#]))]
#[case::olm_orphaned(olm_shape(), PAIR_FIRST, NONE, Allowed)]
#[case::olm_orphaning_denied(deny_both(olm_shape()), PAIR_FIRST, NONE,
    Denied(&[r#"olm.operatorframework.io/owner-name: orphaning from "ClusterExtension.first" to none"#]))]
#[case::olm_owner_change(olm_shape(), PAIR_FIRST, PAIR_SECOND,
    DeniedSaying(&[r#"olm.operatorframework.io/owner-name: owner change from "ClusterExtension.first" to "ClusterExtension.second""#],
        "by setting the annotation single-owner-policy.io/offer=ClusterExtension.second,"))]
#[case::olm_kind_removed(olm_shape(), PAIR_FIRST, HALF_FIRST,
    Denied(&[r#"olm.operatorframework.io/owner-name: owner value from "ClusterExtension.first" to name "first" without a kind"#]))]
#[case::olm_adopted_without_a_kind(olm_shape(), NONE, HALF_FIRST,
    Denied(&[r#"olm.operatorframework.io/owner-name: owner value from none to name "first" without a kind"#]))]
#[case::camel_k_unowned(camel_k_shape(), NONE, NONE, Allowed)]
#[case::camel_k_kept(camel_k_shape(), OP_1, OP_1, Allowed)]
#[case::camel_k_adopted(camel_k_shape(), NONE, OP_1, Allowed)]
#[case::camel_k_adoption_denied(deny_both(camel_k_shape()), NONE, OP_1,
    Denied(&[r#"camel.apache.org/operator.id: adoption from none to "operator-1""#]))]
#[case::camel_k_orphaned(camel_k_shape(), OP_1, NONE, Allowed)]
#[case::camel_k_orphaning_denied(deny_both(camel_k_shape()), OP_1, NONE,
    Denied(&[r#"camel.apache.org/operator.id: orphaning from "operator-1" to none"#]))]
#[case::camel_k_owner_change(camel_k_shape(), OP_1, OP_2,
    DeniedSaying(&[r#"camel.apache.org/operator.id: owner change from "operator-1" to "operator-2""#],
        "by setting the annotation single-owner-policy.io/offer=operator-2,"))]
fn transitions_for_each_owner_shape(
    #[case] settings: Value,
    #[case] old: Pairs,
    #[case] new: Pairs,
    #[case] expected: Expect,
) {
    expected.check(&evaluate(
        &Request::update(CRD, "", old, new).json(),
        &settings,
    ));
}

const CLUSTER_ARGOCD: Pairs = &[(APP_ID_KEY, "ClusterExtension.argocd")];
const TEAM_A_ARGOCD: Pairs = &[(APP_ID_KEY, "Extension.team-a.argocd")];
const PAIR_CLUSTER_ARGOCD: Pairs = &[(OLM_KIND, "ClusterExtension"), (OLM_NAME, "argocd")];
const PAIR_TEAM_A_ARGOCD: Pairs = &[(OLM_KIND, "Extension"), (OLM_NAME, "team-a.argocd")];

/// The scope table, on CREATE, for the two shapes that carry kinds.
#[rstest]
#[case::app_id_cluster_owner_of_a_crd(app_id_shape(), CRD, "", CLUSTER_ARGOCD, Allowed)]
#[case::app_id_namespaced_owner_of_a_crd(app_id_shape(), CRD, "", TEAM_A_ARGOCD,
    Denied(&[r#"appID: cluster scope from none to "Extension.team-a.argocd""#]))]
#[case::app_id_cluster_owner_in_a_namespace(
    app_id_shape(),
    CONFIG_MAP,
    "team-a",
    CLUSTER_ARGOCD,
    Allowed
)]
#[case::app_id_namespaced_owner_in_its_namespace(
    app_id_shape(),
    CONFIG_MAP,
    "team-a",
    TEAM_A_ARGOCD,
    Allowed
)]
#[case::app_id_namespaced_owner_in_another_namespace(app_id_shape(), CONFIG_MAP, "team-b", TEAM_A_ARGOCD,
    Denied(&[r#"appID: namespace scope from none to "Extension.team-a.argocd""#]))]
// a Namespace is cluster-scoped, whatever namespace the request carries
#[case::app_id_namespaced_owner_of_a_namespace(app_id_shape(), NAMESPACE, "team-a", TEAM_A_ARGOCD,
    Denied(&[r#"appID: cluster scope from none to "Extension.team-a.argocd""#]))]
#[case::app_id_cluster_owner_of_a_namespace(
    app_id_shape(),
    NAMESPACE,
    "team-a",
    CLUSTER_ARGOCD,
    Allowed
)]
#[case::app_id_unknown_kind(app_id_shape(), CRD, "", &[(APP_ID_KEY, "Operator.argocd")],
    Denied(&[r#"appID: owner value from none to "Operator.argocd""#]))]
#[case::app_id_empty(app_id_shape(), CRD, "", &[(APP_ID_KEY, "")],
    Denied(&[r#"appID: owner value from none to """#]))]
#[case::olm_cluster_owner_of_a_crd(olm_shape(), CRD, "", PAIR_CLUSTER_ARGOCD, Allowed)]
#[case::olm_namespaced_owner_of_a_crd(olm_shape(), CRD, "", PAIR_TEAM_A_ARGOCD,
    Denied(&[r#"olm.operatorframework.io/owner-name: cluster scope from none to "Extension.team-a.argocd""#]))]
#[case::olm_namespaced_owner_in_its_namespace(
    olm_shape(),
    CONFIG_MAP,
    "team-a",
    PAIR_TEAM_A_ARGOCD,
    Allowed
)]
#[case::olm_namespaced_owner_in_another_namespace(olm_shape(), CONFIG_MAP, "team-b", PAIR_TEAM_A_ARGOCD,
    Denied(&[r#"olm.operatorframework.io/owner-name: namespace scope from none to "Extension.team-a.argocd""#]))]
#[case::olm_kind_without_a_name(olm_shape(), CRD, "", &[(OLM_KIND, "ClusterExtension")],
    Denied(&[r#"olm.operatorframework.io/owner-name: owner value from none to kind "ClusterExtension" without a name"#]))]
// opaque ids: scope rules do not apply
#[case::camel_k_of_a_crd(camel_k_shape(), CRD, "", OP_1, Allowed)]
#[case::camel_k_in_a_namespace(camel_k_shape(), CONFIG_MAP, "team-b", OP_1, Allowed)]
fn scope_for_each_kinded_shape(
    #[case] settings: Value,
    #[case] kind: &str,
    #[case] namespace: &str,
    #[case] labels: Pairs,
    #[case] expected: Expect,
) {
    expected.check(&evaluate(
        &Request::create(kind, namespace, labels).json(),
        &settings,
    ));
}

/// Adoption is judged like a CREATE: the new owner must be valid and in scope.
#[test]
fn adoption_checks_the_new_owner() {
    let request = Request::update(CONFIG_MAP, "team-b", NONE, TEAM_A_ARGOCD);
    Denied(&[r#"appID: namespace scope from none to "Extension.team-a.argocd""#])
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

/// Each owner label entry is guarded on its own, and every violation is reported, one a line.
#[test]
fn every_entry_is_guarded_and_reported() {
    let both = json!({"ownerLabels": [
        {"key": APP_ID_KEY, "clusterKinds": ["ClusterExtension"]},
        {"key": CAMEL}]});
    let old = [(APP_ID_KEY, "ClusterExtension.a"), (CAMEL, "operator-1")];
    let new = [(APP_ID_KEY, "ClusterExtension.b"), (CAMEL, "operator-2")];
    let response = evaluate(
        &Request::update(INTEGRATION, "camel", &old, &new).json(),
        &both,
    );
    Denied(&[
        r#"appID: owner change from "ClusterExtension.a" to "ClusterExtension.b""#,
        r#"camel.apache.org/operator.id: owner change from "operator-1" to "operator-2""#,
    ])
    .check(&response);
    let message = response["message"].as_str().unwrap();
    for line in message.lines() {
        assert!(line.contains("; to hand it over"), "{line}");
    }
}

fn writers() -> Value {
    json!({"identities": [{"owners": ["ClusterExtension.a"], "users": ["installer-a"]}],
        "writes": "Owner"})
}

const A: Pairs = &[(APP_ID_KEY, "ClusterExtension.a")];
const B: Pairs = &[(APP_ID_KEY, "ClusterExtension.b")];
const TEAM_A_X: Pairs = &[(APP_ID_KEY, "Extension.team-a.x")];

/// A subresource UPDATE that changes owner labels is judged as an update of the object itself,
/// naming the subresource; one that keeps them, or whose body is a `Scale`, is accepted.
#[rstest]
#[case::status_keeping_the_owner(writers(), "status", POD, "team-b", A, A, Allowed)]
#[case::status_changing_other_labels(deny_both(app_id_shape()), "status", POD, "team-b", A,
    &[(APP_ID_KEY, "ClusterExtension.a"), ("app", "web")], Allowed)]
#[case::status_changing_the_owner(app_id_shape(), "status", POD, "team-b", A, B,
    DeniedSaying(&[r#"appID: owner change from "ClusterExtension.a" to "ClusterExtension.b""#],
        "Pod team-b/x (subresource status)"))]
#[case::status_orphaning(deny_both(app_id_shape()), "status", POD, "team-b", A, NONE,
    DeniedSaying(&[r#"appID: orphaning from "ClusterExtension.a" to none"#],
        "Pod team-b/x (subresource status)"))]
#[case::status_removing_an_owner_not_acted_for(writers(), "status", POD, "team-b", A, NONE,
    DeniedSaying(&[r#"appID: identity from "ClusterExtension.a" to none"#],
        "Pod team-b/x (subresource status)"))]
#[case::status_adopting_out_of_namespace(app_id_shape(), "status", POD, "team-b", NONE, TEAM_A_X,
    DeniedSaying(&[r#"appID: namespace scope from none to "Extension.team-a.x""#],
        "Pod team-b/x (subresource status)"))]
#[case::status_of_a_namespace_adopting_a_namespaced_owner(app_id_shape(), "status", NAMESPACE, "", NONE, TEAM_A_X,
    DeniedSaying(&[r#"appID: cluster scope from none to "Extension.team-a.x""#],
        "Namespace x (subresource status)"))]
#[case::finalize_changing_the_owner(app_id_shape(), "finalize", NAMESPACE, "", A, B,
    DeniedSaying(&[r#"appID: owner change from "ClusterExtension.a" to "ClusterExtension.b""#],
        "Namespace x (subresource finalize)"))]
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
    expected.check(&evaluate(&request.json(), &settings));
}

fn olm_cluster_only() -> Value {
    json!({"ownerLabels": [{"key": OLM_NAME, "kindKey": OLM_KIND,
        "clusterKinds": ["ClusterExtension"]}]})
}

/// Whole AdmissionRequests of real kinds, under the settings of each setup.
#[rstest]
#[case::crd_create_cluster_owner("crd-create-cluster-owner", app_id_shape(), Allowed)]
#[case::crd_create_namespaced_owner("crd-create-namespaced-owner", app_id_shape(),
    Denied(&[r#"appID: cluster scope from none to "Extension.team-a.argocd""#]))]
#[case::crd_create_unknown_kind("crd-create-unknown-kind", app_id_shape(),
    Denied(&[r#"appID: owner value from none to "Operator.argocd""#]))]
#[case::crd_update_owner_change("crd-update-owner-change", app_id_shape(),
    Denied(&[r#"appID: owner change from "ClusterExtension.first" to "ClusterExtension.second""#]))]
#[case::crd_update_adoption("crd-update-adoption", app_id_shape(), Allowed)]
#[case::crd_update_adoption_denied("crd-update-adoption", deny_both(app_id_shape()),
    Denied(&[r#"appID: adoption from none to "ClusterExtension.first""#]))]
#[case::crd_update_orphaning("crd-update-orphaning", app_id_shape(), Allowed)]
#[case::crd_update_orphaning_denied("crd-update-orphaning", deny_both(app_id_shape()),
    Denied(&[r#"appID: orphaning from "ClusterExtension.first" to none"#]))]
// a status write that keeps the owner labels, and DELETE without `writes: Owner`, are not judged
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
    Denied(&[r#"appID: namespace scope from none to "Extension.team-a.argocd""#]))]
#[case::namespace_create_cluster_owner("namespace-create-cluster-owner", app_id_shape(), Allowed)]
#[case::namespace_create_namespaced_owner("namespace-create-namespaced-owner", app_id_shape(),
    Denied(&[r#"appID: cluster scope from none to "Extension.team-a.argocd""#]))]
#[case::deployment_create_olm_owner("deployment-create-olm-owner", olm_cluster_only(), Allowed)]
#[case::deployment_update_olm_owner_change("deployment-update-olm-owner-change", olm_cluster_only(),
    Denied(&[r#"olm.operatorframework.io/owner-name: owner change from "ClusterExtension.argocd" to "ClusterExtension.argocd-v2""#]))]
#[case::deployment_update_olm_half_pair("deployment-update-olm-half-pair", olm_cluster_only(),
    Denied(&[r#"olm.operatorframework.io/owner-name: owner value from "ClusterExtension.argocd" to name "argocd" without a kind"#]))]
#[case::integration_update_operator_change("integration-update-operator-change", camel_k_shape(),
    Denied(&[r#"camel.apache.org/operator.id: owner change from "operator-1" to "operator-2""#]))]
#[case::integration_update_orphaning("integration-update-orphaning", camel_k_shape(), Allowed)]
// labels the settings do not name change nothing
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
    const DENIAL: &[&str] =
        &[r#"appID: owner change from "ClusterExtension.first" to "ClusterExtension.second""#];
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
    let bypassed = warning
        .strip_prefix(&format!("{who} bypassed: "))
        .unwrap_or_else(|| panic!("{warning}"));
    assert_eq!(summary(bypassed), DENIAL);
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
fn malformed_requests_are_rejected_with_a_reason(#[case] payload: &[u8], #[case] expected: &str) {
    let response = policy::validate(payload);
    assert!(!response.accepted);
    assert_eq!(response.code, Some(400));
    assert_eq!(response.message.as_deref(), Some(expected));
}

/// The summary the tests compare denials by: key, rule and owners of each line, whichever form
/// the line has and however the owners are written.
#[test]
fn a_denial_is_summarised_line_by_line() {
    let message = "appID: owner change denied for Pod team-a/x (subresource status) from \
        \"a\" to none: why: because\n\
        k: owner writes denied for DELETE of Job x, owned by \"say \\\"hi\\\", owned by b\": why\n\
        k: owner value denied for Deployment d/x from kind \"K\" without a name to name \"n\" \
        without a kind: why";
    assert_eq!(
        summary(message),
        [
            r#"appID: owner change from "a" to none"#,
            r#"k: owner writes owned by "say \"hi\", owned by b""#,
            r#"k: owner value from kind "K" without a name to name "n" without a kind"#,
        ]
    );
    for line in [
        "cannot read the admission request: EOF",
        "k: offer denied for UPDATE of Job x, owned by none",
        "k: offer denied for Job x from \"a\" to \"b\" why",
    ] {
        let outcome = std::panic::catch_unwind(|| summary(line));
        assert!(outcome.is_err(), "{line} summarised as {outcome:?}");
    }
}
