//! Who the trusted control plane is, restated from Kubernetes' bootstrap RBAC roles
//! (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy/controller_policy.go` and `policy.go`) for
//! the resources the properties write, and from the settings' `trustedWriters`. A write is
//! trusted when its requester is one of these writers, on a resource and with a verb its role
//! grants; the policy's own table is never asked.

use crate::model::TrustedWriter;
use crate::oracle::{glob, vouched};

pub(crate) const KUBE_SYSTEM_ACCOUNT: &str = "system:serviceaccount:kube-system:";
pub(crate) const KUBE_SYSTEM_GROUP: &str = "system:serviceaccounts:kube-system";
pub(crate) const CONTROLLER_MANAGER: &str = "system:kube-controller-manager";
pub(crate) const SCHEDULER: &str = "system:kube-scheduler";
pub(crate) const NODE: &str = "system:node:";
pub(crate) const NODES_GROUP: &str = "system:nodes";

/// A write verb, as RBAC's create, update/patch and delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    Create,
    Update,
    Delete,
}

impl Verb {
    pub(crate) const ALL: [Verb; 3] = [Verb::Create, Verb::Update, Verb::Delete];

    /// The operation, as admission and `trustedWriters` name it.
    fn operation(self) -> &'static str {
        match self {
            Verb::Create => "CREATE",
            Verb::Update => "UPDATE",
            Verb::Delete => "DELETE",
        }
    }
}

/// A write: who, on which resource (`resource[.group][/subresource]`), with which verb,
/// and whether the stored object's deletion has begun.
#[derive(Debug, Clone)]
pub(crate) struct Write {
    pub(crate) user: String,
    pub(crate) groups: Vec<String>,
    pub(crate) resource: String,
    pub(crate) verb: Verb,
    pub(crate) terminating: bool,
}

/// Resources (`*` for all, subresources included) and the verbs granted on them.
type Grants = &'static [(&'static [&'static str], &'static [Verb])];

use Verb::{Create as C, Delete as D, Update as U};

/// Controllers of kube-controller-manager, as their service accounts in kube-system: what
/// their roles `system:controller:<name>` grant on the resources the properties write
/// (ConfigMaps, Secrets, Pods, Deployments, StatefulSets, Jobs, CronJobs, EndpointSlices,
/// PersistentVolumeClaims, CustomResourceDefinitions, Namespaces, Integrations, and their
/// `status`), every grant on those listed. The generators name no other controller: the
/// policy would trust it where this oracle does not.
pub(crate) const CONTROLLERS: &[(&str, Grants)] = &[
    ("generic-garbage-collector", &[(&["*"], &[U, D])]),
    (
        "namespace-controller",
        &[(&["*"], &[D]), (&["namespaces/status"], &[U])],
    ),
    (
        "endpointslice-controller",
        &[(&["endpointslices.discovery.k8s.io"], &[C, U, D])],
    ),
    (
        "deployment-controller",
        &[(
            &["deployments.apps", "deployments.apps/status", "pods"],
            &[U],
        )],
    ),
    ("replicaset-controller", &[(&["pods"], &[C, U, D])]),
    (
        "statefulset-controller",
        &[
            (&["statefulsets.apps/status"], &[U]),
            (&["pods", "persistentvolumeclaims"], &[C, U, D]),
        ],
    ),
    (
        "job-controller",
        &[
            (&["jobs.batch", "jobs.batch/status"], &[U]),
            (&["pods"], &[C, U, D]),
        ],
    ),
    (
        "cronjob-controller",
        &[
            (&["cronjobs.batch", "cronjobs.batch/status"], &[U]),
            (&["jobs.batch"], &[C, U, D]),
            (&["pods"], &[D]),
        ],
    ),
    ("root-ca-cert-publisher", &[(&["configmaps"], &[C, U])]),
    (
        "pod-garbage-collector",
        &[(&["pods"], &[D]), (&["pods/status"], &[U])],
    ),
    (
        "legacy-service-account-token-cleaner",
        &[(&["secrets"], &[U, D])],
    ),
    (
        "pvc-protection-controller",
        &[(
            &["persistentvolumeclaims", "persistentvolumeclaims/status"],
            &[U],
        )],
    ),
];

/// `system:kube-controller-manager`: every controller's grants (the garbage collector's
/// `*` makes them every UPDATE and DELETE; the controllers create ConfigMaps, Pods, Jobs,
/// EndpointSlices and claims), and its own role's Secrets.
const CONTROLLER_MANAGER_GRANTS: Grants = &[
    (&["*"], &[U, D]),
    (
        &[
            "configmaps",
            "pods",
            "jobs.batch",
            "endpointslices.discovery.k8s.io",
            "persistentvolumeclaims",
            "secrets",
        ],
        &[C],
    ),
];

/// `system:kube-scheduler` (roles `system:kube-scheduler`, `system:volume-scheduler`).
const SCHEDULER_GRANTS: Grants = &[
    (&["pods"], &[D]),
    (&["pods/status", "persistentvolumeclaims"], &[U]),
];

fn granted(grants: Grants, write: &Write) -> bool {
    grants.iter().any(|(resources, verbs)| {
        verbs.contains(&write.verb)
            && (resources.iter()).any(|resource| *resource == "*" || *resource == write.resource)
    })
}

/// Whether a trusted writer makes this write, on a resource and with a verb it is trusted
/// with: a controller's service account in the group of kube-system's service accounts;
/// the controller manager; the scheduler; a kubelet (`system:node:<non-empty>` in
/// `system:nodes`) deleting a Pod whose deletion has begun; a writer of the settings.
pub(crate) fn trusts(write: &Write, settings: &[TrustedWriter]) -> bool {
    let user = write.user.as_str();
    let in_group = |group: &str| write.groups.iter().any(|have| have == group);
    let controller = (user.strip_prefix(KUBE_SYSTEM_ACCOUNT))
        .and_then(|name| CONTROLLERS.iter().find(|(known, _)| *known == name))
        .is_some_and(|(_, grants)| in_group(KUBE_SYSTEM_GROUP) && granted(grants, write));
    let manager = user == CONTROLLER_MANAGER && granted(CONTROLLER_MANAGER_GRANTS, write);
    let scheduler = user == SCHEDULER && granted(SCHEDULER_GRANTS, write);
    let kubelet = user.strip_prefix(NODE).is_some_and(|node| !node.is_empty())
        && in_group(NODES_GROUP)
        && write.resource == "pods"
        && write.verb == Verb::Delete
        && write.terminating;
    let added = settings.iter().any(|writer| {
        writer.users.iter().any(|pattern| glob(pattern, user))
            && vouched(user, &write.groups)
            && writer.operations.contains(&write.verb.operation())
            && (writer.resources.iter())
                .any(|resource| *resource == "*" || *resource == write.resource)
    });
    controller || manager || scheduler || kubelet || added
}
