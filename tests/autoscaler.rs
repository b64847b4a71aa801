//! HorizontalPodAutoscalers under `writes: Owner`: the trusted horizontal-pod-autoscaler scales
//! what an HPA's `scaleTargetRef` names, so an HPA's write is judged on the HPA and then as the
//! `scale` of its target by the HPA's requester, read through the host (`src/autoscaler.rs`):
//! each row an HPA's CREATE or UPDATE, what the host holds, the verdict and the lookups.

mod common;

use serde_json::{Value, json};

use common::{Host, groups_of, judged_through};

const INSTALLER: &str = "system:serviceaccount:shop:web-installer";
const OTHER: &str = "system:serviceaccount:shop:api-installer";

/// The Deployment `shop/web`, with its labels.
fn deployment(labels: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "namespace": "shop", "uid": "d-1", "labels": labels},
           "spec": {"replicas": 2}})
}

/// An HPA `shop/web-hpa` by `user` scaling `kind` `web`, with `labels`.
fn hpa(operation: &str, user: &str, (api_version, kind): (&str, &str), labels: Value) -> Value {
    let object = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web-hpa", "namespace": "shop", "labels": labels},
        "spec": {"scaleTargetRef": {"apiVersion": api_version, "kind": kind, "name": "web"},
                 "minReplicas": 1, "maxReplicas": 50}});
    let mut request = json!({"uid": "h",
        "kind": {"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"},
        "resource": {"group": "autoscaling", "version": "v2", "resource": "horizontalpodautoscalers"},
        "requestKind": {"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"},
        "requestResource": {"group": "autoscaling", "version": "v2", "resource": "horizontalpodautoscalers"},
        "name": "web-hpa", "namespace": "shop", "operation": operation,
        "userInfo": {"username": user, "groups": groups_of(user)}, "object": object.clone()});
    if operation == "UPDATE" {
        request["oldObject"] = object;
    }
    request
}

#[test]
fn an_hpa_is_judged_as_a_scale_of_its_target_by_its_requester() {
    let settings = |writes: &str| {
        json!({"ownerMarks": [{"label": "appID", "clusterKinds": ["ClusterExtension"]}],
               "identities": [{"owners": ["ClusterExtension.web"], "users": [INSTALLER]},
                              {"owners": ["ClusterExtension.api"], "users": [OTHER]}],
               "writes": writes})
    };
    let owned = deployment(json!({"appID": "ClusterExtension.web"}));
    let deployments = ("apps/v1", "Deployment");
    let none = json!({});
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
        (hpa("CREATE", OTHER, deployments, none.clone()), settings("Owner"), Ok(owned.clone()),
         Some(r#"label appID: owner writes denied for UPDATE of Deployment shop/web (subresource scale), owned by "ClusterExtension.web""#), 1),
        (hpa("UPDATE", OTHER, deployments, none.clone()), settings("Owner"), Ok(owned.clone()),
         Some("label appID: owner writes denied for UPDATE of Deployment shop/web (subresource scale)"), 1),
        (hpa("CREATE", INSTALLER, deployments, none.clone()), settings("Owner"), Ok(owned.clone()), None, 1),
        (hpa("CREATE", OTHER, deployments, none.clone()), settings("Owner"), Ok(deployment(json!({}))), None, 1),
        (hpa("CREATE", OTHER, deployments, none.clone()), settings("Owner"), Err("forbidden"),
         Some("cannot judge the scale of Deployment shop/web under writes: Owner: reading it failed (forbidden)"), 1),
        // the HPA itself is judged first, and its denial needs no lookup
        (hpa("CREATE", OTHER, deployments, json!({"appID": "ClusterExtension.web"})), settings("Owner"), Err("unread"),
         Some("label appID: identity denied for HorizontalPodAutoscaler shop/web-hpa"), 0),
        // never read: `writes: Any` judges no write, and no lookup names a custom resource's kind
        (hpa("CREATE", OTHER, deployments, none.clone()), settings("Any"), Err("unread"), None, 0),
        (hpa("CREATE", OTHER, ("example.com/v1", "Widget"), none), settings("Owner"), Err("unread"), None, 0),
    ];
    for (request, settings, held, denial, lookups) in rows {
        let host = Host::new(("apps/v1", "Deployment", "web", "shop"), vec![held]);
        let message = judged_through(&host, &request, &settings, denial);
        // the HPA's own denial is the HPA's; its target's says which HPA scales it
        let through = " (HorizontalPodAutoscaler shop/web-hpa would scale Deployment shop/web)";
        assert_eq!(
            message.ends_with(through),
            denial.is_some() && lookups > 0,
            "{message}"
        );
        assert_eq!(host.calls(), lookups, "{request}");
    }
}
