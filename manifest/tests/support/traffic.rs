//! A generated mix of AdmissionRequests shaped like one hour of a cluster's writes, to measure
//! the fraction of them that the match conditions send to policy-server.
//!
//! The cluster: 20 nodes, about 300 pods, six operators with leader election in their own
//! namespaces, three installs (`cert-manager`, `argocd`, `kube-prometheus-stack`) owning what
//! they installed, one install and one CRD upgrade in the hour. Only what reaches the webhook's
//! rules and its `namespaceSelector` counts: `kube-system` and `kubewarden` are left out, so the
//! control plane's own leader election is not in the mix.
//!
//! | category | per hour | why | owner marks |
//! |---|--:|---|---|
//! | `node-lease` | 7,200 | each kubelet renews its Lease in `kube-node-lease` every 10 s | none |
//! | `leader-lease` | 10,800 | six operators' leader election renews every 2 s (client-go's retry period) | none |
//! | `event` | 2,000 | kubelet and controllers create Events (1,500) and bump their count (500) | none |
//! | `pod-status` | 1,200 | kubelets' `pods/status` writes: readiness, restarts, rollouts | 10% of pods (charts that template the install's marks into pods; never a tracking id) |
//! | `node-status` | 240 | `nodes/status` every 5 minutes per node | none |
//! | `endpointslice` | 600 | the EndpointSlice controller follows pods; slices copy their Service's labels, not its annotations | 50% (owned Services) of label marks |
//! | `endpoints` | 300 | the Endpoints controller follows pods; Endpoints copy their Service's labels, not its annotations | 50% of label marks |
//! | `service-handoff` | 6 | two Services handed over to another install: their slices and Endpoints follow the new owner (relabelled, one slice created) | the change itself, of label marks |
//! | `replicaset` | 300 | the Deployment controller scales ReplicaSets (100), the ReplicaSet controller writes `replicasets/status` (200) | 10% (labels from pod templates, annotations from the Deployment: a tracking id names the Deployment) |
//! | `rollout` | 24 | three rollouts: the Deployment controller creates a ReplicaSet from the template, scales the old one down twice and deletes the oldest; the ReplicaSet controller creates and deletes Pods | 60% (from templates) |
//! | `deployment` | 260 | `deployments/status` (200), `deployments/scale` by the HPA (30), spec updates by the owner's installer (30) | 60% |
//! | `pod` | 120 | the ReplicaSet controller creates Pods (60) and deletes them on scale-down (60) | 10% |
//! | `statefulset` | 8 | the StatefulSet controller creates Pods and their claims from its templates | 60% |
//! | `job` | 60 | the CronJob controller creates Jobs from its job template (12); the Job controller writes their status (48) | 30% (from the CronJob's template; never a tracking id) |
//! | `garbage-collector` | 30 | dependents of deleted owners deleted (15), owner references removed when orphaning (10), the `foregroundDeletion` finalizer removed (5) | 50% |
//! | `namespace-deletion` | 30 | the namespace controller deletes what a terminating namespace holds | 75% |
//! | `pod-gc` | 20 | the pod garbage collector marks orphaned Pods failed (10) and force-deletes them (10) | 10% |
//! | `pod-final-delete` | 120 | each kubelet's final DELETE of the Pods it stopped, `gracePeriodSeconds: 0` | 10% |
//! | `scheduler` | 62 | the scheduler binds Pods (60, `pods/binding`) and deletes preemption victims (2) | 10% |
//! | `configmap` | 150 | controllers' state and reloads (120 updates), creates (20), deletes (10) | 30% |
//! | `secret` | 60 | certificate renewals (40 updates), creates (10), deletes (10) | 30% |
//! | `custom-resource` | 400 | operators write their resources' status (300) and finalizers or annotations (100) | 20% |
//! | `crd-upgrade` | 12 | the installer upgrades its 12 CRDs, marks kept | all |
//! | `install` | 40 | an install creates its objects: CRDs, RBAC, workloads, configuration | 75%; hooks and `crds/` without |
//!
//! An object's owner is marked with the setup's first owner mark, in its place (labels or
//! annotations) with its companion: `<release>` in the namespace `<release>` for a namespace
//! pair, and for an Argo CD tracking id the app `<release>` and the object the id is on.
//! Controllers copy marks as Kubernetes' do: the EndpointSlice and Endpoints controllers copy a
//! Service's labels only, the Deployment controller a Deployment's annotations onto its
//! ReplicaSets (a tracking id among them, which then names the Deployment); templates, and so
//! what is made from them, carry no tracking id (Argo CD writes none there).
//! | `ownership` | 3 | an adoption, an offer and a namespace created for an install | the change itself |
//! | `derived` | 20 | operators derive objects from their parents, copying the parent's labels, the parent their controller: cert-manager creates a Certificate's CertificateRequest at each renewal (12), prometheus-operator updates a Prometheus's StatefulSet (8) | 30% (the parent's) |
//!
//! Kubernetes' own writers — kubelets, kube-controller-manager's controllers, the scheduler —
//! are marked ([`Request::control_plane`]): the policy trusts most of what they write, and the
//! conditions should send none of it that the policy allows. kube-controller-manager runs its
//! controllers with their own service accounts (`--use-service-account-credentials`, as kubeadm
//! does) or as `system:kube-controller-manager`; one controller write in four is made the second
//! way, so that both are measured.
//!
//! The leases alone are three quarters of the writes, so the report gives the fraction sent
//! without them too. Objects are small (metadata, a little spec and status): what the
//! conditions and the policy read is metadata, and no megabytes are written to test that.

use serde_json::{Map, Value, json};
use single_owner_policy::control_plane::{
    CONTROLLER_MANAGER, KUBE_SYSTEM_PREFIX, NODE_PREFIX, SCHEDULER,
};
use single_owner_policy::{Format, MarkPlace, Settings};

/// A generated request and the category it stands for.
#[derive(Debug, Clone)]
pub struct Request {
    /// The row of the table above.
    pub category: Category,
    /// The AdmissionRequest.
    pub request: Value,
    /// Whether Kubernetes' own control plane makes it: a kubelet, a controller of
    /// kube-controller-manager (with its service account or as `system:kube-controller-manager`)
    /// or the scheduler.
    pub control_plane: bool,
}

