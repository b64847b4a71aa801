//! The waPC host: compiles a policy module once, then evaluates it on a
//! fresh instance each time, with a deadline, as policy-server does.
//!
//! policy-server builds one `wasmtime::Engine` with epoch interruption, a
//! `WasmtimeEngineProviderPre` per module, and for every evaluation
//! rehydrates a new provider and `WapcHost` from it; a ticker increments the
//! engine's epoch so that a guest running past its deadline traps.

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

use crate::{
    input::{Settings, request_object, request_uid},
    response::{AdmissionResponse, SettingsValidationResponse, ValidationResponse},
};

/// How often the engine's epoch advances. policy-server ticks once a second
/// with deadlines in whole seconds; a finer tick gives millisecond deadlines.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// A compiled policy module, ready to be instantiated.
pub struct Policy {
    pre: WasmtimeEngineProviderPre,
    deadlines: EpochDeadlines,
    verbose: bool,
    module_size: usize,
    compile_time: Duration,
    _ticker: EpochTicker,
}

impl Policy {
    /// Compile the module at `path`. Each guest call (the waPC init
    /// functions, then each operation) may run for `timeout`. With `verbose`
    /// the policy's log records are printed on stderr.
    pub fn from_file(path: &Path, timeout: Duration, verbose: bool) -> Result<Self> {
        let bytes = std::fs::read(path)
            .with_context(|| format!("Cannot read policy module {}", path.display()))?;
        Self::from_bytes(&bytes, timeout, verbose)
            .with_context(|| format!("Cannot load policy module {}", path.display()))
    }

    /// Compile a module (Wasm binary or WAT text); see [`Policy::from_file`].
    pub fn from_bytes(bytes: &[u8], timeout: Duration, verbose: bool) -> Result<Self> {
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        let engine = wasmtime::Engine::new(&config)
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
            _ticker: EpochTicker::start(engine),
        })
    }

    /// Size of the module, in bytes.
    pub fn module_size(&self) -> usize {
        self.module_size
    }

    /// How long compiling the module took.
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
        let host = self.instantiate()?;
        let payload = json!({"request": request, "settings": settings}).to_string();
        let answer = host.call("validate", payload.as_bytes())?;
        let verdict: ValidationResponse = serde_json::from_slice(&answer)
            .context("cannot deserialize policy validation response")?;
        AdmissionResponse::from_validation_response(
            request_uid(request),
            request_object(request),
            verdict,
        )
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
