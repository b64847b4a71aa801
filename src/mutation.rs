//! Mutation: the new object with an owner mark stamped or a consumed offer removed, for a
//! mutating response.
//!
//! Only a mutating response needs the whole object, so only then is the payload read again, its
//! object into serde_json's tree. Every other request is judged on the lean view alone.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::facts::{Facts, Sides};
use crate::owner::{Claim, Place};
use crate::scope;

/// What the policy changes in the object it admits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mutation {
    /// Labels to add: `(key, value)`.
    pub labels: Vec<(String, String)>,
    /// Annotations to add: `(key, value)`.
    pub annotations: Vec<(String, String)>,
    /// An annotation to remove.
    pub remove_annotation: Option<String>,
}

impl Mutation {
    /// What the policy changes in an object it admits: it removes a consumed offer
    /// (`consume_offer`), and stamps the owner mark on a CREATE under `stamp: true`.
    pub fn of(facts: &Facts<'_>, consume_offer: bool) -> Mutation {
        let settings = facts.settings;
        let mut mutation = Mutation {
            remove_annotation: consume_offer.then(|| settings.offer_annotation.clone()),
            ..Mutation::default()
        };
        match stamp(facts) {
            Some((Place::Label, values)) => mutation.labels = values,
            Some((Place::Annotation, values)) => mutation.annotations = values,
            None => {}
        }
        mutation
    }
}

/// The marks that stamp, on a CREATE under `stamp: true`, the one owner the requester acts
/// for: the first mark whose shape reads it as a valid owner in scope (a tracking id, which
/// names the object too, is never stamped), unless the object already carries an owner mark.
fn stamp(facts: &Facts<'_>) -> Option<(Place, Vec<(String, String)>)> {
    let (true, Sides::Create(_), Some(acting)) = (facts.settings.stamp, facts.sides, &facts.acting)
    else {
        return None;
    };
    let owner = acting.single_owner()?;
    if facts
        .object_entries()
        .any(|entry| !entry.new.unwrap_or_default().is_none())
    {
        return None;
    }
    let scope = facts.request.object_scope();
    facts.object_entries().find_map(|entry| {
        let claim = Claim::of_owner(entry.mark, owner);
        scope::fit(entry.mark, claim, scope).ok()?;
        let values = claim.values(entry.mark)?;
        let values = values
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value.to_owned()))
            .collect();
        Some((entry.mark.place, values))
    })
}

/// The request's object in the payload's `text` with the mutation applied: the labels and
/// annotations it adds (or replaces) and the one it removes.
pub fn mutated_object(text: &str, mutation: &Mutation) -> Result<Value, String> {
    let Payload {
        request: Request { mut object },
    } = serde_json::from_str(text).map_err(|error| error.to_string())?;
    let Value::Object(fields) = &mut object else {
        return Err("`object` is not a JSON object".to_owned());
    };
    let added = [
        ("labels", &mutation.labels),
        ("annotations", &mutation.annotations),
    ];
    if let Some(key) = &mutation.remove_annotation
        && let Some(annotations) = (fields.get_mut("metadata"))
            .and_then(|metadata| metadata.get_mut("annotations"))
            .and_then(Value::as_object_mut)
    {
        annotations.remove(key);
    }
    for (field, values) in added.into_iter().filter(|(_, values)| !values.is_empty()) {
        let metadata = member(fields, "object", "metadata")?;
        let map = member(metadata, "object.metadata", field)?;
        for (key, value) in values {
            map.insert(key.clone(), Value::String(value.clone()));
        }
    }
    Ok(object)
}

/// The payload, read for its object alone.
#[derive(Deserialize)]
struct Payload {
    request: Request,
}

#[derive(Deserialize)]
struct Request {
    object: Value,
}

/// The member `key` of the JSON object at `path`, an object: made an empty one when it is
/// missing or `null`, refused when it is anything else.
fn member<'a>(
    members: &'a mut Map<String, Value>,
    path: &str,
    key: &str,
) -> Result<&'a mut Map<String, Value>, String> {
    let member = members.entry(key).or_insert(Value::Null);
    if member.is_null() {
        *member = Value::Object(Map::new());
    }
    member
        .as_object_mut()
        .ok_or_else(|| format!("`{path}.{key}` is not a JSON object"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The object `mutation` makes of `object`.
    fn mutated(object: Value, mutation: &Mutation) -> Result<Value, String> {
        let payload = json!({"request": {"object": object}}).to_string();
        mutated_object(&payload, mutation)
    }

    #[test]
    fn labels_are_added_wherever_metadata_stands() {
        let stamp = Mutation {
            labels: vec![("appID".to_owned(), "ClusterExtension.a".to_owned())],
            ..Mutation::default()
        };
        #[rustfmt::skip]
        let rows = [
            (json!({"kind": "ConfigMap", "data": {"k": "v"}}),
             json!({"kind": "ConfigMap", "data": {"k": "v"}, "metadata": {"labels": {"appID": "ClusterExtension.a"}}})),
            (json!({"metadata": {"name": "x", "labels": null}}),
             json!({"metadata": {"name": "x", "labels": {"appID": "ClusterExtension.a"}}})),
            (json!({"metadata": {"labels": {"app": "x"}}}),
             json!({"metadata": {"labels": {"app": "x", "appID": "ClusterExtension.a"}}})),
            (json!({"metadata": {"labels": {"appID": "", "app": "x"}}}),
             json!({"metadata": {"labels": {"appID": "ClusterExtension.a", "app": "x"}}})),
        ];
        for (object, expected) in rows {
            assert_eq!(mutated(object, &stamp), Ok(expected));
        }
    }

    #[test]
    fn annotations_are_stamped_beside_the_others() {
        let stamp = Mutation {
            annotations: vec![(
                "camel.apache.org/operator.id".to_owned(),
                "operator-1".to_owned(),
            )],
            ..Mutation::default()
        };
        let object = json!({"metadata": {"annotations": {"note": "x"}}});
        let expected = json!({"metadata": {"annotations": {"note": "x", "camel.apache.org/operator.id": "operator-1"}}});
        assert_eq!(mutated(object, &stamp), Ok(expected));
    }

    #[test]
    fn a_consumed_offer_is_removed() {
        let consume = Mutation {
            remove_annotation: Some("offer".to_owned()),
            ..Mutation::default()
        };
        let object = json!({"metadata": {"annotations": {"offer": "b", "note": "x"}, "labels": {"appID": "b"}}});
        let expected =
            json!({"metadata": {"annotations": {"note": "x"}, "labels": {"appID": "b"}}});
        assert_eq!(mutated(object, &consume), Ok(expected));
    }

    #[test]
    fn objects_of_the_wrong_shape_are_refused() {
        let stamp = Mutation {
            labels: vec![("appID".to_owned(), "a".to_owned())],
            ..Mutation::default()
        };
        for (object, error) in [
            (json!("x"), "`object` is not a JSON object"),
            (
                json!({"metadata": []}),
                "`object.metadata` is not a JSON object",
            ),
            (
                json!({"metadata": {"labels": 1}}),
                "`object.metadata.labels` is not a JSON object",
            ),
        ] {
            assert_eq!(mutated(object, &stamp), Err(error.to_owned()));
        }
    }
}
