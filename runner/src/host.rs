//! The waPC host: compiles a policy module once, then evaluates it on a
//! fresh instance each time, with a deadline, as policy-server does.
//!
//! policy-server builds one `wasmtime::Engine` with epoch interruption, a
//! `WasmtimeEngineProviderPre` per module, and for every evaluation
//! rehydrates a new provider and `WapcHost` from it; a ticker increments the
//! engine's epoch so that a guest running past its deadline traps.
//!
//! The bench harness (`bench/wasm`) times the same evaluations, and compiles the
//! module once more on an engine of its own ([`Policy::recompile`]) to measure its
//! linear memory.
//!
//! The guest's host calls are answered by [`capabilities`], and written in a
//! ledger that lasts until [`Policy::rewind_host_calls`]: for `runner run` the
//! whole run (settings validation, then the evaluation), as kwctl's replay
//! session lasts; for the bench harness one evaluation.

use std::{
    path::Path,
    sync::{
        Arc, Mutex, PoisonError,
        mpsc::{self, RecvTimeoutError},
    },
    thread::{self, JoinHandle},
    time::{Duration, Instant},
};

use anyhow::{Context, Result, anyhow};
use kubewarden_policy_sdk::{response::ValidationResponse, settings::SettingsValidationResponse};
use serde_json::{Value, json};
use wapc::WapcHost;
use wasmtime_provider::{EpochDeadlines, WasmtimeEngineProviderBuilder, WasmtimeEngineProviderPre};

pub mod capabilities;

/// The wasmtime that wasmtime-provider builds on, for an engine of the caller's
/// ([`Policy::recompile`]).
pub use wasmtime_provider::wasmtime;

use self::capabilities::{Capabilities, HostCalls, Ledger, host_callback};
use crate::{
    input::{Settings, request_object, request_uid},
    response::AdmissionResponse,
};

/// How often the engine's epoch advances. policy-server ticks once a second
/// with deadlines in whole seconds; a finer tick gives millisecond deadlines.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Whether compiled modules are stored in, and loaded from, wasmtime's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    /// Load the compiled module from the cache, or compile and store it.
    On,
    /// Compile the module every time (the bench harness times the compilation).
    Off,
}

impl Cache {
    /// The cache as `--disable-wasmtime-cache` asks.
    pub fn from_flag(disabled: bool) -> Self {
        if disabled { Self::Off } else { Self::On }
    }
}

/// A compiled policy module, ready to be instantiated.
pub struct Policy {
    pre: WasmtimeEngineProviderPre,
    deadlines: EpochDeadlines,
    host: Host,
    compile_time: Duration,
    /// The module and the deadline, kept to compile it again ([`Policy::recompile`]).
    bytes: Vec<u8>,
    timeout: Duration,
    _ticker: EpochTicker,
}

impl Policy {
    /// Compile the module at `path`, or load it from the module cache. Each
    /// guest call (the waPC init functions, then each operation) may run for
    /// `timeout`; its host calls are answered with `capabilities`.
    pub fn from_file(
        path: &Path,
        timeout: Duration,
        capabilities: Capabilities,
        cache: Cache,
    ) -> Result<Self> {
        let bytes = std::fs::read(path)
            .with_context(|| format!("Cannot read policy module {}", path.display()))?;
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        if cache == Cache::On {
            // wasmtime's own cache, as kwctl and policy-server enable it
            // (wasmtime-provider's `enable_cache`): compiled code is stored
            // under the user's cache directory, keyed by a hash of the module
            // bytes, the compiler's settings and the wasmtime version.
            let cache = wasmtime::Cache::new(wasmtime::CacheConfig::new())
                .map_err(|error| anyhow!("cannot set up the wasmtime cache: {error:#}"))?;
            config.cache(Some(cache));
        }
        Self::compile(&config, &bytes, timeout, Host::new(capabilities))
            .with_context(|| format!("Cannot load policy module {}", path.display()))
    }

