//! The trusted control plane: the writers that Kubernetes itself runs, trusted to copy and
//! follow owner marks on what they write.
//!
//! Most writes in a cluster come from the cluster itself: the EndpointSlice controller copies a
//! Service's labels onto its slices, the workload controllers copy a template's labels onto
//! ReplicaSets, Pods and claims, the garbage collector and the namespace controller delete what
//! their owners left, kubelets finish Pods' deletions. These writers copy marks verbatim, valid
//! or not, and follow a parent's owner when it moves; judging them as people would deny them
//! and take the cluster down. So a trusted writer's request on a resource it writes is allowed
//! before any rule is applied, without a warning or an audit annotation: only the API server's
//! audit log records it.
//!
//! Trust is as narrow as Kubernetes allows:
//! - each kube-controller-manager controller, as its service account in kube-system (in the group
//!   `system:serviceaccounts:kube-system` that service account tokens carry), for the resources
//!   and operations its ClusterRole grants (`upstream`);
//! - `system:kube-controller-manager`, the user all controllers run as without
//!   `--use-service-account-credentials`, for what any controller is trusted with;
//! - `system:kube-scheduler` for what the scheduler writes (preemption deletes Pods);
//! - a kubelet, `system:node:<name>` in the group `system:nodes` (the Node authorizer's test,
//!   `NodeIdentity` in `pkg/auth/nodeidentifier/default.go`), only to DELETE a Pod whose
//!   deletion has begun — it force-deletes it once its containers stopped. A kubelet's status
//!   writes that keep the marks are not judged for anyone; one that relabels a Pod is judged;
//! - the settings' `trustedWriters`, a distribution's own controllers.
//!
//! Since a copy is only as good as its source, the templates these controllers copy are judged
//! where they are written (`crate::template`).

mod upstream;

use serde::Deserialize;

use crate::dns::{is_dns_label, is_dns_subdomain};
use crate::identity;
use crate::request::{AdmissionRequest, Object, Operation};

/// The user name prefix of the service accounts in kube-system.
pub const KUBE_SYSTEM_PREFIX: &str = "system:serviceaccount:kube-system:";
/// The group of every service account token of kube-system.
pub const KUBE_SYSTEM_GROUP: &str = "system:serviceaccounts:kube-system";
/// The user kube-controller-manager's controllers run as without their own service accounts.
pub const CONTROLLER_MANAGER: &str = "system:kube-controller-manager";
/// The scheduler's user.
pub const SCHEDULER: &str = "system:kube-scheduler";
/// The user name prefix of kubelets, and their group.
pub use crate::identity::{NODE_PREFIX, NODES_GROUP};

/// A writer the settings add to the trusted control plane, such as a distribution's controller.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustedWriter {
    /// User names, exact or with `*` wildcards that reach no service account of kube-system.
    pub users: Vec<String>,
    /// The resources it writes: `resource` (core group), `resource.group`, with `/subresource`
    /// for a subresource, or `*` for every resource.
    pub resources: Vec<String>,
    /// The operations it makes on them: CREATE, UPDATE, DELETE.
    pub operations: Vec<Operation>,
}

/// Who a trust rule names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer<'s> {
    /// `system:serviceaccount:kube-system:<name>`, in the group `system:serviceaccounts:kube-system`.
    KubeSystemServiceAccount(&'s str),
    /// A user name, exactly.
    User(&'s str),
    /// User names matching a pattern with `*` wildcards.
    Users(&'s str),
    /// Any kubelet: `system:node:<name>` in the group `system:nodes`.
    Node,
}

/// The resources of a trust rule: Kubernetes' table or the settings'.
#[derive(Debug, Clone, Copy)]
pub enum Resources<'s> {
    /// From Kubernetes' table (`upstream`).
    Upstream(&'static [&'static str]),
    /// From the settings.
    Settings(&'s [String]),
}

/// One trust rule: a writer, the resources and operations it is trusted with.
#[derive(Debug, Clone, Copy)]
pub struct Trust<'s> {
    /// Who.
    pub writer: Writer<'s>,
    /// On which resources (`*` for all).
    pub resources: Resources<'s>,
    /// Which operations.
    pub operations: &'s [Operation],
    /// Only on objects whose deletion has begun.
    pub terminating_only: bool,
}

