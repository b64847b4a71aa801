//! What the lookup of an object's controller found ([`crate::derivation`]), as a denial, or an
//! audit's report, says it.

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
}
