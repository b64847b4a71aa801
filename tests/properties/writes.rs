//! Writes under `writes: Owner`: only an owner's requesters update or delete its objects (3); an
//! update that changes nothing is anyone's (23).

use proptest::prelude::*;
use serde_json::json;

use crate::check;
use crate::generators::{
    ActsFor, BINDINGS, Exempt, Mix, Move, NewOffer, OfferTo, QUIET, WRITE_ACCESS, scenario,
};
use crate::model::{Case, Object, Op, Owner, PLACES, respond};

/// 3. Under `writes: Owner`, an accepted UPDATE that keeps owner X, or DELETE of an object owned
///    by X, has a requester writing for X (acting for it, or bound to it by an identity with
///    `access: Write`), an exempt one, or is a status write that keeps every owner mark and
///    stores no change of X's labels, annotations or finalizers but finalizers added (what the
///    status strategy of its kind stores: `Place::status_stores`);
///    one by a requester writing for X is never denied for X under `writes: Owner`. A stored
///    value that names no owner the settings can read (empty, of an unknown kind, half a pair)
///    is no owner: keeping or deleting it is never denied under `writes: Owner`, and an audit
///    replay of the stored object still reports it.
#[test]
fn under_owner_writes_only_an_owners_requesters_update_or_delete_its_objects() {
    let floors = [
        (
            "an UPDATE keeping X by a non-exempt requester not writing for X",
            15.0,
        ),
        (
            "a DELETE of X's object by a non-exempt requester not writing for X",
            8.0,
        ),
        (
            "an UPDATE keeping X by a requester writing for X, accepted",
            1.5,
        ),
        (
            "a DELETE of X's object by a requester writing for X, accepted",
            3.0,
        ),
        (
            "an UPDATE or DELETE of X's object by a requester only writing for X (access: \
             Write), accepted",
            0.3,
        ),
        (
            "a status write keeping every owner mark by a requester not writing for X",
            1.0,
        ),
        (
            "a status write keeping every owner mark but storing a change of X's metadata, by \
             a non-exempt requester not writing for X",
            0.3,
        ),
        (
            "an UPDATE or DELETE of X's object by an exempt requester not writing for X",
            2.0,
        ),
        (
            "a status write keeping X, adopting another entry's owner it acts for",
            5.0,
        ),
        (
            "an UPDATE or DELETE keeping a value that names no owner, by a non-exempt requester \
             not writing for it",
            1.5,
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
            (case.settings.shapes.iter())
                .all(|&shape| case.claim(shape, old) == case.claim(shape, new))
        };
        // What the status strategy stores of the metadata, and whether that is a change of
        // what the owner declared: finalizers added (none `orphan` or `foregroundDeletion`)
        // hold a deletion, and are anyone's to add.
        let stores_a_change = |new: &Object| {
            let stores = admission.place.status_stores();
            let changed = (stores.labels && old.labels != new.labels)
                || (stores.annotations && old.annotations != new.annotations)
                || (stores.finalizers && old.finalizers != new.finalizers);
            let added: Vec<_> = (new.finalizers.iter())
                .filter(|finalizer| !old.finalizers.contains(finalizer))
                .collect();
            let adds_finalizers = old.labels == new.labels
                && old.annotations == new.annotations
                && old.finalizers.iter().all(|f| new.finalizers.contains(f))
                && !added.is_empty()
                && added
                    .iter()
                    .all(|f| *f != "orphan" && *f != "foregroundDeletion");
            changed && !adds_finalizers
        };
        // An UPDATE that changes nothing is anyone's to send (23).
        let unchanged = case.unchanged();
        let status_keeping_labels = admission.op == Op::Status
            && (admission.new.as_ref())
                .is_some_and(|new| keeps_every_owner(new) && !stores_a_change(new));
        for &shape in &case.settings.shapes {
            let owner = case.claim(shape, old);
            let kept = match &admission.new {
                None => true,
                Some(new) => case.claim(shape, new) == owner,
            };
            if owner.is_none() || !kept {
                continue;
            }
            let writes = case.writes_for(&owner.id());
            if shape.owner(&owner) == Owner::Invalid {
                tally.count(
                    !exempt && !writes && !status_keeping_labels,
                    "an UPDATE or DELETE keeping a value that names no owner, by a non-exempt \
                     requester not writing for it",
                );
                let owner_writes = format!("{}: owner writes", shape.name());
                let (_, _, denied, _, bypassed) = response.rules();
                prop_assert!(
                    !denied.contains(&owner_writes) && !bypassed.contains(&owner_writes),
                    "{shape:?}: {:?} keeping {owner}, which names no owner, judged under \
                     writes: Owner: {:?}",
                    admission.op,
                    response.message
                );
                let replay = case.replay_of_stored().expect("a stored object");
                let replayed = respond(&replay, &case.settings.json())?;
                let owner_value = format!("{}: owner value: ", shape.name());
                let message = replayed.message.as_deref().unwrap_or_default();
                prop_assert!(
                    !replayed.accepted
                        && message.lines().any(|line| line.starts_with(&owner_value)),
                    "{shape:?}: an audit replay of a stored {owner} does not report it: {:?}",
                    replayed.message
                );
                continue;
            }
            let write = if admission.op == Op::Delete {
                "a DELETE of X's object"
            } else {
                "an UPDATE keeping X"
            };
            tally.count_named(
                !exempt && !writes && !status_keeping_labels && !unchanged,
                format!("{write} by a non-exempt requester not writing for X"),
            );
            tally.count_named(
                writes && response.accepted && admission.op != Op::Status,
                format!("{write} by a requester writing for X, accepted"),
            );
            tally.count(
                writes
                    && !case.acts_for(&owner.id())
                    && response.accepted
                    && admission.op != Op::Status,
                "an UPDATE or DELETE of X's object by a requester only writing for X (access: \
                 Write), accepted",
            );
            tally.count(
                status_keeping_labels && !writes,
                "a status write keeping every owner mark by a requester not writing for X",
            );
            tally.count(
                admission.op == Op::Status
                    && !exempt
                    && !writes
                    && (admission.new.as_ref())
                        .is_some_and(|new| keeps_every_owner(new) && stores_a_change(new)),
                "a status write keeping every owner mark but storing a change of X's metadata, \
                 by a non-exempt requester not writing for X",
            );
            let adopts_for_itself = |new: &Object| {
                (case.settings.shapes.iter()).any(|&other| {
                    let (before, after) = (case.claim(other, old), case.claim(other, new));
                    before.is_none() && !after.is_none() && case.acts_for(&after.id())
                })
            };
            tally.count(
                admission.op == Op::Status
                    && !writes
                    && !exempt
                    && admission.new.as_ref().is_some_and(adopts_for_itself),
                "a status write keeping X, adopting another entry's owner it acts for",
            );
            tally.count(
                exempt && !writes,
                "an UPDATE or DELETE of X's object by an exempt requester not writing for X",
            );
            if response.accepted {
                prop_assert!(
                    writes || exempt || status_keeping_labels || unchanged,
                    "{shape:?}: {:?} of an object owned by {owner} accepted from {}, who does \
                     not write for it",
                    admission.op,
                    admission.user
                );
            }
            if writes {
                let owner_writes = format!("{}: owner writes", shape.name());
                let (_, _, denied, _, bypassed) = response.rules();
                prop_assert!(
                    !denied.contains(&owner_writes) && !bypassed.contains(&owner_writes),
                    "{shape:?}: {:?} of an object owned by {owner} denied under writes: Owner \
                     to {}, who writes for it: {:?}",
                    admission.op,
                    admission.user,
                    response.message
                );
            }
        }
        Ok(())
    });
}

