//! Reading the request in CEL: the variables every policy holds, each group of marks' claims read
//! once (the object's, each template's, an item of a list of templates in a comprehension), and
//! the paths to them, guarded so that nothing the API server sends makes an expression fail.

use single_owner_policy::template::{Place, TEMPLATES};
use single_owner_policy::{MarkPlace, Settings};

use super::claims::{Claim, Read};
use super::entries::{Around, Group};
use super::{Variable, offers};
use crate::conditions::{kind_test, quote, string_list};

/// The variables every setup reads: where the object is, its offers, what the request is.
pub(super) fn base_variables(settings: &Settings) -> Vec<Variable> {
    let offer = quote(&settings.offer_annotation);
    let annotations = |root: &str| meta_map(root, "annotations");
    let offer_of = |root: &str| {
        let map = annotations(root);
        format!("({offer} in {map} ? [{map}[{offer}]] : [])")
    };
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
                string_list(scaled_resources())
            ),
        ),
        (
            // `Sides::of`: CREATE and UPDATE of the object, a Binding's CREATE, an UPDATE
            // through a subresource whose body is the object (a `Scale` carries no mark); a
            // DELETE under `writes: Owner`.
            "judged",
            format!(
                "(request.operation == 'CREATE' && (variables.subresource == '' || \
                 variables.binding)) || (request.operation == 'UPDATE' && \
                 (variables.subresource == '' || !(request.kind.group == 'autoscaling' && \
                 request.kind.kind == 'Scale'))){}",
                match settings.judges_writes() {
                    true => " || request.operation == 'DELETE'",
                    false => "",
                }
            ),
        ),
        ("oldOffer", offer_of("oldObject")),
        ("newOffer", offer_of("object")),
        (
            "oldOfferWellFormed",
            format!(
                "size(variables.oldOffer) > 0 && {}",
                offers::is_well_formed("variables.oldOffer[0]")
            ),
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
pub(super) fn read_once(
    variables: &mut Vec<Variable>,
    name: &str,
    group: &Group,
    i: usize,
    around: &Around,
) -> (String, String) {
    push(variables, &format!("{name}Fit"), group.fit(i, around));
    let fit = format!("variables.{name}Fit");
    push(variables, &format!("{name}Set"), group.set(i, &fit, around));
    (fit, format!("variables.{name}Set"))
}

/// Appends a variable.
pub(super) fn push(variables: &mut Vec<Variable>, name: &str, expression: String) {
    variables.push(Variable {
        name: name.to_owned(),
        expression,
    });
}

/// The claims of every mark in the metadata of `old` and `new` (CEL for objects or `null`),
/// read once into variables named after `prefix`.
pub(super) fn group<'s>(
    settings: &'s Settings,
    variables: &mut Vec<Variable>,
    prefix: &str,
    old: &str,
    new: &str,
    old_present: &str,
) -> Group<'s> {
    let template = prefix != "object";
    let mut claims = |side: &str, root: &str| {
        let maps = [("Labels", "labels"), ("Annotations", "annotations")].map(|(name, field)| {
            let name = format!("{prefix}{side}{name}");
            push(variables, &name, meta_map(root, field));
            format!("variables.{name}")
        });
        let on = (!template).then_some(root);
        let read: Vec<Claim> = (settings.owner_marks.iter())
            .map(|mark| match mark.place {
                MarkPlace::Label => Claim::read(mark, &maps[0], on),
                MarkPlace::Annotation => Claim::read(mark, &maps[1], on),
            })
            .collect();
        (read.into_iter().zip(&settings.owner_marks).enumerate())
            .map(|(i, (claim, mark))| {
                let name = format!("{prefix}{side}{i}");
                let mut once = |what: &str, expression: String| {
                    push(variables, &format!("{name}{what}"), expression);
                    format!("variables.{name}{what}")
                };
                let claim = Claim {
                    value: once("v", claim.value),
                    part: claim.part.map(|part| once("p", part)),
                    malformed: claim.malformed.map(|malformed| once("m", malformed)),
                    read: None,
                };
                let read = Read {
                    none: once("None", claim.none()),
                    valid: once("Valid", claim.valid(mark)),
                    id: once("Id", claim.id(mark)),
                };
                Claim {
                    read: Some(read),
                    ..claim
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
        template,
    }
}

/// The object's claims, read once into variables named `object…`.
pub(super) fn object_group<'s>(settings: &'s Settings, variables: &mut Vec<Variable>) -> Group<'s> {
    group(
        settings,
        variables,
        "object",
        "oldObject",
        "object",
        "oldObject != null",
    )
}

