//! Leftovers: objects whose owner is gone. An owner mark outlives its owner — `helm uninstall`
//! keeps a chart's `crds/` and `helm.sh/resource-policy: keep` objects (helm/helm
//! `pkg/action/uninstall.go`, `pkg/kube/resource_policy.go`), a Flux Kustomization deleted with
//! `prune: false` orphans what it applied, an Argo CD Application deleted without its resources
//! finalizer leaves its resources, a ClusterExtension deleted with `--cascade=orphan` its objects
//! — and nobody could take them: the gone owner makes no offer, and nobody acts for it. A mark
//! whose settings say where its owners live (`ownerLookup`, [`crate::owner::OwnerLookup`]) lets
//! the policy ask.
//!
//! | a request the rules deny, that moves a stored owner A (A → B, A → none) under a mark with `ownerLookup` | verdict |
//! |---|---|
//! | A read — past policy-server's cache, or Helm's records from its watch — and not found (no live record for a Helm release: none, or the last `uninstalled`) | A is gone: judged as an object nobody owns. A → B as none → B (owner value, scope, one owner, identity for B, `adoption`); A → none by a requester that acts for some owner, whoever may adopt it (anyone without identities) |
//! | A found, or being deleted (`deletionTimestamp`), or its read fails | A is there: judged as before; the denial says what was found |
//! | an owner of a kind the lookup is not for, a mark without `ownerLookup`, a request the rules allow | nothing read |
//!
//! An audit replay reads the owner of each mark with `ownerLookup` (through the cache) and
//! reports an object whose owner was found gone (rule `leftover`), so that what an uninstall
//! left behind is seen before anyone adopts it.

use serde::Deserialize;
use std::collections::BTreeMap;

use crate::derivation::{self, ListLookup, Lookup, Parents};
use crate::facts::{Entry, Facts};
use crate::owner::{Claim, OwnerMark, Whereabouts};
use crate::request::Object;
use crate::violation::{Change, OwnerFinding, OwnerFound, Reason, Violation};

/// What the lookups of the owners a request moves found.
#[derive(Debug, Default)]
pub struct Owners {
    /// Each owner read: its mark's key, its id, and what was found.
    read: Vec<(String, String, OwnerFound)>,
}

impl Owners {
    /// Nothing read.
    pub fn unread() -> Owners {
        Owners::default()
    }

    /// Reads the stored owner of each entry of `facts` that a violation names and that the
    /// request moves, under a mark with `ownerLookup`, once each; `None` when none was read.
    pub fn read(
        facts: &Facts<'_>,
        violations: &[Violation<'_>],
        parents: &dyn Parents,
    ) -> Option<Owners> {
        let mut owners = Owners::default();
        for entry in &facts.entries {
            let named = |violation: &Violation<'_>| {
                violation.mark.key == entry.mark.key && violation.template == entry.template
            };
            let Some(old) = moved(entry).filter(|_| violations.iter().any(named)) else {
                continue;
            };
            let id = old.id();
            if owners.get(&entry.mark.key, &id).is_some() {
                continue;
            }
            if let Some(found) = find(entry.mark, old, parents, true) {
                owners.read.push((entry.mark.key.clone(), id, found));
            }
        }
        (!owners.read.is_empty()).then_some(owners)
    }

    /// What the lookup of `entry`'s stored owner found, if it was read.
    pub fn found(&self, entry: &Entry<'_>) -> Option<&OwnerFound> {
        self.get(&entry.mark.key, &moved(entry)?.id())
    }

    /// What the lookup of the owner `id` under the mark of key `mark` found, if it was read.
    fn get(&self, mark: &str, id: &str) -> Option<&OwnerFound> {
        (self.read.iter())
            .find(|(key, owner, _)| key == mark && owner == id)
            .map(|(.., found)| found)
    }

    /// `entry` as the rules judge it: its stored owner read as none when it was found gone.
    pub fn judged<'a>(&self, entry: &Entry<'a>) -> Entry<'a> {
        match self.found(entry) {
            Some(found) if found.finding.gone() => Entry {
                old: Some(Claim::default()),
                ..*entry
            },
            _ => *entry,
        }
    }
}

