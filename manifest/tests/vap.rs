//! The proof that the generated ValidatingAdmissionPolicy says what the module says: every
//! request of the test corpora — the repository's fixtures and every example's samples, the
//! cluster's own writes, the generated traffic mix, and generated requests under generated
//! settings — is judged by the module (`policy::Payload::verdict`) and by the generated policy
//! evaluated with cel-rust ([`support::vap`]), and both must allow, deny or warn alike, naming
//! the same rules of the same marks. Requests the module cannot read (HTTP 400) are outside
//! the proof: the API server never sends them.
//!
//! Settings the generator refuses are refused with every reason, each naming its field.

#[path = "support/requests.rs"]
mod requests;
mod support;

use std::fs;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use serde_json::Value;
use single_owner_manifest::vap::Split;
use single_owner_policy::Settings;
use support::vap::{Compiled, CompiledStamping, Outcome, module_lines, module_outcome};
use support::{examples, fixtures, root, settings, traffic};

/// Setups the generator takes: the examples it does not refuse, as they are (split where they
/// read other objects) and without their owner lookups (as `--without-lookups` generates
/// them), the defaults, and one of each shape of mark and of the transition settings, as
/// (name, settings, the payload's JSON).
fn setups() -> Vec<(String, Settings, Value)> {
    let mut setups: Vec<_> = examples()
        .into_iter()
        .flat_map(|example| {
            let path = root().join("examples").join(&example).join("settings.yaml");
            let (_, mut json) = settings(&fs::read_to_string(path).unwrap());
            // A policy of settings that stamp is the judging twin's: it judges the final object
            // (the stamping is the MutatingAdmissionPolicy's, proven on its own below).
            if json["stamp"] == Value::Bool(true) {
                json["stamp"] = Value::Bool(false);
            }
            let (parsed, json) = settings(&json.to_string());
            let mut without = json.clone();
            for mark in without["ownerMarks"].as_array_mut().into_iter().flatten() {
                mark.as_object_mut().unwrap().remove("ownerLookup");
            }
            let mut forms = vec![(example.clone(), parsed, json.clone())];
            if without != json {
                let (parsed, without) = settings(&without.to_string());
                forms.push((format!("{example} without lookups"), parsed, without));
            }
            forms
        })
        .filter(|(_, parsed, _)| {
            single_owner_manifest::vap::refusals(parsed, Split::WithWebhook).is_empty()
        })
        .collect();
    let names: Vec<&str> = setups.iter().map(|(name, ..)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "app-id",
            "argo-cd",
            "argo-cd without lookups",
            "camel-k",
            "flux",
            "flux without lookups",
            "helm",
            "helm without lookups",
            "helm-accounts",
            "olm-v1",
            "olm-v1 without lookups"
        ]
    );
    for (name, yaml) in SHAPES {
        let (parsed, json) = settings(yaml);
        setups.push((name.to_owned(), parsed, json));
    }
    // The identities again, under `writes: Owner`, one with grants (the webhook's).
    let (_, identities) = (SHAPES.iter())
        .find(|(name, _)| *name == IDENTITIES_SETUP)
        .unwrap();
    let granted = identities.replace("exemptions:", &format!("{GRANT}exemptions:"));
    let (parsed, json) = settings(&format!("{granted}\nwrites: Owner"));
    setups.push((WRITES_SETUP.to_owned(), parsed, json));
    setups
}

