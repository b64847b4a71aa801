//! Derived objects follow their controller ([`single_owner_policy::Parents`]): each row a
//! request on an object whose controller the host holds (or not), what the policy decides, what
//! the denial says it found, and how many lookups it made. The rows mirror the tables of
//! `src/derivation.rs`.

mod common;

use std::cell::Cell;

use serde_json::{Value, json};
use single_owner_policy::policy::{Payload, Verdict};
use single_owner_policy::{Finding, Lookup, Parents, Reason};

use common::{CAMEL, summary};

/// The controller every derived object here names.
const PARENT: &str = "app";
/// Its uid.
const UID: &str = "7b1c0f2e-integration";

/// A host holding one controller: its labels and annotations, its uid, or the error a lookup
/// gets. It counts the lookups.
struct Host {
    api_version: &'static str,
    kind: &'static str,
    parent: Held,
    calls: Cell<usize>,
}

impl Parents for Host {
    fn get(&self, lookup: &Lookup<'_>) -> Result<String, String> {
        self.calls.set(self.calls.get() + 1);
        assert_eq!(
            (lookup.api_version, lookup.kind, lookup.name),
            (self.api_version, self.kind, PARENT),
            "the lookup names the controller at the settings' apiVersion"
        );
        assert_eq!(lookup.namespace, Some("shop"));
        let parent = self.parent.clone().map_err(str::to_owned)?;
        Ok(parent.to_string())
    }
}

/// What the host holds: the controller, or the error its lookup gets.
type Held = Result<Value, &'static str>;

/// A controller's metadata, with `uid`.
fn parent(uid: &str, labels: Value, annotations: Value) -> Held {
    Ok(
        json!({"metadata": {"name": PARENT, "namespace": "shop", "uid": uid,
        "labels": labels, "annotations": annotations}}),
    )
}

/// An owner reference to the controller, by kind and uid.
fn controller(api_version: &str, kind: &str, uid: &str) -> Value {
    json!([{"apiVersion": api_version, "kind": kind, "name": PARENT, "uid": uid,
        "controller": true, "blockOwnerDeletion": true}])
}

/// An object of `kind` in `shop` with these marks and owner references (`null`: none).
fn object(kind: &str, labels: Value, annotations: Value, references: &Value) -> Value {
    let mut metadata = json!({"name": "app-1", "namespace": "shop", "uid": "c-1",
        "labels": labels, "annotations": annotations});
    if !references.is_null() {
        metadata["ownerReferences"] = references.clone();
    }
    json!({"kind": kind, "metadata": metadata})
}

/// A request of `operation` on `(group, version, kind)` by `user`.
fn request(
    operation: &str,
    (group, kind): (&str, &str),
    user: &str,
    old: Option<Value>,
    new: Option<Value>,
) -> Value {
    let mut groups = vec![json!("system:authenticated")];
    if let Some(account) = user.strip_prefix("system:serviceaccount:") {
        let namespace = account.split(':').next().unwrap();
        groups.insert(0, json!(format!("system:serviceaccounts:{namespace}")));
        groups.insert(0, json!("system:serviceaccounts"));
    }
    let mut request = json!({
        "uid": "1", "kind": {"group": group, "version": "v1", "kind": kind},
        "resource": {"group": group, "version": "v1", "resource": format!("{}s", kind.to_lowercase())},
        "requestResource": {"group": group, "version": "v1", "resource": format!("{}s", kind.to_lowercase())},
        "name": "app-1", "namespace": "shop", "operation": operation,
        "userInfo": {"username": user, "groups": groups},
    });
    if let Some(old) = old {
        request["oldObject"] = old;
    }
    if let Some(new) = new {
        request["object"] = new;
    }
    request
}

/// What a row expects: allowed, or denied with these summaries and this finding.
#[derive(Debug, PartialEq)]
enum Outcome {
    Allowed,
    Denied(Vec<String>, Option<Finding>),
}

