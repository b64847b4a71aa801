//! The webhook's rules: which requests the API server sends to the policy at all, before the
//! match conditions. The one list of them: a generated policy has them with the operations its
//! settings judge, and metadata.yml with every operation the policy can judge (a test keeps it
//! equal to [`rules_yaml`]).

/// The subresources the webhook's rules send, UPDATEs only, as `(resource, subresource)`
/// (`*`: of every resource); the webhook is called for no other subresource.
pub const SUBRESOURCES: [(&str, &str); 9] = [
    ("*", "status"),
    ("namespaces", "finalize"),
    ("certificatesigningrequests", "approval"),
    ("pods", "ephemeralcontainers"),
    ("pods", "resize"),
    ("deployments", "scale"),
    ("replicasets", "scale"),
    ("statefulsets", "scale"),
    ("replicationcontrollers", "scale"),
];

/// Why the subresources are sent, above their rule.
const SUBRESOURCES_COMMENT: &str = "\
# Status writes of most built-in kinds persist metadata changes (a Pod's, a Namespace's, …),
# and so do a Namespace's finalize and a CSR's approval: they are judged when they change
# an owner mark (label or annotation) or the offer, and under `writes: Owner` when they change
# metadata their strategy stores (see docs/control-plane.md, \"Subresources\").
# A Pod's ephemeral containers and resources, and the scale of the built-in workloads (judged
# from the object the policy reads), are owner writes under `writes: Owner`.";

/// Why Bindings are sent, above their rule (a wildcard version, which the audit scanner skips).
const BINDING_COMMENT: &str = "\
# The API server copies a Binding's labels and annotations onto its Pod: one that carries an
# owner mark is denied, and under `writes: Owner` one that carries others is judged as a write
# of its Pod (see docs/rules.md, \"Subresources that write what an owner declared\").";

/// The kinds, at `v1`, whose CREATEs are named so that Kubewarden's audit scanner replays their
/// objects, as `(API group, resources)`.
const AUDITED: [(&str, &[&str]); 7] = [
    ("apiextensions.k8s.io", &["customresourcedefinitions"]),
    (
        "",
        &[
            "namespaces",
            "serviceaccounts",
            "services",
            "configmaps",
            "secrets",
        ],
    ),
    (
        "rbac.authorization.k8s.io",
        &[
            "clusterroles",
            "clusterrolebindings",
            "roles",
            "rolebindings",
        ],
    ),
    ("apps", &["deployments"]),
    ("batch", &["jobs"]),
    (
        "admissionregistration.k8s.io",
        &[
            "validatingwebhookconfigurations",
            "mutatingwebhookconfigurations",
        ],
    ),
    ("apiregistration.k8s.io", &["apiservices"]),
];

/// Why the audited kinds are named, above their rules.
const AUDITED_COMMENT: &str = "\
# Kubewarden's audit scanner replays existing objects of the kinds these CREATE rules name
# (it skips rules with a wildcard), for PolicyReports; see docs/deploying.md, \"Visibility\". The API
# server calls the webhook once per request however many rules match.";

/// A rule of a webhook's `rules`, or of a policy's `matchConstraints.resourceRules`: the
/// requests the API server sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRule {
    /// The API group, `*` for all.
    pub group: String,
    /// `resource`, `resource/subresource`, `*` (every resource), `*/subresource`.
    pub resources: Vec<String>,
    pub operations: Vec<String>,
}

impl ResourceRule {
    /// The rule as a YAML list item, of every API version.
    pub fn yaml(&self) -> String {
        rule(&self.group, "*", &self.resources, &self.operations)
    }
}

/// The rules of the requests the policy judges: every resource with `operations` (those the
/// settings judge), the [`SUBRESOURCES`]' UPDATEs, and a Binding's CREATE — each with the
/// comment that says why, for the webhook's YAML.
pub fn judged_rules(operations: &[&str]) -> [(ResourceRule, Option<&'static str>); 3] {
    let rule = |group: &str, resources: Vec<String>, operations: &[&str]| ResourceRule {
        group: group.to_owned(),
        resources,
        operations: operations
            .iter()
            .map(|operation| operation.to_string())
            .collect(),
    };
    let subresources = (SUBRESOURCES.iter())
        .map(|(resource, subresource)| format!("{resource}/{subresource}"))
        .collect();
    [
        (rule("*", vec!["*".to_owned()], operations), None),
        (
            rule("*", subresources, &["UPDATE"]),
            Some(SUBRESOURCES_COMMENT),
        ),
        (
            rule("", vec!["pods/binding".to_owned()], &["CREATE"]),
            Some(BINDING_COMMENT),
        ),
    ]
}

/// Whether the webhook's rules send `operation` of a subresource of `resource` (`*`: of some
/// resource): an UPDATE of one of the [`SUBRESOURCES`], a Binding's CREATE.
pub fn sends_subresource(operation: &str, resource: &str, subresource: &str) -> bool {
    judged_rules(&[]).iter().any(|(rule, _)| {
        rule.operations.iter().any(|named| named == operation)
            && rule.resources.iter().any(|named| {
                named.split_once('/').is_some_and(|(named, sub)| {
                    sub == subresource && (named == "*" || resource == "*" || named == resource)
                })
            })
    })
}

/// The rules as the items of a YAML `rules:` list, each line indented by `indent` spaces:
/// the [`judged_rules`] and the CREATEs of the audited kinds.
pub fn rules_yaml(operations: &[&str], indent: usize) -> String {
    let mut rules = Vec::new();
    for (judged, why) in judged_rules(operations) {
        rules.extend(why.map(comment));
        rules.push(judged.yaml());
    }
    rules.push(comment(AUDITED_COMMENT));
    for (group, resources) in AUDITED {
        rules.push(rule(group, "v1", resources, &["CREATE"]));
    }
    let pad = " ".repeat(indent);
    rules
        .concat()
        .lines()
        .map(|line| format!("{pad}{line}\n"))
        .collect()
}

/// One rule, as a list item.
fn rule(
    group: &str,
    version: &str,
    resources: &[impl AsRef<str>],
    operations: &[impl AsRef<str>],
) -> String {
    format!(
        "- apiGroups: {}\n  apiVersions: {}\n  resources: {}\n  operations: {}\n",
        flow([group]),
        flow([version]),
        flow(resources),
        flow(operations)
    )
}

fn comment(text: &str) -> String {
    format!("{text}\n")
}

/// A YAML flow sequence of strings: `["a", "b"]`.
fn flow<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let items: Vec<String> = items
        .into_iter()
        .map(|item| format!("\"{}\"", item.as_ref()))
        .collect();
    format!("[{}]", items.join(", "))
}
