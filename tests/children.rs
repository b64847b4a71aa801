//! Unmarked children under `writes: Owner`: a write of an object without a mark whose controller
//! is a workload is judged as a write of an object carrying the marks of the first controller
//! up its chain that carries one, read through the host (`src/children.rs`): each row a write
//! of a Pod, what the host holds for its chain, the verdict and the lookups.

mod common;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use serde_json::{Value, json};
use single_owner_policy::{Lookup, Parents};

use common::{groups_of, judged_through};

const INSTALLER: &str = "system:serviceaccount:shop:web-installer";
const OTHER: &str = "system:serviceaccount:shop:api-installer";
const ADMIN: &str = "alice";
const COLLECTOR: &str = "system:serviceaccount:kube-system:generic-garbage-collector";

/// What the host holds of one object, by (kind, name): the answers to its lookups in turn.
type Held = (
    (&'static str, &'static str),
    Vec<Result<Value, &'static str>>,
);

/// What the host holds: for each (kind, name) the answers to its lookups in turn (the last
/// again after the others), each lookup checked to be past the cache only after the first.
struct Chain {
    held: BTreeMap<(&'static str, &'static str), Vec<Result<Value, &'static str>>>,
    asked: RefCell<BTreeMap<(String, String), usize>>,
    calls: Cell<usize>,
}

impl Chain {
    fn new(held: &[Held]) -> Chain {
        Chain {
            held: held.iter().cloned().collect(),
            asked: RefCell::default(),
            calls: Cell::new(0),
        }
    }
}

impl Parents for Chain {
    fn get(&self, lookup: &Lookup<'_>) -> Result<String, String> {
        self.calls.set(self.calls.get() + 1);
        assert_eq!(lookup.namespace, Some("shop"));
        let key = (lookup.kind.to_owned(), lookup.name.to_owned());
        let mut asked = self.asked.borrow_mut();
        let call = asked.entry(key).or_default();
        assert_eq!(lookup.disable_cache, *call > 0, "{lookup:?}");
        let Some(answers) = self.held.get(&(lookup.kind, lookup.name)) else {
            return Err(format!("{} \"{}\" not found", lookup.kind, lookup.name));
        };
        let answer = answers[(*call).min(answers.len() - 1)].clone();
        *call += 1;
        answer.map(|held| held.to_string()).map_err(str::to_owned)
    }
}

/// An object of `shop` with its labels and, if any, its controller `(apiVersion, kind, name,
/// uid)`.
fn object(
    (api_version, kind, name, uid): (&str, &str, &str, &str),
    labels: Value,
    controller: Option<(&str, &str, &str, &str)>,
) -> Value {
    let mut object = json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": name, "namespace": "shop", "uid": uid, "labels": labels}});
    if let Some((api_version, kind, name, uid)) = controller {
        object["metadata"]["ownerReferences"] = json!([{"apiVersion": api_version, "kind": kind,
            "name": name, "uid": uid, "controller": true, "blockOwnerDeletion": true}]);
    }
    object
}

const DEPLOYMENT: (&str, &str, &str, &str) = ("apps/v1", "Deployment", "web", "d-1");
const REPLICA_SET: (&str, &str, &str, &str) = ("apps/v1", "ReplicaSet", "web-7d9c", "r-1");
const POD: (&str, &str, &str, &str) = ("v1", "Pod", "web-7d9c-x", "p-1");

fn deployment(labels: Value) -> Value {
    object(DEPLOYMENT, labels, None)
}

fn replica_set(uid: &str) -> Value {
    object(
        ("apps/v1", "ReplicaSet", "web-7d9c", uid),
        json!({}),
        Some(DEPLOYMENT),
    )
}

/// The Pod, unmarked, with `labels`, controlled by `controller`.
fn pod(labels: Value, controller: (&str, &str, &str, &str)) -> Value {
    object(POD, labels, Some(controller))
}

