//! Handoff: an owner hands an object over to another owner in two phases, without a moment
//! where the object is unowned.
//!
//! 1. **Offer** — the current owner sets the offer annotation to `<mark>: <from> -> <to>`: the
//!    mark it owns the object under (its key), itself, and the receiving owner, under the same
//!    mark (`ClusterExtension.b`) or another one (`argocd.argoproj.io/tracking-id: guestbook`).
//! 2. **Accept** — the receiver moves the mark to itself (or, across marks, removes the offering
//!    mark and sets its own) and removes the annotation; deployed mutating, the policy removes it.
//!
//! An offer records the owner it was made under, so it lives no longer than that owner: once the
//! mark names another owner, the offer is stale and hands nothing over. Only the owner under
//! the offer's mark makes, changes or withdraws it; another mark's move never touches it. What
//! an update does with the annotation, given whether the offer's mark moves (sets, removes or
//! changes its owner) in the same update:
//!
//! | offer (old → new)           | the offer's mark moves | rule                                   |
//! |-----------------------------|------------------------|----------------------------------------|
//! | unchanged                   | no                     | nothing to check                       |
//! | made, changed or withdrawn  | no                     | the owner's act: checked as an offer   |
//! | X → none                    | yes                    | nothing to check (accepted, or void)   |
//! | X → X                       | yes                    | the offer must be consumed             |
//! | anything → Y, a new offer   | yes                    | denied: offer in an update of its own  |
//!
//! An offer made or changed is checked in this order, the first fault denying it: it parses; it
//! names a guarded mark; the object has an owner under it; the offer names that owner as its
//! maker; the requester acts for that owner; the receiving mark is guarded; the receiver is not
//! the owner itself; the receiver could own the object (its value and scope). Withdrawing or
//! changing a live offer needs acting for its owner; a stale one goes freely. What the stored
//! offer does for a mark's transition is a column of the transition table ([`Handoff`]).

use crate::facts::{Entry, Facts};
use crate::offer::Offer;
use crate::owner::{Claim, MarkName, Place};
use crate::request::Operation;
use crate::requester;
use crate::scope;
use crate::violation::{Act, Change, Reason, Violation};

/// What the handoff rules ask of an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfferRule {
    /// Nothing to check.
    Fine,
    /// An offer is made, changed or withdrawn: the owner's act.
    Check,
    /// The offer's mark moved, and the offer is still on the object: it has to go.
    Consume,
    /// A new offer in the same update as a move of its mark or of the withdrawn offer's mark.
    OfferWithMove,
}

/// Judges the offer annotation of an update: `old` and `new` are its values before and after;
/// `moves` tells whether the mark of a key moves in the update.
pub fn judge(old: Option<&str>, new: Option<&str>, moves: impl Fn(&str) -> bool) -> OfferRule {
    let mark_moves = |text: Option<&str>| {
        text.and_then(Offer::parse)
            .is_some_and(|offer| moves(offer.mark))
    };
    match (old == new, new.is_some()) {
        (true, _) if mark_moves(old) => OfferRule::Consume,
        (true, _) => OfferRule::Fine,
        (false, false) if mark_moves(old) => OfferRule::Fine,
        (false, false) => OfferRule::Check,
        (false, true) if mark_moves(old) || mark_moves(new) => OfferRule::OfferWithMove,
        (false, true) => OfferRule::Check,
    }
}

/// What an offer does for one mark's transition: a column of the transition table
/// ([`crate::transition`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Handoff<'a> {
    /// No offer of this mark's owner.
    #[default]
    None,
    /// The owner offered the object to this owner of the same mark.
    To(&'a str),
    /// The owner offered the object to another mark's owner, which takes it in this update:
    /// the mark goes, and the object is never unowned.
    Given,
    /// Another mark's owner offered the object to this mark's new owner, and gives it in this
    /// update.
    Received,
    /// A mark linked to this one (`sameOwnerAs`: they name the same owner) is handed over in
    /// this update: this mark moves with it, in the same update.
    Linked,
}

/// What the stored object's offer does for `entry`'s transition: its own part in it, or, when
/// it has none, the part of a linked mark that is handed over now.
pub fn handoff<'a>(facts: &Facts<'a>, entry: &Entry<'a>) -> Handoff<'a> {
    let own = direct(facts, entry);
    if own != Handoff::None {
        return own;
    }
    let handed_over = |linked: &Entry<'a>| match direct(facts, linked) {
        Handoff::To(to) => linked.new.is_some_and(|new| new.id() == to),
        Handoff::Given | Handoff::Received => true,
        Handoff::None | Handoff::Linked => false,
    };
    let linked = |other: &&Entry<'a>| other.mark.names_same_owner_as(entry.mark);
    match facts.siblings(entry).filter(linked).any(handed_over) {
        true => Handoff::Linked,
        false => Handoff::None,
    }
}

