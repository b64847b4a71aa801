//! Unmarked children: an object without a mark whose controller is a workload (or a kind of
//! `parentKinds`) is owned by whoever owns the first marked controller up its chain. Flux labels
//! the objects it applies and Helm annotates them, but neither marks a pod template: the
//! ReplicaSets and Pods of an owned Deployment carry no mark, and the controllers that make them
//! copy only the template (`getNewReplicaSet`, kubernetes `pkg/controller/deployment/sync.go`;
//! `GetPodFromTemplate`, `pkg/controller/controller_utils.go`).
//!
//! | a write of an object without a mark, under `writes: Owner` (the object itself, `pods/ephemeralcontainers`, `pods/resize`, a `scale`, a Binding's UPDATE), or a DELETE | verdict |
//! |--------------------------------------------------------------------------------------|---------|
//! | a CREATE, or a write the rules do not judge (a status write that stores no metadata) | as without its controllers: nobody's (the ReplicaSet controller's Pods are the control plane's) |
//! | a status write (`pods/status`), which stores the annotations node agents write: Calico's CNI plugin its `cni.projectcalico.org/podIP` (a patch of `status`, libcalico-go `workloadendpoint.go` `patchPodAnnotations`), Multus its `network-status` (`UpdateStatus`, `setPodNetworkStatus`), istio-cni its `ambient.istio.io/redirection` | nobody's: an unmarked Pod's observed network state is its node's to write |
//! | by a requester the control plane's table trusts, or that writes for every owner (`*`, `*/*`) | allowed, nothing read |
//! | that finishes a deletion under way, changes nothing, or only adds finalizers        | allowed, nothing read |
//! | whose stored controller is of a kind of [`CONTROLLERS`] or `parentKinds`             | the chain read, up to [`READS`] controllers, to the first that carries a mark: the write judged as one of an object that carries those marks (`owner writes`) |
//! | a controller of another kind, none carrying a mark within [`READS`], one not found, or another object (uid) than named, past the cache | nobody's: its controller is gone, and the garbage collector deletes it |
//! | a controller that cannot be read                                                     | denied, saying what policy-server needs |
//!
//! The stored object's controller is followed, not the new one's: repointing a child is itself
//! a write of it.

use serde_json::{Map, Value, json};

use crate::control_plane;
use crate::deletion;
use crate::derivation::{self, Checked, Lookup, Parents};
use crate::edit::{self, Edit};
use crate::facts::{Sides, annotation_keys, carries_a_mark};
use crate::identity::Acting;
use crate::owner::{Claim, Marks, OwnerMark, Place, Tracked};
use crate::reach::{self, Reach, Reached, Refusal};
use crate::request::{AdmissionRequest, DECLARING_SUBRESOURCES, Object, Operation, OwnerReference};
use crate::settings::{Settings, group_of};

/// The built-in controllers whose children carry no mark of their own, as `(apiVersion, kind)`:
/// Kubernetes' workloads, which make Pods and ReplicaSets and Jobs from templates.
pub const CONTROLLERS: [(&str, &str); 7] = [
    ("apps/v1", "Deployment"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("batch/v1", "Job"),
    ("batch/v1", "CronJob"),
    ("v1", "ReplicationController"),
];

/// How many controllers up a chain are read, at most: a Pod's ReplicaSet and Deployment, a
/// Pod's Job and CronJob, and one followed kind above them.
pub const READS: usize = 3;

/// A write of an unmarked object reaches the owner of its controllers (see the table): the
/// chain read, and the write rewritten as one of the object carrying that owner's marks.
pub fn reach<'a>(
    text: &str,
    request: &'a AdmissionRequest<'a>,
    settings: &Settings,
    parents: &dyn Parents,
) -> Reach {
    let mut next = judged(request, settings)?;
    let mut chain = Vec::new();
    for _ in 0..READS {
        let link = Link::of(&next, settings)?;
        let lookup = link.lookup(&request.namespace);
        // A controller that is gone — not found, or another object of its name — owns
        // nothing.
        let read = match derivation::read_checked(parents, &lookup, &next.uid) {
            Ok(Checked::The(read)) => read,
            Ok(Checked::Another { .. }) => return None,
            Err(error) if derivation::is_not_found(&error) => return None,
            Err(error) => return Some(Err(Refusal::Denied(unreadable(request, &lookup, &error)))),
        };
        let controller = match serde_json::from_str::<Object<'_>>(&read) {
            Ok(controller) => controller,
            Err(error) => {
                let why = format!(
                    "the {} read for the chain is not an object: {error}",
                    link.kind
                );
                return Some(Err(Refusal::Unreadable(why)));
            }
        };
        chain.push(lookup.named());
        match marks_of(&controller, &lookup, settings) {
            Ok(marks) if !marks.is_empty() => {
                let because = because(request, &chain);
                let payload = as_marked(text, request, &marks);
                return Some(payload.map(|payload| Reached { payload, because }));
            }
            Ok(_) => {}
            Err(why) => return Some(Err(Refusal::Unreadable(why))),
        }
        next = controller.metadata.controller().ok()??.into_owned();
    }
    None
}

