//! Any bytes as the `validate` payload: the policy answers, never panics, and its answer keeps
//! the invariants that can be decided from the payload alone (an oracle of its own, reading the
//! payload as a JSON tree, independent of the policy's typed view):
//! - codes are 400 or 403 only; a 400 says the request is unreadable, a 403 names a rule on
//!   each line (`key: rule denied for …`, or `key: rule: …` for an audit replay);
//! - an accepted UPDATE never changes an owner into another, unless the requester is exempt or
//!   the stored object offered it to the new owner (and the new object drops the offer);
//! - an accepted CREATE or change never leaves an owner of a namespaced kind on a cluster-scoped
//!   object, unless the requester is exempt;
//! - in both, a requester that may be the trusted control plane counts as exempt: this oracle
//!   does not know which resources each writer is trusted with (`tests/properties.rs` does), so
//!   it leaves every request of a control-plane name, or of a `trustedWriters` user, alone;
//! - a mutation comes only with `stamp: true`, on a CREATE or an UPDATE that consumes an offer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use single_owner_policy::policy;

const RULES: [&str; 9] = [
    "owner change",
    "adoption",
    "orphaning",
    "owner value",
    "cluster scope",
    "namespace scope",
    "identity",
    "owner writes",
    "offer",
];

fuzz_target!(|payload: &[u8]| {
    let response = policy::validate(payload);
    // What the guest hands back to the host must always serialize.
    let answer = serde_json::to_vec(&response).expect("a response serializes");
    let answer = String::from_utf8_lossy(&answer);
    match (response.accepted, response.code, response.message.as_deref()) {
        (true, None, None) => {}
        (false, Some(400), Some(message)) => {
            assert!(message.starts_with("cannot read the admission request: "), "{answer}");
            return;
        }
        (false, Some(403), Some(message)) => {
            // `{key}: {rule} denied for …`, or for an audit replay `{key}: {rule}: …`.
            for line in message.lines() {
                let names_a_rule = line.split_once(": ").is_some_and(|(_, rest)| {
                    RULES.iter().any(|rule| {
                        rest.strip_prefix(rule)
                            .is_some_and(|rest| rest.starts_with(" denied for ") || rest.starts_with(": "))
                    })
                });
                assert!(names_a_rule, "{answer}");
            }
            return;
        }
        _ => panic!("not an answer the policy gives: {answer}"),
    }
    // Accepted: the policy read what it reads. It skips the rest unchecked — odd bytes, deep
    // nesting — so the tree is built from the payload with invalid UTF-8 replaced (where the
    // policy reads, invalid UTF-8 is a 400), and what serde_json cannot build, nested past its
    // recursion limit, cannot be decided here.
    let Ok(document) = serde_json::from_str::<Value>(&String::from_utf8_lossy(payload)) else {
        return;
    };
    Oracle::new(&document).check_accepted(response.mutated_object.is_some(), &answer);
});

/// What the payload says, read as a JSON tree.
struct Oracle<'a> {
    request: &'a Value,
    settings: Value,
}

impl<'a> Oracle<'a> {
    fn new(document: &'a Value) -> Self {
        let mut settings = match &document["settings"] {
            Value::Null => json!({}),
            settings => settings.clone(),
        };
        if settings["ownerLabels"].is_null() {
            settings["ownerLabels"] = json!([{"key": "appID", "clusterKinds": ["ClusterExtension"],
                                               "namespacedKinds": ["Extension"]}]);
        }
        if settings["transferAnnotation"].is_null() {
            settings["transferAnnotation"] = json!("single-owner-policy.io/offer");
        }
        Oracle {
            request: &document["request"],
            settings,
        }
    }

