//! What kwctl does not check about the packaging: the versions in step, the Artifact Hub
//! package's install text leading to a generated manifest (not to a bare scaffold of `*/*/*`),
//! its embedded settings form, and questions-ui.yml — the settings form of the Kubewarden UI —
//! asking for every setting the policy knows and nothing else, with the policy's own defaults.
//! The rest of artifacthub-pkg.yml is what `kwctl scaffold artifacthub` writes from
//! metadata.yml, and kwctl checks metadata.yml when it annotates the module.

use serde_yaml::Value;
use single_owner_policy::Settings;
use single_owner_policy::policy;

fn text(file: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap()
}

fn yaml(file: &str) -> Value {
    serde_yaml::from_str(&text(file)).unwrap()
}

#[test]
fn versions_are_in_step() {
    let version = env!("CARGO_PKG_VERSION");
    // The README's quick start names the image and the version (`make manifest`'s module:
    // manifest/tests/examples.rs).
    let readme = text("README.md");
    assert!(readme.contains(&format!("{}:v{version}", release_image())));
    assert!(readme.contains(&format!("/v{version}/examples/")));
    let metadata = yaml("metadata.yml");
    assert_eq!(
        metadata["annotations"]["io.kubewarden.policy.version"].as_str(),
        Some(version)
    );
    assert_eq!(
        yaml("artifacthub-pkg.yml")["version"].as_str(),
        Some(version)
    );
}

#[test]
fn the_artifact_hub_package_leads_to_a_generated_manifest() {
    let package = yaml("artifacthub-pkg.yml");
    let install = package["install"].as_str().unwrap();
    assert!(
        !(install.lines()).any(|line| line.trim_start().starts_with("kwctl scaffold manifest")),
        "a bare scaffold evaluates every write in the cluster: {install}"
    );
    assert!(install.contains("make manifest"), "{install}");
    let version = env!("CARGO_PKG_VERSION");
    let example = format!("/v{version}/examples/");
    assert!(
        install.contains(&example),
        "{install} does not name {example}"
    );
    // The embedded settings form is questions-ui.yml, byte for byte.
    assert_eq!(
        package["annotations"]["kubewarden/questions-ui"].as_str(),
        Some(text("questions-ui.yml").as_str())
    );
}

/// The field names a settings object accepts, read from the error the policy gives for an
/// unknown one (serde lists them: "expected one of `a`, `b`", "expected `a` or `b`").
fn accepted_names(settings: serde_json::Value) -> Vec<String> {
    let response = policy::validate_settings(&serde_json::to_vec(&settings).unwrap());
    assert!(!response.valid, "{settings} was accepted");
    let message = response.message.unwrap();
    let (_, expected) = message
        .split_once("expected ")
        .unwrap_or_else(|| panic!("no list of expected names in {message:?}"));
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

fn questions() -> Vec<Value> {
    yaml("questions-ui.yml")["questions"]
        .as_sequence()
        .expect("questions-ui.yml: questions")
        .clone()
}

fn question<'a>(questions: &'a [Value], variable: &str) -> &'a Value {
    questions
        .iter()
        .find(|q| q["variable"].as_str() == Some(variable))
        .unwrap_or_else(|| panic!("questions-ui.yml: no question for {variable}"))
}

