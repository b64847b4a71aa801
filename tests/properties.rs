//! Properties that hold for every request and every settings document, checked on generated
//! ones (`PROPTEST_CASES` sets how many; 256 by default).

use proptest::prelude::*;
use proptest::sample::{select, subsequence};
use serde_json::{Map, Value, json};
use single_owner_policy::policy;

mod common;

use common::{APP_ID_KEY, CAMEL, OFFER, OLM_KIND, OLM_NAME};

const USERS: [&str; 4] = [
    "kubernetes-admin",
    "system:serviceaccount:team-a:installer",
    "system:serviceaccount:olmv1-system:operator-controller",
    "system:serviceaccount:helm-releases:cert-manager",
];
const GROUPS: [&str; 4] = [
    "system:authenticated",
    "system:masters",
    "installers",
    "team-a",
];
const UNRELATED: [(&str, &str); 3] = [
    ("app", "web"),
    ("team", "a"),
    ("appid", "Extension.team-b.x"),
];

/// An owner id in any of the shapes, valid or not.
fn owner_id() -> impl Strategy<Value = String> {
    let kind = select(vec!["ClusterExtension", "Extension", "Operator"]);
    let namespace = select(vec!["team-a", "team-b"]);
    let name = select(vec!["cert-manager", "argocd"]);
    prop_oneof![
        (kind.clone(), name.clone()).prop_map(|(k, n)| format!("{k}.{n}")),
        (kind, namespace, name).prop_map(|(k, ns, n)| format!("{k}.{ns}.{n}")),
        select(vec!["operator-1", "operator-2", ""]).prop_map(str::to_owned),
    ]
}

/// The labels one entry of the settings below writes for an owner id, or none.
fn owner_labels() -> impl Strategy<Value = Vec<(String, String)>> {
    let app_id = owner_id().prop_map(|id| vec![(APP_ID_KEY.to_owned(), id)]);
    let pair = owner_id().prop_map(|id| match id.split_once('.') {
        Some((kind, name)) => vec![
            (OLM_KIND.to_owned(), kind.to_owned()),
            (OLM_NAME.to_owned(), name.to_owned()),
        ],
        None => vec![(OLM_NAME.to_owned(), id)],
    });
    let camel = owner_id().prop_map(|id| vec![(CAMEL.to_owned(), id)]);
    prop::collection::vec(prop_oneof![Just(Vec::new()), app_id, pair, camel], 0..3)
        .prop_map(|sets| sets.concat())
}