    fn check_accepted(&self, mutated: bool, answer: &str) {
        let operation = self.request["operation"].as_str().unwrap_or_default();
        let subresource = self.request["subResource"].as_str().unwrap_or_default();
        let scale = self.request["kind"]["group"] == "autoscaling" && self.request["kind"]["kind"] == "Scale";
        let old = self.object("oldObject");
        let new = self.object("object");
        if mutated {
            assert!(self.settings["stamp"] == true, "mutated without stamp: {answer}");
            assert!(matches!(operation, "CREATE" | "UPDATE"), "mutated a {operation}: {answer}");
        }
        if self.exempt() || self.control_plane() || scale || !matches!(operation, "CREATE" | "UPDATE") {
            return;
        }
        let (Some(new), true) = (new, operation == "CREATE" || old.is_some()) else {
            return;
        };
        let cluster_scoped = self.request["namespace"].as_str().unwrap_or_default().is_empty()
            || (self.request["kind"]["group"] == "" && self.request["kind"]["kind"] == "Namespace");
        for entry in self.settings["ownerLabels"].as_array().into_iter().flatten() {
            let before = old.and_then(|old| owner(entry, old));
            let after = owner(entry, new);
            if let (Some(before), Some(after)) = (&before, &after)
                && before != after
                && operation == "UPDATE"
            {
                let offered = self.offer(old.unwrap());
                // Deployed mutating (`stamp: true`), the policy removes the consumed offer.
                let consumed = self.offer(new).is_none() || mutated;
                assert!(
                    offered.as_deref() == Some(after.as_str()) && consumed,
                    "{subresource} {before} -> {after} accepted without an offer: {answer}"
                );
            }
            let gained = after.is_some() && after != before;
            if gained && cluster_scoped {
                let after = after.unwrap();
                let namespaced = entry["namespacedKinds"].as_array().into_iter().flatten();
                let kind = owner_kind(entry, new, &after);
                assert!(
                    !namespaced.into_iter().any(|known| Some(known.as_str().unwrap_or_default()) == kind),
                    "namespaced owner {after} on a cluster-scoped object: {answer}"
                );
            }
        }
    }

    /// The request's `object` or `oldObject`, when it is one.
    fn object(&self, side: &str) -> Option<&'a Value> {
        Some(&self.request[side]).filter(|object| object.is_object())
    }

    fn exempt(&self) -> bool {
        let exemptions = &self.settings["exemptions"];
        let listed = |list: &Value, name: &Value| list.as_array().is_some_and(|list| list.contains(name));
        listed(&exemptions["users"], &self.request["userInfo"]["username"])
            || self.request["userInfo"]["groups"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|group| listed(&exemptions["groups"], group))
    }

    /// Whether the requester may be a trusted writer: a name of Kubernetes' control plane or
    /// a user pattern's prefix in the settings' `trustedWriters`.
    fn control_plane(&self) -> bool {
        let user = self.request["userInfo"]["username"].as_str().unwrap_or_default();
        let added = self.settings["trustedWriters"].as_array().into_iter().flatten();
        ["system:serviceaccount:kube-system:", "system:kube-", "system:node:"]
            .iter()
            .any(|prefix| user.starts_with(prefix))
            || added
                .flat_map(|writer| writer["users"].as_array().into_iter().flatten())
                .filter_map(Value::as_str)
                .any(|pattern| user.starts_with(pattern.split('*').next().unwrap_or_default()))
    }

    fn offer(&self, object: &Value) -> Option<String> {
        let annotation = self.settings["transferAnnotation"].as_str()?;
        object["metadata"]["annotations"][annotation].as_str().map(str::to_owned)
    }
}

/// The owner id an entry reads from an object's labels (`kind.name` for a kind/name pair), when
/// it names one.
fn owner(entry: &Value, object: &Value) -> Option<String> {
    let labels = &object["metadata"]["labels"];
    let value = labels[entry["key"].as_str()?].as_str();
    let kind = entry["kindKey"].as_str().and_then(|key| labels[key].as_str());
    match (kind, value) {
        (Some(kind), Some(value)) => Some(format!("{kind}.{value}")),
        (None, Some(value)) => Some(value.to_owned()),
        (Some(kind), None) => Some(format!("{kind}.")),
        (None, None) => None,
    }
}

/// The kind an owner id names, for an entry with kinds.
fn owner_kind<'v>(entry: &Value, object: &'v Value, id: &'v str) -> Option<&'v str> {
    match entry["kindKey"].as_str() {
        Some(key) => object["metadata"]["labels"][key].as_str(),
        None => id.split('.').next(),
    }
}