/// The claims of one item of a list of templates, read once in a comprehension, where `old`
/// and `new` are its stored and new templates (CEL, `null` where absent): bound by one-element
/// lists (`[x].map(c, …)[0]`, each list of one type, as Kubernetes wants literals) — `ot` and
/// `nt` the templates; `m` their labels and annotations; `c` each mark's old value and part,
/// then its new ones; `d` each claim's owner id; `f` each claim's `none` and `valid`. Returns
/// the group and what binds them around a rule.
pub(super) fn group_inline<'s>(
    settings: &'s Settings,
    old: &str,
    new: &str,
    old_present: &str,
) -> (Group<'s>, impl Fn(&str) -> String + use<>) {
    let (mut claims, mut ids, mut flags) = (Vec::new(), Vec::new(), Vec::new());
    let mut side = |maps: [&str; 2]| -> Vec<Claim> {
        (settings.owner_marks.iter())
            .map(|mark| {
                let map = match mark.place {
                    MarkPlace::Label => maps[0],
                    MarkPlace::Annotation => maps[1],
                };
                let claim = Claim::read(mark, map, None);
                let mut at = |expression: String| {
                    claims.push(expression);
                    format!("c[{}]", claims.len() - 1)
                };
                let claim = Claim {
                    value: at(claim.value),
                    part: claim.part.map(&mut at),
                    malformed: claim.malformed,
                    read: None,
                };
                ids.push(claim.id(mark));
                flags.push(claim.none());
                flags.push(claim.valid(mark));
                let read = Read {
                    id: format!("d[{}]", ids.len() - 1),
                    none: format!("f[{}]", flags.len() - 2),
                    valid: format!("f[{}]", flags.len() - 1),
                };
                Claim {
                    read: Some(read),
                    ..claim
                }
            })
            .collect()
    };
    let old_claims = side(["m[0]", "m[1]"]);
    let new_claims = side(["m[2]", "m[3]"]);
    let group = Group {
        marks: &settings.owner_marks,
        old: old_claims,
        new: new_claims,
        old_present: old_present.to_owned(),
        template: true,
    };
    let maps = [
        meta_map("ot", "labels"),
        meta_map("ot", "annotations"),
        meta_map("nt", "labels"),
        meta_map("nt", "annotations"),
    ]
    .join(", ");
    let (claims, ids, flags) = (claims.join(", "), ids.join(", "), flags.join(", "));
    let (old, new) = (old.to_owned(), new.to_owned());
    let bind = move |rule: &str| {
        format!(
            "[{old}].map(ot, [{new}].map(nt, [[{maps}]].map(m, [[{claims}]].map(c, \
             [[{ids}]].map(d, [[{flags}]].map(f, {rule})[0])[0])[0])[0])[0])[0]"
        )
    };
    (group, bind)
}

/// Where a mark is kept.
pub(super) fn field(place: MarkPlace) -> &'static str {
    match place {
        MarkPlace::Label => "labels",
        MarkPlace::Annotation => "annotations",
    }
}

/// CEL: the metadata map `field` of `root` (an object or `null`), `{}` where it has none.
pub(super) fn meta_map(root: &str, field: &str) -> String {
    let map = path_or_null(root, &["metadata", field]);
    format!("({map} == null ? {{}} : {map})")
}

/// CEL: the value at `path` below `root`, `null` where a field on the way is missing or null.
pub(super) fn path_or_null(root: &str, path: &[&str]) -> String {
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
pub(super) fn guarded(kinds: &[(&str, &[&str])], value: &str) -> String {
    format!(
        "(variables.judged && variables.templated && ({}) ? {value} : null)",
        kind_test(kinds)
    )
}

/// CEL: the list `value` (or `null`) where the request is a write of a kind among `kinds`, `[]`
/// otherwise.
pub(super) fn guarded_list(kinds: &[(&str, &[&str])], value: &str) -> String {
    format!(
        "(variables.judged && variables.templated && ({}) && {value} != null ? {value} : [])",
        kind_test(kinds)
    )
}

pub(super) type Kinds = Vec<(&'static str, &'static [&'static str])>;

/// The places of one template, with the kinds that keep a template there.
pub(super) fn one_templates() -> Vec<(Vec<&'static str>, Kinds)> {
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
pub(super) fn each_templates() -> Vec<(
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
pub(super) fn scaled_resources() -> Vec<String> {
    (single_owner_policy::SCALED.iter())
        .map(|(_, resource, _, _)| resource.to_string())
        .collect()
}
