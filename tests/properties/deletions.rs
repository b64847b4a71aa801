//! Finishing deletions: under `writes: Owner`, only finishing a deletion under way (or only
//! adding a finalizer) needs no owner (14).

use std::collections::BTreeMap;

use proptest::bool::weighted as chance;
use proptest::prelude::*;
use proptest::sample::subsequence;
use serde_json::{Value, json};

use crate::check;
use crate::generators::{
    ActsFor, Binding, Exempt, Mix, Move, NewOffer, OfferTo, scenario, weighted,
};
use crate::model::{Case, GRACE_PERIOD, Op, Owner, PLACES};

/// 14. Under `writes: Owner`, a write that only finishes a deletion under way, or only adds a
///     finalizer, needs no owner: by a requester that does not write for one of the object's
///     owners (nor is exempt), an UPDATE of an object whose deletion has begun is accepted when
///     it only removes finalizers (not `orphan`) or writes `status`, and denied when it also
///     adds a finalizer or changes `data`, `spec`, an owner mark, another label or an
///     annotation; an UPDATE that only adds a finalizer other than `foregroundDeletion` is
///     accepted, terminating or not; a re-DELETE is accepted when it shortens no grace period
///     and changes no propagation, and denied otherwise. On an object whose deletion has not
///     begun, everything else is denied.
#[test]
fn only_finishing_a_deletion_needs_no_owner() {
    let floors = [
        (
            "a terminating object's finalizers removed by a non-owner, accepted",
            4.0,
        ),
        (
            "a terminating object's status written by a non-owner, accepted",
            2.0,
        ),
        (
            "a terminating object's data or spec changed by a non-owner, denied",
            4.0,
        ),
        (
            "a terminating object's owner marks changed by a non-owner, denied",
            6.0,
        ),
        (
            "a terminating object's other label or annotation changed by a non-owner, denied",
            5.0,
        ),
        (
            "a finalizer added by a non-owner, nothing else changed, accepted",
            1.0,
        ),
        (
            "a propagation finalizer added or removed by a non-owner, denied",
            2.0,
        ),
        (
            "finalizers removed from an object not being deleted by a non-owner, denied",
            3.0,
        ),
        (
            "a re-DELETE that finishes the deletion by a non-owner, accepted",
            3.0,
        ),
        (
            "a re-DELETE that shortens the grace period or changes the propagation by a \
             non-owner, denied",
            2.0,
        ),
    ];
    check(finishing_writes(), &floors, |(case, finish), tally| {
        let admission = &case.admission;
        let old = admission.old.as_ref().expect("an UPDATE or DELETE");
        let owners: Vec<String> = (case.settings.shapes.iter())
            .map(|&shape| (shape, case.claim(shape, old)))
            .filter(|(shape, claim)| !claim.is_none() && shape.owner(claim) != Owner::Invalid)
            .map(|(_, claim)| claim.id())
            .collect();
        let non_owner = owners.iter().any(|owner| !case.writes_for(owner));
        if !non_owner || case.exemption().is_some() {
            return Ok(());
        }
        let response = case.respond()?;
        let terminating = finish.terminating;
        let labels_changed = admission.new.as_ref().is_some_and(|new| {
            (case.settings.shapes.iter())
                .any(|&shape| case.claim(shape, old) != case.claim(shape, new))
        });
        // What the marks write changed, even where they read as no owner (a copied tracking id).
        let metadata_changed = admission
            .new
            .as_ref()
            .is_some_and(|new| new.labels != old.labels || new.annotations != old.annotations);
        let also = |change: Also| finish.also.contains(&change);
        let finalizers_added = matches!(
            finish.finalizers,
            Finalizers::Added | Finalizers::AddedPropagation | Finalizers::PropagationRemoved
        );
        let finishing = match admission.op {
            Op::Delete => terminating && finish.redelete.finishes(),
            _ => {
                terminating
                    && !labels_changed
                    && !metadata_changed
                    && !finalizers_added
                    && !also(Also::Data)
                    && !also(Also::Spec)
                    && !also(Also::Label)
                    && !also(Also::Annotation)
            }
        };
        let only_adds_a_finalizer = admission.op == Op::Update
            && finish.finalizers == Finalizers::Added
            && finish.also.is_empty()
            && !labels_changed
            && !metadata_changed;
        let accepted = response.accepted;
        if admission.op == Op::Delete {
            tally.count(
                terminating && finishing && accepted,
                "a re-DELETE that finishes the deletion by a non-owner, accepted",
            );
            tally.count(
                terminating && !finish.redelete.finishes() && !accepted,
                "a re-DELETE that shortens the grace period or changes the propagation by a \
                 non-owner, denied",
            );
        } else {
            let removed = matches!(
                finish.finalizers,
                Finalizers::OneRemoved | Finalizers::AllRemoved
            );
            tally.count(
                finishing && removed && accepted,
                "a terminating object's finalizers removed by a non-owner, accepted",
            );
            tally.count(
                finishing && also(Also::Status) && accepted,
                "a terminating object's status written by a non-owner, accepted",
            );
            tally.count(
                terminating && (also(Also::Data) || also(Also::Spec)) && !accepted,
                "a terminating object's data or spec changed by a non-owner, denied",
            );
            tally.count(
                terminating && labels_changed && !accepted,
                "a terminating object's owner marks changed by a non-owner, denied",
            );
            tally.count(
                terminating && (also(Also::Label) || also(Also::Annotation)) && !accepted,
                "a terminating object's other label or annotation changed by a non-owner, denied",
            );
            tally.count(
                only_adds_a_finalizer && accepted,
                "a finalizer added by a non-owner, nothing else changed, accepted",
            );
            tally.count(
                !matches!(finish.finalizers, Finalizers::Kept | Finalizers::Added)
                    && !removed
                    && !accepted,
                "a propagation finalizer added or removed by a non-owner, denied",
            );
            tally.count(
                !terminating && removed && !accepted,
                "finalizers removed from an object not being deleted by a non-owner, denied",
            );
        }
        prop_assert_eq!(
            accepted,
            finishing || only_adds_a_finalizer,
            "{:?} by {}, who does not write for one of {:?}: {:?}",
            &finish,
            &admission.user,
            &owners,
            response.message
        );
        Ok(())
    });
}

