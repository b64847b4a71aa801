//! `scale` writes under `writes: Owner`. A `Scale` body carries none of its target's marks (the
//! registries build it from the target's name, namespace, uid, resourceVersion and creation time:
//! `scaleFromDeployment` in `pkg/registry/apps/deployment/storage/storage.go`, and the like), so
//! the policy reads the target through Kubewarden's `kubernetes/get_resource` and judges the
//! write as an UPDATE of the target that keeps its marks, templates included.
//!
//! | the `scale` UPDATE | verdict |
//! |---|---|
//! | by a trusted writer (the horizontal-pod-autoscaler, the disruption controller) | allowed, the target never read |
//! | of a kind of [`SCALED`] | the target read, and judged as an UPDATE of it (`owner writes`) |
//! | of a target that cannot be read | denied, saying what policy-server needs |
//! | whose target, read past the cache, is another object than the Scale's (another `uid`) | denied: the object was created again |
//! | of another kind (a custom resource's `scale`) | not judged: no lookup names its kind |
//! | under `writes: Any`, or with no host to read from (natively) | not judged |

use serde_json::{Map, Value, json};

use crate::control_plane;
use crate::derivation::{self, Checked, Lookup, Parents};
use crate::reach::{self, Reach, Reached, Refusal};
use crate::request::{AdmissionRequest, Operation, SCALED};
use crate::settings::Settings;

/// A `scale` UPDATE reaches its target (see the table): read, and the write rewritten as an
/// UPDATE of it.
pub fn reach<'a>(
    text: &str,
    request: &'a AdmissionRequest<'a>,
    settings: &Settings,
    parents: &dyn Parents,
) -> Reach {
    let target = target(request, settings)?;
    let object = match read(parents, request, &target) {
        Ok(object) => object,
        Err(why) => return Some(Err(Refusal::Denied(why))),
    };
    Some(as_update(text, &target, &object).map(|payload| Reached {
        payload,
        because: String::new(),
    }))
}

/// The target to read, when the request is a `scale` UPDATE the policy judges by its target:
/// under `writes: Owner`, of a kind of [`SCALED`], by a requester the control plane's table does
/// not trust with it.
fn target<'a>(request: &'a AdmissionRequest<'a>, settings: &Settings) -> Option<Lookup<'a>> {
    if !settings.judges_writes()
        || request.operation != Operation::Update
        || *request.sub_resource != *"scale"
        || !request.body_is_a_scale()
    {
        return None;
    }
    let (api_version, kind) = request.scaled()?;
    if control_plane::trusts(request, None, &settings.trusted_writers) {
        return None;
    }
    Some(Lookup {
        api_version,
        kind,
        name: &request.name,
        namespace: Some(&request.namespace),
        disable_cache: false,
    })
}

/// The target of a `scale` UPDATE as the host reads it, checked to be the object the Scale is
/// of: the registries copy the target's `uid` into the Scale (`scaleFromDeployment` and the
/// like), and a read that gives another uid (a cached object since deleted and created again
/// under its name) is made once more past the cache. Why the write cannot be judged, otherwise.
fn read(
    parents: &dyn Parents,
    request: &AdmissionRequest<'_>,
    target: &Lookup<'_>,
) -> Result<String, String> {
    let scale_uid = (request.object.as_ref())
        .and_then(|scale| scale.metadata.uid().ok())
        .unwrap_or_default();
    match derivation::read_checked(parents, target, &scale_uid) {
        Ok(Checked::The(object)) => Ok(object),
        Ok(Checked::Another { uid }) => Err(replaced(target, &scale_uid, &uid)),
        Err(error) => Err(unreadable(target, &error)),
    }
}

/// The payload of a `scale` UPDATE (its text), rewritten as the UPDATE of its target `object`
/// (the JSON the host read for `target`) that keeps it as it is: the same request, its kind the
/// target's, both sides the target. The policy reads the result like any payload.
fn as_update(text: &str, target: &Lookup<'_>, object: &str) -> Result<Vec<u8>, Refusal> {
    let what = format!("the {} read for the scale", target.kind);
    reach::rewritten(text, object, &what, |request, object| {
        of_target(request, target, object)
    })
}

/// `request` made about `target`, read as `object`: its kind the target's, both sides the
/// target.
pub fn of_target(request: &mut Map<String, Value>, target: &Lookup<'_>, object: Value) {
    let (group, version) =
        (target.api_version.rsplit_once('/')).unwrap_or(("", target.api_version));
    request.insert(
        "kind".to_owned(),
        json!({"group": group, "version": version, "kind": target.kind}),
    );
    request.insert("oldObject".to_owned(), object.clone());
    request.insert("object".to_owned(), object);
}

/// Why a `scale` UPDATE is denied when the object read for it, past the cache, is not the one
/// its Scale is of.
fn replaced(target: &Lookup<'_>, scale_uid: &str, read_uid: &str) -> String {
    format!(
        "cannot judge the scale of {} {}/{} under writes: Owner: the Scale is of uid {scale_uid}, \
         and the {} read has uid {read_uid}: it was deleted and created again; send the scale \
         again",
        target.kind,
        target.namespace.unwrap_or_default(),
        target.name,
        target.kind,
    )
}

/// Why a `scale` UPDATE is denied when its target cannot be read.
pub fn unreadable(target: &Lookup<'_>, error: &str) -> String {
    let resource = SCALED
        .iter()
        .find(|(.., kind)| *kind == target.kind)
        .map_or("", |(_, resource, ..)| resource);
    format!(
        "cannot judge the scale of {} {}/{} under writes: Owner: reading it failed ({error}); \
         grant policy-server's service account get on {resource} (see docs/deploying.md, \
         \"Derived objects\")",
        target.kind,
        target.namespace.unwrap_or_default(),
        target.name
    )
}
