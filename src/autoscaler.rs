//! A reference a trusted controller acts on: a HorizontalPodAutoscaler's `scaleTargetRef`. The
//! horizontal-pod-autoscaler, which the control plane's table trusts with every `scale`, scales
//! the object the reference names (`reconcileAutoscaler`, kubernetes
//! `pkg/controller/podautoscaler/horizontal.go`), and stops scaling it once two HPAs select its
//! Pods: whoever writes an HPA scales its target through it.
//!
//! | an HPA's CREATE or UPDATE, under `writes: Owner` | verdict |
//! |---|---|
//! | by a requester the control plane's table trusts with it | judged on the HPA alone |
//! | naming an object of a kind of [`SCALED`] | the HPA judged, then its target read and judged as its `scale` by the HPA's requester (`owner writes`) |
//! | naming another kind (a custom resource), or under `writes: Any`, or with no host | judged on the HPA alone |

use serde::Deserialize;
use serde_json::json;

use crate::control_plane;
use crate::derivation::{Lookup, Parents};
use crate::reach::{self, Reach, Reached, Refusal};
use crate::request::{AdmissionRequest, Operation, SCALED};
use crate::scale;
use crate::settings::Settings;

/// The group and kind of a HorizontalPodAutoscaler.
const HPA: (&str, &str) = ("autoscaling", "HorizontalPodAutoscaler");

/// An HPA's reference to what it scales, as its `spec` names it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spec<'a> {
    #[serde(borrow)]
    scale_target_ref: Reference<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Reference<'a> {
    #[serde(borrow, default)]
    api_version: &'a str,
    #[serde(borrow)]
    kind: &'a str,
    #[serde(borrow)]
    name: &'a str,
}

/// An HPA's write reaches the object it scales (see the table): read, and the write rewritten
/// as the `scale` of it by the HPA's requester.
pub fn reach<'a>(
    text: &str,
    request: &'a AdmissionRequest<'a>,
    settings: &Settings,
    parents: &dyn Parents,
) -> Reach {
    let target = target(request, settings)?;
    let because = scales(request, &target);
    let object = match parents.get(&target) {
        Ok(object) => object,
        Err(error) => {
            let why = scale::unreadable(&target, &error) + &because;
            return Some(Err(Refusal::Denied(why)));
        }
    };
    Some(as_scale(text, &target, &object).map(|payload| Reached { payload, because }))
}

/// The target to read, when the request is an HPA's CREATE or UPDATE whose `scaleTargetRef`
/// the policy judges: under `writes: Owner`, of a kind of [`SCALED`], by a requester the
/// control plane's table does not trust with it.
fn target<'a>(request: &'a AdmissionRequest<'a>, settings: &Settings) -> Option<Lookup<'a>> {
    if !settings.judges_writes()
        || !matches!(request.operation, Operation::Create | Operation::Update)
        || request.is_subresource()
        || (&*request.kind.group, &*request.kind.kind) != HPA
    {
        return None;
    }
    let spec = request.object.as_ref()?.field("spec")?;
    let Spec {
        scale_target_ref: reference,
    } = serde_json::from_str(spec.get()).ok()?;
    let (_, _, api_version, kind) = SCALED.iter().find(|(.., api_version, kind)| {
        (*api_version, *kind) == (reference.api_version, reference.kind)
    })?;
    if control_plane::trusts(request, None, &settings.trusted_writers) {
        return None;
    }
    Some(Lookup {
        api_version,
        kind,
        name: reference.name,
        namespace: Some(&request.namespace),
        disable_cache: false,
    })
}

/// The payload of an HPA's write (its text), rewritten as the `scale` of its target `object`
/// (the JSON the host read for `target`) by the same requester: an UPDATE of `…/scale` whose
/// both sides are the target, judged like a `scale` read from its target ([`crate::scale`]).
fn as_scale(text: &str, target: &Lookup<'_>, object: &str) -> Result<Vec<u8>, Refusal> {
    let (group, resource, ..) = SCALED
        .iter()
        .find(|(.., kind)| *kind == target.kind)
        .ok_or_else(|| {
            Refusal::Unreadable("the HPA's target is of no kind that is scaled".into())
        })?;
    let version = (target.api_version.rsplit_once('/')).map_or(target.api_version, |(_, v)| v);
    let what = format!("the {} read for the HPA", target.kind);
    reach::rewritten(text, object, &what, |request, object| {
        scale::of_target(request, target, object);
        let scaled = [
            (
                "resource",
                json!({"group": group, "version": version, "resource": resource}),
            ),
            ("subResource", json!("scale")),
            ("operation", json!("UPDATE")),
            ("name", json!(target.name)),
        ];
        for (key, value) in scaled {
            request.insert(key.to_owned(), value);
        }
        request.remove("options");
    })
}

/// What a denial of the HPA's target says last: which HPA would scale it.
fn scales(request: &AdmissionRequest<'_>, target: &Lookup<'_>) -> String {
    format!(
        " (HorizontalPodAutoscaler {}/{} would scale {} {}/{})",
        request.namespace,
        request.name,
        target.kind,
        target.namespace.unwrap_or_default(),
        target.name
    )
}
