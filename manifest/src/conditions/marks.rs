//! What an object or a template carries: the guarded marks and the offer in its metadata, read
//! null-safely on either side of a request, and the workload kinds whose templates are read.

use single_owner_policy::template::{Place, TEMPLATES};
use single_owner_policy::{CONTROLLERS, Settings};

use super::Keys;
use super::expr::{Expr, and, atom, or, quote, strings};

/// The new object (`null` on DELETE) and the stored one (`null` on CREATE).
pub(super) const NEW: &str = "object";
pub(super) const OLD: &str = "oldObject";

/// The fields of an object's metadata the policy reads.
pub(super) const METADATA: &str = "metadata";
pub(super) const LABELS: &str = "labels";
pub(super) const ANNOTATIONS: &str = "annotations";

/// `side` followed by the fields of `path`: `object.metadata.labels`.
pub(super) fn select(side: &str, path: &[&str]) -> String {
    std::iter::once(side)
        .chain(path.iter().copied())
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether `side` has every field of `path`, each tested with `has()`.
pub(super) fn present(side: &str, path: &[&str]) -> Expr {
    and((1..=path.len()).map(|end| atom(format!("has({})", select(side, &path[..end])))))
}

/// Whether the request targets no subresource: `subResource` is omitted when empty.
pub(super) fn not_subresource() -> Expr {
    atom("(!has(request.subResource) || request.subResource == '')")
}

/// Whether the request targets `subresource` of `resource` in API group `group` (`""`: core).
pub(super) fn targets(group: &str, resource: &str, subresource: &str) -> Expr {
    and([
        atom(format!("request.resource.group == {}", quote(group))),
        atom(format!("request.resource.resource == {}", quote(resource))),
        atom("has(request.subResource)"),
        atom(format!("request.subResource == {}", quote(subresource))),
    ])
}

/// Whether the request writes a HorizontalPodAutoscaler itself, whose `scaleTargetRef` the
/// policy judges under `writes: Owner` (it reads the target).
pub(super) fn writes_an_autoscaler() -> Expr {
    and([
        not_subresource(),
        atom("request.resource.group == 'autoscaling'"),
        atom("request.resource.resource == 'horizontalpodautoscalers'"),
    ])
}

/// Whether one of `keys` is in the map `map` (an expression): `'key' in map`, or for several
/// keys `[…].exists(key, key in map)`, which names the map once.
fn holds_any(map: &str, keys: &[&str]) -> Expr {
    match keys {
        [key] => atom(format!("{} in {map}", quote(key))),
        keys => Expr::Exists(
            Box::new(strings(keys.iter())),
            "key".to_owned(),
            Box::new(atom(format!("key in {map}"))),
        ),
    }
}

/// Whether the metadata at `path` of `base` (an object, or a template item) holds a guarded
/// key in one of its maps, or the annotation `extra`. `base` itself is not tested for null.
pub(super) fn metadata_holds(base: &str, path: &[&str], keys: &Keys, extra: Option<&str>) -> Expr {
    let metadata: Vec<&str> = path.iter().copied().chain([METADATA]).collect();
    let maps = keys.maps(extra).into_iter().map(|(map, keys)| {
        let at: Vec<&str> = metadata.iter().copied().chain([map]).collect();
        and([
            atom(format!("has({})", select(base, &at))),
            holds_any(&select(base, &at), &keys),
        ])
    });
    and([present(base, &metadata), or(maps)])
}

/// Whether `side` carries a guarded mark, or the annotation `extra` (the offer).
pub(super) fn carries(side: &str, keys: &Keys, extra: Option<&str>) -> Expr {
    and([
        atom(format!("{side} != null")),
        metadata_holds(side, &[], keys, extra),
    ])
}

/// Whether the request's object is one of `kinds`, by its group and kind.
pub(super) fn kind_is(kinds: &[(&str, &[&str])]) -> Expr {
    or(kinds.iter().map(|(group, kinds)| {
        let kind = match kinds {
            [kind] => atom(format!("request.kind.kind == {}", quote(kind))),
            kinds => atom(format!(
                "request.kind.kind in {}",
                strings(kinds.iter()).flat()
            )),
        };
        and([
            atom(format!("request.kind.group == {}", quote(group))),
            kind,
        ])
    }))
}

/// Whether `side` carries a guarded mark in a template at `place`.
pub(super) fn place_carries(side: &str, place: &Place, keys: &Keys) -> Expr {
    match *place {
        Place::One(path) => and([
            atom(format!("{side} != null")),
            metadata_holds(side, path, keys, None),
        ]),
        Place::Each {
            list,
            item,
            template,
            ..
        } => and([
            atom(format!("{side} != null")),
            present(side, list),
            Expr::Exists(
                Box::new(atom(select(side, list))),
                item.to_owned(),
                Box::new(metadata_holds(item, template, keys, None)),
            ),
        ]),
    }
}

/// Whether `side`, an object of a workload kind, carries a guarded mark in a template.
pub(super) fn templates_carry(side: &str, keys: &Keys) -> Expr {
    or(TEMPLATES.iter().map(|(kinds, places)| {
        and([
            kind_is(kinds),
            or(places.iter().map(|place| place_carries(side, place, keys))),
        ])
    }))
}

/// Whether `side` has a controller (an owner reference with `controller: true`) of one of
/// the kinds whose unmarked children the policy judges by their chain under `writes: Owner`:
/// Kubernetes' workloads ([`CONTROLLERS`]) and `parentKinds`, by kind alone (any group: more
/// than the policy follows, never less).
pub(super) fn controlled(side: &str, settings: &Settings) -> Expr {
    let mut kinds: Vec<&str> = CONTROLLERS.iter().map(|(_, kind)| *kind).collect();
    for parent in &settings.parent_kinds {
        if !kinds.contains(&parent.kind.as_str()) {
            kinds.push(&parent.kind);
        }
    }
    let references = [METADATA, "ownerReferences"];
    and([
        atom(format!("{side} != null")),
        present(side, &references),
        Expr::Exists(
            Box::new(atom(select(side, &references))),
            "reference".to_owned(),
            Box::new(and([
                atom("has(reference.controller)"),
                atom("reference.controller"),
                atom(format!(
                    "reference.kind in {}",
                    strings(kinds.iter()).flat()
                )),
            ])),
        ),
    ])
}
