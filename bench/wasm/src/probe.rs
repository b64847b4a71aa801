//! The bench harness's memory probe: the module compiled a second time, on an engine that
//! records how large the guest's linear memory grows.

use std::{
    ptr::NonNull,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use anyhow::Result;
use runner::host::{
    Policy,
    wasmtime::{self, LinearMemory, MemoryCreator, MemoryType},
};
use runner::input::Settings;
use serde_json::Value;

impl MemoryProbe {
    /// Compile `policy`'s module once more, on an engine that records how large
    /// the guest's linear memory grows.
    pub fn of(policy: &Policy) -> Result<Self> {
        let peak = Arc::new(AtomicUsize::new(0));
        let mut config = wasmtime::Config::new();
        config
            .with_host_memory(Arc::new(PeakTracker {
                peak: Arc::clone(&peak),
            }))
            // Memory from a custom creator is not an mmap wasmtime could map
            // the module's data into copy-on-write; without a reservation and
            // guard pages, the guest's accesses are bounds-checked and its
            // memory may move when it grows, so a heap allocation will do.
            .memory_init_cow(false)
            .memory_reservation(0)
            .memory_guard_size(0);
        let policy = policy.recompile(config)?;
        Ok(Self { policy, peak })
    }
}

/// A policy's module compiled a second time, to measure the guest's linear
/// memory: how much memory one evaluation takes in policy-server.
///
/// wasmtime-provider keeps its wasmtime `Store` private, so an instance's
/// memory cannot be asked for its size; the engine's [`MemoryCreator`] sees
/// every memory and every growth instead. A custom creator costs the copy-on-
/// write initialisation from the module image and the guard pages, so the
/// timed [`Policy`] keeps policy-server's engine configuration and this probe
/// has an engine of its own: the guest grows its memory the same on both.
pub struct MemoryProbe {
    policy: Policy,
    peak: Arc<AtomicUsize>,
}

impl MemoryProbe {
    /// The largest size, in bytes, that the guest's linear memory reaches in
    /// `evaluations` evaluations of `request`, each on a fresh instance
    /// (memories never shrink: the size after the evaluation). Failed
    /// evaluations count too.
    pub fn peak_linear_memory(
        &self,
        request: &Value,
        settings: &Settings,
        evaluations: usize,
    ) -> usize {
        self.peak.store(0, Ordering::Relaxed);
        for _ in 0..evaluations {
            let _ = self.policy.try_validate(request, settings);
        }
        self.peak.load(Ordering::Relaxed)
    }
}

/// Creates linear memories on the heap, recording the largest size any of
/// them reaches. Needs an engine without memory reservation and guard pages.
struct PeakTracker {
    peak: Arc<AtomicUsize>,
}

// SAFETY: the memories are zero-filled, sized as asked, and owned by the
// instance they are created for; nothing else touches them.
unsafe impl MemoryCreator for PeakTracker {
    fn new_memory(
        &self,
        _ty: MemoryType,
        minimum: usize,
        _maximum: Option<usize>,
        reserved_size_in_bytes: Option<usize>,
        guard_size_in_bytes: usize,
    ) -> Result<Box<dyn LinearMemory>, String> {
        if reserved_size_in_bytes.unwrap_or(0) != 0 || guard_size_in_bytes != 0 {
            return Err(
                "the memory probe needs an engine without memory reservation and \
                        guard pages"
                    .to_owned(),
            );
        }
        let mut memory = HeapMemory {
            chunks: Vec::new(),
            size: 0,
            base: NonNull::dangling(),
            peak: Arc::clone(&self.peak),
        };
        memory.grow_to(minimum).map_err(|error| error.to_string())?;
        Ok(Box::new(memory))
    }
}

/// A linear memory in a zero-filled heap allocation, aligned to 16 bytes.
struct HeapMemory {
    chunks: Vec<Chunk>,
    /// The guest-visible size, in bytes.
    size: usize,
    /// The start of `chunks`, taken when it last (re)allocated.
    base: NonNull<u8>,
    peak: Arc<AtomicUsize>,
}

/// The unit of a [`HeapMemory`] allocation, for its alignment.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Chunk([u8; 16]);

// SAFETY: `base` points into `chunks`, which the memory owns; wasmtime
// accesses a store's memories from one thread at a time.
unsafe impl Send for HeapMemory {}
// SAFETY: as above; `&HeapMemory` only reads sizes and the pointer.
unsafe impl Sync for HeapMemory {}

// SAFETY: `as_ptr` points at `byte_size` zero-initialised bytes, which stay
// put until the next `grow_to` (the engine lets memories move); `byte_capacity`
// bytes are allocated.
unsafe impl LinearMemory for HeapMemory {
    fn byte_size(&self) -> usize {
        self.size
    }

    fn byte_capacity(&self) -> usize {
        self.chunks.capacity() * size_of::<Chunk>()
    }

    fn grow_to(&mut self, new_size: usize) -> wasmtime::Result<()> {
        let chunks = new_size.div_ceil(size_of::<Chunk>());
        self.chunks.resize(chunks, Chunk([0; 16]));
        self.size = new_size;
        self.base = NonNull::from(self.chunks.as_mut_slice()).cast();
        self.peak.fetch_max(new_size, Ordering::Relaxed);
        Ok(())
    }

    fn as_ptr(&self) -> *mut u8 {
        self.base.as_ptr()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use runner::host::capabilities::Capabilities;
    use serde_json::json;

    use super::*;

    /// A waPC guest, in WAT, that runs `body` and then denies.
    fn guest(body: &str) -> Policy {
        let wat = format!(
            r#"(module
                 (import "wapc" "__guest_response" (func $response (param i32 i32)))
                 (memory (export "memory") 1)
                 (data (i32.const 0) "{{\"accepted\":false,\"message\":\"no\"}}")
                 (func (export "__guest_call") (param i32 i32) (result i32)
                   {body} (call $response (i32.const 0) (i32.const 33)) (i32.const 1)))"#
        );
        let timeout = Duration::from_millis(100);
        Policy::from_bytes(wat.as_bytes(), timeout, Capabilities::default()).unwrap()
    }

    fn request() -> Value {
        json!({"uid": "u-1", "object": {"kind": "Pod"}})
    }

    #[test]
    fn the_probe_sees_the_guest_grow_its_memory_and_answers_alike() {
        let policy = guest("(drop (memory.grow (i32.const 3)))");
        let probe = MemoryProbe::of(&policy).unwrap();
        assert_eq!(
            probe.peak_linear_memory(&request(), &Settings::new(), 2),
            4 * 64 * 1024
        );
        let answer = |policy: &Policy| {
            serde_json::to_value(policy.validate(&request(), &Settings::new())).unwrap()
        };
        assert_eq!(answer(&probe.policy), answer(&policy));
    }

    #[test]
    fn the_probe_of_a_guest_that_does_not_grow_is_its_initial_size() {
        let probe = MemoryProbe::of(&guest("")).unwrap();
        assert_eq!(
            probe.peak_linear_memory(&request(), &Settings::new(), 1),
            64 * 1024
        );
    }
}
