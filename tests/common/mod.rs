//! What the integration tests share: the owner mark keys, kinds and settings of each owner
//! shape, one builder of AdmissionRequests, evaluation, and the summary of a denial.
//!
//! Each test file uses a part of it.
#![allow(dead_code)]

use std::cell::Cell;
use std::fmt;
use std::ops::Deref;

use serde_json::{Map, Value, json};
use single_owner_policy::policy::{self, Payload, Verdict};
use single_owner_policy::{Change, Lookup, NoHost, Parents, Reason, Violation};

/// The label of the default appID shape: `ClusterExtension.<name>` or
/// `Extension.<namespace>.<name>`.
pub const APP_ID_KEY: &str = "appID";
/// The name label of OLM v1's kind/name pair.
pub const OLM_NAME: &str = "olm.operatorframework.io/owner-name";
/// The kind label of OLM v1's kind/name pair.
pub const OLM_KIND: &str = "olm.operatorframework.io/owner-kind";
/// Camel K's operator id, an opaque owner: an annotation as Camel K writes it, a label in the
/// Integrations of `test_data/`.
pub const CAMEL: &str = "camel.apache.org/operator.id";
/// The annotation with a Helm release's name (Helm CLI), beside [`HELM_NAMESPACE`]: the owner
/// is `<namespace>/<name>`.
pub const HELM_NAME: &str = "meta.helm.sh/release-name";
/// The annotation with a Helm release's namespace.
pub const HELM_NAMESPACE: &str = "meta.helm.sh/release-namespace";
/// The label with a Flux HelmRelease's name (helm-controller), beside [`FLUX_NAMESPACE`]: the
/// same owner as Helm's annotations.
pub const FLUX_NAME: &str = "helm.toolkit.fluxcd.io/name";
/// The label with a Flux HelmRelease's namespace.
pub const FLUX_NAMESPACE: &str = "helm.toolkit.fluxcd.io/namespace";
/// Argo CD's tracking id, `<app>:<group>/<kind>:<namespace>/<name>`: the owner is the app when
/// the id names the object it is on.
pub const TRACKING: &str = "argocd.argoproj.io/tracking-id";
/// The offer annotation (the default `offerAnnotation`).
pub const OFFER: &str = "single-owner-policy.io/offer";
/// The annotation `kubectl apply` leaves on what it applies.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Kinds, as `group/Kind` (the core group is empty).
pub const CRD: &str = "apiextensions.k8s.io/CustomResourceDefinition";
pub const CONFIG_MAP: &str = "/ConfigMap";
pub const NAMESPACE: &str = "/Namespace";
pub const POD: &str = "/Pod";
pub const JOB: &str = "batch/Job";
pub const DEPLOYMENT: &str = "apps/Deployment";
pub const INTEGRATION: &str = "camel.apache.org/Integration";
/// The body of every `scale` subresource.
pub const SCALE: &str = "autoscaling/Scale";

/// The name of every object a [`Request`] is about.
pub const NAME: &str = "x";

/// The requester of a request built without [`Request::by`].
pub const ADMIN: &str = "kubernetes-admin";

/// Settings of the default appID shape: the defaults.
pub fn app_id_shape() -> Value {
    json!({})
}