    /// Compile a module (Wasm binary or WAT text), without the module cache;
    /// see [`Policy::from_file`].
    pub fn from_bytes(bytes: &[u8], timeout: Duration, capabilities: Capabilities) -> Result<Self> {
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        Self::compile(&config, bytes, timeout, Host::new(capabilities))
    }

    /// The same module, deadline and capabilities (without the logging, with a
    /// ledger of their own), compiled on an engine configured as `config` says,
    /// epoch interruption added.
    pub fn recompile(&self, mut config: wasmtime::Config) -> Result<Self> {
        config.epoch_interruption(true);
        Self::compile(&config, &self.bytes, self.timeout, self.host.quiet_copy())
    }

    /// Compile a module on an engine configured so.
    fn compile(
        config: &wasmtime::Config,
        bytes: &[u8],
        timeout: Duration,
        host: Host,
    ) -> Result<Self> {
        let engine = wasmtime::Engine::new(config)
            .map_err(|error| anyhow!("cannot create the wasmtime engine: {error:#}"))?;

        let started = Instant::now();
        let module = wasmtime::Module::new(&engine, bytes)
            .map_err(|error| anyhow!("cannot compile the module: {error:#}"))?;
        let compile_time = started.elapsed();

        let ticks = timeout.as_millis().div_ceil(EPOCH_TICK.as_millis()).max(1);
        let ticks = u64::try_from(ticks).unwrap_or(u64::MAX);
        let deadlines = EpochDeadlines {
            wapc_init: ticks,
            wapc_func: ticks,
        };
        let pre = WasmtimeEngineProviderBuilder::new()
            .engine(engine.clone())
            .module(module)
            .enable_epoch_interruptions(deadlines)
            .build_pre()
            .context("cannot link the module (does it import more than waPC and WASI?)")?;

        Ok(Self {
            pre,
            deadlines,
            host,
            compile_time,
            bytes: bytes.to_vec(),
            timeout,
            _ticker: EpochTicker::start(engine),
        })
    }

    /// Size of the module, in bytes.
    pub fn module_size(&self) -> usize {
        self.bytes.len()
    }

    /// How long compiling the module took (or loading it, from the cache).
    pub fn compile_time(&self) -> Duration {
        self.compile_time
    }

    /// A fresh instance of the module, its waPC init functions run.
    fn instantiate(&self) -> Result<WapcHost> {
        let provider = self
            .pre
            .rehydrate(Some(self.deadlines))
            .context("cannot create a wasmtime store")?;
        let Host {
            capabilities,
            ledger,
        } = self.host.clone();
        let callback =
            move |_id: u64, binding: &str, namespace: &str, operation: &str, payload: &[u8]| {
                host_callback(
                    &capabilities,
                    &ledger,
                    binding,
                    namespace,
                    operation,
                    payload,
                )
            };
        WapcHost::new(Box::new(provider), Some(Box::new(callback)))
            .context("cannot instantiate the policy")
    }

    /// The host calls made since the policy was compiled or last rewound, with
    /// what departs from the replayed session (an exchange not replayed yet counts).
    pub fn host_calls(&self) -> HostCalls {
        self.host
            .ledger()
            .host_calls(self.host.capabilities.session.as_ref())
    }

    /// Forget the host calls made so far: the session replays from its first
    /// exchange again, as kwctl's `bench` rewinds it before each evaluation.
    pub fn rewind_host_calls(&self) {
        *self.host.ledger() = Ledger::default();
    }

    /// Call a guest function with exactly these payload bytes, on a fresh
    /// instance, and return its answer as it is: for payloads kwctl could not
    /// even send (not JSON, invalid UTF-8, nested past a JSON parser's limit).
    pub fn call(&self, function: &str, payload: &[u8]) -> Result<Vec<u8>> {
        Ok(self.instantiate()?.call(function, payload)?)
    }

