//! Mutation: the new object with an owner mark stamped or a consumed offer removed, for a
//! mutating response.
//!
//! Only a mutating response needs the whole object, so only then is its text read again: its
//! members are copied as written, but for the metadata's maps the mutation changes. Every other
//! request is judged on the lean view alone.

use crate::facts::{Facts, Sides};
use crate::lookup;
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

/// The request's object in the payload's `text` with the mutation applied, as JSON text: its
/// members as written, but for the labels and annotations the mutation adds (or replaces) and
/// the one it removes.
pub fn mutated_object(text: &str, mutation: &Mutation) -> Result<String, String> {
    let object = lookup::field(text, "request")
        .flatten()
        .and_then(|request| lookup::field(request, "object"))
        .flatten()
        .map(lookup::value)
        .filter(|object| object.starts_with('{'))
        .ok_or("`object` is not a JSON object")?;
    let removed = (mutation.remove_annotation.iter()).map(|key| ("annotations", key, None));
    let added = [
        ("labels", &mutation.labels),
        ("annotations", &mutation.annotations),
    ]
    .into_iter()
    .flat_map(|(field, values)| (values.iter()).map(move |(key, value)| (field, key, Some(value))));
    let mut edits = removed.chain(added).peekable();
    if edits.peek().is_none() {
        return Ok(object.to_owned());
    }
    with_member(object, "`object`", "metadata", |metadata| {
        let mut metadata = metadata.unwrap_or("{}").to_owned();
        for (field, key, value) in edits {
            let what = format!("`object.metadata.{field}`");
            metadata = with_member(&metadata, "`object.metadata`", field, |map| {
                match (map, value) {
                    // Nothing to remove from.
                    (None, None) => Ok(None),
                    (map, value) => {
                        let value = value.map(|value| quoted(value)).transpose()?;
                        with_member(map.unwrap_or("{}"), &what, key, |_| Ok(value)).map(Some)
                    }
                }
            })?;
        }
        Ok(Some(metadata))
    })
}

/// The JSON object `object` with the value of `key` what `edit` makes of it (given the value,
/// if the key is there): replaced, dropped or added (`Some`, `None`); its other members as
/// written. A `null` is an empty object; anything else but an object is refused as `what`.
fn with_member(
    object: &str,
    what: &str,
    key: &str,
    edit: impl FnOnce(Option<&str>) -> Result<Option<String>, String>,
) -> Result<String, String> {
    let not_an_object = || format!("{what} is not a JSON object");
    let members = lookup::members(object).ok_or_else(not_an_object)?;
    let mut written = String::with_capacity(object.len() + 64);
    let mut edit = Some(edit);
    for (name, value) in members {
        let value = match lookup::is_key(name, key).then(|| edit.take()).flatten() {
            Some(edit) => match edit(Some(value))? {
                Some(value) => value,
                None => continue,
            },
            None => value.to_owned(),
        };
        written.extend([
            if written.is_empty() { "{" } else { "," },
            name,
            ":",
            &value,
        ]);
    }
    if let Some(edit) = edit
        && let Some(value) = edit(None)?
    {
        let key = quoted(key)?;
        written.extend([
            if written.is_empty() { "{" } else { "," },
            &key,
            ":",
            &value,
        ]);
    }
    match written.is_empty() {
        true => written.push_str("{}"),
        false => written.push('}'),
    }
    Ok(written)
}

/// `text` as a JSON string.
fn quoted(text: &str) -> Result<String, String> {
    serde_json::to_string(text).map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// The object `mutation` makes of `object`, read back.
    fn mutated(object: Value, mutation: &Mutation) -> Result<Value, String> {
        let payload = json!({"request": {"object": object}}).to_string();
        mutated_object(&payload, mutation).map(|text| serde_json::from_str(&text).unwrap())
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

    /// The object is copied as written but for the map the mutation changes: the API server's
    /// own text (its key order, its escapes) goes back into the patch policy-server computes.
    #[test]
    fn the_rest_of_the_object_is_kept_as_written() {
        let stamp = Mutation {
            labels: vec![("a\"b".to_owned(), "c".to_owned())],
            remove_annotation: Some("offer".to_owned()),
            ..Mutation::default()
        };
        let payload = r#"{"request": {"object": {"kind": "ConfigMap", "data": {"k": "\u00e9 1.50"},
            "metadata": {"annotations": {"o\u0066fer": "b", "n": "x"}, "name": "y"}}}}"#;
        assert_eq!(
            mutated_object(payload, &stamp).as_deref(),
            Ok(
                r#"{"kind":"ConfigMap","data":{"k": "\u00e9 1.50"},"metadata":{"annotations":{"n":"x"},"name":"y","labels":{"a\"b":"c"}}}"#
            )
        );
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