impl<'s> Resources<'s> {
    /// The resources, as written: `resource[.group][/subresource]` or `*`.
    pub fn iter(&self) -> impl Iterator<Item = &'s str> + use<'s> {
        let (upstream, settings) = match *self {
            Resources::Upstream(list) => (list, &[][..]),
            Resources::Settings(list) => (&[][..], list),
        };
        upstream
            .iter()
            .copied()
            .chain(settings.iter().map(String::as_str))
    }
}

/// Every trust rule: Kubernetes' own control plane, then the settings' additions.
pub fn rules(additions: &[TrustedWriter]) -> impl Iterator<Item = Trust<'_>> {
    select(None, additions)
}

/// The rules: all of them, or, for a user name, those whose writer may be that user — picked by
/// the name alone, so that a request walks only its writer's grants. Every rule that can cover
/// a request of `user` is among them (a writer is an exact name, or a prefix for kubelets).
fn select<'s>(
    user: Option<&'s str>,
    additions: &'s [TrustedWriter],
) -> impl Iterator<Item = Trust<'s>> {
    let named = move |name: &str| user.is_none_or(|user| user == name);
    let account = user.and_then(|user| user.strip_prefix(KUBE_SYSTEM_PREFIX));
    let all_controllers = named(CONTROLLER_MANAGER);
    let controllers = upstream::CONTROLLERS
        .iter()
        .filter(move |(name, _)| all_controllers || account == Some(*name))
        .flat_map(|(account, grants)| {
            grants.iter().flat_map(move |(resources, operations)| {
                let trust = move |writer| Trust {
                    writer,
                    resources: Resources::Upstream(resources),
                    operations,
                    terminating_only: false,
                };
                [
                    trust(Writer::KubeSystemServiceAccount(account)),
                    trust(Writer::User(CONTROLLER_MANAGER)),
                ]
            })
        });
    let user_grants = move |name: &'static str, grants: &'static [upstream::Grant]| {
        let grants = if named(name) { grants } else { &[] };
        grants.iter().map(move |(resources, operations)| Trust {
            writer: Writer::User(name),
            resources: Resources::Upstream(resources),
            operations,
            terminating_only: false,
        })
    };
    let scheduler = user_grants(SCHEDULER, upstream::SCHEDULER);
    let controller_manager = user_grants(CONTROLLER_MANAGER, upstream::CONTROLLER_MANAGER);
    let kubelet = user
        .is_none_or(|user| user.starts_with(NODE_PREFIX))
        .then_some(Trust {
            writer: Writer::Node,
            resources: Resources::Upstream(&["pods"]),
            operations: &[Operation::Delete],
            terminating_only: true,
        });
    let settings = additions.iter().flat_map(|writer| {
        writer.users.iter().map(|user| Trust {
            writer: if user.contains('*') {
                Writer::Users(user)
            } else {
                Writer::User(user)
            },
            resources: Resources::Settings(&writer.resources),
            operations: &writer.operations,
            terminating_only: false,
        })
    });
    controllers
        .chain(controller_manager)
        .chain(scheduler)
        .chain(kubelet)
        .chain(settings)
}

/// The prefix of every user name of Kubernetes' own control plane.
const SYSTEM_PREFIX: &str = "system:";

/// Whether a trusted writer makes this request, on a resource and with an operation it is
/// trusted with. `old` is the stored object, if any. An audit replay names no writer.
pub fn trusts(
    request: &AdmissionRequest<'_>,
    old: Option<&Object<'_>>,
    additions: &[TrustedWriter],
) -> bool {
    // Most requests are people's and installers': only Kubernetes' names, or additions, are
    // worth the walk through the table.
    if additions.is_empty() && !request.user_info.username.starts_with(SYSTEM_PREFIX) {
        return false;
    }
    select(Some(&request.user_info.username), additions).any(|trust| trust.covers(request, old))
}

