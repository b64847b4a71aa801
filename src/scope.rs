//! Scope rules: which owners may own an object, given where the object lives.
//!
//! | object            | cluster-kind owner | namespaced-kind owner        | opaque id, `<namespace>/<name>` |
//! |-------------------|--------------------|------------------------------|---------------------------------|
//! | cluster-scoped    | allow              | deny                         | allow                           |
//! | in namespace `ns` | allow              | allow only if its ns is `ns` | allow                           |
//!
//! A `<namespace>/<name>` owner (a Helm release, a Flux Kustomization) installs cluster-scoped
//! objects and objects in other namespaces than its own, so no scope rule applies to it.

use crate::owner::{Claim, InvalidOwner, Owner, OwnerMark};
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

/// Why a claim names no owner that could own an object: its value, or its scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unfit<'a> {
    /// The mark names no valid owner.
    Value(InvalidOwner),
    /// The owner may not own an object where it lives.
    Scope(ScopeViolation<'a>),
}

/// The owner a claim names, if it is a valid owner that may own an object in `scope`.
pub fn fit<'a>(
    mark: &OwnerMark,
    claim: Claim<'a>,
    scope: ObjectScope<'a>,
) -> Result<Owner<'a>, Unfit<'a>> {
    let owner = claim.owner(mark).map_err(Unfit::Value)?;
    check(&owner, scope).map_err(Unfit::Scope)?;
    Ok(owner)
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
        let cluster_object = Err(ScopeViolation::ClusterScopedObject {
            owner_kind: "Extension",
        });
        let other_namespace = Err(ScopeViolation::OtherNamespace {
            owner_kind: "Extension",
            owner_namespace: "team-a",
            object_namespace: "team-b",
        });
        #[rustfmt::skip]
        let rows: [(Owner, ObjectScope, Result<(), ScopeViolation>); 12] = [
            (cluster, ObjectScope::Cluster, Ok(())),
            (cluster, in_a, Ok(())),
            (cluster, in_b, Ok(())),
            (team_a, ObjectScope::Cluster, cluster_object),
            (team_a, in_a, Ok(())),
            (team_a, in_b, other_namespace),
            (opaque, ObjectScope::Cluster, Ok(())),
            (opaque, in_a, Ok(())),
            (opaque, in_b, Ok(())),
            (release, ObjectScope::Cluster, Ok(())),
            (release, in_a, Ok(())),
            (release, in_b, Ok(())),
        ];
        for (owner, scope, expected) in rows {
            assert_eq!(check(&owner, scope), expected, "{owner:?} in {scope:?}");
        }
    }
}
