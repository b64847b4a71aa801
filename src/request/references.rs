//! An object's `ownerReferences` and `uid`, read from its metadata's raw fields only when a rule
//! asks ([`crate::derivation`]): most requests never need them.

use serde::Deserialize;

use super::{Metadata, Text};

/// One entry of `metadata.ownerReferences`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReference<'a> {
    /// The owner's `apiVersion`.
    #[serde(borrow)]
    pub api_version: Text<'a>,
    /// The owner's kind.
    #[serde(borrow)]
    pub kind: Text<'a>,
    /// The owner's name, in the object's namespace unless the owner is cluster-scoped.
    #[serde(borrow)]
    pub name: Text<'a>,
    /// The owner's uid: which object of that name.
    #[serde(borrow)]
    pub uid: Text<'a>,
    /// Whether the owner is the object's managing controller; at most one is
    /// (`ValidateOwnerReferences`, k8s.io/apimachinery `pkg/api/validation/objectmeta.go`).
    #[serde(default)]
    pub controller: Option<bool>,
    /// Whether the owner's deletion waits for the object's.
    #[serde(default)]
    pub block_owner_deletion: Option<bool>,
}

impl<'a> Metadata<'a> {
    /// The object's owner references, as sent; empty when it has none.
    pub fn owner_references(&self) -> Result<Vec<OwnerReference<'a>>, String> {
        match self.raw("ownerReferences") {
            Some(raw) => serde_json::from_str::<Option<_>>(raw.get())
                .map(Option::unwrap_or_default)
                .map_err(|error| format!("metadata.ownerReferences: {error}")),
            None => Ok(Vec::new()),
        }
    }

    /// The object's controller: its owner reference with `controller: true`.
    pub fn controller(&self) -> Result<Option<OwnerReference<'a>>, String> {
        let mut references = self.owner_references()?;
        Ok(references
            .iter()
            .position(|reference| reference.controller == Some(true))
            .map(|at| references.swap_remove(at)))
    }

    /// The object's uid; empty on a CREATE, before the API server gives it one.
    pub fn uid(&self) -> Result<Text<'a>, String> {
        match self.raw("uid") {
            Some(raw) => serde_json::from_str::<Option<Text<'a>>>(raw.get())
                .map(Option::unwrap_or_default)
                .map_err(|error| format!("metadata.uid: {error}")),
            None => Ok(Text::default()),
        }
    }

    /// A metadata field the policy keeps unparsed, as it was sent.
    fn raw(&self, name: &str) -> Option<&'a serde_json::value::RawValue> {
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
        assert_eq!(metadata.owner_references().unwrap().len(), 2);
        let controller = metadata.controller().unwrap().unwrap();
        assert_eq!(
            (&*controller.kind, &*controller.name, &*controller.uid),
            ("Integration", "app", "2")
        );
        assert_eq!(&*metadata.uid().unwrap(), "u-1");
    }

    #[test]
    fn no_controller_without_controller_true() {
        #[rustfmt::skip]
        let rows = [
            r#"{"metadata": {}}"#,
            r#"{"metadata": {"ownerReferences": null}}"#,
            r#"{"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "a", "uid": "1", "controller": false}]}}"#,
        ];
        for json in rows {
            assert_eq!(object(json).metadata.controller(), Ok(None), "{json}");
        }
    }

    #[test]
    fn malformed_references_name_their_field() {
        let object = object(r#"{"metadata": {"ownerReferences": [{"kind": "Pod"}], "uid": 3}}"#);
        let error = object.metadata.controller().unwrap_err();
        assert!(
            error.starts_with("metadata.ownerReferences: missing field `apiVersion`"),
            "{error}"
        );
        assert!(
            object
                .metadata
                .uid()
                .unwrap_err()
                .starts_with("metadata.uid: invalid type")
        );
    }
}
