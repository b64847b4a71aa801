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

/// Strings kept once, each named by its number: groups, kinds, namespaces, owners.
#[derive(Default)]
struct Names {
    all: Vec<Box<str>>,
    ids: HashMap<Box<str>, u32>,
}

impl Names {
    fn id(&mut self, text: &str) -> u32 {
        if let Some(id) = self.ids.get(text) {
            return *id;
        }
        let id = self.all.len() as u32;
        self.all.push(text.into());
        self.ids.insert(text.into(), id);
        id
    }

    fn get(&self, id: u32) -> &str {
        &self.all[id as usize]
    }
}

/// What is kept of each object: where it is, who owns it, and its controller when the
/// settings follow its kind.
struct Record {
    /// Its group, kind and namespace (empty: cluster-scoped), in [`Names`].
    place: [u32; 3],
    name: Box<str>,
    /// The valid owner (in [`Names`]) of each mark, in the order of the settings' marks.
    owners: Box<[Option<u32>]>,
    /// Its controller, of a followed kind: its group, kind and namespace in [`Names`], its
    /// name and uid.
    controller: Option<Box<Controller>>,
}

/// A controller an object names: its group, kind and namespace in [`Names`], its name and
/// uid.
type Controller = ([u32; 3], Box<str>, Box<str>);

/// An object's place in the dump: its group, kind, namespace (in [`Names`]) and name.
type Key = ([u32; 3], Box<str>);

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
    /// Owners found gone, and what they leave.
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
    /// Why it is gone: `not found`, `no record left`, `uninstalled`.
    pub why: &'static str,
    /// How many objects it leaves.
    pub objects: usize,
}

/// What the reading keeps while it streams.
#[derive(Default)]
struct Reading {
    names: Names,
    records: Vec<Record>,
    /// Where each object is among `records`.
    places: HashMap<Key, u32>,
    /// The groups and kinds (in [`Names`]) the dump holds.
    kinds: BTreeSet<(u32, u32)>,
    /// The uids of the objects of followed kinds, which may be controllers.
    uids: HashMap<u32, Box<str>>,
    /// Each mark's owner (by mark and owner) with where it lives, when its mark says, and
    /// how many objects name it.
    homes: BTreeMap<(usize, u32), (Home, usize)>,
    /// Helm's records, by `(kind, namespace, release)`.
    helm: HashMap<(String, String, String), Vec<HelmRecord>>,
    findings: BTreeMap<String, Vec<(String, String)>>,
}

