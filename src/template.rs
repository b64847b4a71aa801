//! Templates: the object metadata a workload's controller copies onto the objects it creates.
//!
//! Kubernetes' controllers copy the labels and annotations of a template verbatim onto what they create, and the
//! policy trusts them to (see [`crate::control_plane`]); so an owner mark in a template is a
//! claim by whoever writes the template, judged like the object's own mark. The templates, per
//! kind, with the controller that copies each — [`TEMPLATES`], which the policy reads and the
//! match conditions' generator sends:
//!
//! | kind | template | copied onto, by |
//! |---|---|---|
//! | Deployment, ReplicaSet, DaemonSet, StatefulSet (`apps`), ReplicationController, Job (`batch`) | `spec.template` | ReplicaSets and Pods, by their controllers (`GetPodFromTemplate` in `pkg/controller/controller_utils.go`) |
//! | StatefulSet | `spec.volumeClaimTemplates[*]` | PersistentVolumeClaims, by the statefulset controller |
//! | CronJob (`batch`) | `spec.jobTemplate`, `spec.jobTemplate.spec.template` | Jobs, by the cronjob controller, then their Pods |
//! | Pod | `spec.volumes[*].ephemeral.volumeClaimTemplate` | PersistentVolumeClaims, by the ephemeral-volume controller |
//! | ResourceClaimTemplate (`resource.k8s.io`) | `spec` (its `metadata`) | ResourceClaims of the Pods that name it, by the resource-claim controller (`handleClaim` in `pkg/controller/resourceclaim/controller.go`: `Labels: template.Spec.ObjectMeta.Labels`, and before v1beta1 its annotations too) |
//!
//! The other controllers that copy metadata copy an object's own labels (the endpoints and
//! endpoint-slice controllers a Service's), which are judged on that object.
//!
//! Templates live in `spec`, which no status subresource persists (`PrepareForUpdate` of each
//! kind's status strategy keeps the stored `spec`), so they are read on writes of the object
//! itself only.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error_path;
use crate::lookup;
pub(crate) use crate::request::Template;
use crate::request::{Labels, Object, Text, null_as_default};

/// Where a workload kind keeps a template: its metadata's labels and annotations are what the policy reads.
#[derive(Debug, Clone, Copy)]
pub enum Place {
    /// One template, at this path of the object.
    One(&'static [&'static str]),
    /// A template in each item of the list at `list`: at `template` of the item (the item
    /// itself when empty), the item named in messages by its field at `name`.
    Each {
        /// The path of the list.
        list: &'static [&'static str],
        /// What one item is (`claim`, `volume`).
        item: &'static str,
        /// The path of the template in an item.
        template: &'static [&'static str],
        /// The path of the item's name in an item.
        name: &'static [&'static str],
    },
}

/// Workload kinds, as `(group, kinds)`, and the places of their templates.
pub type Workloads = (
    &'static [(&'static str, &'static [&'static str])],
    &'static [Place],
);

/// Every template the policy reads; a kind may have places in several entries.
pub const TEMPLATES: [Workloads; 5] = [
    (
        &[
            (
                "apps",
                &["Deployment", "ReplicaSet", "DaemonSet", "StatefulSet"],
            ),
            ("", &["ReplicationController"]),
            ("batch", &["Job"]),
        ],
        &[Place::One(&["spec", "template"])],
    ),
    (
        &[("apps", &["StatefulSet"])],
        &[Place::Each {
            list: &["spec", "volumeClaimTemplates"],
            item: "claim",
            template: &[],
            name: &["metadata", "name"],
        }],
    ),
    (
        &[("batch", &["CronJob"])],
        &[
            Place::One(&["spec", "jobTemplate"]),
            Place::One(&["spec", "jobTemplate", "spec", "template"]),
        ],
    ),
    (
        &[("", &["Pod"])],
        &[Place::Each {
            list: &["spec", "volumes"],
            item: "volume",
            template: &["ephemeral", "volumeClaimTemplate"],
            name: &["name"],
        }],
    ),
    (
        &[("resource.k8s.io", &["ResourceClaimTemplate"])],
        &[Place::One(&["spec"])],
    ),
];

/// The places of a kind's templates.
fn places<'t>(group: &'t str, kind: &'t str) -> impl Iterator<Item = &'static Place> + 't {
    TEMPLATES
        .iter()
        .filter(move |(kinds, _)| {
            kinds
                .iter()
                .any(|(g, ks)| *g == group && ks.contains(&kind))
        })
        .flat_map(|(_, places)| places.iter())
}

/// The templates of `object`, a `kind` of `group`: none for a kind without templates. Read
/// once per object; an error names the field that is not what the kind's schema says.
pub(crate) fn templates<'a>(
    group: &str,
    kind: &str,
    object: &'a Object<'a>,
) -> Result<&'a [Template<'a>], String> {
    object.templates(|| {
        let mut templates = Vec::new();
        for place in places(group, kind) {
            read(object, place, &mut templates)?;
        }
        Ok(templates)
    })
}

