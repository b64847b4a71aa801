//! The generated settings and requests of the proof of no bypass (`tests/no_bypass.rs`, which
//! includes this file by its path; no other test uses it): the owner marks, identities and
//! trusted writers settings are drawn from, the pools of keys, values and requesters, the kinds
//! with their templates, and the strategies that draw settings ([`arb_settings`]) and requests
//! ([`arb_request`]), written out as the API server sends them.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{Value, json};
use single_owner_policy::Settings;
use single_owner_policy::control_plane::{
    self, CONTROLLER_MANAGER, KUBE_SYSTEM_GROUP, KUBE_SYSTEM_PREFIX, NODE_PREFIX, NODES_GROUP,
    SCHEDULER, Writer,
};

/// Owner marks to draw settings from: labels and annotations of every shape (a key is guarded
/// once, as a label or an annotation; objects carry each key in the other place too), and a pair
/// linked to Helm's by `sameOwnerAs`.
pub fn marks() -> [Value; 8] {
    [
        json!({"label": "appID", "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}),
        json!({"annotation": CAMEL}),
        json!({"label": OLM_NAME, "kindKey": OLM_KIND,
               "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]}),
        json!({"label": "example.com/owner", "clusterKinds": ["Team"]}),
        json!({"annotation": HELM_NAME, "namespaceKey": HELM_NAMESPACE}),
        json!({"label": KUSTOMIZE_NAME, "namespaceKey": KUSTOMIZE_NAMESPACE}),
        json!({"annotation": TRACKING, "format": "ArgoCDTrackingID"}),
        json!({"label": FLUX_NAME, "namespaceKey": FLUX_NAMESPACE, "sameOwnerAs": [HELM_NAME]}),
    ]
}

/// The keys of the marks above.
const CAMEL: &str = "camel.apache.org/operator.id";
const OLM_NAME: &str = "olm.operatorframework.io/owner-name";
const OLM_KIND: &str = "olm.operatorframework.io/owner-kind";
const HELM_NAME: &str = "meta.helm.sh/release-name";
const HELM_NAMESPACE: &str = "meta.helm.sh/release-namespace";
const KUSTOMIZE_NAME: &str = "kustomize.toolkit.fluxcd.io/name";
const KUSTOMIZE_NAMESPACE: &str = "kustomize.toolkit.fluxcd.io/namespace";
const FLUX_NAME: &str = "helm.toolkit.fluxcd.io/name";
const FLUX_NAMESPACE: &str = "helm.toolkit.fluxcd.io/namespace";
const TRACKING: &str = "argocd.argoproj.io/tracking-id";
/// The offer annotations the settings choose from.
pub const OFFERS: [&str; 2] = ["single-owner-policy.io/offer", "example.com/hand-over"];

pub fn identities() -> [Value; 11] {
    [
        json!({"owners": ["ClusterExtension.*"], "users": ["system:serviceaccount:olm:*"]}),
        json!({"owners": ["ClusterExtension.${name}"], "users": ["system:serviceaccount:helm-releases:*"]}),
        json!({"owners": ["operator-1"], "users": ["op-1"], "groups": ["camel:*"]}),
        json!({"owners": ["Extension.${namespace}.*"], "groups": ["system:serviceaccounts:*"]}),
        json!({"owners": ["Team.a"], "users": ["*:installer"]}),
        json!({"owners": ["ClusterExtension.a"], "users": ["alice"], "access": "Write"}),
        json!({"owners": ["${namespace}/*"], "users": ["system:serviceaccount:*:flux-reconciler"]}),
        json!({"owners": ["guestbook", "shop_guestbook"], "groups": ["argocd:*"]}),
        json!({"owners": ["shop/web"], "users": ["root"], "access": "Write"}),
        // Grants as narrow as a write, and a restore (src/grant.rs).
        json!({"owners": ["*"], "users": ["alice"],
               "changes": ["replicas", {"annotations": ["example.com/*"]}, {"podTemplateEnv": ["STAKATER_*"]}, "delete",
                           {"fields": ["status", "operation"]}]}),
        json!({"owners": ["*"], "users": ["root"], "access": "Restore"}),
    ]
}

/// Writers a distribution adds: exact names (one named like a service account of kube-system),
/// patterns with one `*` (whose prefix and suffix could overlap) and with two.
pub fn trusted_writers() -> [Value; 3] {
    [
        json!({"users": ["system:k3s-controller", "system:serviceaccount:kube-system:cloud-node-manager"],
               "resources": ["*"], "operations": ["DELETE"]}),
        json!({"users": ["system:serviceaccount:openshift-*:service-ca"],
               "resources": ["configmaps", "secrets", "customresourcedefinitions.apiextensions.k8s.io",
                             "integrations.camel.apache.org/status"],
               "operations": ["CREATE", "UPDATE"]}),
        json!({"users": ["edge*edge", "ops-*-bot-*"], "resources": ["deployments.apps", "pods", "namespaces/finalize"],
               "operations": ["UPDATE", "DELETE"]}),
    ]
}

/// User names for the writers above, and names that look like them.
const WRITER_USERS: [&str; 12] = [
    "system:k3s-controller",
    "system:k3s-controllers",
    "system:serviceaccount:kube-system:cloud-node-manager",
    "system:serviceaccount:openshift-service-ca:service-ca",
    "system:serviceaccount:openshift-:service-ca",
    "system:serviceaccount:openshift:service-ca",
    "edgeedge",
    "edgedge",
    "edge",
    "edge-x-edge",
    "ops-a-bot-b",
    "ops-bot-",
];

/// The label keys objects carry: every mark's keys, Helm's annotation key as a label, an app's
/// own label.
const LABEL_KEYS: [&str; 12] = [
    "appID",
    CAMEL,
    OLM_NAME,
    OLM_KIND,
    "example.com/owner",
    KUSTOMIZE_NAME,
    KUSTOMIZE_NAMESPACE,
    FLUX_NAME,
    FLUX_NAMESPACE,
    HELM_NAME,
    "app.kubernetes.io/name",
    "app.kubernetes.io/instance",
];

/// The annotation keys objects carry: the offers, every annotation mark's keys, a label mark's
/// key as an annotation, and kubectl's.
const ANNOTATION_KEYS: [&str; 9] = [
    OFFERS[0],
    OFFERS[1],
    CAMEL,
    HELM_NAME,
    HELM_NAMESPACE,
    TRACKING,
    "appID",
    KUSTOMIZE_NAME,
    "kubectl.kubernetes.io/last-applied-configuration",
];

/// Values of owner ids with a kind (and of anything else).
const VALUES: [&str; 13] = [
    "ClusterExtension.a",
    "ClusterExtension.b",
    "Extension.team-a.x",
    "Extension.team-b.x",
    "Extension.team-a",
    "a",
    "team-a.x",
    "operator-1",
    "operator-2",
    "Team.a",
    "ClusterExtension",
    "Bogus.x",
    "",
];

/// Values of the names and namespaces of pairs, and of opaque ids.
const NAMES: [&str; 8] = [
    "web",
    "web-v2",
    "shop",
    "team-a",
    "flux-system",
    "a/b",
    "operator-1",
    "",
];

/// Argo CD tracking ids. `@self:<app>` stands for the id of `<app>` naming the request's object,
/// `@elsewhere:<app>` for one naming another object of the same kind and namespace,
/// `@moved:<app>` for one naming the same kind and name in another namespace (the object itself,
/// when it is cluster-scoped): [`resolve_tracking_ids`] writes them out.
const TRACKING_IDS: [&str; 11] = [
    "@self:guestbook",
    "@self:shop_guestbook",
    "@self:other",
    "@self:",
    "@elsewhere:guestbook",
    "@moved:guestbook",
    "guestbook:apps/Deployment:team-a/x",
    "guestbook",
    "guestbook:apps/Deployment",
    "a:b:c/d:e/f",
    "",
];

/// Offers, made under each mark, to the same mark or to another, and some that do not parse.
const OFFER_VALUES: [&str; 12] = [
    "appID: ClusterExtension.a -> ClusterExtension.b",
    "appID: Extension.team-a.x -> Team.a",
    "olm.operatorframework.io/owner-name: ClusterExtension.a -> ClusterExtension.b",
    "camel.apache.org/operator.id: operator-1 -> operator-2",
    "meta.helm.sh/release-name: shop/web -> shop/web-v2",
    "meta.helm.sh/release-name: shop/web -> argocd.argoproj.io/tracking-id: guestbook",
    "argocd.argoproj.io/tracking-id: guestbook -> other",
    "argocd.argoproj.io/tracking-id: guestbook -> team-a/other",
    "kustomize.toolkit.fluxcd.io/name: team-a/web -> helm.toolkit.fluxcd.io/name: team-a/web",
    "example.com/owner: Team.a -> Team.b",
    "ClusterExtension.b",
    "",
];

/// The values a key is drawn from: those of its kind of value, and a few of any kind.
fn values_of(key: &str) -> Vec<&'static str> {
    let own: &[&str] = match key {
        TRACKING => &TRACKING_IDS,
        key if OFFERS.contains(&key) => &OFFER_VALUES,
        CAMEL | HELM_NAME | HELM_NAMESPACE | KUSTOMIZE_NAME | KUSTOMIZE_NAMESPACE | FLUX_NAME
        | FLUX_NAMESPACE => &NAMES,
        _ => &VALUES,
    };
    own.iter()
        .copied()
        .chain(["ClusterExtension.a", "web", ""])
        .collect()
}

/// People, installers and operators.
const USERS: [&str; 9] = [
    "alice",
    "root",
    "op-1",
    "system:serviceaccount:olm:controller",
    "system:serviceaccount:helm-releases:a",
    "system:serviceaccount:team-a:installer",
    "system:serviceaccount:team-a:flux-reconciler",
    "installer",
    "",
];

/// Users of the control plane that are not a controller's service account, and look-alikes.
const CONTROL_PLANE_USERS: [&str; 10] = [
    CONTROLLER_MANAGER,
    SCHEDULER,
    "system:kube-controller-manager-x",
    "xsystem:kube-scheduler",
    "system:node:n1",
    "system:node:node-2",
    "system:node:",
    "system:nodes:n1",
    "system:node",
    "system:serviceaccount:kube-system",
];

const GROUPS: [&str; 7] = [
    "admins",
    "camel:ops",
    "argocd:apps",
    "system:serviceaccounts:team-a",
    "system:serviceaccounts",
    "system:authenticated",
    "system:serviceaccounts:kube-public",
];

/// Each controller's service account in kube-system, as the table names them.
fn controller_accounts() -> Vec<String> {
    let mut accounts: Vec<String> = control_plane::rules(&[])
        .filter_map(|trust| match trust.writer {
            Writer::KubeSystemServiceAccount(account) => Some(account.to_owned()),
            _ => None,
        })
        .collect();
    accounts.dedup();
    accounts
}

/// The requester: a user name and groups. Controllers' service accounts, named exactly or like
/// them; the other users of the control plane; people and installers; the settings' writers.
/// The group that makes a service account of kube-system or a kubelet is drawn apart, so that
/// each comes with and without it.
fn arb_requester() -> impl Strategy<Value = (String, Vec<String>)> {
    let accounts = controller_accounts();
    let controllers: Vec<String> = accounts
        .iter()
        .map(|account| format!("{KUBE_SYSTEM_PREFIX}{account}"))
        .collect();
    let lookalikes: Vec<String> = accounts
        .iter()
        .flat_map(|account| {
            [
                format!("system:serviceaccount:kube-public:{account}"),
                format!("{KUBE_SYSTEM_PREFIX}{account}-x"),
                format!("{KUBE_SYSTEM_PREFIX}x{account}"),
                format!("system:serviceaccount:kube-system{account}"),
            ]
        })
        .collect();
    let owned = |list: &[&str]| {
        list.iter()
            .map(|user| (*user).to_owned())
            .collect::<Vec<_>>()
    };
    let user = prop_oneof![
        2 => proptest::sample::select(owned(&USERS)),
        3 => proptest::sample::select(controllers),
        2 => proptest::sample::select(lookalikes),
        2 => proptest::sample::select(owned(&CONTROL_PLANE_USERS)),
        1 => proptest::sample::select(owned(&WRITER_USERS)),
    ];
    let groups = (
        proptest::sample::subsequence(GROUPS.to_vec(), 0..=2),
        proptest::sample::select(vec![None, None, Some(KUBE_SYSTEM_GROUP), Some(NODES_GROUP)]),
    );
    (user, groups).prop_map(|(user, (groups, extra))| {
        let groups = groups.into_iter().chain(extra).map(str::to_owned).collect();
        (user, groups)
    })
}

/// Settings: one to three owner marks (a `sameOwnerAs` naming a mark left out is dropped),
/// permissions, identities and the settings that need them, exemptions, the offer annotation
/// and trusted writers; identities that do not fit the marks are left out (and without
/// identities, `writes: Owner` and `stamp`).
pub fn arb_settings() -> impl Strategy<Value = (Settings, Value)> {
    (
        proptest::sample::subsequence(marks().to_vec(), 1..=3).prop_shuffle(),
        (
            any::<(bool, bool)>(),
            proptest::bool::weighted(0.7),
            any::<bool>(),
        ),
        proptest::sample::subsequence(identities().to_vec(), 0..=2),
        proptest::sample::subsequence(vec!["root", "op-1"], 0..=2),
        proptest::sample::subsequence(vec!["admins"], 0..=1),
        proptest::sample::select(OFFERS.to_vec()),
        (
            proptest::sample::subsequence(trusted_writers().to_vec(), 0..=2),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                mut marks,
                ((adoption, orphaning), owner, stamp),
                identities,
                users,
                groups,
                offer,
                (writers, follows),
            )| {
                let keys: Vec<Value> = marks
                    .iter()
                    .filter_map(|mark| mark.get("label").or_else(|| mark.get("annotation")))
                    .cloned()
                    .collect();
                for mark in &mut marks {
                    if let Some(same) = mark.get_mut("sameOwnerAs") {
                        same.as_array_mut()
                            .unwrap()
                            .retain(|key| keys.contains(key));
                    }
                }
                let permission = |allow: bool| if allow { "Allow" } else { "Deny" };
                let mut settings = json!({
                    "ownerMarks": marks, "adoption": permission(adoption),
                    "orphaning": permission(orphaning),
                    "exemptions": {"users": users, "groups": groups},
                    "identities": identities, "offerAnnotation": offer,
                    "writes": if owner { "Owner" } else { "Any" }, "stamp": stamp,
                    "trustedWriters": writers,
                });
                // ReplicaSets followed: the children of `arb_sides` follow theirs.
                if follows {
                    settings["parentKinds"] =
                        json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet"}]);
                }
                let valid = |settings: &Value| {
                    Settings::from_json(settings.to_string().as_bytes())
                        .and_then(|parsed| parsed.validate().map(|()| parsed))
                };
                // Identities that name no owner of these marks are left out, one at a time.
                let all = settings["identities"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let mut choices = vec![all.clone()];
                choices.extend(all.iter().map(|identity| vec![identity.clone()]));
                for identities in choices {
                    settings["identities"] = json!(identities);
                    if let Ok(parsed) = valid(&settings) {
                        return (parsed, settings);
                    }
                }
                settings["identities"] = json!([]);
                settings["writes"] = json!("Any");
                settings["stamp"] = json!(false);
                let parsed = valid(&settings).unwrap_or_else(|error| panic!("{settings}: {error}"));
                (parsed, settings)
            },
        )
}

/// Up to three keys of `keys`, each with a value drawn from its own pool ([`values_of`]).
fn arb_map(
    keys: &'static [&'static str],
) -> impl Strategy<Value = BTreeMap<&'static str, &'static str>> {
    proptest::collection::vec(
        (
            proptest::sample::select(keys.to_vec()),
            any::<proptest::sample::Index>(),
        ),
        0..=3,
    )
    .prop_map(|pairs| {
        pairs
            .into_iter()
            .map(|(key, index)| {
                let values = values_of(key);
                (key, values[index.index(values.len())])
            })
            .collect()
    })
}

/// An object's metadata: none, empty, or labels and annotations drawn from the pools.
fn arb_metadata() -> impl Strategy<Value = Value> {
    prop_oneof![
        1 => Just(Value::Null),
        1 => Just(json!({})),
        8 => (proptest::option::of(arb_map(&LABEL_KEYS)), proptest::option::of(arb_map(&ANNOTATION_KEYS)))
            .prop_map(|(labels, annotations)| {
                let mut metadata = json!({"name": "x"});
                if let Some(labels) = labels {
                    metadata["labels"] = json!(labels);
                }
                if let Some(annotations) = annotations {
                    metadata["annotations"] = json!(annotations);
                }
                json!({"metadata": metadata})
            }),
    ]
}

/// Tracking ids before and after, changing only the object they name: between the object
/// itself, another object, and another namespace.
const OBJECT_PART_CHANGES: [(&str, &str); 5] = [
    ("@self:guestbook", "@elsewhere:guestbook"),
    ("@elsewhere:guestbook", "@self:guestbook"),
    ("@self:guestbook", "@moved:guestbook"),
    ("@moved:guestbook", "@self:guestbook"),
    ("@elsewhere:guestbook", "@moved:guestbook"),
];

/// Tracking ids before and after, changing only the app, or the form: an id that does not
/// parse, its app's the same text, becomes one that does.
const APP_CHANGES: [(&str, &str); 5] = [
    ("@self:guestbook", "@self:other"),
    ("@self:guestbook", "@self:shop_guestbook"),
    ("@self:guestbook", "@self:"),
    ("guestbook", "@self:guestbook"),
    ("@elsewhere:guestbook", "@elsewhere:other"),
];

/// The new object from the stored one: the same, a label or annotation set or removed, a
/// tracking id that changes only its object part or only its app, another object altogether,
/// a finalizer or an owner reference given to it, or a child of a workload relabelled.
fn arb_sides() -> impl Strategy<Value = (Value, Value)> {
    (
        arb_metadata(),
        arb_metadata(),
        proptest::sample::select(vec![
            0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8, 9, 9,
        ]),
        proptest::sample::select(LABEL_KEYS.to_vec()),
        proptest::sample::select(ANNOTATION_KEYS.to_vec()),
        any::<proptest::sample::Index>(),
        proptest::bool::weighted(0.8),
        proptest::sample::select(OBJECT_PART_CHANGES.to_vec()),
        proptest::sample::select(APP_CHANGES.to_vec()),
    )
        .prop_map(
            |(old, other, mode, label, annotation, index, set, object_part, app)| {
                let mut old = old;
                let mut new = old.clone();
                // Sets `key` of the map `map` to `value`, or removes it.
                let edit = |side: &mut Value, map: &str, key: &str, value: Option<&str>| {
                    if side.get("metadata").is_none_or(Value::is_null) {
                        side["metadata"] = json!({});
                    }
                    let metadata = &mut side["metadata"];
                    if metadata.get(map).is_none() {
                        metadata[map] = json!({});
                    }
                    match value {
                        Some(value) => metadata[map][key] = json!(value),
                        None => {
                            metadata[map].as_object_mut().unwrap().remove(key);
                        }
                    }
                };
                let value = |key: &str| {
                    let values = values_of(key);
                    set.then(|| values[index.index(values.len())])
                };
                match mode {
                    0 => {}
                    1 => edit(&mut new, "labels", label, value(label)),
                    2 => edit(&mut new, "annotations", annotation, value(annotation)),
                    3 | 4 => {
                        let (before, after) = if mode == 3 { object_part } else { app };
                        edit(&mut old, "annotations", TRACKING, Some(before));
                        new = old.clone();
                        edit(&mut new, "annotations", TRACKING, Some(after));
                    }
                    5 => new = other,
                    // a child of a workload, relabelled (8): judged by its controllers' owner;
                    // or pointed at one (9), keeping its marks
                    8 | 9 => {
                        let sides = match mode {
                            8 => vec![&mut old, &mut new],
                            _ => vec![&mut new],
                        };
                        for side in sides {
                            if side.get("metadata").is_none_or(Value::is_null) {
                                side["metadata"] = json!({});
                            }
                            side["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1",
                                "kind": "ReplicaSet", "name": "web-7d9c", "controller": true,
                                "uid": "0f9e8d7c-6b5a-4c3d-2e1f-000000000001"}]);
                        }
                        if mode == 8 {
                            edit(&mut new, "labels", "app", Some("quarantined"));
                        }
                    }
                    // what a status write may store beside the marks: a finalizer, an owner
                    mode => {
                        if new.get("metadata").is_none_or(Value::is_null) {
                            new["metadata"] = json!({});
                        }
                        let (field, value) = match mode {
                            6 => ("finalizers", json!(["example.com/cleanup"])),
                            _ => (
                                "ownerReferences",
                                json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "gone",
                                        "uid": "0f9e8d7c-6b5a-4c3d-2e1f-000000000000"}]),
                            ),
                        };
                        new["metadata"][field] = value;
                    }
                }
                (old, new)
            },
        )
}

