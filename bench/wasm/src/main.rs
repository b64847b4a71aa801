//! `wasm-bench`: how long one evaluation of a policy module costs, as policy-server pays it —
//! a fresh instance each, on the runner's host (`runner/`), with `kwctl run`'s flags — and what
//! it takes: the guest's linear memory, the host calls it makes.
//!
//! ```console
//! wasm-bench [--settings-json JSON | -s FILE] -r REQUEST.json [--allow-context-aware]
//!            [--replay-host-capabilities-interactions SESSION.yml] [-n 200] [--warmup 10] [--json] POLICY.wasm
//! ```
//!
//! It reports the module's size and compile time, the latency (min/median/p99/max, µs) of
//! instantiate + `validate` over N fresh instances, the phases of an evaluation,
//! `linear_memory_bytes` (measured on a second engine with a tracking `MemoryCreator`; the timed
//! engine keeps policy-server's configuration), and `host_calls`: the host calls of an
//! evaluation by capability, `{"kubernetes/get_resource": 1}`, `{}` when it makes none (so a test
//! can check that a request costs no lookup). Each evaluation replays the session from its start,
//! as `kwctl bench` rewinds it; one that departs from it fails the bench.

mod probe;
mod report;

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use runner::{
    cli::{PolicyArgs, RequestFile},
    host::Cache,
};

/// Time evaluations of a request, each on a fresh instance.
#[derive(Debug, Parser)]
#[command(version, about)]
struct BenchArgs {
    #[command(flatten)]
    policy: PolicyArgs,

    /// Evaluations to measure.
    #[arg(short = 'n', long, default_value_t = 200,
          value_parser = clap::value_parser!(u64).range(1..))]
    iterations: u64,

    /// Evaluations to run, unmeasured, before measuring.
    #[arg(long, value_name = "N", default_value_t = 10)]
    warmup: u64,

    /// Print one JSON object instead of the human-readable summary.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    match bench(BenchArgs::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("Error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn bench(args: BenchArgs) -> Result<()> {
    // Compiled afresh: the report gives the compile time.
    let loaded = args.policy.load(Cache::Off, RequestFile::Request)?;
    let report = report::run(
        &loaded.policy,
        &loaded.request,
        &loaded.settings,
        usize::try_from(args.iterations)?,
        usize::try_from(args.warmup)?,
    )?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{report}");
    }
    Ok(())
}
