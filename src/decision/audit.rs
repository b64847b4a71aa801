//! The audit replay: the rules an object's state can break, judged on the stored object alone.

use super::{Judged, Reading};
use crate::violation::{Change, Rule};

impl<'a> Reading<'a> {
    /// The rules an object's state can break, for an audit replay: each mark names a valid
    /// owner, in scope, and no second owner under another mark; a pending offer is one its
    /// owner could make now. Identity, `writes`, stamping and `adoption` judge an act, and a
    /// replay is none.
    pub(super) fn judge_state(&self) -> Judged<'a> {
        let mut violations: Vec<_> = self
            .entries
            .iter()
            .filter_map(|entry| {
                let owner = entry.new.filter(|claim| !claim.is_none())?;
                let (rule, reason) = match self.check_owner(entry.mark, owner) {
                    Err(found) => found,
                    Ok(()) => (Rule::OneOwner, self.second_owner(entry)?),
                };
                Some(self.entry_violation(entry, rule, Change::kept(owner), reason))
            })
            .collect();
        if let Some(text) = self.new_offer.as_deref()
            && let Some(violation) = self.check_new_offer(text)
        {
            violations.push(violation);
        }
        Judged {
            violations,
            consume_offer: false,
        }
    }
}
