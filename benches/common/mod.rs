//! Shared settings of the criterion benches.
//!
//! `NINFER_BENCH_QUICK=1` (or criterion's own `--quick`) makes a smoke run: only the
//! 1024 x 1024 and 4096 x 4096 shapes, 10 samples, short warm-up and measurement. Weights come
//! from `ninfer_simd::report::synthetic`; the memory-resident shapes (4096 and 8192) always rotate
//! over copies that together exceed four LLCs (`ninfer_simd::report::Placement::Memory`), so they
//! run from memory even where the LLC could hold one copy.

#![allow(dead_code)]

use std::time::Duration;

use criterion::Criterion;

/// Whether `NINFER_BENCH_QUICK` is set to something other than `0` or empty.
pub fn quick() -> bool {
    std::env::var("NINFER_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Criterion configured for these benches (shorter in quick mode).
pub fn criterion() -> Criterion {
    let c = Criterion::default().configure_from_args();
    if quick() {
        c.sample_size(10)
            .warm_up_time(Duration::from_millis(200))
            .measurement_time(Duration::from_millis(500))
    } else {
        c.sample_size(20)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3))
    }
}

/// `[N, K]` shapes: 1024 (cache-resident), 4096 and 8192 (memory-resident).
pub fn shapes() -> &'static [(usize, usize)] {
    if quick() {
        &[(1024, 1024), (4096, 4096)]
    } else {
        &[(1024, 1024), (4096, 4096), (8192, 8192)]
    }
}

/// Thread counts.
pub const THREADS: [usize; 2] = [1, 2];

/// Whether shape `[n, k]` is one of the memory-resident ones (all but 1024 x 1024).
pub fn memory_resident(n: usize, k: usize) -> bool {
    n * k > 1024 * 1024
}

/// The payload copies to rotate over: one for the cache-resident shape, else copies that together
/// exceed four LLCs.
pub fn copies(payload: &[u8], n: usize, k: usize) -> Vec<Vec<u8>> {
    use ninfer_simd::report::{llc_bytes, Placement};
    let placement = if memory_resident(n, k) {
        Placement::Memory
    } else {
        Placement::Cache
    };
    let c = placement.copies(payload.len(), llc_bytes());
    (0..c).map(|_| payload.to_vec()).collect()
}

/// The payload copies handed out in turn, the next one per iteration, so that consecutive
/// iterations of a memory-resident shape never find their weights in the caches.
pub struct Rotate<'a> {
    copies: &'a [Vec<u8>],
    i: usize,
}

impl<'a> Rotate<'a> {
    /// Rotation over `copies` (at least one).
    pub fn new(copies: &'a [Vec<u8>]) -> Rotate<'a> {
        Rotate { copies, i: 0 }
    }

    /// The next copy.
    pub fn next_copy(&mut self) -> &'a [u8] {
        self.i += 1;
        &self.copies[self.i % self.copies.len()]
    }
}
