//! `runner annotate`: embed `metadata.yml` (and a README as its usage) in a module, as
//! `kwctl annotate -m METADATA -u README -o OUT MODULE` does (kwctl's `src/annotate.rs`).
//!
//! As kwctl: the YAML is read into policy-evaluator's `Metadata` (unknown fields dropped),
//! its `protocolVersion` is asked of the module (the guest's `protocol_version`), the README
//! becomes the `io.kubewarden.policy.usage` annotation, the metadata is validated, and its
//! JSON is written as the module's only `io.kubewarden.metadata` custom section. A module
//! annotated already is refused unless `--force` is given. Unlike kwctl, the runner handles
//! `kubewarden-wapc` policies only, writes no `io.kubewarden.kwctl` annotation (it is not
//! kwctl), and does not scan the module for the host capabilities it imports.

use std::{path::Path, time::Duration};

use anyhow::{Context, Result, anyhow, bail};

use crate::{
    host::{Cache, Policy, capabilities::Capabilities},
    metadata::{self, ExecutionMode, Metadata, ProtocolVersion, USAGE_ANNOTATION},
};

/// What `runner annotate` reads.
pub struct Annotate<'a> {
    pub module: &'a Path,
    pub metadata: &'a Path,
    pub usage: Option<&'a Path>,
    pub output: &'a Path,
    pub force: bool,
}

impl Annotate<'_> {
    /// Write the annotated module, failing (with kwctl's words where kwctl has them) on
    /// unreadable or invalid input.
    pub fn run(&self) -> Result<()> {
        let usage = self
            .usage
            .map(|path| {
                std::fs::read_to_string(path)
                    .map_err(|error| anyhow!("Error reading usage file: {error}"))
            })
            .transpose()?;
        let module = std::fs::read(self.module)
            .map_err(|error| anyhow!("Error reading wasm file: {error}"))?;
        if metadata::is_annotated(&module)
            .map_err(|error| anyhow!("Error parsing wasm module: {error:#}"))?
            && !self.force
        {
            bail!(
                "The policy is already annotated. Use `annotate --force` to overwrite the \
                 existing metadata"
            );
        }
        let text = std::fs::read_to_string(self.metadata)
            .map_err(|error| anyhow!("Error opening metadata file: {error}"))?;
        let metadata: Metadata = serde_yaml::from_str(&text)
            .map_err(|error| anyhow!("Error unmarshalling metadata {error}"))?;
        if metadata.execution_mode != ExecutionMode::KubewardenWapc {
            bail!(
                "the runner annotates kubewarden-wapc policies only, not executionMode {}",
                serde_json::to_string(&metadata.execution_mode)?
            );
        }
        let protocol = protocol_version(self.module)?;
        let metadata = with_module_facts(metadata, protocol, usage);
        metadata
            .validate()
            .map_err(|error| anyhow!("Metadata is invalid: {error:#}"))?;
        let annotated = metadata::embed(&module, &metadata)?;
        std::fs::write(self.output, annotated)
            .with_context(|| format!("Cannot write {}", self.output.display()))
    }
}

/// The metadata as `kwctl annotate` completes it: the protocol the module speaks, and the
/// usage text as the `io.kubewarden.policy.usage` annotation (replacing one the file has).
fn with_module_facts(
    mut metadata: Metadata,
    protocol: ProtocolVersion,
    usage: Option<String>,
) -> Metadata {
    metadata.protocol_version = Some(protocol);
    if let Some(usage) = usage {
        metadata
            .annotations
            .get_or_insert_default()
            .insert(USAGE_ANNOTATION.to_owned(), usage);
    }
    metadata
}

/// The waPC protocol the module speaks: its `protocol_version` function's answer, as
/// kwctl's backend detection asks it.
fn protocol_version(module: &Path) -> Result<ProtocolVersion> {
    let policy = Policy::from_file(
        module,
        Duration::from_secs(2),
        Capabilities::default(),
        Cache::On,
    )?;
    let answer = policy
        .call("protocol_version", b"")
        .context("Cannot detect the protocol version of the policy")?;
    serde_json::from_slice(&answer).with_context(|| {
        format!(
            "Cannot detect the protocol version of the policy: it answered {}",
            String::from_utf8_lossy(&answer)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usage_becomes_an_annotation_beside_the_files_own() {
        let metadata: Metadata = serde_yaml::from_str(
            "rules: []\nmutating: false\nannotations:\n  io.kubewarden.policy.title: t\n  \
             io.kubewarden.policy.usage: old\n",
        )
        .unwrap();
        let annotated = with_module_facts(metadata, ProtocolVersion::V1, Some("# README".into()));
        assert_eq!(annotated.protocol_version, Some(ProtocolVersion::V1));
        let annotations = annotated.annotations.unwrap();
        assert_eq!(annotations[USAGE_ANNOTATION], "# README");
        assert_eq!(annotations["io.kubewarden.policy.title"], "t");
    }
}
