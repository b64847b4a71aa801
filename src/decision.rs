//! The decision: what the rules say about one request — allow, mutate, deny with every
//! violation, or unreadable. It reads once and composes the rules, each a function of what was
//! read ([`Facts`]) beside its table, returning its typed [`Reason`]:
//!
//! 1. **trust**: a request of the trusted control plane, on what it is trusted with, is allowed
//!    before any rule ([`control_plane`]);
//! 2. **read**: the facts, once ([`crate::facts`]); which requests are judged at all, and on
//!    which objects, is [`Sides`]'s;
//! 3. **judge**: each mark, on the object and in each template — its transition
//!    ([`transition`], with the offer's part in it), the new owner's value and scope
//!    ([`scope`]), one owner across marks ([`one_owner`]), the requester's identity
//!    ([`requester`]), `writes: Owner` ([`writes`]), and on a Binding none at all ([`binding`])
//!    — then the offer ([`handoff`]); an audit
//!    replay by the object's state alone ([`audit`]) and by its controller's marks;
//! 4. **follow**: only when that denies, the object's controller is read, and the marks it
//!    carries are judged as inherited ([`derivation`]);
//! 5. **decide**: deny with every violation; otherwise stamp the owner mark or remove a consumed
//!    offer where the settings ask for it ([`Mutation::of`]); otherwise allow. Under
//!    `stampOnly` nothing is denied: the validating twin judges the final object.
//!
//! Exemptions and the Kubewarden response are applied at the edge, in [`crate::policy`].

use crate::audit;
use crate::binding;
use crate::control_plane;
use crate::derivation::{self, Derivation, Parents};
use crate::facts::{Entry, Facts, Sides};
use crate::handoff::{self, OfferVerdict};
use crate::leftover::{self, Owners};
use crate::mutation::Mutation;
use crate::one_owner;
use crate::owner::Claim;
use crate::request::{AdmissionRequest, Object};
use crate::requester;
use crate::scope;
use crate::settings::Settings;
use crate::transition::{self, Denial, Judgement};
use crate::violation::{Act, Change, Reason, Violation};
use crate::writes;

/// What the rules decide about a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Decision<'a> {
    /// Admit the request as it is.
    Allow,
    /// Admit the object, changed so.
    Mutate(Mutation),
    /// Deny the request: every rule that failed.
    Deny(Vec<Violation<'a>>),
    /// The request lacks what the rules read; why.
    Unreadable(String),
}

/// Applies every rule to a request: trust, read, judge, decide. The object's controller is
/// read through `parents` only when the rules deny without it ([`derivation`]).
pub fn evaluate<'a>(
    request: &'a AdmissionRequest<'a>,
    settings: &'a Settings,
    parents: &dyn Parents,
) -> Decision<'a> {
    let sides = match Sides::of(request, settings) {
        Ok(Some(sides)) => sides,
        Ok(None) => return Decision::Allow,
        Err(why) => return Decision::Unreadable(why),
    };
    if control_plane::trusts(request, sides.stored(), &settings.trusted_writers) {
        return Decision::Allow;
    }
    let facts = match Facts::read(request, settings, sides) {
        Ok(facts) => facts,
        Err(why) => return Decision::Unreadable(why),
    };
    if request.is_audit_replay() {
        let violations = replay(&facts, parents);
        return decide(&facts, violations, false);
    }
    let unread = Owners::unread();
    let (mut violations, mut consume) = judge(&facts, &Derivation::Unread, &unread);
    // Under `stampOnly` nothing is denied: no lookup can change the decision.
    if !violations.is_empty() && !settings.stamp_only {
        following(&facts, parents, |derivation| {
            if !matches!(derivation, Derivation::Unread) {
                (violations, consume) = judge(&facts, derivation, &unread);
            }
            if let Some(owners) = Owners::read(&facts, &violations, parents) {
                (violations, consume) = judge(&facts, derivation, &owners);
            }
        });
    }
    decide(&facts, violations, consume)
}

/// What an audit replay reports of the stored object: its state ([`audit`]), an owner found gone
/// ([`leftover`]), a mark out of step with its controller ([`derivation`]).
pub fn replay<'a>(facts: &Facts<'a>, parents: &dyn Parents) -> Vec<Violation<'a>> {
    let mut violations = audit::rule(facts);
    violations.extend(leftover::audit(facts, parents));
    following(facts, parents, |derivation| {
        violations.extend(derivation::out_of_step(facts, derivation));
    });
    violations
}

/// Reads the object's controller, if it has one the settings follow, and hands what was found
/// to `then` (nothing read, when it has none); an object that may not follow its controller
/// hands on why.
fn following(facts: &Facts<'_>, parents: &dyn Parents, then: impl FnOnce(&Derivation<'_>)) {
    let controller = match derivation::controller(facts) {
        Ok(Some(controller)) => controller,
        Ok(None) => return then(&Derivation::Unread),
        Err(found) => return then(&Derivation::Refused(found)),
    };
    let raw = parents.get(&controller.lookup());
    let parent = match &raw {
        Ok(raw) => serde_json::from_str::<Object<'_>>(raw).map_err(|error| error.to_string()),
        Err(error) => Err(error.clone()),
    };
    then(&Derivation::of(
        facts,
        &controller,
        parent.as_ref().map_err(Clone::clone),
    ));
}

