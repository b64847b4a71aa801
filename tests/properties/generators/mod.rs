//! Generators: the choices a scenario is made of and their weights per property ([`Mix`]), and
//! the generators more than one property draws from. `scenario.rs` builds a case from the
//! choices; `requesters.rs` names the control plane's writers, the person they are compared
//! with, and requests on the resources the control plane writes.

use std::fmt;

use proptest::prelude::*;
use proptest::strategy::Union;

use crate::model::{Case, Op, PLACES, Place};

mod requesters;
mod scenario;

pub(crate) use requesters::{
    NAME_BINDINGS, PERSON, Requester, alike, control_plane, requests_on,
    requests_on_control_plane_resources,
};
pub(crate) use scenario::{for_marks, scenario};

/// How one owner mark goes from the stored object to the new one; A is the stored owner,
/// B another valid owner in scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Move {
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

/// The offer on one side: none, or one of the focus mark made by its stored owner A (or A
/// where the stored object has none) naming a receiver, or another kind of offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OfferTo {
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
    /// The new owner, offered by a third owner: a stale offer, which hands nothing over.
    Stale,
    /// The new owner alone, as offers read before 0.2.0: no offer.
    Bare,
    /// The new owner of another mark (of the focus mark when there is none): an offer across
    /// marks.
    Across,
    /// An offer of another mark by its stored owner to a third one (of the focus mark when
    /// there is none).
    OtherMark,
}

/// What the new object does with the stored object's offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NewOffer {
    Kept,
    Dropped,
    Made(OfferTo),
}

/// Whom the requester acts for, through identities built for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ActsFor {
    Old,
    New,
    Both,
    /// A third owner, neither old nor new.
    Another,
    /// The new owners of the other entries (another chosen owner where they have none).
    OtherEntries,
    /// The stored and the new owners of the other entries.
    OtherEntriesBoth,
    /// An owner out of the object's scope, or no valid owner.
    Outside,
    Nobody,
}

/// How an identity binds the requester to an owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
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
pub(crate) enum Exempt {
    No,
    User,
    Group,
    TwoGroups,
    UserAndGroup,
}

/// The weights of each choice of [`scenario`], per property.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mix {
    pub(crate) operations: &'static [(u32, Op)],
    /// The move of the focus entry.
    pub(crate) moves: &'static [(u32, Move)],
    /// The moves of the other entries.
    pub(crate) others: &'static [(u32, Move)],
    pub(crate) old_offers: &'static [(u32, OfferTo)],
    pub(crate) new_offers: &'static [(u32, NewOffer)],
    pub(crate) acting: &'static [(u32, ActsFor)],
    pub(crate) exempt: &'static [(u32, Exempt)],
    /// How often the stored owner predates the policy: out of scope, or invalid.
    pub(crate) ratchet: f64,
    pub(crate) identities: f64,
    pub(crate) writes_owner: f64,
    pub(crate) stamp: f64,
    /// How often `adoption` and `orphaning` are `Deny`, each.
    pub(crate) deny: f64,
    /// Whether the focus is an entry with kinds (scope applies) when there is one.
    pub(crate) scoped_focus: bool,
    /// How often Camel K's entry, which reads any value as an owner, may be in the settings.
    pub(crate) camel: f64,
    /// How often Flux's labels and Helm's annotations, which name one owner, are both guarded
    /// (with at most one other mark).
    pub(crate) linked: f64,
    /// The fewest owner marks.
    pub(crate) entries: usize,
    /// Where the object is.
    pub(crate) places: &'static [Place],
    /// How identities bind the requester.
    pub(crate) bindings: &'static [(u32, Binding)],
    /// How often an identity built for the requester has `access: Write`.
    pub(crate) write_access: f64,
}

/// The moves of the entries besides the focus, most often.
pub(crate) const QUIET: &[(u32, Move)] = &[
    (6, Move::Unowned),
    (3, Move::Keep),
    (1, Move::Adopt),
    (1, Move::Orphan),
    (1, Move::Change),
];