/// Where a workload keeps a template, as `src/template.rs` documents it (written out here, not
/// taken from the generator).
#[derive(Debug, Clone, Copy)]
enum Template {
    /// One template at this path.
    One(&'static [&'static str]),
    /// A list at this path; each item holds a template at the second path (itself when empty).
    Each(&'static [&'static str], &'static [&'static str]),
}

/// A kind of object and the resource it is written through.
#[derive(Debug, Clone, Copy)]
struct Kind {
    group: &'static str,
    kind: &'static str,
    resource_group: &'static str,
    resource: &'static str,
    namespaced: bool,
    templates: &'static [Template],
}

const fn kind(group: &'static str, kind: &'static str, resource: &'static str) -> Kind {
    Kind {
        group,
        kind,
        resource_group: group,
        resource,
        namespaced: true,
        templates: &[],
    }
}

const POD_TEMPLATE: Template = Template::One(&["spec", "template"]);

const KINDS: [Kind; 20] = [
    Kind {
        namespaced: false,
        ..kind(
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            "customresourcedefinitions",
        )
    },
    kind("", "ConfigMap", "configmaps"),
    kind("", "Secret", "secrets"),
    kind("", "Namespace", "namespaces"),
    Kind {
        resource_group: "apps",
        ..kind("autoscaling", "Scale", "deployments")
    },
    kind("camel.apache.org", "Integration", "integrations"),
    kind("discovery.k8s.io", "EndpointSlice", "endpointslices"),
    kind("", "Endpoints", "endpoints"),
    kind("", "Event", "events"),
    kind("", "PersistentVolumeClaim", "persistentvolumeclaims"),
    Kind {
        templates: &[Template::Each(
            &["spec", "volumes"],
            &["ephemeral", "volumeClaimTemplate"],
        )],
        ..kind("", "Pod", "pods")
    },
    Kind {
        templates: &[POD_TEMPLATE],
        ..kind("apps", "Deployment", "deployments")
    },
    Kind {
        templates: &[POD_TEMPLATE],
        ..kind("apps", "ReplicaSet", "replicasets")
    },
    Kind {
        templates: &[POD_TEMPLATE],
        ..kind("apps", "DaemonSet", "daemonsets")
    },
    Kind {
        templates: &[
            POD_TEMPLATE,
            Template::Each(&["spec", "volumeClaimTemplates"], &[]),
        ],
        ..kind("apps", "StatefulSet", "statefulsets")
    },
    Kind {
        templates: &[POD_TEMPLATE],
        ..kind("", "ReplicationController", "replicationcontrollers")
    },
    Kind {
        templates: &[POD_TEMPLATE],
        ..kind("batch", "Job", "jobs")
    },
    Kind {
        templates: &[
            Template::One(&["spec", "jobTemplate"]),
            Template::One(&["spec", "jobTemplate", "spec", "template"]),
        ],
        ..kind("batch", "CronJob", "cronjobs")
    },
    // Resources no API server serves, whose text could read as another's: `jobs.batch` in the
    // core group, `jobs` in a group `batch/status`.
    Kind {
        resource_group: "",
        resource: "jobs.batch",
        templates: &[POD_TEMPLATE],
        ..kind("batch", "Job", "jobs")
    },
    Kind {
        resource_group: "batch/status",
        templates: &[POD_TEMPLATE],
        ..kind("batch", "Job", "jobs")
    },
];