/// 23. An UPDATE of the object itself that changes nothing — the stored object, but for a new
///     `resourceVersion`, `generation` and `managedFields` — is allowed, whoever sends it
///     (docs/rules.md, "What `writes: Owner` guards"): a controller writing back what it read.
#[test]
fn an_update_that_changes_nothing_is_anyones() {
    let floors = [(
        "an unchanged UPDATE of an owned object by a non-exempt requester not writing for its \
         owner",
        8.0,
    )];
    check(owned_writes(), &floors, |case, tally| {
        let Some(old) = &case.admission.old else {
            return Ok(());
        };
        if case.admission.op != Op::Update {
            return Ok(());
        }
        let mut unchanged = case.clone();
        unchanged.admission.new = Some(old.clone());
        let mut request = unchanged.request_json();
        // The builder's UPDATE writes a spec; this one writes the object as stored.
        request["object"] = request["oldObject"].clone();
        let metadata = &mut request["object"]["metadata"];
        metadata["resourceVersion"] = json!("48214");
        metadata["generation"] = json!(4);
        metadata["managedFields"] = json!([{"manager": "kyverno", "operation": "Update"}]);
        let response = respond(&request, &case.settings.json())?;
        let owned_by_another = (case.settings.shapes.iter()).any(|&shape| {
            let owner = case.claim(shape, old);
            !owner.is_none()
                && shape.owner(&owner) != Owner::Invalid
                && !case.writes_for(&owner.id())
        });
        tally.count(
            owned_by_another && case.exemption().is_none(),
            "an unchanged UPDATE of an owned object by a non-exempt requester not writing for \
             its owner",
        );
        prop_assert!(
            response.accepted && response.message.is_none(),
            "an UPDATE that changes nothing, by {}, answered {:?}",
            case.admission.user,
            response.message
        );
        Ok(())
    });
}

