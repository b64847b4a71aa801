//! The identity rules: what a requester may do for an owner, by the access its identities give
//! it ([`crate::identity`]).
//!
//! | act                                                   | rule           | needs                          |
//! |-------------------------------------------------------|----------------|--------------------------------|
//! | set the owner's mark                                  | `identity`     | acting for the owner, or `access: Derive` when the mark is inherited |
//! | remove the owner's mark                               | `identity`     | acting for the owner           |
//! | make, change or withdraw the owner's offer            | `offer`        | acting for the owner           |
//! | update or delete what it owns, under `writes: Owner`  | `owner writes` | acting for it, `access: Write`, or `access: Derive` when the marks are inherited |
//!
//! An inherited mark is one the object's controller carries ([`crate::derivation`]). The access
//! levels add up: `Own` does everything, `Write` and `Derive` each only their column. Without
//! identities every requester may do everything; an audit replay has no requester.

use crate::facts::Facts;
use crate::identity::Access;
use crate::owner::Claim;
use crate::violation::{Act, NotActing, Reason, Standing};

/// The access levels below `Own` that allow `act`, on a mark `inherited` or not.
pub fn suffices(act: Act, inherited: bool) -> &'static [Access] {
    match (act, inherited) {
        (Act::Write, true) => &[Access::Write, Access::Derive],
        (Act::Write, false) => &[Access::Write],
        (Act::Set, true) => &[Access::Derive],
        _ => &[],
    }
}

/// Whether a requester that acts for an owner (`acts`), only writes for it (`writes`) or only
/// derives for it (`derives`) may `act` on a mark `inherited` or not.
pub fn allows(acts: bool, writes: bool, derives: bool, act: Act, inherited: bool) -> bool {
    let levels = suffices(act, inherited);
    acts || (writes && levels.contains(&Access::Write))
        || (derives && levels.contains(&Access::Derive))
}

/// The identity rule: why the requester may not `act` on `owner` — `inherited` from the
/// object's controller or not — if it may not.
pub fn rule<'a>(
    facts: &Facts<'a>,
    act: Act,
    owner: Claim<'a>,
    inherited: bool,
) -> Option<Reason<'a>> {
    let acting = facts.acting.as_ref()?;
    let id = owner.id();
    let writes = acting.writes_for(&id);
    let derives = acting.derives_for(&id);
    if allows(acting.acts_for(&id), writes, derives, act, inherited) {
        return None;
    }
    let standing = match writes {
        true => Standing::WritesOnly,
        false => Standing::ActsFor(acting.clone()),
    };
    Some(Reason::NotActing(NotActing {
        act,
        user: &facts.request.user_info.username,
        owner,
        standing,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_table() {
        use Act::*;
        const INHERITED: bool = true;
        const CLAIMED: bool = false;
        #[rustfmt::skip]
        let rows = [
            // act,    the mark,  acts for, writes for, derives for, allowed
            (Set,      CLAIMED,   true,     false, false, true),
            (Set,      CLAIMED,   false,    true,  true,  false),
            (Set,      INHERITED, false,    false, true,  true),
            (Set,      INHERITED, false,    true,  false, false),
            (Remove,   CLAIMED,   true,     false, false, true),
            (Remove,   CLAIMED,   false,    true,  true,  false),
            (Remove,   INHERITED, false,    true,  true,  false),
            (Offer,    CLAIMED,   true,     false, false, true),
            (Offer,    INHERITED, false,    true,  true,  false),
            (Withdraw, CLAIMED,   true,     false, false, true),
            (Withdraw, INHERITED, false,    true,  true,  false),
            (Write,    CLAIMED,   true,     false, false, true),
            (Write,    CLAIMED,   false,    true,  false, true),
            (Write,    CLAIMED,   false,    false, true,  false),
            (Write,    INHERITED, false,    false, true,  true),
            (Write,    INHERITED, false,    true,  false, true),
            (Write,    INHERITED, false,    false, false, false),
        ];
        for (act, inherited, acts, writes, derives, allowed) in rows {
            assert_eq!(
                allows(acts, writes, derives, act, inherited),
                allowed,
                "{act:?} inherited {inherited}: acts {acts} writes {writes} derives {derives}"
            );
        }
    }
}
