//! The example policies carry the generated match conditions, and the generated manifest for
//! each example's settings is the example's policy in every field but its own additions.

mod support;

use std::fs;

use serde::Deserialize;
use serde_yaml::Value;
use single_owner_manifest::{
    IMAGE, Mode, lookup_kinds, manifest, match_conditions, read_settings, rules_yaml,
};
use support::{examples, root};

fn read(path: &str) -> String {
    fs::read_to_string(root().join(path)).unwrap()
}

/// The YAML documents of a file (two policies with `stamp: true`).
fn documents(text: &str) -> Vec<Value> {
    serde_yaml::Deserializer::from_str(text)
        .map(|document| Value::deserialize(document).unwrap())
        .collect()
}

#[test]
fn examples_carry_the_generated_match_conditions() {
    for setup in examples() {
        let Ok(text) = fs::read_to_string(root().join(format!("examples/{setup}/policy.yaml")))
        else {
            panic!("examples/{setup} has no policy.yaml; generate it: {REGENERATE}");
        };
        for policy in documents(&text) {
            // Each policy carries the conditions of its own settings.
            let settings =
                read_settings(&serde_yaml::to_string(&policy["spec"]["settings"]).unwrap())
                    .unwrap();
            let generated: Vec<(String, String)> = match_conditions(&settings)
                .into_iter()
                .map(|condition| (condition.name, condition.expression))
                .collect();
            let carried: Vec<(String, String)> = policy["spec"]["matchConditions"]
                .as_sequence()
                .unwrap_or_else(|| panic!("examples/{setup}/policy.yaml has no matchConditions"))
                .iter()
                .map(|condition| {
                    let field = |name: &str| condition[name].as_str().unwrap().to_owned();
                    (field("name"), field("expression"))
                })
                .collect();
            let names = |conditions: &[(String, String)]| -> Vec<String> {
                conditions.iter().map(|(name, _)| name.clone()).collect()
            };
            let stale: Vec<&str> = generated
                .iter()
                .filter(|condition| !carried.contains(condition))
                .map(|(name, _)| name.as_str())
                .collect();
            assert!(
                carried == generated,
                "examples/{setup}/policy.yaml: its matchConditions {:?} are not the generated {:?} \
             (differing: {stale:?}); regenerate them: {REGENERATE}",
                names(&carried),
                names(&generated),
            );
        }
    }
}

/// How to regenerate the examples' policies from their settings (the Makefile's `examples`).
const REGENERATE: &str = "make examples";

#[test]
fn the_generated_manifest_is_the_example_policy() {
    for setup in examples() {
        let settings_yaml = read(&format!("examples/{setup}/settings.yaml"));
        let generated = manifest(
            &format!("single-owner-{setup}"),
            Mode::Protect,
            &settings_yaml,
        )
        .unwrap();
        let generated = documents(&generated);
        let examples = documents(&read(&format!("examples/{setup}/policy.yaml")));
        let settings: Value = serde_yaml::from_str(&settings_yaml).unwrap();
        assert_eq!(
            generated.len(),
            examples.len(),
            "{setup}: policies; {REGENERATE}"
        );
        if let [generated] = generated.as_slice() {
            assert_eq!(generated["spec"]["settings"], settings, "{setup}");
        }
        for (generated, example) in generated.iter().zip(&examples) {
            assert_eq!(
                generated["spec"]["module"].as_str(),
                Some(single_owner_manifest::module().as_str()),
                "{setup}"
            );
            for field in [
                "module",
                "mode",
                "failurePolicy",
                "namespaceSelector",
                "mutating",
                "backgroundAudit",
                "contextAwareResources",
                "matchConditions",
                "settings",
            ] {
                assert!(
                    generated["spec"][field] == example["spec"][field],
                    "examples/{setup}/policy.yaml: spec.{field} is not the generated one; \
                 regenerate it: {REGENERATE}"
                );
            }
            assert_eq!(generated["metadata"], example["metadata"], "{setup}");
            // The example may add audit rules for kinds its installers bring (Camel K's).
            let generated = generated["spec"]["rules"].as_sequence().unwrap();
            let example = example["spec"]["rules"].as_sequence().unwrap();
            assert_eq!(
                &example[..generated.len()],
                generated.as_slice(),
                "{setup}: rules"
            );
            for extra in &example[generated.len()..] {
                assert!(auditable(extra), "{setup}: {extra:?} is no audit rule");
            }
        }
    }
}

