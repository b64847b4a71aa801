//! Leftovers (`src/leftover.rs`): each row a request that moves a stored owner, what the host
//! holds where that owner lives, what the policy decides, what the denial says it found, and the
//! lookups made. The rows mirror the module's table.

mod common;

use std::cell::RefCell;

use serde_json::{Value, json};
use single_owner_policy::policy::{Payload, Verdict};
use single_owner_policy::{ListLookup, Lookup, OwnerFinding, Parents};

use common::summary;

const OWNER_NAME: &str = "olm.operatorframework.io/owner-name";
const OWNER_KIND: &str = "olm.operatorframework.io/owner-kind";
const OPERATOR_CONTROLLER: &str =
    "system:serviceaccount:olmv1-system:operator-controller-controller-manager";
const RELEASE: &str = "meta.helm.sh/release-name";
const RELEASE_NAMESPACE: &str = "meta.helm.sh/release-namespace";

/// A host that answers every lookup with one thing, and records what it was asked.
struct Host {
    answer: Result<Value, &'static str>,
    asked: RefCell<Vec<String>>,
}

impl Host {
    fn new(answer: Result<Value, &'static str>) -> Host {
        Host {
            answer,
            asked: RefCell::new(Vec::new()),
        }
    }

    fn answer(&self) -> Result<String, String> {
        (self.answer.clone())
            .map(|value| value.to_string())
            .map_err(str::to_owned)
    }
}

impl Parents for Host {
    fn get(&self, lookup: &Lookup<'_>) -> Result<String, String> {
        self.asked.borrow_mut().push(format!(
            "get {} {} {}/{} past the cache: {}",
            lookup.api_version,
            lookup.kind,
            lookup.namespace.unwrap_or(""),
            lookup.name,
            lookup.disable_cache
        ));
        self.answer()
    }

    fn list(&self, lookup: &ListLookup<'_>) -> Result<String, String> {
        self.asked.borrow_mut().push(format!(
            "list {} {} in {} {} {:?}",
            lookup.api_version,
            lookup.kind,
            lookup.namespace,
            lookup.label_selector,
            lookup.field_masks
        ));
        self.answer()
    }
}

/// What a row expects: allowed, or denied with these summaries and what the owner's lookup
/// found.
#[derive(Debug, PartialEq)]
enum Outcome {
    Allowed,
    Denied(Vec<String>, Option<OwnerFinding>),
}

fn denied(summaries: &[&str], found: Option<OwnerFinding>) -> Outcome {
    Outcome::Denied(summaries.iter().map(|s| s.to_string()).collect(), found)
}

/// The decision, and what the host was asked.
fn decide(request: &Value, settings: &Value, host: &Host) -> (Outcome, Vec<String>) {
    let payload = serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
    let parsed = Payload::parse(&payload).unwrap();
    let outcome = match parsed.verdict(host) {
        Verdict::Allow => Outcome::Allowed,
        Verdict::Deny(violations) => Outcome::Denied(
            violations.iter().map(summary).collect(),
            (violations[0].owner.as_ref()).map(|found| found.finding.clone()),
        ),
        other => panic!("unexpected verdict {other:?}"),
    };
    (outcome, host.asked.take())
}

/// An UPDATE of `kind` `name` (in `namespace`, or cluster-scoped) by `user`, its labels and
/// annotations going from `old` to `new`.
fn update(kind: (&str, &str), namespace: &str, user: &str, old: Value, new: Value) -> Value {
    let (group, kind) = kind;
    let side = |marks: &Value| {
        let mut metadata =
            json!({"name": "x", "labels": marks["labels"], "annotations": marks["annotations"]});
        if !namespace.is_empty() {
            metadata["namespace"] = json!(namespace);
        }
        json!({"kind": kind, "metadata": metadata})
    };
    let mut groups = vec![json!("system:authenticated")];
    if let Some(account) = user.strip_prefix("system:serviceaccount:") {
        let account_namespace = account.split(':').next().unwrap();
        groups.insert(
            0,
            json!(format!("system:serviceaccounts:{account_namespace}")),
        );
        groups.insert(0, json!("system:serviceaccounts"));
    }
    let resource = format!("{}s", kind.to_lowercase());
    json!({"uid": "1", "kind": {"group": group, "version": "v1", "kind": kind},
        "resource": {"group": group, "version": "v1", "resource": resource},
        "requestResource": {"group": group, "version": "v1", "resource": resource},
        "name": "x", "namespace": namespace, "operation": "UPDATE",
        "userInfo": {"username": user, "groups": groups},
        "object": side(&new), "oldObject": side(&old)})
}

/// A row: its name, `adoption`, the request, what the host holds, the outcome, and whether the
/// owner was read.
type Row<'a> = (
    &'a str,
    &'a str,
    Value,
    Result<Value, &'a str>,
    Outcome,
    bool,
);

