//! metadata.yml, artifacthub-pkg.yml, questions-ui.yml and Cargo.toml describe the same policy.
//!
//! artifacthub-pkg.yml is what `kwctl scaffold artifacthub --metadata-path metadata.yml
//! --questions-path questions-ui.yml` writes (kwctl's `ArtifactHubPkg::from_metadata`):
//! [`scaffold`] derives it from metadata.yml and questions-ui.yml the same way, and the file
//! must match it field for field, in kwctl's field order, `createdAt` aside.
//!
//! questions-ui.yml is the settings form of the Kubewarden UI: it asks for every setting the
//! policy knows, and nothing else, and its defaults are the policy's own.

use std::collections::BTreeMap;

use serde_yaml::{Mapping, Value};
use single_owner_policy::Settings;
use single_owner_policy::policy;

fn text(file: &str) -> String {
    let path = format!("{}/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap()
}

fn yaml(file: &str) -> Value {
    serde_yaml::from_str(&text(file)).unwrap()
}

/// The fields of kwctl's `ArtifactHubPkg`, in the order it writes them; the optional ones are
/// left out when metadata.yml has nothing for them.
const PACKAGE_FIELDS: [&str; 15] = [
    "version",
    "name",
    "displayName",
    "createdAt",
    "description",
    "license",
    "homeURL",
    "containersImages",
    "keywords",
    "links",
    "install",
    "maintainers",
    "provider",
    "recommendations",
    "annotations",
];

/// The fields of a rule as kwctl's policy metadata writes them into `kubewarden/rules`.
const RULE_FIELDS: [&str; 4] = ["apiGroups", "apiVersions", "resources", "operations"];

fn map<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Mapping(
        entries
            .into_iter()
            .map(|(key, value)| (Value::from(key), value))
            .collect(),
    )
}

/// Reads `io.kubewarden.policy.author` as kwctl does: comma separated `name <email>`.
fn maintainers(author: &str) -> Vec<Value> {
    author
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            let (name, email) = entry
                .strip_suffix('>')
                .and_then(|entry| entry.split_once('<'))
                .unwrap_or_else(|| panic!("author {entry:?} is not `name <email>`"));
            let (name, email) = (name.trim(), email.trim());
            let (user, domain) = email.split_once('@').unwrap_or(("", ""));
            assert!(
                !user.is_empty() && domain.contains('.') && !email.contains(char::is_whitespace),
                "author {entry:?}: {email:?} is not an email address"
            );
            assert!(!name.is_empty(), "author {entry:?} has no name");
            map([("name", name.into()), ("email", email.into())])
        })
        .collect()
}

/// What `kwctl scaffold artifacthub` writes for these metadata and questions, `createdAt` aside.
fn scaffold(metadata: &Value, questions: &str) -> Mapping {
    let annotation = |key: &str| metadata["annotations"][key].as_str();
    let required = |key: &str| annotation(key).unwrap_or_else(|| panic!("metadata.yml: no {key}"));
    let version = required("io.kubewarden.policy.version");
    let image = format!("{}:v{version}", required("io.kubewarden.policy.ociUrl"));

    let mut package = Mapping::new();
    let mut put = |key: &str, value: Value| package.insert(key.into(), value);
    put("version", version.into());
    put("name", required("io.kubewarden.policy.title").into());
    put("displayName", required("io.artifacthub.displayName").into());
    put(
        "description",
        required("io.kubewarden.policy.description").into(),
    );
    if let Some(license) = annotation("io.kubewarden.policy.license") {
        put("license", license.into());
    }
    if let Some(url) = annotation("io.kubewarden.policy.url") {
        put("homeURL", url.into());
    }
    put(
        "containersImages",
        Value::Sequence(vec![map([
            ("name", "policy".into()),
            ("image", image.as_str().into()),
        ])]),
    );
    if let Some(keywords) = annotation("io.artifacthub.keywords") {
        let keywords: Vec<Value> = keywords.split(',').map(|k| k.trim().into()).collect();
        assert!(!keywords.contains(&Value::from("")), "empty keyword");
        put("keywords", Value::Sequence(keywords));
    }
    if let Some(source) = annotation("io.kubewarden.policy.source") {
        let mut links = Vec::new();
        if source.starts_with("https://github.com/") {
            let wasm = format!("{source}/releases/download/v{version}/policy.wasm");
            links.push(map([("name", "policy".into()), ("url", wasm.into())]));
        }
        links.push(map([("name", "source".into()), ("url", source.into())]));
        put("links", Value::Sequence(links));
    }
    put(
        "install",
        format!(
            "The policy can be obtained using [`kwctl`](https://github.com/kubewarden/kwctl):\n\
             ```console\n\
             kwctl pull {image}\n\
             ```\n\
             Then, generate the policy manifest and tune it to your liking. For example:\n\
             ```console\n\
             kwctl scaffold manifest -t ClusterAdmissionPolicy registry://{image}\n\
             ```\n"
        )
        .into(),
    );
    if let Some(author) = annotation("io.kubewarden.policy.author") {
        put("maintainers", Value::Sequence(maintainers(author)));
    }
    put("provider", map([("name", "kubewarden".into())]));
    put(
        "recommendations",
        Value::Sequence(vec![map([(
            "url",
            "https://artifacthub.io/packages/helm/kubewarden/kubewarden-controller".into(),
        )])]),
    );

    // kwctl keeps the annotations sorted by key.
    let mut annotations = BTreeMap::new();
    let mutating = metadata["mutating"].as_bool().unwrap_or(false);
    annotations.insert("kubewarden/mutation", mutating.to_string());
    if let Some(resources) = metadata["contextAwareResources"].as_sequence()
        && !resources.is_empty()
    {
        annotations.insert(
            "kubewarden/contextAwareResources",
            serde_yaml::to_string(resources).unwrap(),
        );
    }
    let rules: Vec<Value> = metadata["rules"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|rule| {
            Value::Mapping(
                RULE_FIELDS
                    .iter()
                    .map(|field| (Value::from(*field), rule[*field].clone()))
                    .collect(),
            )
        })
        .collect();
    annotations.insert("kubewarden/rules", serde_yaml::to_string(&rules).unwrap());
    annotations.insert("kubewarden/questions-ui", questions.to_owned());
    if let Some(hidden) = annotation("io.kubewarden.hidden-ui") {
        let hidden: bool = hidden.parse().expect("io.kubewarden.hidden-ui is a bool");
        annotations.insert("kubewarden/hidden-ui", hidden.to_string());
    }
    if let Some(resources) = annotation("io.artifacthub.resources") {
        annotations.insert("kubewarden/resources", resources.to_owned());
    }
    put(
        "annotations",
        Value::Mapping(
            annotations
                .into_iter()
                .map(|(key, value)| (key.into(), value.into()))
                .collect(),
        ),
    );
    package
}

