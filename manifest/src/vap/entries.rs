//! The rules of one owner mark on the object or in a template, as one CEL expression whose value
//! is the rule the mark breaks, or `''`: `judge_mark` of `src/decision.rs` for settings without
//! lookups or `writes: Owner` — the binding rule, then the transition table
//! (`transition::judge`, with the offer's part in it, `handoff::handoff`, and linked marks'),
//! the new owner's value and scope (`scope::fit`), one owner across marks (`one_owner::rule`),
//! and the requester's identity for setting and removing an owner ([`requester`]). Without
//! `writes: Owner`, keeping an owner breaks no rule; no owner is found gone, so none is
//! released.

use single_owner_policy::{OwnerMark, Settings};

use super::claims::{Claim, or, ternary};
use super::offers::{receiver_is, to_other, to_same, word};
use super::{requester, writes};
use crate::conditions::quote;

/// The claims of one group of entries — the object's marks, or one template's — as CEL.
pub(super) struct Group<'s> {
    /// The marks, in the settings' order.
    pub marks: &'s [OwnerMark],
    /// Each mark's stored claim.
    pub old: Vec<Claim>,
    /// Each mark's new claim.
    pub new: Vec<Claim>,
    /// CEL: whether the stored side has the group (`oldObject` on an UPDATE, the template in it).
    pub old_present: String,
    /// Whether the group is a template's: under `writes: Owner` its kept claim is judged on
    /// the object when the object keeps the same owner, and on a DELETE on its own.
    pub template: bool,
}

/// What the rules read beside the claims, as CEL.
pub(super) struct Around<'s> {
    pub settings: &'s Settings,
    /// The stored object's offer, a list of at most one string.
    pub offer: &'s str,
    /// Whether that offer is well-formed.
    pub offer_well_formed: &'s str,
    /// The object's namespace, `''` for a cluster-scoped one.
    pub namespace: &'s str,
    /// Whether the object is cluster-scoped.
    pub cluster: &'s str,
    /// Whether the request creates a `pods/binding`.
    pub binding: &'s str,
}

impl<'s> Around<'s> {
    /// What the rules read beside the claims, in the variables every policy holds
    /// (`read::base_variables`).
    pub fn of(settings: &'s Settings) -> Around<'s> {
        Around {
            settings,
            offer: "variables.oldOffer",
            offer_well_formed: "variables.oldOfferWellFormed",
            namespace: "variables.namespace",
            cluster: "variables.clusterScoped",
            binding: "variables.binding",
        }
    }
}

impl Group<'_> {
    /// What mark `i`'s new owner breaks by its value or scope, `''` for nothing.
    pub fn fit(&self, i: usize, around: &Around) -> String {
        self.new[i].fit(&self.marks[i], around.namespace, around.cluster)
    }

    /// What mark `i`'s new owner breaks when it is set, given its `fit`: that, else one owner
    /// across marks, else the requester's identity, `''` for nothing.
    pub fn set(&self, i: usize, fit: &str, around: &Around) -> String {
        let id = self.new[i].id(&self.marks[i]);
        let identity = match requester::may_set(around.settings, &id) {
            Some(may) => format!("!({may}) ? 'identity' : ''"),
            None => "''".to_owned(),
        };
        format!(
            "(({fit}) != '' ? ({fit}) : ({}) ? 'one owner' : {identity})",
            self.one_owner(i)
        )
    }

