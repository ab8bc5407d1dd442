//! # ninfer-simd — CPU kernels for the NInfer numeric formats
//!
//! Dequantize and GEMV kernels that work **directly on the registered layout bytes**
//! (`/work/shared/spec/layouts.md`): `row-split-k128-v1` (Q4G64_F16S, Q5G64_F16S, Q6G64_F16S,
//! W8G32_F16S), `blockscale-k16-m128x4-v1` (NVFP4), `row-scale-v1` (FP8_E4M3FN_ROW_BF16S) and
//! `contiguous-le-v1` (BF16, FP32). A payload is borrowed as it lies in memory (a mapped
//! artifact): no load-time repacking, no private layout, no alignment requirement.
//!
//! ## Operations
//!
//! | function | operation | profile |
//! |---|---|---|
//! | [`dequantize_f32`], [`gather_f32`] | rows (a range, or a list for embedding lookups) to f32 | `Exact` |
//! | [`dequantize_bf16`], [`gather_bf16`] | rows to BF16 words | `Exact` |
//! | [`gemv()`] | `y[N] = W[N, K] x[K]` | `F32` or `I8` |
//! | [`gemv_batch`] | `Y[B, N]`, row b = `W x_b`, `1 <= B <= `[`MAX_BATCH`] | `F32` or `I8` |
//!
//! Every function takes the tensor descriptor (`ninfer_core::layout::TensorDesc`: format,
//! layout, logical shape), the payload bytes (exactly `desc.payload_len()` bytes; checked) and a
//! thread count, and detects the instruction set once ([`Isa::detect`]). The same functions
//! exist as methods of [`Isa`] to run a chosen path (tests, benches, comparisons). Nothing
//! panics on caller input: lengths, rows, batch sizes and combinations come back as
//! [`KernelError`].
//!
//! ## Compute profiles and their criteria (numeric-formats section 2)
//!
//! - **`Exact`** (dequantize, gather): the f32 output is bit-identical to the spec's
//!   reconstruction as the core oracle computes it (`TensorDesc::decode_f32`, sections 3.1,
//!   3.3, 3.4, 6.2); the BF16 output is the round-to-nearest-even BF16 word of that exact f32
//!   value ([`f32_to_bf16_rne`], identical to `ninfer_core::word::bf16::f32_to_bf16_rne`; a NaN
//!   stays NaN, made quiet). See [`dequant`] for why every ISA agrees.
//! - **`F32`** (GEMV): f32 activations, f32 products and sums. Per output,
//!   `|y - y_ref| <= C_F32 * K * 2^-24 * sum_k |w_k x_k|` with [`C_F32`] `= 4`, where `y_ref` is
//!   the f64 sum of the exactly decoded weights times x ([`criteria::f32_bound`]).
//! - **`I8`** (GEMV): each activation row is quantized per block of [`I8_BLOCK`] `= 32`
//!   positions to i8 with an f32 step `d_b = amax_b / 127` (symmetric, RNE,
//!   `xq = clamp(round_ties_even(x * 127 / amax_b), -127, 127)`); weights' integer codes are
//!   dotted with `xq` exactly in i32 and each 16-position sub-block is folded in with one float
//!   multiply-add by `scale * d_b`. Each `x_k` is replaced by `d_b xq_k`, off by at most half a
//!   step, `amax_b / 254`; hence the criterion, per output,
//!
//!   `|y - y_ref| <= (1 + I8_STEP_SLACK) * sum_k |w_k| amax_b(k) / 254
//!                   + C_I8 * K * 2^-24 * sum_k |w_k| (|x_k| + amax_b(k) / 254)`
//!
//!   with [`C_I8`] `= 4` and [`I8_STEP_SLACK`] `= 2^-13` ([`criteria::i8_bound`]; the
//!   derivation is in [`criteria`]). The profile exists for the formats whose weights are small
//!   integers times a block scale: Q4/Q5/Q6/W8 (q) and NVFP4 (`2 * e2m1`).
//!
//! Both GEMV profiles are deterministic and independent of the thread count: rows are cut into
//! fixed blocks and every output is computed by one thread with the same code in the same order
//! (nothing is reduced across threads). Results may differ between instruction sets (different
//! lane counts, FMA or not), always within the criterion.
//!
//! ## The kernel whitelist (sections 2 and 9)
//!
//! [`WHITELIST`] is the one explicit table of supported (format, layout, op, profile,
//! platform) combinations; every call checks it first and a request outside it fails with
//! [`KernelError::Unsupported`] naming the combination. There is no silent dense fallback.
//!
//! | format | layout | dequantize / gather (f32, BF16) | GEMV, batch GEMV |
//! |---|---|---|---|
//! | Q4G64_F16S, Q5G64_F16S, Q6G64_F16S, W8G32_F16S | row-split-k128-v1 | Exact | F32, I8 |
//! | NVFP4 | blockscale-k16-m128x4-v1 | Exact | F32, I8 |
//! | FP8_E4M3FN_ROW_BF16S | row-scale-v1 | Exact | F32 |
//! | BF16, FP32 | contiguous-le-v1 | Exact | F32 |
//! | I32 | contiguous-le-v1 | — | — |
//!
//! Every listed row holds on all four platforms: `Scalar`, `X86V3`, `X86V4`, `Neon`.
//!
//! ## Dispatch
//!
//! One run-time dispatch per call ([`Isa::detect`]): AVX-512 (`pulp::x86::V4`, with VNNI for
//! the I8 dots and AVX-512 BF16 for the BF16 output of the dequantizers where present), AVX2 + FMA (`pulp::x86::V3`, with AVX-VNNI for the
//! row-split and NVFP4 `I8` dots and GFNI for the Q5/Q6 code decode where present),
//! NEON (aarch64), else scalar. The
//! dequantize kernels and the `F32` GEMV are written once over `pulp::Simd` (`WithSimd`) and
//! monomorphised per token; the `I8` integer dots are per-ISA intrinsics behind one small trait
//! with a scalar twin (AVX2 `maddubs`/`madd`, AVX-512BW `maddubs`/`madd` with `mask_sub` for the
//! sign, NEON `sdot` or `smull`/`sadalp`; see `simd/src/gemv/i8.rs`). On `V3` and `V4` the
//! row-split formats (both profiles) and BF16/FP32 (`F32`) take a fast path that decodes the
//! codes straight from the chunk bytes in registers (`simd/src/gemv/i8x86.rs`,
//! `simd/src/gemv/f32x86.rs`); its integer sums are exact and its float operations are the
//! generic kernel's, in the same order. [`Isa::V3_512b`] runs the 16-lane shapes on AVX2 so
//! tests cover them on an AVX2-only machine; [`Isa::V4NoVnni`] forces the AVX-512BW dots where
//! VNNI exists and the integer BF16 rounding where AVX-512 BF16 exists, so both forms of each
//! are tested on such a machine.
//!
//! ## Performance
//!
//! [`report`] measures the machine's read bandwidth and each kernel's GB/s of weight bytes
//! against it (`cargo run --release -p ninfer-simd --example report`, or `ninfer bench`); the
//! criterion benches are `cargo bench -p ninfer --bench gemv|dequant|encode`.
//!
//! What the kernels do to get there (each measured; details in the module docs of the fast
//! paths, `gemv/{i8x86,f32x86,nvfp4x86,fp8x86}.rs`):
//!
//! - every row loop is monomorphised over the weight kind and the batch size, so the decode has
//!   no per-chunk branch and the accumulators live in registers (2-2.5x the first version's
//!   cache-resident throughput);
//! - no `array::from_fn` closure inside target-feature code (a closure there is compiled
//!   without the features and every intrinsic in it becomes a call: 15x slower, measured);
//! - the `I8` row-split kernels read only the activation codes and block steps (1.1 bytes per
//!   position, L1-resident at K = 8192) and make the offset corrections in registers (AVX2: from
//!   block sums staged once per call);
//! - the AVX2 `I8` kernels sum each block (row-split) or sub-block (NVFP4) to one exact integer
//!   before any float step: `hadd` steps over eight blocks, then one conversion and one FMA per
//!   eight block totals instead of per eight i32 partial sums (Xeon, one thread, L2-resident:
//!   Q4 23.3 -> 29.1, Q6 19.2 -> 22.9, NVFP4 22.6 -> 25.2 G weights/s);
//! - **weight streams far apart**: with one activation row, a thread's row block is cut into
//!   four contiguous parts (AVX-512 `F32` and `I8`, NVFP4, FP8, AVX2 BF16, AVX2 row-split `I8`
//!   where a thread's rows hold at least 4 MiB of codes; two on AVX2 W8 and FP32 `F32`, on AVX2
//!   NVFP4 `I8` and on smaller AVX2 row-split `I8` blocks; two on AVX-512 `I8` for two
//!   activation rows) and each pass does one row of each part, sharing the
//!   activation loads. On this project's machine one sequential stream per thread left most of
//!   the bandwidth unused whenever the kernel did real work per byte, and two *adjacent* rows per
//!   pass did not help (measured, 8192x8192 from memory, one thread: BF16 11 -> 22 GB/s, FP32
//!   17 -> 27 GB/s, Q4 `I8` 28 -> 36 G weights/s, W8 `I8` 11 -> 17 G weights/s);
//! - row-split and BF16 weights are software-prefetched one row ahead in each stream (every line
//!   of a row-split chunk's span); FP32 rows are left to the hardware prefetcher (a software
//!   prefetch made them slower: Xeon, one thread from memory, 4.03 -> 3.28 G weights/s). BF16
//!   on that Xeon, 8192x8192 from memory, one / two threads: AVX2 6.13 -> 7.02 / 11.9 -> 14.1,
//!   AVX-512 6.51 -> 7.05 / 11.2 -> 13.4 G weights/s (on the AMD machine of sessions 3-5 it had
//!   not helped);
//! - the AVX-512 Q4 and Q5 `F32` kernels decode by table: one shift and one `permutexvar`
//!   (Q5: `permutex2var`) of the group's `q * s` table per 16 weights, activations staged in
//!   that order (per thread, from memory: Q4 15.5 -> 25.7, Q5 12.0 -> 16-17 G weights/s; they
//!   sum in their own order, see `gemv/f32x86.rs`);
//! - the other row-split `F32` kernels take field `t` of every 32-bit lane of the code bytes
//!   with one left and one arithmetic right shift instead of widening 8 or 16 bytes out of an
//!   extract (AVX-512 Q6, W8; AVX2 Q4/Q5/Q6), activations staged in that order; AVX2 BF16 reads
//!   32 bytes of words at a time (even positions shifted, odd ones masked); all tested bit for
//!   bit against the generic kernel on weights and activations permuted into the same order
//!   (AVX2 Q4/Q5/Q6 since session 9 against a scalar model of their per-group order, below);
//! - the NVFP4 AVX-512 passes take four rows 32 apart in one 128-row scale tile, whose scales of
//!   a K-tile share one 16-byte unit of the swizzled plane: two 16-byte loads per chunk for all
//!   four rows instead of eight 4-byte loads from 8 cache lines (2 threads from memory: `I8`
//!   43.7 -> 45.9, `F32` 35.7 -> 39.3 G weights/s);
//! - the NVFP4 kernels prefetch both scale lines of each chunk (the two K-tiles' scales sit 512
//!   bytes apart in the swizzled plane; until session 11 only the first was prefetched, 4 chunks
//!   ahead), 8 chunks ahead for `I8` and 32 for `F32` (session 11, 2 threads from memory: AVX2
//!   `I8` 40.5 -> 43.1, AVX2 `F32` 23.5 -> 26.8, AVX-512 `F32` 34.1 -> 38.4 G weights/s);
//! - the AVX2 NVFP4 `I8` kernel prefetches the next 128-row band's scale plane a share per row,
//!   so a band's first 32 rows no longer read all of its scale lines in a burst (session 12, 2
//!   threads from memory: 46.1-47.6 -> 48.5-50.1 G weights/s);
//! - the AVX2 NVFP4 `I8` chunk loop has no partial-chunk path (a `memcpy` call the compiler
//!   spilled registers around on every chunk) and decodes a chunk's scales straight into the
//!   order of its sub-block totals, times 2^-8 (session 13, 2 threads from memory, two A/B
//!   sets: 48.9 -> 50.3 for the loop, 49.6 -> 51.9 for the scales, G weights/s);
//! - NVFP4 keeps its nibbles in place on both ISAs (low nibbles = even positions, high = odd;
//!   the activations are split the same way once per call): AVX2 `I8` 18.4 -> 25.9, AVX2 `F32`
//!   9.9 -> 14.0 G weights/s on one thread, cache-resident;
//! - E4M3FN block scales (NVFP4) and FP8 words go through binary16 and `vcvtph2ps` when no NaN
//!   word is present (AVX-512; on AVX2 with F16C detected at run time): 6-9 instructions per 16
//!   values instead of 32; the FP8 kernels leave the binary16 route's factor 2^-8 on the weights
//!   and multiply the activations by 2^8 once per call instead (the same exact products); AVX2
//!   FP8 moves its bytes into 16-bit words by an unpack and tests a chunk for NaN words by one
//!   unsigned maximum of `b + b` (one thread, L2-resident, 8.55 -> 9.19 G weights/s);
//! - the AVX2 Q4/Q5 `I8` block totals sum four `maddubs` lanes in i16 (two `hadd_epi16`
//!   levels, their codes stop at 31) before one widening `madd` per four blocks (session 14,
//!   AMD EPYC, one thread, cache-resident: Q4 24.2 -> 25.5, Q5 19.2 -> 19.6 G weights/s);
//! - the AVX2 Q4 `F32` kernel sums each group in two chains, as Q5/Q6 do (session 14, AMD
//!   EPYC: one thread, cache-resident, 14.07 -> 15.98 G weights/s);
//! - on AVX2 cores with AVX-VNNI the `I8` dots take the VEX `vpdpbusd` (row-split: one per
//!   block; NVFP4: two per half chunk and one `hadd_epi32`): the same integers, L2 +1-5%;
//! - on AVX2 cores with GFNI the Q5/Q6 `F32` kernel builds each code byte from its two planes
//!   by two affine bit transforms and an OR (three operations per 32 codes instead of five),
//!   and the `I8` kernel its offset codes likewise (12 operations per Q5 chunk instead of 19):
//!   the same bytes (session 30, Xeon, from memory, two threads, G weights/s: Q5 `F32` 27.3 ->
//!   28.8, Q5 `I8` 40.0 -> 43.5);
//! - the AVX2 and AVX-512 row-split `F32` passes take their chunks from runs bounds checked
//!   once per pass (`simd/src/runs.rs`), not per chunk (session 30, Xeon: Q4 +9%, Q5/Q6 +6%);
//! - E2M1/E4M3FN words are decoded without a subnormal operand ever reaching the FPU (an x86
//!   vector multiply with a subnormal operand takes a microcode assist);
//! - the AVX-512 Q6 `F32` kernel makes each weight from its code byte with a byte shuffle under
//!   the exponent of 2^15 and one FMA, `(2^15 + u') s - (2^15 + o) s` (exact: the constant has at
//!   most 23 significant bits for every binary16 scale, tested for all of them), off the ports
//!   the FMA needs on Intel. Session 6 put the byte under 2^23 and subtracted, then multiplied
//!   (Xeon, one thread, cache-resident: AVX2 Q4 9.4 -> 10.5, Q5 8.1 -> 9.2; AVX-512 Q6 11.7 ->
//!   13.1 G weights/s); session 8 folded both into the FMA (AVX2 Q4 10.3 -> 11.3, Q5 9.0 ->
//!   10.6, Q6 8.9 -> 10.4; AVX-512 Q6 13.0 -> 14.0);
//! - the AVX2 Q4/Q5/Q6 `F32` kernels sum per group (session 9): a byte shuffle puts each signed
//!   code in the top byte of a 32-bit lane, one conversion makes `q 2^(32 - b)` exactly, one FMA
//!   per 8 weights sums it times `x`, and one FMA per group applies the scale (times
//!   `2^-(32 - b)`): three vector operations per 8 weights instead of four. Meets the `F32`
//!   criterion; bit-identical to a scalar model of its order, which does not depend on the
//!   batch size (Xeon, one thread, cache-resident: Q4 11.3 -> 14.6, Q5 10.6 -> 12.6, Q6 10.6 ->
//!   12.7 G weights/s);
//! - the encoder narrows `u32` words to bytes with explicit x86 instructions (AVX-512 `vpmovdb`,
//!   AVX2 packs): LLVM had scalarised the portable loop into a `vpinsrb`/`vpextrb` per byte
//!   (Xeon, one thread, Q4 cache-resident 1.87 -> 4.65 G weights/s; see `encode`'s docs), and
//!   prefetches its f32 source a group at a time during the amax pass, one block ahead (from
//!   memory, AVX2 Q4 1.85 -> 2.46 G weights/s).
//!
//! ## Threads
//!
//! `threads` is the number of threads a call may use (0 is treated as 1). Work is split over
//! row blocks on a persistent pool (rayon's global one); the calling thread takes the last block.
//! On a shared virtual machine a two-thread call can run at the one-thread rate for stretches
//! of seconds: on session 14's AMD EPYC host both blocks then ran on their own CPUs, both
//! slowly (the host's load, not the placement); binding the workers to CPUs did not help (the
//! `threads` module docs; `cargo run --release -p ninfer-simd --example colocation` shows how a
//! host places two fresh threads).
//!
//! ## Tests
//!
//! `cargo test -p ninfer-simd` runs every available path ([`Isa::available`]: V4, V4NoVnni, V3,
//! the 16-lane V3_512b and Scalar on x86-64) against the core oracle at K = 1, 63, 64, 65, 127, 128,
//! 129, 4097 (NVFP4: 16, 64, 80, 128, 144, 4112), N = 1, 7, 129, unaligned buffers, B = 1..8 and
//! 1/2/3 threads. `tests/avx512.rs` prints `SKIPPED: ...` where the CPU lacks AVX-512 (or,
//! for the `vcvtne2ps2bf16` route, AVX-512 BF16). An ignored test rounds all 2^32 binary32
//! words to BF16 on every path (`cargo test -p ninfer-simd --release --test dequant --
//! --ignored every_binary32`, run by `.ci/run`).
//! `.ci/simd-neon.sh` runs the same tests for aarch64 under qemu-user (NEON with `sdot`, NEON
//! with widening multiplies, Scalar); `.cargo/config.toml` holds the cross linker and runner.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod criteria;
pub mod dequant;
pub mod encode;
mod error;
mod gemv;
mod isa;
#[cfg(target_arch = "x86_64")]
mod prefetch;
pub mod report;
#[cfg(target_arch = "x86_64")]
mod runs;
mod threads;
mod weights;
pub mod whitelist;

