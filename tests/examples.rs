//! The documentation: the deploying guide shows the Flux example as it is, and every link of
//! the README and of docs/ resolves. (The examples' policies are checked against the generator
//! in manifest/tests/examples.rs, their samples through the compiled module in e2e.bats.)

use std::fs;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_deploying_guide_shows_the_flux_example_as_it_is() {
    let readme = fs::read_to_string(root().join("docs/deploying.md")).unwrap();
    let policy = fs::read_to_string(root().join("examples/flux/policy.yaml")).unwrap();
    let manifest = &policy[policy.find("apiVersion:").unwrap()..];
    // Up to the generated conditions, which the README describes instead of printing.
    let conditions = "  matchConditions:\n";
    let shown = &manifest[..manifest.find(conditions).unwrap() + conditions.len()];
    assert!(
        readme.contains(shown),
        "docs/deploying.md must show examples/flux/policy.yaml from apiVersion to its matchConditions"
    );
}

/// Every link of the README and of docs/ resolves: to a file of the repository (written as the
/// repository's GitHub address, so that it works where the README is embedded), and to a
/// heading of it.
#[test]
fn every_link_of_the_readme_and_the_docs_resolves() {
    const REPOSITORY: &str =
        "https://github.com/single-owner-policy/single-owner-policy/blob/main/";
    let anchors = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|line| line.strip_prefix('#'))
            .map(|heading| heading.trim_start_matches('#').trim().to_lowercase())
            .map(|heading| {
                heading
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == ' ' || *c == '-')
                    .collect::<String>()
                    .replace(' ', "-")
            })
            .collect()
    };
    let mut documents = vec!["README.md".to_owned()];
    for entry in fs::read_dir(root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        documents.push(format!("docs/{name}"));
    }
    let mut links = 0;
    for document in &documents {
        let text = fs::read_to_string(root().join(document)).unwrap();
        for (at, _) in text.match_indices("](") {
            let link = text[at + 2..].split([')', ' ']).next().unwrap();
            let (path, anchor) = match link.strip_prefix(REPOSITORY) {
                Some(target) => target.split_once('#').unwrap_or((target, "")),
                None if link.starts_with('#') => (document.as_str(), &link[1..]),
                None if link.starts_with("http") => continue,
                None => panic!("{document}: {link} is relative: write {REPOSITORY}…"),
            };
            links += 1;
            let target = root().join(path);
            assert!(target.exists(), "{document}: {link}: no {path}");
            if !anchor.is_empty() {
                let text = fs::read_to_string(&target).unwrap();
                assert!(
                    anchors(&text).iter().any(|known| known == anchor),
                    "{document}: {link}: no heading #{anchor} in {path}"
                );
            }
        }
    }
    assert!(links > 30, "{links} links");
}