pub(crate) const ALL_MOVES: &[(u32, Move)] = &[
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

pub(crate) const ALL_ACTING: &[(u32, ActsFor)] = &[
    (3, ActsFor::New),
    (2, ActsFor::Old),
    (2, ActsFor::Both),
    (1, ActsFor::Another),
    (1, ActsFor::OtherEntries),
    (1, ActsFor::Outside),
    (2, ActsFor::Nobody),
];

pub(crate) const ALL_OLD_OFFERS: &[(u32, OfferTo)] = &[
    (4, OfferTo::Nobody),
    (3, OfferTo::NewOwner),
    (1, OfferTo::Another),
    (1, OfferTo::CurrentOwner),
    (1, OfferTo::OutOfScope),
    (1, OfferTo::Invalid),
    (1, OfferTo::Stale),
    (1, OfferTo::Bare),
    (1, OfferTo::Across),
    (1, OfferTo::OtherMark),
];

pub(crate) const ALL_NEW_OFFERS: &[(u32, NewOffer)] = &[
    (4, NewOffer::Dropped),
    (4, NewOffer::Kept),
    (1, NewOffer::Made(OfferTo::NewOwner)),
    (1, NewOffer::Made(OfferTo::Another)),
    (1, NewOffer::Made(OfferTo::Across)),
    (1, NewOffer::Made(OfferTo::Bare)),
];

/// How often an identity built for the requester has `access: Write`, unless a property asks
/// for more.
pub(crate) const WRITE_ACCESS: f64 = 0.1;

pub(crate) const BINDINGS: &[(u32, Binding)] = &[
    (3, Binding::User),
    (2, Binding::Group),
    (1, Binding::GroupPattern),
    (2, Binding::Wildcard),
    (3, Binding::Template),
];

/// One of `options`, as often as its weight says.
pub(crate) fn weighted<T: Clone + fmt::Debug + 'static>(options: &[(u32, T)]) -> BoxedStrategy<T> {
    let options = (options.iter())
        .map(|(weight, option)| (*weight, Just(option.clone()).boxed()))
        .collect();
    Union::new_weighted(options).boxed()
}

/// `items` in the order of `keys` (shifted by `salt`), ties kept in place.
pub(crate) fn permuted<T: Clone>(items: &[T], keys: &[u32; 8], salt: usize) -> Vec<T> {
    let mut indices: Vec<usize> = (0..items.len()).collect();
    indices.sort_by_key(|&index| (keys[(index + salt) % keys.len()], index));
    indices
        .into_iter()
        .map(|index| items[index].clone())
        .collect()
}

/// CREATEs with an owner, adoptions and orphanings, by requesters acting for the owner or not;
/// some of them removals of stored values that predate the policy, some sets by requesters an
/// identity with `access: Write` binds to the owner.
pub(crate) fn owner_sets_and_removals() -> impl Strategy<Value = Case> {
    let sets_and_removals = scenario(Mix {
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
        linked: 0.0,
        entries: 1,
        places: &PLACES,
        bindings: BINDINGS,
        write_access: WRITE_ACCESS,
    });
    let removals_of_old_values = scenario(Mix {
        operations: &[(3, Op::Update), (1, Op::Status)],
        moves: &[(1, Move::Orphan)],
        others: QUIET,
        old_offers: &[(1, OfferTo::Nobody)],
        new_offers: &[(1, NewOffer::Kept)],
        acting: &[
            (3, ActsFor::Nobody),
            (1, ActsFor::Another),
            (1, ActsFor::Old),
        ],
        exempt: &[(8, Exempt::No), (1, Exempt::User), (1, Exempt::Group)],
        ratchet: 1.0,
        identities: 1.0,
        writes_owner: 0.3,
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
    let sets_by_writers = scenario(Mix {
        operations: &[(1, Op::Create), (2, Op::Update)],
        moves: &[(2, Move::Adopt), (1, Move::Change)],
        others: QUIET,
        old_offers: &[(1, OfferTo::Nobody), (2, OfferTo::NewOwner)],
        new_offers: &[(1, NewOffer::Dropped)],
        acting: &[(1, ActsFor::New)],
        exempt: &[(1, Exempt::No)],
        ratchet: 0.0,
        identities: 1.0,
        writes_owner: 0.5,
        stamp: 0.3,
        deny: 0.0,
        scoped_focus: false,
        camel: 1.0,
        linked: 0.0,
        entries: 1,
        places: &PLACES,
        bindings: BINDINGS,
        write_access: 1.0,
    });
    let handoffs_across_marks = scenario(Mix {
        operations: &[(1, Op::Update)],
        moves: &[(1, Move::Orphan)],
        others: &[(4, Move::Adopt), (1, Move::Keep)],
        old_offers: &[(4, OfferTo::Across), (1, OfferTo::Stale)],
        new_offers: &[(3, NewOffer::Dropped), (1, NewOffer::Kept)],
        acting: &[
            (5, ActsFor::OtherEntries),
            (1, ActsFor::Old),
            (1, ActsFor::Nobody),
        ],
        exempt: &[(8, Exempt::No), (1, Exempt::User)],
        ratchet: 0.0,
        identities: 1.0,
        writes_owner: 0.0,
        stamp: 0.3,
        deny: 0.0,
        scoped_focus: false,
        camel: 1.0,
        linked: 0.0,
        entries: 2,
        places: &PLACES,
        bindings: BINDINGS,
        write_access: 0.0,
    });
    prop_oneof![
        12 => sets_and_removals,
        2 => removals_of_old_values,
        1 => sets_by_writers,
        4 => handoffs_across_marks,
    ]
}
