//! kwctl's flags for a policy, its settings and the request, and what they load: the module
//! with the capabilities kwctl would grant it, settings the policy accepts, the request as
//! kwctl reads it. `runner run` and the bench harness (`bench/wasm`) share them.

use std::{path::PathBuf, time::Duration};

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::{
    host::{Cache, Policy, capabilities::Capabilities},
    input::{self, Settings},
    metadata::{Metadata, granted_resources},
    session::Session,
};

/// The policy, its settings and the request, named as `kwctl run` names them.
#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// Policy settings as a JSON object.
    #[arg(long, value_name = "JSON", conflicts_with = "settings_path")]
    pub settings_json: Option<String>,

    /// File with the policy settings, JSON or YAML.
    #[arg(short = 's', long, value_name = "FILE")]
    pub settings_path: Option<PathBuf>,

    /// File with the AdmissionRequest or a whole AdmissionReview ("-" for stdin).
    #[arg(short = 'r', long, value_name = "FILE")]
    pub request_path: String,

    /// How long each guest call may run, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: u64,

    /// Print the policy's log records on stderr.
    #[arg(short, long)]
    pub verbose: bool,

    /// Grant access to the Kubernetes resources defined inside of the policy's
    /// `contextAwareResources` section (an annotated module's; a bare module gets none).
    #[arg(long)]
    pub allow_context_aware: bool,

    /// Answer the policy's Kubernetes lookups from this session file, as kwctl records it; a
    /// lookup the session does not record, or an exchange left unused, fails the run.
    #[arg(long, value_name = "FILE")]
    pub replay_host_capabilities_interactions: Option<PathBuf>,

    /// The policy module (.wasm).
    #[arg(value_name = "POLICY.wasm")]
    pub policy: PathBuf,
}

/// What the request file holds.
#[derive(Debug, Clone, Copy)]
pub enum RequestFile {
    /// An AdmissionRequest, or an AdmissionReview.
    Request,
    /// A stored object, to replay as the audit scanner does.
    AuditedObject,
}

/// Everything an evaluation needs, read from the command line.
pub struct Loaded {
    pub policy: Policy,
    pub settings: Settings,
    pub request: serde_json::Value,
}

impl PolicyArgs {
    /// Read the settings, the request and the module, and check the
    /// settings with the policy, failing as kwctl does when they are invalid.
    pub fn load(&self, cache: Cache, file: RequestFile) -> Result<Loaded> {
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

    /// The host capabilities the command line grants: the Kubernetes kinds as kwctl grants
    /// them, with kwctl's notices on stderr, and the session to replay.
    pub fn capabilities(&self) -> Result<Capabilities> {
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
