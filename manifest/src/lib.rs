//! The ClusterAdmissionPolicy for a settings file: the webhook's rules ([`rules_yaml`], which
//! metadata.yml lists too) with the operations the settings judge, and the match conditions
//! derived from the settings ([`conditions`]). A generated cluster traffic mix measures how much
//! of a cluster's writes the conditions send to policy-server (`tests/support/traffic.rs`).
//!
//! ```console
//! make manifest SETTINGS=examples/helm/settings.yaml [NAME=name] [MODE=monitor|protect]
//! ```

pub mod conditions;
mod rules;

use single_owner_policy::Settings;

pub use conditions::{MatchCondition, match_conditions};
pub use rules::{SUBRESOURCES, rules_yaml};

/// The policy module the manifests deploy (`tests` keep it equal to the examples').
pub const MODULE: &str = "registry://ghcr.io/single-owner-policy/policies/single-owner:v0.2.0";

/// Reads a settings file (YAML, or JSON, which is YAML too) as the policy reads its settings,
/// and checks it as policy-server does when it loads the policy.
pub fn read_settings(yaml: &str) -> Result<Settings, String> {
    let document: serde_json::Value = match serde_yaml::from_str(yaml) {
        Ok(document) => document,
        Err(error) => return Err(format!("not YAML: {error}")),
    };
    let json = serde_json::to_vec(&document).map_err(|error| error.to_string())?;
    let settings = Settings::from_json(&json)?;
    settings.validate()?;
    Ok(settings)
}

/// The match conditions as the `matchConditions` field of a policy's `spec`, with the comment
/// that introduces them, indented for `spec`.
pub fn match_conditions_yaml(settings: &Settings) -> String {
    let mut yaml = String::from(
        "  # Generated from the settings by `make manifest` (see docs/match-conditions.md): the\n  \
         # API server sends a request to policy-server only when the policy could deny, mutate or\n  \
         # warn on it, never a write of the control plane it trusts. Kubewarden's audit scanner\n  \
         # calls policy-server directly, without them.\n  \
         matchConditions:\n",
    );
    for condition in match_conditions(settings) {
        yaml.push_str(&format!("    - name: {}\n", condition.name));
        yaml.push_str("      expression: |-\n");
        for line in condition.expression.lines() {
            yaml.push_str(&format!("        {line}\n"));
        }
    }
    yaml
}

/// How policy-server applies the policy's verdicts (`spec.mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// Only logs and reports what it would deny; allows everything.
    Monitor,
    /// Denies.
    #[default]
    Protect,
}

impl Mode {
    /// The value of `spec.mode`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Monitor => "monitor",
            Mode::Protect => "protect",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(text: &str) -> Result<Mode, String> {
        match text {
            "monitor" => Ok(Mode::Monitor),
            "protect" => Ok(Mode::Protect),
            other => Err(format!("mode {other:?}: write monitor or protect")),
        }
    }
}

/// The ClusterAdmissionPolicy `name`, in `mode`, for the settings file whose text is
/// `settings_yaml`: the rules of `metadata.yml` with the operations the settings need, the
/// match conditions, and the settings file itself, comments included.
///
/// With `stamp: true`, two policies, upgraded together: `name`, validating, which judges the
/// final object after every mutating webhook (its settings say `stamp: false`), and
/// `name-stamp`, mutating, which only stamps and removes consumed offers (`stampOnly: true`).
/// Kubewarden sets no `reinvocationPolicy`, so a mutating webhook called after the stamping
/// one could change owner marks unjudged; the validating one sees what will be stored. Every
/// denial and warning comes from the validating policy, once.
pub fn manifest(name: &str, mode: Mode, settings_yaml: &str) -> Result<String, String> {
    let settings = read_settings(settings_yaml)?;
    if !settings.stamp || settings.stamp_only {
        return policy(name, mode, settings_yaml, Twin::Alone);
    }
    let judging = replace_stamp(settings_yaml, STAMP_FALSE)?;
    let stamping = replace_stamp(settings_yaml, STAMP_ONLY)?;
    Ok(format!(
        "{}---\n{}",
        policy(name, mode, &judging, Twin::Judging)?,
        policy(&format!("{name}-stamp"), mode, &stamping, Twin::Stamping)?
    ))
}

/// The part a policy plays beside its twin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Twin {
    /// No twin: the policy judges, and stamps if its settings say so.
    Alone,
    /// The validating policy that judges the final object.
    Judging,
    /// The mutating policy that only stamps.
    Stamping,
}