/// Every mark's rules, then the offer's: the violations, and whether the request consumes an
/// offer.
fn judge<'a>(
    facts: &Facts<'a>,
    derivation: &Derivation<'_>,
    owners: &Owners,
) -> (Vec<Violation<'a>>, bool) {
    let mut violations: Vec<_> = facts
        .entries
        .iter()
        .filter_map(|entry| judge_mark(facts, entry, derivation, owners))
        .collect();
    let mut consume_offer = false;
    if facts.sides.incoming().is_some() {
        let carried = derivation.offer(&facts.settings.offer_annotation);
        match handoff::rule(facts, carried) {
            OfferVerdict::Fine => {}
            OfferVerdict::Consume => consume_offer = true,
            OfferVerdict::Deny(offer) => violations.extend(offer),
        }
    }
    (violations, consume_offer)
}

/// The rules of one owner mark, on the object or in a template, with what its controller
/// carries and whether its stored owner is gone, when they were read.
fn judge_mark<'a>(
    facts: &Facts<'a>,
    entry: &Entry<'a>,
    derivation: &Derivation<'_>,
    owners: &Owners,
) -> Option<Violation<'a>> {
    let inherited = derivation.inherits(facts, entry);
    let found = owners.found(entry);
    let violation = |change, reason| {
        let mut violation = facts.entry_violation(entry, change, reason);
        violation.controller = derivation.found(entry, inherited);
        violation.owner = found.cloned();
        Some(violation)
    };
    if let Some(reason) = binding::rule(facts, entry) {
        return violation(entry.change(), reason);
    }
    let Some(new) = entry.new else {
        // A DELETE, under `writes: Owner`.
        let owner = entry.old.unwrap_or_default();
        if judged_on_the_object(facts, entry, owner) {
            return None;
        }
        let reason = writes::rule(facts, entry, owner, inherited)?;
        return violation(Change::kept(owner), reason);
    };
    let change = entry.change();
    // A stored owner found gone is judged as none (messages still name it): whoever may adopt
    // the object may release it.
    let gone = found.is_some_and(|found| found.finding.gone());
    if gone && new.is_none() {
        let reason = requester::rule(facts, Act::Release, change.old, false)?;
        return violation(change, reason);
    }
    let judged = &owners.judged(entry);
    let scope = facts.request.object_scope();
    let fit = |claim| scope::fit(entry.mark, claim, scope).err().map(Reason::from);
    let judgement = match transition::rule(facts, judged, inherited) {
        Ok(judgement) => judgement,
        // A receiver that could not own the object is the first thing to fix.
        Err(Denial::OwnerChange) if let Some(unfit) = fit(new) => return violation(change, unfit),
        Err(denial) => return violation(change, transition::reason(facts, entry, denial)),
    };
    let reason = match judgement {
        Judgement::Allow => return None,
        // A template's kept claim is written with its object, judged there when the object
        // keeps the same owner.
        Judgement::Keep if judged_on_the_object(facts, entry, new) => return None,
        Judgement::Keep => {
            let reason = writes::rule(facts, entry, new, inherited)
                .or_else(|| derivation::repoint_rule(facts, entry, new, derivation))?;
            return violation(Change::kept(new), reason);
        }
        // A value that names no owner is nobody's to keep.
        Judgement::Remove if change.old.owner(entry.mark).is_err() => return None,
        Judgement::Remove => requester::rule(facts, Act::Remove, change.old, inherited)?,
        Judgement::Set | Judgement::Accept => fit(new)
            .or_else(|| one_owner::rule(facts, entry))
            .or_else(|| requester::rule(facts, Act::Set, new, false))?,
        // The controller's owner was judged on the controller: valid, and in its scope.
        Judgement::Inherit => {
            one_owner::rule(facts, entry).or_else(|| requester::rule(facts, Act::Set, new, true))?
        }
    };
    violation(change, reason)
}

/// Whether `entry` is a template's claim of `owner` that the object keeps too, so that
/// `writes: Owner` judges it once, on the object. A template claiming another owner than the
/// object — or the only claim, on an object without a mark — is judged on its own: whoever
/// writes the template decides what becomes that owner's.
fn judged_on_the_object(facts: &Facts<'_>, entry: &Entry<'_>, owner: Claim<'_>) -> bool {
    entry.template.is_some()
        && facts.object_entries().any(|object| {
            let kept = object.new.or(object.old).filter(|_| !object.moves());
            kept.is_some_and(|kept| !kept.is_none() && kept.id() == owner.id())
        })
}

/// Denies with every violation; otherwise mutates where the settings ask for it. Under
/// `stampOnly` nothing is denied.
fn decide<'a>(facts: &Facts<'a>, violations: Vec<Violation<'a>>, consume: bool) -> Decision<'a> {
    if !violations.is_empty() && !facts.settings.stamp_only {
        return Decision::Deny(violations);
    }
    match Mutation::of(facts, consume) {
        mutation if mutation == Mutation::default() => Decision::Allow,
        mutation => Decision::Mutate(mutation),
    }
}
