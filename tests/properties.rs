//! The policy's security invariants, checked on generated settings and requests
//! (`PROPTEST_CASES`, 256 by default).
//!
//! Each property runs its own [`TestRunner`], counts how often it met the cases it is about (an
//! owner change, a stamp, a foreign DELETE, …) and fails when a count falls under its floor, a
//! share of the cases run: a property whose generator stopped reaching its case proves nothing.
//! The generators reach the deny paths by choice, not by filtering: they choose the stored owner,
//! then the new one as the same, another, none, an invalid or an out-of-scope owner; the offer;
//! and the requester as one acting for the old owner, the new one, both, another or none, exempt
//! or not — building the identities that make it so.
//!
//! Who acts for which owner is computed here, by the [`oracle`], from the identities alone; the
//! policy is never asked.

mod common;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use proptest::bool::weighted as chance;
use proptest::prelude::*;
use proptest::sample::{Index, select, subsequence};
use proptest::strategy::Union;
use proptest::test_runner::{Config, TestCaseError, TestCaseResult, TestRunner};
use serde_json::{Value, json};
use single_owner_policy::policy::{self, EXEMPTION_ANNOTATION};

use common::{
    APP_ID_KEY, CAMEL, CONFIG_MAP, CRD, INTEGRATION, LAST_APPLIED, NAMESPACE, OFFER, OLM_KIND,
    OLM_NAME, POD, Request, SCALE, Side, summary,
};

// ---------------------------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------------------------

/// 1. An object changes hands only through a handoff: an accepted request that changes an owner
///    label entry from one owner A to another B (both set, different) has an exempt requester,
///    or the stored object offered it to B, the admitted object no longer carries the offer, and,
///    with identities, the requester acts for B.
#[test]
fn owners_change_hands_only_through_an_accepted_offer() {
    let floors = [
        ("A→B by a non-exempt requester", 60.0),
        ("A→B accepted through the offer", 5.0),
        (
            "A→B by a non-exempt requester, offered to another owner",
            15.0,
        ),
        ("A→B by a non-exempt requester, not offered", 6.0),
        (
            "A→B offered to B, the offer left on the object, stamp: false",
            3.0,
        ),
        (
            "A→B offered to B, the offer left on the object, stamp: true",
            0.3,
        ),
        ("A→B offered to B by a requester not acting for B", 4.0),
        ("A→B by an exempt requester", 10.0),
    ];
    check(transfers(), &floors, |case, tally| {
        let response = case.respond()?;
        let admission = &case.admission;
        let (Some(old), Some(new)) = (&admission.old, &admission.new) else {
            return Ok(());
        };
        if admission.op == Op::Scale {
            return Ok(());
        }
        let exempt = case.exemption().is_some();
        let with_identities = !case.settings.identities.is_empty();
        let request = case.request_json();
        let offer_left = response
            .admitted(&request)
            .is_some_and(|object| annotation_in(&object, case.settings.offer_key).is_some());
        for shape in &case.settings.shapes {
            let (from, to) = (shape.read(&old.labels), shape.read(&new.labels));
            if from.is_none() || to.is_none() || from == to {
                continue;
            }
            let offered = old.offer.as_deref() == Some(to.id().as_str());
            let acts = !with_identities || case.acts_for(&to.id());
            tally.count(!exempt, "A→B by a non-exempt requester");
            tally.count(exempt, "A→B by an exempt requester");
            tally.count(
                !exempt && response.accepted,
                "A→B accepted through the offer",
            );
            let offered_to_another = old.offer.is_some() && !offered;
            tally.count(
                !exempt && offered_to_another,
                "A→B by a non-exempt requester, offered to another owner",
            );
            tally.count(
                !exempt && old.offer.is_none(),
                "A→B by a non-exempt requester, not offered",
            );
            let left = offered && new.offer == old.offer;
            let stamp = if case.settings.stamp { "true" } else { "false" };
            tally.count_named(
                !exempt && left,
                format!("A→B offered to B, the offer left on the object, stamp: {stamp}"),
            );
            tally.count(
                !exempt && offered && !acts,
                "A→B offered to B by a requester not acting for B",
            );
            if response.accepted {
                prop_assert!(
                    exempt || (offered && !offer_left && acts),
                    "{shape:?}: {from} -> {to} accepted: offered to B {offered}, offer left on \
                     the admitted object {offer_left}, requester acts for B {acts}"
                );
            }
        }
        Ok(())
    });
}

/// 2. With identities, an accepted request that sets owner X (a CREATE with X, none → X, or
///    A → X), or removes it (X → none), on the object as admitted, has a requester acting for X
///    or an exempt one. (A → X does not need A's requester: A's consent is its offer, property 1.)
#[test]
fn only_a_requester_acting_for_an_owner_sets_or_removes_it() {
    let floors = [
        (
            "an owner set by a non-exempt requester not acting for it",
            30.0,
        ),
        (
            "an owner removed by a non-exempt requester not acting for it",
            5.0,
        ),
        ("an owner set by a requester acting for it, accepted", 6.0),
        (
            "an owner removed by a requester acting for it, accepted",
            0.5,
        ),
        (
            "an owner set or removed by an exempt requester not acting for it",
            6.0,
        ),
    ];
    check(owner_sets_and_removals(), &floors, |case, tally| {
        let admission = &case.admission;
        if case.settings.identities.is_empty() || matches!(admission.op, Op::Delete | Op::Scale) {
            return Ok(());
        }
        let response = case.respond()?;
        let request = case.request_json();
        let new_object = response
            .admitted(&request)
            .unwrap_or_else(|| request["object"].clone());
        let after_labels = labels_in(&new_object);
        let exempt = case.exemption().is_some();
        for shape in &case.settings.shapes {
            let before = admission
                .old
                .as_ref()
                .map(|old| shape.read(&old.labels))
                .unwrap_or_default();
            let after = shape.read(&after_labels);
            if before == after {
                continue;
            }
            for (owner, act) in [(&after, "set"), (&before, "removed")] {
                if owner.is_none() || (act == "removed" && !after.is_none()) {
                    continue;
                }
                let acts = case.acts_for(&owner.id());
                tally.count_named(
                    !exempt && !acts,
                    format!("an owner {act} by a non-exempt requester not acting for it"),
                );
                tally.count_named(
                    acts && response.accepted,
                    format!("an owner {act} by a requester acting for it, accepted"),
                );
                tally.count(
                    exempt && !acts,
                    "an owner set or removed by an exempt requester not acting for it",
                );
                if response.accepted {
                    prop_assert!(
                        acts || exempt,
                        "{shape:?}: owner {owner} {act} by {}, who does not act for it",
                        admission.user
                    );
                }
            }
        }
        Ok(())
    });
}

/// 3. Under `writes: Owner`, an accepted UPDATE that keeps owner X, or DELETE of an object owned
///    by X, has a requester acting for X, an exempt one, or is a subresource write that keeps
///    every owner label.
#[test]
fn under_owner_writes_only_an_owners_requesters_update_or_delete_its_objects() {
    let floors = [
        (
            "an UPDATE keeping X by a non-exempt requester not acting for X",
            15.0,
        ),
        (
            "a DELETE of X's object by a non-exempt requester not acting for X",
            8.0,
        ),
        (
            "an UPDATE keeping X by a requester acting for X, accepted",
            1.5,
        ),
        (
            "a DELETE of X's object by a requester acting for X, accepted",
            3.0,
        ),
        (
            "a status write keeping every owner label by a requester not acting for X",
            1.5,
        ),
        (
            "an UPDATE or DELETE of X's object by an exempt requester not acting for X",
            2.0,
        ),
        (
            "a status write keeping X, adopting another entry's owner it acts for",
            5.0,
        ),
    ];
    check(owned_writes(), &floors, |case, tally| {
        let admission = &case.admission;
        let Some(old) = &admission.old else {
            return Ok(());
        };
        if case.settings.writes != "Owner" || admission.op == Op::Scale {
            return Ok(());
        }
        let response = case.respond()?;
        let exempt = case.exemption().is_some();
        let keeps_every_owner = |new: &Object| {
            let shapes = &case.settings.shapes;
            shapes
                .iter()
                .all(|shape| shape.read(&old.labels) == shape.read(&new.labels))
        };
        let status_keeping_labels =
            admission.op == Op::Status && admission.new.as_ref().is_some_and(keeps_every_owner);
        for shape in &case.settings.shapes {
            let owner = shape.read(&old.labels);
            let kept = match &admission.new {
                None => true,
                Some(new) => shape.read(&new.labels) == owner,
            };
            if owner.is_none() || !kept {
                continue;
            }
            let acts = case.acts_for(&owner.id());
            let write = if admission.op == Op::Delete {
                "a DELETE of X's object"
            } else {
                "an UPDATE keeping X"
            };
            tally.count_named(
                !exempt && !acts && !status_keeping_labels,
                format!("{write} by a non-exempt requester not acting for X"),
            );
            tally.count_named(
                acts && response.accepted && admission.op != Op::Status,
                format!("{write} by a requester acting for X, accepted"),
            );
            tally.count(
                status_keeping_labels && !acts,
                "a status write keeping every owner label by a requester not acting for X",
            );
            let adopts_for_itself = |new: &Object| {
                (case.settings.shapes.iter()).any(|other| {
                    let (before, after) = (other.read(&old.labels), other.read(&new.labels));
                    before.is_none() && !after.is_none() && case.acts_for(&after.id())
                })
            };
            tally.count(
                admission.op == Op::Status
                    && !acts
                    && !exempt
                    && admission.new.as_ref().is_some_and(adopts_for_itself),
                "a status write keeping X, adopting another entry's owner it acts for",
            );
            tally.count(
                exempt && !acts,
                "an UPDATE or DELETE of X's object by an exempt requester not acting for X",
            );
            if response.accepted {
                prop_assert!(
                    acts || exempt || status_keeping_labels,
                    "{shape:?}: {:?} of an object owned by {owner} accepted from {}, who does \
                     not act for it",
                    admission.op,
                    admission.user
                );
            }
        }
        Ok(())
    });
}

