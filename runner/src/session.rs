//! A session of host-capability exchanges to replay, as `kwctl run
//! --replay-host-capabilities-interactions FILE` replays it: the YAML that `kwctl run
//! --record-host-capabilities-interactions FILE` writes.
//!
//! The format and the matching are kwctl's (kwctl's `src/callback_handler/proxy.rs`, now
//! `crates/kwctl/src/callback_handler/proxy.rs` in kubewarden/adm-controller):
//!
//! ```yaml
//! - type: Exchange
//!   request: |
//!     !KubernetesGetResource
//!     api_version: camel.apache.org/v1
//!     kind: Integration
//!     name: shop
//!     namespace: team-a
//!     disable_cache: false
//!     field_masks: null
//!   response:
//!     type: Success
//!     payload: '{"apiVersion":"camel.apache.org/v1","kind":"Integration",…}'
//! ```
//!
//! Each `request` is a string holding a YAML-tagged policy-evaluator `CallbackRequestType`
//! (`callback_requests.rs`); each `response` either `{type: Success, payload}` or `{type:
//! Error, message}`. The exchanges are replayed in order, one per host call: the n-th call
//! is answered by the n-th exchange when its request equals the call's, field by field.

use std::{collections::BTreeSet, fmt, path::Path};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// A host call, as the session file records it: policy-evaluator's `CallbackRequestType`,
/// of which the runner serves the two variants below. Its `Debug` output is the enum's, which
/// kwctl's replay error prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    /// `kubernetes/get_resource`: one object by name, policy-evaluator's variant, into which it
    /// moves the fields of the guest's `GetResourceRequest`. As in policy-evaluator, a recorded
    /// `field_masks` may be left out (older kwctl did not record it); `disable_cache` may not.
    KubernetesGetResource {
        api_version: String,
        kind: String,
        name: String,
        namespace: Option<String>,
        disable_cache: bool,
        field_masks: Option<BTreeSet<String>>,
    },
    /// `kubernetes/list_resources_by_namespace`: the objects of a kind in a namespace,
    /// policy-evaluator's variant, into which it moves the fields of the guest's
    /// `ListResourcesByNamespaceRequest`.
    KubernetesListResourceNamespace {
        api_version: String,
        kind: String,
        namespace: String,
        label_selector: Option<String>,
        field_selector: Option<String>,
        field_masks: Option<BTreeSet<String>>,
    },
}

/// The host's answer to a recorded call (kwctl's `Response`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Response {
    /// The payload handed to the guest: the object's JSON, for `get_resource`.
    Success { payload: String },
    /// The host call failed with this message (as a lookup of a missing object does).
    Error { message: String },
}

/// One recorded exchange as the file holds it (kwctl's `Exchange`): the request is YAML
/// text, parsed when the session is read.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type")]
struct Exchange {
    request: String,
    response: Response,
}

/// A session: the exchanges to replay, in order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Session {
    exchanges: Vec<(Request, Response)>,
}

