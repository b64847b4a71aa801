//! Leftovers: an owner that is there never loses its object without its offer, whatever its
//! lookup answers but not-found (24).

use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};
use single_owner_policy::policy::{Payload, Verdict};
use single_owner_policy::{ListLookup, Lookup, NoHost, Parents};

use crate::check;
use crate::generators::owner_sets_and_removals;

/// Where each mark's owners live, by the mark's shape: an Argo CD Application, an object of the
/// mark's first kind, Helm's records for a pair (or an object), any other object by its id.
fn with_lookups(settings: &mut Value, helm: bool) {
    for mark in settings["ownerMarks"].as_array_mut().into_iter().flatten() {
        let first_kind = (mark["clusterKinds"].get(0))
            .or(mark["namespacedKinds"].get(0))
            .cloned();
        mark["ownerLookup"] = match (&first_kind, mark["format"].as_str()) {
            (_, Some("ArgoCDTrackingID")) => {
                json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "namespace": "argocd"})
            }
            (Some(kind), _) => json!({"apiVersion": "example.io/v1", "kind": kind}),
            (None, _) if helm && mark["namespaceKey"].is_string() => {
                json!({"helmRecords": "Secret"})
            }
            (None, _) => json!({"apiVersion": "example.io/v1", "kind": "Owner"}),
        };
    }
}

/// A host that answers every lookup of an owner as `Answer` says.
#[derive(Debug, Clone, Copy)]
enum Answer {
    /// The owner is there: found; found and being deleted; unreadable.
    There(usize),
    /// The owner is gone: not found, no record.
    Gone,
}

impl Parents for Answer {
    fn get(&self, lookup: &Lookup<'_>) -> Result<String, String> {
        let found = json!({"apiVersion": lookup.api_version, "kind": lookup.kind,
            "metadata": {"name": lookup.name, "uid": "o-1"}});
        match self {
            Answer::There(0) => Ok(found.to_string()),
            Answer::There(1) => {
                let mut deleting = found;
                deleting["metadata"]["deletionTimestamp"] = json!("2026-12-03T08:00:00Z");
                Ok(deleting.to_string())
            }
            Answer::There(_) => Err(format!("{} \"{}\" is forbidden", lookup.kind, lookup.name)),
            Answer::Gone => Err(format!(
                "Cannot find {}/{} named '{}' inside of namespace '{:?}'",
                lookup.api_version, lookup.kind, lookup.name, lookup.namespace
            )),
        }
    }

    fn list(&self, _: &ListLookup<'_>) -> Result<String, String> {
        let record = |status: &str| {
            json!({"apiVersion": "v1", "kind": "SecretList", "metadata": {},
                "items": [{"metadata": {"labels": {"owner": "helm", "status": status, "version": "3"}}}]})
            .to_string()
        };
        match self {
            Answer::There(0) => Ok(record("deployed")),
            Answer::There(1) => Ok(record("uninstalling")),
            Answer::There(_) => Err(
                "Policy has not been granted access to Kubernetes v1/Secret resources.".to_owned(),
            ),
            Answer::Gone => Ok(json!({"items": []}).to_string()),
        }
    }
}

/// Whether `request` is admitted under `settings`, its owners read through `host`.
fn admitted(request: &Value, settings: &Value, host: &dyn Parents) -> Result<bool, TestCaseError> {
    let payload = serde_json::to_vec(&json!({"request": request, "settings": settings}))
        .map_err(|error| TestCaseError::fail(error.to_string()))?;
    let parsed = Payload::parse(&payload).map_err(TestCaseError::fail)?;
    Ok(matches!(
        parsed.verdict(host),
        Verdict::Allow | Verdict::Mutate(_) | Verdict::Exempt { .. }
    ))
}

/// 24. Leftovers (docs/rules.md, "Leftovers"): give every mark an `ownerLookup`. A host that
///     answers every lookup of an owner with anything but a not-found — the owner, the owner
///     being deleted, an error; a live Helm record, one being uninstalled, an error — changes no
///     verdict: an owner that is there never loses its object without its offer. One that
///     answers not-found only turns denials into admissions, never the other way: the owner is
///     read only after a denial.
#[test]
fn an_owner_that_is_there_keeps_its_object_whatever_its_lookup_answers() {
    let floors = [
        ("a denial the owner's lookup could turn", 20.0),
        ("a denial a gone owner turned", 4.0),
    ];
    check(owner_sets_and_removals(), &floors, |case, tally| {
        let request = case.request_json();
        // Helm's records for the pairs, or an object by name.
        for helm in [false, true] {
            let mut settings = case.settings.json();
            with_lookups(&mut settings, helm);
            let plain = admitted(&request, &settings, &NoHost)?;
            for there in 0..3 {
                let answered = admitted(&request, &settings, &Answer::There(there))?;
                proptest::prop_assert_eq!(
                    answered,
                    plain,
                    "an owner that is there ({:?}) changed the verdict",
                    Answer::There(there)
                );
            }
            let gone = admitted(&request, &settings, &Answer::Gone)?;
            proptest::prop_assert!(
                gone || !plain,
                "a gone owner turned an admission into a denial"
            );
            tally.count(!plain && !helm, "a denial the owner's lookup could turn");
            tally.count(gone && !plain && !helm, "a denial a gone owner turned");
        }
        Ok(())
    });
}