/// 4. A patch (`mutated_object`) is one of two, exactly when src/decision.rs makes it and never
///    otherwise: on a CREATE under `stamp: true` without violations, by a requester acting for
///    exactly one owner O (one owner pattern after templates, no wildcard), it adds O's labels to
///    the first owner label entry that reads O as a valid owner in scope, when the object lacks
///    that entry's labels; on an UPDATE under `stamp: true` without violations that changes an
///    owner label entry while the offer stays as it was, it removes the offer. A patch changes
///    nothing else.
#[test]
fn patches_stamp_one_owner_on_creates_or_remove_a_consumed_offer() {
    let floors = [
        ("a stamp", 1.5),
        ("a consumed offer removed", 0.3),
        (
            "an accepted CREATE by a single-owner requester, the stamped label already set",
            0.3,
        ),
        (
            "an accepted CREATE by a requester acting for several owners or a pattern",
            2.0,
        ),
        (
            "an accepted UPDATE by a single-owner requester, stamp: true",
            3.0,
        ),
        ("an accepted CREATE without a stamp target in scope", 0.3),
    ];
    check(stamp_candidates(), &floors, |case, tally| {
        let response = case.respond()?;
        let admission = &case.admission;
        let settings = &case.settings;
        let request = case.request_json();
        let clean = response.accepted && response.warnings.is_empty();
        let acting = case.acting();
        let single = oracle::single_owner(&acting);
        let due = case.stamp_due();
        let consume = case.consume_due();
        if clean && settings.stamp && admission.op == Op::Create {
            let target_set = single.is_some() && due.is_none() && case.stamp_target().is_some();
            tally.count(
                target_set,
                "an accepted CREATE by a single-owner requester, the stamped label already set",
            );
            tally.count(
                single.is_none() && !acting.is_empty(),
                "an accepted CREATE by a requester acting for several owners or a pattern",
            );
            tally.count(
                single.is_some() && case.stamp_target().is_none(),
                "an accepted CREATE without a stamp target in scope",
            );
        }
        tally.count(
            clean && settings.stamp && admission.op == Op::Update && single.is_some(),
            "an accepted UPDATE by a single-owner requester, stamp: true",
        );
        let expected = match (&due, consume) {
            (Some(labels), _) => Some(Patch {
                labels: labels.iter().cloned().collect(),
                removed: Vec::new(),
                rest_kept: true,
            }),
            (None, true) => Some(Patch {
                labels: Labels::new(),
                removed: vec![settings.offer_key.to_owned()],
                rest_kept: true,
            }),
            (None, false) => None,
        };
        match (&response.patched, expected) {
            (None, None) => {}
            (Some(patched), Some(expected)) => {
                prop_assert!(clean, "a patch on a request with violations");
                tally.count(due.is_some(), "a stamp");
                tally.count(consume, "a consumed offer removed");
                let got = Patch::between(&request["object"], patched);
                prop_assert_eq!(got, expected);
            }
            (Some(patched), None) => {
                prop_assert!(false, "a patch where none is due: {patched}");
            }
            (None, Some(expected)) => {
                prop_assert!(!clean, "accepted without the patch due: {expected:?}");
            }
        }
        Ok(())
    });
}

/// 5. No accepted CREATE or owner change, unless by an exempt requester, leaves an owner label
///    that names no valid owner, a namespaced owner on a cluster-scoped object (a Namespace is
///    cluster-scoped, whatever namespace the request names), or a namespaced owner outside its
///    own namespace — stamped labels included.
#[test]
fn accepted_owners_are_valid_and_in_scope() {
    let floors = [
        ("a namespaced owner set on a cluster-scoped object", 3.0),
        (
            "a namespaced owner set on a Namespace whose request names a namespace",
            0.3,
        ),
        ("a namespaced owner of another namespace set", 6.0),
        ("an invalid owner set", 6.0),
        ("a namespaced owner set in its own namespace, accepted", 0.3),
        ("a cluster-scoped object given an owner, accepted", 2.0),
    ];
    check(scope_claims(), &floors, |case, tally| {
        let admission = &case.admission;
        if matches!(admission.op, Op::Delete | Op::Scale) || case.exemption().is_some() {
            return Ok(());
        }
        let response = case.respond()?;
        let request = case.request_json();
        let new_object = response
            .admitted(&request)
            .unwrap_or_else(|| request["object"].clone());
        let after_labels = labels_in(&new_object);
        let place = admission.place;
        for shape in &case.settings.shapes {
            let before = admission.old.as_ref().map(|old| shape.read(&old.labels));
            let after = shape.read(&after_labels);
            if after.is_none() || before.as_ref() == Some(&after) {
                continue;
            }
            let owner = shape.owner(&after);
            if let Owner::Namespaced(namespace) = &owner {
                let scope = place.scope();
                tally.count(
                    scope.is_none(),
                    "a namespaced owner set on a cluster-scoped object",
                );
                tally.count(
                    place.kind == NAMESPACE && !place.namespace.is_empty(),
                    "a namespaced owner set on a Namespace whose request names a namespace",
                );
                tally.count(
                    scope.is_some_and(|scope| scope != namespace),
                    "a namespaced owner of another namespace set",
                );
                tally.count(
                    scope == Some(namespace.as_str()) && response.accepted,
                    "a namespaced owner set in its own namespace, accepted",
                );
            }
            tally.count(owner == Owner::Invalid, "an invalid owner set");
            tally.count(
                place.scope().is_none() && response.accepted,
                "a cluster-scoped object given an owner, accepted",
            );
            if response.accepted {
                prop_assert!(
                    place.holds(&owner),
                    "{shape:?}: {after} ({owner:?}) accepted on {place:?}"
                );
            }
        }
        Ok(())
    });
}

/// 6. Every answer is an accept (no code, no message), a denial with code 403 whose every line is
///    a violation, or, for a request the policy cannot read, a denial with code 400 whose message
///    is "cannot read the admission request: " and names the broken field. A request that is not
///    broken is never a 400.
#[test]
fn answers_are_accepts_403s_or_400s_naming_the_field() {
    let floors = [
        ("an accept", 15.0),
        ("a 403", 10.0),
        ("a 400", 20.0),
        ("a broken field the request does not read", 0.3),
    ];
    check(
        requests_with_a_broken_field(),
        &floors,
        |(case, broken), tally| {
            let mut request = case.request_json();
            let field = broken.apply(&mut request, &case);
            let response = respond(&request, &case.settings.json())?;
            match (response.accepted, response.code) {
                (true, None) => {
                    tally.count(true, "an accept");
                    tally.count(field.is_some(), "a broken field the request does not read");
                    prop_assert_eq!(response.message, None);
                }
                (false, Some(403)) => {
                    tally.count(true, "a 403");
                    let message = response.message.unwrap_or_default();
                    prop_assert!(!message.is_empty(), "a 403 without a message");
                    // Every line parses as `key: rule denied for … from A to B: reason`.
                    let lines = std::panic::catch_unwind(|| summary(&message));
                    prop_assert!(lines.is_ok(), "a 403 line is not a violation: {message}");
                }
                (false, Some(400)) => {
                    tally.count(true, "a 400");
                    let message = response.message.unwrap_or_default();
                    let why = message.strip_prefix("cannot read the admission request: ");
                    prop_assert!(why.is_some(), "a 400 without the prefix: {message}");
                    let Some(field) = field else {
                        return Err(TestCaseError::fail(format!(
                            "a 400 for a request that is not broken: {message}"
                        )));
                    };
                    prop_assert!(
                        why.unwrap_or_default().contains(&field),
                        "a 400 that does not name {field}: {message}"
                    );
                }
                (accepted, code) => {
                    prop_assert!(false, "accepted {accepted} with code {code:?}");
                }
            }
            Ok(())
        },
    );
}

/// 7. Order and repetition change no verdict: reordering or repeating the exempt users, the
///    exempt groups and the identities changes nothing in the response; reordering the owner
///    label entries changes neither the verdict nor which rule denies for which label; labels no
///    entry names, and annotations other than the transfer annotation, change nothing. A bypass
///    names the exempt user, or else the first of the requester's groups that is exempt,
///    whatever the order of `exemptions.groups`.
#[test]
fn order_and_repetition_change_no_verdict() {
    let floors = [
        (
            "a bypass naming a group, two of the requester's groups exempt",
            15.0,
        ),
        (
            "a bypass by an exempt user who is in an exempt group too",
            5.0,
        ),
        ("two or more violations, denied or bypassed", 15.0),
        ("a requester bound by two or more identities", 8.0),
        ("a patch", 0.0),
    ];
    check(
        exempt_and_reordered_requests(),
        &floors,
        |(case, order), tally| {
            let base = case.respond()?;
            let exempt_groups_of_requester = case
                .admission
                .groups
                .iter()
                .filter(|group| case.settings.exempt_groups.contains(group))
                .count();
            let user_exempt = case.settings.exempt_users.contains(&case.admission.user);
            let bypass = !base.warnings.is_empty();
            tally.count(
                bypass && !user_exempt && exempt_groups_of_requester >= 2,
                "a bypass naming a group, two of the requester's groups exempt",
            );
            tally.count(
                bypass && user_exempt && exempt_groups_of_requester >= 1,
                "a bypass by an exempt user who is in an exempt group too",
            );
            let violations = rules(base.message.as_deref()).len() + base.warnings.len();
            tally.count(
                violations >= 2,
                "two or more violations, denied or bypassed",
            );
            let binding = case
                .settings
                .identities
                .iter()
                .filter(|identity| {
                    oracle::binds(identity, &case.admission.user, &case.admission.groups)
                })
                .count();
            tally.count(binding >= 2, "a requester bound by two or more identities");
            tally.count(base.patched.is_some(), "a patch");

            let mut lists = case.clone();
            let settings = &mut lists.settings;
            settings.exempt_users = order.apply(&settings.exempt_users, 1);
            settings.exempt_groups = order.apply(&settings.exempt_groups, 2);
            settings.identities = order.apply(&settings.identities, 3);
            prop_assert_eq!(
                &lists.respond()?,
                &base,
                "exemptions or identities reordered: {:?}",
                lists
            );

            let mut entries = case.clone();
            entries.settings.shapes = order.permute(&entries.settings.shapes, 4);
            let reordered = entries.respond()?;
            prop_assert_eq!(
                reordered.rules(),
                base.rules(),
                "owner labels reordered: {:?}",
                entries
            );

            let decorated = case.decorated();
            let other = decorated.respond()?;
            let patch = |case: &Case, response: &Response| {
                let object = &case.request_json()["object"];
                (response.patched.as_ref()).map(|patched| Patch::between(object, patched))
            };
            prop_assert_eq!(
                (&other.accepted, &other.code, &other.message),
                (&base.accepted, &base.code, &base.message),
                "unrelated labels and annotations added: {:?}",
                decorated
            );
            prop_assert_eq!(
                (&other.warnings, &other.audit),
                (&base.warnings, &base.audit)
            );
            prop_assert_eq!(patch(&decorated, &other), patch(&case, &base));

            if bypass {
                let Some(exempt) = case.exemption() else {
                    return Err(TestCaseError::fail(
                        "a bypass for a requester nobody exempted",
                    ));
                };
                let prefix = format!("{exempt} bypassed: ");
                for warning in &base.warnings {
                    prop_assert!(warning.starts_with(&prefix), "{warning:?} lacks {prefix:?}");
                }
                let audit = base.audit.as_deref().unwrap_or_default();
                prop_assert!(audit.starts_with(&prefix), "{audit:?} lacks {prefix:?}");
            }
            Ok(())
        },
    );
}