/// The policy's decision with `host`, and the lookups it made.
fn decide(request: &Value, settings: &Value, host: &Host) -> (Outcome, usize) {
    let payload = serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
    let parsed = Payload::parse(&payload).unwrap();
    let outcome = match parsed.verdict(host) {
        Verdict::Allow => Outcome::Allowed,
        Verdict::Deny(violations) => Outcome::Denied(
            violations.iter().map(summary).collect(),
            violations[0]
                .controller
                .as_ref()
                .map(|found| found.finding.clone())
                .or_else(|| match &violations[0].reason {
                    Reason::OutOfStep(found) => Some(found.finding.clone()),
                    _ => None,
                }),
        ),
        other => panic!("unexpected verdict {other:?}"),
    };
    (outcome, host.calls.get())
}

fn denied(summaries: &[&str], finding: Option<Finding>) -> Outcome {
    Outcome::Denied(summaries.iter().map(|s| s.to_string()).collect(), finding)
}

fn carries(claim: &str) -> Option<Finding> {
    Some(Finding::Carries(claim.to_owned()))
}

/// Camel K (examples/camel-k): after an Integration moved from operator-1 to operator-2, its
/// Deployment follows it.
#[test]
fn a_derived_object_follows_its_controller_across_owners() {
    let settings = json!({"ownerMarks": [{"annotation": CAMEL}], "orphaning": "Deny",
        "parentKinds": [{"apiVersion": "camel.apache.org/v1", "kind": "Integration"},
                        {"apiVersion": "serving.knative.dev/v1", "kind": "Service"}]});
    let marks = |id: &str| json!({CAMEL: id});
    let integration = controller("camel.apache.org/v1", "Integration", UID);
    let deployment =
        |id: &str, references: &Value| object("Deployment", json!({}), marks(id), references);
    let update = |old: Value, new: Value| {
        request(
            "UPDATE",
            ("apps", "Deployment"),
            "system:serviceaccount:camel-k:camel-k-operator",
            Some(old),
            Some(new),
        )
    };
    let moved = update(
        deployment("operator-1", &integration),
        deployment("operator-2", &integration),
    );
    let owner_change = &[
        "annotation camel.apache.org/operator.id: owner change from \"operator-1\" to \"operator-2\"",
    ];
    let at = |uid, id: &str| parent(uid, json!({}), marks(id));
    let host = |parent| Host {
        api_version: "camel.apache.org/v1",
        kind: "Integration",
        parent,
        calls: Cell::new(0),
    };
    let pipe = controller("camel.apache.org/v1", "Pipe", UID);
    let repointed = update(
        deployment("operator-1", &Value::Null),
        deployment("operator-2", &integration),
    );
    let rereferenced = update(
        deployment(
            "operator-1",
            &controller("camel.apache.org/v1", "Integration", "other-uid"),
        ),
        deployment("operator-2", &integration),
    );
    let kept = update(
        deployment("operator-1", &integration),
        deployment("operator-1", &integration),
    );
    let unmarked = object("Deployment", json!({}), json!({}), &integration);
    let released = update(deployment("operator-1", &integration), unmarked);
    #[rustfmt::skip]
    let rows: Vec<(&str, Value, Held, Outcome, usize)> = vec![
        ("the controller moved: inherited",  moved.clone(), at(UID, "operator-2"), Outcome::Allowed, 1),
        ("the controller did not move",      moved.clone(), at(UID, "operator-1"), denied(owner_change, carries("\"operator-1\"")), 1),
        ("another object by that name",      moved.clone(), at("new-uid", "operator-2"), denied(owner_change, Some(Finding::Replaced)), 1),
        ("the lookup fails",                 moved.clone(), Err("integrations.camel.apache.org \"app\" is forbidden"),
            denied(owner_change, Some(Finding::Unreadable("integrations.camel.apache.org \"app\" is forbidden".to_owned()))), 1),
        ("the controller is gone",           moved.clone(), Err("integrations.camel.apache.org \"app\" not found"),
            denied(owner_change, Some(Finding::Missing("integrations.camel.apache.org \"app\" not found".to_owned()))), 1),
        ("pointed at the controller now",    repointed, at(UID, "operator-2"), denied(owner_change, Some(Finding::Repointed)), 0),
        ("its reference changes",            rereferenced, at(UID, "operator-2"), denied(owner_change, Some(Finding::Repointed)), 0),
        ("a controller of a kind not followed", update(deployment("operator-1", &pipe), deployment("operator-2", &pipe)),
            at(UID, "operator-2"), denied(owner_change, None), 0),
        ("allowed without it: no lookup",    kept, at(UID, "operator-2"), Outcome::Allowed, 0),
        ("a removal the controller made first", released.clone(), parent(UID, json!({}), json!({})),
            Outcome::Allowed, 1),
        ("a removal ahead of the controller", released, at(UID, "operator-1"),
            denied(&["annotation camel.apache.org/operator.id: orphaning from \"operator-1\" to none"], carries("\"operator-1\"")), 1),
    ];
    for (name, request, parent, expected, calls) in rows {
        let host = host(parent);
        assert_eq!(
            decide(&request, &settings, &host),
            (expected, calls),
            "{name}"
        );
    }
}

