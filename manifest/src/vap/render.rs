//! The policies as YAML: the ValidatingAdmissionPolicy and its binding, and, with exemptions,
//! a twin for the exempt requesters whose binding warns and audits instead of denying.

use single_owner_policy::Settings;

use super::Vap;
use super::stamp::Stamping;
use crate::Mode;
use crate::conditions::{MatchCondition, string_list};

/// The policies `name` of `vap`, in `mode`: `protect` denies, `monitor` warns and audits.
/// Refuses a policy larger than etcd stores.
pub fn yaml(name: &str, mode: Mode, vap: &Vap) -> Result<String, String> {
    let actions = match mode {
        Mode::Protect => "[Deny]",
        Mode::Monitor => "[Warn, Audit]",
    };
    let denying = policy(name, &vap.denying_conditions(), vap, false);
    fits(name, &denying)?;
    let mut out = denying;
    out.push_str(&binding(name, actions));
    if let Some(conditions) = vap.warning_conditions() {
        let twin = format!("{name}-exemptions");
        let warning = policy(&twin, &conditions, vap, true);
        fits(&twin, &warning)?;
        out.push_str(&warning);
        out.push_str(&binding(&twin, "[Warn, Audit]"));
    }
    Ok(out)
}

/// The largest request etcd takes by default (`--max-request-bytes`), and so the largest
/// object the API server can store.
const MAX_OBJECT: usize = 1_572_864;

/// Whether the policy `name`, as YAML, is an object the API server can store: its JSON, which
/// `kubectl apply` sends, at most [`MAX_OBJECT`] bytes (etcd stores it as protobuf, a little
/// smaller).
fn fits(name: &str, policy: &str) -> Result<(), String> {
    let object: serde_json::Value = serde_yaml::from_str(policy.trim_end_matches("---\n"))
        .map_err(|error| format!("the ValidatingAdmissionPolicy {name}: {error}"))?;
    let size = object.to_string().len();
    match size > MAX_OBJECT {
        true => Err(format!(
            "ownerMarks: the ValidatingAdmissionPolicy {name} would be {size} bytes, more than \
             the {MAX_OBJECT} etcd stores in one object by default (--max-request-bytes); \
             deploy the webhook (make manifest)"
        )),
        false => Ok(()),
    }
}

/// Who is exempt: the exemptions twin's condition and what it says of a requester.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exemption {
    /// CEL: the requester is exempt.
    pub condition: String,
    /// CEL: who bypassed, as the module's warnings name them (`exempt user … bypassed: `).
    pub who: String,
}

/// Who is exempt (`exemptions`), `None` when nobody is.
pub(super) fn exemption(settings: &Settings) -> Option<Exemption> {
    let exemptions = &settings.exemptions;
    if exemptions.users.is_empty() && exemptions.groups.is_empty() {
        return None;
    }
    let users = string_list(&exemptions.users);
    let groups = string_list(&exemptions.groups);
    Some(Exemption {
        condition: format!(
            "(has(request.userInfo.username) && request.userInfo.username in {users}) || \
             (has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in {groups}))"
        ),
        // The first of the requester's groups that is exempt, as the module names it.
        who: format!(
            "(has(request.userInfo.username) && request.userInfo.username in {users} ? 'exempt \
             user ' + request.userInfo.username : 'user ' + (has(request.userInfo.username) ? \
             request.userInfo.username : '') + ' of exempt group ' + \
             request.userInfo.groups.filter(g, g in {groups})[0]) + ' bypassed: '"
        ),
    })
}

impl Vap {
    /// CEL: what the exemptions twin says of `validation` failed: who bypassed it, then its
    /// line (the module's warning); `None` without exemptions.
    pub fn bypass_message(&self, validation: &super::Validation) -> Option<String> {
        let who = &self.exemption.as_ref()?.who;
        Some(format!("{who} + {}", validation.message_expression))
    }

