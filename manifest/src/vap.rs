//! The webhook-free form: a ValidatingAdmissionPolicy that says what the module says, for the
//! settings whose rules need nothing but the request. The API server evaluates it in-process
//! (`admissionregistration.k8s.io/v1`, Kubernetes 1.30 and later), after the same match
//! conditions as the webhook ([`crate::conditions`]): trust of the control plane and of
//! `trustedWriters`, and the requests the policy could act on.
//!
//! **What it covers.** Every rule of a mark on the object and in each template (the templates of
//! `src/template.rs`, read in a comprehension where a kind keeps them in a list), in
//! `src/decision.rs`'s order: the binding rule, the transition table with the offer's part in
//! it and linked marks', the new owner's value and scope, one owner across marks, the
//! requester's identity, `writes: Owner` ([`entries`], [`requester`], [`writes`]); then the
//! offer rule ([`handoff`]). Exempt requesters get the same validations from a second policy
//! whose binding warns and audits instead of denying.
//!
//! **What it refuses** ([`refusals`]): every setting that needs a read the API server cannot
//! make (`clusterWriters`, `parentKinds`, `ownerLookup`, `writes: Owner`'s reaches) — unless
//! the split leaves the requests that read to the webhook ([`split`]). Each is named with
//! why. Under `stamp: true` it judges
//! the final object, after the MutatingAdmissionPolicy that stamps ([`stamp`]).
//!
//! Portable CEL and `matches` (RE2; the tests' cel-rust reads the same syntax); with
//! identities, also `split` and `replace` of Kubernetes' strings extension, and `split` for
//! Argo CD tracking ids. No optional types, no list extensions.

mod claims;
mod entries;
mod file;
mod handoff;
mod layout;
mod messages;
mod offer_messages;
mod offers;
mod read;
mod reasons;
mod refusals;
mod render;
mod requester;
pub mod split;
pub mod stamp;
mod trust;
mod writes;

use single_owner_policy::Settings;

use crate::conditions::{MatchCondition, match_conditions, quote};
use crate::{ResourceRule, judged_rules};
use entries::Around;
use messages::{each_validation, entry_validation};
use read::{
    base_variables, each_templates, group, group_inline, guarded, guarded_list, object_group,
    one_templates, path_or_null, push, read_once,
};

pub use file::{Lookups, manifest};
pub use refusals::refusals;
use render::exemption;
pub use render::{Exemption, yaml};

/// A named CEL expression the validations read as `variables.<name>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    pub name: String,
    pub expression: String,
}

/// One validation: true where the request passes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validation {
    pub expression: String,
    pub message_expression: String,
    /// The mark it judges, as messages name it (`label appID`, `annotation …`).
    pub mark: String,
    /// The template it judges, as the module names its place (`spec.template`), or the list of
    /// them (`spec.volumeClaimTemplates`); `None` for the object.
    pub template: Option<String>,
    /// The rule it judges.
    pub rules: Rules,
}

impl Validation {
    /// CEL: what a failed validation broke, in a few words (`label appID in spec.template:
    /// owner change`), for the audit annotation of a bypass.
    pub fn broken(&self) -> String {
        let key = match &self.template {
            None => self.mark.clone(),
            Some(place) => format!("{} in {place}", self.mark),
        };
        let rule = match &self.rules {
            Rules::Offer => "'offer: ' + variables.offer".to_owned(),
            Rules::Each(name) => format!("variables.{name}.filter(p, p[0] != '')[0][0]"),
            Rules::In(name) => format!("variables.{name}"),
        };
        format!("{} + {rule}", quote(&format!("{key}: ")))
    }
}

/// Where a failed validation's rule is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rules {
    /// The variable that holds the rule a mark breaks, `''` for none.
    In(String),
    /// The variable that holds, for each template of a list, the rule a mark breaks (`''` for
    /// none) and the line that says so.
    Each(String),
    /// The offer rule: the variable `offer` says what is wrong with the offer.
    Offer,
}

/// The ValidatingAdmissionPolicy's contents for a setup.
#[derive(Debug, Clone)]
pub struct Vap {
    /// `matchConstraints.resourceRules`: the webhook's [`judged_rules`].
    pub resource_rules: Vec<ResourceRule>,
    pub match_conditions: Vec<MatchCondition>,
    pub variables: Vec<Variable>,
    pub validations: Vec<Validation>,
    /// Who is exempt (`exemptions`); `None` when nobody is.
    pub exemption: Option<Exemption>,
    /// CEL: the request is the webhook's, deployed beside the policy ([`split`]); `None` when
    /// the policy judges every request.
    pub webhook: Option<String>,
}

impl Vap {
    /// The match conditions of the policy bound to deny: the exempt requesters left out.
    pub fn denying_conditions(&self) -> Vec<MatchCondition> {
        let mut conditions = self.conditions();
        conditions.extend(self.exemption.as_ref().map(|exemption| MatchCondition {
            name: "not-an-exempt-requester".to_owned(),
            expression: format!("!({})", exemption.condition),
        }));
        conditions
    }

