//! The inventory (`kubectl-single_owner inventory`) on a dump of each example's cluster
//! (test_data/inventory/, what test_data/inventory/EXPECTED.md says each holds): who owns what,
//! what two tools' owners claim and the audit's other findings, leftovers, stale offers, children
//! out of step; and bad input refused with what is wrong.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use single_owner_manifest::inventory::{self, Inventory, Leftover};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The inventory of test_data/inventory/`setup`.json under examples/`setup`'s settings.
fn inventory_of(setup: &str) -> Inventory {
    let settings = fs::read_to_string(root().join(format!("examples/{setup}/settings.yaml")));
    let settings = inventory::policy_settings(&settings.unwrap()).unwrap();
    let dump = fs::File::open(root().join(format!("test_data/inventory/{setup}.json"))).unwrap();
    inventory::read(dump, &settings).unwrap()
}

/// Each owner (`owner`, under `mark`) with its object count by kind.
fn owners(inventory: &Inventory) -> Vec<(String, String, BTreeMap<String, usize>)> {
    (inventory.owners.iter())
        .map(|((mark, owner), kinds)| {
            let counts = (kinds.iter())
                .map(|(kind, names)| (kind.clone(), names.len()))
                .collect();
            (owner.clone(), mark.clone(), counts)
        })
        .collect()
}

/// The objects each rule's findings are about.
fn findings(inventory: &Inventory) -> BTreeMap<&str, Vec<&str>> {
    (inventory.findings.iter())
        .map(|(rule, found)| {
            (
                rule.as_str(),
                found.iter().map(|(object, _)| object.as_str()).collect(),
            )
        })
        .collect()
}

fn counts(kinds: &[(&str, usize)]) -> BTreeMap<String, usize> {
    (kinds.iter())
        .map(|(kind, count)| ((*kind).to_owned(), *count))
        .collect()
}

fn owner(
    owner: &str,
    mark: &str,
    kinds: &[(&str, usize)],
) -> (String, String, BTreeMap<String, usize>) {
    (owner.to_owned(), mark.to_owned(), counts(kinds))
}

fn leftover(mark: &str, owner: &str, home: &str, why: &'static str, objects: usize) -> Leftover {
    Leftover {
        mark: mark.to_owned(),
        owner: owner.to_owned(),
        home: home.to_owned(),
        why,
        objects,
    }
}

const OLM: &str = "label olm.operatorframework.io/owner-name";
const HELM: &str = "annotation meta.helm.sh/release-name";
const FLUX: &str = "label kustomize.toolkit.fluxcd.io/name";
const FLUX_HELM: &str = "label helm.toolkit.fluxcd.io/name";
const ARGO: &str = "annotation argocd.argoproj.io/tracking-id";
const CAMEL: &str = "annotation camel.apache.org/operator.id";

#[test]
fn olm_v1() {
    let found = inventory_of("olm-v1");
    assert_eq!(found.objects, 12);
    assert_eq!(
        owners(&found),
        [
            owner(
                "ClusterExtension.argocd",
                OLM,
                &[
                    ("Certificate", 1),
                    ("CustomResourceDefinition", 1),
                    ("Deployment", 1)
                ]
            ),
            owner(
                "ClusterExtension.cert-manager",
                OLM,
                &[
                    ("CertificateRequest", 1),
                    ("ConfigMap", 1),
                    ("CustomResourceDefinition", 2),
                    ("Deployment", 1)
                ]
            ),
            owner(
                "ClusterExtension.old-operator",
                OLM,
                &[("CustomResourceDefinition", 1)]
            ),
        ]
    );
    assert_eq!(
        findings(&found),
        BTreeMap::from([
            ("offer", vec!["ConfigMap cert-manager/cm-config"]),
            ("owner value", vec!["Service cert-manager/half"]),
        ])
    );
    assert_eq!(
        found.leftovers,
        [leftover(
            OLM,
            "ClusterExtension.old-operator",
            "ClusterExtension old-operator",
            "not found",
            1
        )]
    );
    assert_eq!(
        found.out_of_step,
        [[
            "CertificateRequest cert-manager/webhook-tls-1",
            OLM,
            "ClusterExtension.cert-manager",
            "Certificate cert-manager/webhook-tls",
            "\"ClusterExtension.argocd\"",
        ]
        .map(str::to_owned)]
    );
    assert!(found.unchecked.is_empty());
}

