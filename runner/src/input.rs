//! Reading the settings and the request given on the command line, the way
//! `kwctl run` reads them.

use std::{collections::BTreeMap, fs, io::Read, path::Path};

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};
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

/// The AdmissionRequest in the request file (`-` reads standard input), as
/// `kwctl run` reads it: a JSON document, either an AdmissionReview (`kind:
/// AdmissionReview`, its `request`) or a bare AdmissionRequest, parsed into
/// policy-evaluator's typed [`AdmissionRequest`] and serialised again from it:
/// exactly what kwctl and policy-server hand the policy.
pub fn load_request(path: &str) -> Result<Value> {
    let text = read_request_file(path)?;
    admission_request(serde_json::from_str(&text)?)
}

/// The request Kubewarden's audit scanner sends for the stored object in the file (`-` reads
/// standard input): a CREATE of the object, with its kind (the resource named by the kind, as
/// the scanner names it), name and namespace, and an empty `userInfo`
/// (`newAdmissionRequest` in kubewarden-controller's `internal/audit-scanner/scanner`).
pub fn load_audit_request(path: &str) -> Result<Value> {
    let text = read_request_file(path)?;
    let object: Value = serde_json::from_str(&text)?;
    let text_of = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let (api_version, kind) = (text_of("/apiVersion"), text_of("/kind"));
    if api_version.is_empty() || kind.is_empty() {
        bail!("the object to audit has no apiVersion or kind");
    }
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let kind_of = serde_json::json!({"group": group, "version": version, "kind": kind});
    let mut request = serde_json::json!({
        "uid": text_of("/metadata/uid"),
        "kind": kind_of,
        "resource": {"group": group, "version": version, "resource": kind},
        "requestKind": kind_of,
        "operation": "CREATE",
        "userInfo": {},
        "object": object,
        "oldObject": null,
        "options": null,
    });
    for (field, pointer) in [
        ("name", "/metadata/name"),
        ("namespace", "/metadata/namespace"),
    ] {
        let value = text_of(pointer);
        if !value.is_empty() {
            request[field] = Value::from(value);
        }
    }
    admission_request(request)
}

fn read_request_file(path: &str) -> Result<String> {
    if path == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|error| anyhow!("Error reading request from stdin: {error}"))?;
        Ok(text)
    } else {
        fs::read_to_string(path)
            .map_err(|error| anyhow!("Error opening request file {path}; {error}"))
    }
}

/// The typed AdmissionRequest in a request document, serialised again; the
/// errors are kwctl's (`build_validate_request` in kwctl's `run` command).
pub fn admission_request(document: Value) -> Result<Value> {
    let Some(object) = document.as_object() else {
        bail!("Invalid request object");
    };
    let request = if object.get("kind").and_then(Value::as_str) == Some("AdmissionReview") {
        object
            .get("request")
            .cloned()
            .ok_or_else(|| anyhow!("invalid AdmissionReview object"))?
    } else {
        document
    };
    let request: AdmissionRequest = serde_json::from_value(request).map_err(|error| {
        anyhow!("cannot build AdmissionRequest object from given input: {error}")
    })?;
    Ok(serde_json::to_value(request)?)
}

/// `admission/v1` AdmissionRequest as policy-evaluator types it
/// (`policy_evaluator::admission_request::AdmissionRequest`): what kwctl and
/// policy-server require of a request before any policy sees it. Unknown
/// fields are dropped, absent and null optional fields are left out.
#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct AdmissionRequest {
    uid: String,
    kind: GroupVersionKind,
    resource: GroupVersionResource,
    #[serde(skip_serializing_if = "Option::is_none")]
    sub_resource: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_kind: Option<GroupVersionKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_resource: Option<GroupVersionResource>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_sub_resource: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<String>,
    operation: String,
    user_info: UserInfo,
    /// A `RawExtension`: any JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    object: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    old_object: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dry_run: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    options: Option<Value>,
}

/// policy-evaluator's `GroupVersionKind`: all three fields required.
#[derive(Debug, Deserialize, Serialize)]
struct GroupVersionKind {
    group: String,
    version: String,
    kind: String,
}

