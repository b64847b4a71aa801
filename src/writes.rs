//! `writes: Owner`: who may update or delete an object that has an owner.
//!
//! | `writes` | the mark's stored owner                           | the write                     | verdict                         |
//! |----------|---------------------------------------------------|-------------------------------|---------------------------------|
//! | `Any`    |                                                   |                               | allowed                         |
//! | `Owner`  | none                                              |                               | allowed                         |
//! | `Owner`  | a value that names no owner (audit reports it)    |                               | allowed                         |
//! | `Owner`  | valid                                             | finishes a deletion under way | allowed ([`crate::deletion`])   |
//! | `Owner`  | valid                                             | changes nothing (but what the API server maintains) | allowed ([`crate::edit`]) |
//! | `Owner`  | valid                                             | only adds finalizers, not `orphan` or `foregroundDeletion` | allowed ([`crate::edit`]) |
//! | `Owner`  | valid                                             | any other                     | the requester writes for it (or derives, for marks its controller carries), or changes only what its grants for it list ([`crate::grant`]; `access: InjectCA`, the CA bundles) |
//!
//! `writes: Owner` keeps what an owner declared — its spec, data, labels and annotations, the
//! finalizers that say how its deletion propagates — from being changed or deleted by anyone
//! else. A finalizer added by another controller (Flux's, a load-balancer controller's) only
//! holds the deletion until that controller has cleaned up, and changes nothing declared; a CA
//! bundle is what a CA injector writes where the owner asked for one. Restarts, reconcile
//! requests and suspensions change the spec or annotations: they are writes, granted to
//! administrators with `access: Write` (docs/rules.md, "What `writes: Owner` guards").
//!
//! A write through a subresource is judged only when it changes what the rules guard
//! ([`crate::facts::Sides`]): status writers write for every owner's objects. A template's
//! kept claim is written with its object: judged on the object when the object keeps the same
//! owner, on its own otherwise (the decision's `judged_on_the_object`).

use crate::edit::Edit;
use crate::facts::{Entry, Facts};
use crate::grant;
use crate::owner::Claim;
use crate::requester;
use crate::settings::Writes;
use crate::violation::{Act, NotActing, Reason, Standing};

/// Whether a write of an object needs the requester to write for its mark's owner: `owner`
/// tells whether the mark names one (`None`) and whether it is valid, read only when the rest
/// of the row leaves it to decide (most writes are under `writes: Any`).
pub fn guarded(writes: Writes, owner: impl FnOnce() -> Option<bool>, finishing: bool) -> bool {
    writes == Writes::Owner && !finishing && owner() == Some(true)
}

/// The owner writes rule: why the requester may not update or delete (`entry`'s side of) an
/// object whose mark names `owner` — `inherited` from its controller or not — if it may not.
/// What an update changes is read only when the requester may not write for the owner, and
/// once for all the marks ([`Facts::edit`]).
pub fn rule<'a>(
    facts: &Facts<'a>,
    entry: &Entry<'a>,
    owner: Claim<'a>,
    inherited: bool,
) -> Option<Reason<'a>> {
    let valid = || (!owner.is_none()).then(|| owner.owner(entry.mark).is_ok());
    if !guarded(facts.settings.writes, valid, facts.finishing) {
        return None;
    }
    let denial = requester::rule(facts, Act::Write, owner, inherited)?;
    if facts.edit() != Edit::Other {
        return None;
    }
    let grants = facts.grants(owner);
    if grants.is_empty() {
        return Some(denial);
    }
    let beyond = facts.beyond(&grants)?;
    match denial {
        Reason::NotActing(not_acting) => Some(Reason::NotActing(NotActing {
            standing: Standing::Changes {
                grants: grant::names(&grants),
                beyond,
            },
            ..not_acting
        })),
        denial => Some(denial),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_writes_table() {
        use Writes::{Any, Owner};
        #[rustfmt::skip]
        let rows = [
            // writes, owner (None: none; Some(valid)), finishing, guarded
            (Any,   Some(true),  false, false),
            (Owner, None,        false, false),
            (Owner, Some(false), false, false),
            (Owner, Some(true),  true,  false),
            (Owner, Some(true),  false, true),
        ];
        for (writes, owner, finishing, expected) in rows {
            assert_eq!(
                guarded(writes, || owner, finishing),
                expected,
                "{writes:?} {owner:?} {finishing}"
            );
        }
    }
}
