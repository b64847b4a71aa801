//! The policy's answer to a case: the parts of a response the properties read, and what a
//! patch changed.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};
use single_owner_policy::policy::{self, EXEMPTION_ANNOTATION, Payload, Verdict};
use single_owner_policy::{NoHost, Violation};

use super::world::{Labels, Shape, Spot, Written};
use crate::common::summary;

/// The parts of a response the properties read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Response {
    pub(crate) accepted: bool,
    pub(crate) code: Option<u16>,
    pub(crate) message: Option<String>,
    pub(crate) warnings: Vec<String>,
    /// The exemption audit annotation.
    pub(crate) audit: Option<String>,
    pub(crate) patched: Option<Value>,
    /// The violations the policy's typed verdict denies for, as `key: rule`, sorted.
    pub(crate) denied: Vec<String>,
    /// The violations an exempt requester bypasses, as `key: rule`, sorted.
    pub(crate) bypassed: Vec<String>,
    /// Each violation denied or bypassed, as [`summary`] writes it, in order.
    pub(crate) summaries: Vec<String>,
}

/// A response as `key: rule` per violation, warning and audit line, in no order.
type Rules = (bool, Option<u16>, Vec<String>, Vec<String>, Vec<String>);

impl Response {
    /// Whether the request was accepted as it is: no message, warning, audit annotation or
    /// patch.
    pub(crate) fn plainly_accepted(&self) -> bool {
        self.accepted
            && self.code.is_none()
            && self.message.is_none()
            && self.warnings.is_empty()
            && self.audit.is_none()
            && self.patched.is_none()
    }

    /// The object as admitted: the patched one, or the request's; `None` when denied or
    /// without an object.
    pub(crate) fn admitted(&self, request: &Value) -> Option<Value> {
        if !self.accepted {
            return None;
        }
        let object = self.patched.as_ref().unwrap_or(&request["object"]);
        object.is_object().then(|| object.clone())
    }

    /// The response with each violation as its `key: rule`, in no order: those denied, those
    /// the warnings bypass, and those the audit annotation records. (The offer violation of an
    /// update that moves several entries names the first moved one: its owners depend on the
    /// order of the entries.)
    pub(crate) fn rules(&self) -> Rules {
        let warned = match self.warnings.is_empty() {
            true => Vec::new(),
            false => self.bypassed.clone(),
        };
        let audited = match self.audit {
            None => Vec::new(),
            Some(_) => self.bypassed.clone(),
        };
        (
            self.accepted,
            self.code,
            self.denied.clone(),
            warned,
            audited,
        )
    }
}

/// A violation as `{mark}: {rule}`, from its values.
fn key_rule(violation: &Violation<'_>) -> String {
    match violation.template {
        None => format!("{}: {}", violation.mark, violation.rule().name()),
        Some(template) => format!(
            "{} in {template}: {}",
            violation.mark,
            violation.rule().name()
        ),
    }
}

/// Checks the settings as policy-server does when it loads the policy, then evaluates.
pub(crate) fn respond(request: &Value, settings: &Value) -> Result<Response, TestCaseError> {
    let check = policy::validate_settings(&serde_json::to_vec(settings).unwrap());
    prop_assert!(
        check.valid,
        "generated invalid settings: {:?}",
        check.message
    );
    let payload = serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
    let response = policy::validate(&payload);
    let mut audit = response.audit_annotations.unwrap_or_default();
    let exemption = audit.remove(EXEMPTION_ANNOTATION);
    prop_assert!(audit.is_empty(), "unknown audit annotations {audit:?}");
    // The typed verdict the response was written from: what each violation is, as values.
    let parsed = Payload::parse(&payload);
    let (denied, bypassed) = match parsed.as_ref().map(|parsed| parsed.verdict(&NoHost)) {
        Ok(Verdict::Deny(violations)) => (violations, Vec::new()),
        Ok(Verdict::Exempt { violations, .. }) => (Vec::new(), violations),
        _ => (Vec::new(), Vec::new()),
    };
    let sorted = |violations: &[Violation]| {
        let mut keys: Vec<_> = violations.iter().map(key_rule).collect();
        keys.sort();
        keys
    };
    // The response says exactly these violations: the message one a line, a warning each.
    let lines: Vec<_> = denied.iter().map(ToString::to_string).collect();
    let message = (!lines.is_empty()).then(|| lines.join("\n"));
    if response.code == Some(403) || !denied.is_empty() {
        prop_assert_eq!(&response.message, &message);
    }
    let warnings = response.warnings.unwrap_or_default();
    prop_assert_eq!(warnings.len(), bypassed.len());
    Ok(Response {
        accepted: response.accepted,
        code: response.code,
        message: response.message,
        warnings,
        audit: exemption,
        patched: response.mutated_object,
        denied: sorted(&denied),
        bypassed: sorted(&bypassed),
        summaries: denied.iter().chain(&bypassed).map(summary).collect(),
    })
}

pub(crate) fn labels_in(object: &Value) -> Labels {
    strings_in(&object["metadata"]["labels"])
}

/// An object's annotations that are strings.
pub(crate) fn annotations_in(object: &Value) -> Labels {
    strings_in(&object["metadata"]["annotations"])
}

fn strings_in(map: &Value) -> Labels {
    (map.as_object().into_iter().flatten())
        .filter_map(|(key, value)| Some((key.clone(), value.as_str()?.to_owned())))
        .collect()
}

pub(crate) fn annotation_in(object: &Value, key: &str) -> Option<String> {
    object["metadata"]["annotations"][key]
        .as_str()
        .map(str::to_owned)
}

/// What a patch changed in an object: labels and annotations set, annotations removed, and
/// whether all else stayed as it was.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Patch {
    pub(crate) labels: Labels,
    pub(crate) annotations: Labels,
    pub(crate) removed: Vec<String>,
    pub(crate) rest_kept: bool,
}

impl Patch {
    pub(crate) fn between(object: &Value, patched: &Value) -> Patch {
        let set = |before: &Labels, after: &Labels| -> Labels {
            (after.iter())
                .filter(|(key, value)| before.get(*key) != Some(value))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect()
        };
        let (labels_before, labels_after) = (labels_in(object), labels_in(patched));
        let annotations = |object: &Value| {
            let map = object["metadata"]["annotations"].as_object();
            map.cloned().unwrap_or_default()
        };
        let (had, has) = (annotations(object), annotations(patched));
        let removed = had
            .keys()
            .filter(|key| !has.contains_key(*key))
            .cloned()
            .collect();
        let rest = |object: &Value| {
            let mut object = object.clone();
            if let Some(metadata) = object["metadata"].as_object_mut() {
                metadata.remove("labels");
                metadata.remove("annotations");
            }
            object
        };
        let kept_labels = labels_before
            .keys()
            .all(|key| labels_after.contains_key(key));
        Patch {
            labels: set(&labels_before, &labels_after),
            annotations: set(&annotations_in(object), &annotations_in(patched)),
            removed,
            rest_kept: kept_labels && rest(object) == rest(patched),
        }
    }

    /// A patch that adds `written` as `shape`'s labels or annotations.
    pub(crate) fn stamp(shape: Shape, written: &Written) -> Patch {
        let added: Labels = written.iter().cloned().collect();
        let (labels, annotations) = match shape.spot() {
            Spot::Label => (added, Labels::new()),
            Spot::Annotation => (Labels::new(), added),
        };
        Patch {
            labels,
            annotations,
            removed: Vec::new(),
            rest_kept: true,
        }
    }
}
