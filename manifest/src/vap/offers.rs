//! Offers in CEL. An offer reads `<mark>: <from> -> <to>` or `<mark>: <from> -> <other mark>:
//! <to>`, each word non-empty and without whitespace (`Offer::parse`). Portable CEL cannot take
//! it apart, and need not: every question the rules ask of an offer compares its words with
//! known keys and with owner ids the request carries, so it is asked as "is the offer this
//! text?" of a well-formed offer. In one that is well-formed, the mark ends at the first `: `
//! and `from` at the first ` -> `; neither holds whitespace, so an offer that equals (or starts
//! with) the text built from a mark, an owner id and a receiver has exactly those words — an id
//! with whitespace could only build a text whose split leaves whitespace in a word, which is not
//! well-formed.

use crate::conditions::quote;

use super::claims::escape;

/// Whitespace as Rust's `char::is_whitespace` reads it (Unicode `White_Space`), for RE2.
pub(super) const SPACE: &str =
    r"\t\n\x{0B}\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}";

/// A word of an offer: at least one character that is not whitespace.
pub(super) fn word() -> String {
    format!("[^{SPACE}]+")
}

/// The pattern of a well-formed offer.
fn well_formed() -> String {
    let w = word();
    format!("^{w}: {w} -> {w}(?:: {w})?$")
}

/// CEL: the offer text `text` is well-formed.
pub(super) fn is_well_formed(text: &str) -> String {
    format!("{text}.matches({})", quote(&well_formed()))
}

/// The pattern of an offer whose receiver, the last word, matches `receiver` (a pattern of
/// non-whitespace characters, unanchored), under the mark `to` when given.
pub(super) fn receiver_is(to: Option<&str>, receiver: &str) -> String {
    let under = match to {
        Some(key) => format!("{}: ", escape(key)),
        None => String::new(),
    };
    format!(" -> {under}(?:{receiver})$")
}

/// CEL: the offer text `offer` is `<mark>: <from> -> <to>`, the receiver under the same mark,
/// written either way.
pub(super) fn to_same(offer: &str, mark: &str, from: &str, to: &str) -> String {
    let head = format!("{} + {from} + ' -> '", quote(&format!("{mark}: ")));
    format!(
        "({offer} == {head} + {to} || {offer} == {head} + {} + {to})",
        quote(&format!("{mark}: "))
    )
}

/// CEL: the offer text `offer` is `<mark>: <from> -> <other>: <to>`.
pub(super) fn to_other(offer: &str, mark: &str, from: &str, other: &str, to: &str) -> String {
    format!(
        "{offer} == {} + {from} + {} + {to}",
        quote(&format!("{mark}: ")),
        quote(&format!(" -> {other}: "))
    )
}
