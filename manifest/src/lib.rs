//! The ClusterAdmissionPolicy for a settings file: the webhook's rules ([`rules_yaml`], which
//! metadata.yml lists too) with the operations the settings judge, and the match conditions
//! derived from the settings ([`conditions`]). A generated cluster traffic mix measures how much
//! of a cluster's writes the conditions send to policy-server (`tests/support/traffic.rs`).
//!
//! ```console
//! make manifest SETTINGS=examples/helm/settings.yaml [NAME=name] [MODE=monitor|protect]
//! ```
//!
//! Beside it, what policy-server needs to read what the policy reads ([`policy_server_rbac`]),
//! and the inventory of who owns what in a dump of a cluster ([`inventory`]); the command line
//! `kubectl-single_owner` (src/main.rs) runs all three.

pub mod conditions;
pub mod inventory;
mod rules;
pub mod vap;

use single_owner_policy::{BOUND, CONTROLLERS, SCALED, Settings};

pub use conditions::{MatchCondition, match_conditions};
pub use rules::{ResourceRule, SUBRESOURCES, judged_rules, rules_yaml};

/// The policy module the manifests deploy (`tests` keep it equal to the examples').
/// The image the release pushes the module to (`[package.metadata.release] image` of the
/// policy's Cargo.toml).
pub const IMAGE: &str = "ghcr.io/single-owner-policy/policies/single-owner";

/// The module every policy `make manifest` writes pulls: the release of the policy's version
/// (the policy's Cargo.toml).
pub fn module() -> String {
    format!("registry://{IMAGE}:v{}", single_owner_policy::VERSION)
}

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
pub fn match_conditions_yaml(settings: &Settings, split: Option<MatchCondition>) -> String {
    let mut yaml = String::from(
        "  # Generated from the settings by `make manifest` (see docs/match-conditions.md): the\n  \
         # API server sends a request to policy-server only when the policy could deny, mutate or\n  \
         # warn on it, never a write of the control plane it trusts. Kubewarden's audit scanner\n  \
         # calls policy-server directly, without them.\n  \
         matchConditions:\n",
    );
    if split.is_some() {
        yaml.push_str(
            "  # for-the-webhook: the requests it judges beside the in-process policy (`make vap\n  \
             # SPLIT=1`, docs/vap.md): those on which it may read another object.\n",
        );
    }
    for condition in match_conditions(settings).into_iter().chain(split) {
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
        return policy(name, mode, settings_yaml, Twin::Alone, None);
    }
    let judging = twin_settings(settings_yaml, JUDGING)?;
    let stamping = twin_settings(settings_yaml, STAMPING)?;
    Ok(format!(
        "{}---\n{}",
        policy(name, mode, &judging, Twin::Judging, None)?,
        policy(
            &format!("{name}-stamp"),
            mode,
            &stamping,
            Twin::Stamping,
            None
        )?
    ))
}

