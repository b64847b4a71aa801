//! Policy settings: which labels and annotations name an object's owner, how to read them, who
//! acts for which owner, and who is exempt.
//!
//! Settings are camelCase like Kubernetes fields and strict: an unknown field is an error, so a
//! typo such as `ownerLabel` is reported instead of silently falling back to a default.

use serde::Deserialize;

mod check;
mod marks;
mod parents;
pub mod writers;

pub use parents::{ParentKind, group_of};
pub use writers::ClusterWriter;

use check::{check_identity, check_label_key, check_names, check_objects, check_trusted_writer};
use marks::check_owner_mark;

use crate::control_plane::TrustedWriter;
use crate::error_path;
use crate::identity::Identity;
use crate::owner::{OwnerMark, Place};

/// The owner label of the default settings.
pub const DEFAULT_OWNER_LABEL: &str = "appID";

/// The annotation of the default settings by which an owner offers an object to another.
pub const DEFAULT_OFFER_ANNOTATION: &str = "single-owner-policy.io/offer";

/// Settings renamed in 0.2.0, each with what to write instead.
const RENAMED: [(&str, &str); 2] = [
    (
        "ownerLabels",
        "ownerLabels was renamed to ownerMarks in 0.2.0; write each entry's `key: K` as \
         `label: K` (kindKey and the kinds stay), or `annotation: K` for an annotation",
    ),
    (
        "transferAnnotation",
        "transferAnnotation was renamed to offerAnnotation in 0.2.0; offers now read \
         `<mark>: <from> -> <to>`",
    ),
];

/// The whole settings document of the policy.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// The owner marks to guard: labels and annotations in which tools name an owner.
    #[serde(default = "default_owner_marks")]
    pub owner_marks: Vec<OwnerMark>,
    /// Whether an owner mark may be added to an existing object that has none.
    #[serde(default)]
    pub adoption: Permission,
    /// Whether an owner mark may be removed from an object.
    #[serde(default)]
    pub orphaning: Permission,
    /// Requesters whose requests are accepted even where a rule would deny them.
    #[serde(default)]
    pub exemptions: Exemptions,
    /// Who acts for which owners; empty means the labels alone are guarded.
    #[serde(default)]
    pub identities: Vec<Identity>,
    /// Who may UPDATE or DELETE an owned object.
    #[serde(default)]
    pub writes: Writes,
    /// Whether to stamp the owner mark on a CREATE by a requester acting for one owner (the
    /// policy is then deployed mutating, and also removes the offers that handoffs consume).
    #[serde(default)]
    pub stamp: bool,
    /// Whether this policy only stamps and removes consumed offers, and denies nothing: the
    /// mutating twin of a validating policy with the same marks, which judges the final object
    /// after every mutation (`make manifest` writes both when `stamp: true`).
    #[serde(default)]
    pub stamp_only: bool,
    /// The annotation by which an owner offers an object to another owner.
    #[serde(default = "default_offer_annotation")]
    pub offer_annotation: String,
    /// Writers trusted beside Kubernetes' own control plane, which is always trusted
    /// ([`crate::control_plane`]).
    #[serde(default)]
    pub trusted_writers: Vec<TrustedWriter>,
    /// The kinds of controller whose children inherit the marks they copy from it
    /// ([`crate::derivation`]); read through Kubewarden's context-aware lookups.
    #[serde(default)]
    pub parent_kinds: Vec<ParentKind>,
    /// The cluster's writers enabled by name, from the catalogue ([`writers::WRITERS`]): each
    /// adds its identities and the kinds it derives from ([`Settings::with_writers`]).
    #[serde(default)]
    pub cluster_writers: Vec<ClusterWriter>,
}

/// Allow or deny one kind of owner transition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Permission {
    /// The transition is allowed.
    #[default]
    Allow,
    /// The transition is denied.
    Deny,
}

/// Who may UPDATE or DELETE an object that has an owner.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Writes {
    /// Anyone the rest of the rules allow: only the owner marks are guarded.
    #[default]
    Any,
    /// Only a requester acting for the object's owner.
    Owner,
}

/// Users and groups whose requests bypass the rules (with a warning and an audit annotation).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exemptions {
    /// Exempt user names, as in `request.userInfo.username`.
    #[serde(default)]
    pub users: Vec<String>,
    /// Exempt groups, as in `request.userInfo.groups`.
    #[serde(default)]
    pub groups: Vec<String>,
}

impl<'de> Deserialize<'de> for Permission {
    /// Reads `Allow` or `Deny`.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        choice(
            deserializer,
            &["Allow", "Deny"],
            &[Permission::Allow, Permission::Deny],
        )
    }
}

