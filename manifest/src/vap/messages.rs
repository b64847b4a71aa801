//! What a failed validation says: the module's first clause — the mark, the rule, the object
//! and the owners it moves between, or the owner of what a write keeps.

use super::claims::Claim;
use super::entries::Group;
use super::read::field;
use super::{Rules, Validation};
use crate::conditions::quote;

/// How messages name the object (`ObjectRef`): `<Kind> <namespace>/<name>`, the namespace left
/// out for a cluster-scoped object (a Namespace too), `(generated name)` for one not named yet,
/// then the subresource written.
pub(super) const SUBJECT: &str = "request.kind.kind + ' ' + (!variables.clusterScoped ? \
     variables.namespace + '/' : '') + (has(request.name) && request.name != '' ? request.name : \
     '(generated name)') + (variables.subresource != '' ? ' (subresource ' + \
     variables.subresource + ')' : '')";

/// The validation of one mark's rules on the object or in a template.
pub(super) fn entry_validation(
    mark: &single_owner_policy::OwnerMark,
    place: Option<&str>,
    rule: &str,
    group: &Group,
    i: usize,
) -> Validation {
    let shown = |claim: &Claim| {
        format!(
            "(({}) ? 'none' : '\"' + {} + '\"')",
            claim.none(),
            claim.id(mark)
        )
    };
    let key = match place {
        None => mark_name(mark),
        Some(place) => format!("{} in {place}", mark_name(mark)),
    };
    // A write of what an owner keeps names that owner (`Change::kept`): the stored one on a
    // DELETE; a move names both.
    let kept = format!(
        "request.operation == 'DELETE' ? {} : {}",
        shown(&group.old[i]),
        shown(&group.new[i])
    );
    Validation {
        expression: format!("variables.{rule} == ''"),
        message_expression: format!(
            "{} + ': ' + variables.{rule} + ' denied for ' + (variables.{rule} == 'owner writes' \
             ? request.operation + ' of ' + {SUBJECT} + ', owned by ' + ({kept}) : {SUBJECT} + \
             ' from ' + ({} ? {} : 'none') + ' to ' + {})",
            quote(&key),
            group.old_present,
            shown(&group.old[i]),
            shown(&group.new[i])
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
