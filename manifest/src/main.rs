//! Prints the ClusterAdmissionPolicy for a settings file, with the match conditions derived
//! from the settings.
//!
//! ```console
//! manifest SETTINGS.yaml [--name NAME]
//! ```
//!
//! The name defaults to `single-owner-<folder of the settings file>` (`single-owner-helm` for
//! `examples/helm/settings.yaml`).

use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "usage: manifest SETTINGS.yaml [--name NAME]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, name) = match args.as_slice() {
        [path] => (path, None),
        [path, flag, name] | [flag, name, path] if flag == "--name" => (path, Some(name.clone())),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    if path.starts_with('-') {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    let name = name.unwrap_or_else(|| default_name(Path::new(path)));
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("manifest: {path}: {error}");
            return ExitCode::FAILURE;
        }
    };
    match single_owner_manifest::manifest(&name, &text) {
        Ok(manifest) => {
            print!("{manifest}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("manifest: {path}: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `single-owner-<folder>` for a settings file in a folder, `single-owner` otherwise.
fn default_name(path: &Path) -> String {
    let folder = std::fs::canonicalize(path)
        .ok()
        .and_then(|path| Some(path.parent()?.file_name()?.to_str()?.to_owned()));
    match folder {
        Some(folder) if is_dns_label(&folder) => format!("single-owner-{folder}"),
        _ => "single-owner".to_owned(),
    }
}

/// Whether `text` may stand in a Kubernetes object name: lower-case alphanumerics and '-'.
fn is_dns_label(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 50
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !text.starts_with('-')
        && !text.ends_with('-')
}