impl<'de> Deserialize<'de> for Writes {
    /// Reads `Any` or `Owner`.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        choice(
            deserializer,
            &["Any", "Owner"],
            &[Writes::Any, Writes::Owner],
        )
    }
}

/// Reads one of a few names; any other value, of any type, is named in the error.
fn choice<'de, D, T>(
    deserializer: D,
    names: &'static [&'static str],
    values: &[T],
) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Copy,
{
    let name = String::deserialize(deserializer)?;
    names
        .iter()
        .zip(values)
        .find(|(known, _)| **known == name)
        .map(|(_, value)| *value)
        .ok_or_else(|| serde::de::Error::unknown_variant(&name, names))
}

fn default_offer_annotation() -> String {
    DEFAULT_OFFER_ANNOTATION.to_owned()
}

fn default_owner_marks() -> Vec<OwnerMark> {
    vec![OwnerMark::label(
        DEFAULT_OWNER_LABEL,
        &["ClusterExtension"],
        &["Extension"],
    )]
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            owner_marks: default_owner_marks(),
            adoption: Permission::default(),
            orphaning: Permission::default(),
            exemptions: Exemptions::default(),
            identities: Vec::new(),
            writes: Writes::default(),
            stamp: false,
            stamp_only: false,
            offer_annotation: default_offer_annotation(),
            trusted_writers: Vec::new(),
            parent_kinds: Vec::new(),
            cluster_writers: Vec::new(),
        }
    }
}

impl Settings {
    /// Whether the policy judges writes of owned objects — UPDATEs that keep an owner, and
    /// DELETEs — under `writes: Owner` with identities to act for owners.
    pub fn judges_writes(&self) -> bool {
        self.writes == Writes::Owner && !self.identities.is_empty()
    }

    /// Whether the policy judges repoints of an owned object at a followed controller under
    /// any `writes` (`crate::derivation::repoint_rule`): with `parentKinds`.
    pub fn follows_repoints(&self) -> bool {
        !self.parent_kinds.is_empty()
    }

