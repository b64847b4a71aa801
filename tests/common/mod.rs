//! Helpers the integration tests share.

use serde_json::{Value, json};
use single_owner_policy::policy;

/// Checks `settings` as policy-server does when it loads the policy, then evaluates `request`;
/// the response as JSON.
pub fn evaluate(request: &Value, settings: &Value) -> Value {
    let check = policy::validate_settings(&serde_json::to_vec(settings).unwrap());
    assert!(check.valid, "{:?}", check.message);
    let payload = serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
    serde_json::to_value(policy::validate(&payload)).unwrap()
}

/// What a request gets: `allowed`, or the denial message.
pub fn verdict(response: &Value) -> String {
    match (&response["accepted"], &response["message"]) {
        (Value::Bool(true), Value::Null) => "allowed".to_owned(),
        (Value::Bool(false), Value::String(message)) => message.clone(),
        other => panic!("unexpected response {other:?}"),
    }
}

/// `base` with the top-level fields of `extra` set over it.
pub fn merged(mut base: Value, extra: &Value) -> Value {
    for (key, value) in extra.as_object().unwrap() {
        base[key] = value.clone();
    }
    base
}
