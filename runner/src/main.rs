//! `runner`: runs a Kubewarden waPC policy module on wasmtime the way
//! policy-server and `kwctl run` do, for end-to-end tests and benchmarks.
//!
//! `runner run` prints the `AdmissionResponse` as `kwctl run` does (one
//! compact JSON line on stdout, exit 0 whatever the verdict); invalid
//! settings or unusable input files are errors (message on stderr, exit 1),
//! and so are host calls that depart from a replayed session.
//! `runner bench` times evaluations, each on a fresh instance.
//! `runner annotate` embeds metadata in a module as `kwctl annotate` does.

mod annotate;
mod bench;
mod host;
mod input;
mod metadata;
mod response;
mod session;

use std::{path::PathBuf, process::ExitCode, time::Duration};

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};

use crate::{
    annotate::Annotate,
    host::{Cache, Policy, capabilities::Capabilities},
    input::Settings,
    metadata::{Metadata, granted_resources},
    session::Session,
};

impl Cache {
    /// The cache as `--disable-wasmtime-cache` asks.
    fn from_flag(disabled: bool) -> Self {
        if disabled { Self::Off } else { Self::On }
    }
}

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
    /// Time evaluations of a request, each on a fresh instance.
    Bench(BenchArgs),
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

/// The policy, its settings and the request, named as `kwctl run` names them.
#[derive(Debug, Args)]
struct PolicyArgs {
    /// Policy settings as a JSON object.
    #[arg(long, value_name = "JSON", conflicts_with = "settings_path")]
    settings_json: Option<String>,

    /// File with the policy settings, JSON or YAML.
    #[arg(short = 's', long, value_name = "FILE")]
    settings_path: Option<PathBuf>,

    /// File with the AdmissionRequest or a whole AdmissionReview ("-" for stdin).
    #[arg(short = 'r', long, value_name = "FILE")]
    request_path: String,

    /// How long each guest call may run, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000,
          value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: u64,

    /// Print the policy's log records on stderr.
    #[arg(short, long)]
    verbose: bool,

    /// Grant access to the Kubernetes resources defined inside of the policy's
    /// `contextAwareResources` section (an annotated module's; a bare module gets none).
    #[arg(long)]
    allow_context_aware: bool,

    /// Answer the policy's Kubernetes lookups from this session file, as kwctl records it; a
    /// lookup the session does not record, or an exchange left unused, fails the run.
    #[arg(long, value_name = "FILE")]
    replay_host_capabilities_interactions: Option<PathBuf>,

    /// The policy module (.wasm).
    #[arg(value_name = "POLICY.wasm")]
    policy: PathBuf,
}

#[derive(Debug, Args)]
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

/// What the request file holds.
#[derive(Debug, Clone, Copy)]
enum RequestFile {
    /// An AdmissionRequest, or an AdmissionReview.
    Request,
    /// A stored object, to replay as the audit scanner does.
    AuditedObject,
}

/// Everything an evaluation needs, read from the command line.
struct Loaded {
    policy: Policy,
    settings: Settings,
    request: serde_json::Value,
}

impl PolicyArgs {
    /// Read the settings, the request and the module, and check the
    /// settings with the policy, failing as kwctl does when they are invalid.
    fn load(&self, cache: Cache, file: RequestFile) -> Result<Loaded> {
        let settings =
            input::load_settings(self.settings_json.as_deref(), self.settings_path.as_deref())?;
        let request = match file {
            RequestFile::Request => input::load_request(&self.request_path)?,
            RequestFile::AuditedObject => input::load_audit_request(&self.request_path)?,
        };
        let timeout = Duration::from_millis(self.timeout_ms);
        let policy = Policy::from_file(&self.policy, timeout, self.capabilities()?, cache)?;

        let validation = policy.validate_settings(&settings);
        if !validation.valid {
            bail!(
                "Provided settings are not valid: {}",
                validation.message.unwrap_or_default()
            );
        }
        Ok(Loaded {
            policy,
            settings,
            request,
        })
    }
}

impl PolicyArgs {
    /// The host capabilities the command line grants: the Kubernetes kinds as kwctl grants
    /// them, with kwctl's notices on stderr, and the session to replay.
    fn capabilities(&self) -> Result<Capabilities> {
        let module = std::fs::read(&self.policy)
            .with_context(|| format!("Cannot read policy module {}", self.policy.display()))?;
        let metadata = Metadata::from_module(&module)
            .with_context(|| format!("Cannot read the metadata of {}", self.policy.display()))?;
        match &metadata {
            // kwctl's `build_context_aware_allowed_resources` logs these.
            Some(metadata)
                if !self.allow_context_aware && !metadata.context_aware_resources.is_empty() =>
            {
                eprintln!(
                    "warning: Policy requires access to Kubernetes resources at evaluation \
                     time. During this execution the access to Kubernetes resources is denied. \
                     This can cause the policy to not behave properly"
                );
                eprintln!(
                    "warning: Carefully review which types of Kubernetes resources the policy \
                     needs via the `inspect` command, then run the policy using the \
                     `--allow-context-aware` flag."
                );
            }
            None if self.allow_context_aware => eprintln!(
                "info: Policy is not annotated, access to Kubernetes resources is not allowed"
            ),
            _ => {}
        }
        let granted = granted_resources(metadata.as_ref(), self.allow_context_aware);
        let session = self
            .replay_host_capabilities_interactions
            .as_deref()
            .map(Session::from_file)
            .transpose()?;
        if !granted.is_empty() && session.is_none() {
            let kinds: Vec<_> = granted
                .iter()
                .map(|resource| format!("{}/{}", resource.api_version, resource.kind))
                .collect();
            bail!(
                "--allow-context-aware grants the policy {}, and the runner has no cluster to \
                 read them from: replay a session with --replay-host-capabilities-interactions \
                 FILE",
                kinds.join(", ")
            );
        }
        Ok(Capabilities {
            verbose: self.verbose,
            granted,
            session,
        })
    }
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
        Command::Bench(args) => {
            // Compiled afresh: the report gives the compile time.
            let loaded = args.policy.load(Cache::Off, RequestFile::Request)?;
            let report = bench::run(
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