use std::ops::Range;

use ninfer_core::layout::TensorDesc;

pub use criteria::{C_F32, C_I8, I8_STEP_SLACK};
pub use dequant::f32_to_bf16_rne;
pub use error::KernelError;
pub use isa::Isa;
pub use ninfer_core as core;
pub use whitelist::{KernelEntry, Op, Platform, PlatformSet, Profile, WHITELIST};

use dequant::{DequantOp, OutWord, Sel};
use threads::for_blocks;
use weights::Weights;

/// Largest batch of [`gemv_batch`].
pub const MAX_BATCH: usize = 8;

/// Activation block of the `I8` profile: positions per f32 step.
pub const I8_BLOCK: usize = 32;

impl Isa {
    /// [`dequantize_f32`] on this instruction set.
    pub fn dequantize_f32(
        self,
        desc: &TensorDesc,
        payload: &[u8],
        rows: Range<usize>,
        out: &mut [f32],
        threads: usize,
    ) -> Result<(), KernelError> {
        dequant_range(self, Op::DequantizeF32, desc, payload, rows, out, threads)
    }

    /// [`dequantize_bf16`] on this instruction set.
    pub fn dequantize_bf16(
        self,
        desc: &TensorDesc,
        payload: &[u8],
        rows: Range<usize>,
        out: &mut [u16],
        threads: usize,
    ) -> Result<(), KernelError> {
        dequant_range(self, Op::DequantizeBf16, desc, payload, rows, out, threads)
    }

