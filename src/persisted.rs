//! What a write through a subresource persists of the metadata an owner declares: labels,
//! annotations, finalizers and ownerReferences. Each resource's registry strategy decides, in
//! its subresource's `PrepareForUpdate`, what it copies back from the stored object; the rest
//! of the new object's metadata is stored (kube-apiserver, `pkg/registry/<group>/<resource>/
//! strategy.go`; kubernetes/kubernetes' `test/integration/apiserver/apidefinitions/
//! fields_wiping_test.go` lists the `/status` endpoints that keep metadata changes). A
//! validating webhook sees the object after `PrepareForUpdate`, a mutating one before it: read
//! from this table, what is judged is what persists, under either registration.
//!
//! | subresource | persists | strategy |
//! |---|---|---|
//! | `deployments/status` | annotations, finalizers, ownerReferences | `deploymentStatusStrategy` resets spec and labels |
//! | `pods/status` | labels, annotations, finalizers | `podStatusStrategy` resets spec and ownerReferences |
//! | the `status` of StatefulSets, DaemonSets, ReplicaSets, Jobs, CronJobs, Services, Namespaces, Nodes, PersistentVolumes and their claims, ReplicationControllers, ResourceQuotas, HorizontalPodAutoscalers, PodDisruptionBudgets, Ingresses, CertificateSigningRequests; `certificatesigningrequests/approval`; `namespaces/finalize` | all four | each resets its spec (or status) alone |
//! | `customresourcedefinitions/status` | all four | `ResetObjectMetaForStatus(&newObj.ObjectMeta, &newObj.ObjectMeta)` resets nothing (kubernetes#137681) |
//! | a custom resource's `status`, and every other subresource | none | `ResetObjectMetaForStatus` or a copy of the stored object (apiextensions-apiserver `customresource/status_strategy.go`) |

use crate::edit;
use crate::request::Metadata;

/// The metadata a subresource write persists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Persisted {
    pub labels: bool,
    pub annotations: bool,
    pub finalizers: bool,
    pub owner_references: bool,
}

/// All four.
pub const ALL: Persisted = Persisted {
    labels: true,
    annotations: true,
    finalizers: true,
    owner_references: true,
};

/// All but the labels: a Deployment's status strategy resets them.
const ALL_BUT_LABELS: Persisted = Persisted {
    labels: false,
    ..ALL
};

/// All but the ownerReferences: a Pod's status strategy resets them.
const ALL_BUT_OWNER_REFERENCES: Persisted = Persisted {
    owner_references: false,
    ..ALL
};

/// None of them.
const NONE: Persisted = Persisted {
    labels: false,
    annotations: false,
    finalizers: false,
    owner_references: false,
};

/// The ownerReferences alone: what a repoint changes (`crate::derivation::repoint_rule`).
pub const OWNER_REFERENCES: Persisted = Persisted {
    owner_references: true,
    ..NONE
};

impl Persisted {
    /// What both persist.
    pub fn and(self, other: Persisted) -> Persisted {
        Persisted {
            labels: self.labels && other.labels,
            annotations: self.annotations && other.annotations,
            finalizers: self.finalizers && other.finalizers,
            owner_references: self.owner_references && other.owner_references,
        }
    }
}

/// The subresources whose writes persist metadata, as `(group, resource, subresource,
/// persisted)`.
pub const PERSISTING: [(&str, &str, &str, Persisted); 21] = [
    ("apps", "deployments", "status", ALL_BUT_LABELS),
    ("apps", "statefulsets", "status", ALL),
    ("apps", "daemonsets", "status", ALL),
    ("apps", "replicasets", "status", ALL),
    ("batch", "jobs", "status", ALL),
    ("batch", "cronjobs", "status", ALL),
    ("", "pods", "status", ALL_BUT_OWNER_REFERENCES),
    ("", "services", "status", ALL),
    ("", "namespaces", "status", ALL),
    ("", "namespaces", "finalize", ALL),
    ("", "nodes", "status", ALL),
    ("", "persistentvolumes", "status", ALL),
    ("", "persistentvolumeclaims", "status", ALL),
    ("", "replicationcontrollers", "status", ALL),
    ("", "resourcequotas", "status", ALL),
    ("autoscaling", "horizontalpodautoscalers", "status", ALL),
    ("policy", "poddisruptionbudgets", "status", ALL),
    ("networking.k8s.io", "ingresses", "status", ALL),
    (
        "certificates.k8s.io",
        "certificatesigningrequests",
        "status",
        ALL,
    ),
    (
        "certificates.k8s.io",
        "certificatesigningrequests",
        "approval",
        ALL,
    ),
    (
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "status",
        ALL,
    ),
];