/// A row of the table above: what writes a request and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    /// `node-lease`.
    NodeLease,
    /// `leader-lease`.
    LeaderLease,
    /// `event`.
    Event,
    /// `pod-status`.
    PodStatus,
    /// `node-status`.
    NodeStatus,
    /// `endpointslice`.
    Endpointslice,
    /// `endpoints`.
    Endpoints,
    /// `service-handoff`.
    ServiceHandoff,
    /// `replicaset`.
    Replicaset,
    /// `rollout`.
    Rollout,
    /// `deployment`.
    Deployment,
    /// `pod`.
    Pod,
    /// `statefulset`.
    Statefulset,
    /// `job`.
    Job,
    /// `garbage-collector`.
    GarbageCollector,
    /// `namespace-deletion`.
    NamespaceDeletion,
    /// `pod-gc`.
    PodGc,
    /// `pod-final-delete`.
    PodFinalDelete,
    /// `scheduler`.
    Scheduler,
    /// `configmap`.
    Configmap,
    /// `secret`.
    Secret,
    /// `custom-resource`.
    CustomResource,
    /// `crd-upgrade`.
    CrdUpgrade,
    /// `install`.
    Install,
    /// `ownership`.
    Ownership,
    /// `derived`.
    Derived,
}

impl Category {
    /// The category's name, as the table above and the report write it.
    pub fn name(self) -> &'static str {
        match self {
            Category::NodeLease => "node-lease",
            Category::LeaderLease => "leader-lease",
            Category::Event => "event",
            Category::PodStatus => "pod-status",
            Category::NodeStatus => "node-status",
            Category::Endpointslice => "endpointslice",
            Category::Endpoints => "endpoints",
            Category::ServiceHandoff => "service-handoff",
            Category::Replicaset => "replicaset",
            Category::Rollout => "rollout",
            Category::Deployment => "deployment",
            Category::Pod => "pod",
            Category::Statefulset => "statefulset",
            Category::Job => "job",
            Category::GarbageCollector => "garbage-collector",
            Category::NamespaceDeletion => "namespace-deletion",
            Category::PodGc => "pod-gc",
            Category::PodFinalDelete => "pod-final-delete",
            Category::Scheduler => "scheduler",
            Category::Configmap => "configmap",
            Category::Secret => "secret",
            Category::CustomResource => "custom-resource",
            Category::CrdUpgrade => "crd-upgrade",
            Category::Install => "install",
            Category::Ownership => "ownership",
            Category::Derived => "derived",
        }
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How many requests of each category, per hour of the cluster above.
pub const HOURLY: [(Category, usize); 26] = [
    (Category::NodeLease, 7_200),
    (Category::LeaderLease, 10_800),
    (Category::Event, 2_000),
    (Category::PodStatus, 1_200),
    (Category::NodeStatus, 240),
    (Category::Endpointslice, 600),
    (Category::Endpoints, 300),
    (Category::ServiceHandoff, 6),
    (Category::Replicaset, 300),
    (Category::Rollout, 24),
    (Category::Deployment, 260),
    (Category::Pod, 120),
    (Category::Statefulset, 8),
    (Category::Job, 60),
    (Category::GarbageCollector, 30),
    (Category::NamespaceDeletion, 30),
    (Category::PodGc, 20),
    (Category::PodFinalDelete, 120),
    (Category::Scheduler, 62),
    (Category::Configmap, 150),
    (Category::Secret, 60),
    (Category::CustomResource, 400),
    (Category::CrdUpgrade, 12),
    (Category::Install, 40),
    (Category::Ownership, 3),
    (Category::Derived, 20),
];

/// The categories that are leases.
pub const LEASES: [Category; 2] = [Category::NodeLease, Category::LeaderLease];

/// The releases that own objects in the mix.
const RELEASES: [&str; 3] = ["cert-manager", "argocd", "kube-prometheus-stack"];

/// The mix for a setup: `divisor` 1 is the hour; a larger one keeps every category but scales
/// the counts down (rounding up), for a quick run.
pub fn mix(settings: &Settings, divisor: usize) -> Vec<Request> {
    let cluster = Cluster::of(settings);
    let mut rng = Rng(0x5eed_0fc1_a57e_1200);
    let mut requests = Vec::new();
    for (category, hourly) in HOURLY {
        let count = hourly.div_ceil(divisor.max(1));
        for index in 0..count {
            let request = cluster.request(category, index, &mut rng);
            let control_plane = is_control_plane(&request["userInfo"]["username"]);
            requests.push(Request {
                category,
                request,
                control_plane,
            });
        }
    }
    requests
}

/// Whether a user name is one of Kubernetes' own writers.
fn is_control_plane(username: &Value) -> bool {
    let username = username.as_str().unwrap_or("");
    username.starts_with(KUBE_SYSTEM_PREFIX)
        || username.starts_with(NODE_PREFIX)
        || [CONTROLLER_MANAGER, SCHEDULER].contains(&username)
}

/// What the mix needs to know of a setup: how its owners mark objects, and who installs.
struct Cluster {
    /// Per release: the owner marks of what it owns.
    owner_marks: Vec<Meta>,
    /// Per release: the owner id, as an offer names it.
    owner_ids: Vec<String>,
    /// Per release: the user name and groups of its installer.
    installers: Vec<(String, Vec<String>)>,
    /// The offer annotation.
    offer: String,
    /// The key of the mark the owners are marked with, as an offer names it.
    mark: String,
}

/// The labels and annotations of an object's metadata.
#[derive(Debug, Clone, Default)]
struct Meta {
    labels: Map<String, Value>,
    annotations: Map<String, Value>,
    /// An Argo CD tracking id to write once the object it names is known: its annotation key
    /// and its app.
    tracking: Option<(String, String)>,
}

impl Meta {
    /// Writes the tracking id, naming the object `name` of `kind` in `namespace` (for a
    /// cluster-scoped object, the app's destination namespace: the namespace named after it).
    fn tracking(mut self, kind: Kind, namespace: &str, name: &str) -> Meta {
        if let Some((key, app)) = self.tracking.take() {
            let namespace = if namespace.is_empty() {
                app.as_str()
            } else {
                namespace
            };
            let id = format!("{app}:{}/{}:{namespace}/{name}", kind.group, kind.kind);
            self.annotations.insert(key, id.into());
        }
        self
    }

