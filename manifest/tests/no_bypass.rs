//! The proof of no bypass: whenever the policy denies, mutates or warns on a request, the
//! generated match conditions send it — on every request fixture of the repository under every
//! example's settings and the defaults, on generated requests under generated settings, and on
//! the generated traffic mix. And the conditions never error, whatever the request's shape.
//!
//! Requests the policy refuses as unreadable (HTTP 400: an UPDATE without `oldObject`, a label
//! value that is not a string, …) are outside the proof: the API server never sends them.

mod support;

use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::{Value, json};
use single_owner_manifest::{MatchCondition, match_conditions, traffic};
use single_owner_policy::Settings;
use support::{Conditions, Verdict, settings, verdict};

const SETUPS: [&str; 4] = ["app-id", "olm-v1", "camel-k", "helm"];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// Every example's settings and the defaults, as (name, settings, the payload's JSON).
fn setups() -> Vec<(String, Settings, Value)> {
    let mut setups: Vec<_> = SETUPS
        .iter()
        .map(|setup| {
            let path = root().join(format!("examples/{setup}/settings.yaml"));
            let (parsed, json) = settings(&fs::read_to_string(path).unwrap());
            ((*setup).to_owned(), parsed, json)
        })
        .collect();
    let (parsed, json) = settings("{}");
    setups.push(("defaults".to_owned(), parsed, json));
    setups
}

/// Every request fixture: `test_data/*.json` and the examples' samples.
fn fixtures() -> Vec<(PathBuf, Value)> {
    let mut folders = vec![root().join("test_data")];
    folders.extend(
        SETUPS
            .iter()
            .map(|setup| root().join("examples").join(setup)),
    );
    let mut fixtures = Vec::new();
    for folder in folders {
        for entry in fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path
                .extension()
                .is_some_and(|extension| extension == "json")
            {
                let request = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
                fixtures.push((path, request));
            }
        }
    }
    fixtures.sort_by(|a, b| a.0.cmp(&b.0));
    fixtures
}

/// Checks every fixture under every setup with these conditions (`None`: the generated ones);
/// returns the bypasses found, and counts.
fn bypasses(conditions: Option<&[MatchCondition]>) -> (Vec<String>, usize, usize) {
    let (mut bypasses, mut acted, mut checked) = (Vec::new(), 0, 0);
    for (setup, parsed, json) in setups() {
        let conditions = match conditions {
            Some(conditions) => Conditions::compile(conditions),
            None => Conditions::of(&parsed),
        };
        for (path, request) in fixtures() {
            let name = path.strip_prefix(root()).unwrap().display();
            let send = conditions
                .send(&request)
                .unwrap_or_else(|error| panic!("{setup}, {name}: {error}"));
            checked += 1;
            if verdict(&request, &json) == Verdict::Acted {
                acted += 1;
                if !send {
                    bypasses.push(format!("{setup}: {name}"));
                }
            }
        }
    }
    (bypasses, acted, checked)
}

#[test]
fn no_fixture_bypasses_the_policy_under_any_setup() {
    let (bypasses, acted, checked) = bypasses(None);
    assert!(bypasses.is_empty(), "not sent, yet acted on: {bypasses:#?}");
    // The proof is not vacuous: the fixtures hold denials, stamps and exempt warnings.
    assert!(
        checked >= 200 && acted >= 60,
        "{acted} acted on of {checked}"
    );
}

/// The checker catches a condition that forgets a side: one that reads only the new object
/// misses every orphaning and every DELETE, so the fixtures must find it out.
#[test]
fn a_condition_without_the_stored_object_is_caught() {
    let weakened = [MatchCondition {
        name: "new-object-only".to_owned(),
        expression: "object != null && has(object.metadata) && has(object.metadata.labels) \
                     && ('appID' in object.metadata.labels \
                         || 'camel.apache.org/operator.id' in object.metadata.labels \
                         || 'olm.operatorframework.io/owner-name' in object.metadata.labels)"
            .to_owned(),
    }];
    let (bypasses, _, _) = bypasses(Some(&weakened));
    for expected in [
        "helm: examples/helm/denied-job-deleted-by-other-release-hook.json",
        "helm: examples/helm/denied-crd-orphaned-by-admin.json",
        "helm: test_data/crd-update-orphaning.json",
    ] {
        assert!(
            bypasses.iter().any(|b| b == expected),
            "{expected} not caught: {bypasses:#?}"
        );
    }
}

