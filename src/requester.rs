//! The identity rules: what a requester may do for an owner, by the access its identities give
//! it ([`crate::identity`]).
//!
//! | act                                                   | rule           | needs                          |
//! |-------------------------------------------------------|----------------|--------------------------------|
//! | set the owner's mark                                  | `identity`     | acting for the owner, or `access: Derive` when the mark is inherited; on CREATE, `access: Restore` |
//! | remove the owner's mark                               | `identity`     | acting for the owner, or `access: Derive` when the controller carries none, or carries the owner and keeps the object its through its chain |
//! | make, change or withdraw the owner's offer            | `offer`        | acting for the owner, or `access: Derive` when the controller carries that offer (or none) |
//! | update or delete what it owns, under `writes: Owner`  | `owner writes` | acting for it, `access: Write` (`Restore`: updates only), or `access: Derive` when the marks are inherited; or changes that the requester's grants list ([`crate::grant`], judged in [`crate::writes`]) |
//! | point what it owns at another controller of a followed kind (`parentKinds`), keeping its marks | `identity` | acting for it, or `access: Write`; or a new controller that carries the owner ([`crate::derivation::repoint_rule`]) |
//! | remove the mark of an owner that is gone (release a leftover, [`crate::leftover`]) | `identity` | acting for some owner: whoever may adopt it |
//!
//! An inherited mark is one the object's controller carries ([`crate::derivation`]). The access
//! levels add up: `Own` does everything, `Write` and `Derive` each only their rows, `Changes`
//! (and `InjectCA`, its CA bundles) only what its grants list. Without
//! identities every requester may do everything; an audit replay has no requester.

use crate::facts::{Facts, Sides};
use crate::identity::{Access, vouched};
use crate::owner::Claim;
use crate::request::Operation;
use crate::settings::writers;
use crate::violation::{Act, NotActing, Reason, Standing};

/// The access levels below `Own` that allow `act`, on a mark `inherited` or not, in a request
/// of `operation`.
pub fn suffices(act: Act, inherited: bool, operation: Operation) -> &'static [Access] {
    use Operation::{Create, Update};
    match (act, inherited, operation) {
        (Act::Write, true, Update) => &[Access::Write, Access::Derive, Access::Restore],
        (Act::Write, true, _) => &[Access::Write, Access::Derive],
        (Act::Write, false, Update) => &[Access::Write, Access::Restore],
        (Act::Write, false, _) => &[Access::Write],
        (Act::Repoint, ..) => &[Access::Write],
        (Act::Set, true, Create) => &[Access::Derive, Access::Restore],
        (Act::Set, false, Create) => &[Access::Restore],
        (Act::Set | Act::Remove | Act::Offer | Act::Withdraw, true, _) => &[Access::Derive],
        _ => &[],
    }
}

/// Whether a requester that `holds` these access levels for an owner may `act` on a mark
/// `inherited` or not, in a request of `operation`.
pub fn allows(
    holds: impl Fn(Access) -> bool,
    act: Act,
    inherited: bool,
    operation: Operation,
) -> bool {
    holds(Access::Own) || (suffices(act, inherited, operation).iter()).any(|level| holds(*level))
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
    let operation = match facts.sides {
        Sides::Create(_) => Operation::Create,
        Sides::Update(..) => Operation::Update,
        Sides::Delete(_) => Operation::Delete,
    };
    if allows(|level| acting.holds(level, &id), act, inherited, operation)
        || (act == Act::Release && acting.acts_for_some())
    {
        return None;
    }
    let standing = match acting.holds(Access::Write, &id) {
        true => Standing::WritesOnly,
        false => Standing::ActsFor(acting.clone()),
    };
    let user = &facts.request.user_info;
    let writer = writers::not_enabled(&user.username, &facts.settings.cluster_writers)
        .filter(|_| vouched(user));
    Some(Reason::NotActing(NotActing {
        act,
        user: &user.username,
        owner,
        standing,
        writer,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_table() {
        use Access::{Changes as Ca, Derive, Own, Restore as R, Write as W};
        use Act::*;
        use Operation::{Create as CREATE, Delete as DELETE, Update as UPDATE};
        const INHERITED: bool = true;
        const CLAIMED: bool = false;
        #[rustfmt::skip]
        let rows: [(Act, bool, Operation, &[Access], bool); 31] = [
            // act, the mark, a CREATE, the levels held, allowed
            (Set, CLAIMED, UPDATE, &[Own], true),
            (Set, CLAIMED, UPDATE, &[W, Derive, Ca], false),
            (Set, INHERITED, UPDATE, &[Derive], true),
            (Set, INHERITED, UPDATE, &[W, Ca], false),
            (Remove, CLAIMED, UPDATE, &[Own], true),
            (Remove, CLAIMED, UPDATE, &[W, Derive, Ca], false),
            (Remove, INHERITED, UPDATE, &[Derive], true),
            (Remove, INHERITED, UPDATE, &[W, Ca], false),
            (Offer, CLAIMED, UPDATE, &[Own], true),
            (Offer, CLAIMED, UPDATE, &[W, Derive, Ca], false),
            (Offer, INHERITED, UPDATE, &[Derive], true),
            (Offer, INHERITED, UPDATE, &[W, Ca], false),
            (Withdraw, CLAIMED, UPDATE, &[Own], true),
            (Withdraw, INHERITED, UPDATE, &[Derive], true),
            (Withdraw, INHERITED, UPDATE, &[W, Ca], false),
            (Write, CLAIMED, UPDATE, &[Own], true),
            (Write, CLAIMED, UPDATE, &[W], true),
            (Write, CLAIMED, UPDATE, &[Derive, Ca], false),
            (Write, INHERITED, UPDATE, &[Derive], true),
            (Write, INHERITED, UPDATE, &[W], true),
            (Write, INHERITED, UPDATE, &[Ca], false),
            (Write, INHERITED, UPDATE, &[], false),
            (Repoint, CLAIMED, UPDATE, &[W], true),
            (Repoint, INHERITED, UPDATE, &[Derive, Ca], false),
            (Set, CLAIMED, CREATE, &[R], true),
            (Set, INHERITED, CREATE, &[R], true),
            (Set, CLAIMED, UPDATE, &[R], false),
            (Remove, CLAIMED, UPDATE, &[R], false),
            (Offer, CLAIMED, UPDATE, &[R], false),
            (Write, CLAIMED, UPDATE, &[R], true),
            (Write, CLAIMED, DELETE, &[R], false),
        ];
        for (act, inherited, operation, held, allowed) in rows {
            assert_eq!(
                allows(|level| held.contains(&level), act, inherited, operation),
                allowed,
                "{act:?} inherited {inherited}, {operation}: holds {held:?}"
            );
        }
    }
}
