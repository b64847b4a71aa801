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
//! | of another kind (a custom resource's `scale`) | not judged: no lookup names its kind |
//! | under `writes: Any`, or with no host to read from (natively) | not judged |

use crate::control_plane;
use crate::derivation::Lookup;
use crate::lookup;
use crate::request::{AdmissionRequest, Operation, SCALED};
use crate::settings::Settings;

/// The target to read, when the request is a `scale` UPDATE the policy judges by its target:
/// under `writes: Owner`, of a kind of [`SCALED`], by a requester the control plane's table does
/// not trust with it.
pub fn target<'a>(request: &'a AdmissionRequest<'a>, settings: &Settings) -> Option<Lookup<'a>> {
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
    })
}

/// The payload of a `scale` UPDATE (its text), rewritten as the UPDATE of its target `object` (the JSON
/// the host read for `target`) that keeps it as it is: the same request, its kind the target's,
/// both sides the target. Spliced as text, as the request's other fields are kept: the policy
/// reads the result like any payload.
pub fn as_update(text: &str, target: &Lookup<'_>, object: &str) -> Result<Vec<u8>, String> {
    let unreadable = || "the payload has no `request` object".to_owned();
    let request = lookup::field(text, "request").flatten().map(lookup::value);
    let request = request.ok_or_else(unreadable)?;
    let start = request.as_ptr() as usize - text.as_ptr() as usize;
    let (group, version) =
        (target.api_version.rsplit_once('/')).unwrap_or(("", target.api_version));
    let mut rewritten = format!(
        r#"{{"kind":{{"group":"{group}","version":"{version}","kind":"{}"}},"object":{object},"oldObject":{object}"#,
        target.kind
    );
    let replaced = [r#""kind""#, r#""object""#, r#""oldObject""#];
    for (name, value) in lookup::members(request).ok_or_else(unreadable)? {
        if !replaced.contains(&name) {
            rewritten.extend([",", name, ":", value]);
        }
    }
    rewritten.push('}');
    Ok([&text[..start], &rewritten, &text[start + request.len()..]]
        .concat()
        .into_bytes())
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