/// The judging twin's settings text (`stamp: false`), for a settings file that stamps.
pub fn judging_settings(settings_yaml: &str) -> Result<String, String> {
    twin_settings(settings_yaml, JUDGING)
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

/// The judging twin's settings: `stamp: false`, with why.
const JUDGING: (&str, bool, &str) = (
    "stamp",
    false,
    "# The policy single-owner-…-stamp stamps (stampOnly: true); this one judges the final object.",
);

/// The stamping twin's settings: `stampOnly: true`, with why.
const STAMPING: (&str, bool, &str) = (
    "stampOnly",
    true,
    "# Only stamp and remove consumed offers: the validating twin judges the final object.",
);

/// The settings of a twin: the settings document, parsed, with `key` set to `value` (after
/// `stamp` when the document lacks it), written out with the document's own text for every
/// setting it keeps — its comments carried over — and `comment` above the one it sets.
fn twin_settings(
    settings_yaml: &str,
    (key, value, comment): (&str, bool, &str),
) -> Result<String, String> {
    let document: serde_yaml::Mapping =
        serde_yaml::from_str(settings_yaml).map_err(|error| format!("not YAML: {error}"))?;
    let blocks = top_level_blocks(settings_yaml);
    let keys: Vec<&str> = blocks.iter().map(|(key, _, _)| *key).collect();
    let parsed: Vec<Option<&str>> = document.keys().map(serde_yaml::Value::as_str).collect();
    if parsed != keys.iter().copied().map(Some).collect::<Vec<_>>() {
        return Err(format!(
            "with stamp: true, write each setting at the top level of the document, one \
             `key:` a line (found {keys:?}): the two policies' settings are written from it"
        ));
    }
    let set = serde_yaml::Value::Bool(value);
    let mut text = String::new();
    let mut written = false;
    for (block_key, leading, body) in &blocks {
        text.push_str(leading);
        if *block_key == key {
            text.push_str(&format!("{comment}\n{key}: {value}\n"));
            written = true;
        } else {
            text.push_str(body);
        }
        if *block_key == "stamp" && !written && document.get(key).is_none() {
            text.push_str(&format!("{comment}\n{key}: {value}\n"));
            written = true;
        }
    }
    let mut expected = document.clone();
    expected.insert(key.into(), set);
    let twin: serde_yaml::Mapping =
        serde_yaml::from_str(&text).map_err(|error| format!("not YAML: {error}"))?;
    if !written || twin != expected {
        return Err("with stamp: true, write `stamp: true` at the top level".to_owned());
    }
    read_settings(&text)?;
    Ok(text)
}

/// The top-level settings of a YAML document as written: each key, the comment and blank lines
/// above it (the document's head for the first), and its own lines.
fn top_level_blocks(yaml: &str) -> Vec<(&str, String, String)> {
    let mut blocks: Vec<(&str, String, String)> = Vec::new();
    let mut pending = String::new();
    for line in yaml.lines() {
        let key = line
            .split_once(':')
            .map(|(key, _)| key)
            .filter(|key| !key.is_empty() && !line.starts_with([' ', '\t', '#', '-']))
            .filter(|key| key.chars().all(|c| c.is_ascii_alphanumeric()));
        match (key, blocks.last_mut()) {
            (Some(key), _) => blocks.push((key, std::mem::take(&mut pending), format!("{line}\n"))),
            (None, Some((_, _, body))) if line.starts_with([' ', '\t', '-']) => {
                body.push_str(&pending);
                pending.clear();
                body.push_str(line);
                body.push('\n');
            }
            _ => {
                pending.push_str(line);
                pending.push('\n');
            }
        }
    }
    if let Some((_, _, body)) = blocks.last_mut() {
        body.push_str(&pending);
    }
    blocks
}

/// One ClusterAdmissionPolicy, playing `twin`.
/// The webhook's policy beside the in-process one (`make vap SPLIT=1`): the policy
/// `name`, judging only the requests `split` selects (CEL), which the in-process policy leaves
/// out ([`vap::split`]).
pub fn webhook_beside(
    name: &str,
    mode: Mode,
    settings_yaml: &str,
    split: &str,
) -> Result<String, String> {
    let condition = MatchCondition {
        name: "for-the-webhook".to_owned(),
        expression: split.to_owned(),
    };
    policy(name, mode, settings_yaml, Twin::Alone, Some(condition))
}

fn policy(
    name: &str,
    mode: Mode,
    settings_yaml: &str,
    twin: Twin,
    split: Option<MatchCondition>,
) -> Result<String, String> {
    if !single_owner_policy::dns::is_dns_label(name) {
        return Err(format!(
            "the policy name {name:?} is not a DNS label (lowercase letters, digits and '-', at \
             most 63 characters); name the policy with NAME="
        ));
    }
    let settings = read_settings(settings_yaml)?;
    let mutating = settings.stamp;
    let deletes = settings.judges_writes();
    let mut yaml = format!(
        "apiVersion: policies.kubewarden.io/v1\n\
         kind: ClusterAdmissionPolicy\n\
         metadata:\n  \
         name: {name}\n\
         spec:\n  \
         module: {}\n  \
         mode: {}\n  \
         failurePolicy: Fail\n",
        module(),
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
        "  mutating: {mutating}\n  backgroundAudit: {audit}\n"
    ));
    if audit && !lookups(&settings).is_empty() {
        yaml.push_str(&context_aware_resources(&settings));
    }
    yaml.push_str("  rules:\n");
    yaml.push_str(&rules_yaml(settings.judged_operations(), 4));
    yaml.push_str(&match_conditions_yaml(&settings, split));
    yaml.push_str("  settings:");
    yaml.push_str(&settings_block(settings_yaml)?);
    Ok(yaml)
}

