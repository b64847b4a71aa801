//! Who the requester acts for, in CEL: `identity::Acting` (identities bind users and groups, by
//! `*` patterns, to owner patterns whose `${namespace}` and `${name}` are the requesting service
//! account's), and what `requester::allows` asks of it for each act on a mark no controller
//! carries (the policy follows no controller here: `parentKinds` is refused):
//!
//! | act | needs |
//! |---|---|
//! | set an owner (adopt, accept, create with it) | `Own`; on a CREATE, `Restore` too |
//! | remove an owner, make, change or withdraw its offer | `Own` |
//! | update or delete what it owns, under `writes: Owner` | `Own` or `Write`; on an UPDATE, `Restore` too |
//!
//! `Derive` only counts for inherited marks, and the grants (`changes`, `access: InjectCA`)
//! for requesters the split leaves to the webhook ([`super::split`]).
//!
//! The requester's name is vouched for by its groups as `identity::vouched` says; a service
//! account's namespace and name are read with Kubernetes' `split` and a filled-in value is
//! escaped for RE2 with `replace` (the strings extension, `ext.Strings` in
//! `k8s.io/apiserver/pkg/cel/environment/base.go`, in every version the policy supports).

use single_owner_policy::dns::{LABEL_MAX, SUBDOMAIN_MAX};
use single_owner_policy::{
    Access, NAME_TEMPLATE, NAMESPACE_TEMPLATE, NODE_PREFIX, NODES_GROUP, SERVICE_ACCOUNT_PREFIX,
    SERVICE_ACCOUNTS_GROUP, Settings,
};

use super::Variable;
use super::claims::{escape, or};
use crate::conditions::quote;

/// The variables the identities read, none without identities: the requester's name and groups,
/// whether the groups vouch for the name, the service account's parts, and whether each
/// identity binds the requester (`bindsN`).
pub(super) fn variables(settings: &Settings) -> Vec<Variable> {
    if settings.identities.is_empty() {
        return Vec::new();
    }
    let user = "variables.requester";
    let groups = "variables.requesterGroups";
    let prefix = quote(SERVICE_ACCOUNT_PREFIX);
    let label = "[a-z0-9](?:[-a-z0-9]*[a-z0-9])?";
    let account = format!(
        "^{}{label}:{label}(?:\\.{label})*$",
        escape(SERVICE_ACCOUNT_PREFIX)
    );
    let mut variables = vec![
        (
            "requester".to_owned(),
            "has(request.userInfo.username) ? request.userInfo.username : ''".to_owned(),
        ),
        (
            "requesterGroups".to_owned(),
            "has(request.userInfo.groups) ? request.userInfo.groups : []".to_owned(),
        ),
        (
            "vouched".to_owned(),
            format!(
                "{user}.startsWith({prefix}) ? ({} in {groups} && {} + {user}.split(':')[2] in \
                 {groups}) : (!{user}.startsWith({}) || {} in {groups})",
                quote(SERVICE_ACCOUNTS_GROUP),
                quote(&format!("{SERVICE_ACCOUNTS_GROUP}:")),
                quote(NODE_PREFIX),
                quote(NODES_GROUP),
            ),
        ),
        (
            // `[system, serviceaccount, namespace, name]` of a vouched service account whose
            // namespace is a DNS label and name a DNS subdomain; `[]` for any other requester.
            "account".to_owned(),
            format!(
                "!(variables.vouched && {user}.matches({})) ? [] : (size({user}.split(':')[2]) \
                 <= {LABEL_MAX} && size({user}.split(':')[3]) <= {SUBDOMAIN_MAX}) ? \
                 {user}.split(':') : []",
                quote(&account)
            ),
        ),
    ];
    for (k, identity) in settings.identities.iter().enumerate() {
        let named = or(identity.users.iter().map(|pattern| glob(user, pattern)));
        let grouped = or(identity.groups.iter().map(|pattern| glob("g", pattern)));
        variables.push((
            format!("binds{k}"),
            format!("(({named}) && variables.vouched) || {groups}.exists(g, {grouped})"),
        ));
    }
    (variables.into_iter())
        .map(|(name, expression)| Variable { name, expression })
        .collect()
}

/// CEL: the requester may set the owner whose id is `id` (`Act::Set`): it acts for it, or
/// restores it on a CREATE. `None` without identities: anyone may.
pub(super) fn may_set(settings: &Settings, id: &str) -> Option<String> {
    let own = holds(settings, Access::Own, id)?;
    let restores = holds(settings, Access::Restore, id)?;
    Some(format!(
        "({own}) || (request.operation == 'CREATE' && ({restores}))"
    ))
}