/// Where the stored object stands in its deletion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Deletion {
    None,
    /// `deletionTimestamp` set; an UPDATE keeps it, and its finalizers or removes them.
    Begun {
        finalizers_removed: bool,
    },
    /// `deletionTimestamp: null`, which is no deletion.
    Null,
}

/// Who writes what: the requester, the operation, the subresource, the kind of the object and
/// the resource it is written through, and whether the stored object must be terminating.
#[derive(Debug, Clone)]
struct Target {
    requester: (String, Vec<String>),
    operation: String,
    subresource: Option<String>,
    kind: Kind,
    resource: (String, String),
    terminating: bool,
}

/// A write that a rule of the trusted control plane (Kubernetes' own, and the writers of
/// [`trusted_writers`]) names: the writer's user name and the groups its trust needs (a
/// service account's or a node's, as the API server gives them), an operation, a resource.
#[derive(Debug, Clone)]
struct Granted {
    user: String,
    groups: Vec<&'static str>,
    /// For a service account of kube-system, its name.
    account: Option<String>,
    operation: String,
    resource: (String, String, String),
    terminating: bool,
}

/// The groups the API server gives the user `name` (a service account's, a node's), leaked for
/// the test's `&str` groups.
pub fn vouching(name: &str) -> Vec<&'static str> {
    let groups = control_plane::vouching_groups(name).expect("a literal name");
    groups
        .into_iter()
        .map(|group| &*Box::leak(group.into_boxed_str()))
        .collect()
}

