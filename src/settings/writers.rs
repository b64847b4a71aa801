//! The cluster's writers: operators that write into other owners' objects, each with the
//! narrowest grants that fit what it writes, read from its source. Settings enable them by
//! name (`clusterWriters: [{name: keda}, {name: velero, namespace: backup}]`), and each entry
//! becomes the identities and the `parentKinds` it needs ([`Settings::with_writers`]).

use serde::Deserialize;

mod catalogue;

pub use catalogue::WRITERS;

use super::{ParentKind, Settings};
use crate::dns::is_dns_label;
use crate::grant::{self, Grant};
use crate::identity::{Access, Identity, SERVICE_ACCOUNT_PREFIX};

/// A writer the settings enable, by its catalogue name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterWriter {
    /// The catalogue's name for it ([`WRITERS`]).
    pub name: String,
    /// The namespace it runs in, where not the one its install guide uses (empty: that one).
    #[serde(default)]
    pub namespace: Option<String>,
}

/// One service account of a writer and what it may do for every owner.
pub struct Binding {
    /// The service account's name (`*` at the end: a prefix, for accounts named per install).
    pub account: &'static str,
    /// Its access ([`Access::Changes`] with `changes`, [`Access::Derive`], [`Access::Restore`]).
    pub access: Access,
    /// Its grants, as settings write them: a grant's name and the keys it lists.
    pub changes: &'static [(&'static str, &'static [&'static str])],
}

/// A writer of the catalogue.
pub struct Writer {
    /// Its name, as `clusterWriters` names it.
    pub name: &'static str,
    /// The namespace its install guide uses.
    pub namespace: &'static str,
    /// Its service accounts, each with what it may do.
    pub bindings: &'static [Binding],
    /// The kinds of controller it derives objects from (`apiVersion`, kind), followed as
    /// `parentKinds`.
    pub parents: &'static [(&'static str, &'static str)],
}

/// The catalogue's writer of this name.
pub fn writer(name: &str) -> Option<&'static Writer> {
    WRITERS.iter().find(|writer| writer.name == name)
}

/// The catalogue's name of the writer whose service account, in the namespace its install
/// guide uses, is `user`, when `enabled` does not enable it: what a denial of it says to
/// enable.
pub fn not_enabled(user: &str, enabled: &[ClusterWriter]) -> Option<&'static str> {
    let (namespace, account) = user.strip_prefix(SERVICE_ACCOUNT_PREFIX)?.split_once(':')?;
    let writer = WRITERS.iter().find(|writer| {
        writer.namespace == namespace
            && (writer.bindings.iter()).any(|binding| grant::matches(binding.account, account))
    })?;
    let on = enabled.iter().any(|enabled| enabled.name == writer.name);
    (!on).then_some(writer.name)
}

/// The names of the catalogue, as errors list them.
pub fn names() -> String {
    WRITERS.map(|writer| writer.name).join(", ")
}

impl Binding {
    /// The identity it becomes, for a writer that runs in `namespace`: for every owner.
    fn identity(&self, namespace: &str) -> Identity {
        let grant = |(name, keys): &(&str, &[&str])| {
            Grant::of(name, keys).unwrap_or_else(|| panic!("the catalogue names no grant {name}"))
        };
        Identity {
            owners: vec!["*".to_owned()],
            users: vec![format!(
                "{SERVICE_ACCOUNT_PREFIX}{namespace}:{}",
                self.account
            )],
            groups: Vec::new(),
            access: Some(self.access),
            changes: self.changes.iter().map(grant).collect(),
        }
    }
}

impl Settings {
    /// These settings with what their `clusterWriters` need: the kinds each writer derives
    /// from in `parentKinds`, and, where the settings ask who writes (they have identities of
    /// their own), its identities. Without identities nobody's requests are told apart, so a
    /// writer's copies need only be followed: binding it would make every other requester one
    /// that acts for no owner. A name the catalogue lacks adds nothing ([`Settings::validate`]
    /// refuses it).
    pub fn with_writers(mut self) -> Settings {
        let binds = !self.identities.is_empty();
        for enabled in &self.cluster_writers {
            let Some(writer) = writer(&enabled.name) else {
                continue;
            };
            let namespace = (enabled.namespace.as_deref())
                .filter(|namespace| !namespace.is_empty())
                .unwrap_or(writer.namespace);
            for binding in writer.bindings.iter().filter(|_| binds) {
                self.identities.push(binding.identity(namespace));
            }
            for &(api_version, kind) in writer.parents {
                let followed = (self.parent_kinds.iter())
                    .any(|parent| parent.api_version == api_version && parent.kind == kind);
                if !followed {
                    self.parent_kinds.push(ParentKind {
                        api_version: api_version.to_owned(),
                        kind: kind.to_owned(),
                        cluster_scoped: false,
                    });
                }
            }
        }
        self
    }
}