/// 8. Templates bind only real service accounts, literally: a user name
///    `system:serviceaccount:<ns>:<name>` fills `${namespace}` and `${name}` only when `<ns>` is
///    a DNS-1123 label and `<name>` a DNS-1123 subdomain, as Kubernetes validates them; for any
///    other user a templated owner pattern names no owner (the user
///    `system:serviceaccount:helm-releases:*` acts for no `ClusterExtension.${name}`). A CREATE of
///    a valid owner in scope is accepted exactly when the requester acts for that owner.
#[test]
fn templates_bind_only_real_service_accounts() {
    let floors = [
        (
            "a malformed service account that an unchecked template would bind to X",
            6.0,
        ),
        ("a service account acting for X through a template", 1.5),
        (
            "a malformed service account acting for X through an exact owner",
            0.3,
        ),
        ("a requester acting for no such owner", 60.0),
    ];
    check(service_account_creates(), &floors, |case, tally| {
        let response = case.respond()?;
        let admission = &case.admission;
        let new = admission.new.as_ref().expect("a CREATE");
        let (shape, claim) = (case.settings.shapes.iter())
            .map(|shape| (shape, shape.read(&new.labels)))
            .find(|(_, claim)| !claim.is_none())
            .expect("one owner label");
        let owner = claim.id();
        let acts = case.acts_for(&owner);
        let identities = &case.settings.identities;
        let unchecked = oracle::acting_with(identities, admission, oracle::any_service_account);
        let real = oracle::service_account(&admission.user).is_some();
        let unchecked_acts = oracle::acts_for(&unchecked, &owner);
        tally.count(
            !real && unchecked_acts && !acts,
            "a malformed service account that an unchecked template would bind to X",
        );
        let untemplated: Vec<_> = (identities.iter())
            .map(|identity| Identity {
                owners: (identity.owners.iter())
                    .filter(|owner| !owner.contains("${"))
                    .cloned()
                    .collect(),
                ..identity.clone()
            })
            .collect();
        let acts_untemplated = oracle::acts_for(&oracle::acting(&untemplated, admission), &owner);
        tally.count(
            real && acts && !acts_untemplated,
            "a service account acting for X through a template",
        );
        tally.count(
            !real && acts,
            "a malformed service account acting for X through an exact owner",
        );
        tally.count(!acts, "a requester acting for no such owner");
        prop_assert_eq!(
            response.accepted,
            acts,
            "{} asks for {}: {:?}",
            &admission.user,
            &owner,
            response.message
        );
        if !acts {
            let expected = format!("{}: identity from none to \"{owner}\"", shape.key());
            prop_assert_eq!(
                summary(response.message.as_deref().unwrap_or_default()),
                [expected]
            );
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------------
// Running a property: cases, counts and floors
// ---------------------------------------------------------------------------------------------

/// How often a property met each of the cases it counts.
#[derive(Default)]
struct Tally(RefCell<BTreeMap<String, usize>>);

impl Tally {
    /// Counts `what` when `seen`.
    fn count(&self, seen: bool, what: &str) {
        self.count_named(seen, what.to_owned());
    }

    fn count_named(&self, seen: bool, what: String) {
        let mut counts = self.0.borrow_mut();
        let count = counts.entry(what).or_default();
        *count += usize::from(seen);
    }
}

/// Runs `test` on the configured number of cases (`PROPTEST_CASES`), then checks that each
/// counted case of `floors` was seen in at least that many percent of them.
fn check<S>(strategy: S, floors: &[(&str, f64)], test: impl Fn(S::Value, &Tally) -> TestCaseResult)
where
    S: Strategy,
    S::Value: fmt::Debug,
{
    // No regression files: the properties run in a worktree other people edit.
    let config = Config {
        failure_persistence: None,
        ..Config::default()
    };
    let cases = config.cases as usize;
    let tally = Tally::default();
    let mut runner = TestRunner::new(config);
    if let Err(error) = runner.run(&strategy, |value| test(value, &tally)) {
        panic!("{error}");
    }
    let counts = tally.0.into_inner();
    let mut short = Vec::new();
    for &(what, percent) in floors {
        let floor = (cases as f64 * percent / 100.0).ceil() as usize;
        let seen = counts.get(what).copied().unwrap_or(0);
        eprintln!("{seen:>6} (floor {floor:>4}) {what}");
        if seen < floor {
            short.push(format!(
                "{what}: seen {seen} times in {cases} cases, floor {floor}"
            ));
        }
    }
    assert!(
        short.is_empty(),
        "the generator no longer reaches what the property is about:\n{}",
        short.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// The world: owner label shapes, places, owners
// ---------------------------------------------------------------------------------------------

/// Labels or annotations.
type Labels = BTreeMap<String, String>;

/// One shape of owner label entry (README, "The owner model").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `appID: ClusterExtension.<name>` or `Extension.<namespace>.<name>`.
    AppId,
    /// OLM v1's kind/name pair, kinds `ClusterExtension` and `Extension`.
    Olm,
    /// Camel K's opaque operator id.
    Camel,
}

/// Owners of the cluster kind.
const CLUSTER_OWNERS: [&str; 3] = [
    "ClusterExtension.cert-manager",
    "ClusterExtension.argocd",
    "ClusterExtension.prometheus",
];
/// Owners of the namespaced kind.
const NAMESPACED_OWNERS: [&str; 4] = [
    "Extension.team-a.argocd",
    "Extension.team-a.cert-manager",
    "Extension.team-b.argocd",
    "Extension.team-b.cert-manager",
];
/// Camel K operators.
const OPERATORS: [&str; 3] = ["operator-1", "operator-2", "operator-3"];
/// An owner of no configured kind (an opaque id where Camel K's entry is set).
const UNKNOWN_KIND: &str = "Operator.x";

impl Shape {
    const ALL: [Shape; 3] = [Shape::AppId, Shape::Olm, Shape::Camel];

    /// The settings entry.
    fn entry(self) -> Value {
        match self {
            Shape::AppId => json!({"key": APP_ID_KEY,
                "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}),
            Shape::Olm => json!({"key": OLM_NAME, "kindKey": OLM_KIND,
                "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}),
            Shape::Camel => json!({"key": CAMEL}),
        }
    }

    /// The label the owner's name (or id) is in.
    fn key(self) -> &'static str {
        match self {
            Shape::AppId => APP_ID_KEY,
            Shape::Olm => OLM_NAME,
            Shape::Camel => CAMEL,
        }
    }

    /// What the labels claim for this entry, as written.
    fn read(self, labels: &Labels) -> Claim {
        Claim {
            value: labels.get(self.key()).cloned(),
            kind: match self {
                Shape::Olm => labels.get(OLM_KIND).cloned(),
                _ => None,
            },
        }
    }

    /// The labels that carry `claim`.
    fn labels(self, claim: &Claim) -> Vec<(String, String)> {
        let value = claim.value.iter().map(|value| (self.key(), value));
        let kind = claim.kind.iter().map(|kind| (OLM_KIND, kind));
        (value.chain(kind))
            .map(|(key, value)| (key.to_owned(), value.clone()))
            .collect()
    }

    /// The claim for owner `id`: the id as the value, or, for the pair, split at its first `.`
    /// into kind and name.
    fn claim_of(self, id: &str) -> Claim {
        match (self, id.split_once('.')) {
            (Shape::Olm, Some((kind, name))) => Claim {
                value: Some(name.to_owned()),
                kind: Some(kind.to_owned()),
            },
            _ => Claim {
                value: Some(id.to_owned()),
                kind: None,
            },
        }
    }

    /// The owner a claim names (README, "The owner model").
    fn owner(self, claim: &Claim) -> Owner {
        let (kind, rest) = match (self, &claim.kind, &claim.value) {
            (_, _, Some(value)) if value.is_empty() => return Owner::Invalid,
            (Shape::Camel, _, Some(_)) => return Owner::Opaque,
            (Shape::AppId, _, Some(value)) => value.split_once('.').unwrap_or((value, "")),
            (Shape::Olm, Some(kind), Some(value)) => (kind.as_str(), value.as_str()),
            _ => return Owner::Invalid,
        };
        match (kind, rest.split_once('.')) {
            ("ClusterExtension", _) if !rest.is_empty() => Owner::Cluster,
            ("Extension", Some((namespace, name))) if !namespace.is_empty() && !name.is_empty() => {
                Owner::Namespaced(namespace.to_owned())
            }
            _ => Owner::Invalid,
        }
    }

    /// Valid owners for this entry that may own an object at `place`.
    fn owners_in(self, place: Place) -> Vec<&'static str> {
        match self {
            Shape::Camel => OPERATORS.to_vec(),
            _ => (CLUSTER_OWNERS.iter().chain(&NAMESPACED_OWNERS))
                .copied()
                .filter(|id| place.holds(&self.owner(&self.claim_of(id))))
                .collect(),
        }
    }

    /// Valid owners for this entry that may not own an object at `place`.
    fn owners_outside(self, place: Place) -> Vec<&'static str> {
        (NAMESPACED_OWNERS.iter().copied())
            .filter(|id| self != Shape::Camel && !place.holds(&self.owner(&self.claim_of(id))))
            .collect()
    }

    /// Claims that name no valid owner for this entry.
    fn invalid_claims(self) -> Vec<Claim> {
        let claim = |value: Option<&str>, kind: Option<&str>| Claim {
            value: value.map(str::to_owned),
            kind: kind.map(str::to_owned),
        };
        match self {
            Shape::AppId => vec![
                claim(Some(""), None),
                claim(Some(UNKNOWN_KIND), None),
                claim(Some("ClusterExtension"), None),
                claim(Some("Extension.team-a"), None),
            ],
            Shape::Olm => vec![
                claim(Some("argocd"), None),
                claim(None, Some("ClusterExtension")),
                claim(Some("x"), Some("Operator")),
                claim(Some("argocd"), Some("Extension")),
            ],
            Shape::Camel => vec![claim(Some(""), None)],
        }
    }
}

/// What an object's labels say for one entry: the owner label's value and, for a pair, the kind
/// label's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Claim {
    value: Option<String>,
    kind: Option<String>,
}

impl Claim {
    fn is_none(&self) -> bool {
        self.value.is_none() && self.kind.is_none()
    }

    /// The owner id identities and offers name: the value, or `kind.value` for a pair.
    fn id(&self) -> String {
        match (&self.kind, &self.value) {
            (Some(kind), value) => format!("{kind}.{}", value.as_deref().unwrap_or("")),
            (None, value) => value.clone().unwrap_or_default(),
        }
    }
}

impl fmt::Display for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.kind, &self.value) {
            (None, None) => f.write_str("none"),
            _ => write!(f, "{:?} ({self:?})", self.id()),
        }
    }
}

/// What a claim names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Owner {
    /// No valid owner.
    Invalid,
    /// A cluster-kind owner: may own objects anywhere.
    Cluster,
    /// A namespaced-kind owner, of this namespace.
    Namespaced(String),
    /// An opaque id: no scope.
    Opaque,
}

/// The object a request is about: its kind (`group/Kind`) and the request's namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Place {
    kind: &'static str,
    namespace: &'static str,
}

const PLACES: [Place; 7] = [
    place(CRD, ""),
    place(NAMESPACE, ""),
    // The API server names a Namespace's own name as the request's namespace.
    place(NAMESPACE, "team-a"),
    place(CONFIG_MAP, "team-a"),
    place(CONFIG_MAP, "team-b"),
    place(POD, "team-a"),
    place(INTEGRATION, "team-b"),
];

const fn place(kind: &'static str, namespace: &'static str) -> Place {
    Place { kind, namespace }
}