/// Every write a trust rule names, `*` standing for ConfigMaps and `*/x` for Deployments' `x`;
/// by writer.
fn granted() -> Vec<Vec<Granted>> {
    let pool = json!({"trustedWriters": trusted_writers()}).to_string();
    let settings = Settings::from_json(pool.as_bytes()).unwrap();
    let mut granted: Vec<Vec<Granted>> = Vec::new();
    for trust in control_plane::rules(&settings.trusted_writers) {
        let (user, groups, account) = match trust.writer {
            Writer::KubeSystemServiceAccount(account) => (
                format!("{KUBE_SYSTEM_PREFIX}{account}"),
                vec![KUBE_SYSTEM_GROUP],
                Some(account.to_owned()),
            ),
            Writer::User(user) => (user.to_owned(), vouching(user), None),
            Writer::Users(pattern) => {
                let user = pattern.replace('*', "-x-");
                let groups = vouching(&user);
                (user, groups, None)
            }
            Writer::Node => (format!("{NODE_PREFIX}n1"), vec![NODES_GROUP], None),
        };
        for operation in trust.operations {
            for resource in trust.resources.iter() {
                let resource = match control_plane::parts(resource) {
                    None => ("", "configmaps", ""),
                    Some((_, "*", subresource)) => ("apps", "deployments", subresource),
                    Some(parts) => parts,
                };
                let (resource_group, name, subresource) = resource;
                let writes = Granted {
                    user: user.clone(),
                    groups: groups.clone(),
                    account: account.clone(),
                    operation: operation.to_string(),
                    resource: (
                        resource_group.to_owned(),
                        name.to_owned(),
                        subresource.to_owned(),
                    ),
                    terminating: trust.terminating_only,
                };
                match granted
                    .iter_mut()
                    .find(|writer| writer[0].user == writes.user)
                {
                    Some(writer) => writer.push(writes),
                    None => granted.push(vec![writes]),
                }
            }
        }
    }
    granted
}

