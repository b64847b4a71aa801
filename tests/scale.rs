//! `scale` writes under `writes: Owner` are judged from their target, read through the host
//! (`src/scale.rs`): each row a `scale` UPDATE, what the host holds, the verdict and the number
//! of lookups.

use std::cell::Cell;

use serde_json::{Value, json};
use single_owner_policy::policy;
use single_owner_policy::{Lookup, Parents};

/// A host holding one object, or the error its lookup gets; it counts the lookups.
struct Host {
    held: Result<Value, &'static str>,
    calls: Cell<usize>,
}

impl Parents for Host {
    fn get(&self, lookup: &Lookup<'_>) -> Result<String, String> {
        self.calls.set(self.calls.get() + 1);
        assert_eq!(
            (
                lookup.api_version,
                lookup.kind,
                lookup.name,
                lookup.namespace
            ),
            ("apps/v1", "Deployment", "web", Some("shop"))
        );
        self.held
            .clone()
            .map(|held| held.to_string())
            .map_err(str::to_owned)
    }
}

const INSTALLER: &str = "system:serviceaccount:shop:web-installer";
const HPA: &str = "system:serviceaccount:kube-system:horizontal-pod-autoscaler";

/// A Deployment `shop/web`, its own labels and its pod template's.
fn deployment(labels: Value, template: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "namespace": "shop", "uid": "d-1", "labels": labels},
           "spec": {"replicas": 2, "template": {"metadata": {"labels": template}}}})
}

/// A `scale` UPDATE of `group/resource` `shop/web` by `user`, as the API server sends it: both
/// sides `Scale`s, which carry none of the target's labels.
fn scale(user: &str, (group, resource): (&str, &str)) -> Value {
    let mut groups = vec!["system:authenticated".to_owned()];
    if let Some(account) = user.strip_prefix("system:serviceaccount:") {
        let namespace = account.split(':').next().unwrap();
        groups.extend([
            "system:serviceaccounts".to_owned(),
            format!("system:serviceaccounts:{namespace}"),
        ]);
    }
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
           "userInfo": {"username": user, "groups": groups},
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
    type Row<'a> = (Value, Value, Result<Value, &'a str>, Option<&'a str>, usize);
    #[rustfmt::skip]
    let rows: Vec<Row> = vec![
        (scale("alice", deployments), writes("Owner"), Ok(owned.clone()),
         Some(r#"label appID: owner writes denied for UPDATE of Deployment shop/web (subresource scale), owned by "ClusterExtension.web""#), 1),
        (scale("alice", deployments), writes("Owner"), Ok(template_only),
         Some("label appID in spec.template: owner writes denied for UPDATE of Deployment shop/web (subresource scale)"), 1),
        (scale(INSTALLER, deployments), writes("Owner"), Ok(owned.clone()), None, 1),
        (scale("alice", deployments), writes("Owner"), Ok(deployment(json!({}), json!({}))), None, 1),
        (scale("alice", deployments), writes("Owner"), Err("forbidden"),
         Some("cannot judge the scale of Deployment shop/web under writes: Owner: reading it failed (forbidden); grant policy-server's service account get on deployments"), 1),
        // never read: the autoscaler is trusted, `writes: Any` judges no write, and no lookup
        // names a custom resource's kind
        (scale(HPA, deployments), writes("Owner"), Err("unread"), None, 0),
        (scale("alice", deployments), writes("Any"), Err("unread"), None, 0),
        (scale("alice", ("example.com", "widgets")), writes("Owner"), Err("unread"), None, 0),
    ];
    for (request, settings, held, denial, lookups) in rows {
        let host = Host {
            held,
            calls: Cell::new(0),
        };
        let payload =
            serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
        let response = policy::validate_with(&payload, &host);
        let message = response.message.clone().unwrap_or_default();
        match denial {
            None => assert!(response.accepted, "{request}: {message}"),
            Some(start) => {
                assert!(!response.accepted, "{request}");
                assert!(message.starts_with(start), "{message}");
            }
        }
        assert_eq!(host.calls.get(), lookups, "{request}");
    }
}
