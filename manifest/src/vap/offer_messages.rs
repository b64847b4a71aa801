//! What a denied offer says, in CEL: the module's line for the offer rule (`handoff::rule`) —
//! the offer annotation, the owner the offer is made under or the mark that moves, and the
//! reason — from what the variable `offer` says is wrong ([`super::handoff`]). A well-formed
//! offer is taken apart with the strings extension: its mark ends at the first `: `, its
//! `from` at the first ` -> `, and neither holds whitespace.

use single_owner_policy::{
    Act, Claim as ModuleClaim, Format, InvalidOwner, OwnerMark, Reason, Unfit,
};

use super::claims::Claim;
use super::entries::{Around, Group};
use super::messages::SUBJECT;
use super::offers::is_well_formed;
use super::reasons::{invalid, not_acting, scope, sentence, shown, tag, untag};
use crate::conditions::quote;

/// CEL: the line of a denied offer after `annotation <offer>: offer`, given `variables.offer`:
/// each piece written once — the owner the offer is made under, the move, the reason.
pub(super) fn message(object: &Group, around: &Around) -> String {
    let (old, new) = ("variables.oldOffer[0]", "variables.newOffer[0]");
    let settings = around.settings;
    let annotation = settings.offer_annotation.as_str();
    let text = |reason: Reason| reason.to_string();
    let fixed = |reason: Reason| quote(&text(reason));
    let marks = object.marks;
    // A chain over the marks an offer names: `then(i)` where it names mark `i`, else `otherwise`.
    let by_mark = |offer: &str, then: &dyn Fn(usize) -> String, otherwise: &str| {
        let list = offer.trim_end_matches("[0]");
        (0..marks.len())
            .rev()
            .fold(otherwise.to_owned(), |chain, i| {
                format!(
                    "size({list}) > 0 && {offer}.split(': ')[0] == {} ? ({}) : ({chain})",
                    quote(&marks[i].key),
                    then(i)
                )
            })
    };
    let shown_of = |i: usize| shown(&marks[i], &object.new[i]);
    // The first offer, stored then new, whose mark moves: the line names the move.
    let moves = |offer: &str, well_formed: &str| {
        let then = |i: usize| {
            format!(
                "{} ? ' from ' + ({} ? {} : 'none') + ' to ' + {} : ''",
                object.moves(i),
                object.old_present,
                shown(&marks[i], &object.old[i]),
                shown(&marks[i], &object.new[i]),
            )
        };
        format!("{well_formed} ? ({}) : ''", by_mark(offer, &then, "''"))
    };
    let moved = format!(
        "[size(variables.oldOffer) > 0 ? ({}) : ''].map(m, m != '' || size(variables.newOffer) \
         == 0 ? m : ({}))[0]",
        moves(old, around.offer_well_formed),
        moves(new, &is_well_formed(new))
    );
    let with_move = |creating| {
        fixed(Reason::OfferWithMove {
            annotation,
            creating,
        })
    };
    let to_mark = format!(
        "[{new}.substring({new}.indexOf(' -> ') + 4)].map(r, r.contains(': ') ? r.split(': ')[0] \
         : {new}.split(': ')[0])[0]"
    );
    let to_owner = format!(
        "[{new}.substring({new}.indexOf(' -> ') + 4)].map(r, r.contains(': ') ? r.split(': ')[1] \
         : r)[0]"
    );
    let names_no_mark = sentence(
        &text(Reason::OfferNamesNoMark {
            key: "@@0@@",
            marks,
        }),
        &[&format!("(o == 'none' ? {new}.split(': ')[0] : {to_mark})")],
    );
    // The owner as the module shows it, `o` in the reasons below.
    let owner_tag = |i: usize| tag(&marks[i], 1);
    let by_another = |i: usize| {
        let tag = owner_tag(i);
        let reason = Reason::OfferByAnother {
            from: "@@0@@",
            owner: ModuleClaim::of_owner(&marks[i], &tag),
        };
        let from = format!("{new}.substring({new}.indexOf(': ') + 2, {new}.indexOf(' -> '))");
        let text = untag(&text(reason), &marks[i]).replace("\"@@1@@\"", "@@1@@");
        sentence(&text, &[&from, "o"])
    };
    let acting = |act: Act, i: usize| {
        not_acting(settings, act, &marks[i], &object.new[i]).unwrap_or("''".to_owned())
    };
    let reason = format!(
        "variables.offer == 'an offer of a mark that moves must be consumed' ? {} : \
         variables.offer == 'an offer cannot be made or changed while a mark moves' ? \
         (request.operation == 'CREATE' ? {} : {}) : variables.offer == 'malformed' ? {} : \
         variables.offer == 'names no mark' ? {names_no_mark} : variables.offer == 'offer of \
         nothing' ? ({}) : variables.offer == 'offer by another owner' ? ({}) : variables.offer \
         == 'offer by a requester not acting for its owner' ? ({}) : variables.offer == 'offer \
         to itself' ? {} : variables.offer == 'offer to an unfit owner' ? ({}) : ({})",
        fixed(Reason::OfferNotConsumed { annotation }),
        with_move(true),
        with_move(false),
        sentence(&text(Reason::OfferMalformed { text: "@@0@@" }), &[new]),
        by_mark(
            new,
            &|i| fixed(Reason::OfferOfNothing { mark: &marks[i] }),
            "''"
        ),
        by_mark(new, &by_another, "''"),
        by_mark(new, &|i| acting(Act::Offer, i), "''"),
        sentence(&text(Reason::OfferToItself { to: "@@0@@" }), &[&to_owner]),
        unfit(marks, &to_mark, &to_owner, around),
        by_mark(old, &|i| acting(Act::Withdraw, i), "''"),
    );
    let owner = format!(
        "variables.offer == 'malformed' ? 'none' : variables.offer.startsWith('withdrawn') ? \
         ({}) : ({})",
        by_mark(old, &shown_of, "'none'"),
        by_mark(new, &shown_of, "'none'")
    );
    // A move is named by its owners; any other line by the owner the offer is made under.
    format!(
        "[{owner}].map(o, [{moved}].map(m, ' denied for ' + (variables.offer.contains(' moves') \
         && m != '' ? {SUBJECT} + m : request.operation + ' of ' + {SUBJECT} + ', owned by ' + \
         (variables.offer.contains(' moves') ? 'none' : o)) + [{reason}].map(r, r == '' ? '' : \
         ': ' + r)[0])[0])[0]"
    )
}