/// The kinds the policy reads, as the `contextAwareResources` Kubewarden grants lookups of:
/// those of `parentKinds` and of the marks' `ownerLookup`, and under `writes: Owner` the targets
/// of `scale` writes, the Pods of Bindings and the controllers of unmarked children.
fn context_aware_resources(settings: &Settings) -> String {
    let mut yaml = String::from(
        "  # The objects the policy reads (the controllers of `parentKinds`, the owners of\n  \
         # `ownerLookup`; under `writes: Owner`, the targets of scale writes, the Pods of Bindings\n  \
         # and the controllers of unmarked children); policy-server's service account needs to\n  \
         # read them (`make rbac`; see docs/deploying.md, \"Derived objects\").\n  \
         contextAwareResources:\n",
    );
    for (api_version, kind) in lookup_kinds(settings) {
        yaml.push_str(&format!(
            "    - apiVersion: {api_version}\n      kind: {kind}\n"
        ));
    }
    yaml
}

/// The resource of a kind, as RBAC names it: its plural (`prometheuses`, `ingresses`).
pub fn resource_of(kind: &str) -> String {
    let lower = kind.to_lowercase();
    match lower.ends_with('s') {
        true => format!("{lower}es"),
        false => format!("{lower}s"),
    }
}

/// What policy-server's service account needs for the policy `name` to read what it reads
/// under the settings (`make rbac`): a ClusterRole of the verbs of each kind of [`lookups`], by
/// API group, and its binding to the default PolicyServer's account; a comment alone when the
/// policy reads nothing.
pub fn policy_server_rbac(name: &str, settings_yaml: &str) -> Result<String, String> {
    let settings = read_settings(settings_yaml)?;
    let reads = lookups(&settings);
    if reads.is_empty() {
        return Ok(format!(
            "# The policy {name} reads nothing through Kubewarden's lookups: policy-server needs \
             no grant for it.\n"
        ));
    }
    let mut groups: Vec<(&str, Verbs, Vec<String>)> = Vec::new();
    for (api_version, kind, verbs) in reads {
        let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
        let resource = resource_of(kind);
        match (groups.iter_mut()).find(|(known, with, _)| *known == group && *with == verbs) {
            Some((.., resources)) => resources.push(resource),
            None => groups.push((group, verbs, vec![resource])),
        }
    }
    let rules: String = (groups.iter())
        .map(|(group, verbs, resources)| {
            format!(
                "  - apiGroups: [{:?}]\n    resources: [{}]\n    verbs: [{}]\n",
                group,
                resources.join(", "),
                verbs.join(", ")
            )
        })
        .collect();
    Ok(format!(
        "# What policy-server's service account needs for the policy {name} to read what it reads\n\
         # (its contextAwareResources): `get` on each kind read by name, `list` and `watch` on\n\
         # Helm's records, which policy-server lists through a watch. `policy-server-default` in\n\
         # `kubewarden` is the default PolicyServer's account; name yours if the policy runs on\n\
         # another.\n\
         apiVersion: rbac.authorization.k8s.io/v1\n\
         kind: ClusterRole\n\
         metadata:\n  name: {name}-lookups\n\
         rules:\n{rules}\
         ---\n\
         apiVersion: rbac.authorization.k8s.io/v1\n\
         kind: ClusterRoleBinding\n\
         metadata:\n  name: {name}-lookups\n\
         roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: {name}-lookups\n\
         subjects:\n  - kind: ServiceAccount\n    name: policy-server-default\n    namespace: kubewarden\n"
    ))
}

/// The verbs a read needs.
type Verbs = &'static [&'static str];

/// An object read by name (`kubernetes/get_resource`).
const GET: Verbs = &["get"];
/// A list (`kubernetes/list_resources_by_namespace`), which policy-server serves from a watch.
const LIST: Verbs = &["list", "watch"];

/// The `(apiVersion, kind)` of every object the policy may read under `settings`, each once.
pub fn lookup_kinds(settings: &Settings) -> Vec<(&str, &str)> {
    (lookups(settings).into_iter())
        .map(|(api_version, kind, _)| (api_version, kind))
        .collect()
}