#[test]
fn the_traffic_mix_never_bypasses_the_policy() {
    for (setup, parsed, json) in setups() {
        let conditions = Conditions::of(&parsed);
        for request in traffic::mix(&parsed, 50) {
            let send = conditions.send(&request.request).unwrap();
            let verdict = verdict(&request.request, &json);
            assert_ne!(verdict, Verdict::Unreadable, "{setup}: {}", request.request);
            assert!(
                send || verdict == Verdict::Allowed,
                "{setup}, {}: acted on, not sent: {}",
                request.category,
                request.request
            );
        }
    }
}

/// Shapes the API server sends, and some it does not: no condition errors on any of them.
#[test]
fn conditions_never_error_on_any_shape() {
    let objects = [
        Value::Null,
        json!({}),
        json!({"kind": "PodExecOptions", "command": ["sh"]}),
        json!({"metadata": {}}),
        json!({"metadata": {"name": "x"}}),
        json!({"metadata": {"labels": {}}}),
        json!({"metadata": {"annotations": {}}}),
        json!({"metadata": {"labels": {"app": "x"}, "annotations": {"other": "y"}}}),
        json!({"metadata": {"labels": {"appID": "ClusterExtension.a",
                                       "olm.operatorframework.io/owner-name": "a",
                                       "camel.apache.org/operator.id": "operator-1"},
                            "annotations": {"single-owner-policy.io/offer": "ClusterExtension.b"}}}),
    ];
    let user_infos = [
        json!({}),
        json!({"username": "alice"}),
        json!({"username": "system:serviceaccount:helm-releases:a", "groups": ["system:serviceaccounts"]}),
        json!({"groups": []}),
    ];
    let mut all_settings = setups();
    let (parsed, json) = settings(
        r#"{"ownerLabels": [{"key": "appID"}], "identities": [{"owners": ["*"], "groups": ["g:*"]}],
            "stamp": true, "writes": "Owner"}"#,
    );
    all_settings.push(("groups".to_owned(), parsed, json));
    let mut evaluated = 0;
    for (setup, parsed, _) in &all_settings {
        let conditions = Conditions::of(parsed);
        for operation in ["CREATE", "UPDATE", "DELETE", "CONNECT"] {
            for subresource in [None, Some(""), Some("status")] {
                for (index, old) in objects.iter().enumerate() {
                    for (other, new) in objects.iter().enumerate() {
                        let user_info = &user_infos[(index + other) % user_infos.len()];
                        let mut request = json!({
                            "uid": "1", "operation": operation, "name": "x",
                            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                            "userInfo": user_info, "object": new, "oldObject": old,
                        });
                        if let Some(subresource) = subresource {
                            request["subResource"] = json!(subresource);
                        }
                        if let Err(error) = conditions.send(&request) {
                            panic!("{setup}: {error} on {request}");
                        }
                        evaluated += 1;
                    }
                }
            }
        }
    }
    assert!(evaluated > 5_000);
}

/// Kubernetes' limits and names: at most 64 conditions, each name a qualified name.
#[test]
fn conditions_stay_within_kubernetes_limits() {
    for (setup, parsed, _) in setups() {
        let conditions = match_conditions(&parsed);
        assert!(conditions.len() <= single_owner_manifest::conditions::MAX_CONDITIONS);
        for condition in &conditions {
            let name = &condition.name;
            assert!(
                name.len() <= 63
                    && name.starts_with(|c: char| c.is_ascii_alphanumeric())
                    && name.ends_with(|c: char| c.is_ascii_alphanumeric())
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)),
                "{setup}: {name}"
            );
        }
        let mut names: Vec<_> = conditions.iter().map(|c| &c.name).collect();
        names.dedup();
        assert_eq!(names.len(), conditions.len(), "{setup}: names repeat");
    }
}

// Generated settings and requests.

