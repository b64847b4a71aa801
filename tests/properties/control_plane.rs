//! The trusted control plane: a trusted writer is trusted only within its grants (10), and a
//! person is never judged as the control plane (12).

use proptest::bool::weighted as chance;
use proptest::prelude::*;
use proptest::sample::{Index, select, subsequence};

use crate::check;
use crate::common::POD;
use crate::generators::{
    ActsFor, Exempt, Mix, Move, NAME_BINDINGS, NewOffer, OfferTo, PERSON, QUIET, Requester,
    WRITE_ACCESS, alike, control_plane, requests_on, requests_on_control_plane_resources, scenario,
    weighted,
};
use crate::model::{Case, Op, Place, TEMPLATE_PLACES, TRUST_PLACES, pick, place, resource_of};
use crate::trust;

/// 10. A trusted writer is trusted only with what Kubernetes' roles or the settings grant it:
///     its request on a resource and with a verb its grants cover is accepted as it is (no
///     warning, audit annotation or patch), whatever the rules say; the same request on another
///     resource, with another verb, or (a kubelet's) before the deletion began, is judged like
///     a person's — it gets the verdict that `alice`, in the same groups and bound by the same
///     identities and exemptions, gets.
#[test]
fn a_trusted_writer_is_trusted_only_within_its_grants() {
    let floors = [
        ("a writer inside its grants, a person denied", 3.0),
        (
            "a writer inside its grants, the rules bypassed for an exempt person",
            0.3,
        ),
        (
            "a writer trusted on the resource with other verbs only, a person denied",
            2.0,
        ),
        (
            "a writer trusted with the verb on other resources only, a person denied",
            4.0,
        ),
        (
            "a writer trusted with nothing like it, a person denied",
            3.0,
        ),
        (
            "a kubelet deleting a Pod whose deletion has not begun, a person denied",
            2.0,
        ),
        (
            "a controller's account outside what it is trusted with, a person denied",
            4.0,
        ),
        (
            "the controller manager or the scheduler outside what it is trusted with, a person \
             denied",
            0.5,
        ),
        (
            "a kubelet outside what it is trusted with, a person denied",
            2.0,
        ),
        (
            "a settings writer outside what it is trusted with, a person denied",
            1.5,
        ),
    ];
    check(
        control_plane_writes(),
        &floors,
        |(case, writer, grant), tally| {
            let written = case.with_requester(&writer.user, &writer.groups);
            let person = case.with_requester(PERSON, &writer.groups);
            alike(&written, &person)?;
            let trusted = written.trusted();
            prop_assert_eq!(trusted, grant == Grant::Inside, "generator: {:?}", writer);
            let (got, reference) = (written.respond()?, person.respond()?);
            let denied = !reference.accepted;
            let outside = grant != Grant::Inside;
            tally.count(
                !outside && denied,
                "a writer inside its grants, a person denied",
            );
            tally.count(
                !outside && !reference.warnings.is_empty(),
                "a writer inside its grants, the rules bypassed for an exempt person",
            );
            tally.count(
                grant == Grant::OtherVerb && denied,
                "a writer trusted on the resource with other verbs only, a person denied",
            );
            tally.count(
                grant == Grant::OtherResource && denied,
                "a writer trusted with the verb on other resources only, a person denied",
            );
            tally.count(
                matches!(grant, Grant::Outside | Grant::BeforeDeletion) && denied,
                "a writer trusted with nothing like it, a person denied",
            );
            tally.count(
                grant == Grant::BeforeDeletion && denied,
                "a kubelet deleting a Pod whose deletion has not begun, a person denied",
            );
            tally.count_named(
                outside && denied,
                format!(
                    "{} outside what it is trusted with, a person denied",
                    writer_kind(&writer)
                ),
            );
            if trusted {
                prop_assert!(
                    got.plainly_accepted(),
                    "{} is trusted with {:?}, yet: {:?}",
                    writer.user,
                    written.write(),
                    got
                );
            } else {
                prop_assert_eq!(
                    got.rules(),
                    reference.rules(),
                    "{} outside its grants ({:?}) is not judged like {}",
                    &writer.user,
                    grant,
                    PERSON
                );
                prop_assert_eq!(&got.patched, &reference.patched);
            }
            Ok(())
        },
    );
}

