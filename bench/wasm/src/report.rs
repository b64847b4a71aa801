//! How long one evaluation costs, as policy-server pays it: the report of `wasm-bench`.

use std::{
    collections::BTreeMap,
    fmt,
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;

use runner::{
    host::{Phases, Policy, capabilities::HostCalls},
    input::{Settings, request_uid},
    response::AdmissionResponse,
};

use crate::probe::MemoryProbe;

/// The numbers `wasm-bench` reports.
#[derive(Debug, Serialize)]
pub struct Report {
    /// Size of the module file, in bytes.
    pub module_size_bytes: usize,
    /// Time to compile the module, in milliseconds.
    pub compile_ms: f64,
    /// Evaluations measured.
    pub iterations: usize,
    /// Evaluations run before measuring.
    pub warmup: usize,
    /// Latency of one evaluation (fresh instance + `validate` call +
    /// response), in microseconds.
    pub latency_us: Latency,
    /// Latency of each phase of an evaluation, in microseconds: what the
    /// guest's `call` costs, apart from what the host pays around it.
    pub phases_us: PhaseLatency,
    /// Measured evaluations that failed (trap, deadline, bad answer).
    pub failed_evaluations: usize,
    /// The response of the last measured evaluation.
    pub response: AdmissionResponse,
    /// The host calls of the last measured evaluation, by capability (`namespace/operation`,
    /// e.g. `kubernetes/get_resource`); `{}` when it made none.
    pub host_calls: BTreeMap<String, usize>,
    /// Peak resident memory of the whole runner process, in KiB (Linux only).
    pub peak_rss_kib: Option<u64>,
    /// The guest's linear memory after an evaluation, in bytes: the largest
    /// over [`PROBE_EVALUATIONS`] evaluations on a
    /// [`MemoryProbe`]. `None` when the probe could not be compiled.
    pub linear_memory_bytes: Option<usize>,
}

/// Evaluations a [`MemoryProbe`] runs to find the
/// linear memory one takes. A guest grows its memory the same way each time
/// it evaluates the same request, so a few suffice.
pub const PROBE_EVALUATIONS: usize = 3;

/// Latency statistics, in microseconds.
#[derive(Debug, Serialize, PartialEq)]
pub struct Latency {
    /// Fastest evaluation.
    pub min: f64,
    /// Median (nearest rank).
    pub median: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Slowest evaluation.
    pub max: f64,
}

impl Latency {
    /// Statistics over `samples` (microseconds); `None` when there are none.
    pub fn from_samples(mut samples: Vec<f64>) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_by(f64::total_cmp);
        let rank = |p: f64| {
            let index = (p * samples.len() as f64).ceil() as usize;
            samples[index.clamp(1, samples.len()) - 1]
        };
        Some(Self {
            min: samples[0],
            median: rank(0.5),
            p99: rank(0.99),
            max: samples[samples.len() - 1],
        })
    }
}

/// Latency of the phases of an evaluation (see [`Phases`]), in microseconds.
#[derive(Debug, Serialize)]
pub struct PhaseLatency {
    /// A fresh instance, its waPC init functions run.
    pub instantiate: Latency,
    /// Serialising the payload.
    pub payload: Latency,
    /// The `validate` call, payload and answer copies included.
    pub call: Latency,
    /// Dropping the instance.
    pub teardown: Latency,
    /// Reading the answer into an AdmissionResponse.
    pub response: Latency,
}

impl PhaseLatency {
    /// Statistics over the phases of evaluations; `None` when there are none.
    pub fn from_phases(phases: &[Phases]) -> Option<Self> {
        let latency = |phase: fn(&Phases) -> Duration| {
            Latency::from_samples(phases.iter().map(|p| micros(phase(p))).collect())
        };
        Some(Self {
            instantiate: latency(|p| p.instantiate)?,
            payload: latency(|p| p.payload)?,
            call: latency(|p| p.call)?,
            teardown: latency(|p| p.teardown)?,
            response: latency(|p| p.response)?,
        })
    }
}

