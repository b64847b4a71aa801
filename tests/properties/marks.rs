//! The properties of owner marks: one owner across marks (15), offers across marks (16), an
//! offer as its own mark's (17, 18).

use std::collections::BTreeSet;

use proptest::bool::weighted as chance;
use proptest::prelude::*;
use proptest::sample::{Index, select, subsequence};

use crate::check;
use crate::common::{OFFER, TRACKING};
use crate::generators::{
    ActsFor, BINDINGS, Exempt, Mix, Move, NewOffer, OfferTo, for_marks, scenario, weighted,
};
use crate::model::{
    Admission, Case, Identity, Labels, Object, Op, Owner, PLACES, Patch, Place, Settings, Shape,
    UNKNOWN_KIND, annotation_in, groups_of, identity, offer_text, parse_offer, pick,
};

/// 15. One owner across marks: a request that sets a mark N — a CREATE's, none → X (or a value
///     naming no owner → X, an adoption), or A → X accepted through N's offer — to a valid owner in scope is denied for N under `one owner`
///     exactly when another mark of the object, which the settings do not link to N by
///     `sameOwnerAs`, names a valid owner (in scope or not) that stays, or that is set too and
///     comes before N in `ownerMarks`; an exempt requester's line is bypassed instead. A value
///     that names no owner, or a tracking id copied from another object, is no second owner.
#[test]
fn an_object_has_one_owner_across_marks() {
    let floors = [
        (
            "a mark set beside an unlinked mark's owner that stays",
            15.0,
        ),
        ("a mark set beside a linked mark's owner that stays", 0.5),
        ("two unlinked marks set in one request", 5.0),
        (
            "a mark set beside another mark naming no owner (a broken value, a copied tracking id)",
            3.0,
        ),
        (
            "a handoff accepted beside an unlinked mark's owner that stays",
            0.5,
        ),
        ("a second owner bypassed for an exempt requester", 1.0),
        ("a mark set, no second owner, accepted", 3.0),
    ];
    check(second_owners(), &floors, |case, tally| {
        let response = case.respond()?;
        let expected = case.one_owner_lines();
        let exempt = case.exemption().is_some();
        let (_, _, denied, bypassed, _) = response.rules();
        let one_owner = |lines: &[String]| -> BTreeSet<String> {
            (lines.iter())
                .filter(|line| line.ends_with(": one owner"))
                .cloned()
                .collect()
        };
        let (got, other) = match exempt {
            false => (one_owner(&denied), one_owner(&bypassed)),
            true => (one_owner(&bypassed), one_owner(&denied)),
        };
        let admission = &case.admission;
        let set = case.set_marks();
        let shapes = &case.settings.shapes;
        for &n in &set {
            let (Some(old), Some(new)) = (&admission.old, &admission.new) else {
                continue;
            };
            for &m in shapes.iter().filter(|&&m| m != n) {
                let (before, after) = (case.claim(m, old), case.claim(m, new));
                let stays = before == after && m.owner(&after) != Owner::Invalid;
                tally.count(
                    stays && !case.linked(m, n),
                    "a mark set beside an unlinked mark's owner that stays",
                );
                tally.count(
                    stays && case.linked(m, n),
                    "a mark set beside a linked mark's owner that stays",
                );
                let copied =
                    m == Shape::Argo && after.is_none() && new.annotations.contains_key(TRACKING);
                tally.count(
                    !after.is_none() && m.owner(&after) == Owner::Invalid || copied,
                    "a mark set beside another mark naming no owner (a broken value, a copied \
                     tracking id)",
                );
                let accepted_handoff = !case.claim(n, old).is_none()
                    && case
                        .stored_offer()
                        .is_some_and(|offer| offer.mark == n.key());
                tally.count(
                    stays && !case.linked(m, n) && accepted_handoff,
                    "a handoff accepted beside an unlinked mark's owner that stays",
                );
            }
        }
        tally.count(case.race(), "two unlinked marks set in one request");
        tally.count(
            exempt && !expected.is_empty(),
            "a second owner bypassed for an exempt requester",
        );
        tally.count(
            !set.is_empty() && expected.is_empty() && response.accepted,
            "a mark set, no second owner, accepted",
        );
        prop_assert_eq!(&got, &expected, "one owner lines: {:?}", response);
        prop_assert!(other.is_empty(), "{:?}", response);
        Ok(())
    });
}

