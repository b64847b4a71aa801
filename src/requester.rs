//! The identity rules: what a requester may do for an owner, by the access its identities give
//! it ([`crate::identity`]).
//!
//! | act                                                   | rule           | needs                          |
//! |-------------------------------------------------------|----------------|--------------------------------|
//! | set or remove the owner's mark                        | `identity`     | acting for the owner           |
//! | make, change or withdraw the owner's offer            | `offer`        | acting for the owner           |
//! | update or delete what it owns, under `writes: Owner`  | `owner writes` | acting for it, or `access: Write` |
//!
//! Without identities every requester may do everything; an audit replay has no requester.

use crate::facts::Facts;
use crate::identity::Access;
use crate::owner::Claim;
use crate::violation::{Act, NotActing, Reason, Standing};

/// The access an act needs.
pub fn needs(act: Act) -> Access {
    match act {
        Act::Write => Access::Write,
        Act::Set | Act::Remove | Act::Offer | Act::Withdraw => Access::Own,
    }
}

/// Whether a requester that acts for an owner (`acts`), or only writes for it (`writes`), has
/// the access `act` needs.
pub fn allows(acts: bool, writes: bool, act: Act) -> bool {
    acts || (writes && needs(act) == Access::Write)
}

/// The identity rule: why the requester may not `act` on `owner`, if it may not.
pub fn rule<'a>(facts: &Facts<'a>, act: Act, owner: Claim<'a>) -> Option<Reason<'a>> {
    let acting = facts.acting.as_ref()?;
    let id = owner.id();
    let writes = acting.writes_for(&id);
    if allows(acting.acts_for(&id), writes, act) {
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
        #[rustfmt::skip]
        let rows = [
            // act,     acts for, writes for (access: Write), allowed
            (Set,       true,     true,  true),
            (Set,       false,    true,  false),
            (Set,       false,    false, false),
            (Remove,    true,     true,  true),
            (Remove,    false,    true,  false),
            (Offer,     true,     true,  true),
            (Offer,     false,    true,  false),
            (Withdraw,  true,     true,  true),
            (Withdraw,  false,    true,  false),
            (Write,     true,     true,  true),
            (Write,     false,    true,  true),
            (Write,     false,    false, false),
        ];
        for (act, acts, writes, allowed) in rows {
            assert_eq!(
                allows(acts, writes, act),
                allowed,
                "{act:?} {acts} {writes}"
            );
        }
    }
}