/// The stored owner a CREATE or UPDATE moves under `entry`'s mark (to another, or to none): the
/// one whose lookup may find it gone. A DELETE moves none: what a gone owner's objects may be
/// written by is not a leftover's question.
fn moved<'a>(entry: &Entry<'a>) -> Option<Claim<'a>> {
    let old = entry.old.filter(|old| !old.is_none())?;
    (entry.new.is_some() && entry.moves()).then_some(old)
}

/// Reads where `owner` (a valid owner of `mark`) lives, if the mark says; `past_cache` reads an
/// object past policy-server's cache (Helm's records come from its watch either way).
fn find(
    mark: &OwnerMark,
    owner: Claim<'_>,
    parents: &dyn Parents,
    past_cache: bool,
) -> Option<OwnerFound> {
    let lookup = mark.owner_lookup.as_ref()?;
    let whereabouts = lookup.whereabouts(mark, owner.owner(mark).ok()?)?;
    let finding = match whereabouts {
        Whereabouts::Object {
            api_version,
            kind,
            name,
            namespace,
        } => {
            let read = parents.get(&Lookup {
                api_version,
                kind,
                name,
                namespace,
                disable_cache: past_cache,
            });
            match read {
                Ok(text) => match serde_json::from_str::<Object<'_>>(&text) {
                    Ok(object) if object.metadata.deletion_timestamp.is_some() => {
                        OwnerFinding::Deleting
                    }
                    Ok(_) => OwnerFinding::Exists,
                    Err(error) => OwnerFinding::Unreadable(error.to_string()),
                },
                Err(error) if derivation::is_not_found(&error) => OwnerFinding::NotFound,
                Err(error) => OwnerFinding::Unreadable(error),
            }
        }
        Whereabouts::HelmRecords {
            driver,
            namespace,
            release,
        } => {
            let selector = format!("owner=helm,name={release}");
            let read = parents.list(&ListLookup {
                api_version: "v1",
                kind: driver.kind(),
                namespace,
                label_selector: &selector,
                // The labels say all: not the release's manifest, kept in the watch.
                field_masks: &["metadata.labels"],
            });
            match read.map(|text| serde_json::from_str::<Records>(&text)) {
                Ok(Ok(records)) => records.finding(),
                Ok(Err(error)) => OwnerFinding::Unreadable(error.to_string()),
                Err(error) => OwnerFinding::Unreadable(error),
            }
        }
    };
    Some(OwnerFound {
        owner: whereabouts.named(),
        finding,
    })
}

/// A Helm release's records, as a list of Secrets or ConfigMaps: the labels Helm writes on each
/// (`name`, `owner`, `status`, `version`: helm/helm `pkg/storage/driver/secrets.go`,
/// `newSecretsObject`).
#[derive(Deserialize)]
struct Records {
    #[serde(default)]
    items: Vec<Record>,
}

#[derive(Deserialize)]
struct Record {
    metadata: RecordMetadata,
}

#[derive(Deserialize)]
struct RecordMetadata {
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

impl Records {
    /// Whether the release lives: it has a record, and its last (the highest `version`) does
    /// not say `uninstalled` — `helm uninstall` deletes every record, or, with `--keep-history`,
    /// marks the last one so (`pkg/action/uninstall.go`). A record being uninstalled, failed or
    /// pending is a release that lives.
    fn finding(&self) -> OwnerFinding {
        let version = |record: &&Record| {
            let version = record.metadata.labels.get("version");
            version.and_then(|version| version.parse::<u64>().ok())
        };
        let last = self.items.iter().max_by_key(version);
        match last.and_then(|record| record.metadata.labels.get("status")) {
            None if last.is_none() => OwnerFinding::NoRecord,
            Some(status) if status == "uninstalled" => OwnerFinding::Uninstalled,
            _ => OwnerFinding::Exists,
        }
    }
}

/// The audit rule of leftovers: each mark of the object's own that names an owner whose lookup
/// found it gone.
pub fn audit<'a>(facts: &Facts<'a>, parents: &dyn Parents) -> Vec<Violation<'a>> {
    facts
        .object_entries()
        .filter_map(|entry| {
            let owner = entry.new.filter(|claim| !claim.is_none())?;
            let found = find(entry.mark, owner, parents, false)?;
            (found.finding.gone())
                .then(|| facts.entry_violation(entry, Change::kept(owner), Reason::Leftover(found)))
        })
        .collect()
}