impl Place {
    /// The namespace the object lives in; `None` when it is cluster-scoped.
    fn scope(self) -> Option<&'static str> {
        (!self.namespace.is_empty() && self.kind != NAMESPACE).then_some(self.namespace)
    }

    /// Whether `owner` may own the object (README, "Scope").
    fn holds(self, owner: &Owner) -> bool {
        match owner {
            Owner::Invalid => false,
            Owner::Cluster | Owner::Opaque => true,
            Owner::Namespaced(namespace) => self.scope() == Some(namespace.as_str()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Cases: settings and a request, as models and as JSON
// ---------------------------------------------------------------------------------------------

/// An identity of the settings.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    owners: Vec<String>,
    users: Vec<String>,
    groups: Vec<String>,
}

fn identity(owners: &[&str], users: &[&str], groups: &[&str]) -> Identity {
    let strings = |list: &[&str]| list.iter().map(|&item| item.to_owned()).collect();
    Identity {
        owners: strings(owners),
        users: strings(users),
        groups: strings(groups),
    }
}

/// The settings, as a model.
#[derive(Debug, Clone)]
struct Settings {
    shapes: Vec<Shape>,
    adoption: &'static str,
    orphaning: &'static str,
    exempt_users: Vec<String>,
    exempt_groups: Vec<String>,
    identities: Vec<Identity>,
    writes: &'static str,
    stamp: bool,
    offer_key: &'static str,
}

impl Settings {
    fn json(&self) -> Value {
        let identities: Vec<_> = (self.identities.iter())
            .map(|identity| {
                json!({"owners": identity.owners, "users": identity.users,
                       "groups": identity.groups})
            })
            .collect();
        json!({
            "ownerLabels": self.shapes.iter().map(|shape| shape.entry()).collect::<Vec<_>>(),
            "adoption": self.adoption,
            "orphaning": self.orphaning,
            "exemptions": {"users": self.exempt_users, "groups": self.exempt_groups},
            "identities": identities,
            "writes": self.writes,
            "stamp": self.stamp,
            "transferAnnotation": self.offer_key,
        })
    }
}

/// The operation, and whether it goes through a subresource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Create,
    Update,
    Delete,
    /// An UPDATE of the `status` subresource, its body the object.
    Status,
    /// An UPDATE of `deployments/scale`, its body a `Scale`, not the object.
    Scale,
}

/// One side of a request: an object's labels, its offer and other annotations.
#[derive(Debug, Clone, Default)]
struct Object {
    labels: Labels,
    offer: Option<String>,
    annotations: Labels,
}

/// The AdmissionRequest, as a model.
#[derive(Debug, Clone)]
struct Admission {
    op: Op,
    place: Place,
    user: String,
    groups: Vec<String>,
    old: Option<Object>,
    new: Option<Object>,
}

/// Settings and a request.
#[derive(Clone)]
struct Case {
    settings: Settings,
    admission: Admission,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "\n  settings: {}\n  request: {}\n",
            self.settings.json(),
            self.request_json()
        )
    }
}

/// A side's labels and annotations, borrowed as the request builder takes them.
type SidePairs<'a> = (Vec<(&'a str, &'a str)>, Vec<(&'a str, &'a str)>);

fn side_pairs<'a>(object: &'a Object, offer_key: &'a str) -> SidePairs<'a> {
    let pairs = |map: &'a Labels| {
        map.iter()
            .map(|(key, value)| (key.as_str(), value.as_str()))
    };
    let offer = object.offer.as_deref().map(|offer| (offer_key, offer));
    (
        pairs(&object.labels).collect(),
        pairs(&object.annotations).chain(offer).collect(),
    )
}

fn side<'a>(pairs: &'a SidePairs<'a>) -> Side<'a> {
    Side {
        labels: &pairs.0,
        offer: None,
        annotations: &pairs.1,
    }
}

impl Case {
    fn request_json(&self) -> Value {
        let admission = &self.admission;
        let key = self.settings.offer_key;
        let old = admission.old.as_ref().map(|old| side_pairs(old, key));
        let new = admission.new.as_ref().map(|new| side_pairs(new, key));
        let kind = match admission.op {
            Op::Scale => SCALE,
            _ => admission.place.kind,
        };
        let namespace = admission.place.namespace;
        let request = match (admission.op, &old, &new) {
            (Op::Create, _, Some(new)) => Request::create(kind, namespace, side(new)),
            (Op::Delete, Some(old), _) => Request::delete(kind, namespace, side(old)),
            (_, Some(old), Some(new)) => Request::update(kind, namespace, side(old), side(new)),
            _ => unreachable!("{:?} without its sides", admission.op),
        };
        let groups: Vec<&str> = admission.groups.iter().map(String::as_str).collect();
        let request = request.by(&admission.user).in_groups(&groups);
        match admission.op {
            Op::Status => request.subresource("status"),
            Op::Scale => request.subresource("scale").resource("apps", "deployments"),
            _ => request,
        }
        .json()
    }

    fn respond(&self) -> Result<Response, TestCaseError> {
        respond(&self.request_json(), &self.settings.json())
    }

    /// The owner patterns the requester acts for.
    fn acting(&self) -> BTreeSet<String> {
        oracle::acting(&self.settings.identities, &self.admission)
    }

    fn acts_for(&self, owner: &str) -> bool {
        oracle::acts_for(&self.acting(), owner)
    }

    /// Who is exempt, as a bypass names them: the user, or the first of its groups that is
    /// exempt (src/policy.rs, `exemption`).
    fn exemption(&self) -> Option<String> {
        let (settings, user) = (&self.settings, &self.admission.user);
        if settings.exempt_users.contains(user) {
            return Some(format!("exempt user {user}"));
        }
        let groups = &self.admission.groups;
        let group = groups
            .iter()
            .find(|group| settings.exempt_groups.contains(group))?;
        Some(format!("user {user} of exempt group {group}"))
    }

    /// The entry a stamp goes into, with the owner: the first entry that reads the one owner
    /// the requester acts for as a valid owner in scope.
    fn stamp_target(&self) -> Option<(Shape, String)> {
        let acting = self.acting();
        let owner = oracle::single_owner(&acting)?;
        let place = self.admission.place;
        let shape = (self.settings.shapes.iter())
            .find(|shape| place.holds(&shape.owner(&shape.claim_of(owner))))?;
        Some((*shape, owner.to_owned()))
    }

    /// The labels a stamp adds, when one is due (src/decision.rs, `stamp`): on a CREATE under
    /// `stamp: true`, into the stamp target, unless the object carries a claim there.
    fn stamp_due(&self) -> Option<Vec<(String, String)>> {
        let admission = &self.admission;
        let new = admission.new.as_ref()?;
        if !self.settings.stamp || admission.op != Op::Create {
            return None;
        }
        let (shape, owner) = self.stamp_target()?;
        (shape.read(&new.labels).is_none()).then(|| shape.labels(&shape.claim_of(&owner)))
    }

    /// Whether an accepted request has its offer removed (src/decision.rs, `judge_offer`): an
    /// UPDATE under `stamp: true` that changes an owner label entry and keeps the offer.
    fn consume_due(&self) -> bool {
        let admission = &self.admission;
        let (Some(old), Some(new)) = (&admission.old, &admission.new) else {
            return false;
        };
        let moved = (self.settings.shapes.iter())
            .any(|shape| shape.read(&old.labels) != shape.read(&new.labels));
        self.settings.stamp
            && matches!(admission.op, Op::Update | Op::Status)
            && old.offer.is_some()
            && old.offer == new.offer
            && moved
    }

    /// The case with labels no entry names and annotations other than the transfer annotation
    /// on each side.
    fn decorated(&self) -> Case {
        let other_offer = if self.settings.offer_key == OFFER {
            "example.com/handoff"
        } else {
            OFFER
        };
        let mut case = self.clone();
        let sides = [&mut case.admission.old, &mut case.admission.new];
        for object in sides.into_iter().flatten() {
            for (key, value) in [
                ("app", "web"),
                ("appid", "Extension.team-b.argocd"),
                ("olm.operatorframework.io/owner-namespace", "team-b"),
                ("camel.apache.org/operator", "operator-9"),
            ] {
                object.labels.insert(key.to_owned(), value.to_owned());
            }
            for (key, value) in [
                (other_offer, "ClusterExtension.argocd"),
                (LAST_APPLIED, "{}"),
            ] {
                object.annotations.insert(key.to_owned(), value.to_owned());
            }
        }
        case
    }
}

/// The parts of a response the properties read.
#[derive(Debug, Clone, PartialEq)]
struct Response {
    accepted: bool,
    code: Option<u16>,
    message: Option<String>,
    warnings: Vec<String>,
    /// The exemption audit annotation.
    audit: Option<String>,
    patched: Option<Value>,
}

/// A response as `key: rule` per violation, warning and audit line, in no order.
type Rules = (bool, Option<u16>, Vec<String>, Vec<String>, Vec<String>);

impl Response {
    /// The object as admitted: the patched one, or the request's; `None` when denied or
    /// without an object.
    fn admitted(&self, request: &Value) -> Option<Value> {
        if !self.accepted {
            return None;
        }
        let object = self.patched.as_ref().unwrap_or(&request["object"]);
        object.is_object().then(|| object.clone())
    }

    /// The response with each violation as its `key: rule`, in no order. (The offer violation
    /// of an update that moves several entries names the first moved one: its owners depend on
    /// the order of the entries.)
    fn rules(&self) -> Rules {
        let warnings = self.warnings.join("\n");
        (
            self.accepted,
            self.code,
            rules(self.message.as_deref()),
            rules(Some(&warnings)),
            rules(self.audit.as_deref()),
        )
    }
}

/// The `key: rule` of each violation line of a message, warning or audit annotation, sorted.
fn rules(message: Option<&str>) -> Vec<String> {
    let violation = |line: &str| {
        let line = line
            .split_once(" bypassed: ")
            .map_or(line, |(_, line)| line);
        line.split_once(" denied for ")
            .map_or(line, |(rule, _)| rule)
            .to_owned()
    };
    let mut rules: Vec<_> = message.unwrap_or_default().lines().map(violation).collect();
    rules.sort();
    rules
}

/// Checks the settings as policy-server does when it loads the policy, then evaluates.
fn respond(request: &Value, settings: &Value) -> Result<Response, TestCaseError> {
    let check = policy::validate_settings(&serde_json::to_vec(settings).unwrap());
    prop_assert!(
        check.valid,
        "generated invalid settings: {:?}",
        check.message
    );
    let payload = serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
    let response = policy::validate(&payload);
    let mut audit = response.audit_annotations.unwrap_or_default();
    let exemption = audit.remove(EXEMPTION_ANNOTATION);
    prop_assert!(audit.is_empty(), "unknown audit annotations {audit:?}");
    Ok(Response {
        accepted: response.accepted,
        code: response.code,
        message: response.message,
        warnings: response.warnings.unwrap_or_default(),
        audit: exemption,
        patched: response.mutated_object,
    })
}