    /// The rule mark `i` breaks, or `''`, given what its new owner breaks ([`Group::fit`],
    /// [`Group::set`]).
    pub fn rule(&self, i: usize, around: &Around, fit: &str, set: &str) -> String {
        let (mark, old, new) = (&self.marks[i], &self.old[i], &self.new[i]);
        let (old_none, new_none, same) = (old.none(), new.none(), old.same(new));
        // Read as none when it changes and names no valid owner (`transition::rule`).
        let stored_none = format!("({old_none}) || (!({same}) && !({}))", old.valid(mark));
        let settings = around.settings;
        // A handoff of this mark's owner, or of a mark linked to it.
        let linked = self.linked(i, around);
        let or_linked = |handoff: String| match &linked {
            Some(linked) => format!("{handoff} || {linked}"),
            None => handoff,
        };
        let adoption = match deny(&settings.adoption) {
            true => format!(
                "({}) ? {set} : 'adoption'",
                or_linked(self.received(i, around))
            ),
            false => set.to_owned(),
        };
        // Removed, unless another mark's owner takes it now: the owner's to remove.
        let released = or_linked(self.given(i, around));
        let orphaning = match (
            deny(&settings.orphaning),
            requester::acts_for(settings, &old.id(mark)),
        ) {
            (true, _) => format!("({released}) ? '' : 'orphaning'"),
            (false, Some(acts)) => format!("({released}) || ({acts}) ? '' : 'identity'"),
            (false, None) => "''".to_owned(),
        };
        let change = format!(
            "({}) ? {set} : ({fit}) != '' ? ({fit}) : 'owner change'",
            or_linked(self.handed(i, around))
        );
        // Kept: under `writes: Owner`, written by whoever writes for the owner.
        let keep = match writes::rule(settings, &new.valid(mark), &new.id(mark)) {
            Some(rule) if self.template => {
                format!("{} in variables.objectKept ? '' : ({rule})", new.id(mark))
            }
            Some(rule) => rule,
            None => "''".to_owned(),
        };
        let kept = match keep.as_str() {
            "''" => format!("(({stored_none}) && ({new_none})) || ({same}) ? ''"),
            keep => format!("(({stored_none}) && ({new_none})) ? '' : ({same}) ? ({keep})"),
        };
        let update = format!(
            "{kept} : ({stored_none}) ? ({adoption}) : ({new_none}) ? ({orphaning}) : ({change})"
        );
        let created = ternary(&new_none, "''", set);
        let deleted = match self.deleted(i, settings) {
            Some(rule) => format!("request.operation == 'DELETE' ? ({rule}) : "),
            None => String::new(),
        };
        format!(
            "{deleted}({} && !({new_none})) ? 'binding' : !({}) ? ({created}) : ({update})",
            around.binding, self.old_present
        )
    }

    /// What a DELETE breaks in mark `i`: what deleting its stored owner's object does under
    /// `writes: Owner`; `None` unless the settings judge writes.
    pub fn deleted(&self, i: usize, settings: &Settings) -> Option<String> {
        let (mark, old) = (&self.marks[i], &self.old[i]);
        writes::rule(settings, &old.valid(mark), &old.id(mark))
    }

    /// CEL: mark `i`'s claim moves: it differs between the sides (none on a CREATE's).
    pub fn moves(&self, i: usize) -> String {
        let (old, new) = (&self.old[i], &self.new[i]);
        format!(
            "(({}) ? !({}) : !({}))",
            self.old_present,
            old.same(new),
            new.none()
        )
    }

    /// CEL: the owner ids the group's marks keep, each once a mark (`judged_on_the_object`):
    /// an UPDATE's claims that stay, naming someone.
    pub fn kept(&self) -> String {
        let kept = (self.marks.iter().enumerate()).map(|(i, mark)| {
            let (old, new) = (&self.old[i], &self.new[i]);
            format!(
                "(({}) && ({}) && !({}) ? [{}] : [])",
                self.old_present,
                old.same(new),
                new.none(),
                new.id(mark)
            )
        });
        let kept: Vec<String> = kept.collect();
        match kept.is_empty() {
            true => "[]".to_owned(),
            false => kept.join(" + "),
        }
    }

    /// Another mark of the group, not linked to this one, owns the object already: it keeps
    /// its owner, or comes first (`one_owner::second`).
    fn one_owner(&self, i: usize) -> String {
        or(self.seconds(i).into_iter().map(|(_, owns)| owns))
    }

    /// Each other mark of the group, in order, with the CEL condition on which its owner makes
    /// mark `i`'s a second one (`one_owner::second`): not linked to it, it names a valid owner
    /// that stays, or comes first.
    pub fn seconds(&self, i: usize) -> Vec<(usize, String)> {
        let unlinked = |&j: &usize| !self.marks[i].names_same_owner_as(&self.marks[j]);
        (self.others(i).filter(unlinked))
            .map(|j| {
                let (mark, old, new) = (&self.marks[j], &self.old[j], &self.new[j]);
                let owned = format!("!({}) && ({})", new.none(), new.valid(mark));
                let stays = format!("({}) && ({})", self.old_present, old.same(new));
                let owns = match j < i {
                    true => format!("({owned})"),
                    false => format!("({owned} && {stays})"),
                };
                (j, owns)
            })
            .collect()
    }

