//! The runner's parts, for its command (`src/main.rs`) and the bench harness (`bench/wasm`):
//! a waPC host on wasmtime that evaluates a Kubewarden policy as policy-server and `kwctl run`
//! do ([`host`]), kwctl's flags and inputs ([`cli`], [`input`]), the session of lookups it
//! replays ([`session`]), the module's metadata and `annotate` ([`metadata`], [`annotate`]),
//! and the AdmissionResponse it prints ([`response`]).

pub mod annotate;
pub mod cli;
pub mod host;
pub mod input;
pub mod metadata;
pub mod response;
pub mod session;
