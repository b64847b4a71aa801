//! Look-alikes: a name resembling a trusted writer's is judged like anyone's (11).

use proptest::prelude::*;
use proptest::sample::{Index, select};

use crate::check;
use crate::generators::{PERSON, alike, control_plane, requests_on_control_plane_resources};
use crate::model::{Case, groups_of, pick};
use crate::trust;

/// 11. A name that merely resembles a trusted writer's — of another namespace, with a prefix or
///     a suffix, in another case, empty where the name is, or without the group its trust needs
///     (`system:serviceaccounts:kube-system`, `system:nodes`) — is trusted with nothing, even
///     with what the writer it resembles is trusted with: it gets the verdict `alice` in the
///     same groups gets.
#[test]
fn a_name_resembling_a_trusted_writer_is_judged_like_anyone() {
    let floors = [
        (
            "a look-alike of a writer trusted with the request, a person denied",
            20.0,
        ),
        ("another namespace, a person denied", 2.5),
        ("a prefix or a suffix, a person denied", 5.0),
        ("another case, a person denied", 3.0),
        ("an empty or missing name, a person denied", 3.0),
        ("without the group its trust needs, a person denied", 2.5),
    ];
    check(
        look_alike_writes(),
        &floors,
        |(case, look, resembles_trusted), tally| {
            let groups = look.groups.of(look.user);
            let case = case.named_only_if_vouched(look.user, &groups);
            let named = case.with_requester(look.user, &groups);
            let person = case.with_requester(PERSON, &groups);
            alike(&named, &person)?;
            prop_assert!(!named.trusted(), "generator: {:?} is trusted", look);
            let (got, reference) = (named.respond()?, person.respond()?);
            let denied = !reference.accepted;
            tally.count(
                resembles_trusted && denied,
                "a look-alike of a writer trusted with the request, a person denied",
            );
            tally.count_named(
                resembles_trusted && denied,
                format!("{}, a person denied", look.how),
            );
            prop_assert_eq!(
                got.rules(),
                reference.rules(),
                "{:?}, which resembles {}, is not judged like {}",
                look.user,
                look.resembles,
                PERSON
            );
            prop_assert_eq!(&got.patched, &reference.patched);
            Ok(())
        },
    );
}

/// The groups a look-alike is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Groups {
    /// Those the API server gives its name.
    Given,
    /// `system:authenticated` alone.
    Authenticated,
    /// A kubelet's.
    Nodes,
    /// A service account's of kube-system.
    KubeSystem,
    /// A service account's of kube-public.
    KubePublic,
}

impl Groups {
    fn of(self, user: &str) -> Vec<String> {
        let list: &[&str] = match self {
            Groups::Given => return groups_of(user),
            Groups::Authenticated => &[],
            Groups::Nodes => &[trust::NODES_GROUP],
            Groups::KubeSystem => &["system:serviceaccounts", trust::KUBE_SYSTEM_GROUP],
            Groups::KubePublic => &[
                "system:serviceaccounts",
                "system:serviceaccounts:kube-public",
            ],
        };
        (list.iter().chain(&["system:authenticated"]))
            .map(|&group| group.to_owned())
            .collect()
    }
}

/// A name that resembles a trusted writer's, its groups, the writer (its user name, as
/// [`control_plane`] names it), and how it differs.
#[derive(Debug, Clone, Copy)]
struct LookAlike {
    user: &'static str,
    groups: Groups,
    resembles: &'static str,
    how: &'static str,
}

const GC: &str = "system:serviceaccount:kube-system:generic-garbage-collector";
const NS: &str = "system:serviceaccount:kube-system:namespace-controller";
const RS: &str = "system:serviceaccount:kube-system:replicaset-controller";
const CA: &str = "system:serviceaccount:kube-system:root-ca-cert-publisher";
const KUBELET: &str = "system:node:n1";
const NAMESPACE_: &str = "another namespace";
const AFFIX: &str = "a prefix or a suffix";
const CASE: &str = "another case";
const EMPTY: &str = "an empty or missing name";
const GROUPLESS: &str = "without the group its trust needs";

const fn look(
    user: &'static str,
    groups: Groups,
    resembles: &'static str,
    how: &'static str,
) -> LookAlike {
    LookAlike {
        user,
        groups,
        resembles,
        how,
    }
}

