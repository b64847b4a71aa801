//! Owner marks as the settings write them: a label or an annotation, its companion key, how its
//! value is read, and how messages name it.

use std::fmt;

use serde::Deserialize;

use super::Shape;
use super::lookup::OwnerLookup;

/// Where a mark is kept in an object's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// In `metadata.labels`.
    Label,
    /// In `metadata.annotations`.
    Annotation,
}

impl Place {
    /// `label` or `annotation`, as settings and messages write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Place::Label => "label",
            Place::Annotation => "annotation",
        }
    }
}

/// How a mark's value is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub enum Format {
    /// The value is the owner (with its kind, when kinds are configured).
    #[default]
    Plain,
    /// Argo CD's `<app>:<group>/<kind>:<namespace>/<name>`: the owner is the app.
    #[serde(rename = "ArgoCDTrackingID")]
    ArgoCdTrackingId,
}

/// One guarded owner mark, and how to read an owner out of it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "MarkFields")]
pub struct OwnerMark {
    /// Whether the mark is a label or an annotation.
    pub place: Place,
    /// The label or annotation whose value names the owner.
    pub key: String,
    /// A companion key that holds the owner's kind; without it the kind leads the value.
    pub kind_key: Option<String>,
    /// A companion key that holds the owner's namespace: the owner id is `<namespace>/<name>`.
    pub namespace_key: Option<String>,
    /// How the value is read.
    pub format: Format,
    /// Owner kinds that may own cluster-scoped objects and objects in any namespace.
    pub cluster_kinds: Vec<String>,
    /// Owner kinds confined to objects in their own namespace.
    pub namespaced_kinds: Vec<String>,
    /// The keys of other marks that name the same owner as this one, written by one tool for
    /// one owner (Flux helm-controller writes Helm's annotations and its own labels).
    pub same_owner_as: Vec<String>,
    /// Where its owners live, to tell whether one is gone ([`crate::leftover`]).
    pub owner_lookup: Option<OwnerLookup>,
}

/// A mark as the settings write it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MarkFields {
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    annotation: Option<String>,
    #[serde(default)]
    kind_key: Option<String>,
    #[serde(default)]
    namespace_key: Option<String>,
    #[serde(default)]
    format: Format,
    #[serde(default)]
    cluster_kinds: Vec<String>,
    #[serde(default)]
    namespaced_kinds: Vec<String>,
    #[serde(default)]
    same_owner_as: Vec<String>,
    #[serde(default)]
    owner_lookup: Option<OwnerLookup>,
}

impl TryFrom<MarkFields> for OwnerMark {
    type Error = &'static str;

    fn try_from(fields: MarkFields) -> Result<Self, Self::Error> {
        let (place, key) = match (fields.label, fields.annotation) {
            (Some(key), None) => (Place::Label, key),
            (None, Some(key)) => (Place::Annotation, key),
            (Some(_), Some(_)) => {
                return Err("set `label` or `annotation`, not both: a mark is kept in one place");
            }
            (None, None) => {
                return Err("set `label` or `annotation`: the key that names the owner");
            }
        };
        Ok(OwnerMark {
            place,
            key,
            kind_key: fields.kind_key,
            namespace_key: fields.namespace_key,
            format: fields.format,
            cluster_kinds: fields.cluster_kinds,
            namespaced_kinds: fields.namespaced_kinds,
            same_owner_as: fields.same_owner_as,
            owner_lookup: fields.owner_lookup,
        })
    }
}

impl OwnerMark {
    /// A label mark with the kind in its value, or opaque ids without kinds.
    pub fn label(key: &str, cluster_kinds: &[&str], namespaced_kinds: &[&str]) -> OwnerMark {
        let owned = |kinds: &[&str]| kinds.iter().map(|kind| (*kind).to_owned()).collect();
        OwnerMark {
            place: Place::Label,
            key: key.to_owned(),
            kind_key: None,
            namespace_key: None,
            format: Format::Plain,
            cluster_kinds: owned(cluster_kinds),
            namespaced_kinds: owned(namespaced_kinds),
            same_owner_as: Vec::new(),
            owner_lookup: None,
        }
    }

    /// Whether owner values carry a kind (and so obey the scope rules).
    pub fn has_kinds(&self) -> bool {
        !self.cluster_kinds.is_empty() || !self.namespaced_kinds.is_empty()
    }

    /// The shape the mark's values are read in.
    pub fn shape(&self) -> Shape {
        match (&self.kind_key, &self.namespace_key, self.format) {
            (_, _, Format::ArgoCdTrackingId) => Shape::Tracking,
            (Some(_), _, _) => Shape::KindPair,
            (None, Some(_), _) => Shape::NamespacePair,
            (None, None, _) => Shape::Single,
        }
    }

    /// The character every owner id of this mark holds, if one does: `/` between a pair's
    /// namespace and name, `.` after a kind; none in an opaque id or an Argo CD app.
    pub fn id_separator(&self) -> Option<char> {
        match self.shape() {
            Shape::NamespacePair => Some('/'),
            Shape::KindPair => Some('.'),
            Shape::Single if self.has_kinds() => Some('.'),
            Shape::Single | Shape::Tracking => None,
        }
    }

    /// The keys this mark guards, with the setting that names each.
    pub fn keys(&self) -> impl Iterator<Item = (&'static str, &str)> {
        std::iter::once((self.place.as_str(), self.key.as_str()))
            .chain(self.kind_key.as_deref().map(|key| ("kindKey", key)))
            .chain(
                self.namespace_key
                    .as_deref()
                    .map(|key| ("namespaceKey", key)),
            )
    }

    /// The companion key, if the mark is a pair.
    pub fn companion_key(&self) -> Option<&str> {
        self.kind_key.as_deref().or(self.namespace_key.as_deref())
    }

    /// The mark as messages name it: `label appID`, `annotation meta.helm.sh/release-name`.
    pub fn name(&self) -> MarkName<'_> {
        MarkName {
            place: self.place,
            key: &self.key,
        }
    }

    /// Whether this mark and `other` name the same owner (one of them says so in
    /// `sameOwnerAs`), so that an owner under one may also be set under the other.
    pub fn names_same_owner_as(&self, other: &OwnerMark) -> bool {
        self.same_owner_as.contains(&other.key) || other.same_owner_as.contains(&self.key)
    }
}

/// A label or an annotation, as messages name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkName<'a> {
    /// Label or annotation.
    pub place: Place,
    /// Its key.
    pub key: &'a str,
}

impl fmt::Display for MarkName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.place.as_str(), self.key)
    }
}