    /// Without a tracking id: the metadata of a template, or of what is made from one.
    fn untracked(mut self) -> Meta {
        self.tracking = None;
        self
    }

    /// The labels alone, as the EndpointSlice and Endpoints controllers copy a Service's.
    fn labels_only(&self) -> Meta {
        Meta {
            labels: self.labels.clone(),
            ..Meta::default()
        }
    }

    /// A template's `metadata`: the labels and annotations, without a tracking id.
    fn template(&self) -> Value {
        let mut metadata = json!({"labels": self.labels});
        if !self.annotations.is_empty() {
            metadata["annotations"] = json!(self.annotations);
        }
        metadata
    }
}

impl Cluster {
    fn of(settings: &Settings) -> Cluster {
        let mark = &settings.owner_marks[0];
        let mut owner_marks = Vec::new();
        let mut owner_ids = Vec::new();
        let mut installers = Vec::new();
        for release in RELEASES {
            // A cluster-level kind where there is one: installs own CRDs, which are cluster-scoped.
            let kind = mark
                .cluster_kinds
                .first()
                .map(|kind| (kind.as_str(), release.to_owned()))
                .or_else(|| {
                    let kind = mark.namespaced_kinds.first()?;
                    Some((kind.as_str(), format!("{release}.{release}")))
                });
            let mut values = Map::new();
            let mut tracking = None;
            let id = match (&mark.format, &mark.kind_key, &mark.namespace_key, kind) {
                (Format::ArgoCdTrackingId, ..) => {
                    tracking = Some((mark.key.clone(), release.to_owned()));
                    release.to_owned()
                }
                (_, Some(kind_key), _, Some((kind, name))) => {
                    values.insert(kind_key.clone(), kind.into());
                    values.insert(mark.key.clone(), name.clone().into());
                    format!("{kind}.{name}")
                }
                // A release installed into the namespace named after it.
                (_, _, Some(namespace_key), _) => {
                    values.insert(namespace_key.clone(), release.into());
                    values.insert(mark.key.clone(), release.into());
                    format!("{release}/{release}")
                }
                (_, _, _, Some((kind, name))) => format!("{kind}.{name}"),
                (_, _, _, None) => release.to_owned(),
            };
            if values.is_empty() && tracking.is_none() {
                values.insert(mark.key.clone(), id.clone().into());
            }
            let meta = match mark.place {
                MarkPlace::Label => Meta {
                    labels: values,
                    ..Meta::default()
                },
                MarkPlace::Annotation => Meta {
                    annotations: values,
                    tracking,
                    ..Meta::default()
                },
            };
            owner_marks.push(meta);
            owner_ids.push(id);
            installers.push(installer(settings, release));
        }
        Cluster {
            owner_marks,
            owner_ids,
            installers,
            offer: settings.offer_annotation.clone(),
            mark: mark.key.clone(),
        }
    }

