//! Mutation: the new object with an owner mark stamped or a consumed offer removed, for a
//! mutating response.
//!
//! Only a mutating response needs the whole object, so only then is the payload read again,
//! into a JSON tree; every other request is judged on the lean view alone.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::facts::{Facts, Sides};
use crate::owner::{Claim, Place};
use crate::scope;

/// The part of the payload stamping reads.
#[derive(Deserialize)]
struct Payload {
    request: Request,
}

#[derive(Deserialize)]
struct Request {
    object: Value,
}

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

/// The request's object with the mutation applied.
pub fn mutated_object(payload: &[u8], mutation: &Mutation) -> Result<Value, String> {
    let Payload {
        request: Request { mut object },
    } = std::str::from_utf8(payload)
        .map_err(|error| error.to_string())
        .and_then(|text| serde_json::from_str(text).map_err(|error| error.to_string()))?;
    let metadata = object
        .as_object_mut()
        .ok_or("`object` is not a JSON object")?
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    let metadata = as_map(metadata).ok_or("`object.metadata` is not a JSON object")?;
    if let Some(key) = &mutation.remove_annotation
        && let Some(annotations) = metadata
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
    {
        annotations.remove(key);
    }
    for (field, values) in [
        ("labels", &mutation.labels),
        ("annotations", &mutation.annotations),
    ] {
        if values.is_empty() {
            continue;
        }
        let map = metadata
            .entry(field)
            .or_insert_with(|| Value::Object(Map::new()));
        let map = as_map(map).ok_or(format!("`object.metadata.{field}` is not a JSON object"))?;
        for (key, value) in values {
            map.insert(key.clone(), Value::String(value.clone()));
        }
    }
    Ok(object)
}

/// The map inside a JSON object value; a `null` becomes an empty map.
fn as_map(value: &mut Value) -> Option<&mut Map<String, Value>> {
    if value.is_null() {
        *value = Value::Object(Map::new());
    }
    value.as_object_mut()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        ];
        for (object, expected) in rows {
            let payload = serde_json::to_vec(&json!({"request": {"object": object}})).unwrap();
            assert_eq!(mutated_object(&payload, &stamp), Ok(expected));
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
        let payload = serde_json::to_vec(&json!({"request": {"object": object}})).unwrap();
        let expected = json!({"metadata": {"annotations": {"note": "x", "camel.apache.org/operator.id": "operator-1"}}});
        assert_eq!(mutated_object(&payload, &stamp), Ok(expected));
    }

    #[test]
    fn a_consumed_offer_is_removed() {
        let consume = Mutation {
            remove_annotation: Some("offer".to_owned()),
            ..Mutation::default()
        };
        let object = json!({"metadata": {"annotations": {"offer": "b", "note": "x"}, "labels": {"appID": "b"}}});
        let payload = serde_json::to_vec(&json!({"request": {"object": object}})).unwrap();
        let expected =
            json!({"metadata": {"annotations": {"note": "x"}, "labels": {"appID": "b"}}});
        assert_eq!(mutated_object(&payload, &consume), Ok(expected));
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
            let payload = serde_json::to_vec(&json!({"request": {"object": object}})).unwrap();
            assert_eq!(mutated_object(&payload, &stamp), Err(error.to_owned()));
        }
    }
}