/// The group of an `apiVersion`: what is before the `/`, empty for the core group.
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// An object as messages name it: `Kind namespace/name`, `Kind name`.
fn named(kind: &str, namespace: &str, name: &str) -> String {
    match namespace {
        "" => format!("{kind} {name}"),
        namespace => format!("{kind} {namespace}/{name}"),
    }
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
        if stored.kind == "Secret" || stored.kind == "ConfigMap" {
            self.helm_record(&stored.kind, &stored.namespace, text);
        }
        for (rule, message) in stored.reports {
            let found = named(&stored.kind, &stored.namespace, &stored.name);
            (self.findings.entry(rule.name().to_owned()).or_default()).push((found, message));
        }
        let at = self.records.len() as u32;
        let group = group_of(&stored.api_version);
        let place = [group, &stored.kind, &stored.namespace].map(|text| self.names.id(text));
        let mut owners = Vec::with_capacity(stored.claims.len());
        for (mark, claim) in stored.claims.into_iter().enumerate() {
            let Some(StoredClaim {
                owner,
                valid: true,
                home,
            }) = claim
            else {
                owners.push(None);
                continue;
            };
            let owner = self.names.id(&owner);
            if let Some(home) = home {
                self.homes.entry((mark, owner)).or_insert((home, 0)).1 += 1;
            }
            owners.push(Some(owner));
        }
        let followed = |api_version: &str, kind: &str| {
            (settings.parent_kinds.iter()).find(|parent| parent.names(api_version, kind))
        };
        if followed(&stored.api_version, &stored.kind).is_some() {
            self.uids.insert(at, stored.uid.into());
        }
        let controller = stored
            .controller
            .and_then(|[api_version, kind, name, uid]| {
                let parent = followed(&api_version, &kind)?;
                // Owner references are resolved in the object's namespace, a cluster-scoped
                // owner's at the cluster's.
                let namespace = match parent.cluster_scoped {
                    true => "",
                    false => &stored.namespace,
                };
                let place =
                    [group_of(&api_version), &kind, namespace].map(|text| self.names.id(text));
                Some(Box::new((place, name.into(), uid.into())))
            });
        self.kinds.insert((place[0], place[1]));
        self.places.insert((place, stored.name.clone().into()), at);
        self.records.push(Record {
            place,
            name: stored.name.into(),
            owners: owners.into(),
            controller,
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

    /// An object of `records`, as messages name it.
    fn named(&self, record: &Record) -> String {
        let [_, kind, namespace] = record.place.map(|id| self.names.get(id));
        named(kind, namespace, &record.name)
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
        for record in &self.records {
            let [_, kind, namespace] = record.place.map(|id| self.names.get(id));
            let name = match namespace {
                "" => record.name.to_string(),
                namespace => format!("{namespace}/{}", record.name),
            };
            for (mark, owner) in record.owners.iter().enumerate() {
                let Some(owner) = owner else { continue };
                let owner = (marks[mark].clone(), self.names.get(*owner).to_owned());
                let kinds = inventory.owners.entry(owner).or_default();
                kinds.entry(kind.to_owned()).or_default().push(name.clone());
            }
        }
        for ((mark, owner), (home, objects)) in &self.homes {
            let (home, why) = match self.gone(home) {
                Told::There => continue,
                Told::Unchecked(kind) => {
                    inventory.unchecked.insert(kind);
                    continue;
                }
                Told::Gone(home, why) => (home, why),
            };
            inventory.leftovers.push(Leftover {
                mark: marks[*mark].clone(),
                owner: self.names.get(*owner).to_owned(),
                home,
                why,
                objects: *objects,
            });
        }
        inventory.out_of_step = self.out_of_step(&marks);
        inventory
    }

    /// Whether the owner that lives at `home` is gone, as far as the dump tells.
    fn gone(&self, home: &Home) -> Told {
        let id = |text: &str| self.names.ids.get(text).copied();
        match home {
            Home::Object([api_version, kind, namespace, name]) => {
                let [group, kind_id] = [group_of(api_version), kind].map(id);
                let (Some(group), Some(kind_id)) = (group, kind_id) else {
                    return Told::Unchecked(format!("{kind} ({api_version})"));
                };
                let held = self.kinds.contains(&(group, kind_id));
                if !held {
                    return Told::Unchecked(format!("{kind} ({api_version})"));
                }
                let there = id(namespace).is_some_and(|ns| {
                    self.places
                        .contains_key(&([group, kind_id, ns], name.as_str().into()))
                });
                match there {
                    true => Told::There,
                    false => Told::Gone(named(kind, namespace, name), "not found"),
                }
            }
            Home::HelmRecords([kind, namespace, release]) => {
                let home = format!("Helm release {namespace}/{release}");
                let held = (id(""), id(kind));
                let held =
                    matches!(held, (Some(core), Some(kind)) if self.kinds.contains(&(core, kind)));
                if !held {
                    return Told::Unchecked(format!("{kind} (v1), Helm's records"));
                }
                let key = (kind.clone(), namespace.clone(), release.clone());
                let last = (self.helm.get(&key).into_iter().flatten()).max_by_key(|(v, _)| *v);
                match last {
                    None => Told::Gone(home, "no record left"),
                    Some((_, status)) if status == "uninstalled" => Told::Gone(home, "uninstalled"),
                    Some(_) => Told::There,
                }
            }
        }
    }

    /// The objects whose mark names another owner than their controller, of a followed kind and
    /// in the dump, carries.
    fn out_of_step(&self, marks: &[String]) -> Vec<[String; 5]> {
        let mut out = Vec::new();
        for record in &self.records {
            let Some(controller) = &record.controller else {
                continue;
            };
            let (place, name, uid) = &**controller;
            let Some(at) = self.places.get(&(*place, name.clone())) else {
                continue;
            };
            if self.uids.get(at) != Some(uid) {
                continue;
            }
            let parent = &self.records[*at as usize];
            for (mark, owner) in record.owners.iter().enumerate() {
                let Some(owner) = owner else { continue };
                let carried = parent.owners.get(mark).copied().flatten();
                if carried != Some(*owner) {
                    let carries = carried.map_or("none".to_owned(), |carried| {
                        format!("{:?}", self.names.get(carried))
                    });
                    out.push([
                        self.named(record),
                        marks[mark].clone(),
                        self.names.get(*owner).to_owned(),
                        self.named(parent),
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
