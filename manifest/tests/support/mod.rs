//! Evaluating the generated match conditions with cel-rust, and reading what the policy did
//! with a request; shared by the tests and the skip-rate report (`examples/skip_rate.rs`).
//!
//! The conditions are evaluated as the API server does (`k8s.io/apiserver`'s matchconditions
//! matcher): `object` and `oldObject` are the request's objects, `null` where it has none, and
//! `request` the AdmissionRequest; the webhook is called when every condition is true. Where
//! the API server absorbs an error in one condition when another is false, these helpers are
//! stricter: any error is an error.
//!
//! Where cel-rust may differ from cel-go (Kubernetes):
//! - cel-go type-checks the expression against Kubernetes' declarations (`request` is a typed
//!   AdmissionRequest, `object` and `oldObject` are `dyn`) before it runs; cel-rust only parses.
//!   The expressions use no field of `request` outside AdmissionRequest (`operation`,
//!   `subResource`, `userInfo.username`, `userInfo.groups`), and compare strings with strings.
//! - Kubernetes builds `request` from the typed AdmissionRequest, whose empty `subResource`,
//!   `userInfo.username` and `userInfo.groups` are omitted (`omitempty`); the fixtures may
//!   carry them empty or leave them out, and the expressions read both the same.
//! - cel-go meters a cost and stops an expression over budget; cel-rust has no cost model.
//! - Errors: both make `has()` on `null`, `in` on `null` and a missing map key errors, and
//!   both absorb an error in `&&` / `||` when the other side decides (commutative logic).
#![allow(dead_code)]

pub mod traffic;
pub mod vap;

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use cel::{Context, Program, to_value};
use serde_json::{Map, Value};
use single_owner_manifest::conditions::TRUSTED_WRITERS;
use single_owner_manifest::{MatchCondition, match_conditions};
use single_owner_policy::{Format, MarkPlace, Settings, policy};

