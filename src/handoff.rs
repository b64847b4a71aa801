//! Handoff: an owner hands an object over to another owner in two phases, without a moment
//! where the object is unowned.
//!
//! 1. **Offer** — the current owner sets the offer annotation to `<mark>: <from> -> <to>`: the
//!    mark it owns the object under (its key), itself, and the receiving owner, under the same
//!    mark (`ClusterExtension.b`) or another one (`argocd.argoproj.io/tracking-id: guestbook`).
//! 2. **Accept** — the receiver moves the mark to itself (or, across marks, removes the offering
//!    mark and sets its own) and removes the annotation; deployed mutating, the policy removes it.
//!
//! An offer records the owner it was made under, so it lives no longer than that owner: once the
//! mark names another owner, the offer is stale and hands nothing over. Only the owner under
//! the offer's mark makes, changes or withdraws it; another mark's move never touches it. What
//! an update does with the annotation, given whether the offer's mark moves (sets, removes or
//! changes its owner) in the same update:
//!
//! | offer (old → new)           | the offer's mark moves | rule                                   |
//! |-----------------------------|------------------------|----------------------------------------|
//! | unchanged                   | no                     | nothing to check                       |
//! | made, changed or withdrawn  | no                     | the owner's act: checked as an offer   |
//! | X → none                    | yes                    | nothing to check (accepted, or void)   |
//! | X → X                       | yes                    | the offer must be consumed             |
//! | anything → Y, a new offer   | yes                    | denied: offer in an update of its own  |

/// An offer, as the offer annotation writes it: `<mark>: <from> -> <to>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer<'a> {
    /// The key of the mark the object is offered under.
    pub mark: &'a str,
    /// The owner that made the offer, as that mark names it.
    pub from: &'a str,
    /// The receiving owner.
    pub to: Receiver<'a>,
}

/// The owner an offer names as the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Receiver<'a> {
    /// The key of the mark the receiver takes the object under.
    pub mark: &'a str,
    /// The receiving owner, as that mark names it.
    pub owner: &'a str,
}

/// The form of an offer, for messages.
pub const OFFER_FORM: &str = "<mark>: <from> -> <to>, or <mark>: <from> -> <other mark>: <to>";

impl<'a> Offer<'a> {
    /// Reads an offer annotation's value.
    pub fn parse(text: &'a str) -> Option<Offer<'a>> {
        let (mark, rest) = text.split_once(": ")?;
        let (from, to) = rest.split_once(" -> ")?;
        let to = match to.split_once(": ") {
            Some((mark, owner)) => Receiver { mark, owner },
            None => Receiver { mark, owner: to },
        };
        let words = [mark, from, to.mark, to.owner];
        if words
            .iter()
            .any(|word| word.is_empty() || word.contains(char::is_whitespace))
        {
            return None;
        }
        Some(Offer { mark, from, to })
    }

    /// The receiver an accepting update moves `mark`'s owner to, if this offer, made under
    /// `mark` by `owner`, hands the object to another owner of the same mark.
    pub fn to_under(self, mark: &str, owner: &str) -> Option<&'a str> {
        (self.mark == mark && self.from == owner && self.to.mark == mark).then_some(self.to.owner)
    }
}

/// The text of an offer of `from`'s object, under `mark`, to `to` (of `to_mark` when another).
pub fn offer_text(mark: &str, from: &str, to_mark: &str, to: &str) -> String {
    if mark == to_mark {
        format!("{mark}: {from} -> {to}")
    } else {
        format!("{mark}: {from} -> {to_mark}: {to}")
    }
}

/// What the handoff rules ask of an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfferRule {
    /// Nothing to check.
    Fine,
    /// An offer is made, changed or withdrawn: the owner's act.
    Check,
    /// The offer's mark moved, and the offer is still on the object: it has to go.
    Consume,
    /// A new offer in the same update as a move of its mark or of the withdrawn offer's mark.
    OfferWithMove,
}

/// Judges the offer annotation of an update: `old` and `new` are its values before and after;
/// `moves` tells whether the mark of a key moves in the update.
pub fn judge(old: Option<&str>, new: Option<&str>, moves: impl Fn(&str) -> bool) -> OfferRule {
    let mark_moves = |text: Option<&str>| {
        text.and_then(Offer::parse)
            .is_some_and(|offer| moves(offer.mark))
    };
    match (old == new, new.is_some()) {
        (true, _) if mark_moves(old) => OfferRule::Consume,
        (true, _) => OfferRule::Fine,
        (false, false) if mark_moves(old) => OfferRule::Fine,
        (false, false) => OfferRule::Check,
        (false, true) if mark_moves(old) || mark_moves(new) => OfferRule::OfferWithMove,
        (false, true) => OfferRule::Check,
    }
}

