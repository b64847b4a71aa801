//! Stamping as a MutatingAdmissionPolicy (`stamp: true`): on a CREATE, the one owner the
//! requester acts for is stamped with the first mark that reads it as a valid owner in the
//! object's scope, unless the object carries an owner mark already; on any write, an offer
//! whose mark moved is removed (`Mutation::of`). The ValidatingAdmissionPolicy of the judging
//! twin (`stamp: false`) then judges the final object, as the Kubewarden pair does.
//!
//! The one owner (`Acting::single_owner`): the owner patterns of every identity that binds the
//! requester with `Own`, templates filled in, are all one text without `*`. It is split into a
//! mark's value and companion as `Claim::of_owner` does, with the strings extension's
//! `split(sep, 2)`.

use single_owner_policy::{Access, Format, Settings};

use super::claims::{Claim, companion};
use super::entries::{Around, Group};
use super::read::{base_variables, object_group};
use super::{Variable, handoff, requester, trust};
use crate::conditions::{MatchCondition, match_conditions, quote};
use crate::{ResourceRule, judged_rules};

/// The MutatingAdmissionPolicy's contents.
#[derive(Debug, Clone)]
pub struct Stamping {
    pub resource_rules: Vec<ResourceRule>,
    pub match_conditions: Vec<MatchCondition>,
    pub variables: Vec<Variable>,
    /// CEL: the JSON patch, a list of `JSONPatch`.
    pub patch: String,
}

/// The MutatingAdmissionPolicy of settings that stamp, as the stamping twin (`stampOnly:
/// true`) does; `None` for settings that do not.
pub fn stamping(settings: &Settings) -> Result<Option<Stamping>, String> {
    if !settings.stamp {
        return Ok(None);
    }
    let mut twin = settings.clone();
    twin.stamp_only = true;
    let settings = &twin;
    let mut variables = base_variables(settings);
    variables.extend(requester::variables(settings));
    let object = object_group(settings, &mut variables);
    let around = Around::of(settings);
    let patch = self::variables(settings, &object, &around, &mut variables);
    for variable in &mut variables {
        variable.expression = super::layout::lay_out(&variable.expression);
    }
    let mut match_conditions = match_conditions(settings);
    match_conditions.extend(trust::condition(settings)?);
    Ok(Some(Stamping {
        resource_rules: (judged_rules(settings.judged_operations()).into_iter())
            .map(|(rule, _)| rule)
            .collect(),
        match_conditions,
        variables,
        patch: super::layout::lay_out(&patch),
    }))
}

/// The variables that say what to change, then the patch, as CEL. `object` is the object's
/// group of claims, read into `variables` already.
fn variables(
    settings: &Settings,
    object: &Group,
    around: &Around,
    variables: &mut Vec<Variable>,
) -> String {
    let mut push = |name: &str, expression: String| {
        variables.push(Variable {
            name: name.to_owned(),
            expression,
        })
    };
    let owners: Vec<String> = (settings.identities.iter().enumerate())
        .filter(|(_, identity)| identity.level() == Access::Own)
        .map(|(k, identity)| {
            let patterns: Vec<String> = (identity.owners.iter())
                .map(|pattern| requester::filled(pattern))
                .collect();
            format!("(variables.binds{k} ? {} : [])", patterns.join(" + "))
        })
        .collect();
    push("ownPatterns", or_empty_list(&owners));
    let unmarked = (0..object.marks.len())
        .map(|i| object.new[i].none())
        .collect::<Vec<_>>()
        .join(" && ");
    let unmarked = if unmarked.is_empty() {
        "true".to_owned()
    } else {
        unmarked
    };
    push(
        "stampOwner",
        format!(
            "request.operation == 'CREATE' && variables.subresource == '' && \
             size(variables.ownPatterns) > 0 && variables.ownPatterns.all(p, p == \
             variables.ownPatterns[0]) && !variables.ownPatterns[0].contains('*') && ({unmarked}) \
             ? variables.ownPatterns[0] : ''"
        ),
    );
    // Each mark's stamp, `null` where it cannot read the owner in the object's scope.
    let mut stamps = Vec::new();
    for (i, mark) in object.marks.iter().enumerate() {
        if mark.format == Format::ArgoCdTrackingId {
            continue;
        }
        let owner = "variables.stampOwner";
        let (claim, values) = match (companion(mark), mark.namespace_key.is_some()) {
            (None, _) => (
                Claim {
                    value: format!("[{owner}]"),
                    part: None,
                    malformed: None,
                    read: None,
                },
                format!("{{{}: {owner}}}", quote(&mark.key)),
            ),
            (Some(companion), pair) => {
                let parts = format!("{owner}.split({}, 2)", quote(if pair { "/" } else { "." }));
                (
                    Claim {
                        value: format!("[{parts}[size({parts}) - 1]]"),
                        part: Some(format!("(size({parts}) == 2 ? [{parts}[0]] : [])")),
                        malformed: None,
                        read: None,
                    },
                    format!(
                        "{{{}: {parts}[1], {}: {parts}[0]}}",
                        quote(&mark.key),
                        quote(companion)
                    ),
                )
            }
        };
        let fit = claim.fit(mark, around.namespace, around.cluster);
        let name = format!("stamp{i}");
        push(
            &name,
            format!("{owner} == '' ? null : ({fit}) == '' ? {values} : null"),
        );
        stamps.push((mark.place, format!("variables.{name}")));
    }
    // The first mark that stamps decides where.
    for (place, field) in [
        (single_owner_policy::MarkPlace::Label, "stampLabels"),
        (
            single_owner_policy::MarkPlace::Annotation,
            "stampAnnotations",
        ),
    ] {
        let mut chosen = "{}".to_owned();
        for (at, stamp) in stamps.iter().rev() {
            let then = if *at == place { stamp.as_str() } else { "{}" };
            chosen = format!("{stamp} != null ? {then} : ({chosen})");
        }
        push(field, chosen);
    }
    push("consumeOffer", handoff::consumed(object));
    let offer = quote(&settings.offer_annotation);
    let add = |map: &str, field: &str| {
        format!(
            "(size(variables.{map}) == 0 ? [] : (has(object.metadata.{field}) ? [] : \
             [JSONPatch{{op: 'add', path: '/metadata/{field}', value: {{}}}}]) + \
             variables.{map}.map(k, JSONPatch{{op: 'add', path: '/metadata/{field}/' + \
             jsonpatch.escapeKey(k), value: variables.{map}[k]}}))"
        )
    };
    format!(
        "{} + {} + (variables.consumeOffer ? [JSONPatch{{op: 'remove', path: \
         '/metadata/annotations/' + jsonpatch.escapeKey({offer})}}] : [])",
        add("stampLabels", "labels"),
        add("stampAnnotations", "annotations")
    )
}

/// CEL: the lists joined, `[]` for none.
fn or_empty_list(lists: &[String]) -> String {
    match lists.is_empty() {
        true => "[]".to_owned(),
        false => lists.join(" + "),
    }
}
