//! `parentKinds`: the kinds of controller whose children inherit their owner marks
//! ([`crate::derivation`]), and what Kubewarden must grant the policy to read them.

use serde::Deserialize;

use crate::dns::{is_dns_label, is_dns_subdomain};

/// A kind of controller the policy follows: an object whose `ownerReferences` entry with
/// `controller: true` names an object of this kind inherits the marks it copies from it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ParentKind {
    /// The `apiVersion` the policy reads the controller at (`camel.apache.org/v1`): the one
    /// the policy's `contextAwareResources` grant, and policy-server's service account reads.
    pub api_version: String,
    /// The kind (`Integration`).
    pub kind: String,
    /// Whether the kind is cluster-scoped; a namespaced controller is read in its child's
    /// namespace, as owner references are resolved.
    #[serde(default)]
    pub cluster_scoped: bool,
}

impl ParentKind {
    /// The API group of the kind: empty for the core group.
    pub fn group(&self) -> &str {
        group_of(&self.api_version)
    }

    /// Whether an owner reference (`apiVersion`, `kind`) names an object of this kind, at any
    /// version of its group.
    pub fn names(&self, api_version: &str, kind: &str) -> bool {
        self.kind == kind && self.group() == group_of(api_version)
    }
}

/// The group of an `apiVersion`: what is before the `/`, or empty for `v1`.
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// Checks an `apiVersion`: `<version>` or `<group>/<version>`.
pub(super) fn check_api_version(api_version: &str) -> Result<(), String> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    match is_dns_label(version) && (group.is_empty() || is_dns_subdomain(group)) {
        true => Ok(()),
        false => Err(format!(
            "{api_version:?} is not an API version such as v1 or camel.apache.org/v1"
        )),
    }
}

/// Checks the followed kinds: each a valid `apiVersion` and kind, each kind once.
pub(super) fn check_parent_kinds(kinds: &[ParentKind], problems: &mut Vec<String>) {
    for (index, parent) in kinds.iter().enumerate() {
        let field = format!("parentKinds[{index}]");
        if let Err(why) = check_api_version(&parent.api_version) {
            problems.push(format!("{field}.apiVersion: {why}"));
        }
        if let Err(why) = super::check::check_kind(&parent.kind) {
            problems.push(format!("{field}.kind: {:?} {why}", parent.kind));
        }
        let again = kinds[..index]
            .iter()
            .any(|earlier| earlier.names(&parent.api_version, &parent.kind));
        if again {
            problems.push(format!(
                "{field}: {} of group {:?} is listed already; list each kind once",
                parent.kind,
                parent.group()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(api_version: &str, kind: &str) -> ParentKind {
        ParentKind {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            cluster_scoped: false,
        }
    }

    #[test]
    fn an_owner_reference_names_a_kind_by_group_and_kind() {
        let integration = kind("camel.apache.org/v1", "Integration");
        let ingress = kind("networking.k8s.io/v1", "Ingress");
        #[rustfmt::skip]
        let rows = [
            (&integration, "camel.apache.org/v1",      "Integration", true),
            (&integration, "camel.apache.org/v1alpha1", "Integration", true),
            (&integration, "camel.apache.org/v1",      "Pipe",        false),
            (&integration, "other.io/v1",              "Integration", false),
            (&ingress,     "networking.k8s.io/v1",     "Ingress",     true),
            (&ingress,     "extensions/v1beta1",       "Ingress",     false),
            (&ingress,     "v1",                       "Ingress",     false),
        ];
        for (parent, api_version, name, expected) in rows {
            assert_eq!(
                parent.names(api_version, name),
                expected,
                "{parent:?} {api_version} {name}"
            );
        }
        assert_eq!(kind("v1", "Service").group(), "");
    }

    #[test]
    fn followed_kinds_are_checked() {
        let check = |kinds: &[ParentKind]| {
            let mut problems = Vec::new();
            check_parent_kinds(kinds, &mut problems);
            problems
        };
        assert!(check(&[kind("v1", "Service"), kind("camel.apache.org/v1", "Pipe")]).is_empty());
        assert_eq!(
            check(&[kind("Camel.apache.org/v1", "Pipe")]),
            [
                "parentKinds[0].apiVersion: \"Camel.apache.org/v1\" is not an API version such \
              as v1 or camel.apache.org/v1"
            ]
        );
        assert_eq!(check(&[kind("v1", "")]).len(), 1);
        assert_eq!(check(&[kind("", "Pipe")]).len(), 1);
        assert_eq!(
            check(&[
                kind("camel.apache.org/v1", "Pipe"),
                kind("camel.apache.org/v2", "Pipe")
            ]),
            [
                "parentKinds[1]: Pipe of group \"camel.apache.org\" is listed already; list each \
              kind once"
            ]
        );
    }
}