fn keys(mapping: &Mapping) -> Vec<&str> {
    mapping.keys().map(|key| key.as_str().unwrap()).collect()
}

#[test]
fn versions_are_in_step() {
    let version = env!("CARGO_PKG_VERSION");
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
fn artifacthub_package_is_what_kwctl_scaffolds_from_metadata() {
    let metadata = yaml("metadata.yml");
    let questions = text("questions-ui.yml");
    let expected = scaffold(&metadata, &questions);
    let Value::Mapping(package) = yaml("artifacthub-pkg.yml") else {
        panic!("artifacthub-pkg.yml is not a mapping");
    };

    let order: Vec<&str> = PACKAGE_FIELDS
        .into_iter()
        .filter(|field| *field == "createdAt" || expected.contains_key(*field))
        .collect();
    assert_eq!(keys(&package), order, "fields or their order");
    let created_at = package["createdAt"].as_str().unwrap_or_default();
    assert!(
        created_at.len() >= 20 && created_at.as_bytes()[10] == b'T' && created_at.ends_with('Z'),
        "createdAt {created_at:?} is not an RFC 3339 UTC time"
    );
    for (field, value) in &expected {
        let field = field.as_str().unwrap();
        if field != "annotations" {
            assert_eq!(&package[field], value, "artifacthub-pkg.yml: {field}");
        }
    }
    // kwctl writes the annotations sorted by key.
    let annotations = package["annotations"].as_mapping().unwrap();
    let expected = expected["annotations"].as_mapping().unwrap();
    assert_eq!(keys(annotations), keys(expected), "annotations");
    for (key, value) in expected {
        let key = key.as_str().unwrap();
        if key == "kubewarden/questions-ui" {
            // The form, embedded byte for byte.
            assert!(
                annotations[key] == *value,
                "annotation {key} is not questions-ui.yml"
            );
        } else {
            assert_eq!(&annotations[key], value, "annotation {key}");
        }
    }
}

#[test]
fn metadata_has_what_kwctl_scaffold_needs() {
    let metadata = yaml("metadata.yml");
    let annotations = &metadata["annotations"];
    for key in [
        "io.kubewarden.policy.title",
        "io.kubewarden.policy.version",
        "io.kubewarden.policy.description",
        "io.kubewarden.policy.ociUrl",
        "io.artifacthub.displayName",
    ] {
        assert!(
            annotations[key].as_str().is_some_and(|v| !v.is_empty()),
            "{key}"
        );
    }
    // kwctl refuses an author that is not comma separated `name <email>`.
    let author = annotations["io.kubewarden.policy.author"].as_str().unwrap();
    assert!(!maintainers(author).is_empty());
}

// questions-ui.yml

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