/// 16. An offer across marks hands an object from a mark M's owner A to a mark N's owner B in
///     one update: with the stored offer `M: A -> N: B`, an update that removes M and sets N to
///     B (and drops the offer) is accepted when its requester acts for B (or there are no
///     identities); M's removal needs neither an act for A nor `orphaning: Allow` then. The
///     verdict is exact for each way to get it wrong: M kept beside N is a second owner (unless
///     linked); the offer kept is not consumed (removed by the policy deployed mutating); a
///     stale offer, one to another receiver, one to M's own owners, or one in the form before
///     0.2.0 hands nothing over, so that M's removal is an orphaning, A's to make; and a live
///     offer dropped while M stays is withdrawn, which is A's to do.
#[test]
fn an_offer_across_marks_hands_the_object_to_another_marks_owner() {
    let floors = [
        ("a handoff across marks, accepted", 10.0),
        (
            "a handoff across marks by a requester not acting for the receiver, denied",
            3.0,
        ),
        (
            "the giving mark kept beside the receiver's, denied one owner",
            3.0,
        ),
        ("the giving mark kept beside the linked receiver's", 0.3),
        ("the offer kept, consumed by the policy", 1.5),
        ("the offer kept, denied", 2.0),
        (
            "no live offer across marks, the giver's removal denied",
            5.0,
        ),
        (
            "no live offer across marks, the giver's removal by its requester, accepted",
            1.0,
        ),
        (
            "a handoff across marks under orphaning: Deny, accepted",
            3.0,
        ),
        (
            "no live offer across marks, the giver's removal under orphaning: Deny, denied",
            2.0,
        ),
    ];
    check(
        handoffs_across_marks(),
        &floors,
        |(case, giver, receiver), tally| {
            let response = case.respond()?;
            let (expected, consumed) = case.across_lines(giver, receiver);
            let (_, _, denied, _, _) = response.rules();
            let denied: BTreeSet<String> = denied.into_iter().collect();
            let (old, new) = (
                case.admission.old.as_ref().expect("an UPDATE"),
                case.admission.new.as_ref().expect("an UPDATE"),
            );
            let identity = format!("{}: identity", receiver.name());
            let one_owner = format!("{}: one owner", receiver.name());
            let giver_identity = format!("{}: identity", giver.name());
            let offer_line = format!("annotation {}: offer", case.settings.offer_key);
            let handed = case.handed_across(giver);
            let giver_kept = !case.claim(giver, new).is_none();
            tally.count(
                handed && response.accepted,
                "a handoff across marks, accepted",
            );
            tally.count(
                handed && expected.contains(&identity),
                "a handoff across marks by a requester not acting for the receiver, denied",
            );
            tally.count(
                expected.contains(&one_owner),
                "the giving mark kept beside the receiver's, denied one owner",
            );
            tally.count(
                giver_kept && case.linked(giver, receiver),
                "the giving mark kept beside the linked receiver's",
            );
            tally.count(consumed, "the offer kept, consumed by the policy");
            tally.count(
                expected.contains(&offer_line) && old.offer == new.offer,
                "the offer kept, denied",
            );
            let unhanded_removal = !giver_kept && !handed;
            tally.count(
                unhanded_removal && expected.contains(&giver_identity),
                "no live offer across marks, the giver's removal denied",
            );
            tally.count(
                unhanded_removal && response.accepted && !case.settings.identities.is_empty(),
                "no live offer across marks, the giver's removal by its requester, accepted",
            );
            let orphaning_denied = case.settings.orphaning == "Deny";
            tally.count(
                handed && orphaning_denied && response.accepted,
                "a handoff across marks under orphaning: Deny, accepted",
            );
            tally.count(
                unhanded_removal && orphaning_denied && !response.accepted,
                "no live offer across marks, the giver's removal under orphaning: Deny, denied",
            );
            prop_assert_eq!(&denied, &expected, "{:?}", response);
            prop_assert_eq!(response.accepted, expected.is_empty());
            let request = case.request_json();
            let patch = (response.patched.as_ref())
                .map(|patched| Patch::between(&request["object"], patched));
            let due = consumed.then(|| Patch {
                labels: Labels::new(),
                annotations: Labels::new(),
                removed: vec![case.settings.offer_key.to_owned()],
                rest_kept: true,
            });
            prop_assert_eq!(patch, due);
            Ok(())
        },
    );
}

