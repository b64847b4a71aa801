//! Scope rules: which owners may own an object, given where the object lives.
//!
//! | object            | cluster-kind owner | namespaced-kind owner        | opaque id, `<namespace>/<name>` |
//! |-------------------|--------------------|------------------------------|---------------------------------|
//! | cluster-scoped    | allow              | deny                         | allow                           |
//! | in namespace `ns` | allow              | allow only if its ns is `ns` | allow                           |
//!
//! A `<namespace>/<name>` owner (a Helm release, a Flux Kustomization) installs cluster-scoped
//! objects and objects in other namespaces than its own, so no scope rule applies to it.

use std::fmt;

use crate::owner::Owner;
use crate::request::ObjectScope;

/// Why an owner may not own an object where it lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeViolation<'a> {
    /// A namespaced-kind owner claims a cluster-scoped object.
    ClusterScopedObject { owner_kind: &'a str },
    /// A namespaced-kind owner claims an object in another namespace.
    OtherNamespace {
        owner_kind: &'a str,
        owner_namespace: &'a str,
        object_namespace: &'a str,
    },
}

/// Checks that `owner` may own an object in `scope`.
pub fn check<'a>(owner: &Owner<'a>, scope: ObjectScope<'a>) -> Result<(), ScopeViolation<'a>> {
    match (*owner, scope) {
        (Owner::Cluster { .. } | Owner::Opaque { .. } | Owner::Pair { .. }, _) => Ok(()),
        (Owner::Namespaced { kind, .. }, ObjectScope::Cluster) => {
            Err(ScopeViolation::ClusterScopedObject { owner_kind: kind })
        }
        (
            Owner::Namespaced {
                kind, namespace, ..
            },
            ObjectScope::Namespace(object_namespace),
        ) => {
            if namespace == object_namespace {
                Ok(())
            } else {
                Err(ScopeViolation::OtherNamespace {
                    owner_kind: kind,
                    owner_namespace: namespace,
                    object_namespace,
                })
            }
        }
    }
}

impl fmt::Display for ScopeViolation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScopeViolation::ClusterScopedObject { owner_kind } => write!(
                f,
                "a cluster-scoped object can only be owned by a cluster-level kind, \
                 and {owner_kind} is confined to its namespace; use a cluster-level owner"
            ),
            ScopeViolation::OtherNamespace {
                owner_kind,
                owner_namespace,
                object_namespace,
            } => write!(
                f,
                "{owner_kind} owners only own objects in their own namespace \
                 ({owner_namespace}), not in {object_namespace}; use an owner from \
                 {object_namespace} or a cluster-level owner"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_table() {
        let cluster = Owner::Cluster {
            kind: "ClusterExtension",
            name: "a",
        };
        let team_a = Owner::Namespaced {
            kind: "Extension",
            namespace: "team-a",
            name: "a",
        };
        let opaque = Owner::Opaque { id: "operator-1" };
        let release = Owner::Pair {
            namespace: "team-a",
            name: "web",
        };
        let in_a = ObjectScope::Namespace("team-a");
        let in_b = ObjectScope::Namespace("team-b");
        #[rustfmt::skip]
        let rows: [(Owner, ObjectScope, Result<(), &str>); 12] = [
            (cluster, ObjectScope::Cluster, Ok(())),
            (cluster, in_a, Ok(())),
            (cluster, in_b, Ok(())),
            (team_a, ObjectScope::Cluster, Err("a cluster-scoped object can only be owned by a cluster-level kind, and Extension is confined to its namespace; use a cluster-level owner")),
            (team_a, in_a, Ok(())),
            (team_a, in_b, Err("Extension owners only own objects in their own namespace (team-a), not in team-b; use an owner from team-b or a cluster-level owner")),
            (opaque, ObjectScope::Cluster, Ok(())),
            (opaque, in_a, Ok(())),
            (opaque, in_b, Ok(())),
            (release, ObjectScope::Cluster, Ok(())),
            (release, in_a, Ok(())),
            (release, in_b, Ok(())),
        ];
        for (owner, scope, expected) in rows {
            let got = check(&owner, scope).map_err(|violation| violation.to_string());
            assert_eq!(
                got,
                expected.map_err(str::to_owned),
                "{owner:?} in {scope:?}"
            );
        }
    }
}