    /// The `index`th request of a category.
    fn request(&self, category: Category, index: usize, rng: &mut Rng) -> Value {
        let release = index % RELEASES.len();
        let owned = |rng: &mut Rng, percent| rng.percent(percent).then_some(release);
        let node = format!("node-{}", index % 20);
        let kubelet = || User::node(&node);
        match category {
            Category::NodeLease => lease("kube-node-lease", &node, &kubelet(), index),
            Category::LeaderLease => {
                let operator = index % 6;
                let namespace = format!("operator-{operator}");
                let user = User::service_account(&namespace, "controller");
                lease(&namespace, "leader", &user, index)
            }
            Category::Event => {
                let namespace = format!("team-{}", index % 8);
                let name = format!("web-{index}.17f3a9c2b1e4d{index:03}");
                let object = object(
                    Kind::EVENT,
                    &namespace,
                    &name,
                    None,
                    json!({"reason": "Pulled", "count": 1 + index % 3, "message": "Container image already present on machine"}),
                    index,
                );
                if index % 4 == 3 {
                    let mut old = object.clone();
                    old["count"] = json!(index % 3);
                    update(Kind::EVENT, "", &kubelet(), old, object)
                } else {
                    create(Kind::EVENT, &kubelet(), object)
                }
            }
            Category::PodStatus => {
                let labels = owned(rng, 10);
                let old = self.pod(index, labels, "Pending");
                let new = self.pod(index, labels, "Running");
                update(Kind::POD, "status", &kubelet(), old, new)
            }
            Category::NodeStatus => {
                let old = object(
                    Kind::NODE,
                    "",
                    &node,
                    None,
                    json!({"status": {"conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": format!("2025-01-01T00:{:02}:00Z", index % 60)}]}}),
                    index,
                );
                let mut new = old.clone();
                new["status"]["conditions"][0]["lastHeartbeatTime"] = json!("2025-01-01T01:00:00Z");
                update(Kind::NODE, "status", &kubelet(), old, new)
            }
            Category::Endpointslice => {
                let owner = owned(rng, 50);
                let mut service_labels = self.meta(owner).labels_only();
                let labels = &mut service_labels.labels;
                labels.insert("kubernetes.io/service-name".into(), "web".into());
                labels.insert(
                    "endpointslice.kubernetes.io/managed-by".into(),
                    "endpointslice-controller.k8s.io".into(),
                );
                let namespace = RELEASES[release];
                let old = object(
                    Kind::ENDPOINT_SLICE,
                    namespace,
                    &format!("web-{index:05x}"),
                    Some(service_labels),
                    json!({"endpoints": [{"addresses": ["10.0.0.1"]}]}),
                    index,
                );
                let mut new = old.clone();
                new["endpoints"] =
                    json!([{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2"]}]);
                let user = User::controller("endpointslice-controller", index);
                update(Kind::ENDPOINT_SLICE, "", &user, old, new)
            }
            Category::Endpoints => {
                let mut labels = self.meta(owned(rng, 50)).labels_only();
                labels.labels.insert(
                    "endpoints.kubernetes.io/managed-by".into(),
                    "endpoint-controller".into(),
                );
                let namespace = RELEASES[release];
                let old = object(
                    Kind::ENDPOINTS,
                    namespace,
                    &format!("web-{}", index % 40),
                    Some(labels),
                    json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}]}]}),
                    index,
                );
                let mut new = old.clone();
                new["subsets"][0]["addresses"] = json!([{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]);
                let user = User::controller("endpoint-controller", index);
                update(Kind::ENDPOINTS, "", &user, old, new)
            }
            Category::ServiceHandoff => {
                // A Service moved from the first release to the second: what copies its labels
                // follows, without the offer (which stays on the Service).
                let (from, to) = (
                    self.meta(Some(0)).labels_only(),
                    self.meta(Some(1)).labels_only(),
                );
                let namespace = RELEASES[0];
                let (kind, controller) = match index % 3 {
                    0 | 1 => (Kind::ENDPOINT_SLICE, "endpointslice-controller"),
                    _ => (Kind::ENDPOINTS, "endpoint-controller"),
                };
                let name = format!("shared-{index}");
                let old = object(kind, namespace, &name, Some(from), json!({}), index);
                let new = object(kind, namespace, &name, Some(to), json!({}), index);
                let user = User::controller(controller, index);
                match index % 3 {
                    1 => create(kind, &user, new),
                    _ => update(kind, "", &user, old, new),
                }
            }
            Category::Replicaset => {
                let meta = self.meta(owned(rng, 10));
                let namespace = RELEASES[release];
                let old = self.replica_set(namespace, &format!("web-{index:05x}"), meta, index);
                let mut new = old.clone();
                if index.is_multiple_of(3) {
                    new["spec"]["replicas"] = json!(3);
                    let user = User::controller("deployment-controller", index);
                    update(Kind::REPLICA_SET, "", &user, old, new)
                } else {
                    new["status"]["replicas"] = json!(3);
                    let user = User::controller("replicaset-controller", index);
                    update(Kind::REPLICA_SET, "status", &user, old, new)
                }
            }
            Category::Rollout => {
                // Per rollout: a ReplicaSet created from the Deployment's template, the old one
                // scaled down twice, the oldest deleted; two Pods created, two deleted.
                let owner = owned(rng, 60);
                let namespace = RELEASES[release];
                let name = format!("web-{index:05x}");
                let replica_set = self.replica_set(namespace, &name, self.meta(owner), index);
                let pod = self.pod(index, owner, "Pending");
                let deployments = User::controller("deployment-controller", index);
                let replica_sets = User::controller("replicaset-controller", index);
                match index % 8 {
                    0 => create(Kind::REPLICA_SET, &deployments, replica_set),
                    1 | 2 => {
                        let mut new = replica_set.clone();
                        new["spec"]["replicas"] = json!(1);
                        update(Kind::REPLICA_SET, "", &deployments, replica_set, new)
                    }
                    3 => delete(Kind::REPLICA_SET, &deployments, replica_set),
                    4 | 5 => create(Kind::POD, &replica_sets, pod),
                    _ => delete(Kind::POD, &replica_sets, pod),
                }
            }
            Category::Deployment => {
                let owner = owned(rng, 60);
                let namespace = RELEASES[release];
                let old = object(
                    Kind::DEPLOYMENT,
                    namespace,
                    "web",
                    Some(self.meta(owner)),
                    json!({"spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "web", "image": "web:1.0"}]}}}, "status": {"replicas": 2}}),
                    index,
                );
                let mut new = old.clone();
                match index % 26 {
                    0..20 => {
                        new["status"]["replicas"] = json!(3);
                        let user = User::controller("deployment-controller", index);
                        update(Kind::DEPLOYMENT, "status", &user, old, new)
                    }
                    20..23 => {
                        let scale = |replicas| json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web", "namespace": namespace}, "spec": {"replicas": replicas}});
                        let user = User::controller("horizontal-pod-autoscaler", index);
                        update(Kind::SCALE, "scale", &user, scale(2), scale(3))
                    }
                    _ => {
                        new["spec"]["template"]["spec"]["containers"][0]["image"] =
                            json!("web:1.1");
                        let user = self.installer(release);
                        update(Kind::DEPLOYMENT, "", &user, old, new)
                    }
                }
            }
            Category::Pod => {
                let pod = self.pod(index, owned(rng, 10), "Pending");
                let user = User::controller("replicaset-controller", index);
                if index.is_multiple_of(2) {
                    create(Kind::POD, &user, pod)
                } else {
                    delete(Kind::POD, &user, pod)
                }
            }
            Category::Statefulset => {
                // A StatefulSet's Pod and its claim, from the pod and claim templates.
                let owner = owned(rng, 60);
                let user = User::controller("statefulset-controller", index);
                if index.is_multiple_of(2) {
                    create(Kind::POD, &user, self.pod(index, owner, "Pending"))
                } else {
                    let claim = object(
                        Kind::PERSISTENT_VOLUME_CLAIM,
                        RELEASES[release],
                        &format!("data-db-{index}"),
                        Some(self.meta(owner).untracked()),
                        json!({"spec": {"accessModes": ["ReadWriteOnce"]}}),
                        index,
                    );
                    create(Kind::PERSISTENT_VOLUME_CLAIM, &user, claim)
                }
            }
            Category::GarbageCollector => {
                let owner = owned(rng, 50);
                let user = User::controller("generic-garbage-collector", index);
                let mut dependent = match index % 3 {
                    0 => self.replica_set(
                        RELEASES[release],
                        &format!("old-{index}"),
                        self.meta(owner),
                        index,
                    ),
                    1 => self.pod(index, owner, "Running"),
                    _ => object(
                        Kind::CONFIG_MAP,
                        RELEASES[release],
                        &format!("generated-{index}"),
                        Some(self.meta(owner)),
                        json!({"data": {}}),
                        index,
                    ),
                };
                let kind = [Kind::REPLICA_SET, Kind::POD, Kind::CONFIG_MAP][index % 3];
                dependent["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "7c1d"}]);
                match index % 6 {
                    0..3 => delete(kind, &user, dependent),
                    3 | 4 => {
                        let mut new = dependent.clone();
                        new["metadata"]["ownerReferences"] = json!([]);
                        update(kind, "", &user, dependent, new)
                    }
                    _ => {
                        terminating(&mut dependent);
                        dependent["metadata"]["finalizers"] = json!(["foregroundDeletion"]);
                        let mut new = dependent.clone();
                        new["metadata"]["finalizers"] = json!([]);
                        update(kind, "", &user, dependent, new)
                    }
                }
            }
            Category::NamespaceDeletion => {
                // The last release's namespace is deleted: what it holds goes first.
                let owner = owned(rng, 75).map(|_| 2);
                let namespace = RELEASES[2];
                let user = User::controller("namespace-controller", index);
                let (kind, object) = match index % 3 {
                    0 => (
                        Kind::CONFIG_MAP,
                        object(
                            Kind::CONFIG_MAP,
                            namespace,
                            &format!("config-{index}"),
                            Some(self.meta(owner)),
                            json!({"data": {}}),
                            index,
                        ),
                    ),
                    1 => (
                        Kind::SECRET,
                        object(
                            Kind::SECRET,
                            namespace,
                            &format!("secret-{index}"),
                            Some(self.meta(owner)),
                            json!({"data": {}}),
                            index,
                        ),
                    ),
                    _ => (
                        Kind::DEPLOYMENT,
                        object(
                            Kind::DEPLOYMENT,
                            namespace,
                            &format!("web-{index}"),
                            Some(self.meta(owner)),
                            json!({"spec": {"replicas": 1}}),
                            index,
                        ),
                    ),
                };
                delete(kind, &user, object)
            }
            Category::PodGc => {
                let mut pod = self.pod(index, owned(rng, 10), "Running");
                let user = User::controller("pod-garbage-collector", index);
                if index.is_multiple_of(2) {
                    let mut new = pod.clone();
                    new["status"]["phase"] = json!("Failed");
                    update(Kind::POD, "status", &user, pod, new)
                } else {
                    terminating(&mut pod);
                    delete_with(
                        Kind::POD,
                        &user,
                        pod,
                        json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "gracePeriodSeconds": 0}),
                    )
                }
            }
            Category::PodFinalDelete => {
                let mut pod = self.pod(index, owned(rng, 10), "Running");
                terminating(&mut pod);
                let uid = pod["metadata"]["uid"].clone();
                let options = json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                                     "gracePeriodSeconds": 0, "preconditions": {"uid": uid}});
                delete_with(Kind::POD, &kubelet(), pod, options)
            }
            Category::Scheduler => {
                let scheduler = User::named(SCHEDULER, &["system:authenticated"]);
                let pod = self.pod(index, owned(rng, 10), "Pending");
                if index < 60 {
                    let binding = json!({"apiVersion": "v1", "kind": "Binding",
                        "metadata": {"name": pod["metadata"]["name"], "namespace": pod["metadata"]["namespace"]},
                        "target": {"apiVersion": "v1", "kind": "Node", "name": node}});
                    admission_request(
                        Kind::BINDING,
                        "CREATE",
                        "binding",
                        &scheduler,
                        binding,
                        Value::Null,
                    )
                } else {
                    delete(Kind::POD, &scheduler, pod)
                }
            }
            Category::Configmap | Category::Secret => {
                // ConfigMaps: 120 updates, 20 creates, 10 deletes an hour (of 15: 12, 2, 1);
                // Secrets: 40, 10, 10 (of 6: 4, 1, 1).
                let (kind, cycle, updates, creates) = match category {
                    Category::Configmap => (Kind::CONFIG_MAP, 15, 12, 2),
                    _ => (Kind::SECRET, 6, 4, 1),
                };
                let namespace = RELEASES[release];
                let meta = self.meta(owned(rng, 30));
                let old = object(
                    kind,
                    namespace,
                    &format!("state-{index}"),
                    Some(meta),
                    json!({"data": {"state": "c3RhdGU="}}),
                    index,
                );
                let user = User::service_account(namespace, "controller");
                match index % cycle {
                    position if position < updates => {
                        let mut new = old.clone();
                        new["data"]["state"] = json!("bmV3");
                        update(kind, "", &user, old, new)
                    }
                    position if position < updates + creates => create(kind, &user, old),
                    _ => delete(kind, &user, old),
                }
            }
            Category::Derived => {
                // Copies of the parent's labels, the parent named as controller.
                let meta = self.meta(owned(rng, 30)).untracked();
                let namespace = RELEASES[release];
                let (kind, parent, parent_kind, user) = match index % 5 {
                    0..=2 => (
                        Kind::CERTIFICATE_REQUEST,
                        format!("tls-{index}"),
                        ("cert-manager.io/v1", "Certificate"),
                        User::service_account("cert-manager", "cert-manager"),
                    ),
                    _ => (
                        Kind::STATEFUL_SET,
                        "k8s".to_owned(),
                        ("monitoring.coreos.com/v1", "Prometheus"),
                        User::service_account("monitoring", "prometheus-operator"),
                    ),
                };
                let mut new = object(
                    kind,
                    namespace,
                    &format!("{parent}-{index}"),
                    Some(meta),
                    json!({"spec": {"replicas": 2}}),
                    index,
                );
                new["metadata"]["ownerReferences"] = json!([{
                    "apiVersion": parent_kind.0, "kind": parent_kind.1, "name": parent,
                    "uid": format!("7a1d{index:08x}-0c4e-4b8f-a2d6-5e9b3c1f0a7d"),
                    "controller": true, "blockOwnerDeletion": true}]);
                if kind.kind == "CertificateRequest" {
                    create(kind, &user, new)
                } else {
                    let old = new.clone();
                    new["spec"]["replicas"] = json!(3);
                    update(kind, "", &user, old, new)
                }
            }
            Category::CustomResource => {
                let meta = self.meta(owned(rng, 20));
                let namespace = RELEASES[release];
                let old = object(
                    Kind::CERTIFICATE,
                    namespace,
                    &format!("tls-{index}"),
                    Some(meta),
                    json!({"spec": {"secretName": "tls"}, "status": {"conditions": []}}),
                    index,
                );
                let mut new = old.clone();
                let user = User::service_account("cert-manager", "cert-manager");
                if index.is_multiple_of(4) {
                    new["metadata"]["finalizers"] = json!(["cert-manager.io/finalizer"]);
                    update(Kind::CERTIFICATE, "", &user, old, new)
                } else {
                    new["status"]["conditions"] = json!([{"type": "Ready", "status": "True"}]);
                    update(Kind::CERTIFICATE, "status", &user, old, new)
                }
            }
            Category::Job => {
                // A CronJob's Jobs carry its job template's labels and annotations, their pod
                // template too.
                let meta = self.meta(owned(rng, 30)).untracked();
                let template = meta.template();
                let mut job = object(
                    Kind::JOB,
                    "team-0",
                    &format!("backup-{index}"),
                    Some(meta),
                    json!({"spec": {"template": {"metadata": template}}, "status": {}}),
                    index,
                );
                if index.is_multiple_of(5) {
                    job["metadata"]["ownerReferences"] = json!([{"apiVersion": "batch/v1", "kind": "CronJob", "name": "backup", "uid": "9f2e"}]);
                    create(
                        Kind::JOB,
                        &User::controller("cronjob-controller", index),
                        job,
                    )
                } else {
                    let mut new = job.clone();
                    new["status"]["active"] = json!(1);
                    let user = User::controller("job-controller", index);
                    update(Kind::JOB, "status", &user, job, new)
                }
            }
            Category::CrdUpgrade => {
                let meta = self.meta(Some(0));
                let name = format!("kind{index}s.cert-manager.io");
                let old = object(
                    Kind::CRD,
                    "",
                    &name,
                    Some(meta),
                    json!({"spec": {"versions": [{"name": "v1"}]}}),
                    index,
                );
                let mut new = old.clone();
                new["spec"]["versions"] = json!([{"name": "v1"}, {"name": "v2"}]);
                update(Kind::CRD, "", &self.installer(0), old, new)
            }
            Category::Install => {
                // The first release's install; hooks and crds/ come without the mark.
                let meta = self.meta(owned(rng, 75).map(|_| 0));
                let kinds = [
                    Kind::CRD,
                    Kind::SERVICE_ACCOUNT,
                    Kind::CLUSTER_ROLE,
                    Kind::CLUSTER_ROLE_BINDING,
                    Kind::ROLE,
                    Kind::ROLE_BINDING,
                    Kind::SERVICE,
                    Kind::CONFIG_MAP,
                    Kind::SECRET,
                    Kind::DEPLOYMENT,
                    Kind::JOB,
                    Kind::VALIDATING_WEBHOOK,
                ];
                let kind = kinds[index % kinds.len()];
                let namespace = if kind.namespaced { RELEASES[0] } else { "" };
                let name = match kind.kind {
                    "CustomResourceDefinition" => format!("kind{index}s.cert-manager.io"),
                    _ => format!("cert-manager-{index}"),
                };
                let object = object(kind, namespace, &name, Some(meta), json!({}), index);
                create(kind, &self.installer(0), object)
            }
            Category::Ownership => match index {
                // An install adopts a CRD it brought along before the policy.
                0 => {
                    let old = object(
                        Kind::CRD,
                        "",
                        "adopted.cert-manager.io",
                        Some(self.meta(None)),
                        json!({}),
                        index,
                    );
                    let new = object(
                        Kind::CRD,
                        "",
                        "adopted.cert-manager.io",
                        Some(self.meta(Some(0))),
                        json!({}),
                        index,
                    );
                    update(Kind::CRD, "", &self.installer(0), old, new)
                }
                // The owner offers a ConfigMap to another install.
                1 => {
                    let old = object(
                        Kind::CONFIG_MAP,
                        RELEASES[0],
                        "shared",
                        Some(self.meta(Some(0))),
                        json!({}),
                        index,
                    );
                    let mut new = old.clone();
                    let offer = format!(
                        "{}: {} -> {}",
                        self.mark, self.owner_ids[0], self.owner_ids[1]
                    );
                    let annotations = new["metadata"]
                        .as_object_mut()
                        .expect("metadata")
                        .entry("annotations")
                        .or_insert_with(|| json!({}));
                    annotations[self.offer.as_str()] = json!(offer);
                    update(Kind::CONFIG_MAP, "", &self.installer(0), old, new)
                }
                // A namespace for the next install.
                _ => create(
                    Kind::NAMESPACE,
                    &User::named(
                        "kubernetes-admin",
                        &["kubeadm:cluster-admins", "system:authenticated"],
                    ),
                    object(Kind::NAMESPACE, "", "monitoring", None, json!({}), index),
                ),
            },
        }
    }

    /// The metadata of an object: an app's own labels, and its owner's marks when `owner`
    /// names a release.
    fn meta(&self, owner: Option<usize>) -> Meta {
        let mut meta = match owner {
            Some(owner) => self.owner_marks[owner].clone(),
            None => Meta::default(),
        };
        meta.labels
            .insert("app.kubernetes.io/name".into(), "web".into());
        meta.labels
            .insert("app.kubernetes.io/part-of".into(), "shop".into());
        meta
    }

    /// A Pod, made from a template: its owner's marks but a tracking id.
    fn pod(&self, index: usize, owner: Option<usize>, phase: &str) -> Value {
        let mut meta = self.meta(owner).untracked();
        meta.labels
            .insert("pod-template-hash".into(), "7d4b9c8f6".into());
        let namespace = RELEASES[index % RELEASES.len()];
        object(
            Kind::POD,
            namespace,
            &format!("web-7d4b9c8f6-{index:05x}"),
            Some(meta),
            json!({"spec": {"nodeName": format!("node-{}", index % 20), "containers": [{"name": "web", "image": "web:1.0"}]}, "status": {"phase": phase}}),
            index,
        )
    }

    /// A ReplicaSet of the Deployment `web` whose marks are `meta`: the Deployment controller
    /// copies the pod template's labels and the Deployment's annotations onto it (a tracking id
    /// among them names the Deployment), and its pod template carries the marks but a
    /// tracking id.
    fn replica_set(&self, namespace: &str, name: &str, meta: Meta, index: usize) -> Value {
        let template = meta.template();
        let meta = meta.tracking(Kind::DEPLOYMENT, namespace, "web");
        object(
            Kind::REPLICA_SET,
            namespace,
            name,
            Some(meta),
            json!({"spec": {"replicas": 2, "template": {"metadata": template}}, "status": {"replicas": 2}}),
            index,
        )
    }

    fn installer(&self, release: usize) -> User {
        let (name, groups) = &self.installers[release];
        User {
            name: name.clone(),
            groups: groups.clone(),
        }
    }
}

