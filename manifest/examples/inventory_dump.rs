//! Writes a List of N objects, as `kubectl get <kinds> -A -o json` prints them, for measuring
//! the inventory (`kubectl-single_owner inventory`) on a cluster's worth of objects: under
//! examples/flux's settings, Kustomizations and HelmReleases and what they own, Helm's records
//! and unowned objects.
//!
//! ```console
//! cargo run --profile runner -p single-owner-manifest --example inventory-dump -- 100000 > dump.json
//! ```

use std::io::{BufWriter, Write};

use serde_json::json;

fn main() -> std::io::Result<()> {
    let count: usize = match std::env::args().nth(1).map(|count| count.parse()) {
        Some(Ok(count)) => count,
        _ => {
            eprintln!("usage: inventory-dump COUNT");
            std::process::exit(2);
        }
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    out.write_all(
        br#"{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":["#,
    )?;
    for index in 0..count {
        if index > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut out, &object(index))?;
    }
    out.write_all(b"]}\n")?;
    out.flush()
}

/// The `index`-th object: one of ten shapes, in a namespace of its own every hundred.
fn object(index: usize) -> serde_json::Value {
    let namespace = format!("team-{}", index / 100);
    let name = format!("object-{index}");
    let uid = format!("00000000-0000-4000-8000-{index:012}");
    let kustomization = json!({"kustomize.toolkit.fluxcd.io/name": "apps",
        "kustomize.toolkit.fluxcd.io/namespace": namespace, "app": name});
    let release =
        json!({"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": namespace});
    let metadata = |labels: serde_json::Value, annotations: serde_json::Value| {
        json!({"name": name, "namespace": namespace, "uid": uid, "resourceVersion": "12345",
            "creationTimestamp": "2026-11-20T10:00:00Z", "labels": labels, "annotations": annotations})
    };
    let container = json!({"name": "app", "image": "ghcr.io/example/app:1.4.2",
        "ports": [{"containerPort": 8080, "protocol": "TCP"}],
        "env": (0..12).map(|i| json!({"name": format!("SETTING_{i}"), "value": "x".repeat(24)})).collect::<Vec<_>>(),
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10}});
    match index % 10 {
        0..=3 => json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": metadata(kustomization, json!({"deployment.kubernetes.io/revision": "3"})),
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}}},
            "status": {"replicas": 2, "readyReplicas": 2, "observedGeneration": 3}}),
        4..=5 => json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": metadata(json!({"helm.toolkit.fluxcd.io/name": "web",
                "helm.toolkit.fluxcd.io/namespace": namespace}), release),
            "data": {"settings.yaml": "key: value\n".repeat(60)}}),
        6 => json!({"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": format!("sh.helm.release.v1.web.v{index}"), "namespace": namespace,
                "uid": uid, "labels": {"name": "web", "owner": "helm", "status": "deployed",
                "version": index.to_string()}},
            "data": {"release": "H4sIAAAAAAAA".repeat(400)}}),
        7 => json!({"apiVersion": "v1", "kind": "Service",
            "metadata": metadata(json!({"app": name}), json!({})),
            "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 8080}]}}),
        _ => json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": metadata(kustomization, json!({}))}),
    }
}
