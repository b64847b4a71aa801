//! Grants as narrow as a write: what a writer may change in an owner's objects
//! (`identities[].changes`), under `writes: Owner`. An update is allowed to the writer when
//! everything it changes — but the fields the API server maintains — is one of its grants; a
//! write that changes one thing more is denied, and the denial names the first such thing.
//!
//! | grant | what it lets differ | a writer that needs it |
//! |---|---|---|
//! | `replicas` | `spec.replicas`, and a `scale` (`…/scale`, an HPA's target) | KEDA, Argo Rollouts' `workloadRef`, Flagger |
//! | `caBundles` | the CA bundles of webhook configurations, CRDs and APIServices (`access: InjectCA`) | cert-manager's cainjector, istiod, Gatekeeper |
//! | `webhookFailurePolicy` | a webhook configuration's `webhooks[].failurePolicy` | istiod's validation controller |
//! | `resize` | a Pod's resources, through `pods/resize` | VPA's updater |
//! | `delete` | a DELETE | Karpenter's forced Pod deletes, Kyverno's cleanup |
//! | `annotations: [keys]` | those metadata annotations (`*` at the end: a prefix) | Karpenter's NodePool hash, Crossplane's `external-name` |
//! | `labels: [keys]` | those metadata labels | Kyverno's `clone-source`, Crossplane's `in-use` |
//! | `finalizers: [names]` | adding or removing those finalizers | a controller's own finalizer on another's object |
//! | `podTemplateAnnotations: [keys]` | those annotations of the pod template (a CronJob's too) | `kubectl rollout restart`, Reloader |
//! | `podTemplateEnv: [names]` | those environment variables of the pod template's containers | Reloader's env-vars strategy |
//! | `serviceSelector: [keys]` | those keys of a Service's `spec.selector` | Argo Rollouts |
//! | `fields: [names]` | those top-level fields of the object's body, whole (a custom resource's `status` where its kind has no status subresource) | Argo CD's `operation` and `status` of an Application |
//!
//! No grant lets a guarded mark, a companion key or the offer change (keys the settings guard
//! are never an annotation's or a label's grant), nor the owner references: who owns an object
//! stays its owner's to say. Finalizers added alone are anyone's ([`crate::edit`]).

use serde::Deserialize;

mod room;

use room::Room;

use crate::edit::{self, FOREGROUND, MAINTAINED, ORPHAN};
use crate::request::{GroupVersionKind, Metadata, Object};

/// One thing a writer may change in the objects of the owners an identity names.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Grant {
    /// `spec.replicas`, written on the object or through its `scale`.
    Replicas,
    /// The CA bundles of webhook configurations, CRDs and APIServices.
    CaBundles,
    /// The `failurePolicy` of a webhook configuration's webhooks.
    WebhookFailurePolicy,
    /// A Pod's container resources, through `pods/resize`.
    Resize,
    /// Deleting the object.
    Delete,
    /// These metadata annotations.
    Annotations(Vec<String>),
    /// These metadata labels.
    Labels(Vec<String>),
    /// Adding or removing these finalizers.
    Finalizers(Vec<String>),
    /// These annotations of the pod template.
    PodTemplateAnnotations(Vec<String>),
    /// These environment variables of the pod template's containers, by name.
    PodTemplateEnv(Vec<String>),
    /// These keys of a Service's `spec.selector`.
    ServiceSelector(Vec<String>),
    /// These top-level fields of the object's body, whole.
    Fields(Vec<String>),
}