/// Flux with identities (examples/flux): cert-manager derives a Certificate's
/// CertificateRequests, labels copied, for any owner (`access: Derive`), and nothing else.
#[test]
fn who_may_derive_and_what() {
    const NAME: &str = "kustomize.toolkit.fluxcd.io/name";
    const NAMESPACE: &str = "kustomize.toolkit.fluxcd.io/namespace";
    const CERT_MANAGER: &str = "system:serviceaccount:cert-manager:cert-manager";
    const TENANT: &str = "system:serviceaccount:shop:flux-reconciler";
    const OTHER: &str = "system:serviceaccount:shop:other";
    let settings = json!({
        "ownerMarks": [{"label": NAME, "namespaceKey": NAMESPACE}],
        "identities": [
            {"owners": ["${namespace}/*"], "users": ["system:serviceaccount:*:flux-reconciler"]},
            {"owners": ["*"], "users": [CERT_MANAGER], "access": "Derive"}],
        "writes": "Owner",
        "parentKinds": [{"apiVersion": "cert-manager.io/v1", "kind": "Certificate"}]});
    let labels = |owner: &str| {
        let (namespace, name) = owner.split_once('/').unwrap_or(("", ""));
        match owner {
            "" => json!({}),
            _ => json!({NAME: name, NAMESPACE: namespace}),
        }
    };
    let certificate = controller("cert-manager.io/v1", "Certificate", UID);
    let request_of = |owner: &str, references: &Value| {
        object("CertificateRequest", labels(owner), json!({}), references)
    };
    let kind = ("cert-manager.io", "CertificateRequest");
    let create = |user, owner| {
        request(
            "CREATE",
            kind,
            user,
            None,
            Some(request_of(owner, &certificate)),
        )
    };
    // An update that changes something besides the marks: one that changes nothing is
    // anyone's, and never read for.
    let update = |user, old, new| {
        let mut new = request_of(new, &certificate);
        new["spec"] = json!({"usages": ["server auth"]});
        request(
            "UPDATE",
            kind,
            user,
            Some(request_of(old, &certificate)),
            Some(new),
        )
    };
    let delete = |user, owner| {
        request(
            "DELETE",
            kind,
            user,
            Some(request_of(owner, &certificate)),
            None,
        )
    };
    let orphan = create(CERT_MANAGER, "shop/apps");
    let orphan = {
        let mut orphan = orphan;
        orphan["object"]["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("ownerReferences");
        orphan
    };
    let label = "label kustomize.toolkit.fluxcd.io/name";
    let identity_none_to_apps = format!("{label}: identity from none to \"shop/apps\"");
    let identity_to_other = format!("{label}: identity from none to \"shop/other\"");
    let writes_apps = format!("{label}: owner writes owned by \"shop/apps\"");
    let removed = format!("{label}: identity from \"shop/apps\" to none");
    let removed_other = format!("{label}: identity from \"shop/other\" to none");
    #[rustfmt::skip]
    let rows: Vec<(&str, Value, Outcome, usize)> = vec![
        ("cert-manager copies the Certificate's labels", create(CERT_MANAGER, "shop/apps"), Outcome::Allowed, 1),
        ("the tenant's own reconciler: no lookup",      create(TENANT, "shop/apps"), Outcome::Allowed, 0),
        ("a requester that may not derive",              create(OTHER, "shop/apps"),
            denied(&[&identity_none_to_apps], Some(Finding::NotDerived)), 1),
        ("a label the Certificate does not carry",       create(CERT_MANAGER, "shop/other"),
            denied(&[&identity_to_other], carries("\"shop/apps\"")), 1),
        ("no controller: no lookup",                     orphan, denied(&[&identity_none_to_apps], None), 0),
        ("cert-manager updates what it derived",         update(CERT_MANAGER, "shop/apps", "shop/apps"), Outcome::Allowed, 1),
        ("cert-manager deletes what it derived",         delete(CERT_MANAGER, "shop/apps"), Outcome::Allowed, 1),
        ("another writes what was derived",              update(OTHER, "shop/apps", "shop/apps"),
            denied(&[&writes_apps], Some(Finding::NotDerived)), 1),
        ("deriving drops the mark its controller carries: owned through its chain",
            update(CERT_MANAGER, "shop/apps", ""), Outcome::Allowed, 1),
        ("deriving drops a mark its controller does not carry", update(CERT_MANAGER, "shop/other", ""),
            denied(&[&removed_other], carries("\"shop/apps\"")), 1),
        ("another drops the mark its controller carries", update(OTHER, "shop/apps", ""),
            denied(&[&removed], Some(Finding::NotDerived)), 1),
    ];
    for (name, request, expected, calls) in rows {
        let host = Host {
            api_version: "cert-manager.io/v1",
            kind: "Certificate",
            parent: parent(UID, labels("shop/apps"), json!({})),
            calls: Cell::new(0),
        };
        assert_eq!(
            decide(&request, &settings, &host),
            (expected, calls),
            "{name}"
        );
    }
}

/// Flagger's promotion (test_data/writers/flagger): the primary loses the Helm annotations
/// Flagger copied from its target, which its Canary carries. Under `writes: Owner` a namespaced
/// object left without a mark stays its controller's owner's, through its chain: the drop is
/// inherited. One mark left, or settings that do not judge writes, and it is a removal.
#[test]
fn a_promotion_drops_the_marks_its_controller_carries() {
    const RELEASE: &str = "meta.helm.sh/release-name";
    const RELEASE_NAMESPACE: &str = "meta.helm.sh/release-namespace";
    const FLUX_NAME: &str = "kustomize.toolkit.fluxcd.io/name";
    const FLUX_NAMESPACE: &str = "kustomize.toolkit.fluxcd.io/namespace";
    const FLAGGER: &str = "system:serviceaccount:flagger-system:flagger";
    let owner_writes = json!({
        "ownerMarks": [{"annotation": RELEASE, "namespaceKey": RELEASE_NAMESPACE},
                       {"label": FLUX_NAME, "namespaceKey": FLUX_NAMESPACE}],
        "identities": [{"owners": ["${namespace}/*"], "users": ["system:serviceaccount:*:flux-reconciler"]}],
        "writes": "Owner", "clusterWriters": [{"name": "flagger"}]});
    let mut any_writes = owner_writes.clone();
    any_writes.as_object_mut().unwrap().remove("writes");
    let release = json!({RELEASE: "web", RELEASE_NAMESPACE: "shop"});
    let canary = controller("flagger.app/v1beta1", "Canary", UID);
    let primary =
        |labels: Value, annotations: Value| object("Deployment", labels, annotations, &canary);
    let promote = |kept_labels: Value| {
        let mut new = primary(kept_labels.clone(), json!({}));
        new["spec"] = json!({"template": {"spec": {"containers": [{"image": "web:1.5.0"}]}}});
        request(
            "UPDATE",
            ("apps", "Deployment"),
            FLAGGER,
            Some(primary(kept_labels, release.clone())),
            Some(new),
        )
    };
    let flux_labels = json!({FLUX_NAME: "apps", FLUX_NAMESPACE: "shop"});
    let removed = "annotation meta.helm.sh/release-name: identity from \"shop/web\" to none";
    #[rustfmt::skip]
    let rows: Vec<(&str, &Value, Value, Outcome, usize)> = vec![
        ("the primary left without a mark",  &owner_writes, promote(json!({})), Outcome::Allowed, 1),
        ("another mark left, copied too",     &owner_writes, promote(flux_labels.clone()),
            denied(&[removed], carries("\"shop/web\"")), 1),
        ("writes not judged: nothing keeps it", &any_writes, promote(json!({})),
            denied(&[removed], carries("\"shop/web\"")), 1),
    ];
    for (name, settings, request, expected, calls) in rows {
        let host = Host {
            api_version: "flagger.app/v1beta1",
            kind: "Canary",
            parent: parent(UID, flux_labels.clone(), release.clone()),
            calls: Cell::new(0),
        };
        assert_eq!(
            decide(&request, settings, &host),
            (expected, calls),
            "{name}"
        );
    }
}

/// Knative (examples/flux): a Route copies its Service's annotations, a pending offer included,
/// and drops the Service's marks with it; a requester that derives may follow, and only follow.
#[test]
fn a_copy_follows_its_controllers_offer_and_unmarking() {
    const KNATIVE: &str = "system:serviceaccount:knative-serving:controller";
    let settings = json!({"ownerMarks": [{"annotation": CAMEL}], "orphaning": "Deny",
        "identities": [{"owners": ["*"], "users": [KNATIVE], "access": "Derive"}],
        "parentKinds": [{"apiVersion": "serving.knative.dev/v1", "kind": "Service"}]});
    const OFFER: &str = "single-owner-policy.io/offer";
    let offer = "camel.apache.org/operator.id: operator-1 -> operator-2";
    let service = controller("serving.knative.dev/v1", "Service", UID);
    let route = |annotations: Value| object("Route", json!({}), annotations, &service);
    let update = |old: Value, new: Value| {
        request(
            "UPDATE",
            ("serving.knative.dev", "Route"),
            KNATIVE,
            Some(route(old)),
            Some(route(new)),
        )
    };
    let owned = json!({CAMEL: "operator-1"});
    let offered = json!({CAMEL: "operator-1", OFFER: offer});
    let offer_denied = "annotation single-owner-policy.io/offer: offer owned by \"operator-1\"";
    let identity = "annotation camel.apache.org/operator.id: identity from \"operator-1\" to none";
    let orphaning =
        "annotation camel.apache.org/operator.id: orphaning from \"operator-1\" to none";
    #[rustfmt::skip]
    let rows: Vec<(&str, Value, Held, Outcome, usize)> = vec![
        ("the Service's offer, copied",          update(owned.clone(), offered.clone()),
            parent(UID, json!({}), offered.clone()), Outcome::Allowed, 1),
        ("an offer the Service does not carry", update(owned.clone(), offered.clone()),
            parent(UID, json!({}), owned.clone()), denied(&[offer_denied], None), 1),
        ("the Service's offer, withdrawn with it", update(offered.clone(), owned.clone()),
            parent(UID, json!({}), owned.clone()), Outcome::Allowed, 1),
        ("the Service unmarked, the Route too",  update(owned.clone(), json!({})),
            parent(UID, json!({}), json!({})), Outcome::Allowed, 1),
        ("the Route unmarked ahead of the Service", update(owned.clone(), json!({})),
            parent(UID, json!({}), owned.clone()), denied(&[orphaning], carries("\"operator-1\"")), 1),
        ("the Route unmarked by one that does not derive", {
            let mut request = update(owned.clone(), json!({}));
            request["userInfo"] = json!({"username": "alice"});
            request
        }, parent(UID, json!({}), json!({})), denied(&[identity], Some(Finding::NotDerived)), 1),
    ];
    for (name, request, held, expected, calls) in rows {
        let host = Host {
            api_version: "serving.knative.dev/v1",
            kind: "Service",
            parent: held,
            calls: Cell::new(0),
        };
        assert_eq!(
            decide(&request, &settings, &host),
            (expected, calls),
            "{name}"
        );
    }
}

/// Helm releases without identities (examples/helm) with KEDA enabled: the writer is only
/// followed. After a ScaledObject was handed from release a to release b, its HPA follows it;
/// and a person's release install is judged as before, not as one of a requester acting for no
/// owner.
#[test]
fn a_writer_without_identities_is_followed_not_bound() {
    const RELEASE: &str = "meta.helm.sh/release-name";
    const RELEASE_NAMESPACE: &str = "meta.helm.sh/release-namespace";
    let settings = json!({
        "ownerMarks": [{"annotation": RELEASE, "namespaceKey": RELEASE_NAMESPACE}],
        "clusterWriters": [{"name": "keda"}]});
    let release = |name: &str| json!({RELEASE: name, RELEASE_NAMESPACE: "shop"});
    let scaled_object = controller("keda.sh/v1alpha1", "ScaledObject", UID);
    let hpa = |name: &str| {
        object(
            "HorizontalPodAutoscaler",
            json!({}),
            release(name),
            &scaled_object,
        )
    };
    let kind = ("autoscaling", "HorizontalPodAutoscaler");
    let keda = "system:serviceaccount:keda:keda-operator";
    let followed = request("UPDATE", kind, keda, Some(hpa("a")), Some(hpa("b")));
    let installed = request(
        "CREATE",
        ("apps", "Deployment"),
        "alice",
        None,
        Some(object("Deployment", json!({}), release("a"), &Value::Null)),
    );
    #[rustfmt::skip]
    let rows: Vec<(&str, Value, Outcome, usize)> = vec![
        ("the HPA follows its ScaledObject's handoff", followed, Outcome::Allowed, 1),
        ("a person installs a release",               installed, Outcome::Allowed, 0),
    ];
    for (name, request, expected, calls) in rows {
        let host = Host {
            api_version: "keda.sh/v1alpha1",
            kind: "ScaledObject",
            parent: parent(UID, json!({}), release("b")),
            calls: Cell::new(0),
        };
        assert_eq!(
            decide(&request, &settings, &host),
            (expected, calls),
            "{name}"
        );
    }
}

/// An audit replay reads the controller of what it replays and reports a mark out of step.
#[test]
fn an_audit_reports_a_mark_out_of_step_with_its_controller() {
    let settings = json!({"ownerMarks": [{"annotation": CAMEL}],
        "parentKinds": [{"apiVersion": "camel.apache.org/v1", "kind": "Integration"}]});
    let integration = controller("camel.apache.org/v1", "Integration", UID);
    let stored = object(
        "Deployment",
        json!({}),
        json!({CAMEL: "operator-1"}),
        &integration,
    );
    let mut replay = request("CREATE", ("apps", "Deployment"), "", None, Some(stored));
    replay["userInfo"] = json!({});
    replay.as_object_mut().unwrap().remove("requestResource");
    let out_of_step =
        &["annotation camel.apache.org/operator.id: controller owned by \"operator-1\""];
    #[rustfmt::skip]
    let rows = [
        ("in step",     parent(UID, json!({}), json!({CAMEL: "operator-1"})), Outcome::Allowed),
        ("out of step", parent(UID, json!({}), json!({CAMEL: "operator-2"})), denied(out_of_step, carries("\"operator-2\""))),
        ("unreadable",  Err("forbidden"), Outcome::Allowed),
    ];
    for (name, parent, expected) in rows {
        let host = Host {
            api_version: "camel.apache.org/v1",
            kind: "Integration",
            parent,
            calls: Cell::new(0),
        };
        assert_eq!(decide(&replay, &settings, &host), (expected, 1), "{name}");
    }
}

/// Camel K under `writes: Any` (examples/camel-k), with identities and without: pointing what
/// an owner owns at another controller the settings follow is its owner's to do, for its marks
/// would follow that controller's from then on — unless the new controller, read, carries the
/// same owner; nothing else about the references is judged.
#[test]
fn only_an_owners_requesters_repoint_what_it_owns_elsewhere() {
    const OPERATOR_1: &str = "system:serviceaccount:camel-k:camel-k-operator";
    const OPERATOR_2: &str = "system:serviceaccount:camel-k-next:camel-k-operator";
    let marks = json!([{"annotation": CAMEL}]);
    let kinds = json!([{"apiVersion": "camel.apache.org/v1", "kind": "Integration"}]);
    let plain = json!({"ownerMarks": marks, "parentKinds": kinds});
    let identities = json!({"ownerMarks": marks, "parentKinds": kinds,
        "identities": [{"owners": ["operator-1"], "users": [OPERATOR_1]},
                       {"owners": ["operator-2"], "users": [OPERATOR_2]}]});
    let integration = controller("camel.apache.org/v1", "Integration", UID);
    let pipe = controller("camel.apache.org/v1", "Pipe", UID);
    let deployment = |references: &Value| {
        object(
            "Deployment",
            json!({}),
            json!({CAMEL: "operator-1"}),
            references,
        )
    };
    let update = |user, old: &Value, new: &Value| {
        request(
            "UPDATE",
            ("apps", "Deployment"),
            user,
            Some(deployment(old)),
            Some(deployment(new)),
        )
    };
    let at = |id: &str| parent(UID, json!({}), json!({CAMEL: id}));
    let identity = &["annotation camel.apache.org/operator.id: identity owned by \"operator-1\""];
    let controller_rule =
        &["annotation camel.apache.org/operator.id: controller owned by \"operator-1\""];
    let forbidden = "integrations.camel.apache.org \"app\" is forbidden";
    let none = &Value::Null;
    #[rustfmt::skip]
    let rows: Vec<(&str, &Value, Value, Held, Outcome, usize)> = vec![
        ("another owner's requester points it at another owner's controller", &identities,
         update(OPERATOR_2, none, &integration), at("operator-2"), denied(identity, carries("\"operator-2\"")), 1),
        ("another owner's requester points it at a controller of its owner", &identities,
         update(OPERATOR_2, none, &integration), at("operator-1"), Outcome::Allowed, 1),
        ("its owner's requester points it anywhere", &identities,
         update(OPERATOR_1, none, &integration), at("operator-2"), Outcome::Allowed, 0),
        ("without identities, at another owner's controller", &plain,
         update(OPERATOR_1, none, &integration), at("operator-2"), denied(controller_rule, carries("\"operator-2\"")), 1),
        ("without identities, at a controller without the mark", &plain,
         update(OPERATOR_1, none, &integration), parent(UID, json!({}), json!({})), denied(controller_rule, carries("none")), 1),
        ("without identities, at a controller of its owner", &plain,
         update(OPERATOR_2, none, &integration), at("operator-1"), Outcome::Allowed, 1),
        ("without identities, at a controller that cannot be read", &plain,
         update(OPERATOR_1, none, &integration), Err(forbidden), denied(controller_rule, Some(Finding::Unreadable(forbidden.to_owned()))), 1),
        ("at a kind not followed", &plain, update(OPERATOR_2, none, &pipe), at("operator-2"), Outcome::Allowed, 0),
        ("references kept", &plain, update(OPERATOR_2, &integration, &integration), at("operator-2"), Outcome::Allowed, 0),
        ("the controller removed", &plain, update(OPERATOR_2, &integration, none), at("operator-2"), Outcome::Allowed, 0),
    ];
    for (name, settings, request, parent, expected, calls) in rows {
        let host = Host {
            api_version: "camel.apache.org/v1",
            kind: "Integration",
            parent,
            calls: Cell::new(0),
        };
        assert_eq!(
            decide(&request, settings, &host),
            (expected, calls),
            "{name}"
        );
    }
}
