//! The policy's rules, table by table, through `policy::validate` with whole payloads.

use serde_json::{Value, json};
use single_owner_policy::policy::{self, EXEMPTION_ANNOTATION};

/// What a request is expected to get.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    Allowed,
    Denied(&'static str),
}
use Expect::*;

/// Labels, as `(key, value)` pairs.
type Pairs<'a> = &'a [(&'a str, &'a str)];

const APP_ID: &str = "{}";
const OLM: &str = r#"{"ownerLabels": [{"key": "olm.operatorframework.io/owner-name",
    "kindKey": "olm.operatorframework.io/owner-kind",
    "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}]}"#;
const CAMEL_K: &str = r#"{"ownerLabels": [{"key": "camel.apache.org/operator.id"}]}"#;
const OLM_NAME: &str = "olm.operatorframework.io/owner-name";
const OLM_KIND: &str = "olm.operatorframework.io/owner-kind";
const CAMEL: &str = "camel.apache.org/operator.id";

fn settings(json: &str) -> Value {
    serde_json::from_str(json).unwrap()
}

fn labels(pairs: Pairs) -> Value {
    pairs
        .iter()
        .map(|&(k, v)| (k.to_owned(), json!(v)))
        .collect()
}

/// An AdmissionRequest for `kind` (`group/Kind`) named `name` in `namespace` ("" when
/// cluster-scoped); `old` is `None` on CREATE.
fn request(
    kind: &str,
    namespace: &str,
    old: Option<&[(&str, &str)]>,
    new: &[(&str, &str)],
) -> Value {
    let (group, kind) = kind.split_once('/').unwrap();
    let object = |pairs| json!({"metadata": {"name": "x", "labels": labels(pairs)}, "spec": {}});
    json!({
        "uid": "0d6d3a8e-5f0c-4c44-9d36-6f2a2c8c1a11",
        "kind": {"group": group, "version": "v1", "kind": kind},
        "operation": if old.is_some() { "UPDATE" } else { "CREATE" },
        "namespace": namespace,
        "name": "x",
        "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters"]},
        "object": object(new),
        "oldObject": old.map_or(Value::Null, object),
    })
}

fn evaluate(request: &Value, settings: &Value) -> (bool, Option<String>, Value) {
    let payload = serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
    let response = policy::validate(&payload);
    let code = response.code;
    match &response.message {
        None => assert_eq!(code, None),
        Some(_) if !response.accepted => assert!(matches!(code, Some(400 | 403)), "code {code:?}"),
        Some(_) => {}
    }
    (
        response.accepted,
        response.message.clone(),
        serde_json::to_value(&response).unwrap(),
    )
}

fn assert_verdict(request: &Value, settings: &Value, expected: Expect, what: &str) {
    let (allowed, message, _) = evaluate(request, settings);
    let got = match (allowed, message.as_deref()) {
        (true, None) => "allowed".to_owned(),
        (false, Some(message)) => message.to_owned(),
        other => panic!("{what}: unexpected response {other:?}"),
    };
    let want = match expected {
        Allowed => "allowed",
        Denied(message) => message,
    };
    assert_eq!(got, want, "{what}");
}