    /// CEL: the exemptions twin's audit annotation: who bypassed, then what each failed
    /// validation broke (`label appID: owner change; `), `null` where none failed; `None`
    /// without exemptions.
    pub fn exemption_annotation(&self) -> Option<String> {
        let who = &self.exemption.as_ref()?.who;
        let failing: Vec<String> = (self.validations.iter())
            .map(|validation| {
                format!(
                    "(!({}) ? {} + '; ' : '')",
                    validation.expression,
                    validation.broken()
                )
            })
            .collect();
        let any: Vec<String> = (self.validations.iter())
            .map(|validation| format!("!({})", validation.expression))
            .collect();
        Some(format!(
            "{} ? {who} + {} : null",
            any.join(" || "),
            failing.join(" + ")
        ))
    }
}

/// The policy `name`, or with `twin` the exemptions twin, which says who bypassed what.
fn policy(name: &str, conditions: &[MatchCondition], vap: &Vap, twin: bool) -> String {
    let mut out = format!(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n\
         metadata:\n  name: {name}\nspec:\n  failurePolicy: Fail\n  matchConstraints:\n    \
         resourceRules:\n"
    );
    for rule in &vap.resource_rules {
        for line in rule.yaml().lines() {
            out.push_str(&format!("      {line}\n"));
        }
    }
    out.push_str("  matchConditions:\n");
    let named = conditions.iter().map(|c| (&c.name, &c.expression));
    named_expressions(&mut out, named);
    out.push_str("  variables:\n");
    named_expressions(
        &mut out,
        vap.variables.iter().map(|v| (&v.name, &v.expression)),
    );
    out.push_str("  validations:\n");
    for validation in &vap.validations {
        out.push_str("    - expression: ");
        block(&mut out, &validation.expression, 8);
        out.push_str("      messageExpression: ");
        let message = (vap.bypass_message(validation).filter(|_| twin))
            .unwrap_or_else(|| validation.message_expression.clone());
        block(&mut out, &message, 8);
        out.push_str("      reason: Forbidden\n");
    }
    if let Some(value) = vap.exemption_annotation().filter(|_| twin) {
        out.push_str(
            "  auditAnnotations:\n    - key: single-owner-policy-exemption\n      valueExpression: ",
        );
        block(&mut out, &value, 8);
    }
    out.push_str("---\n");
    out
}

/// The MutatingAdmissionPolicy `name` that stamps, and its binding.
pub fn mutating(name: &str, stamping: &Stamping) -> String {
    let mut out = format!(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicy\n\
         metadata:\n  name: {name}\nspec:\n  failurePolicy: Fail\n  reinvocationPolicy: Never\n  \
         matchConstraints:\n    resourceRules:\n"
    );
    for rule in &stamping.resource_rules {
        for line in rule.yaml().lines() {
            out.push_str(&format!("      {line}\n"));
        }
    }
    out.push_str("  matchConditions:\n");
    let named = stamping
        .match_conditions
        .iter()
        .map(|c| (&c.name, &c.expression));
    named_expressions(&mut out, named);
    out.push_str("  variables:\n");
    let variables = stamping.variables.iter().map(|v| (&v.name, &v.expression));
    named_expressions(&mut out, variables);
    out.push_str(
        "  mutations:\n    - patchType: JSONPatch\n      jsonPatch:\n        expression: ",
    );
    block(&mut out, &stamping.patch, 10);
    out.push_str(&format!(
        "---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicyBinding\n\
         metadata:\n  name: {name}\nspec:\n  policyName: {name}\n---\n"
    ));
    out
}

fn binding(name: &str, actions: &str) -> String {
    format!(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\n\
         metadata:\n  name: {name}\nspec:\n  policyName: {name}\n  validationActions: {actions}\n---\n"
    )
}

/// Appends a list of `name` and `expression` entries.
fn named_expressions<'e>(
    out: &mut String,
    entries: impl Iterator<Item = (&'e String, &'e String)>,
) {
    for (name, expression) in entries {
        out.push_str(&format!("    - name: {name}\n      expression: "));
        block(out, expression, 8);
    }
}

/// Appends `text` as a YAML literal block, indented by `indent`.
fn block(out: &mut String, text: &str, indent: usize) {
    out.push_str("|-\n");
    for line in text.lines() {
        out.push_str(&" ".repeat(indent));
        out.push_str(line);
        out.push('\n');
    }
}
