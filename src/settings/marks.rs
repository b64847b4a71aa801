//! The checks of owner marks: their keys, shapes and kinds, and where their owners live
//! (`ownerLookup`), each problem naming its field.

use super::check::{check_kind, check_label_key};
use super::parents;
use crate::dns::is_dns_label;
use crate::owner::{Format, OwnerLookup, OwnerMark, Place, Shape};

/// Checks one owner mark: its keys, its shape and kinds, and contradictions.
pub(super) fn check_owner_mark(mark: &OwnerMark, field: &str, problems: &mut Vec<String>) {
    let place = mark.place.as_str();
    for (name, key) in mark.keys() {
        if let Err(why) = check_label_key(key) {
            problems.push(format!(
                "{field}.{name}: {key:?} is not a valid {place} key: {why}"
            ));
        }
    }
    for companion in [&mark.kind_key, &mark.namespace_key].into_iter().flatten() {
        if *companion == mark.key {
            problems.push(format!(
                "{field}: the companion key must differ from {:?}; it needs a {place} of its own",
                mark.key
            ));
        }
    }
    if mark.kind_key.is_some() && mark.namespace_key.is_some() {
        problems.push(format!(
            "{field}: set kindKey or namespaceKey, not both; a mark has one companion key"
        ));
    }
    if mark.kind_key.is_some() && !mark.has_kinds() {
        problems.push(format!(
            "{field}.kindKey: set without clusterKinds or namespacedKinds; list the owner \
             kinds the kind {place} may hold, or drop kindKey for opaque owner ids"
        ));
    }
    if mark.namespace_key.is_some() && mark.has_kinds() {
        problems.push(format!(
            "{field}.namespaceKey: owners named <namespace>/<name> have no kind; drop \
             clusterKinds and namespacedKinds"
        ));
    }
    if mark.format == Format::ArgoCdTrackingId {
        if mark.place != Place::Annotation {
            problems.push(format!(
                "{field}.format: ArgoCDTrackingID is read from an annotation \
                 (argocd.argoproj.io/tracking-id); write `annotation:`"
            ));
        }
        if mark.companion_key().is_some() || mark.has_kinds() {
            problems.push(format!(
                "{field}.format: a tracking id names its app alone; drop kindKey, \
                 namespaceKey and the kinds"
            ));
        }
    }
    for (list, kinds) in [
        ("clusterKinds", &mark.cluster_kinds),
        ("namespacedKinds", &mark.namespaced_kinds),
    ] {
        for (index, kind) in kinds.iter().enumerate() {
            if let Err(why) = check_kind(kind) {
                problems.push(format!(
                    "{field}.{list}[{index}]: {kind:?} is not a valid kind name: {why}"
                ));
            }
            if kinds[..index].contains(kind) {
                problems.push(format!("{field}.{list}[{index}]: {kind:?} is listed twice"));
            }
        }
    }
    for kind in &mark.namespaced_kinds {
        if mark.cluster_kinds.contains(kind) {
            problems.push(format!(
                "{field}: kind {kind:?} is listed in both clusterKinds and namespacedKinds; \
                 a kind is either cluster-level or confined to its namespace"
            ));
        }
    }
    if let Some(lookup) = &mark.owner_lookup {
        check_owner_lookup(mark, lookup, &format!("{field}.ownerLookup"), problems);
    }
}

/// Checks where a mark's owners live ([`crate::owner::OwnerLookup`]): an object of a kind the
/// mark's owners have, or a Helm release's records for `<namespace>/<name>` owners; a namespace
/// where, and only where, the owner's id names none.
fn check_owner_lookup(
    mark: &OwnerMark,
    lookup: &OwnerLookup,
    field: &str,
    problems: &mut Vec<String>,
) {
    let shape = mark.shape();
    let object = (lookup.api_version.as_deref(), lookup.kind.as_deref());
    // An empty lookup (a form's `{}`) is none.
    if lookup.namespace.is_none() && object == (None, None) && lookup.helm_records.is_none() {
        return;
    }
    match (object, lookup.helm_records) {
        ((None, None), None) => problems.push(format!(
            "{field}: set apiVersion and kind (the owner is an object of that kind) or \
             helmRecords (a Helm release)"
        )),
        ((Some(_), _) | (_, Some(_)), Some(_)) => problems.push(format!(
            "{field}: set apiVersion and kind, or helmRecords, not both"
        )),
        ((Some(_), None) | (None, Some(_)), None) => {
            problems.push(format!("{field}: set apiVersion and kind together"))
        }
        ((Some(api_version), Some(kind)), None) => {
            if let Err(why) = parents::check_api_version(api_version) {
                problems.push(format!("{field}.apiVersion: {why}"));
            }
            if let Err(why) = check_kind(kind) {
                problems.push(format!("{field}.kind: {kind:?} {why}"));
            }
            let kinds = mark.cluster_kinds.iter().chain(&mark.namespaced_kinds);
            if mark.has_kinds() && !kinds.clone().any(|known| known == kind) {
                let known: Vec<&str> = kinds.map(String::as_str).collect();
                problems.push(format!(
                    "{field}.kind: {kind:?} is none of the mark's owner kinds ({})",
                    known.join(", ")
                ));
            }
        }
        (_, Some(_)) if shape != Shape::NamespacePair => problems.push(format!(
            "{field}.helmRecords: a Helm release is <namespace>/<name>: set the mark's \
             namespaceKey (meta.helm.sh/release-namespace)"
        )),
        (_, Some(_)) => {}
    }
    let names_its_namespace = shape == Shape::NamespacePair || mark.has_kinds();
    match (&lookup.namespace, shape) {
        (Some(namespace), _) if names_its_namespace => problems.push(format!(
            "{field}.namespace: {namespace:?}: the owner's id names its namespace; drop it"
        )),
        (Some(namespace), _) if !is_dns_label(namespace) => problems.push(format!(
            "{field}.namespace: {namespace:?} is not a namespace name (a DNS-1123 label)"
        )),
        (None, Shape::Tracking) if lookup.helm_records.is_none() => problems.push(format!(
            "{field}.namespace: set the namespace of Argo CD's Applications (argocd), where an \
             app whose id names no namespace lives"
        )),
        _ => {}
    }
}
