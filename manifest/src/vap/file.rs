//! The file `make vap` writes: the policy (with its exemptions twin), its header saying how it
//! was generated, and with the split, the webhook's policy beside it.

use super::render::mutating;
use super::stamp::stamping;
use super::{Split, vap, yaml};

/// The ValidatingAdmissionPolicy `name` and its binding, in `mode`, for the settings file whose
/// text is `settings_yaml` (with exemptions, their twin too), or every reason it cannot be
/// generated.
pub fn manifest(
    name: &str,
    mode: crate::Mode,
    settings_yaml: &str,
    lookups: Lookups,
    split: Split,
) -> Result<String, String> {
    let mut settings = crate::read_settings(settings_yaml)?;
    let mut header = HEADER.to_owned();
    if lookups == Lookups::Drop
        && settings
            .owner_marks
            .iter()
            .any(|m| m.owner_lookup.is_some())
    {
        for mark in &mut settings.owner_marks {
            mark.owner_lookup = None;
        }
        header.push_str(WITHOUT_LOOKUPS);
    }
    let vap = vap(&settings, split)?;
    if vap.webhook.is_some() {
        header = header.replacen(HEADER, SPLIT_HEADER, 1);
    }
    // Under `stamp: true`, the MutatingAdmissionPolicy stamps, in protect mode only (a monitor
    // changes nothing), and the rest judges the final object.
    let stamping = stamping(&settings)?;
    let mut policy = header;
    match (&stamping, mode) {
        (Some(stamping), crate::Mode::Protect) => {
            policy.push_str(&mutating(&format!("{name}-stamp"), stamping));
        }
        (Some(_), crate::Mode::Monitor) => policy.push_str(MONITOR_STAMPS_NOTHING),
        (None, _) => {}
    }
    policy.push_str(&yaml(name, mode, &vap)?);
    let Some(webhook) = &vap.webhook else {
        return Ok(policy);
    };
    // The webhook judges its requests with the settings as they are, lookups included; under
    // `stamp: true`, as the judging twin, the MutatingAdmissionPolicy stamping.
    let judging = match stamping {
        Some(_) => crate::judging_settings(settings_yaml)?,
        None => settings_yaml.to_owned(),
    };
    let beside = crate::webhook_beside(name, mode, &judging, webhook)?;
    Ok(format!("{policy}{SPLIT}{beside}"))
}

/// What a monitor of settings that stamp says first: nothing is stamped.
const MONITOR_STAMPS_NOTHING: &str = "\
# Monitor mode: no MutatingAdmissionPolicy (a monitor changes nothing); generate with
# MODE=protect for the one that stamps.
";

/// What a split policy says first, instead of [`HEADER`].
const SPLIT_HEADER: &str = "\
# Generated from the settings by `kubectl-single_owner vap --split` (make vap SPLIT=1); see
# docs/vap.md, \"The split\". The API server evaluates this policy in-process; the requests on
# which the module may read another object are left to the Kubewarden policy at the end of this
# file, deployed with it. Together they say what the module says.
";

/// What the webhook's half of a split says first.
const SPLIT: &str = "\
# The webhook's half (--split): Kubewarden judges, with the same settings, the requests on
# which the module may read another object (the match condition for-the-webhook); the
# ValidatingAdmissionPolicy above judges every other, leaving these out (not-for-the-webhook).
";

/// What to do with `ownerLookup`, which the API server cannot make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookups {
    /// Refuse the settings: the webhook finds leftovers, the policy cannot.
    Refuse,
    /// Generate the policy without them: no owner counts as gone, so a leftover stays its
    /// owner's until an exempt requester (or the webhook form) moves it.
    Drop,
}

/// What every generated policy says first.
const HEADER: &str = "\
# Generated from the settings by `kubectl-single_owner vap` (make vap); see docs/vap.md. The API
# server evaluates it in-process: no webhook, no policy-server. It says what the module says, for
# settings that need nothing but the request.
";

/// What a policy generated without the owner lookups says first.
const WITHOUT_LOOKUPS: &str = "\
# Generated without the settings' ownerLookup (--without-lookups): no owner counts as gone, so an
# object left by an uninstalled owner stays that owner's until an exempt requester moves it.
";
