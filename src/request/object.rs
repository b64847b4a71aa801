//! An object of a request: its `metadata` parsed (name, labels, finalizers, deletion;
//! annotations as raw values, of which only the guarded ones are decoded, on demand) and its
//! other fields kept as the raw JSON text they were sent as; its templates, once read from them
//! ([`crate::template`]), kept with it.

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, MapAccess};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::Text;

/// An object in a request: its metadata, parsed, and its other fields as they were sent.
#[derive(Debug, Default)]
pub struct Object<'a> {
    /// The object's metadata.
    pub metadata: Metadata<'a>,
    /// The other top-level fields (`apiVersion`, `spec`, `data`, `status`, …), unparsed.
    pub fields: Vec<(Text<'a>, &'a RawValue)>,
    /// The workload templates read from `spec`, once, on demand ([`crate::template`]).
    templates: OnceCell<Result<Vec<Template<'a>>, String>>,
    /// The decoded values of the annotations that owner marks name, once, on demand.
    marks: OnceCell<Result<Labels<'a>, String>>,
}

impl<'a> Object<'a> {
    /// The string values of the annotations `keys` the object has, decoded on the first call
    /// and kept: every call of one evaluation names the same keys, the settings' owner marks.
    /// Only these are decoded: an annotation such as `last-applied-configuration` can be as
    /// large as the object.
    pub fn mark_annotations<'k>(
        &self,
        keys: impl Iterator<Item = &'k str>,
    ) -> Result<&Labels<'a>, String> {
        let decoded = self.marks.get_or_init(|| {
            let mut values = Labels::new();
            for key in keys {
                if let Some((key, raw)) = self.metadata.annotations.get_key_value(key) {
                    let value: Text<'a> = serde_json::from_str(raw.get())
                        .map_err(|error| format!("metadata.annotations.{key}: {error}"))?;
                    values.insert(key.clone(), value);
                }
            }
            Ok(values)
        });
        decoded.as_ref().map_err(Clone::clone)
    }

    /// The object's templates, read by `read` on the first call and kept: every call reads the
    /// same templates, those of the object's kind ([`crate::template`]).
    pub fn templates(
        &self,
        read: impl FnOnce() -> Result<Vec<Template<'a>>, String>,
    ) -> Result<&[Template<'a>], String> {
        self.templates
            .get_or_init(read)
            .as_deref()
            .map_err(Clone::clone)
    }

    /// A top-level field, as it was sent.
    pub fn field(&self, name: &str) -> Option<&'a RawValue> {
        self.fields
            .iter()
            .find(|(key, _)| &**key == name)
            .map(|(_, value)| *value)
    }
}

/// The parts of `metadata` the policy reads.
#[derive(Debug, Default)]
pub struct Metadata<'a> {
    /// The object's name.
    pub name: Text<'a>,
    /// The object's labels.
    pub labels: Labels<'a>,
    /// The object's annotations, their values left unparsed: an annotation such as
    /// `kubectl.kubernetes.io/last-applied-configuration` can be as large as the object.
    pub annotations: Annotations<'a>,
    /// The finalizers that hold the object's deletion.
    pub finalizers: Vec<Text<'a>>,
    /// When the object's deletion began; set from then on.
    pub deletion_timestamp: Option<&'a RawValue>,
    /// The grace period of a deletion that has begun, in seconds.
    pub deletion_grace_period_seconds: Option<i64>,
    /// Every other metadata field, as it was sent.
    pub fields: Vec<(Text<'a>, &'a RawValue)>,
}

impl Metadata<'_> {
    /// The string value of an annotation, if the object has it.
    pub fn annotation(&self, key: &str) -> Result<Option<Text<'_>>, String> {
        let Some(raw) = self.annotations.get(key) else {
            return Ok(None);
        };
        serde_json::from_str(raw.get())
            .map(Some)
            .map_err(|error| format!("metadata.annotations.{key}: {error}"))
    }
}

/// One template of an object and the labels and annotations it carries.
#[derive(Debug)]
pub struct Template<'a> {
    /// Where it is, as messages name it: `spec.template`, `spec.volumeClaimTemplates[data]`, …
    pub place: String,
    /// The labels it gives what is made from it.
    pub labels: Labels<'a>,
    /// The annotations it gives what is made from it.
    pub annotations: Labels<'a>,
}

/// An object's labels.
pub type Labels<'a> = BTreeMap<Text<'a>, Text<'a>>;

/// An object's annotations, each value the raw JSON text it was sent as.
pub type Annotations<'a> = BTreeMap<Text<'a>, &'a RawValue>;