/// 17. An offer is its own mark's to withdraw: under `writes: Any`, a request that moves
///     another mark (an owner orphaned, adopted, changed, broken) and drops mark M's live offer
///     (`M: A -> B`, A still M's owner) — or keeps it under `stamp: true`, where only a move of
///     M consumes it — never leaves the offer off the admitted object unless its requester acts
///     for A (or is exempt).
///
///     Catches the planted bug "in `handoff::judge`, any mark's move counts as a move of the
///     offer's mark" (src/decision.rs, `judge_offer`: `moving` true for any key when any mark
///     of the object moves): the withdrawal is then taken for a consumed offer, allowed without
///     A, and under `stamp: true` the policy removes the kept offer itself.
#[test]
fn only_its_owner_withdraws_an_offer_while_another_mark_moves() {
    let floors = [
        (
            "an offer dropped beside another mark's move by a requester not acting for A",
            20.0,
        ),
        (
            "an offer dropped beside another mark's orphaning by its owner's requester, not \
             acting for A",
            4.0,
        ),
        (
            "an offer dropped beside a linked mark's adoption by a requester not acting for A",
            0.5,
        ),
        (
            "an offer kept beside another mark's move under stamp: true by a requester not \
             acting for A, accepted",
            1.5,
        ),
        (
            "an offer dropped beside another mark's move by A's requester, accepted",
            2.0,
        ),
    ];
    check(
        offers_beside_moves(),
        &floors,
        |(case, offering, mover), tally| {
            let response = case.respond()?;
            let admission = &case.admission;
            let (old, new) = (
                admission.old.as_ref().expect("an UPDATE"),
                admission.new.as_ref().expect("an UPDATE"),
            );
            let stored = old.offer.clone().expect("a stored offer");
            let owner = case.claim(offering, old);
            let acts = case.acts_for(&owner.id());
            let exempt = case.exemption().is_some();
            let moved = case.claim(mover, old) != case.claim(mover, new);
            let dropped = new.offer.as_ref() != Some(&stored);
            let request = case.request_json();
            let admitted = response.admitted(&request);
            let left_off = (admitted.as_ref()).is_some_and(|object| {
                annotation_in(object, case.settings.offer_key) != Some(stored.clone())
            });
            tally.count(
                dropped && moved && !acts,
                "an offer dropped beside another mark's move by a requester not acting for A",
            );
            let (before, after) = (case.claim(mover, old), case.claim(mover, new));
            tally.count(
                dropped
                    && !acts
                    && !before.is_none()
                    && after.is_none()
                    && case.acts_for(&before.id()),
                "an offer dropped beside another mark's orphaning by its owner's requester, not \
             acting for A",
            );
            tally.count(
                dropped
                    && !acts
                    && before.is_none()
                    && !after.is_none()
                    && case.linked(offering, mover),
                "an offer dropped beside a linked mark's adoption by a requester not acting for A",
            );
            tally.count(
                !dropped && moved && !acts && case.settings.stamp && response.accepted,
                "an offer kept beside another mark's move under stamp: true by a requester not \
             acting for A, accepted",
            );
            tally.count(
                dropped && moved && acts && response.accepted,
                "an offer dropped beside another mark's move by A's requester, accepted",
            );
            prop_assert_eq!(
                case.claim(offering, new),
                owner.clone(),
                "generator: the offer's mark moved"
            );
            if left_off {
                prop_assert!(
                    acts || exempt,
                    "{:?}'s offer {:?} of {} left off the admitted object beside a move of {:?}, \
                 by {}, who does not act for it: {:?}",
                    offering,
                    stored,
                    owner,
                    mover,
                    &admission.user,
                    response
                );
            }
            Ok(())
        },
    );
}

