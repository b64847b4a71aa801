//! The oracle: who acts for which owner, computed from the identities alone.

use std::collections::BTreeSet;

use crate::model::{Access, Admission, Identity};

/// The namespace and name of a service account user name, when it is one Kubernetes could
/// have issued: `system:serviceaccount:<ns>:<name>`, `<ns>` a DNS-1123 label and `<name>` a
/// DNS-1123 subdomain.
pub(crate) fn service_account(user: &str) -> Option<(&str, &str)> {
    let (namespace, name) = any_service_account(user)?;
    (dns_label(namespace) && dns_subdomain(name)).then_some((namespace, name))
}

/// The parts of any user name that looks like a service account's, checked for nothing but
/// being non-empty.
pub(crate) fn any_service_account(user: &str) -> Option<(&str, &str)> {
    let (namespace, name) = user
        .strip_prefix("system:serviceaccount:")?
        .split_once(':')?;
    (!namespace.is_empty() && !name.is_empty()).then_some((namespace, name))
}

/// Kubernetes' `IsDNS1123Label`.
fn dns_label(text: &str) -> bool {
    (1..=63).contains(&text.len()) && dns_part(text)
}

/// Kubernetes' `IsDNS1123Subdomain`.
fn dns_subdomain(text: &str) -> bool {
    (1..=253).contains(&text.len()) && text.split('.').all(dns_part)
}

fn dns_part(part: &str) -> bool {
    let alphanumeric = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    part.starts_with(alphanumeric)
        && part.ends_with(alphanumeric)
        && part.chars().all(|c| alphanumeric(c) || c == '-')
}

/// Whether `pattern`, in which `*` stands for any run of characters, matches `text`.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let text = text.as_bytes();
    // matched[j]: the pattern so far matches text[..j].
    let mut matched = vec![false; text.len() + 1];
    matched[0] = true;
    for &p in pattern.as_bytes() {
        let mut next = vec![false; text.len() + 1];
        if p == b'*' {
            let mut any = false;
            for (j, slot) in next.iter_mut().enumerate() {
                any |= matched[j];
                *slot = any;
            }
        } else {
            for j in 1..=text.len() {
                next[j] = matched[j - 1] && text[j - 1] == p;
            }
        }
        matched = next;
    }
    matched[text.len()]
}

/// Whether the requester's groups vouch for its name: one shaped like a service account's
/// comes with `system:serviceaccounts` and `system:serviceaccounts:<namespace>`, one shaped
/// like a node's with `system:nodes`.
pub(crate) fn vouched(user: &str, groups: &[String]) -> bool {
    let has = |group: &str| groups.iter().any(|g| g == group);
    if let Some(account) = user.strip_prefix("system:serviceaccount:") {
        let namespace = account.split(':').next().unwrap_or_default();
        return has("system:serviceaccounts")
            && has(&format!("system:serviceaccounts:{namespace}"));
    }
    !user.starts_with("system:node:") || has("system:nodes")
}

/// Whether an identity binds the requester: a user pattern matches its name (one its
/// groups vouch for), or a group pattern one of its groups.
pub(crate) fn binds(identity: &Identity, user: &str, groups: &[String]) -> bool {
    (vouched(user, groups) && identity.users.iter().any(|pattern| glob(pattern, user)))
        || (identity.groups.iter()).any(|pattern| groups.iter().any(|group| glob(pattern, group)))
}

/// The owner patterns the requester acts for: those of every identity with `access: Own`
/// that binds it, templates filled from its service account; a templated pattern names no
/// owner for a requester that is not one.
pub(crate) fn acting(identities: &[Identity], admission: &Admission) -> BTreeSet<String> {
    acting_with(identities, admission, service_account)
}

/// The owner patterns the requester writes for under `writes: Owner`: those of every
/// identity that binds it, `access: Own` or `Write`.
pub(crate) fn writing(identities: &[Identity], admission: &Admission) -> BTreeSet<String> {
    patterns(
        identities,
        admission,
        service_account,
        &[Access::Own, Access::Write],
    )
}

/// [`acting`], with service accounts recognised by `account`.
pub(crate) fn acting_with(
    identities: &[Identity],
    admission: &Admission,
    account: fn(&str) -> Option<(&str, &str)>,
) -> BTreeSet<String> {
    patterns(identities, admission, account, &[Access::Own])
}

/// The owner patterns of the identities with one of `accesses` that bind the requester.
fn patterns(
    identities: &[Identity],
    admission: &Admission,
    account: fn(&str) -> Option<(&str, &str)>,
    accesses: &[Access],
) -> BTreeSet<String> {
    let account = account(&admission.user).filter(|_| vouched(&admission.user, &admission.groups));
    (identities.iter())
        .filter(|identity| accesses.contains(&identity.access))
        .filter(|identity| binds(identity, &admission.user, &admission.groups))
        .flat_map(|identity| &identity.owners)
        .filter_map(|pattern| match (pattern.contains("${"), account) {
            (false, _) => Some(pattern.clone()),
            (true, Some((namespace, name))) => Some(
                pattern
                    .replace("${namespace}", namespace)
                    .replace("${name}", name),
            ),
            (true, None) => None,
        })
        .collect()
}

pub(crate) fn acts_for(acting: &BTreeSet<String>, owner: &str) -> bool {
    acting.iter().any(|pattern| glob(pattern, owner))
}

/// The one concrete owner a requester acts for: one pattern, without a wildcard.
pub(crate) fn single_owner(acting: &BTreeSet<String>) -> Option<&str> {
    match acting.iter().collect::<Vec<_>>().as_slice() {
        [owner] if !owner.contains('*') => Some(owner.as_str()),
        _ => None,
    }
}