/// A write of the Pod by `user`: `operation` through `subresource` (empty: the Pod itself),
/// from `old` to `new`.
fn write(
    operation: &str,
    subresource: &str,
    user: &str,
    old: &Value,
    new: Option<&Value>,
) -> Value {
    let mut request = json!({"uid": "c",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
        "requestResource": {"group": "", "version": "v1", "resource": "pods"},
        "name": "web-7d9c-x", "namespace": "shop", "operation": operation,
        "userInfo": {"username": user, "groups": groups_of(user)},
        "oldObject": old, "object": new});
    if !subresource.is_empty() {
        request["subResource"] = json!(subresource);
        request["requestSubResource"] = json!(subresource);
    }
    request
}

fn settings(writes: &str) -> Value {
    json!({"ownerMarks": [{"label": "appID", "clusterKinds": ["ClusterExtension"]}],
           "identities": [{"owners": ["ClusterExtension.web"], "users": [INSTALLER]},
                          {"owners": ["ClusterExtension.api"], "users": [OTHER]},
                          {"owners": ["*"], "users": [ADMIN], "access": "Write"}],
           "writes": writes})
}

#[test]
fn an_unmarked_child_is_owned_through_its_controllers() {
    let owned = || deployment(json!({"appID": "ClusterExtension.web"}));
    let chain = |replica_sets: Vec<Result<Value, &'static str>>, deployment: Value| {
        vec![
            (("ReplicaSet", "web-7d9c"), replica_sets),
            (("Deployment", "web"), vec![Ok(deployment)]),
        ]
    };
    let held = || chain(vec![Ok(replica_set("r-1"))], owned());
    let unmarked = pod(json!({"app": "web"}), REPLICA_SET);
    let relabelled = pod(json!({"app": "quarantined"}), REPLICA_SET);
    let debugged = {
        let mut pod = unmarked.clone();
        pod["spec"] = json!({"ephemeralContainers": [{"name": "debugger", "image": "busybox"}]});
        pod
    };
    let finalized = {
        let mut pod = unmarked.clone();
        pod["metadata"]["finalizers"] = json!(["example.com/cleanup"]);
        pod
    };
    let claimed = pod(
        json!({"app": "web", "appID": "ClusterExtension.api"}),
        REPLICA_SET,
    );
    let status = {
        let mut pod = unmarked.clone();
        pod["status"] = json!({"phase": "Running"});
        pod
    };
    let annotated = {
        let mut pod = status.clone();
        pod["metadata"]["annotations"] = json!({"cni.projectcalico.org/podIP": "10.244.2.17/32"});
        pod
    };
    let widget = pod(json!({}), ("example.com/v1", "Widget", "w", "w-1"));
    let marked = object(
        POD,
        json!({"appID": "ClusterExtension.web"}),
        Some(REPLICA_SET),
    );
    let delete = |user| write("DELETE", "", user, &unmarked, None);
    let denied = "label appID: owner writes denied for";
    // the request, settings, the chain held, the denial's start (None: allowed), lookups
    type Row = (Value, Value, Vec<Held>, Option<&'static str>, usize);
    #[rustfmt::skip]
    let rows: Vec<Row> = vec![
        // another owner's requester deletes, debugs or relabels a Pod of the owned Deployment
        (delete(OTHER), settings("Owner"), held(), Some(denied), 2),
        (write("UPDATE", "ephemeralcontainers", OTHER, &unmarked, Some(&debugged)), settings("Owner"), held(), Some(denied), 2),
        (write("UPDATE", "", OTHER, &unmarked, Some(&relabelled)), settings("Owner"), held(), Some(denied), 2),
        // claiming it moves it from the Deployment's owner: an owner change, not a claim
        (write("UPDATE", "", OTHER, &unmarked, Some(&claimed)), settings("Owner"), held(), Some("label appID: owner change denied"), 2),
        // the owner's requester writes it
        (delete(INSTALLER), settings("Owner"), held(), None, 2),
        // nothing read: an administrator writing for every owner, the trusted garbage
        // collector, a finalizer added, a status write, a Pod with a
        // mark of its own, a controller of a kind not followed, a CREATE, `writes: Any`
        (write("UPDATE", "ephemeralcontainers", ADMIN, &unmarked, Some(&debugged)), settings("Owner"), vec![], None, 0),
        (delete(COLLECTOR), settings("Owner"), vec![], None, 0),
        (write("UPDATE", "", OTHER, &unmarked, Some(&finalized)), settings("Owner"), vec![], None, 0),
        (write("UPDATE", "status", OTHER, &unmarked, Some(&status)), settings("Owner"), vec![], None, 0),
        // a status write that stores annotations: a CNI plugin's, on every node's Pods
        (write("UPDATE", "status", OTHER, &unmarked, Some(&annotated)), settings("Owner"), vec![], None, 0),
        (write("DELETE", "", OTHER, &marked, None), settings("Owner"), vec![], Some(denied), 0),
        (write("DELETE", "", OTHER, &widget, None), settings("Owner"), vec![], None, 0),
        (write("CREATE", "", OTHER, &Value::Null, Some(&unmarked)), settings("Owner"), vec![], None, 0),
        (delete(OTHER), settings("Any"), vec![], None, 0),
        // a chain without a mark, a controller gone, or another object of its name: nobody's
        (delete(OTHER), settings("Owner"), chain(vec![Ok(replica_set("r-1"))], deployment(json!({}))), None, 2),
        (delete(OTHER), settings("Owner"), vec![], None, 1),
        (delete(OTHER), settings("Owner"), chain(vec![Ok(replica_set("r-0"))], owned()), None, 2),
        // a stale read is read again past the cache
        (delete(OTHER), settings("Owner"), chain(vec![Ok(replica_set("r-0")), Ok(replica_set("r-1"))], owned()), Some(denied), 3),
        // a controller that cannot be read
        (delete(OTHER), settings("Owner"), chain(vec![Err("forbidden")], owned()),
         Some("cannot judge the DELETE of Pod shop/web-7d9c-x under writes: Owner: it carries no mark, and reading its controller ReplicaSet shop/web-7d9c failed (forbidden)"), 1),
    ];
    for (request, settings, held, denial, lookups) in rows {
        let host = Chain::new(&held);
        let message = judged_through(&host, &request, &settings, denial);
        let through = " (Pod shop/web-7d9c-x carries no mark: owned through ReplicaSet shop/web-7d9c, Deployment shop/web)";
        assert_eq!(
            !message.is_empty() && message.lines().all(|line| line.ends_with(through)),
            denial.is_some() && lookups > 1,
            "{request}: {message}"
        );
        assert_eq!(host.calls.get(), lookups, "{request}");
    }
}