/// Reads the templates at `place` of `object` into `templates`.
fn read<'a>(
    object: &'a Object<'a>,
    place: &Place,
    templates: &mut Vec<Template<'a>>,
) -> Result<(), String> {
    let (top, path) = match *place {
        Place::One(path) | Place::Each { list: path, .. } => path.split_first().expect("a path"),
    };
    let Some(root) = object.field(top) else {
        return Ok(());
    };
    let Some(value) = at(root.get(), path, top)? else {
        return Ok(());
    };
    let at_place = |place: &str| join(top, path, place);
    match *place {
        Place::One(_) => {
            templates.push(template_at(value, at_place(""))?);
        }
        Place::Each { template, name, .. } => {
            let list = at_place("");
            let items: Option<Vec<&RawValue>> =
                parse(value).map_err(|error| format!("{list}: {error}"))?;
            for (index, item) in items.into_iter().flatten().enumerate() {
                let here = format!("{list}[{index}]");
                let named = match at(item.get(), name, &here)? {
                    Some(raw) => parse::<Option<Text>>(raw)
                        .map_err(|error| format!("{here}.{}: {error}", name.join(".")))?
                        .unwrap_or_default(),
                    None => Text::default(),
                };
                let Some(value) = at(item.get(), template, &here)? else {
                    continue;
                };
                let place = join(&format!("{list}[{named}]"), template, "");
                templates.push(template_at(value, place)?);
            }
        }
    }
    Ok(())
}

/// `first.rest…`, then `.last` unless empty.
fn join(first: &str, rest: &[&str], last: &str) -> String {
    let mut path = std::iter::once(first)
        .chain(rest.iter().copied())
        .collect::<Vec<_>>()
        .join(".");
    if !last.is_empty() {
        path.push('.');
        path.push_str(last);
    }
    path
}

/// The text from the value at `path` below `value` on (named `here` in errors; the rest of
/// the text follows the value, see [`lookup::field`]); `None` where a field is missing or
/// `null`. Each key is looked up in the text, reading no value after it.
fn at<'a>(value: &'a str, path: &[&str], here: &str) -> Result<Option<&'a str>, String> {
    let mut value = value;
    let mut walked = here.to_owned();
    for key in path {
        match lookup::field(value, key) {
            Some(Some(found)) => value = found,
            Some(None) => return Ok(None),
            // Not an object: serde_json says what it is (read as a map, as labels are).
            None => {
                let error = parse::<Option<Labels>>(value).err();
                let error = error.unwrap_or_else(|| "expected a map".to_owned());
                return Err(format!("{walked}: {error}"));
            }
        }
        walked.push('.');
        walked.push_str(key);
    }
    Ok(Some(value))
}

/// The template at `place`, whose text is `value`.
fn template_at<'a>(value: &'a str, place: String) -> Result<Template<'a>, String> {
    let MetaFields {
        labels,
        annotations,
    } = metadata(value, &place)?;
    Ok(Template {
        place,
        labels,
        annotations,
    })
}

/// The labels and annotations of a template (its `metadata`), `place` naming it in errors.
/// Only the metadata is read: the template's `spec` is stepped over ([`lookup`]).
fn metadata<'a>(template: &'a str, place: &str) -> Result<MetaFields<'a>, String> {
    match lookup::field(template, "metadata") {
        Some(None) => Ok(MetaFields::default()),
        Some(Some(metadata)) => {
            parse_at::<Option<MetaFields>>(metadata, &format!("{place}.metadata"))
                .map(Option::unwrap_or_default)
        }
        // Not an object: serde_json says what it is.
        None => parse_at::<Option<Meta>>(template, place)
            .map(|meta| meta.map(|meta| meta.metadata).unwrap_or_default()),
    }
}

/// Parses the value `json` starts with, an error named by its path below `place`.
fn parse_at<'a, T: Deserialize<'a>>(json: &'a str, place: &str) -> Result<T, String> {
    T::deserialize(&mut serde_json::Deserializer::from_str(json)).map_err(|error| {
        let path = error_path::path(json.as_bytes(), &error);
        let error = without_position(&error);
        match path.as_str() {
            "" => format!("{place}: {error}"),
            path => format!("{place}.{path}: {error}"),
        }
    })
}

/// Parses the value `json` starts with.
fn parse<'a, T: Deserialize<'a>>(json: &'a str) -> Result<T, String> {
    T::deserialize(&mut serde_json::Deserializer::from_str(json))
        .map_err(|error| without_position(&error))
}

/// A serde_json error without its position, which is in the template, not the request.
fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    text.split(" at line ")
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// A template's metadata: its labels and annotations.
#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    metadata: MetaFields<'a>,
}

#[derive(Default, Deserialize)]
struct MetaFields<'a> {
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    labels: Labels<'a>,
    #[serde(default, borrow, deserialize_with = "null_as_default")]
    annotations: Labels<'a>,
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
        #[rustfmt::skip]
        let rows = [
            ("apps", "Deployment", json!({"spec": {"template": {"metadata": {"labels": ["o"]}}}}),
             "spec.template.metadata.labels: invalid type: sequence, expected a map"),
            ("apps", "Deployment", json!({"spec": {"template": {"metadata": 5}}}),
             "spec.template.metadata: invalid type: integer `5`, expected struct MetaFields"),
            ("apps", "Deployment", json!({"spec": {"template": "x"}}),
             "spec.template: invalid type: string \"x\", expected struct Meta"),
            ("apps", "Deployment", json!({"spec": ["template"]}),
             "spec: invalid type: sequence, expected a map"),
            ("", "Pod", json!({"spec": {"volumes": [{"name": "a"}, 5]}}),
             "spec.volumes[1]: invalid type: integer `5`, expected a map"),
            ("", "Pod", json!({"spec": {"volumes": [{"name": "a", "ephemeral": true}]}}),
             "spec.volumes[0].ephemeral: invalid type: boolean `true`, expected a map"),
        ];
        for (group, kind, object, expected) in rows {
            let json = object.to_string();
            let object: Object = serde_json::from_str(&json).unwrap();
            assert_eq!(
                templates(group, kind, &object).unwrap_err(),
                expected,
                "{json}"
            );
        }
    }
}
