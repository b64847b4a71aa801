//! `scale` writes under `writes: Owner` are judged from their target, read through the host
//! (`src/scale.rs`): each row a `scale` UPDATE, what the host holds, the verdict and the number
//! of lookups.

mod common;

use serde_json::{Value, json};

use common::{Host, groups_of, judged_through};

const INSTALLER: &str = "system:serviceaccount:shop:web-installer";
const HPA: &str = "system:serviceaccount:kube-system:horizontal-pod-autoscaler";

/// A Deployment `shop/web`, its own labels and its pod template's.
fn deployment(labels: Value, template: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "namespace": "shop", "uid": "d-1", "labels": labels},
           "spec": {"replicas": 2, "template": {"metadata": {"labels": template}}}})
}

/// `deployment` as another object of its name: deleted and created again.
fn recreated(mut deployment: Value) -> Value {
    deployment["metadata"]["uid"] = json!("d-2");
    deployment
}

/// A `scale` UPDATE of `group/resource` `shop/web` by `user`, as the API server sends it: both
/// sides `Scale`s, which carry none of the target's labels.
fn scale(user: &str, (group, resource): (&str, &str)) -> Value {
    let side = |replicas: u32| {
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
               "metadata": {"name": "web", "namespace": "shop", "uid": "d-1"},
               "spec": {"replicas": replicas}, "status": {"replicas": 2}})
    };
    json!({"uid": "s", "kind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
           "resource": {"group": group, "version": "v1", "resource": resource},
           "requestKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
           "requestResource": {"group": group, "version": "v1", "resource": resource},
           "subResource": "scale", "requestSubResource": "scale",
           "name": "web", "namespace": "shop", "operation": "UPDATE",
           "userInfo": {"username": user, "groups": groups_of(user)},
           "object": side(5), "oldObject": side(2)})
}

#[test]
fn a_scale_is_judged_as_a_write_of_its_target() {
    let writes = |writes: &str| {
        json!({"identities": [{"owners": ["ClusterExtension.web"], "users": [INSTALLER]}],
               "writes": writes})
    };
    let owned = deployment(json!({"appID": "ClusterExtension.web"}), json!({}));
    let template_only = deployment(json!({}), json!({"appID": "ClusterExtension.web"}));
    let deployments = ("apps", "deployments");
    // request, settings, what the host holds, the denial's start (None: allowed), lookups
    type Row<'a> = (
        Value,
        Value,
        Vec<Result<Value, &'a str>>,
        Option<&'a str>,
        usize,
    );
    #[rustfmt::skip]
    let rows: Vec<Row> = vec![
        (scale("alice", deployments), writes("Owner"), vec![Ok(owned.clone())],
         Some(r#"label appID: owner writes denied for UPDATE of Deployment shop/web (subresource scale), owned by "ClusterExtension.web""#), 1),
        (scale("alice", deployments), writes("Owner"), vec![Ok(template_only)],
         Some("label appID in spec.template: owner writes denied for UPDATE of Deployment shop/web (subresource scale)"), 1),
        (scale(INSTALLER, deployments), writes("Owner"), vec![Ok(owned.clone())], None, 1),
        (scale("alice", deployments), writes("Owner"), vec![Ok(deployment(json!({}), json!({})))], None, 1),
        (scale("alice", deployments), writes("Owner"), vec![Err("forbidden")],
         Some("cannot judge the scale of Deployment shop/web under writes: Owner: reading it failed (forbidden); grant policy-server's service account get on deployments"), 1),
        // a cached read of an object since created again is read past the cache, and judged
        // only when it is the Scale's
        (scale("alice", deployments), writes("Owner"), vec![Ok(recreated(owned.clone())), Ok(owned.clone())],
         Some(r#"label appID: owner writes denied for UPDATE of Deployment shop/web (subresource scale)"#), 2),
        (scale(INSTALLER, deployments), writes("Owner"), vec![Ok(recreated(deployment(json!({}), json!({})))), Ok(owned.clone())], None, 2),
        (scale(INSTALLER, deployments), writes("Owner"), vec![Ok(recreated(owned.clone()))],
         Some("cannot judge the scale of Deployment shop/web under writes: Owner: the Scale is of uid d-1, and the Deployment read has uid d-2: it was deleted and created again; send the scale again"), 2),
        // never read: the autoscaler is trusted, `writes: Any` judges no write, and no lookup
        // names a custom resource's kind
        (scale(HPA, deployments), writes("Owner"), vec![Err("unread")], None, 0),
        (scale("alice", deployments), writes("Any"), vec![Err("unread")], None, 0),
        (scale("alice", ("example.com", "widgets")), writes("Owner"), vec![Err("unread")], None, 0),
    ];
    for (request, settings, held, denial, lookups) in rows {
        let host = Host::new(("apps/v1", "Deployment", "web", "shop"), held);
        judged_through(&host, &request, &settings, denial);
        assert_eq!(host.calls(), lookups, "{request}");
    }
}