/// Settings with all three shapes, and random permissions, identities and exemptions.
fn settings() -> impl Strategy<Value = Value> {
    let identities = subsequence(
        vec![
            json!({"owners": ["ClusterExtension.*"], "users": [USERS[2]]}),
            json!({"owners": ["Extension.${namespace}.*"], "users": ["system:serviceaccount:*:installer"]}),
            json!({"owners": ["ClusterExtension.${name}"], "users": ["system:serviceaccount:helm-releases:*"]}),
            json!({"owners": ["operator-1"], "groups": ["installers"]}),
        ],
        0..=4,
    );
    let permission = select(vec!["Allow", "Deny"]);
    (identities, permission.clone(), permission, subsequence(USERS.to_vec(), 0..=1), subsequence(GROUPS.to_vec(), 0..=1), any::<bool>(), any::<bool>())
        .prop_map(|(identities, adoption, orphaning, users, groups, owner_writes, stamp)| {
            let with_identities = !identities.is_empty();
            json!({
                "ownerLabels": [
                    {"key": APP_ID_KEY, "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]},
                    {"key": OLM_NAME, "kindKey": OLM_KIND, "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]},
                    {"key": CAMEL},
                ],
                "adoption": adoption, "orphaning": orphaning,
                "exemptions": {"users": users, "groups": groups},
                "identities": identities,
                "writes": if owner_writes && with_identities { "Owner" } else { "Any" },
                "stamp": stamp && with_identities,
            })
        })
}

/// One side of a request: labels and an optional offer.
fn side() -> impl Strategy<Value = (Vec<(String, String)>, Option<String>)> {
    (owner_labels(), prop::option::of(owner_id()))
}

/// A whole request: kind, namespace, operation, user, groups, old and new sides.
#[derive(Debug, Clone)]
struct Case {
    kind: (&'static str, &'static str),
    namespace: &'static str,
    operation: &'static str,
    user: &'static str,
    groups: Vec<&'static str>,
    old: (Vec<(String, String)>, Option<String>),
    new: (Vec<(String, String)>, Option<String>),
}

fn case() -> impl Strategy<Value = Case> {
    let kind = select(vec![
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("", "ConfigMap"),
        ("", "Namespace"),
        ("camel.apache.org", "Integration"),
    ]);
    (
        kind,
        select(vec!["", "team-a", "team-b"]),
        select(vec!["CREATE", "UPDATE", "DELETE"]),
        select(USERS.to_vec()),
        subsequence(GROUPS.to_vec(), 0..=4),
        side(),
        side(),
    )
        .prop_map(
            |(kind, namespace, operation, user, groups, old, new)| Case {
                kind,
                namespace,
                operation,
                user,
                groups,
                old,
                new,
            },
        )
}

fn object(
    kind: &str,
    (labels, offer): &(Vec<(String, String)>, Option<String>),
    extra: &[(&str, &str)],
) -> Value {
    let mut all: Map<String, Value> = labels.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    for (k, v) in extra {
        all.insert((*k).to_owned(), json!(v));
    }
    let annotations: Map<String, Value> =
        offer.iter().map(|o| (OFFER.to_owned(), json!(o))).collect();
    json!({"kind": kind, "metadata": {"name": "x", "labels": all, "annotations": annotations}})
}

fn request(case: &Case, extra: &[(&str, &str)]) -> Value {
    let (group, kind) = case.kind;
    let object_of = |side| object(kind, side, extra);
    json!({
        "uid": "p", "kind": {"group": group, "version": "v1", "kind": kind},
        "operation": case.operation, "namespace": case.namespace, "name": "x",
        "userInfo": {"username": case.user, "groups": case.groups},
        "object": if case.operation == "DELETE" { Value::Null } else { object_of(&case.new) },
        "oldObject": if case.operation == "CREATE" { Value::Null } else { object_of(&case.old) },
    })
}

/// The parts of a response a verdict consists of.
fn verdict(request: &Value, settings: &Value) -> (bool, Option<String>, Option<Vec<String>>, bool) {
    let payload = serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
    let response = policy::validate(&payload);
    (
        response.accepted,
        response.message,
        response.warnings,
        response.mutated_object.is_some(),
    )
}

fn label<'a>(side: &'a (Vec<(String, String)>, Option<String>), key: &str) -> Option<&'a str> {
    side.0
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// The owner id per entry (appID, OLM pair, Camel K), as the policy reads it.
fn owners(side: &(Vec<(String, String)>, Option<String>)) -> [Option<String>; 3] {
    let pair = match (label(side, OLM_KIND), label(side, OLM_NAME)) {
        (Some(kind), Some(name)) => Some(format!("{kind}.{name}")),
        (None, Some(name)) => Some(name.to_owned()),
        (Some(kind), None) => Some(format!("{kind}.")),
        (None, None) => None,
    };
    [
        label(side, APP_ID_KEY).map(str::to_owned),
        pair,
        label(side, CAMEL).map(str::to_owned),
    ]
}

fn exempt(case: &Case, settings: &Value) -> bool {
    let listed = |list: &Value, name: &str| list.as_array().unwrap().iter().any(|v| v == name);
    listed(&settings["exemptions"]["users"], case.user)
        || case
            .groups
            .iter()
            .any(|g| listed(&settings["exemptions"]["groups"], g))
}

proptest! {
    /// Without an exemption or an offer of the object to the new owner, no UPDATE changes an
    /// owner into another.
    #[test]
    fn no_owner_changes_hands_without_an_offer(case in case(), settings in settings()) {
        prop_assume!(case.operation == "UPDATE");
        let (allowed, ..) = verdict(&request(&case, &[]), &settings);
        for (old, new) in owners(&case.old).into_iter().zip(owners(&case.new)) {
            if let (Some(old), Some(new)) = (old, new) && old != new && allowed {
                prop_assert!(exempt(&case, &settings) || case.old.1.as_deref() == Some(new.as_str()),
                    "{old} -> {new} allowed: {case:?}");
            }
        }
    }

    /// No cluster-scoped object ever gains an owner of a namespaced kind.
    #[test]
    fn cluster_scoped_objects_gain_no_namespaced_owner(case in case(), settings in settings()) {
        let cluster_scoped = case.namespace.is_empty() || case.kind.1 == "Namespace";
        prop_assume!(cluster_scoped && case.operation != "DELETE");
        let (allowed, ..) = verdict(&request(&case, &[]), &settings);
        let before = owners(&case.old);
        for (index, new) in owners(&case.new).into_iter().enumerate().take(2) {
            let gained = new.as_deref().is_some_and(|id| id.starts_with("Extension."));
            let unchanged = case.operation == "UPDATE" && before[index] == new;
            if gained && !unchanged && allowed {
                prop_assert!(exempt(&case, &settings), "{new:?} allowed on {case:?}");
            }
        }
    }

    /// Labels that no entry names never change a verdict.
    #[test]
    fn unrelated_labels_change_nothing(case in case(), settings in settings()) {
        let plain = verdict(&request(&case, &[]), &settings);
        let decorated = verdict(&request(&case, &UNRELATED), &settings);
        prop_assert_eq!(plain, decorated);
    }

    /// The order of groups, of the settings' lists and of the labels in the JSON never changes
    /// a verdict; the same request always gets the same response.
    #[test]
    fn order_and_repetition_change_nothing(case in case(), settings in settings()) {
        let first = verdict(&request(&case, &[]), &settings);
        prop_assert_eq!(&first, &verdict(&request(&case, &[]), &settings));

        let mut reordered = case.clone();
        reordered.groups.reverse();
        reordered.old.0.reverse();
        reordered.new.0.reverse();
        // A repeated key in the JSON keeps its last value; reversing would change which one.
        let dedup = |labels: &mut Vec<(String, String)>| {
            let mut seen = std::collections::BTreeSet::new();
            labels.retain(|(k, _)| seen.insert(k.clone()));
        };
        let mut original = case.clone();
        for side in [&mut original.old.0, &mut original.new.0] {
            side.reverse();
            dedup(side);
            side.reverse();
        }
        for side in [&mut reordered.old.0, &mut reordered.new.0] {
            dedup(side);
        }
        let mut shuffled = settings.clone();
        for pointer in ["/identities", "/exemptions/users", "/exemptions/groups"] {
            shuffled.pointer_mut(pointer).and_then(Value::as_array_mut).unwrap().reverse();
        }
        prop_assert_eq!(verdict(&request(&original, &[]), &settings).0, first.0);
        prop_assert_eq!(
            verdict(&request(&reordered, &[]), &shuffled),
            verdict(&request(&original, &[]), &settings)
        );
    }
}
