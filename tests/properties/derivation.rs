//! Derived objects: inheritance lets no requester set an owner it may not derive (19); a
//! repoint gives nobody an object (22).

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};
use single_owner_policy::policy::{Payload, Verdict};
use single_owner_policy::{Lookup, NoHost, Parents};

use crate::check;
use crate::common;
use crate::generators::owner_sets_and_removals;
use crate::model::{Op, Owner, Shape};

/// The followed kind: cluster-scoped, so that objects of either scope follow it.
fn parent_kinds() -> Value {
    json!([{"apiVersion": "example.io/v1", "kind": "Parent", "clusterScoped": true}])
}

/// A reference to the one controller, `p`.
fn controller_reference() -> Value {
    json!([{"apiVersion": "example.io/v1", "kind": "Parent", "name": "p",
        "uid": "u-1", "controller": true}])
}

/// The verdict of `request` under `settings` with `parents`: whether it is admitted, and its
/// violations' summaries.
fn decide(
    request: &Value,
    settings: &Value,
    parents: &dyn Parents,
) -> Result<(bool, Vec<String>), TestCaseError> {
    let payload = serde_json::to_vec(&json!({"request": request, "settings": settings}))
        .map_err(|error| TestCaseError::fail(error.to_string()))?;
    let parsed = Payload::parse(&payload).map_err(TestCaseError::fail)?;
    Ok(match parsed.verdict(parents) {
        Verdict::Deny(violations) => (false, violations.iter().map(common::summary).collect()),
        Verdict::Unreadable(why) => (false, vec![why]),
        Verdict::Exempt { violations, .. } => {
            (true, violations.iter().map(common::summary).collect())
        }
        Verdict::Allow | Verdict::Mutate(_) => (true, Vec::new()),
    })
}