    /// [`gather_f32`] on this instruction set.
    pub fn gather_f32(
        self,
        desc: &TensorDesc,
        payload: &[u8],
        rows: &[usize],
        out: &mut [f32],
        threads: usize,
    ) -> Result<(), KernelError> {
        dequant_list(self, Op::GatherF32, desc, payload, rows, out, threads)
    }

    /// [`gather_bf16`] on this instruction set.
    pub fn gather_bf16(
        self,
        desc: &TensorDesc,
        payload: &[u8],
        rows: &[usize],
        out: &mut [u16],
        threads: usize,
    ) -> Result<(), KernelError> {
        dequant_list(self, Op::GatherBf16, desc, payload, rows, out, threads)
    }

    /// [`gemv()`] on this instruction set.
    pub fn gemv(
        self,
        desc: &TensorDesc,
        payload: &[u8],
        profile: Profile,
        x: &[f32],
        y: &mut [f32],
        threads: usize,
    ) -> Result<(), KernelError> {
        gemv::run(self, Op::Gemv, desc, payload, profile, x, 1, y, threads)
    }

    /// [`gemv_batch`] on this instruction set.
    #[allow(clippy::too_many_arguments)]
    pub fn gemv_batch(
        self,
        desc: &TensorDesc,
        payload: &[u8],
        profile: Profile,
        x: &[f32],
        batch: usize,
        y: &mut [f32],
        threads: usize,
    ) -> Result<(), KernelError> {
        gemv::run(self, Op::GemvBatch, desc, payload, profile, x, batch, y, threads)
    }
}

