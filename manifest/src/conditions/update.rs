//! The UPDATE condition: a guarded mark or the offer differs between the sides, in the object's
//! metadata or in a workload's templates; under `writes: Owner`, also the stored object carries
//! a guarded mark (written through a subresource: when it changes what the subresource stores),
//! or a workload's controller reference (an unmarked child, judged by its chain).

use single_owner_policy::Settings;
use single_owner_policy::template::{Place, TEMPLATES};

use super::Keys;
use super::expr::{Expr, and, atom, or, quote, strings};
use super::marks::{
    METADATA, NEW, OLD, carries, controlled, kind_is, not_subresource, place_carries, present,
    select, targets, templates_carry, writes_an_autoscaler,
};
use single_owner_policy::{BINDING, DECLARING_SUBRESOURCES, PERSISTING, SCALED};

/// The condition, named: an UPDATE is sent when it changes a guarded mark or the offer, or
/// under `writes: Owner` when the stored object carries a guarded mark.
pub(super) fn condition(settings: &Settings, keys: &Keys) -> (&'static str, Expr) {
    let writes = settings.judges_writes();
    let mut update: Vec<Expr> = keys
        .maps(Some(&settings.offer_annotation))
        .into_iter()
        .map(|(map, keys)| map_differs(&[METADATA, map], &keys))
        .collect();
    match writes {
        false => {
            update.push(and([not_subresource(), templates_differ(keys)]));
            // With followed kinds, a repoint of an owned object is judged: its marks would
            // follow the new controller's (written or through a subresource that stores owner
            // references).
            if settings.follows_repoints() {
                let writes_it = or([not_subresource(), stores_a_change()]);
                let repoints = and([carries(OLD, keys, None), metadata_differs(false)]);
                update.push(and([writes_it, repoints]));
            }
        }
        // The stored object's mark, or its controller (an unmarked child is judged by its
        // chain), written or through a subresource that writes what its owner declared or
        // stores a change of its metadata; or a template on either side, on writes of the
        // object itself: a template that carries a guarded mark on neither side cannot change
        // one, so this sends every template change `templates_differ` would, in fewer
        // characters.
        true => {
            let declaring =
                or(DECLARING_SUBRESOURCES.map(|(resource, sub)| targets("", resource, sub)));
            let writes_it = or([not_subresource(), declaring, stores_a_change()]);
            let owned = or([carries(OLD, keys, None), controlled(OLD, settings)]);
            update.push(and([writes_it, owned]));
            let templates = or([templates_carry(OLD, keys), templates_carry(NEW, keys)]);
            update.push(and([not_subresource(), templates]));
            // A `scale` carries none of its target's marks: the policy reads the target. A
            // Binding's UPDATE, which the API server never sends, the policy judges as the
            // write of its Pod (it rewrites a Binding's CREATE so).
            let (resource, subresource) = BINDING;
            let read = (SCALED.iter())
                .map(|(group, resource, ..)| format!("{group}/{resource}/scale"))
                .chain([format!("/{resource}/{subresource}")]);
            update.push(and([atom("has(request.subResource)"), path_in(read)]));
            // An HPA's target, which the trusted autoscaler scales: the policy reads it.
            update.push(writes_an_autoscaler());
        }
    }
    let name = match writes {
        true => "update-changes-owner-mark-or-offer-or-keeps-owner",
        false => "update-changes-owner-mark-or-offer",
    };
    (
        name,
        or([atom("request.operation != 'UPDATE'"), or(update)]),
    )
}

/// Whether the request is a write through a subresource of [`PERSISTING`] that changes
/// metadata such a write may store: the four fields compared for every row, which sends a
/// little more than the policy judges (a Deployment's labels, a Pod's ownerReferences, which
/// their status strategies reset) in one comparison.
fn stores_a_change() -> Expr {
    and([
        atom("has(request.subResource)"),
        path_in(
            PERSISTING
                .iter()
                .map(|(group, resource, sub, _)| format!("{group}/{resource}/{sub}")),
        ),
        metadata_differs(true),
    ])
}

