//! The decision over whole requests: which requests are judged, the trusted control plane,
//! templates, finishing deletions, values that name no owner, identities, offers, stamping,
//! audit replays, subresources and one owner across tools — each through the policy's typed
//! verdict ([`Payload`]): a denial as the summaries of its violations (see `common::summary`).

mod common;

use serde_json::{Value, json};
use single_owner_policy::policy::{Payload, Verdict};
use single_owner_policy::{Act, NoHost, NotActing, Reason, Rule, Standing, Unfit};

use common::summary;

/// A decision: a denial as the summaries of its violations, a mutation as what it changes.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Allow,
    Mutate(Mutation),
    Deny(Vec<String>),
    Unreadable(String),
}

/// What a mutation changes in the object's metadata.
#[derive(Debug, Default, PartialEq, Eq)]
struct Mutation {
    /// Labels added or changed.
    labels: Vec<(String, String)>,
    /// Annotations added or changed.
    annotations: Vec<(String, String)>,
    /// The annotation removed.
    remove_annotation: Option<String>,
}

impl Mutation {
    /// What changes from `object` to `mutated`.
    fn between(object: &Value, mutated: &Value) -> Mutation {
        let map = |object: &Value, field: &str| {
            let map = object["metadata"][field]
                .as_object()
                .cloned()
                .unwrap_or_default();
            map.into_iter()
                .map(|(key, value)| (key, value.as_str().unwrap_or_default().to_owned()))
                .collect::<Vec<_>>()
        };
        let added = |field| {
            let before = map(object, field);
            let after = map(mutated, field);
            after
                .into_iter()
                .filter(|pair| !before.contains(pair))
                .collect()
        };
        let removed = map(object, "annotations")
            .into_iter()
            .map(|(key, _)| key)
            .find(|key| mutated["metadata"]["annotations"].get(key).is_none());
        Mutation {
            labels: added("labels"),
            annotations: added("annotations"),
            remove_annotation: removed,
        }
    }
}

/// The policy's verdict on `request` under `settings`, and what `check` makes of its
/// violations' reasons.
fn judged<R>(
    request: &Value,
    settings: &Value,
    check: impl FnOnce(Vec<&Reason>) -> R,
) -> (Outcome, R) {
    let payload = serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
    let parsed = match Payload::parse(&payload) {
        Ok(parsed) => parsed,
        Err(why) => return (Outcome::Unreadable(why), check(Vec::new())),
    };
    match parsed.verdict(&NoHost) {
        Verdict::Allow => (Outcome::Allow, check(Vec::new())),
        Verdict::Mutate(object) => (
            Outcome::Mutate(Mutation::between(&request["object"], &object)),
            check(Vec::new()),
        ),
        Verdict::Deny(violations) => {
            let reasons = violations
                .iter()
                .map(|violation| &violation.reason)
                .collect();
            let checked = check(reasons);
            (
                Outcome::Deny(violations.iter().map(summary).collect()),
                checked,
            )
        }
        Verdict::Exempt { .. } => panic!("no exemptions here"),
        Verdict::Unreadable(why) => (Outcome::Unreadable(why), check(Vec::new())),
    }
}

/// The rules the policy denies `request` for under `settings`, in order.
fn rules(request: &Value, settings: &Value) -> Vec<Rule> {
    judged(request, settings, |reasons| {
        reasons.iter().map(|reason| reason.rule()).collect()
    })
    .1
}

/// The policy's verdict on `request` under `settings`.
fn decide(request: &Value, settings: &Value) -> Outcome {
    judged(request, settings, |_| ()).0
}

/// A `camel.apache.org/Integration` request in `shop` by `user`; each side's labels and
/// annotations as JSON (`null`: no such side).
fn integration(operation: &str, user: &str, old: Value, new: Value) -> Value {
    let side = |side: Value| match side {
        Value::Null => Value::Null,
        metadata => json!({"kind": "Integration", "metadata": metadata}),
    };
    json!({
        "kind": {"group": "camel.apache.org", "version": "v1", "kind": "Integration"},
        "operation": operation, "namespace": "shop", "name": "orders",
        "userInfo": {"username": user, "groups": common::groups_of(user)},
        "oldObject": side(old), "object": side(new),
    })
}

fn owned_by(operator: &str) -> Value {
    json!({"labels": {"camel.apache.org/operator.id": operator}})
}

fn offered(operator: &str, to: &str) -> Value {
    json!({"labels": {"camel.apache.org/operator.id": operator},
           "annotations": {"single-owner-policy.io/offer": format!("camel.apache.org/operator.id: {operator} -> {to}")}})
}

const OPERATOR_1: &str = "system:serviceaccount:camel-k:camel-k-operator";

fn camel_k(extra: Value) -> Value {
    let mut settings = json!({
        "ownerMarks": [{"label": "camel.apache.org/operator.id"}],
        "identities": [{"owners": ["operator-1"], "users": [OPERATOR_1]}],
    });
    for (key, value) in extra.as_object().unwrap() {
        settings[key] = value.clone();
    }
    settings
}