/// What an UPDATE of a terminating object does to its finalizers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Finalizers {
    Kept,
    OneRemoved,
    AllRemoved,
    /// A finalizer that only holds the deletion.
    Added,
    /// `foregroundDeletion` added.
    AddedPropagation,
    /// The stored object's `orphan` removed.
    PropagationRemoved,
}

/// What else an UPDATE changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Also {
    Status,
    Data,
    Spec,
    /// A label no owner mark names.
    Label,
    Annotation,
}

/// The DeleteOptions of a re-DELETE of an object whose grace period is 30 seconds and whose
/// finalizers hold neither `orphan` nor `foregroundDeletion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Redelete {
    NoOptions,
    Grace(i64),
    Propagation(&'static str),
}

impl Redelete {
    fn options(self) -> Option<Value> {
        match self {
            Redelete::NoOptions => None,
            Redelete::Grace(seconds) => Some(json!({"gracePeriodSeconds": seconds})),
            Redelete::Propagation(policy) => Some(json!({"propagationPolicy": policy})),
        }
    }

    /// Whether it shortens no grace period and changes no propagation (the API server's
    /// `BeforeDelete` and `deletionFinalizersForGarbageCollection`).
    fn finishes(self) -> bool {
        match self {
            Redelete::NoOptions => true,
            Redelete::Grace(seconds) => seconds >= GRACE_PERIOD,
            Redelete::Propagation(policy) => policy == "Background",
        }
    }
}

/// What a write does to an object whose deletion has begun (or, for comparison, not).
#[derive(Debug, Clone)]
struct Finish {
    terminating: bool,
    finalizers: Finalizers,
    also: Vec<Also>,
    redelete: Redelete,
}

/// The finalizers of the stored object.
const FINALIZERS: [&str; 2] = ["example.com/cleanup", "example.com/backup"];

