//! Transition rules: how an object's owner, under one mark, may change from the stored object
//! to the new one, given what the stored object's offer does for that mark ([`Handoff`]) and
//! whether the new owner is the one the object's controller carries ([`crate::derivation`]).
//!
//! | old  | new  | offer                                   | controller | verdict                          |
//! |------|------|-----------------------------------------|------------|----------------------------------|
//! | none | none |                                         |            | allow                            |
//! | A    | A    |                                         |            | keep: allow, without re-judging A |
//! | none | A    | another mark's owner gives it to A now  |            | accept                           |
//! | none | A    | a linked mark is handed over now        |            | accept                           |
//! | none | A    |                                         | carries A  | inherit                          |
//! | none | A    |                                         |            | set (adoption), unless `adoption: Deny` |
//! | A    | none | A gives it to another mark's owner now  |            | allow: the receiving mark is judged |
//! | A    | none | a linked mark is handed over now        |            | allow: the receiving mark is judged |
//! | A    | none |                                         | carries none, or A and keeps the object A's through its chain | remove, inherited |
//! | A    | none |                                         |            | remove (orphaning), unless `orphaning: Deny` |
//! | A    | B    | A offered it to B                       |            | accept (handoff)                 |
//! | A    | B    | a linked mark is handed over now        |            | accept: linked marks move together |
//! | A    | B    |                                         | carries B  | inherit: the controller moved    |
//! | A    | B    |                                         |            | deny: an object has one owner    |
//!
//! Linked marks (`sameOwnerAs`) name one owner, so one offer, made under any of them, hands
//! them all over in the update that takes it up (a HelmRelease's labels and Helm's annotations,
//! to another HelmRelease or to a Kustomization).
//!
//! A stored value that names no owner (empty, malformed, half a pair, of a kind no mark
//! allows) is nobody's: unless kept as it is, it is read as none, so replacing it is an adoption
//! and removing it is always allowed — no object is trapped by a value nobody owns, and no
//! message offers what an offer could not hand over. (An audit replay still reports it.)
//!
//! A CREATE has no old object: an owner it sets must be valid, whatever `adoption` says, unless
//! it inherits it. What an
//! accepted or set owner must also be — valid, in scope, the only owner across marks, set by a
//! requester acting for it — and what keeping or removing one asks of the requester are the
//! other rules' (see [`crate::decision`]).

use crate::facts::{Entry, Facts};
use crate::handoff::{self, Handoff};
use crate::owner::Claim;
use crate::settings::Permission;
use crate::violation::Reason;

/// What a transition asks of the rest of the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// No owner before or after, or one handed to another mark: nothing to check.
    Allow,
    /// The owner stays as it is.
    Keep,
    /// A new owner is set: it must be a valid owner, in scope.
    Set,
    /// The owner is removed.
    Remove,
    /// The owner changes to the one the current owner offered the object to.
    Accept,
    /// The owner is set, or changes, to the one the object's controller carries.
    Inherit,
}

/// Why a transition is denied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    /// The owner would change from one owner to another.
    OwnerChange,
    /// An owner would be added to an unowned object while `adoption: Deny`.
    Adoption,
    /// The owner would be removed while `orphaning: Deny`.
    Orphaning,
}

/// The permissions the transition table depends on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Permissions {
    /// `adoption` from the settings.
    pub adoption: Permission,
    /// `orphaning` from the settings.
    pub orphaning: Permission,
}

/// The transition table: the move from `old` (`None` on CREATE) to `new` for one owner mark,
/// given what the stored object's offer does for it and whether `new` is `inherited` from the
/// object's controller.
pub fn judge(
    old: Option<Claim<'_>>,
    new: Claim<'_>,
    handoff: Handoff<'_>,
    inherited: bool,
    permissions: Permissions,
) -> Result<Judgement, Denial> {
    let Some(old) = old else {
        return Ok(match (new.is_none(), inherited) {
            (true, _) => Judgement::Allow,
            (false, true) => Judgement::Inherit,
            (false, false) => Judgement::Set,
        });
    };
    match (old.is_none(), new.is_none()) {
        (true, true) => Ok(Judgement::Allow),
        _ if old == new => Ok(Judgement::Keep),
        (true, false) if matches!(handoff, Handoff::Received | Handoff::Linked) => {
            Ok(Judgement::Accept)
        }
        (true, false) if inherited => Ok(Judgement::Inherit),
        (true, false) if permissions.adoption == Permission::Deny => Err(Denial::Adoption),
        (true, false) => Ok(Judgement::Set),
        (false, true) if matches!(handoff, Handoff::Given | Handoff::Linked) => {
            Ok(Judgement::Allow)
        }
        // The controller carries no owner under the mark any more, or keeps the object its
        // owner's through its chain: its copies follow it.
        (false, true) if inherited => Ok(Judgement::Remove),
        (false, true) if permissions.orphaning == Permission::Deny => Err(Denial::Orphaning),
        (false, true) => Ok(Judgement::Remove),
        (false, false) if handoff == Handoff::To(&new.id()) || handoff == Handoff::Linked => {
            Ok(Judgement::Accept)
        }
        (false, false) if inherited => Ok(Judgement::Inherit),
        (false, false) => Err(Denial::OwnerChange),
    }
}