/// 18. An offer is judged against its own mark alone: an offer `M: A -> B` made by a requester
///     acting for A, M's owner, naming a receiver B that M (or, across marks, the receiving
///     mark) reads as a valid owner in scope other than A, is accepted whatever the object's
///     other marks say — unowned, broken, or owned by someone else, linked to M by
///     `sameOwnerAs` or not; and it is denied, one `offer` line, exactly when the requester
///     does not act for A or the receiver could not own the object under the receiving mark
///     (another mark's kinds and owners count for nothing) or is A itself.
///
///     Catches the planted bug "an offer is checked against every owned mark" (src/decision.rs,
///     `check_new_offer`: its owner, the requester's acting for it and the receiver judged for
///     each mark of the object that names an owner): the offer of an object whose other mark
///     names another owner is then denied.
#[test]
fn an_offer_is_judged_against_its_own_mark_alone() {
    let floors = [
        (
            "an offer by the owner, another mark owned by someone else, not linked, accepted",
            10.0,
        ),
        (
            "an offer by the owner, a linked mark owned by someone else, accepted",
            1.0,
        ),
        ("an offer to an owner only another mark reads, denied", 2.0),
        (
            "an offer by a requester acting for another mark's owner only, denied",
            4.0,
        ),
        ("an offer across marks by the owner, accepted", 3.0),
    ];
    check(
        offers_beside_owners(),
        &floors,
        |(case, offering), tally| {
            let response = case.respond()?;
            let admission = &case.admission;
            let old = admission.old.as_ref().expect("an UPDATE");
            let new = admission.new.as_ref().expect("an UPDATE");
            let made = parse_offer(new.offer.as_deref().expect("an offer")).expect("an offer");
            let owner = case.claim(offering, old);
            let shapes = &case.settings.shapes;
            let receiving = (shapes.iter().copied())
                .find(|shape| shape.key() == made.to_mark)
                .expect("a guarded receiving mark");
            let receiver = receiving.claim_of(&made.to);
            let could_own = admission.place.holds(&receiving.owner(&receiver));
            let acts = case.acts_for(&owner.id());
            let current = receiving == offering && made.to == owner.id();
            let expected: BTreeSet<String> = (!acts || !could_own || current)
                .then(|| format!("annotation {}: offer", case.settings.offer_key))
                .into_iter()
                .collect();
            let (_, _, denied, _, _) = response.rules();
            let denied: BTreeSet<String> = denied.into_iter().collect();
            let others_owned: Vec<Shape> = (shapes.iter().copied())
                .filter(|&other| other != offering)
                .filter(|&other| {
                    let claim = case.claim(other, old);
                    other.owner(&claim) != Owner::Invalid && claim.id() != owner.id()
                })
                .collect();
            let unlinked = others_owned
                .iter()
                .any(|&other| !case.linked(other, offering));
            let linked = others_owned
                .iter()
                .any(|&other| case.linked(other, offering));
            tally.count(
                unlinked && expected.is_empty() && response.accepted,
                "an offer by the owner, another mark owned by someone else, not linked, accepted",
            );
            tally.count(
                linked && expected.is_empty() && response.accepted,
                "an offer by the owner, a linked mark owned by someone else, accepted",
            );
            let read_elsewhere = (shapes.iter()).any(|&other| {
                other != receiving
                    && admission
                        .place
                        .holds(&other.owner(&other.claim_of(&made.to)))
            });
            tally.count(
                !could_own && read_elsewhere && acts,
                "an offer to an owner only another mark reads, denied",
            );
            let acts_for_others =
                (others_owned.iter()).any(|&other| case.acts_for(&case.claim(other, old).id()));
            tally.count(
                !acts && acts_for_others,
                "an offer by a requester acting for another mark's owner only, denied",
            );
            tally.count(
                receiving != offering && expected.is_empty() && response.accepted,
                "an offer across marks by the owner, accepted",
            );
            prop_assert_eq!(&denied, &expected, "{:?}", response);
            prop_assert_eq!(response.accepted, expected.is_empty());
            prop_assert_eq!(&response.patched, &None);
            Ok(())
        },
    );
}