/// A kind of [`KINDS`] written through `resource`, or a kind of the resource's group that has
/// no templates.
fn kind_of((group, resource): (&str, &str)) -> Kind {
    KINDS
        .iter()
        .find(|kind| kind.resource_group == group && kind.resource == resource)
        .copied()
        .unwrap_or(THING)
}

/// A kind no workload controller knows.
const THING: Kind = kind("example.com", "Thing", "things");

/// Who writes what: anyone on any kind, or a writer of the trusted control plane on what a rule
/// names — as the writer, with or without its group, or as a look-alike (a suffix, another
/// namespace, a prefix).
fn arb_target() -> impl Strategy<Value = Target> {
    let operations = proptest::sample::select(vec![
        "CREATE", "CREATE", "UPDATE", "UPDATE", "UPDATE", "DELETE", "DELETE", "CONNECT",
    ]);
    let subresources = proptest::sample::select(vec![
        None,
        None,
        None,
        None,
        Some(""),
        Some("status"),
        Some("scale"),
        Some("binding"),
        Some("finalize"),
    ]);
    let anyone = (
        operations,
        subresources,
        proptest::sample::select(KINDS.to_vec()),
        arb_requester(),
    )
        .prop_map(|(operation, subresource, kind, requester)| Target {
            requester,
            operation: operation.to_owned(),
            subresource: subresource.map(str::to_owned),
            kind,
            resource: (kind.resource_group.to_owned(), kind.resource.to_owned()),
            terminating: false,
        });
    // The controllers' accounts, the writers trusted on terminating objects only, and the
    // other writers, by shares; each writer of a share alike, whatever the number of its grants.
    let (accounts, others): (Vec<_>, Vec<_>) = granted()
        .into_iter()
        .partition(|writer| writer[0].account.is_some());
    let (terminating, others): (Vec<_>, Vec<_>) =
        others.into_iter().partition(|writer| writer[0].terminating);
    let granted = prop_oneof![
        2 => proptest::sample::select(accounts).prop_flat_map(proptest::sample::select),
        1 => proptest::sample::select(terminating).prop_flat_map(proptest::sample::select),
        2 => proptest::sample::select(others).prop_flat_map(proptest::sample::select),
    ];
    let writer = (
        granted,
        proptest::sample::select(vec!["exact", "exact", "exact", "suffix", "elsewhere"]),
        proptest::bool::weighted(0.75),
        proptest::sample::subsequence(GROUPS.to_vec(), 0..=2),
    )
        .prop_map(|(granted, lookalike, with_group, groups)| {
            let user = match (lookalike, &granted.account) {
                ("exact", _) => granted.user.clone(),
                ("suffix", _) => format!("{}-x", granted.user),
                (_, Some(account)) => format!("system:serviceaccount:kube-public:{account}"),
                (_, None) => format!("x{}", granted.user),
            };
            let groups = groups
                .into_iter()
                .chain(granted.groups.iter().copied().filter(|_| with_group))
                .map(str::to_owned)
                .collect();
            let (group, resource, subresource) = granted.resource;
            Target {
                requester: (user, groups),
                operation: granted.operation,
                subresource: Some(subresource).filter(|subresource| !subresource.is_empty()),
                kind: kind_of((&group, &resource)),
                resource: (group, resource),
                terminating: granted.terminating,
            }
        });
    prop_oneof![3 => anyone, 2 => writer]
}