/// Who installs `release`: a user name or group that the setup's first identity binds, its `*`
/// standing for the release; without identities, a service account named after it.
fn installer(settings: &Settings, release: &str) -> (String, Vec<String>) {
    let service_account = format!("system:serviceaccount:installers:{release}");
    let mut groups = vec![
        "system:serviceaccounts".to_owned(),
        "system:authenticated".to_owned(),
    ];
    let Some(identity) = settings.identities.first() else {
        return (service_account, groups);
    };
    if let Some(user) = identity.users.first() {
        return (user.replace('*', release), groups);
    }
    if let Some(group) = identity.groups.first() {
        groups.push(group.replace('*', release));
    }
    (service_account, groups)
}

/// A requester.
struct User {
    name: String,
    groups: Vec<String>,
}

impl User {
    fn node(node: &str) -> User {
        User::named(
            &format!("system:node:{node}"),
            &["system:nodes", "system:authenticated"],
        )
    }

    /// A controller of kube-controller-manager: its service account in kube-system, or, one
    /// write in four, `system:kube-controller-manager` (without
    /// `--use-service-account-credentials`).
    fn controller(name: &str, index: usize) -> User {
        match index % 4 {
            3 => User::named(CONTROLLER_MANAGER, &["system:authenticated"]),
            _ => User::service_account("kube-system", name),
        }
    }