/// Whether the request's `group/resource/subresource` is one of `paths` (its `subResource` is
/// there).
fn path_in(paths: impl IntoIterator<Item = String>) -> Expr {
    Expr::Infix(
        "in",
        vec![
            atom(
                "(request.resource.group + '/' + request.resource.resource + '/' + \
                 request.subResource)",
            ),
            strings(paths),
        ],
    )
}

/// Whether the metadata a subresource may store differs between the sides: labels and
/// annotations as maps (`{}` where there are none) and finalizers as a list (`[]`), as the
/// policy reads them, unless `all` is false; ownerReferences as sent, there or not. Each
/// side's metadata is read once, bound by a one-element list (`{}` where a side has none).
fn metadata_differs(all: bool) -> Expr {
    let or_empty = |side: &str, field: &str, empty: &str| {
        format!("(has({side}.{field}) ? {side}.{field} : {empty})")
    };
    let differs = |field: &str, empty: &str| {
        atom(format!(
            "{} != {}",
            or_empty("before", field, empty),
            or_empty("after", field, empty)
        ))
    };
    let references = [
        atom("has(before.ownerReferences) != has(after.ownerReferences)"),
        and([
            atom("has(before.ownerReferences)"),
            atom("before.ownerReferences != after.ownerReferences"),
        ]),
    ];
    let fields = match all {
        true => vec![
            differs("labels", "{}"),
            differs("annotations", "{}"),
            differs("finalizers", "[]"),
        ],
        false => Vec::new(),
    };
    let differs = or(fields.into_iter().chain(references));
    let metadata = |side: &str| {
        Expr::List(vec![Expr::Cond(
            Box::new(and([
                atom(format!("{side} != null")),
                present(side, &[METADATA]),
            ])),
            Box::new(atom(select(side, &[METADATA]))),
            Box::new(atom("{}")),
        )])
    };
    Expr::Exists(
        Box::new(metadata(OLD)),
        "before".to_owned(),
        Box::new(Expr::Exists(
            Box::new(metadata(NEW)),
            "after".to_owned(),
            Box::new(differs),
        )),
    )
}

/// Whether a guarded mark of a template differs between the sides of an UPDATE of a workload:
/// for a list of templates, whether either side's list carries one.
pub(super) fn templates_differ(keys: &Keys) -> Expr {
    or(TEMPLATES.iter().map(|(kinds, places)| {
        let places = places.iter().map(|place| match *place {
            Place::One(path) => or(keys.maps(None).into_iter().map(|(map, keys)| {
                let at: Vec<&str> = path.iter().copied().chain([METADATA, map]).collect();
                map_differs(&at, &keys)
            })),
            Place::Each { .. } => or([
                place_carries(OLD, place, keys),
                place_carries(NEW, place, keys),
            ]),
        });
        and([kind_is(kinds), or(places)])
    }))
}

/// The map at `path` of `side`, or `{}` where `side` has none.
fn map_or_empty(side: &str, path: &[&str]) -> Expr {
    Expr::Cond(
        Box::new(and([atom(format!("{side} != null")), present(side, path)])),
        Box::new(atom(select(side, path))),
        Box::new(atom("{}")),
    )
}

/// Whether one of `keys` of the map at `path` (of the objects, or of a template in them) differs
/// between the sides: set on one side only, or to another value. Each side's map is read once,
/// bound by a one-element list, and is `{}` where a side has none (`null` on CREATE and DELETE).
pub(super) fn map_differs(path: &[&str], keys: &[&str]) -> Expr {
    let key = match keys {
        [key] => quote(key),
        _ => "key".to_owned(),
    };
    let differs = or([
        atom(format!("({key} in before) != ({key} in after)")),
        and([
            atom(format!("{key} in before")),
            atom(format!("before[{key}] != after[{key}]")),
        ]),
    ]);
    let differs = match keys {
        [_] => differs,
        keys => Expr::Exists(Box::new(strings(keys.iter())), key, Box::new(differs)),
    };
    Expr::Exists(
        Box::new(Expr::List(vec![map_or_empty(OLD, path)])),
        "before".to_owned(),
        Box::new(Expr::Exists(
            Box::new(Expr::List(vec![map_or_empty(NEW, path)])),
            "after".to_owned(),
            Box::new(differs),
        )),
    )
}
