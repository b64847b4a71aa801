//! Audit replays pass correctly owned objects (9).

use proptest::prelude::*;
use proptest::sample::select;
use serde_json::json;
use single_owner_policy::policy;

use crate::check;
use crate::common::{
    APP_ID_KEY, CAMEL, CONFIG_MAP, CRD, DEPLOYMENT, FLUX_NAME, FLUX_NAMESPACE, HELM_NAME,
    HELM_NAMESPACE, INTEGRATION, NAMESPACE, OLM_KIND, OLM_NAME, POD, Pairs, Request, Side,
    TRACKING,
};

/// 9. An audit replay — a CREATE with an empty `userInfo`, as Kubewarden's audit scanner sends
///    for every stored object — never fails an object whose owner marks name one valid owner in
///    scope (marks the settings link by `sameOwnerAs` name one owner; a tracking id copied from
///    another object names none), whatever identities, `writes`, `stamp` and `adoption` say, and
///    is never mutated. An object on which two marks the settings do not link name valid owners
///    is reported once, as the later mark's `one owner`.
#[test]
fn audit_replays_pass_correctly_owned_objects() {
    let floors = [
        ("replayed under identities", 25.0),
        ("replayed under stamp: true", 10.0),
        ("replayed under writes: Owner", 10.0),
        ("replayed object with an owner", 60.0),
        ("replayed object with an owner in annotations", 25.0),
        ("replayed object with two owners", 8.0),
    ];
    // (kind, namespace, labels, annotations, the later mark of two owners)
    type Stored = (
        &'static str,
        &'static str,
        Pairs<'static>,
        Pairs<'static>,
        Option<&'static str>,
    );
    const WEB: (&str, &str) = (HELM_NAME, "web");
    const SHOP: (&str, &str) = (HELM_NAMESPACE, "shop");
    let owners: Vec<Stored> = vec![
        (
            CRD,
            "",
            &[(APP_ID_KEY, "ClusterExtension.cert-manager")],
            &[],
            None,
        ),
        (
            NAMESPACE,
            "",
            &[(APP_ID_KEY, "ClusterExtension.team-a")],
            &[],
            None,
        ),
        (
            CONFIG_MAP,
            "team-a",
            &[(APP_ID_KEY, "Extension.team-a.argocd")],
            &[],
            None,
        ),
        (
            CONFIG_MAP,
            "team-b",
            &[(APP_ID_KEY, "ClusterExtension.argocd")],
            &[],
            None,
        ),
        (
            CRD,
            "",
            &[(OLM_KIND, "ClusterExtension"), (OLM_NAME, "cert-manager")],
            &[],
            None,
        ),
        (
            POD,
            "team-a",
            &[(OLM_KIND, "Extension"), (OLM_NAME, "team-a.argocd")],
            &[],
            None,
        ),
        (INTEGRATION, "shop", &[], &[(CAMEL, "operator-1")], None),
        (DEPLOYMENT, "shop", &[], &[WEB, SHOP], None),
        // a release installs cluster-scoped objects and objects in other namespaces
        (CRD, "", &[], &[WEB, SHOP], None),
        (CONFIG_MAP, "team-b", &[], &[WEB, SHOP], None),
        // helm-controller's labels beside Helm's annotations: one owner
        (
            DEPLOYMENT,
            "shop",
            &[(FLUX_NAME, "web"), (FLUX_NAMESPACE, "shop")],
            &[WEB, SHOP],
            None,
        ),
        (
            DEPLOYMENT,
            "shop",
            &[],
            &[(TRACKING, "guestbook-prod:apps/Deployment:shop/x")],
            None,
        ),
        (
            CRD,
            "",
            &[],
            &[(
                TRACKING,
                "guestbook-prod:apiextensions.k8s.io/CustomResourceDefinition:argocd/x",
            )],
            None,
        ),
        // a Pod with its Deployment's tracking id, beside its release
        (
            POD,
            "shop",
            &[],
            &[
                WEB,
                SHOP,
                (TRACKING, "guestbook-prod:apps/Deployment:shop/x"),
            ],
            None,
        ),
        (CRD, "", &[], &[], None),
        // two owners: the later mark is reported
        (
            DEPLOYMENT,
            "shop",
            &[],
            &[
                WEB,
                SHOP,
                (TRACKING, "guestbook-prod:apps/Deployment:shop/x"),
            ],
            Some(HELM_NAME),
        ),
        (
            INTEGRATION,
            "shop",
            &[(APP_ID_KEY, "ClusterExtension.argocd")],
            &[(CAMEL, "operator-1")],
            Some(CAMEL),
        ),
        (
            DEPLOYMENT,
            "shop",
            &[(FLUX_NAME, "web"), (FLUX_NAMESPACE, "shop")],
            &[(CAMEL, "operator-2")],
            Some(CAMEL),
        ),
    ];
    let owners = select(owners);
    let settings = (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>());
    check(
        (owners, settings),
        &floors,
        |((kind, namespace, labels, annotations, second), flags), tally| {
            let (identities, writes, stamp, deny_adoption) = flags;
            // The order of examples/argo-cd and examples/flux: tracking ids, Flux, Helm, the rest.
            let mut settings = json!({"ownerMarks": [
                {"annotation": TRACKING, "format": "ArgoCDTrackingID"},
                {"label": APP_ID_KEY, "clusterKinds": ["ClusterExtension"], "namespacedKinds": ["Extension"]},
                {"label": OLM_NAME, "kindKey": OLM_KIND, "clusterKinds": ["ClusterExtension"],
                 "namespacedKinds": ["Extension"]},
                {"label": FLUX_NAME, "namespaceKey": FLUX_NAMESPACE, "sameOwnerAs": [HELM_NAME]},
                {"annotation": HELM_NAME, "namespaceKey": HELM_NAMESPACE},
                {"annotation": CAMEL}]});
            if identities || writes || stamp {
                settings["identities"] = json!([{"owners": ["operator-2"], "users": ["*"]}]);
            }
            if writes {
                settings["writes"] = json!("Owner");
            }
            if stamp {
                settings["stamp"] = json!(true);
            }
            if deny_adoption {
                settings["adoption"] = json!("Deny");
            }
            let side = Side {
                labels,
                offer: None,
                annotations,
            };
            let mut request = Request::create(kind, namespace, side).json();
            request["userInfo"] = json!({});
            tally.count(
                settings["identities"].is_array(),
                "replayed under identities",
            );
            tally.count(stamp, "replayed under stamp: true");
            tally.count(writes, "replayed under writes: Owner");
            tally.count(
                !labels.is_empty() || !annotations.is_empty(),
                "replayed object with an owner",
            );
            tally.count(
                !annotations.is_empty(),
                "replayed object with an owner in annotations",
            );
            tally.count(second.is_some(), "replayed object with two owners");
            let payload = json!({"request": request, "settings": settings});
            let response = policy::validate(&serde_json::to_vec(&payload).unwrap());
            prop_assert!(
                response.mutated_object.is_none(),
                "a replay was mutated: {request}"
            );
            match second {
                None => prop_assert!(response.accepted, "{:?} on {request}", response.message),
                Some(key) => {
                    let message = response.message.unwrap_or_default();
                    let lines: Vec<_> = message.lines().collect();
                    prop_assert!(
                        lines.len() == 1
                            && lines[0].starts_with(&format!("annotation {key}: one owner: ")),
                        "{message:?} on {request}"
                    );
                }
            }
            Ok(())
        },
    );
}