#[test]
fn helm() {
    let found = inventory_of("helm");
    assert_eq!(found.objects, 10);
    assert_eq!(
        owners(&found),
        [
            owner("shop/gone", HELM, &[("CustomResourceDefinition", 1)]),
            owner("shop/old", HELM, &[("PersistentVolumeClaim", 1)]),
            owner(
                "shop/web",
                HELM,
                &[("ConfigMap", 1), ("Deployment", 1), ("Service", 1)]
            ),
        ]
    );
    assert_eq!(
        findings(&found),
        BTreeMap::from([("offer", vec!["ConfigMap shop/web-config"])])
    );
    assert_eq!(
        found.leftovers,
        [
            leftover(HELM, "shop/old", "Helm release shop/old", "uninstalled", 1),
            leftover(
                HELM,
                "shop/gone",
                "Helm release shop/gone",
                "no record left",
                1
            ),
        ]
    );
    assert!(found.out_of_step.is_empty() && found.unchecked.is_empty());
}

#[test]
fn flux() {
    let found = inventory_of("flux");
    assert_eq!(found.objects, 10);
    assert_eq!(
        owners(&found),
        [
            owner(
                "shop/web",
                HELM,
                &[("Deployment", 1), ("Service", 1), ("ServiceAccount", 1)]
            ),
            owner("shop/web", FLUX_HELM, &[("Deployment", 1), ("Service", 1)]),
            owner(
                "flux-system/apps",
                FLUX,
                &[("ConfigMap", 1), ("Namespace", 1), ("ServiceAccount", 1)]
            ),
            owner("flux-system/old", FLUX, &[("ClusterRole", 1)]),
        ]
    );
    assert_eq!(
        findings(&found),
        BTreeMap::from([("one owner", vec!["ServiceAccount shop/web"])])
    );
    assert_eq!(
        found.leftovers,
        [leftover(
            FLUX,
            "flux-system/old",
            "Kustomization flux-system/old",
            "not found",
            1
        )]
    );
    assert!(found.out_of_step.is_empty() && found.unchecked.is_empty());
}

#[test]
fn argo_cd() {
    let found = inventory_of("argo-cd");
    assert_eq!(found.objects, 5);
    assert_eq!(
        owners(&found),
        [
            owner(
                "guestbook",
                ARGO,
                &[("ConfigMap", 1), ("Deployment", 1), ("Service", 1)]
            ),
            owner("retired", ARGO, &[("ConfigMap", 1)]),
            owner("shop/web", HELM, &[("ConfigMap", 1)]),
        ]
    );
    assert_eq!(
        findings(&found),
        BTreeMap::from([("one owner", vec!["ConfigMap shop/shared"])])
    );
    assert_eq!(
        found.leftovers,
        [leftover(
            ARGO,
            "retired",
            "Application argocd/retired",
            "not found",
            1
        )]
    );
    // No Secret in the dump: Helm's records cannot tell whether shop/web is gone.
    assert_eq!(
        found.unchecked.iter().collect::<Vec<_>>(),
        ["Secret (v1), Helm's records"]
    );
}

#[test]
fn camel_k() {
    let found = inventory_of("camel-k");
    assert_eq!(found.objects, 5);
    assert_eq!(
        owners(&found),
        [
            owner(
                "operator-1",
                CAMEL,
                &[("Deployment", 2), ("Integration", 1)]
            ),
            owner("operator-2", CAMEL, &[("Integration", 1)]),
        ]
    );
    assert_eq!(
        findings(&found),
        BTreeMap::from([("owner value", vec!["Deployment shop/legacy"])])
    );
    assert!(found.leftovers.is_empty() && found.unchecked.is_empty());
    assert_eq!(
        found.out_of_step,
        [[
            "Deployment shop/billing",
            CAMEL,
            "operator-1",
            "Integration shop/billing",
            "\"operator-2\"",
        ]
        .map(str::to_owned)]
    );
}

