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

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use cel::{Context, Program, to_value};
use serde_json::{Map, Value};
use single_owner_manifest::conditions::TRUSTED_WRITERS;
use single_owner_manifest::{MatchCondition, match_conditions};
use single_owner_policy::{Settings, policy};

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
        let programs = conditions
            .iter()
            .map(|condition| {
                let program = COMPILED.with_borrow_mut(|compiled| {
                    let program =
                        compiled
                            .entry(condition.expression.clone())
                            .or_insert_with(|| {
                                let program = Program::compile(&condition.expression)
                                    .unwrap_or_else(|error| {
                                        panic!(
                                            "{}: {error}\n{}",
                                            condition.name, condition.expression
                                        )
                                    });
                                Rc::new(program)
                            });
                    Rc::clone(program)
                });
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

/// The variables the conditions see: `object`, `oldObject` (`null` where the request has no
/// such object) and `request`.
pub fn variables(request: &Value) -> Context<'static, 'static> {
    let side = |name: &str| request.get(name).cloned().unwrap_or(Value::Null);
    let mut context = Context::default();
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

/// Runs the policy on a request.
pub fn verdict(request: &Value, settings: &Value) -> Verdict {
    let payload = serde_json::json!({"request": request, "settings": settings});
    let response = policy::validate(&serde_json::to_vec(&payload).unwrap());
    let warned = response.warnings.as_ref().is_some_and(|w| !w.is_empty());
    match (response.accepted, response.code) {
        (false, Some(400)) => Verdict::Unreadable,
        (false, _) => Verdict::Acted,
        (true, _) if response.mutated_object.is_some() || warned => Verdict::Acted,
        (true, _) => Verdict::Allowed,
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

/// A cluster-writes fixture in a setup's own terms: each `@owner: <name>` label becomes the
/// labels of the setup's first owner label entry for owner `<name>` — `ClusterExtension.<name>`
/// (the first cluster kind, or the first namespaced kind in the request's namespace) in the
/// value, the kind/name pair for an entry with `kindKey`, the opaque id `<name>` for an entry
/// without kinds — and each `@offer-<name>` value the id of that owner, under the setup's
/// transfer annotation.
pub fn expand_placeholders(request: &Value, settings: &Settings) -> Value {
    let namespace = request["namespace"]
        .as_str()
        .unwrap_or("default")
        .to_owned();
    let mut request = request.clone();
    expand(&mut request, settings, &namespace);
    request
}

/// The labels of the first owner label entry, and the owner id an offer names, for `name`.
pub fn owner_labels(
    settings: &Settings,
    name: &str,
    namespace: &str,
) -> (Map<String, Value>, String) {
    let entry = &settings.owner_labels[0];
    let kind = match (entry.cluster_kinds.first(), entry.namespaced_kinds.first()) {
        (Some(kind), _) => Some((kind.clone(), name.to_owned())),
        (None, Some(kind)) => Some((kind.clone(), format!("{namespace}.{name}"))),
        (None, None) => None,
    };
    let mut labels = Map::new();
    let id = match (kind, &entry.kind_key) {
        (Some((kind, value)), Some(kind_key)) => {
            labels.insert(kind_key.clone(), Value::from(kind.clone()));
            labels.insert(entry.key.clone(), Value::from(value.clone()));
            format!("{kind}.{value}")
        }
        (Some((kind, value)), None) => {
            let id = format!("{kind}.{value}");
            labels.insert(entry.key.clone(), Value::from(id.clone()));
            id
        }
        (None, _) => {
            labels.insert(entry.key.clone(), Value::from(name));
            name.to_owned()
        }
    };
    (labels, id)
}

fn expand(value: &mut Value, settings: &Settings, namespace: &str) {
    match value {
        Value::Object(map) => {
            if let Some(owner) = map.remove(OWNER_PLACEHOLDER) {
                let name = owner.as_str().expect("an @owner label names an owner");
                map.extend(owner_labels(settings, name, namespace).0);
            }
            if let Some(offer) = map.remove(DEFAULT_OFFER) {
                map.insert(settings.transfer_annotation.clone(), offer);
            }
            for value in map.values_mut() {
                expand(value, settings, namespace);
            }
        }
        Value::Array(items) => {
            for item in items {
                expand(item, settings, namespace);
            }
        }
        Value::String(text) => {
            if let Some(name) = text.strip_prefix(OFFER_PLACEHOLDER) {
                *text = owner_labels(settings, name, namespace).1;
            }
        }
        _ => {}
    }
}