/// Decode rows `rows` (of the first dimension) to f32, bit-exact (profile `Exact`; sections 3.1,
/// 3.3, 3.4, 6.2). `out` holds `rows.len() * K` values, K being the row length (the product of
/// the other dimensions for a contiguous tensor).
pub fn dequantize_f32(
    desc: &TensorDesc,
    payload: &[u8],
    rows: Range<usize>,
    out: &mut [f32],
    threads: usize,
) -> Result<(), KernelError> {
    Isa::detect().dequantize_f32(desc, payload, rows, out, threads)
}

/// Decode rows to BF16 words: the round-to-nearest-even BF16 word of the exact f32 value
/// ([`f32_to_bf16_rne`]). `out` holds `rows.len() * K` words.
pub fn dequantize_bf16(
    desc: &TensorDesc,
    payload: &[u8],
    rows: Range<usize>,
    out: &mut [u16],
    threads: usize,
) -> Result<(), KernelError> {
    Isa::detect().dequantize_bf16(desc, payload, rows, out, threads)
}

/// Gather-dequantize: decode the listed rows (an embedding lookup, any order, repeats allowed)
/// to f32, bit-exact. `out` holds `rows.len() * K` values; an out-of-range row is an error.
pub fn gather_f32(
    desc: &TensorDesc,
    payload: &[u8],
    rows: &[usize],
    out: &mut [f32],
    threads: usize,
) -> Result<(), KernelError> {
    Isa::detect().gather_f32(desc, payload, rows, out, threads)
}