/// The summary counts what the sections hold; the JSON holds every section.
#[test]
fn the_json_and_the_summary_say_what_was_found() {
    let found = inventory_of("olm-v1");
    let json = found.json();
    assert_eq!(
        json["summary"],
        serde_json::json!({"objects": 12, "owned": 9, "owners": 3, "conflicts": 0,
            "staleOffers": 1, "leftovers": 1, "outOfStep": 1, "otherFindings": 1})
    );
    assert_eq!(json["owners"].as_array().unwrap().len(), 3);
    assert_eq!(
        json["leftovers"][0]["home"],
        "ClusterExtension old-operator"
    );
    assert_eq!(
        json["outOfStep"][0]["controller"],
        "Certificate cert-manager/webhook-tls"
    );
    assert_eq!(
        json["findings"]["offer"][0]["object"],
        "ConfigMap cert-manager/cm-config"
    );
    let table = found.table();
    assert!(table.ends_with(
        "SUMMARY: 12 objects, 9 owned by 3 owners; 0 claimed by two tools' owners, 1 stale \
         offers, 1 leftovers, 1 out of step, 1 other findings\n"
    ));
}

/// A policy's manifest gives its settings' marks and followed kinds, as its settings file
/// does (of stamping twins, the judging one's, whose `stamp` is off).
#[test]
fn a_policys_manifest_gives_its_settings() {
    for setup in ["helm", "helm-accounts"] {
        let file = |name: &str| fs::read_to_string(root().join(format!("examples/{setup}/{name}")));
        let from_policy = inventory::policy_settings(&file("policy.yaml").unwrap()).unwrap();
        let from_file = inventory::policy_settings(&file("settings.yaml").unwrap()).unwrap();
        assert_eq!(from_policy.owner_marks, from_file.owner_marks, "{setup}");
        assert_eq!(from_policy.parent_kinds, from_file.parent_kinds, "{setup}");
    }
}

/// Bad input is refused, saying what is wrong.
#[test]
fn bad_input_is_refused_saying_what_is_wrong() {
    let settings = inventory::policy_settings("ownerMarks: [{label: appID}]").unwrap();
    let read = |input: &str| {
        inventory::read(input.as_bytes(), &settings)
            .map(|_| ())
            .unwrap_err()
    };
    #[rustfmt::skip]
    let rows = [
        ("[1, 2]", "the input is no List of objects (kubectl get <kinds> -A -o json): invalid type: sequence, expected a List: an object with items at line 1 column 1"),
        (r#"{"kind": "Deployment", "metadata": {}}"#, "the input is no List of objects (kubectl get <kinds> -A -o json): it has no items: one object's JSON, not a List's at line 1 column 38"),
        (r#"{"items": [{"kind": "X"}]}"#, "the input is no List of objects (kubectl get <kinds> -A -o json): items[0]: an object needs apiVersion and kind at line 1 column 25"),
        (r#"{"items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"labels": {"appID": 1}}}]}"#, "the input is no List of objects (kubectl get <kinds> -A -o json): items[0]: metadata.labels.appID: invalid type: integer `1`, expected a string at line 1 column 91"),
        (r#"{"items": []"#, "the input is no List of objects (kubectl get <kinds> -A -o json): EOF while parsing an object at line 1 column 12"),
        (r#"{"items": []} {"items": []}"#, "the input holds more than one List; give one (kubectl get <kinds> -A -o json): trailing characters at line 1 column 15"),
    ];
    for (input, error) in rows {
        assert_eq!(read(input), error, "{input}");
    }
    assert_eq!(
        inventory::policy_settings("kind: ClusterAdmissionPolicy\nspec: {}").unwrap_err(),
        "a policy without settings: give its settings file"
    );
}
