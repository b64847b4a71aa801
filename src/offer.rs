//! The offer annotation's value: `<mark>: <from> -> <to>`, or `<mark>: <from> -> <other
//! mark>: <to>` to hand an object to another mark's owner (see [`crate::handoff`]).

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

#[cfg(test)]
mod tests {
    use super::*;

    const B: &str = "m: a -> b";

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
}
