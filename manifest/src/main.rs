//! Prints the ClusterAdmissionPolicy for a settings file, with the match conditions derived
//! from the settings.
//!
//! ```console
//! manifest SETTINGS.yaml [--name NAME] [--mode monitor|protect] [--rbac]
//! ```
//!
//! With `--rbac`, it prints instead what policy-server's service account needs to read what the
//! policy reads (`make rbac`).
//!
//! The name defaults to `single-owner-<folder of the settings file>` (`single-owner-helm` for
//! `examples/helm/settings.yaml`), the mode to `protect`.

use std::path::Path;
use std::process::ExitCode;

use single_owner_manifest::Mode;
use single_owner_policy::dns::is_dns_label;

const USAGE: &str = "usage: manifest SETTINGS.yaml [--name NAME] [--mode monitor|protect] [--rbac]";

/// The command line: the settings file, and the options given.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Arguments {
    path: String,
    name: Option<String>,
    mode: Mode,
    /// Whether to print policy-server's RBAC rather than the policy.
    rbac: bool,
}

fn main() -> ExitCode {
    let arguments = match parse(std::env::args().skip(1)) {
        Ok(arguments) => arguments,
        Err(error) => {
            eprintln!("manifest: {error}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let path = &arguments.path;
    let name = arguments
        .name
        .unwrap_or_else(|| default_name(Path::new(path)));
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("manifest: {path}: {error}");
            return ExitCode::FAILURE;
        }
    };
    let printed = match arguments.rbac {
        true => single_owner_manifest::policy_server_rbac(&name, &text),
        false => single_owner_manifest::manifest(&name, arguments.mode, &text),
    };
    match printed {
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

/// Reads the arguments: one settings file, `--name NAME` and `--mode MODE` at most once each,
/// in any order.
fn parse(arguments: impl IntoIterator<Item = String>) -> Result<Arguments, String> {
    let mut arguments = arguments.into_iter();
    let (mut path, mut name, mut mode, mut rbac) = (None, None, None, false);
    while let Some(argument) = arguments.next() {
        let mut value = |option: &str| {
            arguments
                .next()
                .ok_or_else(|| format!("{option} needs a value"))
        };
        match argument.as_str() {
            "--name" if name.is_none() => name = Some(value("--name")?),
            "--mode" if mode.is_none() => mode = Some(value("--mode")?.parse()?),
            "--rbac" if !rbac => rbac = true,
            "--name" | "--mode" | "--rbac" => return Err(format!("{argument} is given twice")),
            option if option.starts_with('-') => return Err(format!("unknown option {option}")),
            _ if path.is_none() => path = Some(argument),
            _ => return Err("one settings file at a time".to_owned()),
        }
    }
    Ok(Arguments {
        path: path.ok_or("no settings file")?,
        name,
        mode: mode.unwrap_or_default(),
        rbac,
    })
}

/// The default name for a settings file: after its folder's name (see [`name_after`]).
fn default_name(path: &Path) -> String {
    let folder = std::fs::canonicalize(path)
        .ok()
        .and_then(|path| Some(path.parent()?.file_name()?.to_str()?.to_owned()));
    name_after(folder.as_deref())
}

/// `single-owner-<folder>` when that is a DNS label (as the name of an object must be),
/// `single-owner` otherwise.
fn name_after(folder: Option<&str>) -> String {
    folder
        .map(|folder| format!("single-owner-{folder}"))
        .filter(|name| is_dns_label(name))
        .unwrap_or_else(|| "single-owner".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(arguments: &[&str]) -> Result<Arguments, String> {
        parse(arguments.iter().map(|argument| (*argument).to_owned()))
    }

    #[test]
    fn arguments_come_in_any_order() {
        let expected = Arguments {
            path: "s.yaml".to_owned(),
            name: Some("n".to_owned()),
            mode: Mode::Monitor,
            rbac: false,
        };
        for arguments in [
            ["s.yaml", "--name", "n", "--mode", "monitor"],
            ["--mode", "monitor", "s.yaml", "--name", "n"],
            ["--name", "n", "--mode", "monitor", "s.yaml"],
        ] {
            assert_eq!(parsed(&arguments), Ok(expected.clone()));
        }
        let defaults = parsed(&["s.yaml"]).unwrap();
        assert_eq!((defaults.name, defaults.mode), (None, Mode::Protect));
        assert!(parsed(&["--rbac", "s.yaml"]).unwrap().rbac);
        assert_eq!(
            parsed(&["s.yaml", "--rbac", "--rbac"]),
            Err("--rbac is given twice".to_owned())
        );
    }

    #[test]
    fn wrong_arguments_are_refused() {
        for (arguments, error) in [
            (&[][..], "no settings file"),
            (&["a.yaml", "b.yaml"][..], "one settings file at a time"),
            (&["s.yaml", "--mode"][..], "--mode needs a value"),
            (
                &["s.yaml", "--mode", "enforce"][..],
                "mode \"enforce\": write monitor or protect",
            ),
            (
                &["s.yaml", "--name", "a", "--name", "b"][..],
                "--name is given twice",
            ),
            (&["s.yaml", "-n", "a"][..], "unknown option -n"),
        ] {
            assert_eq!(parsed(arguments), Err(error.to_owned()), "{arguments:?}");
        }
    }

    #[test]
    fn the_default_name_is_after_the_folder_when_that_makes_a_dns_label() {
        let longest = "a".repeat(single_owner_policy::dns::LABEL_MAX - "single-owner-".len());
        for (folder, name) in [
            (Some("helm"), "single-owner-helm".to_owned()),
            (Some(longest.as_str()), format!("single-owner-{longest}")),
            (Some(&*format!("{longest}a")), "single-owner".to_owned()),
            (Some("Helm"), "single-owner".to_owned()),
            (Some("my_setup"), "single-owner".to_owned()),
            (Some("setup-"), "single-owner".to_owned()),
            (Some(""), "single-owner".to_owned()),
            (None, "single-owner".to_owned()),
        ] {
            assert_eq!(name_after(folder), name, "{folder:?}");
        }
    }
}
