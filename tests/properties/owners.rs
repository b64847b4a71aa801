//! Who owns an object: owners change hands only through an accepted offer (1), only a requester
//! acting for an owner sets or removes it (2), and the owners accepted are valid and in scope
//! (5).

use proptest::prelude::*;

use crate::check;
use crate::common::{CONFIG_MAP, NAMESPACE, POD};
use crate::generators::{
    ActsFor, BINDINGS, Exempt, Mix, Move, NewOffer, OfferTo, QUIET, WRITE_ACCESS,
    owner_sets_and_removals, scenario,
};
use crate::model::{Case, Op, Owner, PLACES, Place, Spot, annotation_in, place};

/// 1. An object changes hands only through a handoff: an accepted request that changes the
///    owner under a mark M from one owner A to another B (both set, different, as M reads them;
///    A a valid owner: a value that names none is nobody's)
///    has an exempt requester, or the stored object offered it under M, from A, to B
///    (`M: A -> B`: not an offer of another mark, not a stale offer made by another owner, not an
///    offer in the form before 0.2.0), the admitted object no longer carries the offer, and, with
///    identities, the requester acts for B.
#[test]
fn owners_change_hands_only_through_an_accepted_offer() {
    let floors = [
        ("A→B by a non-exempt requester", 60.0),
        ("A→B accepted through the offer", 3.0),
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
        (
            "A→B by a non-exempt requester, offered to B by another owner (stale)",
            2.0,
        ),
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
        let stored_offer = case.stored_offer();
        for &shape in &case.settings.shapes {
            let (from, to) = (case.claim(shape, old), case.claim(shape, new));
            // A value that names no owner is nobody's: replacing it is an adoption.
            if from.is_none() || to.is_none() || from == to || shape.owner(&from) == Owner::Invalid
            {
                continue;
            }
            let offered = stored_offer.as_ref().is_some_and(|offer| {
                offer.mark == shape.key()
                    && offer.to_mark == shape.key()
                    && offer.from == from.id()
                    && offer.to == to.id()
            });
            let stale = stored_offer.as_ref().is_some_and(|offer| {
                offer.mark == shape.key() && offer.to == to.id() && offer.from != from.id()
            });
            tally.count(
                !exempt && stale,
                "A→B by a non-exempt requester, offered to B by another owner (stale)",
            );
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

/// 2. With identities, an accepted request that sets owner X under a mark (a CREATE with X,
///    none → X, or A → X), or removes it (X → none), on the object as admitted, has a requester
///    acting for X or an exempt one. (A → X does not need A's requester: A's consent is its
///    offer, property 1; nor does X → none when the stored offer hands X across marks to the
///    owner the request sets under the receiving mark: X's consent is its offer, and the
///    receiver's set needs acting for the receiver.) Acting is `access: Own`: an identity with
///    `access: Write` binds writing only. A stored value that names no owner is nobody's:
///    removing it is never denied as an identity's.
#[test]
fn only_a_requester_acting_for_an_owner_sets_or_removes_it() {
    let floors = [
        (
            "an owner set by a non-exempt requester only writing for it (access: Write)",
            3.0,
        ),
        (
            "a value naming no owner removed by a non-exempt requester not acting for it",
            2.0,
        ),
        (
            "an owner set by a non-exempt requester not acting for it",
            30.0,
        ),
        (
            "an owner removed by a non-exempt requester not acting for it",
            5.0,
        ),
        ("an owner set by a requester acting for it, accepted", 5.0),
        (
            "an owner removed by a requester acting for it, accepted",
            0.5,
        ),
        (
            "an owner set or removed by an exempt requester not acting for it",
            6.0,
        ),
        (
            "an owner handed across marks, removed by a requester not acting for it, accepted",
            0.3,
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
        let exempt = case.exemption().is_some();
        for &shape in &case.settings.shapes {
            let before = (admission.old.as_ref())
                .map(|old| case.claim(shape, old))
                .unwrap_or_default();
            let after = case.claim_in(shape, &new_object);
            if before == after {
                continue;
            }
            for (owner, act) in [(&after, "set"), (&before, "removed")] {
                if owner.is_none() || (act == "removed" && !after.is_none()) {
                    continue;
                }
                let acts = case.acts_for(&owner.id());
                if act == "removed" && shape.owner(owner) == Owner::Invalid {
                    tally.count(
                        !exempt && !acts,
                        "a value naming no owner removed by a non-exempt requester not acting \
                         for it",
                    );
                    let identity = format!("{}: identity", shape.name());
                    prop_assert!(
                        !response.rules().2.contains(&identity)
                            && !response.rules().4.contains(&identity),
                        "{shape:?}: the removal of {owner}, which names no owner, denied as an \
                         identity's: {:?}",
                        response.message
                    );
                    continue;
                }
                tally.count(
                    !exempt && !acts && act == "set" && case.writes_for(&owner.id()),
                    "an owner set by a non-exempt requester only writing for it (access: Write)",
                );
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
                let handed = act == "removed" && case.handed_across(shape);
                tally.count(
                    !exempt && !acts && handed && response.accepted,
                    "an owner handed across marks, removed by a requester not acting for it, \
                     accepted",
                );
                if response.accepted {
                    prop_assert!(
                        acts || exempt || handed,
                        "{shape:?}: owner {owner} {act} by {}, who does not act for it",
                        admission.user
                    );
                }
            }
        }
        Ok(())
    });
}

/// 5. No accepted CREATE or owner change, unless by an exempt requester, leaves an owner mark
///    that names no valid owner (an empty value, an unknown kind, half a pair, a broken tracking
///    id), a namespaced owner on a cluster-scoped object (a Namespace is cluster-scoped, whatever
///    namespace the request names), or a namespaced owner outside its own namespace — stamped
///    marks included.
#[test]
fn accepted_owners_are_valid_and_in_scope() {
    let floors = [
        ("a namespaced owner set on a cluster-scoped object", 2.0),
        (
            "a namespaced owner set on a Namespace whose request names a namespace",
            0.3,
        ),
        ("a namespaced owner of another namespace set", 4.0),
        ("an invalid owner set", 6.0),
        ("a namespaced owner set in its own namespace, accepted", 0.3),
        ("a cluster-scoped object given an owner, accepted", 1.5),
        ("an invalid owner set in an annotation", 1.0),
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
        let place = admission.place;
        for &shape in &case.settings.shapes {
            let before = admission.old.as_ref().map(|old| case.claim(shape, old));
            let after = case.claim_in(shape, &new_object);
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
                owner == Owner::Invalid && shape.spot() == Spot::Annotation,
                "an invalid owner set in an annotation",
            );
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
            (2, OfferTo::Stale),
            (1, OfferTo::Bare),
            (1, OfferTo::OtherMark),
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
        linked: 0.0,
        entries: 1,
        places: &PLACES,
        bindings: BINDINGS,
        write_access: WRITE_ACCESS,
    })
}

/// CREATEs and owner changes to owners in scope, out of scope, or invalid, on cluster-scoped
/// and namespaced objects.
fn scope_claims() -> impl Strategy<Value = Case> {
    let claims = scenario(Mix {
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
        // Mostly no other owner, which would be a second one beside an owner set.
        others: &[
            (8, Move::Unowned),
            (2, Move::Keep),
            (1, Move::Adopt),
            (1, Move::Orphan),
        ],
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
        linked: 0.0,
        entries: 1,
        places: &PLACES,
        bindings: BINDINGS,
        write_access: WRITE_ACCESS,
    });
    // Extensions adopting objects of their own namespace and of others, and Namespaces named
    // in their own requests.
    let namespaced_claims = scenario(Mix {
        operations: &[(2, Op::Create), (2, Op::Update)],
        moves: &[(3, Move::Adopt), (2, Move::AdoptOutOfScope)],
        others: &[(1, Move::Unowned)],
        old_offers: &[(1, OfferTo::Nobody)],
        new_offers: &[(1, NewOffer::Dropped)],
        acting: &[(3, ActsFor::New), (1, ActsFor::Nobody)],
        exempt: &[(1, Exempt::No)],
        ratchet: 0.0,
        identities: 0.5,
        writes_owner: 0.0,
        stamp: 0.0,
        deny: 0.0,
        scoped_focus: true,
        camel: 1.0,
        linked: 0.0,
        entries: 1,
        places: &NAMESPACED_CLAIMS,
        bindings: BINDINGS,
        write_access: 0.0,
    });
    prop_oneof![4 => claims, 1 => namespaced_claims]
}

/// Where Extensions claim objects: objects of their namespaces, and a Namespace named in its
/// own request.
const NAMESPACED_CLAIMS: [Place; 4] = [
    place(CONFIG_MAP, "team-a"),
    place(CONFIG_MAP, "team-b"),
    place(POD, "team-a"),
    place(NAMESPACE, "team-a"),
];
