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
//! A templated pattern binds service accounts only — user names `system:serviceaccount:<ns>:<name>`
//! whose namespace is a DNS-1123 label and whose name a DNS-1123 subdomain, as Kubernetes
//! validates them — and for any other requester names no owner. The values filled in are
//! literal: only the pattern's own `*` are wildcards.

use std::fmt;

use serde::Deserialize;

use crate::dns::{is_dns_label, is_dns_subdomain};
use crate::grant::Grant;
use crate::request::{Text, UserInfo};

/// The template for the requesting service account's namespace.
pub const NAMESPACE_TEMPLATE: &str = "${namespace}";
/// The template for the requesting service account's name.
pub const NAME_TEMPLATE: &str = "${name}";
/// The templates an owner pattern may use.
pub const TEMPLATES: [&str; 2] = [NAMESPACE_TEMPLATE, NAME_TEMPLATE];

/// The user name prefix of Kubernetes service accounts.
pub const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";
/// The group of every service account's requests; `system:serviceaccounts:<namespace>` is its
/// namespace's (`MakeGroupNames` in `pkg/serviceaccount/util.go`).
pub const SERVICE_ACCOUNTS_GROUP: &str = "system:serviceaccounts";
/// The user name prefix of nodes (`system:node:<name>`).
pub const NODE_PREFIX: &str = "system:node:";
/// The group of every node's requests, which the node authorizer requires.
pub const NODES_GROUP: &str = "system:nodes";

/// Whether the requester's groups vouch for its name: one shaped like a service account's
/// (`system:serviceaccount:<ns>:<name>`) comes with `system:serviceaccounts` and
/// `system:serviceaccounts:<ns>`, which Kubernetes' service-account authenticator and its
/// impersonation filter add (`impersonation.go` in `k8s.io/apiserver`); one shaped like a
/// node's with `system:nodes`. Another authenticator — a client certificate, an authenticating
/// proxy — may present such a name without them: it is then neither, and no user pattern names
/// it, in `identities` or `trustedWriters`.
pub fn vouched(user: &UserInfo<'_>) -> bool {
    let in_group = |group: &str| user.groups.iter().any(|g| **g == *group);
    if let Some(account) = user.username.strip_prefix(SERVICE_ACCOUNT_PREFIX) {
        let namespace = account
            .split_once(':')
            .map_or(account, |(namespace, _)| namespace);
        let of_namespace = |group: &&Text<'_>| {
            group
                .strip_prefix(SERVICE_ACCOUNTS_GROUP)
                .and_then(|rest| rest.strip_prefix(':'))
                == Some(namespace)
        };
        return in_group(SERVICE_ACCOUNTS_GROUP) && user.groups.iter().any(|g| of_namespace(&g));
    }
    !user.username.starts_with(NODE_PREFIX) || in_group(NODES_GROUP)
}

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
    /// What the bound requesters may do for these owners ([`Identity::level`]).
    #[serde(default)]
    pub access: Option<Access>,
    /// What they may change in these owners' objects, and nothing else: the narrow form of
    /// `Write` ([`crate::grant`]).
    #[serde(default)]
    pub changes: Vec<Grant>,
}

/// The grant `access: InjectCA` stands for.
static CA_BUNDLES: Grant = Grant::CaBundles;

impl Identity {
    /// The access the identity gives: its `access`, `Changes` for `InjectCA` (the CA bundles)
    /// or for `changes` given alone, and `Own` for neither.
    pub fn level(&self) -> Access {
        match (self.access, self.changes.is_empty()) {
            (Some(Access::InjectCa), _) | (None, false) => Access::Changes,
            (Some(access), _) => access,
            (None, true) => Access::Own,
        }
    }

    /// What it lets its requesters change: its `changes`, and the CA bundles for `InjectCA`.
    pub fn grants(&self) -> impl Iterator<Item = &Grant> {
        let injects = self.access == Some(Access::InjectCa);
        self.changes.iter().chain(injects.then_some(&CA_BUNDLES))
    }
}