/// Gather-dequantize to BF16 words (RNE of the exact f32 value).
pub fn gather_bf16(
    desc: &TensorDesc,
    payload: &[u8],
    rows: &[usize],
    out: &mut [u16],
    threads: usize,
) -> Result<(), KernelError> {
    Isa::detect().gather_bf16(desc, payload, rows, out, threads)
}

/// `y[N] = W[N, K] x[K]` for a rank-2 weight tensor, in `profile` ([`Profile::F32`] or
/// [`Profile::I8`], see the crate docs for their criteria). `x.len() == K`, `y.len() == N`.
pub fn gemv(
    desc: &TensorDesc,
    payload: &[u8],
    profile: Profile,
    x: &[f32],
    y: &mut [f32],
    threads: usize,
) -> Result<(), KernelError> {
    Isa::detect().gemv(desc, payload, profile, x, y, threads)
}

/// The small batch: `x` holds `batch` activation rows of K (row-major), `y` gets `batch` rows of
/// N, row b being `W x_b` computed exactly as [`gemv()`] computes it. `1 <= batch <= MAX_BATCH`.
/// The weights are read once for the whole batch.
pub fn gemv_batch(
    desc: &TensorDesc,
    payload: &[u8],
    profile: Profile,
    x: &[f32],
    batch: usize,
    y: &mut [f32],
    threads: usize,
) -> Result<(), KernelError> {
    Isa::detect().gemv_batch(desc, payload, profile, x, batch, y, threads)
}

