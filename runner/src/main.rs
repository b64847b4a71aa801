//! `runner`: runs a Kubewarden waPC policy module on wasmtime the way
//! policy-server and `kwctl run` do, for the end-to-end tests.
//!
//! `runner run` prints the `AdmissionResponse` as `kwctl run` does (one
//! compact JSON line on stdout, exit 0 whatever the verdict); invalid
//! settings or unusable input files are errors (message on stderr, exit 1),
//! and so are host calls that depart from a replayed session.
//! `runner annotate` embeds metadata in a module as `kwctl annotate` does.

use std::{path::PathBuf, process::ExitCode, time::Duration};

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use runner::{
    annotate::Annotate,
    cli::{PolicyArgs, RequestFile},
    host::{Cache, Policy, capabilities::Capabilities},
};

/// Run a Kubewarden waPC policy module like `kwctl run` / policy-server.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Evaluate a request and print the AdmissionResponse as JSON.
    Run(RunArgs),
    /// Call a guest function with a file's bytes as they are, and print its
    /// answer: for payloads `run` cannot send (not JSON, invalid UTF-8, nested
    /// deeper than a JSON parser goes). A guest that fails is an error (exit 1).
    Call(CallArgs),
    /// Add Kubewarden metadata to a WebAssembly module, as `kwctl annotate` does.
    Annotate(AnnotateArgs),
}

#[derive(Debug, Args)]
struct AnnotateArgs {
    /// File containing the metadata.
    #[arg(short = 'm', long, value_name = "PATH")]
    metadata_path: PathBuf,

    /// File containing the usage information of the policy.
    #[arg(short = 'u', long, value_name = "PATH")]
    usage_path: Option<PathBuf>,

    /// Output file.
    #[arg(short = 'o', long, value_name = "PATH")]
    output_path: PathBuf,

    /// Overwrite the metadata of a module that is annotated already.
    #[arg(long)]
    force: bool,

    /// Path to WebAssembly module to be annotated.
    #[arg(value_name = "WASM_PATH")]
    wasm_path: PathBuf,
}

#[derive(Debug, Args)]
struct CallArgs {
    /// Compile the module even when wasmtime's cache holds it.
    #[arg(long)]
    disable_wasmtime_cache: bool,

    /// The guest function: validate, validate_settings, protocol_version.
    #[arg(value_name = "FUNCTION")]
    function: String,

    /// File whose bytes are the payload.
    #[arg(value_name = "PAYLOAD")]
    payload: PathBuf,

    /// How long the guest call may run, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000,
          value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: u64,

    /// The policy module (.wasm).
    #[arg(value_name = "POLICY.wasm")]
    policy: PathBuf,
}

#[derive(Debug, Args)]
struct RunArgs {
    #[command(flatten)]
    policy: PolicyArgs,

    /// Compile the module even when wasmtime's cache holds it.
    #[arg(long)]
    disable_wasmtime_cache: bool,

    /// The request file holds a stored object: evaluate the request Kubewarden's audit scanner
    /// sends for it (a CREATE with an empty userInfo).
    #[arg(long)]
    audit: bool,
}

fn main() -> ExitCode {
    match run(Cli::parse().command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // One line, whatever RUST_BACKTRACE says: e2e tests match on it.
            eprintln!("Error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<()> {
    match command {
        Command::Run(args) => {
            let file = if args.audit {
                RequestFile::AuditedObject
            } else {
                RequestFile::Request
            };
            let loaded = args
                .policy
                .load(Cache::from_flag(args.disable_wasmtime_cache), file)?;
            let response = loaded.policy.validate(&loaded.request, &loaded.settings);
            // Stricter than kwctl, which only warns of unused exchanges: a lookup that
            // departs from the session fails the run rather than pass for a failed lookup.
            loaded.policy.host_calls().check()?;
            println!("{}", serde_json::to_string(&response)?);
        }
        Command::Call(args) => {
            let payload = std::fs::read(&args.payload)
                .with_context(|| format!("Cannot read payload file {}", args.payload.display()))?;
            let timeout = Duration::from_millis(args.timeout_ms);
            let cache = Cache::from_flag(args.disable_wasmtime_cache);
            let policy = Policy::from_file(&args.policy, timeout, Capabilities::default(), cache)?;
            let answer = policy
                .call(&args.function, &payload)
                .with_context(|| format!("The guest's {} failed", args.function))?;
            println!("{}", String::from_utf8_lossy(&answer));
        }
        Command::Annotate(args) => Annotate {
            module: &args.wasm_path,
            metadata: &args.metadata_path,
            usage: args.usage_path.as_deref(),
            output: &args.output_path,
            force: args.force,
        }
        .run()?,
    }
    Ok(())
}