/// What the stored object's offer does for `entry`'s own transition.
fn direct<'a>(facts: &Facts<'a>, entry: &Entry<'a>) -> Handoff<'a> {
    let Some(offer) = facts.old_offer.and_then(Offer::parse) else {
        return Handoff::None;
    };
    let new = entry.new.unwrap_or_default();
    if new.is_none() && given(facts, entry, offer) {
        return Handoff::Given;
    }
    if let Some(to) = offer.to_under(&entry.mark.key, &entry.change().old.id()) {
        return Handoff::To(to);
    }
    let receives = offer.to.mark == entry.mark.key && new.id() == offer.to.owner;
    let giver_gives = |giver: &Entry<'a>| {
        giver.mark.key == offer.mark
            && giver.new.unwrap_or_default().is_none()
            && given(facts, giver, offer)
    };
    if receives && facts.siblings(entry).any(giver_gives) {
        return Handoff::Received;
    }
    Handoff::None
}

/// Whether `offer`, made by `entry`'s owner under its mark, hands the object to another mark's
/// owner that this update sets.
fn given<'a>(facts: &Facts<'a>, entry: &Entry<'a>, offer: Offer<'_>) -> bool {
    let made_by_owner = offer.mark == entry.mark.key
        && offer.from == entry.change().old.id()
        && offer.to.mark != entry.mark.key;
    made_by_owner
        && facts.siblings(entry).any(|receiver| {
            receiver.mark.key == offer.to.mark
                && receiver
                    .new
                    .is_some_and(|claim| claim.id() == offer.to.owner)
        })
}

/// What the handoff rules make of an update's offer.
#[derive(Debug, PartialEq, Eq)]
pub enum OfferVerdict<'a> {
    /// Nothing to object to.
    Fine,
    /// The owner moved and the offer is left: the policy removes it (deployed mutating).
    Consume,
    /// The offer breaks the handoff rules.
    Deny(Vec<Violation<'a>>),
}

/// The offer rule: the handoff table applied to the offer annotation of a CREATE or UPDATE;
/// `carried` is the offer of the object's controller, when it was read (`Some(None)`: it has
/// none): an offer made, changed or withdrawn to match it follows the controller, and a
/// requester that derives for the owner may write it.
pub fn rule<'a>(facts: &Facts<'a>, carried: Option<Option<&str>>) -> OfferVerdict<'a> {
    let old = facts.old_offer;
    let new = facts.new_offer;
    let moving = |key: &str| facts.object_entry(key).is_some_and(Entry::moves);
    let annotation = facts.settings.offer_annotation.as_str();
    let creating = facts.request.operation == Operation::Create;
    let reason = match judge(old, new, moving) {
        OfferRule::Fine => return OfferVerdict::Fine,
        OfferRule::Consume if facts.settings.stamp => return OfferVerdict::Consume,
        OfferRule::Check => {
            let inherited = carried == Some(new);
            let withdrawn = old.and_then(|text| withdrawal(facts, text, inherited));
            let made = new.and_then(|text| made(facts, text, inherited));
            let violations: Vec<_> = withdrawn.into_iter().chain(made).collect();
            return match violations.is_empty() {
                true => OfferVerdict::Fine,
                false => OfferVerdict::Deny(violations),
            };
        }
        OfferRule::Consume => Reason::OfferNotConsumed { annotation },
        OfferRule::OfferWithMove => Reason::OfferWithMove {
            annotation,
            creating,
        },
    };
    let moved = [old, new]
        .into_iter()
        .flatten()
        .filter_map(Offer::parse)
        .find_map(|offer| facts.object_entry(offer.mark).filter(|entry| entry.moves()));
    let change = moved.map_or(Change::kept(Claim::default()), Entry::change);
    OfferVerdict::Deny(vec![violation(facts, change, reason)])
}

