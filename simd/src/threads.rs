//! Fixed row blocking over a persistent thread pool.
//!
//! Rows are cut into contiguous blocks whose length is a multiple of [`ROW_ALIGN`]; every
//! output row is computed by exactly one thread with the same per-row code, whatever the thread
//! count, so results are bit-identical for 1, 2, 3, ... threads (nothing is reduced across
//! threads).
//!
//! The blocks other than the last run on rayon's global pool (`rayon::in_place_scope`; its
//! worker threads are started once, on the first multithreaded call, and then kept — one per
//! core unless `RAYON_NUM_THREADS` says otherwise); the calling thread runs the last block. A
//! fresh thread per block and call cost about 30 µs per call here, 13% of a 4096 x 4096 Q4 GEMV
//! at memory speed. A panic in a block reaches the caller (as with `std::thread::scope`).
//!
//! **Placement, tried in session 14 and dropped.** On the AMD EPYC host of session 14 (2 vCPUs,
//! a guest kernel with `kernel.sched_vcpu_pack = 15`) a freshly spawned thread often starts on
//! its waker's vCPU: `cargo run --release -p ninfer-simd --example colocation` put the pair on
//! one CPU in 6 of 12 tries (9-11 ms for two 5 ms loops, against 5.2-5.7 ms). This pool's
//! persistent worker was hit far less: with the CPUs of both blocks logged (a temporary probe,
//! not kept), 12 of 323 two-thread 8192 x 8192 Q4 `I8` calls started the worker on the caller's
//! CPU (the caller's block then took 4.7 ms, not 2.9). The two-thread "slow mode" of the
//! reports is the other 311: both blocks on their own CPUs, both slow together (2.9-3.0 ms
//! against 1.7 in the fast stretches), which no placement changes. Tried: a pool of
//! `available_parallelism - 1` workers, block `i` bound (`sched_setaffinity`) to the `i + 1`-th
//! CPU after the caller's, the caller waiting for the workers awake and the workers staying
//! awake 2 ms for the next call. Two threads, 1024 x 1024 cache-resident, medians of 5
//! alternations, G weights/s: Q4 `I8` 39.96 -> 38.24 (awake without binding: 40.50), W8 `I8`
//! 34.97 -> 30.99 (31.94); from memory the host's noise (23-39 either way) hid any difference.
//! Not kept: a dependency and a spinning pool for no measured gain.

/// Block lengths are multiples of this many rows (keeps threads off each other's cache lines).
pub(crate) const ROW_ALIGN: usize = 16;

/// Split `0..rows` into at most `threads` contiguous blocks (never empty ones).
pub(crate) fn blocks(rows: usize, threads: usize) -> Vec<(usize, usize)> {
    let t = threads.max(1);
    let per = rows.div_ceil(t).div_ceil(ROW_ALIGN) * ROW_ALIGN;
    let per = per.max(ROW_ALIGN);
    let mut out = Vec::new();
    let mut r = 0;
    while r < rows {
        let e = (r + per).min(rows);
        out.push((r, e));
        r = e;
    }
    out
}

/// Run `f(r0, r1, outs)` for each block of rows, where `outs[i]` is the part of `outs_all[i]`
/// (each holding `rows * row_len` elements) belonging to rows `r0..r1`. The last block runs on
/// the calling thread.
pub(crate) fn for_blocks<T: Send>(
    outs_all: Vec<&mut [T]>,
    rows: usize,
    row_len: usize,
    threads: usize,
    f: impl Fn(usize, usize, &mut [&mut [T]]) + Sync,
) {
    let bl = blocks(rows, threads);
    // Cut every output into per-block pieces.
    let mut per_block: Vec<Vec<&mut [T]>> = (0..bl.len()).map(|_| Vec::new()).collect();
    for out in outs_all {
        let mut rest = out;
        for (i, &(r0, r1)) in bl.iter().enumerate() {
            let (head, tail) = rest.split_at_mut((r1 - r0) * row_len);
            per_block[i].push(head);
            rest = tail;
        }
    }
    if per_block.len() <= 1 {
        if let (Some(mut outs), Some(&(r0, r1))) = (per_block.pop(), bl.first()) {
            f(r0, r1, &mut outs);
        }
        return;
    }
    rayon::in_place_scope(|s| {
        let f = &f;
        let mut last = None;
        for (i, (outs, &(r0, r1))) in per_block.into_iter().zip(&bl).enumerate() {
            if i + 1 == bl.len() {
                last = Some((outs, r0, r1));
            } else {
                let mut outs = outs;
                s.spawn(move |_| f(r0, r1, &mut outs));
            }
        }
        if let Some((mut outs, r0, r1)) = last {
            f(r0, r1, &mut outs);
        }
    });
}