    fn service_account(namespace: &str, name: &str) -> User {
        User {
            name: format!("system:serviceaccount:{namespace}:{name}"),
            groups: vec![
                "system:serviceaccounts".to_owned(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".to_owned(),
            ],
        }
    }

    fn named(name: &str, groups: &[&str]) -> User {
        User {
            name: name.to_owned(),
            groups: groups.iter().map(|group| (*group).to_owned()).collect(),
        }
    }
}

/// The kind of a request's object and its resource.
#[derive(Debug, Clone, Copy)]
struct Kind {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    resource: &'static str,
    namespaced: bool,
}

impl Kind {
    const fn new(
        group: &'static str,
        version: &'static str,
        kind: &'static str,
        resource: &'static str,
        namespaced: bool,
    ) -> Kind {
        Kind {
            group,
            version,
            kind,
            resource,
            namespaced,
        }
    }

    const LEASE: Kind = Kind::new("coordination.k8s.io", "v1", "Lease", "leases", true);
    const EVENT: Kind = Kind::new("", "v1", "Event", "events", true);
    const POD: Kind = Kind::new("", "v1", "Pod", "pods", true);
    const BINDING: Kind = Kind::new("", "v1", "Binding", "pods", true);
    const ENDPOINTS: Kind = Kind::new("", "v1", "Endpoints", "endpoints", true);
    const PERSISTENT_VOLUME_CLAIM: Kind = Kind::new(
        "",
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        true,
    );
    const NODE: Kind = Kind::new("", "v1", "Node", "nodes", false);
    const NAMESPACE: Kind = Kind::new("", "v1", "Namespace", "namespaces", false);
    const CONFIG_MAP: Kind = Kind::new("", "v1", "ConfigMap", "configmaps", true);
    const SECRET: Kind = Kind::new("", "v1", "Secret", "secrets", true);
    const SERVICE: Kind = Kind::new("", "v1", "Service", "services", true);
    const SERVICE_ACCOUNT: Kind = Kind::new("", "v1", "ServiceAccount", "serviceaccounts", true);
    const ENDPOINT_SLICE: Kind = Kind::new(
        "discovery.k8s.io",
        "v1",
        "EndpointSlice",
        "endpointslices",
        true,
    );
    const REPLICA_SET: Kind = Kind::new("apps", "v1", "ReplicaSet", "replicasets", true);
    const DEPLOYMENT: Kind = Kind::new("apps", "v1", "Deployment", "deployments", true);
    const SCALE: Kind = Kind::new("autoscaling", "v1", "Scale", "deployments", true);
    const JOB: Kind = Kind::new("batch", "v1", "Job", "jobs", true);
    const CRD: Kind = Kind::new(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
    );
    const CERTIFICATE: Kind =
        Kind::new("cert-manager.io", "v1", "Certificate", "certificates", true);
    const CERTIFICATE_REQUEST: Kind = Kind::new(
        "cert-manager.io",
        "v1",
        "CertificateRequest",
        "certificaterequests",
        true,
    );
    const STATEFUL_SET: Kind = Kind::new("apps", "v1", "StatefulSet", "statefulsets", true);
    const CLUSTER_ROLE: Kind = Kind::new(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        "clusterroles",
        false,
    );
    const CLUSTER_ROLE_BINDING: Kind = Kind::new(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
    );
    const ROLE: Kind = Kind::new("rbac.authorization.k8s.io", "v1", "Role", "roles", true);
    const ROLE_BINDING: Kind = Kind::new(
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        "rolebindings",
        true,
    );
    const VALIDATING_WEBHOOK: Kind = Kind::new(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        false,
    );
}

/// A Lease renewal: only `renewTime` changes.
fn lease(namespace: &str, name: &str, user: &User, index: usize) -> Value {
    let old = object(
        Kind::LEASE,
        namespace,
        name,
        None,
        json!({"spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": format!("2025-01-01T00:00:{:02}.000000Z", index % 60)}}),
        index,
    );
    let mut new = old.clone();
    new["spec"]["renewTime"] = json!("2025-01-01T00:01:00.000000Z");
    update(Kind::LEASE, "", user, old, new)
}

