//! The Kubewarden metadata a module carries, as `kwctl annotate` embeds it and `kwctl run`
//! reads it: policy-evaluator's `Metadata` (`src/policy_metadata.rs`), serialised as JSON
//! into the Wasm custom section `io.kubewarden.metadata` (`KUBEWARDEN_CUSTOM_SECTION_METADATA`
//! in policy-evaluator's `src/constants.rs`).
//!
//! A module without the section is *bare*; one with it, *annotated*. What the metadata grants
//! is [`granted_resources`].

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ops::Range;

use anyhow::{Context, Result, bail};
pub use kubewarden_policy_sdk::metadata::ProtocolVersion;
use serde::{Deserialize, Serialize};
use wasm_encoder::{Encode, Section};
use wasmparser::{Encoding, Parser, Payload};

/// The name of the custom section that holds the metadata.
pub const SECTION: &str = "io.kubewarden.metadata";

/// The annotation `kwctl annotate --usage-path FILE` stores the file in
/// (`KUBEWARDEN_ANNOTATION_POLICY_USAGE`).
pub const USAGE_ANNOTATION: &str = "io.kubewarden.policy.usage";

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

    /// Whether the metadata is valid, as policy-evaluator's `Metadata::validate` (its
    /// `validator` attributes) judges it before `kwctl annotate` writes it.
    pub fn validate(&self) -> Result<()> {
        if self.protocol_version.is_none() {
            bail!("protocolVersion: required");
        }
        if self.execution_mode == ExecutionMode::KubewardenWapc
            && self.protocol_version == Some(ProtocolVersion::Unknown)
        {
            bail!("Must specify a valid protocol version");
        }
        for (index, rule) in self.rules.iter().enumerate() {
            rule.validate().with_context(|| format!("rules[{index}]"))?;
        }
        for resource in &self.context_aware_resources {
            if resource.api_version.is_empty() || resource.kind.is_empty() {
                bail!("contextAwareResources: apiVersion and kind must not be empty");
            }
        }
        Ok(())
    }
}

impl Rule {
    /// policy-evaluator's `Rule` validation: every list non-empty, `*` alone, the resources
    /// as Kubernetes allows them.
    fn validate(&self) -> Result<()> {
        let lists = [
            ("apiGroups", &self.api_groups),
            ("apiVersions", &self.api_versions),
            ("resources", &self.resources),
        ];
        for (field, list) in lists {
            if list.is_empty() {
                bail!("{field}: must not be empty");
            }
        }
        if self.operations.is_empty() {
            bail!("operations: must not be empty");
        }
        for (field, list) in [
            ("apiGroups", &self.api_groups),
            ("apiVersions", &self.api_versions),
        ] {
            if list.iter().any(|item| item == "*") && list.len() > 1 {
                bail!("{field}: No other elements can be defined when '*' is used");
            }
        }
        if self.operations.contains(&Operation::All) && self.operations.len() > 1 {
            bail!("operations: No other elements can be defined when '*' is used");
        }
        validate_resources(&self.resources).context("resources")
    }
}

/// policy-evaluator's `validate_resources`, its transposition of Kubernetes' admission rule
/// check, kept as it is: `has_resource_without_subresource` is the verdict on the *last*
/// resource without a subresource, so `["pods", "*"]` passes and `["*", "pods"]` does not.
fn validate_resources(resources: &[String]) -> Result<()> {
    let mut resources_with_wildcard_subresources = HashSet::new();
    let mut subresources_with_wildcard_resource = HashSet::new();
    let mut has_double_wildcard = false;
    let mut has_single_wildcard = false;
    let mut has_resource_without_subresource = false;

    for resource in resources {
        if resource.is_empty() {
            bail!("empty resource is not allowed");
        }
        match resource.as_str() {
            "*/*" => has_double_wildcard = true,
            "*" => has_single_wildcard = true,
            _ => {}
        }
        let Some((res, sub)) = resource.split_once('/') else {
            has_resource_without_subresource = resource != "*";
            continue;
        };
        if resources_with_wildcard_subresources.contains(res) {
            bail!("if '{resource}/*' is present, must not specify {res}");
        }
        if subresources_with_wildcard_resource.contains(sub) {
            bail!("if '*/{sub}' is present, must not specify {resource}");
        }
        if sub == "*" {
            resources_with_wildcard_subresources.insert(res);
        }
        if res == "*" {
            subresources_with_wildcard_resource.insert(sub);
        }
    }
    if resources.len() > 1 && has_double_wildcard {
        bail!("if '*/*' is present, must not specify other resources");
    }
    if has_single_wildcard && has_resource_without_subresource {
        bail!("if '*' is present, must not specify other resources without subresources");
    }
    Ok(())
}

/// A custom section of a Wasm binary: its name, and where it and its data lie in the binary.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CustomSection {
    name: String,
    /// The whole section, id and size included.
    section: Range<usize>,
    data: Range<usize>,
}

