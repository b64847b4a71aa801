//! Generators of the control plane's cases: its writers, as the API server names them, the
//! person they are compared with, and requests on the resources the control plane writes.

use proptest::bool::weighted as chance;
use proptest::prelude::*;
use proptest::sample::subsequence;
use proptest::test_runner::TestCaseResult;

use super::scenario::scenario;
use super::{
    ALL_ACTING, ALL_MOVES, ALL_NEW_OFFERS, ALL_OLD_OFFERS, Binding, Exempt, Mix, QUIET,
    WRITE_ACCESS,
};
use crate::model::{Case, Op, Place, SETTINGS_WRITERS, TRUST_PLACES, TrustedWriter, groups_of};
use crate::trust;

/// The person a trusted writer's or a look-alike's request is compared with.
pub(crate) const PERSON: &str = "alice";

/// Bindings by the requester's name or groups, not by a service account's template: the
/// properties that rename the requester need identities that follow the name.
pub(crate) const NAME_BINDINGS: &[(u32, Binding)] = &[
    (3, Binding::User),
    (2, Binding::Group),
    (1, Binding::GroupPattern),
    (2, Binding::Wildcard),
];

/// A requester as the API server names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Requester {
    pub(crate) user: String,
    pub(crate) groups: Vec<String>,
}

/// The trusted control plane's writers, as the API server names them: each controller of the
/// trust oracle as its service account, the controller manager, the scheduler, a kubelet, and
/// one user of each of the settings' writers (a pattern's `*` filled in).
pub(crate) fn control_plane(settings: &[TrustedWriter]) -> Vec<Requester> {
    let named = |user: String| Requester {
        groups: groups_of(&user),
        user,
    };
    let mut writers: Vec<Requester> = (trust::CONTROLLERS.iter())
        .map(|(name, _)| named(format!("{}{name}", trust::KUBE_SYSTEM_ACCOUNT)))
        .collect();
    writers.push(named(trust::CONTROLLER_MANAGER.to_owned()));
    writers.push(named(trust::SCHEDULER.to_owned()));
    writers.push(Requester {
        user: format!("{}n1", trust::NODE),
        groups: vec![
            trust::NODES_GROUP.to_owned(),
            "system:authenticated".to_owned(),
        ],
    });
    for writer in settings {
        for user in writer.users {
            let writer = named(user.replace('*', "bot"));
            if !writers.contains(&writer) {
                writers.push(writer);
            }
        }
    }
    writers
}

/// Fails unless identities and exemptions see two cases' requesters alike: the cases differ in
/// the requester's name alone (a generator that breaks this proves nothing).
pub(crate) fn alike(a: &Case, b: &Case) -> TestCaseResult {
    let see = |case: &Case| (case.acting(), case.writing(), case.exemption().is_some());
    prop_assert_eq!(
        see(a),
        see(b),
        "generator: identities or exemptions tell {} from {}",
        &a.admission.user,
        &b.admission.user
    );
    Ok(())
}

/// Requests of every kind on the resources the control plane writes and on others, by a
/// person the identities bind by name or group, under settings with some of the settings'
/// trusted writers; a third of the stored objects are being deleted.
pub(crate) fn requests_on_control_plane_resources() -> impl Strategy<Value = Case> {
    requests_on(
        &TRUST_PLACES,
        &[
            (2, Op::Create),
            (4, Op::Update),
            (3, Op::Delete),
            (1, Op::Status),
        ],
    )
}

/// [`requests_on_control_plane_resources`], on `places` with `operations`.
pub(crate) fn requests_on(
    places: &'static [Place],
    operations: &'static [(u32, Op)],
) -> impl Strategy<Value = Case> {
    let person = scenario(Mix {
        operations,
        moves: ALL_MOVES,
        others: QUIET,
        old_offers: ALL_OLD_OFFERS,
        new_offers: ALL_NEW_OFFERS,
        acting: ALL_ACTING,
        exempt: &[(8, Exempt::No), (1, Exempt::User), (1, Exempt::Group)],
        ratchet: 0.1,
        identities: 0.85,
        writes_owner: 0.7,
        stamp: 0.3,
        deny: 0.2,
        scoped_focus: false,
        camel: 1.0,
        linked: 0.0,
        entries: 1,
        places,
        bindings: NAME_BINDINGS,
        write_access: WRITE_ACCESS,
    });
    (
        person,
        subsequence(SETTINGS_WRITERS.to_vec(), 0..=4),
        chance(0.35),
    )
        .prop_map(|(mut case, writers, terminating)| {
            case.settings.trusted = writers;
            if let Some(old) = &mut case.admission.old {
                old.terminating = terminating;
            }
            case
        })
}
