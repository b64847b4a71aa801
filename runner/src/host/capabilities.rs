//! The host capabilities the runner answers, as policy-evaluator's waPC host callback
//! (`host_callback` in `src/runtimes/callback.rs`, formerly `src/runtimes/wapc/callback.rs`)
//! answers them under `kwctl run`:
//!
//! - `tracing/log`: the policy's log records (printed with `-v`);
//! - `kubernetes/get_resource`: refused unless the module is granted the kind, then answered
//!   from the replayed session (`kwctl run --replay-host-capabilities-interactions`).
//!
//! The guest sees kwctl's answers, words included. The runner is stricter than kwctl in one
//! way: every departure from the session (a call no exchange records, an exchange no call
//! asks for) and every call to a capability the runner does not offer is written in the
//! [`Ledger`], and `runner run` fails on it, so that a wrong lookup cannot pass for a failed
//! one.

use std::{
    collections::{BTreeMap, BTreeSet},
    error::Error,
    sync::{Mutex, PoisonError},
};

use anyhow::{Result, bail};
use kubewarden_policy_sdk::host_capabilities::kubernetes::{
    GetResourceRequest, ListResourcesByNamespaceRequest,
};

use crate::{
    metadata::ContextAwareResource,
    session::{Reply, Request, Response, Session},
};

/// What the host offers a policy for a whole run: fixed once the command line is read.
#[derive(Debug, Default, Clone)]
pub struct Capabilities {
    /// Print the policy's log records on stderr.
    pub verbose: bool,
    /// The Kubernetes kinds the policy may read (see `metadata::granted_resources`).
    pub granted: BTreeSet<ContextAwareResource>,
    /// The exchanges that answer the Kubernetes calls, when a session is replayed.
    pub session: Option<Session>,
}

/// The host calls made since the ledger was last cleared, and what went wrong with them.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Calls, by capability (`namespace/operation`).
    calls: BTreeMap<String, usize>,
    /// Session exchanges replayed so far (kwctl's replay cursor).
    replayed: usize,
    /// Departures from the session, and calls the runner cannot answer as kwctl would.
    problems: Vec<String>,
}

/// The host calls of an evaluation (or a run) and the verdict on them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostCalls {
    /// Calls, by capability (`namespace/operation`, as Kubewarden names capabilities).
    pub by_capability: BTreeMap<String, usize>,
    /// What departs from the session or from kwctl: empty when all is well.
    pub problems: Vec<String>,
}

impl HostCalls {
    /// `Err` naming every problem, for the run to fail on.
    pub fn check(&self) -> Result<()> {
        if self.problems.is_empty() {
            return Ok(());
        }
        bail!(
            "the policy's host calls do not match the replayed session: {}",
            self.problems.join("; ")
        )
    }
}

impl Ledger {
    /// The calls so far, with every exchange of `session` not yet replayed as a problem.
    pub fn host_calls(&self, session: Option<&Session>) -> HostCalls {
        let mut problems = self.problems.clone();
        if let Some(session) = session {
            for index in self.replayed..session.len() {
                if let Some(request) = session.request(index) {
                    problems.push(format!(
                        "exchange {} of {} ({request}) was never asked for",
                        index + 1,
                        session.len()
                    ));
                }
            }
        }
        HostCalls {
            by_capability: self.calls.clone(),
            problems,
        }
    }
}

/// An error handed to the guest: the host call fails with its text.
type GuestError = Box<dyn Error + Send + Sync>;

/// The payload of a `kubernetes/get_resource` call is the SDK's `GetResourceRequest`, which
/// policy-evaluator deserialises the payload into and turns into the `CallbackRequestType` a
/// session records.
impl From<GetResourceRequest> for Request {
    fn from(request: GetResourceRequest) -> Self {
        Self::KubernetesGetResource {
            api_version: request.api_version,
            kind: request.kind,
            name: request.name,
            namespace: request.namespace,
            disable_cache: request.disable_cache,
            field_masks: request.field_masks,
        }
    }
}