impl Trust<'_> {
    /// Whether this rule covers the request.
    pub fn covers(&self, request: &AdmissionRequest<'_>, old: Option<&Object<'_>>) -> bool {
        self.writer.is(request)
            && self.operations.contains(&request.operation)
            && self
                .resources
                .iter()
                .any(|resource| names(resource, request))
            && (!self.terminating_only
                || old.is_some_and(|old| old.metadata.deletion_timestamp.is_some()))
    }
}

impl Writer<'_> {
    /// Whether the requester is this writer.
    fn is(&self, request: &AdmissionRequest<'_>) -> bool {
        let user = &request.user_info;
        let in_group = |group: &str| user.groups.iter().any(|g| **g == *group);
        match *self {
            Writer::KubeSystemServiceAccount(account) => {
                user.username.strip_prefix(KUBE_SYSTEM_PREFIX) == Some(account)
                    && in_group(KUBE_SYSTEM_GROUP)
            }
            Writer::User(name) => *user.username == *name && identity::vouched(user),
            Writer::Users(pattern) => {
                identity::matches(pattern, &user.username) && identity::vouched(user)
            }
            Writer::Node => {
                user.username
                    .strip_prefix(NODE_PREFIX)
                    .is_some_and(|node| !node.is_empty())
                    && in_group(NODES_GROUP)
            }
        }
    }
}

/// The groups a requester whose name `pattern` (`*` wildcards) matches must carry for the
/// policy to take the name as given ([`identity::vouched`]): a service account's, its namespace
/// named literally, and a node's; none for other names. `None` when they depend on what a `*`
/// stands for (`system:serviceaccount:openshift-*:service-ca`, `system:*`).
pub fn vouching_groups(pattern: &str) -> Option<Vec<String>> {
    let literal = pattern.split('*').next().unwrap_or_default();
    let account = identity::SERVICE_ACCOUNT_PREFIX;
    if let Some(rest) = literal.strip_prefix(account) {
        let (namespace, _) = rest.split_once(':')?;
        let group = identity::SERVICE_ACCOUNTS_GROUP;
        return Some(vec![group.to_owned(), format!("{group}:{namespace}")]);
    }
    if literal.starts_with(NODE_PREFIX) {
        return Some(vec![NODES_GROUP.to_owned()]);
    }
    let reaches = |prefix: &str| prefix.starts_with(literal) && literal.len() < pattern.len();
    match reaches(account) || reaches(NODE_PREFIX) {
        true => None,
        false => Some(Vec::new()),
    }
}

/// The parts of a resource as a trust rule writes it: `(group, resource, subresource)`;
/// `None` for `*`.
pub fn parts(resource: &str) -> Option<(&str, &str, &str)> {
    if resource == "*" {
        return None;
    }
    let (name, subresource) = resource.split_once('/').unwrap_or((resource, ""));
    let (name, group) = name.split_once('.').unwrap_or((name, ""));
    Some((group, name, subresource))
}

/// Whether a rule's resource names the request's resource; `*/scale`, in Kubernetes' table,
/// names the scale subresource of every resource.
fn names(resource: &str, request: &AdmissionRequest<'_>) -> bool {
    parts(resource).is_none_or(|(group, name, subresource)| {
        let any = name == "*";
        let named = *request.resource.group == *group && *request.resource.resource == *name;
        (any || named) && *request.sub_resource == *subresource
    })
}

/// Whether a user pattern with wildcards may match a service account of kube-system that it
/// does not name literally.
pub(crate) fn reaches_kube_system(pattern: &str) -> bool {
    let Some((literal, _)) = pattern.split_once('*') else {
        return false;
    };
    literal.starts_with(KUBE_SYSTEM_PREFIX) || KUBE_SYSTEM_PREFIX.starts_with(literal)
}