/// Checks the cluster writers: each a name of the catalogue, once, in a namespace that can be
/// one.
pub(super) fn check(writers: &[ClusterWriter], problems: &mut Vec<String>) {
    for (index, enabled) in writers.iter().enumerate() {
        let field = format!("clusterWriters[{index}]");
        if writer(&enabled.name).is_none() {
            problems.push(format!(
                "{field}.name: the catalogue has no writer {:?}; it has {}",
                enabled.name,
                names()
            ));
        }
        if writers[..index]
            .iter()
            .any(|other| other.name == enabled.name)
        {
            problems.push(format!("{field}.name: {:?} is enabled twice", enabled.name));
        }
        if let Some(namespace) = &enabled.namespace
            && !namespace.is_empty()
            && !is_dns_label(namespace)
        {
            problems.push(format!(
                "{field}.namespace: {namespace:?} is not a namespace name (a DNS-1123 label)"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each writer's row of docs/writers.md, up to its last column (what it writes, and where,
    /// which the docs say in words): its name, namespace, bindings and the kinds it derives
    /// from.
    fn rows() -> Vec<String> {
        let row = |writer: &Writer| {
            let bindings: Vec<String> = (writer.bindings.iter())
                .map(|binding| {
                    let what = match binding.access {
                        Access::Changes => (binding.changes.iter())
                            .map(|(name, keys)| match keys {
                                [] => format!("`{name}`"),
                                keys => format!("`{name}: [{}]`", keys.join(", ")),
                            })
                            .collect::<Vec<_>>()
                            .join(", "),
                        access => format!("`access: {access:?}`"),
                    };
                    format!("`{}`: {what}", binding.account)
                })
                .collect();
            let parents: Vec<String> = (writer.parents.iter())
                .map(|(api_version, kind)| format!("`{kind}` ({api_version})"))
                .collect();
            let parents = match parents.is_empty() {
                true => "—".to_owned(),
                false => parents.join(", "),
            };
            let bindings = match bindings.is_empty() {
                true => "nothing".to_owned(),
                false => bindings.join("; "),
            };
            format!(
                "| `{}` | `{}` | {bindings} | {parents} | ",
                writer.name, writer.namespace
            )
        };
        WRITERS.iter().map(row).collect()
    }

    #[test]
    fn the_docs_list_the_catalogue_as_it_is() {
        let docs = include_str!("../../docs/writers.md");
        let listed: Vec<&str> = (docs.lines())
            .filter(|line| line.starts_with("| `"))
            .collect();
        let rows = rows();
        assert_eq!(
            listed.len(),
            rows.len(),
            "docs/writers.md: one row per writer"
        );
        for (line, row) in listed.iter().zip(&rows) {
            assert!(
                line.starts_with(row),
                "docs/writers.md: want a row starting\n{row}\ngot\n{line}"
            );
        }
    }

    /// The settings form (and Artifact Hub's copy of it) lists the catalogue's names.
    #[test]
    fn the_settings_form_lists_the_catalogue() {
        let form = include_str!("../../questions-ui.yml");
        let listed = format!("(docs/writers.md): {}.", names());
        assert!(form.contains(&listed), "questions-ui.yml: want {listed}");
    }

    #[test]
    fn a_denial_names_the_writer_to_enable() {
        let keda = [ClusterWriter {
            name: "keda".to_owned(),
            namespace: None,
        }];
        #[rustfmt::skip]
        let rows: [(&str, &[ClusterWriter], Option<&str>); 5] = [
            ("system:serviceaccount:keda:keda-operator", &[], Some("keda")),
            ("system:serviceaccount:keda:keda-operator", &keda, None),
            ("system:serviceaccount:autoscaling:keda-operator", &[], None),
            ("system:serviceaccount:crossplane-system:provider-aws-s3-a1b2c3", &[], Some("crossplane")),
            ("keda-operator", &[], None),
        ];
        for (user, enabled, expected) in rows {
            assert_eq!(not_enabled(user, enabled), expected, "{user}");
        }
    }

    /// Every writer's identities are settings the policy accepts, and name grants that exist.
    #[test]
    fn every_writer_expands_to_valid_settings() {
        const OWNERS: &str = r#"{"owners": ["*"], "users": ["installer"]}"#;
        for writer in &WRITERS {
            let json = format!(
                r#"{{"writes": "Owner", "identities": [{OWNERS}],
                    "clusterWriters": [{{"name": "{}"}}]}}"#,
                writer.name
            );
            let settings = Settings::from_json(json.as_bytes()).unwrap();
            assert_eq!(settings.validate(), Ok(()), "{}", writer.name);
            assert_eq!(settings.identities.len(), 1 + writer.bindings.len());
        }
        let moved = format!(
            r#"{{"identities": [{OWNERS}],
                "clusterWriters": [{{"name": "velero", "namespace": "backup"}}]}}"#
        );
        let moved = Settings::from_json(moved.as_bytes()).unwrap();
        assert_eq!(
            moved.identities[1].users,
            ["system:serviceaccount:backup:velero"]
        );
    }

    /// Settings without identities tell no requester apart: a writer adds only the kinds it
    /// derives from, and `writes: Owner` still needs identities of the settings' own.
    #[test]
    fn without_identities_a_writer_is_only_followed() {
        let settings = Settings::from_json(br#"{"clusterWriters": [{"name": "keda"}]}"#).unwrap();
        assert_eq!(settings.identities, []);
        let followed: Vec<&str> = (settings.parent_kinds.iter())
            .map(|parent| parent.kind.as_str())
            .collect();
        assert_eq!(followed, ["ScaledObject", "ScaledJob"]);
        let refused = |json: &[u8]| Settings::from_json(json).unwrap().validate();
        assert_eq!(
            refused(br#"{"writes": "Owner", "clusterWriters": [{"name": "keda"}]}"#),
            refused(br#"{"writes": "Owner"}"#)
        );
    }
}
