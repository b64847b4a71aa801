//! The audit replay: the rules an object's state can break, judged on the stored object alone.
//!
//! | the stored object                                  | rule                              |
//! |----------------------------------------------------|-----------------------------------|
//! | a mark names no valid owner                        | `owner value`                     |
//! | a mark names an owner out of scope                 | `cluster scope`, `namespace scope`|
//! | another, unlinked mark names a second owner        | `one owner`                       |
//! | a pending offer its owner could not make now       | `offer`                           |
//!
//! Identity, `writes`, stamping and `adoption` judge an act, and a replay is none.

use crate::facts::Facts;
use crate::handoff;
use crate::one_owner;
use crate::scope;
use crate::violation::{Change, Reason, Violation};

/// The audit rule: what is wrong with the replayed object's state.
pub fn rule<'a>(facts: &Facts<'a>) -> Vec<Violation<'a>> {
    let scope = facts.request.object_scope();
    let marks = facts.entries.iter().filter_map(|entry| {
        let owner = entry.new.filter(|claim| !claim.is_none())?;
        let reason = match scope::fit(entry.mark, owner, scope) {
            Err(unfit) => Reason::from(unfit),
            Ok(_) => one_owner::rule(facts, entry)?,
        };
        Some(facts.entry_violation(entry, Change::kept(owner), reason))
    });
    let offer = facts
        .new_offer
        .and_then(|text| handoff::made(facts, text, false));
    marks.chain(offer).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::facts::Sides;
    use crate::request::AdmissionRequest;
    use crate::settings::Settings;
    use crate::violation::Rule;

    /// The rules the audit replay of a CustomResourceDefinition (cluster-scoped) with `labels`
    /// and `annotations` fails, each with its mark's key.
    fn audit(labels: serde_json::Value, annotations: serde_json::Value) -> Vec<(Rule, String)> {
        let settings = json!({"ownerMarks": [
            {"label": "appID", "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]},
            {"annotation": "camel.apache.org/operator.id"}]});
        let settings = Settings::from_json(settings.to_string().as_bytes()).unwrap();
        // What the audit scanner sends: a CREATE with no user, no groups, no requestResource.
        let request = json!({
            "uid": "1", "operation": "CREATE", "name": "x", "namespace": "", "userInfo": {},
            "kind": {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition"},
            "resource": {"group": "apiextensions.k8s.io", "version": "v1", "resource": "customresourcedefinitions"},
            "object": {"metadata": {"name": "x", "labels": labels, "annotations": annotations}},
        })
        .to_string();
        let request: AdmissionRequest = serde_json::from_str(&request).unwrap();
        assert!(request.is_audit_replay());
        let sides = Sides::of(&request, &settings).unwrap().unwrap();
        let facts = Facts::read(&request, &settings, sides).unwrap();
        rule(&facts)
            .iter()
            .map(|violation| (violation.rule(), violation.mark.key.to_owned()))
            .collect()
    }

    #[test]
    fn audit_table() {
        let offer = "single-owner-policy.io/offer";
        let camel = "camel.apache.org/operator.id";
        let app = |rule| (rule, "appID".to_owned());
        #[rustfmt::skip]
        let rows = [
            // labels, annotations, the rules failed
            (json!({}), json!({}), vec![]),
            (json!({"appID": "ClusterExtension.a"}), json!({}), vec![]),
            (json!({"appID": "Operator.a"}), json!({}), vec![app(Rule::OwnerValue)]),
            (json!({"appID": "Extension.team-a.a"}), json!({}), vec![app(Rule::ClusterScope)]),
            (json!({"appID": "ClusterExtension.a"}), json!({camel: "operator-1"}),
             vec![(Rule::OneOwner, camel.to_owned())]),
            (json!({"appID": "ClusterExtension.a"}), json!({offer: "appID: ClusterExtension.a -> ClusterExtension.b"}), vec![]),
            (json!({"appID": "ClusterExtension.a"}), json!({offer: "appID: ClusterExtension.z -> ClusterExtension.b"}),
             vec![(Rule::Offer, offer.to_owned())]),
        ];
        for (labels, annotations, expected) in rows {
            assert_eq!(
                audit(labels.clone(), annotations.clone()),
                expected,
                "{labels} {annotations}"
            );
        }
    }
}