    /// The stored offer hands mark `i`'s owner to its new one, under the same mark
    /// (`Handoff::To`).
    fn handed(&self, i: usize, around: &Around) -> String {
        let mark = &self.marks[i];
        let to = to_same(
            &format!("{}[0]", around.offer),
            &mark.key,
            &self.old[i].id(mark),
            &self.new[i].id(mark),
        );
        format!("{} && {to}", around.offer_well_formed)
    }

    /// The stored offer gives mark `i`'s owner to another mark, which takes it in this request
    /// (`Handoff::Given`).
    fn given(&self, i: usize, around: &Around) -> String {
        let mark = &self.marks[i];
        let offer = format!("{}[0]", around.offer);
        let to = or(self.others(i).map(|j| {
            let receiver = &self.marks[j];
            let to = self.new[j].id(receiver);
            to_other(&offer, &mark.key, &self.old[i].id(mark), &receiver.key, &to)
        }));
        format!("{} && ({to})", around.offer_well_formed)
    }

    /// Mark `i` takes an owner that the stored offer gives from another mark, which lets it go
    /// in this request (`Handoff::Received`).
    fn received(&self, i: usize, around: &Around) -> String {
        let mark = &self.marks[i];
        let offer = format!("{}[0]", around.offer);
        let from = or(self.others(i).map(|j| {
            let giver = &self.marks[j];
            let gives = to_other(
                &offer,
                &giver.key,
                &self.old[j].id(giver),
                &mark.key,
                &self.new[i].id(mark),
            );
            format!("({} && {gives})", self.new[j].none())
        }));
        format!("{} && ({from})", around.offer_well_formed)
    }

    /// The stored offer moves no owner of mark `i` itself, and one of the marks linked to it
    /// (`sameOwnerAs`) is handed over in this request (`Handoff::Linked`).
    /// `None` for a mark linked to none.
    fn linked(&self, i: usize, around: &Around) -> Option<String> {
        let links: Vec<usize> = (self.others(i))
            .filter(|&j| self.marks[i].names_same_owner_as(&self.marks[j]))
            .collect();
        if links.is_empty() {
            return None;
        }
        let handed_over = or(links.into_iter().map(|j| {
            format!(
                "({}) || (({}) && ({})) || ({})",
                self.handed(j, around),
                self.new[j].none(),
                self.given(j, around),
                self.received(j, around)
            )
        }));
        Some(format!(
            "(!({}) && ({handed_over}))",
            self.direct(i, around)
        ))
    }

    /// The stored offer names mark `i`'s owner (`handoff::direct` is not `None`): gives it to
    /// another mark, offers it under the same mark to anyone, or gives it this mark.
    fn direct(&self, i: usize, around: &Around) -> String {
        let mark = &self.marks[i];
        let offer = format!("{}[0]", around.offer);
        let from = format!(
            "{offer}.startsWith({} + {} + ' -> ')",
            quote(&format!("{}: ", mark.key)),
            self.old[i].id(mark)
        );
        let matches = |pattern: String| format!("{offer}.matches({})", quote(&pattern));
        // The receiver is under this mark: the short form, or the explicit one naming it.
        let under_itself = format!(
            "(!{} || {})",
            matches(receiver_is(None, &format!("{}: {}", word(), word()))),
            matches(receiver_is(Some(&mark.key), &word()))
        );
        format!(
            "(({}) && ({})) || ({} && {from} && {under_itself}) || ({})",
            self.new[i].none(),
            self.given(i, around),
            around.offer_well_formed,
            self.received(i, around)
        )
    }

    fn others(&self, i: usize) -> impl Iterator<Item = usize> {
        (0..self.marks.len()).filter(move |&j| j != i)
    }
}

/// Whether a permission denies.
fn deny(permission: &single_owner_policy::Permission) -> bool {
    *permission == single_owner_policy::Permission::Deny
}
