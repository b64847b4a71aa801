//! The inventory: who owns what in a dump of a cluster's objects (`kubectl get <kinds> -A -o
//! json`, a List), read with the policy's own reading of marks and settings
//! ([`single_owner_policy::stored`]): each owner's objects by kind, objects two tools' owners
//! claim and the audit's other findings, leftovers, stale offers, children out of step with
//! their controller, and a summary.
//!
//! The List is read as a stream, one item at a time: memory grows with the largest object and
//! with what is kept of each (its kind, name, owners and controller), not with the dump.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;

use serde::Deserialize;
use serde_json::{Value, json};
use single_owner_policy::Settings;
use single_owner_policy::stored::{self, Home, StoredClaim};

mod render;
mod stream;

/// What is kept of each object.
struct Record {
    /// `Kind namespace/name`, or `Kind name`.
    named: String,
    kind: String,
    /// Each mark's claim, in the order of the settings' marks.
    claims: Vec<Option<StoredClaim>>,
    /// Its controller: `apiVersion`, kind, name, uid.
    controller: Option<[String; 4]>,
}

/// An object's place in the dump: its group, kind, namespace (empty: cluster-scoped) and name.
type Key = (String, String, String, String);

/// A Helm release's record, from the labels Helm writes on it (helm/helm
/// `pkg/storage/driver/secrets.go`): its version and status.
type HelmRecord = (u64, String);

/// Who owns what in a dump.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Inventory {
    /// How many objects were read.
    pub objects: usize,
    /// Each owner, under its mark (as messages name it), with its objects by kind.
    pub owners: BTreeMap<(String, String), BTreeMap<String, Vec<String>>>,
    /// What the audit reports of the objects, by rule: each object and the report's message.
    pub findings: BTreeMap<String, Vec<(String, String)>>,
    /// Owners found gone: mark, owner, where it should live, why it is gone, how many objects
    /// it leaves.
    pub leftovers: Vec<Leftover>,
    /// The owners' kinds not in the dump, so that their owners could not be told gone.
    pub unchecked: BTreeSet<String>,
    /// Objects whose mark differs from what their controller carries: the object, the mark,
    /// its owner, the controller and what it carries.
    pub out_of_step: Vec<[String; 5]>,
}

/// An owner found gone, and what it leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    /// The mark, as messages name it.
    pub mark: String,
    /// The owner.
    pub owner: String,
    /// Where it should live: `ClusterExtension cert-manager`, `Helm release shop/web`.
    pub home: String,
    /// Why it is gone: `not found`, `no record`, `uninstalled`.
    pub why: &'static str,
    /// How many objects it leaves.
    pub objects: usize,
}

/// What the reading keeps while it streams.
#[derive(Default)]
struct Reading {
    records: Vec<Record>,
    /// Where each object is among `records`, with its uid and whether it is being deleted.
    places: HashMap<Key, (usize, String, bool)>,
    /// The `(group, kind)`s the dump holds.
    kinds: BTreeSet<(String, String)>,
    /// Helm's records, by `(kind, namespace, release)`.
    helm: HashMap<(String, String, String), Vec<HelmRecord>>,
    findings: BTreeMap<String, Vec<(String, String)>>,
}

/// The group of an `apiVersion`: what is before the `/`, empty for the core group.
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// The labels of an object, for Helm's records.
#[derive(Deserialize)]
struct Labelled {
    #[serde(default)]
    metadata: LabelledMetadata,
}

#[derive(Default, Deserialize)]
struct LabelledMetadata {
    #[serde(default)]
    labels: Option<BTreeMap<String, String>>,
}