    /// Ask the policy whether `settings` are valid, on a fresh instance.
    /// A failing guest makes the settings invalid, as in policy-evaluator.
    pub fn validate_settings(&self, settings: &Settings) -> SettingsValidationResponse {
        let invalid = |message: String| SettingsValidationResponse {
            valid: false,
            message: Some(message),
        };
        let host = match self.instantiate() {
            Ok(host) => host,
            Err(error) => return invalid(format!("{error:#}")),
        };
        let payload = Value::Object(settings.clone()).to_string();
        match host.call("validate_settings", payload.as_bytes()) {
            Ok(answer) => serde_json::from_slice(&answer).unwrap_or_else(|error| {
                invalid(format!(
                    "error: invalid settings validation response: {error}"
                ))
            }),
            Err(error) => invalid(format!(
                "Error invoking settings validation callback: {error:?}"
            )),
        }
    }

    /// Evaluate `request` (an AdmissionRequest) with `settings`, on a fresh
    /// instance. `Err` when the evaluation itself failed: the instance could
    /// not start, the guest trapped or ran out of time, or answered nonsense.
    pub fn try_validate(&self, request: &Value, settings: &Settings) -> Result<AdmissionResponse> {
        self.try_validate_timed(request, settings, &mut Phases::default())
    }

    /// [`Policy::try_validate`], timing its phases into `phases` (those it
    /// reached).
    pub fn try_validate_timed(
        &self,
        request: &Value,
        settings: &Settings,
        phases: &mut Phases,
    ) -> Result<AdmissionResponse> {
        let started = Instant::now();
        let host = self.instantiate()?;
        phases.instantiate = started.elapsed();

        let started = Instant::now();
        let payload = json!({"request": request, "settings": settings}).to_string();
        phases.payload = started.elapsed();

        let started = Instant::now();
        let answer = host.call("validate", payload.as_bytes());
        phases.call = started.elapsed();

        let started = Instant::now();
        drop(host);
        phases.teardown = started.elapsed();

        let started = Instant::now();
        let verdict: ValidationResponse = serde_json::from_slice(&answer?)
            .context("cannot deserialize policy validation response")?;
        let response = AdmissionResponse::from_validation_response(
            request_uid(request),
            request_object(request),
            verdict,
        );
        phases.response = started.elapsed();
        response
    }

    /// Like [`Policy::try_validate`], with failures turned into the 500
    /// rejection policy-server answers with.
    pub fn validate(&self, request: &Value, settings: &Settings) -> AdmissionResponse {
        self.try_validate(request, settings)
            .unwrap_or_else(|error| {
                AdmissionResponse::reject_internal_server_error(request_uid(request), &error)
            })
    }
}

/// How long the phases of one evaluation took.
#[derive(Debug, Clone, Copy, Default)]
pub struct Phases {
    /// Creating a fresh instance and running its waPC init functions.
    pub instantiate: Duration,
    /// Serialising the payload, `{"request": …, "settings": …}`, as
    /// policy-evaluator does.
    pub payload: Duration,
    /// The `validate` call: the payload copied into the guest, the guest's
    /// work, its answer copied out.
    pub call: Duration,
    /// Dropping the instance.
    pub teardown: Duration,
    /// Reading the guest's answer into an AdmissionResponse.
    pub response: Duration,
}

/// What answers a policy's host calls: the capabilities offered, and the ledger
/// of the calls made, shared by every instance of the policy.
#[derive(Clone)]
struct Host {
    capabilities: Arc<Capabilities>,
    ledger: Arc<Mutex<Ledger>>,
}

impl Host {
    fn new(capabilities: Capabilities) -> Self {
        Self {
            capabilities: Arc::new(capabilities),
            ledger: Arc::default(),
        }
    }