/// CEL: the requester may update or delete what the owner whose id is `id` owns, under
/// `writes: Owner` (`Act::Write`, on a mark no controller carries): it writes for it, or
/// restores it on an UPDATE. `None` without identities.
pub(super) fn may_write(settings: &Settings, id: &str) -> Option<String> {
    let writes = holds(settings, Access::Write, id)?;
    let restores = holds(settings, Access::Restore, id)?;
    Some(format!(
        "({writes}) || (request.operation == 'UPDATE' && ({restores}))"
    ))
}

/// CEL: the requester acts for the owner whose id is `id` (holds `Own`): it may remove it,
/// offer the object and withdraw the offer. `None` without identities: anyone may.
pub(super) fn acts_for(settings: &Settings, id: &str) -> Option<String> {
    holds(settings, Access::Own, id)
}

/// CEL: an identity binds the requester with `access`, or with `Own`, which includes every
/// other, to a pattern of the owner whose id is `id` (`Acting::holds`).
pub(super) fn holds(settings: &Settings, access: Access, id: &str) -> Option<String> {
    if settings.identities.is_empty() {
        return None;
    }
    let bound = settings
        .identities
        .iter()
        .enumerate()
        .filter(|(_, identity)| {
            let level = identity.level();
            level == Access::Own || level == access
        });
    Some(or(bound.map(|(k, identity)| {
        let owners = or(identity.owners.iter().map(|pattern| owner_is(id, pattern)));
        format!("(variables.binds{k} && ({owners}))")
    })))
}

/// CEL: `id` matches the owner pattern, its templates filled from the requesting service
/// account, each value a literal (`identity::expand`); a pattern with templates names no owner
/// for any other requester.
fn owner_is(id: &str, pattern: &str) -> String {
    if !pattern.contains("${") {
        return glob(id, pattern);
    }
    let runs: Vec<&str> = pattern.split('*').collect();
    let test = match runs.as_slice() {
        [run] => format!("{id} == {}", fill(run, false)),
        [first, last] => {
            let (first, last) = (fill(first, false), fill(last, false));
            format!(
                "{id}.startsWith({first}) && {id}.endsWith({last}) && size({id}) >= \
                 size({first}) + size({last})"
            )
        }
        runs => {
            let runs: Vec<String> = runs.iter().map(|run| fill(run, true)).collect();
            format!("{id}.matches('^(?s:' + {} + ')$')", runs.join(" + '.*' + "))
        }
    };
    format!("(size(variables.account) == 4 && {test})")
}

/// CEL: a list of the owner pattern with its templates filled from the requesting service
/// account (`identity::expand`), its runs joined by `*`; empty where it has templates and the
/// requester is no service account.
pub(super) fn filled(pattern: &str) -> String {
    if !pattern.contains("${") {
        return format!("[{}]", quote(pattern));
    }
    let runs: Vec<String> = pattern.split('*').map(|run| fill(run, false)).collect();
    let text = runs.join(" + '*' + ");
    match pattern.contains("${") {
        true => format!("(size(variables.account) == 4 ? [{text}] : [])"),
        false => format!("[{text}]"),
    }
}

/// CEL: a literal run of an owner pattern, its templates filled from the service account, as
/// text, or as RE2 that matches it (`regex`).
pub(super) fn fill(run: &str, regex: bool) -> String {
    let text = |literal: &str| match regex {
        true => quote(&escape(literal)),
        false => quote(literal),
    };
    let name = match regex {
        true => "variables.account[3].replace('.', '\\\\.')",
        false => "variables.account[3]",
    };
    let by_namespace: Vec<String> = (run.split(NAMESPACE_TEMPLATE))
        .map(|part| {
            let by_name: Vec<String> = part.split(NAME_TEMPLATE).map(text).collect();
            by_name.join(&format!(" + {name} + "))
        })
        .collect();
    by_namespace.join(" + variables.account[2] + ")
}

/// CEL: `text` matches the `*` pattern exactly (`identity::matches`).
fn glob(text: &str, pattern: &str) -> String {
    let runs: Vec<&str> = pattern.split('*').collect();
    match runs.as_slice() {
        [literal] => format!("{text} == {}", quote(literal)),
        [first, last] => {
            let least = first.chars().count() + last.chars().count();
            format!(
                "({text}.startsWith({}) && {text}.endsWith({}) && size({text}) >= {least})",
                quote(first),
                quote(last)
            )
        }
        runs => {
            let runs: Vec<String> = runs.iter().map(|run| escape(run)).collect();
            format!(
                "{text}.matches({})",
                quote(&format!("^(?s:{})$", runs.join(".*")))
            )
        }
    }
}