    /// The operations the policy judges, as admission requests name them: CREATE and UPDATE,
    /// and DELETE when it judges writes ([`Settings::judges_writes`]).
    pub fn judged_operations(&self) -> &'static [&'static str] {
        match self.judges_writes() {
            true => &["CREATE", "UPDATE", "DELETE"],
            false => &["CREATE", "UPDATE"],
        }
    }

    /// Whether the policy may stamp an owner mark on a CREATE: under `stamp: true`, with
    /// identities by which a requester acts for one owner.
    pub fn stamps(&self) -> bool {
        self.stamp && !self.identities.is_empty()
    }

    /// Whether `key` is one the settings guard: a mark's key or companion, or the offer
    /// annotation. No grant changes one ([`crate::grant`]).
    pub fn guards(&self, key: &str) -> bool {
        *key == *self.offer_annotation || self.guarded_keys().any(|(_, guarded)| guarded == key)
    }

    /// The keys the policy reads owners from, with where each is kept: each mark's key and its
    /// companion, in the order of `ownerMarks`.
    pub fn guarded_keys(&self) -> impl Iterator<Item = (Place, &str)> {
        self.owner_marks
            .iter()
            .flat_map(|mark| mark.keys().map(move |(_, key)| (mark.place, key)))
    }

    /// Parses a settings document; `null` means the defaults. Errors name the offending field.
    pub fn from_json(json: &[u8]) -> Result<Settings, String> {
        // The document is looked at first for what the types cannot say: renamed settings,
        // and arrays where objects belong (serde reads a struct from an array of its fields).
        let text = error_path::utf8(json)?;
        let document = serde_json::from_str(text).map_err(|error| error.to_string())?;
        check_objects(&document)?;
        let settings: Option<Settings> =
            serde_json::from_str(text).map_err(|error| error_path::explain(json, &error))?;
        Ok(settings.unwrap_or_default().with_writers())
    }

    /// Reads settings where a payload holds them: `null` or missing means the defaults, and
    /// the cluster writers they enable are added ([`Settings::with_writers`]).
    pub fn in_payload<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Settings, D::Error> {
        let settings: Option<Settings> = Deserialize::deserialize(deserializer)?;
        Ok(settings.unwrap_or_default().with_writers())
    }

    /// Checks what the types cannot: label key syntax, kind names, duplicates and contradictions.
    /// Every problem found is reported, each naming its field.
    pub fn validate(&self) -> Result<(), String> {
        let mut problems = Vec::new();
        if self.owner_marks.is_empty() {
            problems.push("ownerMarks: list at least one owner mark".to_owned());
        }
        // Offers and `sameOwnerAs` name a mark by its key: a key is guarded once, as a label
        // or as an annotation.
        let mut keys_seen: Vec<&str> = Vec::new();
        for (index, mark) in self.owner_marks.iter().enumerate() {
            let field = format!("ownerMarks[{index}]");
            check_owner_mark(mark, &field, &mut problems);
            let place = mark.place.as_str();
            for (name, key) in mark.keys() {
                if keys_seen.contains(&key) {
                    problems.push(format!(
                        "{field}.{name}: {place} {key:?} is already guarded by another mark; \
                         each key may appear once, as a label or an annotation"
                    ));
                }
                keys_seen.push(key);
            }
            for (at, other) in mark.same_owner_as.iter().enumerate() {
                let names_a_mark = self
                    .owner_marks
                    .iter()
                    .any(|candidate| candidate.key == *other && candidate.key != mark.key);
                if !names_a_mark {
                    problems.push(format!(
                        "{field}.sameOwnerAs[{at}]: {other:?} is not the key of another owner mark"
                    ));
                }
            }
        }
        if keys_seen.contains(&self.offer_annotation.as_str()) {
            problems.push(format!(
                "offerAnnotation: {:?} is an owner mark; the offer needs an annotation of its own",
                self.offer_annotation
            ));
        }
        check_names("exemptions.users", &self.exemptions.users, &mut problems);
        check_names("exemptions.groups", &self.exemptions.groups, &mut problems);
        if let Err(why) = check_label_key(&self.offer_annotation) {
            problems.push(format!(
                "offerAnnotation: {:?} is not a valid annotation key: {why}",
                self.offer_annotation
            ));
        }
        for (index, identity) in self.identities.iter().enumerate() {
            check_identity(
                identity,
                &format!("identities[{index}]"),
                self,
                &mut problems,
            );
        }
        for (index, writer) in self.trusted_writers.iter().enumerate() {
            check_trusted_writer(writer, &format!("trustedWriters[{index}]"), &mut problems);
        }
        parents::check_parent_kinds(&self.parent_kinds, &mut problems);
        writers::check(&self.cluster_writers, &mut problems);
        if self.identities.is_empty() {
            if self.writes == Writes::Owner {
                problems.push(
                    "writes: Owner needs identities; without them nobody acts for an owner and \
                     no owned object could be changed"
                        .to_owned(),
                );
            }
            if self.stamp {
                problems.push(
                    "stamp: true needs identities; the owner to stamp is the one the requester \
                     acts for"
                        .to_owned(),
                );
            }
        }
        if self.stamp_only && !self.stamp {
            problems.push(
                "stampOnly: true needs stamp: true; a policy that only stamps must stamp"
                    .to_owned(),
            );
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check::may_be_service_account;
    use super::*;
    use crate::request::Operation;

    fn parse(json: &str) -> Result<Settings, String> {
        Settings::from_json(json.as_bytes()).and_then(|settings| {
            settings.validate()?;
            Ok(settings)
        })
    }

    #[test]
    fn empty_settings_mean_the_default_design() {
        let settings = parse("{}").unwrap();
        assert_eq!(settings, Settings::default());
        assert_eq!(settings.owner_marks[0].key, "appID");
        assert_eq!(settings.owner_marks[0].cluster_kinds, ["ClusterExtension"]);
        assert_eq!(settings.owner_marks[0].namespaced_kinds, ["Extension"]);
        assert_eq!(settings.adoption, Permission::Allow);
        assert_eq!(settings.orphaning, Permission::Allow);
        assert_eq!(settings.offer_annotation, "single-owner-policy.io/offer");
        assert_eq!(parse("null").unwrap(), Settings::default());
    }

    #[test]
    fn marks_with_kinds_in_the_value_a_kind_key_or_an_opaque_id_are_accepted() {
        let settings = parse(
            r#"{"ownerMarks": [
                {"label": "appID", "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]},
                {"label": "olm.operatorframework.io/owner-name", "kindKey": "olm.operatorframework.io/owner-kind",
                 "clusterKinds": ["ClusterExtension"]},
                {"label": "camel.apache.org/operator.id"}
            ], "adoption": "Deny", "orphaning": "Deny",
               "exemptions": {"users": ["admin"], "groups": ["system:masters"]}}"#,
        )
        .unwrap();
        assert_eq!(settings.owner_marks.len(), 3);
        assert!(!settings.owner_marks[2].has_kinds());
        assert_eq!(settings.adoption, Permission::Deny);
    }

    #[test]
    fn identities_accept_exact_owners_patterns_and_templates() {
        let settings = parse(
            r#"{"identities": [
                {"owners": ["ClusterExtension.cert-manager"], "users": ["system:serviceaccount:cert-manager:installer"]},
                {"owners": ["ClusterExtension.*"], "users": ["system:serviceaccount:olmv1-system:*"]},
                {"owners": ["Extension.${namespace}.*", "ClusterExtension.${name}"], "groups": ["installers"]},
                {"owners": ["${namespace}/*", "*/${name}", "Extension.${namespace}.${name}"], "groups": ["reconcilers"]}
            ], "writes": "Owner", "stamp": true}"#,
        )
        .unwrap();
        assert_eq!(settings.identities.len(), 4);
        for user in [
            "system:serviceaccount:a:b",
            "system:serviceaccount:*:installer",
            "*",
            "system:*",
        ] {
            assert!(may_be_service_account(user), "{user}");
        }
        for user in ["alice", "system:admin", "system:serviceaccounts", "x*"] {
            assert!(!may_be_service_account(user), "{user}");
        }
        assert_eq!(settings.writes, Writes::Owner);
        assert!(settings.stamp);
    }

    #[test]
    fn each_settings_error_names_its_field() {
        let cases: &[(&str, &str)] = &[
            (
                r#"{"ownerLabel": []}"#,
                "unknown field `ownerLabel`, expected one of `ownerMarks`",
            ),
            (
                r#"{"ownerMarks": []}"#,
                "ownerMarks: list at least one owner mark",
            ),
            (
                r#"{"ownerMarks": [{"label": "app ID"}]}"#,
                r#"ownerMarks[0].label: "app ID" is not a valid label key: name "app ID" must be alphanumerics"#,
            ),
            (
                r#"{"ownerMarks": [{"label": "Example.com/owner"}]}"#,
                r#"ownerMarks[0].label: "Example.com/owner" is not a valid label key: prefix "Example.com" must be a DNS subdomain"#,
            ),
            (
                r#"{"ownerMarks": [{"label": "a"}, {"label": "b", "kindKey": "a", "clusterKinds": ["X"]}]}"#,
                r#"ownerMarks[1].kindKey: label "a" is already guarded by another mark; each key may appear once"#,
            ),
            (
                r#"{"ownerMarks": [{"label": "a"}, {"label": "a"}]}"#,
                r#"ownerMarks[1].label: label "a" is already guarded by another mark"#,
            ),
            (
                r#"{"ownerMarks": [{"label": "a", "clusterKinds": ["X"], "namespacedKinds": ["X"]}]}"#,
                r#"ownerMarks[0]: kind "X" is listed in both clusterKinds and namespacedKinds"#,
            ),
            (
                r#"{"ownerMarks": [{"label": "a", "clusterKinds": ["Cluster.Extension"]}]}"#,
                r#"ownerMarks[0].clusterKinds[0]: "Cluster.Extension" is not a valid kind name"#,
            ),
            (
                r#"{"ownerMarks": [{"label": "a", "namespacedKinds": [""]}]}"#,
                r#"ownerMarks[0].namespacedKinds[0]: "" is not a valid kind name"#,
            ),
            (
                r#"{"ownerMarks": [{"label": "a", "kindKey": "b"}]}"#,
                "ownerMarks[0].kindKey: set without clusterKinds or namespacedKinds",
            ),
            (
                r#"{"ownerMarks": [{"label": "a", "kindKey": "a", "clusterKinds": ["X"]}]}"#,
                r#"ownerMarks[0]: the companion key must differ from "a"; it needs a label of its own"#,
            ),
            (
                r#"{"adoption": "allow"}"#,
                "adoption: unknown variant `allow`, expected `Allow` or `Deny`",
            ),
            (
                r#"{"orphaning": "Never"}"#,
                "orphaning: unknown variant `Never`, expected `Allow` or `Deny`",
            ),
            (
                r#"{"ownerMarks": [{"kindKey": "b"}]}"#,
                "ownerMarks[0]: set `label` or `annotation`: the key that names the owner",
            ),
            (
                r#"{"exemptions": {"user": ["a"]}}"#,
                "exemptions.user: unknown field `user`, expected `users` or `groups`",
            ),
            (
                r#"{"exemptions": {"users": [""]}}"#,
                "exemptions.users[0]: must not be empty",
            ),
            (
                r#"{"exemptions": {"groups": "admins"}}"#,
                "exemptions.groups: invalid type: string",
            ),
            (r#"{"writes": "Owner"}"#, "writes: Owner needs identities"),
            (
                r#"{"offerAnnotation": "offer to"}"#,
                r#"offerAnnotation: "offer to" is not a valid annotation key"#,
            ),
            (r#"{"stamp": true}"#, "stamp: true needs identities"),
            (
                r#"{"stampOnly": true}"#,
                "stampOnly: true needs stamp: true; a policy that only stamps must stamp",
            ),
            (
                r#"{"stamp": "yes"}"#,
                "stamp: invalid type: string \"yes\", expected a boolean",
            ),
            (
                r#"{"writes": "owner"}"#,
                "writes: unknown variant `owner`, expected `Any` or `Owner`",
            ),
            (
                r#"{"identities": [{"owner": ["ClusterExtension.a"], "users": ["a"]}]}"#,
                "identities[0].owner: unknown field `owner`, expected one of `owners`, `users`, `groups`, `access`",
            ),
            (
                r#"{"identities": [{"owners": [], "users": ["a"]}]}"#,
                "identities[0].owners: list at least one owner or owner pattern",
            ),
            (
                r#"{"identities": [{"owners": ["ClusterExtension.a"]}]}"#,
                "identities[0]: binds no users or groups; list who acts for these owners",
            ),
            (
                r#"{"identities": [{"owners": ["ClusterExtension.a"], "users": [""]}]}"#,
                "identities[0].users[0]: must not be empty",
            ),
            (
                r#"{"identities": [{"owners": ["Extension.${ns}.*"], "groups": ["g"]}]}"#,
                r#"identities[0].owners[0]: "Extension.${ns}.*" uses the unknown template ${ns}; the templates are ${namespace} and ${name}"#,
            ),
            (
                r#"{"identities": [{"owners": ["Extension.${namespace}*"], "users": ["system:serviceaccount:*:installer"]}]}"#,
                r#"identities[0].owners[0]: "Extension.${namespace}*" lets ${namespace} stand for a longer or another namespace: the * beside it, with only namespace characters between, matches them too; separate the two with a character a namespace cannot hold, or drop the *, as in "Extension.${namespace}.*""#,
            ),
            (
                r#"{"identities": [{"owners": ["Extension.*${namespace}.*"], "users": ["system:serviceaccount:*:installer"]}]}"#,
                r#"identities[0].owners[0]: "Extension.*${namespace}.*" lets ${namespace} stand for a longer or another namespace"#,
            ),
            (
                r#"{"identities": [{"owners": ["Extension.*-${namespace}.*"], "users": ["system:serviceaccount:*:installer"]}]}"#,
                r#"identities[0].owners[0]: "Extension.*-${namespace}.*" lets ${namespace} stand for"#,
            ),
            (
                r#"{"identities": [{"owners": ["ClusterExtension.${name}.*"], "users": ["system:serviceaccount:*:installer"]}]}"#,
                r#"identities[0].owners[0]: "ClusterExtension.${name}.*" lets ${name} stand for a longer or another name: the * beside it, with only name characters between, matches them too; separate the two with a character a name cannot hold, or drop the *, as in "ClusterExtension.${name}""#,
            ),
            (
                r#"{"identities": [{"owners": ["Cluster Extension/a"], "users": ["a"]}]}"#,
                r#"identities[0].owners[0]: "Cluster Extension/a" is not an owner pattern"#,
            ),
            (
                r#"{"identities": [{"owners": ["Extension.${namespace}.*"], "users": ["alice", "bob"]}]}"#,
                "identities[0]: every owner uses ${namespace} or ${name}, which only service accounts have, but no user can be one",
            ),
            (
                r#"{"identities": [{"owners": ["Operator.a"], "users": ["a"]}]}"#,
                r#"identities[0].owners[0]: "Operator.a" is no valid owner for any of the ownerMarks"#,
            ),
            ("[]", "settings must be a JSON object, not an array"),
            (
                r#"{"exemptions": []}"#,
                "exemptions: must be an object with users and groups, not an array",
            ),
            (
                r#"{"ownerMarks": [["appID"]]}"#,
                "ownerMarks[0]: must be an object like {label: appID}, not an array",
            ),
            (
                r#"{"ownerLabels": [{"key": "appID"}]}"#,
                "ownerLabels was renamed to ownerMarks in 0.2.0; write each entry's `key: K` as `label: K` (kindKey and the kinds stay), or `annotation: K` for an annotation",
            ),
            (
                r#"{"adoption": "Allow", "transferAnnotation": null}"#,
                "transferAnnotation was renamed to offerAnnotation in 0.2.0; offers now read `<mark>: <from> -> <to>`",
            ),
            (
                r#"{"ownerMarks": [{"label": "a"}, {"key": "appID"}]}"#,
                "ownerMarks[1].key: write `label: K` or `annotation: K` (key was the label of ownerLabels before 0.2.0)",
            ),
            (
                r#"{"ownerMarks": [{"label": "a", "annotation": "a"}]}"#,
                "ownerMarks[0]: set `label` or `annotation`, not both: a mark is kept in one place",
            ),
            (
                r#"{"ownerMarks": [{"annotation": "meta.helm.sh/release-name", "namespaceKey": "meta.helm.sh/release-namespace", "clusterKinds": ["X"]}]}"#,
                "ownerMarks[0].namespaceKey: owners named <namespace>/<name> have no kind; drop clusterKinds and namespacedKinds",
            ),
            (
                r#"{"ownerMarks": [{"annotation": "a", "kindKey": "b", "namespaceKey": "c", "clusterKinds": ["X"]}]}"#,
                "ownerMarks[0]: set kindKey or namespaceKey, not both; a mark has one companion key",
            ),
            (
                r#"{"ownerMarks": [{"label": "argocd.argoproj.io/tracking-id", "format": "ArgoCDTrackingID", "namespaceKey": "n"}]}"#,
                "ownerMarks[0].format: ArgoCDTrackingID is read from an annotation (argocd.argoproj.io/tracking-id); write `annotation:`; ownerMarks[0].format: a tracking id names its app alone; drop kindKey, namespaceKey and the kinds",
            ),
            (
                r#"{"ownerMarks": [{"annotation": "a", "format": "Tracking"}]}"#,
                "ownerMarks[0].format: unknown variant `Tracking`, expected `Plain` or `ArgoCDTrackingID`",
            ),
            (
                r#"{"ownerMarks": [{"annotation": "a", "sameOwnerAs": ["a", "b"]}]}"#,
                r#"ownerMarks[0].sameOwnerAs[0]: "a" is not the key of another owner mark; ownerMarks[0].sameOwnerAs[1]: "b" is not the key of another owner mark"#,
            ),
            (
                r#"{"ownerMarks": [{"label": "camel.apache.org/operator.id"}, {"annotation": "camel.apache.org/operator.id"}]}"#,
                r#"ownerMarks[1].annotation: annotation "camel.apache.org/operator.id" is already guarded by another mark; each key may appear once, as a label or an annotation"#,
            ),
            (
                r#"{"ownerMarks": [{"annotation": "x/offer"}], "offerAnnotation": "x/offer"}"#,
                r#"offerAnnotation: "x/offer" is an owner mark; the offer needs an annotation of its own"#,
            ),
            (
                r#"{"identities": [{"owners": ["operator-1"], "users": ["a"]}, [["operator-2"], ["b"]]]}"#,
                "identities[1]: must be an object like {owners: [...], users: [...]}, not an array",
            ),
            (
                r#"{"adoption": "Allow", "adoption": "Deny"}"#,
                "duplicate field `adoption`",
            ),
            (
                r#"{"adoption": 1}"#,
                "adoption: invalid type: integer `1`, expected a string",
            ),
            (
                r#"{"identities": [{"owners": ["ClusterExtension.a"], "users": ["a"], "access": "Read"}]}"#,
                "identities[0].access: unknown variant `Read`, expected one of `Own`, `Write`, `Derive`, `InjectCA`, `Changes`",
            ),
            (
                r#"{"identities": [{"owners": ["*"], "users": ["a"], "access": "Write", "changes": ["replicas"]}]}"#,
                "identities[0]: changes list all that its requesters may write for these owners, and access gives them more; leave access out with changes, or drop changes",
            ),
            (
                r#"{"identities": [{"owners": ["*"], "users": ["a"], "access": "Changes"}]}"#,
                "identities[0].changes: list what its requesters may change (access: Changes)",
            ),
            (
                r#"{"identities": [{"owners": ["*"], "users": ["a"], "changes": [{"annotations": []}]}]}"#,
                "identities[0].changes[0].annotations: list at least one",
            ),
            (
                r#"{"identities": [{"owners": ["*"], "users": ["a"], "changes": [{"podTemplateEnv": ["*"]}]}]}"#,
                r#"identities[0].changes[0].podTemplateEnv: "*" names no key; list the keys it changes"#,
            ),
            (
                r#"{"identities": [{"owners": ["*"], "users": ["a"], "changes": [{"labels": ["appID"]}, {"annotations": ["single-owner-policy.io/offer"]}]}]}"#,
                r#"identities[0].changes[0].labels: "appID" is an owner mark's key or the offer, which no grant changes"#,
            ),
            (
                r#"{"identities": [{"owners": ["*"], "users": ["a"], "changes": [{"fields": ["metadata", "stat*", "operation"]}]}]}"#,
                r#"identities[0].changes[0].fields: "metadata" is not a field of the object's body; metadata is granted by annotations, labels and finalizers; identities[0].changes[0].fields: "stat*": name each field whole"#,
            ),
            (
                r#"{"ownerMarks": [{"label": "appID", "clusterKinds": ["ClusterExtension"], "ownerLookup": {"apiVersion": "Widgets/v1", "kind": "Widget", "namespace": "argocd"}}]}"#,
                r#"ownerMarks[0].ownerLookup.apiVersion: "Widgets/v1" is not an API version such as v1 or camel.apache.org/v1; ownerMarks[0].ownerLookup.kind: "Widget" is none of the mark's owner kinds (ClusterExtension); ownerMarks[0].ownerLookup.namespace: "argocd": the owner's id names its namespace; drop it"#,
            ),
            (
                r#"{"ownerMarks": [{"label": "appID", "ownerLookup": {"helmRecords": "Secret"}}, {"annotation": "argocd.argoproj.io/tracking-id", "format": "ArgoCDTrackingID", "ownerLookup": {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application"}}]}"#,
                r#"ownerMarks[0].ownerLookup.helmRecords: a Helm release is <namespace>/<name>: set the mark's namespaceKey (meta.helm.sh/release-namespace); ownerMarks[1].ownerLookup.namespace: set the namespace of Argo CD's Applications (argocd), where an app whose id names no namespace lives"#,
            ),
            (
                r#"{"ownerMarks": [{"label": "a", "ownerLookup": {"kind": "K", "helmRecords": "Secret"}}, {"label": "b", "ownerLookup": {"kind": "K"}}, {"label": "c", "ownerLookup": {"namespace": "n"}}]}"#,
                r#"ownerMarks[0].ownerLookup: set apiVersion and kind, or helmRecords, not both; ownerMarks[1].ownerLookup: set apiVersion and kind together; ownerMarks[2].ownerLookup: set apiVersion and kind (the owner is an object of that kind) or helmRecords (a Helm release)"#,
            ),
            (
                r#"{"ownerMarks": [{"annotation": "a", "namespaceKey": "b", "ownerLookup": {"helmRecords": "Secrets"}}]}"#,
                "ownerMarks[0].ownerLookup.helmRecords: unknown variant `Secrets`, expected `Secret` or `ConfigMap`",
            ),
            (
                r#"{"clusterWriters": [{"name": "kedaa"}]}"#,
                r#"clusterWriters[0].name: the catalogue has no writer "kedaa"; it has argo-cd, argo-rollouts, calico, cert-manager, cluster-autoscaler,"#,
            ),
            (
                r#"{"clusterWriters": [{"name": "keda"}, {"name": "keda", "namespace": "Keda"}]}"#,
                r#"clusterWriters[1].name: "keda" is enabled twice"#,
            ),
            (
                r#"{"clusterWriters": [{"name": "keda", "namespace": "Keda"}]}"#,
                r#"clusterWriters[0].namespace: "Keda" is not a namespace name (a DNS-1123 label)"#,
            ),
            (
                r#"{"clusterWriters": [{"name": "keda", "role": "x"}]}"#,
                "clusterWriters[0].role: unknown field `role`, expected `name` or `namespace`",
            ),
            (
                r#"{"identities": [{"owners": ["*"], "users": ["a"], "changes": ["scale"]}]}"#,
                "identities[0].changes[0]: unknown variant `scale`, expected one of `replicas`, `caBundles`",
            ),
            (
                r#"{"trustedWriters": [{"users": ["system:serviceaccount:kube-system:*"], "resources": ["secrets"], "operations": ["UPDATE"]}]}"#,
                r#"trustedWriters[0].users[0]: "system:serviceaccount:kube-system:*" reaches any service account of kube-system, where add-ons run too; name each one (system:serviceaccount:kube-system:<name>, which counts only with the group system:serviceaccounts:kube-system)"#,
            ),
            (
                r#"{"trustedWriters": [{"users": ["system:*"], "resources": ["secrets"], "operations": ["UPDATE"]}]}"#,
                r#"trustedWriters[0].users[0]: "system:*" reaches any service account of kube-system"#,
            ),
            (
                r#"{"trustedWriters": [{"users": [], "resources": [], "operations": []}]}"#,
                "trustedWriters[0].users: list the user names of the writer; trustedWriters[0].resources: list the resources the writer writes; trustedWriters[0].operations: list CREATE, UPDATE or DELETE",
            ),
            (
                r#"{"trustedWriters": [{"users": ["k3s"], "resources": ["Secrets", "pods/"], "operations": ["CONNECT"]}]}"#,
                r#"trustedWriters[0].resources[0]: "Secrets" is not a resource; write resource[.group][/subresource], like secrets or apiservices.apiregistration.k8s.io, or * for all; trustedWriters[0].resources[1]: "pods/" is not a resource"#,
            ),
            (
                // A resource and a subresource are DNS labels.
                r#"{"trustedWriters": [{"users": ["k3s"], "resources": ["pods-", "pods/-status"], "operations": ["UPDATE"]}]}"#,
                r#"trustedWriters[0].resources[0]: "pods-" is not a resource; write resource[.group][/subresource], like secrets or apiservices.apiregistration.k8s.io, or * for all; trustedWriters[0].resources[1]: "pods/-status" is not a resource"#,
            ),
            (
                r#"{"trustedWriters": [{"users": [""], "resources": ["*"], "operations": ["DELETE"]}]}"#,
                "trustedWriters[0].users[0]: must not be empty",
            ),
            (
                r#"{"trustedWriters": [{"users": ["k3s"], "resources": ["*"], "operations": ["CONNECT"]}]}"#,
                "trustedWriters[0].operations: CONNECT writes no object; list CREATE, UPDATE or DELETE",
            ),
            (
                r#"{"trustedWriters": [{"users": ["k3s"], "resources": ["*"], "operations": ["PATCH"]}]}"#,
                "trustedWriters[0].operations[0]: unknown variant `PATCH`, expected one of `CREATE`, `UPDATE`, `DELETE`, `CONNECT`",
            ),
            (
                r#"{"trustedWriters": [[["k3s"], ["*"], ["DELETE"]]]}"#,
                "trustedWriters[0]: must be an object like {users: [...], resources: [...], operations: [...]}, not an array",
            ),
            ("5", "invalid type: integer `5`, expected struct Settings"),
            ("{", "EOF while parsing an object"),
            ("{} x", "trailing characters"),
        ];
        for (json, expected) in cases {
            let error = parse(json).expect_err(json);
            assert!(
                error.contains(expected),
                "settings {json}\n  gave: {error}\n  want: {expected}"
            );
        }
    }

    #[test]
    fn trusted_writers_name_users_resources_and_operations() {
        let settings = parse(
            r#"{"trustedWriters": [
                {"users": ["system:serviceaccount:openshift-service-ca:service-ca"],
                 "resources": ["secrets", "configmaps", "apiservices.apiregistration.k8s.io",
                               "mutatingwebhookconfigurations.admissionregistration.k8s.io"],
                 "operations": ["CREATE", "UPDATE"]},
                {"users": ["system:k3s-controller", "system:serviceaccount:kube-system:cloud-node-manager",
                           "system:serviceaccount:openshift-*:*"],
                 "resources": ["*", "nodes/status"], "operations": ["DELETE"]}
            ]}"#,
        )
        .unwrap();
        let strings = |list: &[&str]| list.iter().map(|&item| item.to_owned()).collect::<Vec<_>>();
        assert_eq!(
            settings.trusted_writers,
            [
                TrustedWriter {
                    users: strings(&["system:serviceaccount:openshift-service-ca:service-ca"]),
                    resources: strings(&[
                        "secrets",
                        "configmaps",
                        "apiservices.apiregistration.k8s.io",
                        "mutatingwebhookconfigurations.admissionregistration.k8s.io"
                    ]),
                    operations: vec![Operation::Create, Operation::Update],
                },
                TrustedWriter {
                    users: strings(&[
                        "system:k3s-controller",
                        "system:serviceaccount:kube-system:cloud-node-manager",
                        "system:serviceaccount:openshift-*:*"
                    ]),
                    resources: strings(&["*", "nodes/status"]),
                    operations: vec![Operation::Delete],
                },
            ]
        );
    }

    #[test]
    fn label_keys_follow_kubernetes_syntax() {
        for key in [
            "appID",
            "a",
            "olm.operatorframework.io/owner-name",
            "x_y.z-1",
            "a/b",
        ] {
            assert_eq!(check_label_key(key), Ok(()), "{key}");
        }
        let too_long = "a".repeat(64);
        for key in [
            "",
            "/a",
            "a/",
            "-a",
            "a-",
            "a b",
            "a/b/c",
            "A.io/x",
            too_long.as_str(),
        ] {
            assert!(check_label_key(key).is_err(), "{key}");
        }
    }
}
