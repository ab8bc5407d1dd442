//! Shared settings of the criterion benches.
//!
//! `NINFER_BENCH_QUICK=1` (or criterion's own `--quick`) makes a smoke run: only the
//! 1024 x 1024 and 4096 x 4096 shapes, 10 samples, short warm-up and measurement. Weights come
//! from `ninfer_simd::report::synthetic`; memory-resident shapes rotate over
//! `ninfer_simd::report::rotation_copies` copies (together more than four LLCs).

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

/// `len`-byte payload copies to rotate over (one when it fits the caches).
pub fn copies(payload: &[u8]) -> Vec<Vec<u8>> {
    let c = ninfer_simd::report::rotation_copies(payload.len(), ninfer_simd::report::llc_bytes());
    (0..c).map(|_| payload.to_vec()).collect()
}