/// How the session answers a host call.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply<'a> {
    /// The next exchange records this very request: its response.
    Recorded(&'a Response),
    /// The next exchange records another request.
    Unexpected { expected: &'a Request },
    /// Every exchange has been replayed already.
    Exhausted,
}

impl Session {
    /// The session in a file: kwctl's session YAML.
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| {
            format!(
                "Cannot open host capabilities interactions file {}",
                path.display()
            )
        })?;
        Self::from_yaml(&text).with_context(|| {
            format!(
                "Cannot read host capabilities interactions file {}",
                path.display()
            )
        })
    }

    /// The session in kwctl's session YAML.
    pub fn from_yaml(text: &str) -> Result<Self> {
        // kwctl reads an empty file as an empty session: a YAML document of nothing is null.
        let exchanges: Option<Vec<Exchange>> = serde_yaml::from_str(text)?;
        let exchanges = exchanges
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(index, exchange)| {
                let request = serde_yaml::from_str(&exchange.request).with_context(|| {
                    format!(
                        "exchange {}: cannot read its request as a call the runner replays \
                         (a !KubernetesGetResource or !KubernetesListResourceNamespace)",
                        index + 1
                    )
                })?;
                Ok((request, exchange.response))
            })
            .collect::<Result<_>>()?;
        Ok(Self { exchanges })
    }

    /// How many exchanges the session holds.
    pub fn len(&self) -> usize {
        self.exchanges.len()
    }

    /// Whether the session holds no exchange.
    pub fn is_empty(&self) -> bool {
        self.exchanges.is_empty()
    }

    /// The request of the exchange at `index` (from 0).
    pub fn request(&self, index: usize) -> Option<&Request> {
        self.exchanges.get(index).map(|(request, _)| request)
    }

    /// The answer to `request` when it is the host call at `index` (from 0), as kwctl's
    /// `produce_recorded_response` gives it.
    pub fn reply(&self, index: usize, request: &Request) -> Reply<'_> {
        match self.exchanges.get(index) {
            None => Reply::Exhausted,
            Some((recorded, response)) if recorded == request => Reply::Recorded(response),
            Some((recorded, _)) => Reply::Unexpected { expected: recorded },
        }
    }

    /// The session as kwctl writes it (`serde_yaml` of its exchanges, each request a YAML
    /// string): to write sample sessions.
    #[cfg(test)]
    pub fn to_yaml(&self) -> Result<String> {
        let exchanges = self
            .exchanges
            .iter()
            .map(|(request, response)| {
                Ok(Exchange {
                    request: serde_yaml::to_string(request)?,
                    response: response.clone(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(serde_yaml::to_string(&exchanges)?)
    }
}

#[cfg(test)]
impl FromIterator<(Request, Response)> for Session {
    fn from_iter<I: IntoIterator<Item = (Request, Response)>>(exchanges: I) -> Self {
        Self {
            exchanges: exchanges.into_iter().collect(),
        }
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::KubernetesGetResource {
                api_version,
                kind,
                name,
                namespace,
                ..
            } => match namespace {
                Some(namespace) => write!(f, "{api_version} {kind} {namespace}/{name}"),
                None => write!(f, "{api_version} {kind} {name}"),
            },
            Self::KubernetesListResourceNamespace {
                api_version,
                kind,
                namespace,
                label_selector,
                ..
            } => {
                write!(f, "the {api_version} {kind} list of {namespace}")?;
                match label_selector {
                    Some(selector) => write!(f, " labelled {selector}"),
                    None => Ok(()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(name: &str) -> Request {
        Request::KubernetesGetResource {
            api_version: "camel.apache.org/v1".to_owned(),
            kind: "Integration".to_owned(),
            name: name.to_owned(),
            namespace: Some("team-a".to_owned()),
            disable_cache: false,
            field_masks: None,
        }
    }

    fn found(payload: &str) -> Response {
        Response::Success {
            payload: payload.to_owned(),
        }
    }

    /// The YAML kwctl writes for one exchange: `serde_yaml` of its `Exchange`, the request a
    /// block string holding the tagged `CallbackRequestType`.
    const KWCTL_RECORDING: &str = r#"- type: Exchange
  request: |
    !KubernetesGetResource
    api_version: camel.apache.org/v1
    kind: Integration
    name: shop
    namespace: team-a
    disable_cache: false
    field_masks: null
  response:
    type: Success
    payload: '{"kind":"Integration"}'
"#;

    #[test]
    fn reads_what_kwctl_records_and_writes_it_back_alike() {
        let session = Session::from_yaml(KWCTL_RECORDING).unwrap();
        assert_eq!(
            session,
            Session::from_iter([(get("shop"), found(r#"{"kind":"Integration"}"#))])
        );
        assert_eq!(session.to_yaml().unwrap(), KWCTL_RECORDING);
    }

    /// The YAML kwctl writes for a list call.
    const KWCTL_LIST_RECORDING: &str = r#"- type: Exchange
  request: |
    !KubernetesListResourceNamespace
    api_version: v1
    kind: Secret
    namespace: shop
    label_selector: owner=helm,name=web
    field_selector: null
    field_masks:
    - metadata.labels
  response:
    type: Success
    payload: '{"apiVersion":"v1","kind":"SecretList","metadata":{},"items":[]}'
"#;

    #[test]
    fn reads_a_list_kwctl_records_and_writes_it_back_alike() {
        let session = Session::from_yaml(KWCTL_LIST_RECORDING).unwrap();
        let list = Request::KubernetesListResourceNamespace {
            api_version: "v1".to_owned(),
            kind: "Secret".to_owned(),
            namespace: "shop".to_owned(),
            label_selector: Some("owner=helm,name=web".to_owned()),
            field_selector: None,
            field_masks: Some(["metadata.labels".to_owned()].into()),
        };
        let payload = r#"{"apiVersion":"v1","kind":"SecretList","metadata":{},"items":[]}"#;
        assert_eq!(session, Session::from_iter([(list, found(payload))]));
        assert_eq!(session.to_yaml().unwrap(), KWCTL_LIST_RECORDING);
    }

    #[test]
    fn a_recording_without_field_masks_reads_as_none() {
        let older = KWCTL_RECORDING.replace("    field_masks: null\n", "");
        assert_eq!(
            Session::from_yaml(&older).unwrap(),
            Session::from_yaml(KWCTL_RECORDING).unwrap()
        );
    }

    #[test]
    fn a_recording_without_disable_cache_is_refused() {
        let broken = KWCTL_RECORDING.replace("    disable_cache: false\n", "");
        let error = format!("{:#}", Session::from_yaml(&broken).unwrap_err());
        assert!(error.contains("missing field `disable_cache`"), "{error}");
    }

    #[test]
    fn a_recorded_call_the_runner_does_not_serve_is_refused() {
        let digest = "- type: Exchange\n  request: |\n    !OciManifestDigest\n    image: busybox\n  \
                      response:\n    type: Success\n    payload: sha256:0\n";
        let error = format!("{:#}", Session::from_yaml(digest).unwrap_err());
        assert!(error.starts_with("exchange 1: "), "{error}");
    }

    #[test]
    fn an_empty_file_is_an_empty_session() {
        assert!(Session::from_yaml("").unwrap().is_empty());
        assert!(Session::from_yaml("[]").unwrap().is_empty());
    }

    #[test]
    fn replies_in_order_by_equality_of_the_whole_request() {
        let session = Session::from_iter([
            (get("shop"), found("1")),
            (
                get("cart"),
                Response::Error {
                    message: "not found".to_owned(),
                },
            ),
        ]);
        assert_eq!(session.reply(0, &get("shop")), Reply::Recorded(&found("1")));
        assert_eq!(
            session.reply(1, &get("shop")),
            Reply::Unexpected {
                expected: &get("cart")
            }
        );
        let Request::KubernetesGetResource {
            api_version,
            kind,
            name,
            namespace,
            ..
        } = get("cart")
        else {
            unreachable!()
        };
        let uncached = Request::KubernetesGetResource {
            api_version,
            kind,
            name,
            namespace,
            disable_cache: true,
            field_masks: None,
        };
        assert!(matches!(
            session.reply(1, &uncached),
            Reply::Unexpected { .. }
        ));
        assert_eq!(session.reply(2, &get("shop")), Reply::Exhausted);
    }
}