/// The stored object's controller, when the request is a write of an unmarked object whose
/// verdict its controllers' owner could change (the table's rows above the chain's).
fn judged<'a>(request: &'a AdmissionRequest<'a>, settings: &Settings) -> Option<Reference> {
    let declaring = || {
        DECLARING_SUBRESOURCES
            .iter()
            .any(|sub| request.targets(*sub))
    };
    if !settings.judges_writes()
        || request.namespace.is_empty()
        || !(request.writes_the_object() || declaring())
    {
        return None;
    }
    let sides = Sides::of(request, settings).ok()??;
    let stored = sides.stored()?;
    if carries_a_mark(stored, settings) {
        return None;
    }
    // The cheap tests first: most unmarked objects have no controller the chain follows.
    let reference = stored.metadata.controller().ok()??.into_owned();
    Link::of(&reference, settings)?;
    if control_plane::trusts(request, Some(stored), &settings.trusted_writers)
        || deletion::finishes(stored, sides.incoming(), &request.options)
    {
        return None;
    }
    if let Sides::Update(old, new) = sides
        && matches!(
            edit::of(old, new, request.is_subresource()),
            Edit::Unchanged | Edit::AddsFinalizers
        )
    {
        return None;
    }
    let acting = Acting::of(&request.user_info, &settings.identities);
    let every = |mark: &OwnerMark| acting.writes_for_every(mark.id_separator());
    (!settings.owner_marks.iter().all(every)).then_some(reference)
}

/// A controller reference, owned: the chain reads one object at a time.
struct Reference {
    api_version: String,
    kind: String,
    name: String,
    uid: String,
}

impl OwnerReference<'_> {
    fn into_owned(self) -> Reference {
        Reference {
            api_version: self.api_version.to_string(),
            kind: self.kind.to_string(),
            name: self.name.to_string(),
            uid: self.uid.to_string(),
        }
    }
}

/// A followed controller: where to read it.
struct Link<'a> {
    /// The `apiVersion` and kind to read it at.
    api_version: &'a str,
    kind: &'a str,
    name: &'a str,
    cluster_scoped: bool,
}

impl<'a> Link<'a> {
    /// The link to `reference`, when it names a kind of [`CONTROLLERS`] or `parentKinds`.
    fn of(reference: &'a Reference, settings: &'a Settings) -> Option<Link<'a>> {
        let named = (reference.api_version.as_str(), reference.kind.as_str());
        let name = &reference.name;
        if let Some(&(api_version, kind)) = CONTROLLERS.iter().find(|known| **known == named) {
            return Some(Link {
                api_version,
                kind,
                name,
                cluster_scoped: false,
            });
        }
        let followed = (settings.parent_kinds.iter()).find(|kind| kind.names(named.0, named.1))?;
        Some(Link {
            api_version: &followed.api_version,
            kind: &followed.kind,
            name,
            cluster_scoped: followed.cluster_scoped,
        })
    }

    /// Its lookup, from a child in `namespace`.
    fn lookup(&self, namespace: &'a str) -> Lookup<'a> {
        Lookup {
            api_version: self.api_version,
            kind: self.kind,
            name: self.name,
            namespace: (!self.cluster_scoped).then_some(namespace),
            disable_cache: false,
        }
    }
}

