//! `ownerLookup`: where a mark's owner lives, so that the policy can tell whether it still
//! exists ([`crate::leftover`]). An owner is an object read by name — a ClusterExtension, a Flux
//! Kustomization or HelmRelease, an Argo CD Application — or a Helm release, which lives in
//! the records Helm keeps in its namespace.
//!
//! | the mark's owners | `ownerLookup` | what is read |
//! |---|---|---|
//! | of a kind (`clusterKinds`, `namespacedKinds`) | `{apiVersion, kind}`, one of them | that object, by name, in the owner's namespace for a namespaced kind; owners of other kinds are never leftovers |
//! | `<namespace>/<name>` (`namespaceKey`) | `{apiVersion, kind}` | that object, in that namespace |
//! | `<namespace>/<name>` (`namespaceKey`) | `{helmRecords: Secret}` (or `ConfigMap`) | the release's records, labelled `owner=helm,name=<name>`, in that namespace |
//! | an Argo CD app (`ArgoCDTrackingID`) | `{apiVersion, kind, namespace}` | the Application `<app>` in `namespace`, or `<ns>_<app>`'s in `<ns>` |
//! | an opaque id | `{apiVersion, kind}`, and `namespace` for a namespaced kind | the object named by the id |

use serde::Deserialize;

use super::{Owner, OwnerMark, Shape};

/// Where the owners of a mark live, as the settings write it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OwnerLookup {
    /// The owner's `apiVersion` (`olm.operatorframework.io/v1`), with `kind`.
    #[serde(default)]
    pub api_version: Option<String>,
    /// The owner's kind (`ClusterExtension`).
    #[serde(default)]
    pub kind: Option<String>,
    /// The namespace of owners whose id names none: Argo CD's Applications (`argocd`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// The owner is a Helm release, whose records Helm keeps in its namespace with this
    /// driver.
    #[serde(default)]
    pub helm_records: Option<HelmDriver>,
}

/// Where Helm keeps a release's records (`HELM_DRIVER`): Secrets, its default, or ConfigMaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum HelmDriver {
    /// `sh.helm.release.v1.<name>.v<n>` Secrets (helm/helm `pkg/storage/driver/secrets.go`).
    Secret,
    /// The same, as ConfigMaps (`cfgmaps.go`).
    ConfigMap,
}

/// Where one owner is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whereabouts<'a> {
    /// An object, by name.
    Object {
        /// Its `apiVersion`.
        api_version: &'a str,
        /// Its kind.
        kind: &'a str,
        /// Its name.
        name: &'a str,
        /// Its namespace; `None` for a cluster-scoped kind.
        namespace: Option<&'a str>,
    },
    /// A Helm release's records, in its namespace.
    HelmRecords {
        /// The kind Helm keeps them as.
        driver: HelmDriver,
        /// The release's namespace.
        namespace: &'a str,
        /// The release's name.
        release: &'a str,
    },
}

impl HelmDriver {
    /// The kind of its records.
    pub fn kind(self) -> &'static str {
        match self {
            HelmDriver::Secret => "Secret",
            HelmDriver::ConfigMap => "ConfigMap",
        }
    }
}

impl OwnerLookup {
    /// Where `owner`, read under `mark`, lives; `None` for an owner of another kind than the
    /// lookup's (or settings the checks refuse).
    pub fn whereabouts<'a>(
        &'a self,
        mark: &OwnerMark,
        owner: Owner<'a>,
    ) -> Option<Whereabouts<'a>> {
        if let Some(driver) = self.helm_records {
            let Owner::Pair { namespace, name } = owner else {
                return None;
            };
            return Some(Whereabouts::HelmRecords {
                driver,
                namespace,
                release: name,
            });
        }
        let (api_version, kind) = (self.api_version.as_deref()?, self.kind.as_deref()?);
        let (name, namespace) = match owner {
            Owner::Cluster { kind: of, name } if of == kind => (name, None),
            Owner::Namespaced {
                kind: of,
                namespace,
                name,
            } if of == kind => (name, Some(namespace)),
            Owner::Cluster { .. } | Owner::Namespaced { .. } => return None,
            Owner::Pair { namespace, name } => (name, Some(namespace)),
            // With apps in any namespace an app is `<namespace>_<app>` (Argo CD's
            // `AppInstanceName`; neither part may hold a `_`).
            Owner::Opaque { id } if mark.shape() == Shape::Tracking => match id.split_once('_') {
                Some((namespace, app)) => (app, Some(namespace)),
                None => (id, self.namespace.as_deref()),
            },
            Owner::Opaque { id } => (id, self.namespace.as_deref()),
        };
        Some(Whereabouts::Object {
            api_version,
            kind,
            name,
            namespace,
        })
    }
}

impl Whereabouts<'_> {
    /// The owner as messages name it: `ClusterExtension cert-manager`, `Kustomization
    /// shop/apps`, `Helm release shop/web`.
    pub fn named(&self) -> String {
        match self {
            Whereabouts::Object {
                kind,
                name,
                namespace: Some(namespace),
                ..
            } => format!("{kind} {namespace}/{name}"),
            Whereabouts::Object { kind, name, .. } => format!("{kind} {name}"),
            Whereabouts::HelmRecords {
                namespace, release, ..
            } => format!("Helm release {namespace}/{release}"),
        }
    }
}
