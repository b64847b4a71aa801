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
use super::reasons::{invalid, not_acting, scope, sentence, shown, tag, untag};
use crate::conditions::quote;

/// CEL: the line of a denied offer after `annotation <offer>: offer`, given `variables.offer`.
pub(super) fn message(object: &Group, around: &Around) -> String {
    let (old, new) = ("variables.oldOffer[0]", "variables.newOffer[0]");
    let settings = around.settings;
    let annotation = settings.offer_annotation.as_str();
    let text = |reason: Reason| reason.to_string();
    // Named by its owner; a reason the policy does not say (`''`) leaves the first clause.
    let kept = |owner: &str, reason: &str| {
        format!(
            "' denied for ' + request.operation + ' of ' + {SUBJECT} + ', owned by ' + {owner} + \
             [{reason}].map(r, r == '' ? '' : ': ' + r)[0]"
        )
    };
    let marks = object.marks;
    // The first offer, stored then new, whose mark moves: the line names the move.
    let moved = |reason: &str| {
        let mut chain = kept("'none'", reason);
        for offer in [new, old] {
            for (i, mark) in marks.iter().enumerate().rev() {
                let (from, to) = (&object.old[i], &object.new[i]);
                let moves = format!(
                    "(({}) ? !({}) : !({}))",
                    object.old_present,
                    from.same(to),
                    to.none()
                );
                let offer_list = offer.trim_end_matches("[0]");
                chain = format!(
                    "size({offer_list}) > 0 && {} && {offer}.split(': ')[0] == {} && {moves} ? \
                     ' denied for ' + {SUBJECT} + ' from ' + ({} ? {} : 'none') + ' to ' + {} + \
                     ': ' + {reason} : ({chain})",
                    well_formed(offer),
                    quote(&mark.key),
                    object.old_present,
                    shown(mark, from),
                    shown(mark, to),
                );
            }
        }
        chain
    };
    let fixed = |reason: Reason| quote(&text(reason));
    let not_consumed = moved(&fixed(Reason::OfferNotConsumed { annotation }));
    let with_move = moved(&format!(
        "(request.operation == 'CREATE' ? {} : {})",
        fixed(Reason::OfferWithMove {
            annotation,
            creating: true,
        }),
        fixed(Reason::OfferWithMove {
            annotation,
            creating: false,
        })
    ));
    let malformed = sentence(&text(Reason::OfferMalformed { text: "@@0@@" }), &[new]);
    let to_mark = format!(
        "[{new}.substring({new}.indexOf(' -> ') + 4)].map(r, r.contains(': ') ? r.split(': ')[0] \
         : {new}.split(': ')[0])[0]"
    );
    let to_owner = format!(
        "[{new}.substring({new}.indexOf(' -> ') + 4)].map(r, r.contains(': ') ? r.split(': ')[1] \
         : r)[0]"
    );
    let names_no_mark = |key: &str| {
        sentence(
            &text(Reason::OfferNamesNoMark {
                key: "@@0@@",
                marks,
            }),
            &[key],
        )
    };
    // The offer is made under mark `i`: what is wrong with it, as the module says it.
    let under = |i: usize| {
        let (mark, owner) = (&marks[i], &object.new[i]);
        let shown = shown(mark, owner);
        let of_nothing = fixed(Reason::OfferOfNothing { mark });
        let owner_tag = tag(mark, 1);
        let by_another = sentence(
            &untag(
                &text(Reason::OfferByAnother {
                    from: "@@0@@",
                    owner: ModuleClaim::of_owner(mark, &owner_tag),
                }),
                mark,
            )
            .replace("\"@@1@@\"", "@@1@@"),
            &[
                &format!("{new}.substring({new}.indexOf(': ') + 2, {new}.indexOf(' -> '))"),
                &shown,
            ],
        );
        let acting = not_acting(settings, Act::Offer, mark, owner).unwrap_or("''".to_owned());
        let itself = sentence(&text(Reason::OfferToItself { to: "@@0@@" }), &[&to_owner]);
        let unfit = unfit(marks, &to_mark, &to_owner, around);
        let reason = format!(
            "variables.offer == 'offer of nothing' ? {of_nothing} : variables.offer == 'offer by \
             another owner' ? {by_another} : variables.offer == 'offer by a requester not acting \
             for its owner' ? ({acting}) : variables.offer == 'names no mark' ? {} : \
             variables.offer == 'offer to itself' ? {itself} : ({unfit})",
            names_no_mark(&to_mark)
        );
        kept(&shown, &reason)
    };
    let mut made = kept("'none'", &names_no_mark(&format!("{new}.split(': ')[0]")));
    for i in (0..marks.len()).rev() {
        made = format!(
            "{new}.split(': ')[0] == {} ? ({}) : ({made})",
            quote(&marks[i].key),
            under(i)
        );
    }
    let made = format!(
        "!{} ? {} : ({made})",
        well_formed(new),
        kept("'none'", &malformed)
    );
    // A live offer withdrawn or changed by a requester not acting for its owner.
    let mut withdrawn = "''".to_owned();
    for (i, mark) in marks.iter().enumerate().rev() {
        let owner = &object.new[i];
        let reason = not_acting(settings, Act::Withdraw, mark, owner).unwrap_or("''".to_owned());
        withdrawn = format!(
            "{old}.split(': ')[0] == {} ? ({}) : ({withdrawn})",
            quote(&mark.key),
            kept(&shown(mark, owner), &reason)
        );
    }
    format!(
        "variables.offer == 'an offer of a mark that moves must be consumed' ? ({not_consumed}) \
         : variables.offer == 'an offer cannot be made or changed while a mark moves' ? \
         ({with_move}) : !variables.offer.startsWith('withdrawn') ? ({made}) : ({withdrawn})"
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

/// CEL: the offer `text` is well-formed.
fn well_formed(text: &str) -> String {
    format!("{text}.matches({})", quote(&super::offers::well_formed()))
}
