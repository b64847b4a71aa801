//! Reading the settings and the request given on the command line, the way
//! `kwctl run` reads them.

use std::{fs, io::Read, path::Path};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Map, Value};

/// A policy's settings: always a JSON object (`{}` when none are given).
pub type Settings = Map<String, Value>;

/// Settings from `--settings-json` or from a JSON or YAML file
/// (`--settings-path`); none given means `{}`.
pub fn load_settings(json: Option<&str>, path: Option<&Path>) -> Result<Settings> {
    let value = match (json, path) {
        (Some(json), _) => serde_json::from_str(json)
            .context("Cannot parse settings JSON given with --settings-json")?,
        (None, Some(path)) => {
            let text = fs::read_to_string(path)
                .with_context(|| format!("Cannot open settings file {}", path.display()))?;
            parse_settings_yaml(&text)
                .with_context(|| format!("Cannot parse settings file {}", path.display()))?
        }
        (None, None) => Value::Null,
    };
    settings_from_value(value)
}

/// Parse settings text, JSON or YAML (YAML being a superset of JSON).
fn parse_settings_yaml(text: &str) -> Result<Value> {
    Ok(serde_yaml::from_str(text)?)
}

/// Like policy-evaluator's `PolicySettings::try_from`: only a mapping or
/// nothing (null, an empty file) are settings.
fn settings_from_value(value: Value) -> Result<Settings> {
    match value {
        Value::Null => Ok(Settings::new()),
        Value::Object(map) => Ok(map),
        other => bail!("settings must be a mapping (a JSON object), not {other}"),
    }
}

/// The AdmissionRequest in the request file (`-` reads standard input).
pub fn load_request(path: &str) -> Result<Value> {
    let text = if path == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("Error reading request from stdin")?;
        text
    } else {
        fs::read_to_string(path).with_context(|| format!("Error opening request file {path}"))?
    };
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("Cannot parse request file {path} as JSON"))?;
    admission_request(value).with_context(|| format!("Invalid request file {path}"))
}

/// The AdmissionRequest in `value`: the `request` of an AdmissionReview
/// (a document with `kind: AdmissionReview`, or with a top-level `request`
/// object), or else `value` itself.
pub fn admission_request(value: Value) -> Result<Value> {
    let Value::Object(mut document) = value else {
        bail!("expected a JSON object (an AdmissionRequest or an AdmissionReview)");
    };
    let is_review = document.get("kind").and_then(Value::as_str) == Some("AdmissionReview")
        || document.get("request").is_some_and(Value::is_object);
    if !is_review {
        return Ok(Value::Object(document));
    }
    match document.remove("request") {
        Some(request @ Value::Object(_)) => Ok(request),
        _ => Err(anyhow!(
            "invalid AdmissionReview object: it has no `request` object"
        )),
    }
}

/// The request's `uid`, or `""` when it has none (as policy-evaluator does).
pub fn request_uid(request: &Value) -> String {
    request
        .get("uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The request's `object`, `None` when absent or null (DELETE operations).
pub fn request_object(request: &Value) -> Option<&Value> {
    request.get("object").filter(|object| !object.is_null())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bare_request_is_kept() {
        let request = json!({"uid": "1", "operation": "CREATE", "object": {"kind": "Pod"}});
        assert_eq!(admission_request(request.clone()).unwrap(), request);
    }

    #[test]
    fn admission_review_is_unwrapped() {
        let review = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {"uid": "2", "object": {}},
        });
        assert_eq!(
            admission_request(review).unwrap(),
            json!({"uid": "2", "object": {}})
        );
    }

    #[test]
    fn review_without_kind_is_recognised_by_its_request() {
        let review = json!({"request": {"uid": "3"}});
        assert_eq!(admission_request(review).unwrap(), json!({"uid": "3"}));
    }

    #[test]
    fn review_without_request_is_an_error() {
        let review = json!({"kind": "AdmissionReview", "response": {}});
        assert!(admission_request(review).is_err());
    }

    #[test]
    fn non_object_request_is_an_error() {
        assert!(admission_request(json!([1, 2])).is_err());
        assert!(admission_request(json!("pod")).is_err());
    }

    #[test]
    fn uid_and_object_lookups() {
        let request = json!({"uid": "9", "object": null});
        assert_eq!(request_uid(&request), "9");
        assert_eq!(request_object(&request), None);
        assert_eq!(request_uid(&json!({})), "");
        let with_object = json!({"object": {"a": 1}});
        assert_eq!(request_object(&with_object), Some(&json!({"a": 1})));
    }

    #[test]
    fn settings_accept_json_yaml_and_nothing() {
        assert_eq!(load_settings(None, None).unwrap(), Settings::new());
        let from_json = load_settings(Some(r#"{"a": [1]}"#), None).unwrap();
        assert_eq!(Value::Object(from_json), json!({"a": [1]}));
        let from_yaml = settings_from_value(parse_settings_yaml("a:\n  - 1\nb: x\n").unwrap());
        assert_eq!(
            Value::Object(from_yaml.unwrap()),
            json!({"a": [1], "b": "x"})
        );
        let empty = settings_from_value(parse_settings_yaml("").unwrap()).unwrap();
        assert!(empty.is_empty());
    }

    #[test]
    fn settings_must_be_a_mapping() {
        assert!(load_settings(Some("[1]"), None).is_err());
        assert!(load_settings(Some("not json"), None).is_err());
        assert!(settings_from_value(parse_settings_yaml("- a\n").unwrap()).is_err());
    }
}