/// What a write through `subresource` of `resource` in `group` persists of the metadata.
pub fn by(group: &str, resource: &str, subresource: &str) -> Persisted {
    PERSISTING
        .iter()
        .find(|row| (row.0, row.1, row.2) == (group, resource, subresource))
        .map_or(NONE, |row| row.3)
}

/// Whether `new` differs from `old` in metadata a write that persists `persisted` stores.
pub fn changes(persisted: Persisted, old: &Metadata<'_>, new: &Metadata<'_>) -> bool {
    (persisted.labels && old.labels != new.labels)
        || (persisted.annotations && !edit::same_annotations(old, new))
        || (persisted.finalizers && old.finalizers != new.finalizers)
        || (persisted.owner_references
            && old.owner_references_text() != new.owner_references_text())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Object;

    fn metadata(json: &str) -> Object<'_> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn what_each_subresource_persists() {
        #[rustfmt::skip]
        let rows = [
            ("apps", "deployments", "status", ALL_BUT_LABELS),
            ("", "pods", "status", ALL_BUT_OWNER_REFERENCES),
            ("apps", "statefulsets", "status", ALL),
            ("", "namespaces", "finalize", ALL),
            ("apiextensions.k8s.io", "customresourcedefinitions", "status", ALL),
            // a custom resource's status, and the subresources that reset all metadata
            ("camel.apache.org", "integrations", "status", NONE),
            ("", "pods", "ephemeralcontainers", NONE),
            ("", "pods", "resize", NONE),
            ("admissionregistration.k8s.io", "validatingadmissionpolicies", "status", NONE),
            // a resource of another group of the same name
            ("example.com", "deployments", "status", NONE),
            ("apps", "deployments", "scale", NONE),
        ];
        for (group, resource, subresource, expected) in rows {
            assert_eq!(
                by(group, resource, subresource),
                expected,
                "{group}/{resource}/{subresource}"
            );
        }
    }

    #[test]
    fn a_change_counts_only_where_it_persists() {
        let stored = r#"{"metadata": {"name": "x", "labels": {"a": "1"},
            "annotations": {"n": "1"}, "finalizers": ["f"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "p", "uid": "u"}],
            "resourceVersion": "1"}, "status": {"s": 1}}"#;
        #[rustfmt::skip]
        let rows = [
            // the status and the fields the API server maintains are not the owner's
            (r#"{"metadata": {"name": "x", "labels": {"a": "1"}, "annotations": {"n": "1"}, "finalizers": ["f"],
                "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "p", "uid": "u"}],
                "resourceVersion": "2"}, "status": {"s": 2}}"#, ALL, false),
            (r#"{"metadata": {"name": "x", "labels": {"a": "2"}, "annotations": {"n": "1"}, "finalizers": ["f"],
                "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "p", "uid": "u"}]}}"#, ALL, true),
            (r#"{"metadata": {"name": "x", "labels": {"a": "2"}, "annotations": {"n": "1"}, "finalizers": ["f"],
                "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "p", "uid": "u"}]}}"#, ALL_BUT_LABELS, false),
            (r#"{"metadata": {"name": "x", "labels": {"a": "1"}, "annotations": {"n": "2"}, "finalizers": ["f"],
                "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "p", "uid": "u"}]}}"#, ALL_BUT_LABELS, true),
            (r#"{"metadata": {"name": "x", "labels": {"a": "1"}, "annotations": {"n": "1"},
                "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "p", "uid": "u"}]}}"#, ALL, true),
            (r#"{"metadata": {"name": "x", "labels": {"a": "1"}, "annotations": {"n": "1"}, "finalizers": ["f"]}}"#,
                ALL, true),
            (r#"{"metadata": {"name": "x", "labels": {"a": "1"}, "annotations": {"n": "1"}, "finalizers": ["f"]}}"#,
                ALL_BUT_OWNER_REFERENCES, false),
            (r#"{"metadata": {"name": "y"}}"#, NONE, false),
        ];
        let old = metadata(stored);
        for (new, persisted, expected) in rows {
            let new = metadata(new);
            assert_eq!(
                changes(persisted, &old.metadata, &new.metadata),
                expected,
                "{new:?} under {persisted:?}"
            );
        }
    }
}