/// 12. A person's request is never judged as the control plane's: for any requester the trust
///     oracle does not trust with the request — names built from the control plane's prefixes
///     (`system:`, `system:serviceaccount:kube-system:`, `system:node:`, `system:kube-`) and
///     stems, in any of its groups — the verdict is the one `alice` in the same groups gets,
///     and the one the same requester gets under settings without `trustedWriters`. A requester
///     the oracle trusts is accepted as it is.
#[test]
fn a_person_is_never_judged_as_the_control_plane() {
    let floors = [
        (
            "an untrusted name beginning with system:, a person denied",
            25.0,
        ),
        (
            "an untrusted system: name on a write the controller manager is trusted with, a \
             person denied",
            6.0,
        ),
        (
            "an untrusted kube-system service account name in the kube-system group, a person \
             denied",
            3.0,
        ),
        (
            "an untrusted system:node: name in system:nodes, a person denied",
            1.0,
        ),
        (
            "an untrusted name under settings with trusted writers, a person denied",
            15.0,
        ),
        ("a trusted name", 0.5),
    ];
    check(
        generated_requesters(),
        &floors,
        |(case, requester), tally| {
            let case = case.named_only_if_vouched(&requester.user, &requester.groups);
            let named = case.with_requester(&requester.user, &requester.groups);
            let person = case.with_requester(PERSON, &requester.groups);
            alike(&named, &person)?;
            let got = named.respond()?;
            if named.trusted() {
                tally.count(true, "a trusted name");
                prop_assert!(
                    got.plainly_accepted(),
                    "{:?} is trusted, yet: {:?}",
                    requester,
                    got
                );
                return Ok(());
            }
            let reference = person.respond()?;
            let mut untrusting = named.clone();
            untrusting.settings.trusted.clear();
            let without_trust = untrusting.respond()?;
            let denied = !reference.accepted;
            let user = requester.user.as_str();
            let in_group = |group: &str| requester.groups.iter().any(|have| have == group);
            let system = user.starts_with("system:");
            tally.count(
                system && denied,
                "an untrusted name beginning with system:, a person denied",
            );
            let as_manager = case.with_requester(trust::CONTROLLER_MANAGER, &requester.groups);
            tally.count(
                system && denied && as_manager.trusted(),
                "an untrusted system: name on a write the controller manager is trusted with, a \
                 person denied",
            );
            tally.count(
                user.starts_with(trust::KUBE_SYSTEM_ACCOUNT)
                    && in_group(trust::KUBE_SYSTEM_GROUP)
                    && denied,
                "an untrusted kube-system service account name in the kube-system group, a \
                 person denied",
            );
            tally.count(
                user.starts_with(trust::NODE) && in_group(trust::NODES_GROUP) && denied,
                "an untrusted system:node: name in system:nodes, a person denied",
            );
            tally.count(
                !case.settings.trusted.is_empty() && denied,
                "an untrusted name under settings with trusted writers, a person denied",
            );
            prop_assert_eq!(
                got.rules(),
                reference.rules(),
                "{:?} in {:?} is not judged like {}",
                user,
                &requester.groups,
                PERSON
            );
            prop_assert_eq!(&got.patched, &reference.patched);
            prop_assert_eq!(
                got.rules(),
                without_trust.rules(),
                "{:?} is judged otherwise without trustedWriters",
                user
            );
            Ok(())
        },
    );
}

/// What kind of writer a requester of [`control_plane`] is.
fn writer_kind(writer: &Requester) -> &'static str {
    match writer.user.as_str() {
        user if user.starts_with(trust::KUBE_SYSTEM_ACCOUNT) => "a controller's account",
        trust::CONTROLLER_MANAGER | trust::SCHEDULER => "the controller manager or the scheduler",
        user if user.starts_with(trust::NODE) => "a kubelet",
        _ => "a settings writer",
    }
}