fn labels_in(object: &Value) -> Labels {
    let labels = object["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten();
    labels
        .filter_map(|(key, value)| Some((key.clone(), value.as_str()?.to_owned())))
        .collect()
}

fn annotation_in(object: &Value, key: &str) -> Option<String> {
    object["metadata"]["annotations"][key]
        .as_str()
        .map(str::to_owned)
}

/// What a patch changed in an object: labels set, annotations removed, and whether all else
/// stayed as it was.
#[derive(Debug, PartialEq, Eq)]
struct Patch {
    labels: Labels,
    removed: Vec<String>,
    rest_kept: bool,
}

impl Patch {
    fn between(object: &Value, patched: &Value) -> Patch {
        let (before, after) = (labels_in(object), labels_in(patched));
        let labels: Labels = (after.iter())
            .filter(|(key, value)| before.get(*key) != Some(value))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        let annotations = |object: &Value| {
            let map = object["metadata"]["annotations"].as_object();
            map.cloned().unwrap_or_default()
        };
        let (had, has) = (annotations(object), annotations(patched));
        let removed = had
            .keys()
            .filter(|key| !has.contains_key(*key))
            .cloned()
            .collect();
        let rest = |object: &Value| {
            let mut object = object.clone();
            if let Some(metadata) = object["metadata"].as_object_mut() {
                metadata.remove("labels");
                metadata.remove("annotations");
            }
            object
        };
        let kept_annotations = has.iter().all(|(key, value)| had.get(key) == Some(value));
        let kept_labels = before.keys().all(|key| after.contains_key(key));
        Patch {
            labels,
            removed,
            rest_kept: kept_annotations && kept_labels && rest(object) == rest(patched),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The oracle: who acts for which owner, computed from the identities alone
// ---------------------------------------------------------------------------------------------

mod oracle {
    use std::collections::BTreeSet;

    use super::{Admission, Identity};

    /// The namespace and name of a service account user name, when it is one Kubernetes could
    /// have issued: `system:serviceaccount:<ns>:<name>`, `<ns>` a DNS-1123 label and `<name>` a
    /// DNS-1123 subdomain.
    pub fn service_account(user: &str) -> Option<(&str, &str)> {
        let (namespace, name) = any_service_account(user)?;
        (dns_label(namespace) && dns_subdomain(name)).then_some((namespace, name))
    }

    /// The parts of any user name that looks like a service account's, checked for nothing but
    /// being non-empty.
    pub fn any_service_account(user: &str) -> Option<(&str, &str)> {
        let (namespace, name) = user
            .strip_prefix("system:serviceaccount:")?
            .split_once(':')?;
        (!namespace.is_empty() && !name.is_empty()).then_some((namespace, name))
    }

    /// Kubernetes' `IsDNS1123Label`.
    fn dns_label(text: &str) -> bool {
        (1..=63).contains(&text.len()) && dns_part(text)
    }

    /// Kubernetes' `IsDNS1123Subdomain`.
    fn dns_subdomain(text: &str) -> bool {
        (1..=253).contains(&text.len()) && text.split('.').all(dns_part)
    }

    fn dns_part(part: &str) -> bool {
        let alphanumeric = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
        part.starts_with(alphanumeric)
            && part.ends_with(alphanumeric)
            && part.chars().all(|c| alphanumeric(c) || c == '-')
    }

    /// Whether `pattern`, in which `*` stands for any run of characters, matches `text`.
    pub fn glob(pattern: &str, text: &str) -> bool {
        let text = text.as_bytes();
        // matched[j]: the pattern so far matches text[..j].
        let mut matched = vec![false; text.len() + 1];
        matched[0] = true;
        for &p in pattern.as_bytes() {
            let mut next = vec![false; text.len() + 1];
            if p == b'*' {
                let mut any = false;
                for (j, slot) in next.iter_mut().enumerate() {
                    any |= matched[j];
                    *slot = any;
                }
            } else {
                for j in 1..=text.len() {
                    next[j] = matched[j - 1] && text[j - 1] == p;
                }
            }
            matched = next;
        }
        matched[text.len()]
    }

    /// Whether an identity binds the requester: a user pattern matches its name, or a group
    /// pattern one of its groups.
    pub fn binds(identity: &Identity, user: &str, groups: &[String]) -> bool {
        identity.users.iter().any(|pattern| glob(pattern, user))
            || (identity.groups.iter())
                .any(|pattern| groups.iter().any(|group| glob(pattern, group)))
    }

    /// The owner patterns the requester acts for: those of every identity that binds it,
    /// templates filled from its service account; a templated pattern names no owner for a
    /// requester that is not one.
    pub fn acting(identities: &[Identity], admission: &Admission) -> BTreeSet<String> {
        acting_with(identities, admission, service_account)
    }

    /// [`acting`], with service accounts recognised by `account`.
    pub fn acting_with(
        identities: &[Identity],
        admission: &Admission,
        account: fn(&str) -> Option<(&str, &str)>,
    ) -> BTreeSet<String> {
        let account = account(&admission.user);
        (identities.iter())
            .filter(|identity| binds(identity, &admission.user, &admission.groups))
            .flat_map(|identity| &identity.owners)
            .filter_map(|pattern| match (pattern.contains("${"), account) {
                (false, _) => Some(pattern.clone()),
                (true, Some((namespace, name))) => Some(
                    pattern
                        .replace("${namespace}", namespace)
                        .replace("${name}", name),
                ),
                (true, None) => None,
            })
            .collect()
    }

    pub fn acts_for(acting: &BTreeSet<String>, owner: &str) -> bool {
        acting.iter().any(|pattern| glob(pattern, owner))
    }

    /// The one concrete owner a requester acts for: one pattern, without a wildcard.
    pub fn single_owner(acting: &BTreeSet<String>) -> Option<&str> {
        match acting.iter().collect::<Vec<_>>().as_slice() {
            [owner] if !owner.contains('*') => Some(owner.as_str()),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

/// How one owner label entry goes from the stored object to the new one; A is the stored owner,
/// B another valid owner in scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Move {
    /// none → none
    Unowned,
    /// A → A
    Keep,
    /// none → B
    Adopt,
    /// none → an owner out of the object's scope
    AdoptOutOfScope,
    /// none → no valid owner
    AdoptInvalid,
    /// A → none
    Orphan,
    /// A → B
    Change,
    /// A → an owner out of scope
    ChangeOutOfScope,
    /// A → no valid owner
    ChangeInvalid,
}

/// Whom an offer names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OfferTo {
    Nobody,
    /// The new owner (B when the new object has none).
    NewOwner,
    /// A third valid owner.
    Another,
    /// The stored owner (A when the stored object has none).
    CurrentOwner,
    /// An owner out of the object's scope.
    OutOfScope,
    /// An owner of no configured kind.
    Invalid,
}

/// What the new object does with the stored object's offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NewOffer {
    Kept,
    Dropped,
    Made(OfferTo),
}

/// Whom the requester acts for, through identities built for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ActsFor {
    Old,
    New,
    Both,
    /// A third owner, neither old nor new.
    Another,
    /// The new owners of the other entries (another chosen owner where they have none).
    OtherEntries,
    /// An owner out of the object's scope, or no valid owner.
    Outside,
    Nobody,
}

/// How an identity binds the requester to an owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Binding {
    /// The owner, exactly, for the user name.
    User,
    /// The owner, exactly, for a group of the requester.
    Group,
    /// The owner, exactly, for a group pattern (`installers-*`).
    GroupPattern,
    /// An owner pattern with a `*` that covers the owner, for the user name.
    Wildcard,
    /// `${namespace}`/`${name}` of the requesting service account, named after the owner.
    Template,
}

/// Whether and how the requester is exempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exempt {
    No,
    User,
    Group,
    TwoGroups,
    UserAndGroup,
}

/// The weights of each choice of [`scenario`], per property.
#[derive(Debug, Clone, Copy)]
struct Mix {
    operations: &'static [(u32, Op)],
    /// The move of the focus entry.
    moves: &'static [(u32, Move)],
    /// The moves of the other entries.
    others: &'static [(u32, Move)],
    old_offers: &'static [(u32, OfferTo)],
    new_offers: &'static [(u32, NewOffer)],
    acting: &'static [(u32, ActsFor)],
    exempt: &'static [(u32, Exempt)],
    /// How often the stored owner predates the policy: out of scope, or invalid.
    ratchet: f64,
    identities: f64,
    writes_owner: f64,
    stamp: f64,
    /// How often `adoption` and `orphaning` are `Deny`, each.
    deny: f64,
    /// Whether the focus is an entry with kinds (scope applies) when there is one.
    scoped_focus: bool,
    /// How often Camel K's entry, which reads any value as an owner, may be in the settings.
    camel: f64,
    /// The fewest owner label entries.
    entries: usize,
}

/// The moves of the entries besides the focus, most often.
const QUIET: &[(u32, Move)] = &[
    (6, Move::Unowned),
    (3, Move::Keep),
    (1, Move::Adopt),
    (1, Move::Orphan),
    (1, Move::Change),
];

const ALL_MOVES: &[(u32, Move)] = &[
    (1, Move::Unowned),
    (2, Move::Keep),
    (2, Move::Adopt),
    (1, Move::AdoptOutOfScope),
    (1, Move::AdoptInvalid),
    (2, Move::Orphan),
    (3, Move::Change),
    (1, Move::ChangeOutOfScope),
    (1, Move::ChangeInvalid),
];

const ALL_ACTING: &[(u32, ActsFor)] = &[
    (3, ActsFor::New),
    (2, ActsFor::Old),
    (2, ActsFor::Both),
    (1, ActsFor::Another),
    (1, ActsFor::OtherEntries),
    (1, ActsFor::Outside),
    (2, ActsFor::Nobody),
];

const ALL_OLD_OFFERS: &[(u32, OfferTo)] = &[
    (4, OfferTo::Nobody),
    (3, OfferTo::NewOwner),
    (1, OfferTo::Another),
    (1, OfferTo::CurrentOwner),
    (1, OfferTo::OutOfScope),
    (1, OfferTo::Invalid),
];

const ALL_NEW_OFFERS: &[(u32, NewOffer)] = &[
    (4, NewOffer::Dropped),
    (4, NewOffer::Kept),
    (1, NewOffer::Made(OfferTo::NewOwner)),
    (1, NewOffer::Made(OfferTo::Another)),
];

/// Owner changes A → B, with and without offers, by every kind of requester.
fn transfers() -> impl Strategy<Value = Case> {
    scenario(Mix {
        operations: &[(4, Op::Update), (1, Op::Status)],
        moves: &[
            (8, Move::Change),
            (1, Move::ChangeOutOfScope),
            (1, Move::ChangeInvalid),
        ],
        others: QUIET,
        old_offers: &[
            (5, OfferTo::NewOwner),
            (2, OfferTo::Another),
            (1, OfferTo::CurrentOwner),
            (2, OfferTo::Nobody),
        ],
        new_offers: &[
            (6, NewOffer::Dropped),
            (3, NewOffer::Kept),
            (1, NewOffer::Made(OfferTo::NewOwner)),
        ],
        acting: &[
            (4, ActsFor::New),
            (2, ActsFor::Old),
            (2, ActsFor::Both),
            (1, ActsFor::Another),
            (1, ActsFor::Nobody),
        ],
        exempt: &[(8, Exempt::No), (1, Exempt::User), (1, Exempt::Group)],
        ratchet: 0.15,
        identities: 0.75,
        writes_owner: 0.3,
        stamp: 0.4,
        deny: 0.2,
        scoped_focus: false,
        camel: 1.0,
        entries: 1,
    })
}

/// CREATEs with an owner, adoptions and orphanings, by requesters acting for the owner or not.
fn owner_sets_and_removals() -> impl Strategy<Value = Case> {
    scenario(Mix {
        operations: &[(3, Op::Create), (4, Op::Update), (2, Op::Status)],
        moves: &[
            (4, Move::Adopt),
            (4, Move::Orphan),
            (2, Move::Change),
            (1, Move::Keep),
            (1, Move::AdoptOutOfScope),
        ],
        others: QUIET,
        old_offers: &[
            (6, OfferTo::Nobody),
            (3, OfferTo::NewOwner),
            (1, OfferTo::Another),
        ],
        new_offers: &[(5, NewOffer::Dropped), (5, NewOffer::Kept)],
        acting: &[
            (3, ActsFor::New),
            (3, ActsFor::Old),
            (3, ActsFor::Nobody),
            (1, ActsFor::Both),
            (1, ActsFor::Another),
        ],
        exempt: &[(8, Exempt::No), (1, Exempt::User), (1, Exempt::Group)],
        ratchet: 0.1,
        identities: 1.0,
        writes_owner: 0.3,
        stamp: 0.3,
        deny: 0.1,
        scoped_focus: false,
        camel: 1.0,
        entries: 1,
    })
}

/// UPDATEs that keep an owner, DELETEs and status writes of owned objects under `writes: Owner`;
/// a quarter of them status writes that add an owner beside the one kept.
fn owned_writes() -> impl Strategy<Value = Case> {
    let writes = scenario(Mix {
        operations: &[(4, Op::Update), (4, Op::Delete), (2, Op::Status)],
        moves: &[
            (6, Move::Keep),
            (1, Move::Orphan),
            (1, Move::Adopt),
            (1, Move::Change),
        ],
        others: QUIET,
        old_offers: &[
            (7, OfferTo::Nobody),
            (2, OfferTo::NewOwner),
            (1, OfferTo::Another),
        ],
        new_offers: &[
            (7, NewOffer::Kept),
            (2, NewOffer::Dropped),
            (1, NewOffer::Made(OfferTo::Another)),
        ],
        acting: &[
            (4, ActsFor::Old),
            (4, ActsFor::Nobody),
            (1, ActsFor::New),
            (1, ActsFor::Both),
            (1, ActsFor::OtherEntries),
        ],
        exempt: &[(8, Exempt::No), (1, Exempt::User), (1, Exempt::Group)],
        ratchet: 0.15,
        identities: 1.0,
        writes_owner: 1.0,
        stamp: 0.3,
        deny: 0.1,
        scoped_focus: false,
        camel: 1.0,
        entries: 1,
    });
    let status_writes_beside_an_owner = scenario(Mix {
        operations: &[(1, Op::Status)],
        moves: &[(1, Move::Keep)],
        others: &[(4, Move::Adopt), (1, Move::Unowned)],
        old_offers: &[(1, OfferTo::Nobody)],
        new_offers: &[(1, NewOffer::Kept)],
        acting: &[(4, ActsFor::OtherEntries), (1, ActsFor::Old)],
        exempt: &[(1, Exempt::No)],
        ratchet: 0.0,
        identities: 1.0,
        writes_owner: 1.0,
        stamp: 0.3,
        deny: 0.0,
        scoped_focus: false,
        camel: 1.0,
        entries: 2,
    });
    prop_oneof![3 => writes, 1 => status_writes_beside_an_owner]
}

/// CREATEs by requesters acting for one owner, several or a pattern, with and without the
/// owner label; handoffs that leave the offer on the object.
fn stamp_candidates() -> impl Strategy<Value = Case> {
    scenario(Mix {
        operations: &[(5, Op::Create), (4, Op::Update), (1, Op::Status)],
        moves: &[
            (5, Move::Unowned),
            (2, Move::Adopt),
            (4, Move::Change),
            (1, Move::Orphan),
            (1, Move::Keep),
        ],
        others: QUIET,
        old_offers: &[(7, OfferTo::NewOwner), (3, OfferTo::Nobody)],
        new_offers: &[(6, NewOffer::Kept), (4, NewOffer::Dropped)],
        acting: &[
            (5, ActsFor::New),
            (2, ActsFor::Both),
            (1, ActsFor::Old),
            (3, ActsFor::Outside),
            (1, ActsFor::Nobody),
        ],
        exempt: &[(9, Exempt::No), (1, Exempt::Group)],
        ratchet: 0.1,
        identities: 1.0,
        writes_owner: 0.2,
        stamp: 0.85,
        deny: 0.1,
        scoped_focus: false,
        camel: 0.5,
        entries: 1,
    })
}

/// CREATEs and owner changes to owners in scope, out of scope, or invalid, on cluster-scoped
/// and namespaced objects.
fn scope_claims() -> impl Strategy<Value = Case> {
    scenario(Mix {
        operations: &[(4, Op::Create), (4, Op::Update), (1, Op::Status)],
        moves: &[
            (3, Move::AdoptOutOfScope),
            (2, Move::ChangeOutOfScope),
            (4, Move::Adopt),
            (1, Move::Change),
            (1, Move::AdoptInvalid),
            (1, Move::ChangeInvalid),
            (1, Move::Keep),
        ],
        others: QUIET,
        old_offers: &[
            (4, OfferTo::NewOwner),
            (4, OfferTo::Nobody),
            (1, OfferTo::OutOfScope),
        ],
        new_offers: &[(7, NewOffer::Dropped), (3, NewOffer::Kept)],
        acting: &[
            (5, ActsFor::New),
            (2, ActsFor::Nobody),
            (1, ActsFor::Both),
            (1, ActsFor::Outside),
        ],
        exempt: &[(8, Exempt::No), (1, Exempt::User), (1, Exempt::Group)],
        ratchet: 0.1,
        identities: 0.5,
        writes_owner: 0.2,
        stamp: 0.3,
        deny: 0.1,
        scoped_focus: true,
        camel: 1.0,
        entries: 1,
    })
}

/// Requests of every kind, each maybe with one field broken.
fn requests_with_a_broken_field() -> impl Strategy<Value = (Case, Broken)> {
    let any_request = scenario(Mix {
        operations: &[
            (3, Op::Create),
            (4, Op::Update),
            (2, Op::Delete),
            (2, Op::Status),
            (1, Op::Scale),
        ],
        moves: ALL_MOVES,
        others: QUIET,
        old_offers: ALL_OLD_OFFERS,
        new_offers: ALL_NEW_OFFERS,
        acting: ALL_ACTING,
        exempt: &[(7, Exempt::No), (1, Exempt::User), (1, Exempt::Group)],
        ratchet: 0.1,
        identities: 0.75,
        writes_owner: 0.4,
        stamp: 0.4,
        deny: 0.2,
        scoped_focus: false,
        camel: 1.0,
        entries: 1,
    });
    let broken = weighted(&[
        (10, Broken::Nothing),
        (1, Broken::LabelNotAString),
        (1, Broken::LabelsNotAMap),
        (1, Broken::OfferNotAString),
        (1, Broken::UnknownOperation),
        (1, Broken::NoObject),
        (1, Broken::NoOldObject),
        (1, Broken::UserNotAString),
        (1, Broken::GroupsNotAList),
        (1, Broken::NamespaceNotAString),
        (1, Broken::KindNotAnObject),
    ]);
    (any_request, broken)
}

/// Requests by exempt requesters in several exempt groups, with identities, and an order to
/// apply to the settings' lists.
fn exempt_and_reordered_requests() -> impl Strategy<Value = (Case, Order)> {
    let case = scenario(Mix {
        operations: &[
            (5, Op::Create),
            (4, Op::Update),
            (1, Op::Delete),
            (2, Op::Status),
        ],
        moves: ALL_MOVES,
        others: QUIET,
        old_offers: ALL_OLD_OFFERS,
        new_offers: ALL_NEW_OFFERS,
        acting: ALL_ACTING,
        exempt: &[
            (1, Exempt::No),
            (1, Exempt::User),
            (2, Exempt::Group),
            (4, Exempt::TwoGroups),
            (2, Exempt::UserAndGroup),
        ],
        ratchet: 0.1,
        identities: 0.85,
        writes_owner: 0.4,
        stamp: 0.7,
        deny: 0.2,
        scoped_focus: false,
        camel: 1.0,
        entries: 1,
    });
    let order =
        (any::<[u32; 8]>(), any::<Index>()).prop_map(|(keys, repeat)| Order { keys, repeat });
    (case, order)
}

/// CREATEs of one owner in scope by service accounts, real and malformed, under templated
/// identities.
fn service_account_creates() -> impl Strategy<Value = Case> {
    let long_namespace = "n".repeat(64);
    let long_name = "n".repeat(254);
    let namespaces = weighted(&[
        (12, "helm-releases".to_owned()),
        (2, "team-a".to_owned()),
        (2, "camel-k".to_owned()),
        (2, "*".to_owned()),
        (1, "Team-A".to_owned()),
        (1, "team_a".to_owned()),
        (1, "team.a".to_owned()),
        (1, "-team".to_owned()),
        (1, long_namespace),
    ]);
    let names = weighted(&[
        (4, "cert-manager".to_owned()),
        (3, "argocd".to_owned()),
        (2, "installer".to_owned()),
        (2, "operator-1".to_owned()),
        (5, "*".to_owned()),
        (2, "cert-*".to_owned()),
        (2, "Cert-Manager".to_owned()),
        (1, "argocd:v2".to_owned()),
        (1, "argocd.".to_owned()),
        (1, ".argocd".to_owned()),
        (1, "argocd.v2".to_owned()),
        (1, "argo..cd".to_owned()),
        (1, long_name),
    ]);
    let templated = vec![
        identity(
            &["Extension.${namespace}.*"],
            &["system:serviceaccount:*:installer"],
            &[],
        ),
        identity(
            &["Extension.${namespace}.${name}"],
            &[],
            &["system:serviceaccounts"],
        ),
        identity(&["${name}"], &["system:serviceaccount:camel-k:*"], &[]),
    ];
    // An owner: a fixed one, or (`None`) one named after the service account.
    let owners = weighted(&[
        (3, Some("ClusterExtension.cert-manager")),
        (3, Some("ClusterExtension.argocd")),
        (1, Some("ClusterExtension.prometheus")),
        (1, Some("Extension.team-a.installer")),
        (1, Some("Extension.team-a.argocd")),
        (1, Some("operator-1")),
        (1, Some("operator-2")),
        (7, None),
    ]);
    (
        namespaces,
        names,
        subsequence(templated, 0..=3),
        owners,
        any::<bool>(),
        any::<[u32; 8]>(),
    )
        .prop_map(|(namespace, name, more, owner, camel_first, keys)| {
            let mut identities = vec![
                identity(
                    &["ClusterExtension.${name}"],
                    &["system:serviceaccount:helm-releases:*"],
                    &[],
                ),
                identity(
                    &["ClusterExtension.argocd"],
                    &["system:serviceaccount:helm-releases:*"],
                    &[],
                ),
            ];
            identities.extend(more);
            // An owner named after the service account, where that makes a label value.
            let named = format!("ClusterExtension.{name}");
            let owner = match owner {
                Some(owner) => owner.to_owned(),
                None if is_label_value(&named) => named,
                None => "ClusterExtension.cert-manager".to_owned(),
            };
            let shape = if owner.contains('.') {
                Shape::AppId
            } else {
                Shape::Camel
            };
            let mut labels = Labels::new();
            labels.extend(shape.labels(&shape.claim_of(&owner)));
            let shapes = if camel_first {
                vec![Shape::Camel, Shape::AppId]
            } else {
                vec![Shape::AppId, Shape::Camel]
            };
            Case {
                settings: Settings {
                    shapes,
                    adoption: "Allow",
                    orphaning: "Allow",
                    exempt_users: Vec::new(),
                    exempt_groups: Vec::new(),
                    identities: permuted(&identities, &keys, 0),
                    writes: "Any",
                    stamp: false,
                    offer_key: OFFER,
                },
                admission: Admission {
                    op: Op::Create,
                    place: PLACES[3],
                    groups: vec![
                        "system:serviceaccounts".to_owned(),
                        format!("system:serviceaccounts:{namespace}"),
                        "system:authenticated".to_owned(),
                    ],
                    user: format!("system:serviceaccount:{namespace}:{name}"),
                    old: None,
                    new: Some(Object {
                        labels,
                        ..Object::default()
                    }),
                },
            }
        })
}

/// Whether `text` is a valid label value: at most 63 alphanumerics, `-`, `_` and `.`, starting
/// and ending with an alphanumeric.
fn is_label_value(text: &str) -> bool {
    let alphanumeric = |c: char| c.is_ascii_alphanumeric();
    text.len() <= 63
        && text.starts_with(alphanumeric)
        && text.ends_with(alphanumeric)
        && text
            .chars()
            .all(|c| alphanumeric(c) || matches!(c, '-' | '_' | '.'))
}

/// One of `options`, as often as its weight says.
fn weighted<T: Clone + fmt::Debug + 'static>(options: &[(u32, T)]) -> BoxedStrategy<T> {
    let options = (options.iter())
        .map(|(weight, option)| (*weight, Just(option.clone()).boxed()))
        .collect();
    Union::new_weighted(options).boxed()
}

