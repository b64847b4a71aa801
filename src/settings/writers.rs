//! The cluster's writers: operators that write into other owners' objects, each with the
//! narrowest grants that fit what it writes, read from its source. Settings enable them by
//! name (`clusterWriters: [{name: keda}, {name: velero, namespace: backup}]`), and each entry
//! becomes the identities and the `parentKinds` it needs ([`Settings::with_writers`]).

use serde::Deserialize;

use super::{ParentKind, Settings};
use crate::dns::is_dns_label;
use crate::grant::{self, Grant};
use crate::identity::{Access, Identity, SERVICE_ACCOUNT_PREFIX};

/// A writer the settings enable, by its catalogue name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterWriter {
    /// The catalogue's name for it ([`WRITERS`]).
    pub name: String,
    /// The namespace it runs in, where not the one its install guide uses (empty: that one).
    #[serde(default)]
    pub namespace: Option<String>,
}

/// One service account of a writer and what it may do for every owner.
pub struct Binding {
    /// The service account's name (`*` at the end: a prefix, for accounts named per install).
    pub account: &'static str,
    /// Its access ([`Access::Changes`] with `changes`, [`Access::Derive`], [`Access::Restore`]).
    pub access: Access,
    /// Its grants, as settings write them: a grant's name and the keys it lists.
    pub changes: &'static [(&'static str, &'static [&'static str])],
}

/// A writer of the catalogue.
pub struct Writer {
    /// Its name, as `clusterWriters` names it.
    pub name: &'static str,
    /// The namespace its install guide uses.
    pub namespace: &'static str,
    /// Its service accounts, each with what it may do.
    pub bindings: &'static [Binding],
    /// The kinds of controller it derives objects from (`apiVersion`, kind), followed as
    /// `parentKinds`.
    pub parents: &'static [(&'static str, &'static str)],
}

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

/// The catalogue, by name; above each writer, what it writes and where its source says so
/// (docs/writers.md says the same in its last column).
pub const WRITERS: [Writer; 19] = [
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

/// The catalogue's writer of this name.
pub fn writer(name: &str) -> Option<&'static Writer> {
    WRITERS.iter().find(|writer| writer.name == name)
}

/// The catalogue's name of the writer whose service account, in the namespace its install
/// guide uses, is `user`, when `enabled` does not enable it: what a denial of it says to
/// enable.
pub fn not_enabled(user: &str, enabled: &[ClusterWriter]) -> Option<&'static str> {
    let (namespace, account) = user.strip_prefix(SERVICE_ACCOUNT_PREFIX)?.split_once(':')?;
    let writer = WRITERS.iter().find(|writer| {
        writer.namespace == namespace
            && (writer.bindings.iter()).any(|binding| grant::matches(binding.account, account))
    })?;
    let on = enabled.iter().any(|enabled| enabled.name == writer.name);
    (!on).then_some(writer.name)
}

/// The names of the catalogue, as errors list them.
pub fn names() -> String {
    WRITERS.map(|writer| writer.name).join(", ")
}

impl Binding {
    /// The identity it becomes, for a writer that runs in `namespace`: for every owner.
    fn identity(&self, namespace: &str) -> Identity {
        let grant = |(name, keys): &(&str, &[&str])| {
            Grant::of(name, keys).unwrap_or_else(|| panic!("the catalogue names no grant {name}"))
        };
        Identity {
            owners: vec!["*".to_owned()],
            users: vec![format!(
                "{SERVICE_ACCOUNT_PREFIX}{namespace}:{}",
                self.account
            )],
            groups: Vec::new(),
            access: Some(self.access),
            changes: self.changes.iter().map(grant).collect(),
        }
    }
}

impl Settings {
    /// These settings with what their `clusterWriters` need: the kinds each writer derives
    /// from in `parentKinds`, and, where the settings ask who writes (they have identities of
    /// their own), its identities. Without identities nobody's requests are told apart, so a
    /// writer's copies need only be followed: binding it would make every other requester one
    /// that acts for no owner. A name the catalogue lacks adds nothing ([`Settings::validate`]
    /// refuses it).
    pub fn with_writers(mut self) -> Settings {
        let binds = !self.identities.is_empty();
        for enabled in &self.cluster_writers {
            let Some(writer) = writer(&enabled.name) else {
                continue;
            };
            let namespace = (enabled.namespace.as_deref())
                .filter(|namespace| !namespace.is_empty())
                .unwrap_or(writer.namespace);
            for binding in writer.bindings.iter().filter(|_| binds) {
                self.identities.push(binding.identity(namespace));
            }
            for &(api_version, kind) in writer.parents {
                let followed = (self.parent_kinds.iter())
                    .any(|parent| parent.api_version == api_version && parent.kind == kind);
                if !followed {
                    self.parent_kinds.push(ParentKind {
                        api_version: api_version.to_owned(),
                        kind: kind.to_owned(),
                        cluster_scoped: false,
                    });
                }
            }
        }
        self
    }
}