/// An object of `kind`: metadata (with the labels and annotations of `meta` when given, a
/// tracking id naming this object, and the fields the API server sets), merged with `body`.
fn object(
    kind: Kind,
    namespace: &str,
    name: &str,
    meta: Option<Meta>,
    body: Value,
    index: usize,
) -> Value {
    let api_version = match kind.group {
        "" => kind.version.to_owned(),
        group => format!("{group}/{}", kind.version),
    };
    let mut metadata = Map::new();
    metadata.insert("name".into(), name.into());
    if !namespace.is_empty() {
        metadata.insert("namespace".into(), namespace.into());
    }
    metadata.insert(
        "uid".into(),
        format!("3f0c{index:08x}-5b1e-4d2a-9c7f-0e8d6a4b2c1e").into(),
    );
    metadata.insert(
        "resourceVersion".into(),
        (48_213 + index).to_string().into(),
    );
    metadata.insert("creationTimestamp".into(), "2025-01-01T00:00:00Z".into());
    if let Some(meta) = meta {
        let meta = meta.tracking(kind, namespace, name);
        metadata.insert("labels".into(), Value::Object(meta.labels));
        if !meta.annotations.is_empty() {
            metadata.insert("annotations".into(), Value::Object(meta.annotations));
        }
    }
    let mut object = json!({"apiVersion": api_version, "kind": kind.kind, "metadata": metadata});
    if let Value::Object(body) = body {
        object.as_object_mut().expect("an object").extend(body);
    }
    object
}

