//! The webhook-free form: a ValidatingAdmissionPolicy that says what the module says, for the
//! settings whose rules need nothing but the request. The API server evaluates it in-process
//! (`admissionregistration.k8s.io/v1`, Kubernetes 1.30 and later), after the same match
//! conditions as the webhook ([`crate::conditions`]): trust of the control plane and of
//! `trustedWriters`, and the requests the policy could act on.
//!
//! **What it covers.** Every rule of a mark on the object and in each template (the templates of
//! `src/template.rs`, read in a comprehension where a kind keeps them in a list), in
//! `src/decision.rs`'s order: the binding rule, the transition table with the offer's part in
//! it, the new owner's value and scope, one owner across marks ([`entries`]); then the offer
//! rule ([`offer_rule`]). Exempt requesters get the same validations from a second policy whose
//! binding warns and audits instead of denying.
//!
//! **What it refuses** ([`refusals`]): every setting that needs a read the API server cannot
//! make, or the requester's identity (identities, `writes: Owner`, `stamp`, `clusterWriters`,
//! `parentKinds`, `ownerLookup`), tracking ids (their split needs Kubernetes' string
//! extensions) and linked marks (`sameOwnerAs`). Each is named with why; the webhook covers
//! them.
//!
//! Only portable CEL and `matches` (RE2; the tests' cel-rust reads the same syntax): no
//! optional types, no string or list extensions.

mod claims;
mod entries;
mod offers;
mod render;
mod trust;

use single_owner_policy::template::{Place, TEMPLATES};
use single_owner_policy::{Format, MarkPlace, Settings};

use crate::conditions::{MatchCondition, match_conditions, quote};
use claims::{Claim, list};
use entries::{Around, Group};

pub use render::{exempt_condition, yaml};

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
            // A list of templates' rules.
            Rules::In(name) if name.starts_with("templates") => {
                format!("variables.{name}.filter(r, r != '')[0]")
            }
            Rules::In(name) => format!("variables.{name}"),
        };
        format!("{} + {rule}", quote(&format!("{key}: ")))
    }
}

/// Where a failed validation's rule is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rules {
    /// The variable that holds the rule a mark breaks (`''` for none) or, for a list of
    /// templates, the list of them.
    In(String),
    /// The offer rule: the variable `offer` says what is wrong with the offer.
    Offer,
}

/// A rule of `matchConstraints.resourceRules`: the requests the API server evaluates the policy
/// for, as the webhook's rules name them (`metadata.yml`, [`crate::rules_yaml`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRule {
    /// API groups, `*` for all.
    pub groups: Vec<&'static str>,
    /// `resource`, `resource/subresource`, `*` (every resource), `*/sub`.
    pub resources: Vec<String>,
    pub operations: Vec<&'static str>,
}

/// The webhook's rules without the audit scanner's: every resource's CREATE and UPDATE, the
/// subresources the policy judges, and a Binding's CREATE.
pub fn resource_rules() -> Vec<ResourceRule> {
    let subresources = (crate::SUBRESOURCES.iter())
        .map(|(resource, subresource)| format!("{resource}/{subresource}"))
        .collect();
    vec![
        ResourceRule {
            groups: vec!["*"],
            resources: vec!["*".to_owned()],
            operations: vec!["CREATE", "UPDATE"],
        },
        ResourceRule {
            groups: vec!["*"],
            resources: subresources,
            operations: vec!["UPDATE"],
        },
        ResourceRule {
            groups: vec![""],
            resources: vec!["pods/binding".to_owned()],
            operations: vec!["CREATE"],
        },
    ]
}

/// The ValidatingAdmissionPolicy's contents for a setup.
#[derive(Debug, Clone)]
pub struct Vap {
    pub resource_rules: Vec<ResourceRule>,
    pub match_conditions: Vec<MatchCondition>,
    pub variables: Vec<Variable>,
    pub validations: Vec<Validation>,
}