/// Whether Kubewarden's audit scanner replays the objects a rule names: it skips rules with a
/// wildcard in apiGroups, apiVersions or resources, and rules without CREATE.
fn auditable(rule: &Value) -> bool {
    let concrete = |field: &str| {
        rule[field]
            .as_sequence()
            .unwrap()
            .iter()
            .all(|value| !value.as_str().unwrap().contains('*'))
    };
    ["apiGroups", "apiVersions", "resources"]
        .into_iter()
        .all(concrete)
        && rule["operations"]
            .as_sequence()
            .unwrap()
            .contains(&Value::from("CREATE"))
}

/// Every policy, and metadata.yml, has rules the audit scanner replays, for the kinds installers
/// create: CRDs, RBAC, workloads, configuration, webhooks, API services.
#[test]
fn policies_have_rules_the_audit_scanner_replays() {
    let audited = |rules: &Value| -> Vec<String> {
        rules
            .as_sequence()
            .unwrap()
            .iter()
            .filter(|rule| auditable(rule))
            .flat_map(|rule| rule["resources"].as_sequence().unwrap().clone())
            .map(|resource| resource.as_str().unwrap().to_owned())
            .collect()
    };
    let metadata: Value = serde_yaml::from_str(&read("metadata.yml")).unwrap();
    let kinds = [
        "customresourcedefinitions",
        "namespaces",
        "clusterroles",
        "clusterrolebindings",
        "roles",
        "rolebindings",
        "serviceaccounts",
        "deployments",
        "services",
        "configmaps",
        "secrets",
        "jobs",
        "validatingwebhookconfigurations",
        "mutatingwebhookconfigurations",
        "apiservices",
    ];
    let mut rule_lists = vec![("metadata.yml".to_owned(), metadata["rules"].clone())];
    for setup in examples() {
        let policy = &documents(&read(&format!("examples/{setup}/policy.yaml")))[0];
        rule_lists.push((setup.clone(), policy["spec"]["rules"].clone()));
    }
    for (name, rules) in &rule_lists {
        let resources = audited(rules);
        for kind in kinds {
            assert!(
                resources.iter().any(|r| r == kind),
                "{name}: no audit rule for {kind}"
            );
        }
    }
    let camel_k = &rule_lists
        .iter()
        .find(|(name, _)| name == "camel-k")
        .unwrap()
        .1;
    for kind in [
        "integrations",
        "integrationplatforms",
        "integrationkits",
        "builds",
    ] {
        assert!(
            audited(camel_k).iter().any(|r| r == kind),
            "camel-k: {kind}"
        );
    }
}