#[test]
fn requests_the_rules_do_not_judge_are_allowed_and_incomplete_ones_unreadable() {
    let writes = camel_k(json!({"writes": "Owner"}));
    let owned = owned_by("operator-1");
    #[rustfmt::skip]
    let rows = [
        (integration("CONNECT", "alice", Value::Null, Value::Null), camel_k(json!({})), Outcome::Allow),
        (integration("DELETE", "alice", owned.clone(), Value::Null), camel_k(json!({})), Outcome::Allow),
        (integration("DELETE", "alice", Value::Null, Value::Null), writes.clone(),
         Outcome::Unreadable("a DELETE request needs `oldObject`".to_owned())),
        (integration("CREATE", "alice", Value::Null, Value::Null), writes.clone(),
         Outcome::Unreadable("a CREATE request needs `object`".to_owned())),
        (integration("UPDATE", "alice", Value::Null, owned.clone()), writes,
         Outcome::Unreadable("an UPDATE request needs `object` and `oldObject`".to_owned())),
    ];
    for (request, settings, expected) in rows {
        assert_eq!(decide(&request, &settings), expected, "{request}");
    }
}

/// A request on a core or `apps` object in `shop` by `user` with `groups`; `resource` is
/// `resource[.group][/subresource]`; each side a whole object (`null`: no such side).
fn write(
    operation: &str,
    (user, groups): (&str, &[&str]),
    resource: &str,
    old: Value,
    new: Value,
) -> Value {
    let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
    let (resource, group) = resource.split_once('.').unwrap_or((resource, ""));
    let kind = match resource {
        "pods" => "Pod",
        "deployments" => "Deployment",
        "replicasets" => "ReplicaSet",
        "endpointslices" => "EndpointSlice",
        "configmaps" => "ConfigMap",
        "resourceclaimtemplates" => "ResourceClaimTemplate",
        other => panic!("no kind for {other}"),
    };
    json!({
        "uid": "1", "kind": {"group": group, "version": "v1", "kind": kind},
        "resource": {"group": group, "version": "v1", "resource": resource},
        "subResource": subresource, "operation": operation, "namespace": "shop", "name": "x",
        "userInfo": {"username": user, "groups": groups},
        "oldObject": old, "object": new,
    })
}

fn labelled(operator: &str) -> Value {
    json!({"metadata": {"name": "x", "labels": {"camel.apache.org/operator.id": operator}}})
}

const ALICE: (&str, &[&str]) = ("alice", &["system:authenticated"]);
const GC: (&str, &[&str]) = (
    "system:serviceaccount:kube-system:generic-garbage-collector",
    &[
        "system:serviceaccounts",
        "system:serviceaccounts:kube-system",
    ],
);
const SLICES: (&str, &[&str]) = (
    "system:serviceaccount:kube-system:endpointslice-controller",
    &[
        "system:serviceaccounts",
        "system:serviceaccounts:kube-system",
    ],
);
const KCM: (&str, &[&str]) = ("system:kube-controller-manager", &["system:authenticated"]);
const KUBELET: (&str, &[&str]) = ("system:node:n1", &["system:nodes", "system:authenticated"]);

#[test]
fn the_control_plane_is_trusted_with_what_it_writes_and_nothing_else() {
    let writes = camel_k(json!({"writes": "Owner"}));
    let terminating = json!({"metadata": {"name": "x", "deletionTimestamp": "2026-12-01T10:00:00Z",
        "deletionGracePeriodSeconds": 30, "labels": {"camel.apache.org/operator.id": "operator-1"}}});
    let (a, b) = (labelled("operator-1"), labelled("operator-2"));
    let impostor = (
        "system:serviceaccount:kube-public:generic-garbage-collector",
        GC.1,
    );
    let node_without_group = ("system:node:n1", &["system:authenticated"][..]);
    // The kubelet's final DELETE: grace period 0 (`syncPod` in pkg/kubelet/status).
    let force = |mut request: Value| {
        request["options"] = json!({"kind": "DeleteOptions", "gracePeriodSeconds": 0});
        request
    };
    use Rule::{OwnerChange, OwnerWrites};
    #[rustfmt::skip]
    let rows: Vec<(Value, &[Rule])> = vec![
        // trusted: label sync after a handoff, copies, deletes, finishing a Pod's deletion
        (write("UPDATE", SLICES, "endpointslices.discovery.k8s.io", a.clone(), b.clone()), &[]),
        (write("CREATE", SLICES, "endpointslices.discovery.k8s.io", Value::Null, b.clone()), &[]),
        (write("UPDATE", KCM, "endpointslices.discovery.k8s.io", a.clone(), b.clone()), &[]),
        (write("DELETE", GC, "deployments.apps", a.clone(), Value::Null), &[]),
        (force(write("DELETE", KUBELET, "pods", terminating.clone(), Value::Null)), &[]),
        // judged like anyone: another resource, another namespace, no group, a live Pod
        (write("UPDATE", SLICES, "deployments.apps", a.clone(), b.clone()), &[OwnerChange]),
        (write("UPDATE", impostor, "endpointslices.discovery.k8s.io", a.clone(), b.clone()), &[OwnerChange]),
        (write("DELETE", impostor, "deployments.apps", a.clone(), Value::Null), &[OwnerWrites]),
        (force(write("DELETE", node_without_group, "pods", terminating.clone(), Value::Null)), &[OwnerWrites]),
        (force(write("DELETE", KUBELET, "pods", a.clone(), Value::Null)), &[OwnerWrites]),
        (write("UPDATE", KUBELET, "pods/status", a.clone(), b.clone()), &[OwnerChange]),
    ];
    for (request, denied) in rows {
        assert_eq!(rules(&request, &writes), denied, "{request}");
    }
    // The settings' additions: their users, resources and operations only.
    let k3s = camel_k(json!({"writes": "Owner", "trustedWriters": [
        {"users": ["system:k3s-controller"], "resources": ["configmaps"], "operations": ["DELETE"]}]}));
    let k3s_user = ("system:k3s-controller", &["system:authenticated"][..]);
    let owned_map = write("DELETE", k3s_user, "configmaps", a.clone(), Value::Null);
    assert_eq!(decide(&owned_map, &k3s), Outcome::Allow);
    let relabel = write("UPDATE", k3s_user, "configmaps", a.clone(), b.clone());
    assert_eq!(rules(&relabel, &k3s), [OwnerChange]);
    let pod = write("DELETE", k3s_user, "pods", a.clone(), Value::Null);
    assert_eq!(rules(&pod, &k3s), [OwnerWrites]);
    // A service account's name is taken only with the groups the API server gives it.
    let cleaner = "system:serviceaccount:ops:cleaner";
    let ops = camel_k(json!({"writes": "Owner", "trustedWriters": [
        {"users": [cleaner], "resources": ["configmaps"], "operations": ["DELETE"]}]}));
    let as_sent = (
        cleaner,
        &["system:serviceaccounts", "system:serviceaccounts:ops"][..],
    );
    let certificate = (cleaner, &["system:authenticated"][..]);
    let delete = |user| write("DELETE", user, "configmaps", a.clone(), Value::Null);
    assert_eq!(decide(&delete(as_sent), &ops), Outcome::Allow);
    assert_eq!(rules(&delete(certificate), &ops), [OwnerWrites]);
}

