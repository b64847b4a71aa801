//! The CREATE condition: the new object carries a guarded mark or the offer, or a workload's
//! template carries a guarded mark; with stamping, also an identity may bind the requester; a
//! `pods/binding` Binding carries a guarded mark or the offer (under `writes: Owner`, any label
//! or annotation).

use single_owner_policy::Settings;

use super::Keys;
use super::expr::{Expr, and, atom, or};
use super::marks::{
    ANNOTATIONS, LABELS, METADATA, NEW, carries, not_subresource, present, targets,
    templates_carry, writes_an_autoscaler,
};
use super::requester::{GROUPS, USERNAME, glob};
use single_owner_policy::BINDING;

/// The condition, named: a CREATE of an object is sent when the object or a template carries
/// a guarded mark or the offer, or when the policy may stamp it.
pub(super) fn condition(settings: &Settings, keys: &Keys) -> (&'static str, Expr) {
    let stamps = settings.stamps();
    let mut create = vec![
        carries(NEW, keys, Some(&settings.offer_annotation)),
        templates_carry(NEW, keys),
    ];
    if stamps {
        create.push(bound_requester(settings));
    }
    let name = match stamps {
        true => "create-carries-owner-mark-or-offer-or-may-be-stamped",
        false => "create-carries-owner-mark-or-offer",
    };
    let create = and([not_subresource(), or(create)]);
    // A Binding's labels and annotations, which the API server copies onto its Pod.
    let offer = Some(settings.offer_annotation.as_str());
    let (resource, subresource) = BINDING;
    let non_empty = |field: &str| {
        and([
            atom(format!("{NEW} != null")),
            present(NEW, &[METADATA, field]),
            atom(format!("size({NEW}.{METADATA}.{field}) > 0")),
        ])
    };
    let carried = match settings.judges_writes() {
        // Under `writes: Owner`, any label or annotation, a mark's or not: the policy judges
        // the others on the Pod.
        true => or([non_empty(LABELS), non_empty(ANNOTATIONS)]),
        false => carries(NEW, keys, offer),
    };
    let binding = and([targets("", resource, subresource), carried]);
    (
        name,
        or([atom("request.operation != 'CREATE'"), create, binding]
            .into_iter()
            // An HPA's target, which the trusted autoscaler scales: the policy reads it.
            .chain(settings.judges_writes().then(writes_an_autoscaler))),
    )
}

/// Whether an identity may bind the requester, by its user name or one of its groups: what
/// stamping needs (a requester acting for exactly one owner is bound by some identity). Each
/// `*` pattern is widened to its first literal as a prefix, its last as a suffix and the others
/// as substrings — never narrower than the policy's matching, so never a bypass.
fn bound_requester(settings: &Settings) -> Expr {
    let mut users: Vec<&str> = Vec::new();
    let mut groups: Vec<&str> = Vec::new();
    for identity in &settings.identities {
        for (patterns, list) in [
            (&identity.users, &mut users),
            (&identity.groups, &mut groups),
        ] {
            for pattern in patterns {
                if !list.contains(&pattern.as_str()) {
                    list.push(pattern);
                }
            }
        }
    }
    let mut bound = Vec::new();
    if !users.is_empty() {
        bound.push(and([
            atom("has(request.userInfo.username)"),
            or(users.iter().map(|pattern| glob(USERNAME, pattern))),
        ]));
    }
    if !groups.is_empty() {
        bound.push(and([
            atom("has(request.userInfo.groups)"),
            Expr::Exists(
                Box::new(atom(GROUPS)),
                "group".to_owned(),
                Box::new(or(groups.iter().map(|pattern| glob("group", pattern)))),
            ),
        ]));
    }
    and([atom("has(request.userInfo)"), or(bound)])
}