    /// The same capabilities without the logging, with a ledger of their own.
    fn quiet_copy(&self) -> Self {
        Self::new(Capabilities {
            verbose: false,
            ..Capabilities::clone(&self.capabilities)
        })
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A thread advancing an engine's epoch every [`EPOCH_TICK`] until dropped.
struct EpochTicker {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    fn start(engine: wasmtime::Engine) -> Self {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = thread::spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(EPOCH_TICK) {
                engine.increment_epoch();
            }
        });
        Self {
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::{metadata::ContextAwareResource, session::Session};

    /// A waPC guest, in WAT, whose `__guest_call` runs `body`.
    fn guest(body: &str) -> Policy {
        let wat = format!(
            r#"(module
                 (import "wapc" "__guest_response" (func $response (param i32 i32)))
                 (memory (export "memory") 1)
                 (data (i32.const 0) "{{\"accepted\":false,\"message\":\"no\"}}")
                 (func (export "__guest_call") (param i32 i32) (result i32) {body}))"#
        );
        Policy::from_bytes(
            wat.as_bytes(),
            Duration::from_millis(100),
            Capabilities::default(),
        )
        .unwrap()
    }

    fn request() -> Value {
        json!({"uid": "u-1", "object": {"kind": "Pod"}})
    }

    #[test]
    fn guest_verdict_becomes_the_response() {
        let policy = guest("(call $response (i32.const 0) (i32.const 33)) (i32.const 1)");
        let response = policy.validate(&request(), &Settings::new());
        assert_eq!(
            serde_json::to_value(&response).unwrap(),
            json!({"uid": "u-1", "allowed": false, "status": {"message": "no"},
                   "auditAnnotations": null, "warnings": null})
        );
    }

    #[test]
    fn endless_guest_hits_the_deadline() {
        let policy = guest("(loop $forever (br $forever)) (i32.const 1)");
        let started = Instant::now();
        let response = policy.validate(&request(), &Settings::new());
        assert!(started.elapsed() < Duration::from_secs(10));
        let status = response.status.unwrap();
        assert_eq!(status.code, Some(500));
        assert!(status.message.unwrap().contains("deadline exceeded"));
    }

    #[test]
    fn trapping_guest_is_an_internal_error() {
        let policy = guest("unreachable");
        assert!(policy.try_validate(&request(), &Settings::new()).is_err());
        let response = policy.validate(&request(), &Settings::new());
        assert!(!response.allowed);
        assert_eq!(response.uid, "u-1");
        assert_eq!(response.status.unwrap().code, Some(500));
    }

    #[test]
    fn failing_settings_validation_makes_settings_invalid() {
        let policy = guest("unreachable");
        let answer = policy.validate_settings(&Settings::new());
        assert!(!answer.valid);
        assert!(
            answer
                .message
                .unwrap()
                .starts_with("Error invoking settings validation callback")
        );
    }

    /// A waPC guest, in WAT, whose `__guest_call` makes a `kubewarden/kubernetes/get_resource`
    /// host call for each payload in turn, and answers with what each returned, the payload or
    /// the error, one per line.
    fn looking_up(payloads: &[&str], capabilities: Capabilities) -> Policy {
        let escape = |text: &str| text.replace('\\', "\\\\").replace('"', "\\\"");
        let mut data = String::new();
        let mut calls = String::new();
        let mut at = 64;
        for payload in payloads {
            data += &format!("(data (i32.const {at}) \"{}\")\n", escape(payload));
            calls += &format!(
                "(call $lookup (i32.const {at}) (i32.const {}))\n",
                payload.len()
            );
            at += payload.len();
        }
        assert!(at < 8192, "the payloads overlap the answer");
        let wat = format!(
            r#"(module
                 (import "wapc" "__host_call" (func $host_call
                     (param i32 i32 i32 i32 i32 i32 i32 i32) (result i32)))
                 (import "wapc" "__host_response_len" (func $response_len (result i32)))
                 (import "wapc" "__host_response" (func $response (param i32)))
                 (import "wapc" "__host_error_len" (func $error_len (result i32)))
                 (import "wapc" "__host_error" (func $error (param i32)))
                 (import "wapc" "__guest_response" (func $answer (param i32 i32)))
                 (memory (export "memory") 1)
                 (global $out (mut i32) (i32.const 8192))
                 (data (i32.const 0) "kubewarden")
                 (data (i32.const 16) "kubernetes")
                 (data (i32.const 32) "get_resource")
                 {data}
                 (func $lookup (param $at i32) (param $len i32)
                   (local $n i32)
                   (if (call $host_call (i32.const 0) (i32.const 10) (i32.const 16)
                         (i32.const 10) (i32.const 32) (i32.const 12)
                         (local.get $at) (local.get $len))
                     (then (call $response (global.get $out))
                           (local.set $n (call $response_len)))
                     (else (call $error (global.get $out))
                           (local.set $n (call $error_len))))
                   (global.set $out (i32.add (global.get $out) (local.get $n)))
                   (i32.store8 (global.get $out) (i32.const 10))
                   (global.set $out (i32.add (global.get $out) (i32.const 1))))
                 (func (export "__guest_call") (param i32 i32) (result i32)
                   {calls}
                   (call $answer (i32.const 8192) (i32.sub (global.get $out) (i32.const 8192)))
                   (i32.const 1)))"#
        );
        Policy::from_bytes(wat.as_bytes(), Duration::from_millis(1000), capabilities).unwrap()
    }

