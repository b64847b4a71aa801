//! The split: settings whose rules read other objects are judged by the policy in the API
//! server and by the webhook together, each on its own requests. One condition says which
//! requests the webhook judges: every one on which the module might read another object, and
//! every one whose rule the policy does not generate. The policy leaves those out of its match
//! conditions; the webhook's ClusterAdmissionPolicy adds it to its own. Each request is judged
//! by exactly one of them, as the module would judge it: the webhook is the module, and the
//! proof checks that the module reads nothing on any request the condition leaves to the
//! policy (`manifest/tests/vap.rs`).
//!
//! | the module may read | the requests the webhook judges |
//! |---|---|
//! | under `writes: Owner`: a `scale`'s target, a Binding's Pod, a status writer's stored metadata (`src/scale.rs`, `src/binding.rs`) | every write through a subresource |
//! | under `writes: Owner`: an HPA's target (`src/autoscaler.rs`) | an HPA's CREATE and UPDATE |
//! | under `writes: Owner`: the controllers of an unmarked child (`src/children.rs`) | an UPDATE or DELETE of an object with an owner reference to a workload kind or a kind of `parentKinds` |
//! | `parentKinds` (and `clusterWriters`' kinds): the object's controller (`src/derivation.rs`) | a write of an object with an owner reference to a kind of `parentKinds` |
//! | `ownerLookup`: the stored owner of a mark a denied request moves (`src/leftover.rs`) | an UPDATE that moves the stored owner of a mark with `ownerLookup`, on the object or in a template (in a list of templates: an UPDATE of one that carries such a mark) |
//! | — (not generated: the grants of `changes` and `access: InjectCA`) | a request by a user or group an identity with grants names |

use single_owner_policy::{Access, CONTROLLERS, Format, MarkPlace, OwnerMark, Settings};

use super::claims::{Claim, companion, or};
use super::read::{each_templates, field, meta_map, one_templates, path_or_null};
use crate::conditions::{kind_test, string_list, widened_glob};

/// CEL: the request is the webhook's to judge; `None` when the policy judges every request.
pub fn condition(settings: &Settings) -> Option<String> {
    let mut parts = Vec::new();
    let mut kinds: Vec<&str> = (settings.parent_kinds.iter())
        .map(|kind| kind.kind.as_str())
        .collect();
    if settings.judges_writes() {
        parts.push("has(request.subResource) && request.subResource != ''".to_owned());
        parts.push(
            "request.kind.group == 'autoscaling' && request.kind.kind == \
             'HorizontalPodAutoscaler'"
                .to_owned(),
        );
        let workloads = CONTROLLERS.iter().map(|(_, kind)| *kind);
        let mut children: Vec<&str> = workloads.chain(kinds.iter().copied()).collect();
        children.sort_unstable();
        children.dedup();
        parts.push(format!(
            "request.operation in ['UPDATE', 'DELETE'] && {}",
            referenced("oldObject", &children)
        ));
        parts.extend(granted(settings));
    }
    if !kinds.is_empty() {
        kinds.sort_unstable();
        kinds.dedup();
        parts.push(format!(
            "{} || {}",
            referenced("object", &kinds),
            referenced("oldObject", &kinds)
        ));
    }
    parts.extend(leftovers(settings));
    (!parts.is_empty()).then(|| {
        (parts.iter())
            .map(|part| format!("({part})"))
            .collect::<Vec<_>>()
            .join(" || ")
    })
}

/// CEL: an UPDATE moves a stored owner of a mark with `ownerLookup` on the object, or (wider)
/// of an object whose stored templates carry such a mark — which the module reads when it
/// would deny the move (`leftover::Owners::read`); `None` for marks without lookups. A move is
/// read from the keys as written (`Claim::raw`): wider for a tracking id, whose claim moves only
/// where its value does, and which match conditions could not read, having no variables.
fn leftovers(settings: &Settings) -> Option<String> {
    let marks: Vec<&OwnerMark> = (settings.owner_marks.iter())
        .filter(|mark| mark.owner_lookup.is_some())
        .collect();
    if marks.is_empty() {
        return None;
    }
    let moved = or(marks.iter().map(|mark| {
        let field = field(mark.place);
        let (old, new) = (
            Claim::raw(mark, &meta_map("oldObject", field)),
            Claim::raw(mark, &meta_map("object", field)),
        );
        format!("(!({}) && !({}))", old.none(), old.same(&new))
    }));
    // The template `t` carries a key of such a mark, or its companion; no tracking id in a
    // template names an owner.
    let carried = or([MarkPlace::Label, MarkPlace::Annotation]
        .into_iter()
        .filter_map(|place| {
            let keys: Vec<&str> = (marks.iter())
                .filter(|mark| mark.place == place && mark.format != Format::ArgoCdTrackingId)
                .flat_map(|mark| std::iter::once(mark.key.as_str()).chain(companion(mark)))
                .collect();
            let map = meta_map("t", field(place));
            (!keys.is_empty()).then(|| {
                format!(
                    "[{map}].exists(m, {}.exists(k, k in m))",
                    string_list(&keys)
                )
            })
        }));
    let mut places = vec![moved];
    places.extend(in_templates("oldObject", &carried));
    Some(format!(
        "request.operation == 'UPDATE' && oldObject != null && object != null && ({})",
        places.join(" || ")
    ))
}

/// CEL, a condition per place of templates: one of `root`'s templates (of a kind that keeps
/// them there) holds `carried`, a condition of the template bound as `t`.
fn in_templates(root: &str, carried: &str) -> Vec<String> {
    let mut places = Vec::new();
    for (path, kinds) in one_templates() {
        let template = path_or_null(root, &path);
        places.push(format!(
            "(({}) && [{template}].exists(t, {carried}))",
            kind_test(&kinds)
        ));
    }
    for (list, template, _, kinds) in each_templates() {
        let items = path_or_null(root, &list);
        let template = path_or_null("o", &template);
        places.push(format!(
            "(({}) && {items} != null && {items}.exists(o, [{template}].exists(t, {carried})))",
            kind_test(&kinds)
        ));
    }
    places
}

/// CEL: `root` (an object or `null`) has an owner reference to one of `kinds`.
fn referenced(root: &str, kinds: &[&str]) -> String {
    format!(
        "({root} != null && has({root}.metadata) && has({root}.metadata.ownerReferences) && \
         {root}.metadata.ownerReferences.exists(r, has(r.kind) && r.kind in {}))",
        string_list(kinds)
    )
}

/// CEL: an identity with grants may bind the requester: one of its user or group patterns,
/// widened as the webhook's conditions widen them, matches.
fn granted(settings: &Settings) -> Option<String> {
    let mut bound = Vec::new();
    for identity in &settings.identities {
        if identity.level() != Access::Changes {
            continue;
        }
        for pattern in &identity.users {
            bound.push(format!(
                "(has(request.userInfo.username) && {})",
                widened_glob("request.userInfo.username", pattern)
            ));
        }
        for pattern in &identity.groups {
            bound.push(format!(
                "(has(request.userInfo.groups) && request.userInfo.groups.exists(g, {}))",
                widened_glob("g", pattern)
            ));
        }
    }
    (!bound.is_empty()).then(|| bound.join(" || "))
}
