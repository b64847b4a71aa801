//! Handoff: an owner hands an object over to another owner in two phases, without a moment
//! where the object is unowned.
//!
//! 1. **Offer** — the current owner sets the transfer annotation to the receiving owner's id.
//! 2. **Accept** — the receiver changes the owner label to itself; the offer is consumed: the
//!    accepting update removes the annotation (or, deployed mutating, the policy removes it).
//!
//! The owner withdraws an offer by removing the annotation. What an update does with the
//! annotation, given whether an owner moves in the same update:
//!
//! | offer (old → new)           | an owner moves | rule                                         |
//! |-----------------------------|----------------|----------------------------------------------|
//! | unchanged                   | no             | nothing to check                             |
//! | made, changed or withdrawn  | no             | the owner's act: checked as an offer         |
//! | none → none, X → none       | yes            | nothing to check (an accepted offer is gone) |
//! | X → X                       | yes            | the offer must be consumed                   |
//! | anything → Y, a new offer   | yes            | denied: offer in an update of its own        |

/// What the handoff rules ask of an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfferRule<'a> {
    /// Nothing to check.
    Fine,
    /// An offer is made (`Some`), changed (`Some`) or withdrawn (`None`) by the current owner.
    Check { to: Option<&'a str> },
    /// An owner moved, and the offer is still on the object: it has to go.
    Consume,
    /// A new offer in the same update as an owner move.
    OfferWithMove,
}

/// Judges the offer annotation of an update: `old` and `new` are its values before and after.
pub fn judge<'a>(old: Option<&str>, new: Option<&'a str>, owner_moved: bool) -> OfferRule<'a> {
    match (old == new, owner_moved) {
        (true, false) => OfferRule::Fine,
        (false, false) => OfferRule::Check { to: new },
        (true, true) if new.is_none() => OfferRule::Fine,
        (true, true) => OfferRule::Consume,
        (false, true) if new.is_none() => OfferRule::Fine,
        (false, true) => OfferRule::OfferWithMove,
    }
}

/// What to do instead of changing the owner from one to another (`to`), given the offer the
/// object carries, if any.
pub fn change_hint(annotation: &str, offered: Option<&str>, to: &str) -> String {
    match offered {
        None => format!(
            "to hand it over, its owner offers it by setting the annotation {annotation}={to}, \
             then the new owner changes the owner label and removes the annotation"
        ),
        Some(offered) => {
            format!("the pending offer ({annotation}) names {offered:?}, not {to:?}")
        }
    }
}

impl OfferRule<'_> {
    /// Why a `Consume` or an `OfferWithMove` is denied, and what to do instead; `creating` when
    /// the request is a CREATE (which sets the owner).
    pub fn reason(self, annotation: &str, creating: bool) -> String {
        match (self, creating) {
            (OfferRule::Consume, _) => format!(
                "an update that changes or removes the owner consumes the offer; remove the \
                 annotation {annotation} in the same update"
            ),
            (_, true) => format!(
                "an offer ({annotation}) is made in the CREATE that sets the owner; create the \
                 object, then offer it in an update of its own"
            ),
            (_, false) => format!(
                "an offer ({annotation}) is made in the update that changes the owner; change \
                 the owner and make an offer in separate updates"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offer_table() {
        use OfferRule::*;
        #[rustfmt::skip]
        let rows = [
            // old offer, new offer, an owner moves, rule
            (None,      None,      false, Fine),
            (Some("b"), Some("b"), false, Fine),
            (None,      Some("b"), false, Check { to: Some("b") }),
            (Some("b"), Some("c"), false, Check { to: Some("c") }),
            (Some("b"), None,      false, Check { to: None }),
            (None,      None,      true,  Fine),
            (Some("b"), None,      true,  Fine),
            (Some("b"), Some("b"), true,  Consume),
            (None,      Some("b"), true,  OfferWithMove),
            (Some("b"), Some("c"), true,  OfferWithMove),
        ];
        for (old, new, moved, expected) in rows {
            assert_eq!(
                judge(old, new, moved),
                expected,
                "{old:?} -> {new:?}, moved: {moved}"
            );
        }
    }

    #[test]
    fn reasons_say_what_happened_and_what_to_do() {
        let annotation = "single-owner-policy.io/offer";
        assert_eq!(
            OfferRule::Consume.reason(annotation, false),
            "an update that changes or removes the owner consumes the offer; remove the \
             annotation single-owner-policy.io/offer in the same update"
        );
        assert_eq!(
            OfferRule::OfferWithMove.reason(annotation, false),
            "an offer (single-owner-policy.io/offer) is made in the update that changes the \
             owner; change the owner and make an offer in separate updates"
        );
        assert_eq!(
            OfferRule::OfferWithMove.reason(annotation, true),
            "an offer (single-owner-policy.io/offer) is made in the CREATE that sets the owner; \
             create the object, then offer it in an update of its own"
        );
    }

    #[test]
    fn hints_name_the_annotation() {
        assert_eq!(
            change_hint("single-owner-policy.io/offer", None, "operator-2"),
            "to hand it over, its owner offers it by setting the annotation \
             single-owner-policy.io/offer=operator-2, then the new owner changes the owner label \
             and removes the annotation"
        );
        assert_eq!(
            change_hint(
                "single-owner-policy.io/offer",
                Some("operator-3"),
                "operator-2"
            ),
            r#"the pending offer (single-owner-policy.io/offer) names "operator-3", not "operator-2""#
        );
    }
}
