//! `kubectl-single_owner`: the policy's command line for a cluster's operators — the policy for
//! a settings file, what policy-server needs to read what it reads, and who owns what in the
//! cluster. On the PATH it is a kubectl plugin: `kubectl single-owner inventory …`.
//!
//! ```console
//! kubectl-single_owner manifest SETTINGS.yaml [--name NAME] [--mode monitor|protect]
//! kubectl-single_owner rbac SETTINGS.yaml [--name NAME]
//! kubectl-single_owner vap SETTINGS.yaml [--name NAME] [--mode monitor|protect] [--without-lookups] [--split]
//! kubectl get <kinds> -A -o json | kubectl-single_owner inventory --settings SETTINGS.yaml [-o json]
//! ```
//!
//! The name defaults to `single-owner-<folder of the settings file>` (`single-owner-helm` for
//! `examples/helm/settings.yaml`), the mode to `protect`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use single_owner_manifest::vap::{Lookups, Split};
use single_owner_manifest::{Mode, inventory};
use single_owner_policy::dns::is_dns_label;

/// The policy's command line: its manifest, policy-server's RBAC, and an inventory of who owns
/// what.
#[derive(Debug, Parser)]
#[command(name = "kubectl-single_owner", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Prints the ClusterAdmissionPolicy for a settings file, with the match conditions derived
    /// from it.
    Manifest {
        /// The settings file (YAML).
        settings: PathBuf,
        /// The policy's name [default: single-owner-<folder of the settings file>].
        #[arg(long)]
        name: Option<String>,
        /// The policy's mode.
        #[arg(long, default_value = "protect", value_parser = parse_mode)]
        mode: Mode,
    },
    /// Prints the ValidatingAdmissionPolicy for a settings file and its binding, which the API
    /// server evaluates in-process, without Kubewarden (docs/vap.md); refuses, with each
    /// reason, settings that need the webhook.
    Vap {
        /// The settings file (YAML).
        settings: PathBuf,
        /// The policy's name [default: single-owner-<folder of the settings file>].
        #[arg(long)]
        name: Option<String>,
        /// `protect` denies; `monitor` warns and audits.
        #[arg(long, default_value = "protect", value_parser = parse_mode)]
        mode: Mode,
        /// Generate without the settings' `ownerLookup`: a leftover then stays its owner's
        /// until an exempt requester moves it.
        #[arg(long)]
        without_lookups: bool,
        /// Leave to Kubewarden the requests on which the module may read another object
        /// (`writes: Owner`, `parentKinds`, `clusterWriters`): prints its policy too, with a
        /// match condition that selects them.
        #[arg(long)]
        split: bool,
    },
    /// Prints what policy-server's service account needs to read what the policy reads: a
    /// ClusterRole and its binding.
    Rbac {
        /// The settings file (YAML).
        settings: PathBuf,
        /// The policy's name [default: single-owner-<folder of the settings file>].
        #[arg(long)]
        name: Option<String>,
    },
    /// Who owns what: reads the List `kubectl get <kinds> -A -o json` prints and prints each
    /// owner's objects by kind, what two tools' owners claim, leftovers, stale offers and
    /// children out of step with their controller.
    Inventory {
        /// The policy's settings: a settings file, or the policy's manifest (its
        /// spec.settings).
        #[arg(long)]
        settings: PathBuf,
        /// The List to read; standard input when absent or `-`.
        #[arg(short = 'f', long)]
        filename: Option<PathBuf>,
        /// How to print it.
        #[arg(short = 'o', long, value_enum, default_value = "table")]
        output: Output,
    },
}

/// How the inventory is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Output {
    /// A table, for people.
    Table,
    /// JSON, for scripts.
    Json,
}

fn parse_mode(text: &str) -> Result<Mode, String> {
    text.parse()
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(printed) => {
            print!("{printed}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("kubectl-single_owner: {error}");
            ExitCode::FAILURE
        }
    }
}

/// What a command prints, or why it cannot.
fn run(command: Command) -> Result<String, String> {
    match command {
        Command::Manifest {
            settings,
            name,
            mode,
        } => {
            let text = read_file(&settings)?;
            let name = name.unwrap_or_else(|| default_name(&settings));
            single_owner_manifest::manifest(&name, mode, &text)
                .map_err(|why| in_file(&settings, why))
        }
        Command::Vap {
            settings,
            name,
            mode,
            without_lookups,
            split,
        } => {
            let text = read_file(&settings)?;
            let name = name.unwrap_or_else(|| default_name(&settings));
            let lookups = match without_lookups {
                true => Lookups::Drop,
                false => Lookups::Refuse,
            };
            let split = match split {
                true => Split::WithWebhook,
                false => Split::Alone,
            };
            single_owner_manifest::vap::manifest(&name, mode, &text, lookups, split)
                .map_err(|why| in_file(&settings, why))
        }
        Command::Rbac { settings, name } => {
            let text = read_file(&settings)?;
            let name = name.unwrap_or_else(|| default_name(&settings));
            single_owner_manifest::policy_server_rbac(&name, &text)
                .map_err(|why| in_file(&settings, why))
        }
        Command::Inventory {
            settings,
            filename,
            output,
        } => {
            let text = read_file(&settings)?;
            let parsed =
                inventory::policy_settings(&text).map_err(|why| in_file(&settings, why))?;
            let input: Box<dyn Read> = match filename.as_deref() {
                None => Box::new(std::io::stdin().lock()),
                Some(path) if path == Path::new("-") => Box::new(std::io::stdin().lock()),
                Some(path) => Box::new(
                    std::fs::File::open(path).map_err(|error| in_file(path, error.to_string()))?,
                ),
            };
            let read = inventory::read(input, &parsed).map_err(|why| match &filename {
                Some(path) if path != Path::new("-") => in_file(path, why),
                _ => format!("standard input: {why}"),
            })?;
            Ok(match output {
                Output::Table => read.table(),
                Output::Json => format!("{:#}\n", read.json()),
            })
        }
    }
}

fn read_file(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|error| in_file(path, error.to_string()))
}

fn in_file(path: &Path, why: String) -> String {
    format!("{}: {why}", path.display())
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
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn arguments_come_in_any_order_and_wrong_ones_are_refused() {
        let parsed = |arguments: &[&str]| {
            Cli::try_parse_from(["kubectl-single_owner"].iter().chain(arguments))
                .map(|cli| format!("{:?}", cli.command))
                .map_err(|error| error.kind())
        };
        assert_eq!(
            parsed(&["manifest", "s.yaml", "--name", "n", "--mode", "monitor"]),
            parsed(&["manifest", "--mode", "monitor", "--name", "n", "s.yaml"])
        );
        use clap::error::ErrorKind;
        assert_eq!(
            parsed(&["manifest", "s.yaml", "--mode", "enforce"]),
            Err(ErrorKind::ValueValidation)
        );
        assert_eq!(
            parsed(&["manifest"]),
            Err(ErrorKind::MissingRequiredArgument)
        );
        assert_eq!(
            parsed(&["inventory"]),
            Err(ErrorKind::MissingRequiredArgument)
        );
        assert_eq!(
            parsed(&["inventory", "--settings", "s.yaml", "-o", "yaml"]),
            Err(ErrorKind::InvalidValue)
        );
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
