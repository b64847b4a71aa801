//! Requester identity: which owners the requester of a request acts for.
//!
//! An identity binds users and groups (patterns with `*`) to owner patterns. An owner pattern is
//! an owner id (`ClusterExtension.cert-manager`, `Extension.team-a.argocd`, `operator-1`), may
//! hold `*` wildcards, and may name the requesting service account's `${namespace}` and
//! `${name}`, so that one identity binds every install of a kind without listing each:
//!
//! ```yaml
//! - owners: ["Extension.${namespace}.*"]
//!   users: ["system:serviceaccount:*:installer"]
//! ```
//!
//! A templated pattern binds service accounts only; for any other requester it names no owner.

use std::fmt;

use serde::Deserialize;

use crate::request::UserInfo;

/// The template for the requesting service account's namespace.
pub const NAMESPACE_TEMPLATE: &str = "${namespace}";
/// The template for the requesting service account's name.
pub const NAME_TEMPLATE: &str = "${name}";
/// The templates an owner pattern may use.
pub const TEMPLATES: [&str; 2] = [NAMESPACE_TEMPLATE, NAME_TEMPLATE];

/// The user name prefix of Kubernetes service accounts.
pub const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// Requesters bound to the owners they act for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// Owner patterns: exact owners (`ClusterExtension.cert-manager`, `operator-1`), `*`
    /// wildcards, and `${namespace}` / `${name}` of the requesting service account.
    pub owners: Vec<String>,
    /// User name patterns (`*` wildcards), as in `request.userInfo.username`.
    #[serde(default)]
    pub users: Vec<String>,
    /// Group patterns (`*` wildcards), as in `request.userInfo.groups`.
    #[serde(default)]
    pub groups: Vec<String>,
}

/// The owners a requester acts for: owner patterns, templates expanded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Acting {
    owners: Vec<String>,
}

impl Acting {
    /// The owners `user` acts for under `identities`.
    pub fn of(user: &UserInfo<'_>, identities: &[Identity]) -> Acting {
        let account = service_account(&user.username);
        let mut owners: Vec<String> = identities
            .iter()
            .filter(|identity| binds(identity, user))
            .flat_map(|identity| &identity.owners)
            .filter_map(|pattern| expand(pattern, account))
            .collect();
        owners.sort_unstable();
        owners.dedup();
        Acting { owners }
    }

    /// Whether the requester acts for the owner with this id.
    pub fn acts_for(&self, owner: &str) -> bool {
        self.owners.iter().any(|pattern| matches(pattern, owner))
    }

    /// The one concrete owner the requester acts for, if it acts for exactly one and no pattern.
    pub fn single_owner(&self) -> Option<&str> {
        match self.owners.as_slice() {
            [owner] if !owner.contains('*') => Some(owner),
            _ => None,
        }
    }
}

impl fmt::Display for Acting {
    /// `none`, or the owner patterns, quoted and comma-separated.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.owners.is_empty() {
            return f.write_str("none");
        }
        for (index, owner) in self.owners.iter().enumerate() {
            let separator = if index == 0 { "" } else { ", " };
            write!(f, "{separator}{owner:?}")?;
        }
        Ok(())
    }
}

/// Whether an identity binds the requester, by user name or by one of its groups.
fn binds(identity: &Identity, user: &UserInfo<'_>) -> bool {
    identity
        .users
        .iter()
        .any(|pattern| matches(pattern, &user.username))
        || identity
            .groups
            .iter()
            .any(|pattern| user.groups.iter().any(|group| matches(pattern, group)))
}

/// The namespace and name of a service account user (`system:serviceaccount:<ns>:<name>`).
fn service_account(username: &str) -> Option<(&str, &str)> {
    username
        .strip_prefix(SERVICE_ACCOUNT_PREFIX)?
        .split_once(':')
        .filter(|(namespace, name)| !namespace.is_empty() && !name.is_empty())
}

/// An owner pattern with its templates filled from the service account; `None` when it has
/// templates and the requester is no service account.
fn expand(pattern: &str, account: Option<(&str, &str)>) -> Option<String> {
    if !pattern.contains("${") {
        return Some(pattern.to_owned());
    }
    let (namespace, name) = account?;
    Some(
        pattern
            .replace(NAMESPACE_TEMPLATE, namespace)
            .replace(NAME_TEMPLATE, name),
    )
}