/// A request built directly: `shapes` guarded, the object at `place`, an UPDATE from `old` to
/// `new` by a service account acting for `acting` (exact identities), under `writes: Any`, with
/// identities unless `identities` is false.
#[allow(clippy::too_many_arguments)]
fn direct_update(
    shapes: Vec<Shape>,
    place: Place,
    old: Object,
    new: Object,
    acting: &[String],
    identities: bool,
    stamp: bool,
    exempt: bool,
) -> Case {
    let user = "system:serviceaccount:ops:deployer".to_owned();
    let mut bound: Vec<Identity> = (acting.iter())
        .map(|owner| identity(&[owner], &[&user], &[]))
        .collect();
    // Someone else's, so that the settings have identities whomever the requester acts for.
    bound.push(identity(&["ClusterExtension.*", "*/argocd"], &["bob"], &[]));
    Case {
        settings: Settings {
            adoption: "Allow",
            orphaning: "Allow",
            exempt_users: if exempt {
                vec![user.clone()]
            } else {
                Vec::new()
            },
            exempt_groups: Vec::new(),
            identities: if identities {
                for_marks(bound, &shapes)
            } else {
                Vec::new()
            },
            writes: "Any",
            stamp: identities && stamp,
            offer_key: OFFER,
            trusted: Vec::new(),
            shapes,
        },
        admission: Admission {
            op: Op::Update,
            place,
            groups: groups_of(&user),
            user,
            old: Some(old),
            new: Some(new),
            options: None,
        },
    }
}

/// Two or three marks, in any order; one in `linked + 2` of them Flux's labels and Helm's
/// annotations, which name one owner, beside another mark or none.
fn some_marks(linked: u32) -> impl Strategy<Value = Vec<Shape>> {
    prop_oneof![
        2 => subsequence(Shape::ALL.to_vec(), 2..=3).prop_shuffle(),
        linked => subsequence(vec![Shape::AppId, Shape::Camel, Shape::Argo], 0..=1)
            .prop_flat_map(|mut more| {
                more.extend([Shape::Flux, Shape::Helm]);
                Just(more).prop_shuffle()
            }),
    ]
}

/// Two owners of `shape` at `place`, different.
fn two_owners(shape: Shape, place: Place, picks: &[Index; 2]) -> (String, String) {
    let owners = shape.owners_in(place);
    let first = pick(&owners, &picks[0]);
    let rest: Vec<_> = owners.into_iter().filter(|owner| *owner != first).collect();
    (first.to_owned(), pick(&rest, &picks[1]).to_owned())
}

