//! Patches: a stamp of the one owner on a CREATE, or a consumed offer removed, and nothing
//! else (4).

use proptest::prelude::*;

use crate::check;
use crate::common::TRACKING;
use crate::generators::{
    ActsFor, BINDINGS, Exempt, Mix, Move, NewOffer, OfferTo, QUIET, WRITE_ACCESS, scenario,
};
use crate::model::{Case, Labels, Object, Op, PLACES, Patch, Shape, Spot};
use crate::oracle;

/// 4. A patch (`mutated_object`) is one of two, exactly when src/decision.rs makes it and never
///    otherwise: on a CREATE under `stamp: true` without violations, by a requester acting for
///    exactly one owner O (one owner pattern after templates, no wildcard), it adds O's labels
///    or annotations to the first mark, not a tracking id, that reads O as a valid owner in
///    scope, when the object carries no owner mark (a tracking id copied from another object is
///    none); on an UPDATE under `stamp: true` without violations that moves the offer's own mark
///    while the offer stays as it was, it removes the offer — another mark's move leaves it. A
///    patch changes nothing else.
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
        ("a stamp of annotations", 0.5),
        (
            "a stamp beside a tracking id copied from another object",
            0.1,
        ),
        (
            "an accepted UPDATE under stamp: true keeping an offer while another mark moves",
            0.3,
        ),
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
        let other_mark_moves = |old: &Object, new: &Object| {
            let offer = case.stored_offer();
            (settings.shapes.iter()).any(|&shape| {
                offer
                    .as_ref()
                    .is_some_and(|offer| offer.mark != shape.key())
                    && case.claim(shape, old) != case.claim(shape, new)
            })
        };
        if let (Some(old), Some(new)) = (&admission.old, &admission.new) {
            tally.count(
                clean
                    && settings.stamp
                    && old.offer.is_some()
                    && old.offer == new.offer
                    && !consume
                    && other_mark_moves(old, new),
                "an accepted UPDATE under stamp: true keeping an offer while another mark moves",
            );
        }
        let expected = match (&due, consume) {
            (Some((shape, written)), _) => Some(Patch::stamp(*shape, written)),
            (None, true) => Some(Patch {
                labels: Labels::new(),
                annotations: Labels::new(),
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
                tally.count(
                    due.as_ref()
                        .is_some_and(|(shape, _)| shape.spot() == Spot::Annotation),
                    "a stamp of annotations",
                );
                let copied = (admission.new.as_ref())
                    .is_some_and(|new| new.annotations.contains_key(TRACKING));
                tally.count(
                    due.is_some() && copied,
                    "a stamp beside a tracking id copied from another object",
                );
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

/// CREATEs by requesters acting for one owner, several or a pattern, with and without the
/// owner mark; handoffs that leave the offer on the object; offers left on the object while
/// another mark moves.
fn stamp_candidates() -> impl Strategy<Value = Case> {
    let offers_beside_other_moves = scenario(Mix {
        operations: &[(4, Op::Update), (1, Op::Status)],
        moves: &[(1, Move::Keep)],
        others: &[(3, Move::Orphan), (1, Move::Adopt), (1, Move::Change)],
        old_offers: &[(3, OfferTo::NewOwner), (1, OfferTo::OtherMark)],
        new_offers: &[(1, NewOffer::Kept)],
        acting: &[
            (3, ActsFor::OtherEntriesBoth),
            (1, ActsFor::OtherEntries),
            (1, ActsFor::Both),
        ],
        exempt: &[(1, Exempt::No)],
        ratchet: 0.0,
        identities: 1.0,
        writes_owner: 0.0,
        stamp: 1.0,
        deny: 0.0,
        scoped_focus: false,
        camel: 1.0,
        linked: 0.0,
        entries: 2,
        places: &PLACES,
        bindings: BINDINGS,
        write_access: 0.0,
    });
    let stamps_and_handoffs = scenario(Mix {
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
        linked: 0.0,
        entries: 1,
        places: &PLACES,
        bindings: BINDINGS,
        write_access: WRITE_ACCESS,
    });
    // CREATEs of objects that carry a tracking id copied from another object: no owner mark.
    let beside_copied_ids = scenario(Mix {
        operations: &[(1, Op::Create)],
        moves: &[(1, Move::Unowned)],
        others: &[(1, Move::Unowned)],
        old_offers: &[(1, OfferTo::Nobody)],
        new_offers: &[(1, NewOffer::Dropped)],
        acting: &[(3, ActsFor::New), (1, ActsFor::Both)],
        exempt: &[(1, Exempt::No)],
        ratchet: 0.0,
        identities: 1.0,
        writes_owner: 0.0,
        stamp: 1.0,
        deny: 0.0,
        scoped_focus: false,
        camel: 1.0,
        linked: 0.0,
        entries: 1,
        places: &PLACES,
        bindings: BINDINGS,
        write_access: 0.0,
    })
    .prop_map(|mut case| {
        if !case.settings.shapes.contains(&Shape::Argo) {
            case.settings.shapes.push(Shape::Argo);
        }
        let place = case.admission.place;
        let new = case.admission.new.as_mut().expect("a CREATE");
        let copied = format!(
            "guestbook-prod:apps/ReplicaSet:{}/web",
            place.id_namespace()
        );
        new.annotations.insert(TRACKING.to_owned(), copied);
        case
    });
    prop_oneof![
        10 => stamps_and_handoffs,
        3 => offers_beside_other_moves,
        1 => beside_copied_ids,
    ]
}
