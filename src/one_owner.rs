//! One owner across marks: a mark set beside another tool's owner is a second owner.
//!
//! When a mark sets an owner (on the object, or in a template), each other mark of the same
//! object or template is read:
//!
//! | the other mark                                     | linked (`sameOwnerAs`) | verdict      |
//! |----------------------------------------------------|------------------------|--------------|
//! | names no valid owner                               |                        | allowed      |
//! | names a valid owner                                | yes                    | allowed      |
//! | names a valid owner that stays                     | no                     | second owner |
//! | sets a valid owner too, listed earlier in `ownerMarks` | no                 | second owner |
//! | sets a valid owner too, listed later               | no                     | allowed: that one is the second owner |
//!
//! The owner hands the object over with an offer naming the other mark ([`crate::handoff`]).

use crate::facts::{Entry, Facts};
use crate::violation::Reason;

/// Whether another mark's owner makes `entry`'s a second owner: it `owns` a valid owner that
/// `stays` or comes `earlier`, and the two marks are not `linked`.
pub fn second(owns: bool, linked: bool, stays: bool, earlier: bool) -> bool {
    owns && !linked && (stays || earlier)
}

/// The one owner rule: why `entry`'s new owner would be a second owner, if it would.
pub fn rule<'a>(facts: &Facts<'a>, entry: &Entry<'a>) -> Option<Reason<'a>> {
    let marks = &facts.settings.owner_marks;
    let order = |entry: &Entry| marks.iter().position(|mark| std::ptr::eq(mark, entry.mark));
    let first = facts.siblings(entry).find(|other| {
        let owner = other.owned();
        second(
            owner.is_some(),
            entry.mark.names_same_owner_as(other.mark),
            owner.is_some() && other.old == owner,
            order(other) < order(entry),
        )
    })?;
    Some(Reason::SecondOwner {
        annotation: &facts.settings.offer_annotation,
        under: first.mark,
        owner: first.new.unwrap_or_default(),
        mark: entry.mark,
        second: entry.new.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_owner_table() {
        #[rustfmt::skip]
        let rows = [
            // owns, linked, stays, earlier, second owner
            (false, false, true,  true,  false),
            (true,  true,  true,  true,  false),
            (true,  false, true,  false, true),
            (true,  false, false, true,  true),
            (true,  false, false, false, false),
        ];
        for (owns, linked, stays, earlier, expected) in rows {
            assert_eq!(
                second(owns, linked, stays, earlier),
                expected,
                "{owns} {linked} {stays} {earlier}"
            );
        }
    }
}
