//! metadata.yml, artifacthub-pkg.yml and Cargo.toml describe the same policy.

use serde_yaml::Value;

fn yaml(file: &str) -> Value {
    let path = format!("{}/{file}", env!("CARGO_MANIFEST_DIR"));
    serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn versions_are_in_step() {
    let version = env!("CARGO_PKG_VERSION");
    let metadata = yaml("metadata.yml");
    let package = yaml("artifacthub-pkg.yml");
    assert_eq!(
        metadata["annotations"]["io.kubewarden.policy.version"].as_str(),
        Some(version)
    );
    assert_eq!(package["version"].as_str(), Some(version));
    let image = package["containersImages"][0]["image"].as_str().unwrap();
    assert!(image.ends_with(&format!(":v{version}")), "{image}");
    let oci_url = metadata["annotations"]["io.kubewarden.policy.ociUrl"]
        .as_str()
        .unwrap();
    assert!(image.starts_with(oci_url), "{image} is not {oci_url}");
    for link in package["links"].as_sequence().unwrap() {
        let url = link["url"].as_str().unwrap();
        assert!(
            !url.contains("/download/") || url.contains(&format!("/v{version}/")),
            "{url}"
        );
    }
}

#[test]
fn rules_and_mutation_are_in_step() {
    let metadata = yaml("metadata.yml");
    let annotations = &yaml("artifacthub-pkg.yml")["annotations"];
    let rules: Value =
        serde_yaml::from_str(annotations["kubewarden/rules"].as_str().unwrap()).unwrap();
    assert_eq!(rules, metadata["rules"]);
    let mutating = metadata["mutating"].as_bool().unwrap().to_string();
    assert_eq!(
        annotations["kubewarden/mutation"].as_str(),
        Some(mutating.as_str())
    );
    let context_aware = metadata["contextAware"].as_bool().unwrap().to_string();
    assert_eq!(
        annotations["kubewarden/contextAware"].as_str(),
        Some(context_aware.as_str())
    );
}