/// What to do instead of changing the owner under `mark` from one (`from`) to another (`to`),
/// given the offer the object carries, if any.
pub fn change_hint(
    annotation: &str,
    offered: Option<&str>,
    mark: &str,
    from: &str,
    to: &str,
) -> String {
    match offered {
        None => format!(
            "to hand it over, its owner offers it by setting the annotation \
             {annotation}=\"{}\", then the new owner moves the mark and removes the annotation",
            offer_text(mark, from, mark, to)
        ),
        Some(offered) => {
            format!(
                "the pending offer ({annotation}) is {offered:?}, which does not hand it to {to:?}"
            )
        }
    }
}

impl OfferRule {
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

    const B: &str = "m: a -> b";
    const C: &str = "m: a -> c";
    const OTHER: &str = "n: x -> y";

    #[test]
    fn offer_table() {
        use OfferRule::*;
        #[rustfmt::skip]
        let rows = [
            // old offer, new offer, the marks that move, rule
            (None,        None,        &[][..],     Fine),
            (Some(B),     Some(B),     &[],         Fine),
            (None,        Some(B),     &[],         Check),
            (Some(B),     Some(C),     &[],         Check),
            (Some(B),     None,        &[],         Check),
            (None,        None,        &["m"],      Fine),
            (Some(B),     None,        &["m"],      Fine),
            (Some(B),     Some(B),     &["m"],      Consume),
            (None,        Some(B),     &["m"],      OfferWithMove),
            (Some(B),     Some(C),     &["m"],      OfferWithMove),
            (Some(OTHER), Some(B),     &["n"],      OfferWithMove),
            // another mark's move never touches the offer
            (Some(B),     Some(B),     &["n"],      Fine),
            (Some(B),     None,        &["n"],      Check),
            (None,        Some(B),     &["n"],      Check),
            // an offer that does not parse names no mark
            (Some("b"),   Some("b"),   &["m"],      Fine),
            (Some("b"),   None,        &["m"],      Check),
        ];
        for (old, new, moving, expected) in rows {
            let moves = |mark: &str| moving.contains(&mark);
            assert_eq!(
                judge(old, new, moves),
                expected,
                "{old:?} -> {new:?}, {moving:?}"
            );
        }
    }

    #[test]
    fn offers_read_mark_from_and_to() {
        let same = |mark, owner| Receiver { mark, owner };
        #[rustfmt::skip]
        let rows = [
            ("camel.apache.org/operator.id: operator-1 -> operator-2",
             Some(Offer { mark: "camel.apache.org/operator.id", from: "operator-1", to: same("camel.apache.org/operator.id", "operator-2") })),
            ("meta.helm.sh/release-name: shop/web -> argocd.argoproj.io/tracking-id: guestbook",
             Some(Offer { mark: "meta.helm.sh/release-name", from: "shop/web", to: same("argocd.argoproj.io/tracking-id", "guestbook") })),
            ("operator-2", None),
            ("m: a -> ", None),
            ("m: a b -> c", None),
            ("m:a -> b", None),
        ];
        for (text, expected) in rows {
            assert_eq!(Offer::parse(text), expected, "{text}");
        }
        let offer = Offer::parse(B).unwrap();
        assert_eq!(offer.to_under("m", "a"), Some("b"));
        assert_eq!(offer.to_under("m", "z"), None, "an offer outlives no owner");
        assert_eq!(offer.to_under("n", "a"), None);
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
    fn hints_give_the_offer_to_write() {
        let key = "camel.apache.org/operator.id";
        assert_eq!(
            change_hint(
                "single-owner-policy.io/offer",
                None,
                key,
                "operator-1",
                "operator-2"
            ),
            "to hand it over, its owner offers it by setting the annotation \
             single-owner-policy.io/offer=\"camel.apache.org/operator.id: operator-1 -> operator-2\", \
             then the new owner moves the mark and removes the annotation"
        );
        assert_eq!(
            change_hint(
                "single-owner-policy.io/offer",
                Some("camel.apache.org/operator.id: operator-1 -> operator-3"),
                key,
                "operator-1",
                "operator-2"
            ),
            r#"the pending offer (single-owner-policy.io/offer) is "camel.apache.org/operator.id: operator-1 -> operator-3", which does not hand it to "operator-2""#
        );
    }
}
