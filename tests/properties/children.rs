//! Unmarked children: an owner's marks moved from an object up its chain of controllers change
//! no verdict of a write under `writes: Owner` (21).

use std::cell::Cell;

use proptest::prelude::*;

use serde_json::{Map, Value, json};
use single_owner_policy::policy;
use single_owner_policy::{Lookup, NoHost, Parents};

use crate::check;
use crate::model::Op;
use crate::writes::owned_writes;

/// 21. Unmarked children (docs/rules.md, "Unmarked children"): under `writes: Owner`, a write
///     that keeps an object's marks — an UPDATE or a DELETE — gets the verdict it
///     gets when the object carries no mark and its ReplicaSet's Deployment carries them
///     instead: no requester who does not write for the owner changes or deletes the owner's
///     unmarked children, on any path but their status (node agents annotate Pods through
///     `pods/status`, docs/rules.md, "Unmarked children"). The chain is read only
///     after the rules allow the write without it, two lookups at most.
#[test]
fn an_unmarked_child_is_judged_as_its_controllers_owners_object() {
    let floors = [
        (
            "a write of an unmarked child, judged through its chain",
            10.0,
        ),
        (
            "a write of an unmarked child by a requester its owner's rules deny",
            3.0,
        ),
    ];
    check(owned_writes(), &floors, |case, tally| {
        let admission = &case.admission;
        let (request, settings) = (case.request_json(), case.settings.json());
        let guarded = guarded_keys(&settings);
        if case.settings.writes != "Owner"
            || matches!(admission.op, Op::Scale | Op::Status)
            || request["namespace"].as_str().is_none_or(str::is_empty)
            || guarded
                .iter()
                .any(|(_, key)| key == "argocd.argoproj.io/tracking-id")
        {
            return Ok(());
        }
        let Some(marks) = kept_marks(&request, &guarded, &settings) else {
            return Ok(());
        };
        let payload = |request: &Value| {
            serde_json::to_vec(&json!({"request": request, "settings": &settings})).unwrap()
        };
        let marked = policy::validate_with(&payload(&request), &NoHost);
        let mut child = request.clone();
        for side in ["oldObject", "object"] {
            if let Some(metadata) = child[side]["metadata"].as_object_mut() {
                for (field, key) in &guarded {
                    if let Some(values) = metadata.get_mut(*field).and_then(Value::as_object_mut) {
                        values.remove(key);
                    }
                }
                metadata.insert(
                    "ownerReferences".into(),
                    reference("ReplicaSet", "web-7d9c"),
                );
            }
        }
        let chain = Chain {
            namespace: request["namespace"].as_str().unwrap_or_default().to_owned(),
            marks,
            calls: Cell::new(0),
        };
        let unmarked = policy::validate_with(&payload(&child), &NoHost);
        let through = policy::validate_with(&payload(&child), &chain);
        tally.count(
            chain.calls.get() > 0,
            "a write of an unmarked child, judged through its chain",
        );
        tally.count(
            !marked.accepted,
            "a write of an unmarked child by a requester its owner's rules deny",
        );
        prop_assert_eq!(
            (through.accepted, through.code),
            (marked.accepted, marked.code),
            "the child's verdict is not its marked object's: {:?} against {:?}",
            through.message,
            marked.message
        );
        prop_assert!(
            chain.calls.get() <= 2 && (unmarked.accepted || chain.calls.get() == 0),
            "{} lookups, the write {} without them",
            chain.calls.get(),
            if unmarked.accepted {
                "allowed"
            } else {
                "denied"
            }
        );
        Ok(())
    });
}

/// The guarded keys of the settings' marks, with the field they are read in.
fn guarded_keys(settings: &Value) -> Vec<(&'static str, String)> {
    let mut keys = Vec::new();
    for mark in settings["ownerMarks"].as_array().into_iter().flatten() {
        let field = match mark.get("label") {
            Some(_) => "labels",
            None => "annotations",
        };
        let key = mark.get("label").or_else(|| mark.get("annotation"));
        for key in [key, mark.get("kindKey"), mark.get("namespaceKey")]
            .into_iter()
            .flatten()
        {
            keys.push((field, key.as_str().unwrap_or_default().to_owned()));
        }
    }
    keys
}

/// The guarded keys' values the request's object keeps on both sides, as a controller carries
/// them; `None` when a side changes one, carries the offer or has owner references of its own.
fn kept_marks(
    request: &Value,
    guarded: &[(&'static str, String)],
    settings: &Value,
) -> Option<Map<String, Value>> {
    let old = &request["oldObject"]["metadata"];
    let new = &request["object"]["metadata"];
    let offer = settings["offerAnnotation"]
        .as_str()
        .unwrap_or("single-owner-policy.io/offer");
    let mut marks = Map::new();
    for metadata in [old, new] {
        if !metadata["ownerReferences"].is_null() || !metadata["annotations"][offer].is_null() {
            return None;
        }
    }
    for (field, key) in guarded {
        let value = &old[*field][key];
        if request["object"].is_object() && new[*field][key] != *value {
            return None;
        }
        if !value.is_null() {
            let values = marks.entry(*field).or_insert_with(|| json!({}));
            values[key] = value.clone();
        }
    }
    (!marks.is_empty()).then_some(marks)
}

/// An owner reference naming a controller of `kind` `name`.
fn reference(kind: &str, name: &str) -> Value {
    json!([{"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": format!("{name}-uid"),
            "controller": true}])
}

/// The chain: the ReplicaSet `web-7d9c`, unmarked, whose controller is the Deployment `web`,
/// which carries `marks`.
struct Chain {
    namespace: String,
    marks: Map<String, Value>,
    calls: Cell<usize>,
}

impl Parents for Chain {
    fn get(&self, lookup: &Lookup<'_>) -> Result<String, String> {
        self.calls.set(self.calls.get() + 1);
        let mut metadata = json!({"name": lookup.name, "namespace": self.namespace,
                                  "uid": format!("{}-uid", lookup.name)});
        match (lookup.kind, lookup.name) {
            ("ReplicaSet", "web-7d9c") => {
                metadata["ownerReferences"] = reference("Deployment", "web")
            }
            ("Deployment", "web") => {
                for (field, values) in &self.marks {
                    metadata[field] = values.clone();
                }
            }
            _ => return Err(format!("{} \"{}\" not found", lookup.kind, lookup.name)),
        }
        Ok(
            json!({"apiVersion": lookup.api_version, "kind": lookup.kind, "metadata": metadata})
                .to_string(),
        )
    }
}
