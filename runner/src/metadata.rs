//! The Kubewarden metadata a module carries, as `kwctl annotate` embeds it and `kwctl run`
//! reads it: policy-evaluator's `Metadata` (`src/policy_metadata.rs`), serialised as JSON
//! into the Wasm custom section `io.kubewarden.metadata` (`KUBEWARDEN_CUSTOM_SECTION_METADATA`
//! in policy-evaluator's `src/constants.rs`).
//!
//! A module without the section is *bare*; one with it, *annotated*. What the metadata grants
//! is [`granted_resources`].

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// The name of the custom section that holds the metadata.
pub const SECTION: &str = "io.kubewarden.metadata";

/// A Kubernetes kind a policy may read at evaluation time (policy-evaluator's
/// `ContextAwareResource`): granted only when `apiVersion` and `kind` both equal the call's.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextAwareResource {
    pub api_version: String,
    pub kind: String,
}

/// policy-evaluator's `Metadata`, field for field, with its serde attributes: what
/// `metadata.yml` holds and what the custom section carries. Unknown fields (such as the
/// retired `contextAware`) are dropped, as kwctl drops them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// Set by `annotate` from the module itself.
    pub protocol_version: Option<ProtocolVersion>,
    pub rules: Vec<Rule>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    pub mutating: bool,
    #[serde(default = "default_true")]
    pub background_audit: bool,
    #[serde(default)]
    pub execution_mode: ExecutionMode,
    #[serde(default)]
    pub policy_type: PolicyType,
    #[serde(default)]
    pub context_aware_resources: BTreeSet<ContextAwareResource>,
    /// A semver version in policy-evaluator; kept as written here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum_kubewarden_version: Option<String>,
}

const fn default_true() -> bool {
    true
}

/// The SDK's `ProtocolVersion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProtocolVersion {
    #[serde(rename = "Unknown")]
    Unknown,
    #[serde(rename = "v1")]
    V1,
}

/// policy-evaluator's `PolicyExecutionMode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExecutionMode {
    #[default]
    #[serde(rename = "kubewarden-wapc")]
    KubewardenWapc,
    #[serde(rename = "opa")]
    Opa,
    #[serde(rename = "gatekeeper")]
    OpaGatekeeper,
    #[serde(rename = "wasi")]
    Wasi,
}

/// policy-evaluator's `PolicyType`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PolicyType {
    #[default]
    #[serde(rename = "kubernetes")]
    Kubernetes,
    #[serde(rename = "raw")]
    Raw,
}

/// policy-evaluator's `Rule`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    pub operations: Vec<Operation>,
}

/// policy-evaluator's `Operation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Operation {
    #[serde(rename = "CREATE")]
    Create,
    #[serde(rename = "UPDATE")]
    Update,
    #[serde(rename = "DELETE")]
    Delete,
    #[serde(rename = "CONNECT")]
    Connect,
    #[serde(rename = "*")]
    All,
}

/// The Kubernetes kinds a module may read when run as `kwctl run [--allow-context-aware]
/// MODULE` runs it (`build_context_aware_allowed_resources` in kwctl's `src/run/evaluator.rs`):
/// without the flag none; with it, those its metadata lists, and none for a bare module.
/// (kwctl grants a ClusterAdmissionPolicy file's `spec.contextAwareResources` instead, flag
/// or not; the runner takes modules only.)
pub fn granted_resources(
    metadata: Option<&Metadata>,
    allow_context_aware: bool,
) -> BTreeSet<ContextAwareResource> {
    match metadata {
        Some(metadata) if allow_context_aware => metadata.context_aware_resources.clone(),
        _ => BTreeSet::new(),
    }
}

impl Metadata {
    /// The metadata in a module's custom section, `None` for a bare module. As
    /// policy-evaluator's `Metadata::from_contents`, the first such section counts.
    pub fn from_module(module: &[u8]) -> Result<Option<Self>> {
        let sections = custom_sections(module).context("cannot read the Wasm module")?;
        let Some(section) = sections.iter().find(|section| section.name == SECTION) else {
            return Ok(None);
        };
        let metadata = serde_json::from_slice(&module[section.data.clone()])
            .with_context(|| format!("cannot read the module's {SECTION} custom section"))?;
        Ok(Some(metadata))
    }
}

/// A custom section of a Wasm binary: its name, and where its data lies in the binary.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CustomSection {
    name: String,
    /// The whole section, id and size included.
    section: std::ops::Range<usize>,
    data: std::ops::Range<usize>,
}

