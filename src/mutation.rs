//! Mutation: the new object with an owner mark stamped or a consumed offer removed, for a
//! mutating response.
//!
//! Only a mutating response needs the whole object, so only then is the payload read again,
//! into a JSON tree; every other request is judged on the lean view alone.

use serde::Deserialize;
use serde_json::{Map, Value};

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
