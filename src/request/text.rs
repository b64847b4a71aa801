//! JSON strings borrowed from the payload, and the helpers that read optional fields.

use std::borrow::{Borrow, Cow};
use std::fmt;
use std::ops::Deref;

use serde::de;
use serde::{Deserialize, Deserializer};

/// A JSON string, borrowed from the payload when it holds no escapes and copied otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text<'a>(pub Cow<'a, str>);

impl Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text<'_> {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'a> From<&'a str> for Text<'a> {
    fn from(text: &'a str) -> Self {
        Text(Cow::Borrowed(text))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;

        impl<'de> serde::de::Visitor<'de> for TextVisitor {
            type Value = Text<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(text)))
            }

            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(text.to_owned())))
            }

            fn visit_string<E>(self, text: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(text)))
            }
        }

        deserializer.deserialize_str(TextVisitor)
    }
}

/// Whether a field is there and not `null`, whatever it holds.
pub(super) fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(Option::<de::IgnoredAny>::deserialize(deserializer)?.is_some())
}

/// Reads an optional field whose `null` means the same as its absence.
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use crate::request::AdmissionRequest;

    #[test]
    fn escaped_strings_are_read_too() {
        let request: AdmissionRequest = serde_json::from_str(
            r#"{"kind": {"kind": "ConfigMap"}, "operation": "CREATE",
                "object": {"metadata": {"labels": {"app\u0049D": "Cluster\u0045xtension.a"}}}}"#,
        )
        .unwrap();
        let labels = &request.object.unwrap().metadata.labels;
        assert_eq!(
            labels.get("appID").map(|v| &**v),
            Some("ClusterExtension.a")
        );
    }
}
