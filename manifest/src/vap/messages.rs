//! What a failed validation says: the module's line — the mark, the rule, the object and the
//! owners it moves between, or the owner of what a write keeps, then the reason
//! ([`reasons`]), for a mark in a list of templates too.

use super::entries::{Around, Group};
use super::read::field;
use super::reasons::{self, shown};
use super::{Rules, Validation};
use crate::conditions::quote;

/// How messages name the object (`Subject::of`, `ObjectRef`): `<Kind> <namespace>/<name>`, the
/// namespace left out for a cluster-scoped object (a Namespace too); the request's name, else
/// the object's (the stored one's on a DELETE), else `(generated name)`; then the subresource
/// written.
pub(super) const SUBJECT: &str = "request.kind.kind + ' ' + (!variables.clusterScoped ? \
     variables.namespace + '/' : '') + (has(request.name) && request.name != '' ? request.name : \
     [request.operation == 'DELETE' ? oldObject : object].map(o, o != null && has(o.metadata) && \
     has(o.metadata.name) && o.metadata.name != '' ? o.metadata.name : '(generated name)')[0]) + \
     (variables.subresource != '' ? ' (subresource ' + variables.subresource + ')' : '')";

/// The validation of mark `i`'s rules on the object or in a template (at `place`), whose rule
/// the variable `rule` holds: the module's line ([`line`]).
pub(super) fn entry_validation(
    place: Option<&str>,
    rule: &str,
    group: &Group,
    i: usize,
    around: &Around,
) -> Validation {
    let mark = &group.marks[i];
    let key = match place {
        None => mark_name(mark),
        Some(place) => format!("{} in {place}", mark_name(mark)),
    };
    let variable = format!("variables.{rule}");
    Validation {
        expression: format!("{variable} == ''"),
        message_expression: line(&quote(&key), &variable, group, i, around),
        mark: mark_name(mark),
        template: place.map(str::to_owned),
        rules: Rules::In(rule.to_owned()),
    }
}

/// CEL: the module's line for mark `i`'s rule, the CEL string `rule` (not `''`), the mark and
/// its place named by the CEL string `key`: the rule, the object and the owners it moves
/// between, or the owner of what a write keeps, then the reason ([`reasons`]).
pub(super) fn line(key: &str, rule: &str, group: &Group, i: usize, around: &Around) -> String {
    let mark = &group.marks[i];
    let (old, new) = (shown(mark, &group.old[i]), shown(mark, &group.new[i]));
    // A write of what an owner keeps names that owner (`Change::kept`): the stored one on a
    // DELETE; a move names both.
    let kept = format!("request.operation == 'DELETE' ? {old} : {new}");
    let reason = reasons::of_entry(group, i, around, rule);
    format!(
        "{key} + ': ' + {rule} + ' denied for ' + ({rule} == 'owner writes' ? request.operation + \
         ' of ' + {SUBJECT} + ', owned by ' + ({kept}) : {SUBJECT} + ' from ' + ({} ? {old} : \
         'none') + ' to ' + {new}) + [{reason}].map(r, r == '' ? '' : ': ' + r)[0]",
        group.old_present,
    )
}

/// The validation of one mark's rules in each template of a list at `place`, whose rules and
/// lines the variable `rules` holds ([`super::Rules::Each`]).
pub(super) fn each_validation(
    mark: &single_owner_policy::OwnerMark,
    place: &str,
    rules: &str,
) -> Validation {
    Validation {
        expression: format!("variables.{rules}.all(p, p[0] == '')"),
        message_expression: format!("variables.{rules}.filter(p, p[0] != '')[0][1]"),
        mark: mark_name(mark),
        template: Some(place.to_owned()),
        rules: Rules::Each(rules.to_owned()),
    }
}

/// How messages name a mark: `label appID`, `annotation meta.helm.sh/release-name`.
pub(super) fn mark_name(mark: &single_owner_policy::OwnerMark) -> String {
    format!("{} {}", field(mark.place).trim_end_matches('s'), mark.key)
}