/// `items` in the order of `keys` (shifted by `salt`), ties kept in place.
fn permuted<T: Clone>(items: &[T], keys: &[u32; 8], salt: usize) -> Vec<T> {
    let mut indices: Vec<usize> = (0..items.len()).collect();
    indices.sort_by_key(|&index| (keys[(index + salt) % keys.len()], index));
    indices
        .into_iter()
        .map(|index| items[index].clone())
        .collect()
}

/// An order to apply to a list, and an item to repeat in it.
#[derive(Debug, Clone)]
struct Order {
    keys: [u32; 8],
    repeat: Index,
}

impl Order {
    fn permute<T: Clone>(&self, items: &[T], salt: usize) -> Vec<T> {
        permuted(items, &self.keys, salt)
    }

    /// `items` reordered, one of them repeated.
    fn apply<T: Clone>(&self, items: &[T], salt: usize) -> Vec<T> {
        let mut items = self.permute(items, salt);
        if !items.is_empty() {
            items.push(items[self.repeat.index(items.len())].clone());
        }
        items
    }
}

/// A field of the request broken so that the policy cannot read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Broken {
    Nothing,
    LabelNotAString,
    LabelsNotAMap,
    OfferNotAString,
    UnknownOperation,
    NoObject,
    NoOldObject,
    UserNotAString,
    GroupsNotAList,
    NamespaceNotAString,
    KindNotAnObject,
}