/// The payload of a `kubernetes/list_resources_by_namespace` call is the SDK's
/// `ListResourcesByNamespaceRequest`, which policy-evaluator turns into the
/// `CallbackRequestType` a session records.
impl From<ListResourcesByNamespaceRequest> for Request {
    fn from(request: ListResourcesByNamespaceRequest) -> Self {
        Self::KubernetesListResourceNamespace {
            api_version: request.api_version,
            kind: request.kind,
            namespace: request.namespace,
            label_selector: request.label_selector,
            field_selector: request.field_selector,
            field_masks: request.field_masks,
        }
    }
}

/// The capabilities policy-evaluator offers that the runner does not.
const NOT_OFFERED: [(&str, &str); 9] = [
    ("oci", "v1/verify"),
    ("oci", "v2/verify"),
    ("oci", "v1/manifest_digest"),
    ("oci", "v1/oci_manifest"),
    ("oci", "v1/oci_manifest_config"),
    ("net", "v1/dns_lookup_host"),
    ("crypto", "v1/is_certificate_trusted"),
    ("kubernetes", "list_resources_all"),
    ("kubernetes", "can_i"),
];

/// Answer one host call of the guest, recording it in `ledger`.
pub fn host_callback(
    capabilities: &Capabilities,
    ledger: &Mutex<Ledger>,
    binding: &str,
    namespace: &str,
    operation: &str,
    payload: &[u8],
) -> Result<Vec<u8>, GuestError> {
    let mut ledger = ledger.lock().unwrap_or_else(PoisonError::into_inner);
    *ledger
        .calls
        .entry(format!("{namespace}/{operation}"))
        .or_default() += 1;

    // policy-evaluator's words for what it does not know.
    if binding != "kubewarden" {
        return Err(format!("unknown binding: {binding}").into());
    }
    match (namespace, operation) {
        ("tracing", "log") => {
            if capabilities.verbose {
                eprintln!("{}", String::from_utf8_lossy(payload));
            }
            Ok(Vec::new())
        }
        ("kubernetes", "get_resource") => {
            let request: GetResourceRequest = serde_json::from_slice(payload)?;
            replay(capabilities, &mut ledger, request.into())
        }
        ("kubernetes", "list_resources_by_namespace") => {
            let request: ListResourcesByNamespaceRequest = serde_json::from_slice(payload)?;
            replay(capabilities, &mut ledger, request.into())
        }
        known if NOT_OFFERED.contains(&known) => {
            let refusal = format!(
                "host capability kubewarden/{namespace}/{operation} is not available in this runner"
            );
            ledger.problems.push(refusal.clone());
            Err(refusal.into())
        }
        ("tracing" | "oci" | "net" | "crypto" | "kubernetes", _) => {
            Err(format!("unknown operation: {operation}").into())
        }
        _ => Err(format!("unknown namespace: {namespace}").into()),
    }
}

