//! The proof of no bypass: whenever the policy denies, mutates or warns on a request, the
//! generated match conditions send it — on every request fixture of the repository under every
//! example's settings and the defaults (the cluster-writes fixtures in each setup's first owner
//! mark), on generated requests under generated settings, and on the generated traffic mix.
//! And the conditions never error, whatever the request's shape.
//!
//! The proof is an oracle independent of the generator: it runs the policy
//! (`single_owner_policy::policy::validate`) and the CEL, and compares what they do; it never
//! derives from the settings what the policy should decide. The generated settings guard owner
//! marks of every shape — labels and annotations, kind and namespace pairs, Argo CD tracking
//! ids, marks linked by `sameOwnerAs` — and the generated requests reach what the conditions
//! skip or read beyond one label: annotation marks changed alone, a mark's key in the other
//! place, half pairs, tracking ids that name the object, another object or nothing readable,
//! that change only their object part or only their app, offers naming each mark, Kubernetes'
//! own control plane (each controller's service account with and without its group,
//! look-alikes in other namespaces and with prefixes or suffixes, kube-controller-manager, the
//! scheduler, kubelets with and without their group), the settings' `trustedWriters`, real
//! `resource` fields and some no resource has, terminating stored objects, and workload
//! templates that carry guarded marks in their labels or annotations.
//!
//! Requests the policy refuses as unreadable (HTTP 400: an UPDATE without `oldObject`, a label
//! value that is not a string, …) are outside the proof: the API server never sends them.

#[path = "support/requests.rs"]
mod requests;
mod support;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use requests::{OFFERS, arb_request, arb_settings, identities, marks, trusted_writers, vouching};
use serde_json::{Value, json};
use single_owner_manifest::conditions::{MAX_CONDITIONS, TRUSTED_WRITERS, guarded_marks, quote};
use single_owner_manifest::{MatchCondition, SUBRESOURCES, match_conditions};
use single_owner_policy::control_plane::{
    self, CONTROLLER_MANAGER, KUBE_SYSTEM_GROUP, KUBE_SYSTEM_PREFIX, NODE_PREFIX, NODES_GROUP,
    SCHEDULER, Writer,
};
use single_owner_policy::{MarkPlace, Settings};
use support::{
    CLUSTER_WRITES, Conditions, Verdict, examples, fixtures, root, settings, traffic, verdict,
};

/// Every example's settings (with `stamp: true`, those of both policies `make manifest` writes
/// too), the defaults, and every writer of the catalogue enabled, as (name, settings, the
/// payload's JSON).
fn setups() -> Vec<(String, Settings, Value)> {
    let folders = examples()
        .into_iter()
        .map(|setup| (setup.clone(), format!("examples/{setup}")));
    let mut setups: Vec<_> = folders
        .flat_map(|(setup, folder)| {
            let path = root().join(folder).join("settings.yaml");
            let (parsed, json) = settings(&fs::read_to_string(path).unwrap());
            // With `stamp: true`, the two policies `make manifest` writes: the one that judges
            // the final object and the one that only stamps.
            let twins = json["stamp"].as_bool() == Some(true);
            let twin = |name: &str, change: Value| {
                let mut json = json.clone();
                json.as_object_mut()
                    .unwrap()
                    .extend(change.as_object().unwrap().clone());
                let (parsed, json) = settings(&json.to_string());
                (format!("{setup}, {name}"), parsed, json)
            };
            let mut all = vec![(setup.clone(), parsed, json.clone())];
            if twins {
                all.push(twin("judging twin", json!({"stamp": false})));
                all.push(twin("stamping twin", json!({"stampOnly": true})));
            }
            all
        })
        .collect();
    let (parsed, json) = settings("{}");
    setups.push(("defaults".to_owned(), parsed, json));
    // The writers' setting, with every writer of the catalogue enabled (e2e.bats, "cluster
    // writers").
    let base = fs::read_to_string(root().join("test_data/writers/settings.yaml")).unwrap();
    let enabled: String = (single_owner_policy::WRITERS.iter())
        .map(|writer| format!("  - name: {}\n", writer.name))
        .collect();
    let (parsed, json) = settings(&format!("{base}clusterWriters:\n{enabled}"));
    setups.push(("every cluster writer".to_owned(), parsed, json));
    // Without identities, where a writer is only followed: Helm releases with KEDA.
    let helm = fs::read_to_string(root().join("examples/helm/settings.yaml")).unwrap();
    let (parsed, json) = settings(&format!(
        "{helm}clusterWriters:
  - name: keda
"
    ));
    setups.push(("a writer without identities".to_owned(), parsed, json));
    setups
}

