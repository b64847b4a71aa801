//! What a failed validation says: the module's line — the mark, the rule, the object and the
//! owners it moves between, or the owner of what a write keeps, then the reason
//! ([`reasons`]). A mark in a list of templates names the list and the rule only.

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
/// the variable `rule` holds: the module's line, its reason ([`reasons`]) included.
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
    let (old, new) = (shown(mark, &group.old[i]), shown(mark, &group.new[i]));
    // A write of what an owner keeps names that owner (`Change::kept`): the stored one on a
    // DELETE; a move names both.
    let kept = format!("request.operation == 'DELETE' ? {old} : {new}");
    let variable = format!("variables.{rule}");
    let reason = reasons::of_entry(group, i, around, &variable);
    Validation {
        expression: format!("{variable} == ''"),
        message_expression: format!(
            "{} + ': ' + {variable} + ' denied for ' + ({variable} == 'owner writes' ? \
             request.operation + ' of ' + {SUBJECT} + ', owned by ' + ({kept}) : {SUBJECT} + \
             ' from ' + ({} ? {old} : 'none') + ' to ' + {new}) + [{reason}].map(r, r == '' ? \
             '' : ': ' + r)[0]",
            quote(&key),
            group.old_present,
        ),
        mark: mark_name(mark),
        template: place.map(str::to_owned),
        rules: Rules::In(rule.to_owned()),
    }
}

/// The validation of one mark's rules in each template of a list at `place`, whose rules the
/// variable `rules` holds.
pub(super) fn each_validation(
    mark: &single_owner_policy::OwnerMark,
    place: &str,
    rules: &str,
) -> Validation {
    Validation {
        expression: format!("variables.{rules}.all(r, r == '')"),
        message_expression: format!(
            "{} + ': ' + variables.{rules}.filter(r, r != '')[0] + ' denied for ' + {SUBJECT}",
            quote(&format!("{} in {place}", mark_name(mark))),
        ),
        mark: mark_name(mark),
        template: Some(place.to_owned()),
        rules: Rules::Each(rules.to_owned()),
    }
}

/// How messages name a mark: `label appID`, `annotation meta.helm.sh/release-name`.
pub(super) fn mark_name(mark: &single_owner_policy::OwnerMark) -> String {
    format!("{} {}", field(mark.place).trim_end_matches('s'), mark.key)
}
