//! The audit replay: the rules an object's state can break, judged on the stored object alone.
//!
//! | the stored object                                  | rule                              |
//! |----------------------------------------------------|-----------------------------------|
//! | a mark names no valid owner                        | `owner value`                     |
//! | a mark names an owner out of scope                 | `cluster scope`, `namespace scope`|
//! | another, unlinked mark names a second owner        | `one owner`                       |
//! | a pending offer its owner could not make now       | `offer`                           |
//!
//! Identity, `writes`, stamping and `adoption` judge an act, and a replay is none.

use crate::facts::Facts;
use crate::handoff;
use crate::one_owner;
use crate::scope;
use crate::violation::{Change, Reason, Violation};

/// The audit rule: what is wrong with the replayed object's state.
pub fn rule<'a>(facts: &Facts<'a>) -> Vec<Violation<'a>> {
    let scope = facts.request.object_scope();
    let marks = facts.entries.iter().filter_map(|entry| {
        let owner = entry.new.filter(|claim| !claim.is_none())?;
        let reason = match scope::fit(entry.mark, owner, scope) {
            Err(unfit) => Reason::from(unfit),
            Ok(_) => one_owner::rule(facts, entry)?,
        };
        Some(facts.entry_violation(entry, Change::kept(owner), reason))
    });
    let offer = facts.new_offer.and_then(|text| handoff::made(facts, text));
    marks.chain(offer).collect()
}
