//! Templates: the object metadata a workload's controller copies onto the objects it creates.
//!
//! Kubernetes' controllers copy the labels of a template verbatim onto what they create, and the
//! policy trusts them to (see [`crate::control_plane`]); so an owner mark in a template is a
//! claim by whoever writes the template, judged like the object's own mark. The templates, per
//! kind, with the controller that copies each:
//!
//! | kind | template | copied onto, by |
//! |---|---|---|
//! | Deployment, ReplicaSet, DaemonSet, StatefulSet (`apps`), ReplicationController, Job (`batch`) | `spec.template` | ReplicaSets and Pods, by their controllers (`GetPodFromTemplate` in `pkg/controller/controller_utils.go`) |
//! | StatefulSet | `spec.volumeClaimTemplates[*]` | PersistentVolumeClaims, by the statefulset controller |
//! | CronJob (`batch`) | `spec.jobTemplate`, `spec.jobTemplate.spec.template` | Jobs, by the cronjob controller, then their Pods |
//! | Pod | `spec.volumes[*].ephemeral.volumeClaimTemplate` | PersistentVolumeClaims, by the ephemeral-volume controller |
//!
//! Templates live in `spec`, which no status subresource persists (`PrepareForUpdate` of each
//! kind's status strategy keeps the stored `spec`), so they are read on writes of the object
//! itself only.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::request::{Labels, Object, Text, null_as_default};

/// One template of an object and the labels it carries.
#[derive(Debug)]
pub struct Template<'a> {
    /// Where it is, as messages name it: `spec.template`, `spec.volumeClaimTemplates[data]`, …
    pub place: String,
    /// The labels it gives what is made from it.
    pub labels: Labels<'a>,
}

/// Which templates a kind has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `spec.template`.
    Pods,
    /// `spec.template` and `spec.volumeClaimTemplates`.
    StatefulSet,
    /// `spec.jobTemplate` and its pod template.
    CronJob,
    /// `spec.volumes[*].ephemeral.volumeClaimTemplate`.
    Pod,
}

impl Shape {
    fn of(group: &str, kind: &str) -> Option<Shape> {
        match (group, kind) {
            ("apps", "Deployment" | "ReplicaSet" | "DaemonSet") => Some(Shape::Pods),
            ("", "ReplicationController") | ("batch", "Job") => Some(Shape::Pods),
            ("apps", "StatefulSet") => Some(Shape::StatefulSet),
            ("batch", "CronJob") => Some(Shape::CronJob),
            ("", "Pod") => Some(Shape::Pod),
            _ => None,
        }
    }
}

/// The templates of `object`, a `kind` of `group`: none for a kind without templates. Read
/// once per object; an error names the field that is not what the kind's schema says.
pub fn templates<'a>(
    group: &str,
    kind: &str,
    object: &'a Object<'a>,
) -> Result<&'a [Template<'a>], String> {
    let read = object.templates.get_or_init(|| {
        let Some(shape) = Shape::of(group, kind) else {
            return Ok(Vec::new());
        };
        match object.field("spec") {
            Some(spec) => read(shape, spec).map_err(|error| {
                // The position is in `spec`, not the request: the path names the field.
                let path = error.path().to_string();
                let error = error.into_inner().to_string();
                let error = error.split(" at line ").next().unwrap_or_default();
                match path.as_str() {
                    "." => format!("spec: {error}"),
                    path => format!("spec.{path}: {error}"),
                }
            }),
            None => Ok(Vec::new()),
        }
    });
    read.as_deref().map_err(Clone::clone)
}

fn read<'a>(
    shape: Shape,
    spec: &'a RawValue,
) -> Result<Vec<Template<'a>>, serde_path_to_error::Error<serde_json::Error>> {
    let mut deserializer = serde_json::Deserializer::from_slice(spec.get().as_bytes());
    let spec: Spec<'a> =
        match serde_path_to_error::deserialize::<_, Option<Spec>>(&mut deserializer)? {
            Some(spec) => spec,
            None => return Ok(Vec::new()),
        };
    let mut templates = Vec::new();
    let mut add = |place: String, template: Option<Meta<'a>>| {
        if let Some(template) = template {
            templates.push(Template {
                place,
                labels: template.metadata.labels,
            });
        }
    };
    match shape {
        Shape::Pods => add("spec.template".to_owned(), spec.template),
        Shape::StatefulSet => {
            add("spec.template".to_owned(), spec.template);
            for claim in spec.volume_claim_templates {
                let place = format!("spec.volumeClaimTemplates[{}]", claim.metadata.name);
                add(place, Some(claim));
            }
        }
        Shape::CronJob => {
            if let Some(job) = spec.job_template {
                let pods = job.spec.and_then(|spec| spec.template);
                let metadata = job.metadata;
                add("spec.jobTemplate".to_owned(), Some(Meta { metadata }));
                add("spec.jobTemplate.spec.template".to_owned(), pods);
            }
        }
        Shape::Pod => {
            for volume in spec.volumes {
                let template = volume.ephemeral.and_then(|e| e.volume_claim_template);
                let place = format!(
                    "spec.volumes[{}].ephemeral.volumeClaimTemplate",
                    volume.name
                );
                add(place, template);
            }
        }
    }
    Ok(templates)
}

