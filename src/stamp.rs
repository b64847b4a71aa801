//! Stamping: the new object, with the owner label(s) added, for a mutating response.
//!
//! Only a stamping CREATE needs the whole object, so only then is the payload read again, into a
//! JSON tree; every other request is judged on the lean view alone.

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

/// The request's object with `labels` added to `metadata.labels`.
pub fn stamped_object(payload: &[u8], labels: &[(String, String)]) -> Result<Value, String> {
    let Payload {
        request: Request { mut object },
    } = serde_json::from_slice(payload).map_err(|error| error.to_string())?;
    let metadata = object
        .as_object_mut()
        .ok_or("`object` is not a JSON object")?
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    let metadata = as_map(metadata).ok_or("`object.metadata` is not a JSON object")?;
    let existing = metadata
        .entry("labels")
        .or_insert_with(|| Value::Object(Map::new()));
    let existing = as_map(existing).ok_or("`object.metadata.labels` is not a JSON object")?;
    for (key, value) in labels {
        existing.insert(key.clone(), Value::String(value.clone()));
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
        let labels = [("appID".to_owned(), "ClusterExtension.a".to_owned())];
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
            assert_eq!(stamped_object(&payload, &labels), Ok(expected));
        }
    }

    #[test]
    fn objects_of_the_wrong_shape_are_refused() {
        let labels = [("appID".to_owned(), "a".to_owned())];
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
            assert_eq!(stamped_object(&payload, &labels), Err(error.to_owned()));
        }
    }
}