/// What the settings ask that the policy in the API server cannot do, each with why; empty
/// when the whole policy fits.
pub fn refusals(settings: &Settings) -> Vec<String> {
    let mut refused = Vec::new();
    let mut refuse = |field: &str, why: &str| refused.push(format!("{field}: {why}"));
    if !settings.identities.is_empty() {
        refuse(
            "identities",
            "not generated yet: who acts for which owner is judged by the webhook only",
        );
    }
    if settings.stamp || settings.stamp_only {
        refuse(
            "stamp",
            "not generated yet: stamping needs a MutatingAdmissionPolicy",
        );
    }
    if !settings.cluster_writers.is_empty() {
        refuse(
            "clusterWriters",
            "writers bound by name need identities, and follow their parents, which the API \
             server cannot read (kubernetes/kubernetes#133631)",
        );
    }
    if !settings.parent_kinds.is_empty() {
        refuse(
            "parentKinds",
            "a child inherits from its controller, which the API server cannot read \
             (kubernetes/kubernetes#133631)",
        );
    }
    if let Err(why) = trust::condition(settings) {
        let (field, why) = why.split_once(": ").unwrap_or(("trustedWriters", &why));
        refuse(field, why);
    }
    for (index, mark) in settings.owner_marks.iter().enumerate() {
        let field = format!("ownerMarks[{index}]");
        if mark.owner_lookup.is_some() {
            refuse(
                &format!("{field}.ownerLookup"),
                "a leftover is found by reading its owner, which the API server cannot \
                 (kubernetes/kubernetes#133631); generate --without-lookups for a policy that \
                 never lets another owner adopt a leftover, or deploy the webhook",
            );
        }
        if mark.format == Format::ArgoCdTrackingId {
            refuse(
                &format!("{field}.format"),
                "a tracking id is split with Kubernetes' string extensions, which the tests' CEL \
                 engine does not implement faithfully; deploy the webhook",
            );
        }
        if !mark.same_owner_as.is_empty() {
            refuse(
                &format!("{field}.sameOwnerAs"),
                "not generated yet: linked marks are judged by the webhook only",
            );
        }
    }
    refused
}

/// The ValidatingAdmissionPolicy `name` and its binding, in `mode`, for the settings file whose
/// text is `settings_yaml` (with exemptions, their twin too), or every reason it cannot be
/// generated.
pub fn manifest(
    name: &str,
    mode: crate::Mode,
    settings_yaml: &str,
    lookups: Lookups,
) -> Result<String, String> {
    let mut settings = crate::read_settings(settings_yaml)?;
    let mut header = HEADER.to_owned();
    if lookups == Lookups::Drop
        && settings
            .owner_marks
            .iter()
            .any(|m| m.owner_lookup.is_some())
    {
        for mark in &mut settings.owner_marks {
            mark.owner_lookup = None;
        }
        header.push_str(WITHOUT_LOOKUPS);
    }
    let vap = vap(&settings)?;
    Ok(format!("{header}{}", yaml(name, mode, &settings, &vap)))
}

/// What to do with `ownerLookup`, which the API server cannot make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookups {
    /// Refuse the settings: the webhook finds leftovers, the policy cannot.
    Refuse,
    /// Generate the policy without them: no owner counts as gone, so a leftover stays its
    /// owner's until an exempt requester (or the webhook form) moves it.
    Drop,
}

/// What every generated policy says first.
const HEADER: &str = "\
# Generated from the settings by `kubectl-single_owner vap` (make vap); see docs/vap.md. The API
# server evaluates it in-process: no webhook, no policy-server. It says what the module says, for
# settings that need nothing but the request.
";

/// What a policy generated without the owner lookups says first.
const WITHOUT_LOOKUPS: &str = "\
# Generated without the settings' ownerLookup (--without-lookups): no owner counts as gone, so an
# object left by an uninstalled owner stays that owner's until an exempt requester moves it.
";