fn dequant_range<T: OutWord>(
    isa: Isa,
    op: Op,
    desc: &TensorDesc,
    payload: &[u8],
    rows: Range<usize>,
    out: &mut [T],
    threads: usize,
) -> Result<(), KernelError> {
    let (token, w) = dequant_prepare(isa, op, desc, payload)?;
    let n = w.rows();
    if rows.start > rows.end || rows.end > n {
        let row = if rows.end > n { rows.end } else { rows.start };
        return Err(KernelError::RowOutOfRange {
            position: 0,
            row,
            rows: n,
        });
    }
    run_dequant(token, w, Sel::Range(rows.start), rows.len(), out, threads)
}

fn dequant_list<T: OutWord>(
    isa: Isa,
    op: Op,
    desc: &TensorDesc,
    payload: &[u8],
    rows: &[usize],
    out: &mut [T],
    threads: usize,
) -> Result<(), KernelError> {
    let (token, w) = dequant_prepare(isa, op, desc, payload)?;
    let n = w.rows();
    if let Some(position) = rows.iter().position(|&r| r >= n) {
        return Err(KernelError::RowOutOfRange {
            position,
            row: rows[position],
            rows: n,
        });
    }
    run_dequant(token, w, Sel::List(rows), rows.len(), out, threads)
}