/// OLM v1 (examples/olm-v1): a CRD an uninstalled ClusterExtension left, taken by another.
#[test]
fn a_cluster_extensions_leftover() {
    let settings = |adoption: &str| {
        json!({"ownerMarks": [{"label": OWNER_NAME, "kindKey": OWNER_KIND,
            "clusterKinds": ["ClusterExtension"],
            "ownerLookup": {"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension"}}],
        "identities": [{"owners": ["ClusterExtension.*"], "users": [OPERATOR_CONTROLLER]},
                       {"owners": ["ClusterExtension.new"], "users": ["new-installer"]}],
        "adoption": adoption})
    };
    let of = |name: &str| match name {
        "" => json!({"labels": {}, "annotations": {}}),
        name => {
            json!({"labels": {OWNER_NAME: name, OWNER_KIND: "ClusterExtension"}, "annotations": {}})
        }
    };
    let crd = ("apiextensions.k8s.io", "CustomResourceDefinition");
    let by = |user: &str, old: &str, new: &str| update(crd, "", user, of(old), of(new));
    let taken = by(OPERATOR_CONTROLLER, "old", "new");
    let extension = |deleting: bool| {
        let mut metadata = json!({"name": "old", "uid": "e-1"});
        if deleting {
            metadata["deletionTimestamp"] = json!("2026-12-03T08:00:00Z");
        }
        Ok(
            json!({"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension", "metadata": metadata}),
        )
    };
    let not_found = Err(
        "Callback evaluation failure: Cannot find olm.operatorframework.io/v1/ClusterExtension named 'old' inside of namespace 'None'",
    );
    let refusal = "clusterextensions.olm.operatorframework.io \"old\" is forbidden";
    let asked = vec![
        "get olm.operatorframework.io/v1 ClusterExtension /old past the cache: true".to_owned(),
    ];
    let label = "label olm.operatorframework.io/owner-name";
    let change =
        format!("{label}: owner change from \"ClusterExtension.old\" to \"ClusterExtension.new\"");
    let identity_set =
        format!("{label}: identity from \"ClusterExtension.old\" to \"ClusterExtension.new\"");
    let released = format!("{label}: identity from \"ClusterExtension.old\" to none");
    let adoption =
        format!("{label}: adoption from \"ClusterExtension.old\" to \"ClusterExtension.new\"");
    #[rustfmt::skip]
    let rows: Vec<Row> = vec![
        ("gone: taken as unowned",                "Allow", taken.clone(), not_found.clone(), Outcome::Allowed, true),
        ("there: one owner",                      "Allow", taken.clone(), extension(false), denied(&[&change], Some(OwnerFinding::Exists)), true),
        ("being deleted: there until it is gone", "Allow", taken.clone(), extension(true), denied(&[&change], Some(OwnerFinding::Deleting)), true),
        ("unreadable: there",                     "Allow", taken.clone(), Err(refusal),
            denied(&[&change], Some(OwnerFinding::Unreadable(refusal.to_owned()))), true),
        ("gone, taken by one not acting for B",   "Allow", by("alice", "old", "new"), not_found.clone(),
            denied(&[&identity_set], Some(OwnerFinding::NotFound)), true),
        ("gone, adoption: Deny",                  "Deny", taken.clone(), not_found.clone(), denied(&[&adoption], Some(OwnerFinding::NotFound)), true),
        ("gone: released by whoever may adopt",   "Allow", by("new-installer", "old", ""), not_found.clone(), Outcome::Allowed, true),
        ("there: not released by another owner's", "Allow", by("new-installer", "old", ""), extension(false), denied(&[&released], Some(OwnerFinding::Exists)), true),
        ("gone: not released by anyone else",     "Allow", by("alice", "old", ""), not_found.clone(),
            denied(&[&released], Some(OwnerFinding::NotFound)), true),
        ("allowed without it: nothing read",      "Allow", by(OPERATOR_CONTROLLER, "old", "old"), not_found.clone(), Outcome::Allowed, false),
    ];
    for (name, adoption, request, held, expected, read) in rows {
        let host = Host::new(held);
        let lookups = if read { asked.clone() } else { Vec::new() };
        assert_eq!(
            decide(&request, &settings(adoption), &host),
            (expected, lookups),
            "{name}"
        );
    }
}