    /// What the guest answered: one line per lookup.
    fn lookups(policy: &Policy) -> Vec<String> {
        let answer = policy.call("validate", b"{}").unwrap();
        let answer = String::from_utf8(answer).unwrap();
        answer.lines().map(str::to_owned).collect()
    }

    const SHOP: &str = r#"{"api_version":"camel.apache.org/v1","kind":"Integration","name":"shop","namespace":"team-a","disable_cache":false,"field_masks":null}"#;
    const GONE: &str = r#"{"api_version":"camel.apache.org/v1","kind":"Integration","name":"gone","namespace":"team-a","disable_cache":false,"field_masks":null}"#;
    const SHOP_OBJECT: &str = r#"{"apiVersion":"camel.apache.org/v1","kind":"Integration","metadata":{"annotations":{"camel.apache.org/operator.id":"camel-k"},"name":"shop","namespace":"team-a","uid":"0b8e8f5c-2d6a-4c61-9a53-2f0c1d7e4a11"}}"#;
    const GONE_ERROR: &str = r#"Callback evaluation failure: Cannot find camel.apache.org/v1/Integration named 'gone' inside of namespace 'Some("team-a")'"#;

    /// The repository's sample session: Integration `team-a/shop` found, `team-a/gone` not.
    fn sample_session() -> Session {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../test_data/sessions/integration-lookups.yml"
        );
        Session::from_file(Path::new(path)).unwrap()
    }

    fn integrations() -> BTreeSet<ContextAwareResource> {
        BTreeSet::from([ContextAwareResource {
            api_version: "camel.apache.org/v1".to_owned(),
            kind: "Integration".to_owned(),
        }])
    }

    /// Granted Integrations, with the sample session replayed.
    fn replaying() -> Capabilities {
        Capabilities {
            verbose: false,
            granted: integrations(),
            session: Some(sample_session()),
        }
    }

    #[test]
    fn the_sample_session_is_in_kwctls_own_format() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../test_data/sessions/integration-lookups.yml"
        );
        let text = std::fs::read_to_string(path).unwrap();
        assert_eq!(sample_session().to_yaml().unwrap(), text);
    }

    #[test]
    fn matching_exchanges_answer_the_guest_and_the_run_passes() {
        let policy = looking_up(&[SHOP, GONE], replaying());
        assert_eq!(lookups(&policy), [SHOP_OBJECT, GONE_ERROR]);
        let calls = policy.host_calls();
        calls.check().unwrap();
        assert_eq!(
            calls.by_capability,
            BTreeMap::from([("kubernetes/get_resource".to_owned(), 2)])
        );
    }

    #[test]
    fn a_lookup_the_session_does_not_record_next_fails_the_run() {
        let policy = looking_up(&[GONE, SHOP], replaying());
        let expected_shop = "KubernetesGetResource { api_version: \"camel.apache.org/v1\", \
                             kind: \"Integration\", name: \"shop\", namespace: Some(\"team-a\"), \
                             disable_cache: false, field_masks: None }";
        let [first, _] = &lookups(&policy)[..] else {
            panic!("two lookups")
        };
        assert!(
            first.starts_with(&format!(
                "Callback evaluation failure: Replay error: unexpected request. Was expecting \
                 {expected_shop}, got KubernetesGetResource {{"
            )),
            "{first}"
        );
        let calls = policy.host_calls();
        assert_eq!(
            calls.problems,
            [
                "lookup 1 asked for camel.apache.org/v1 Integration team-a/gone, but exchange 1 \
                 of the session records camel.apache.org/v1 Integration team-a/shop",
                "lookup 2 asked for camel.apache.org/v1 Integration team-a/shop, but exchange 2 \
                 of the session records camel.apache.org/v1 Integration team-a/gone",
            ]
        );
        assert!(calls.check().is_err());
    }

    #[test]
    fn a_lookup_that_differs_in_a_field_not_shown_is_told_in_full() {
        let uncached = SHOP.replace(r#""disable_cache":false"#, r#""disable_cache":true"#);
        let policy = looking_up(&[&uncached, GONE], replaying());
        lookups(&policy);
        let problem = &policy.host_calls().problems[0];
        assert!(problem.contains("disable_cache: true"), "{problem}");
    }

    #[test]
    fn a_lookup_past_the_last_exchange_fails_the_run() {
        let policy = looking_up(&[SHOP, GONE, SHOP], replaying());
        assert_eq!(
            lookups(&policy)[2],
            "Callback evaluation failure: the list of recorded responses is empty or has been \
             exhausted"
        );
        assert_eq!(
            policy.host_calls().problems,
            [
                "lookup 3 asked for camel.apache.org/v1 Integration team-a/shop, but the session \
              records only 2 exchanges"
            ]
        );
    }

    #[test]
    fn an_exchange_left_unused_fails_the_run() {
        let policy = looking_up(&[SHOP], replaying());
        assert_eq!(lookups(&policy), [SHOP_OBJECT]);
        let calls = policy.host_calls();
        assert_eq!(
            calls.problems,
            ["exchange 2 of 2 (camel.apache.org/v1 Integration team-a/gone) was never asked for"]
        );
        let error = calls.check().unwrap_err().to_string();
        assert!(
            error.starts_with("the policy's host calls do not match the replayed session: "),
            "{error}"
        );
    }

    #[test]
    fn the_session_replays_afresh_once_rewound() {
        let policy = looking_up(&[SHOP, GONE], replaying());
        lookups(&policy);
        assert!(lookups(&policy)[0].ends_with("has been exhausted"));
        policy.rewind_host_calls();
        assert_eq!(lookups(&policy), [SHOP_OBJECT, GONE_ERROR]);
        policy.host_calls().check().unwrap();
    }

    #[test]
    fn a_kind_not_granted_is_refused_in_policy_evaluators_words() {
        let deployment = r#"{"api_version":"apps/v1","kind":"Deployment","name":"shop","namespace":"team-a","disable_cache":false}"#;
        let policy = looking_up(&[deployment, SHOP, GONE], replaying());
        assert_eq!(
            lookups(&policy),
            [
                "Policy has not been granted access to Kubernetes apps/v1/Deployment resources. \
                 The violation has been reported.",
                SHOP_OBJECT,
                GONE_ERROR,
            ]
        );
        // The refusal is the policy's to handle, as under kwctl: the session is untouched.
        policy.host_calls().check().unwrap();
    }

    #[test]
    fn without_a_grant_every_lookup_is_refused_as_kwctl_refuses_it() {
        // What `runner run` without --allow-context-aware gives: no kind granted, no session.
        let policy = looking_up(&[SHOP], Capabilities::default());
        assert_eq!(
            lookups(&policy),
            [
                "Policy has not been granted access to Kubernetes camel.apache.org/v1/Integration \
              resources. The violation has been reported."
            ]
        );
        policy.host_calls().check().unwrap();
    }

    #[test]
    fn a_request_that_makes_no_host_call_counts_none() {
        let policy = looking_up(&[], replaying());
        assert_eq!(lookups(&policy), Vec::<String>::new());
        assert_eq!(policy.host_calls().by_capability, BTreeMap::new());
    }
}
