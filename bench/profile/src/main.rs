//! Runs one module's `validate`, natively, on an AdmissionRequest file (such as a fixture that
//! `bench-fixtures` wrote): a small target for `valgrind --tool=callgrind` (count only
//! [`evaluate`] with `--toggle-collect='*evaluate*'`).
//!
//! ```console
//! profile MODULE REQUEST.json [ITERATIONS]    # MODULE: policy, floor or sdk-path
//! ```
//!
//! The payload is `{"request": …, "settings": {}}`. Prints its size and the last response. The
//! fixtures are read from a file rather than generated here so that this binary's `serde_json`
//! has the features the modules have (`bench-fixtures` turns on `preserve_order`, which would
//! change what the SDK path builds).

use std::{env, fs, hint::black_box, process::ExitCode};

/// A module's `validate`, answering with the serialized response.
type Validate = fn(&[u8]) -> Vec<u8>;

fn policy(payload: &[u8]) -> Vec<u8> {
    single_owner_policy::policy::answer(payload, &single_owner_policy::NoHost).unwrap()
}

fn floor(payload: &[u8]) -> Vec<u8> {
    bench_floor::validate(payload).expect("floor accepts JSON")
}

fn sdk_path(payload: &[u8]) -> Vec<u8> {
    bench_sdk_path::validate(payload).expect("the SDK reads the fixture")
}

/// Validates `payload` `iterations` times; the only function worth counting.
#[inline(never)]
fn evaluate(validate: Validate, payload: &[u8], iterations: usize) -> Vec<u8> {
    let mut answer = Vec::new();
    for _ in 0..iterations {
        answer = validate(black_box(payload));
    }
    answer
}

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let (module, path, iterations) = match args.as_slice() {
        [module, path] => (module.as_str(), path.as_str(), Some(1)),
        [module, path, iterations] => (module.as_str(), path.as_str(), iterations.parse().ok()),
        _ => ("", "", None),
    };
    let validate: Option<Validate> = match module {
        "policy" => Some(policy),
        "floor" => Some(floor),
        "sdk-path" => Some(sdk_path),
        _ => None,
    };
    let (Some(validate), Some(iterations)) = (validate, iterations) else {
        eprintln!("usage: profile policy|floor|sdk-path REQUEST.json [ITERATIONS]");
        return ExitCode::FAILURE;
    };
    let request = match fs::read_to_string(path) {
        Ok(request) => request,
        Err(error) => {
            eprintln!("cannot read {path}: {error}");
            return ExitCode::FAILURE;
        }
    };
    let payload = format!(r#"{{"request":{request},"settings":{{}}}}"#).into_bytes();
    let answer = evaluate(validate, &payload, iterations);
    println!(
        "{module} on {path} ({} bytes), {iterations} times: {}",
        payload.len(),
        String::from_utf8_lossy(&answer)
    );
    ExitCode::SUCCESS
}