/// policy-evaluator's `GroupVersionResource`: all three fields required.
#[derive(Debug, Deserialize, Serialize)]
struct GroupVersionResource {
    group: String,
    version: String,
    resource: String,
}

/// Kubernetes' `authentication/v1` UserInfo (k8s-openapi's): every field
/// optional, absent ones left out.
#[derive(Debug, Deserialize, Serialize)]
struct UserInfo {
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<BTreeMap<String, Vec<String>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    groups: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    username: Option<String>,
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

    /// A request with every required field, as the API server sends it.
    fn minimal() -> Value {
        json!({
            "uid": "1",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "operation": "CREATE",
            "userInfo": {"username": "alice"},
        })
    }

    #[test]
    fn bare_request_is_read_as_kwctl_types_it() {
        let mut request = minimal();
        request["object"] = json!({"kind": "ConfigMap"});
        request["oldObject"] = Value::Null;
        request["unknownField"] = json!(1);
        let mut expected = minimal();
        expected["object"] = json!({"kind": "ConfigMap"});
        assert_eq!(admission_request(request).unwrap(), expected);
    }

    #[test]
    fn admission_review_is_unwrapped() {
        let review = json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": minimal(),
        });
        assert_eq!(admission_request(review).unwrap(), minimal());
    }

    #[test]
    fn only_kind_makes_a_review() {
        let error = admission_request(json!({"request": minimal()})).unwrap_err();
        assert_eq!(
            error.to_string(),
            "cannot build AdmissionRequest object from given input: missing field `uid`"
        );
    }

    #[test]
    fn review_without_request_is_an_error() {
        let review = json!({"kind": "AdmissionReview", "response": {}});
        let error = admission_request(review).unwrap_err();
        assert_eq!(error.to_string(), "invalid AdmissionReview object");
    }

    #[test]
    fn non_object_request_is_an_error() {
        for document in [json!([1, 2]), json!("pod")] {
            let error = admission_request(document).unwrap_err();
            assert_eq!(error.to_string(), "Invalid request object");
        }
    }

    #[test]
    fn required_fields_and_types_are_kwctls() {
        let refused = |edit: fn(&mut Value)| {
            let mut request = minimal();
            edit(&mut request);
            admission_request(request).unwrap_err().to_string()
        };
        let prefix = "cannot build AdmissionRequest object from given input: ";
        for (edit, reason) in [
            (
                (|r: &mut Value| drop(r.as_object_mut().unwrap().remove("resource")))
                    as fn(&mut Value),
                "missing field `resource`",
            ),
            (
                |r| drop(r.as_object_mut().unwrap().remove("userInfo")),
                "missing field `userInfo`",
            ),
            (
                |r| r["userInfo"]["groups"] = json!("system:masters"),
                "invalid type: string \"system:masters\", expected a sequence",
            ),
            (
                |r| r["kind"] = json!("ConfigMap"),
                "invalid type: string \"ConfigMap\", expected struct GroupVersionKind",
            ),
            (
                |r| r["uid"] = json!(7),
                "invalid type: integer `7`, expected a string",
            ),
        ] {
            assert_eq!(refused(edit), format!("{prefix}{reason}"));
        }
    }

    #[test]
    fn an_audited_object_becomes_the_scanners_request() {
        let path = std::env::temp_dir().join(format!("audit-{}.json", std::process::id()));
        let object = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "team-a", "uid": "u-7", "labels": {"appID": "x"}}});
        fs::write(&path, object.to_string()).unwrap();
        let request = load_audit_request(path.to_str().unwrap()).unwrap();
        fs::remove_file(&path).unwrap();
        let gvk = json!({"group": "apps", "version": "v1", "kind": "Deployment"});
        assert_eq!(
            request,
            json!({
                "uid": "u-7", "kind": gvk, "requestKind": gvk,
                "resource": {"group": "apps", "version": "v1", "resource": "Deployment"},
                "name": "web", "namespace": "team-a", "operation": "CREATE",
                "userInfo": {}, "object": object,
            })
        );
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