/// The transition table, for each of the three owner shapes. CRDs are cluster-scoped.
#[test]
fn transitions_for_each_owner_shape() {
    const CRD: &str = "apiextensions.k8s.io/CustomResourceDefinition";
    let none: Pairs = &[];
    let a = [("appID", "ClusterExtension.first")];
    let b = [("appID", "ClusterExtension.second")];
    let pair_a = [(OLM_KIND, "ClusterExtension"), (OLM_NAME, "first")];
    let pair_b = [(OLM_KIND, "ClusterExtension"), (OLM_NAME, "second")];
    let half_a = [(OLM_NAME, "first")];
    let op_1 = [(CAMEL, "operator-1")];
    let op_2 = [(CAMEL, "operator-2")];
    let deny_both = r#"{"adoption": "Deny", "orphaning": "Deny"}"#;
    #[rustfmt::skip]
    let rows: &[(&str, &str, Pairs, Pairs, Expect)] = &[
        // settings, extra settings, old, new, verdict
        (APP_ID, "{}", none, none, Allowed),
        (APP_ID, "{}", &a, &a, Allowed),
        (APP_ID, "{}", none, &a, Allowed),
        (APP_ID, deny_both, none, &a, Denied(r#"appID: adoption denied for CustomResourceDefinition x from none to "ClusterExtension.first": adoption is set to Deny; create objects with their owner label instead of labelling existing ones"#)),
        (APP_ID, "{}", &a, none, Allowed),
        (APP_ID, deny_both, &a, none, Denied(r#"appID: orphaning denied for CustomResourceDefinition x from "ClusterExtension.first" to none: orphaning is set to Deny; the owner label stays until the object is deleted"#)),
        (APP_ID, "{}", &a, &b, Denied(r#"appID: owner change denied for CustomResourceDefinition x from "ClusterExtension.first" to "ClusterExtension.second": an object has one owner; to hand it over, its owner offers it by setting the annotation single-owner-policy.io/offer=ClusterExtension.second, then the new owner changes the owner label and removes the annotation"#)),
        (APP_ID, deny_both, &a, &a, Allowed),
        (OLM, "{}", none, none, Allowed),
        (OLM, "{}", &pair_a, &pair_a, Allowed),
        (OLM, "{}", none, &pair_a, Allowed),
        (OLM, deny_both, none, &pair_a, Denied(r#"olm.operatorframework.io/owner-name: adoption denied for CustomResourceDefinition x from none to "ClusterExtension.first": adoption is set to Deny; create objects with their owner label instead of labelling existing ones"#)),
        (OLM, "{}", &pair_a, none, Allowed),
        (OLM, deny_both, &pair_a, none, Denied(r#"olm.operatorframework.io/owner-name: orphaning denied for CustomResourceDefinition x from "ClusterExtension.first" to none: orphaning is set to Deny; the owner label stays until the object is deleted"#)),
        (OLM, "{}", &pair_a, &pair_b, Denied(r#"olm.operatorframework.io/owner-name: owner change denied for CustomResourceDefinition x from "ClusterExtension.first" to "ClusterExtension.second": an object has one owner; to hand it over, its owner offers it by setting the annotation single-owner-policy.io/offer=ClusterExtension.second, then the new owner changes the owner label and removes the annotation"#)),
        (OLM, "{}", &pair_a, &half_a, Denied(r#"olm.operatorframework.io/owner-name: owner value denied for CustomResourceDefinition x from "ClusterExtension.first" to name "first" without a kind: label olm.operatorframework.io/owner-name is set without olm.operatorframework.io/owner-kind; both are set and removed together"#)),
        (OLM, "{}", none, &half_a, Denied(r#"olm.operatorframework.io/owner-name: owner value denied for CustomResourceDefinition x from none to name "first" without a kind: label olm.operatorframework.io/owner-name is set without olm.operatorframework.io/owner-kind; both are set and removed together"#)),
        (CAMEL_K, "{}", none, none, Allowed),
        (CAMEL_K, "{}", &op_1, &op_1, Allowed),
        (CAMEL_K, "{}", none, &op_1, Allowed),
        (CAMEL_K, deny_both, none, &op_1, Denied(r#"camel.apache.org/operator.id: adoption denied for CustomResourceDefinition x from none to "operator-1": adoption is set to Deny; create objects with their owner label instead of labelling existing ones"#)),
        (CAMEL_K, "{}", &op_1, none, Allowed),
        (CAMEL_K, deny_both, &op_1, none, Denied(r#"camel.apache.org/operator.id: orphaning denied for CustomResourceDefinition x from "operator-1" to none: orphaning is set to Deny; the owner label stays until the object is deleted"#)),
        (CAMEL_K, "{}", &op_1, &op_2, Denied(r#"camel.apache.org/operator.id: owner change denied for CustomResourceDefinition x from "operator-1" to "operator-2": an object has one owner; to hand it over, its owner offers it by setting the annotation single-owner-policy.io/offer=operator-2, then the new owner changes the owner label and removes the annotation"#)),
    ];
    for &(shape, extra, old, new, expected) in rows {
        let mut settings = settings(shape);
        for (key, value) in self::settings(extra).as_object().unwrap() {
            settings[key] = value.clone();
        }
        let request = request(CRD, "", Some(old), new);
        assert_verdict(
            &request,
            &settings,
            expected,
            &format!("{settings} {old:?} -> {new:?}"),
        );
    }
}

/// The scope table, on CREATE, for the two shapes that carry kinds.
#[test]
fn scope_for_each_kinded_shape() {
    const CRD: &str = "apiextensions.k8s.io/CustomResourceDefinition";
    const CONFIG_MAP: &str = "/ConfigMap";
    const NAMESPACE: &str = "/Namespace";
    let cluster = [("appID", "ClusterExtension.argocd")];
    let team_a = [("appID", "Extension.team-a.argocd")];
    let pair_cluster = [(OLM_KIND, "ClusterExtension"), (OLM_NAME, "argocd")];
    let pair_team_a = [(OLM_KIND, "Extension"), (OLM_NAME, "team-a.argocd")];
    let opaque = [(CAMEL, "operator-1")];
    #[rustfmt::skip]
    let rows: &[(&str, &str, &str, Pairs, Expect)] = &[
        // settings, kind, namespace, labels, verdict
        (APP_ID, CRD, "", &cluster, Allowed),
        (APP_ID, CRD, "", &team_a, Denied(r#"appID: cluster scope denied for CustomResourceDefinition x from none to "Extension.team-a.argocd": a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner"#)),
        (APP_ID, CONFIG_MAP, "team-a", &cluster, Allowed),
        (APP_ID, CONFIG_MAP, "team-a", &team_a, Allowed),
        (APP_ID, CONFIG_MAP, "team-b", &team_a, Denied(r#"appID: namespace scope denied for ConfigMap team-b/x from none to "Extension.team-a.argocd": Extension owners only own objects in their own namespace (team-a), not in team-b; use an owner from team-b or a cluster-level owner"#)),
        // a Namespace is cluster-scoped, whatever namespace the request carries
        (APP_ID, NAMESPACE, "team-a", &team_a, Denied(r#"appID: cluster scope denied for Namespace x from none to "Extension.team-a.argocd": a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner"#)),
        (APP_ID, NAMESPACE, "team-a", &cluster, Allowed),
        (APP_ID, CRD, "", &[("appID", "Operator.argocd")], Denied(r#"appID: owner value denied for CustomResourceDefinition x from none to "Operator.argocd": "Operator" is not a configured owner kind; use ClusterExtension.<name> or Extension.<namespace>.<name>"#)),
        (APP_ID, CRD, "", &[("appID", "")], Denied(r#"appID: owner value denied for CustomResourceDefinition x from none to "": the owner label is empty; name an owner or remove it"#)),
        (OLM, CRD, "", &pair_cluster, Allowed),
        (OLM, CRD, "", &pair_team_a, Denied(r#"olm.operatorframework.io/owner-name: cluster scope denied for CustomResourceDefinition x from none to "Extension.team-a.argocd": a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner"#)),
        (OLM, CONFIG_MAP, "team-a", &pair_team_a, Allowed),
        (OLM, CONFIG_MAP, "team-b", &pair_team_a, Denied(r#"olm.operatorframework.io/owner-name: namespace scope denied for ConfigMap team-b/x from none to "Extension.team-a.argocd": Extension owners only own objects in their own namespace (team-a), not in team-b; use an owner from team-b or a cluster-level owner"#)),
        (OLM, CRD, "", &[(OLM_KIND, "ClusterExtension")], Denied(r#"olm.operatorframework.io/owner-name: owner value denied for CustomResourceDefinition x from none to kind "ClusterExtension" without a name: label olm.operatorframework.io/owner-kind is set without olm.operatorframework.io/owner-name; both are set and removed together"#)),
        // opaque ids: scope rules do not apply
        (CAMEL_K, CRD, "", &opaque, Allowed),
        (CAMEL_K, CONFIG_MAP, "team-b", &opaque, Allowed),
    ];
    for &(shape, kind, namespace, labels, expected) in rows {
        let request = request(kind, namespace, None, labels);
        assert_verdict(
            &request,
            &settings(shape),
            expected,
            &format!("{shape} {kind} in {namespace:?}: {labels:?}"),
        );
    }
}

/// Adoption is judged like a CREATE: the new owner must be valid and in scope.
#[test]
fn adoption_checks_the_new_owner() {
    let request = request(
        "/ConfigMap",
        "team-b",
        Some(&[]),
        &[("appID", "Extension.team-a.argocd")],
    );
    let (allowed, message, _) = evaluate(&request, &settings(APP_ID));
    assert!(!allowed);
    assert!(
        message
            .unwrap()
            .starts_with("appID: namespace scope denied for ConfigMap team-b/x from none to")
    );
}

/// An owner that predates the policy, even an invalid one, is not re-judged while unchanged.
#[test]
fn unchanged_owners_are_not_rejudged() {
    let legacy = [("appID", "legacy-installer")];
    let out_of_scope = [("appID", "Extension.team-a.argocd")];
    for owner in [&legacy, &out_of_scope] {
        let request = request(
            "apiextensions.k8s.io/CustomResourceDefinition",
            "",
            Some(owner),
            owner,
        );
        assert_verdict(&request, &settings(APP_ID), Allowed, &format!("{owner:?}"));
    }
}

/// Each owner label entry is guarded on its own, and every violation is reported.
#[test]
fn every_entry_is_guarded_and_reported() {
    let both = r#"{"ownerLabels": [
        {"key": "appID", "clusterKinds": ["ClusterExtension"]},
        {"key": "camel.apache.org/operator.id"}]}"#;
    let old = [("appID", "ClusterExtension.a"), (CAMEL, "operator-1")];
    let new = [("appID", "ClusterExtension.b"), (CAMEL, "operator-2")];
    let request = request("camel.apache.org/Integration", "camel", Some(&old), &new);
    let (allowed, message, _) = evaluate(&request, &settings(both));
    assert!(!allowed);
    let message = message.unwrap();
    let parts: Vec<&str> = message.split("; to hand it over").collect();
    assert_eq!(parts.len(), 3, "{message}");
    assert!(message.starts_with(r#"appID: owner change denied for Integration camel/x from "ClusterExtension.a" to "ClusterExtension.b""#));
    assert!(message.contains(r#"; camel.apache.org/operator.id: owner change denied for Integration camel/x from "operator-1" to "operator-2""#));
}

/// A subresource UPDATE that changes owner labels is judged as an update of the object itself,
/// naming the subresource; one that keeps them, or whose body is a `Scale`, is accepted.
#[test]
fn subresource_updates_are_judged_on_what_they_change() {
    let identities = r#"{"identities": [{"owners": ["ClusterExtension.a"], "users": ["installer-a"]}],
        "writes": "Owner"}"#;
    let deny_both = r#"{"adoption": "Deny", "orphaning": "Deny"}"#;
    let a = [("appID", "ClusterExtension.a")];
    let b = [("appID", "ClusterExtension.b")];
    let team_a = [("appID", "Extension.team-a.x")];
    let none: [(&str, &str); 0] = [];
    #[rustfmt::skip]
    let rows: &[(&str, &str, &str, Pairs, Pairs, &str, Expect)] = &[
        // subresource, kind, namespace, old labels, new labels, settings, verdict
        ("status", "/Pod", "team-b", &a, &a, identities, Allowed),
        ("status", "/Pod", "team-b", &a, &[("appID", "ClusterExtension.a"), ("app", "web")], deny_both, Allowed),
        ("status", "/Pod", "team-b", &a, &b, APP_ID, Denied(r#"appID: owner change denied for Pod team-b/x (subresource status) from "ClusterExtension.a" to "ClusterExtension.b": an object has one owner; to hand it over, its owner offers it by setting the annotation single-owner-policy.io/offer=ClusterExtension.b, then the new owner changes the owner label and removes the annotation"#)),
        ("status", "/Pod", "team-b", &a, &none, deny_both, Denied(r#"appID: orphaning denied for Pod team-b/x (subresource status) from "ClusterExtension.a" to none: orphaning is set to Deny; the owner label stays until the object is deleted"#)),
        ("status", "/Pod", "team-b", &a, &none, identities, Denied(r#"appID: identity denied for Pod team-b/x (subresource status) from "ClusterExtension.a" to none: user kubernetes-admin acts for none, not for "ClusterExtension.a"; only a requester acting for an owner may remove it"#)),
        ("status", "/Pod", "team-b", &none, &team_a, APP_ID, Denied(r#"appID: namespace scope denied for Pod team-b/x (subresource status) from none to "Extension.team-a.x": Extension owners only own objects in their own namespace (team-a), not in team-b; use an owner from team-b or a cluster-level owner"#)),
        ("status", "/Namespace", "", &none, &team_a, APP_ID, Denied(r#"appID: cluster scope denied for Namespace x (subresource status) from none to "Extension.team-a.x": a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner"#)),
        ("finalize", "/Namespace", "", &a, &b, APP_ID, Denied(r#"appID: owner change denied for Namespace x (subresource finalize) from "ClusterExtension.a" to "ClusterExtension.b": an object has one owner; to hand it over, its owner offers it by setting the annotation single-owner-policy.io/offer=ClusterExtension.b, then the new owner changes the owner label and removes the annotation"#)),
        ("scale", "autoscaling/Scale", "team-b", &none, &b, identities, Allowed),
    ];
    for &(subresource, kind, namespace, old, new, shape, expected) in rows {
        let mut request = request(kind, namespace, Some(old), new);
        request["subResource"] = json!(subresource);
        assert_verdict(
            &request,
            &settings(shape),
            expected,
            &format!("{subresource} of {kind}: {old:?} -> {new:?} under {shape}"),
        );
    }
}

/// Whole AdmissionRequests of real kinds, under the settings of each setup.
#[test]
fn sample_requests() {
    let olm_cluster_only = r#"{"ownerLabels": [{"key": "olm.operatorframework.io/owner-name",
        "kindKey": "olm.operatorframework.io/owner-kind", "clusterKinds": ["ClusterExtension"]}]}"#;
    let deny_both = r#"{"adoption": "Deny", "orphaning": "Deny"}"#;
    #[rustfmt::skip]
    let rows: &[(&str, &str, Expect)] = &[
        ("crd-create-cluster-owner", APP_ID, Allowed),
        ("crd-create-namespaced-owner", APP_ID, Denied(r#"appID: cluster scope denied for CustomResourceDefinition applications.argoproj.io from none to "Extension.team-a.argocd": a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner"#)),
        ("crd-create-unknown-kind", APP_ID, Denied(r#"appID: owner value denied for CustomResourceDefinition applications.argoproj.io from none to "Operator.argocd": "Operator" is not a configured owner kind; use ClusterExtension.<name> or Extension.<namespace>.<name>"#)),
        ("crd-update-owner-change", APP_ID, Denied(r#"appID: owner change denied for CustomResourceDefinition foos.example.com from "ClusterExtension.first" to "ClusterExtension.second": an object has one owner; to hand it over, its owner offers it by setting the annotation single-owner-policy.io/offer=ClusterExtension.second, then the new owner changes the owner label and removes the annotation"#)),
        ("crd-update-adoption", APP_ID, Allowed),
        ("crd-update-adoption", deny_both, Denied(r#"appID: adoption denied for CustomResourceDefinition foos.example.com from none to "ClusterExtension.first": adoption is set to Deny; create objects with their owner label instead of labelling existing ones"#)),
        ("crd-update-orphaning", APP_ID, Allowed),
        ("crd-update-orphaning", deny_both, Denied(r#"appID: orphaning denied for CustomResourceDefinition foos.example.com from "ClusterExtension.first" to none: orphaning is set to Deny; the owner label stays until the object is deleted"#)),
        // a status write that keeps the owner labels, and DELETE without `writes: Owner`, are
        // not judged
        ("crd-update-status", deny_both, Allowed),
        ("pod-status-update-by-kubelet", deny_both, Allowed),
        ("namespace-status-update", deny_both, Allowed),
        ("deployment-scale-update", deny_both, Allowed),
        ("crd-delete", deny_both, Allowed),
        ("job-update-legacy-owner", APP_ID, Allowed),
        ("configmap-create-own-namespace", APP_ID, Allowed),
        ("configmap-create-other-namespace", APP_ID, Denied(r#"appID: namespace scope denied for ConfigMap team-b/argocd-cm from none to "Extension.team-a.argocd": Extension owners only own objects in their own namespace (team-a), not in team-b; use an owner from team-b or a cluster-level owner"#)),
        ("namespace-create-cluster-owner", APP_ID, Allowed),
        ("namespace-create-namespaced-owner", APP_ID, Denied(r#"appID: cluster scope denied for Namespace team-a from none to "Extension.team-a.argocd": a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner"#)),
        ("deployment-create-olm-owner", olm_cluster_only, Allowed),
        ("deployment-update-olm-owner-change", olm_cluster_only, Denied(r#"olm.operatorframework.io/owner-name: owner change denied for Deployment argocd/argocd-operator from "ClusterExtension.argocd" to "ClusterExtension.argocd-v2": an object has one owner; to hand it over, its owner offers it by setting the annotation single-owner-policy.io/offer=ClusterExtension.argocd-v2, then the new owner changes the owner label and removes the annotation"#)),
        ("deployment-update-olm-half-pair", olm_cluster_only, Denied(r#"olm.operatorframework.io/owner-name: owner value denied for Deployment argocd/argocd-operator from "ClusterExtension.argocd" to name "argocd" without a kind: label olm.operatorframework.io/owner-name is set without olm.operatorframework.io/owner-kind; both are set and removed together"#)),
        ("integration-update-operator-change", CAMEL_K, Denied(r#"camel.apache.org/operator.id: owner change denied for Integration camel-apps/hello from "operator-1" to "operator-2": an object has one owner; to hand it over, its owner offers it by setting the annotation single-owner-policy.io/offer=operator-2, then the new owner changes the owner label and removes the annotation"#)),
        ("integration-update-orphaning", CAMEL_K, Allowed),
        // labels the settings do not name change nothing
        ("integration-update-operator-change", APP_ID, Allowed),
    ];
    for &(fixture, shape, expected) in rows {
        let path = format!("{}/test_data/{fixture}.json", env!("CARGO_MANIFEST_DIR"));
        let request: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_verdict(
            &request,
            &settings(shape),
            expected,
            &format!("{fixture} under {shape}"),
        );
    }
}

/// Exempt users and groups are let through, with a warning and an audit annotation.
#[test]
fn exemptions_bypass_with_warning_and_audit_annotation() {
    let path = format!(
        "{}/test_data/crd-update-owner-change.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let request: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let denial = r#"appID: owner change denied for CustomResourceDefinition foos.example.com from "ClusterExtension.first" to "ClusterExtension.second": an object has one owner; to hand it over, its owner offers it by setting the annotation single-owner-policy.io/offer=ClusterExtension.second, then the new owner changes the owner label and removes the annotation"#;
    #[rustfmt::skip]
    let rows = [
        (json!({"users": ["system:serviceaccount:kube-system:helm-hooks"]}), Some("exempt user system:serviceaccount:kube-system:helm-hooks")),
        (json!({"groups": ["cluster-admins", "system:serviceaccounts"]}), Some("user system:serviceaccount:kube-system:helm-hooks of exempt group system:serviceaccounts")),
        (json!({"users": ["alice"], "groups": ["cluster-admins"]}), None),
    ];
    for (exemptions, exempt) in rows {
        let (allowed, message, response) = evaluate(&request, &json!({"exemptions": exemptions}));
        match exempt {
            Some(who) => {
                let bypassed = format!("{who} bypassed: {denial}");
                assert!(allowed, "{exemptions}");
                assert_eq!(message, None);
                assert_eq!(response["warnings"], json!([bypassed]));
                assert_eq!(
                    response["audit_annotations"],
                    json!({EXEMPTION_ANNOTATION: bypassed})
                );
            }
            None => {
                assert!(!allowed, "{exemptions}");
                assert_eq!(message.as_deref(), Some(denial));
                assert_eq!(response["warnings"], Value::Null);
            }
        }
    }
}

/// A request the policy cannot read is rejected with code 400 and says what is wrong.
#[test]
fn malformed_requests_are_rejected_with_a_reason() {
    #[rustfmt::skip]
    let rows: &[(&[u8], &str)] = &[
        (b"", "cannot read the admission request: EOF while parsing a value at line 1 column 0"),
        (b"{\"request\": 1}", "cannot read the admission request: request: invalid type: integer `1`, expected struct AdmissionRequest at line 1 column 13"),
        (br#"{"request": {"kind": {"kind": "ConfigMap"}, "operation": "UPDATE", "object": {}}}"#,
            "cannot read the admission request: an UPDATE request needs `object` and `oldObject`"),
        (br#"{"request": {"kind": {"kind": "ConfigMap"}, "operation": "CREATE"}}"#,
            "cannot read the admission request: a CREATE request needs `object`"),
        (br#"{"request": {"kind": {"kind": "ConfigMap"}, "operation": "CREATE",
              "object": {"metadata": {"labels": {"appID": null}}}}}"#,
            "cannot read the admission request: request.object.metadata.labels.appID: invalid type: null, expected a string at line 2 column 62"),
    ];
    for (payload, expected) in rows {
        let response = policy::validate(payload);
        assert!(!response.accepted);
        assert_eq!(response.code, Some(400));
        assert_eq!(
            response.message.as_deref(),
            Some(*expected),
            "{}",
            String::from_utf8_lossy(payload)
        );
    }
}