/// The repository's root, where `examples/` and `test_data/` are.
pub fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The examples, by name: each folder of `examples/` with a `settings.yaml` (beside its
/// `policy.yaml` and its sample requests), in order — the one list of them.
pub fn examples() -> Vec<String> {
    let mut examples: Vec<String> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("settings.yaml").is_file())
        .map(|path| path.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    examples.sort();
    assert!(examples.len() >= 6, "{examples:?}");
    examples
}

/// The cluster's own writes, with placeholders for the owner marks (see
/// [`support::expand_placeholders`]).
pub const CLUSTER_WRITES: &str = "test_data/cluster-writes";

/// Every request fixture, in a setup's terms: `test_data/*.json`, the samples of
/// `test_data/marks`, the examples' and the catalogue writers' samples, and the cluster writes with
/// their placeholders expanded for the setup.
pub fn fixtures(settings: &Settings) -> Vec<(PathBuf, Value)> {
    let mut folders = vec![
        root().join("test_data"),
        root().join("test_data/marks"),
        root().join(CLUSTER_WRITES),
    ];
    folders.extend(
        examples()
            .iter()
            .map(|setup| root().join("examples").join(setup)),
    );
    folders.extend(
        (single_owner_policy::WRITERS.iter())
            .map(|writer| root().join("test_data/writers").join(writer.name)),
    );
    let mut fixtures = Vec::new();
    for folder in folders {
        let entries =
            fs::read_dir(&folder).unwrap_or_else(|error| panic!("{}: {error}", folder.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            if path
                .extension()
                .is_some_and(|extension| extension == "json")
            {
                let request: Value = serde_json::from_slice(&fs::read(&path).unwrap())
                    .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
                fixtures.push((path, expand_placeholders(&request, settings)));
            }
        }
    }
    fixtures.sort_by(|a, b| a.0.cmp(&b.0));
    fixtures
}

/// The compiled match conditions of a setup.
pub struct Conditions {
    programs: Vec<(String, Rc<Program>)>,
}

thread_local! {
    /// Programs by their expression: generated settings share most conditions, and compiling
    /// the control plane's table is the slow part of a test.
    static COMPILED: RefCell<HashMap<String, Rc<Program>>> = RefCell::new(HashMap::new());
}

impl Conditions {
    pub fn of(settings: &Settings) -> Conditions {
        Conditions::compile(&match_conditions(settings))
    }

    /// The conditions of a setup but those that skip the trusted control plane's writes: what
    /// would be sent if the control plane were judged like anyone.
    pub fn without_trust(settings: &Settings) -> Conditions {
        let conditions: Vec<MatchCondition> = match_conditions(settings)
            .into_iter()
            .filter(|condition| !TRUSTED_WRITERS.contains(&condition.name.as_str()))
            .collect();
        Conditions::compile(&conditions)
    }

    pub fn compile(conditions: &[MatchCondition]) -> Conditions {
        let programs = (conditions.iter())
            .map(|condition| {
                let program = program(&condition.expression)
                    .unwrap_or_else(|error| panic!("{}: {error}", condition.name));
                (condition.name.clone(), program)
            })
            .collect();
        Conditions { programs }
    }

    /// Whether the API server sends the request to the webhook: every condition true. An error,
    /// or a value that is not a bool, in any condition is an error.
    pub fn send(&self, request: &Value) -> Result<bool, String> {
        self.evaluate(&variables(request))
    }

    /// [`Conditions::send`] on the variables of a request.
    pub fn evaluate(&self, context: &Context) -> Result<bool, String> {
        let mut send = true;
        for (name, program) in &self.programs {
            match program.execute(context) {
                Ok(cel::Value::Bool(value)) => send &= value,
                Ok(other) => return Err(format!("{name}: not a bool: {other:?}")),
                Err(error) => return Err(format!("{name}: {error:?}")),
            }
        }
        Ok(send)
    }
}

/// The compiled program of a CEL expression, compiled once per thread; an error shows the
/// expression.
pub fn program(expression: &str) -> Result<Rc<Program>, String> {
    COMPILED.with_borrow_mut(|compiled| {
        if let Some(program) = compiled.get(expression) {
            return Ok(Rc::clone(program));
        }
        let program =
            Program::compile(expression).map_err(|error| format!("{error}\n{expression}"))?;
        let program = Rc::new(program);
        compiled.insert(expression.to_owned(), Rc::clone(&program));
        Ok(program)
    })
}

/// How deep brackets nest in a CEL expression (cel-go's parser nests at most 250 levels).
pub fn nesting(expression: &str) -> usize {
    let mut depth: usize = 0;
    let mut deepest = 0;
    for c in expression.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        deepest = deepest.max(depth);
    }
    deepest
}

/// The variables the conditions see: `object`, `oldObject` (`null` where the request has no
/// such object) and `request`.
pub fn variables(request: &Value) -> Context<'static, 'static> {
    variables_in(Context::default(), request)
}

/// The same variables, in `context`.
pub fn variables_in(
    mut context: Context<'static, 'static>,
    request: &Value,
) -> Context<'static, 'static> {
    let side = |name: &str| request.get(name).cloned().unwrap_or(Value::Null);
    context.add_variable_from_value("object", convert(&side("object")));
    context.add_variable_from_value("oldObject", convert(&side("oldObject")));
    context.add_variable_from_value("request", convert(request));
    context
}

fn convert(value: &Value) -> cel::Value {
    to_value(value).expect("JSON converts to CEL")
}

/// What the policy did with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Accepted as it is, without a warning.
    Allowed,
    /// Denied (403), mutated, or accepted with a warning (an exempt requester's bypass).
    Acted,
    /// Refused as unreadable (400): a request the API server never sends.
    Unreadable,
}

/// Runs the policy on a request, with no host and then, if that allows it, with a host whose
/// every lookup finds an object that another owner owns ([`Claimed`]): what the policy reads
/// can only make it act on a request the conditions send.
pub fn verdict(request: &Value, settings: &Value) -> Verdict {
    let payload = serde_json::json!({"request": request, "settings": settings});
    let payload = serde_json::to_vec(&payload).unwrap();
    let first = verdict_of(serde_json::to_value(policy::validate(&payload)).unwrap());
    let Ok(parsed) = Settings::from_json(&serde_json::to_vec(settings).unwrap()) else {
        return first;
    };
    if first != Verdict::Allowed || parsed.owner_marks.is_empty() {
        return first;
    }
    let host = Claimed { settings: &parsed };
    verdict_of(serde_json::to_value(policy::validate_with(&payload, &host)).unwrap())
}

/// What a response (its JSON) says the policy did.
fn verdict_of(response: Value) -> Verdict {
    let warned = response["warnings"]
        .as_array()
        .is_some_and(|w| !w.is_empty());
    let mutated = !response["mutated_object"].is_null();
    match (response["accepted"].as_bool(), response["code"].as_u64()) {
        (Some(false), Some(400)) => Verdict::Unreadable,
        (Some(false), _) => Verdict::Acted,
        (_, _) if mutated || warned => Verdict::Acted,
        (_, _) => Verdict::Allowed,
    }
}