    /// The webhook's match conditions, and with the split, the requests it leaves to the
    /// policy.
    fn conditions(&self) -> Vec<MatchCondition> {
        let mut conditions = self.match_conditions.clone();
        conditions.extend(self.webhook.as_ref().map(|webhook| MatchCondition {
            name: "not-for-the-webhook".to_owned(),
            expression: format!("!({webhook})"),
        }));
        conditions
    }

    /// The match conditions of the twin bound to warn and audit, which judges the exempt
    /// requesters alone; `None` without exemptions.
    pub fn warning_conditions(&self) -> Option<Vec<MatchCondition>> {
        let exemption = self.exemption.as_ref()?;
        let mut conditions = self.conditions();
        conditions.push(MatchCondition {
            name: "an-exempt-requester".to_owned(),
            expression: exemption.condition.clone(),
        });
        Some(conditions)
    }
}

/// Whether the policy judges every request, or shares them with the webhook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// The policy alone: settings that read other objects are refused.
    Alone,
    /// The policy and the webhook, deployed together: the requests on which the module might
    /// read another object are the webhook's ([`split`]).
    WithWebhook,
}

/// The policy for a setup, or every reason it cannot be generated.
pub fn vap(settings: &Settings, split: Split) -> Result<Vap, String> {
    let refused = refusals(settings, split);
    if !refused.is_empty() {
        return Err(format!(
            "these settings need the webhook (make manifest):\n  {}",
            refused.join("\n  ")
        ));
    }
    // Under `stamp: true`, the policy judges the final object, as the judging twin
    // (`stamp: false`) does, after the MutatingAdmissionPolicy ([`stamp`]).
    let judging;
    let settings = match settings.stamp {
        true => {
            judging = Settings {
                stamp: false,
                ..settings.clone()
            };
            &judging
        }
        false => settings,
    };
    let mut variables = base_variables(settings);
    variables.extend(requester::variables(settings));
    variables.extend(reasons::variables(settings));
    variables.extend(writes::variables(settings));
    let mut validations = Vec::new();
    let marks = settings.owner_marks.as_slice();
    let around = Around::of(settings);
    // The object's marks.
    let object = object_group(settings, &mut variables);
    if settings.judges_writes() {
        push(&mut variables, "objectKept", object.kept());
    }
    for i in 0..marks.len() {
        let name = format!("object{i}");
        let (fit, set) = read_once(&mut variables, &name, &object, i, &around);
        let rule = format!(
            "!variables.judged ? '' : ({})",
            object.rule(i, &around, &fit, &set)
        );
        push(&mut variables, &name, rule);
        validations.push(entry_validation(None, &name, &object, i, &around));
    }
    // The templates the object carries in one place.
    for (index, (path, kinds)) in one_templates().into_iter().enumerate() {
        let at = |root: &str| path_or_null(root, &path);
        let prefix = format!("template{index}");
        push(&mut variables, &prefix, guarded(&kinds, &at("object")));
        push(
            &mut variables,
            &format!("{prefix}Stored"),
            guarded(&kinds, &at("oldObject")),
        );
        let new = format!("variables.{prefix}");
        let old = format!("variables.{prefix}Stored");
        let present = format!("{old} != null");
        let template = group(settings, &mut variables, &prefix, &old, &new, &present);
        let place = path.join(".");
        for i in 0..marks.len() {
            let name = format!("{prefix}Rule{i}");
            let (fit, set) = read_once(&mut variables, &name, &template, i, &around);
            // A DELETE judges the stored template's claims (`writes: Owner`).
            let absent = match settings.judges_writes() {
                true => format!("{new} == null && request.operation != 'DELETE'"),
                false => format!("{new} == null"),
            };
            let rule = format!(
                "{absent} ? '' : ({})",
                template.rule(i, &around, &fit, &set)
            );
            push(&mut variables, &name, rule);
            validations.push(entry_validation(Some(&place), &name, &template, i, &around));
        }
    }
    // The templates an object keeps in each item of a list.
    for (index, (list_path, template_path, name_path, kinds)) in
        each_templates().into_iter().enumerate()
    {
        let items = |root: &str| path_or_null(root, &list_path);
        let prefix = format!("templates{index}");
        push(
            &mut variables,
            &prefix,
            guarded_list(&kinds, &items("object")),
        );
        push(
            &mut variables,
            &format!("{prefix}Stored"),
            guarded_list(&kinds, &items("oldObject")),
        );
        let named = |item: &str| {
            let name = path_or_null(item, &name_path);
            format!("({name} == null ? '' : {name})")
        };
        let template = |item: &str| path_or_null(item, &template_path);
        // Each new item with a template, beside the first stored one of its name that has one.
        let stored = format!(
            "variables.{prefix}Stored.filter(o, {} != null && {} == {})",
            template("o"),
            named("o"),
            named("t")
        );
        let place = list_path.join(".");
        // The module names a template of the list by its item's name (`spec.volumes[cache]`).
        let key = |mark| {
            format!(
                "{} + {} + {}",
                quote(&format!("{} in {place}[", messages::mark_name(mark))),
                named("t"),
                quote(&format!(
                    "]{}",
                    template_path
                        .iter()
                        .map(|p| format!(".{p}"))
                        .collect::<String>()
                )),
            )
        };
        let old = format!("(size(os) > 0 ? {} : null)", template("os[0]"));
        let (item, bind) = group_inline(settings, &old, &template("t"), "size(os) > 0");
        for (i, mark) in marks.iter().enumerate() {
            let name = format!("{prefix}Rule{i}");
            let fit = item.fit(i, &around);
            let rule = item.rule(i, &around, &fit, &item.set(i, &fit, &around));
            let line = messages::line(&key(mark), "r", &item, i, &around);
            // Each item's rule, and its line where it breaks one.
            let each = |rule: &str| {
                format!(
                    "variables.{prefix}.filter(t, {} != null).map(t, [{stored}].map(os, {})[0])",
                    template("t"),
                    bind(rule),
                )
            };
            let mut rules = each(&with_line(&rule, &line));
            // A DELETE judges each stored template's claims.
            if let Some((stored, bind, rule)) = deleted(&template("t"), i, &around) {
                let line = messages::line(&key(mark), "r", &stored, i, &around);
                rules = format!(
                    "request.operation == 'DELETE' ? variables.{prefix}Stored.filter(t, {} != \
                     null).map(t, {}) : {rules}",
                    template("t"),
                    bind(&with_line(&rule, &line)),
                );
            }
            push(&mut variables, &name, rules);
            validations.push(each_validation(mark, &place, &name));
        }
    }
    push(&mut variables, "offer", handoff::rule(&object, &around));
    validations.push(Validation {
        expression: "variables.offer == ''".to_owned(),
        message_expression: format!(
            "{} + ({})",
            quote(&format!("annotation {}: offer", settings.offer_annotation)),
            offer_messages::message(&object, &around)
        ),
        mark: format!("annotation {}", settings.offer_annotation),
        template: None,
        rules: Rules::Offer,
    });
    for variable in &mut variables {
        variable.expression = layout::lay_out(&variable.expression);
    }
    for validation in &mut validations {
        validation.expression = layout::lay_out(&validation.expression);
        validation.message_expression = layout::lay_out(&validation.message_expression);
    }
    // cel-go parses at most 100,000 code points: a rule of a list of templates grows with the
    // square of the marks, a message with the marks and the identities.
    let named = (variables.iter())
        .map(|v| (format!("the rule {}", v.name), &v.expression))
        .chain(
            (validations.iter())
                .map(|v| (format!("the message of {}", v.mark), &v.message_expression)),
        );
    for (name, expression) in named {
        if expression.chars().count() > MAX_EXPRESSION {
            return Err(format!(
                "ownerMarks: {} marks make {name} longer than the {MAX_EXPRESSION} characters \
                 the API server parses; deploy the webhook",
                marks.len(),
            ));
        }
    }
    let mut match_conditions = match_conditions(settings);
    match_conditions.extend(trust::condition(settings)?);
    Ok(Vap {
        resource_rules: (judged_rules(settings.judged_operations()).into_iter())
            .map(|(rule, _)| rule)
            .collect(),
        match_conditions,
        variables,
        validations,
        exemption: exemption(settings),
        webhook: match split {
            Split::Alone => None,
            Split::WithWebhook => split::condition(settings),
        },
    })
}

/// What a DELETE breaks in mark `i` of the stored template `template` of a list item, judged
/// on its own (`judged_on_the_object` holds no DELETE): the item's group, what binds its claims
/// around an expression, and the rule; `None` unless writes are judged.
#[allow(clippy::type_complexity)]
fn deleted<'s>(
    template: &str,
    i: usize,
    around: &Around<'s>,
) -> Option<(entries::Group<'s>, impl Fn(&str) -> String + use<>, String)> {
    let (item, bind) = group_inline(around.settings, template, "null", "true");
    let rule = item.deleted(i, around.settings)?;
    Some((item, bind, rule))
}

/// CEL: a list of a template's rule `rule` and, where it breaks one, the line `line` says of
/// it (reading the rule as `r`), `''` where it breaks none.
fn with_line(rule: &str, line: &str) -> String {
    format!("[{rule}].map(r, [r, r == '' ? '' : {line}])[0]")
}

/// The longest expression cel-go parses, in code points.
const MAX_EXPRESSION: usize = 100_000;
