//! The checks of a settings document beyond its types: renamed settings, key and kind syntax,
//! identity patterns, trusted writers, each problem naming its field.

use serde_json::Value;

use super::{RENAMED, Settings};
use crate::control_plane::{
    KUBE_SYSTEM_GROUP, KUBE_SYSTEM_PREFIX, TrustedWriter, is_resource, reaches_kube_system,
};
use crate::dns::{SUBDOMAIN_MAX, is_dns_subdomain, is_label_char};
use crate::grant::Grant;
use crate::identity::{
    Access, Identity, NAME_TEMPLATE, NAMESPACE_TEMPLATE, SERVICE_ACCOUNT_PREFIX, TEMPLATES,
};
use crate::owner::{Claim, OwnerMark};
use crate::request::Operation;

/// Rejects renamed settings with what to write instead, and an array where the settings have
/// an object: the document, `exemptions`, and the items of `ownerMarks`, `identities`,
/// `trustedWriters` and `parentKinds`.
pub(super) fn check_objects(document: &Value) -> Result<(), String> {
    if document.is_array() {
        return Err("settings must be a JSON object, not an array".to_owned());
    }
    // A key that is there, `null` or not.
    fn get<'v>(object: &'v Value, key: &str) -> Option<&'v Value> {
        object.as_object()?.get(key)
    }
    if let Some((_, instead)) = RENAMED.iter().find(|(old, _)| get(document, old).is_some()) {
        return Err((*instead).to_owned());
    }
    if get(document, "exemptions").is_some_and(Value::is_array) {
        return Err("exemptions: must be an object with users and groups, not an array".to_owned());
    }
    for (list, example) in [
        ("ownerMarks", "{label: appID}"),
        ("identities", "{owners: [...], users: [...]}"),
        (
            "trustedWriters",
            "{users: [...], resources: [...], operations: [...]}",
        ),
        (
            "parentKinds",
            "{apiVersion: camel.apache.org/v1, kind: Integration}",
        ),
    ] {
        let items = get(document, list).and_then(Value::as_array);
        let items = items.map(Vec::as_slice).unwrap_or_default();
        if let Some(index) = items.iter().position(Value::is_array) {
            return Err(format!(
                "{list}[{index}]: must be an object like {example}, not an array"
            ));
        }
        if list == "ownerMarks"
            && let Some(index) = items.iter().position(|item| get(item, "key").is_some())
        {
            return Err(format!(
                "ownerMarks[{index}].key: write `label: K` or `annotation: K` (key was the \
                 label of ownerLabels before 0.2.0)"
            ));
        }
    }
    Ok(())
}

/// Checks one identity: its owner patterns, and that it binds someone who can use them.
pub(super) fn check_identity(
    identity: &Identity,
    field: &str,
    settings: &Settings,
    problems: &mut Vec<String>,
) {
    if identity.owners.is_empty() {
        problems.push(format!(
            "{field}.owners: list at least one owner or owner pattern"
        ));
    }
    for (index, pattern) in identity.owners.iter().enumerate() {
        if let Err(why) = check_owner_pattern(pattern, settings) {
            problems.push(format!("{field}.owners[{index}]: {pattern:?} {why}"));
        }
    }
    if identity.users.is_empty() && identity.groups.is_empty() {
        problems.push(format!(
            "{field}: binds no users or groups; list who acts for these owners"
        ));
    }
    let templated = |owner: &String| TEMPLATES.iter().any(|t| owner.contains(t));
    let only_people = identity.groups.is_empty()
        && !identity.users.is_empty()
        && !identity
            .users
            .iter()
            .any(|user| may_be_service_account(user));
    if only_people && identity.owners.iter().all(templated) {
        problems.push(format!(
            "{field}: every owner uses ${{namespace}} or ${{name}}, which only service \
             accounts have, but no user can be one; list service accounts \
             (system:serviceaccount:<namespace>:<name>, with * wildcards; such a name counts \
             only with the groups the API server gives it)"
        ));
    }
    check_names(&format!("{field}.users"), &identity.users, problems);
    check_names(&format!("{field}.groups"), &identity.groups, problems);
    check_changes(identity, field, settings, problems);
}