impl Broken {
    /// Breaks `request`; the name of the field a 400 must mention.
    fn apply(self, request: &mut Value, case: &Case) -> Option<String> {
        let side = if request["object"].is_object() {
            "object"
        } else {
            "oldObject"
        };
        fn metadata<'v>(request: &'v mut Value, side: &str) -> &'v mut Value {
            &mut request[side]["metadata"]
        }
        let field = |name: &str| Some(name.to_owned());
        match self {
            Broken::Nothing => None,
            Broken::LabelNotAString => {
                let key = case.settings.shapes[0].key();
                metadata(request, side)["labels"][key] = json!(5);
                field(key)
            }
            Broken::LabelsNotAMap => {
                metadata(request, side)["labels"] = json!(["app"]);
                field("labels")
            }
            Broken::OfferNotAString => {
                let key = case.settings.offer_key;
                metadata(request, side)["annotations"][key] = json!({"to": "operator-1"});
                field(key)
            }
            Broken::UnknownOperation => {
                request["operation"] = json!("PATCH");
                field("operation")
            }
            Broken::NoObject => {
                request.as_object_mut()?.remove("object");
                field("object")
            }
            Broken::NoOldObject => {
                request.as_object_mut()?.remove("oldObject");
                field("oldObject")
            }
            Broken::UserNotAString => {
                request["userInfo"]["username"] = json!(7);
                field("username")
            }
            Broken::GroupsNotAList => {
                request["userInfo"]["groups"] = json!("system:authenticated");
                field("groups")
            }
            Broken::NamespaceNotAString => {
                request["namespace"] = json!(3);
                field("namespace")
            }
            Broken::KindNotAnObject => {
                request["kind"] = json!("ConfigMap");
                field("kind")
            }
        }
    }
}

/// The choices of one entry: its move, whether its stored owner predates the policy, and which
/// owners it picks (A, B, a third one, an invalid claim).
#[derive(Debug, Clone)]
struct EntryChoice {
    change: Move,
    ratchet: bool,
    picks: [Index; 4],
}

fn entry_choice(moves: &'static [(u32, Move)], ratchet: f64) -> impl Strategy<Value = EntryChoice> {
    (
        weighted(moves),
        chance(ratchet),
        prop::array::uniform(any::<Index>()),
    )
        .prop_map(|(change, ratchet, picks)| EntryChoice {
            change,
            ratchet,
            picks,
        })
}

/// Every choice a scenario is made of.
#[derive(Debug, Clone)]
struct Choices {
    place: Place,
    shapes: Vec<Shape>,
    focus: Index,
    scoped_focus: bool,
    op: Op,
    focus_entry: EntryChoice,
    other_entries: [EntryChoice; 2],
    old_offer: OfferTo,
    new_offer: NewOffer,
    acting: ActsFor,
    bindings: [Binding; 2],
    service_account: bool,
    exempt: Exempt,
    extra_groups: Vec<&'static str>,
    background: Vec<usize>,
    noise_users: Vec<&'static str>,
    noise_groups: Vec<&'static str>,
    identities: bool,
    adoption_deny: bool,
    orphaning_deny: bool,
    writes_owner: bool,
    stamp: bool,
    offer_key: &'static str,
    order: [u32; 8],
}

const BINDINGS: &[(u32, Binding)] = &[
    (3, Binding::User),
    (2, Binding::Group),
    (1, Binding::GroupPattern),
    (2, Binding::Wildcard),
    (3, Binding::Template),
];
/// Groups a requester may be in besides those the API server gives it.
const EXTRA_GROUPS: [&str; 3] = ["oncall", "auditors", "team-a-devs"];
/// Exempt users and groups that are not the requester's.
const NOISE_USERS: [&str; 2] = [
    "break-glass",
    "system:serviceaccount:kube-system:generic-garbage-collector",
];
const NOISE_GROUPS: [&str; 2] = ["system:masters", "platform-admins"];
const OFFER_KEYS: [&str; 2] = [OFFER, "example.com/handoff"];

/// Identities that bind other requesters than the ones a scenario builds for.
fn background_identities() -> [Identity; 5] {
    [
        identity(
            &["ClusterExtension.*"],
            &["system:serviceaccount:olmv1-system:operator-controller"],
            &[],
        ),
        identity(
            &["Extension.${namespace}.*"],
            &["system:serviceaccount:*:installer"],
            &[],
        ),
        identity(
            &["ClusterExtension.${name}"],
            &["system:serviceaccount:helm-releases:*"],
            &[],
        ),
        identity(&["operator-*"], &[], &["camel-k-operators"]),
        identity(
            &["ClusterExtension.argocd", "Extension.team-b.*"],
            &["bob"],
            &["argocd-admins"],
        ),
    ]
}

/// Settings and a request, built from choices weighted by `mix`.
fn scenario(mix: Mix) -> impl Strategy<Value = Case> {
    let what = (
        select(PLACES.to_vec()),
        subsequence(Shape::ALL.to_vec(), mix.entries..=3).prop_shuffle(),
        any::<Index>(),
        weighted(mix.operations),
        entry_choice(mix.moves, mix.ratchet),
        prop::array::uniform(entry_choice(mix.others, 0.0)),
        weighted(mix.old_offers),
        weighted(mix.new_offers),
    );
    let who = (
        weighted(mix.acting),
        prop::array::uniform(weighted(BINDINGS)),
        any::<bool>(),
        weighted(mix.exempt),
        subsequence(EXTRA_GROUPS.to_vec(), 0..=3),
        subsequence(
            (0..background_identities().len()).collect::<Vec<_>>(),
            0..=2,
        ),
        subsequence(NOISE_USERS.to_vec(), 0..=2),
        subsequence(NOISE_GROUPS.to_vec(), 0..=2),
    );
    let knobs = (
        (
            chance(mix.identities),
            chance(mix.deny),
            chance(mix.deny),
            chance(mix.writes_owner),
            chance(mix.stamp),
            select(OFFER_KEYS.to_vec()),
            any::<[u32; 8]>(),
        ),
        chance(mix.camel),
    );
    (what, who, knobs).prop_map(move |(what, who, knobs)| {
        let (place, mut shapes, focus, op, focus_entry, other_entries, old_offer, new_offer) = what;
        let (identities, adoption_deny, orphaning_deny, writes_owner, stamp, offer_key, order) =
            knobs.0;
        if !knobs.1 && shapes.len() > mix.entries {
            shapes.retain(|&shape| shape != Shape::Camel);
        }
        let (acting, bindings, service_account, exempt, extra_groups, background) =
            (who.0, who.1, who.2, who.3, who.4, who.5);
        let (noise_users, noise_groups) = (who.6, who.7);
        build(Choices {
            place,
            shapes,
            focus,
            scoped_focus: mix.scoped_focus,
            op,
            focus_entry,
            other_entries,
            old_offer,
            new_offer,
            acting,
            bindings,
            service_account,
            exempt,
            extra_groups,
            background,
            noise_users,
            noise_groups,
            identities,
            adoption_deny,
            orphaning_deny,
            writes_owner,
            stamp,
            offer_key,
            order,
        })
    })
}

/// The owners one entry's choice picked, and its claims on each side.
struct Plan {
    old: Claim,
    new: Claim,
    /// The stored owner chosen (whether or not the stored object claims it).
    a: String,
    /// The other owner chosen.
    b: String,
    /// A third valid owner.
    another: String,
    /// An owner out of the object's scope, if the shape has scopes.
    outside: Option<String>,
}

fn pick<T: Clone>(items: &[T], index: &Index) -> T {
    items[index.index(items.len())].clone()
}

impl Plan {
    fn of(shape: Shape, place: Place, choice: &EntryChoice) -> Plan {
        let [first, second, third, fourth] = &choice.picks;
        let valid = shape.owners_in(place);
        let a = pick(&valid, first);
        let rest: Vec<_> = valid.iter().copied().filter(|owner| *owner != a).collect();
        let b = pick(&rest, second);
        let third_owners: Vec<_> = rest.iter().copied().filter(|owner| *owner != b).collect();
        let another = pick(&third_owners, third);
        let outside_owners = shape.owners_outside(place);
        let outside = (!outside_owners.is_empty()).then(|| pick(&outside_owners, third));
        let invalid = pick(&shape.invalid_claims(), fourth);
        let beyond = outside.map_or_else(|| invalid.clone(), |owner| shape.claim_of(owner));
        let stored = if choice.ratchet {
            beyond.clone()
        } else {
            shape.claim_of(a)
        };
        let none = Claim::default();
        let (old, new) = match choice.change {
            Move::Unowned => (none.clone(), none),
            Move::Keep => (stored.clone(), stored),
            Move::Adopt => (none, shape.claim_of(b)),
            Move::AdoptOutOfScope => (none, beyond),
            Move::AdoptInvalid => (none, invalid),
            Move::Orphan => (stored, none),
            Move::Change => (stored, shape.claim_of(b)),
            Move::ChangeOutOfScope => (stored, beyond),
            Move::ChangeInvalid => (stored, invalid),
        };
        Plan {
            old,
            new,
            a: a.to_owned(),
            b: b.to_owned(),
            another: another.to_owned(),
            outside: outside.map(str::to_owned),
        }
    }