/// Requests that set marks beside others: adoptions, CREATEs, handoffs, beside owners that
/// stay, other marks set too, values that name no owner and copied tracking ids.
fn second_owners() -> impl Strategy<Value = Case> {
    scenario(Mix {
        operations: &[(2, Op::Create), (5, Op::Update), (1, Op::Status)],
        moves: &[
            (5, Move::Adopt),
            (2, Move::Change),
            (1, Move::Keep),
            (1, Move::AdoptInvalid),
            (1, Move::AdoptOutOfScope),
        ],
        others: &[
            (5, Move::Keep),
            (2, Move::Adopt),
            (2, Move::Unowned),
            (1, Move::AdoptInvalid),
            (1, Move::Orphan),
        ],
        old_offers: &[(3, OfferTo::NewOwner), (2, OfferTo::Nobody)],
        new_offers: &[(1, NewOffer::Dropped)],
        acting: &[
            (3, ActsFor::New),
            (1, ActsFor::Both),
            (1, ActsFor::OtherEntries),
            (1, ActsFor::Nobody),
        ],
        exempt: &[(8, Exempt::No), (1, Exempt::User), (1, Exempt::Group)],
        ratchet: 0.15,
        identities: 0.5,
        writes_owner: 0.0,
        stamp: 0.2,
        deny: 0.15,
        scoped_focus: false,
        camel: 1.0,
        linked: 0.3,
        entries: 2,
        places: &PLACES,
        bindings: BINDINGS,
        write_access: 0.0,
    })
}

/// Two ways an update may use an offer across marks, right or wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Across {
    /// Removes the giving mark, sets the receiver's, drops the offer.
    Proper,
    /// As `Proper`, the offer kept.
    OfferKept,
    /// The giving mark kept beside the receiver's.
    GiverKept,
    /// The giving mark and the offer kept.
    GiverAndOfferKept,
    /// The offer made by another owner of the giving mark.
    Stale,
    /// The receiving mark set to another owner than the offer names.
    OtherReceiver,
    /// The offer hands the object to another owner of the giving mark.
    SameMark,
    /// The offer names the receiver alone, as before 0.2.0.
    Bare,
}

/// Updates of objects whose giving mark's owner offered them across marks, each way of
/// `Across`, by requesters acting for the receiver, the giver, both or none.
fn handoffs_across_marks() -> impl Strategy<Value = (Case, Shape, Shape)> {
    let ways = weighted(&[
        (5, Across::Proper),
        (3, Across::OfferKept),
        (1, Across::GiverKept),
        (1, Across::GiverAndOfferKept),
        (1, Across::Stale),
        (1, Across::OtherReceiver),
        (1, Across::SameMark),
        (1, Across::Bare),
    ]);
    let acting = weighted(&[
        (4, (false, true)),
        (1, (true, false)),
        (1, (true, true)),
        (1, (false, false)),
    ]);
    (
        some_marks(1),
        select(PLACES.to_vec()),
        ways,
        acting,
        (chance(0.8), chance(0.5), chance(0.3)),
        prop::array::uniform::<_, 6>(any::<Index>()),
    )
        .prop_map(
            |(shapes, place, way, (for_giver, for_receiver), knobs, picks)| {
                let (identities, stamp, deny_orphaning) = knobs;
                let giving = pick(&(0..shapes.len()).collect::<Vec<_>>(), &picks[0]);
                let giver = shapes[giving];
                let receivers: Vec<Shape> = shapes
                    .iter()
                    .copied()
                    .filter(|&shape| shape != giver)
                    .collect();
                let receiver = pick(&receivers, &picks[1]);
                let (a, z) = two_owners(giver, place, &[picks[2], picks[3]]);
                let (b, b2) = two_owners(receiver, place, &[picks[4], picks[5]]);
                let (mut old, mut new) = (Object::default(), Object::default());
                old.put(giver, &giver.write(&a, Some(place)));
                old.put(receiver, &receiver.nothing(place, &picks[4]));
                let text = match way {
                    Across::Stale => offer_text(giver, &z, receiver, &b),
                    Across::SameMark => offer_text(giver, &a, giver, &z),
                    Across::Bare => b.clone(),
                    _ => offer_text(giver, &a, receiver, &b),
                };
                old.offer = Some(text);
                let taken = if way == Across::OtherReceiver {
                    &b2
                } else {
                    &b
                };
                new.put(receiver, &receiver.write(taken, Some(place)));
                if matches!(way, Across::GiverKept | Across::GiverAndOfferKept) {
                    new.put(giver, &giver.write(&a, Some(place)));
                }
                if matches!(way, Across::OfferKept | Across::GiverAndOfferKept) {
                    new.offer = old.offer.clone();
                }
                let mut acting = Vec::new();
                if for_giver {
                    acting.push(a.clone());
                }
                if for_receiver {
                    acting.push(taken.clone());
                }
                let mut case =
                    direct_update(shapes, place, old, new, &acting, identities, stamp, false);
                if deny_orphaning {
                    case.settings.orphaning = "Deny";
                }
                (case, giver, receiver)
            },
        )
}