/// How a writer's grants stand to a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Grant {
    /// It is trusted with the write.
    Inside,
    /// It is trusted on the resource, with other verbs only.
    OtherVerb,
    /// It is trusted with the verb, on other resources only.
    OtherResource,
    /// It would be trusted once the object's deletion began (a kubelet).
    BeforeDeletion,
    /// It is trusted with nothing like it.
    Outside,
}

/// Every resource the properties write, as RBAC names them, with their `status`.
fn resources() -> Vec<String> {
    let places = TRUST_PLACES.iter().chain(&TEMPLATE_PLACES);
    let mut resources: Vec<String> = places
        .map(|place| resource_of(place.kind))
        .flat_map(|resource| [format!("{resource}/status"), resource])
        .collect();
    resources.sort();
    resources.dedup();
    resources
}

/// How `writer`'s grants stand to the case's write, by the trust oracle.
fn grant_of(case: &Case, writer: &Requester) -> Grant {
    let write = case.with_requester(&writer.user, &writer.groups).write();
    let settings = &case.settings.trusted;
    let trusts = |write: &trust::Write| trust::trusts(write, settings);
    let with = |change: &dyn Fn(&mut trust::Write)| {
        let mut other = write.clone();
        change(&mut other);
        trusts(&other)
    };
    if trusts(&write) {
        Grant::Inside
    } else if trust::Verb::ALL
        .iter()
        .any(|&verb| with(&|w| w.verb = verb))
    {
        Grant::OtherVerb
    } else if resources()
        .iter()
        .any(|resource| with(&|w| w.resource = resource.clone()))
    {
        Grant::OtherResource
    } else if with(&|w| w.terminating = true) {
        Grant::BeforeDeletion
    } else {
        Grant::Outside
    }
}

/// Pods, mostly DELETEd: what kubelets, the scheduler and the Pod controllers are trusted with.
const POD_PLACES: [Place; 2] = [place(POD, "team-a"), place(POD, "team-b")];

/// A request (some of them on Pods) and a writer of the control plane, chosen by its kind (a controller's account,
/// the controller manager or the scheduler, a kubelet, a settings writer) and by how its grants
/// stand to the request: inside, on the resource with other verbs, with the verb on other
/// resources, or outside; the nearest choice there is when there is none such. Besides, kubelets
/// deleting Pods.
fn control_plane_writes() -> impl Strategy<Value = (Case, Requester, Grant)> {
    let kinds = weighted(&[
        (4, "a controller's account"),
        (2, "the controller manager or the scheduler"),
        (2, "a kubelet"),
        (2, "a settings writer"),
    ]);
    let wanted = weighted(&[
        (3, Grant::Inside),
        (2, Grant::OtherVerb),
        (2, Grant::OtherResource),
        (1, Grant::Outside),
    ]);
    let requests = prop_oneof![
        3 => requests_on_control_plane_resources(),
        1 => requests_on(&POD_PLACES, &[(4, Op::Delete), (1, Op::Update), (1, Op::Status)]),
    ];
    let writes =
        (requests, kinds, wanted, any::<Index>()).prop_map(|(case, kind, wanted, index)| {
            let classed: Vec<(Requester, Grant)> = (control_plane(&case.settings.trusted))
                .into_iter()
                .map(|writer| {
                    let grant = grant_of(&case, &writer);
                    (writer, grant)
                })
                .collect();
            let of = |keep: &dyn Fn(&Requester, Grant) -> bool| -> Vec<(Requester, Grant)> {
                (classed.iter())
                    .filter(|(writer, grant)| keep(writer, *grant))
                    .cloned()
                    .collect()
            };
            let of_kind = |writer: &Requester| writer_kind(writer) == kind;
            let choices = [
                of(&|writer, grant| of_kind(writer) && grant == wanted),
                of(&|writer, grant| {
                    of_kind(writer) && (grant == Grant::Inside) == (wanted == Grant::Inside)
                }),
                of(&|writer, _| of_kind(writer)),
                of(&|_, grant| grant == wanted),
                classed.clone(),
            ];
            let options = choices.into_iter().find(|options| !options.is_empty());
            let (writer, grant) = pick(&options.expect("writers"), &index);
            (case, writer, grant)
        });
    prop_oneof![5 => writes, 1 => kubelet_deletes()]
}