fn dequant_prepare<'a>(
    isa: Isa,
    op: Op,
    desc: &TensorDesc,
    payload: &'a [u8],
) -> Result<(isa::Token, Weights<'a>), KernelError> {
    let token = isa.token()?;
    whitelist::check(desc.format(), desc.layout(), op, Profile::Exact, isa.platform())?;
    Ok((token, Weights::new(desc, payload)?))
}

fn run_dequant<T: OutWord>(
    token: isa::Token,
    w: Weights<'_>,
    sel: Sel<'_>,
    count: usize,
    out: &mut [T],
    threads: usize,
) -> Result<(), KernelError> {
    let want = count.checked_mul(w.k()).ok_or(KernelError::SizeOverflow)?;
    if out.len() != want {
        return Err(KernelError::BufferLength {
            what: "out",
            expected: want,
            actual: out.len(),
        });
    }
    for_blocks(vec![out], count, w.k(), threads, |r0, _r1, outs| {
        for o in outs.iter_mut() {
            let op = DequantOp {
                w,
                sel,
                i0: r0,
                out: o,
            };
            match token {
                #[cfg(target_arch = "x86_64")]
                isa::Token::V3(s) => pulp::Simd::vectorize(s, dequant::DequantV3Op(s, false, op)),
                #[cfg(target_arch = "x86_64")]
                isa::Token::V4(s, ext) => pulp::Simd::vectorize(s, dequant::DequantV3Op(*s, ext.bf16, op)),
                _ => token.vectorize(op),
            }
        }
    });
    Ok(())
}