/// The custom sections of a Wasm core module, in order, as wasmparser frames them. A section's
/// header starts where the section before it ends (the first one's, after the preamble).
fn custom_sections(module: &[u8]) -> Result<Vec<CustomSection>> {
    let mut sections = Vec::new();
    let mut previous_end = 0;
    for payload in Parser::new(0).parse_all(module) {
        let payload = payload?;
        match &payload {
            Payload::Version {
                encoding, range, ..
            } => {
                if *encoding != Encoding::Module {
                    bail!("not a WebAssembly core module (a component)");
                }
                previous_end = range.end;
            }
            Payload::CustomSection(reader) => {
                sections.push(CustomSection {
                    name: reader.name().to_owned(),
                    section: previous_end..reader.range().end,
                    data: reader.data_offset()..reader.range().end,
                });
                previous_end = reader.range().end;
            }
            _ => {
                if let Some((_, range)) = payload.as_section() {
                    previous_end = range.end;
                }
            }
        }
    }
    Ok(sections)
}

/// Whether the module carries a metadata section already.
pub fn is_annotated(module: &[u8]) -> Result<bool> {
    Ok(custom_sections(module)?
        .iter()
        .any(|section| section.name == SECTION))
}

/// The module with `metadata` as its only metadata section, appended after the module's
/// other sections (where kwctl's walrus writes custom sections); every metadata section it
/// had is dropped, as kwctl's `take_metadata_section` drops them. The JSON is
/// `serde_json::to_vec` of the metadata, as kwctl writes it.
pub fn embed(module: &[u8], metadata: &Metadata) -> Result<Vec<u8>> {
    let sections = custom_sections(module)?;
    let mut out = Vec::with_capacity(module.len());
    let mut kept_from = 0;
    for section in sections.iter().filter(|section| section.name == SECTION) {
        out.extend_from_slice(&module[kept_from..section.section.start]);
        kept_from = section.section.end;
    }
    out.extend_from_slice(&module[kept_from..]);

    let section = wasm_encoder::CustomSection {
        name: SECTION.into(),
        data: serde_json::to_vec(metadata)?.into(),
    };
    out.push(section.id());
    section.encode(&mut out);
    Ok(out)
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
    fn the_repository_metadata_is_valid_once_its_protocol_is_known() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../metadata.yml"))
            .unwrap();
        let mut metadata = metadata(&text);
        assert!(metadata.validate().is_err());
        metadata.protocol_version = Some(ProtocolVersion::V1);
        metadata.validate().unwrap();
    }

    #[test]
    fn rule_validation_is_policy_evaluators() {
        let rule = |resources: &[&str], operations: Vec<Operation>| Rule {
            api_groups: vec![String::new()],
            api_versions: vec!["v1".to_owned()],
            resources: resources.iter().map(|&r| r.to_owned()).collect(),
            operations,
        };
        let create = || vec![Operation::Create];
        // (rule, valid)
        let cases = [
            (rule(&["pods"], create()), true),
            (rule(&["*", "a/b", "a/*", "*/b"], create()), true),
            (rule(&["*/status", "namespaces/finalize"], create()), true),
            (rule(&["pods", "*"], create()), true),
            (rule(&["*", "pods"], create()), false),
            (rule(&["*/*", "pods"], create()), false),
            (rule(&[""], create()), false),
            (rule(&[], create()), false),
            (rule(&["pods"], vec![]), false),
            (
                rule(&["pods"], vec![Operation::All, Operation::Create]),
                false,
            ),
            (
                Rule {
                    api_groups: vec!["*".to_owned(), "apps".to_owned()],
                    ..rule(&["pods"], create())
                },
                false,
            ),
        ];
        for (rule, valid) in cases {
            assert_eq!(rule.validate().is_ok(), valid, "{rule:?}");
        }
    }

    #[test]
    fn embedding_then_reading_gives_the_metadata_back() {
        let mut metadata = metadata(RULES);
        metadata.protocol_version = Some(ProtocolVersion::V1);
        let bare = wasm_encoder::Module::new().finish();
        assert_eq!(Metadata::from_module(&bare).unwrap(), None);
        assert!(!is_annotated(&bare).unwrap());

        let annotated = embed(&bare, &metadata).unwrap();
        assert!(is_annotated(&annotated).unwrap());
        assert_eq!(
            Metadata::from_module(&annotated).unwrap(),
            Some(metadata.clone())
        );

        metadata.mutating = true;
        let again = embed(&annotated, &metadata).unwrap();
        let sections = custom_sections(&again).unwrap();
        assert_eq!(sections.len(), 1, "{sections:?}");
        assert_eq!(Metadata::from_module(&again).unwrap(), Some(metadata));
    }

    #[test]
    fn other_sections_are_kept_as_they_are() {
        // A type section (id 1, one type `[] -> []`), then a custom section "name".
        let mut module = wasm_encoder::Module::new();
        let mut types = wasm_encoder::TypeSection::new();
        types.ty().function([], []);
        module
            .section(&types)
            .section(&wasm_encoder::CustomSection {
                name: "name".into(),
                data: b"".into(),
            });
        let module = module.finish();
        let mut metadata = metadata(RULES);
        metadata.protocol_version = Some(ProtocolVersion::V1);
        let annotated = embed(&module, &metadata).unwrap();
        assert!(annotated.starts_with(&module));
        let names: Vec<_> = custom_sections(&annotated)
            .unwrap()
            .into_iter()
            .map(|section| section.name)
            .collect();
        assert_eq!(names, ["name", SECTION]);
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