/// What checking the fixtures found.
#[derive(Debug, Default)]
struct Checked {
    /// Fixtures acted on and not sent, as `setup: path`.
    bypasses: Vec<String>,
    /// Fixtures checked, acted on, and cluster writes skipped only by the trust conditions.
    checked: usize,
    acted: usize,
    cluster_writes: usize,
    skipped_as_trusted: usize,
}

/// Conditions made for a setup's settings, given parsed and as JSON.
type Generator<'g> = &'g dyn Fn(&Settings, &Value) -> Vec<MatchCondition>;

/// Checks every fixture under every setup with the conditions `conditions` gives for the
/// setup's settings (`None`: the generated ones).
fn check_fixtures(conditions: Option<Generator>) -> Checked {
    let mut found = Checked::default();
    for (setup, parsed, json) in setups() {
        let (conditions, untrusting) = match conditions {
            Some(conditions) => (Conditions::compile(&conditions(&parsed, &json)), None),
            None => (
                Conditions::of(&parsed),
                Some(Conditions::without_trust(&parsed)),
            ),
        };
        for (path, request) in fixtures(&parsed) {
            let name = path.strip_prefix(root()).unwrap().display().to_string();
            let send = conditions
                .send(&request)
                .unwrap_or_else(|error| panic!("{setup}, {name}: {error}"));
            found.checked += 1;
            if name.starts_with(CLUSTER_WRITES) {
                found.cluster_writes += 1;
                let otherwise = untrusting.as_ref().map(|c| c.send(&request).unwrap());
                found.skipped_as_trusted += usize::from(!send && otherwise == Some(true));
            }
            if verdict(&request, &json) == Verdict::Acted {
                found.acted += 1;
                if !send {
                    found.bypasses.push(format!("{setup}: {name}"));
                }
            }
        }
    }
    found
}

#[test]
fn no_fixture_bypasses_the_policy_under_any_setup() {
    let found = check_fixtures(None);
    assert!(
        found.bypasses.is_empty(),
        "not sent, yet acted on: {:#?}",
        found.bypasses
    );
    // The proof is not vacuous: the fixtures hold denials, stamps and exempt warnings, and the
    // cluster's own writes, some of which only the trust of the control plane skips.
    let setups = setups().len();
    assert!(
        found.checked >= 140 * setups && found.acted >= 12 * setups,
        "{} acted on of {}",
        found.acted,
        found.checked
    );
    assert!(
        found.cluster_writes >= 80 * setups && found.skipped_as_trusted >= 20 * setups,
        "{} cluster writes, {} skipped as trusted",
        found.cluster_writes,
        found.skipped_as_trusted
    );
}

/// The checker catches a condition that forgets a side: one that reads only the new object's
/// marks misses every orphaning and every DELETE, so the fixtures must find it out.
#[test]
fn a_condition_without_the_stored_object_is_caught() {
    let new_object_only = |parsed: &Settings, _: &Value| {
        let carried: Vec<String> = guarded_marks(parsed)
            .into_iter()
            .map(|(place, key)| {
                let map = match place {
                    MarkPlace::Label => "labels",
                    MarkPlace::Annotation => "annotations",
                };
                format!(
                    "(has(object.metadata.{map}) && {} in object.metadata.{map})",
                    quote(key)
                )
            })
            .collect();
        vec![MatchCondition {
            name: "new-object-only".to_owned(),
            expression: format!(
                "object != null && has(object.metadata) && ({})",
                carried.join(" || ")
            ),
        }]
    };
    let bypasses = check_fixtures(Some(&new_object_only)).bypasses;
    for expected in [
        "olm-v1: examples/olm-v1/denied-crd-orphaned-by-cainjector.json",
        "camel-k: examples/camel-k/denied-integration-released-to-global-operator.json",
        "flux: examples/flux/denied-clusterrole-pruned-by-other-kustomization.json",
        "olm-v1: test_data/cluster-writes/person--delete-owned-deployment.json",
        "helm-accounts: examples/helm-accounts/denied-job-deleted-by-other-release-hook.json",
        "helm-accounts: examples/helm-accounts/denied-crd-orphaned-by-admin.json",
    ] {
        assert!(
            bypasses.iter().any(|b| b == expected),
            "{expected} not caught: {bypasses:#?}"
        );
    }
}