/// DELETEs of owned Pods under `writes: Owner`, half of them being deleted, by a kubelet, and
/// by persons acting for another owner or none.
fn kubelet_deletes() -> impl Strategy<Value = (Case, Requester, Grant)> {
    let person = scenario(Mix {
        operations: &[(1, Op::Delete)],
        moves: &[(1, Move::Keep)],
        others: QUIET,
        old_offers: &[(1, OfferTo::Nobody)],
        new_offers: &[(1, NewOffer::Kept)],
        acting: &[
            (2, ActsFor::Nobody),
            (2, ActsFor::Another),
            (1, ActsFor::Old),
        ],
        exempt: &[(8, Exempt::No), (1, Exempt::User), (1, Exempt::Group)],
        ratchet: 0.1,
        identities: 1.0,
        writes_owner: 1.0,
        stamp: 0.3,
        deny: 0.2,
        scoped_focus: false,
        camel: 1.0,
        linked: 0.0,
        entries: 1,
        places: &POD_PLACES,
        bindings: NAME_BINDINGS,
        write_access: WRITE_ACCESS,
    });
    (person, chance(0.5)).prop_map(|(mut case, terminating)| {
        let old = case.admission.old.as_mut().expect("a DELETE");
        old.terminating = terminating;
        let kubelet = (control_plane(&[]).into_iter())
            .find(|writer| writer_kind(writer) == "a kubelet")
            .expect("a kubelet");
        let grant = grant_of(&case, &kubelet);
        (case, kubelet, grant)
    })
}

/// A request, and a requester whose name is built from the control plane's prefixes and
/// stems (`system:` for the empty name), in some of its groups; a tenth of them writers of the
/// control plane, as the API server names them.
fn generated_requesters() -> impl Strategy<Value = (Case, Requester)> {
    let prefixes = weighted(&[
        (1, ""),
        (3, "system:"),
        (1, "system:serviceaccount:"),
        (5, trust::KUBE_SYSTEM_ACCOUNT),
        (1, "system:serviceaccount:kube-public:"),
        (3, trust::NODE),
        (2, "system:kube-"),
        (1, "x-"),
    ]);
    let stems = select(vec![
        "generic-garbage-collector",
        "namespace-controller",
        "endpointslice-controller",
        "replicaset-controller",
        "root-ca-cert-publisher",
        "kube-scheduler",
        "kube-controller-manager",
        "scheduler",
        "controller-manager",
        "n1",
        "flux",
        "ci-bot",
        "",
    ]);
    let suffixes = weighted(&[(5, ""), (1, "-x"), (1, ":x"), (1, "s"), (1, " ")]);
    let groups = subsequence(
        vec![
            "system:serviceaccounts",
            trust::KUBE_SYSTEM_GROUP,
            "system:serviceaccounts:kube-public",
            trust::NODES_GROUP,
        ],
        0..=4,
    );
    (
        requests_on_control_plane_resources(),
        prefixes,
        stems,
        suffixes,
        groups,
        chance(0.1),
        any::<Index>(),
    )
        .prop_map(|(case, prefix, stem, suffix, groups, real, index)| {
            if real {
                let writer = pick(&control_plane(&case.settings.trusted), &index);
                return (case, writer);
            }
            let groups = (groups.iter().chain(&["system:authenticated"]))
                .map(|&group| group.to_owned())
                .collect();
            // The API server names every requester: an empty name is the audit scanner's.
            let user = match format!("{prefix}{stem}{suffix}") {
                name if name.is_empty() => "system:".to_owned(),
                name => name,
            };
            (case, Requester { user, groups })
        })
}