/// CEL: why the offer's receiver `to`, under the mark named `to_mark` (CEL strings), cannot own
/// the object (`OfferToUnfit`): its value, read as `Claim::of_owner` reads it, or its scope.
fn unfit(marks: &[OwnerMark], to_mark: &str, to: &str, around: &Around) -> String {
    let empty = Reason::OwnerValue(InvalidOwner::Empty).to_string();
    let unfit = Reason::OfferToUnfit {
        to: "@@0@@",
        why: Unfit::Value(InvalidOwner::Empty),
    };
    let head = unfit.to_string();
    let head = sentence(head.strip_suffix(&empty).unwrap_or(&head), &[to]);
    let mut chain = "''".to_owned();
    for receiving in marks.iter().rev() {
        let split = |separator: char| {
            let (sep, part) = (quote(&separator.to_string()), format!("{to}.split("));
            Claim {
                value: format!("({to}.contains({sep}) ? [{part}{sep}, 2)[1]] : [{to}])"),
                part: Some(format!(
                    "({to}.contains({sep}) ? [{part}{sep}, 2)[0]] : [])"
                )),
                malformed: None,
                read: None,
            }
        };
        let claim = match (receiving.id_separator(), receiving.format) {
            (_, Format::ArgoCdTrackingId) => Claim {
                value: format!("[{to}]"),
                part: None,
                malformed: Some(format!("{to}.contains(':') || {to}.contains('/')")),
                read: None,
            },
            (Some(separator), _) if receiving.companion_key().is_some() => split(separator),
            _ => Claim {
                value: format!("[{to}]"),
                part: None,
                malformed: None,
                read: None,
            },
        };
        let invalid = invalid(receiving, &claim);
        let scope = scope(receiving, &claim, around);
        chain = format!(
            "{to_mark} == {} ? [{invalid}].map(i, i != '' ? i : {scope})[0] : ({chain})",
            quote(&receiving.key)
        );
    }
    format!("{head} + ({chain})")
}