#[test]
fn example_policies_agree_with_metadata_and_their_settings_file() {
    let metadata: Value = serde_yaml::from_str(&read("metadata.yml")).unwrap();
    for setup in examples() {
        let file: Value =
            serde_yaml::from_str(&read(&format!("examples/{setup}/settings.yaml"))).unwrap();
        let policies = documents(&read(&format!("examples/{setup}/policy.yaml")));
        // With `stamp: true`, two policies: one judges (validating), one only stamps.
        let twins = file["stamp"].as_bool() == Some(true);
        assert_eq!(policies.len(), if twins { 2 } else { 1 }, "{setup}");
        for policy in &policies {
            let spec = &policy["spec"];
            let settings = spec["settings"].clone();
            let mut expected = file.clone();
            if twins {
                let stamping = policy["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .ends_with("-stamp");
                expected["stamp"] = Value::from(stamping);
                if stamping {
                    expected["stampOnly"] = Value::from(true);
                }
            }
            assert_eq!(policy["apiVersion"], "policies.kubewarden.io/v1", "{setup}");
            assert_eq!(policy["kind"], "ClusterAdmissionPolicy", "{setup}");
            assert_eq!(settings, expected, "{setup}");
            // The stamping twin leaves the audit to the judging one.
            let stamp_only = settings["stampOnly"].as_bool().unwrap_or(false);
            assert_eq!(
                spec["backgroundAudit"].as_bool(),
                Some(metadata["backgroundAudit"].as_bool().unwrap() && !stamp_only),
                "{setup}"
            );
            // The policy may mutate, and evaluates DELETE, only where the settings need it to.
            let stamps = settings["stamp"].as_bool().unwrap_or(false);
            assert_eq!(spec["mutating"].as_bool(), Some(stamps), "{setup}");
            assert!(
                !stamps || metadata["mutating"].as_bool().unwrap(),
                "{setup}"
            );
            let settings = serde_json::to_vec(&settings).unwrap();
            let response = single_owner_policy::policy::validate_settings(&settings);
            assert!(response.valid, "{setup}: {:?}", response.message);
        }
    }
}

/// With `stamp: true`, two policies: one that judges the final object, validating, with
/// `stamp: false`, and one that only stamps, mutating, with `stampOnly: true`; the rest of
/// their settings is the file's.
#[test]
fn stamping_settings_make_two_policies() {
    let settings_yaml = read("examples/helm-accounts/settings.yaml");
    let mut settings: serde_json::Value = serde_yaml::from_str(&settings_yaml).unwrap();
    assert_eq!(settings["stamp"], true);
    let written = manifest("single-owner-x", Mode::Protect, &settings_yaml).unwrap();
    let policies = documents(&written);
    let [judging, stamping] = policies.as_slice() else {
        panic!("{} policies", policies.len());
    };
    let as_json =
        |value: &Value| -> serde_json::Value { serde_yaml::from_value(value.clone()).unwrap() };
    assert_eq!(judging["metadata"]["name"], "single-owner-x");
    assert_eq!(judging["spec"]["mutating"], false);
    assert_eq!(judging["spec"]["backgroundAudit"], true);
    assert_eq!(stamping["metadata"]["name"], "single-owner-x-stamp");
    assert_eq!(stamping["spec"]["mutating"], true);
    assert_eq!(stamping["spec"]["backgroundAudit"], false);
    settings["stamp"] = false.into();
    assert_eq!(as_json(&judging["spec"]["settings"]), settings);
    settings["stamp"] = true.into();
    settings["stampOnly"] = true.into();
    assert_eq!(as_json(&stamping["spec"]["settings"]), settings);
}

/// metadata.yml, which Kubewarden publishes with the module, lists the generator's rules with
/// every operation the policy can judge, comments included; the Artifact Hub package, which
/// `kwctl scaffold artifacthub` writes from it, lists the same rules.
#[test]
fn metadata_yml_and_the_artifact_hub_package_list_the_generated_rules() {
    let judging =
        read_settings("writes: Owner\nidentities: [{owners: [\"*\"], users: [u]}]\n").unwrap();
    let rules = rules_yaml(judging.judged_operations(), 2);
    let metadata = read("metadata.yml");
    assert!(
        metadata.contains(&format!("\nrules:\n{rules}mutating:")),
        "metadata.yml: its rules are not the generated ones; write them as\nrules:\n{rules}"
    );
    let metadata: Value = serde_yaml::from_str(&metadata).unwrap();
    let package: Value = serde_yaml::from_str(&read("artifacthub-pkg.yml")).unwrap();
    let packaged: Value =
        serde_yaml::from_str(package["annotations"]["kubewarden/rules"].as_str().unwrap()).unwrap();
    assert_eq!(
        packaged, metadata["rules"],
        "artifacthub-pkg.yml: kubewarden/rules"
    );
}

/// metadata.yml lists the kinds of every example's `parentKinds` and those every writer of the
/// catalogue derives from, which kwctl grants an annotated module's lookups, and the Artifact
/// Hub package says the same.
#[test]
fn metadata_yml_lists_the_controllers_the_examples_follow() {
    let mut followed: Vec<Value> = Vec::new();
    for writer in &single_owner_policy::WRITERS {
        for (api_version, kind) in writer.parents {
            let resource: Value =
                serde_yaml::from_str(&format!("{{apiVersion: {api_version}, kind: {kind}}}"))
                    .unwrap();
            if !followed.contains(&resource) {
                followed.push(resource);
            }
        }
    }
    for setup in examples() {
        let settings = read_settings(&read(&format!("examples/{setup}/settings.yaml"))).unwrap();
        for (api_version, kind) in lookup_kinds(&settings) {
            let resource: Value =
                serde_yaml::from_str(&format!("{{apiVersion: {api_version}, kind: {kind}}}"))
                    .unwrap();
            if !followed.contains(&resource) {
                followed.push(resource);
            }
        }
    }
    let sorted = |mut list: Vec<Value>| {
        list.sort_by_key(|resource| format!("{resource:?}"));
        list
    };
    let metadata: Value = serde_yaml::from_str(&read("metadata.yml")).unwrap();
    let listed = metadata["contextAwareResources"]
        .as_sequence()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        sorted(listed),
        sorted(followed),
        "metadata.yml: contextAwareResources"
    );
    let package: Value = serde_yaml::from_str(&read("artifacthub-pkg.yml")).unwrap();
    let packaged: Value = serde_yaml::from_str(
        package["annotations"]["kubewarden/contextAwareResources"]
            .as_str()
            .unwrap_or_default(),
    )
    .unwrap();
    assert_eq!(
        packaged, metadata["contextAwareResources"],
        "artifacthub-pkg.yml: kubewarden/contextAwareResources"
    );
}