impl Reading {
    /// Reads one item of the List.
    fn item(&mut self, index: usize, text: &str, settings: &Settings) -> Result<(), String> {
        let stored =
            stored::read(text, settings).map_err(|why| format!("items[{index}]: {why}"))?;
        let named = match stored.namespace.as_str() {
            "" => format!("{} {}", stored.kind, stored.name),
            namespace => format!("{} {namespace}/{}", stored.kind, stored.name),
        };
        let group = group_of(&stored.api_version).to_owned();
        if stored.kind == "Secret" || stored.kind == "ConfigMap" {
            self.helm_record(&stored.kind, &stored.namespace, text);
        }
        for (rule, message) in stored.reports {
            let findings = self.findings.entry(rule.name().to_owned()).or_default();
            findings.push((named.clone(), message));
        }
        let key = (
            group.clone(),
            stored.kind.clone(),
            stored.namespace,
            stored.name,
        );
        self.kinds.insert((group, stored.kind.clone()));
        let place = (self.records.len(), stored.uid, stored.deleting);
        self.places.insert(key, place);
        self.records.push(Record {
            named,
            kind: stored.kind,
            claims: stored.claims,
            controller: stored.controller,
        });
        Ok(())
    }

    /// Keeps a Secret or ConfigMap that is a Helm release's record.
    fn helm_record(&mut self, kind: &str, namespace: &str, text: &str) {
        let Ok(labelled) = serde_json::from_str::<Labelled>(text) else {
            return;
        };
        let labels = labelled.metadata.labels.unwrap_or_default();
        if labels.get("owner").map(String::as_str) != Some("helm") {
            return;
        }
        let (Some(release), Some(status)) = (labels.get("name"), labels.get("status")) else {
            return;
        };
        let version = labels.get("version").and_then(|v| v.parse().ok());
        let key = (kind.to_owned(), namespace.to_owned(), release.clone());
        (self.helm.entry(key).or_default()).push((version.unwrap_or(0), status.clone()));
    }

    /// The inventory of what was read.
    fn inventory(mut self, settings: &Settings) -> Inventory {
        let marks: Vec<String> = (settings.owner_marks.iter())
            .map(|mark| mark.name().to_string())
            .collect();
        let mut inventory = Inventory {
            objects: self.records.len(),
            findings: std::mem::take(&mut self.findings),
            ..Inventory::default()
        };
        let mut homes: BTreeMap<(usize, String), (Home, usize)> = BTreeMap::new();
        for record in &self.records {
            for (index, claim) in record.claims.iter().enumerate() {
                let Some(claim) = claim.as_ref().filter(|claim| claim.valid) else {
                    continue;
                };
                let owner = (marks[index].clone(), claim.owner.clone());
                let kinds = inventory.owners.entry(owner).or_default();
                kinds
                    .entry(record.kind.clone())
                    .or_default()
                    .push((record.named.split_once(' ').map_or("", |(_, name)| name)).to_owned());
                if let Some(home) = &claim.home {
                    let counted = homes.entry((index, claim.owner.clone()));
                    counted.or_insert((home.clone(), 0)).1 += 1;
                }
            }
        }
        for ((index, owner), (home, objects)) in homes {
            let (named, why) = match self.gone(&home) {
                Told::There => continue,
                Told::Unchecked(kind) => {
                    inventory.unchecked.insert(kind);
                    continue;
                }
                Told::Gone(named, why) => (named, why),
            };
            inventory.leftovers.push(Leftover {
                mark: marks[index].clone(),
                owner,
                home: named,
                why,
                objects,
            });
        }
        inventory.out_of_step = self.out_of_step(settings, &marks);
        inventory
    }