/// The magic number and version that open a Wasm core module.
const WASM_HEADER: [u8; 8] = *b"\0asm\x01\0\0\0";

/// The custom sections of a Wasm core module, in order. Only the section framing is read
/// (id, size, a custom section's name), as the binary format lays it out.
fn custom_sections(module: &[u8]) -> Result<Vec<CustomSection>> {
    if !module.starts_with(&WASM_HEADER) {
        bail!("not a WebAssembly binary module (no \\0asm version 1 header)");
    }
    let mut sections = Vec::new();
    let mut at = WASM_HEADER.len();
    while at < module.len() {
        let start = at;
        let id = module[at];
        at += 1;
        let size = read_u32(module, &mut at)? as usize;
        let end = at
            .checked_add(size)
            .filter(|&end| end <= module.len())
            .with_context(|| format!("section at byte {start} runs past the end of the module"))?;
        if id == 0 {
            let length = read_u32(module, &mut at)? as usize;
            let name = at
                .checked_add(length)
                .filter(|&name_end| name_end <= end)
                .and_then(|name_end| std::str::from_utf8(&module[at..name_end]).ok())
                .with_context(|| format!("custom section at byte {start} has a bad name"))?;
            sections.push(CustomSection {
                name: name.to_owned(),
                section: start..end,
                data: at + length..end,
            });
        }
        at = end;
    }
    Ok(sections)
}

/// An unsigned LEB128 `u32` at `*at`, moving `*at` past it.
fn read_u32(bytes: &[u8], at: &mut usize) -> Result<u32> {
    let mut value: u32 = 0;
    for shift in (0..35).step_by(7) {
        let byte = *bytes.get(*at).context("the module ends inside a number")?;
        *at += 1;
        value |= u32::from(byte & 0x7f)
            .checked_shl(shift)
            .filter(|_| shift < 28 || byte & 0x70 == 0)
            .context("a number in the module is too large")?;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    bail!("a number in the module is too long")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn resource(api_version: &str, kind: &str) -> ContextAwareResource {
        ContextAwareResource {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        }
    }

    fn metadata(yaml: &str) -> Metadata {
        serde_yaml::from_str(yaml).unwrap()
    }

    const RULES: &str = "rules:\n- apiGroups: ['']\n  apiVersions: [v1]\n  resources: [pods]\n  \
                         operations: [CREATE]\nmutating: false\n";

    #[test]
    fn kwctl_grants_the_metadata_kinds_only_with_the_flag_and_only_to_an_annotated_module() {
        let listed = metadata(&format!(
            "{RULES}contextAwareResources:\n- apiVersion: camel.apache.org/v1\n  kind: Integration\n"
        ));
        let integration = BTreeSet::from([resource("camel.apache.org/v1", "Integration")]);
        let none = BTreeSet::new();
        // (metadata, --allow-context-aware, granted)
        let cases = [
            (Some(&listed), true, &integration),
            (Some(&listed), false, &none),
            (None, true, &none),
            (None, false, &none),
            (Some(&metadata(RULES)), true, &none),
        ];
        for (metadata, allow, granted) in cases {
            assert_eq!(
                &granted_resources(metadata, allow),
                granted,
                "{metadata:?} {allow}"
            );
        }
    }

    #[test]
    fn metadata_without_context_aware_resources_reads_as_none_and_serialises_as_kwctl_does() {
        let mut read = metadata(&format!("{RULES}contextAware: false\n"));
        read.protocol_version = Some(ProtocolVersion::V1);
        assert_eq!(
            serde_json::to_value(&read).unwrap(),
            json!({
                "protocolVersion": "v1",
                "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                           "operations": ["CREATE"]}],
                "mutating": false,
                "backgroundAudit": true,
                "executionMode": "kubewarden-wapc",
                "policyType": "kubernetes",
                "contextAwareResources": [],
            })
        );
    }

    #[test]
    fn a_broken_module_is_an_error_not_a_panic() {
        for module in [
            &b"not wasm"[..],
            &[0, b'a', b's', b'm', 1, 0, 0, 0, 0, 9, 1][..],
            &[0, b'a', b's', b'm', 1, 0, 0, 0, 0, 0x80][..],
            &[0, b'a', b's', b'm', 1, 0, 0, 0, 0, 2, 5, b'x'][..],
            &[
                0, b'a', b's', b'm', 1, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x7f,
            ][..],
        ] {
            assert!(Metadata::from_module(module).is_err(), "{module:?}");
        }
    }
}