#[test]
fn a_mark_in_a_template_is_a_claim_by_whoever_writes_the_template() {
    let deployment = |labels: Value, template: Value| {
        json!({"metadata": {"name": "x", "labels": labels},
               "spec": {"replicas": 1, "template": {"metadata": {"labels": template}}}})
    };
    let claim_template = |labels: Value| {
        json!({"metadata": {"name": "x"},
               "spec": {"metadata": {"labels": labels}, "spec": {"devices": {"requests": []}}}})
    };
    let op = |id: &str| json!({"app": "web", "camel.apache.org/operator.id": id});
    let settings = camel_k(json!({}));
    let operator_1 = (
        OPERATOR_1,
        &["system:serviceaccounts", "system:serviceaccounts:camel-k"][..],
    );
    #[rustfmt::skip]
    let rows = [
        (write("CREATE", operator_1, "deployments.apps", Value::Null, deployment(op("operator-1"), op("operator-1"))), Outcome::Allow),
        (write("CREATE", ALICE, "deployments.apps", Value::Null, deployment(json!({}), op("operator-2"))), Outcome::Deny(vec![
            r#"label camel.apache.org/operator.id in spec.template: identity from none to "operator-2""#.to_owned()])),
        (write("UPDATE", operator_1, "deployments.apps", deployment(op("operator-1"), op("operator-1")), deployment(op("operator-1"), op("operator-2"))), Outcome::Deny(vec![
            r#"label camel.apache.org/operator.id in spec.template: owner change from "operator-1" to "operator-2""#.to_owned()])),
        // a kept template mark is written with its object
        (write("UPDATE", ALICE, "deployments.apps", deployment(json!({}), op("operator-2")), deployment(json!({"x": "y"}), op("operator-2"))), Outcome::Allow),
        // a status write persists no spec
        (write("UPDATE", ALICE, "deployments.apps/status", deployment(json!({}), json!({})), deployment(json!({}), op("operator-2"))), Outcome::Allow),
        // the resource-claim controller copies a ResourceClaimTemplate's spec.metadata
        (write("CREATE", ALICE, "resourceclaimtemplates.resource.k8s.io", Value::Null, claim_template(op("operator-2"))), Outcome::Deny(vec![
            r#"label camel.apache.org/operator.id in spec: identity from none to "operator-2""#.to_owned()])),
        (write("CREATE", operator_1, "resourceclaimtemplates.resource.k8s.io", Value::Null, claim_template(op("operator-1"))), Outcome::Allow),
    ];
    for (request, expected) in rows {
        assert_eq!(decide(&request, &settings), expected, "{request}");
    }
    let broken = write(
        "CREATE",
        ALICE,
        "deployments.apps",
        Value::Null,
        json!({"spec": {"template": {"metadata": {"labels": ["x"]}}}}),
    );
    assert_eq!(
        decide(&broken, &settings),
        Outcome::Unreadable(
            "object.spec.template.metadata.labels: invalid type: sequence, expected a map"
                .to_owned()
        )
    );
}

#[test]
fn a_template_new_in_an_update_moves_no_owner() {
    let olm = json!({
        "ownerMarks": [{"label": "olm.operatorframework.io/owner-name",
                         "kindKey": "olm.operatorframework.io/owner-kind",
                         "clusterKinds": ["ClusterExtension"]}],
    });
    let owned = |claims: Value| {
        json!({"metadata": {"name": "x",
            "labels": {"olm.operatorframework.io/owner-kind": "ClusterExtension",
                       "olm.operatorframework.io/owner-name": "a"},
            "annotations": {"single-owner-policy.io/offer": "olm.operatorframework.io/owner-name: ClusterExtension.a -> ClusterExtension.b"}},
            "spec": {"volumeClaimTemplates": claims}})
    };
    let mut request = write(
        "UPDATE",
        ALICE,
        "deployments.apps",
        owned(json!([])),
        owned(json!([{"metadata": {"name": "data"}}])),
    );
    request["kind"]["kind"] = json!("StatefulSet");
    assert_eq!(decide(&request, &olm), Outcome::Allow);
}

#[test]
fn finishing_a_deletion_under_way_needs_no_owner() {
    let writes = camel_k(json!({"writes": "Owner"}));
    let map = |finalizers: Value, data: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "x", "labels": {"camel.apache.org/operator.id": "operator-1"},
                            "finalizers": finalizers, "deletionTimestamp": "2026-12-01T10:00:00Z",
                            "deletionGracePeriodSeconds": 0},
               "data": {"k": data}})
    };
    let held = map(json!(["example.com/cleanup"]), "v");
    let live = |data: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "x", "labels": {"camel.apache.org/operator.id": "operator-1"}},
               "data": {"k": data}})
    };
    #[rustfmt::skip]
    let rows = [
        (write("UPDATE", ALICE, "configmaps", held.clone(), map(json!([]), "v")), true),
        (write("DELETE", ALICE, "configmaps", held.clone(), Value::Null), true),
        (write("UPDATE", ALICE, "configmaps", held.clone(), map(json!([]), "w")), false),
        // no deletion under way: a write like any other
        (write("UPDATE", ALICE, "configmaps", live("v"), live("w")), false),
    ];
    for (request, allowed) in rows {
        let outcome = decide(&request, &writes);
        assert_eq!(outcome == Outcome::Allow, allowed, "{request}\n{outcome:?}");
    }
}

#[test]
fn a_value_that_names_no_owner_freezes_nothing() {
    let olm = json!({
        "ownerMarks": [{"label": "appID", "clusterKinds": ["ClusterExtension"]}],
        "identities": [{"owners": ["ClusterExtension.a"], "users": ["olm"]}],
        "writes": "Owner",
    });
    let payments = json!({"metadata": {"name": "x", "labels": {"appID": "payments"}, "annotations": {"a": "1"}}});
    let changed = json!({"metadata": {"name": "x", "labels": {"appID": "payments"}, "annotations": {"a": "2"}}});
    let removed = json!({"metadata": {"name": "x", "labels": {}}});
    #[rustfmt::skip]
    let rows = [
        (write("UPDATE", ALICE, "configmaps", payments.clone(), changed), Outcome::Allow),
        (write("DELETE", ALICE, "configmaps", payments.clone(), Value::Null), Outcome::Allow),
        (write("UPDATE", ALICE, "configmaps", payments.clone(), removed), Outcome::Allow),
        // a new claim must still name an owner
        (write("CREATE", ("olm", &[][..]), "configmaps", Value::Null, payments), Outcome::Deny(vec![
            r#"label appID: owner value from none to "payments""#.to_owned()])),
    ];
    for (request, expected) in rows {
        assert_eq!(decide(&request, &olm), expected, "{request}");
    }
    // Camel K's empty operator id, stored: replaced as an adoption by whoever may set the new
    // owner, removed whatever `orphaning` says; never an owner change asking for an offer.
    let empty = owned_by("");
    #[rustfmt::skip]
    let rows = [
        (json!({"orphaning": "Deny"}), OPERATOR_1, owned_by("operator-1"), Outcome::Allow),
        (json!({"orphaning": "Deny"}), OPERATOR_1, json!({"labels": {}}), Outcome::Allow),
        (json!({"adoption": "Deny"}), OPERATOR_1, owned_by("operator-1"), Outcome::Deny(vec![
            r#"label camel.apache.org/operator.id: adoption from "" to "operator-1""#.to_owned()])),
        (json!({}), ALICE.0, owned_by("operator-1"), Outcome::Deny(vec![
            r#"label camel.apache.org/operator.id: identity from "" to "operator-1""#.to_owned()])),
        (json!({}), ALICE.0, owned_by(""), Outcome::Allow),
    ];
    for (extra, user, new, expected) in rows {
        let request = integration("UPDATE", user, empty.clone(), new);
        assert_eq!(
            decide(&request, &camel_k(extra.clone())),
            expected,
            "{extra} {request}"
        );
    }
}

/// Each denial carries the reason that says what was wrong and what to do instead (the texts
/// are violation.rs's): the offer an owner change needs, the requester and what it acts for,
/// what is wrong with an offer.
#[test]
fn each_denial_carries_its_reason() {
    let app_id = json!({"ownerMarks": [{"label": "appID", "clusterKinds": ["ClusterExtension"],
                                          "namespacedKinds": ["Extension"]}]});
    let crd = |old: Value, new: Value| {
        json!({
            "kind": {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition"},
            "operation": "UPDATE", "name": "foos.example.com", "userInfo": {"username": "alice"},
            "oldObject": {"metadata": old}, "object": {"metadata": new},
        })
    };
    let offer = |labels: Value, to: &str| json!({"labels": labels, "annotations": {"single-owner-policy.io/offer": format!("appID: ClusterExtension.a -> {to}")}});
    let owned = json!({"appID": "ClusterExtension.a"});
    let no_identities = camel_k(json!({"identities": []}));
    type Because = fn(&Reason) -> bool;
    #[rustfmt::skip]
    let rows: [(Value, Value, &str, Because); 7] = [
        (integration("UPDATE", OPERATOR_1, owned_by("operator-1"), owned_by("operator-2")), no_identities,
         r#"label camel.apache.org/operator.id: owner change from "operator-1" to "operator-2""#,
         |r| matches!(r, Reason::OwnerChange { mark: "camel.apache.org/operator.id", pending: None, .. })),
        (integration("CREATE", "alice", Value::Null, owned_by("operator-1")), camel_k(json!({})),
         r#"label camel.apache.org/operator.id: identity from none to "operator-1""#,
         |r| matches!(r, Reason::NotActing(NotActing { act: Act::Set, user: "alice", standing: Standing::ActsFor(_), .. }))),
        (integration("UPDATE", OPERATOR_1, owned_by("operator-2"), json!({})), camel_k(json!({})),
         r#"label camel.apache.org/operator.id: identity from "operator-2" to none"#,
         |r| matches!(r, Reason::NotActing(NotActing { act: Act::Remove, user: OPERATOR_1, .. }))),
        (integration("DELETE", "alice", owned_by("operator-1"), Value::Null), camel_k(json!({"writes": "Owner"})),
         r#"label camel.apache.org/operator.id: owner writes owned by "operator-1""#,
         |r| matches!(r, Reason::NotActing(NotActing { act: Act::Write, .. }))),
        (crd(json!({}), offer(json!({}), "ClusterExtension.b")), app_id.clone(),
         r#"annotation single-owner-policy.io/offer: offer owned by none"#,
         |r| matches!(r, Reason::OfferOfNothing { .. })),
        (crd(json!({"labels": owned}), offer(owned.clone(), "ClusterExtension.a")), app_id.clone(),
         r#"annotation single-owner-policy.io/offer: offer owned by "ClusterExtension.a""#,
         |r| matches!(r, Reason::OfferToItself { to: "ClusterExtension.a" })),
        (crd(json!({"labels": owned}), offer(owned.clone(), "Extension.team-a.b")), app_id,
         r#"annotation single-owner-policy.io/offer: offer owned by "ClusterExtension.a""#,
         |r| matches!(r, Reason::OfferToUnfit { to: "Extension.team-a.b", why: Unfit::Scope(_) })),
    ];
    for (request, settings, summary, because) in rows {
        let (outcome, found) = judged(&request, &settings, |reasons| {
            reasons.iter().any(|reason| because(reason))
        });
        assert_eq!(
            outcome,
            Outcome::Deny(vec![summary.to_owned()]),
            "{request}"
        );
        assert!(found, "{request}");
    }
}

#[test]
fn stamping_and_consumed_offers_mutate() {
    let stamp = camel_k(json!({"stamp": true}));
    let create = integration("CREATE", OPERATOR_1, Value::Null, json!({}));
    assert_eq!(
        decide(&create, &stamp),
        Outcome::Mutate(Mutation {
            annotations: Vec::new(),
            labels: vec![(
                "camel.apache.org/operator.id".to_owned(),
                "operator-1".to_owned()
            )],
            remove_annotation: None,
        })
    );
    let accepted = integration(
        "UPDATE",
        OPERATOR_1,
        offered("operator-2", "operator-1"),
        json!({"labels": {"camel.apache.org/operator.id": "operator-1"},
               "annotations": {"single-owner-policy.io/offer": "camel.apache.org/operator.id: operator-2 -> operator-1"}}),
    );
    assert_eq!(
        decide(&accepted, &stamp),
        Outcome::Mutate(Mutation {
            annotations: Vec::new(),
            labels: Vec::new(),
            remove_annotation: Some("single-owner-policy.io/offer".to_owned()),
        })
    );
    // Deployed validating, the accepting update must consume the offer itself.
    assert_eq!(
        decide(&accepted, &camel_k(json!({}))),
        Outcome::Deny(vec![
            r#"annotation single-owner-policy.io/offer: offer from "operator-2" to "operator-1""#
                .to_owned()
        ])
    );
}

#[test]
fn every_violation_is_reported_once() {
    let settings = json!({"ownerMarks": [
        {"label": "appID", "clusterKinds": ["ClusterExtension"]},
        {"label": "camel.apache.org/operator.id"}]});
    let side = |app_id: &str, operator: &str| json!({"labels": {"appID": app_id, "camel.apache.org/operator.id": operator}});
    let request = integration(
        "UPDATE",
        "alice",
        side("ClusterExtension.a", "operator-1"),
        side("ClusterExtension.b", "operator-2"),
    );
    let Outcome::Deny(messages) = decide(&request, &settings) else {
        panic!("not denied");
    };
    let keys: Vec<_> = messages
        .iter()
        .map(|message| message.split_once(':').unwrap().0)
        .collect();
    assert_eq!(keys, ["label appID", "label camel.apache.org/operator.id"]);
}

/// The audit scanner's replay of a stored object: CREATE, an empty `userInfo`.
fn replay(kind: Value, namespace: &str, metadata: Value) -> Value {
    json!({
        "uid": "5c8e3f0a-1b2d-4e6f-8a9b-0c1d2e3f4a5b", "kind": kind,
        "operation": "CREATE", "namespace": namespace, "name": "x", "userInfo": {},
        "object": {"metadata": metadata},
    })
}

#[test]
fn an_audit_replay_judges_the_stored_state_not_an_act() {
    let crd = json!({"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition"});
    let config_map = json!({"group": "", "version": "v1", "kind": "ConfigMap"});
    let olm = json!({
        "ownerMarks": [{"label": "olm.operatorframework.io/owner-name",
                         "kindKey": "olm.operatorframework.io/owner-kind",
                         "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}],
        "identities": [{"owners": ["ClusterExtension.*"], "users": ["olm"]}],
        "writes": "Owner", "stamp": true, "adoption": "Deny",
    });
    let pair = |kind: &str, name: &str| {
        json!({"labels": {"olm.operatorframework.io/owner-kind": kind,
                          "olm.operatorframework.io/owner-name": name}})
    };
    let offered = |owner: Value, to: &str| {
        let mut metadata = owner;
        metadata["annotations"] = json!({"single-owner-policy.io/offer": format!("olm.operatorframework.io/owner-name: ClusterExtension.a -> {to}")});
        metadata
    };
    #[rustfmt::skip]
    let rows = [
        // owned correctly, under identities, `writes: Owner`, `stamp` and `adoption: Deny`
        (replay(crd.clone(), "", pair("ClusterExtension", "cert-manager")), Outcome::Allow),
        (replay(config_map.clone(), "team-a", pair("Extension", "team-a.argocd")), Outcome::Allow),
        // unowned: nothing to report, and nothing stamped
        (replay(crd.clone(), "", json!({})), Outcome::Allow),
        (replay(crd.clone(), "", offered(pair("ClusterExtension", "a"), "ClusterExtension.b")), Outcome::Allow),
        (replay(crd.clone(), "", pair("Extension", "team-a.argocd")), Outcome::Deny(vec![
            r#"label olm.operatorframework.io/owner-name: cluster scope owned by "Extension.team-a.argocd""#.to_owned()])),
        (replay(config_map.clone(), "team-b", pair("Extension", "team-a.argocd")), Outcome::Deny(vec![
            r#"label olm.operatorframework.io/owner-name: namespace scope owned by "Extension.team-a.argocd""#.to_owned()])),
        (replay(crd.clone(), "", json!({"labels": {"olm.operatorframework.io/owner-name": "cert-manager"}})), Outcome::Deny(vec![
            r#"label olm.operatorframework.io/owner-name: owner value owned by name "cert-manager" without a kind"#.to_owned()])),
        (replay(crd.clone(), "", offered(json!({}), "ClusterExtension.b")), Outcome::Deny(vec![
            r#"annotation single-owner-policy.io/offer: offer owned by none"#.to_owned()])),
        (replay(crd, "", offered(pair("ClusterExtension", "a"), "Extension.team-a.b")), Outcome::Deny(vec![
            r#"annotation single-owner-policy.io/offer: offer owned by "ClusterExtension.a""#.to_owned()])),
    ];
    for (request, expected) in rows {
        assert_eq!(decide(&request, &olm), expected, "{request}");
    }
}

#[test]
fn only_what_the_audit_scanner_sends_is_an_audit_replay() {
    let settings = camel_k(json!({"stamp": true}));
    // What the API server sends: a user name, or groups, and always `requestResource`.
    let integrations =
        json!({"group": "camel.apache.org", "version": "v1", "resource": "integrations"});
    #[rustfmt::skip]
    let requesters = [
        (json!({"username": "system:anonymous", "groups": ["system:unauthenticated"]}), false),
        (json!({"username": "alice"}), false),
        (json!({"username": OPERATOR_1, "groups": common::groups_of(OPERATOR_1)}), true),
        (json!({"username": "", "groups": ["system:authenticated"]}), false),
        (json!({}), false),
    ];
    for (user_info, acts) in requesters {
        let mut request = replay(
            json!({"group": "camel.apache.org", "version": "v1", "kind": "Integration"}),
            "shop",
            json!({}),
        );
        request["userInfo"] = user_info.clone();
        request["requestResource"] = integrations.clone();
        let user = user_info.to_string();
        let stamped = decide(&request, &settings);
        assert_eq!(stamped == Outcome::Allow, !acts, "{user}");
        request["object"]["metadata"] = owned_by("operator-2");
        assert_eq!(rules(&request, &settings), [Rule::Identity], "{user}");
    }
    // The scanner's own request (no user, no groups, no requestResource) is a replay: the
    // state alone is judged, and a correctly owned object passes.
    let mut replayed = replay(
        json!({"group": "camel.apache.org", "version": "v1", "kind": "Integration"}),
        "shop",
        owned_by("operator-2"),
    );
    replayed["userInfo"] = json!({});
    assert_eq!(decide(&replayed, &settings), Outcome::Allow);
    let mut update = integration("UPDATE", "", owned_by("operator-1"), owned_by("operator-2"));
    update["userInfo"] = json!({});
    // An UPDATE without a user name is no replay: it is judged as an act.
    assert_eq!(rules(&update, &camel_k(json!({}))), [Rule::OwnerChange]);
}

#[test]
fn a_subresource_write_is_judged_only_when_it_changes_what_the_rules_guard() {
    let status = |old: Value, new: Value, kind: Value| {
        let mut request = integration("UPDATE", "system:node:node-1", old, new);
        request["subResource"] = json!("status");
        request["kind"] = kind;
        request
    };
    let integration_kind =
        json!({"group": "camel.apache.org", "version": "v1", "kind": "Integration"});
    let scale = json!({"group": "autoscaling", "version": "v1", "kind": "Scale"});
    let writes = camel_k(json!({"writes": "Owner"}));
    #[rustfmt::skip]
    let rows = [
        (status(owned_by("operator-1"), owned_by("operator-1"), integration_kind.clone()), Outcome::Allow),
        (status(json!({}), owned_by("operator-1"), scale), Outcome::Allow),
        // judged like a write of the object itself: `writes: Owner` included
        (status(owned_by("operator-1"), offered("operator-1", "operator-2"), integration_kind.clone()),
         Outcome::Deny(vec![
            r#"label camel.apache.org/operator.id: owner writes owned by "operator-1""#.to_owned(),
            r#"annotation single-owner-policy.io/offer: offer owned by "operator-1""#.to_owned()])),
        (status(owned_by("operator-1"), json!({}), integration_kind.clone()),
         Outcome::Deny(vec![r#"label camel.apache.org/operator.id: identity from "operator-1" to none"#.to_owned()])),
        // a custom resource's status strategy stores none of the metadata
        (status(owned_by("operator-1"), json!({"labels": {"camel.apache.org/operator.id": "operator-1"},
            "annotations": {"example.com/note": "x"}, "finalizers": ["orphan"]}), integration_kind),
         Outcome::Allow),
    ];
    for (request, expected) in rows {
        assert_eq!(decide(&request, &writes), expected, "{request}");
    }
    // Subresources that write what an owner declared, and a Binding, which the API server
    // copies onto its Pod: a `pods/<subresource>` request in `shop` by `user`.
    let pod = |operation: &str, subresource: &str, user, old: Value, new: Value| {
        let mut request = write(operation, user, &format!("pods/{subresource}"), old, new);
        if subresource == "binding" {
            request["kind"] = json!({"group": "", "version": "v1", "kind": "Binding"});
        }
        request
    };
    let (a, debugged) = (
        labelled("operator-1"),
        json!({"metadata": {"name": "x",
        "labels": {"camel.apache.org/operator.id": "operator-1"}},
        "spec": {"ephemeralContainers": [{"name": "debugger", "image": "busybox"}]}}),
    );
    let annotated = json!({"metadata": {"name": "x",
        "labels": {"camel.apache.org/operator.id": "operator-1"},
        "annotations": {"example.com/note": "x"}}});
    let operator_1 = (
        OPERATOR_1,
        &["system:serviceaccounts", "system:serviceaccounts:camel-k"][..],
    );
    let bound =
        |metadata: Value| json!({"metadata": metadata, "target": {"kind": "Node", "name": "n1"}});
    let any = camel_k(json!({}));
    use Rule::{Binding, OwnerWrites};
    #[rustfmt::skip]
    let rows: Vec<(Value, &Value, &[Rule])> = vec![
        (pod("UPDATE", "ephemeralcontainers", ALICE, a.clone(), debugged.clone()), &writes, &[OwnerWrites]),
        (pod("UPDATE", "resize", ALICE, a.clone(), a.clone()), &writes, &[OwnerWrites]),
        // a Pod's status strategy stores its annotations and finalizers
        (pod("UPDATE", "status", ALICE, a.clone(), annotated.clone()), &writes, &[OwnerWrites]),
        (pod("UPDATE", "status", ALICE, a.clone(), a.clone()), &writes, &[]),
        (pod("UPDATE", "status", ALICE, a.clone(), annotated), &any, &[]),
        (pod("UPDATE", "ephemeralcontainers", operator_1, a.clone(), debugged.clone()), &writes, &[]),
        (pod("UPDATE", "ephemeralcontainers", ALICE, a.clone(), debugged), &any, &[]),
        (pod("CREATE", "binding", ALICE, Value::Null, bound(json!({"name": "x",
            "labels": {"camel.apache.org/operator.id": "operator-2"}}))), &any, &[Binding]),
        (pod("CREATE", "binding", ALICE, Value::Null, bound(json!({"name": "x",
            "annotations": {"example.com/zone": "a"}}))), &writes, &[]),
    ];
    for (request, settings, denied) in rows {
        assert_eq!(rules(&request, settings), denied, "{request}");
    }
}

/// Settings guarding Argo CD's tracking id and Helm's release annotations (no identities),
/// and the metadata of a ConfigMap `shop/web-config` under them.
fn tools() -> Value {
    json!({"ownerMarks": [
        {"annotation": "argocd.argoproj.io/tracking-id", "format": "ArgoCDTrackingID"},
        {"annotation": "meta.helm.sh/release-name", "namespaceKey": "meta.helm.sh/release-namespace"}]})
}

fn config_map(operation: &str, old: Value, new: Value) -> Value {
    let side = |annotations: Value| match annotations {
        Value::Null => Value::Null,
        annotations => json!({"metadata": {"name": "web-config", "annotations": annotations}}),
    };
    json!({
        "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "operation": operation, "namespace": "shop", "name": "web-config",
        "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
        "oldObject": side(old), "object": side(new),
    })
}

const TRACKED: &str = "guestbook:/ConfigMap:shop/web-config";

#[test]
fn an_object_has_one_owner_across_tools() {
    let release =
        json!({"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "shop"});
    let tracked = json!({"argocd.argoproj.io/tracking-id": TRACKED});
    let both = json!({"argocd.argoproj.io/tracking-id": TRACKED,
                      "meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "shop"});
    // Denied as a second owner beside `by`'s, under `by_mark`.
    let second = |mark: &str, owner: &str, by: &'static str, by_mark: &'static str| {
        let outcome = Outcome::Deny(vec![format!(
            r#"annotation {mark}: one owner from none to "{owner}""#
        )]);
        (outcome, Some((by, by_mark)))
    };
    let allowed = || (Outcome::Allow, None);
    #[rustfmt::skip]
    let rows = [
        // an Application syncing a release's object
        (config_map("UPDATE", release.clone(), both.clone()),
         second("argocd.argoproj.io/tracking-id", "guestbook", "shop/web", "meta.helm.sh/release-name")),
        // a release installing an Application's object
        (config_map("UPDATE", tracked.clone(), both.clone()),
         second("meta.helm.sh/release-name", "shop/web", "guestbook", "argocd.argoproj.io/tracking-id")),
        // both at once: the first mark in the settings is the owner
        (config_map("CREATE", Value::Null, both.clone()),
         second("meta.helm.sh/release-name", "shop/web", "guestbook", "argocd.argoproj.io/tracking-id")),
        // two owners from before the policy are not re-judged
        (config_map("UPDATE", both.clone(), both.clone()), allowed()),
        // a copied tracking id names no owner
        (config_map("UPDATE", release.clone(), json!({"argocd.argoproj.io/tracking-id": "guestbook:/ConfigMap:shop/other",
            "meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "shop"})), allowed()),
        // swapping tools in one update is a removal and an adoption, allowed without identities
        (config_map("UPDATE", release.clone(), tracked.clone()), allowed()),
    ];
    for (request, (expected, beside)) in rows {
        let (outcome, owner) = judged(&request, &tools(), |reasons| match reasons[..] {
            [Reason::SecondOwner { under, owner, .. }] => Some((owner.id(), under.key.clone())),
            _ => None,
        });
        assert_eq!(outcome, expected, "{request}");
        let beside = beside.map(|(by, mark)| (by.to_owned(), mark.to_owned()));
        assert_eq!(owner, beside, "{request}");
    }
    // Marks that name the same owner may both be set.
    let mut linked = tools();
    linked["ownerMarks"][1]["sameOwnerAs"] = json!(["argocd.argoproj.io/tracking-id"]);
    assert_eq!(
        decide(&config_map("UPDATE", release, both), &linked),
        Outcome::Allow
    );
}

#[test]
fn an_offer_hands_over_across_tools_and_lives_no_longer_than_its_owner() {
    let offer = "single-owner-policy.io/offer";
    let across = json!({"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "shop",
                        offer: "meta.helm.sh/release-name: shop/web -> argocd.argoproj.io/tracking-id: guestbook"});
    let settings = json!({"ownerMarks": tools()["ownerMarks"], "orphaning": "Deny",
        "adoption": "Deny", "identities": [{"owners": ["guestbook"], "users": ["alice"]}]});
    // The Application takes it: the release's mark goes without its owner's requester.
    let taken = config_map(
        "UPDATE",
        across.clone(),
        json!({"argocd.argoproj.io/tracking-id": TRACKED}),
    );
    assert_eq!(decide(&taken, &settings), Outcome::Allow);
    // Another Application does not.
    let other = config_map(
        "UPDATE",
        across,
        json!({"argocd.argoproj.io/tracking-id": "other:/ConfigMap:shop/web-config"}),
    );
    let Outcome::Deny(messages) = decide(&other, &settings) else {
        panic!("not denied");
    };
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("annotation meta.helm.sh/release-name: orphaning ")),
        "{messages:?}"
    );
    // A stale offer: made by shop/web, the release is shop/canary now.
    let stale = json!({"meta.helm.sh/release-name": "canary", "meta.helm.sh/release-namespace": "shop",
                       offer: "meta.helm.sh/release-name: shop/web -> shop/web-v2"});
    let moved =
        json!({"meta.helm.sh/release-name": "web-v2", "meta.helm.sh/release-namespace": "shop"});
    assert_eq!(
        decide(&config_map("UPDATE", stale, moved), &tools()),
        Outcome::Deny(vec![
            r#"annotation meta.helm.sh/release-name: owner change from "shop/canary" to "shop/web-v2""#
                .to_owned()
        ])
    );
}

#[test]
fn stamping_writes_the_mark_where_it_lives_and_never_a_second_owner() {
    let settings = json!({"ownerMarks": [{"annotation": "camel.apache.org/operator.id"}],
        "identities": [{"owners": ["operator-1"], "users": [OPERATOR_1]}], "stamp": true});
    let create = integration("CREATE", OPERATOR_1, Value::Null, json!({}));
    assert_eq!(
        decide(&create, &settings),
        Outcome::Mutate(Mutation {
            annotations: vec![(
                "camel.apache.org/operator.id".to_owned(),
                "operator-1".to_owned()
            )],
            labels: Vec::new(),
            remove_annotation: None,
        })
    );
    let mut two = settings.clone();
    two["ownerMarks"] = json!([{"label": "appID"}, {"annotation": "camel.apache.org/operator.id"}]);
    let owned = integration(
        "CREATE",
        OPERATOR_1,
        Value::Null,
        json!({"labels": {"appID": "operator-1"}}),
    );
    assert_eq!(decide(&owned, &two), Outcome::Allow);
}

#[test]
fn a_stamp_only_twin_stamps_and_consumes_but_denies_nothing() {
    let twin = camel_k(json!({"stamp": true, "stampOnly": true}));
    let create = integration("CREATE", OPERATOR_1, Value::Null, json!({}));
    let stamp = Mutation {
        labels: vec![(
            "camel.apache.org/operator.id".to_owned(),
            "operator-1".to_owned(),
        )],
        ..Mutation::default()
    };
    assert_eq!(decide(&create, &twin), Outcome::Mutate(stamp));
    // A takeover the validating twin denies passes the stamping twin untouched.
    let taken = integration(
        "UPDATE",
        "alice",
        owned_by("operator-1"),
        owned_by("operator-2"),
    );
    assert_eq!(decide(&taken, &twin), Outcome::Allow);
    assert!(matches!(
        decide(&taken, &camel_k(json!({}))),
        Outcome::Deny(_)
    ));
    // The offer its mark's move consumed is removed, as the validating twin expects.
    let accepted = integration(
        "UPDATE",
        "alice",
        offered("operator-1", "operator-2"),
        json!({"labels": {"camel.apache.org/operator.id": "operator-2"},
               "annotations": {"single-owner-policy.io/offer": "camel.apache.org/operator.id: operator-1 -> operator-2"}}),
    );
    assert_eq!(
        decide(&accepted, &twin),
        Outcome::Mutate(Mutation {
            remove_annotation: Some("single-owner-policy.io/offer".to_owned()),
            ..Mutation::default()
        })
    );
}