fn variables(questions: &[Value]) -> Vec<String> {
    questions
        .iter()
        .map(|q| q["variable"].as_str().expect("a variable").to_owned())
        .collect()
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

fn json(value: &Value) -> serde_json::Value {
    serde_yaml::from_value(value.clone()).unwrap()
}

fn validate(settings: &serde_json::Value) -> Result<(), String> {
    let response = policy::validate_settings(&serde_json::to_vec(settings).unwrap());
    if response.valid {
        Ok(())
    } else {
        Err(response.message.unwrap_or_default())
    }
}

#[test]
fn form_asks_for_every_setting_and_no_other() {
    let questions = questions();
    let top = accepted_names(serde_json::json!({"x": 1}));
    assert_eq!(sorted(variables(&questions)), sorted(top.clone()));

    // Objects and lists of objects: their questions name the fields the policy accepts there.
    for (variable, unknown) in [
        (
            "ownerMarks",
            serde_json::json!({"ownerMarks": [{"label": "a", "x": 1}]}),
        ),
        (
            "identities",
            serde_json::json!({"identities": [{"owners": ["a"], "x": 1}]}),
        ),
        ("exemptions", serde_json::json!({"exemptions": {"x": 1}})),
        (
            "trustedWriters",
            serde_json::json!({"trustedWriters": [{"users": ["a"], "x": 1}]}),
        ),
    ] {
        let q = question(&questions, variable);
        let inner = match q["type"].as_str() {
            Some("sequence[") => variables(q["sequence_questions"].as_sequence().unwrap()),
            Some("map[") => variables(q["subquestions"].as_sequence().unwrap())
                .into_iter()
                .map(|v| {
                    v.strip_prefix(&format!("{variable}."))
                        .unwrap_or_else(|| panic!("{v} is not under {variable}"))
                        .to_owned()
                })
                .collect(),
            other => panic!("{variable}: type {other:?}, not an object or a list of them"),
        };
        assert_eq!(sorted(inner), sorted(accepted_names(unknown)), "{variable}");
    }

    // Choices: the options are the policy's names, in its order.
    for (variable, unknown) in [
        ("adoption", serde_json::json!({"adoption": "x"})),
        ("orphaning", serde_json::json!({"orphaning": "x"})),
        ("writes", serde_json::json!({"writes": "x"})),
    ] {
        let q = question(&questions, variable);
        assert_eq!(q["type"].as_str(), Some("enum"), "{variable}");
        let options: Vec<String> = q["options"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|o| o.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(options, accepted_names(unknown), "{variable}");
    }
}

/// Whether a question's default has the shape its type says.
fn check_type(q: &Value) {
    let (variable, default) = (q["variable"].as_str().unwrap(), &q["default"]);
    let label = q["label"].as_str().unwrap_or_default();
    assert!(!label.is_empty(), "{variable}: no label");
    let help = q["description"].as_str().or(q["tooltip"].as_str());
    assert!(
        help.is_some_and(|h| !h.is_empty()),
        "{variable}: no help text"
    );
    let ok = match q["type"].as_str().unwrap() {
        "string" => default.is_string() || default.is_null(),
        "boolean" => default.is_bool(),
        "enum" => q["options"].as_sequence().unwrap().contains(default),
        "array[" => default
            .as_sequence()
            .is_some_and(|items| items.iter().all(Value::is_string)),
        "sequence[" => default.is_sequence(),
        "map[" => default.is_mapping(),
        other => panic!("{variable}: type {other} is not used here"),
    };
    assert!(
        ok,
        "{variable}: default {default:?} is no {}",
        q["type"].as_str().unwrap()
    );
    for nested in ["sequence_questions", "subquestions"] {
        for q in q[nested].as_sequence().into_iter().flatten() {
            check_type(q);
        }
    }
}

/// Sets a dotted variable (`exemptions.users`) in a settings document.
fn set(settings: &mut serde_json::Value, variable: &str, value: serde_json::Value) {
    let mut target = settings;
    let mut parts = variable.split('.').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            target[part] = value;
            return;
        }
        if !target[part].is_object() {
            target[part] = serde_json::json!({});
        }
        target = &mut target[part];
    }
}

#[test]
fn form_defaults_are_the_policy_defaults() {
    let questions = questions();
    let mut settings = serde_json::json!({});
    for q in &questions {
        check_type(q);
        let variable = q["variable"].as_str().unwrap();
        set(&mut settings, variable, json(&q["default"]));
        // Each default is accepted on its own.
        let mut alone = serde_json::json!({});
        set(&mut alone, variable, json(&q["default"]));
        assert_eq!(validate(&alone), Ok(()), "{variable}: {alone}");
        for sub in q["subquestions"].as_sequence().into_iter().flatten() {
            set(
                &mut settings,
                sub["variable"].as_str().unwrap(),
                json(&sub["default"]),
            );
        }
    }
    assert_eq!(validate(&settings), Ok(()), "{settings}");
    assert_eq!(
        Settings::from_json(&serde_json::to_vec(&settings).unwrap()),
        Ok(Settings::default()),
        "the form's defaults differ from the policy's: {settings}"
    );
}

#[test]
fn form_entry_defaults_are_accepted() {
    // What a new entry of a list gets from the form, with its required fields filled in.
    let filled = serde_json::json!({
        "ownerMarks": {"label": "example.io/owner"},
        "identities": {
            "owners": ["ClusterExtension.cert-manager"],
            "users": ["system:serviceaccount:cert-manager:*"]
        },
        "trustedWriters": {
            "users": ["system:serviceaccount:openshift-service-ca:service-ca"],
            "resources": ["secrets"],
            "operations": ["CREATE", "UPDATE"]
        },
        "parentKinds": {"apiVersion": "camel.apache.org/v1", "kind": "Integration"},
        "clusterWriters": {"name": "keda"},
    });
    let questions = questions();
    for q in questions
        .iter()
        .filter(|q| q["type"].as_str() == Some("sequence["))
    {
        let variable = q["variable"].as_str().unwrap();
        let mut entry = serde_json::json!({});
        for sub in q["sequence_questions"].as_sequence().unwrap() {
            let field = sub["variable"].as_str().unwrap();
            let value = match &filled[variable][field] {
                serde_json::Value::Null => {
                    assert_ne!(sub["required"].as_bool(), Some(true), "{variable}.{field}");
                    json(&sub["default"])
                }
                value => value.clone(),
            };
            entry[field] = value;
        }
        let mut settings = serde_json::json!({});
        settings[variable] = serde_json::json!([entry]);
        assert_eq!(validate(&settings), Ok(()), "{settings}");
    }
}