/// The checker catches conditions that read every mark as a label (as a generator from before
/// annotation marks would): the examples whose marks are annotations must find them out.
#[test]
fn conditions_that_read_marks_as_labels_are_caught() {
    let as_labels = |_: &Settings, json: &Value| {
        let mut json = json.clone();
        if let Some(marks) = json.get_mut("ownerMarks").and_then(Value::as_array_mut) {
            for mark in marks {
                let mark = mark.as_object_mut().unwrap();
                if let Some(key) = mark.remove("annotation") {
                    mark.insert("label".to_owned(), key);
                }
                mark.remove("format");
            }
        }
        let parsed = Settings::from_json(json.to_string().as_bytes()).unwrap();
        parsed.validate().unwrap();
        match_conditions(&parsed)
    };
    let bypasses = check_fixtures(Some(&as_labels)).bypasses;
    for expected in [
        "helm: examples/helm/denied-deployment-taken-over-by-other-release.json",
        "camel-k: examples/camel-k/denied-integration-moved-between-operators.json",
        "argo-cd: examples/argo-cd/denied-deployment-taken-over-by-second-app.json",
        "flux: examples/helm/denied-deployment-taken-over-by-other-release.json",
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

// Shapes and limits.

/// Shapes the API server sends, and some it does not: no condition errors on any of them. A
/// workload kind's fields are objects or absent (the API server decodes it into its type); any
/// other kind may hold anything, a string where a workload has its template.
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
                            "annotations": {"single-owner-policy.io/offer": "appID: ClusterExtension.a -> ClusterExtension.b"}}}),
        json!({"metadata": {"annotations": {"meta.helm.sh/release-name": "web",
                                            "camel.apache.org/operator.id": "operator-1",
                                            "argocd.argoproj.io/tracking-id": "guestbook:/ConfigMap:team-a/x"}}}),
        json!({"metadata": {"labels": {"meta.helm.sh/release-name": "web"},
                            "annotations": {"meta.helm.sh/release-namespace": "shop",
                                            "argocd.argoproj.io/tracking-id": "guestbook"}}}),
        json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z", "labels": {"appID": "a"}}}),
        json!({"metadata": {"deletionTimestamp": null}}),
    ];
    let labels = json!({"appID": "ClusterExtension.a", "camel.apache.org/operator.id": "o"});
    let annotations = json!({"meta.helm.sh/release-name": "web",
                             "argocd.argoproj.io/tracking-id": "guestbook:apps/Deployment:team-a/x"});
    let template = json!({"metadata": {"labels": labels}});
    let annotated = json!({"metadata": {"annotations": annotations}});
    let workloads = [
        json!({"spec": {}}),
        json!({"spec": {"template": {}}}),
        json!({"spec": {"template": {"metadata": {}}}}),
        json!({"spec": {"template": template}}),
        json!({"spec": {"template": annotated}}),
        json!({"spec": {"template": {"metadata": {"labels": {}, "annotations": {}}}}}),
        json!({"spec": {"jobTemplate": {"metadata": {"labels": labels}, "spec": {}}}}),
        json!({"spec": {"jobTemplate": {"metadata": {"annotations": annotations}, "spec": {"template": annotated}}}}),
        json!({"spec": {"jobTemplate": {"spec": {"template": template}}}}),
        json!({"spec": {"volumeClaimTemplates": []}}),
        json!({"spec": {"volumeClaimTemplates": [{}, {"metadata": {"name": "d"}}, template]}}),
        json!({"spec": {"volumeClaimTemplates": [annotated]}}),
        json!({"spec": {"volumes": [{"name": "a"}, {"name": "b", "ephemeral": {}},
                                    {"name": "c", "ephemeral": {"volumeClaimTemplate": {}}},
                                    {"name": "d", "ephemeral": {"volumeClaimTemplate": template}},
                                    {"name": "e", "ephemeral": {"volumeClaimTemplate": annotated}}]}}),
    ];
    let others = [
        json!({"spec": null}),
        json!({"spec": "text"}),
        json!({"spec": {"template": "text", "jobTemplate": 1, "volumes": "v"}}),
        json!({"spec": {"template": {"metadata": "x"}}}),
        json!({"spec": {"template": {"metadata": {"annotations": "x"}}}}),
    ];
    let kinds = [
        ("", "ConfigMap", "", "configmaps"),
        (
            "camel.apache.org",
            "Integration",
            "camel.apache.org",
            "integrations",
        ),
        ("apps", "Deployment", "apps", "deployments"),
        ("apps", "StatefulSet", "apps", "statefulsets"),
        ("batch", "CronJob", "batch", "cronjobs"),
        ("", "Pod", "", "pods"),
        ("", "Weird", "batch/x", "jobs.batch"),
    ];
    let user_infos = [
        json!({}),
        json!({"username": "alice"}),
        json!({"username": "system:serviceaccount:helm-releases:a", "groups": ["system:serviceaccounts"]}),
        json!({"groups": []}),
        json!({"username": format!("{KUBE_SYSTEM_PREFIX}generic-garbage-collector"),
               "groups": [KUBE_SYSTEM_GROUP]}),
        json!({"username": format!("{KUBE_SYSTEM_PREFIX}deployment-controller")}),
        json!({"username": CONTROLLER_MANAGER}),
        json!({"username": "system:node:n1", "groups": [NODES_GROUP]}),
        json!({"username": "system:node:n1", "groups": []}),
        json!({"username": "k3s:agent"}),
    ];
    let mut all_settings = setups();
    let (parsed, json) = settings(
        r#"{"ownerMarks": [{"label": "appID"}, {"annotation": "example.com/owner"}],
            "identities": [{"owners": ["*"], "groups": ["g:*"]}],
            "stamp": true, "writes": "Owner",
            "trustedWriters": [{"users": ["k3s:*", "system:node:n1", "a*b*c"], "resources": ["*", "pods/status", "jobs.batch"],
                                "operations": ["UPDATE", "DELETE"]}]}"#,
    );
    all_settings.push(("groups".to_owned(), parsed, json));
    let mut evaluated = 0;
    for (setup, parsed, _) in &all_settings {
        let conditions = Conditions::of(parsed);
        for (group, kind, resource_group, resource) in kinds {
            let shapes: Vec<&Value> = match kind {
                "ConfigMap" | "Integration" | "Weird" => objects.iter().chain(&others).collect(),
                _ => objects.iter().chain(&workloads).collect(),
            };
            // Every pair of shapes, each operation and subresource and requester in turn.
            for (index, old) in shapes.iter().enumerate() {
                for (other, new) in shapes.iter().enumerate() {
                    let turn = index * shapes.len() + other;
                    let operation = ["CREATE", "UPDATE", "DELETE", "CONNECT"][turn % 4];
                    let subresource = [None, Some(""), Some("status")][turn / 4 % 3];
                    let user_info = &user_infos[turn % user_infos.len()];
                    let mut request = json!({
                        "uid": "1", "operation": operation, "name": "x",
                        "kind": {"group": group, "version": "v1", "kind": kind},
                        "resource": {"group": resource_group, "version": "v1", "resource": resource},
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
    assert!(evaluated > 10_000, "{evaluated}");
}

/// Kubernetes' limits and names: at most 64 conditions, each name a qualified name; and each
/// expression of a sane size and depth — cel-go parses at most 100,000 code points and nests
/// at most 250 levels; the trust conditions are the control plane's table, about 12,000
/// characters laid out.
#[test]
fn conditions_stay_within_kubernetes_limits() {
    let mut all_settings = setups();
    let (parsed, json) = settings(&format!(
        r#"{{"ownerMarks": {}, "identities": {}, "writes": "Owner", "stamp": true,
            "trustedWriters": {}}}"#,
        json!(marks()),
        json!(identities()[..2]),
        json!(trusted_writers())
    ));
    all_settings.push(("everything".to_owned(), parsed, json));
    for (setup, parsed, _) in all_settings {
        let conditions = match_conditions(&parsed);
        assert!(conditions.len() <= MAX_CONDITIONS);
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
            let size = condition.expression.chars().count();
            let deepest = support::nesting(&condition.expression);
            assert!(
                size <= 20_000 && deepest <= 32,
                "{setup}, {name}: {size} characters, {deepest} levels"
            );
        }
        let total: usize = conditions.iter().map(|c| c.expression.len()).sum();
        assert!(total <= 48_000, "{setup}: {total} characters in all");
        let mut names: Vec<_> = conditions.iter().map(|c| &c.name).collect();
        names.dedup();
        assert_eq!(names.len(), conditions.len(), "{setup}: names repeat");
    }
}

// The trusted control plane, rule by rule.

/// Every rule of the trusted control plane, each operation and resource of it that the webhook
/// is called for: a write that the policy would deny from anyone else (an owner mark set,
/// moved or deleted by a requester no identity binds — a label, then an annotation) is allowed
/// from the writer and skipped; the same write from a look-alike (without the group, another
/// namespace, a suffix, a Pod not terminating) is denied and sent. Patterns with two `*` are
/// sent (CEL cannot match them exactly); the policy allows them.
#[test]
fn every_trusted_write_is_skipped_and_no_lookalike_is() {
    for place in ["label", "annotation"] {
        let (skipped, lookalikes) = check_trusted_writes(place);
        assert!(
            skipped >= 400 && lookalikes >= 1_000,
            "{place}: {skipped} skipped, {lookalikes} look-alikes"
        );
    }
}

/// [`every_trusted_write_is_skipped_and_no_lookalike_is`] with the owner mark `appID` kept in
/// `place` (`label` or `annotation`): the writes skipped and the look-alikes sent.
fn check_trusted_writes(place: &str) -> (usize, usize) {
    let json = json!({
        "ownerMarks": [{place: "appID", "clusterKinds": ["ClusterExtension"]}],
        "identities": [{"owners": ["ClusterExtension.*"], "users": ["installer"]}],
        "writes": "Owner", "trustedWriters": trusted_writers(),
    });
    let parsed = Settings::from_json(json.to_string().as_bytes()).unwrap();
    parsed.validate().unwrap();
    let conditions = Conditions::of(&parsed);
    let (mut skipped, mut lookalikes) = (0, 0);
    for trust in control_plane::rules(&parsed.trusted_writers) {
        let (user, groups, lookalike_users): (String, Vec<&str>, Vec<Requester>) = match trust
            .writer
        {
            Writer::KubeSystemServiceAccount(account) => {
                let user = format!("{KUBE_SYSTEM_PREFIX}{account}");
                let others = vec![
                    (user.clone(), vec!["system:serviceaccounts"]),
                    (
                        format!("system:serviceaccount:kube-public:{account}"),
                        vec![KUBE_SYSTEM_GROUP, "system:serviceaccounts:kube-public"],
                    ),
                    (format!("{user}x"), vec![KUBE_SYSTEM_GROUP]),
                ];
                (user, vec![KUBE_SYSTEM_GROUP], others)
            }
            // A name shaped like a service account's comes with its groups; without them
            // it is a look-alike.
            Writer::User(user) => {
                let mut others = vec![(format!("{user}x"), vec![]), (format!("x{user}"), vec![])];
                let groups = vouching(user);
                if !groups.is_empty() {
                    others.push((user.to_owned(), vec![]));
                }
                (user.to_owned(), groups, others)
            }
            Writer::Users(pattern) => {
                let user = pattern.replace('*', "-mid-");
                let groups = vouching(&user);
                let others = match groups.is_empty() {
                    true => vec![],
                    false => vec![(user.clone(), vec![])],
                };
                (user, groups, others)
            }
            Writer::Node => {
                let user = format!("{NODE_PREFIX}n1");
                let others = vec![
                    (user.clone(), vec!["system:authenticated"]),
                    (NODE_PREFIX.to_owned(), vec![NODES_GROUP]),
                ];
                (user, vec![NODES_GROUP], others)
            }
        };
        // Skipped when CEL can match the pattern exactly, and the groups its names need do
        // not depend on what a `*` stands for.
        let exact = !matches!(trust.writer, Writer::Users(pattern)
            if pattern.matches('*').count() > 1 || control_plane::vouching_groups(pattern).is_none());
        for operation in trust.operations {
            for resource in trust.resources.iter() {
                let operation = operation.to_string();
                let (group, name, subresource) =
                    control_plane::parts(resource).unwrap_or(("", "configmaps", ""));
                let name = if name == "*" { "deployments" } else { name };
                // Only what the webhook is called for: the objects, and UPDATEs of the
                // subresources its rules name.
                let called = subresource.is_empty()
                    || (operation == "UPDATE"
                        && SUBRESOURCES.iter().any(|(resources, named)| {
                            *named == subresource && (*resources == "*" || *resources == name)
                        }));
                if !called || operation == "CONNECT" {
                    continue;
                }
                let write = |user: &str, groups: &[&str], terminating: bool| {
                    owner_write(
                        place,
                        &operation,
                        (group, name, subresource),
                        user,
                        groups,
                        terminating,
                    )
                };
                let request = write(&user, &groups, trust.terminating_only);
                let send = conditions.send(&request).unwrap();
                assert_eq!(
                    verdict(&request, &json),
                    Verdict::Allowed,
                    "trusted, yet judged: {request}"
                );
                assert_eq!(send, !exact, "a trusted write, sent: {send}: {request}");
                skipped += usize::from(!send);
                let mut others = lookalike_users.clone();
                if trust.terminating_only {
                    others.push((user.clone(), groups.clone()));
                }
                for (index, (other, other_groups)) in others.iter().enumerate() {
                    // The last look-alike of a terminating-only rule is the writer, on a Pod
                    // not terminating.
                    let terminating = trust.terminating_only && index + 1 < others.len();
                    let request = write(other, other_groups, terminating);
                    let verdict = verdict(&request, &json);
                    let send = conditions.send(&request).unwrap();
                    assert!(send, "a look-alike, {verdict:?}, not sent: {request}");
                    // Judged like anyone: denied, but where it only finishes a deletion
                    // under way (a DELETE of a terminating object, under `writes: Owner`).
                    let finishing = terminating && operation == "DELETE";
                    assert!(
                        verdict == Verdict::Acted || finishing,
                        "a look-alike, {verdict:?}: {request}"
                    );
                    lookalikes += 1;
                }
            }
        }
    }
    (skipped, lookalikes)
}

/// A user name and groups.
type Requester<'g> = (String, Vec<&'g str>);

/// A write of `resource` (group, resource, subresource) that moves the owner mark `appID`, a
/// `label` or an `annotation` (`place`): a CREATE that sets it, an UPDATE that changes it, a
/// DELETE of an owned object.
fn owner_write(
    place: &str,
    operation: &str,
    (group, resource, subresource): (&str, &str, &str),
    user: &str,
    groups: &[&str],
    terminating: bool,
) -> Value {
    let object = |owner: &str| {
        let map = format!("{place}s");
        let mut metadata = json!({"name": "x", "namespace": "team-a", map: {"appID": owner}});
        if terminating {
            metadata["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        }
        json!({"apiVersion": "v1", "kind": "Thing", "metadata": metadata})
    };
    let mut request = json!({
        "uid": "1", "operation": operation, "name": "x", "namespace": "team-a",
        "kind": {"group": group, "version": "v1", "kind": "Thing"},
        "resource": {"group": group, "version": "v1", "resource": resource},
        "userInfo": {"username": user, "groups": groups},
    });
    if !subresource.is_empty() {
        request["subResource"] = json!(subresource);
    }
    match operation {
        "CREATE" => request["object"] = object("ClusterExtension.a"),
        "UPDATE" => {
            request["oldObject"] = object("ClusterExtension.a");
            request["object"] = object("ClusterExtension.b");
        }
        _ => request["oldObject"] = object("ClusterExtension.a"),
    }
    request
}

// Generated settings and requests (drawn by `support/requests.rs`).

/// The keys of a settings document's marks, read from the document itself: what the tally
/// classifies requests by (never what the proof expects of them).
struct Marks {
    /// The keys of label marks, companions included.
    labels: Vec<String>,
    /// The keys of annotation marks, companions included.
    annotations: Vec<String>,
    /// The annotation of a tracking-id mark.
    tracking: Option<String>,
    /// The offer annotation.
    offer: String,
}

impl Marks {
    fn of(settings: &Value) -> Marks {
        let mut marks = Marks {
            labels: Vec::new(),
            annotations: Vec::new(),
            tracking: None,
            offer: settings["offerAnnotation"]
                .as_str()
                .unwrap_or(OFFERS[0])
                .to_owned(),
        };
        for mark in settings["ownerMarks"].as_array().into_iter().flatten() {
            let (keys, key) = match (mark["label"].as_str(), mark["annotation"].as_str()) {
                (Some(key), _) => (&mut marks.labels, key),
                (_, Some(key)) => (&mut marks.annotations, key),
                _ => continue,
            };
            keys.push(key.to_owned());
            for companion in ["kindKey", "namespaceKey"] {
                if let Some(companion) = mark[companion].as_str() {
                    keys.push(companion.to_owned());
                }
            }
            if mark["format"] == "ArgoCDTrackingID" {
                marks.tracking = Some(key.to_owned());
            }
        }
        marks
    }
}

/// The value of `key` in the map `map` of the metadata of a request's `side`; `null` where any
/// of them is missing.
fn side_value<'r>(request: &'r Value, side: &str, map: &str, key: &str) -> &'r Value {
    &request[side]["metadata"][map][key]
}

/// Whether the request's new object holds one of `keys` in the annotations of any metadata below
/// its `spec` (a template's).
fn template_carries(request: &Value, keys: &[String]) -> bool {
    fn walk(value: &Value, keys: &[String]) -> bool {
        match value {
            Value::Object(map) => {
                let annotations = &map.get("metadata").unwrap_or(&Value::Null)["annotations"];
                keys.iter().any(|key| !annotations[key].is_null())
                    || map.values().any(|value| walk(value, keys))
            }
            Value::Array(items) => items.iter().any(|item| walk(item, keys)),
            _ => false,
        }
    }
    walk(&request["object"]["spec"], keys)
}

/// How often the generated requests met each case the proof is about.
#[derive(Default)]
struct Tally(RefCell<BTreeMap<&'static str, usize>>);

impl Tally {
    fn count(&self, seen: bool, what: &'static str) {
        *self.0.borrow_mut().entry(what).or_default() += usize::from(seen);
    }
}

/// Requests per generated settings.
const REQUESTS: usize = 24;

#[test]
fn no_generated_request_bypasses_the_policy() {
    // No regression files: the tests run in a worktree other people edit. The floors below are
    // shares of a sample, so the sample is the same from run to run (a share just under its
    // floor in a random run failed CI for nothing: 24 offers acted on against a floor of 25);
    // PROPTEST_RNG_SEED draws another, as the properties do.
    let mut config = Config {
        failure_persistence: None,
        ..Config::default()
    };
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = RngSeed::Fixed(0x5eed_0f0e_0a11);
    }
    let cases = config.cases as usize;
    let tally = Tally::default();
    let strategy = (
        arb_settings(),
        proptest::collection::vec(arb_request(), REQUESTS),
    );
    let result = TestRunner::new(config).run(&strategy, |((parsed, json), requests)| {
        let conditions = Conditions::of(&parsed);
        let untrusting = Conditions::without_trust(&parsed);
        for request in requests {
            let send = conditions
                .send(&request)
                .map_err(|error| TestCaseError::fail(format!("{error} on {request}")))?;
            let verdict = verdict(&request, &json);
            if verdict == Verdict::Acted {
                prop_assert!(send, "acted on, not sent, under {json}: {request}");
            }
            let trusted = !send && untrusting.send(&request).unwrap();
            let user = request["userInfo"]["username"].as_str().unwrap_or("");
            let operation = request["operation"].as_str().unwrap();
            let templates = request["object"]["spec"].is_object()
                && !matches!(
                    request["kind"]["kind"].as_str(),
                    Some("ConfigMap" | "Secret")
                );
            tally.count(true, "requests");

            tally.count(verdict == Verdict::Acted, "acted on");
            tally.count(trusted, "skipped as trusted, sent otherwise");
            tally.count(
                trusted && user.starts_with(KUBE_SYSTEM_PREFIX),
                "a controller's write skipped",
            );
            tally.count(
                trusted && user == CONTROLLER_MANAGER,
                "kube-controller-manager's write skipped",
            );
            tally.count(
                trusted && user.starts_with(NODE_PREFIX) && operation == "DELETE",
                "a kubelet's DELETE skipped",
            );
            let upstream = (user.starts_with(KUBE_SYSTEM_PREFIX)
                && !user.ends_with("cloud-node-manager"))
                || [CONTROLLER_MANAGER, SCHEDULER].contains(&user)
                || user.starts_with(NODE_PREFIX);
            tally.count(trusted && !upstream, "a trustedWriters write skipped");
            tally.count(
                verdict == Verdict::Acted
                    && (user.contains("kube-system") || user.starts_with("system:node"))
                    && !trusted,
                "a control-plane look-alike acted on",
            );
            tally.count(
                verdict == Verdict::Acted && templates,
                "a write of a workload with templates acted on",
            );
            tally.count(
                !request["oldObject"]["metadata"]["deletionTimestamp"].is_null(),
                "a terminating stored object",
            );
            let acted = verdict == Verdict::Acted;
            let marks = Marks::of(&json);
            let update = operation == "UPDATE";
            let changed = |map: &str, keys: &[String]| {
                update
                    && keys.iter().any(|key| {
                        side_value(&request, "oldObject", map, key)
                            != side_value(&request, "object", map, key)
                    })
            };
            let labels_changed = changed("labels", &marks.labels);
            let annotations_changed = changed("annotations", &marks.annotations);
            let offer_changed = changed("annotations", std::slice::from_ref(&marks.offer));
            tally.count(
                acted && annotations_changed && !labels_changed && !offer_changed,
                "an UPDATE changing annotation marks alone acted on",
            );
            tally.count(
                acted && labels_changed && !annotations_changed && !offer_changed,
                "an UPDATE changing label marks alone acted on",
            );
            tally.count(
                acted && offer_changed,
                "an UPDATE changing the offer acted on",
            );
            if let Some(key) = &marks.tracking
                && update
            {
                let ids = ["oldObject", "object"].map(|side| {
                    side_value(&request, side, "annotations", key)
                        .as_str()
                        .and_then(|id| id.split_once(':'))
                });
                if let [Some((old_app, old_object)), Some((new_app, new_object))] = ids {
                    let object_part = old_app == new_app && old_object != new_object;
                    let app = old_app != new_app && old_object == new_object;
                    tally.count(object_part, "a tracking id changing only its object part");
                    tally.count(
                        acted && object_part,
                        "a tracking id changing only its object part acted on",
                    );
                    tally.count(
                        !acted && object_part && send,
                        "a tracking id changing only its object part sent, allowed",
                    );
                    tally.count(acted && app, "a tracking id changing only its app acted on");
                }
            }
            let own_marks = marks
                .labels
                .iter()
                .map(|key| ("labels", key))
                .chain(marks.annotations.iter().map(|key| ("annotations", key)))
                .chain([("annotations", &marks.offer)])
                .any(|(map, key)| {
                    ["oldObject", "object"]
                        .iter()
                        .any(|side| !side_value(&request, side, map, key).is_null())
                });
            tally.count(
                acted && !own_marks && template_carries(&request, &marks.annotations),
                "a workload acted on for an annotation mark of a template alone",
            );
        }
        Ok(())
    });
    if let Err(error) = result {
        panic!("{error}");
    }
    // The generator reaches what the proof is about: floors in percent of the requests.
    let counts = tally.0.into_inner();
    let requests = cases * REQUESTS;
    let floors = [
        ("acted on", 5.0),
        ("skipped as trusted, sent otherwise", 2.0),
        ("a controller's write skipped", 0.5),
        ("kube-controller-manager's write skipped", 0.1),
        ("a kubelet's DELETE skipped", 0.05),
        ("a trustedWriters write skipped", 0.05),
        ("a control-plane look-alike acted on", 1.0),
        ("a write of a workload with templates acted on", 1.0),
        ("a terminating stored object", 10.0),
        ("an UPDATE changing annotation marks alone acted on", 0.7),
        ("an UPDATE changing label marks alone acted on", 0.5),
        ("an UPDATE changing the offer acted on", 0.4),
        ("a tracking id changing only its object part", 0.4),
        ("a tracking id changing only its object part acted on", 0.1),
        (
            "a tracking id changing only its object part sent, allowed",
            0.05,
        ),
        ("a tracking id changing only its app acted on", 0.1),
        (
            "a workload acted on for an annotation mark of a template alone",
            0.03,
        ),
    ];
    let mut short = Vec::new();
    for (what, percent) in floors {
        let floor = (requests as f64 * percent / 100.0).ceil() as usize;
        let seen = counts.get(what).copied().unwrap_or(0);
        eprintln!("{seen:>6} (floor {floor:>5}) {what}");
        if seen < floor {
            short.push(format!(
                "{what}: {seen} of {requests} requests, floor {floor}"
            ));
        }
    }
    assert!(
        short.is_empty(),
        "the generator no longer reaches what the proof is about:\n{}",
        short.join("\n")
    );
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn string_literals_hold_any_text(text in any::<String>()) {
        let program = cel::Program::compile(&single_owner_manifest::conditions::quote(&text))
            .map_err(|error| TestCaseError::fail(error.to_string()))?;
        let value = program.execute(&cel::Context::default())
            .map_err(|error| TestCaseError::fail(format!("{error:?}")))?;
        prop_assert_eq!(value, cel::Value::from(text));
    }
}

/// The trust conditions are the ones named so (the proof compares with and without them).
#[test]
fn trust_conditions_are_named() {
    for (setup, parsed, _) in setups() {
        let names: Vec<String> = match_conditions(&parsed)
            .into_iter()
            .map(|condition| condition.name)
            .filter(|name| name.starts_with("not-a-trusted"))
            .collect();
        assert!(
            !names.is_empty()
                && names
                    .iter()
                    .all(|name| TRUSTED_WRITERS.contains(&name.as_str())),
            "{setup}: {names:?}"
        );
    }
}
