//! The waPC host: compiles a policy module once, then evaluates it on a
//! fresh instance each time, with a deadline, as policy-server does.
//!
//! policy-server builds one `wasmtime::Engine` with epoch interruption, a
//! `WasmtimeEngineProviderPre` per module, and for every evaluation
//! rehydrates a new provider and `WapcHost` from it; a ticker increments the
//! engine's epoch so that a guest running past its deadline traps.
//!
//! For `runner bench`, [`probe`] compiles the module once more, on an engine
//! that records how large the guest's linear memory grows: the bench harness's,
//! apart from the host kwctl's `run` stands in for.

use std::{
    error::Error,
    path::Path,
    sync::mpsc::{self, RecvTimeoutError},
    thread::{self, JoinHandle},
    time::{Duration, Instant},
};

use anyhow::{Context, Result, anyhow};
use serde_json::{Value, json};
use wapc::WapcHost;
use wasmtime_provider::{
    EpochDeadlines, WasmtimeEngineProviderBuilder, WasmtimeEngineProviderPre, wasmtime,
};

pub mod probe;

use crate::{
    input::{Settings, request_object, request_uid},
    response::{AdmissionResponse, SettingsValidationResponse, ValidationResponse},
};

/// How often the engine's epoch advances. policy-server ticks once a second
/// with deadlines in whole seconds; a finer tick gives millisecond deadlines.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Whether compiled modules are stored in, and loaded from, wasmtime's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    /// Load the compiled module from the cache, or compile and store it.
    On,
    /// Compile the module every time (`runner bench` times the compilation).
    Off,
}

/// A compiled policy module, ready to be instantiated.
pub struct Policy {
    pre: WasmtimeEngineProviderPre,
    deadlines: EpochDeadlines,
    verbose: bool,
    module_size: usize,
    compile_time: Duration,
    /// The module and the deadline, kept to compile a [`probe::MemoryProbe`] from.
    bytes: Vec<u8>,
    timeout: Duration,
    _ticker: EpochTicker,
}

impl Policy {
    /// Compile the module at `path`, or load it from the module cache. Each
    /// guest call (the waPC init functions, then each operation) may run for
    /// `timeout`. With `verbose` the policy's log records are printed on stderr.
    pub fn from_file(path: &Path, timeout: Duration, verbose: bool, cache: Cache) -> Result<Self> {
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
        Self::compile(&config, &bytes, timeout, verbose)
            .with_context(|| format!("Cannot load policy module {}", path.display()))
    }

    /// Compile a module (Wasm binary or WAT text), without the module cache;
    /// see [`Policy::from_file`].
    #[cfg(test)]
    fn from_bytes(bytes: &[u8], timeout: Duration, verbose: bool) -> Result<Self> {
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        Self::compile(&config, bytes, timeout, verbose)
    }

    /// Compile a module on an engine configured so.
    fn compile(
        config: &wasmtime::Config,
        bytes: &[u8],
        timeout: Duration,
        verbose: bool,
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
            verbose,
            module_size: bytes.len(),
            compile_time,
            bytes: bytes.to_vec(),
            timeout,
            _ticker: EpochTicker::start(engine),
        })
    }

    /// Size of the module, in bytes.
    pub fn module_size(&self) -> usize {
        self.module_size
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
        let verbose = self.verbose;
        let callback =
            move |_id: u64, binding: &str, namespace: &str, operation: &str, payload: &[u8]| {
                host_callback(verbose, binding, namespace, operation, payload)
            };
        WapcHost::new(Box::new(provider), Some(Box::new(callback)))
            .context("cannot instantiate the policy")
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

/// Answer the guest's host calls: only logging is offered.
fn host_callback(
    verbose: bool,
    binding: &str,
    namespace: &str,
    operation: &str,
    payload: &[u8],
) -> Result<Vec<u8>, Box<dyn Error + Send + Sync>> {
    match (binding, namespace, operation) {
        ("kubewarden", "tracing", "log") => {
            if verbose {
                eprintln!("{}", String::from_utf8_lossy(payload));
            }
            Ok(Vec::new())
        }
        _ => Err(format!(
            "host capability {binding}/{namespace}/{operation} is not available in this runner"
        )
        .into()),
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
    use super::*;

    /// A waPC guest, in WAT, whose `__guest_call` runs `body`.
    fn guest(body: &str) -> Policy {
        let wat = format!(
            r#"(module
                 (import "wapc" "__guest_response" (func $response (param i32 i32)))
                 (memory (export "memory") 1)
                 (data (i32.const 0) "{{\"accepted\":false,\"message\":\"no\"}}")
                 (func (export "__guest_call") (param i32 i32) (result i32) {body}))"#
        );
        Policy::from_bytes(wat.as_bytes(), Duration::from_millis(100), false).unwrap()
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
    fn memory_probe_sees_the_guest_grow_its_memory() {
        let body = "(drop (memory.grow (i32.const 3)))
                    (call $response (i32.const 0) (i32.const 33)) (i32.const 1)";
        let policy = guest(body);
        let probe = policy.memory_probe().unwrap();
        let peak = probe.peak_linear_memory(&request(), &Settings::new(), 2);
        assert_eq!(peak, 4 * 64 * 1024);
        let answer = |policy: &Policy| {
            serde_json::to_value(policy.validate(&request(), &Settings::new())).unwrap()
        };
        assert_eq!(answer(&probe.policy), answer(&policy));
    }

    #[test]
    fn memory_probe_of_a_guest_that_does_not_grow_is_its_initial_size() {
        let policy = guest("(call $response (i32.const 0) (i32.const 33)) (i32.const 1)");
        let probe = policy.memory_probe().unwrap();
        assert_eq!(
            probe.peak_linear_memory(&request(), &Settings::new(), 1),
            64 * 1024
        );
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

    #[test]
    fn only_logging_is_offered_to_the_guest() {
        assert_eq!(
            host_callback(false, "kubewarden", "tracing", "log", b"{}").unwrap(),
            Vec::<u8>::new()
        );
        let error = host_callback(
            false,
            "kubewarden",
            "kubernetes",
            "list_resources_by_namespace",
            b"",
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "host capability kubewarden/kubernetes/list_resources_by_namespace is not available in this runner"
        );
    }
}