/// Checks an identity's grants ([`crate::grant`]): given alone (or with `access: Changes`),
/// each list naming something, none a key the settings guard.
fn check_changes(
    identity: &Identity,
    field: &str,
    settings: &Settings,
    problems: &mut Vec<String>,
) {
    let narrows = matches!(
        identity.access,
        None | Some(Access::Changes | Access::InjectCa)
    );
    if !identity.changes.is_empty() && !narrows {
        problems.push(format!(
            "{field}: changes list all that its requesters may write for these owners, and \
             access gives them more; leave access out with changes, or drop changes"
        ));
    }
    if identity.access == Some(Access::Changes) && identity.changes.is_empty() {
        problems.push(format!(
            "{field}.changes: list what its requesters may change (access: Changes)"
        ));
    }
    for (index, grant) in identity.changes.iter().enumerate() {
        let at = format!("{field}.changes[{index}].{}", grant.name());
        if grant.lists() && grant.keys().is_empty() {
            problems.push(format!("{at}: list at least one"));
        }
        for key in grant.keys() {
            if key.is_empty() || key == "*" {
                problems.push(format!(
                    "{at}: {key:?} names no key; list the keys it changes"
                ));
            }
            let metadata = matches!(grant, Grant::Annotations(_) | Grant::Labels(_));
            if metadata && settings.guards(key) {
                problems.push(format!(
                    "{at}: {key:?} is an owner mark's key or the offer, which no grant changes"
                ));
            }
            let body = matches!(grant, Grant::Fields(_));
            if body && ["apiVersion", "kind", "metadata"].contains(&key.as_str()) {
                problems.push(format!(
                    "{at}: {key:?} is not a field of the object's body; metadata is granted by \
                     annotations, labels and finalizers"
                ));
            }
            if body && key.len() > 1 && key.ends_with('*') {
                problems.push(format!("{at}: {key:?}: name each field whole"));
            }
        }
    }
}

/// Checks one trusted writer: who it is, what it writes, and that no wildcard reaches the
/// service accounts of kube-system.
pub(super) fn check_trusted_writer(
    writer: &TrustedWriter,
    field: &str,
    problems: &mut Vec<String>,
) {
    if writer.users.is_empty() {
        problems.push(format!("{field}.users: list the user names of the writer"));
    }
    check_names(&format!("{field}.users"), &writer.users, problems);
    for (index, user) in writer.users.iter().enumerate() {
        if reaches_kube_system(user) {
            problems.push(format!(
                "{field}.users[{index}]: {user:?} reaches any service account of kube-system, \
                 where add-ons run too; name each one ({KUBE_SYSTEM_PREFIX}<name>, which \
                 counts only with the group {KUBE_SYSTEM_GROUP})"
            ));
        }
    }
    if writer.resources.is_empty() {
        problems.push(format!(
            "{field}.resources: list the resources the writer writes"
        ));
    }
    for (index, resource) in writer.resources.iter().enumerate() {
        if !is_resource(resource) {
            problems.push(format!(
                "{field}.resources[{index}]: {resource:?} is not a resource; write \
                 resource[.group][/subresource], like secrets or \
                 apiservices.apiregistration.k8s.io, or * for all"
            ));
        }
    }
    if writer.operations.is_empty() {
        problems.push(format!("{field}.operations: list CREATE, UPDATE or DELETE"));
    }
    if writer.operations.contains(&Operation::Connect) {
        problems.push(format!(
            "{field}.operations: CONNECT writes no object; list CREATE, UPDATE or DELETE"
        ));
    }
}

/// Whether a user pattern may match a service account's user name.
pub(super) fn may_be_service_account(pattern: &str) -> bool {
    let literal = pattern.split('*').next().unwrap_or_default();
    literal.starts_with(SERVICE_ACCOUNT_PREFIX)
        || (SERVICE_ACCOUNT_PREFIX.starts_with(literal) && literal.len() < pattern.len())
}