/// Each example that reads objects ships the RBAC policy-server needs to read them: `get` on
/// each kind read by name, `list` and `watch` on Helm's records, and nothing else.
#[test]
fn examples_grant_policy_server_get_on_the_controllers_they_follow() {
    for setup in examples() {
        let settings = read_settings(&read(&format!("examples/{setup}/settings.yaml"))).unwrap();
        let path = format!("examples/{setup}/policy-server-rbac.yaml");
        if lookup_kinds(&settings).is_empty() {
            assert!(
                !root().join(&path).exists(),
                "{path}: follows no controller"
            );
            continue;
        }
        let role = &documents(&read(&path))[0];
        // Each resource a rule grants, with its verbs.
        let grants = |role: &Value| {
            let mut granted = Vec::new();
            for rule in role["rules"].as_sequence().unwrap() {
                let verbs = format!("{:?}", rule["verbs"]);
                for group in rule["apiGroups"].as_sequence().unwrap() {
                    for resource in rule["resources"].as_sequence().unwrap() {
                        let (group, resource) =
                            (group.as_str().unwrap(), resource.as_str().unwrap());
                        granted.push(format!("{group}/{resource} {verbs}"));
                    }
                }
            }
            granted
        };
        let mut granted = grants(role);
        // What `make rbac` grants, as each example grants it by hand.
        let rbac = single_owner_manifest::policy_server_rbac(
            "x",
            &read(&format!("examples/{setup}/settings.yaml")),
        )
        .unwrap();
        let mut wanted = grants(&documents(&rbac)[0]);
        granted.sort();
        wanted.sort();
        assert_eq!(granted, wanted, "{path}");
    }
}

/// `make manifest`'s module is the image and version of the policy's Cargo.toml
/// (`[package.metadata.release] image`, `v` and `version`), as the release pushes it.
#[test]
fn the_module_is_the_released_image() {
    let cargo = read("Cargo.toml");
    let field = |section: &str, key: &str| {
        let from = &cargo[cargo.find(section).unwrap()..];
        let line = from.lines().find(|line| line.starts_with(key)).unwrap();
        line[key.len()..].trim().trim_matches('"').to_owned()
    };
    let image = field("[package.metadata.release]", "image = ");
    let version = field("[package]", "version = ");
    assert_eq!(image, IMAGE);
    assert_eq!(
        single_owner_manifest::module(),
        format!("registry://{image}:v{version}")
    );
}

#[test]
fn settings_files_without_settings_mean_the_defaults() {
    for text in ["", "# nothing set\n", "{}\n"] {
        let generated: Value =
            serde_yaml::from_str(&manifest("x", Mode::Protect, text).unwrap()).unwrap();
        let settings = &generated["spec"]["settings"];
        assert!(
            settings.as_mapping().is_some_and(|m| m.is_empty()),
            "{text:?}: {settings:?}"
        );
    }
}

#[test]
fn invalid_settings_are_refused_with_the_policys_message() {
    let error = manifest("x", Mode::Protect, "writes: Owner\n").unwrap_err();
    assert!(error.contains("writes: Owner needs identities"), "{error}");
    let error = manifest("x", Mode::Protect, "ownerLabel: []\n").unwrap_err();
    assert!(error.contains("unknown field `ownerLabel`"), "{error}");
    let error = manifest("x", Mode::Protect, "ownerLabels: [{key: appID}]\n").unwrap_err();
    assert!(
        error.contains("ownerLabels was renamed to ownerMarks in 0.2.0"),
        "{error}"
    );
    assert!(manifest("x", Mode::Protect, "adoption: Allow\n---\nstamp: true\n").is_err());
}

#[test]
fn the_mode_is_the_one_asked_for() {
    for (mode, text) in [(Mode::Protect, "protect"), (Mode::Monitor, "monitor")] {
        let generated: Value = serde_yaml::from_str(&manifest("x", mode, "{}").unwrap()).unwrap();
        assert_eq!(generated["spec"]["mode"].as_str(), Some(text));
        assert_eq!(text.parse::<Mode>(), Ok(mode));
    }
    assert_eq!(Mode::default(), Mode::Protect);
}