/// The shapes of marks and the settings of transitions, each in a setup of its own.
const SHAPES: [(&str, &str); 7] = [
    ("defaults", "{}"),
    (
        "a kind pair, adoption and orphaning denied",
        "ownerMarks:
  - label: olm.operatorframework.io/owner-name
    kindKey: olm.operatorframework.io/owner-kind
    clusterKinds: [ClusterExtension]
    namespacedKinds: [Extension]
adoption: Deny
orphaning: Deny
exemptions: {users: [break-glass-admin], groups: [system:masters, \"kubeadm:cluster-admins\"]}",
    ),
    (
        "an opaque annotation",
        "ownerMarks:
  - annotation: camel.apache.org/operator.id",
    ),
    (
        "three tools' marks",
        "ownerMarks:
  - label: appID
    clusterKinds: [ClusterExtension]
    namespacedKinds: [Extension]
  - annotation: meta.helm.sh/release-name
    namespaceKey: meta.helm.sh/release-namespace
  - label: kustomize.toolkit.fluxcd.io/name
    namespaceKey: kustomize.toolkit.fluxcd.io/namespace
offerAnnotation: example.com/handoff",
    ),
    (
        "Flux's marks, two linked, transitions denied",
        "ownerMarks:
  - label: kustomize.toolkit.fluxcd.io/name
    namespaceKey: kustomize.toolkit.fluxcd.io/namespace
  - label: helm.toolkit.fluxcd.io/name
    namespaceKey: helm.toolkit.fluxcd.io/namespace
    sameOwnerAs: [meta.helm.sh/release-name]
  - annotation: meta.helm.sh/release-name
    namespaceKey: meta.helm.sh/release-namespace
adoption: Deny
orphaning: Deny",
    ),
    (
        IDENTITIES_SETUP,
        "ownerMarks:
  - label: olm.operatorframework.io/owner-name
    kindKey: olm.operatorframework.io/owner-kind
    clusterKinds: [ClusterExtension]
    namespacedKinds: [Extension]
  - annotation: meta.helm.sh/release-name
    namespaceKey: meta.helm.sh/release-namespace
identities:
  - owners: [\"ClusterExtension.*\"]
    users: [\"system:serviceaccount:olm:*\"]
  - owners: [\"ClusterExtension.${name}\", \"${namespace}/*\"]
    users: [\"system:serviceaccount:*:*\"]
  - owners: [\"Extension.${namespace}.*-*\", \"ClusterExtension.*_${name}_*\"]
    groups: [\"system:serviceaccounts:*\"]
  - owners: [ClusterExtension.a]
    users: [alice]
    access: Write
  - owners: [\"*\"]
    users: [root]
    access: Restore
  - owners: [\"team-a/*\", \"ClusterExtension.*a*\"]
    groups: [admins, \"camel:*\"]
exemptions: {users: [break-glass-admin]}",
    ),
    (
        "namespaced kinds only, adoption denied",
        "ownerMarks:
  - label: team
    namespacedKinds: [Tenant]
adoption: Deny",
    ),
];

/// Requesters whose identities matter, with the groups the API server gives them: service
/// accounts (vouched for, and one whose groups do not vouch; two of the writers' catalogue, one
/// that examples enable and one they do not), a person, a group.
const REQUESTERS: [(&str, &[&str]); 9] = [
    (
        "system:serviceaccount:keda:keda-operator",
        &["system:serviceaccounts", "system:serviceaccounts:keda"],
    ),
    (
        "system:serviceaccount:cert-manager:cert-manager",
        &[
            "system:serviceaccounts",
            "system:serviceaccounts:cert-manager",
        ],
    ),
    (
        "system:serviceaccount:olm:controller",
        &["system:serviceaccounts", "system:serviceaccounts:olm"],
    ),
    (
        "system:serviceaccount:team-a:a",
        &["system:serviceaccounts", "system:serviceaccounts:team-a"],
    ),
    (
        "system:serviceaccount:shop:web.v2",
        &["system:serviceaccounts", "system:serviceaccounts:shop"],
    ),
    ("system:serviceaccount:team-a:a", &["system:authenticated"]),
    ("alice", &["system:authenticated"]),
    ("root", &["system:authenticated"]),
    ("bob", &["admins", "system:authenticated"]),
];

/// An identity with grants, which the split leaves to the webhook.
const GRANT: &str = "  - owners: [\"*\"]
    users: [keda]
    changes: [replicas]
";

/// The setup of the identities under `writes: Owner`.
const WRITES_SETUP: &str = "identities under writes: Owner";

/// The setup of the identities shape.
const IDENTITIES_SETUP: &str = "identities of every access, with templates";

/// The setup named `name`.
fn setup(name: &str) -> (String, Settings, Value) {
    (setups().into_iter())
        .find(|(setup, ..)| setup == name)
        .unwrap()
}

/// [`REQUESTERS`] and `more`, each with its groups.
fn requesters<'r>(more: &[(&'r str, &'r [&'r str])]) -> Vec<(&'r str, Vec<&'r str>)> {
    (REQUESTERS.iter().chain(more))
        .map(|(user, groups)| (*user, groups.to_vec()))
        .collect()
}

/// A request on the ConfigMap team-a/c by `user` of `groups`.
fn configmap_request(
    operation: &str,
    (user, groups): &(&str, Vec<&str>),
    old: Value,
    new: Value,
    options: Value,
) -> Value {
    serde_json::json!({
        "uid": "u", "operation": operation, "name": "c", "namespace": "team-a",
        "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "userInfo": {"username": user, "groups": groups},
        "object": new, "oldObject": old, "options": options,
    })
}

/// What comparing a corpus found.
#[derive(Debug, Default)]
struct Compared {
    requests: usize,
    /// Requests neither the webhook's rules nor the policy's constraints match.
    outside_rules: usize,
    unreadable: usize,
    /// Requests the split leaves to the webhook, and those its own conditions send it.
    webhook: usize,
    webhook_calls: usize,
    denied: usize,
    exempt: usize,
    /// How often the module named each rule, denying or warning.
    rules: std::collections::BTreeMap<String, usize>,
    /// The policy's messages compared with the module's lines.
    messages: usize,
    /// The exemptions twin's warnings compared with the module's.
    warnings: usize,
    disagreements: Vec<String>,
}

impl Compared {
    fn compare(&mut self, what: &str, vap: &Compiled, request: &Value, json: &Value) {
        // The webhook's rules and the policy's constraints are both `judged_rules`.
        if !vap.constrains(request) {
            self.outside_rules += 1;
            return;
        }
        let module = module_outcome(request, json);
        if module == Outcome::Unreadable {
            self.unreadable += 1;
            return;
        }
        let outcome = vap.outcome(request);
        if let Ok(Outcome::Webhook(called)) = outcome {
            self.webhook += 1;
            self.webhook_calls += usize::from(called);
            return;
        }
        // What the split leaves to the policy, the module judges without reading anything.
        if support::lookups(request, json) > 0 {
            self.disagreements.push(format!(
                "{what}: the module reads another object on a request the policy judges\n  \
                 settings: {json}\n  request: {request}"
            ));
            return;
        }
        self.requests += 1;
        self.denied += usize::from(matches!(module, Outcome::Denied(_)));
        self.exempt += usize::from(matches!(module, Outcome::Exempt(_)));
        if let Outcome::Denied(broken) | Outcome::Exempt(broken) = &module {
            for (_, _, rule) in broken {
                *self.rules.entry(rule.clone()).or_default() += 1;
            }
        }
        match outcome {
            Ok(outcome) if outcome == module => match outcome {
                Outcome::Denied(_) => self.compare_messages(what, vap, request, json),
                Outcome::Exempt(_) => self.compare_bypass(what, vap, request, json),
                _ => {}
            },
            Ok(outcome) => self.disagreements.push(format!(
                "{what}:\n  module: {module:?}\n  VAP:    {outcome:?}\n  settings: {json}\n  \
                 request: {request}"
            )),
            Err(error) => self.disagreements.push(format!("{what}: {error}")),
        }
    }

    /// Compares what the policy and the module say of a request both deny: each of the
    /// policy's messages is one of the module's lines.
    fn compare_messages(&mut self, what: &str, vap: &Compiled, request: &Value, json: &Value) {
        let lines = module_lines(request, json);
        for message in vap.messages(request) {
            self.messages += 1;
            if !lines.contains(&message) {
                self.disagreements.push(format!(
                    "{what}: the policy says {message:?}, the module {lines:?}"
                ));
            }
        }
    }

    /// Compares what the policy's exemptions twin and the module say of an exempt requester's
    /// request: each of the twin's warnings is one of the module's; its audit annotation names
    /// the same requester as the module's, then what each failed validation broke.
    fn compare_bypass(&mut self, what: &str, vap: &Compiled, request: &Value, json: &Value) {
        let bypass = vap.bypass(request).expect("a twin for exempt requesters");
        let (warnings, annotation) = support::vap::module_bypass(request, json);
        for warning in &bypass.warnings {
            self.warnings += 1;
            if !warnings.contains(warning) {
                self.disagreements.push(format!(
                    "{what}: the twin warns {warning:?}, the module {warnings:?}"
                ));
            }
        }
        let names_who = annotation.is_some_and(|annotation| annotation.starts_with(&bypass.who));
        if !names_who || bypass.annotation != bypass.annotation_broke {
            self.disagreements
                .push(format!("{what}: the twin's annotation: {bypass:?}"));
        }
    }

    fn assert_agreed(&self) {
        assert!(
            self.disagreements.is_empty(),
            "{} disagreements of {} requests:\n{}",
            self.disagreements.len(),
            self.requests,
            self.disagreements[..self.disagreements.len().min(8)].join("\n")
        );
    }
}

#[test]
fn the_policy_agrees_with_the_module_on_every_fixture_and_sample() {
    support::vap::deep(the_policy_agrees_with_the_module_on_every_fixture_and_sample_);
}

fn the_policy_agrees_with_the_module_on_every_fixture_and_sample_() {
    let mut compared = Compared::default();
    for (setup, parsed, json) in setups() {
        let vap = Compiled::of(&parsed);
        let exempt = parsed.exemptions.users.first();
        let exempt_group = parsed.exemptions.groups.last();
        for (path, request) in fixtures(&parsed) {
            let name = path.strip_prefix(root()).unwrap().display();
            compared.compare(&format!("{setup}, {name}"), &vap, &request, &json);
            // And as sent by requesters the identities bind, or not, by name and by group.
            for (user, groups) in REQUESTERS.iter().filter(|_| !parsed.identities.is_empty()) {
                let mut request = request.clone();
                request["userInfo"] = serde_json::json!({"username": user, "groups": groups});
                compared.compare(
                    &format!("{setup}, {name}, as {user}"),
                    &vap,
                    &request,
                    &json,
                );
            }
            // And as sent by an exempt user: warned where it would be denied.
            if let Some(user) = exempt {
                let mut request = request.clone();
                request["userInfo"]["username"] = Value::from(user.as_str());
                compared.compare(&format!("{setup}, {name}, exempt"), &vap, &request, &json);
            }
            // And by a member of the last exempt group, after a group that is not.
            if let Some(group) = exempt_group {
                let mut request = request.clone();
                request["userInfo"] = serde_json::json!({"username": "jane",
                    "groups": ["system:authenticated", group]});
                let what = format!("{setup}, {name}, of exempt group {group}");
                compared.compare(&what, &vap, &request, &json);
            }
        }
    }
    compared.assert_agreed();
    // Not vacuous: denials and exempt warnings of every setup are among them.
    assert!(compared.denied > 100, "{compared:?}");
    assert!(compared.exempt > 10, "{compared:?}");
    assert!(compared.warnings >= compared.exempt, "{compared:?}");
    for rule in [
        "owner change",
        "adoption",
        "orphaning",
        "identity",
        "offer",
        "binding",
    ] {
        assert!(compared.rules.contains_key(rule), "{rule}: {compared:?}");
    }
    eprintln!("fixtures: {compared:?}");
}

#[test]
fn the_policy_agrees_with_the_module_in_every_list_of_templates() {
    support::vap::deep(the_policy_agrees_with_the_module_in_every_list_of_templates_);
}

/// Every fixture and sample's metadata, as the template of an item of a Pod's volumes and of a
/// StatefulSet's claim templates, beside an item whose template keeps the stored metadata and
/// one without a template; and once with the item renamed, which pairs it with no stored one.
/// As the fixture's requester and, where the setup has identities, as three of
/// [`REQUESTERS`].
fn the_policy_agrees_with_the_module_in_every_list_of_templates_() {
    let mut compared = Compared::default();
    for (setup, parsed, json) in setups() {
        let vap = Compiled::of(&parsed);
        for (path, request) in fixtures(&parsed) {
            let name = path.strip_prefix(root()).unwrap().display();
            for (kind, renamed) in [("Pod", false), ("StatefulSet", false), ("Pod", true)] {
                let Some(request) = in_a_list_of_templates(&request, kind, renamed) else {
                    continue;
                };
                let what = format!("{setup}, {name} in a {kind}'s list (renamed: {renamed})");
                compared.compare(&what, &vap, &request, &json);
                // A catalogue's writer, a vouched service account and a person.
                let requesters = [REQUESTERS[0], REQUESTERS[3], REQUESTERS[6]];
                let identities = !parsed.identities.is_empty() && !renamed;
                for (user, groups) in requesters.iter().filter(|_| identities) {
                    let mut request = request.clone();
                    request["userInfo"] = serde_json::json!({"username": user, "groups": groups});
                    compared.compare(&format!("{what}, as {user}"), &vap, &request, &json);
                }
            }
        }
    }
    compared.assert_agreed();
    for rule in [
        "owner change",
        "adoption",
        "identity",
        "owner writes",
        "owner value",
    ] {
        assert!(compared.rules.contains_key(rule), "{rule}: {compared:?}");
    }
    assert!(compared.messages > 1000, "{compared:?}");
    eprintln!("lists of templates: {compared:?}");
}

/// `request`, a write of an object itself whose stored or new metadata has labels or
/// annotations, as the same write of a `kind` (`Pod` or `StatefulSet`) whose list of
/// templates holds that metadata ([`list_of_templates`]); `None` for any other request.
fn in_a_list_of_templates(request: &Value, kind: &str, renamed: bool) -> Option<Value> {
    let marked = |side: &Value| {
        let metadata = &side["metadata"];
        metadata["labels"].is_object() || metadata["annotations"].is_object()
    };
    let sub_resource = request["subResource"].as_str().unwrap_or("");
    if !sub_resource.is_empty() || !(marked(&request["object"]) || marked(&request["oldObject"])) {
        return None;
    }
    let namespace = request["namespace"].as_str().unwrap_or("").to_owned();
    let namespace = if namespace.is_empty() {
        "default".to_owned()
    } else {
        namespace
    };
    let stored = &request["oldObject"]["metadata"];
    let side = |side: &Value, name: &str| {
        (!side.is_null())
            .then(|| list_of_templates(kind, &namespace, &side["metadata"], stored, name))
    };
    let new_name = if renamed { "fresh" } else { "scratch" };
    let (group, resource) = match kind {
        "Pod" => ("", "pods"),
        _ => ("apps", "statefulsets"),
    };
    let mut request = request.clone();
    request["kind"] = serde_json::json!({"group": group, "version": "v1", "kind": kind});
    request["resource"] =
        serde_json::json!({"group": group, "version": "v1", "resource": resource});
    request["requestKind"] = request["kind"].clone();
    request["requestResource"] = request["resource"].clone();
    request["name"] = Value::from("w");
    request["namespace"] = Value::from(namespace.as_str());
    request["object"] = side(&request["object"], new_name).unwrap_or(Value::Null);
    request["oldObject"] = side(&request["oldObject"], "scratch").unwrap_or(Value::Null);
    Some(request)
}

/// A `kind` named `w` in `namespace` whose list of templates holds an item without one, an item
/// named `name` whose template has `metadata`'s labels and annotations, and an item named `kept`
/// whose template has `stored`'s.
fn list_of_templates(
    kind: &str,
    namespace: &str,
    metadata: &Value,
    stored: &Value,
    name: &str,
) -> Value {
    let template = |metadata: &Value| {
        let mut template = serde_json::json!({"spec": {"accessModes": ["ReadWriteOnce"]}});
        for field in ["labels", "annotations"] {
            if metadata[field].is_object() {
                template["metadata"][field] = metadata[field].clone();
            }
        }
        template
    };
    let (template, kept) = (template(metadata), template(stored));
    let object = |spec: Value| {
        let api_version = if kind == "Pod" { "v1" } else { "apps/v1" };
        serde_json::json!({"apiVersion": api_version, "kind": kind,
            "metadata": {"name": "w", "namespace": namespace}, "spec": spec})
    };
    match kind {
        "Pod" => object(serde_json::json!({"volumes": [
            {"name": "cache", "emptyDir": {}},
            {"name": name, "ephemeral": {"volumeClaimTemplate": template}},
            {"name": "kept", "ephemeral": {"volumeClaimTemplate": kept}},
        ]})),
        _ => {
            let named = |mut template: Value, name: &str| {
                template["metadata"]["name"] = Value::from(name);
                template
            };
            object(serde_json::json!({"volumeClaimTemplates": [
                named(template, name),
                named(kept, "kept"),
            ]}))
        }
    }
}

#[test]
fn the_policy_agrees_with_the_module_on_the_traffic_mix() {
    support::vap::deep(the_policy_agrees_with_the_module_on_the_traffic_mix_);
}

fn the_policy_agrees_with_the_module_on_the_traffic_mix_() {
    let mut compared = Compared::default();
    for (setup, parsed, json) in setups() {
        let vap = Compiled::of(&parsed);
        let before = (compared.requests, compared.webhook, compared.webhook_calls);
        for (index, request) in traffic::mix(&parsed, 20).iter().enumerate() {
            compared.compare(&format!("{setup}, #{index}"), &vap, &request.request, &json);
        }
        // The split's share of the cluster's traffic (docs/vap.md).
        let webhook = compared.webhook - before.1;
        let requests = compared.requests - before.0 + webhook;
        let calls = compared.webhook_calls - before.2;
        eprintln!("traffic, {setup}: {webhook} of {requests} the webhook's, {calls} sent to it");
    }
    compared.assert_agreed();
    eprintln!("traffic: {compared:?}");
}

#[test]
fn the_policy_agrees_with_the_module_on_generated_requests() {
    support::vap::deep(the_policy_agrees_with_the_module_on_generated_requests_);
}

fn the_policy_agrees_with_the_module_on_generated_requests_() {
    let config = Config {
        cases: 100,
        rng_seed: RngSeed::Fixed(0x5eed_0040),
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let compared = std::cell::RefCell::new(Compared::default());
    // The generated settings without `stamp`, which the generator refuses, so that the rest is
    // judged.
    let fitting = requests::arb_settings()
        .prop_map(|(_, mut json)| {
            json["stamp"] = Value::from(false);
            settings(&json.to_string())
        })
        .prop_filter("settings the generator takes", |(parsed, _)| {
            single_owner_manifest::vap::refusals(parsed, Split::WithWebhook).is_empty()
        });
    runner
        .run(
            // Many requests under each setup: compiling a setup's policy is the slow part.
            &(fitting, prop::collection::vec(requests::arb_request(), 30)),
            |((parsed, json), requests)| {
                let vap = Compiled::of(&parsed);
                for request in &requests {
                    compared
                        .borrow_mut()
                        .compare("generated", &vap, request, &json);
                }
                Ok(())
            },
        )
        .unwrap();
    let compared = compared.into_inner();
    compared.assert_agreed();
    assert!(compared.denied > 100, "{compared:?}");
    assert!(compared.rules.contains_key("identity"), "{compared:?}");
    eprintln!("generated: {compared:?}");
}

#[test]
fn the_policy_agrees_with_the_module_on_every_identity_and_act() {
    support::vap::deep(the_policy_agrees_with_the_module_on_every_identity_and_act_);
}

/// Every act on an owner (create with it, adopt, remove, offer, withdraw, accept) by every
/// requester of [`REQUESTERS`] and some whose groups vouch for nothing, on owners that each of
/// the identities' patterns names or just misses, under the identities shape.
fn the_policy_agrees_with_the_module_on_every_identity_and_act_() {
    let (setup, parsed, json) = setup(IDENTITIES_SETUP);
    let vap = Compiled::of(&parsed);
    let offer = parsed.offer_annotation.clone();
    // (mark, companion value, value), as the shape's marks read them, and the offer's id.
    let owners: Vec<(usize, &str, &str)> = vec![
        (0, "ClusterExtension", "a"),
        (0, "ClusterExtension", "controller"),
        (0, "ClusterExtension", "web.v2"),
        (0, "ClusterExtension", "x_web.v2_y"),
        (0, "ClusterExtension", "x_webXv2_y"),
        (0, "ClusterExtension", "x_a_y"),
        (0, "Extension", "team-a.x-y"),
        (0, "Extension", "team-a.xy"),
        (1, "team-a", "web"),
        (1, "shop", "web"),
        (1, "olm", "web"),
    ];
    let keys = [
        (
            "labels",
            "olm.operatorframework.io/owner-name",
            "olm.operatorframework.io/owner-kind",
        ),
        (
            "annotations",
            "meta.helm.sh/release-name",
            "meta.helm.sh/release-namespace",
        ),
    ];
    let id = |&(mark, part, value): &(usize, &str, &str)| match mark {
        0 => format!("{part}.{value}"),
        _ => format!("{part}/{value}"),
    };
    let metadata = |owner: Option<&(usize, &str, &str)>, offered: Option<String>| {
        let mut metadata = serde_json::json!({"name": "c", "namespace": "team-a",
            "labels": {}, "annotations": {}});
        if let Some(&(mark, part, value)) = owner {
            let (place, key, companion) = keys[mark];
            metadata[place][key] = Value::from(value);
            metadata[place][companion] = Value::from(part);
        }
        if let Some(text) = offered {
            metadata["annotations"][offer.as_str()] = Value::from(text);
        }
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata})
    };
    let offer_of = |from: &(usize, &str, &str), to: &(usize, &str, &str)| {
        let (key, receiver) = (keys[from.0].1, keys[to.0].1);
        Some(format!("{key}: {} -> {receiver}: {}", id(from), id(to)))
    };
    // And a service account whose groups vouch for another namespace's.
    let requesters = requesters(&[
        (
            "system:serviceaccount:team-a:a",
            &["system:serviceaccounts:team-b"],
        ),
        (
            "system:serviceaccount:team-a:a",
            &["system:serviceaccounts", "system:serviceaccounts:team-b"],
        ),
    ]);
    let mut compared = Compared::default();
    for requester in &requesters {
        for owner in &owners {
            let other =
                &owners[(owners.iter().position(|o| o == owner).unwrap() + 1) % owners.len()];
            let acts = [
                ("CREATE", None, metadata(Some(owner), None)),
                (
                    "UPDATE",
                    Some(metadata(None, None)),
                    metadata(Some(owner), None),
                ),
                (
                    "UPDATE",
                    Some(metadata(Some(owner), None)),
                    metadata(None, None),
                ),
                (
                    "UPDATE",
                    Some(metadata(Some(owner), None)),
                    metadata(Some(owner), offer_of(owner, other)),
                ),
                (
                    "UPDATE",
                    Some(metadata(Some(owner), offer_of(owner, other))),
                    metadata(Some(owner), None),
                ),
                (
                    "UPDATE",
                    Some(metadata(Some(other), offer_of(other, owner))),
                    metadata(Some(owner), None),
                ),
            ];
            for (operation, old, new) in acts {
                let old = old.unwrap_or(Value::Null);
                let request = configmap_request(operation, requester, old, new, Value::Null);
                let (user, groups) = requester;
                compared.compare(
                    &format!("{setup}, as {user} {groups:?}"),
                    &vap,
                    &request,
                    &json,
                );
            }
        }
    }
    compared.assert_agreed();
    assert!(
        compared.rules.get("identity").is_some_and(|n| *n > 100),
        "{compared:?}"
    );
    eprintln!("identities: {compared:?}");
}

#[test]
fn the_policy_agrees_with_the_module_on_every_tracking_id() {
    support::vap::deep(the_policy_agrees_with_the_module_on_every_tracking_id_);
}

/// Every pair of Argo CD tracking ids, stored and new — one naming the object, another object,
/// the object in another namespace or of another kind, one that does not parse, none — on a
/// namespaced object, a cluster-scoped one and a Namespace; and offers of a tracked object to
/// receivers a tracking id could name and could not, made and taken. Under Argo CD's marks as
/// the example has them (without lookups, so that the policy judges every request), and with
/// adoption and orphaning denied.
fn the_policy_agrees_with_the_module_on_every_tracking_id_() {
    let (name, _, json) = setup("argo-cd without lookups");
    let mut strict = json.clone();
    strict["adoption"] = Value::from("Deny");
    strict["orphaning"] = Value::from("Deny");
    let setups = [
        (name.clone(), json),
        (format!("{name}, adoption and orphaning denied"), strict),
    ];
    // (group, kind, resource, the request's namespace, name)
    let objects = [
        ("", "ConfigMap", "configmaps", "team-a", "c"),
        (
            "rbac.authorization.k8s.io",
            "ClusterRole",
            "clusterroles",
            "",
            "c",
        ),
        ("", "Namespace", "namespaces", "team-a", "team-a"),
    ];
    const TRACKING: &str = "argocd.argoproj.io/tracking-id";
    let requester = ("alice", vec!["system:authenticated"]);
    let mut compared = Compared::default();
    for (setup, json) in setups {
        let (parsed, json) = settings(&json.to_string());
        let vap = Compiled::of(&parsed);
        let offer = parsed.offer_annotation.as_str();
        for (group, kind, resource, namespace, name) in objects {
            let object = format!("{group}/{kind}:{namespace}/{name}");
            let ids: Vec<Option<String>> = [
                format!("guestbook:{object}"),
                format!("other:{object}"),
                format!(":{object}"),
                format!("guestbook:{group}/{kind}:{namespace}/elsewhere"),
                format!("guestbook:{group}/{kind}:shop/{name}"),
                format!("guestbook:apps/Deployment:{namespace}/{name}"),
                format!("guestbook:{object}/x"),
                format!("a:b:{object}"),
                "guestbook".to_owned(),
                String::new(),
            ]
            .into_iter()
            .map(Some)
            .chain([None])
            .collect();
            let metadata = |id: Option<&str>, offered: Option<&str>, helm: bool| {
                let mut metadata = serde_json::json!({"name": name, "annotations": {}});
                if !namespace.is_empty() && kind != "Namespace" {
                    metadata["namespace"] = Value::from(namespace);
                }
                let annotations = &mut metadata["annotations"];
                if let Some(id) = id {
                    annotations[TRACKING] = Value::from(id);
                }
                if let Some(text) = offered {
                    annotations[offer] = Value::from(text);
                }
                if helm {
                    annotations["meta.helm.sh/release-name"] = Value::from("web");
                    annotations["meta.helm.sh/release-namespace"] = Value::from("shop");
                }
                let api_version = match group {
                    "" => "v1".to_owned(),
                    group => format!("{group}/v1"),
                };
                serde_json::json!({"apiVersion": api_version, "kind": kind, "metadata": metadata})
            };
            let mut acts = Vec::new();
            for new in &ids {
                acts.push(("CREATE", Value::Null, metadata(new.as_deref(), None, false)));
                for old in &ids {
                    acts.push((
                        "UPDATE",
                        metadata(old.as_deref(), None, false),
                        metadata(new.as_deref(), None, false),
                    ));
                }
            }
            let own = format!("guestbook:{object}");
            let tracked = |id: &str, offered: Option<&str>| metadata(Some(id), offered, false);
            for receiver in [
                "other",
                "team-a/other",
                "a:b",
                "meta.helm.sh/release-name: other",
                "meta.helm.sh/release-name: shop/web",
            ] {
                let text = format!("{TRACKING}: guestbook -> {receiver}");
                acts.push(("UPDATE", tracked(&own, None), tracked(&own, Some(&text))));
            }
            for receiver in ["guestbook", "team-a/x"] {
                let text = format!("meta.helm.sh/release-name: shop/web -> {TRACKING}: {receiver}");
                let offered = metadata(None, Some(&text), true);
                acts.push(("UPDATE", metadata(None, None, true), offered.clone()));
                let taken = format!("{receiver}:{object}");
                acts.push(("UPDATE", offered, tracked(&taken, None)));
            }
            let text = format!("{TRACKING}: guestbook -> other");
            let taken = format!("other:{object}");
            acts.push(("UPDATE", tracked(&own, Some(&text)), tracked(&taken, None)));
            acts.push((
                "UPDATE",
                tracked(&own, Some(&text)),
                tracked(&taken, Some(&text)),
            ));
            for (operation, old, new) in acts {
                let request = serde_json::json!({
                    "uid": "u", "operation": operation, "name": name, "namespace": namespace,
                    "kind": {"group": group, "version": "v1", "kind": kind},
                    "resource": {"group": group, "version": "v1", "resource": resource},
                    "userInfo": {"username": requester.0, "groups": requester.1},
                    "object": new, "oldObject": old, "options": null,
                });
                compared.compare(&format!("{setup}, {kind}"), &vap, &request, &json);
            }
        }
    }
    compared.assert_agreed();
    for rule in [
        "owner change",
        "owner value",
        "adoption",
        "orphaning",
        "offer",
    ] {
        assert!(compared.rules.contains_key(rule), "{rule}: {compared:?}");
    }
    eprintln!("tracking ids: {compared:?}");
}

#[test]
fn the_policy_agrees_with_the_module_on_every_offer() {
    support::vap::deep(the_policy_agrees_with_the_module_on_every_offer_);
}

/// Every way an offer goes wrong, made, changed, withdrawn, left behind by a move or made beside
/// one — malformed, naming no mark, of nothing, by another owner, by a requester not acting for
/// the owner, to itself, to a receiver that names no valid owner or one out of the object's
/// scope — and offers that are fine, under a kind pair and a namespace pair with identities
/// whose patterns hold no templates, by a requester who owns, one who only writes, and one
/// who does neither.
fn the_policy_agrees_with_the_module_on_every_offer_() {
    const OLM: &str = "olm.operatorframework.io/owner-name";
    const HELM: &str = "meta.helm.sh/release-name";
    let yaml = format!(
        "ownerMarks:
  - label: {OLM}
    kindKey: olm.operatorframework.io/owner-kind
    clusterKinds: [ClusterExtension]
    namespacedKinds: [Extension]
  - annotation: {HELM}
    namespaceKey: meta.helm.sh/release-namespace
identities:
  - owners: [ClusterExtension.a, Extension.team-a.x, \"shop/*\"]
    users: [alice]
  - owners: [\"ClusterExtension.*\"]
    users: [bob]
    access: Write"
    );
    let (parsed, json) = settings(&yaml);
    let vap = Compiled::of(&parsed);
    let offer = parsed.offer_annotation.clone();
    // The owners, as (mark, companion value, value) and the id offers name them by.
    let owners = [
        (0, "ClusterExtension", "a", "ClusterExtension.a"),
        (0, "Extension", "team-a.x", "Extension.team-a.x"),
        (1, "shop", "web", "shop/web"),
    ];
    let receivers = [
        "ClusterExtension.b",
        "Extension.team-b.x",
        "Extension.team-a",
        "Extension",
        "Bogus.x",
        "shop/web-v2",
        "web",
        "nosuch: b",
        &format!("{OLM}: ClusterExtension.b"),
        &format!("{OLM}: Extension.team-b.x"),
        &format!("{OLM}: ClusterExtension"),
        &format!("{HELM}: shop/web-v2"),
        &format!("{HELM}: web"),
    ];
    let metadata = |owner: Option<(usize, &str, &str)>, offered: Option<&str>| {
        let mut metadata = serde_json::json!({"name": "c", "namespace": "team-a",
            "labels": {}, "annotations": {}});
        if let Some((mark, part, value)) = owner {
            let (place, key, companion) = match mark {
                0 => ("labels", OLM, "olm.operatorframework.io/owner-kind"),
                _ => ("annotations", HELM, "meta.helm.sh/release-namespace"),
            };
            metadata[place][key] = Value::from(value);
            metadata[place][companion] = Value::from(part);
        }
        if let Some(text) = offered {
            metadata["annotations"][offer.as_str()] = Value::from(text);
        }
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata})
    };
    let requesters = [
        ("alice", vec!["system:authenticated"]),
        ("bob", vec!["system:authenticated"]),
        ("carol", vec!["system:authenticated"]),
    ];
    let mut compared = Compared::default();
    for requester in &requesters {
        for &(mark, part, value, id) in &owners {
            let owned = Some((mark, part, value));
            let key = [OLM, HELM][mark];
            let mut texts: Vec<String> = vec![
                "garbage".to_owned(),
                "nosuch: a -> b".to_owned(),
                format!("{key}: someone-else -> {id}"),
                format!("{key}: {id} -> {id}"),
            ];
            texts.extend(receivers.iter().map(|to| format!("{key}: {id} -> {to}")));
            let other = (
                1 - mark,
                ["ClusterExtension", "shop"][mark],
                ["b", "x"][mark],
            );
            // An offer of the other mark, made as that mark takes its owner.
            let other_offer = format!("{}: {}.{} -> y", [OLM, HELM][1 - mark], other.1, other.2);
            for text in &texts {
                let text = Some(text.as_str());
                let acts = [
                    ("CREATE", Value::Null, metadata(owned, text)),
                    ("UPDATE", metadata(owned, None), metadata(owned, text)),
                    ("UPDATE", metadata(owned, text), metadata(owned, None)),
                    (
                        "UPDATE",
                        metadata(owned, text),
                        metadata(owned, Some("garbage")),
                    ),
                    ("UPDATE", metadata(owned, text), metadata(Some(other), text)),
                    ("UPDATE", metadata(owned, None), metadata(Some(other), text)),
                    (
                        "UPDATE",
                        metadata(None, text),
                        metadata(owned, Some(&texts[4])),
                    ),
                    (
                        "UPDATE",
                        metadata(owned, text),
                        metadata(Some(other), Some(&other_offer)),
                    ),
                ];
                for (operation, old, new) in acts {
                    let request = configmap_request(operation, requester, old, new, Value::Null);
                    compared.compare(
                        &format!("offers, as {}", requester.0),
                        &vap,
                        &request,
                        &json,
                    );
                }
            }
        }
    }
    compared.assert_agreed();
    assert!(
        compared.rules.get("offer").is_some_and(|n| *n > 100),
        "{compared:?}"
    );
    eprintln!("offers: {compared:?}");
}

#[test]
fn the_policy_agrees_with_the_module_on_every_write_of_an_owned_object() {
    support::vap::deep(the_policy_agrees_with_the_module_on_every_write_of_an_owned_object_);
}

/// Under `writes: Owner`, every kind of UPDATE and DELETE `writes::rule` tells apart — one that
/// changes the object, nothing, only the fields the API server maintains, adds or removes
/// finalizers (the propagation ones too), one that finishes a deletion under way or not (its
/// grace period shortened, its propagation changed) — of objects each identity's owner owns or
/// not, by every requester (one with grants, and one writing a workload's child: the
/// webhook's).
fn the_policy_agrees_with_the_module_on_every_write_of_an_owned_object_() {
    let (setup, parsed, json) = setup(WRITES_SETUP);
    let vap = Compiled::of(&parsed);
    let owners = [
        ("ClusterExtension", "a"),
        ("ClusterExtension", "controller"),
        ("Extension", "team-a.x-y"),
        ("Extension", "team-b.x-y"),
    ];
    let base = Shape {
        finalizers: &["example.com/cleanup"],
        data: "v",
        ..Shape::default()
    };
    let terminating = Shape {
        terminating: true,
        ..base
    };
    let with = |shape: Shape, finalizers: &'static [&'static str]| Shape {
        finalizers,
        ..shape
    };
    let updates: Vec<(&str, Shape, Shape)> = vec![
        ("data", base, Shape { data: "w", ..base }),
        ("nothing", base, base),
        (
            "maintained",
            base,
            Shape {
                maintained: true,
                ..base
            },
        ),
        ("a label", base, Shape { tier: "db", ..base }),
        (
            "owner references",
            base,
            Shape {
                referenced: Some("Secret"),
                ..base
            },
        ),
        (
            "adds a finalizer",
            base,
            with(base, &["example.com/cleanup", "x.io/y"]),
        ),
        (
            "adds orphan",
            base,
            with(base, &["example.com/cleanup", "orphan"]),
        ),
        (
            "adds foreground",
            base,
            with(base, &["foregroundDeletion", "example.com/cleanup"]),
        ),
        ("removes a finalizer", base, with(base, &[])),
        (
            "reorders",
            with(base, &["a.io/a", "b.io/b"]),
            with(base, &["b.io/b", "a.io/a"]),
        ),
        (
            "terminating, removes a finalizer",
            terminating,
            with(terminating, &[]),
        ),
        (
            "terminating, status",
            terminating,
            Shape {
                status: true,
                ..terminating
            },
        ),
        (
            "terminating, data",
            terminating,
            Shape {
                data: "w",
                ..terminating
            },
        ),
        (
            "terminating, removes orphan",
            with(terminating, &["orphan"]),
            with(terminating, &[]),
        ),
    ];
    let deletes: Vec<(&str, Shape, Value)> = vec![
        ("a DELETE", base, Value::Null),
        ("a terminating object's", terminating, Value::Null),
        (
            "shorter grace",
            terminating,
            serde_json::json!({"gracePeriodSeconds": 0}),
        ),
        (
            "longer grace",
            terminating,
            serde_json::json!({"gracePeriodSeconds": 60}),
        ),
        (
            "orphaning",
            terminating,
            serde_json::json!({"propagationPolicy": "Orphan"}),
        ),
        (
            "background",
            terminating,
            serde_json::json!({"propagationPolicy": "Background"}),
        ),
        (
            "foreground",
            with(terminating, &["foregroundDeletion"]),
            serde_json::json!({"propagationPolicy": "Foreground"}),
        ),
        (
            "orphaning again",
            with(terminating, &["orphan"]),
            serde_json::json!({"orphanDependents": true}),
        ),
        (
            "unknown propagation",
            terminating,
            serde_json::json!({"propagationPolicy": "Sideways"}),
        ),
        (
            "a child's",
            Shape {
                referenced: Some("ReplicaSet"),
                ..base
            },
            Value::Null,
        ),
    ];
    // And the writer with grants.
    let requesters = requesters(&[("keda", &["system:authenticated"])]);
    let mut compared = Compared::default();
    for requester in &requesters {
        let user = requester.0;
        for owner in owners {
            for (what, old, new) in &updates {
                let (old, new) = (old.object(owner), new.object(owner));
                let request = configmap_request("UPDATE", requester, old, new, Value::Null);
                compared.compare(
                    &format!("{setup}, {what}, as {user}"),
                    &vap,
                    &request,
                    &json,
                );
            }
            for (what, old, options) in &deletes {
                let (old, options) = (old.object(owner), options.clone());
                let request = configmap_request("DELETE", requester, old, Value::Null, options);
                compared.compare(
                    &format!("{setup}, {what}, as {user}"),
                    &vap,
                    &request,
                    &json,
                );
            }
        }
    }
    compared.assert_agreed();
    assert!(
        compared.rules.get("owner writes").is_some_and(|n| *n > 100),
        "{compared:?}"
    );
    assert!(compared.webhook > 10, "{compared:?}");
    eprintln!("writes: {compared:?}");
}

/// A ConfigMap as a write of it leaves it, and its owner.
#[derive(Debug, Clone, Copy, Default)]
struct Shape {
    finalizers: &'static [&'static str],
    data: &'static str,
    tier: &'static str,
    terminating: bool,
    /// `status` written.
    status: bool,
    /// The fields the API server maintains changed.
    maintained: bool,
    /// The kind of a controller it references.
    referenced: Option<&'static str>,
}

impl Shape {
    fn object(&self, (kind, name): (&str, &str)) -> Value {
        let mut object = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "team-a", "resourceVersion": "1",
                "labels": {"olm.operatorframework.io/owner-name": name,
                           "olm.operatorframework.io/owner-kind": kind,
                           "tier": if self.tier.is_empty() { "web" } else { self.tier }},
                "finalizers": self.finalizers},
            "data": {"k": self.data}});
        let metadata = &mut object["metadata"];
        if self.terminating {
            metadata["deletionTimestamp"] = Value::from("2026-12-01T10:00:00Z");
            metadata["deletionGracePeriodSeconds"] = Value::from(30);
        }
        if self.maintained {
            metadata["resourceVersion"] = Value::from("2");
            metadata["generation"] = Value::from(2);
        }
        if let Some(kind) = self.referenced {
            metadata["ownerReferences"] = serde_json::json!([{"apiVersion": "apps/v1",
                "kind": kind, "name": "r", "uid": "u", "controller": true}]);
        }
        if self.status {
            object["status"] = serde_json::json!({"phase": "x"});
        }
        object
    }
}

#[test]
fn the_stamping_policy_patches_as_the_module_stamps() {
    support::vap::deep(the_stamping_policy_patches_as_the_module_stamps_);
}

/// Under `stamp: true`, the MutatingAdmissionPolicy changes what the module's stamping twin
/// changes — the mark stamped, the consumed offer removed — on every fixture and sample (as
/// each requester sends it, under helm-accounts' settings), and on generated requests, under
/// helm-accounts' settings and generated settings that stamp.
fn the_stamping_policy_patches_as_the_module_stamps_() {
    let path = root().join("examples/helm-accounts/settings.yaml");
    let (parsed, json) = settings(&fs::read_to_string(path).unwrap());
    let mut setups = vec![("helm-accounts".to_owned(), parsed, json)];
    let mut runner = TestRunner::new(Config {
        cases: 30,
        rng_seed: RngSeed::Fixed(0x5eed_0041),
        failure_persistence: None,
        ..Config::default()
    });
    let stamping = requests::arb_settings().prop_filter("settings that stamp", |(parsed, _)| {
        parsed.stamp
            && !parsed.identities.is_empty()
            && single_owner_manifest::vap::stamp::stamping(parsed).is_ok()
    });
    for index in 0..30 {
        let (parsed, json) = stamping.new_tree(&mut runner).unwrap().current();
        setups.push((format!("generated #{index}"), parsed, json));
    }
    let (mut compared, mut stamped, mut removed, mut disagreements) = (0, 0, 0, Vec::new());
    for (setup, parsed, json) in &setups {
        let map = CompiledStamping::of(parsed);
        let mut requests: Vec<(String, Value)> = Vec::new();
        let more: [(&str, &[&str]); 2] = [
            ("root", &["system:authenticated"]),
            (
                "system:serviceaccount:helm-releases:web",
                &[
                    "system:serviceaccounts",
                    "system:serviceaccounts:helm-releases",
                ],
            ),
        ];
        for (path, request) in fixtures(parsed) {
            requests.push((format!("{}", path.display()), request.clone()));
            // Each sent by every requester, under the example's settings.
            let requesters = match setup == "helm-accounts" {
                true => requesters(&more),
                false => Vec::new(),
            };
            for requester in requesters {
                let mut request = request.clone();
                let (user, groups) = &requester;
                request["userInfo"] = serde_json::json!({"username": user, "groups": groups});
                requests.push((format!("{}, as {user}", path.display()), request));
            }
        }
        let generated = prop::collection::vec(requests::arb_request(), 30);
        for request in generated.new_tree(&mut runner).unwrap().current() {
            requests.push(("generated".to_owned(), request));
        }
        for (what, request) in requests {
            let Ok(module) = support::vap::module_patched(&request, json) else {
                continue;
            };
            compared += 1;
            let policy = map.patched(&request, &parsed.offer_annotation);
            match (&policy, &module) {
                (Ok(policy), module) if policy == module => {
                    stamped += usize::from(module.is_some());
                    removed += usize::from(module.as_ref().is_some_and(|object| {
                        object["metadata"]["annotations"]
                            .get(&parsed.offer_annotation)
                            .is_none()
                            && request["object"]["metadata"]["annotations"]
                                .get(&parsed.offer_annotation)
                                .is_some()
                    }));
                }
                _ => disagreements.push(format!(
                    "{setup}, {what}:\n  module: {module:?}\n  policy: {policy:?}\n  \
                     settings: {json}\n  request: {request}"
                )),
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements of {compared}:\n{}",
        disagreements.len(),
        disagreements[..disagreements.len().min(5)].join("\n")
    );
    let marked = stamped - removed;
    assert!(
        marked > 20 && removed > 5,
        "{compared} compared, {marked} stamped, {removed} offers removed"
    );
    eprintln!("stamping: {compared} compared, {marked} stamped, {removed} offers removed");
}

#[test]
fn settings_that_need_the_webhook_are_refused_with_each_reason() {
    let refused: Vec<(String, Vec<String>)> = examples()
        .into_iter()
        .map(|example| {
            let path = root().join("examples").join(&example).join("settings.yaml");
            let (parsed, _) = settings(&fs::read_to_string(path).unwrap());
            (
                example,
                single_owner_manifest::vap::refusals(&parsed, Split::Alone),
            )
        })
        .filter(|(_, refusals)| !refusals.is_empty())
        .map(|(example, refusals)| {
            let fields = refusals
                .iter()
                .map(|refusal| refusal.split(':').next().unwrap().to_owned())
                .collect();
            (example, fields)
        })
        .collect();
    let expected = |example: &str, fields: &[&str]| {
        (
            example.to_owned(),
            fields.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        refused,
        vec![
            expected(
                "argo-cd",
                &["ownerMarks[0].ownerLookup", "ownerMarks[1].ownerLookup"]
            ),
            expected("camel-k", &["parentKinds"]),
            expected(
                "flux",
                &[
                    "writes",
                    "clusterWriters",
                    "parentKinds",
                    "ownerMarks[0].ownerLookup",
                    "ownerMarks[1].ownerLookup",
                    "ownerMarks[2].ownerLookup"
                ]
            ),
            expected("helm", &["ownerMarks[0].ownerLookup"]),
            expected(
                "helm-accounts",
                &["writes", "clusterWriters", "parentKinds"]
            ),
            expected(
                "olm-v1",
                &[
                    "writes",
                    "clusterWriters",
                    "parentKinds",
                    "ownerMarks[0].ownerLookup"
                ]
            ),
        ]
    );
}

/// CEL nodes in an expression, as cel-go's runtime cost counts them (about one per identifier,
/// literal, field selection, operator and call): an estimate of what one evaluation costs.
fn nodes(expression: &str) -> usize {
    let mut nodes = 0;
    let mut chars = expression.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                nodes += 1;
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '\'' => break,
                        _ => {}
                    }
                }
            }
            c if c.is_ascii_alphanumeric() || c == '_' => {
                nodes += 1;
                while chars
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    chars.next();
                }
            }
            '.' | '[' | '!' | '?' | '+' | '<' | '>' => nodes += 1,
            '=' | '&' | '|' if chars.peek() == Some(&c) => {
                chars.next();
                nodes += 1;
            }
            _ => {}
        }
    }
    nodes
}

