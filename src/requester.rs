//! The identity rules: what a requester may do for an owner, by the access its identities give
//! it ([`crate::identity`]).
//!
//! | act                                                   | rule           | needs                          |
//! |-------------------------------------------------------|----------------|--------------------------------|
//! | set the owner's mark                                  | `identity`     | acting for the owner, or `access: Derive` when the mark is inherited |
//! | remove the owner's mark                               | `identity`     | acting for the owner, or `access: Derive` when the controller carries none |
//! | make, change or withdraw the owner's offer            | `offer`        | acting for the owner, or `access: Derive` when the controller carries that offer (or none) |
//! | update or delete what it owns, under `writes: Owner`  | `owner writes` | acting for it, `access: Write`, or `access: Derive` when the marks are inherited; or changes that the requester's grants list ([`crate::grant`], judged in [`crate::writes`]) |
//! | point what it owns at another controller of a followed kind (`parentKinds`), keeping its marks | `identity` | acting for it, or `access: Write`; or a new controller that carries the owner ([`crate::derivation::repoint_rule`]) |
//!
//! An inherited mark is one the object's controller carries ([`crate::derivation`]). The access
//! levels add up: `Own` does everything, `Write` and `Derive` each only their rows, `Changes`
//! (and `InjectCA`, its CA bundles) only what its grants list. Without
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
        (Act::Repoint, _) => &[Access::Write],
        (Act::Set | Act::Remove | Act::Offer | Act::Withdraw, true) => &[Access::Derive],
        _ => &[],
    }
}

/// Whether a requester that `holds` these access levels for an owner may `act` on a mark
/// `inherited` or not.
pub fn allows(holds: impl Fn(Access) -> bool, act: Act, inherited: bool) -> bool {
    holds(Access::Own) || suffices(act, inherited).iter().any(|level| holds(*level))
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
    if allows(|level| acting.holds(level, &id), act, inherited) {
        return None;
    }
    let standing = match acting.holds(Access::Write, &id) {
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
        use Access::{Changes as Ca, Derive, Own, Write as W};
        use Act::*;
        const INHERITED: bool = true;
        const CLAIMED: bool = false;
        #[rustfmt::skip]
        let rows: [(Act, bool, &[Access], bool); 24] = [
            // act,    the mark,  the levels held, allowed
            (Set,      CLAIMED,   &[Own],          true),
            (Set,      CLAIMED,   &[W, Derive, Ca], false),
            (Set,      INHERITED, &[Derive],       true),
            (Set,      INHERITED, &[W, Ca],        false),
            (Remove,   CLAIMED,   &[Own],          true),
            (Remove,   CLAIMED,   &[W, Derive, Ca], false),
            (Remove,   INHERITED, &[Derive],       true),
            (Remove,   INHERITED, &[W, Ca],        false),
            (Offer,    CLAIMED,   &[Own],          true),
            (Offer,    CLAIMED,   &[W, Derive, Ca], false),
            (Offer,    INHERITED, &[Derive],       true),
            (Offer,    INHERITED, &[W, Ca],        false),
            (Withdraw, CLAIMED,   &[Own],          true),
            (Withdraw, INHERITED, &[Derive],       true),
            (Withdraw, INHERITED, &[W, Ca],        false),
            (Write,    CLAIMED,   &[Own],          true),
            (Write,    CLAIMED,   &[W],            true),
            (Write,    CLAIMED,   &[Derive, Ca],   false),
            (Write,    INHERITED, &[Derive],       true),
            (Write,    INHERITED, &[W],            true),
            (Write,    INHERITED, &[Ca],           false),
            (Write,    INHERITED, &[],             false),
            (Repoint,  CLAIMED,   &[W],            true),
            (Repoint,  INHERITED, &[Derive, Ca],   false),
        ];
        for (act, inherited, held, allowed) in rows {
            assert_eq!(
                allows(|level| held.contains(&level), act, inherited),
                allowed,
                "{act:?} inherited {inherited}: holds {held:?}"
            );
        }
    }
}