/// The policy and the generator read the same settings API: a mark planted in the settings is
/// judged by the one and sent by the other.
#[test]
fn a_new_mark_is_followed_by_the_policy_and_the_generator() {
    let settings_yaml = "ownerMarks:\n  - label: appID\n  - annotation: example.com/owner\n";
    let settings = read_settings(settings_yaml).unwrap();
    let conditions: String = match_conditions(&settings)
        .into_iter()
        .map(|condition| condition.expression)
        .collect();
    assert!(conditions.contains("'example.com/owner'"), "{conditions}");
    let side = |owner: &str| serde_json::json!({"metadata": {"name": "x", "annotations": {"example.com/owner": owner}}});
    let request = serde_json::json!({
        "uid": "u", "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "operation": "UPDATE", "namespace": "shop", "name": "x",
        "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
        "oldObject": side("a"), "object": side("b"),
    });
    let settings: serde_json::Value = serde_yaml::from_str(settings_yaml).unwrap();
    let payload = serde_json::json!({"request": request, "settings": settings});
    let response = single_owner_policy::policy::validate(&serde_json::to_vec(&payload).unwrap());
    assert!(!response.accepted);
    assert!(
        response
            .message
            .unwrap()
            .starts_with("annotation example.com/owner: owner change denied")
    );
}

/// Each example whose settings need nothing but the request — or nothing but the request and
/// the owner lookups, which it drops, or the webhook beside it for what reads other objects —
/// ships its ValidatingAdmissionPolicy as generated, the first of those forms that fits; the
/// others ship none.
#[test]
fn examples_ship_the_generated_validating_admission_policy() {
    use single_owner_manifest::vap::{Lookups, Split, manifest};
    for setup in examples() {
        let settings = read(&format!("examples/{setup}/settings.yaml"));
        let name = format!("single-owner-{setup}");
        let generated = [
            (Lookups::Refuse, Split::Alone),
            (Lookups::Drop, Split::Alone),
            (Lookups::Refuse, Split::WithWebhook),
            (Lookups::Drop, Split::WithWebhook),
        ]
        .into_iter()
        .find_map(|(lookups, split)| {
            manifest(&name, Mode::Protect, &settings, lookups, split).ok()
        });
        let shipped = fs::read_to_string(root().join(format!("examples/{setup}/vap.yaml"))).ok();
        assert!(
            shipped == generated,
            "examples/{setup}/vap.yaml is not the generated policy; {REGENERATE}"
        );
    }
    for setup in SHIPPING {
        assert!(root().join(format!("examples/{setup}/vap.yaml")).is_file());
    }
}

/// The examples that ship a ValidatingAdmissionPolicy: alone, without lookups, or split.
const SHIPPING: [&str; 7] = [
    "app-id",
    "argo-cd",
    "camel-k",
    "flux",
    "helm",
    "helm-accounts",
    "olm-v1",
];

/// What the API server checks of a ValidatingAdmissionPolicy that the proof does not see: the
/// rendered file's fields. An audit annotation's value expression is at most 5 KB, a message
/// expression must hold no line break in a literal, and variables are named as CEL identifiers.
#[test]
fn shipped_validating_admission_policies_are_what_the_api_server_accepts() {
    for setup in SHIPPING {
        let documents: Vec<Value> = documents(&read(&format!("examples/{setup}/vap.yaml")))
            .into_iter()
            .filter(|document| {
                (document["kind"].as_str()).is_some_and(|kind| kind.starts_with("Validating"))
            })
            .collect();
        let kinds: Vec<&str> = (documents.iter())
            .map(|document| document["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "ValidatingAdmissionPolicy",
                "ValidatingAdmissionPolicyBinding",
                "ValidatingAdmissionPolicy",
                "ValidatingAdmissionPolicyBinding"
            ],
            "{setup}"
        );
        for policy in documents.iter().step_by(2) {
            let spec = &policy["spec"];
            assert!(spec["matchConditions"].as_sequence().unwrap().len() <= 64);
            for variable in spec["variables"].as_sequence().unwrap() {
                let name = variable["name"].as_str().unwrap();
                assert!(
                    name.starts_with(|c: char| c.is_ascii_alphabetic())
                        && name.chars().all(|c| c.is_ascii_alphanumeric()),
                    "{setup}: {name}"
                );
            }
            for annotation in spec["auditAnnotations"].as_sequence().into_iter().flatten() {
                let value = annotation["valueExpression"].as_str().unwrap();
                assert!(value.len() <= 5_000, "{setup}: {} bytes", value.len());
            }
        }
        let binding = &documents[1]["spec"];
        assert_eq!(binding["policyName"], documents[0]["metadata"]["name"]);
        assert_eq!(binding["validationActions"][0].as_str(), Some("Deny"));
    }
}