/// `kubernetes/get_resource` and `kubernetes/list_resources_by_namespace`: refused, in
/// policy-evaluator's words, unless the kind is granted; then answered by the next exchange of
/// the session, in kwctl's words (its `produce_recorded_response`), wrapped as
/// policy-evaluator wraps a failed callback (`Callback evaluation failure: {error:?}`, of an
/// error with a message alone).
fn replay(
    capabilities: &Capabilities,
    ledger: &mut Ledger,
    request: Request,
) -> Result<Vec<u8>, GuestError> {
    let (Request::KubernetesGetResource {
        api_version, kind, ..
    }
    | Request::KubernetesListResourceNamespace {
        api_version, kind, ..
    }) = &request;
    let wanted = ContextAwareResource {
        api_version: api_version.clone(),
        kind: kind.clone(),
    };
    if !capabilities.granted.contains(&wanted) {
        return Err(format!(
            "Policy has not been granted access to Kubernetes {api_version}/{kind} resources. \
             The violation has been reported."
        )
        .into());
    }
    // A granted kind with no session is refused before any evaluation (see `main`); an empty
    // session stands in should it happen.
    let empty = Session::default();
    let session = capabilities.session.as_ref().unwrap_or(&empty);
    let index = ledger.replayed;
    ledger.replayed += 1;
    let failure =
        |error: String| -> GuestError { format!("Callback evaluation failure: {error}").into() };
    match session.reply(index, &request) {
        Reply::Recorded(Response::Success { payload }) => Ok(payload.clone().into_bytes()),
        Reply::Recorded(Response::Error { message }) => Err(failure(message.clone())),
        Reply::Unexpected { expected } => {
            let (got, recorded) = if request.to_string() == expected.to_string() {
                (format!("{request:?}"), format!("{expected:?}"))
            } else {
                (request.to_string(), expected.to_string())
            };
            ledger.problems.push(format!(
                "lookup {} asked for {got}, but exchange {} of the session records {recorded}",
                index + 1,
                index + 1
            ));
            Err(failure(format!(
                "Replay error: unexpected request. Was expecting {expected:?}, got {request:?} instead"
            )))
        }
        Reply::Exhausted => {
            ledger.problems.push(format!(
                "lookup {} asked for {request}, but the session records only {} exchanges",
                index + 1,
                session.len()
            ));
            Err(failure(
                "the list of recorded responses is empty or has been exhausted".to_owned(),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(
        capabilities: &Capabilities,
        ledger: &Mutex<Ledger>,
        namespace: &str,
        operation: &str,
        payload: &str,
    ) -> Result<String, String> {
        host_callback(
            capabilities,
            ledger,
            "kubewarden",
            namespace,
            operation,
            payload.as_bytes(),
        )
        .map(|answer| String::from_utf8(answer).unwrap())
        .map_err(|error| error.to_string())
    }

    #[test]
    fn logging_is_answered_and_unknown_capabilities_get_policy_evaluators_words() {
        let capabilities = Capabilities::default();
        let ledger = Mutex::default();
        assert_eq!(
            call(&capabilities, &ledger, "tracing", "log", "{}"),
            Ok(String::new())
        );
        // (binding, namespace, operation, error)
        let cases = [
            ("wasi", "tracing", "log", "unknown binding: wasi"),
            ("kubewarden", "tracing", "trace", "unknown operation: trace"),
            (
                "kubewarden",
                "kubernetes",
                "delete",
                "unknown operation: delete",
            ),
            ("kubewarden", "cluster", "get", "unknown namespace: cluster"),
        ];
        for (binding, namespace, operation, error) in cases {
            let answer = host_callback(&capabilities, &ledger, binding, namespace, operation, b"");
            assert_eq!(answer.unwrap_err().to_string(), error);
        }
        let calls = ledger.lock().unwrap().host_calls(None);
        assert_eq!(calls.problems, Vec::<String>::new());
        assert_eq!(calls.by_capability["tracing/log"], 2);
    }

    #[test]
    fn a_capability_the_runner_does_not_offer_is_refused_and_fails_the_run() {
        let ledger = Mutex::default();
        let answer = call(
            &Capabilities::default(),
            &ledger,
            "kubernetes",
            "list_resources_all",
            "",
        );
        let refusal = "host capability kubewarden/kubernetes/list_resources_all is not \
                       available in this runner";
        assert_eq!(answer, Err(refusal.to_owned()));
        assert_eq!(ledger.lock().unwrap().host_calls(None).problems, [refusal]);
    }

    #[test]
    fn a_get_resource_payload_that_is_not_a_get_resource_request_is_serdes_error() {
        let answer = call(
            &Capabilities::default(),
            &Mutex::default(),
            "kubernetes",
            "get_resource",
            r#"{"api_version":"v1","kind":"Pod","name":"p"}"#,
        );
        assert_eq!(
            answer,
            Err("missing field `disable_cache` at line 1 column 44".to_owned())
        );
    }
}
