//! Kubernetes' own control plane: what each writer's bootstrap ClusterRole lets it write, read
//! from `plugin/pkg/auth/authorizer/rbac/bootstrappolicy/controller_policy.go` and `policy.go`
//! (kubernetes/kubernetes; the golden renderings beside them,
//! `testdata/controller-roles-featuregates.yaml` with every feature gate on, list the same
//! roles). Each rule that grants a write verb is kept: create as CREATE, update and patch as
//! UPDATE, delete and deletecollection as DELETE; read-only rules and verbs that write nothing
//! (escalate, approve, sign, attest) are left out. Resources are written `resource` (core
//! group) or `resource.group`, `/subresource` for a subresource, `*` for every resource.
//!
//! Roles gated behind feature gates are kept: a cluster without the gate runs no such
//! controller, so its entry trusts nobody who writes.

use crate::request::Operation;
use crate::request::Operation::{Create, Delete, Update};

/// One rule of a role: resources, and the operations granted on them.
pub type Grant = (&'static [&'static str], &'static [Operation]);

/// Each kube-controller-manager controller: its service account in kube-system (the ClusterRole
/// `system:controller:<name>` is bound to it), and what the role grants.
pub const CONTROLLERS: &[(&str, &[Grant])] = &[
    (
        "attachdetach-controller",
        &[
            (&["nodes/status"], &[Update]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
            (&["volumeattachments.storage.k8s.io"], &[Create, Delete]),
        ],
    ),
    (
        "certificate-controller",
        &[
            (
                &["certificatesigningrequests.certificates.k8s.io"],
                &[Delete],
            ),
            (
                &[
                    "certificatesigningrequests.certificates.k8s.io/status",
                    "certificatesigningrequests.certificates.k8s.io/approval",
                ],
                &[Update],
            ),
            (&["subjectaccessreviews.authorization.k8s.io"], &[Create]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "clusterrole-aggregation-controller",
        &[(&["clusterroles.rbac.authorization.k8s.io"], &[Update])],
    ),
    (
        "cronjob-controller",
        &[
            (
                &[
                    "cronjobs.batch",
                    "cronjobs.batch/status",
                    "cronjobs.batch/finalizers",
                ],
                &[Update],
            ),
            (&["jobs.batch"], &[Create, Update, Delete]),
            (&["pods"], &[Delete]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "daemon-set-controller",
        &[
            (
                &[
                    "daemonsets.extensions/status",
                    "daemonsets.apps/status",
                    "daemonsets.extensions/finalizers",
                    "daemonsets.apps/finalizers",
                ],
                &[Update],
            ),
            (
                &["pods", "controllerrevisions.apps"],
                &[Create, Update, Delete],
            ),
            (&["pods/binding"], &[Create]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "deployment-controller",
        &[
            (
                &[
                    "deployments.extensions",
                    "deployments.apps",
                    "deployments.extensions/status",
                    "deployments.apps/status",
                    "deployments.extensions/finalizers",
                    "deployments.apps/finalizers",
                    "pods",
                ],
                &[Update],
            ),
            (
                &["replicasets.apps", "replicasets.extensions"],
                &[Create, Update, Delete],
            ),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    // role gate/provenance: Go@003e3121: only if DynamicResourceAllocation && DRADeviceTaints; present in default-gates golden@008b365
    (
        "device-taint-eviction-controller",
        &[
            (&["pods"], &[Delete]),
            (&["pods/status"], &[Update]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
            // GATED: only in featuregates golden@1917d11 (not default golden, not Go@003e3121)
            (&["devicetaintrules.resource.k8s.io/status"], &[Update]),
        ],
    ),
    (
        "disruption-controller",
        &[
            (
                &["poddisruptionbudgets.policy/status", "pods/status"],
                &[Update],
            ),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "endpoint-controller",
        &[
            (&["endpoints"], &[Create, Update, Delete]),
            (&["endpoints/restricted"], &[Create]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "endpointslice-controller",
        &[
            (&["services/finalizers"], &[Update]),
            (
                &["endpointslices.discovery.k8s.io"],
                &[Create, Update, Delete],
            ),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "endpointslicemirroring-controller",
        &[
            (&["services/finalizers", "endpoints/finalizers"], &[Update]),
            (
                &["endpointslices.discovery.k8s.io"],
                &[Create, Update, Delete],
            ),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "ephemeral-volume-controller",
        &[
            (&["pods/finalizers"], &[Update]),
            (&["persistentvolumeclaims"], &[Create]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "expand-controller",
        &[
            (
                &["persistentvolumes", "persistentvolumeclaims/status"],
                &[Update],
            ),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "generic-garbage-collector",
        &[
            (&["*"], &[Update, Delete]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "horizontal-pod-autoscaler",
        &[
            (
                &["horizontalpodautoscalers.autoscaling/status", "*/scale"],
                &[Update],
            ),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "job-controller",
        &[
            (
                &["jobs.batch", "jobs.batch/status", "jobs.batch/finalizers"],
                &[Update],
            ),
            (&["pods"], &[Create, Update, Delete]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
            // GATED: only in featuregates golden@1917d11
            (
                &["podgroups.scheduling.k8s.io", "workloads.scheduling.k8s.io"],
                &[Create, Update],
            ),
        ],
    ),
    // role gate/provenance: feature gate ClusterTrustBundle (Go@003e3121); absent from default-gates golden
    (
        "kube-apiserver-serving-clustertrustbundle-publisher",
        &[
            (
                &["clustertrustbundles.certificates.k8s.io"],
                &[Create, Update, Delete],
            ),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "legacy-service-account-token-cleaner",
        &[(&["secrets"], &[Update, Delete])],
    ),
    (
        "namespace-controller",
        &[
            (&["namespaces", "*"], &[Delete]),
            (&["namespaces/finalize", "namespaces/status"], &[Update]),
        ],
    ),
    (
        "node-controller",
        &[
            (&["nodes"], &[Update, Delete]),
            (&["nodes/status", "pods/status"], &[Update]),
            (&["pods"], &[Delete]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "persistent-volume-binder",
        &[
            (&["persistentvolumes"], &[Create, Update, Delete]),
            (
                &[
                    "persistentvolumes/status",
                    "persistentvolumeclaims",
                    "persistentvolumeclaims/status",
                ],
                &[Update],
            ),
            (&["pods"], &[Create, Delete]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "pod-garbage-collector",
        &[(&["pods"], &[Delete]), (&["pods/status"], &[Update])],
    ),
    // role gate/provenance: feature gate PodCertificateRequest (Go@003e3121); absent from default-gates golden
    (
        "podcertificaterequestcleaner",
        &[(&["podcertificaterequests.certificates.k8s.io"], &[Delete])],
    ),
    // role gate/provenance: NOT in controller_policy.go@003e3121; only in featuregates golden@1917d11; controller_policy_test.go says gate GenericWorkload
    (
        "podgroup-protection-controller",
        &[(&["podgroups.scheduling.k8s.io"], &[Update])],
    ),
    (
        "pv-protection-controller",
        &[
            (&["persistentvolumes"], &[Update]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "pvc-protection-controller",
        &[
            (
                &["persistentvolumeclaims", "persistentvolumeclaims/status"],
                &[Update],
            ),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "replicaset-controller",
        &[
            (
                &[
                    "replicasets.apps",
                    "replicasets.extensions",
                    "replicasets.apps/status",
                    "replicasets.extensions/status",
                    "replicasets.apps/finalizers",
                    "replicasets.extensions/finalizers",
                ],
                &[Update],
            ),
            (&["pods"], &[Create, Update, Delete]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "replication-controller",
        &[
            (
                &[
                    "replicationcontrollers",
                    "replicationcontrollers/status",
                    "replicationcontrollers/finalizers",
                ],
                &[Update],
            ),
            (&["pods"], &[Create, Update, Delete]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    // role gate/provenance: feature gate DynamicResourceAllocation (Go@003e3121); present in default-gates golden
    (
        "resource-claim-controller",
        &[
            (
                &[
                    "pods/finalizers",
                    "resourceclaims.resource.k8s.io/status",
                    "pods/status",
                    "resourceclaims.resource.k8s.io/binding",
                ],
                &[Update],
            ),
            (
                &["resourceclaims.resource.k8s.io"],
                &[Create, Update, Delete],
            ),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
            // GATED: only in featuregates golden@1917d11
            (&["podgroups.scheduling.k8s.io/status"], &[Update]),
        ],
    ),
    // role gate/provenance: NOT in controller_policy.go@003e3121; only in featuregates golden@1917d11 (KCM descriptor requires gate DRAResourcePoolStatus)
    (
        "resourcepoolstatusrequest-controller",
        &[
            (&["resourcepoolstatusrequests.resource.k8s.io"], &[Delete]),
            (
                &["resourcepoolstatusrequests.resource.k8s.io/status"],
                &[Update],
            ),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "resourcequota-controller",
        &[
            (&["resourcequotas/status"], &[Update]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "root-ca-cert-publisher",
        &[(
            &["configmaps", "events", "events.events.k8s.io"],
            &[Create, Update],
        )],
    ),
    (
        "route-controller",
        &[
            (&["nodes/status"], &[Update]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    // role gate/provenance: feature gate SELinuxChangePolicy (Go@003e3121); present in default-gates golden
    (
        "selinux-warning-controller",
        &[(&["events", "events.events.k8s.io"], &[Create, Update])],
    ),
    (
        "service-account-controller",
        &[
            (&["serviceaccounts"], &[Create]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    // role gate/provenance: feature gate MultiCIDRServiceAllocator (Go@003e3121); present in default-gates golden
    (
        "service-cidrs-controller",
        &[
            (
                &[
                    "servicecidrs.networking.k8s.io",
                    "servicecidrs.networking.k8s.io/finalizers",
                    "servicecidrs.networking.k8s.io/status",
                ],
                &[Update],
            ),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "service-controller",
        &[
            (&["services/status"], &[Update]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "statefulset-controller",
        &[
            (
                &[
                    "statefulsets.apps/status",
                    "statefulsets.apps/finalizers",
                    "pods/finalizers",
                ],
                &[Update],
            ),
            (
                &["pods", "controllerrevisions.apps", "persistentvolumeclaims"],
                &[Create, Update, Delete],
            ),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    // role gate/provenance: feature gates StorageVersionAPI && APIServerIdentity (Go@003e3121); absent from default-gates golden
    (
        "storage-version-garbage-collector",
        &[
            (
                &["storageversions.internal.apiserver.k8s.io"],
                &[Update, Delete],
            ),
            (
                &["storageversions.internal.apiserver.k8s.io/status"],
                &[Update],
            ),
        ],
    ),
    // role gate/provenance: feature gate StorageVersionMigrator (Go@003e3121); absent from default-gates golden
    (
        "storage-version-migrator-controller",
        &[
            (
                &[
                    "*",
                    "storageversionmigrations.storagemigration.k8s.io/status",
                ],
                &[Update],
            ),
            // only in featuregates golden@1917d11
            (
                &["customresourcedefinitions.apiextensions.k8s.io/status"],
                &[Update],
            ),
        ],
    ),
    (
        "ttl-after-finished-controller",
        &[
            (&["jobs.batch"], &[Delete]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "ttl-controller",
        &[
            (&["nodes"], &[Update]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    (
        "validatingadmissionpolicy-status-controller",
        &[
            (
                &["validatingadmissionpolicies.admissionregistration.k8s.io/status"],
                &[Update],
            ),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
    // role gate/provenance: feature gate VolumeAttributesClass (Go@003e3121); present in default-gates golden
    (
        "volumeattributesclass-protection-controller",
        &[
            (&["volumeattributesclasses.storage.k8s.io"], &[Update]),
            (&["events", "events.events.k8s.io"], &[Create, Update]),
        ],
    ),
];

/// `system:kube-scheduler`: the ClusterRoles `system:kube-scheduler` and `system:volume-scheduler`
/// (`policy.go`), both bound to the user. Preemption deletes Pods.
pub const SCHEDULER: &[Grant] = &[
    (
        &[
            "events",
            "events.events.k8s.io",
            "leases.coordination.k8s.io",
        ],
        &[Create, Update],
    ),
    (&["pods"], &[Delete]),
    (
        &[
            "bindings",
            "pods/binding",
            "tokenreviews.authentication.k8s.io",
            "subjectaccessreviews.authorization.k8s.io",
        ],
        &[Create],
    ),
    (
        &["pods/status", "persistentvolumes", "persistentvolumeclaims"],
        &[Update],
    ),
    // GATED: only in cluster-roles-featuregates.yaml (coordinated leader election)
    (
        &["leasecandidates.coordination.k8s.io"],
        &[Create, Update, Delete],
    ),
    // GATED: only in cluster-roles-featuregates.yaml (DRA); rule also get,list,watch
    (&["resourceclaims.resource.k8s.io"], &[Update]),
    // GATED: only in cluster-roles-featuregates.yaml (DRA)
    (&["resourceclaims.resource.k8s.io/status"], &[Update]),
    // GATED: only in cluster-roles-featuregates.yaml (DRA)
    (&["pods/finalizers"], &[Update]),
];

/// `system:kube-controller-manager`'s own ClusterRole (`policy.go`): the tokens controller runs
/// with it whatever the credentials mode, filling service account token Secrets.
pub const CONTROLLER_MANAGER: &[Grant] = &[
    (
        &[
            "events",
            "events.events.k8s.io",
            "leases.coordination.k8s.io",
            "serviceaccounts",
        ],
        &[Create, Update],
    ),
    (&["secrets"], &[Create, Update, Delete]),
    (
        &[
            "tokenreviews.authentication.k8s.io",
            "subjectaccessreviews.authorization.k8s.io",
            "serviceaccounts/token",
        ],
        &[Create],
    ),
];