impl Grant {
    /// The grant as settings and messages write it.
    pub fn name(&self) -> &'static str {
        match self {
            Grant::Replicas => "replicas",
            Grant::CaBundles => "caBundles",
            Grant::WebhookFailurePolicy => "webhookFailurePolicy",
            Grant::Resize => "resize",
            Grant::Delete => "delete",
            Grant::Annotations(_) => "annotations",
            Grant::Labels(_) => "labels",
            Grant::Finalizers(_) => "finalizers",
            Grant::PodTemplateAnnotations(_) => "podTemplateAnnotations",
            Grant::PodTemplateEnv(_) => "podTemplateEnv",
            Grant::ServiceSelector(_) => "serviceSelector",
            Grant::Fields(_) => "fields",
        }
    }

    /// The grant of this name, with these keys where it lists some (the catalogue's form of
    /// what settings write); `None` for a name no grant has.
    pub fn of(name: &str, keys: &[&str]) -> Option<Grant> {
        let keys = || keys.iter().map(|&key| key.to_owned()).collect();
        Some(match name {
            "replicas" => Grant::Replicas,
            "caBundles" => Grant::CaBundles,
            "webhookFailurePolicy" => Grant::WebhookFailurePolicy,
            "resize" => Grant::Resize,
            "delete" => Grant::Delete,
            "annotations" => Grant::Annotations(keys()),
            "labels" => Grant::Labels(keys()),
            "finalizers" => Grant::Finalizers(keys()),
            "podTemplateAnnotations" => Grant::PodTemplateAnnotations(keys()),
            "podTemplateEnv" => Grant::PodTemplateEnv(keys()),
            "serviceSelector" => Grant::ServiceSelector(keys()),
            "fields" => Grant::Fields(keys()),
            _ => return None,
        })
    }

    /// Whether the grant lists keys or names.
    pub fn lists(&self) -> bool {
        !matches!(
            self,
            Grant::Replicas
                | Grant::CaBundles
                | Grant::WebhookFailurePolicy
                | Grant::Resize
                | Grant::Delete
        )
    }

    /// The label keys it lists, if it is `labels`.
    fn labels(&self) -> Option<&[String]> {
        match self {
            Grant::Labels(keys) => Some(keys),
            _ => None,
        }
    }

    /// The annotation keys it lists, if it is `annotations`.
    fn annotations(&self) -> Option<&[String]> {
        match self {
            Grant::Annotations(keys) => Some(keys),
            _ => None,
        }
    }

    /// The finalizers it lists, if it is `finalizers`.
    fn finalizers(&self) -> Option<&[String]> {
        match self {
            Grant::Finalizers(names) => Some(names),
            _ => None,
        }
    }

    /// The keys or names the grant lists, if it lists any.
    pub fn keys(&self) -> &[String] {
        match self {
            Grant::Annotations(keys)
            | Grant::Labels(keys)
            | Grant::Finalizers(keys)
            | Grant::PodTemplateAnnotations(keys)
            | Grant::PodTemplateEnv(keys)
            | Grant::ServiceSelector(keys)
            | Grant::Fields(keys) => keys,
            _ => &[],
        }
    }
}

/// Whether `key` matches `pattern`: equal, or starting with what precedes a final `*`.
pub fn matches(pattern: &str, key: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => key.starts_with(prefix),
        None => pattern == key,
    }
}

/// Where each kind keeps the CA bundles a CA injector writes: the kind, the top-level field,
/// and the path in it (`[]` for every item of a list). cert-manager's cainjector writes these
/// four (cert-manager `pkg/controller/cainjector/injectables.go`); ingress-nginx's
/// `kube-webhook-certgen patch`, istiod (`pkg/webhooks/webhookpatch.go`) and Gatekeeper's
/// cert-controller (`pkg/rotator/rotator.go`) the webhooks'.
const CA_BUNDLES: [(&str, &str, &str, &[&str]); 4] = [
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        "webhooks",
        &["[]", "clientConfig", "caBundle"],
    ),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        "webhooks",
        &["[]", "clientConfig", "caBundle"],
    ),
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "spec",
        &["conversion", "webhook", "clientConfig", "caBundle"],
    ),
    (
        "apiregistration.k8s.io",
        "APIService",
        "spec",
        &["caBundle"],
    ),
];

/// The pod templates of the workloads, from the object's top: most workloads', a CronJob's.
const POD_TEMPLATES: [&[&str]; 2] = [
    &["spec", "template"],
    &["spec", "jobTemplate", "spec", "template"],
];