/// UPDATEs that keep an owner, DELETEs and status writes of owned objects under `writes: Owner`;
/// some of them status writes that add an owner beside the one kept, some writes of objects
/// whose stored owner predates the policy.
pub(crate) fn owned_writes() -> impl Strategy<Value = Case> {
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
        ratchet: 0.25,
        identities: 1.0,
        writes_owner: 1.0,
        stamp: 0.3,
        deny: 0.1,
        scoped_focus: false,
        camel: 1.0,
        linked: 0.0,
        entries: 1,
        places: &PLACES,
        bindings: BINDINGS,
        write_access: 0.2,
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
        linked: 0.0,
        entries: 2,
        places: &PLACES,
        bindings: BINDINGS,
        write_access: WRITE_ACCESS,
    });
    let writes_of_old_values = scenario(Mix {
        operations: &[(4, Op::Update), (4, Op::Delete), (1, Op::Status)],
        moves: &[(1, Move::Keep)],
        others: QUIET,
        old_offers: &[(1, OfferTo::Nobody)],
        new_offers: &[(1, NewOffer::Kept)],
        acting: &[(3, ActsFor::Nobody), (1, ActsFor::Another)],
        exempt: &[(8, Exempt::No), (1, Exempt::User)],
        ratchet: 1.0,
        identities: 1.0,
        writes_owner: 1.0,
        stamp: 0.3,
        deny: 0.1,
        scoped_focus: false,
        camel: 1.0,
        linked: 0.0,
        entries: 1,
        places: &PLACES,
        bindings: BINDINGS,
        write_access: 0.3,
    });
    let cases = prop_oneof![
        9 => writes,
        3 => status_writes_beside_an_owner,
        1 => writes_of_old_values,
    ];
    (cases, proptest::sample::select(BESIDES.to_vec())).prop_map(|(mut case, besides)| {
        if case.admission.op == Op::Status
            && let Some(new) = &mut case.admission.new
        {
            besides.write(new);
        }
        case
    })
}

/// What a status write changes of the metadata besides the marks.
#[derive(Debug, Clone, Copy)]
enum Besides {
    Nothing,
    /// An annotation no mark reads, set to a new value.
    Annotation,
    /// A finalizer added.
    Finalizer(&'static str),
    /// The finalizers, all removed.
    NoFinalizers,
}

const BESIDES: [Besides; 6] = [
    Besides::Nothing,
    Besides::Nothing,
    Besides::Annotation,
    Besides::Finalizer("example.com/cleanup"),
    Besides::Finalizer("orphan"),
    Besides::NoFinalizers,
];

impl Besides {
    fn write(self, object: &mut Object) {
        match self {
            Besides::Nothing => {}
            Besides::Annotation => {
                (object.annotations).insert("example.com/note".to_owned(), "changed".to_owned());
            }
            Besides::Finalizer(finalizer) => object.finalizers.push(finalizer.to_owned()),
            Besides::NoFinalizers => object.finalizers.clear(),
        }
    }
}
