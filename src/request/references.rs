//! An object's controller and `uid`, read from its metadata's raw fields only when a rule asks
//! ([`crate::derivation`]): most requests never need them. Only the controller's entry of
//! `ownerReferences` is parsed; the others are stepped over ([`crate::lookup`]).

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Metadata, Text};
use crate::lookup;

/// The entry of `metadata.ownerReferences` with `controller: true`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerReference<'a> {
    /// The owner's `apiVersion`.
    pub api_version: Text<'a>,
    /// The owner's kind.
    pub kind: Text<'a>,
    /// The owner's name, in the object's namespace unless the owner is cluster-scoped.
    pub name: Text<'a>,
    /// The owner's uid: which object of that name.
    pub uid: Text<'a>,
}

impl<'a> Metadata<'a> {
    /// The object's controller: its owner reference with `controller: true`, of which there is
    /// at most one (`ValidateOwnerReferences`, k8s.io/apimachinery
    /// `pkg/api/validation/objectmeta.go`).
    pub fn controller(&self) -> Result<Option<OwnerReference<'a>>, String> {
        let Some(raw) = self.raw("ownerReferences") else {
            return Ok(None);
        };
        let references = lookup::items(raw.get())
            .ok_or("metadata.ownerReferences: must be a list of owner references")?;
        for (index, text) in references.enumerate() {
            let field = |key: &str| -> Result<Option<&'a str>, String> {
                lookup::field(text, key)
                    .ok_or_else(|| format!("metadata.ownerReferences[{index}]: must be an object"))
            };
            if !field("controller")?.is_some_and(|value| value.starts_with("true")) {
                continue;
            }
            let string = |key: &str| -> Result<Text<'a>, String> {
                let value = field(key)?.ok_or_else(|| {
                    format!("metadata.ownerReferences[{index}]: missing field `{key}`")
                })?;
                Text::deserialize(&mut serde_json::Deserializer::from_str(value))
                    .map_err(|error| format!("metadata.ownerReferences[{index}].{key}: {error}"))
            };
            return Ok(Some(OwnerReference {
                api_version: string("apiVersion")?,
                kind: string("kind")?,
                name: string("name")?,
                uid: string("uid")?,
            }));
        }
        Ok(None)
    }

    /// The text of `ownerReferences`, as sent: equal on two sides of an update that leaves
    /// them as they are (the API server writes both with one encoder).
    pub fn owner_references_text(&self) -> Option<&'a str> {
        self.raw("ownerReferences").map(RawValue::get)
    }

    /// The object's uid; empty on a CREATE before the API server gives it one.
    pub fn uid(&self) -> Result<Text<'a>, String> {
        match self.raw("uid") {
            Some(raw) => Text::deserialize(&mut serde_json::Deserializer::from_str(raw.get()))
                .map_err(|error| format!("metadata.uid: {error}")),
            None => Ok(Text::default()),
        }
    }

    /// A metadata field the policy keeps unparsed, as it was sent.
    fn raw(&self, name: &str) -> Option<&'a RawValue> {
        self.fields
            .iter()
            .find(|(key, _)| &**key == name)
            .map(|(_, raw)| *raw)
    }
}

#[cfg(test)]
mod tests {
    use crate::request::Object;

    fn object(metadata: &str) -> Object<'_> {
        serde_json::from_str(metadata).unwrap()
    }

    #[test]
    fn the_controller_is_the_reference_with_controller_true() {
        let json = r#"{"metadata": {"uid": "u-1", "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "1"},
            {"apiVersion": "camel.apache.org/v1", "kind": "Integration", "name": "app",
             "uid": "2", "controller": true, "blockOwnerDeletion": true}]}}"#;
        let object = object(json);
        let metadata = &object.metadata;
        let controller = metadata.controller().unwrap().unwrap();
        assert_eq!(
            (
                &*controller.api_version,
                &*controller.kind,
                &*controller.name,
                &*controller.uid
            ),
            ("camel.apache.org/v1", "Integration", "app", "2")
        );
        assert_eq!(&*metadata.uid().unwrap(), "u-1");
        assert!(metadata.owner_references_text().unwrap().starts_with("[\n"));
    }

    #[test]
    fn no_controller_without_controller_true() {
        #[rustfmt::skip]
        let rows = [
            r#"{"metadata": {}}"#,
            r#"{"metadata": {"ownerReferences": null}}"#,
            r#"{"metadata": {"ownerReferences": []}}"#,
            r#"{"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "a", "uid": "1", "controller": false}]}}"#,
            r#"{"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "a", "uid": "1", "controller": null}]}}"#,
        ];
        for json in rows {
            assert_eq!(object(json).metadata.controller(), Ok(None), "{json}");
        }
    }

    #[test]
    fn malformed_references_name_their_field() {
        #[rustfmt::skip]
        let rows = [
            (r#"{"ownerReferences": {}}"#, "metadata.ownerReferences: must be a list of owner references"),
            (r#"{"ownerReferences": [3]}"#, "metadata.ownerReferences[0]: must be an object"),
            (r#"{"ownerReferences": [{"controller": true, "kind": "Pod"}]}"#, "metadata.ownerReferences[0]: missing field `apiVersion`"),
            (r#"{"ownerReferences": [{"controller": true, "apiVersion": 1}]}"#, "metadata.ownerReferences[0].apiVersion: invalid type: integer"),
        ];
        for (metadata, error) in rows {
            let json = format!(r#"{{"metadata": {metadata}}}"#);
            let object = object(&json);
            let found = object.metadata.controller().unwrap_err();
            assert!(found.starts_with(error), "{metadata}: {found}");
        }
        let object = object(r#"{"metadata": {"uid": 3}}"#);
        assert!(
            object
                .metadata
                .uid()
                .unwrap_err()
                .starts_with("metadata.uid: invalid type")
        );
    }
}