/// What an identity lets its requesters do for its owners.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
pub enum Access {
    /// Everything an owner does: set and remove its marks, offer and accept, and write what it
    /// owns (`writes: Owner`); stamping stamps it.
    #[default]
    Own,
    /// Only write (UPDATE, DELETE) what the owners own, keeping the marks: an installed
    /// operator's own service accounts, which patch its CRDs and write its Secrets.
    Write,
    /// Only derive for the owners: copy onto an object the marks its controller carries now,
    /// and write (UPDATE, DELETE) objects whose marks are their controller's
    /// ([`crate::derivation`]): cert-manager making a Certificate's CertificateRequests,
    /// prometheus-operator a Prometheus's StatefulSet. It never sets another owner, removes
    /// one, or offers.
    Derive,
    /// Only write CA bundles into what the owners own, under `writes: Owner`: the CA injectors
    /// (cert-manager's cainjector, a chart's certificate hook), which write `caBundle` into
    /// webhook configurations, CRDs and APIServices of every owner. The same as `changes:
    /// [caBundles]` ([`Identity::level`]).
    #[serde(rename = "InjectCA")]
    InjectCa,
    /// Only change what the identity's `changes` list in what the owners own, under `writes:
    /// Owner` ([`crate::grant`]).
    Changes,
    /// Only restore what the owners own: create objects with their marks as a backup kept
    /// them, and write what they own keeping the marks (a backup tool: Velero). It never moves,
    /// removes or offers a mark.
    Restore,
}

/// The owners a requester acts for, and those it holds a lesser access for (`Write`, `Derive`,
/// `InjectCA`): owner patterns, templates filled in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Acting {
    /// Each owner pattern with the access an identity gives for it; sorted, each once.
    patterns: Vec<(Access, OwnerPattern)>,
}

/// An owner pattern with its templates filled in: the literal runs between its `*` wildcards.
/// A filled-in value is part of a literal run, whatever characters it holds.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct OwnerPattern {
    literals: Vec<String>,
}

impl Acting {
    /// The owners `user` acts for under `identities`.
    pub fn of(user: &UserInfo<'_>, identities: &[Identity]) -> Acting {
        let account = service_account(&user.username).filter(|_| vouched(user));
        // Sorted and each once, as messages list them; kept sorted as they come (a sort would
        // cost the module 4 KB).
        let mut patterns = Vec::new();
        let bound = identities
            .iter()
            .filter(|identity| binds(identity, user))
            .flat_map(|identity| {
                identity
                    .owners
                    .iter()
                    .map(|owner| (identity.level(), owner))
            })
            .filter_map(|(access, pattern)| Some((access, expand(pattern, account)?)));
        for pattern in bound {
            if let Err(at) = patterns.binary_search(&pattern) {
                patterns.insert(at, pattern);
            }
        }
        Acting { patterns }
    }

    /// Whether the requester acts for the owner with this id.
    pub fn acts_for(&self, owner: &str) -> bool {
        self.holds(Access::Own, owner)
    }

    /// Whether the requester acts for some owner: it may adopt what nobody owns.
    pub fn acts_for_some(&self) -> bool {
        (self.patterns.iter()).any(|(level, _)| *level == Access::Own)
    }

    /// Whether the requester holds `access` for the owner with this id: an identity binds it to
    /// the owner with that access, or with `Own`, which includes every other.
    pub fn holds(&self, access: Access, owner: &str) -> bool {
        self.patterns.iter().any(|(level, pattern)| {
            let includes = *level == Access::Own || *level == access;
            includes && matches_literals(&pattern.literals, owner)
        })
    }

    /// Whether the requester writes (`Own` or `Write`) for every owner id that holds
    /// `separator`, if any: it is bound to a pattern of wildcards alone (`*`), or of wildcards
    /// around that separator (`*/*`).
    pub fn writes_for_every(&self, separator: Option<char>) -> bool {
        let around = separator.map(String::from);
        self.patterns.iter().any(|(level, pattern)| {
            let literals = &pattern.literals;
            matches!(level, Access::Own | Access::Write)
                && (literals.iter().all(String::is_empty)
                    || (literals.len() == 3
                        && literals[0].is_empty()
                        && literals[2].is_empty()
                        && Some(&literals[1]) == around.as_ref()))
        })
    }