/// The text of the comprehension that pairs each template of a list with the stored ones of its
/// name: the filter a rule runs over the stored list for each item.
fn pairing(expression: &str) -> Option<&str> {
    let start = expression.find("Stored.filter(o, ")?;
    let mut depth = 0;
    for (at, c) in expression[start..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 1 => return Some(&expression[start..start + at]),
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Kubernetes' limits, for every setup the generator takes: at most 64 match conditions; each
/// expression within cel-go's parser (100,000 code points, which the generator refuses to pass,
/// and 250 levels of nesting, kept here to 32); and an estimate of the runtime cost — nodes per evaluation, a list of
/// templates' rule once per item and its pairing once per item and stored item — against the
/// per-expression limit (1,000,000) and the per-evaluation budget (10,000,000), for lists of
/// [`ITEMS`] items. docs/vap.md reports the figures this prints.
#[test]
fn the_policy_stays_within_kubernetes_limits() {
    const ITEMS: usize = 32;
    for (setup, parsed, _) in setups() {
        let vap = single_owner_manifest::vap::vap(&parsed, Split::WithWebhook).unwrap();
        // The policy that denies: the webhook's conditions, the split's, the exemptions'.
        let conditions = vap.denying_conditions();
        assert!(conditions.len() < 64, "{setup}");
        let expressions = (conditions.iter())
            .map(|c| (c.name.as_str(), c.expression.as_str()))
            .chain(
                vap.variables
                    .iter()
                    .map(|v| (v.name.as_str(), v.expression.as_str())),
            )
            .chain(vap.validations.iter().flat_map(|v| {
                [
                    (v.mark.as_str(), v.expression.as_str()),
                    (v.mark.as_str(), v.message_expression.as_str()),
                ]
            }));
        let (mut characters, mut count, mut total, mut largest) = (0, 0, 0, (0, ""));
        for (name, expression) in expressions {
            let size = expression.chars().count();
            let deepest = support::nesting(expression);
            assert!(
                size <= 100_000 && deepest <= 32,
                "{setup}, {name}: {size}, {deepest}"
            );
            let cost = match pairing(expression) {
                Some(pairing) => ITEMS * nodes(expression) + ITEMS * ITEMS * nodes(pairing),
                None => nodes(expression),
            };
            assert!(cost <= 1_000_000, "{setup}, {name}: about {cost}");
            characters += size;
            count += 1;
            total += cost;
            largest = largest.max((cost, name));
        }
        assert!(total <= 10_000_000, "{setup}: about {total}");
        eprintln!(
            "{setup}: {} conditions, {} variables, {} validations, {count} expressions, \
             {characters} characters; cost about {total} in all, at most {} ({})",
            conditions.len(),
            vap.variables.len(),
            vap.validations.len(),
            largest.0,
            largest.1
        );
    }
}

/// A policy etcd would not store (more than its default `--max-request-bytes`, 1.5 MiB) is
/// refused, naming its size; flux's settings with three more marks make one.
#[test]
fn a_policy_larger_than_etcd_stores_is_refused() {
    let flux = fs::read_to_string(root().join("examples/flux/settings.yaml")).unwrap();
    let more = "  - annotation: argocd.argoproj.io/tracking-id
    format: ArgoCDTrackingID
  - annotation: camel.apache.org/operator.id
  - label: olm.operatorframework.io/owner-name
    kindKey: olm.operatorframework.io/owner-kind
    clusterKinds: [ClusterExtension]
identities:
";
    let settings = flux.replacen("identities:\n", more, 1);
    let refused = single_owner_manifest::vap::manifest(
        "large",
        single_owner_manifest::Mode::Protect,
        &settings,
        single_owner_manifest::vap::Lookups::Refuse,
        Split::WithWebhook,
    )
    .unwrap_err();
    // The size changes with the generator; the rest is the message.
    let (before, after) = refused.split_once(" would be ").unwrap();
    assert_eq!(before, "ownerMarks: the ValidatingAdmissionPolicy large");
    let (size, after) = after.split_once(' ').unwrap();
    assert!(size.parse::<usize>().unwrap() > 1_572_864, "{refused}");
    assert_eq!(
        after,
        "bytes, more than the 1572864 etcd stores in one object by default \
         (--max-request-bytes); deploy the webhook (make manifest)"
    );
}
