//! Why a rule denies: the typed reasons and the one `Display` that writes every message.

use std::fmt;

use super::{Found, OwnerFound, Rule};
use crate::identity::Acting;
use crate::offer::{OFFER_FORM, offer_text};
use crate::owner::{Claim, InvalidOwner, OwnerMark};
use crate::scope::{ScopeViolation, Unfit};

/// Why a rule denies: a variant per denial, with what its message says. [`Reason::rule`] is the
/// rule that denies; the one `Display` writes every message of the policy, and what to do
/// instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason<'a> {
    /// An owner would change into another without the owner's offer (`owner change`).
    OwnerChange {
        /// The offer annotation.
        annotation: &'a str,
        /// The key of the mark that moves.
        mark: &'a str,
        /// The owner before.
        from: Claim<'a>,
        /// The owner after.
        to: Claim<'a>,
        /// The offer the stored object carries, which hands it elsewhere.
        pending: Option<&'a str>,
    },
    /// An owner would be set on an unowned object while `adoption: Deny`.
    Adoption,
    /// An owner would be removed while `orphaning: Deny`.
    Orphaning,
    /// The mark names no valid owner (`owner value`).
    OwnerValue(InvalidOwner),
    /// The owner may not own an object where it lives (`cluster scope`, `namespace scope`).
    Scope(ScopeViolation<'a>),
    /// Another mark names another owner (`one owner`).
    SecondOwner {
        /// The offer annotation.
        annotation: &'a str,
        /// The mark the object is owned under.
        under: &'a OwnerMark,
        /// Its owner.
        owner: Claim<'a>,
        /// The mark that would set a second owner.
        mark: &'a OwnerMark,
        /// The owner it would set.
        second: Claim<'a>,
    },
    /// The requester does not act for the owner, as the act needs (`identity`, `owner
    /// writes`, `offer`).
    NotActing(NotActing<'a>),
    /// The offer's mark moved and the offer is left on the object (`offer`).
    OfferNotConsumed {
        /// The offer annotation.
        annotation: &'a str,
    },
    /// An offer made in the request that moves its mark (`offer`).
    OfferWithMove {
        /// The offer annotation.
        annotation: &'a str,
        /// Whether the request is the CREATE that sets the owner.
        creating: bool,
    },
    /// The offer does not parse (`offer`).
    OfferMalformed {
        /// The annotation's value.
        text: &'a str,
    },
    /// The offer names a key no owner mark has (`offer`).
    OfferNamesNoMark {
        /// The key the offer names.
        key: &'a str,
        /// The owner marks of the settings.
        marks: &'a [OwnerMark],
    },
    /// The offer's mark names no owner to hand over (`offer`).
    OfferOfNothing {
        /// The offer's mark.
        mark: &'a OwnerMark,
    },
    /// The offer is made by another owner than the object's (`offer`).
    OfferByAnother {
        /// The owner the offer names as its maker.
        from: &'a str,
        /// The object's owner.
        owner: Claim<'a>,
    },
    /// The offer names the current owner as the receiver (`offer`).
    OfferToItself {
        /// The receiver.
        to: &'a str,
    },
    /// The offer's receiver could not own the object (`offer`).
    OfferToUnfit {
        /// The receiver.
        to: &'a str,
        /// Why it could not.
        why: Unfit<'a>,
    },
    /// In an audit, a derived object's mark differs from what its controller carries
    /// (`controller`).
    OutOfStep(Found),
    /// In an audit, the object's owner is gone (`leftover`).
    Leftover(OwnerFound),
    /// A Binding carries an owner mark (`binding`).
    ThroughBinding,
    /// Without identities, an update points what `owner` owns at a new controller that does
    /// not carry it, whose marks the object would follow (`controller`).
    Repointed {
        /// The object's owner.
        owner: Claim<'a>,
    },
}

/// A requester that does not act for an owner as an act needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotActing<'a> {
    /// The act.
    pub act: Act,
    /// The requester's user name.
    pub user: &'a str,
    /// The owner acted on.
    pub owner: Claim<'a>,
    /// What the requester may do, per its identities.
    pub standing: Standing,
    /// The catalogue's name of the writer the requester is, when the settings do not enable
    /// it (`clusterWriters`).
    pub writer: Option<&'static str>,
}

/// What a requester may do for an owner it does not act for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Only write what the owner owns (`access: Write`).
    WritesOnly,
    /// Nothing: it acts for these owners, and others.
    ActsFor(Acting),
    /// Only what its grants list ([`crate::grant`]), and the write changes more.
    Changes {
        /// The grants it holds for the owner, as settings name them.
        grants: String,
        /// The first thing the write changes beyond them.
        beyond: String,
    },
}