/// One generated request, before it is written out.
#[derive(Debug, Clone)]
struct Draw {
    target: Target,
    namespace: &'static str,
    sides: (Value, Value),
    /// A template place (an index into the kind's) and the template's sides.
    template: Option<(usize, (Value, Value))>,
    deletion: Deletion,
    options: Value,
}

pub fn arb_request() -> impl Strategy<Value = Value> {
    let deletions = proptest::sample::select(vec![
        Deletion::None,
        Deletion::None,
        Deletion::Begun {
            finalizers_removed: false,
        },
        Deletion::Begun {
            finalizers_removed: true,
        },
        Deletion::Null,
    ]);
    let options = proptest::sample::select(vec![
        Value::Null,
        json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"}),
        json!({"kind": "DeleteOptions", "gracePeriodSeconds": 0}),
        json!({"kind": "DeleteOptions", "propagationPolicy": "Orphan"}),
    ]);
    (
        arb_target(),
        proptest::sample::select(vec!["team-a", "team-b"]),
        (
            arb_sides(),
            proptest::option::weighted(0.6, (0..4usize, arb_sides())),
            deletions,
            options,
        ),
    )
        .prop_map(
            |(target, namespace, (sides, template, deletion, options))| {
                request(Draw {
                    target,
                    namespace,
                    sides,
                    template,
                    deletion,
                    options,
                })
            },
        )
}

