//! The skip rate: for each example setup, the fraction of a generated hour of cluster writes
//! (`tests/support/traffic.rs`) that the match conditions send to policy-server, and the
//! fraction the policy acts on (denies, mutates or warns) — the least any exact filter sends;
//! and, of Kubernetes' own control plane's writes, those the conditions would send if the control
//! plane were judged like anyone, those sent, and those sent that the policy allows anyway.
//!
//! ```console
//! cargo run -p single-owner-manifest --example skip-rate [-- --smoke] [-- --categories]
//! ```
//!
//! `--smoke` runs a twentieth of the mix (every category kept), to check that it all works.
//! Fails if a request the policy acts on is not sent, if a setup without stamping sends 10% or
//! more of the writes, if a control-plane write that the policy allows is sent, or if the
//! policy looks up objects' controllers (`parentKinds`) on more than 0.1% of the writes.

#[path = "../tests/support/mod.rs"]
mod support;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use support::traffic::{self, LEASES, Tally};
use support::{Conditions, Verdict, lookups, settings, variables, verdict};

/// The goal for setups without stamping: under this fraction of the writes sent.
const GOAL: f64 = 0.10;

/// The goal for lookups of controllers: at most this fraction of the writes makes one.
const LOOKUP_GOAL: f64 = 0.001;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let smoke = args.iter().any(|arg| arg == "--smoke");
    let categories = args.iter().any(|arg| arg == "--categories");
    let divisor = if smoke { 20 } else { 1 };
    let root = support::root();

    println!(
        "Match conditions on a generated hour of cluster writes{} (manifest/tests/support/traffic.rs)\n",
        if smoke {
            ", a twentieth of it (--smoke)"
        } else {
            ""
        }
    );
    println!(
        "| setup | requests | sent | acted on | sent, leases left out | acted on, leases left out \
         | control-plane writes | sent if judged like anyone | sent | sent, allowed anyway \
         | lookups |"
    );
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    let mut failed = false;
    let mut tallies = Vec::new();
    let mut evaluation = Duration::ZERO;
    let mut evaluations = 0u32;
    let setups = support::examples();
    // With `stamp: true`, also the two policies `make manifest` writes: the stamping twin and
    // the judging one.
    let setups: Vec<(String, String)> = setups
        .iter()
        .flat_map(|setup| {
            let text =
                std::fs::read_to_string(root.join(format!("examples/{setup}/settings.yaml")))
                    .unwrap();
            let twins = text.lines().any(|line| line == "stamp: true");
            let mut all = vec![(setup.clone(), text.clone())];
            if twins {
                all.push((
                    format!("{setup}, stamping twin"),
                    format!("{text}stampOnly: true\n"),
                ));
                all.push((
                    format!("{setup}, judging twin"),
                    text.replace("\nstamp: true\n", "\nstamp: false\n"),
                ));
            }
            all
        })
        .collect();
    for (setup, text) in &setups {
        let (parsed, json) = settings(text);
        let conditions = Conditions::of(&parsed);
        let untrusting = Conditions::without_trust(&parsed);
        let mut tally = Tally::default();
        let mut looked_up = 0;
        for request in traffic::mix(&parsed, divisor) {
            let variables = variables(&request.request);
            let start = Instant::now();
            let evaluated = conditions.evaluate(&variables);
            evaluation += start.elapsed();
            let sent = match evaluated {
                Ok(sent) => sent,
                Err(error) => {
                    eprintln!("{setup}, {}: {error}", request.category);
                    failed = true;
                    true
                }
            };
            let acted = match verdict(&request.request, &json) {
                Verdict::Acted => true,
                Verdict::Allowed => false,
                Verdict::Unreadable => {
                    eprintln!(
                        "{setup}, {}: unreadable: {}",
                        request.category, request.request
                    );
                    failed = true;
                    false
                }
            };
            if acted && !sent {
                eprintln!(
                    "{setup}, {}: acted on, not sent: {}",
                    request.category, request.request
                );
                failed = true;
            }
            if request.control_plane && sent && !acted {
                eprintln!(
                    "{setup}, {}: the control plane's, allowed, yet sent: {}",
                    request.category, request.request
                );
                failed = true;
            }
            // A lookup follows a denial only, with every copy inherited at best.
            if acted {
                looked_up += lookups(&request.request, &json);
            }
            let untrusted = request.control_plane && untrusting.evaluate(&variables) == Ok(true);
            tally.add(&request, sent, untrusted, acted);
            evaluations += 1;
        }
        let all = tally.totals(|_| true);
        let rest = tally.totals(|category| LEASES.iter().all(|lease| lease.name() != category));
        println!(
            "| {setup}{} | {} | {} ({}) | {} ({}) | {} of {} ({}) | {} ({}) | {} | {} | {} ({}) | {} | {} ({}) |",
            if parsed.stamp { " (stamp)" } else { "" },
            all.requests,
            all.sent,
            percent(all.sent, all.requests),
            all.acted,
            percent(all.acted, all.requests),
            rest.sent,
            rest.requests,
            percent(rest.sent, rest.requests),
            rest.acted,
            percent(rest.acted, rest.requests),
            all.control_plane,
            all.control_plane_untrusted,
            all.control_plane_sent,
            percent(all.control_plane_sent, all.control_plane),
            all.control_plane_sent_allowed,
            looked_up,
            percent(looked_up, all.requests),
        );
        if looked_up as f64 > LOOKUP_GOAL * all.requests as f64 {
            eprintln!(
                "{setup}: looks up controllers on {} of the writes, over the goal of {LOOKUP_GOAL}",
                percent(looked_up, all.requests)
            );
            failed = true;
        }
        let fraction = all.sent as f64 / all.requests as f64;
        if !parsed.stamp && fraction >= GOAL {
            eprintln!(
                "{setup}: sends {} of the writes, over the goal of {GOAL}",
                percent(all.sent, all.requests)
            );
            failed = true;
        }
        tallies.push((setup, tally));
    }
    println!(
        "\nEvaluating the conditions took {:.1} µs per request (cel-rust in this build, on this \
         machine: an indication, not the API server's cel-go).",
        evaluation.as_secs_f64() * 1e6 / f64::from(evaluations.max(1))
    );
    if categories {
        for (setup, tally) in &tallies {
            println!(
                "\n{setup}: | category | requests | sent | acted on | control-plane writes \
                 | sent if judged like anyone | sent |"
            );
            for row in &tally.rows {
                println!(
                    "| {} | {} | {} | {} | {} | {} | {} |",
                    row.category,
                    row.requests,
                    row.sent,
                    row.acted,
                    row.control_plane,
                    row.control_plane_untrusted,
                    row.control_plane_sent
                );
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn percent(part: usize, whole: usize) -> String {
    format!("{:.2}%", 100.0 * part as f64 / whole.max(1) as f64)
}
