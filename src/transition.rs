//! Transition rules: how an object's owner, under one mark, may change from the stored object
//! to the new one.
//!
//! | old  | new  | verdict                                                         |
//! |------|------|-----------------------------------------------------------------|
//! | none | none | allow                                                           |
//! | A    | A    | keep: allow, without re-judging A (ratcheting)                  |
//! | none | A    | set (adoption): unless `adoption: Deny`; A must be valid        |
//! | A    | none | remove (orphaning): unless `orphaning: Deny`                    |
//! | A    | B    | accept, if the old object carries an offer of it to B (handoff) |
//! | A    | B    | deny otherwise: an object has one owner                         |
//!
//! A CREATE has no old object: an owner it sets must be valid, whatever `adoption` says.
//! With identities, setting and removing an owner, and under `writes: Owner` keeping one, also
//! require the requester to act for that owner (see [`crate::decision`]).

use crate::owner::Claim;
use crate::settings::Permission;
use crate::violation::Rule;

/// What a transition asks of the rest of the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// No owner before or after: nothing to check.
    Allow,
    /// The owner stays as it is.
    Keep,
    /// A new owner is set: it must be a valid owner, in scope.
    Set,
    /// The owner is removed.
    Remove,
    /// The owner changes to the one the current owner offered the object to.
    Accept,
    /// The transition itself is denied.
    Deny(Denial),
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

/// Judges the move from `old` (`None` on CREATE) to `new` for one owner mark; `offered` is the
/// owner the old object is offered to, if any.
pub fn judge(
    old: Option<Claim<'_>>,
    new: Claim<'_>,
    offered: Option<&str>,
    permissions: Permissions,
) -> Judgement {
    let Some(old) = old else {
        return if new.is_none() {
            Judgement::Allow
        } else {
            Judgement::Set
        };
    };
    match (old.is_none(), new.is_none()) {
        (true, true) => Judgement::Allow,
        _ if old == new => Judgement::Keep,
        (true, false) if permissions.adoption == Permission::Deny => {
            Judgement::Deny(Denial::Adoption)
        }
        (true, false) => Judgement::Set,
        (false, true) if permissions.orphaning == Permission::Deny => {
            Judgement::Deny(Denial::Orphaning)
        }
        (false, true) => Judgement::Remove,
        (false, false) if offered == Some(new.id().as_str()) => Judgement::Accept,
        (false, false) => Judgement::Deny(Denial::OwnerChange),
    }
}

impl Denial {
    /// The rule that denies.
    pub fn rule(self) -> Rule {
        match self {
            Denial::OwnerChange => Rule::OwnerChange,
            Denial::Adoption => Rule::Adoption,
            Denial::Orphaning => Rule::Orphaning,
        }
    }

    /// Why the rule denies, and, but for an owner change (see [`crate::handoff`]), what to do
    /// instead.
    pub fn reason(self) -> &'static str {
        match self {
            Denial::OwnerChange => "an object has one owner",
            Denial::Adoption => {
                "adoption is set to Deny; create objects with their owner mark instead of \
                 marking existing ones"
            }
            Denial::Orphaning => {
                "orphaning is set to Deny; the owner mark stays until the object is deleted, or \
                 its owner hands it over with an offer"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owner::Shape;

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
        use Judgement::{Allow, Deny, Keep, Remove, Set};
        #[rustfmt::skip]
        let rows: &[(Option<Claim>, Claim, Permission, Permission, Judgement)] = &[
            // old           new     adoption  orphaning verdict (no offer)
            (Some(NONE),      NONE,   ALLOWED, ALLOWED, Allow),
            (Some(NONE),      NONE,   DENIED,  DENIED,  Allow),
            (Some(A),         A,      DENIED,  DENIED,  Keep),
            (Some(PAIR_A),    PAIR_A, DENIED,  DENIED,  Keep),
            (Some(NONE),      A,      ALLOWED, ALLOWED, Set),
            (Some(NONE),      A,      DENIED,  ALLOWED, Deny(Adoption)),
            (Some(A),         NONE,   ALLOWED, ALLOWED, Remove),
            (Some(A),         NONE,   ALLOWED, DENIED,  Deny(Orphaning)),
            (Some(A),         B,      ALLOWED, ALLOWED, Deny(OwnerChange)),
            (Some(PAIR_A),    PAIR_A_AS_EXTENSION, ALLOWED, ALLOWED, Deny(OwnerChange)),
            (Some(HALF_A),    PAIR_A, ALLOWED, ALLOWED, Deny(OwnerChange)),
            (Some(PAIR_A),    HALF_A, ALLOWED, ALLOWED, Deny(OwnerChange)),
            // CREATE: no old object; adoption does not apply
            (None,            NONE,   DENIED,  DENIED,  Allow),
            (None,            A,      DENIED,  DENIED,  Set),
        ];
        for &(old, new, adoption, orphaning, expected) in rows {
            let permissions = Permissions {
                adoption,
                orphaning,
            };
            assert_eq!(
                judge(old, new, None, permissions),
                expected,
                "{old:?} -> {new:?}, {permissions:?}"
            );
        }
    }

    #[test]
    fn an_offer_lets_exactly_the_offered_owner_take_over() {
        use Judgement::{Accept, Deny, Keep, Remove};
        let permissions = Permissions::default();
        #[rustfmt::skip]
        let rows: &[(Claim, Claim, Option<&str>, Judgement)] = &[
            (A,      B,      Some("ClusterExtension.b"), Accept),
            (PAIR_A, PAIR_A_AS_EXTENSION, Some("Extension.a"), Accept),
            (A,      B,      Some("ClusterExtension.c"), Deny(Denial::OwnerChange)),
            (A,      B,      None,                       Deny(Denial::OwnerChange)),
            (PAIR_A, PAIR_A_AS_EXTENSION, Some("a"),     Deny(Denial::OwnerChange)),
            (A,      A,      Some("ClusterExtension.b"), Keep),
            (A,      NONE,   Some("ClusterExtension.b"), Remove),
        ];
        for &(old, new, offered, expected) in rows {
            assert_eq!(
                judge(Some(old), new, offered, permissions),
                expected,
                "{old:?} -> {new:?} offered {offered:?}"
            );
        }
    }
}
