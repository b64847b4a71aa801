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

use cel::{Context, Program, to_value};
use serde_json::Value;
use single_owner_manifest::{MatchCondition, match_conditions};
use single_owner_policy::{Settings, policy};

/// The compiled match conditions of a setup.
pub struct Conditions {
    programs: Vec<(String, Program)>,
}

impl Conditions {
    pub fn of(settings: &Settings) -> Conditions {
        Conditions::compile(&match_conditions(settings))
    }

    pub fn compile(conditions: &[MatchCondition]) -> Conditions {
        let programs = conditions
            .iter()
            .map(|condition| {
                let program = Program::compile(&condition.expression).unwrap_or_else(|error| {
                    panic!("{}: {error}\n{}", condition.name, condition.expression)
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