/// What a requester does to an owner, as the identity rules judge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// Sets the owner's mark (`identity`).
    Set,
    /// Removes it (`identity`).
    Remove,
    /// Updates or deletes what the owner owns, under `writes: Owner` (`owner writes`).
    Write,
    /// Makes an offer of the owner's object (`offer`).
    Offer,
    /// Withdraws or changes the owner's offer (`offer`).
    Withdraw,
    /// Points what the owner owns at another controller of a followed kind (`identity`): its
    /// marks would then follow that controller's ([`crate::derivation`]).
    Repoint,
    /// Removes the mark of an owner that is gone (`identity`): whoever may adopt the leftover
    /// may release it ([`crate::leftover`]).
    Release,
}

impl Reason<'_> {
    /// The rule that denies.
    pub fn rule(&self) -> Rule {
        match self {
            Reason::OwnerChange { .. } => Rule::OwnerChange,
            Reason::Adoption => Rule::Adoption,
            Reason::Orphaning => Rule::Orphaning,
            Reason::OwnerValue(_) => Rule::OwnerValue,
            Reason::Scope(ScopeViolation::ClusterScopedObject { .. }) => Rule::ClusterScope,
            Reason::Scope(ScopeViolation::OtherNamespace { .. }) => Rule::NamespaceScope,
            Reason::SecondOwner { .. } => Rule::OneOwner,
            Reason::NotActing(NotActing { act, .. }) => match act {
                Act::Set | Act::Remove | Act::Repoint | Act::Release => Rule::Identity,
                Act::Write => Rule::OwnerWrites,
                Act::Offer | Act::Withdraw => Rule::Offer,
            },
            Reason::OfferNotConsumed { .. }
            | Reason::OfferWithMove { .. }
            | Reason::OfferMalformed { .. }
            | Reason::OfferNamesNoMark { .. }
            | Reason::OfferOfNothing { .. }
            | Reason::OfferByAnother { .. }
            | Reason::OfferToItself { .. }
            | Reason::OfferToUnfit { .. } => Rule::Offer,
            Reason::OutOfStep(_) | Reason::Repointed { .. } => Rule::Controller,
            Reason::Leftover(_) => Rule::Leftover,
            Reason::ThroughBinding => Rule::Binding,
        }
    }
}

impl<'a> From<Unfit<'a>> for Reason<'a> {
    fn from(unfit: Unfit<'a>) -> Reason<'a> {
        match unfit {
            Unfit::Value(invalid) => Reason::OwnerValue(invalid),
            Unfit::Scope(outside) => Reason::Scope(outside),
        }
    }
}

impl fmt::Display for Reason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::OwnerChange {
                annotation,
                mark,
                from,
                to,
                pending: None,
            } => write!(
                f,
                "an object has one owner; to hand it over, its owner offers it by setting the \
                 annotation {annotation}=\"{}\", then the new owner moves the mark and removes \
                 the annotation",
                offer_text(mark, &from.id(), mark, &to.id())
            ),
            Reason::OwnerChange {
                annotation,
                to,
                pending: Some(pending),
                ..
            } => write!(
                f,
                "an object has one owner; the pending offer ({annotation}) is {pending:?}, which \
                 does not hand it to {:?}",
                to.id()
            ),
            Reason::Adoption => f.write_str(
                "adoption is set to Deny; create objects with their owner mark instead of \
                 marking existing ones",
            ),
            Reason::Orphaning => f.write_str(
                "orphaning is set to Deny; the owner mark stays until the object is deleted, or \
                 its owner hands it over with an offer",
            ),
            Reason::OwnerValue(invalid) => invalid_owner(f, invalid),
            Reason::Scope(outside) => scope(f, outside),
            Reason::SecondOwner {
                annotation,
                under,
                owner,
                mark,
                second,
            } => write!(
                f,
                "the object is owned by {owner} under {}, and an object has one owner across \
                 tools; its owner hands it over with an offer ({annotation}=\"{}\")",
                under.name(),
                offer_text(&under.key, &owner.id(), &mark.key, &second.id())
            ),
            Reason::NotActing(not_acting) => not_acting.fmt(f),
            Reason::OfferNotConsumed { annotation } => write!(
                f,
                "an update that changes or removes the owner consumes the offer; remove the \
                 annotation {annotation} in the same update"
            ),
            Reason::OfferWithMove {
                annotation,
                creating: true,
            } => write!(
                f,
                "an offer ({annotation}) is made in the CREATE that sets the owner; create the \
                 object, then offer it in an update of its own"
            ),
            Reason::OfferWithMove {
                annotation,
                creating: false,
            } => write!(
                f,
                "an offer ({annotation}) is made in the update that changes the owner; change \
                 the owner and make an offer in separate updates"
            ),
            Reason::OfferMalformed { text } => {
                write!(f, "the offer {text:?} is not in the form {OFFER_FORM}")
            }
            Reason::OfferNamesNoMark { key, marks } => {
                write!(
                    f,
                    "the offer names {key:?}, which is no owner mark; the marks are "
                )?;
                for (index, mark) in marks.iter().enumerate() {
                    let separator = if index == 0 { "" } else { ", " };
                    write!(f, "{separator}{}", mark.key)?;
                }
                Ok(())
            }
            Reason::OfferOfNothing { mark } => write!(
                f,
                "the object has no owner under {} to hand over",
                mark.name()
            ),
            Reason::OfferByAnother { from, owner } => write!(
                f,
                "the offer is made by {from:?}, but the object is owned by {owner}; only the \
                 owner offers it"
            ),
            Reason::OfferToItself { to } => write!(
                f,
                "the offer names the current owner {to:?}; name the receiving owner"
            ),
            Reason::OfferToUnfit { to, why } => {
                write!(f, "the offer names {to:?}, which cannot own the object: ")?;
                match why {
                    Unfit::Value(invalid) => invalid_owner(f, invalid),
                    Unfit::Scope(outside) => scope(f, outside),
                }
            }
            Reason::OutOfStep(found) => write!(f, "out of step with its controller: {found}"),
            Reason::Leftover(found) => write!(
                f,
                "{found}; a new owner may adopt it, and whoever may adopt it may release it"
            ),
            Reason::Repointed { owner } => write!(
                f,
                "its marks would follow a new controller's (parentKinds), and only one that \
                 carries its owner may take it; point it at a controller of {owner}'s, or hand \
                 it over with an offer first"
            ),
            Reason::ThroughBinding => f.write_str(
                "the API server copies a Binding's labels and annotations onto its Pod, where no \
                 rule would judge them; set owner marks on the Pod itself",
            ),
        }
    }
}