/// Checks the cluster writers: each a name of the catalogue, once, in a namespace that can be
/// one.
pub(super) fn check(writers: &[ClusterWriter], problems: &mut Vec<String>) {
    for (index, enabled) in writers.iter().enumerate() {
        let field = format!("clusterWriters[{index}]");
        if writer(&enabled.name).is_none() {
            problems.push(format!(
                "{field}.name: the catalogue has no writer {:?}; it has {}",
                enabled.name,
                names()
            ));
        }
        if writers[..index]
            .iter()
            .any(|other| other.name == enabled.name)
        {
            problems.push(format!("{field}.name: {:?} is enabled twice", enabled.name));
        }
        if let Some(namespace) = &enabled.namespace
            && !namespace.is_empty()
            && !is_dns_label(namespace)
        {
            problems.push(format!(
                "{field}.namespace: {namespace:?} is not a namespace name (a DNS-1123 label)"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each writer's row of docs/writers.md, up to its last column (what it writes, and where,
    /// which the docs say in words): its name, namespace, bindings and the kinds it derives
    /// from.
    fn rows() -> Vec<String> {
        let row = |writer: &Writer| {
            let bindings: Vec<String> = (writer.bindings.iter())
                .map(|binding| {
                    let what = match binding.access {
                        Access::Changes => (binding.changes.iter())
                            .map(|(name, keys)| match keys {
                                [] => format!("`{name}`"),
                                keys => format!("`{name}: [{}]`", keys.join(", ")),
                            })
                            .collect::<Vec<_>>()
                            .join(", "),
                        access => format!("`access: {access:?}`"),
                    };
                    format!("`{}`: {what}", binding.account)
                })
                .collect();
            let parents: Vec<String> = (writer.parents.iter())
                .map(|(api_version, kind)| format!("`{kind}` ({api_version})"))
                .collect();
            let parents = match parents.is_empty() {
                true => "—".to_owned(),
                false => parents.join(", "),
            };
            format!(
                "| `{}` | `{}` | {} | {parents} | ",
                writer.name,
                writer.namespace,
                bindings.join("; ")
            )
        };
        WRITERS.iter().map(row).collect()
    }

    #[test]
    fn the_docs_list_the_catalogue_as_it_is() {
        let docs = include_str!("../../docs/writers.md");
        let listed: Vec<&str> = (docs.lines())
            .filter(|line| line.starts_with("| `"))
            .collect();
        let rows = rows();
        assert_eq!(
            listed.len(),
            rows.len(),
            "docs/writers.md: one row per writer"
        );
        for (line, row) in listed.iter().zip(&rows) {
            assert!(
                line.starts_with(row),
                "docs/writers.md: want a row starting\n{row}\ngot\n{line}"
            );
        }
    }

    #[test]
    fn a_denial_names_the_writer_to_enable() {
        let keda = [ClusterWriter {
            name: "keda".to_owned(),
            namespace: None,
        }];
        #[rustfmt::skip]
        let rows: [(&str, &[ClusterWriter], Option<&str>); 5] = [
            ("system:serviceaccount:keda:keda-operator", &[], Some("keda")),
            ("system:serviceaccount:keda:keda-operator", &keda, None),
            ("system:serviceaccount:autoscaling:keda-operator", &[], None),
            ("system:serviceaccount:crossplane-system:provider-aws-s3-a1b2c3", &[], Some("crossplane")),
            ("keda-operator", &[], None),
        ];
        for (user, enabled, expected) in rows {
            assert_eq!(not_enabled(user, enabled), expected, "{user}");
        }
    }

    /// Every writer's identities are settings the policy accepts, and name grants that exist.
    #[test]
    fn every_writer_expands_to_valid_settings() {
        const OWNERS: &str = r#"{"owners": ["*"], "users": ["installer"]}"#;
        for writer in &WRITERS {
            let json = format!(
                r#"{{"writes": "Owner", "identities": [{OWNERS}],
                    "clusterWriters": [{{"name": "{}"}}]}}"#,
                writer.name
            );
            let settings = Settings::from_json(json.as_bytes()).unwrap();
            assert_eq!(settings.validate(), Ok(()), "{}", writer.name);
            assert_eq!(settings.identities.len(), 1 + writer.bindings.len());
        }
        let moved = format!(
            r#"{{"identities": [{OWNERS}],
                "clusterWriters": [{{"name": "velero", "namespace": "backup"}}]}}"#
        );
        let moved = Settings::from_json(moved.as_bytes()).unwrap();
        assert_eq!(
            moved.identities[1].users,
            ["system:serviceaccount:backup:velero"]
        );
    }

    /// Settings without identities tell no requester apart: a writer adds only the kinds it
    /// derives from, and `writes: Owner` still needs identities of the settings' own.
    #[test]
    fn without_identities_a_writer_is_only_followed() {
        let settings = Settings::from_json(br#"{"clusterWriters": [{"name": "keda"}]}"#).unwrap();
        assert_eq!(settings.identities, []);
        let followed: Vec<&str> = (settings.parent_kinds.iter())
            .map(|parent| parent.kind.as_str())
            .collect();
        assert_eq!(followed, ["ScaledObject", "ScaledJob"]);
        let refused = |json: &[u8]| Settings::from_json(json).unwrap().validate();
        assert_eq!(
            refused(br#"{"writes": "Owner", "clusterWriters": [{"name": "keda"}]}"#),
            refused(br#"{"writes": "Owner"}"#)
        );
    }
}