    /// The owner patterns bound with `access`.
    fn bound(&self, access: Access) -> impl Iterator<Item = &OwnerPattern> {
        self.patterns
            .iter()
            .filter(move |(level, _)| *level == access)
            .map(|(_, pattern)| pattern)
    }

    /// The one concrete owner the requester acts for, if it acts for exactly one and no pattern.
    pub fn single_owner(&self) -> Option<&str> {
        let mut owners = self.bound(Access::Own);
        match (
            owners.next().map(|owner| owner.literals.as_slice()),
            owners.next(),
        ) {
            (Some([owner]), None) => Some(owner),
            _ => None,
        }
    }
}

impl fmt::Display for Acting {
    /// `none`, or the owner patterns, quoted and comma-separated; then `and writes for` those
    /// it only writes for, `and derives for` those it only derives for, `and restores for`
    /// those it only restores, and `and changes some of what is owned by` those it holds
    /// grants for ([`crate::grant`]), if any.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (access, what) in [
            (Access::Own, ""),
            (Access::Write, " and writes for "),
            (Access::Derive, " and derives for "),
            (Access::Restore, " and restores for "),
            (Access::Changes, " and changes some of what is owned by "),
        ] {
            let mut owners = self.bound(access).peekable();
            match (owners.peek(), access) {
                (None, Access::Own) => f.write_str("none")?,
                (None, _) => continue,
                (Some(_), _) => f.write_str(what)?,
            }
            for (index, owner) in owners.enumerate() {
                let separator = if index == 0 { "" } else { ", " };
                write!(f, "{separator}{:?}", owner.literals.join("*"))?;
            }
        }
        Ok(())
    }
}

/// Whether an identity binds the requester, by user name (one its groups vouch for) or by one
/// of its groups.
fn binds(identity: &Identity, user: &UserInfo<'_>) -> bool {
    let named = || (identity.users.iter()).any(|pattern| matches(pattern, &user.username));
    (named() && vouched(user))
        || identity
            .groups
            .iter()
            .any(|pattern| user.groups.iter().any(|group| matches(pattern, group)))
}

/// The namespace and name of a service account user (`system:serviceaccount:<ns>:<name>`), when
/// both are names Kubernetes gives service accounts: a DNS-1123 label for the namespace
/// (`ValidateNamespaceName`), a DNS-1123 subdomain for the name (`ValidateServiceAccountName`).
/// Any other user name — `system:serviceaccount:helm-releases:*` from a client certificate, say —
/// is no service account.
fn service_account(username: &str) -> Option<(&str, &str)> {
    username
        .strip_prefix(SERVICE_ACCOUNT_PREFIX)?
        .split_once(':')
        .filter(|(namespace, name)| is_dns_label(namespace) && is_dns_subdomain(name))
}

/// An owner pattern with its templates filled from the service account, each value a literal;
/// `None` when it has templates and the requester is no service account.
fn expand(pattern: &str, account: Option<(&str, &str)>) -> Option<OwnerPattern> {
    let filled = |run: &str| -> Option<String> {
        if !run.contains("${") {
            return Some(run.to_owned());
        }
        let (namespace, name) = account?;
        Some(
            run.replace(NAMESPACE_TEMPLATE, namespace)
                .replace(NAME_TEMPLATE, name),
        )
    };
    let literals = pattern.split('*').map(filled).collect::<Option<_>>()?;
    Some(OwnerPattern { literals })
}

/// What `user` may change under `identities` in the objects of the owner with id `owner`: the
/// grants of every identity that binds it with access `Changes` to a pattern of that owner.
pub fn grants_for<'s>(
    user: &UserInfo<'_>,
    identities: &'s [Identity],
    owner: &str,
) -> Vec<&'s Grant> {
    let account = service_account(&user.username).filter(|_| vouched(user));
    let names = |identity: &&Identity| {
        (identity.owners.iter())
            .filter_map(|pattern| expand(pattern, account))
            .any(|pattern| matches_literals(&pattern.literals, owner))
    };
    identities
        .iter()
        .filter(|identity| identity.level() == Access::Changes && binds(identity, user))
        .filter(names)
        .flat_map(Identity::grants)
        .collect()
}

