//! Bindings under `writes: Owner`: the API server copies a Binding's labels and annotations onto
//! its Pod, so one that carries them is judged as the UPDATE of the Pod that sets them, read
//! through the host (`src/binding.rs`): each row a `pods/binding` CREATE, what the host holds,
//! the verdict and the number of lookups.

mod common;

use serde_json::{Value, json};

use common::{Host, groups_of, judged_through};

const INSTALLER: &str = "system:serviceaccount:shop:web-installer";
const SCHEDULER: &str = "system:kube-scheduler";

/// The Pod `shop/web-0`, with its labels.
fn pod(labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "web-0", "namespace": "shop", "uid": "p-1", "labels": labels},
           "spec": {"containers": [{"name": "web", "image": "web:1"}]}})
}

/// A `pods/binding` CREATE of `shop/web-0` by `user`, its Binding carrying `metadata`.
fn binding(user: &str, metadata: Value) -> Value {
    let mut metadata = metadata;
    metadata["name"] = json!("web-0");
    metadata["namespace"] = json!("shop");
    json!({"uid": "b", "kind": {"group": "", "version": "v1", "kind": "Binding"},
           "resource": {"group": "", "version": "v1", "resource": "pods"},
           "requestKind": {"group": "", "version": "v1", "kind": "Binding"},
           "requestResource": {"group": "", "version": "v1", "resource": "pods"},
           "subResource": "binding", "requestSubResource": "binding",
           "name": "web-0", "namespace": "shop", "operation": "CREATE",
           "userInfo": {"username": user, "groups": groups_of(user)},
           "object": {"apiVersion": "v1", "kind": "Binding", "metadata": metadata,
                      "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}})
}

#[test]
fn a_binding_carrying_metadata_is_judged_as_a_write_of_its_pod() {
    let writes = |writes: &str| {
        json!({"identities": [{"owners": ["ClusterExtension.web"], "users": [INSTALLER]}],
               "writes": writes})
    };
    let owned = pod(json!({"appID": "ClusterExtension.web"}));
    let zone = json!({"annotations": {"example.com/zone": "a"}});
    // request, settings, what the host holds, the denial's start (None: allowed), lookups
    type Row<'a> = (
        Value,
        Value,
        Result<Value, &'static str>,
        Option<&'a str>,
        usize,
    );
    #[rustfmt::skip]
    let rows: Vec<Row> = vec![
        (binding("alice", zone.clone()), writes("Owner"), Ok(owned.clone()),
         Some(r#"label appID: owner writes denied for UPDATE of Pod shop/web-0 (subresource binding), owned by "ClusterExtension.web""#), 1),
        (binding("alice", json!({"labels": {"tier": "web"}})), writes("Owner"), Ok(owned.clone()),
         Some("label appID: owner writes denied for UPDATE of Pod shop/web-0 (subresource binding)"), 1),
        (binding(INSTALLER, zone.clone()), writes("Owner"), Ok(owned.clone()), None, 1),
        (binding("alice", zone.clone()), writes("Owner"), Ok(pod(json!({}))), None, 1),
        (binding("alice", zone.clone()), writes("Owner"), Err("forbidden"),
         Some("cannot judge the Binding of Pod shop/web-0 under writes: Owner: reading the Pod failed (forbidden); grant policy-server's service account get on pods"), 1),
        // never read: the scheduler is trusted, a Binding without metadata writes none,
        // `writes: Any` judges no write, and a mark is denied as it is
        (binding(SCHEDULER, zone.clone()), writes("Owner"), Err("unread"), None, 0),
        (binding("alice", json!({})), writes("Owner"), Err("unread"), None, 0),
        (binding("alice", zone), writes("Any"), Err("unread"), None, 0),
        (binding("alice", json!({"labels": {"appID": "ClusterExtension.web"}})), writes("Owner"), Err("unread"),
         Some("label appID: binding denied"), 0),
    ];
    for (request, settings, held, denial, lookups) in rows {
        let host = Host::new(("v1", "Pod", "web-0", "shop"), vec![held]);
        judged_through(&host, &request, &settings, denial);
        assert_eq!(host.calls(), lookups, "{request}");
    }
}