/// UPDATEs and re-DELETEs of owned objects under `writes: Owner`, by requesters acting for
/// another owner or none, that only finish a deletion under way or do more.
fn finishing_writes() -> impl Strategy<Value = (Case, Finish)> {
    let case = scenario(Mix {
        operations: &[(3, Op::Update), (1, Op::Delete)],
        moves: &[(6, Move::Keep), (1, Move::Orphan), (1, Move::Change)],
        others: &[(4, Move::Unowned), (3, Move::Keep), (1, Move::Adopt)],
        old_offers: &[(1, OfferTo::Nobody)],
        new_offers: &[(1, NewOffer::Kept)],
        acting: &[
            (3, ActsFor::Nobody),
            (3, ActsFor::Another),
            (2, ActsFor::OtherEntries),
        ],
        exempt: &[(9, Exempt::No), (1, Exempt::User)],
        ratchet: 0.0,
        identities: 1.0,
        writes_owner: 1.0,
        stamp: 0.3,
        deny: 0.2,
        scoped_focus: false,
        camel: 1.0,
        linked: 0.0,
        entries: 1,
        places: &PLACES,
        bindings: &[
            (3, Binding::User),
            (2, Binding::Group),
            (1, Binding::GroupPattern),
            (2, Binding::Template),
        ],
        write_access: 0.3,
    });
    let finalizers = weighted(&[
        (2, Finalizers::Kept),
        (3, Finalizers::OneRemoved),
        (3, Finalizers::AllRemoved),
        (2, Finalizers::Added),
        (1, Finalizers::AddedPropagation),
        (1, Finalizers::PropagationRemoved),
    ]);
    let also = prop_oneof![
        2 => Just(Vec::new()),
        2 => Just(vec![Also::Status]),
        3 => subsequence(
            vec![Also::Status, Also::Data, Also::Spec, Also::Label, Also::Annotation],
            1..=2,
        ),
    ];
    let redelete = weighted(&[
        (2, Redelete::NoOptions),
        (1, Redelete::Grace(GRACE_PERIOD)),
        (1, Redelete::Grace(60)),
        (1, Redelete::Grace(0)),
        (1, Redelete::Grace(5)),
        (1, Redelete::Propagation("Background")),
        (1, Redelete::Propagation("Orphan")),
        (1, Redelete::Propagation("Foreground")),
    ]);
    (case, chance(0.75), finalizers, also, redelete).prop_map(
        |(mut case, terminating, finalizers, also, redelete)| {
            let admission = &mut case.admission;
            let old = admission.old.as_mut().expect("an UPDATE or DELETE");
            old.terminating = terminating;
            old.finalizers = FINALIZERS.iter().map(|&f| f.to_owned()).collect();
            old.fields = BTreeMap::from([
                ("data".to_owned(), json!({"key": "1"})),
                ("spec".to_owned(), json!({"replicas": 1})),
                ("status".to_owned(), json!({"phase": "Active"})),
            ]);
            let stored = old.clone();
            if let Some(new) = &mut admission.new {
                new.terminating = stored.terminating;
                new.fields = stored.fields.clone();
                new.finalizers = match finalizers {
                    Finalizers::Kept => stored.finalizers.clone(),
                    Finalizers::OneRemoved => vec![FINALIZERS[1].to_owned()],
                    Finalizers::AllRemoved => Vec::new(),
                    Finalizers::Added | Finalizers::AddedPropagation => {
                        let mut more = stored.finalizers.clone();
                        more.push(match finalizers {
                            Finalizers::Added => "example.com/audit".to_owned(),
                            _ => "foregroundDeletion".to_owned(),
                        });
                        more
                    }
                    Finalizers::PropagationRemoved => {
                        let stored = admission.old.as_mut().expect("an UPDATE");
                        stored.finalizers.push("orphan".to_owned());
                        FINALIZERS.iter().map(|&f| f.to_owned()).collect()
                    }
                };
                for change in &also {
                    let (field, value) = match change {
                        Also::Status => ("status", json!({"phase": "Terminating"})),
                        Also::Data => ("data", json!({"key": "2"})),
                        Also::Spec => ("spec", json!({"replicas": 2})),
                        Also::Label => {
                            new.labels.insert("app".to_owned(), "web".to_owned());
                            continue;
                        }
                        Also::Annotation => {
                            new.annotations
                                .insert("example.com/note".to_owned(), "x".to_owned());
                            continue;
                        }
                    };
                    new.fields.insert(field.to_owned(), value);
                }
            } else {
                admission.options = redelete.options();
            }
            let finish = Finish {
                terminating,
                finalizers,
                also,
                redelete,
            };
            (case, finish)
        },
    )
}
