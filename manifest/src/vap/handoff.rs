//! The offer rule in CEL (`handoff::rule`): an offer left behind by a move, made beside one,
//! or made wrong (`offer_fault`), over the stored and new offers and the object's claims.

use single_owner_policy::{Format, OwnerMark};

use super::claims::{escape, or};
use super::entries::{Around, Group};
use super::offers::{SPACE, is_well_formed, receiver_is, to_same, word};
use super::requester;
use crate::conditions::quote;

/// The offer rule (`handoff::rule`): `''`, or what is wrong with the offer — a live offer
/// withdrawn or changed by a requester not acting for its owner, or the new one made wrong — as
/// CEL over the stored offer, the new one, the object's claims and the requester.
pub(super) fn rule(object: &Group, around: &Around) -> String {
    let (old, new) = ("variables.oldOffer", "variables.newOffer");
    let (old_moves, new_moves) = (
        format!(
            "(size({old}) > 0 && {})",
            mark_moves(object, &format!("{old}[0]"))
        ),
        mark_moves(object, &format!("{new}[0]")),
    );
    let made = made(object, around, &format!("{new}[0]"));
    // An offer withdrawn, unless its mark moves; changed (and made).
    let (withdrawn, made) = match withdrawal(object, around) {
        Some(live) => (
            format!("({old_moves} ? '' : {live} ? {WITHDRAWN} : '')"),
            format!("{live} ? {WITHDRAWN} : ({made})"),
        ),
        None => ("''".to_owned(), made),
    };
    format!(
        "!variables.judged ? '' : {old} == {new} ? ({old_moves} ? 'an offer of a mark that \
         moves must be consumed' : '') : size({new}) == 0 ? {withdrawn} : ({old_moves} || \
         {new_moves}) ? 'an offer cannot be made or changed while a mark moves' : ({made})"
    )
}

/// CEL: the offer `text` is well-formed and its mark, an object mark, moves: its claim differs
/// between the sides (none on a CREATE's).
fn mark_moves(object: &Group, text: &str) -> String {
    let any = or((0..object.marks.len()).map(|i| {
        let head = quote(&format!("{}: ", object.marks[i].key));
        format!("({text}.startsWith({head}) && {})", object.moves(i))
    }));
    format!("({} && ({any}))", is_well_formed(text))
}

/// CEL: the request leaves behind an offer whose mark moved, which a stamping policy removes
/// (`OfferRule::Consume`).
pub(super) fn consumed(object: &Group) -> String {
    let (old, new) = ("variables.oldOffer", "variables.newOffer");
    format!(
        "variables.judged && {old} == {new} && size({old}) > 0 && {}",
        mark_moves(object, &format!("{old}[0]"))
    )
}

/// What a withdrawal or change of a live offer by a requester not acting for its owner breaks.
const WITHDRAWN: &str = "'withdrawn or changed by a requester not acting for its owner'";

/// CEL: the stored offer is live — its mark names the owner it was made under — and the
/// requester does not act for that owner (`withdrawal`); `None` without identities.
fn withdrawal(object: &Group, around: &Around) -> Option<String> {
    let offer = "variables.oldOffer[0]";
    let live = (object.marks.iter().enumerate()).map(|(i, mark)| {
        let id = object.new[i].id(mark);
        let head = quote(&format!("{}: ", mark.key));
        let acts = requester::acts_for(around.settings, &id)?;
        Some(format!(
            "({offer}.startsWith({head} + {id} + ' -> ') && !({acts}))"
        ))
    });
    let live = live.collect::<Option<Vec<String>>>()?;
    Some(format!(
        "({} && ({}))",
        around.offer_well_formed,
        or(live.into_iter())
    ))
}

/// What is wrong with an offer made or changed (`offer_fault`), `''` if nothing.
fn made(object: &Group, around: &Around, text: &str) -> String {
    let marks = object.marks;
    let mut chain = format!("!{} ? 'malformed' : ", is_well_formed(text));
    // The explicit form names the receiver's mark, which must be one of them, and decides it.
    let names = |key: &str| {
        format!(
            "{text}.matches({})",
            quote(&receiver_is(Some(key), &word()))
        )
    };
    let explicit = format!(
        "{text}.matches({})",
        quote(&receiver_is(None, &format!("{}: {}", word(), word())))
    );
    let names_a_mark = or(marks.iter().map(|receiving| names(&receiving.key)));
    let explicit_fits = (marks.iter())
        .map(|receiving| {
            let fits = receiver_fits(receiving, text, Some(&receiving.key), around);
            format!("({} && {fits})", names(&receiving.key))
        })
        .collect::<Vec<_>>()
        .join(" || ");
    for (i, mark) in marks.iter().enumerate() {
        let new = &object.new[i];
        let id = new.id(mark);
        let head = quote(&format!("{}: ", mark.key));
        // The short form's receiver is under this mark.
        let short_fits = receiver_fits(mark, text, None, around);
        let itself = to_same(text, &mark.key, &id, &id);
        let identity = match requester::acts_for(around.settings, &id) {
            Some(acts) => format!("!({acts}) ? 'offer by a requester not acting for its owner' : "),
            None => String::new(),
        };
        chain.push_str(&format!(
            "{text}.startsWith({head}) ? (({}) ? 'offer of nothing' : \
             !{text}.startsWith({head} + {id} + ' -> ') ? 'offer by another owner' : {identity}\
             ({explicit} && !({names_a_mark})) ? 'names no mark' : {itself} ? 'offer to itself' : \
             ({explicit} ? ({explicit_fits}) : {short_fits}) ? '' : 'offer to an unfit owner') : ",
            new.none(),
        ));
    }
    chain.push_str("'names no mark'");
    chain
}

/// CEL: the offer's receiver, its last word, names a valid owner of `mark` that fits the
/// object's scope (`Claim::of_owner`, then `scope::fit`), under the mark `under` when given.
fn receiver_fits(mark: &OwnerMark, text: &str, under: Option<&str>, around: &Around) -> String {
    let w = word();
    let not = |chars: &str| format!("[^{chars}{SPACE}]+");
    let matching =
        |pattern: &str| format!("{text}.matches({})", quote(&receiver_is(under, pattern)));
    if mark.namespace_key.is_some() {
        return matching(&format!("{}/{w}", not("/")));
    }
    if mark.format == Format::ArgoCdTrackingId {
        // An app's name: no tracking id could name one with `:` or `/`.
        return matching(&not(":/"));
    }
    if !mark.has_kinds() {
        return "true".to_owned();
    }
    let cluster =
        (mark.cluster_kinds.iter()).map(|kind| matching(&format!("{}\\.{w}", escape(kind))));
    let namespaced = mark.namespaced_kinds.iter().map(|kind| {
        // The namespace is the object's: a DNS label, which holds no RE2 metacharacter.
        let under = under
            .map(|key| format!("{}: ", escape(key)))
            .unwrap_or_default();
        let before = quote(&format!(" -> {under}(?:{}\\.", escape(kind)));
        let after = quote(&format!("\\.{w})$"));
        format!(
            "(!{} && {text}.matches({before} + {} + {after}))",
            around.cluster, around.namespace
        )
    });
    or(cluster.chain(namespaced))
}