/// A host whose every lookup finds the object it names, owned by `zed` under the setup's first
/// owner mark, with no uid (so, of any uid) and no controller.
struct Claimed<'a> {
    settings: &'a Settings,
}

impl single_owner_policy::Parents for Claimed<'_> {
    fn get(&self, lookup: &single_owner_policy::Lookup<'_>) -> Result<String, String> {
        let group = lookup
            .api_version
            .rsplit_once('/')
            .map_or("", |(group, _)| group);
        let namespace = lookup.namespace.unwrap_or_default();
        let object = format!("{group}/{}:{namespace}/{}", lookup.kind, lookup.name);
        let (place, values, _) = owner_marks(self.settings, "zed", namespace, &object);
        let field = match place {
            MarkPlace::Label => "labels",
            MarkPlace::Annotation => "annotations",
        };
        let mut metadata = serde_json::json!({"name": lookup.name});
        if let Some(namespace) = lookup.namespace {
            metadata["namespace"] = Value::from(namespace);
        }
        metadata[field] = Value::Object(values);
        let object = serde_json::json!({"apiVersion": lookup.api_version, "kind": lookup.kind,
                                        "metadata": metadata, "spec": {"replicas": 1}});
        Ok(object.to_string())
    }
}

/// How many lookups the policy makes on `request` when the host answers each with a
/// controller carrying the object's own labels and annotations, at the uid its reference
/// names: every copy then is inherited (and an unmarked child's chain ends at the first read).
pub fn lookups(request: &Value, settings: &Value) -> usize {
    let payload = serde_json::json!({"request": request, "settings": settings});
    let payload = serde_json::to_vec(&payload).unwrap();
    let object = match &request["object"] {
        Value::Null => &request["oldObject"],
        object => object,
    };
    let host = Copying {
        metadata: &object["metadata"],
        calls: std::cell::Cell::new(0),
    };
    policy::validate_with(&payload, &host);
    host.calls.get()
}

/// A host whose every controller carries the marks of the object it derives.
struct Copying<'a> {
    metadata: &'a Value,
    calls: std::cell::Cell<usize>,
}

impl single_owner_policy::Parents for Copying<'_> {
    fn get(&self, _: &single_owner_policy::Lookup<'_>) -> Result<String, String> {
        self.calls.set(self.calls.get() + 1);
        let uid = &self.metadata["ownerReferences"][0]["uid"];
        let parent = serde_json::json!({"metadata": {"name": "parent", "uid": uid,
            "labels": self.metadata["labels"], "annotations": self.metadata["annotations"]}});
        Ok(parent.to_string())
    }
}

/// Reads a settings document (YAML or JSON) into the policy's settings and the JSON the
/// `validate` payload carries.
pub fn settings(yaml: &str) -> (Settings, Value) {
    let settings = single_owner_manifest::read_settings(yaml).unwrap();
    let json: Value = serde_yaml::from_str(yaml).unwrap();
    (
        settings,
        if json.is_null() {
            serde_json::json!({})
        } else {
            json
        },
    )
}

/// The placeholders of the cluster-writes fixtures (`test_data/cluster-writes/`): the label key
/// `@owner`, whose value `a` or `b` names an owner, and the offer value `@offer-b`.
pub const OWNER_PLACEHOLDER: &str = "@owner";
pub const OFFER_PLACEHOLDER: &str = "@offer-";
/// The offer annotation the fixtures are written with.
pub const DEFAULT_OFFER: &str = "single-owner-policy.io/offer";

/// A cluster-writes fixture in a setup's own terms: each `@owner: <name>` label — of an object
/// or of a template — becomes the setup's first owner mark for owner `<name>`, in the mark's
/// place (labels or annotations): `ClusterExtension.<name>` (the first cluster kind, or the
/// first namespaced kind in the request's namespace) in the value, the kind/name pair for a
/// mark with `kindKey`, the release `owners/<name>` for a mark with `namespaceKey`, the app
/// `<name>` of a tracking id that names the request's object, the opaque id `<name>` for a mark
/// without kinds. Each `@offer-<name>` value becomes that mark's offer from owner `a` to
/// `<name>`, under the setup's offer annotation.
pub fn expand_placeholders(request: &Value, settings: &Settings) -> Value {
    let mut expanded = request.clone();
    expand(&mut expanded, request, settings);
    expanded
}