/// Look-alikes of the control plane's writers and of the settings'.
#[rustfmt::skip]
const LOOK_ALIKES: &[LookAlike] = &[
    look("system:serviceaccount:kube-public:generic-garbage-collector", Groups::Given, GC, NAMESPACE_),
    look("system:serviceaccount:kube-public:namespace-controller", Groups::Given, NS, NAMESPACE_),
    look("system:serviceaccount:kube-public:replicaset-controller", Groups::Given, RS, NAMESPACE_),
    look("system:serviceaccount:openshift:service-ca", Groups::Given,
         "system:serviceaccount:openshift-service-ca:service-ca", NAMESPACE_),
    look("system:serviceaccount:kube-system:generic-garbage-collector-x", Groups::Given, GC, AFFIX),
    look("system:serviceaccount:kube-system:x-generic-garbage-collector", Groups::Given, GC, AFFIX),
    look("system:serviceaccount:kube-system:namespace-controller:x", Groups::Given, NS, AFFIX),
    look("system:serviceaccount:kube-system:replicaset", Groups::Given, RS, AFFIX),
    look("system:serviceaccount:kube-system:root-ca-cert-publisher2", Groups::Given, CA, AFFIX),
    look("system:kube-controller-manager-x", Groups::Authenticated, trust::CONTROLLER_MANAGER, AFFIX),
    look("system:kube-controller-manager:x", Groups::Authenticated, trust::CONTROLLER_MANAGER, AFFIX),
    look("x-system:kube-controller-manager", Groups::Authenticated, trust::CONTROLLER_MANAGER, AFFIX),
    look("system:serviceaccount:kube-system:kube-controller-manager", Groups::Given,
         trust::CONTROLLER_MANAGER, AFFIX),
    look("system:kube-scheduler-x", Groups::Authenticated, trust::SCHEDULER, AFFIX),
    look("system:kube-scheduler ", Groups::Authenticated, trust::SCHEDULER, AFFIX),
    look("system:nodes:n1", Groups::Nodes, KUBELET, AFFIX),
    look("flux-x", Groups::Authenticated, "flux", AFFIX),
    look("x-flux", Groups::Authenticated, "flux", AFFIX),
    look("ci", Groups::Authenticated, "ci-bot", AFFIX),
    look("x-ci-bot", Groups::Authenticated, "ci-bot", AFFIX),
    look("system:k3s-controller-x", Groups::Authenticated, "system:k3s-controller", AFFIX),
    look("system:serviceaccount:kube-system:Generic-Garbage-Collector", Groups::Given, GC, CASE),
    look("System:kube-controller-manager", Groups::Authenticated, trust::CONTROLLER_MANAGER, CASE),
    look("Flux", Groups::Authenticated, "flux", CASE),
    look("system:serviceaccount:kube-system:", Groups::KubeSystem, GC, EMPTY),
    look("system:serviceaccount:kube-system", Groups::KubeSystem, GC, EMPTY),
    look("system:node:", Groups::Nodes, KUBELET, EMPTY),
    look("system:node", Groups::Nodes, KUBELET, EMPTY),
    look(GC, Groups::Authenticated, GC, GROUPLESS),
    look(GC, Groups::KubePublic, GC, GROUPLESS),
    look(NS, Groups::Authenticated, NS, GROUPLESS),
    look(RS, Groups::KubePublic, RS, GROUPLESS),
    look(CA, Groups::Authenticated, CA, GROUPLESS),
    look(KUBELET, Groups::Authenticated, KUBELET, GROUPLESS),
    look(KUBELET, Groups::KubeSystem, KUBELET, GROUPLESS),
];

/// A request and a look-alike, of a chosen kind, of a writer trusted with it (of any kind, or
/// of any writer, when there is none such), and whether the writer it resembles is trusted
/// with the request.
fn look_alike_writes() -> impl Strategy<Value = (Case, LookAlike, bool)> {
    let how = select(vec![NAMESPACE_, AFFIX, CASE, EMPTY, GROUPLESS]);
    (requests_on_control_plane_resources(), how, any::<Index>()).prop_map(|(case, how, index)| {
        let writers = control_plane(&case.settings.trusted);
        let resembled_trusted = |look: &LookAlike| {
            (writers.iter()).any(|writer| {
                writer.user == look.resembles
                    && case.with_requester(&writer.user, &writer.groups).trusted()
            })
        };
        let eligible = |keep: &dyn Fn(&LookAlike) -> bool| -> Vec<LookAlike> {
            (LOOK_ALIKES.iter())
                .filter(|look| resembled_trusted(look) && keep(look))
                .copied()
                .collect()
        };
        let choices = [eligible(&|look| look.how == how), eligible(&|_| true)];
        match choices.into_iter().find(|looks| !looks.is_empty()) {
            Some(looks) => (case, pick(&looks, &index), true),
            None => (case, pick(LOOK_ALIKES, &index), false),
        }
    })
}