/// The room `grants` give the top-level fields of an object of `kind`, as one
/// [`Room::Members`] of them.
fn body_room<'g>(grants: impl Iterator<Item = &'g Grant>, kind: &GroupVersionKind<'_>) -> Room {
    let is = |group: &str, name: &str| *kind.group == *group && *kind.kind == *name;
    let webhooks = || {
        is(
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
        ) || is(
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
        )
    };
    let mut room = Room::Nothing;
    for grant in grants {
        let more = match grant {
            Grant::Replicas => Room::at(&["spec", "replicas"], Room::Any),
            Grant::CaBundles => (CA_BUNDLES.iter())
                .filter(|(group, name, ..)| is(group, name))
                .fold(Room::Nothing, |room, (_, _, field, path)| {
                    let mut full = vec![*field];
                    full.extend_from_slice(path);
                    room.and(Room::at(&full, Room::Any))
                }),
            Grant::WebhookFailurePolicy if webhooks() => {
                Room::at(&["webhooks", "[]", "failurePolicy"], Room::Any)
            }
            Grant::PodTemplateAnnotations(keys) => {
                POD_TEMPLATES.iter().fold(Room::Nothing, |room, template| {
                    let mut path = template.to_vec();
                    path.extend(["metadata", "annotations"]);
                    room.and(Room::at(&path, Room::Keys(keys.clone())))
                })
            }
            Grant::PodTemplateEnv(names) => {
                POD_TEMPLATES.iter().fold(Room::Nothing, |room, template| {
                    let mut path = template.to_vec();
                    path.extend(["spec", "containers", "[]", "env"]);
                    room.and(Room::at(&path, Room::Named(names.clone())))
                })
            }
            Grant::ServiceSelector(keys) if is("", "Service") => {
                Room::at(&["spec", "selector"], Room::Keys(keys.clone()))
            }
            Grant::Fields(names) => (names.iter()).fold(Room::Nothing, |room, name| {
                room.and(Room::at(&[name], Room::Any))
            }),
            _ => Room::Nothing,
        };
        room = room.and(more);
    }
    room
}

/// What an update changes beyond the grants: the first thing, as a message names it.
pub type Beyond = String;

/// Whether the update of `old` to `new`, objects of `kind` written through `subresource`
/// (empty: the object itself), changes only what `grants` let change; if not, the first thing
/// it changes beyond them. `guarded` tells the label and annotation keys no grant covers: the
/// owner marks' and the offer.
pub fn fits<'g>(
    grants: &[&'g Grant],
    kind: &GroupVersionKind<'_>,
    old: &Object<'_>,
    new: &Object<'_>,
    subresource: &str,
    guarded: &dyn Fn(&str) -> bool,
) -> Result<(), Beyond> {
    metadata_fits(grants, &old.metadata, &new.metadata, guarded)?;
    let has = |wanted: &Grant| grants.contains(&wanted);
    match subresource {
        "" => {}
        // The strategies store only what these subresources carry: the replicas, a Pod's
        // resources.
        "scale" if has(&Grant::Replicas) => return Ok(()),
        "resize" if has(&Grant::Resize) => return Ok(()),
        "scale" | "resize" | "ephemeralcontainers" | "binding" => {
            return Err(format!("its {subresource}"));
        }
        // A status (or other) subresource stores its own body, which no rule judges.
        _ => return Ok(()),
    }
    let room = body_room(grants.iter().copied(), kind);
    room::fields_fit(&old.fields, &new.fields, &room, "")
}

/// Whether a DELETE is granted; if not, what it changes beyond the grants.
pub fn deletes(grants: &[&Grant]) -> Result<(), Beyond> {
    match grants.iter().any(|grant| **grant == Grant::Delete) {
        true => Ok(()),
        false => Err("everything: it deletes the object".to_owned()),
    }
}

/// The grants as messages list them: `replicas, annotations [a, b*]`.
pub fn names(grants: &[&Grant]) -> String {
    let named = grants.iter().map(|grant| match grant.keys() {
        [] => grant.name().to_owned(),
        keys => format!("{} [{}]", grant.name(), keys.join(", ")),
    });
    named.collect::<Vec<_>>().join(", ")
}

