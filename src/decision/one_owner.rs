//! One owner across marks: a mark set beside another tool's owner is a second owner.

use super::{Entry, Reading};
use crate::handoff;
use crate::owner::OwnerMark;

impl<'a> Reading<'a> {
    /// The entries beside `entry`: the other marks of the same object or template.
    pub(super) fn siblings<'s>(
        &'s self,
        entry: &'s Entry<'a>,
    ) -> impl Iterator<Item = &'s Entry<'a>> {
        self.entries.iter().filter(move |other| {
            other.template == entry.template && !std::ptr::eq(other.mark, entry.mark)
        })
    }

    /// Why `entry`'s owner would be a second owner: another mark of the same object (one that
    /// does not name the same owner) names a valid owner that stays, or that comes first in the
    /// settings and is set too. An object has one owner across tools; the owner hands it over
    /// with an offer naming the other mark.
    pub(super) fn second_owner(&self, entry: &Entry<'a>) -> Option<String> {
        let order = |mark: &OwnerMark| {
            self.settings
                .owner_marks
                .iter()
                .position(|candidate| std::ptr::eq(candidate, mark))
        };
        let first = self.siblings(entry).find(|other| {
            let Some(owner) = other.owned() else {
                return false;
            };
            let stays = other.old == Some(owner);
            !entry.mark.names_same_owner_as(other.mark)
                && (stays || order(other.mark) < order(entry.mark))
        })?;
        let owner = first.new.unwrap_or_default();
        let name = first.mark.name();
        Some(format!(
            "the object is owned by {owner} under {name}, and an object has one owner across \
             tools; its owner hands it over with an offer ({}=\"{}\")",
            self.settings.offer_annotation,
            handoff::offer_text(
                &first.mark.key,
                &owner.id(),
                &entry.mark.key,
                &entry.new.unwrap_or_default().id()
            )
        ))
    }
}