/// A controller named `p` whose labels and annotations are `metadata`'s, each value changed
/// by `change`.
fn parent_like(metadata: &Value, change: &dyn Fn(&str) -> String) -> Controller {
    let map = |field: &str| -> Value {
        let pairs = metadata[field].as_object().cloned().unwrap_or_default();
        pairs
            .into_iter()
            .map(|(key, value)| (key, json!(change(value.as_str().unwrap_or_default()))))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    Controller(json!({"metadata": {"name": "p", "uid": "u-1",
        "labels": map("labels"), "annotations": map("annotations")}}))
}

/// 19. Derived objects (docs/rules.md, "Derived objects"): give every object a controller of a
///     followed kind. A controller carrying other owners than either side, under every key
///     either carries, changes no verdict: a copy that differs is a claim. A controller carrying exactly the new object's
///     marks — every copy inherited — still lets no requester set an owner it does not act for
///     (the generated identities never derive), unless it is exempt or the owner is handed
///     across marks; one carrying the stored object's marks, every drop inherited where it
///     keeps the object its owner's, lets none remove one.
#[test]
fn inheritance_lets_no_requester_set_an_owner_it_may_not_derive() {
    let floors = [
        (
            "an owner set by a non-exempt requester not acting for it, its controller carrying it",
            20.0,
        ),
        (
            "an owner removed by a non-exempt requester not acting for it, its controller \
             carrying it",
            15.0,
        ),
        ("a verdict a differing controller leaves as it is", 90.0),
    ];
    check(owner_sets_and_removals(), &floors, |case, tally| {
        let admission = &case.admission;
        let (mut request, mut settings) = (case.request_json(), case.settings.json());
        settings["parentKinds"] = parent_kinds();
        for side in ["object", "oldObject"] {
            if request[side].is_object() {
                request[side]["metadata"]["ownerReferences"] = controller_reference();
            }
        }
        let side = if request["object"].is_object() {
            "object"
        } else {
            "oldObject"
        };
        let carrying = parent_like(&request[side]["metadata"], &|value| value.to_owned());
        // Other owners under every key either side carries: a controller that carries none
        // where the new object has none would be followed in a removal.
        let mut both = json!({});
        for side in ["oldObject", "object"] {
            for field in ["labels", "annotations"] {
                if let Some(pairs) = request[side]["metadata"][field].as_object() {
                    for (key, value) in pairs {
                        both[field][key] = value.clone();
                    }
                }
            }
        }
        let differing = parent_like(&both, &|value| format!("{value}-elsewhere"));
        let decide = |parents: &dyn Parents| decide(&request, &settings, parents);
        let plain = decide(&NoHost)?;
        let differs = decide(&differing)?;
        tally.count(
            differs == plain,
            "a verdict a differing controller leaves as it is",
        );
        prop_assert_eq!(
            &differs,
            &plain,
            "a controller carrying other marks changed the verdict"
        );
        if case.settings.identities.is_empty() || matches!(admission.op, Op::Delete | Op::Scale) {
            return Ok(());
        }
        let (accepted, _) = decide(&carrying)?;
        // A controller carrying exactly the stored object's marks: every drop of one of them
        // follows it where it keeps the object its owner's, and still needs a requester that
        // derives.
        let stored = parent_like(&request["oldObject"]["metadata"], &|value| value.to_owned());
        let (dropped, _) = decide(&stored)?;
        let exempt = case.exemption().is_some();
        for &shape in &case.settings.shapes {
            let before = (admission.old.as_ref())
                .map(|old| case.claim(shape, old))
                .unwrap_or_default();
            let after = (admission.new.as_ref())
                .map(|new| case.claim(shape, new))
                .unwrap_or_default();
            let acts_for_before = case.acts_for(&before.id());
            if after.is_none() && !before.is_none() && shape.owner(&before) != Owner::Invalid {
                tally.count(
                    !exempt && !acts_for_before,
                    "an owner removed by a non-exempt requester not acting for it, its \
                     controller carrying it",
                );
                prop_assert!(
                    !dropped || acts_for_before || exempt || case.handed_across(shape),
                    "{shape:?}: owner {before} removed by {}, who does not act for it, because \
                     its controller carries it",
                    admission.user
                );
            }
            if before == after || after.is_none() || shape.owner(&after) == Owner::Invalid {
                continue;
            }
            let acts = case.acts_for(&after.id());
            tally.count(
                !exempt && !acts,
                "an owner set by a non-exempt requester not acting for it, its controller \
                 carrying it",
            );
            if accepted {
                prop_assert!(
                    acts || exempt || case.handed_across(shape),
                    "{shape:?}: owner {after} set by {}, who does not act for it, because its \
                     controller carries it",
                    admission.user
                );
            }
        }
        Ok(())
    });
}

/// A host holding the object's controller.
struct Controller(Value);

impl Parents for Controller {
    fn get(&self, _: &Lookup<'_>) -> Result<String, String> {
        Ok(self.0.to_string())
    }
}

/// 22. Repoints (docs/rules.md, "Derived objects"): give the stored object of an UPDATE a
///     followed controller it did not have, changing nothing else. A controller carrying the
///     object's marks changes no verdict of the same update without the new reference, under
///     `writes: Any` (under `writes: Owner` a change of references is a write of the object). A
///     controller carrying other owners under every key lets nobody repoint an object whose
///     stored marks name an owner (an Argo CD tracking id, never inherited, aside), but a
///     requester that is exempt, trusted, or — with identities — writes for every owner the
///     object has.
#[test]
fn a_repoint_gives_nobody_an_object() {
    let floors = [
        (
            "a repoint of an owned object by a requester that may not",
            10.0,
        ),
        (
            "a repoint at a controller of its owners, under writes: Any",
            10.0,
        ),
    ];
    check(owner_sets_and_removals(), &floors, |case, tally| {
        if case.admission.op != Op::Update {
            return Ok(());
        }
        let (mut request, mut settings) = (case.request_json(), case.settings.json());
        settings["parentKinds"] = parent_kinds();
        if let Some(metadata) = request["oldObject"]["metadata"].as_object_mut() {
            metadata.remove("ownerReferences");
        }
        request["object"] = request["oldObject"].clone();
        let unmoved = decide(&request, &settings, &NoHost)?;
        request["object"]["metadata"]["ownerReferences"] = controller_reference();
        let stored = &request["oldObject"];
        // An Argo CD tracking id names its object: never inherited, it follows no controller.
        let owners: Vec<String> = (case.settings.shapes.iter())
            .filter(|&&shape| shape != Shape::Argo)
            .map(|&shape| (shape, case.claim_in(shape, stored)))
            .filter(|(shape, claim)| !claim.is_none() && shape.owner(claim) != Owner::Invalid)
            .map(|(_, claim)| claim.id())
            .collect();
        let carrying = parent_like(&stored["metadata"], &|value| value.to_owned());
        let differing = parent_like(&stored["metadata"], &|value| format!("{value}-elsewhere"));
        if case.settings.writes == "Any" {
            tally.count(
                !owners.is_empty(),
                "a repoint at a controller of its owners, under writes: Any",
            );
            prop_assert_eq!(
                decide(&request, &settings, &carrying)?,
                unmoved,
                "a repoint at a controller carrying the object's marks changed the verdict"
            );
        }
        if owners.is_empty() {
            return Ok(());
        }
        let may = case.exemption().is_some()
            || case.trusted()
            || (!case.settings.identities.is_empty()
                && owners.iter().all(|owner| case.writes_for(owner)));
        tally.count(
            !may,
            "a repoint of an owned object by a requester that may not",
        );
        let (allowed, _) = decide(&request, &settings, &differing)?;
        prop_assert!(
            may || !allowed,
            "{} repointed an object of {owners:?} at a controller of other owners",
            case.admission.user
        );
        Ok(())
    });
}