/// The transition rule for a mark of a CREATE or UPDATE: the table applied to it, with the
/// part the stored object's offer plays, and whether its new owner is `inherited`.
pub fn rule<'a>(
    facts: &Facts<'a>,
    entry: &Entry<'a>,
    inherited: bool,
) -> Result<Judgement, Denial> {
    let settings = facts.settings;
    let permissions = Permissions {
        adoption: settings.adoption,
        orphaning: settings.orphaning,
    };
    let new = entry.new.unwrap_or_default();
    let old = entry
        .old
        .map(|old| match old != new && old.owner(entry.mark).is_err() {
            true => Claim::default(),
            false => old,
        });
    let handoff = handoff::handoff(facts, entry);
    judge(old, new, handoff, inherited, permissions)
}

/// Why the transition rule denies `entry`'s move, and what to do instead.
pub fn reason<'a>(facts: &Facts<'a>, entry: &Entry<'a>, denial: Denial) -> Reason<'a> {
    match denial {
        Denial::OwnerChange => Reason::OwnerChange {
            annotation: &facts.settings.offer_annotation,
            mark: &entry.mark.key,
            from: entry.old.unwrap_or_default(),
            to: entry.new.unwrap_or_default(),
            pending: facts.old_offer,
        },
        Denial::Adoption => Reason::Adoption,
        Denial::Orphaning => Reason::Orphaning,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owner::Shape;

    /// What the table says.
    type Verdict = Result<Judgement, Denial>;

    /// `adoption` or `orphaning` allowed.
    const ALLOWED: Permission = Permission::Allow;
    /// `adoption` or `orphaning` denied.
    const DENIED: Permission = Permission::Deny;

    const fn claim(value: Option<&'static str>, kind: Option<&'static str>) -> Claim<'static> {
        Claim {
            value,
            part: kind,
            shape: if kind.is_some() {
                Shape::KindPair
            } else {
                Shape::Single
            },
            malformed: false,
        }
    }

    const NONE: Claim = claim(None, None);
    const A: Claim = claim(Some("ClusterExtension.a"), None);
    const B: Claim = claim(Some("ClusterExtension.b"), None);
    const PAIR_A: Claim = claim(Some("a"), Some("ClusterExtension"));
    const PAIR_A_AS_EXTENSION: Claim = claim(Some("a"), Some("Extension"));
    const HALF_A: Claim = Claim {
        shape: Shape::KindPair,
        ..claim(Some("a"), None)
    };

    #[test]
    fn transition_table() {
        use Denial::*;
        use Judgement::{Allow, Keep, Remove, Set};
        #[rustfmt::skip]
        let rows: &[(Option<Claim>, Claim, Permission, Permission, Verdict)] = &[
            // old           new     adoption  orphaning verdict (no offer)
            (Some(NONE),      NONE,   ALLOWED, ALLOWED, Ok(Allow)),
            (Some(NONE),      NONE,   DENIED,  DENIED,  Ok(Allow)),
            (Some(A),         A,      DENIED,  DENIED,  Ok(Keep)),
            (Some(PAIR_A),    PAIR_A, DENIED,  DENIED,  Ok(Keep)),
            (Some(NONE),      A,      ALLOWED, ALLOWED, Ok(Set)),
            (Some(NONE),      A,      DENIED,  ALLOWED, Err(Adoption)),
            (Some(A),         NONE,   ALLOWED, ALLOWED, Ok(Remove)),
            (Some(A),         NONE,   ALLOWED, DENIED,  Err(Orphaning)),
            (Some(A),         B,      ALLOWED, ALLOWED, Err(OwnerChange)),
            (Some(PAIR_A),    PAIR_A_AS_EXTENSION, ALLOWED, ALLOWED, Err(OwnerChange)),
            (Some(HALF_A),    PAIR_A, ALLOWED, ALLOWED, Err(OwnerChange)),
            (Some(PAIR_A),    HALF_A, ALLOWED, ALLOWED, Err(OwnerChange)),
            // CREATE: no old object; adoption does not apply
            (None,            NONE,   DENIED,  DENIED,  Ok(Allow)),
            (None,            A,      DENIED,  DENIED,  Ok(Set)),
        ];
        for &(old, new, adoption, orphaning, expected) in rows {
            let permissions = Permissions {
                adoption,
                orphaning,
            };
            assert_eq!(
                judge(old, new, Handoff::None, false, permissions),
                expected,
                "{old:?} -> {new:?}, {permissions:?}"
            );
        }
    }

    #[test]
    fn an_offer_lets_exactly_the_offered_owner_take_over() {
        use Judgement::{Accept, Allow, Keep, Remove};
        let permissions = Permissions::default();
        let denied = Permissions {
            adoption: DENIED,
            orphaning: DENIED,
        };
        let to = Handoff::To;
        #[rustfmt::skip]
        let rows: &[(Claim, Claim, Handoff, Permissions, Verdict)] = &[
            (A,      B,      to("ClusterExtension.b"), permissions, Ok(Accept)),
            (PAIR_A, PAIR_A_AS_EXTENSION, to("Extension.a"), permissions, Ok(Accept)),
            (A,      B,      to("ClusterExtension.c"), permissions, Err(Denial::OwnerChange)),
            (A,      B,      Handoff::None,            permissions, Err(Denial::OwnerChange)),
            (PAIR_A, PAIR_A_AS_EXTENSION, to("a"),     permissions, Err(Denial::OwnerChange)),
            (A,      A,      to("ClusterExtension.b"), permissions, Ok(Keep)),
            (A,      NONE,   to("ClusterExtension.b"), permissions, Ok(Remove)),
            // across marks: the giver's mark goes, the receiver's comes, whatever the settings
            (A,      NONE,   Handoff::Given,           denied,      Ok(Allow)),
            (NONE,   A,      Handoff::Received,        denied,      Ok(Accept)),
            (NONE,   A,      Handoff::Received,        permissions, Ok(Accept)),
            // a handoff across marks does not touch a mark that has an owner
            (A,      B,      Handoff::Received,        permissions, Err(Denial::OwnerChange)),
            (NONE,   A,      Handoff::Given,           denied,      Err(Denial::Adoption)),
            // a linked mark moves with the mark handed over, whatever the settings
            (A,      B,      Handoff::Linked,          denied,      Ok(Accept)),
            (A,      NONE,   Handoff::Linked,          denied,      Ok(Allow)),
            (NONE,   A,      Handoff::Linked,          denied,      Ok(Accept)),
            (A,      A,      Handoff::Linked,          denied,      Ok(Keep)),
        ];
        for &(old, new, handoff, permissions, expected) in rows {
            assert_eq!(
                judge(Some(old), new, handoff, false, permissions),
                expected,
                "{old:?} -> {new:?} with {handoff:?}, {permissions:?}"
            );
        }
    }

    #[test]
    fn a_controller_carrying_the_new_owner_makes_it_inherited() {
        use Judgement::{Accept, Inherit, Keep, Remove};
        let denied = Permissions {
            adoption: DENIED,
            orphaning: DENIED,
        };
        #[rustfmt::skip]
        let rows: &[(Option<Claim>, Claim, Handoff, bool, Verdict)] = &[
            // old        new   offer                      inherited verdict
            (Some(A),     B,    Handoff::None,             true,  Ok(Inherit)),
            (Some(A),     B,    Handoff::None,             false, Err(Denial::OwnerChange)),
            (Some(NONE),  A,    Handoff::None,             true,  Ok(Inherit)),
            (Some(NONE),  A,    Handoff::None,             false, Err(Denial::Adoption)),
            (None,        A,    Handoff::None,             true,  Ok(Inherit)),
            (Some(A),     A,    Handoff::None,             true,  Ok(Keep)),
            // a removal the controller made first: followed, whatever `orphaning` says
            (Some(A),     NONE, Handoff::None,             true,  Ok(Remove)),
            (Some(A),     NONE, Handoff::None,             false, Err(Denial::Orphaning)),
            // an offer, where there is one, is what moves the owner
            (Some(A),     B,    Handoff::To("ClusterExtension.b"), true, Ok(Accept)),
        ];
        for &(old, new, handoff, inherited, expected) in rows {
            assert_eq!(
                judge(old, new, handoff, inherited, denied),
                expected,
                "{old:?} -> {new:?} with {handoff:?}, inherited: {inherited}"
            );
        }
        assert_eq!(
            judge(Some(A), NONE, Handoff::None, true, Permissions::default()),
            Ok(Remove)
        );
    }
}