/// Helm releases (examples/helm): a Deployment kept by an uninstalled release, taken by its
/// successor once Helm keeps no live record of it.
#[test]
fn a_helm_releases_leftover() {
    let settings = json!({"ownerMarks": [{"annotation": RELEASE, "namespaceKey": RELEASE_NAMESPACE,
        "ownerLookup": {"helmRecords": "Secret"}}]});
    let release = |name: &str| json!({"labels": {}, "annotations": {RELEASE: name, RELEASE_NAMESPACE: "shop"}});
    let taken = update(
        ("apps", "Deployment"),
        "shop",
        "alice",
        release("web"),
        release("web-v2"),
    );
    let records = |records: &[(&str, &str)]| {
        let items: Vec<Value> = (records.iter())
            .map(|(version, status)| {
                json!({"metadata": {"name": format!("sh.helm.release.v1.web.v{version}"),
                    "labels": {"name": "web", "owner": "helm", "status": status, "version": version}}})
            })
            .collect();
        Ok(json!({"apiVersion": "v1", "kind": "SecretList", "metadata": {}, "items": items}))
    };
    let asked =
        vec![r#"list v1 Secret in shop owner=helm,name=web ["metadata.labels"]"#.to_owned()];
    let change =
        "annotation meta.helm.sh/release-name: owner change from \"shop/web\" to \"shop/web-v2\"";
    let refusal = "Policy has not been granted access to Kubernetes v1/Secret resources. The violation has been reported.";
    #[rustfmt::skip]
    let rows: Vec<(&str, Result<Value, &str>, Outcome)> = vec![
        ("no record: gone",                         records(&[]), Outcome::Allowed),
        ("the last record uninstalled: gone",       records(&[("9", "superseded"), ("10", "uninstalled")]), Outcome::Allowed),
        ("an older record uninstalled: there",      records(&[("2", "uninstalled"), ("10", "deployed")]), denied(&[change], Some(OwnerFinding::Exists))),
        ("being uninstalled: there",                records(&[("3", "uninstalling")]), denied(&[change], Some(OwnerFinding::Exists))),
        ("the records unreadable: there",           Err(refusal),
            denied(&[change], Some(OwnerFinding::Unreadable(refusal.to_owned())))),
    ];
    for (name, held, expected) in rows {
        let host = Host::new(held);
        assert_eq!(
            decide(&taken, &settings, &host),
            (expected, asked.clone()),
            "{name}"
        );
    }
}

/// Where each shape of owner is read: an Argo CD app in Argo CD's namespace or its own, a Flux
/// Kustomization in its namespace; a kind the lookup is not for, and a mark without one, are
/// never read.
#[test]
fn each_owner_is_read_where_it_lives() {
    const TRACKING: &str = "argocd.argoproj.io/tracking-id";
    const FLUX_NAME: &str = "kustomize.toolkit.fluxcd.io/name";
    const FLUX_NAMESPACE: &str = "kustomize.toolkit.fluxcd.io/namespace";
    let argo = json!({"ownerMarks": [{"annotation": TRACKING, "format": "ArgoCDTrackingID",
        "ownerLookup": {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "namespace": "argocd"}}]});
    let flux = json!({"ownerMarks": [{"label": FLUX_NAME, "namespaceKey": FLUX_NAMESPACE,
        "ownerLookup": {"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization"}}]});
    let kinds = json!({"ownerMarks": [{"label": "appID", "clusterKinds": ["ClusterExtension"],
        "namespacedKinds": ["Extension"],
        "ownerLookup": {"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension"}}]});
    let plain = json!({"ownerMarks": [{"label": "appID"}]});
    let tracked = |app: &str| json!({"labels": {}, "annotations": {TRACKING: format!("{app}:/ConfigMap:shop/x")}});
    let config_map = ("", "ConfigMap");
    let id = |value: &str| json!({"labels": {"appID": value}, "annotations": {}});
    let kustomization = |name: &str| json!({"labels": {FLUX_NAME: name, FLUX_NAMESPACE: "team-a"}, "annotations": {}});
    let by = |old, new| update(config_map, "shop", "alice", old, new);
    #[rustfmt::skip]
    let rows: Vec<(&Value, Value, Vec<&str>)> = vec![
        (&argo, by(tracked("guestbook"), tracked("other")), vec!["get argoproj.io/v1alpha1 Application argocd/guestbook past the cache: true"]),
        (&argo, by(tracked("team_guestbook"), tracked("other")), vec!["get argoproj.io/v1alpha1 Application team/guestbook past the cache: true"]),
        (&flux, by(kustomization("apps"), kustomization("web")), vec!["get kustomize.toolkit.fluxcd.io/v1 Kustomization team-a/apps past the cache: true"]),
        (&kinds, by(id("ClusterExtension.a"), id("ClusterExtension.b")), vec!["get olm.operatorframework.io/v1 ClusterExtension /a past the cache: true"]),
        (&kinds, by(id("Extension.shop.a"), id("Extension.shop.b")), vec![]),
        (&plain, by(id("a"), id("b")), vec![]),
    ];
    for (settings, request, expected) in rows {
        let host = Host::new(Ok(json!({"metadata": {"name": "there"}})));
        let (_, asked) = decide(&request, settings, &host);
        assert_eq!(asked, expected, "{settings}");
    }
}