/// Whether two objects' metadata differ only in what `grants` let differ.
fn metadata_fits(
    grants: &[&Grant],
    old: &Metadata<'_>,
    new: &Metadata<'_>,
    guarded: &dyn Fn(&str) -> bool,
) -> Result<(), Beyond> {
    let granted = |which: fn(&Grant) -> Option<&[String]>, key: &str| {
        (grants.iter())
            .filter_map(|grant| which(grant))
            .flatten()
            .any(|pattern| matches(pattern, key))
    };
    let same_rest = old.name == new.name
        && *old.deletion_timestamp.map(|raw| raw.get()).unwrap_or("")
            == *new.deletion_timestamp.map(|raw| raw.get()).unwrap_or("")
        && old.deletion_grace_period_seconds == new.deletion_grace_period_seconds;
    if !same_rest {
        return Err("its metadata".to_owned());
    }
    if let Some(key) = edit::first_difference(&old.fields, &new.fields, &MAINTAINED) {
        return Err(format!("metadata.{key}"));
    }
    let added = new
        .labels
        .keys()
        .filter(|key| !old.labels.contains_key(*key));
    let keys = old.labels.keys().chain(added);
    for key in keys {
        if old.labels.get(key) != new.labels.get(key)
            && (guarded(key) || !granted(Grant::labels, key))
        {
            return Err(format!("the label {key}"));
        }
    }
    let added = (new.annotations.keys()).filter(|key| !old.annotations.contains_key(*key));
    let keys = old.annotations.keys().chain(added);
    for key in keys {
        let (before, after) = (old.annotations.get(key), new.annotations.get(key));
        if before.map(|raw| raw.get()) != after.map(|raw| raw.get())
            && (guarded(key) || !granted(Grant::annotations, key))
        {
            return Err(format!("the annotation {key}"));
        }
    }
    let removed = old
        .finalizers
        .iter()
        .filter(|f| !new.finalizers.contains(f));
    let added = new
        .finalizers
        .iter()
        .filter(|f| !old.finalizers.contains(f));
    for finalizer in removed {
        if !granted(Grant::finalizers, finalizer) {
            return Err(format!("the finalizer {finalizer}"));
        }
    }
    for finalizer in added {
        // Any finalizer but these two only holds the deletion: anyone's to add.
        let decides = **finalizer == *ORPHAN || **finalizer == *FOREGROUND;
        if decides && !granted(Grant::finalizers, finalizer) {
            return Err(format!("the finalizer {finalizer}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::edit::tests::{changed, crd};
    use crate::request::Text;

    fn object(value: &Value) -> Object<'static> {
        let text: &'static str = Box::leak(value.to_string().into_boxed_str());
        serde_json::from_str(text).unwrap()
    }

    fn kind(group: &'static str, kind: &'static str) -> GroupVersionKind<'static> {
        GroupVersionKind {
            group: Text::from(group),
            kind: Text::from(kind),
        }
    }

    fn keys(keys: &[&str]) -> Vec<String> {
        keys.iter().map(|&key| key.to_owned()).collect()
    }

    /// A row: the kind, the grants, the stored object, the new one, the subresource, and what
    /// the grants let through (or the first thing beyond them).
    type Row<'a> = (
        &'a GroupVersionKind<'a>,
        Vec<Grant>,
        &'a Value,
        Value,
        &'a str,
        Result<(), &'a str>,
    );

    /// Each row a grant, an object and a change to it: what the grant lets through, or the
    /// first thing the change makes beyond it. The rows follow the module's table.
    #[test]
    fn grant_table() {
        let hook = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "hook", "resourceVersion": "1", "finalizers": ["a"],
                         "annotations": {"single-owner-policy.io/offer": "x"}},
            "webhooks": [{"name": "a.example.com", "failurePolicy": "Ignore",
                          "clientConfig": {"service": {"name": "s", "namespace": "n"}}}]
        });
        let bare_hook = changed(&hook, &[("/webhooks", json!([{"name": "a.example.com"}]))]);
        let crd = crd();
        let api_service = json!({
            "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": "v1.example.com"},
            "spec": {"group": "example.com", "caBundle": "b2xk"}
        });
        let deployment = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "annotations": {"karpenter.sh/nodepool-hash": "1", "other": "o"},
                         "labels": {"app": "web"}, "finalizers": ["karpenter.sh/termination", "keep"],
                         "ownerReferences": [{"kind": "X", "name": "x", "uid": "1"}]},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"annotations": {"a": "1"}},
                                  "spec": {"containers": [{"name": "web", "env": [{"name": "A", "value": "1"}]}]}}}
        });
        let cron_job = json!({
            "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
            "spec": {"jobTemplate": {"spec": {"template": {"metadata": {}, "spec": {}}}}}
        });
        let service = json!({
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}
        });
        let application = json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "shop", "labels": {"app": "shop"}},
            "spec": {"source": {"repoURL": "https://git.example.com/shop", "targetRevision": "v1"}},
            "status": {"health": "Healthy"}
        });
        let webhooks = kind(
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
        );
        let mutating = kind(
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
        );
        let policies = kind("admissionregistration.k8s.io", "ValidatingAdmissionPolicy");
        let crds = kind("apiextensions.k8s.io", "CustomResourceDefinition");
        let api_services = kind("apiregistration.k8s.io", "APIService");
        let deployments = kind("apps", "Deployment");
        let cron_jobs = kind("batch", "CronJob");
        let services = kind("", "Service");
        let config_maps = kind("", "ConfigMap");
        let applications = kind("argoproj.io", "Application");
        use Grant::*;
        let ca = "/webhooks/0/clientConfig/caBundle";
        let template_env = "/spec/template/spec/containers/0/env";
        #[rustfmt::skip]
        let rows: Vec<Row> = vec![
            // caBundles: the CA bundles of the kinds that hold them, nothing beside
            (&webhooks, vec![CaBundles], &hook, changed(&hook, &[(ca, json!("bmV3"))]), "", Ok(())),
            (&mutating, vec![CaBundles], &hook, changed(&hook, &[(ca, json!("bmV3"))]), "", Ok(())),
            (&webhooks, vec![CaBundles], &hook, changed(&hook, &[(ca, json!("bmV3")), ("/metadata/finalizers", json!(["a", "b"]))]), "", Ok(())),
            (&config_maps, vec![CaBundles], &hook, changed(&hook, &[(ca, json!("bmV3"))]), "", Err("webhooks[0].clientConfig.caBundle")),
            (&policies, vec![CaBundles], &hook, changed(&hook, &[(ca, json!("bmV3"))]), "", Err("webhooks[0].clientConfig.caBundle")),
            // a client config where the stored webhook had none is more than a CA bundle
            (&webhooks, vec![CaBundles], &bare_hook, changed(&bare_hook, &[("/webhooks/0/clientConfig", json!({"url": "https://evil.example.com", "caBundle": "bmV3"}))]), "", Err("webhooks[0].clientConfig.url")),
            (&webhooks, vec![CaBundles], &hook, changed(&hook, &[(ca, json!("bmV3")), ("/webhooks/0/failurePolicy", json!("Fail"))]), "", Err("webhooks[0].failurePolicy")),
            (&webhooks, vec![CaBundles], &hook, changed(&hook, &[("/webhooks/0/clientConfig/url", json!("https://evil.example.com"))]), "", Err("webhooks[0].clientConfig.url")),
            (&webhooks, vec![CaBundles], &hook, changed(&hook, &[(ca, json!("bmV3")), ("/metadata/annotations/a", json!("b"))]), "", Err("the annotation a")),
            (&webhooks, vec![CaBundles], &hook, changed(&hook, &[("/webhooks", json!([]))]), "", Err("webhooks")),
            (&crds, vec![CaBundles], &crd, changed(&crd, &[("/spec/conversion/webhook/clientConfig/caBundle", json!("bmV3")), ("/metadata/generation", json!(2))]), "", Ok(())),
            (&crds, vec![CaBundles], &crd, changed(&crd, &[("/spec/conversion/webhook/clientConfig/service", json!({"name": "evil"}))]), "", Err("spec.conversion.webhook.clientConfig.service")),
            (&crds, vec![CaBundles], &crd, changed(&crd, &[("/spec/group", json!("evil.example.com"))]), "", Err("spec.group")),
            (&crds, vec![CaBundles], &crd, changed(&crd, &[("/spec/caBundle", json!("bmV3"))]), "", Err("spec.caBundle")),
            (&api_services, vec![CaBundles], &api_service, changed(&api_service, &[("/spec/caBundle", json!("bmV3"))]), "", Ok(())),
            (&api_services, vec![CaBundles], &api_service, changed(&api_service, &[("/spec/insecureSkipTLSVerify", json!(true))]), "", Err("spec.insecureSkipTLSVerify")),
            (&crds, vec![CaBundles], &api_service, changed(&api_service, &[("/spec/caBundle", json!("bmV3"))]), "", Err("spec.caBundle")),
            // webhookFailurePolicy, with caBundles or without
            (&webhooks, vec![WebhookFailurePolicy], &hook, changed(&hook, &[("/webhooks/0/failurePolicy", json!("Fail"))]), "", Ok(())),
            (&webhooks, vec![WebhookFailurePolicy, CaBundles], &hook, changed(&hook, &[(ca, json!("bmV3")), ("/webhooks/0/failurePolicy", json!("Fail"))]), "", Ok(())),
            (&webhooks, vec![WebhookFailurePolicy], &hook, changed(&hook, &[(ca, json!("bmV3"))]), "", Err("webhooks[0].clientConfig.caBundle")),
            // replicas, on the object or through its scale
            (&deployments, vec![Replicas], &deployment, changed(&deployment, &[("/spec/replicas", json!(0))]), "", Ok(())),
            (&deployments, vec![Replicas], &deployment, changed(&deployment, &[("/spec/template/metadata/annotations/a", json!("2"))]), "", Err("spec.template.metadata.annotations.a")),
            (&deployments, vec![Replicas], &deployment, deployment.clone(), "scale", Ok(())),
            (&deployments, vec![CaBundles], &deployment, deployment.clone(), "scale", Err("its scale")),
            // resize; no grant writes ephemeral containers
            (&deployments, vec![Resize], &deployment, deployment.clone(), "resize", Ok(())),
            (&deployments, vec![Resize, Replicas], &deployment, deployment.clone(), "ephemeralcontainers", Err("its ephemeralcontainers")),
            // a status write is judged by the metadata it stores
            (&deployments, vec![Annotations(keys(&["other"]))], &deployment, changed(&deployment, &[("/metadata/annotations/other", json!("p")), ("/spec/replicas", json!(9))]), "status", Ok(())),
            // annotations, labels, finalizers: those listed, never a guarded key
            (&deployments, vec![Annotations(keys(&["karpenter.sh/nodepool-hash*"]))], &deployment, changed(&deployment, &[("/metadata/annotations/karpenter.sh~1nodepool-hash", json!("2"))]), "", Ok(())),
            (&deployments, vec![Annotations(keys(&["karpenter.sh/nodepool-hash*"]))], &deployment, changed(&deployment, &[("/metadata/annotations/other", json!("p"))]), "", Err("the annotation other")),
            (&webhooks, vec![Annotations(keys(&["single-owner-policy.io/*"]))], &hook, changed(&hook, &[("/metadata/annotations/single-owner-policy.io~1offer", json!("y"))]), "", Err("the annotation single-owner-policy.io/offer")),
            (&deployments, vec![Labels(keys(&["crossplane.io/in-use"]))], &deployment, changed(&deployment, &[("/metadata/labels/crossplane.io~1in-use", json!("true"))]), "", Ok(())),
            (&deployments, vec![Labels(keys(&["crossplane.io/in-use"]))], &deployment, changed(&deployment, &[("/metadata/labels/app", json!("db"))]), "", Err("the label app")),
            (&deployments, vec![Finalizers(keys(&["karpenter.sh/termination"]))], &deployment, changed(&deployment, &[("/metadata/finalizers", json!(["keep"]))]), "", Ok(())),
            (&deployments, vec![Finalizers(keys(&["karpenter.sh/termination"]))], &deployment, changed(&deployment, &[("/metadata/finalizers", json!(["karpenter.sh/termination"]))]), "", Err("the finalizer keep")),
            (&deployments, vec![Replicas], &deployment, changed(&deployment, &[("/metadata/finalizers", json!(["karpenter.sh/termination", "keep", "orphan"]))]), "", Err("the finalizer orphan")),
            (&deployments, vec![Replicas], &deployment, changed(&deployment, &[("/metadata/finalizers", json!(["karpenter.sh/termination", "keep", "example.com/cleanup"]))]), "", Ok(())),
            // no grant moves the owner references
            (&deployments, vec![Replicas, Delete], &deployment, changed(&deployment, &[("/metadata/ownerReferences", json!([]))]), "", Err("metadata.ownerReferences")),
            // the pod template's annotations, a CronJob's too
            (&deployments, vec![PodTemplateAnnotations(keys(&["kubectl.kubernetes.io/restartedAt"]))], &deployment, changed(&deployment, &[("/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt", json!("2026-12-02T10:00:00Z"))]), "", Ok(())),
            (&deployments, vec![PodTemplateAnnotations(keys(&["kubectl.kubernetes.io/restartedAt"]))], &deployment, changed(&deployment, &[("/spec/template/metadata/annotations/a", json!("2"))]), "", Err("spec.template.metadata.annotations.a")),
            (&cron_jobs, vec![PodTemplateAnnotations(keys(&["reloader.stakater.com/last-reloaded-from"]))], &cron_job, changed(&cron_job, &[("/spec/jobTemplate/spec/template/metadata/annotations", json!({"reloader.stakater.com/last-reloaded-from": "x"}))]), "", Ok(())),
            // the pod template's environment, by name; the others kept, in order
            (&deployments, vec![PodTemplateEnv(keys(&["STAKATER_*"]))], &deployment, changed(&deployment, &[(template_env, json!([{"name": "A", "value": "1"}, {"name": "STAKATER_APP_CONFIGMAP", "value": "h"}]))]), "", Ok(())),
            (&deployments, vec![PodTemplateEnv(keys(&["STAKATER_*"]))], &deployment, changed(&deployment, &[(template_env, json!([{"name": "A", "value": "2"}]))]), "", Err("spec.template.spec.containers[0].env")),
            (&deployments, vec![PodTemplateEnv(keys(&["STAKATER_*"]))], &deployment, changed(&deployment, &[(template_env, json!([{"name": "STAKATER_APP_CONFIGMAP", "value": "h"}]))]), "", Err("spec.template.spec.containers[0].env")),
            // a Service's selector keys; a Deployment's selector is no Service's
            (&services, vec![ServiceSelector(keys(&["rollouts-pod-template-hash"]))], &service, changed(&service, &[("/spec/selector/rollouts-pod-template-hash", json!("5d4f"))]), "", Ok(())),
            (&services, vec![ServiceSelector(keys(&["rollouts-pod-template-hash"]))], &service, changed(&service, &[("/spec/selector/app", json!("db"))]), "", Err("spec.selector.app")),
            (&deployments, vec![ServiceSelector(keys(&["app"]))], &deployment, changed(&deployment, &[("/spec/selector/matchLabels/app", json!("db"))]), "", Err("spec.selector.matchLabels.app")),
            // fields, whole: those named, added or removed; nothing beside them, no metadata
            (&applications, vec![Fields(keys(&["operation", "status"]))], &application, changed(&application, &[("/operation", json!({"sync": {"revision": "b"}})), ("/status/health", json!("Progressing"))]), "", Ok(())),
            (&applications, vec![Fields(keys(&["operation", "status"]))], &application, changed(&application, &[("/status", json!({}))]), "", Ok(())),
            (&applications, vec![Fields(keys(&["status"]))], &application, changed(&application, &[("/operation", json!({"sync": {"revision": "b"}}))]), "", Err("operation")),
            (&applications, vec![Fields(keys(&["operation", "status"]))], &application, changed(&application, &[("/spec/source/targetRevision", json!("v2"))]), "", Err("spec.source.targetRevision")),
            (&applications, vec![Fields(keys(&["status"]))], &application, changed(&application, &[("/status/health", json!("Degraded")), ("/metadata/labels/team", json!("payments"))]), "", Err("the label team")),
        ];
        let guarded = |key: &str| key == "single-owner-policy.io/offer";
        let mut wrong = Vec::new();
        for (index, (kind, grants, old, new, subresource, expected)) in rows.iter().enumerate() {
            let grants: Vec<&Grant> = grants.iter().collect();
            let found = fits(
                &grants,
                kind,
                &object(old),
                &object(new),
                subresource,
                &guarded,
            );
            let found = found.as_ref().map(|_| ()).map_err(|beyond| beyond.as_str());
            if found != *expected {
                wrong.push(format!("row {index}: {found:?}, not {expected:?}"));
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
        assert_eq!(deletes(&[&Delete]), Ok(()));
        assert!(deletes(&[&Replicas]).is_err());
    }

    #[test]
    fn grants_are_named_as_settings_write_them() {
        let grants = [Grant::Replicas, Grant::Annotations(keys(&["a", "b*"]))];
        let grants: Vec<&Grant> = grants.iter().collect();
        assert_eq!(names(&grants), "replicas, annotations [a, b*]");
        let parsed: Vec<Grant> =
            serde_json::from_value(json!(["caBundles", {"podTemplateEnv": ["STAKATER_*"]}]))
                .unwrap();
        assert_eq!(
            parsed,
            [
                Grant::CaBundles,
                Grant::PodTemplateEnv(keys(&["STAKATER_*"]))
            ]
        );
    }
}
