//! What the lookup of an object's controller found ([`crate::derivation`]), and of its owner
//! ([`crate::leftover`]), as a denial, or an audit's report, says it.

use std::fmt;

/// What the lookup of an object's controller found, as a denial says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The controller, as messages name it: `Integration shop/app`.
    pub controller: String,
    /// What was found.
    pub finding: Finding,
}

/// Why a copy was not inherited, or is out of step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The controller carries this under the mark (`none`, or an owner), not the object's.
    Carries(String),
    /// The controller carries the object's owner, but the requester may not derive for it.
    NotDerived,
    /// The controller could not be read: the host's error.
    Unreadable(String),
    /// The controller does not exist: the host's not-found error.
    Missing(String),
    /// The controller by that name is another object than the reference's uid.
    Replaced,
    /// The update points the object at a controller it did not have, or changes its owner
    /// references.
    Repointed,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let controller = &self.controller;
        match &self.finding {
            Finding::Carries(claim) => write!(f, "its controller {controller} carries {claim}"),
            Finding::NotDerived => write!(
                f,
                "its controller {controller} carries this owner, but only a requester acting \
                 or deriving for it (access: Derive) may copy it"
            ),
            Finding::Unreadable(error) => write!(
                f,
                "its controller {controller} could not be read ({error}); policy-server's \
                 service account needs get on it, and the policy its kind in \
                 contextAwareResources"
            ),
            Finding::Missing(error) => write!(
                f,
                "its controller {controller} does not exist ({error}): its owner reference names \
                 an object that is gone"
            ),
            Finding::Replaced => write!(
                f,
                "its controller {controller} is not the object its owner reference names (uid)"
            ),
            Finding::Repointed => write!(
                f,
                "its controller {controller} is followed only when the stored object had it and \
                 the update leaves ownerReferences as they are"
            ),
        }
    }
}

/// What the lookup of an object's owner found ([`crate::leftover`]), as a denial or an audit's
/// report says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerFound {
    /// The owner, as messages name it: `ClusterExtension cert-manager`, `Helm release
    /// shop/web`.
    pub owner: String,
    /// What was found.
    pub finding: OwnerFinding,
}

/// Whether an owner is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnerFinding {
    /// The owner object was not found.
    NotFound,
    /// Helm keeps no record of the release.
    NoRecord,
    /// The release's last record says it was uninstalled (`helm uninstall --keep-history`).
    Uninstalled,
    /// The owner exists.
    Exists,
    /// The owner is being deleted: it owns its objects until it is gone.
    Deleting,
    /// The owner could not be read: the host's error.
    Unreadable(String),
}

impl OwnerFinding {
    /// Whether the owner was found gone: an explicit not-found, or no live record.
    pub fn gone(&self) -> bool {
        matches!(
            self,
            OwnerFinding::NotFound | OwnerFinding::NoRecord | OwnerFinding::Uninstalled
        )
    }
}

impl fmt::Display for OwnerFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let owner = &self.owner;
        let gone = "a leftover, judged as owned by none";
        match &self.finding {
            OwnerFinding::NotFound => write!(f, "its owner {owner} was not found: {gone}"),
            OwnerFinding::NoRecord => {
                write!(f, "its owner {owner} has no record left: {gone}")
            }
            OwnerFinding::Uninstalled => {
                write!(
                    f,
                    "its owner {owner} was uninstalled (its last record): {gone}"
                )
            }
            OwnerFinding::Exists => write!(f, "its owner {owner} exists"),
            OwnerFinding::Deleting => write!(
                f,
                "its owner {owner} is being deleted, and owns it until it is gone"
            ),
            OwnerFinding::Unreadable(error) => write!(
                f,
                "its owner {owner} could not be read ({error}), and counts as there; \
                 policy-server's service account needs get on it (list and watch on Helm's \
                 records), and the policy its kind in contextAwareResources"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_finding_says_what_the_lookup_found() {
        let error = "integrations.camel.apache.org \"app\" not found".to_owned();
        #[rustfmt::skip]
        let rows = [
            (Finding::Carries("\"operator-2\"".to_owned()), r#"its controller Integration shop/app carries "operator-2""#),
            (Finding::NotDerived, "its controller Integration shop/app carries this owner, but only a requester acting or deriving for it (access: Derive) may copy it"),
            (Finding::Unreadable("forbidden".to_owned()), "its controller Integration shop/app could not be read (forbidden); policy-server's service account needs get on it, and the policy its kind in contextAwareResources"),
            (Finding::Missing(error), r#"its controller Integration shop/app does not exist (integrations.camel.apache.org "app" not found): its owner reference names an object that is gone"#),
            (Finding::Replaced, "its controller Integration shop/app is not the object its owner reference names (uid)"),
            (Finding::Repointed, "its controller Integration shop/app is followed only when the stored object had it and the update leaves ownerReferences as they are"),
        ];
        for (finding, text) in rows {
            let found = Found {
                controller: "Integration shop/app".to_owned(),
                finding,
            };
            assert_eq!(found.to_string(), text);
        }
    }

    #[test]
    fn each_owner_finding_says_what_the_lookup_found() {
        #[rustfmt::skip]
        let rows = [
            (OwnerFinding::NotFound, "its owner Helm release shop/web was not found: a leftover, judged as owned by none"),
            (OwnerFinding::NoRecord, "its owner Helm release shop/web has no record left: a leftover, judged as owned by none"),
            (OwnerFinding::Uninstalled, "its owner Helm release shop/web was uninstalled (its last record): a leftover, judged as owned by none"),
            (OwnerFinding::Exists, "its owner Helm release shop/web exists"),
            (OwnerFinding::Deleting, "its owner Helm release shop/web is being deleted, and owns it until it is gone"),
            (OwnerFinding::Unreadable("forbidden".to_owned()), "its owner Helm release shop/web could not be read (forbidden), and counts as there; policy-server's service account needs get on it (list and watch on Helm's records), and the policy its kind in contextAwareResources"),
        ];
        for (finding, text) in rows {
            let found = OwnerFound {
                owner: "Helm release shop/web".to_owned(),
                finding,
            };
            assert_eq!(found.to_string(), text);
        }
    }
}
