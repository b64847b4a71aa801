//! Bindings: the API server copies a Binding's labels and annotations onto its Pod (20).

use proptest::prelude::*;
use proptest::sample::{select, subsequence};
use serde_json::{Value, json};

use crate::check;
use crate::model::respond;

/// 20. A Binding never carries an owner onto a Pod (docs/rules.md, "Subresources that write what
///     an owner declared"): a `pods/binding` CREATE whose Binding carries a guarded mark — any
///     mark's key or companion, valid or not — or the offer is denied, naming only the `binding`
///     and `offer` rules, whoever sends it and whatever owner it names, unless the requester is
///     exempt (bypassed, with a warning) or the scheduler (trusted with Bindings); one that
///     carries none is allowed without a warning.
#[test]
fn a_binding_carries_no_owner_onto_a_pod() {
    let floors = [
        ("a Binding carrying a mark or the offer, denied", 15.0),
        ("a Binding carrying nothing guarded, allowed", 10.0),
        ("the scheduler's Binding, allowed", 5.0),
        (
            "an exempt requester's Binding carrying a mark, bypassed",
            3.0,
        ),
        (
            "a Binding carrying a mark by a requester bound to an owner, denied",
            3.0,
        ),
    ];
    check(
        bindings(),
        &floors,
        |(settings, guarded, binding, requester), tally| {
            let (user, groups) = requester;
            let request = json!({
                "uid": "b", "kind": {"group": "", "version": "v1", "kind": "Binding"},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "subResource": "binding", "requestSubResource": "binding",
                "requestKind": {"group": "", "version": "v1", "kind": "Binding"},
                "requestResource": {"group": "", "version": "v1", "resource": "pods"},
                "operation": "CREATE", "namespace": "shop", "name": "web-0",
                "userInfo": {"username": user, "groups": groups},
                "object": binding, "oldObject": null,
            });
            let response = respond(&request, &settings)?;
            let metadata = &request["object"]["metadata"];
            let carries = guarded
                .iter()
                .any(|(place, key)| metadata[place].get(key).is_some());
            let scheduler = user == "system:kube-scheduler";
            let exempt = user == "break-glass-admin";
            if scheduler || !carries {
                tally.count(scheduler, "the scheduler's Binding, allowed");
                tally.count(
                    !carries && !scheduler,
                    "a Binding carrying nothing guarded, allowed",
                );
                prop_assert!(response.plainly_accepted(), "{request}: {response:?}");
                return Ok(());
            }
            let rules = if exempt {
                &response.bypassed
            } else {
                &response.denied
            };
            prop_assert!(!rules.is_empty(), "{request}: {response:?}");
            for rule in rules {
                prop_assert!(
                    rule.ends_with(": binding") || rule.ends_with(": offer"),
                    "{rule}: {request}: {response:?}"
                );
            }
            prop_assert_eq!(response.accepted, exempt, "{}: {:?}", request, response);
            tally.count(!exempt, "a Binding carrying a mark or the offer, denied");
            tally.count(
                exempt,
                "an exempt requester's Binding carrying a mark, bypassed",
            );
            tally.count(
                !exempt && user == "system:serviceaccount:shop:installer",
                "a Binding carrying a mark by a requester bound to an owner, denied",
            );
            Ok(())
        },
    );
}

/// Settings, their guarded keys as `(metadata field, key)` (the offer among them), a Binding
/// whose labels and annotations draw on those keys and others, and its requester.
type BindingCase = (
    Value,
    Vec<(&'static str, &'static str)>,
    Value,
    (String, Vec<String>),
);

fn bindings() -> impl Strategy<Value = BindingCase> {
    const OFFER: &str = "single-owner-policy.io/offer";
    let common = json!({"exemptions": {"users": ["break-glass-admin"]}});
    let installer = |owner: &str| json!([{"owners": [owner], "users": ["system:serviceaccount:shop:installer"]}]);
    let setups: Vec<(Value, Vec<(&'static str, &'static str)>)> = vec![
        (
            json!({"ownerMarks": [{"label": "appID", "clusterKinds": ["ClusterExtension"]}],
                   "identities": installer("ClusterExtension.shop")}),
            vec![("labels", "appID")],
        ),
        (
            json!({"ownerMarks": [{"annotation": "meta.helm.sh/release-name", "namespaceKey": "meta.helm.sh/release-namespace"}],
                   "identities": installer("shop/web")}),
            vec![
                ("annotations", "meta.helm.sh/release-name"),
                ("annotations", "meta.helm.sh/release-namespace"),
            ],
        ),
        (
            json!({"ownerMarks": [{"annotation": "camel.apache.org/operator.id"}], "writes": "Owner",
                   "identities": installer("operator-1")}),
            vec![("annotations", "camel.apache.org/operator.id")],
        ),
    ];
    let setups: Vec<_> = setups
        .into_iter()
        .map(|(marks, mut guarded)| {
            let mut settings = common.clone();
            settings
                .as_object_mut()
                .unwrap()
                .extend(marks.as_object().unwrap().clone());
            guarded.push(("annotations", OFFER));
            (settings, guarded)
        })
        .collect();
    let keys: Vec<(&'static str, &'static str)> = vec![
        ("labels", "appID"),
        ("labels", "app"),
        ("annotations", "meta.helm.sh/release-name"),
        ("annotations", "meta.helm.sh/release-namespace"),
        ("annotations", "camel.apache.org/operator.id"),
        ("annotations", "example.com/zone"),
        ("annotations", OFFER),
    ];
    let values = select(vec![
        "ClusterExtension.shop",
        "ClusterExtension.other",
        "web",
        "shop",
        "operator-1",
        "",
        "appID: ClusterExtension.shop -> ClusterExtension.other",
    ]);
    let requesters = select(vec![
        ("alice", vec!["system:authenticated"]),
        (
            "system:serviceaccount:shop:installer",
            vec![
                "system:serviceaccounts",
                "system:serviceaccounts:shop",
                "system:authenticated",
            ],
        ),
        ("system:kube-scheduler", vec!["system:authenticated"]),
        ("break-glass-admin", vec!["system:authenticated"]),
    ]);
    (
        select(setups),
        subsequence(keys.clone(), 0..=3),
        proptest::collection::vec(values, 3),
        requesters,
    )
        .prop_map(|((settings, guarded), chosen, values, (user, groups))| {
            let mut metadata =
                json!({"name": "web-0", "namespace": "shop", "labels": {}, "annotations": {}});
            for ((place, key), value) in chosen.into_iter().zip(values) {
                metadata[place][key] = json!(value);
            }
            let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": metadata,
                                 "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}});
            let requester = (
                user.to_owned(),
                groups.into_iter().map(str::to_owned).collect(),
            );
            (settings, guarded, binding, requester)
        })
}