/// How another mark moves beside a kept offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Beside {
    Orphan,
    Adopt,
    Change,
    Broken,
    Kept,
}

/// Updates that keep mark M's owner A and its live offer, or drop or change the offer, while
/// another mark moves, by requesters acting for the other mark's owners, for A, or for none.
fn offers_beside_moves() -> impl Strategy<Value = (Case, Shape, Shape)> {
    let beside = weighted(&[
        (4, Beside::Orphan),
        (3, Beside::Adopt),
        (1, Beside::Change),
        (1, Beside::Broken),
        (1, Beside::Kept),
    ]);
    let offers = weighted(&[
        (3, NewOffer::Dropped),
        (3, NewOffer::Kept),
        (1, NewOffer::Made(OfferTo::Another)),
    ]);
    let acting = weighted(&[(4, "mover"), (1, "nobody"), (1, "owner"), (1, "both")]);
    (
        some_marks(2),
        select(PLACES.to_vec()),
        beside,
        offers,
        acting,
        chance(0.5),
        chance(0.1),
        prop::array::uniform::<_, 8>(any::<Index>()),
    )
        .prop_map(
            |(shapes, place, beside, offer, acting, stamp, exempt, picks)| {
                let offering = pick(&shapes, &picks[0]);
                let movers: Vec<Shape> = shapes
                    .iter()
                    .copied()
                    .filter(|&shape| shape != offering)
                    .collect();
                let mover = pick(&movers, &picks[1]);
                let (a, b) = two_owners(offering, place, &[picks[2], picks[3]]);
                let (c, d) = two_owners(mover, place, &[picks[4], picks[5]]);
                let (mut old, mut new) = (Object::default(), Object::default());
                for object in [&mut old, &mut new] {
                    object.put(offering, &offering.write(&a, Some(place)));
                }
                let invalid = pick(&mover.invalid_writes(), &picks[6]);
                let (before, after) = match beside {
                    Beside::Orphan => (
                        mover.write(&c, Some(place)),
                        mover.nothing(place, &picks[7]),
                    ),
                    Beside::Adopt => (
                        mover.nothing(place, &picks[7]),
                        mover.write(&d, Some(place)),
                    ),
                    Beside::Change => (mover.write(&c, Some(place)), mover.write(&d, Some(place))),
                    Beside::Broken => (mover.write(&c, Some(place)), invalid),
                    Beside::Kept => (mover.write(&c, Some(place)), mover.write(&c, Some(place))),
                };
                old.put(mover, &before);
                new.put(mover, &after);
                old.offer = Some(offer_text(offering, &a, offering, &b));
                new.offer = match offer {
                    NewOffer::Dropped => None,
                    NewOffer::Kept => old.offer.clone(),
                    NewOffer::Made(_) => {
                        let others: Vec<_> = (offering.owners_in(place).into_iter())
                            .filter(|owner| *owner != a && *owner != b)
                            .collect();
                        let to = others.first().map_or(b.as_str(), |owner| owner);
                        Some(offer_text(offering, &a, offering, to))
                    }
                };
                let ids: Vec<String> = match acting {
                    "mover" => vec![c, d],
                    "owner" => vec![a],
                    "both" => vec![a, c, d],
                    _ => Vec::new(),
                };
                let case = direct_update(shapes, place, old, new, &ids, true, stamp, exempt);
                (case, offering, mover)
            },
        )
}

