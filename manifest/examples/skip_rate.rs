//! The skip rate: for each example setup, the fraction of a generated hour of cluster writes
//! (`single_owner_manifest::traffic`) that the match conditions send to policy-server, and the
//! fraction the policy acts on (denies, mutates or warns) — the least any exact filter sends.
//!
//! ```console
//! cargo run -p single-owner-manifest --example skip-rate [-- --smoke] [-- --categories]
//! ```
//!
//! `--smoke` runs a twentieth of the mix (every category kept), to check that it all works.
//! Fails if a request the policy acts on is not sent, or if a setup without stamping sends 10%
//! or more of the writes.

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use single_owner_manifest::traffic::{self, LEASES, Tally};
use support::{Conditions, Verdict, settings, variables, verdict};

const SETUPS: [&str; 4] = ["app-id", "olm-v1", "camel-k", "helm"];

/// The goal for setups without stamping: under this fraction of the writes sent.
const GOAL: f64 = 0.10;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let smoke = args.iter().any(|arg| arg == "--smoke");
    let categories = args.iter().any(|arg| arg == "--categories");
    let divisor = if smoke { 20 } else { 1 };
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));

    println!(
        "Match conditions on a generated hour of cluster writes{} (manifest/src/traffic.rs)\n",
        if smoke {
            ", a twentieth of it (--smoke)"
        } else {
            ""
        }
    );
    println!(
        "| setup | requests | sent | acted on | sent, leases left out | acted on, leases left out |"
    );
    println!("|---|--:|--:|--:|--:|--:|");
    let mut failed = false;
    let mut tallies = Vec::new();
    let mut evaluation = Duration::ZERO;
    let mut evaluations = 0u32;
    for setup in SETUPS {
        let path = root.join(format!("examples/{setup}/settings.yaml"));
        let (parsed, json) = settings(&std::fs::read_to_string(path).unwrap());
        let conditions = Conditions::of(&parsed);
        let mut tally = Tally::default();
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
            tally.add(request.category, sent, acted);
            evaluations += 1;
        }
        let (total, sent, acted) = tally.totals(|_| true);
        let (rest, rest_sent, rest_acted) = tally.totals(|category| !LEASES.contains(&category));
        let fraction = sent as f64 / total as f64;
        println!(
            "| {setup}{} | {total} | {sent} ({}) | {acted} ({}) | {rest_sent} of {rest} ({}) | {rest_acted} ({}) |",
            if parsed.stamp { " (stamp)" } else { "" },
            percent(sent, total),
            percent(acted, total),
            percent(rest_sent, rest),
            percent(rest_acted, rest),
        );
        if !parsed.stamp && fraction >= GOAL {
            eprintln!(
                "{setup}: sends {} of the writes, over the goal of {GOAL}",
                percent(sent, total)
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
            println!("\n{setup}: | category | requests | sent | acted on |");
            for (category, total, sent, acted) in &tally.categories {
                println!("| {category} | {total} | {sent} | {acted} |");
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