/// What replaces `stamp: true` in the judging twin's settings.
const STAMP_FALSE: &str = "# The policy single-owner-…-stamp stamps (stampOnly: true); this one judges the final object.\nstamp: false";

/// What replaces `stamp: true` in the stamping twin's settings.
const STAMP_ONLY: &str = "stamp: true\n# Only stamp and remove consumed offers: the validating twin judges the final object.\nstampOnly: true";

/// The settings text with its top-level `stamp: true` line replaced.
fn replace_stamp(settings_yaml: &str, with: &str) -> Result<String, String> {
    let mut found = false;
    let lines: Vec<String> = settings_yaml
        .lines()
        .map(|line| {
            let value = line
                .strip_prefix("stamp:")
                .map(|rest| rest.split('#').next().unwrap_or_default().trim().to_owned());
            if value.as_deref() == Some("true") {
                found = true;
                with.to_owned()
            } else {
                line.to_owned()
            }
        })
        .collect();
    if !found {
        return Err(
            "with stamp: true, write `stamp: true` on a line of its own at the top level: the \
             two policies' settings differ there"
                .to_owned(),
        );
    }
    let text = lines.join("\n") + "\n";
    read_settings(&text)?;
    Ok(text)
}

/// One ClusterAdmissionPolicy, playing `twin`.
fn policy(name: &str, mode: Mode, settings_yaml: &str, twin: Twin) -> Result<String, String> {
    let settings = read_settings(settings_yaml)?;
    let mutating = settings.stamp;
    let deletes = settings.judges_writes();
    let mut yaml = format!(
        "apiVersion: policies.kubewarden.io/v1\n\
         kind: ClusterAdmissionPolicy\n\
         metadata:\n  \
         name: {name}\n\
         spec:\n  \
         module: {MODULE}\n  \
         mode: {}\n  \
         failurePolicy: Fail\n",
        mode.as_str()
    );
    yaml.push_str(NAMESPACE_SELECTOR);
    if deletes {
        yaml.push_str("  # DELETE is evaluated because of `writes: Owner`.\n");
    }
    match twin {
        Twin::Alone if mutating => {
            yaml.push_str("  # mutating: the policy stamps owner marks (`stamp: true`).\n");
        }
        Twin::Alone => {}
        Twin::Judging => yaml.push_str(
            "  # Validating: judges the final object after every mutation, the stamping twin's\n  \
             # included (see docs/rules.md, \"Identities\"); every denial and warning comes from here.\n",
        ),
        Twin::Stamping => yaml.push_str(
            "  # Mutating: only stamps and removes consumed offers (`stampOnly: true`); denies and\n  \
             # warns of nothing, and leaves the audit to its validating twin.\n",
        ),
    }
    let audit = twin != Twin::Stamping;
    yaml.push_str(&format!(
        "  mutating: {mutating}\n  backgroundAudit: {audit}\n  rules:\n"
    ));
    yaml.push_str(&rules_yaml(settings.judged_operations(), 4));
    yaml.push_str(&match_conditions_yaml(&settings));
    yaml.push_str("  settings:");
    yaml.push_str(&settings_block(settings_yaml)?);
    Ok(yaml)
}

const NAMESPACE_SELECTOR: &str =
    "  # Leave the control plane's and Kubewarden's own namespaces alone (cluster-scoped
  # objects, CRDs included, are always evaluated).
  namespaceSelector:
    matchExpressions:
      - key: kubernetes.io/metadata.name
        operator: NotIn
        values: [kube-system, kubewarden]
";

/// The settings file as the value of `settings:`, its comments kept: the file's lines indented
/// under the key, or ` {}` for a file that holds no settings. A file of several YAML documents
/// is refused (the policy takes one).
fn settings_block(settings_yaml: &str) -> Result<String, String> {
    let lines: Vec<&str> = settings_yaml.lines().collect();
    if lines
        .iter()
        .any(|line| line.starts_with("---") || line.starts_with("..."))
    {
        return Err("the settings file must be one YAML document, without --- or ...".to_owned());
    }
    let empty = serde_yaml::from_str::<serde_json::Value>(settings_yaml)
        .map_or(true, |document| document.is_null());
    if empty {
        return Ok(" {}\n".to_owned());
    }
    let mut block = String::from("\n");
    for line in lines {
        if line.trim().is_empty() {
            block.push('\n');
        } else {
            block.push_str(&format!("    {line}\n"));
        }
    }
    Ok(block)
}