/// An Argo CD tracking id names its object: the child is judged carrying one that names it.
#[test]
fn a_tracking_id_is_carried_as_the_childs() {
    let settings = json!({"ownerMarks": [{"annotation": "argocd.argoproj.io/tracking-id",
                                          "format": "ArgoCDTrackingID"}],
                          "identities": [{"owners": ["shop"], "users": [INSTALLER]}],
                          "writes": "Owner"});
    let mut tracked = deployment(json!({}));
    tracked["metadata"]["annotations"] =
        json!({"argocd.argoproj.io/tracking-id": "shop:apps/Deployment:shop/web"});
    let mut copied = tracked.clone();
    copied["metadata"]["annotations"] =
        json!({"argocd.argoproj.io/tracking-id": "shop:apps/Deployment:shop/other"});
    let chain = |deployment: &Value| {
        vec![
            (("ReplicaSet", "web-7d9c"), vec![Ok(replica_set("r-1"))]),
            (("Deployment", "web"), vec![Ok(deployment.clone())]),
        ]
    };
    let unmarked = pod(json!({}), REPLICA_SET);
    for (user, held, denial) in [
        (
            OTHER,
            chain(&tracked),
            Some("annotation argocd.argoproj.io/tracking-id: owner writes denied"),
        ),
        (INSTALLER, chain(&tracked), None),
        // a tracking id that names another object than its own is no one's mark
        (OTHER, chain(&copied), None),
    ] {
        let host = Chain::new(&held);
        judged_through(
            &host,
            &write("DELETE", "", user, &unmarked, None),
            &settings,
            denial,
        );
    }
}