/// Settings of OLM v1's kind/name pair of labels, with cluster and namespaced kinds.
pub fn olm_shape() -> Value {
    json!({"ownerMarks": [{"label": OLM_NAME, "kindKey": OLM_KIND,
        "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}]})
}

/// Settings of Camel K's opaque operator id, the annotation Camel K writes.
pub fn camel_k_shape() -> Value {
    json!({"ownerMarks": [{"annotation": CAMEL}]})
}

/// Settings of an opaque owner id in a label: Camel K's key, as the Integrations of
/// `test_data/` carry it.
pub fn opaque_label_shape() -> Value {
    json!({"ownerMarks": [{"label": CAMEL}]})
}

/// Settings of the Helm CLI's release annotations, a name/namespace pair: owners
/// `<namespace>/<name>`, without kinds or scope.
pub fn helm_shape() -> Value {
    json!({"ownerMarks": [{"annotation": HELM_NAME, "namespaceKey": HELM_NAMESPACE}]})
}

/// Settings of Argo CD's tracking id beside Helm releases (examples/argo-cd), in that order.
pub fn argo_cd_shape() -> Value {
    json!({"ownerMarks": [
        {"annotation": TRACKING, "format": "ArgoCDTrackingID"},
        {"annotation": HELM_NAME, "namespaceKey": HELM_NAMESPACE}]})
}

/// Settings of Flux's helm-controller labels, linked to Helm's annotations by `sameOwnerAs`,
/// beside Camel K's annotation, which names owners of its own.
pub fn flux_shape() -> Value {
    json!({"ownerMarks": [
        {"label": FLUX_NAME, "namespaceKey": FLUX_NAMESPACE, "sameOwnerAs": [HELM_NAME]},
        {"annotation": HELM_NAME, "namespaceKey": HELM_NAMESPACE},
        {"annotation": CAMEL}]})
}

/// Labels or annotations, as `(key, value)` pairs.
pub type Pairs<'a> = &'a [(&'a str, &'a str)];

/// One side of a request: the labels and annotations of the object before or after it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Side<'a> {
    /// The object's labels.
    pub labels: Pairs<'a>,
    /// The offer annotation, if any.
    pub offer: Option<&'a str>,
    /// Other annotations.
    pub annotations: Pairs<'a>,
}

impl<'a> Side<'a> {
    /// An object with `labels` and no annotations.
    pub const fn labelled(labels: Pairs<'a>) -> Side<'a> {
        Side {
            labels,
            offer: None,
            annotations: &[],
        }
    }

    /// An object with `annotations` and no labels.
    pub const fn annotated(annotations: Pairs<'a>) -> Side<'a> {
        Side {
            labels: &[],
            offer: None,
            annotations,
        }
    }

    /// The object with the offer annotation set to `offer`.
    pub const fn offering(self, offer: &'a str) -> Side<'a> {
        Side {
            offer: Some(offer),
            ..self
        }
    }
}

impl<'a> From<Pairs<'a>> for Side<'a> {
    fn from(labels: Pairs<'a>) -> Side<'a> {
        Side::labelled(labels)
    }
}

impl<'a, const N: usize> From<&'a [(&'a str, &'a str); N]> for Side<'a> {
    fn from(labels: &'a [(&'a str, &'a str); N]) -> Side<'a> {
        Side::labelled(labels)
    }
}

/// An AdmissionRequest, shaped as the API server sends it, for an object `x` of a `group/Kind`
/// in a namespace ("" when cluster-scoped), by [`ADMIN`] unless [`Request::by`] says otherwise.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    operation: &'a str,
    kind: &'a str,
    namespace: &'a str,
    old: Option<Side<'a>>,
    new: Option<Side<'a>>,
    user: &'a str,
    groups: Option<&'a [&'a str]>,
    subresource: &'a str,
    resource: Option<(&'a str, &'a str)>,
}

impl<'a> Request<'a> {
    fn new(operation: &'a str, kind: &'a str, namespace: &'a str) -> Request<'a> {
        Request {
            operation,
            kind,
            namespace,
            old: None,
            new: None,
            user: ADMIN,
            groups: None,
            subresource: "",
            resource: None,
        }
    }

    /// A CREATE of an object with `new`'s labels and annotations.
    pub fn create(kind: &'a str, namespace: &'a str, new: impl Into<Side<'a>>) -> Request<'a> {
        Request {
            new: Some(new.into()),
            ..Request::new("CREATE", kind, namespace)
        }
    }

    /// An UPDATE from `old` to `new`, writing a spec besides ([`Request::json`]).
    pub fn update(
        kind: &'a str,
        namespace: &'a str,
        old: impl Into<Side<'a>>,
        new: impl Into<Side<'a>>,
    ) -> Request<'a> {
        Request {
            old: Some(old.into()),
            new: Some(new.into()),
            ..Request::new("UPDATE", kind, namespace)
        }
    }

    /// A DELETE of the stored object `old`.
    pub fn delete(kind: &'a str, namespace: &'a str, old: impl Into<Side<'a>>) -> Request<'a> {
        Request {
            old: Some(old.into()),
            ..Request::new("DELETE", kind, namespace)
        }
    }

    /// Sent by `user`, in the groups the API server gives it: `system:authenticated`, and for a
    /// service account `system:serviceaccounts` and `system:serviceaccounts:<namespace>`.
    pub fn by(self, user: &'a str) -> Request<'a> {
        Request { user, ..self }
    }

    /// Sent in exactly these `groups`.
    pub fn in_groups(self, groups: &'a [&'a str]) -> Request<'a> {
        Request {
            groups: Some(groups),
            ..self
        }
    }

    /// Writing `subresource` of the object.
    pub fn subresource(self, subresource: &'a str) -> Request<'a> {
        Request {
            subresource,
            ..self
        }
    }

    /// Of the resource `group`/`plural`, where it is not the kind's own (a `Scale` is the body
    /// of `deployments/scale`).
    pub fn resource(self, group: &'a str, plural: &'a str) -> Request<'a> {
        Request {
            resource: Some((group, plural)),
            ..self
        }
    }

    /// The request as JSON.
    pub fn json(&self) -> Value {
        let (group, kind) = self.kind.split_once('/').expect("a kind is group/Kind");
        let api_version = match group {
            "" => "v1".to_owned(),
            group => format!("{group}/v1"),
        };
        let (resource_group, plural) = self.resource.unwrap_or((group, ""));
        let plural = match plural {
            "" => format!("{}s", kind.to_lowercase()),
            plural => plural.to_owned(),
        };
        // An UPDATE writes something besides the marks (one that changes nothing is anyone's
        // to send): its new side's spec differs from the stored one's.
        let written = match self.operation {
            "UPDATE" => json!({"written": true}),
            _ => json!({}),
        };
        let object = |side: Side, spec: &Value| {
            let mut metadata = json!({"name": NAME});
            if !self.namespace.is_empty() && kind != "Namespace" {
                metadata["namespace"] = json!(self.namespace);
            }
            metadata["labels"] = pairs(side.labels);
            let mut annotations = pairs(side.annotations);
            if let Some(offer) = side.offer {
                annotations[OFFER] = json!(offer);
            }
            if !annotations.as_object().unwrap().is_empty() {
                metadata["annotations"] = annotations;
            }
            json!({"apiVersion": api_version, "kind": kind, "metadata": metadata, "spec": spec})
        };
        let groups = match self.groups {
            Some(groups) => json!(groups),
            None => json!(groups_of(self.user)),
        };
        let mut request = json!({
            "uid": "0d6d3a8e-5f0c-4c44-9d36-6f2a2c8c1a11",
            "kind": {"group": group, "version": "v1", "kind": kind},
            "resource": {"group": resource_group, "version": "v1", "resource": plural},
            "name": NAME,
            "namespace": self.namespace,
            "operation": self.operation,
            "userInfo": {"username": self.user, "groups": groups},
            "object": self.new.map_or(Value::Null, |side| object(side, &written)),
            "oldObject": self.old.map_or(Value::Null, |side| object(side, &json!({}))),
        });
        if !self.subresource.is_empty() {
            request["subResource"] = json!(self.subresource);
        }
        request
    }
}

/// Labels or annotations as a JSON object.
fn pairs(pairs: Pairs) -> Value {
    let map: Map<String, Value> = pairs
        .iter()
        .map(|&(key, value)| (key.to_owned(), json!(value)))
        .collect();
    Value::Object(map)
}

/// The groups the API server puts `user` in: a service account's (`MakeGroupNames`), a
/// node's, and every authenticated user's.
pub fn groups_of(user: &str) -> Vec<String> {
    let mut groups = Vec::new();
    if let Some(account) = user.strip_prefix("system:serviceaccount:") {
        let namespace = account.split(':').next().unwrap();
        groups.push("system:serviceaccounts".to_owned());
        groups.push(format!("system:serviceaccounts:{namespace}"));
    }
    if user.starts_with("system:node:") {
        groups.push("system:nodes".to_owned());
    }
    groups.push("system:authenticated".to_owned());
    groups
}

/// A request's response, with the payload it answered, to read the policy's typed verdict.
pub struct Evaluated {
    /// The response as JSON.
    pub response: Value,
    payload: Vec<u8>,
}

impl Deref for Evaluated {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.response
    }
}

impl fmt::Display for Evaluated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.response.fmt(f)
    }
}

impl Evaluated {
    /// What `check` makes of the violations of the policy's typed verdict: those it denies
    /// for, or those an exempt requester bypasses.
    pub fn violations<R>(&self, check: impl FnOnce(&[Violation<'_>]) -> R) -> R {
        let payload = Payload::parse(&self.payload).expect("a readable payload");
        match payload.verdict(&NoHost) {
            Verdict::Deny(violations) | Verdict::Exempt { violations, .. } => check(&violations),
            _ => check(&[]),
        }
    }

    /// Each violation as [`summary`] writes it.
    pub fn summaries(&self) -> Vec<String> {
        self.violations(|violations| violations.iter().map(summary).collect())
    }
}

/// Checks `settings` as policy-server does when it loads the policy, then evaluates `request`.
pub fn evaluate(request: &Value, settings: &Value) -> Evaluated {
    let check = policy::validate_settings(&serde_json::to_vec(settings).unwrap());
    assert!(check.valid, "{:?}", check.message);
    let payload = serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
    let response = serde_json::to_value(policy::validate(&payload)).unwrap();
    Evaluated { response, payload }
}

/// What a request gets: `allowed`, or the denial message.
pub fn verdict(response: &Value) -> String {
    match (&response["accepted"], &response["message"]) {
        (Value::Bool(true), Value::Null) => "allowed".to_owned(),
        (Value::Bool(false), Value::String(message)) => message.clone(),
        other => panic!("unexpected response {other:?}"),
    }
}

/// `base` with the top-level fields of `extra` set over it.
pub fn merged(mut base: Value, extra: &Value) -> Value {
    for (key, value) in extra.as_object().unwrap() {
        base[key] = value.clone();
    }
    base
}

/// A violation as the tables compare it, from its values: `{mark}: {rule} from {old} to
/// {new}` for a move, `{mark}: {rule} owned by {owner}` for a rule that fails while the owner
/// stays; `{mark}` is `label {key}` or `annotation {key}`, then ` in {template}` for a mark in
/// a template.
pub fn summary(violation: &Violation<'_>) -> String {
    let mark = match violation.template {
        None => violation.mark.to_string(),
        Some(template) => format!("{} in {template}", violation.mark),
    };
    let Change { old, new } = violation.change;
    let owners = match old == new {
        true => format!("owned by {old}"),
        false => format!("from {old} to {new}"),
    };
    format!("{mark}: {} {owners}", violation.rule().name())
}

/// What a request is expected to get.
#[derive(Debug, Clone, Copy)]
pub enum Expect {
    /// Accepted, with no message.
    Allowed,
    /// Denied with code 403, each violation as [`summary`] gives it.
    Denied(&'static [&'static str]),
    /// Denied as `Denied` says, one of the violations for a reason this test is about.
    DeniedBecause(&'static [&'static str], fn(&Reason<'_>) -> bool),
}

impl Expect {
    /// Asserts that `evaluated` is what is expected.
    pub fn check(self, evaluated: &Evaluated) {
        let response = &evaluated.response;
        let (violations, because) = match self {
            Expect::Allowed => {
                assert_eq!(verdict(response), "allowed", "{response}");
                assert_eq!(response["code"], Value::Null, "{response}");
                return;
            }
            Expect::Denied(violations) => (violations, None),
            Expect::DeniedBecause(violations, because) => (violations, Some(because)),
        };
        assert_eq!(response["accepted"], false, "{response}");
        assert_eq!(response["code"], 403, "{response}");
        assert_eq!(evaluated.summaries(), violations, "{response}");
        if let Some(because) = because {
            let reasons = evaluated.violations(|violations| {
                let found = violations
                    .iter()
                    .any(|violation| because(&violation.reason));
                (found, format!("{violations:#?}"))
            });
            assert!(
                reasons.0,
                "no violation for the reason expected: {}",
                reasons.1
            );
        }
    }
}

/// A host holding one object for the lookups of a write judged from the object it writes (a
/// `scale`'s target, a Binding's Pod, an HPA's target): it answers them in turn, from its cache
/// first and past it then (the last answer again after the others), checks that each names
/// `object` (`apiVersion`, kind, name, namespace), and counts them.
pub struct Host {
    object: (&'static str, &'static str, &'static str, &'static str),
    held: Vec<Result<Value, &'static str>>,
    calls: Cell<usize>,
}

impl Host {
    pub fn new(
        object: (&'static str, &'static str, &'static str, &'static str),
        held: Vec<Result<Value, &'static str>>,
    ) -> Host {
        Host {
            object,
            held,
            calls: Cell::new(0),
        }
    }

    /// The lookups made.
    pub fn calls(&self) -> usize {
        self.calls.get()
    }
}

impl Parents for Host {
    fn get(&self, lookup: &Lookup<'_>) -> Result<String, String> {
        let call = self.calls.get();
        self.calls.set(call + 1);
        let (api_version, kind, name, namespace) = self.object;
        assert_eq!(
            (
                lookup.api_version,
                lookup.kind,
                lookup.name,
                lookup.namespace,
                lookup.disable_cache
            ),
            (api_version, kind, name, Some(namespace), call > 0)
        );
        self.held[call.min(self.held.len() - 1)]
            .clone()
            .map(|held| held.to_string())
            .map_err(str::to_owned)
    }
}

/// The policy's response to `request` under `settings`, reading through `host`, checked to be
/// an acceptance (`denial` `None`) or a denial whose message starts with `denial`; its message.
pub fn judged_through(
    host: &dyn Parents,
    request: &Value,
    settings: &Value,
    denial: Option<&str>,
) -> String {
    let payload = serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
    let response = policy::validate_with(&payload, host);
    let message = response.message.clone().unwrap_or_default();
    match denial {
        None => assert!(response.accepted, "{request}: {message}"),
        Some(start) => {
            assert!(!response.accepted, "{request}");
            assert!(message.starts_with(start), "{message}");
        }
    }
    message
}