    /// Whether the owner that lives at `home` is gone, as far as the dump tells.
    fn gone(&self, home: &Home) -> Told {
        match home {
            Home::Object([api_version, kind, namespace, name]) => {
                let group = group_of(api_version).to_owned();
                let named = match namespace.as_str() {
                    "" => format!("{kind} {name}"),
                    namespace => format!("{kind} {namespace}/{name}"),
                };
                if !self.kinds.contains(&(group.clone(), kind.clone())) {
                    return Told::Unchecked(format!("{kind} ({api_version})"));
                }
                let key = (group, kind.clone(), namespace.clone(), name.clone());
                match self.places.contains_key(&key) {
                    true => Told::There,
                    false => Told::Gone(named, "not found"),
                }
            }
            Home::HelmRecords([kind, namespace, release]) => {
                let named = format!("Helm release {namespace}/{release}");
                if !self.kinds.contains(&(String::new(), kind.clone())) {
                    return Told::Unchecked(format!("{kind} (v1), Helm's records"));
                }
                let key = (kind.clone(), namespace.clone(), release.clone());
                let last = (self.helm.get(&key).into_iter().flatten()).max_by_key(|(v, _)| *v);
                match last {
                    None => Told::Gone(named, "no record"),
                    Some((_, status)) if status == "uninstalled" => {
                        Told::Gone(named, "uninstalled")
                    }
                    Some(_) => Told::There,
                }
            }
        }
    }

    /// The objects whose mark names another owner than their controller, of a followed kind and
    /// in the dump, carries.
    fn out_of_step(&self, settings: &Settings, marks: &[String]) -> Vec<[String; 5]> {
        let mut out = Vec::new();
        for record in &self.records {
            let Some([api_version, kind, name, uid]) = &record.controller else {
                continue;
            };
            let Some(followed) =
                (settings.parent_kinds.iter()).find(|parent| parent.names(api_version, kind))
            else {
                continue;
            };
            let namespace = match followed.cluster_scoped {
                true => String::new(),
                false => record
                    .named
                    .split_once(' ')
                    .map_or("", |(_, name)| name)
                    .rsplit_once('/')
                    .map_or("", |(namespace, _)| namespace)
                    .to_owned(),
            };
            let key = (
                group_of(api_version).to_owned(),
                kind.clone(),
                namespace,
                name.clone(),
            );
            let Some((at, stored_uid, _)) = self.places.get(&key) else {
                continue;
            };
            if stored_uid != uid {
                continue;
            }
            let controller = &self.records[*at];
            for (index, claim) in record.claims.iter().enumerate() {
                let Some(claim) = claim.as_ref().filter(|claim| claim.valid) else {
                    continue;
                };
                let carried = controller.claims.get(index).cloned().flatten();
                if carried.as_ref().map(|carried| &carried.owner) != Some(&claim.owner) {
                    let carries = carried.map_or("none".to_owned(), |c| format!("{:?}", c.owner));
                    out.push([
                        record.named.clone(),
                        marks[index].clone(),
                        claim.owner.clone(),
                        controller.named.clone(),
                        carries,
                    ]);
                }
            }
        }
        out
    }
}

/// What the dump tells of an owner.
enum Told {
    There,
    /// Its kind is not in the dump.
    Unchecked(String),
    /// Gone: where it should live, and why it is gone.
    Gone(String, &'static str),
}

/// The settings in `yaml`: a settings file, or a policy's manifest (`make manifest`'s, whose
/// `spec.settings` they are; of two twins, the judging one's).
pub fn policy_settings(yaml: &str) -> Result<Settings, String> {
    let mut judging = None;
    for document in serde_yaml::Deserializer::from_str(yaml) {
        let document =
            Value::deserialize(document).map_err(|error| format!("not YAML: {error}"))?;
        let settings = &document["spec"]["settings"];
        let is_policy = document["kind"]
            .as_str()
            .is_some_and(|kind| kind.ends_with("Policy"));
        if !is_policy {
            return crate::read_settings(yaml);
        }
        if settings.is_object() && settings["stampOnly"] != json!(true) {
            judging = Some(settings.clone());
        }
    }
    let settings = judging.ok_or("a policy without settings: give its settings file")?;
    let yaml = serde_yaml::to_string(&settings).map_err(|error| error.to_string())?;
    crate::read_settings(&yaml)
}

/// Reads a List (`kubectl get … -o json`) from `input`, item by item, under `settings`.
pub fn read(input: impl Read, settings: &Settings) -> Result<Inventory, String> {
    let mut reading = Reading::default();
    stream::items(input, |index, item| reading.item(index, item, settings))?;
    Ok(reading.inventory(settings))
}
