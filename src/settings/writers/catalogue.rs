//! The catalogue of the cluster's writers: each writer, its service accounts and their grants,
//! and the kinds it derives from, with what its source says it writes above it (docs/writers.md
//! says the same in its last column).

use super::{Binding, Writer};
use crate::identity::Access;

const fn changes(
    account: &'static str,
    changes: &'static [(&'static str, &'static [&'static str])],
) -> Binding {
    Binding {
        account,
        access: Access::Changes,
        changes,
    }
}

const fn derives(account: &'static str) -> Binding {
    Binding {
        account,
        access: Access::Derive,
        changes: &[],
    }
}

/// The annotations through which Argo CD asks its application controller to refresh or
/// hydrate an Application, and when.
const ARGO_CD_REFRESH: &[&str] = &[
    "argocd.argoproj.io/refresh",
    "argocd.argoproj.io/refresh-timestamp",
    "argocd.argoproj.io/hydrate",
    "argocd.argoproj.io/hydrate-timestamp",
];

/// The catalogue, by name; above each writer, what it writes and where its source says so
/// (docs/writers.md says the same in its last column).
pub const WRITERS: [Writer; 22] = [
    // The Application CRD has no status subresource: every write goes to the object itself
    // (argoproj/argo-cd manifests/crds/application-crd.yaml `subresources: {}`, at v3.5.1).
    // argocd-server requests a refresh through an annotation (util/argo/argo.go RefreshApp, :240
    // and :258; the Git webhooks, util/webhook/webhook.go:222; the timestamps on master at
    // 37ee0097), syncs and rolls back by setting `operation` and clearing
    // `status.operationState` (SetAppOperation :939-951, server/application/application.go
    // :2179, :2319), terminates an operation in `status` (:2521) and sets or drops the
    // resources finalizer before a delete (:1212); the application controller persists
    // `status`, drops the refresh and hydrate annotations (controller/appcontroller.go :2233,
    // :2273; hydrator_dependencies.go :102-108), clears `operation` when an operation ends
    // (:1706) and adds and removes its deletion finalizers (:1483, :1401, :1988-2014); the
    // notifications controller records what it sent in an annotation (notifications-engine
    // pkg/controller/state.go :71-90, patched at pkg/controller/controller.go :387)
    Writer {
        name: "argo-cd",
        namespace: "argocd",
        bindings: &[
            changes(
                "argocd-application-controller",
                &[
                    ("annotations", ARGO_CD_REFRESH),
                    ("fields", &["operation", "status"]),
                    (
                        "finalizers",
                        &[
                            "resources-finalizer.argocd.argoproj.io*",
                            "pre-delete-finalizer.argocd.argoproj.io*",
                            "post-delete-finalizer.argocd.argoproj.io*",
                        ],
                    ),
                ],
            ),
            changes(
                "argocd-server",
                &[
                    ("annotations", ARGO_CD_REFRESH),
                    ("fields", &["operation", "status"]),
                    ("finalizers", &["resources-finalizer.argocd.argoproj.io*"]),
                ],
            ),
            changes(
                "argocd-notifications-controller",
                &[("annotations", &["notified.notifications.argoproj.io"])],
            ),
        ],
        parents: &[],
    },
    // makes a Rollout's ReplicaSets with every annotation of the Rollout and the Rollout as
    // controller (argoproj/argo-rollouts rollout/sync.go createDesiredReplicaSet,
    // utils/annotations/annotations.go copyRolloutAnnotationsToReplicaSet); switches a Service's
    // selector to the stable or canary ReplicaSet and marks it managed (rollout/service.go,
    // service/service.go); scales a workloadRef's Deployment through spec.replicas
    // (rollout/scale_utils.go)
    Writer {
        name: "argo-rollouts",
        namespace: "argo-rollouts",
        bindings: &[
            derives("argo-rollouts"),
            changes(
                "argo-rollouts",
                &[
                    ("serviceSelector", &["rollouts-pod-template-hash"]),
                    (
                        "annotations",
                        &["argo-rollouts.argoproj.io/managed-by-rollouts"],
                    ),
                    ("replicas", &[]),
                ],
            ),
        ],
        parents: &[("argoproj.io/v1alpha1", "Rollout")],
    },
    // its CNI plugin annotates each Pod it networks through pods/status, as the calico-cni-plugin
    // service account whose token calico-node writes into the CNI kubeconfig (projectcalico/calico
    // libcalico-go lib/backend/k8s/resources/workloadendpoint.go patchPodAnnotations,
    // node/pkg/cni/token_watch.go; tigera-operator pkg/render/node.go: calico-system)
    Writer {
        name: "calico",
        namespace: "calico-system",
        bindings: &[changes(
            "calico-cni-plugin",
            &[(
                "annotations",
                &[
                    "cni.projectcalico.org/podIP",
                    "cni.projectcalico.org/podIPs",
                    "cni.projectcalico.org/containerID",
                ],
            )],
        )],
        parents: &[],
    },
    // copies a Certificate's labels onto its CertificateRequests and an Ingress's onto its
    // Certificates (cert-manager pkg/controller/certificates/requestmanager,
    // pkg/controller/certificate-shim); the cainjector writes the caBundle of what is annotated
    // cert-manager.io/inject-ca-from (pkg/controller/cainjector)
    Writer {
        name: "cert-manager",
        namespace: "cert-manager",
        bindings: &[
            derives("cert-manager"),
            changes("cert-manager-cainjector", &[("caBundles", &[])]),
        ],
        parents: &[
            ("cert-manager.io/v1", "Certificate"),
            ("networking.k8s.io/v1", "Ingress"),
        ],
    },
    // writes nothing an owner marks: Nodes' taints and `spec.unschedulable`
    // (utils/taints/taints.go :182, :230, :259-262), evictions, which never reach the policy
    // (core/scaledown/actuation/drain.go:251), ProvisioningRequests' status through their
    // subresource (provisioningrequest/provreqclient/client.go:115), its status ConfigMap and
    // Lease (kubernetes/autoscaler cluster-autoscaler-1.36.1, 35e8a280)
    Writer {
        name: "cluster-autoscaler",
        namespace: "kube-system",
        bindings: &[],
        parents: &[],
    },
    // providers write the external name and create-pending annotations and their finalizer on
    // managed resources (crossplane/crossplane-runtime pkg/reconciler/managed/reconciler.go,
    // api.go); Crossplane labels what a Usage protects (crossplane.io/in-use)
    Writer {
        name: "crossplane",
        namespace: "crossplane-system",
        bindings: &[
            changes(
                "provider-*",
                &[
                    (
                        "annotations",
                        &[
                            "crossplane.io/external-name",
                            "crossplane.io/external-create-*",
                            "upjet.crossplane.io/provider-meta",
                        ],
                    ),
                    ("finalizers", &["finalizer.managedresource.crossplane.io"]),
                ],
            ),
            changes(
                "crossplane",
                &[
                    ("labels", &["crossplane.io/in-use"]),
                    ("annotations", &["crossplane.io/external-name"]),
                ],
            ),
        ],
        parents: &[],
    },
    // creates and refreshes an ExternalSecret's Secret with its labels and annotations and the
    // ExternalSecret as controller (external-secrets pkg/controllers/externalsecret, setMetadata,
    // applyOwnership); the cert-controller writes its webhooks' caBundle
    Writer {
        name: "external-secrets",
        namespace: "external-secrets",
        bindings: &[
            derives("external-secrets"),
            changes("external-secrets-cert-controller", &[("caBundles", &[])]),
        ],
        parents: &[("external-secrets.io/v1", "ExternalSecret")],
    },
    // creates <name>-primary with the Canary as controller, and scales the target to zero and back
    // through spec.replicas (fluxcd/flagger pkg/canary/deployment_controller.go)
    Writer {
        name: "flagger",
        namespace: "flagger-system",
        bindings: &[derives("flagger"), changes("flagger", &[("replicas", &[])])],
        parents: &[("flagger.app/v1beta1", "Canary")],
    },
    // notification-controller's Receivers request a reconciliation of what they list with one
    // annotation, in a merge patch of the object itself (fluxcd/notification-controller
    // internal/server/receiver_handlers.go, requestReconciliation :560, annotate :595-616); the
    // other controllers write their own objects' status and finalizers, and reconcile as the
    // owners they serve (bound in identities)
    Writer {
        name: "flux",
        namespace: "flux-system",
        bindings: &[changes(
            "notification-controller",
            &[("annotations", &["reconcile.fluxcd.io/requestedAt"])],
        )],
        parents: &[],
    },
    // its cert rotator writes the caBundle of its webhook configurations
    // (open-policy-agent/cert-controller pkg/rotator/rotator.go)
    Writer {
        name: "gatekeeper",
        namespace: "gatekeeper-system",
        bindings: &[changes("gatekeeper-admin", &[("caBundles", &[])])],
        parents: &[],
    },
    // the admission-patch hook writes its webhook's caBundle (kube-webhook-certgen patch)
    Writer {
        name: "ingress-nginx",
        namespace: "ingress-nginx",
        bindings: &[changes("ingress-nginx-admission", &[("caBundles", &[])])],
        parents: &[],
    },
    // the ambient node agent marks each Pod it redirects through pods/status (istio/istio
    // cni/pkg/util/podutil.go, a merge patch of the annotation ambient.istio.io/redirection)
    Writer {
        name: "istio-cni",
        namespace: "istio-system",
        bindings: &[changes(
            "istio-cni",
            &[("annotations", &["ambient.istio.io/redirection"])],
        )],
        parents: &[],
    },
    // writes the caBundle of its injector's and validator's webhook configurations, and turns the
    // validator's failurePolicy to Fail once it serves (istio pkg/webhooks/webhookpatch.go,
    // pkg/webhooks/validation/controller)
    Writer {
        name: "istiod",
        namespace: "istio-system",
        bindings: &[changes(
            "istiod",
            &[("caBundles", &[]), ("webhookFailurePolicy", &[])],
        )],
        parents: &[],
    },
    // patches a NodePool's and an EC2NodeClass's hash annotations (kubernetes-sigs/karpenter
    // pkg/controllers/nodepool/hash), deletes Pods whose node's termination grace period ends
    // (pkg/controllers/node/termination/terminator)
    Writer {
        name: "karpenter",
        namespace: "kube-system",
        bindings: &[changes(
            "karpenter",
            &[
                (
                    "annotations",
                    &[
                        "karpenter.sh/nodepool-hash",
                        "karpenter.sh/nodepool-hash-version",
                        "karpenter.k8s.aws/ec2nodeclass-hash",
                        "karpenter.k8s.aws/ec2nodeclass-hash-version",
                    ],
                ),
                (
                    "finalizers",
                    &["karpenter.sh/termination", "karpenter.k8s.aws/termination"],
                ),
                ("delete", &[]),
            ],
        )],
        parents: &[],
    },
    // scales a ScaledObject's target through its scale (kedacore/keda
    // pkg/scaling/executor/scale_scaledobjects.go), makes its HPA with the ScaledObject's labels
    // and annotations and the ScaledObject as controller (controllers/keda/hpa.go), labels the
    // ScaledObject with its name, writes its webhook's and APIService's caBundle
    Writer {
        name: "keda",
        namespace: "keda",
        bindings: &[
            changes(
                "keda-operator",
                &[
                    ("replicas", &[]),
                    ("caBundles", &[]),
                    ("labels", &["scaledobject.keda.sh/name"]),
                ],
            ),
            derives("keda-operator"),
        ],
        parents: &[
            ("keda.sh/v1alpha1", "ScaledObject"),
            ("keda.sh/v1alpha1", "ScaledJob"),
        ],
    },
    // copies a Service's labels and annotations onto its Route and Configuration, and a
    // Configuration's onto its Revisions (knative/serving pkg/reconciler/service/resources,
    // pkg/reconciler/configuration/resources)
    Writer {
        name: "knative",
        namespace: "knative-serving",
        bindings: &[derives("controller")],
        parents: &[
            ("serving.knative.dev/v1", "Service"),
            ("serving.knative.dev/v1", "Configuration"),
        ],
    },
    // labels a generate rule's clone source (kyverno/kyverno pkg/background/generate/clone.go,
    // source.go); the cleanup controller deletes what its policies select. Mutate-existing rules
    // change what their authors write: bind them with access: Write for what they target
    Writer {
        name: "kyverno",
        namespace: "kyverno",
        bindings: &[
            changes(
                "kyverno-background-controller",
                &[("labels", &["generate.kyverno.io/clone-source"])],
            ),
            changes("kyverno-cleanup-controller", &[("delete", &[])]),
        ],
        parents: &[],
    },
    // writes each Pod's network status through pods/status, its thin plugin with the multus
    // service account's token (k8snetworkplumbingwg/multus-cni cmd/thin_entrypoint/main.go;
    // network-attachment-definition-client pkg/utils/net-attach-def.go, UpdateStatus)
    Writer {
        name: "multus",
        namespace: "kube-system",
        bindings: &[changes(
            "multus",
            &[(
                "annotations",
                &[
                    "k8s.v1.cni.cncf.io/network-status",
                    "k8s.v1.cni.cncf.io/networks-status",
                ],
            )],
        )],
        parents: &[],
    },
    // makes a Prometheus's, Alertmanager's or ThanosRuler's StatefulSet with its labels and the
    // custom resource as controller (prometheus-operator pkg/prometheus/server/statefulset.go,
    // pkg/alertmanager/statefulset.go)
    Writer {
        name: "prometheus-operator",
        namespace: "monitoring",
        bindings: &[derives("prometheus-operator")],
        parents: &[
            ("monitoring.coreos.com/v1", "Prometheus"),
            ("monitoring.coreos.com/v1", "Alertmanager"),
            ("monitoring.coreos.com/v1", "ThanosRuler"),
        ],
    },
    // restarts a workload by its pod template: the last-reloaded-from annotation, or a
    // STAKATER_<name>_<CONFIGMAP|SECRET> variable (stakater/Reloader
    // internal/pkg/handler/upgrade.go, internal/pkg/callbacks)
    Writer {
        name: "reloader",
        namespace: "reloader",
        bindings: &[changes(
            "reloader-reloader",
            &[
                (
                    "podTemplateAnnotations",
                    &["reloader.stakater.com/last-reloaded-from"],
                ),
                ("podTemplateEnv", &["STAKATER_*"]),
            ],
        )],
        parents: &[],
    },
    // restores as its server's service account (velero for `velero install`, velero-server for the
    // Helm chart): creates each object with its backed-up labels and annotations and patches
    // existing ones back to the backup (vmware-tanzu/velero pkg/restore/restore.go)
    Writer {
        name: "velero",
        namespace: "velero",
        bindings: &[
            Binding {
                account: "velero",
                access: Access::Restore,
                changes: &[],
            },
            Binding {
                account: "velero-server",
                access: Access::Restore,
                changes: &[],
            },
        ],
        parents: &[],
    },
    // resizes Pods in place through pods/resize and marks them (kubernetes/autoscaler
    // vertical-pod-autoscaler/pkg/updater); its evictions never reach the policy
    Writer {
        name: "vpa",
        namespace: "kube-system",
        bindings: &[changes(
            "vpa-updater",
            &[
                ("resize", &[]),
                (
                    "annotations",
                    &["vpaInPlaceUpdated", "vpaCpuStartupBoost/*"],
                ),
            ],
        )],
        parents: &[],
    },
];
