//! Stored objects, as `kubectl get -o json` prints them, read as the policy reads a request's
//! object: what each owner mark claims, where its owner lives, the controller, and what the
//! background audit would report of the object. For tools that take stock of a
//! cluster with the policy's own reading (`kubectl single-owner inventory`).

use std::borrow::Cow;

use serde::Deserialize;

use crate::decision;
use crate::derivation::NoHost;
use crate::error_path;
use crate::facts::{Facts, Sides};
use crate::owner::{HelmDriver, Whereabouts};
use crate::request::AdmissionRequest;
use crate::settings::Settings;
use crate::violation::Rule;

/// What the policy reads of a stored object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// Its `apiVersion`.
    pub api_version: String,
    /// Its kind.
    pub kind: String,
    /// Its namespace; empty for a cluster-scoped object.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its `metadata.uid`.
    pub uid: String,
    /// Each owner mark's claim, in the order of the settings' marks: `None` where the object
    /// carries none.
    pub claims: Vec<Option<StoredClaim>>,
    /// Its controller (the `ownerReferences` entry with `controller: true`): `apiVersion`,
    /// kind, name, uid.
    pub controller: Option<[String; 4]>,
    /// What the background audit reports of it, without lookups: each violation's rule and
    /// message.
    pub reports: Vec<(Rule, String)>,
}

/// What one mark of a stored object claims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredClaim {
    /// The owner, as identities and messages name it (`ClusterExtension.cert-manager`,
    /// `shop/web`).
    pub owner: String,
    /// Whether the value names a valid owner.
    pub valid: bool,
    /// Where that owner lives, if its mark says (`ownerLookup`).
    pub home: Option<Home>,
}

/// Where an owner lives, owned.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Home {
    /// An object: `apiVersion`, kind, namespace (empty: cluster-scoped), name.
    Object([String; 4]),
    /// A Helm release's records, as Secrets or ConfigMaps: their kind, the release's namespace
    /// and name.
    HelmRecords([String; 3]),
}

/// The parts of an object read to replay it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Header<'a> {
    #[serde(default, borrow)]
    api_version: Cow<'a, str>,
    #[serde(default, borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    metadata: HeaderMetadata<'a>,
}

#[derive(Default, Deserialize)]
struct HeaderMetadata<'a> {
    #[serde(default, borrow)]
    name: Cow<'a, str>,
    #[serde(default, borrow)]
    namespace: Cow<'a, str>,
}

/// Reads `object`, the JSON of a stored object, under `settings`; an error names what could
/// not be read.
pub fn read(object: &str, settings: &Settings) -> Result<Stored, String> {
    let header: Header<'_> = serde_json::from_str(object).map_err(|error| error.to_string())?;
    if header.kind.is_empty() || header.api_version.is_empty() {
        return Err("an object needs apiVersion and kind".to_owned());
    }
    let (group, version) = header
        .api_version
        .rsplit_once('/')
        .unwrap_or(("", &header.api_version));
    let quoted = |text: &str| serde_json::to_string(text).unwrap_or_default();
    let (group, version, kind) = (quoted(group), quoted(version), quoted(&header.kind));
    // The audit scanner's request: a CREATE of the object, with no user (see
    // `AdmissionRequest::is_audit_replay`).
    let replay = format!(
        r#"{{"uid":"","kind":{{"group":{group},"version":{version},"kind":{kind}}},"resource":{{"group":{group},"version":{version},"resource":{kind}}},"name":{},"namespace":{},"operation":"CREATE","userInfo":{{}},"object":{object}}}"#,
        quoted(&header.metadata.name),
        quoted(&header.metadata.namespace),
    );
    let request: AdmissionRequest<'_> = serde_json::from_str(&replay).map_err(|error| {
        // The field of the object, without the replay's position, which is not the input's.
        let path = error_path::path(replay.as_bytes(), &error);
        let message = error.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(&*message, |(message, _)| message);
        match path.strip_prefix("object.") {
            Some(path) => format!("{path}: {message}"),
            None => message.to_owned(),
        }
    })?;
    let sides = Sides::of(&request, settings)?.ok_or("the object is not one the policy reads")?;
    let facts = Facts::read(&request, settings, sides)?;
    let stored = facts.sides.object();
    let claims = (facts.object_entries())
        .map(|entry| {
            let claim = entry.new.filter(|claim| !claim.is_none())?;
            let owner = claim.owner(entry.mark).ok();
            let lookup = entry.mark.owner_lookup.as_ref();
            let home = lookup
                .zip(owner)
                .and_then(|(lookup, owner)| lookup.whereabouts(entry.mark, owner))
                .map(home);
            Some(StoredClaim {
                owner: claim.id(),
                valid: owner.is_some(),
                home,
            })
        })
        .collect();
    let controller = (stored.metadata.controller().ok().flatten()).map(|reference| {
        [
            reference.api_version,
            reference.kind,
            reference.name,
            reference.uid,
        ]
        .map(|text| text.to_string())
    });
    let reports = (decision::replay(&facts, &NoHost).iter())
        .map(|violation| (violation.rule(), violation.to_string()))
        .collect();
    Ok(Stored {
        api_version: header.api_version.into_owned(),
        kind: header.kind.into_owned(),
        namespace: header.metadata.namespace.into_owned(),
        name: header.metadata.name.into_owned(),
        uid: stored.metadata.uid().unwrap_or_default().to_string(),
        claims,
        controller,
        reports,
    })
}

/// Where an owner lives, owned.
fn home(whereabouts: Whereabouts<'_>) -> Home {
    match whereabouts {
        Whereabouts::Object {
            api_version,
            kind,
            name,
            namespace,
        } => Home::Object([api_version, kind, namespace.unwrap_or(""), name].map(str::to_owned)),
        Whereabouts::HelmRecords {
            driver,
            namespace,
            release,
        } => Home::HelmRecords([HelmDriver::kind(driver), namespace, release].map(str::to_owned)),
    }
}