/// Whom an offer made in an update names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Receiving {
    /// Another owner of the offering mark.
    Proper,
    /// The current owner.
    Current,
    /// An owner of another mark of the object (which the offering mark may not read).
    OthersOwner,
    /// An owner out of the object's scope.
    OutOfScope,
    /// Another mark's owner, across marks.
    Across,
}

/// Updates that keep every mark and make an offer of mark M's owner A, beside other marks
/// owned by others (linked to M or not), unowned or broken, by requesters acting for A, for the
/// others' owners, both or none.
fn offers_beside_owners() -> impl Strategy<Value = (Case, Shape)> {
    let receiving = weighted(&[
        (5, Receiving::Proper),
        (1, Receiving::Current),
        (2, Receiving::OthersOwner),
        (1, Receiving::OutOfScope),
        (2, Receiving::Across),
    ]);
    let others = weighted(&[(6, "owned"), (1, "unowned"), (1, "broken")]);
    let acting = weighted(&[(5, "owner"), (2, "others"), (1, "both"), (1, "nobody")]);
    (
        some_marks(1),
        select(PLACES.to_vec()),
        receiving,
        prop::array::uniform::<_, 2>(others),
        acting,
        prop::array::uniform::<_, 8>(any::<Index>()),
    )
        .prop_map(|(shapes, place, receiving, others, acting, picks)| {
            let offering = pick(&shapes, &picks[0]);
            let (a, b) = two_owners(offering, place, &[picks[1], picks[2]]);
            let mut object = Object::default();
            object.put(offering, &offering.write(&a, Some(place)));
            let mut owners = Vec::new();
            let rest: Vec<Shape> = shapes
                .iter()
                .copied()
                .filter(|&shape| shape != offering)
                .collect();
            for (slot, &other) in rest.iter().enumerate() {
                let (c, _) = two_owners(other, place, &[picks[3 + slot], picks[5]]);
                let written = match others[slot] {
                    "owned" => {
                        owners.push((other, c.clone()));
                        other.write(&c, Some(place))
                    }
                    "broken" => pick(&other.invalid_writes(), &picks[6]),
                    _ => other.nothing(place, &picks[6]),
                };
                object.put(other, &written);
            }
            let first_other = rest[0];
            let (_, elsewhere) = two_owners(first_other, place, &[picks[7], picks[3]]);
            let text = match receiving {
                Receiving::Proper => offer_text(offering, &a, offering, &b),
                Receiving::Current => offer_text(offering, &a, offering, &a),
                Receiving::OthersOwner => offer_text(offering, &a, offering, &elsewhere),
                Receiving::OutOfScope => {
                    let outside = offering.owners_outside(place);
                    let to = outside.first().map_or(UNKNOWN_KIND, |owner| owner);
                    offer_text(offering, &a, offering, to)
                }
                Receiving::Across => offer_text(offering, &a, first_other, &elsewhere),
            };
            let old = object.clone();
            let mut new = object;
            new.offer = Some(text);
            let ids: Vec<String> = match acting {
                "owner" => vec![a],
                "others" => owners.iter().map(|(_, owner)| owner.clone()).collect(),
                "both" => std::iter::once(a)
                    .chain(owners.iter().map(|(_, owner)| owner.clone()))
                    .collect(),
                _ => Vec::new(),
            };
            let case = direct_update(shapes, place, old, new, &ids, true, false, false);
            (case, offering)
        })
}