/// The object a request writes, as a tracking id names it: `<group>/<kind>:<namespace>/<name>`,
/// the namespace the request's (the object's own for a request without one), the name the
/// object's (the request's for metadata without one).
fn tracked(request: &Value, metadata: &Map<String, Value>) -> String {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
    let namespace = text(request.get("namespace"))
        .or_else(|| text(metadata.get("namespace")))
        .unwrap_or_default();
    let name = text(metadata.get("name"))
        .or_else(|| text(request.get("name")))
        .unwrap_or_default();
    let group = request["kind"]["group"].as_str().unwrap_or("");
    let kind = request["kind"]["kind"].as_str().unwrap_or("");
    format!("{group}/{kind}:{namespace}/{name}")
}

/// The first owner mark of a setup for owner `name`, on an object that a tracking id names as
/// `object`: where it is kept, its keys and values, and the owner id an offer names.
pub fn owner_marks(
    settings: &Settings,
    name: &str,
    namespace: &str,
    object: &str,
) -> (MarkPlace, Map<String, Value>, String) {
    let mark = &settings.owner_marks[0];
    let kind = match (mark.cluster_kinds.first(), mark.namespaced_kinds.first()) {
        (Some(kind), _) => Some((kind.clone(), name.to_owned())),
        (None, Some(kind)) => Some((kind.clone(), format!("{namespace}.{name}"))),
        (None, None) => None,
    };
    let mut values = Map::new();
    let mut put = |key: &str, value: &str| values.insert(key.to_owned(), Value::from(value));
    let id = match (mark.format, &mark.kind_key, &mark.namespace_key, kind) {
        (Format::ArgoCdTrackingId, ..) => {
            put(&mark.key, &format!("{name}:{object}"));
            name.to_owned()
        }
        (_, Some(kind_key), _, Some((kind, value))) => {
            put(kind_key, &kind);
            put(&mark.key, &value);
            format!("{kind}.{value}")
        }
        (_, _, Some(namespace_key), _) => {
            put(namespace_key, "owners");
            put(&mark.key, name);
            format!("owners/{name}")
        }
        (_, _, _, Some((kind, value))) => {
            let id = format!("{kind}.{value}");
            put(&mark.key, &id);
            id
        }
        (_, _, _, None) => {
            put(&mark.key, name);
            name.to_owned()
        }
    };
    (mark.place, values, id)
}

fn expand(value: &mut Value, request: &Value, settings: &Settings) {
    let namespace = request["namespace"].as_str().unwrap_or("default");
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(metadata)) = map.get_mut("metadata") {
                expand_metadata(metadata, request, settings);
            }
            if let Some(offer) = map.remove(DEFAULT_OFFER) {
                map.insert(settings.offer_annotation.clone(), offer);
            }
            for value in map.values_mut() {
                expand(value, request, settings);
            }
        }
        Value::Array(items) => {
            for item in items {
                expand(item, request, settings);
            }
        }
        Value::String(text) => {
            if let Some(name) = text.strip_prefix(OFFER_PLACEHOLDER) {
                let id = |owner: &str| owner_marks(settings, owner, namespace, "").2;
                let key = &settings.owner_marks[0].key;
                *text = format!("{key}: {} -> {}", id("a"), id(name));
            }
        }
        _ => {}
    }
}

/// Moves an `@owner` label of `metadata` into the setup's first owner mark.
fn expand_metadata(metadata: &mut Map<String, Value>, request: &Value, settings: &Settings) {
    let Some(Value::Object(labels)) = metadata.get_mut("labels") else {
        return;
    };
    let Some(owner) = labels.remove(OWNER_PLACEHOLDER) else {
        return;
    };
    if labels.is_empty() {
        metadata.remove("labels");
    }
    let name = owner.as_str().expect("an @owner label names an owner");
    let namespace = request["namespace"].as_str().unwrap_or("default");
    let object = tracked(request, metadata);
    let (place, values, _) = owner_marks(settings, name, namespace, &object);
    let map = match place {
        MarkPlace::Label => "labels",
        MarkPlace::Annotation => "annotations",
    };
    let map = metadata
        .entry(map)
        .or_insert_with(|| Value::Object(Map::new()));
    map.as_object_mut()
        .expect("labels and annotations are objects")
        .extend(values);
}
