//! The policy's security invariants, checked on generated settings and requests
//! (`PROPTEST_CASES`, 256 by default; the same cases every run unless `PROPTEST_RNG_SEED` draws
//! others).
//!
//! Each property runs its own [`TestRunner`], counts how often it met the cases it is about (an
//! owner change, a stamp, a foreign DELETE, …) and fails when a count falls under its floor, a
//! share of the cases run: a property whose generator stopped reaching its case proves nothing.
//! The generators reach the deny paths by choice, not by filtering: they choose the owner marks
//! the settings guard — labels and annotations, kind and namespace pairs, Argo CD tracking ids,
//! marks linked by `sameOwnerAs` — then for each mark the stored owner and the new one as the
//! same, another, none, an invalid or an out-of-scope owner (or a tracking id copied from
//! another object, which names none); the offer, per mark, live or stale, across marks or in the
//! form before 0.2.0; and the requester as one acting for the old owner, the new one, both,
//! another or none, exempt or not — building the identities that make it so. What each mark
//! claims, who owns the object under it and what an offer says are read here, by the model's
//! own [`Shape::read`](model::Shape::read) and [`parse_offer`](model::parse_offer), never by the
//! policy's.
//!
//! Who acts for which owner is computed here, by the [`oracle`], from the identities alone; the
//! policy is never asked. Likewise, who the trusted control plane is and what it is trusted with
//! is restated by the [`trust`] oracle, from Kubernetes' RBAC roles and the settings'
//! `trustedWriters`; a request the oracle does not trust is compared with a person's — the same
//! request by `alice`, in the same groups, bound by the same identities and exemptions.
//!
//! The files: this one runs a property ([`check`], counting in a [`Tally`]). The one model of
//! the rules is `model/` — `world.rs` (owner mark shapes, places, owners, offers), `case.rs`
//! (settings and a request, as models and as JSON, and what a case is due) and `response.rs`
//! (the parts of the policy's answer the properties read) — with the two oracles, `oracle.rs`
//! and `trust.rs`. The generators more than one property draws from are in `generators/`:
//! `mod.rs` (the choices and their weights), `scenario.rs` (a case built from them) and
//! `requesters.rs` (the control plane's writers and the person compared with them). The
//! properties, by invariant, each file with the generators only its properties draw from:
//! `owners.rs` (1, 2, 5: owners change hands only through an offer, who sets and removes them,
//! scope), `writes.rs` (3: `writes: Owner`), `stamping.rs` (4), `answers.rs` (6, 7: the answer's
//! shape, order and repetition), `service_accounts.rs` (8), `audit.rs` (9), `control_plane.rs`
//! (10, 12), `look_alikes.rs` (11), `templates.rs` (13), `deletions.rs` (14), `marks.rs` (15–18:
//! one owner across marks, offers across marks, an offer as its own mark's), `derivation.rs` (19),
//! `bindings.rs` (20), `children.rs` (21) and `leftovers.rs` (24).

#[path = "../common/mod.rs"]
mod common;

mod generators;
mod model;
mod oracle;
mod trust;

mod answers;
mod audit;
mod bindings;
mod children;
mod control_plane;
mod deletions;
mod derivation;
mod leftovers;
mod look_alikes;
mod marks;
mod owners;
mod service_accounts;
mod stamping;
mod templates;
mod writes;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseResult, TestRunner};

/// How often a property met each of the cases it counts.
#[derive(Default)]
struct Tally(RefCell<BTreeMap<String, usize>>);

impl Tally {
    /// Counts `what` when `seen`.
    pub(crate) fn count(&self, seen: bool, what: &str) {
        self.count_named(seen, what.to_owned());
    }

    pub(crate) fn count_named(&self, seen: bool, what: String) {
        let mut counts = self.0.borrow_mut();
        let count = counts.entry(what).or_default();
        *count += usize::from(seen);
    }
}

/// Runs `test` on the configured number of cases (`PROPTEST_CASES`), then checks that each
/// counted case of `floors` was seen in at least that many percent of them.
pub(crate) fn check<S>(
    strategy: S,
    floors: &[(&str, f64)],
    test: impl Fn(S::Value, &Tally) -> TestCaseResult,
) where
    S: Strategy,
    S::Value: fmt::Debug,
{
    // No regression files: the properties run in a worktree other people edit. The floors are
    // shares of a sample, so the sample is the same from run to run (a share just under its
    // floor in one random run in twenty would fail CI for nothing); PROPTEST_RNG_SEED draws
    // another.
    let mut config = Config {
        failure_persistence: None,
        ..Config::default()
    };
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = RngSeed::Fixed(0x5eed_0f0e_0a11);
    }
    let cases = config.cases as usize;
    let tally = Tally::default();
    let mut runner = TestRunner::new(config);
    if let Err(error) = runner.run(&strategy, |value| test(value, &tally)) {
        panic!("{error}");
    }
    let counts = tally.0.into_inner();
    let mut short = Vec::new();
    for &(what, percent) in floors {
        let floor = (cases as f64 * percent / 100.0).ceil() as usize;
        let seen = counts.get(what).copied().unwrap_or(0);
        eprintln!("{seen:>6} (floor {floor:>4}) {what}");
        if seen < floor {
            short.push(format!(
                "{what}: seen {seen} times in {cases} cases, floor {floor}"
            ));
        }
    }
    assert!(
        short.is_empty(),
        "the generator no longer reaches what the property is about:\n{}",
        short.join("\n")
    );
}