fn create(kind: Kind, user: &User, object: Value) -> Value {
    admission_request(kind, "CREATE", "", user, object, Value::Null)
}

fn update(kind: Kind, subresource: &str, user: &User, old: Value, new: Value) -> Value {
    admission_request(kind, "UPDATE", subresource, user, new, old)
}

fn delete(kind: Kind, user: &User, old: Value) -> Value {
    admission_request(kind, "DELETE", "", user, Value::Null, old)
}

/// A DELETE with its DeleteOptions.
fn delete_with(kind: Kind, user: &User, old: Value, options: Value) -> Value {
    let mut request = delete(kind, user, old);
    request["options"] = options;
    request
}

/// Marks an object as terminating: its deletion began 30 seconds ago.
fn terminating(object: &mut Value) {
    object["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:59:30Z");
    object["metadata"]["deletionGracePeriodSeconds"] = json!(30);
}

/// An AdmissionRequest as the API server sends it: empty fields left out (`omitempty`).
fn admission_request(
    kind: Kind,
    operation: &str,
    subresource: &str,
    user: &User,
    object: Value,
    old: Value,
) -> Value {
    let side = if object.is_null() { &old } else { &object };
    let name = side["metadata"]["name"].clone();
    let namespace = side["metadata"]["namespace"].clone();
    let mut request = Map::new();
    request.insert("uid".into(), "0b8e3a4c-6f1d-4c59-9a0e-2f7d51c8b9a3".into());
    request.insert(
        "kind".into(),
        json!({"group": kind.group, "version": kind.version, "kind": kind.kind}),
    );
    request.insert(
        "resource".into(),
        json!({"group": kind.group, "version": kind.version, "resource": kind.resource}),
    );
    if !subresource.is_empty() {
        request.insert("subResource".into(), subresource.into());
    }
    request.insert("name".into(), name);
    if !namespace.is_null() {
        request.insert("namespace".into(), namespace);
    } else if kind.kind == "Namespace" {
        request.insert("namespace".into(), side["metadata"]["name"].clone());
    }
    request.insert("operation".into(), operation.into());
    request.insert(
        "userInfo".into(),
        json!({"username": user.name, "groups": user.groups}),
    );
    if !object.is_null() {
        request.insert("object".into(), object);
    }
    if !old.is_null() {
        request.insert("oldObject".into(), old);
    }
    request.insert("dryRun".into(), false.into());
    Value::Object(request)
}

/// A small deterministic generator (splitmix64), so that the mix is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// True `percent` times in a hundred.
    fn percent(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// The share of the mix that the conditions sent, and that the policy acted on, per category.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// One row per category, in the order first seen.
    pub rows: Vec<Row>,
}

/// The counts of one category, or of several.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Row {
    pub category: &'static str,
    /// Requests, sent by the conditions, acted on by the policy.
    pub requests: usize,
    pub sent: usize,
    pub acted: usize,
    /// The control plane's requests, those the conditions would send without the ones that
    /// skip the trusted control plane, those sent, and those sent that the policy allowed.
    pub control_plane: usize,
    pub control_plane_untrusted: usize,
    pub control_plane_sent: usize,
    pub control_plane_sent_allowed: usize,
}

impl Row {
    fn add(&mut self, other: &Row) {
        self.requests += other.requests;
        self.sent += other.sent;
        self.acted += other.acted;
        self.control_plane += other.control_plane;
        self.control_plane_untrusted += other.control_plane_untrusted;
        self.control_plane_sent += other.control_plane_sent;
        self.control_plane_sent_allowed += other.control_plane_sent_allowed;
    }
}

impl Tally {
    /// Counts a request: whether the conditions sent it, whether they would without the trust
    /// of the control plane, whether the policy acted on it.
    pub fn add(&mut self, request: &Request, sent: bool, untrusted: bool, acted: bool) {
        let row = match self
            .rows
            .iter_mut()
            .position(|row| row.category == request.category.name())
        {
            Some(position) => &mut self.rows[position],
            None => {
                self.rows.push(Row {
                    category: request.category.name(),
                    ..Row::default()
                });
                self.rows.last_mut().expect("just pushed")
            }
        };
        let control_plane = request.control_plane;
        row.add(&Row {
            category: request.category.name(),
            requests: 1,
            sent: usize::from(sent),
            acted: usize::from(acted),
            control_plane: usize::from(control_plane),
            control_plane_untrusted: usize::from(control_plane && untrusted),
            control_plane_sent: usize::from(control_plane && sent),
            control_plane_sent_allowed: usize::from(control_plane && sent && !acted),
        });
    }

    /// The sums over the categories `filter` keeps.
    pub fn totals(&self, filter: impl Fn(&str) -> bool) -> Row {
        let mut total = Row::default();
        for row in self.rows.iter().filter(|row| filter(row.category)) {
            total.add(row);
        }
        total
    }
}