    fn old_id(&self) -> String {
        if self.old.is_none() {
            self.a.clone()
        } else {
            self.old.id()
        }
    }

    fn new_id(&self) -> String {
        if self.new.is_none() {
            self.b.clone()
        } else {
            self.new.id()
        }
    }

    fn offer(&self, to: OfferTo) -> Option<String> {
        match to {
            OfferTo::Nobody => None,
            OfferTo::NewOwner => Some(self.new_id()),
            OfferTo::Another => Some(self.another.clone()),
            OfferTo::CurrentOwner => Some(self.old_id()),
            OfferTo::OutOfScope => Some(self.outside.clone().unwrap_or(UNKNOWN_KIND.to_owned())),
            OfferTo::Invalid => Some(UNKNOWN_KIND.to_owned()),
        }
    }
}

/// The service account a templated identity binds to owner `id`, and that identity.
fn template_for(id: &str) -> Option<(String, String, Identity)> {
    let sa = |namespace: &str, name: &str, owner: &str, users: &str| {
        Some((
            namespace.to_owned(),
            name.to_owned(),
            identity(&[owner], &[users], &[]),
        ))
    };
    if let Some(name) = id.strip_prefix("ClusterExtension.") {
        let users = "system:serviceaccount:helm-releases:*";
        return sa("helm-releases", name, "ClusterExtension.${name}", users).filter(|_| {
            oracle::service_account(&format!("system:serviceaccount:x:{name}")).is_some()
        });
    }
    if let Some((namespace, name)) = id
        .strip_prefix("Extension.")
        .and_then(|rest| rest.split_once('.'))
    {
        let user = format!("system:serviceaccount:{namespace}:{name}");
        oracle::service_account(&user)?;
        return sa(
            namespace,
            name,
            "Extension.${namespace}.${name}",
            "system:serviceaccount:*",
        );
    }
    if id.starts_with("operator-") {
        return sa("camel-k", id, "${name}", "system:serviceaccount:camel-k:*");
    }
    None
}

/// An owner pattern that covers `id` with a `*`.
fn wildcard_of(id: &str) -> String {
    match id.rfind(['.', '-']) {
        Some(at) => format!("{}*", &id[..=at]),
        None => "*".to_owned(),
    }
}

/// The groups the API server gives `user`.
fn groups_of(user: &str) -> Vec<String> {
    let mut groups = Vec::new();
    if let Some((namespace, _)) = oracle::any_service_account(user) {
        groups.push("system:serviceaccounts".to_owned());
        groups.push(format!("system:serviceaccounts:{namespace}"));
    }
    groups.push("system:authenticated".to_owned());
    groups
}

fn build(c: Choices) -> Case {
    let place = c.place;
    let shapes = c.shapes;
    let all: Vec<usize> = (0..shapes.len()).collect();
    let scoped: Vec<usize> = (all.iter().copied())
        .filter(|&index| shapes[index] != Shape::Camel)
        .collect();
    let candidates = if c.scoped_focus && !scoped.is_empty() {
        scoped
    } else {
        all
    };
    let focus = pick(&candidates, &c.focus);

    let (mut old, mut new) = (Object::default(), Object::default());
    let mut others = c.other_entries.iter();
    let mut focused = None;
    let mut other_owners = Vec::new();
    for (index, &shape) in shapes.iter().enumerate() {
        let choice = if index == focus {
            &c.focus_entry
        } else {
            others.next().expect("at most three entries")
        };
        let plan = Plan::of(shape, place, choice);
        old.labels.extend(shape.labels(&plan.old));
        new.labels.extend(shape.labels(&plan.new));
        if index == focus {
            focused = Some(plan);
        } else {
            other_owners.push(plan.new_id());
        }
    }
    let plan = focused.expect("a focus entry");
    old.offer = plan.offer(c.old_offer);
    new.offer = match (c.op, c.new_offer) {
        (_, NewOffer::Made(to)) => plan.offer(to),
        (Op::Create, _) | (_, NewOffer::Dropped) => None,
        (_, NewOffer::Kept) => old.offer.clone(),
    };
    let (old, new) = match c.op {
        Op::Create => (None, Some(new)),
        Op::Delete => (Some(old), None),
        _ => (Some(old), Some(new)),
    };

    // The requester, and the identities that make it act for whom it should.
    let targets = match c.acting {
        ActsFor::Old => vec![plan.old_id()],
        ActsFor::New => vec![plan.new_id()],
        ActsFor::Both => vec![plan.old_id(), plan.new_id()],
        ActsFor::Another => vec![plan.another.clone()],
        ActsFor::OtherEntries => other_owners,
        ActsFor::Outside => vec![plan.offer(OfferTo::OutOfScope).unwrap_or_default()],
        ActsFor::Nobody => Vec::new(),
    };
    let templated = (targets.first())
        .filter(|_| c.bindings[0] == Binding::Template)
        .and_then(|target| template_for(target));
    let user = match (&templated, c.service_account) {
        (Some((namespace, name, _)), _) => format!("system:serviceaccount:{namespace}:{name}"),
        (None, true) => "system:serviceaccount:ops:deployer".to_owned(),
        (None, false) => "alice".to_owned(),
    };
    let mut groups = groups_of(&user);
    let account = oracle::service_account(&user);
    let mut identities = Vec::new();
    for (slot, (target, binding)) in targets.iter().zip(c.bindings).enumerate() {
        let valid_exactly = !target.is_empty()
            && (shapes.iter()).any(|shape| shape.owner(&shape.claim_of(target)) != Owner::Invalid);
        let exact = if valid_exactly {
            target.clone()
        } else {
            wildcard_of(target)
        };
        let group = format!("installers-{slot}");
        identities.push(match binding {
            Binding::Template => match template_for(target) {
                Some((namespace, name, identity))
                    if account == Some((namespace.as_str(), name.as_str())) =>
                {
                    identity
                }
                _ => identity(&[&exact], &[&user], &[]),
            },
            Binding::User => identity(&[&exact], &[&user], &[]),
            Binding::Group => {
                groups.push(group.clone());
                identity(&[&exact], &[], &[&group])
            }
            Binding::GroupPattern => {
                groups.push(group);
                identity(&[&exact], &[], &["installers-*"])
            }
            Binding::Wildcard => identity(&[&wildcard_of(target)], &[&user], &[]),
        });
    }
    let background = background_identities();
    identities.extend(c.background.iter().map(|&index| background[index].clone()));
    if identities.is_empty() {
        // `writes: Owner` and `stamp` need identities; this one binds someone else.
        identities.push(background[4].clone());
    }

    // Exemptions, the requester's among others.
    let mut extra: Vec<String> = c
        .extra_groups
        .iter()
        .map(|&group| group.to_owned())
        .collect();
    let exempt_groups_wanted = match c.exempt {
        Exempt::Group | Exempt::UserAndGroup => 1,
        Exempt::TwoGroups => 2,
        Exempt::No | Exempt::User => 0,
    };
    for group in EXTRA_GROUPS {
        if extra.len() < exempt_groups_wanted && !extra.iter().any(|have| have == group) {
            extra.push(group.to_owned());
        }
    }
    let mut exempt_users: Vec<String> = c.noise_users.iter().map(|&u| u.to_owned()).collect();
    let mut exempt_groups: Vec<String> = c.noise_groups.iter().map(|&g| g.to_owned()).collect();
    if matches!(c.exempt, Exempt::User | Exempt::UserAndGroup) {
        exempt_users.push(user.clone());
    }
    exempt_groups.extend(extra.iter().take(exempt_groups_wanted).cloned());
    groups.extend(extra);

    let identities_on = c.identities;
    Case {
        settings: Settings {
            shapes,
            adoption: if c.adoption_deny { "Deny" } else { "Allow" },
            orphaning: if c.orphaning_deny { "Deny" } else { "Allow" },
            exempt_users: permuted(&exempt_users, &c.order, 1),
            exempt_groups: permuted(&exempt_groups, &c.order, 2),
            identities: if identities_on {
                permuted(&identities, &c.order, 3)
            } else {
                Vec::new()
            },
            writes: if identities_on && c.writes_owner {
                "Owner"
            } else {
                "Any"
            },
            stamp: identities_on && c.stamp,
            offer_key: c.offer_key,
        },
        admission: Admission {
            op: c.op,
            place,
            user,
            groups: permuted(&groups, &c.order, 4),
            old,
            new,
        },
    }
}

/// 9. An audit replay — a CREATE with an empty `userInfo`, as Kubewarden's audit scanner sends
///    for every stored object — never fails an object whose owner labels name a valid owner in
///    scope, whatever identities, `writes`, `stamp` and `adoption` say, and is never mutated.
#[test]
fn audit_replays_pass_correctly_owned_objects() {
    let floors = [
        ("replayed under identities", 25.0),
        ("replayed under stamp: true", 10.0),
        ("replayed under writes: Owner", 10.0),
        ("replayed object with an owner", 60.0),
    ];
    let owners = select(vec![
        (CRD, "", vec![(APP_ID_KEY, "ClusterExtension.cert-manager")]),
        (NAMESPACE, "", vec![(APP_ID_KEY, "ClusterExtension.team-a")]),
        (
            CONFIG_MAP,
            "team-a",
            vec![(APP_ID_KEY, "Extension.team-a.argocd")],
        ),
        (
            CONFIG_MAP,
            "team-b",
            vec![(APP_ID_KEY, "ClusterExtension.argocd")],
        ),
        (
            CRD,
            "",
            vec![(OLM_KIND, "ClusterExtension"), (OLM_NAME, "cert-manager")],
        ),
        (
            POD,
            "team-a",
            vec![(OLM_KIND, "Extension"), (OLM_NAME, "team-a.argocd")],
        ),
        (INTEGRATION, "shop", vec![(CAMEL, "operator-1")]),
        (CRD, "", vec![]),
    ]);
    let settings = (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>());
    check(
        (owners, settings),
        &floors,
        |((kind, namespace, labels), flags), tally| {
            let (identities, writes, stamp, deny_adoption) = flags;
            let mut settings = json!({"ownerLabels": [
            {"key": APP_ID_KEY, "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]},
            {"key": OLM_NAME, "kindKey": OLM_KIND, "clusterKinds": ["ClusterExtension"],
             "namespacedKinds": ["Extension"]},
            {"key": CAMEL}]});
            if identities || writes || stamp {
                settings["identities"] = json!([{"owners": ["operator-2"], "users": ["*"]}]);
            }
            if writes {
                settings["writes"] = json!("Owner");
            }
            if stamp {
                settings["stamp"] = json!(true);
            }
            if deny_adoption {
                settings["adoption"] = json!("Deny");
            }
            let mut request = Request::create(kind, namespace, labels.as_slice()).json();
            request["userInfo"] = json!({});
            tally.count(
                settings["identities"].is_array(),
                "replayed under identities",
            );
            tally.count(stamp, "replayed under stamp: true");
            tally.count(writes, "replayed under writes: Owner");
            tally.count(!labels.is_empty(), "replayed object with an owner");
            let payload = json!({"request": request, "settings": settings});
            let response = policy::validate(&serde_json::to_vec(&payload).unwrap());
            prop_assert!(response.accepted, "{:?} on {request}", response.message);
            prop_assert!(
                response.mutated_object.is_none(),
                "a replay was mutated: {request}"
            );
            Ok(())
        },
    );
}