/// A duration in microseconds.
fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// Evaluate `request` `warmup + iterations` times, each on a fresh instance,
/// timing the last `iterations` (at least one); then measure the guest's
/// linear memory on a [`MemoryProbe`](crate::host::probe::MemoryProbe), untimed.
///
/// Each evaluation replays the session from its start, as `kwctl bench` rewinds
/// it before each; one whose host calls depart from it fails the bench.
pub fn run(
    policy: &Policy,
    request: &Value,
    settings: &Settings,
    iterations: usize,
    warmup: usize,
) -> Result<Report> {
    let checked = |host_calls: HostCalls, evaluation: usize| {
        host_calls
            .check()
            .with_context(|| format!("evaluation {evaluation}"))
            .map(|()| host_calls.by_capability)
    };
    for evaluation in 1..=warmup {
        policy.rewind_host_calls();
        let _ = policy.try_validate(request, settings);
        checked(policy.host_calls(), evaluation)?;
    }

    let measure = || {
        policy.rewind_host_calls();
        let mut phases = Phases::default();
        let started = Instant::now();
        let outcome = policy.try_validate_timed(request, settings, &mut phases);
        (micros(started.elapsed()), phases, outcome)
    };
    let (first, first_phases, mut last) = measure();
    let mut host_calls = checked(policy.host_calls(), warmup + 1)?;
    let mut samples = vec![first];
    let mut phases = vec![first_phases];
    let mut failed_evaluations = usize::from(last.is_err());
    for evaluation in warmup + 2..=warmup + iterations {
        let (sample, sample_phases, outcome) = measure();
        host_calls = checked(policy.host_calls(), evaluation)?;
        samples.push(sample);
        phases.push(sample_phases);
        failed_evaluations += usize::from(outcome.is_err());
        last = outcome;
    }
    let response = last.unwrap_or_else(|error| {
        AdmissionResponse::reject_internal_server_error(request_uid(request), &error)
    });
    let linear_memory_bytes = MemoryProbe::of(policy)
        .ok()
        .map(|probe| probe.peak_linear_memory(request, settings, PROBE_EVALUATIONS));

    Ok(Report {
        module_size_bytes: policy.module_size(),
        compile_ms: policy.compile_time().as_secs_f64() * 1e3,
        iterations: samples.len(),
        warmup,
        latency_us: Latency::from_samples(samples).expect("at least one sample"),
        phases_us: PhaseLatency::from_phases(&phases).expect("at least one sample"),
        failed_evaluations,
        response,
        host_calls,
        peak_rss_kib: peak_rss_kib(),
        linear_memory_bytes,
    })
}

/// The process's peak resident set size (`VmHWM`), where `/proc` has it.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Latency {
            min,
            median,
            p99,
            max,
        } = self.latency_us;
        writeln!(f, "module size:      {} bytes", self.module_size_bytes)?;
        writeln!(f, "module compile:   {:.1} ms", self.compile_ms)?;
        writeln!(
            f,
            "evaluations:      {} measured after {} warm-up, each on a fresh instance",
            self.iterations, self.warmup
        )?;
        writeln!(
            f,
            "latency (us):     min {min:.0}  median {median:.0}  p99 {p99:.0}  max {max:.0}"
        )?;
        let phases = &self.phases_us;
        writeln!(
            f,
            "phases (us):      instantiate {:.0}  payload {:.0}  call {:.0}  teardown {:.0}  \
             response {:.0}  (medians)",
            phases.instantiate.median,
            phases.payload.median,
            phases.call.median,
            phases.teardown.median,
            phases.response.median,
        )?;
        let response = &self.response;
        let verdict = match &response.status {
            _ if response.allowed && response.patch.is_some() => "allowed, with a patch".to_owned(),
            _ if response.allowed => "allowed".to_owned(),
            Some(status) => format!(
                "rejected: {} (code {})",
                status.message.as_deref().unwrap_or("no message"),
                status
                    .code
                    .map_or_else(|| "none".to_owned(), |code| code.to_string()),
            ),
            None => "rejected".to_owned(),
        };
        writeln!(f, "verdict:          {verdict}")?;
        writeln!(f, "failed evals:     {}", self.failed_evaluations)?;
        if self.host_calls.is_empty() {
            writeln!(f, "host calls:       none")?;
        } else {
            let calls: Vec<_> = self
                .host_calls
                .iter()
                .map(|(capability, count)| format!("{capability} {count}"))
                .collect();
            writeln!(f, "host calls:       {} (per evaluation)", calls.join(", "))?;
        }
        match self.linear_memory_bytes {
            Some(bytes) => writeln!(
                f,
                "linear memory:    {bytes} bytes ({} KiB) after an evaluation",
                bytes / 1024
            )?,
            None => writeln!(f, "linear memory:    unknown (the memory probe failed)")?,
        }
        match self.peak_rss_kib {
            Some(kib) => writeln!(f, "peak RSS:         {kib} KiB (whole runner process)"),
            None => writeln!(f, "peak RSS:         unknown"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_uses_nearest_rank() {
        let samples: Vec<f64> = (1..=200).rev().map(f64::from).collect();
        let latency = Latency::from_samples(samples).unwrap();
        assert_eq!(
            latency,
            Latency {
                min: 1.0,
                median: 100.0,
                p99: 198.0,
                max: 200.0
            }
        );
        let single = Latency::from_samples(vec![7.0]).unwrap();
        assert_eq!(
            (single.min, single.median, single.p99, single.max),
            (7.0, 7.0, 7.0, 7.0)
        );
        assert_eq!(Latency::from_samples(Vec::new()), None);
    }
}
