//! The example policies carry the generated match conditions, and the generated manifest for
//! each example's settings is the example's policy in every field but its own additions.

use std::fs;
use std::path::Path;

use serde::Deserialize;
use serde_yaml::Value;
use single_owner_manifest::{MODULE, Mode, manifest, match_conditions, read_settings};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The examples: each folder of `examples/` with a `settings.yaml`, which carries its policy
/// beside it.
fn setups() -> Vec<String> {
    let mut setups: Vec<String> = fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("settings.yaml").is_file())
        .map(|path| path.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    setups.sort();
    assert!(setups.len() >= 4, "{setups:?}");
    setups
}

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
    for setup in setups() {
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

/// How to regenerate an example's policy from its settings, keeping the lines before the
/// generated conditions (the example's comments and any rules it adds) when only the conditions
/// and settings changed.
const REGENERATE: &str = "for d in examples/*/; do s=$(basename $d); f=examples/$s/policy.yaml; \
    [ -f examples/$s/settings.yaml ] || continue; \
    make -s manifest SETTINGS=examples/$s/settings.yaml > /tmp/generated.yaml && \
    if [ -f $f ]; then { sed '/^  # Generated from the settings by `make manifest`/,$d' $f; \
    sed -n '/^  # Generated from the settings by `make manifest`/,$p' /tmp/generated.yaml; } \
    > /tmp/policy.yaml && mv /tmp/policy.yaml $f; else mv /tmp/generated.yaml $f; fi; done";

#[test]
fn the_generated_manifest_is_the_example_policy() {
    for setup in setups() {
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
                Some(MODULE),
                "{setup}"
            );
            for field in [
                "module",
                "mode",
                "failurePolicy",
                "namespaceSelector",
                "mutating",
                "backgroundAudit",
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

#[test]
fn generated_rules_are_those_of_metadata_yml() {
    let metadata: Value = serde_yaml::from_str(&read("metadata.yml")).unwrap();
    let generated: Value =
        serde_yaml::from_str(&manifest("x", Mode::Protect, "{}").unwrap()).unwrap();
    let rules = metadata["rules"].as_sequence().unwrap();
    let generated = generated["spec"]["rules"].as_sequence().unwrap();
    assert_eq!(rules.len(), generated.len());
    for (rule, generated) in rules.iter().zip(generated) {
        for field in ["apiGroups", "apiVersions", "resources"] {
            assert_eq!(rule[field], generated[field], "{field}");
        }
    }
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

#[test]
fn the_module_is_the_policy_version() {
    let cargo = read("Cargo.toml");
    let version = cargo
        .lines()
        .find_map(|line| line.strip_prefix("version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap();
    assert!(
        MODULE.ends_with(&format!(":v{version}")),
        "{MODULE} is not the policy's version {version}"
    );
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