/// The image the module is released as: `[package.metadata.release] image` of Cargo.toml.
fn release_image() -> String {
    let cargo = text("Cargo.toml");
    let section = &cargo[cargo.find("[package.metadata.release]").unwrap()..];
    let line = section
        .lines()
        .find(|line| line.starts_with("image = "))
        .unwrap();
    line.trim_start_matches("image = ")
        .trim_matches('"')
        .to_owned()
}

/// The targets the Makefile defines.
fn make_targets() -> Vec<String> {
    text("Makefile")
        .lines()
        .filter_map(|line| line.split_once(':').map(|(name, _)| name))
        .filter(|name| !name.is_empty() && !name.contains([' ', '\t', '$', '=', '.', '#']))
        .map(str::to_owned)
        .chain(["policy.wasm".to_owned(), "annotated-policy.wasm".to_owned()])
        .collect()
}

/// The workflows parse; each `run` step calls only Makefile targets and scripts that exist;
/// every action is pinned to a release; the test workflow runs the README's test command; the
/// release pushes to the image the Makefile (and so the README and examples) name, on `v*` tags
/// that must name Cargo.toml's version.
#[test]
fn the_workflows_call_what_exists_and_publish_the_image_the_readme_names() {
    let targets = make_targets();
    let mut uses = Vec::new();
    for workflow in [
        ".github/workflows/test.yml",
        ".github/workflows/release.yml",
    ] {
        let parsed = yaml(workflow);
        for (job, definition) in parsed["jobs"].as_mapping().unwrap() {
            if let Some(called) = definition["uses"].as_str() {
                uses.push(called.to_owned());
                continue;
            }
            for step in definition["steps"].as_sequence().unwrap() {
                if let Some(action) = step["uses"].as_str() {
                    uses.push(action.to_owned());
                }
                let Some(run) = step["run"].as_str() else {
                    continue;
                };
                for line in run.lines() {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    for (index, word) in words.iter().enumerate() {
                        // `make a b`, `make -s a`, `$(make -s a)`; variables (`A=b`) are no
                        // targets, and a `)` or `;` ends the command.
                        if *word == "make" || word.ends_with("(make") {
                            for target in words[index + 1..].iter().filter(|word| **word != "-s") {
                                if target.starts_with('-') || target.contains('=') {
                                    break;
                                }
                                let name = target.trim_end_matches([')', ';']);
                                assert!(
                                    targets.iter().any(|t| t == name),
                                    "{workflow} {job:?}: make {name}"
                                );
                                if name.len() < target.len() {
                                    break;
                                }
                            }
                        }
                        if let Some(script) = word.strip_prefix("scripts/") {
                            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
                            assert!(
                                root.join("scripts").join(script).exists(),
                                "{workflow} {job:?}: {word}"
                            );
                        }
                    }
                }
            }
        }
    }
    for action in &uses {
        let pinned = action.starts_with("./")
            || action.rsplit_once('@').is_some_and(|(_, pin)| {
                pin.starts_with('v') && pin[1..].chars().next().is_some_and(|c| c.is_ascii_digit())
            });
        assert!(pinned, "{action} is not pinned to a release");
    }
    // The Artifact Hub files the release publishes, each kept in the repository.
    let release_text = text(".github/workflows/release.yml");
    for published in ["artifacthub-pkg.yml", "artifacthub-repo.yml", "README.md"] {
        assert!(
            release_text.contains(published),
            "the release publishes {published}"
        );
        text(published);
    }
    assert!(yaml("artifacthub-repo.yml")["owners"].is_sequence());
    let test = text(".github/workflows/test.yml");
    assert!(
        test.contains("run: make check"),
        "the README's test command"
    );
    // e2e.bats under kwctl itself, installed by Kubewarden's action (pinned, above).
    let kwctl = &yaml(".github/workflows/test.yml")["jobs"]["e2e-kwctl"]["steps"];
    let steps = kwctl.as_sequence().expect("test.yml: an e2e-kwctl job");
    let installs = (steps.iter()).position(|step| {
        step["uses"]
            .as_str()
            .is_some_and(|uses| uses.starts_with("kubewarden/github-actions/kwctl-installer@"))
    });
    let runs =
        (steps.iter()).position(|step| step["run"].as_str() == Some("make e2e-tests KWCTL=kwctl"));
    assert!(
        matches!((installs, runs), (Some(install), Some(run)) if install < run),
        "test.yml: e2e-kwctl installs kwctl, then runs make e2e-tests KWCTL=kwctl"
    );
    assert!(text("README.md").contains("make check"));
    let release = yaml(".github/workflows/release.yml");
    assert_eq!(release["on"]["push"]["tags"][0].as_str(), Some("v*"));
    let image = release_image();
    let oci_target = release["jobs"]["release"]["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .find_map(|step| step["with"]["oci-target"].as_str())
        .unwrap();
    assert_eq!(oci_target, image);
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        text("README.md").contains(&format!("{image}:v{version}")),
        "README: {image}:v{version}"
    );
}