/// The policy for a setup, or every reason it cannot be generated.
pub fn vap(settings: &Settings) -> Result<Vap, String> {
    let refused = refusals(settings);
    if !refused.is_empty() {
        return Err(format!(
            "these settings need the webhook (make manifest):\n  {}",
            refused.join("\n  ")
        ));
    }
    let mut variables = base_variables(settings);
    let mut validations = Vec::new();
    let marks = settings.owner_marks.as_slice();
    let around = Around {
        settings,
        offer: "variables.oldOffer",
        offer_well_formed: "variables.oldOfferWellFormed",
        namespace: "variables.namespace",
        cluster: "variables.clusterScoped",
        binding: "variables.binding",
    };
    // The object's marks.
    let object = group(
        settings,
        &mut variables,
        "object",
        "oldObject",
        "object",
        "oldObject != null",
    );
    for (i, mark) in marks.iter().enumerate() {
        let name = format!("object{i}");
        let (fit, set) = read_once(&mut variables, &name, &object, i, &around);
        let rule = format!(
            "!variables.judged ? '' : ({})",
            object.rule(i, &around, &fit, &set)
        );
        push(&mut variables, &name, rule);
        validations.push(entry_validation(mark, None, &name, &object, i));
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
        for (i, mark) in marks.iter().enumerate() {
            let name = format!("{prefix}Rule{i}");
            let (fit, set) = read_once(&mut variables, &name, &template, i, &around);
            let rule = format!(
                "{new} == null ? '' : ({})",
                template.rule(i, &around, &fit, &set)
            );
            push(&mut variables, &name, rule);
            validations.push(entry_validation(mark, Some(&place), &name, &template, i));
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
        let old = format!("(size(os) > 0 ? {} : null)", template("os[0]"));
        let (item, claims) = group_inline(settings, &old, &template("t"), "size(os) > 0");
        for (i, mark) in marks.iter().enumerate() {
            let name = format!("{prefix}Rule{i}");
            let rule = format!(
                "variables.{prefix}.filter(t, {} != null).map(t, [{stored}].map(os, [{claims}].map(c, {})[0])[0])",
                template("t"),
                {
                    let fit = item.fit(i, &around);
                    item.rule(i, &around, &fit, &item.set(i, &fit))
                }
            );
            push(&mut variables, &name, rule);
            validations.push(Validation {
                expression: format!("variables.{name}.all(r, r == '')"),
                message_expression: format!(
                    "{} + ': ' + variables.{name}.filter(r, r != '')[0] + ' denied for ' + {}",
                    quote(&format!("{} in {place}", mark_name(mark))),
                    SUBJECT
                ),
                mark: mark_name(mark),
                template: Some(place.clone()),
                rules: Rules::In(name),
            });
        }
    }
    push(
        &mut variables,
        "offer",
        offer_rule(settings, &object, &around),
    );
    validations.push(Validation {
        expression: "variables.offer == ''".to_owned(),
        message_expression: format!(
            "{} + ': offer denied for ' + {SUBJECT} + ': ' + variables.offer",
            quote(&format!("annotation {}", settings.offer_annotation))
        ),
        mark: format!("annotation {}", settings.offer_annotation),
        template: None,
        rules: Rules::Offer,
    });
    // cel-go parses at most 100,000 code points: a rule of a list of templates grows with the
    // square of the marks.
    if let Some(long) = (variables.iter()).find(|v| v.expression.chars().count() > MAX_EXPRESSION) {
        return Err(format!(
            "ownerMarks: {} marks make the rule {} longer than the {MAX_EXPRESSION} characters \
             the API server parses; deploy the webhook",
            marks.len(),
            long.name
        ));
    }
    let mut match_conditions = match_conditions(settings);
    match_conditions.extend(trust::condition(settings)?);
    Ok(Vap {
        resource_rules: resource_rules(),
        match_conditions,
        variables,
        validations,
    })
}

/// The longest expression cel-go parses, in code points.
const MAX_EXPRESSION: usize = 100_000;

/// How messages name the object: `<Kind> <namespace>/<name>`.
const SUBJECT: &str = "request.kind.kind + ' ' + (variables.namespace != '' ? \
     variables.namespace + '/' : '') + (has(request.name) ? request.name : '')";

/// The variables every setup reads: where the object is, its offers, what the request is.
fn base_variables(settings: &Settings) -> Vec<Variable> {
    let offer = quote(&settings.offer_annotation);
    let annotations = |root: &str| meta_map(root, "annotations");
    let offer_of = |root: &str| {
        let map = annotations(root);
        format!("({offer} in {map} ? [{map}[{offer}]] : [])")
    };
    let well_formed = quote(&offers::well_formed());
    let sub = "(has(request.subResource) ? request.subResource : '')";
    let vars = [
        (
            "namespace",
            "has(request.namespace) ? request.namespace : ''".to_owned(),
        ),
        (
            "clusterScoped",
            "variables.namespace == '' || (request.kind.group == '' && request.kind.kind == 'Namespace')"
                .to_owned(),
        ),
        ("subresource", sub.to_owned()),
        (
            "binding",
            "request.operation == 'CREATE' && request.resource.group == '' && \
             request.resource.resource == 'pods' && variables.subresource == 'binding'"
                .to_owned(),
        ),
        (
            // Templates are read on writes of the object itself (`writes_the_object`).
            "templated",
            format!(
                "variables.subresource == '' || (variables.subresource == 'scale' && \
                 request.resource.resource in {} && !(request.kind.group == 'autoscaling' && \
                 request.kind.kind == 'Scale')) || (request.operation == 'UPDATE' && \
                 request.resource.group == '' && request.resource.resource == 'pods' && \
                 variables.subresource == 'binding')",
                list(&scaled_resources())
            ),
        ),
        (
            // `Sides::of`: CREATE and UPDATE of the object, a Binding's CREATE, an UPDATE
            // through a subresource whose body is the object (a `Scale` carries no mark).
            "judged",
            "(request.operation == 'CREATE' && (variables.subresource == '' || \
             variables.binding)) || (request.operation == 'UPDATE' && \
             (variables.subresource == '' || !(request.kind.group == 'autoscaling' && \
             request.kind.kind == 'Scale')))"
                .to_owned(),
        ),
        ("oldOffer", offer_of("oldObject")),
        ("newOffer", offer_of("object")),
        (
            "oldOfferWellFormed",
            format!("size(variables.oldOffer) > 0 && variables.oldOffer[0].matches({well_formed})"),
        ),
    ];
    vars.into_iter()
        .map(|(name, expression)| Variable {
            name: name.to_owned(),
            expression,
        })
        .collect()
}

/// Reads a mark's fit and set rules once, as the variables `<name>Fit` and `<name>Set`.
fn read_once(
    variables: &mut Vec<Variable>,
    name: &str,
    group: &Group,
    i: usize,
    around: &Around,
) -> (String, String) {
    push(variables, &format!("{name}Fit"), group.fit(i, around));
    let fit = format!("variables.{name}Fit");
    push(variables, &format!("{name}Set"), group.set(i, &fit));
    (fit, format!("variables.{name}Set"))
}

/// Appends a variable.
fn push(variables: &mut Vec<Variable>, name: &str, expression: String) {
    variables.push(Variable {
        name: name.to_owned(),
        expression,
    });
}

/// The claims of every mark in the metadata of `old` and `new` (CEL for objects or `null`),
/// read once into variables named after `prefix`.
fn group<'s>(
    settings: &'s Settings,
    variables: &mut Vec<Variable>,
    prefix: &str,
    old: &str,
    new: &str,
    old_present: &str,
) -> Group<'s> {
    let mut claims = |side: &str, root: &str| {
        let maps = [("Labels", "labels"), ("Annotations", "annotations")].map(|(name, field)| {
            let name = format!("{prefix}{side}{name}");
            push(variables, &name, meta_map(root, field));
            format!("variables.{name}")
        });
        let read: Vec<Claim> = (settings.owner_marks.iter())
            .map(|mark| match mark.place {
                MarkPlace::Label => Claim::read(mark, &maps[0]),
                MarkPlace::Annotation => Claim::read(mark, &maps[1]),
            })
            .collect();
        (read.into_iter().enumerate())
            .map(|(i, claim)| {
                let name = format!("{prefix}{side}{i}");
                push(variables, &format!("{name}v"), claim.value);
                let part = claim.part.map(|part| {
                    push(variables, &format!("{name}p"), part);
                    format!("variables.{name}p")
                });
                Claim {
                    value: format!("variables.{name}v"),
                    part,
                }
            })
            .collect()
    };
    let old = claims("old", old);
    let new = claims("new", new);
    Group {
        marks: &settings.owner_marks,
        old,
        new,
        old_present: old_present.to_owned(),
    }
}