/// Why the requester may not withdraw or change the stored offer, if it may not: only the
/// owner it was made under may, while it still owns the object. A stale offer — its mark
/// names another owner now, or it does not parse — hands nothing over, and goes freely.
fn withdrawal<'a>(facts: &Facts<'a>, text: &str, inherited: bool) -> Option<Violation<'a>> {
    let offer = Offer::parse(text)?;
    let entry = facts.object_entry(offer.mark)?;
    let owner = entry.new.filter(|claim| claim.id() == offer.from)?;
    let reason = requester::rule(facts, Act::Withdraw, owner, inherited)?;
    Some(violation(facts, Change::kept(owner), reason))
}

/// Why an offer on the new object is not one its owner may make, if it is not: it names a
/// guarded mark, the owner the object has under it, a requester acting for that owner, and a
/// receiver that could own the object. An audit replay checks a pending offer so too;
/// `inherited` when the object's controller carries the same offer.
pub fn made<'a>(facts: &Facts<'a>, text: &'a str, inherited: bool) -> Option<Violation<'a>> {
    let (owner, reason) = offer_fault(facts, text, inherited)?;
    Some(violation(facts, Change::kept(owner), reason))
}

/// The owner an offer is made under, and what is wrong with the offer, if anything.
fn offer_fault<'a>(
    facts: &Facts<'a>,
    text: &'a str,
    inherited: bool,
) -> Option<(Claim<'a>, Reason<'a>)> {
    let marks = facts.settings.owner_marks.as_slice();
    let none = Claim::default();
    let Some(offer) = Offer::parse(text) else {
        return Some((none, Reason::OfferMalformed { text }));
    };
    let Some(entry) = facts.object_entry(offer.mark) else {
        let key = offer.mark;
        return Some((none, Reason::OfferNamesNoMark { key, marks }));
    };
    let owner = entry.new.unwrap_or_default();
    if owner.is_none() {
        return Some((owner, Reason::OfferOfNothing { mark: entry.mark }));
    }
    if owner.id() != offer.from {
        let from = offer.from;
        return Some((owner, Reason::OfferByAnother { from, owner }));
    }
    if let Some(reason) = requester::rule(facts, Act::Offer, owner, inherited) {
        return Some((owner, reason));
    }
    let Some(receiving) = marks.iter().find(|mark| mark.key == offer.to.mark) else {
        let key = offer.to.mark;
        return Some((owner, Reason::OfferNamesNoMark { key, marks }));
    };
    let to = offer.to.owner;
    if receiving.key == entry.mark.key && to == owner.id() {
        return Some((owner, Reason::OfferToItself { to }));
    }
    let receiver = Claim::of_owner(receiving, to);
    let why = scope::fit(receiving, receiver, facts.request.object_scope()).err()?;
    Some((owner, Reason::OfferToUnfit { to, why }))
}

/// A violation of the offer rules, naming the offer annotation.
fn violation<'a>(facts: &Facts<'a>, change: Change<'a>, reason: Reason<'a>) -> Violation<'a> {
    let mark = MarkName {
        place: Place::Annotation,
        key: &facts.settings.offer_annotation,
    };
    facts.violation(mark, None, change, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: &str = "m: a -> b";
    const C: &str = "m: a -> c";
    const OTHER: &str = "n: x -> y";

    #[test]
    fn offer_table() {
        use OfferRule::*;
        #[rustfmt::skip]
        let rows = [
            // old offer, new offer, the marks that move, rule
            (None,        None,        &[][..],     Fine),
            (Some(B),     Some(B),     &[],         Fine),
            (None,        Some(B),     &[],         Check),
            (Some(B),     Some(C),     &[],         Check),
            (Some(B),     None,        &[],         Check),
            (None,        None,        &["m"],      Fine),
            (Some(B),     None,        &["m"],      Fine),
            (Some(B),     Some(B),     &["m"],      Consume),
            (None,        Some(B),     &["m"],      OfferWithMove),
            (Some(B),     Some(C),     &["m"],      OfferWithMove),
            (Some(OTHER), Some(B),     &["n"],      OfferWithMove),
            // another mark's move never touches the offer
            (Some(B),     Some(B),     &["n"],      Fine),
            (Some(B),     None,        &["n"],      Check),
            (None,        Some(B),     &["n"],      Check),
            // an offer that does not parse names no mark
            (Some("b"),   Some("b"),   &["m"],      Fine),
            (Some("b"),   None,        &["m"],      Check),
        ];
        for (old, new, moving, expected) in rows {
            let moves = |mark: &str| moving.contains(&mark);
            assert_eq!(
                judge(old, new, moves),
                expected,
                "{old:?} -> {new:?}, {moving:?}"
            );
        }
    }
}
