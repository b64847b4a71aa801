//! The deployment examples: each ClusterAdmissionPolicy agrees with metadata.yml and with the
//! settings file its sample requests are run against, and each sample gets the verdict its
//! name announces (`allowed-…` or `denied-…`; `…-stamped` when the policy adds the owner label).

use std::fs;
use std::path::{Path, PathBuf};

use serde_yaml::Value;
use single_owner_policy::policy;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The examples: every directory of examples/.
fn setups() -> Vec<String> {
    let mut setups: Vec<String> = fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|entry| entry.unwrap())
        .filter(|entry| entry.file_type().unwrap().is_dir())
        .map(|entry| entry.file_name().into_string().unwrap())
        .collect();
    setups.sort();
    assert!(setups.len() >= 6, "{setups:?}");
    setups
}

fn yaml(path: PathBuf) -> Value {
    serde_yaml::from_str(&fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn policies_agree_with_metadata_and_their_settings_file() {
    let metadata = yaml(root().join("metadata.yml"));
    for setup in setups() {
        let file = yaml(root().join(format!("examples/{setup}/settings.yaml")));
        let policies = policies(&setup);
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
            // The rules of metadata.yml, in order, each with the operations the settings need; then
            // the audit rules of kinds that only this setup's installers bring (Camel K's).
            let rules = spec["rules"].as_sequence().unwrap();
            let all = metadata["rules"].as_sequence().unwrap();
            assert!(rules.len() >= all.len(), "{setup}: rules");
            for (rule, all) in rules.iter().zip(all) {
                for field in ["apiGroups", "apiVersions", "resources"] {
                    assert_eq!(rule[field], all[field], "{setup}: {field}");
                }
                let operations = rule["operations"].as_sequence().unwrap();
                let supported = all["operations"].as_sequence().unwrap();
                assert!(
                    operations.iter().all(|op| supported.contains(op)),
                    "{setup}: {operations:?}"
                );
            }
            for extra in &rules[all.len()..] {
                assert!(auditable(extra), "{setup}: {extra:?} is no audit rule");
            }
            let operations = rules[0]["operations"].as_sequence().unwrap();
            let guards_deletes = settings["writes"].as_str() == Some("Owner");
            assert_eq!(
                operations.contains(&Value::from("DELETE")),
                guards_deletes,
                "{setup}"
            );
            let settings = serde_json::to_vec(&settings).unwrap();
            let response = policy::validate_settings(&settings);
            assert!(response.valid, "{setup}: {:?}", response.message);
        }
    }
}

/// The policies of an example's policy.yaml: one, or two with `stamp: true`.
fn policies(setup: &str) -> Vec<Value> {
    let text = fs::read_to_string(root().join(format!("examples/{setup}/policy.yaml"))).unwrap();
    serde_yaml::Deserializer::from_str(&text)
        .map(|document| serde::Deserialize::deserialize(document).unwrap())
        .collect()
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
    let metadata = yaml(root().join("metadata.yml"));
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
    let mut documents = vec![("metadata.yml".to_owned(), metadata["rules"].clone())];
    for setup in setups() {
        let policy = &policies(&setup)[0];
        documents.push((setup.clone(), policy["spec"]["rules"].clone()));
    }
    for (name, rules) in &documents {
        let resources = audited(rules);
        for kind in kinds {
            assert!(
                resources.iter().any(|r| r == kind),
                "{name}: no audit rule for {kind}"
            );
        }
    }
    let camel_k = &documents
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

/// Every policy routes to the webhook the subresource writes that can change an owner label.
#[test]
fn policies_route_label_changing_subresources() {
    let label_changing = [
        "*/status",
        "namespaces/finalize",
        "certificatesigningrequests/approval",
    ];
    for setup in setups() {
        let policy = &policies(&setup)[0];
        let routed = |resource: &str| {
            policy["spec"]["rules"]
                .as_sequence()
                .unwrap()
                .iter()
                .any(|rule| {
                    let has = |field: &str, value: &str| {
                        rule[field]
                            .as_sequence()
                            .unwrap()
                            .contains(&Value::from(value))
                    };
                    has("resources", resource)
                        && has("operations", "UPDATE")
                        && has("apiGroups", "*")
                        && has("apiVersions", "*")
                })
        };
        for resource in label_changing {
            assert!(routed(resource), "{setup}: {resource} UPDATE is not routed");
        }
    }
}

#[test]
fn samples_get_the_verdict_their_name_announces() {
    for setup in setups() {
        let dir = root().join(format!("examples/{setup}"));
        let settings: serde_json::Value =
            serde_yaml::from_value(yaml(dir.join("settings.yaml"))).unwrap();
        let mut samples = 0;
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            if !name.ends_with(".json") {
                continue;
            }
            let request: serde_json::Value =
                serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
            let payload = serde_json::json!({"request": request, "settings": settings});
            let response = policy::validate(&serde_json::to_vec(&payload).unwrap());
            let expected = name.starts_with("allowed-");
            assert!(
                expected || name.starts_with("denied-"),
                "{setup}/{name}: name it allowed-… or denied-…"
            );
            assert_eq!(
                response.accepted, expected,
                "{setup}/{name}: {:?}",
                response.message
            );
            assert_eq!(response.message.is_some(), !expected, "{setup}/{name}");
            // A denied sample is denied by a rule (403), not refused as unreadable (400).
            let code = (!expected).then_some(403);
            assert_eq!(
                response.code, code,
                "{setup}/{name}: {:?}",
                response.message
            );
            let stamped = name.ends_with("-stamped.json");
            assert_eq!(response.mutated_object.is_some(), stamped, "{setup}/{name}");
            samples += 1;
        }
        assert!(samples >= 4, "{setup} has {samples} samples");
    }
}

#[test]
fn the_deploying_guide_shows_the_flux_example_as_it_is() {
    let readme = fs::read_to_string(root().join("docs/deploying.md")).unwrap();
    let policy = fs::read_to_string(root().join("examples/flux/policy.yaml")).unwrap();
    let manifest = &policy[policy.find("apiVersion:").unwrap()..];
    // Up to the generated conditions, which the README describes instead of printing.
    let conditions = "  matchConditions:\n";
    let shown = &manifest[..manifest.find(conditions).unwrap() + conditions.len()];
    assert!(
        readme.contains(shown),
        "docs/deploying.md must show examples/flux/policy.yaml from apiVersion to its matchConditions"
    );
}

/// Every link of the README and of docs/ resolves: to a file of the repository (written as the
/// repository's GitHub address, so that it works where the README is embedded), and to a
/// heading of it.
#[test]
fn every_link_of_the_readme_and_the_docs_resolves() {
    const REPOSITORY: &str =
        "https://github.com/single-owner-policy/single-owner-policy/blob/main/";
    let anchors = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|line| line.strip_prefix('#'))
            .map(|heading| heading.trim_start_matches('#').trim().to_lowercase())
            .map(|heading| {
                heading
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == ' ' || *c == '-')
                    .collect::<String>()
                    .replace(' ', "-")
            })
            .collect()
    };
    let mut documents = vec!["README.md".to_owned()];
    for entry in fs::read_dir(root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        documents.push(format!("docs/{name}"));
    }
    let mut links = 0;
    for document in &documents {
        let text = fs::read_to_string(root().join(document)).unwrap();
        for (at, _) in text.match_indices("](") {
            let link = text[at + 2..].split([')', ' ']).next().unwrap();
            let (path, anchor) = match link.strip_prefix(REPOSITORY) {
                Some(target) => target.split_once('#').unwrap_or((target, "")),
                None if link.starts_with('#') => (document.as_str(), &link[1..]),
                None if link.starts_with("http") => continue,
                None => panic!("{document}: {link} is relative: write {REPOSITORY}…"),
            };
            links += 1;
            let target = root().join(path);
            assert!(target.exists(), "{document}: {link}: no {path}");
            if !anchor.is_empty() {
                let text = fs::read_to_string(&target).unwrap();
                assert!(
                    anchors(&text).iter().any(|known| known == anchor),
                    "{document}: {link}: no heading #{anchor} in {path}"
                );
            }
        }
    }
    assert!(links > 30, "{links} links");
}