/// What the policy may read under `settings`: each kind once, with the verbs policy-server needs
/// to read it — `get` on the controllers it follows, the owners of `ownerLookup` and, under
/// `writes: Owner`, what writes reach; `list` and `watch` on Helm's records.
pub fn lookups(settings: &Settings) -> Vec<(&str, &str, Verbs)> {
    let mut kinds: Vec<(&str, &str, Verbs)> = (settings.parent_kinds.iter())
        .map(|kind| (kind.api_version.as_str(), kind.kind.as_str(), GET))
        .collect();
    let owners = (settings.owner_marks.iter()).filter_map(|mark| {
        let lookup = mark.owner_lookup.as_ref()?;
        match (&lookup.api_version, &lookup.kind, lookup.helm_records) {
            (_, _, Some(driver)) => Some(("v1", driver.kind(), LIST)),
            (Some(api_version), Some(kind), None) => {
                Some((api_version.as_str(), kind.as_str(), GET))
            }
            _ => None,
        }
    });
    let reached = settings.judges_writes().then(|| {
        let read = SCALED
            .iter()
            .map(|(_, _, api_version, kind)| (*api_version, *kind, GET));
        read.chain([(BOUND.0, BOUND.1, GET)])
            .chain(CONTROLLERS.map(|(api_version, kind)| (api_version, kind, GET)))
    });
    for (api_version, kind, verbs) in owners.chain(reached.into_iter().flatten()) {
        if !kinds
            .iter()
            .any(|(a, k, _)| (*a, *k) == (api_version, kind))
        {
            kinds.push((api_version, kind, verbs));
        }
    }
    kinds
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

#[cfg(test)]
mod tests {
    use super::*;

    const SETTINGS: &str = "# Releases, stamped.\n\
        ownerMarks:\n  \
          # the release's own label\n  \
          - label: appID\n    \
            clusterKinds: [ClusterExtension]\n\
        \n\
        # What it creates gets the label.\n\
        stamp: true\n\
        identities:\n  \
          - owners: [ClusterExtension.a]\n    \
            # its installer\n    \
            users: [installer]\n\
        \n\
        # a comment at the margin, inside a setting\n  \
          - owners: [ClusterExtension.b]\n    \
            users: [deployer]\n";

    #[test]
    fn twins_are_the_parsed_settings_with_every_comment_carried_over() {
        let judging = twin_settings(SETTINGS, JUDGING).unwrap();
        let stamping = twin_settings(SETTINGS, STAMPING).unwrap();
        let expected = |stamp: &str| SETTINGS.replace("stamp: true\n", stamp);
        assert_eq!(judging, expected(&format!("{}\nstamp: false\n", JUDGING.2)));
        assert_eq!(
            stamping,
            expected(&format!("stamp: true\n{}\nstampOnly: true\n", STAMPING.2))
        );
        let settings = read_settings(&stamping).unwrap();
        assert!(settings.stamp && settings.stamp_only);
        assert!(!read_settings(&judging).unwrap().stamp);
    }

    #[test]
    fn every_policy_written_is_named_by_a_dns_label() {
        let name = "a".repeat(single_owner_policy::dns::LABEL_MAX - "-stamp".len());
        assert!(manifest(&name, Mode::Protect, SETTINGS).is_ok());
        let longer = format!("{name}b");
        let error = manifest(&longer, Mode::Protect, SETTINGS).unwrap_err();
        assert!(error.contains(&format!("{longer}-stamp")), "{error}");
        assert!(manifest(&longer, Mode::Protect, "{}").is_ok());
        assert!(manifest("Single_Owner", Mode::Protect, "{}").is_err());
    }

    #[test]
    fn settings_not_written_a_key_a_line_make_no_twins() {
        for yaml in [
            "{stamp: true, ownerMarks: [{label: appID, clusterKinds: [ClusterExtension]}]}",
            "\"stamp\": true\n",
        ] {
            let error = twin_settings(yaml, JUDGING).unwrap_err();
            assert!(
                error.starts_with("with stamp: true, write each setting"),
                "{error}"
            );
        }
    }
}