/// Owner label entries to draw settings from.
fn entries() -> [Value; 4] {
    [
        json!({"key": "appID", "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}),
        json!({"key": "camel.apache.org/operator.id"}),
        json!({"key": "olm.operatorframework.io/owner-name",
               "kindKey": "olm.operatorframework.io/owner-kind",
               "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}),
        json!({"key": "example.com/owner", "clusterKinds": ["Team"]}),
    ]
}

fn identities() -> [Value; 5] {
    [
        json!({"owners": ["ClusterExtension.*"], "users": ["system:serviceaccount:olm:*"]}),
        json!({"owners": ["ClusterExtension.${name}"], "users": ["system:serviceaccount:helm-releases:*"]}),
        json!({"owners": ["operator-1"], "users": ["op-1"], "groups": ["camel:*"]}),
        json!({"owners": ["Extension.${namespace}.*"], "groups": ["system:serviceaccounts:*"]}),
        json!({"owners": ["Team.a"], "users": ["*:installer"]}),
    ]
}

const LABEL_KEYS: [&str; 6] = [
    "appID",
    "camel.apache.org/operator.id",
    "olm.operatorframework.io/owner-name",
    "olm.operatorframework.io/owner-kind",
    "example.com/owner",
    "app.kubernetes.io/name",
];

const ANNOTATION_KEYS: [&str; 3] = [
    "single-owner-policy.io/offer",
    "example.com/hand-over",
    "kubectl.kubernetes.io/last-applied-configuration",
];

const VALUES: [&str; 12] = [
    "ClusterExtension.a",
    "ClusterExtension.b",
    "Extension.team-a.x",
    "Extension.team-b.x",
    "a",
    "team-a.x",
    "operator-1",
    "operator-2",
    "Team.a",
    "ClusterExtension",
    "Bogus.x",
    "",
];

const USERS: [&str; 9] = [
    "alice",
    "root",
    "op-1",
    "system:serviceaccount:olm:controller",
    "system:serviceaccount:helm-releases:a",
    "system:serviceaccount:team-a:installer",
    "system:serviceaccount:kube-system:generic-garbage-collector",
    "system:node:node-1",
    "",
];

const GROUPS: [&str; 4] = [
    "admins",
    "camel:ops",
    "system:serviceaccounts:team-a",
    "system:authenticated",
];

/// Settings: one or two owner label entries, permissions, identities and the settings that
/// need them, exemptions and the transfer annotation; invalid combinations lose their
/// identities (and with them `writes: Owner` and `stamp`).
fn arb_settings() -> impl Strategy<Value = (Settings, Value)> {
    (
        proptest::sample::subsequence(entries().to_vec(), 1..=2),
        any::<(bool, bool, bool, bool)>(),
        proptest::sample::subsequence(identities().to_vec(), 0..=2),
        proptest::sample::subsequence(vec!["root", "op-1"], 0..=2),
        proptest::sample::subsequence(vec!["admins"], 0..=1),
        proptest::sample::select(vec![
            "single-owner-policy.io/offer",
            "example.com/hand-over",
        ]),
    )
        .prop_map(
            |(entries, (adoption, orphaning, owner, stamp), identities, users, groups, offer)| {
                let permission = |allow: bool| if allow { "Allow" } else { "Deny" };
                let mut settings = json!({
                    "ownerLabels": entries, "adoption": permission(adoption),
                    "orphaning": permission(orphaning),
                    "exemptions": {"users": users, "groups": groups},
                    "identities": identities, "transferAnnotation": offer,
                    "writes": if owner { "Owner" } else { "Any" }, "stamp": stamp,
                });
                let valid = |settings: &Value| {
                    Settings::from_json(settings.to_string().as_bytes())
                        .and_then(|parsed| parsed.validate().map(|()| parsed))
                };
                let parsed = valid(&settings).unwrap_or_else(|_| {
                    settings["identities"] = json!([]);
                    settings["writes"] = json!("Any");
                    settings["stamp"] = json!(false);
                    valid(&settings).expect("settings without identities are valid")
                });
                (parsed, settings)
            },
        )
}

/// An object's metadata: none, empty, or labels and annotations drawn from the pools.
fn arb_metadata() -> impl Strategy<Value = Value> {
    let map = |keys: &'static [&'static str]| {
        proptest::collection::btree_map(
            proptest::sample::select(keys.to_vec()),
            proptest::sample::select(VALUES.to_vec()),
            0..=3,
        )
    };
    prop_oneof![
        1 => Just(Value::Null),
        1 => Just(json!({})),
        8 => (proptest::option::of(map(&LABEL_KEYS)), proptest::option::of(map(&ANNOTATION_KEYS)))
            .prop_map(|(labels, annotations)| {
                let mut metadata = json!({"name": "x"});
                if let Some(labels) = labels {
                    metadata["labels"] = json!(labels);
                }
                if let Some(annotations) = annotations {
                    metadata["annotations"] = json!(annotations);
                }
                json!({"metadata": metadata})
            }),
    ]
}

/// The new object from the stored one: the same, a label or annotation set or removed, or
/// another object altogether.
fn arb_sides() -> impl Strategy<Value = (Value, Value)> {
    (
        arb_metadata(),
        arb_metadata(),
        0..4usize,
        proptest::sample::select(LABEL_KEYS.to_vec()),
        proptest::sample::select(ANNOTATION_KEYS.to_vec()),
        proptest::option::of(proptest::sample::select(VALUES.to_vec())),
    )
        .prop_map(|(old, other, mode, label, annotation, value)| {
            let mut new = old.clone();
            let edit = |new: &mut Value, map: &str, key: &str| {
                if new.get("metadata").is_none_or(Value::is_null) {
                    new["metadata"] = json!({});
                }
                let metadata = &mut new["metadata"];
                if metadata.get(map).is_none() {
                    metadata[map] = json!({});
                }
                match value {
                    Some(value) => metadata[map][key] = json!(value),
                    None => {
                        metadata[map].as_object_mut().unwrap().remove(key);
                    }
                }
            };
            match mode {
                0 => {}
                1 => edit(&mut new, "labels", label),
                2 => edit(&mut new, "annotations", annotation),
                _ => new = other,
            }
            (old, new)
        })
}

fn arb_request() -> impl Strategy<Value = Value> {
    let kinds = vec![
        ("apiextensions.k8s.io", "CustomResourceDefinition", false),
        ("", "ConfigMap", true),
        ("", "Namespace", false),
        ("autoscaling", "Scale", true),
        ("camel.apache.org", "Integration", true),
    ];
    (
        proptest::sample::select(vec![
            "CREATE", "CREATE", "UPDATE", "UPDATE", "UPDATE", "DELETE", "CONNECT",
        ]),
        proptest::sample::select(vec![
            None,
            None,
            None,
            Some(""),
            Some("status"),
            Some("scale"),
            Some("binding"),
        ]),
        proptest::sample::select(kinds),
        proptest::sample::select(vec!["team-a", "team-b"]),
        proptest::sample::select(USERS.to_vec()),
        proptest::sample::subsequence(GROUPS.to_vec(), 0..=2),
        arb_sides(),
    )
        .prop_map(
            |(
                operation,
                subresource,
                (group, kind, namespaced),
                namespace,
                user,
                groups,
                (old, new),
            )| {
                let mut user_info = json!({});
                if !user.is_empty() {
                    user_info["username"] = json!(user);
                }
                if !groups.is_empty() {
                    user_info["groups"] = json!(groups);
                }
                let mut request = json!({
                    "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                    "kind": {"group": group, "version": "v1", "kind": kind},
                    "operation": operation, "name": "x", "userInfo": user_info,
                });
                if namespaced || kind == "Namespace" {
                    request["namespace"] = json!(namespace);
                }
                if let Some(subresource) = subresource {
                    request["subResource"] = json!(subresource);
                }
                // The sides each operation has: CREATE the new object, DELETE the stored one,
                // UPDATE both, CONNECT its options.
                let (object, old_object) = match operation {
                    "CREATE" => (new, Value::Null),
                    "UPDATE" => (new, old),
                    "DELETE" => (Value::Null, old),
                    _ => (json!({"kind": "PodExecOptions"}), Value::Null),
                };
                for (key, side) in [("object", object), ("oldObject", old_object)] {
                    if !side.is_null() {
                        request[key] = side;
                    }
                }
                request
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_generated_request_bypasses_the_policy(
        (parsed, json) in arb_settings(),
        requests in proptest::collection::vec(arb_request(), 16),
    ) {
        let conditions = Conditions::of(&parsed);
        for request in requests {
            let send = conditions.send(&request).map_err(|error| {
                TestCaseError::fail(format!("{error} on {request}"))
            })?;
            if verdict(&request, &json) == Verdict::Acted {
                prop_assert!(send, "acted on, not sent, under {json}: {request}");
            }
        }
    }

    #[test]
    fn string_literals_hold_any_text(text in any::<String>()) {
        let program = cel::Program::compile(&single_owner_manifest::conditions::quote(&text))
            .map_err(|error| TestCaseError::fail(error.to_string()))?;
        let value = program.execute(&cel::Context::default())
            .map_err(|error| TestCaseError::fail(format!("{error:?}")))?;
        prop_assert_eq!(value, cel::Value::from(text));
    }
}