/// Checks an owner pattern: label value characters, `*`, and the known templates; an exact
/// owner must be a valid owner for one of the owner marks.
pub(super) fn check_owner_pattern(pattern: &str, settings: &Settings) -> Result<(), String> {
    let mut rest = pattern.to_owned();
    for template in TEMPLATES {
        rest = rest.replace(template, "");
    }
    if let Some(at) = rest.find("${") {
        let unknown = rest[at..].split_inclusive('}').next().unwrap_or_default();
        return Err(format!(
            "uses the unknown template {unknown}; the templates are {}",
            TEMPLATES.join(" and ")
        ));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '*');
    if pattern.is_empty() || !rest.chars().all(allowed) {
        return Err(
            "is not an owner pattern: use alphanumerics, '-', '_', '.', '/' (between a \
             namespace and a name), '*' wildcards and ${namespace} or ${name}"
                .to_owned(),
        );
    }
    if let Some(why) = widened_template(pattern) {
        return Err(why);
    }
    let exact = !pattern.contains(['*', '$']);
    let valid_somewhere = |mark: &OwnerMark| Claim::of_owner(mark, pattern).owner(mark).is_ok();
    if exact && !settings.owner_marks.iter().any(valid_somewhere) {
        return Err("is no valid owner for any of the ownerMarks".to_owned());
    }
    Ok(())
}

/// Why a `*` beside a template widens it, if one does: with only characters the filled-in
/// value may hold between them (a DNS label's for `${namespace}`, a DNS subdomain's for
/// `${name}`), the `*` lets the template stand for a longer or another name —
/// `Extension.${namespace}*` would act for `team-ab` as `team-a`.
pub(super) fn widened_template(pattern: &str) -> Option<String> {
    fn subdomain(c: char) -> bool {
        is_label_char(c) || c == '.'
    }
    /// A template, the characters of its value, what it names, and a pattern that uses it well.
    struct Template {
        text: &'static str,
        holds: fn(char) -> bool,
        what: &'static str,
        instead: &'static str,
    }
    let templates = [
        Template {
            text: NAMESPACE_TEMPLATE,
            holds: is_label_char,
            what: "namespace",
            instead: "Extension.${namespace}.*",
        },
        Template {
            text: NAME_TEMPLATE,
            holds: subdomain,
            what: "name",
            instead: "ClusterExtension.${name}",
        },
    ];
    for Template {
        text,
        holds,
        what,
        instead,
    } in templates
    {
        for (at, _) in pattern.match_indices(text) {
            let before = pattern[..at].chars().rev().find(|c| !holds(*c));
            let after = pattern[at + text.len()..].chars().find(|c| !holds(*c));
            if before == Some('*') || after == Some('*') {
                return Some(format!(
                    "lets {text} stand for a longer or another {what}: the * beside it, with \
                     only {what} characters between, matches them too; separate the two with a \
                     character a {what} cannot hold, or drop the *, as in {instead:?}"
                ));
            }
        }
    }
    None
}

pub(super) fn check_names(field: &str, names: &[String], problems: &mut Vec<String>) {
    for (index, name) in names.iter().enumerate() {
        if name.is_empty() {
            problems.push(format!("{field}[{index}]: must not be empty"));
        }
    }
}

/// Checks a Kubernetes label key: an optional DNS subdomain prefix and `/`, then a name of at
/// most 63 alphanumerics, `-`, `_` and `.`, starting and ending with an alphanumeric.
pub(super) fn check_label_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        check_dns_subdomain(prefix).map_err(|why| format!("prefix {prefix:?} {why}"))?;
    }
    check_label_name(name).map_err(|why| format!("name {name:?} {why}"))
}

pub(super) fn check_label_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 63 {
        return Err("must be 1 to 63 characters".to_owned());
    }
    let alphanumeric_ends = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if !alphanumeric_ends || !name.chars().all(allowed) {
        return Err(
            "must be alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"
                .to_owned(),
        );
    }
    Ok(())
}

pub(super) fn check_dns_subdomain(prefix: &str) -> Result<(), String> {
    if prefix.is_empty() || prefix.len() > SUBDOMAIN_MAX {
        return Err(format!("must be 1 to {SUBDOMAIN_MAX} characters"));
    }
    if !is_dns_subdomain(prefix) {
        return Err("must be a DNS subdomain: lowercase alphanumerics, '-' and '.'".to_owned());
    }
    Ok(())
}

/// Checks an owner kind name: a letter, then letters and digits (it leads label values, where
/// `.` separates it from the rest).
pub(super) fn check_kind(kind: &str) -> Result<(), String> {
    if kind.is_empty() || kind.len() > 63 {
        return Err("must be 1 to 63 characters".to_owned());
    }
    if !kind.starts_with(|c: char| c.is_ascii_alphabetic())
        || !kind.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return Err(
            "must be a letter followed by letters and digits, like ClusterExtension".to_owned(),
        );
    }
    Ok(())
}