impl<'de: 'a, 'a> Deserialize<'de> for Object<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<'a>(PhantomData<Object<'a>>);

        impl<'de: 'a, 'a> serde::de::Visitor<'de> for ObjectVisitor<'a> {
            type Value = Object<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("struct Object")
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Object<'a>, M::Error> {
                let mut metadata = None;
                let mut fields = Vec::new();
                while let Some(key) = map.next_key::<Text<'a>>()? {
                    if &*key == "metadata" {
                        if metadata.is_some() {
                            return Err(de::Error::duplicate_field("metadata"));
                        }
                        let value: Option<Metadata> = map.next_value()?;
                        metadata = Some(value.unwrap_or_default());
                    } else {
                        fields.push((key, map.next_value()?));
                    }
                }
                Ok(Object {
                    metadata: metadata.unwrap_or_default(),
                    fields,
                    templates: OnceCell::new(),
                    marks: OnceCell::new(),
                })
            }
        }

        deserializer.deserialize_map(ObjectVisitor(PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Metadata<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MetadataVisitor<'a>(PhantomData<Metadata<'a>>);

        impl<'de: 'a, 'a> serde::de::Visitor<'de> for MetadataVisitor<'a> {
            type Value = Metadata<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("struct Metadata")
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Metadata<'a>, M::Error> {
                /// Reads a field into its slot, once; `null` reads as `Some(None)`.
                fn once<'de, M: MapAccess<'de>, T: Deserialize<'de>>(
                    map: &mut M,
                    slot: &mut Option<Option<T>>,
                    name: &'static str,
                ) -> Result<(), M::Error> {
                    if slot.is_some() {
                        return Err(de::Error::duplicate_field(name));
                    }
                    *slot = Some(map.next_value()?);
                    Ok(())
                }
                let (mut name, mut labels, mut annotations, mut finalizers) =
                    (None, None, None, None);
                let (mut deletion_timestamp, mut deletion_grace_period_seconds) = (None, None);
                let mut fields = Vec::new();
                while let Some(key) = map.next_key::<Text<'a>>()? {
                    match &*key {
                        "name" => once(&mut map, &mut name, "name")?,
                        "labels" => once(&mut map, &mut labels, "labels")?,
                        "annotations" => once(&mut map, &mut annotations, "annotations")?,
                        "finalizers" => once(&mut map, &mut finalizers, "finalizers")?,
                        "deletionTimestamp" => {
                            once(&mut map, &mut deletion_timestamp, "deletionTimestamp")?
                        }
                        "deletionGracePeriodSeconds" => once(
                            &mut map,
                            &mut deletion_grace_period_seconds,
                            "deletionGracePeriodSeconds",
                        )?,
                        _ => fields.push((key, map.next_value()?)),
                    }
                }
                Ok(Metadata {
                    name: name.flatten().unwrap_or_default(),
                    labels: labels.flatten().unwrap_or_default(),
                    annotations: annotations.flatten().unwrap_or_default(),
                    finalizers: finalizers.flatten().unwrap_or_default(),
                    deletion_timestamp: deletion_timestamp.flatten(),
                    deletion_grace_period_seconds: deletion_grace_period_seconds.flatten(),
                    fields,
                })
            }
        }

        deserializer.deserialize_map(MetadataVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_reads_deletion_and_finalizers_and_keeps_the_rest_raw() {
        let object: Object = serde_json::from_str(
            r#"{"apiVersion": "v1", "kind": "Pod", "spec": {"nodeName": "n1"},
                "metadata": {"name": "x", "uid": "u", "finalizers": ["a", "b"],
                             "deletionTimestamp": "2026-12-01T10:00:00Z",
                             "deletionGracePeriodSeconds": 30, "labels": null}}"#,
        )
        .unwrap();
        let metadata = &object.metadata;
        assert_eq!(&*metadata.name, "x");
        assert_eq!(metadata.finalizers.len(), 2);
        assert_eq!(metadata.deletion_grace_period_seconds, Some(30));
        assert!(metadata.deletion_timestamp.is_some() && metadata.labels.is_empty());
        assert_eq!(metadata.fields.len(), 1);
        assert_eq!(
            object.field("spec").map(RawValue::get),
            Some(r#"{"nodeName": "n1"}"#)
        );
        assert_eq!(object.fields.len(), 3);
        let alive: Object =
            serde_json::from_str(r#"{"metadata": {"deletionTimestamp": null}}"#).unwrap();
        assert!(alive.metadata.deletion_timestamp.is_none());
        for (json, error) in [
            (
                r#"{"metadata": {"labels": {}, "labels": {}}}"#,
                "duplicate field `labels`",
            ),
            (
                r#"{"metadata": {}, "metadata": {}}"#,
                "duplicate field `metadata`",
            ),
            (
                r#"{"metadata": {"finalizers": "a"}}"#,
                "invalid type: string \"a\", expected a sequence",
            ),
        ] {
            let got = serde_json::from_str::<Object>(json)
                .unwrap_err()
                .to_string();
            assert!(got.starts_with(error), "{json}: {got}");
        }
    }
}