/// Writes a drawn request out as the API server sends it.
fn request(draw: Draw) -> Value {
    let Draw {
        target,
        namespace,
        sides: (mut old, mut new),
        template,
        mut deletion,
        options,
    } = draw;
    let Target {
        requester: (user, groups),
        operation,
        subresource,
        kind,
        resource: (resource_group, resource),
        terminating,
    } = target;
    if let Some((place, (old_template, new_template))) = template {
        match kind.templates {
            // Another kind with a field where a workload keeps its template.
            [] if place % 2 == 0 => {
                for side in [&mut old, &mut new] {
                    if side.is_object() {
                        side["spec"] = json!({"template": "{{ .Values.template }}"});
                    }
                }
            }
            [] => {}
            places => {
                let place = places[place % places.len()];
                // A template is on both sides of an UPDATE or on neither: a pod or job template
                // is a field of the typed object, always there, and the template lists are
                // immutable (validation refuses an UPDATE that adds or removes one).
                let (old_template, new_template) = match (old_template, new_template) {
                    (Value::Null, Value::Null) => (Value::Null, Value::Null),
                    (Value::Null, template) => (json!({}), template),
                    (template, Value::Null) => (template, json!({})),
                    sides => sides,
                };
                put_template(&mut old, place, old_template);
                put_template(&mut new, place, new_template);
            }
        }
    }
    if terminating && deletion == Deletion::None {
        deletion = Deletion::Begun {
            finalizers_removed: false,
        };
    }
    if deletion != Deletion::None && old.is_object() {
        let at = match deletion {
            Deletion::Null => Value::Null,
            _ => json!("2026-01-01T00:00:00Z"),
        };
        let metadata = set_path(&mut old, &["metadata"]);
        metadata["deletionTimestamp"] = at.clone();
        metadata["deletionGracePeriodSeconds"] = json!(30);
        metadata["finalizers"] = json!(["example.com/cleanup"]);
        if operation == "UPDATE" && new.is_object() {
            let metadata = set_path(&mut new, &["metadata"]);
            metadata["deletionTimestamp"] = at;
            metadata["deletionGracePeriodSeconds"] = json!(30);
            metadata["finalizers"] = match deletion {
                Deletion::Begun {
                    finalizers_removed: true,
                } => json!([]),
                _ => json!(["example.com/cleanup"]),
            };
        }
    }
    let mut user_info = json!({});
    if !user.is_empty() {
        user_info["username"] = json!(user);
    }
    if !groups.is_empty() {
        user_info["groups"] = json!(groups);
    }
    let mut request = json!({
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "kind": {"group": kind.group, "version": "v1", "kind": kind.kind},
        "resource": {"group": resource_group, "version": "v1", "resource": resource},
        "operation": operation, "name": "x", "userInfo": user_info,
    });
    if kind.namespaced || kind.kind == "Namespace" {
        request["namespace"] = json!(namespace);
    }
    if let Some(subresource) = subresource {
        request["subResource"] = json!(subresource);
    }
    // The sides each operation has: CREATE the new object, DELETE the stored one, UPDATE both,
    // CONNECT its options.
    let (object, old_object) = match operation.as_str() {
        "CREATE" => (new, Value::Null),
        "UPDATE" => (new, old),
        "DELETE" => (Value::Null, old),
        _ => (json!({"kind": "PodExecOptions"}), Value::Null),
    };
    for (key, mut side) in [("object", object), ("oldObject", old_object)] {
        if !side.is_null() {
            resolve_tracking_ids(&mut side, kind, namespace);
            request[key] = side;
        }
    }
    if operation == "DELETE" && !options.is_null() {
        request["options"] = options;
    }
    request
}