/// A key of a mark a controller carries, and its value, as its child carries it.
struct Carried {
    place: Place,
    key: String,
    value: String,
    /// Whether the value is the app of a tracking id, which names its object: the child's is
    /// written for it.
    tracks: bool,
}

/// The marks `controller` carries (as the lookup names it), each key and value.
fn marks_of(
    controller: &Object<'_>,
    lookup: &Lookup<'_>,
    settings: &Settings,
) -> Result<Vec<Carried>, String> {
    let marks = Marks {
        labels: &controller.metadata.labels,
        annotations: controller.mark_annotations(annotation_keys(settings))?,
        object: Some(Tracked {
            group: group_of(lookup.api_version),
            kind: lookup.kind,
            namespace: lookup.namespace.unwrap_or_default(),
            name: lookup.name,
        }),
    };
    let mut carried = Vec::new();
    for mark in &settings.owner_marks {
        let claim = Claim::read(mark, &marks);
        let carry = |key: &str, value: &str, tracks| Carried {
            place: mark.place,
            key: key.to_owned(),
            value: value.to_owned(),
            tracks,
        };
        match (claim.values(mark), claim.value) {
            (_, _) if claim.is_none() => {}
            (Some(values), _) => {
                carried.extend(
                    values
                        .into_iter()
                        .map(|(key, value)| carry(key, value, false)),
                );
            }
            (None, Some(value)) => carried.push(carry(&mark.key, value, !claim.malformed)),
            (None, None) => {}
        }
    }
    Ok(carried)
}

/// The payload of the write (its text), both its sides given the `carried` marks where they do
/// not carry the key: the write of an object that carries its controllers' owner.
fn as_marked(
    text: &str,
    request: &AdmissionRequest<'_>,
    carried: &[Carried],
) -> Result<Vec<u8>, Refusal> {
    reach::edited(text, |rewritten| {
        for side in ["oldObject", "object"] {
            if let Some(Value::Object(object)) = rewritten.get_mut(side) {
                mark(object, request, carried);
            }
        }
    })
}

/// Gives `object`, a side of `request`, each `carried` key it does not carry.
fn mark(object: &mut Map<String, Value>, request: &AdmissionRequest<'_>, carried: &[Carried]) {
    let metadata = object.entry("metadata").or_insert_with(|| json!({}));
    if !metadata.is_object() {
        *metadata = json!({});
    }
    for Carried {
        place,
        key,
        value,
        tracks,
    } in carried
    {
        let value = match tracks {
            // Argo CD's `<app>:<group>/<kind>:<namespace>/<name>`, of the child.
            true => format!(
                "{value}:{}/{}:{}/{}",
                request.kind.group, request.kind.kind, request.namespace, request.name
            ),
            false => value.clone(),
        };
        let field = match place {
            Place::Label => "labels",
            Place::Annotation => "annotations",
        };
        if !metadata[field].is_object() {
            metadata[field] = json!({});
        }
        if let Some(values) = metadata[field].as_object_mut() {
            values.entry(key.clone()).or_insert(json!(value));
        }
    }
}

/// What a denial of the write says last: the object carries no mark, and whose it is.
fn because(request: &AdmissionRequest<'_>, chain: &[String]) -> String {
    format!(
        " ({} {}/{} carries no mark: owned through {})",
        request.kind.kind,
        request.namespace,
        request.name,
        chain.join(", ")
    )
}

/// Why a write of an unmarked object is denied when a controller of its chain cannot be read.
fn unreadable(request: &AdmissionRequest<'_>, lookup: &Lookup<'_>, error: &str) -> String {
    format!(
        "cannot judge the {} of {} {}/{} under writes: Owner: it carries no mark, and reading \
         its controller {} failed ({error}); grant policy-server's service account get on it \
         (see docs/deploying.md, \"Derived objects\")",
        match request.operation {
            Operation::Delete => "DELETE",
            _ => "UPDATE",
        },
        request.kind.kind,
        request.namespace,
        request.name,
        lookup.named()
    )
}
