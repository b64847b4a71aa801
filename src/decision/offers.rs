//! The offer rules of a request: the handoff table ([`crate::handoff`]) applied to the offer
//! annotation, each offer checked against its own mark, and the accept across marks.

use super::{Entry, Reading};
use crate::handoff::{self, Offer, OfferRule};
use crate::identity::Access;
use crate::owner::{Claim, MarkName, Place};
use crate::request::Operation;
use crate::violation::{Change, Rule, Violation};

impl<'a> Reading<'a> {
    /// Applies the handoff table to the offer annotation of a CREATE or UPDATE.
    pub(super) fn judge_offer(&self) -> OfferVerdict<'a> {
        let old = self.old_offer.as_deref();
        let new = self.new_offer.as_deref();
        let moving = |key: &str| self.object_entry(key).is_some_and(Entry::moves);
        let rule = handoff::judge(old, new, moving);
        let creating = self.request.operation == Operation::Create;
        let deny = |reason| {
            OfferVerdict::Deny(vec![
                self.offer_violation(Change::kept(Claim::default()), reason),
            ])
        };
        match rule {
            OfferRule::Fine => OfferVerdict::Fine,
            OfferRule::Consume if self.settings.stamp => OfferVerdict::Consume,
            OfferRule::Consume | OfferRule::OfferWithMove => {
                let annotation = &self.settings.offer_annotation;
                let moved = [old, new]
                    .into_iter()
                    .flatten()
                    .filter_map(Offer::parse)
                    .find_map(|offer| self.object_entry(offer.mark).filter(|entry| entry.moves()));
                match moved {
                    Some(entry) => OfferVerdict::Deny(vec![
                        self.offer_violation(entry.change(), rule.reason(annotation, creating)),
                    ]),
                    None => deny(rule.reason(annotation, creating)),
                }
            }
            OfferRule::Check => {
                let withdrawn = old.and_then(|text| self.check_withdrawal(text));
                let made = new.and_then(|text| self.check_new_offer(text));
                let violations: Vec<_> = withdrawn.into_iter().chain(made).collect();
                if violations.is_empty() {
                    OfferVerdict::Fine
                } else {
                    OfferVerdict::Deny(violations)
                }
            }
        }
    }

    /// Why the requester may not withdraw or change the stored offer, if it may not: only the
    /// owner it was made under may, while it still owns the object. A stale offer — its mark
    /// names another owner now, or it does not parse — hands nothing over, and goes freely.
    pub(super) fn check_withdrawal(&self, text: &str) -> Option<Violation<'a>> {
        let offer = Offer::parse(text)?;
        let entry = self.object_entry(offer.mark)?;
        let owner = entry.new.filter(|claim| claim.id() == offer.from)?;
        let reason = self.not_allowed(owner, "withdraw or change an offer of", Access::Own)?;
        Some(self.offer_violation(Change::kept(owner), reason))
    }

    /// Why an offer on the new object is not one its owner may make, if it is not: it names
    /// a guarded mark, the owner the object has under it, a requester acting for that owner,
    /// and a receiver that could own the object.
    pub(super) fn check_new_offer(&self, text: &str) -> Option<Violation<'a>> {
        let deny = |change, reason| Some(self.offer_violation(change, reason));
        let Some(offer) = Offer::parse(text) else {
            return deny(
                Change::kept(Claim::default()),
                format!(
                    "the offer {text:?} is not in the form {}",
                    handoff::OFFER_FORM
                ),
            );
        };
        let marks = || {
            self.settings
                .owner_marks
                .iter()
                .map(|mark| mark.key.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(entry) = self.object_entry(offer.mark) else {
            return deny(
                Change::kept(Claim::default()),
                format!(
                    "the offer names {:?}, which is no owner mark; the marks are {}",
                    offer.mark,
                    marks()
                ),
            );
        };
        let owner = entry.new.unwrap_or_default();
        if owner.is_none() {
            return deny(
                Change::kept(owner),
                format!(
                    "the object has no owner under {} to hand over",
                    entry.mark.name()
                ),
            );
        }
        if owner.id() != offer.from {
            return deny(
                Change::kept(owner),
                format!(
                    "the offer is made by {:?}, but the object is owned by {owner}; only the \
                     owner offers it",
                    offer.from
                ),
            );
        }
        if let Some(reason) =
            self.not_allowed(owner, "offer it or withdraw an offer of", Access::Own)
        {
            return deny(Change::kept(owner), reason);
        }
        let Some(receiving) = self
            .settings
            .owner_marks
            .iter()
            .find(|mark| mark.key == offer.to.mark)
        else {
            return deny(
                Change::kept(owner),
                format!(
                    "the offer names {:?}, which is no owner mark; the marks are {}",
                    offer.to.mark,
                    marks()
                ),
            );
        };
        let to = offer.to.owner;
        if receiving.key == entry.mark.key && to == owner.id() {
            return deny(
                Change::kept(owner),
                format!("the offer names the current owner {to:?}; name the receiving owner"),
            );
        }
        let receiver = Claim::of_owner(receiving, to);
        self.check_owner(receiving, receiver)
            .err()
            .and_then(|(_, why)| {
                deny(
                    Change::kept(owner),
                    format!("the offer names {to:?}, which cannot own the object: {why}"),
                )
            })
    }

    /// Whether the stored object's offer hands `entry`'s owner over to another mark's owner,
    /// and this update takes it there: `entry`'s mark is removed and the receiving mark names
    /// the receiver.
    pub(super) fn handed_across(&self, entry: &Entry<'a>, offer: Option<Offer<'_>>) -> bool {
        let Some(offer) = offer else {
            return false;
        };
        let made_by_owner = offer.mark == entry.mark.key
            && offer.from == entry.change().old.id()
            && offer.to.mark != entry.mark.key;
        made_by_owner
            && self.siblings(entry).any(|receiver| {
                receiver.mark.key == offer.to.mark
                    && receiver
                        .new
                        .is_some_and(|claim| claim.id() == offer.to.owner)
            })
    }

    /// Whether `entry`'s new owner is the receiver the stored object's offer names under
    /// `entry`'s mark, and the offering mark hands the object over in this update.
    pub(super) fn received_across(&self, entry: &Entry<'a>, offer: Option<Offer<'_>>) -> bool {
        let Some(offer) = offer else {
            return false;
        };
        let receives = offer.to.mark == entry.mark.key
            && entry.new.is_some_and(|claim| claim.id() == offer.to.owner);
        receives
            && self.siblings(entry).any(|giver| {
                giver.mark.key == offer.mark
                    && giver.new.unwrap_or_default().is_none()
                    && self.handed_across(giver, Some(offer))
            })
    }

    /// A violation of the offer rules, naming the offer annotation.
    pub(super) fn offer_violation(&self, change: Change<'a>, reason: String) -> Violation<'a> {
        let mark = MarkName {
            place: Place::Annotation,
            key: &self.settings.offer_annotation,
        };
        self.violation(Rule::Offer, mark, change, reason)
    }
}

/// What the handoff rules make of an update's offer.
pub(super) enum OfferVerdict<'a> {
    /// Nothing to object to.
    Fine,
    /// The owner moved and the offer is left: the policy removes it (deployed mutating).
    Consume,
    /// The offer breaks the handoff rules.
    Deny(Vec<Violation<'a>>),
}