/// The fields of a workload's `spec` that hold templates; the rest is skipped.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spec<'a> {
    #[serde(default, borrow)]
    template: Option<Meta<'a>>,
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    volume_claim_templates: Vec<Meta<'a>>,
    #[serde(default, borrow)]
    job_template: Option<JobTemplate<'a>>,
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    volumes: Vec<Volume<'a>>,
}

/// A template's metadata: its name and labels.
#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    metadata: MetaFields<'a>,
}

#[derive(Default, Deserialize)]
struct MetaFields<'a> {
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    name: Text<'a>,
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    labels: Labels<'a>,
}

#[derive(Deserialize)]
struct JobTemplate<'a> {
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    metadata: MetaFields<'a>,
    #[serde(default, borrow)]
    spec: Option<JobSpec<'a>>,
}

#[derive(Deserialize)]
struct JobSpec<'a> {
    #[serde(default, borrow)]
    template: Option<Meta<'a>>,
}

#[derive(Deserialize)]
struct Volume<'a> {
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    name: Text<'a>,
    #[serde(default, borrow)]
    ephemeral: Option<Ephemeral<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Ephemeral<'a> {
    #[serde(default, borrow)]
    volume_claim_template: Option<Meta<'a>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn places(group: &str, kind: &str, object: serde_json::Value) -> Vec<(String, String)> {
        let json = object.to_string();
        let object: Object = serde_json::from_str(&json).unwrap();
        templates(group, kind, &object)
            .unwrap()
            .iter()
            .map(|t| {
                let labels: Vec<_> = t.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
                (t.place.clone(), labels.join(","))
            })
            .collect()
    }

    fn with_labels(labels: serde_json::Value) -> serde_json::Value {
        json!({"metadata": {"labels": labels}})
    }

    #[test]
    fn each_kind_has_its_templates() {
        let pod_template = with_labels(json!({"o": "a"}));
        let owned = |place: &str| (place.to_owned(), "o=a".to_owned());
        #[rustfmt::skip]
        let rows = [
            ("apps", "Deployment", json!({"spec": {"template": pod_template}}), vec![owned("spec.template")]),
            ("apps", "ReplicaSet", json!({"spec": {"template": pod_template}}), vec![owned("spec.template")]),
            ("apps", "DaemonSet", json!({"spec": {"template": pod_template}}), vec![owned("spec.template")]),
            ("", "ReplicationController", json!({"spec": {"template": pod_template}}), vec![owned("spec.template")]),
            ("batch", "Job", json!({"spec": {"template": pod_template}}), vec![owned("spec.template")]),
            ("apps", "StatefulSet", json!({"spec": {"template": pod_template, "volumeClaimTemplates": [
                {"metadata": {"name": "data", "labels": {"o": "a"}}}]}}),
             vec![owned("spec.template"), owned("spec.volumeClaimTemplates[data]")]),
            ("batch", "CronJob", json!({"spec": {"jobTemplate": {"metadata": {"labels": {"o": "a"}},
                "spec": {"template": pod_template}}}}),
             vec![owned("spec.jobTemplate"), owned("spec.jobTemplate.spec.template")]),
            ("", "Pod", json!({"spec": {"volumes": [{"name": "cache", "emptyDir": {}},
                {"name": "scratch", "ephemeral": {"volumeClaimTemplate": with_labels(json!({"o": "a"}))}}]}}),
             vec![owned("spec.volumes[scratch].ephemeral.volumeClaimTemplate")]),
            // kinds without templates: `spec` is not read at all
            ("", "ConfigMap", json!({"data": {"template": "x"}}), vec![]),
            ("example.com", "Deployment", json!({"spec": {"template": "not a pod template"}}), vec![]),
            // a template without labels gives none
            ("apps", "Deployment", json!({"spec": {"template": {"spec": {}}}}), vec![("spec.template".to_owned(), String::new())]),
            ("apps", "Deployment", json!({"spec": null}), vec![]),
        ];
        for (group, kind, object, expected) in rows {
            assert_eq!(
                places(group, kind, object.clone()),
                expected,
                "{kind} {object}"
            );
        }
    }

    #[test]
    fn a_template_that_breaks_its_kinds_schema_is_named() {
        let json = json!({"spec": {"template": {"metadata": {"labels": ["o"]}}}}).to_string();
        let object: Object = serde_json::from_str(&json).unwrap();
        let error = templates("apps", "Deployment", &object).unwrap_err();
        assert_eq!(
            error,
            "spec.template.metadata.labels: invalid type: sequence, expected a map"
        );
    }
}
