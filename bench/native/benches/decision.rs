//! Native cost of one decision: parsing the payload, applying every rule and writing the
//! response's JSON (`policy::answer`, what the module's `validate` does).
//!
//! `cargo bench -p bench-native --bench decision`; `-- --test` runs each once (as `make check`
//! does). It lives here, not in the policy crate, so that bench-fixtures' `serde_json`
//! `preserve_order` stays out of the policy's test build; in this build it is on, which changes
//! nothing measured here: the policy builds no JSON map. Besides
//! samples from `test_data/`, the generated fixtures of `bench/fixtures` (a ConfigMap CREATE, a
//! Deployment UPDATE, a CRD UPDATE with a 900 KiB schema a side), which `bench/compare` runs through the
//! compiled module too.

use criterion::{Criterion, criterion_group, criterion_main};
use single_owner_policy::{NoHost, policy};
use std::hint::black_box;

fn payload(fixture: &str, settings: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../test_data/{fixture}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let request = std::fs::read_to_string(path).unwrap();
    format!(r#"{{"request": {request}, "settings": {settings}}}"#).into_bytes()
}

fn decisions(c: &mut Criterion) {
    // Each case is measured only after it got the verdict its name says.
    let cases = [
        (
            "configmap create, allowed",
            payload("configmap-create-own-namespace", "{}"),
            Some(true),
        ),
        (
            "crd update, owner change denied",
            payload("crd-update-owner-change", "{}"),
            Some(false),
        ),
        (
            "job update, unchanged owner",
            payload("job-update-legacy-owner", "{}"),
            Some(true),
        ),
    ];
    for (name, payload, accepted) in &cases {
        let response = policy::validate(payload);
        assert_eq!(
            Some(response.accepted),
            *accepted,
            "{name}: {:?}",
            response.message
        );
        if !response.accepted {
            let message = response.message.unwrap_or_default();
            assert!(
                message.starts_with("label appID: owner change denied"),
                "{name}: {message}"
            );
        }
        c.bench_function(name, |b| {
            b.iter(|| policy::answer(black_box(payload), &NoHost).unwrap())
        });
    }
    for fixture in &bench_fixtures::FIXTURES {
        let payload = bench_fixtures::payload(&(fixture.request)(), "{}");
        let response = policy::validate(&payload);
        assert!(
            response.accepted,
            "{}: {:?}",
            fixture.name, response.message
        );
        c.bench_function(&format!("{}, allowed", fixture.name), |b| {
            b.iter(|| policy::answer(black_box(&payload), &NoHost).unwrap())
        });
    }
    let settings = br#"{"ownerMarks": [{"label": "olm.operatorframework.io/owner-name",
        "kindKey": "olm.operatorframework.io/owner-kind", "clusterKinds": ["ClusterExtension"]},
        {"annotation": "meta.helm.sh/release-name", "namespaceKey": "meta.helm.sh/release-namespace"},
        {"annotation": "argocd.argoproj.io/tracking-id", "format": "ArgoCDTrackingID"}]}"#;
    // Measured only once it is valid: a rejected document returns before most of the checks.
    let response = policy::validate_settings(settings);
    assert!(response.valid, "settings: {:?}", response.message);
    c.bench_function("settings validation", |b| {
        b.iter(|| policy::validate_settings(black_box(settings)))
    });
}

criterion_group!(benches, decisions);
criterion_main!(benches);
