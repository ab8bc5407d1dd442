//! Does this machine run two busy threads on two CPUs? A host check, not a kernel benchmark.
//!
//! Each try times one thread running a fixed integer loop alone, then two threads (the caller
//! and a freshly spawned one) running it side by side, and prints each thread's time and the
//! CPU it started and ended on (Linux: `/proc/thread-self/stat`, field 39). On two free CPUs the
//! pair takes about the single time; a pair that started on one CPU (the spawned thread placed
//! on its waker's CPU, as a guest kernel that packs vCPUs does) takes about twice as long. The
//! README's "Performance (CPU)" section quotes it (session 14, AMD EPYC host).
//!
//! `cargo run --release -p ninfer-simd --example colocation [TRIES]`

use std::time::Instant;

/// A dependent multiply-add chain of `n` steps (the same work in every thread).
#[inline(never)]
fn work(n: u64) -> u64 {
    let mut x = 1u64;
    for i in 0..n {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i);
    }
    x
}

/// The CPU this thread runs on, where `/proc` tells it.
fn cpu() -> Option<u32> {
    let s = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at field 3; the CPU is 39.
    let rest = s.rsplit_once(')')?.1;
    rest.split_whitespace().nth(36)?.parse().ok()
}

/// Milliseconds of `work(n)` on this thread, with its CPU before and after.
fn timed(n: u64) -> (f64, Option<u32>, Option<u32>) {
    let c0 = cpu();
    let t = Instant::now();
    std::hint::black_box(work(std::hint::black_box(n)));
    (t.elapsed().as_secs_f64() * 1e3, c0, cpu())
}

fn show(c: Option<u32>) -> String {
    c.map_or_else(|| "?".to_string(), |c| c.to_string())
}

fn main() {
    let tries: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(12);
    let n = 20_000_000u64;
    let mut shared = 0;
    for i in 0..tries {
        let (one, _, _) = timed(n);
        let t = Instant::now();
        let (a, b) = std::thread::scope(|s| {
            let h = s.spawn(|| timed(n));
            let a = timed(n);
            (a, h.join().unwrap_or((f64::NAN, None, None)))
        });
        let wall = t.elapsed().as_secs_f64() * 1e3;
        let same = a.1.is_some() && a.1 == b.1;
        shared += usize::from(same);
        println!(
            "try {i:2}: one thread {one:5.1} ms; two threads {wall:5.1} ms: caller {:5.1} ms (cpu {} -> {}), spawned {:5.1} ms (cpu {} -> {}){}",
            a.0,
            show(a.1),
            show(a.2),
            b.0,
            show(b.1),
            show(b.2),
            if same { "  <- started on one CPU" } else { "" }
        );
    }
    println!("{shared} of {tries} pairs started on one CPU");
}
