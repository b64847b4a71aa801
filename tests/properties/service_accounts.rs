//! Service accounts: templated owner patterns bind only real service accounts (8).

use proptest::prelude::*;
use proptest::sample::subsequence;

use crate::check;
use crate::common::OFFER;
use crate::generators::{permuted, weighted};
use crate::model::{Admission, Case, Identity, Object, Op, PLACES, Settings, Shape, identity};
use crate::oracle;

/// 8. Templates bind only real service accounts, literally: a user name
///    `system:serviceaccount:<ns>:<name>` fills `${namespace}` and `${name}` only when `<ns>` is
///    a DNS-1123 label and `<name>` a DNS-1123 subdomain, as Kubernetes validates them; for any
///    other user a templated owner pattern names no owner (the user
///    `system:serviceaccount:helm-releases:*` acts for no `ClusterExtension.${name}`). A CREATE of
///    a valid owner in scope is accepted exactly when the requester acts for that owner.
#[test]
fn templates_bind_only_real_service_accounts() {
    let floors = [
        (
            "a malformed service account that an unchecked template would bind to X",
            6.0,
        ),
        ("a service account acting for X through a template", 1.5),
        (
            "a malformed service account acting for X through an exact owner",
            0.3,
        ),
        ("a requester acting for no such owner", 60.0),
    ];
    check(service_account_creates(), &floors, |case, tally| {
        let response = case.respond()?;
        let admission = &case.admission;
        let new = admission.new.as_ref().expect("a CREATE");
        let (shape, claim) = (case.settings.shapes.iter())
            .map(|&shape| (shape, case.claim(shape, new)))
            .find(|(_, claim)| !claim.is_none())
            .expect("one owner mark");
        let owner = claim.id();
        let acts = case.acts_for(&owner);
        let identities = &case.settings.identities;
        let unchecked = oracle::acting_with(identities, admission, oracle::any_service_account);
        let real = oracle::service_account(&admission.user).is_some();
        let unchecked_acts = oracle::acts_for(&unchecked, &owner);
        tally.count(
            !real && unchecked_acts && !acts,
            "a malformed service account that an unchecked template would bind to X",
        );
        let untemplated: Vec<_> = (identities.iter())
            .map(|identity| Identity {
                owners: (identity.owners.iter())
                    .filter(|owner| !owner.contains("${"))
                    .cloned()
                    .collect(),
                ..identity.clone()
            })
            .collect();
        let acts_untemplated = oracle::acts_for(&oracle::acting(&untemplated, admission), &owner);
        tally.count(
            real && acts && !acts_untemplated,
            "a service account acting for X through a template",
        );
        tally.count(
            !real && acts,
            "a malformed service account acting for X through an exact owner",
        );
        tally.count(!acts, "a requester acting for no such owner");
        prop_assert_eq!(
            response.accepted,
            acts,
            "{} asks for {}: {:?}",
            &admission.user,
            &owner,
            response.message
        );
        if !acts {
            let expected = format!("{}: identity from none to \"{owner}\"", shape.name());
            prop_assert_eq!(response.summaries, [expected]);
        }
        Ok(())
    });
}

/// CREATEs of one owner in scope by service accounts, real and malformed, under templated
/// identities.
fn service_account_creates() -> impl Strategy<Value = Case> {
    let long_namespace = "n".repeat(64);
    let long_name = "n".repeat(254);
    let namespaces = weighted(&[
        (12, "helm-releases".to_owned()),
        (2, "team-a".to_owned()),
        (2, "camel-k".to_owned()),
        (2, "*".to_owned()),
        (1, "Team-A".to_owned()),
        (1, "team_a".to_owned()),
        (1, "team.a".to_owned()),
        (1, "-team".to_owned()),
        (1, long_namespace),
    ]);
    let names = weighted(&[
        (4, "cert-manager".to_owned()),
        (3, "argocd".to_owned()),
        (2, "installer".to_owned()),
        (2, "operator-1".to_owned()),
        (5, "*".to_owned()),
        (2, "cert-*".to_owned()),
        (2, "Cert-Manager".to_owned()),
        (1, "argocd:v2".to_owned()),
        (1, "argocd.".to_owned()),
        (1, ".argocd".to_owned()),
        (1, "argocd.v2".to_owned()),
        (1, "argo..cd".to_owned()),
        (1, long_name),
    ]);
    let templated = vec![
        identity(
            &["Extension.${namespace}.*"],
            &["system:serviceaccount:*:installer"],
            &[],
        ),
        identity(
            &["Extension.${namespace}.${name}"],
            &[],
            &["system:serviceaccounts"],
        ),
        identity(&["${name}"], &["system:serviceaccount:camel-k:*"], &[]),
    ];
    // An owner: a fixed one, or (`None`) one named after the service account.
    let owners = weighted(&[
        (3, Some("ClusterExtension.cert-manager")),
        (3, Some("ClusterExtension.argocd")),
        (1, Some("ClusterExtension.prometheus")),
        (1, Some("Extension.team-a.installer")),
        (1, Some("Extension.team-a.argocd")),
        (1, Some("operator-1")),
        (1, Some("operator-2")),
        (7, None),
    ]);
    (
        namespaces,
        names,
        subsequence(templated, 0..=3),
        owners,
        any::<bool>(),
        any::<[u32; 8]>(),
    )
        .prop_map(|(namespace, name, more, owner, camel_first, keys)| {
            let mut identities = vec![
                identity(
                    &["ClusterExtension.${name}"],
                    &["system:serviceaccount:helm-releases:*"],
                    &[],
                ),
                identity(
                    &["ClusterExtension.argocd"],
                    &["system:serviceaccount:helm-releases:*"],
                    &[],
                ),
            ];
            identities.extend(more);
            // An owner named after the service account, where that makes a label value.
            let named = format!("ClusterExtension.{name}");
            let owner = match owner {
                Some(owner) => owner.to_owned(),
                None if is_label_value(&named) => named,
                None => "ClusterExtension.cert-manager".to_owned(),
            };
            let shape = if owner.contains('.') {
                Shape::AppId
            } else {
                Shape::Camel
            };
            let mut object = Object::default();
            object.put(shape, &shape.write(&owner, Some(PLACES[3])));
            let shapes = if camel_first {
                vec![Shape::Camel, Shape::AppId]
            } else {
                vec![Shape::AppId, Shape::Camel]
            };
            Case {
                settings: Settings {
                    shapes,
                    adoption: "Allow",
                    orphaning: "Allow",
                    exempt_users: Vec::new(),
                    exempt_groups: Vec::new(),
                    identities: permuted(&identities, &keys, 0),
                    writes: "Any",
                    stamp: false,
                    offer_key: OFFER,
                    trusted: Vec::new(),
                },
                admission: Admission {
                    op: Op::Create,
                    place: PLACES[3],
                    groups: vec![
                        "system:serviceaccounts".to_owned(),
                        format!("system:serviceaccounts:{namespace}"),
                        "system:authenticated".to_owned(),
                    ],
                    user: format!("system:serviceaccount:{namespace}:{name}"),
                    old: None,
                    new: Some(object),
                    options: None,
                },
            }
        })
}

/// Whether `text` is a valid label value: at most 63 alphanumerics, `-`, `_` and `.`, starting
/// and ending with an alphanumeric.
fn is_label_value(text: &str) -> bool {
    let alphanumeric = |c: char| c.is_ascii_alphanumeric();
    text.len() <= 63
        && text.starts_with(alphanumeric)
        && text.ends_with(alphanumeric)
        && text
            .chars()
            .all(|c| alphanumeric(c) || matches!(c, '-' | '_' | '.'))
}