/// `*`, or `resource[.group][/subresource]`: the resource and the subresource DNS labels, as
/// Kubernetes names them, the group a DNS subdomain.
pub(crate) fn is_resource(resource: &str) -> bool {
    let Some((group, name, subresource)) = parts(resource) else {
        return true;
    };
    is_dns_label(name)
        && (group.is_empty() || is_dns_subdomain(group))
        && (subresource.is_empty() || is_dns_label(subresource))
        && !resource.ends_with('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(json: &str) -> AdmissionRequest<'_> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn kubernetes_table_names_each_controller_once_with_resources_it_can_write() {
        let mut accounts: Vec<&str> = upstream::CONTROLLERS.iter().map(|(a, _)| *a).collect();
        let count = accounts.len();
        accounts.sort_unstable();
        accounts.dedup();
        assert_eq!(accounts.len(), count, "a controller listed twice");
        assert!(count >= 40, "{count} controllers");
        for trust in rules(&[]) {
            assert!(!trust.operations.is_empty());
            assert!(!trust.operations.contains(&Operation::Connect));
            for resource in trust.resources.iter() {
                // `*/scale`: every resource's scale subresource (horizontal-pod-autoscaler).
                assert!(is_resource(resource) || resource == "*/scale", "{resource}");
            }
        }
    }

    #[test]
    fn a_rule_covers_its_writer_resources_and_operations_only() {
        let gc = r#""system:serviceaccount:kube-system:generic-garbage-collector""#;
        let sa_groups = r#"["system:serviceaccounts", "system:serviceaccounts:kube-system"]"#;
        let write = |user: &str, groups: &str, group: &str, resource: &str, sub: &str, op: &str| {
            format!(
                r#"{{"kind": {{}}, "operation": "{op}", "userInfo": {{"username": {user}, "groups": {groups}}},
                    "resource": {{"group": "{group}", "resource": "{resource}"}}, "subResource": "{sub}"}}"#
            )
        };
        let slices = r#""system:serviceaccount:kube-system:endpointslice-controller""#;
        let node = r#""system:node:n1""#;
        let additions = [TrustedWriter {
            users: vec!["system:k3s-controller".to_owned()],
            resources: vec!["helmcharts.helm.cattle.io".to_owned()],
            operations: vec![Operation::Update],
        }];
        #[rustfmt::skip]
        let rows = [
            (write(gc, sa_groups, "apps", "deployments", "", "DELETE"), true),
            (write(gc, "[]", "apps", "deployments", "", "DELETE"), false),
            (write(slices, sa_groups, "discovery.k8s.io", "endpointslices", "", "UPDATE"), true),
            (write(slices, sa_groups, "apps", "deployments", "", "UPDATE"), false),
            (write(slices, sa_groups, "discovery.k8s.io", "endpointslices", "status", "UPDATE"), false),
            (write(r#""system:kube-controller-manager""#, "[]", "discovery.k8s.io", "endpointslices", "", "CREATE"), true),
            (write(r#""system:kube-scheduler""#, "[]", "", "pods", "", "DELETE"), true),
            (write(r#""system:kube-scheduler""#, "[]", "apps", "deployments", "", "DELETE"), false),
            // a kubelet is trusted with terminating Pods only: none here
            (write(node, r#"["system:nodes"]"#, "", "pods", "", "DELETE"), false),
            (write(r#""system:k3s-controller""#, "[]", "helm.cattle.io", "helmcharts", "", "UPDATE"), true),
            (write(r#""system:k3s-controller""#, "[]", "helm.cattle.io", "helmcharts", "", "DELETE"), false),
        ];
        for (json, trusted) in rows {
            assert_eq!(trusts(&request(&json), None, &additions), trusted, "{json}");
        }
        let terminating: Object =
            serde_json::from_str(r#"{"metadata": {"deletionTimestamp": "2026-12-01T10:00:00Z"}}"#)
                .unwrap();
        let kubelet = write(node, r#"["system:nodes"]"#, "", "pods", "", "DELETE");
        assert!(trusts(&request(&kubelet), Some(&terminating), &[]));
        let no_group = write(node, "[]", "", "pods", "", "DELETE");
        assert!(!trusts(&request(&no_group), Some(&terminating), &[]));
        let no_name = write(
            r#""system:node:""#,
            r#"["system:nodes"]"#,
            "",
            "pods",
            "",
            "DELETE",
        );
        assert!(!trusts(&request(&no_name), Some(&terminating), &[]));
    }

    #[test]
    fn a_request_walks_only_its_writers_rules_and_misses_none() {
        let additions = [TrustedWriter {
            users: vec![
                "system:k3s-*".to_owned(),
                "system:kube-scheduler".to_owned(),
            ],
            resources: vec!["*".to_owned()],
            operations: vec![Operation::Delete],
        }];
        let kube_system = format!(r#"["{KUBE_SYSTEM_GROUP}", "{NODES_GROUP}"]"#);
        let mut users: Vec<String> = upstream::CONTROLLERS
            .iter()
            .map(|(account, _)| format!("{KUBE_SYSTEM_PREFIX}{account}"))
            .collect();
        users.extend(
            [
                CONTROLLER_MANAGER,
                SCHEDULER,
                "system:node:n1",
                "system:k3s-controller",
                "alice",
            ]
            .map(str::to_owned),
        );
        let terminating: Object =
            serde_json::from_str(r#"{"metadata": {"deletionTimestamp": "2026-12-01T10:00:00Z"}}"#)
                .unwrap();
        let mut trusted = 0;
        let resources: std::collections::BTreeSet<&str> = rules(&additions)
            .flat_map(|trust| trust.resources.iter().collect::<Vec<_>>())
            .collect();
        for user in &users {
            for resource in &resources {
                let (group, name, subresource) = parts(resource).unwrap_or(("", "pods", ""));
                for operation in ["CREATE", "UPDATE", "DELETE"] {
                    let json = format!(
                        r#"{{"kind": {{}}, "operation": "{operation}",
                                "userInfo": {{"username": "{user}", "groups": {kube_system}}},
                                "resource": {{"group": "{group}", "resource": "{name}"}},
                                "subResource": "{subresource}"}}"#
                    );
                    let request = request(&json);
                    let every = rules(&additions).any(|t| t.covers(&request, Some(&terminating)));
                    assert_eq!(
                        trusts(&request, Some(&terminating), &additions),
                        every,
                        "{json}"
                    );
                    trusted += usize::from(every);
                }
            }
        }
        assert!(trusted > 1000, "{trusted}");
    }

    /// The table walk is skipped for a requester outside `system:` (when the settings add no
    /// writers): every writer of Kubernetes' table must have a `system:` name, and a service
    /// account's name must be one Kubernetes gives.
    #[test]
    fn every_writer_of_kubernetes_has_a_system_name() {
        for trust in rules(&[]) {
            let name = match trust.writer {
                Writer::KubeSystemServiceAccount(name) => {
                    assert!(crate::dns::is_dns_subdomain(name), "{name}");
                    format!("{KUBE_SYSTEM_PREFIX}{name}")
                }
                Writer::User(name) | Writer::Users(name) => name.to_owned(),
                Writer::Node => format!("{NODE_PREFIX}node-1"),
            };
            assert!(name.starts_with(SYSTEM_PREFIX), "{name}");
        }
    }

    #[test]
    fn user_patterns_that_reach_kube_system_are_refused() {
        #[rustfmt::skip]
        let rows = [
            ("system:serviceaccount:kube-system:cloud-node-manager", false),
            ("system:serviceaccount:openshift-*:*", false),
            ("system:k3s-controller", false),
            ("system:serviceaccount:kube-system:*", true),
            ("system:serviceaccount:kube-system:cloud-*", true),
            ("system:serviceaccount:*:service-ca", true),
            ("system:*", true),
            ("*", true),
        ];
        for (pattern, refused) in rows {
            assert_eq!(reaches_kube_system(pattern), refused, "{pattern}");
        }
    }
}