/// Writes out the tracking ids of [`TRACKING_IDS`] that stand for an object, wherever they are
/// (templates too): the object is `x`, of `kind`, in `namespace` (a cluster-scoped object's id
/// names the app's destination namespace, which the policy does not compare).
fn resolve_tracking_ids(value: &mut Value, kind: Kind, namespace: &str) {
    match value {
        Value::String(text) => {
            let (app, namespace, name) = if let Some(app) = text.strip_prefix("@self:") {
                (app, namespace, "x")
            } else if let Some(app) = text.strip_prefix("@elsewhere:") {
                (app, namespace, "x-7d9f")
            } else if let Some(app) = text.strip_prefix("@moved:") {
                (app, "elsewhere", "x")
            } else {
                return;
            };
            *text = format!("{app}:{}/{}:{namespace}/{name}", kind.group, kind.kind);
        }
        Value::Array(items) => {
            for item in items {
                resolve_tracking_ids(item, kind, namespace);
            }
        }
        Value::Object(map) => {
            for item in map.values_mut() {
                resolve_tracking_ids(item, kind, namespace);
            }
        }
        _ => {}
    }
}

/// Puts a template (an object's metadata wrapper, `null` for none) at its place in `object`.
fn put_template(object: &mut Value, place: Template, template: Value) {
    if !object.is_object() {
        return;
    }
    match place {
        Template::One(path) => {
            if !template.is_null() {
                *set_path(object, path) = template;
            }
        }
        Template::Each(list, path) => {
            let mut items = Vec::new();
            if !path.is_empty() {
                items.push(json!({"name": "cache", "emptyDir": {}}));
            }
            if !template.is_null() {
                // The same item on both sides (the lists are immutable): a volume named
                // `scratch`, a claim template named `data`.
                let mut item = json!({"name": "scratch"});
                if path.is_empty() {
                    item = template;
                    set_path(&mut item, &["metadata"])["name"] = json!("data");
                } else {
                    *set_path(&mut item, path) = template;
                }
                items.push(item);
            }
            *set_path(object, list) = json!(items);
        }
    }
}

/// The value at `path` of `value`, each missing or non-object step made an empty object.
fn set_path<'v>(value: &'v mut Value, path: &[&str]) -> &'v mut Value {
    let mut at = value;
    for field in path {
        if !at.is_object() {
            *at = json!({});
        }
        let map = at.as_object_mut().expect("an object");
        at = map.entry(*field).or_insert_with(|| json!({}));
    }
    at
}