/// Matches `text` against a pattern in which `*` stands for any run of characters.
pub fn matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let mut parts = parts.peekable();
    if parts.peek().is_none() {
        return rest.is_empty();
    }
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Text;

    fn user<'a>(username: &'a str, groups: &[&'a str]) -> UserInfo<'a> {
        UserInfo {
            username: Text::from(username),
            groups: groups.iter().map(|&group| Text::from(group)).collect(),
        }
    }

    fn identity(owners: &[&str], users: &[&str], groups: &[&str]) -> Identity {
        let strings = |list: &[&str]| list.iter().map(|&s| s.to_owned()).collect();
        Identity {
            owners: strings(owners),
            users: strings(users),
            groups: strings(groups),
        }
    }

    #[test]
    fn wildcard_patterns() {
        #[rustfmt::skip]
        let rows = [
            ("ClusterExtension.*", "ClusterExtension.cert-manager", true),
            ("ClusterExtension.*", "ClusterExtension.", true),
            ("ClusterExtension.*", "Extension.team-a.x", false),
            ("Extension.team-a.*", "Extension.team-a.argocd", true),
            ("Extension.team-a.*", "Extension.team-b.argocd", false),
            ("*", "anything", true),
            ("*", "", true),
            ("operator-1", "operator-1", true),
            ("operator-1", "operator-10", false),
            ("operator-*", "operator-10", true),
            ("system:serviceaccount:*:installer", "system:serviceaccount:team-a:installer", true),
            ("system:serviceaccount:*:installer", "system:serviceaccount:team-a:installer-2", false),
            ("*.a.*", "x.a.y", true),
            ("*.a.*", "x.b.y", false),
            ("a*a", "a", false),
            ("a*a", "aa", true),
        ];
        for (pattern, text, expected) in rows {
            assert_eq!(matches(pattern, text), expected, "{pattern} ~ {text}");
        }
    }

    #[test]
    fn requesters_act_for_the_owners_of_the_identities_that_bind_them() {
        let identities = [
            identity(
                &["ClusterExtension.cert-manager"],
                &["system:serviceaccount:cert-manager:installer"],
                &[],
            ),
            identity(
                &["ClusterExtension.*"],
                &["system:serviceaccount:olmv1-system:operator-controller"],
                &[],
            ),
            identity(
                &["Extension.${namespace}.*"],
                &["system:serviceaccount:*:installer"],
                &[],
            ),
            identity(&["ClusterExtension.${name}"], &[], &["olmv1-installers"]),
            identity(&["operator-1"], &[], &["camel-k-operators"]),
        ];
        #[rustfmt::skip]
        let rows: [(UserInfo, &str, Option<&str>); 6] = [
            (user("system:serviceaccount:cert-manager:installer", &[]),
             r#""ClusterExtension.cert-manager", "Extension.cert-manager.*""#, None),
            (user("system:serviceaccount:olmv1-system:operator-controller", &[]), r#""ClusterExtension.*""#, None),
            (user("system:serviceaccount:team-a:installer", &["system:serviceaccounts"]), r#""Extension.team-a.*""#, None),
            (user("system:serviceaccount:olmv1:argocd", &["olmv1-installers"]), r#""ClusterExtension.argocd""#, Some("ClusterExtension.argocd")),
            // templates bind service accounts only
            (user("alice", &["olmv1-installers", "camel-k-operators"]), r#""operator-1""#, Some("operator-1")),
            (user("bob", &["system:authenticated"]), "none", None),
        ];
        for (user, acting, single) in rows {
            let got = Acting::of(&user, &identities);
            assert_eq!(got.to_string(), acting, "{}", &*user.username);
            assert_eq!(got.single_owner(), single, "{}", &*user.username);
        }
        let installer = Acting::of(
            &user("system:serviceaccount:team-a:installer", &[]),
            &identities,
        );
        assert!(installer.acts_for("Extension.team-a.argocd"));
        assert!(!installer.acts_for("Extension.team-b.argocd"));
        assert!(!installer.acts_for("ClusterExtension.argocd"));
    }

    #[test]
    fn service_accounts_are_recognised_by_their_user_name() {
        assert_eq!(
            service_account("system:serviceaccount:ns:sa"),
            Some(("ns", "sa"))
        );
        assert_eq!(service_account("system:serviceaccount:ns"), None);
        assert_eq!(service_account("system:serviceaccount::sa"), None);
        assert_eq!(service_account("alice"), None);
    }
}