/// The claims of one item of a list of templates, read once in a comprehension: `c`, a list of
/// each mark's old value and part, then its new ones (binding `[claims].map(c, …)`).
fn group_inline<'s>(
    settings: &'s Settings,
    old: &str,
    new: &str,
    old_present: &str,
) -> (Group<'s>, String) {
    let mut read = Vec::new();
    let mut side = |root: &str| -> Vec<Claim> {
        (settings.owner_marks.iter())
            .map(|mark| {
                let map = meta_map(root, field(mark.place));
                let claim = Claim::read(mark, &map);
                let mut at = |expression: String| {
                    read.push(expression);
                    format!("c[{}]", read.len() - 1)
                };
                let value = at(claim.value);
                let part = claim.part.map(&mut at);
                Claim { value, part }
            })
            .collect()
    };
    let old = side(old);
    let new = side(new);
    let group = Group {
        marks: &settings.owner_marks,
        old,
        new,
        old_present: old_present.to_owned(),
    };
    (group, format!("[{}]", read.join(", ")))
}

/// Where a mark is kept.
fn field(place: MarkPlace) -> &'static str {
    match place {
        MarkPlace::Label => "labels",
        MarkPlace::Annotation => "annotations",
    }
}

/// The validation of one mark's rules on the object or in a template.
fn entry_validation(
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
    Validation {
        expression: format!("variables.{rule} == ''"),
        message_expression: format!(
            "{} + ': ' + variables.{rule} + ' denied for ' + {SUBJECT} + ' from ' + \
             ({} ? {} : 'none') + ' to ' + {}",
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

/// How messages name a mark: `label appID`, `annotation meta.helm.sh/release-name`.
fn mark_name(mark: &single_owner_policy::OwnerMark) -> String {
    format!("{} {}", field(mark.place).trim_end_matches('s'), mark.key)
}

/// CEL: the metadata map `field` of `root` (an object or `null`), `{}` where it has none.
fn meta_map(root: &str, field: &str) -> String {
    let map = path_or_null(root, &["metadata", field]);
    format!("({map} == null ? {{}} : {map})")
}

/// CEL: the value at `path` below `root`, `null` where a field on the way is missing or null.
fn path_or_null(root: &str, path: &[&str]) -> String {
    let mut guards = vec![format!("{root} != null")];
    let mut at = root.to_owned();
    for key in path {
        guards.push(format!("has({at}.{key})"));
        at = format!("{at}.{key}");
        guards.push(format!("{at} != null"));
    }
    if path.is_empty() {
        return root.to_owned();
    }
    format!("({} ? {at} : null)", guards.join(" && "))
}

/// CEL: `value` where the request is a write of a kind among `kinds` that reads templates.
fn guarded(kinds: &[(&str, &[&str])], value: &str) -> String {
    format!(
        "(variables.judged && variables.templated && ({}) ? {value} : null)",
        kind_is(kinds)
    )
}

/// CEL: the list `value` (or `null`) where the request is a write of a kind among `kinds`, `[]`
/// otherwise.
fn guarded_list(kinds: &[(&str, &[&str])], value: &str) -> String {
    format!(
        "(variables.judged && variables.templated && ({}) && {value} != null ? {value} : [])",
        kind_is(kinds)
    )
}

fn kind_is(kinds: &[(&str, &[&str])]) -> String {
    claims::or(kinds.iter().map(|(group, kinds)| {
        let kinds: Vec<String> = kinds.iter().map(|kind| kind.to_string()).collect();
        format!(
            "(request.kind.group == {} && request.kind.kind in {})",
            quote(group),
            list(&kinds)
        )
    }))
}

type Kinds = Vec<(&'static str, &'static [&'static str])>;

/// The places of one template, with the kinds that keep a template there.
fn one_templates() -> Vec<(Vec<&'static str>, Kinds)> {
    let mut places: Vec<(Vec<&'static str>, Kinds)> = Vec::new();
    for (kinds, at) in TEMPLATES.iter() {
        for place in at.iter() {
            if let Place::One(path) = place {
                places.push((path.to_vec(), kinds.to_vec()));
            }
        }
    }
    places
}

/// The lists of templates: the list's path, the template's and the name's in an item, and the
/// kinds.
#[allow(clippy::type_complexity)]
fn each_templates() -> Vec<(
    Vec<&'static str>,
    Vec<&'static str>,
    Vec<&'static str>,
    Kinds,
)> {
    let mut places = Vec::new();
    for (kinds, at) in TEMPLATES.iter() {
        for place in at.iter() {
            if let Place::Each {
                list,
                template,
                name,
                ..
            } = place
            {
                places.push((
                    list.to_vec(),
                    template.to_vec(),
                    name.to_vec(),
                    kinds.to_vec(),
                ));
            }
        }
    }
    places
}

/// The resources whose `scale` a write of the object reads templates through.
fn scaled_resources() -> Vec<String> {
    (single_owner_policy::SCALED.iter())
        .map(|(_, resource, _, _)| resource.to_string())
        .collect()
}

/// The offer rule (`handoff::rule` without identities, which read no requester): `''`, or
/// what is wrong with the offer.
fn offer_rule(settings: &Settings, object: &Group, around: &Around) -> String {
    let _ = settings;
    offers::rule(object, around)
}