impl fmt::Display for NotActing<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let NotActing {
            act,
            user,
            owner,
            standing,
            writer,
        } = self;
        let user = match *user {
            "" => "\"\"",
            user => user,
        };
        match standing {
            Standing::WritesOnly => {
                write!(f, "user {user} only writes for {owner} (access: Write)")?
            }
            Standing::Changes { grants, beyond } => write!(
                f,
                "user {user} only changes {grants} in what {owner} owns (changes), and the \
                 write changes {beyond}"
            )?,
            Standing::ActsFor(acting) => {
                write!(f, "user {user} acts for {acting}, not for {owner}")?
            }
        }
        let act = match act {
            Act::Set => "set",
            Act::Remove => "remove",
            Act::Write => "update or delete",
            Act::Offer => "offer it or withdraw an offer of",
            Act::Withdraw => "withdraw or change an offer of",
            Act::Repoint => "repoint",
            Act::Release => "release",
        };
        write!(f, "; only a requester acting for an owner may {act} it")?;
        match self.act {
            Act::Write => f.write_str(" (writes: Owner)")?,
            Act::Repoint => {
                f.write_str(" at another controller, whose marks it would follow (parentKinds)")?
            }
            _ => {}
        }
        if let Some(writer) = writer {
            write!(
                f,
                "; it is the writer {writer} of the catalogue: enable it with clusterWriters \
                 (docs/writers.md)"
            )?;
        }
        Ok(())
    }
}

fn invalid_owner(f: &mut fmt::Formatter<'_>, invalid: &InvalidOwner) -> fmt::Result {
    match invalid {
        InvalidOwner::Empty => f.write_str("the owner is empty; name an owner or remove it"),
        InvalidOwner::UnknownKind { kind, expected } => {
            write!(f, "{kind:?} is not a configured owner kind; use {expected}")
        }
        InvalidOwner::Incomplete { expected } => {
            write!(f, "the owner is incomplete; use {expected}")
        }
        InvalidOwner::HalfPair { present, missing } => write!(
            f,
            "{present} is set without {missing}; both are set and removed together"
        ),
        InvalidOwner::Malformed { expected } => {
            write!(f, "the value is not in the form {expected}")
        }
    }
}

fn scope(f: &mut fmt::Formatter<'_>, outside: &ScopeViolation<'_>) -> fmt::Result {
    match outside {
        ScopeViolation::ClusterScopedObject { owner_kind } => write!(
            f,
            "a cluster-scoped object can only be owned by a cluster-level kind, and \
             {owner_kind} is confined to its namespace; use a cluster-level owner"
        ),
        ScopeViolation::OtherNamespace {
            owner_kind,
            owner_namespace,
            object_namespace,
        } => write!(
            f,
            "{owner_kind} owners only own objects in their own namespace ({owner_namespace}), \
             not in {object_namespace}; use an owner from {object_namespace} or a cluster-level \
             owner"
        ),
    }
}