/// Matches `text` against a pattern in which `*` stands for any run of characters.
pub fn matches(pattern: &str, text: &str) -> bool {
    let literals: Vec<&str> = pattern.split('*').collect();
    matches_literals(&literals, text)
}

/// Matches `text` against literal runs with a wildcard between each two.
fn matches_literals<L: AsRef<str>>(literals: &[L], text: &str) -> bool {
    let Some((first, rest_literals)) = literals.split_first() else {
        return text.is_empty();
    };
    let Some(mut rest) = text.strip_prefix(first.as_ref()) else {
        return false;
    };
    let Some((last, middle)) = rest_literals.split_last() else {
        return rest.is_empty();
    };
    for literal in middle {
        match rest.find(literal.as_ref()) {
            Some(at) => rest = &rest[at + literal.as_ref().len()..],
            None => return false,
        }
    }
    rest.ends_with(last.as_ref())
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

    const SA_GROUP: &str = SERVICE_ACCOUNTS_GROUP;

    /// The groups the API server gives a service account of `namespace`, leaked for `&str`.
    fn sa(namespace: &str) -> [&'static str; 2] {
        let group = format!("{SA_GROUP}:{namespace}");
        [SA_GROUP, Box::leak(group.into_boxed_str())]
    }

    fn identity(owners: &[&str], users: &[&str], groups: &[&str]) -> Identity {
        let strings = |list: &[&str]| list.iter().map(|&s| s.to_owned()).collect();
        Identity {
            owners: strings(owners),
            users: strings(users),
            groups: strings(groups),
            access: None,
            changes: Vec::new(),
        }
    }

    /// A name shaped like a service account's or a node's is one only with the groups the API
    /// server gives it; and then an identity naming it binds it, templates filled.
    #[test]
    fn names_are_taken_only_with_their_groups() {
        const SA: &str = "system:serviceaccount:ci:deployer";
        const ALL: &str = "system:serviceaccounts";
        #[rustfmt::skip]
        let rows: [(&str, &[&str], bool); 8] = [
            (SA,                   &[ALL, "system:serviceaccounts:ci"], true),
            (SA,                   &["system:serviceaccounts:ci"],      false),
            (SA,                   &[ALL],                              false),
            (SA,                   &[ALL, "system:serviceaccounts:cd"], false),
            ("system:node:n1",     &["system:nodes"],                   true),
            ("system:node:n1",     &["system:authenticated"],           false),
            ("alice",              &[],                                 true),
            ("system:kube-scheduler", &[],                              true),
        ];
        let identities = [
            identity(&["ClusterExtension.a"], &[SA, "system:node:*"], &[]),
            identity(&["Extension.${namespace}.*"], &[], &[ALL]),
        ];
        for (name, groups, vouched_for) in rows {
            let user = user(name, groups);
            assert_eq!(vouched(&user), vouched_for, "{name} {groups:?}");
            let acting = Acting::of(&user, &identities);
            let named = name == SA || name.starts_with("system:node:");
            assert_eq!(
                acting.acts_for("ClusterExtension.a"),
                named && vouched_for,
                "{name} {groups:?}"
            );
            assert_eq!(
                acting.acts_for("Extension.ci.x"),
                name == SA && vouched_for,
                "{name} {groups:?}"
            );
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
            (user("system:serviceaccount:cert-manager:installer", &sa("cert-manager")),
             r#""ClusterExtension.cert-manager", "Extension.cert-manager.*""#, None),
            (user("system:serviceaccount:olmv1-system:operator-controller", &sa("olmv1-system")), r#""ClusterExtension.*""#, None),
            (user("system:serviceaccount:team-a:installer", &sa("team-a")), r#""Extension.team-a.*""#, None),
            (user("system:serviceaccount:olmv1:argocd", &["olmv1-installers", SA_GROUP, "system:serviceaccounts:olmv1"]), r#""ClusterExtension.argocd""#, Some("ClusterExtension.argocd")),
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
            &user("system:serviceaccount:team-a:installer", &sa("team-a")),
            &identities,
        );
        assert!(installer.acts_for("Extension.team-a.argocd"));
        assert!(!installer.acts_for("Extension.team-b.argocd"));
        assert!(!installer.acts_for("ClusterExtension.argocd"));
    }

    #[test]
    fn service_accounts_are_user_names_kubernetes_could_give_one() {
        #[rustfmt::skip]
        let rows = [
            ("system:serviceaccount:ns:sa", Some(("ns", "sa"))),
            ("system:serviceaccount:helm-releases:cert-manager.v1", Some(("helm-releases", "cert-manager.v1"))),
            ("system:serviceaccount:ns", None),
            ("system:serviceaccount::sa", None),
            ("system:serviceaccount:ns:", None),
            ("alice", None),
            // not names Kubernetes accepts for a namespace or a service account
            ("system:serviceaccount:helm-releases:*", None),
            ("system:serviceaccount:*:installer", None),
            ("system:serviceaccount:ns:a:b", None),
            ("system:serviceaccount:Team-A:installer", None),
            ("system:serviceaccount:ns:-sa", None),
            ("system:serviceaccount:ns.a:sa", None),
            ("system:serviceaccount:ns:sa..x", None),
        ];
        for (username, expected) in rows {
            assert_eq!(service_account(username), expected, "{username}");
        }
    }

    #[test]
    fn access_write_binds_writing_only() {
        let mut writer = identity(
            &["ClusterExtension.cert-manager"],
            &["system:serviceaccount:cert-manager:cert-manager-cainjector"],
            &[],
        );
        writer.access = Some(Access::Write);
        let identities = [
            writer,
            identity(&["ClusterExtension.*"], &[], &["olm-controllers"]),
        ];
        let cainjector = Acting::of(
            &user(
                "system:serviceaccount:cert-manager:cert-manager-cainjector",
                &[
                    "system:serviceaccounts",
                    "system:serviceaccounts:cert-manager",
                ],
            ),
            &identities,
        );
        assert!(cainjector.holds(Access::Write, "ClusterExtension.cert-manager"));
        assert!(!cainjector.acts_for("ClusterExtension.cert-manager"));
        assert!(!cainjector.holds(Access::Write, "ClusterExtension.argocd"));
        assert_eq!(cainjector.single_owner(), None);
        assert_eq!(
            cainjector.to_string(),
            r#"none and writes for "ClusterExtension.cert-manager""#
        );
        let controller = Acting::of(&user("olm", &["olm-controllers"]), &identities);
        assert!(controller.acts_for("ClusterExtension.cert-manager"));
        assert!(controller.holds(Access::Write, "ClusterExtension.cert-manager"));
    }

    #[test]
    fn filled_in_values_are_literal() {
        let pattern = expand("ClusterExtension.${name}", Some(("ns", "a*"))).unwrap();
        let acting = Acting {
            patterns: vec![(Access::Own, pattern)],
        };
        assert!(acting.acts_for("ClusterExtension.a*"));
        assert!(!acting.acts_for("ClusterExtension.a-b"));
        assert_eq!(acting.single_owner(), Some("ClusterExtension.a*"));
        let wildcard = expand("Extension.${namespace}.*", Some(("team-a", "x"))).unwrap();
        assert_eq!(wildcard.literals, ["Extension.team-a.", ""]);
    }

    #[test]
    fn a_user_named_like_a_wildcard_service_account_acts_for_no_templated_owner() {
        let identities = [identity(
            &["ClusterExtension.${name}"],
            &["system:serviceaccount:helm-releases:*"],
            &[],
        )];
        let groups = [
            "system:serviceaccounts",
            "system:serviceaccounts:helm-releases",
        ];
        let impostor = Acting::of(
            &user("system:serviceaccount:helm-releases:*", &groups),
            &identities,
        );
        assert_eq!(impostor.to_string(), "none");
        assert!(!impostor.acts_for("ClusterExtension.cert-manager"));
        let release = Acting::of(
            &user("system:serviceaccount:helm-releases:cert-manager", &groups),
            &identities,
        );
        assert_eq!(release.to_string(), r#""ClusterExtension.cert-manager""#);
    }
}
