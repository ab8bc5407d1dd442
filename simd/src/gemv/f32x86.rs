//! The `F32` profile's x86 fast path (AVX2 `V3`, AVX-512 `V4`) for the row-split formats,
//! BF16 and FP32: the pre-weights are made in registers straight from the row bytes instead of
//! being staged through a 128-value stack array.
//!
//! - row-split: the codes come from the I8 fast path's register decode (`i8x86`), minus the
//!   offset, sign-extended to i32, converted (exact) and multiplied by the group scale (exact:
//!   `s * q` is the weight, section 6.2). Exceptions, each summing in its own staged order (see
//!   below): the AVX-512 Q4/Q5 table kernels ([`Q4_TABLE`], [`Q5_TABLE`]) and Q6/W8 per-group
//!   kernels ([`v4_split`], [`pass_v4_split`]; on AMD cores a `V4` call runs the AVX2 Q6/W8
//!   rows instead, [`v3_rows_on_v4`]), and on AVX2 the
//!   Q4/Q5/Q6/W8 kernels ([`SPLIT_V3`]), which take field `j` of every 32-bit lane of the code
//!   bytes instead of widening 8 bytes at a time (with one left and one arithmetic right shift:
//!   AMD, Q4 one thread, cache-resident, 14.8 -> 17.0 G weights/s; Q5/Q6 unchanged, measured;
//!   since session 6 by a byte shuffle under a float exponent, in session 8 with the offset
//!   and the scale in one FMA, since session 9 summed per group, see below). Tried on the AVX2
//!   Q4 kernel on AMD and dropped (no gain or slower): summing `q x` per group and multiplying by
//!   the scale once per group (one multiplication per 8 weights less; medians of 5 alternations:
//!   17.0 -> 17.1 cache-resident, 21.6 -> 21.9 from memory on 2 threads: the conversion and
//!   the shifts, not the multiplications, bound it; on the Xeon, with the codes moved to the top
//!   of each lane by a byte shuffle instead of shifts, the same idea is what session 9 kept),
//!   building `2^23 + u` by OR-ing the nibble
//!   into a float's mantissa instead of converting (two alternations: 17 -> 10.7 and 14.4),
//!   and two weight streams (medians of 5: 12.8 -> 13.1 from memory, 2 threads 23.8 -> 23.1);
//! - BF16: 16-bit words zero-extended to 32 bits and shifted left by 16 (exact); on AVX2 32
//!   bytes at a time, the even positions shifted left by 16 and the odd ones masked in place
//!   (staged order [`BF16_V3`]; one thread, cache-resident, 13.5 -> 14.3 G weights/s);
//! - FP32: the words themselves.
//!
//! The arithmetic after that is the generic kernel's ([`super::f32`]) operation for operation:
//! the same four accumulators fed in the same order, the same sum and pulp's same reduction, so
//! the result is bit-identical to it. A partial last chunk of a BF16/FP32 row (K not a multiple
//! of 128; nothing may be read past the row) goes through the generic chunk decoder.
//!
//! Each row loop is monomorphised over the weight kind and the batch size
//! (`by_kind_and_batch!`): the weight decode has no per-chunk branch and the accumulators are
//! registers, not a stack array indexed at run time (2x the cache-resident throughput of the
//! first version, which matched on the weight kind inside the chunk loop).
//!
//! **Weight streams.** With one batch row, each pass does one row from each of [`STREAMS`]
//! contiguous parts of the thread's row block (AVX2: two), sharing the activation loads; each
//! row's operations and their order are unchanged, so the results are still bit-identical to the
//! generic kernel. At K = 8192 the f32 activation row (32 KiB) does not stay in the L1 cache
//! beside one streaming weight row, and on this project's machine a single sequential weight
//! stream per thread got 11 GB/s (BF16) of the 27 GB/s the streaming sum reaches; four streams
//! far apart get 22 (FP32: 17 -> 27). Tried and dropped (measured): K slabs that keep an 8 KiB
//! activation slab in L1 (the weights then come as 4 KiB runs 16 KiB apart: 8-10 GB/s), and
//! four *adjacent* rows per pass (fine at K = 8192, half the bandwidth at K = 2048, where the
//! rows are 4 KiB apart).
//!
//! AVX2 row-split `F32` (Q4/Q5/Q6; W8 since session 17) sums per group ([`pass_v3_split`],
//! session 9): each signed
//! code is moved by a byte shuffle (or a mask) to the top byte of a 32-bit lane and converted,
//! giving `q 2^(32 - b)` exactly ([`decode_top_v3`], [`top_floats`]); the group's sums of those
//! times `x` take one FMA per 8 weights, and one FMA per group applies `s 2^-(32 - b)`. That is
//! three vector operations per 8 weights (shuffle, conversion, FMA) where the forms before it took
//! four: session 6 moved the code under the exponent of 2^23 and subtracted `2^23 + o`, with the
//! multiply by the scale after it (`split_floats`: instead of two shifts and a conversion that
//! share ports 0 and 1 with the multiply and the FMA on Intel cores; on the AMD machine of
//! sessions 3-5 an OR of the nibble into the mantissa had measured slower than the shifts, see
//! above); session 8 put the code under the exponent of 2^15 and made each weight by one FMA with
//! the exact constant `-(2^15 + o) s` (`split_weights`; the AVX-512 Q6 form until session 21,
//! see [`v4_split`]), then a second FMA with `x`. The sum order is no longer the generic
//! kernel's: the kernel meets the `F32` criterion and equals a scalar model of its order bit for
//! bit (`gemv/x86_tests.rs`). And the code bytes of every row-split kind are software-prefetched
//! one row ahead in their stream (on AVX2 into L2 only where K > 4096, since session 23,
//! [`pass_v3_split`]), as the `I8` kernels do (kept on the AMD EPYC, Zen 3, of session 17,
//! where dropping the NVFP4 kernels' scale prefetch paid: without it, 8192x8192
//! from memory, medians of 5 alternations, one / two threads, G weights/s, Q4 16.54 / 32.42 ->
//! 14.79 / 29.43, Q5 13.86 / 26.36 -> 12.21 / 23.15, Q6 12.83 / 24.02 -> 10.89 / 19.93; one
//! prefetch per distinct line instead of `prefetch::span`'s last-byte one: Q4 16.22 / 31.98,
//! Q5 13.22 / 25.99, Q6 12.40 / 24.69, no gain). Xeon (Emerald Rapids, KVM), G
//! weights/s, medians of 3 alternations: 4096x4096 cache-resident one thread Q4 9.39 -> 10.53, Q5
//! 8.08 -> 9.16, Q6 8.63 -> 9.17; 8192x8192 from memory, one thread (shuffle, then prefetch) Q4
//! 8.18 -> 8.74 -> 9.69, Q6 6.50 -> 6.53 -> 8.89, W8 (prefetch) 8.74 -> 9.83; two threads Q4 16.3
//! -> 17.2, Q6 13.1 -> 17.6, W8 16.7 -> 19.6. The FMA-made weights (session 8, the same machine
//! and method): 256x8192 cache-resident one thread Q4 10.33 -> 11.34, Q5 9.02 -> 10.55, Q6 8.85
//! -> 10.37; 8192x8192 from memory, one / two threads, Q4 10.42 / 20.69 -> 11.28 / 22.16, Q5 9.03
//! / 17.76 -> 10.49 / 20.81, Q6 8.79 / 17.54 -> 10.35 / 19.01. Tried after it and dropped: a Q4
//! route without the nibble split (two byte unpacks and two word unpacks build `2^15 + b` for a
//! whole code byte, one mask per nibble keeps it in place, the high nibble's scale `s / 16`; 14%
//! fewer operations by count, all the unpacks on port 5): 256x8192 cache-resident 12.12 ->
//! 10.50; and W8 in this form (the sign bits flipped to make offset codes `q + 128`, `(2^15 +
//! 128) s` exact too, the activations staged in [`SPLIT_V3`]) instead of widening and
//! converting: 11.40 -> 9.25. The per-group sums (session 9): 256x8192 cache-resident one
//! thread Q4 11.34 -> 14.60, Q5 10.63 -> 12.61, Q6 10.63 -> 12.67; 8192x8192 from memory, one /
//! two threads, Q4 12.10 / 20.91 -> 14.90 / 29.42, Q5 10.72 / 20.85 -> 12.65 / 25.18, Q6 10.44 /
//! 20.56 -> 12.36 / 24.00. Tried with it: the byte-0 shuffle kept as a shuffle (the compiler
//! turns it into a shift, on ports 0/1 with the conversions and FMAs; hiding the control from it
//! measured slower, Q4 14.3 -> 14.0).
//!
//! Where the CPU has GFNI (not part of x86-64-v3; detected per call), Q5 and Q6 take
//! [`rows_v3_gfni`]: the same kernel with each code byte made by two affine bit transforms and an
//! OR ([`decode_top_block_gfni`], session 30), bit-identical.
//!
//! On AVX2 (16 vector registers) two streams for FP32, four for BF16, one for the row-split
//! kernels (one thread, 8192x8192 from memory, G weights/s, one stream -> two: W8 8.1 -> 9.4,
//! BF16 5.5 -> 6.0, FP32 4.1 -> 5.2; Q4 12.4 -> 11.9, slower; BF16 two -> four, two
//! alternations: 5.7/5.1 -> 7.6/7.2; W8 and FP32 two -> four: slower). W8 took two streams of
//! the widening kernel ([`pass_v3`]: per 8 weights a widening, a conversion, a multiplication by
//! the scale and an FMA) until session 17 moved it to the per-group sums of [`pass_v3_split`]
//! (a shuffle, a conversion and an FMA; one FMA per group of 32 for the scale): AMD EPYC (Zen
//! 3), `report --isa V3`, medians of 5 alternations, G weights/s, 8192x8192 from memory one /
//! two threads 9.42 / 18.59 -> 12.57 / 24.21, 1024x8192 in L3 one thread 9.80 -> 14.19.
//! Session 21 gave that kernel two weight streams for W8 ([`W8_STREAMS_V3`]) and, for K above
//! 4096, for Q4 ([`paired_v3`]); the rows of a pass take each 32-position block in turn and share
//! its activation loads. Q5/Q6 keep one.

use core::arch::x86_64::{__m128i, __m256, __m256i, __m512, __m512i};

use ninfer_core::registry::Grouped;
use pulp::Simd;

use super::i8x86::{
    amd_cores, bit_matrix, decode_v4, grouped, row_scales, row_scales_span, row_scales_times,
};
use super::{store_rows, stream_rows};
use crate::dequant::ChunkOut;
use crate::runs::Runs;
use crate::weights::{Weights, CHUNK};
use crate::MAX_BATCH;

/// Whether the fast path takes these weights.
pub(crate) fn takes(w: &Weights<'_>) -> bool {
    matches!(
        w,
        Weights::Grouped { .. } | Weights::Bf16 { .. } | Weights::Fp32 { .. }
    )
}

/// The rows `r0..r1` of one thread.
pub(crate) struct F32Job<'a, 'b, 'c> {
    pub(crate) w: Weights<'a>,
    /// `nb` activation rows, each zero-padded to `chunks * 128`.
    pub(crate) xs: &'a [f32],
    pub(crate) nb: usize,
    pub(crate) r0: usize,
    pub(crate) r1: usize,
    pub(crate) ys: &'b mut [&'c mut [f32]],
}

/// Weight kinds of this fast path as const ids: 0..3 the grouped schemes (see
/// [`super::i8x86::grouped`]), then BF16 and FP32.
const BF16: u8 = 4;
const FP32: u8 = 5;

/// Monomorphise `$k::<KIND, NB>` over the weight kind and the batch size (1, 2, up to 4, up
/// to [`MAX_BATCH`]).
macro_rules! by_kind_and_batch {
    ($w:expr, $nb:expr, $k:ident ( $($a:expr),* )) => {{
        macro_rules! nb {
            ($K:expr) => {
                match $nb {
                    1 => $k::<$K, 1>($($a),*),
                    2 => $k::<$K, 2>($($a),*),
                    3 | 4 => $k::<$K, 4>($($a),*),
                    _ => $k::<$K, MAX_BATCH>($($a),*),
                }
            };
        }
        match $w {
            Weights::Grouped { g: Grouped::Q4, .. } => nb!(0),
            Weights::Grouped { g: Grouped::Q5, .. } => nb!(1),
            Weights::Grouped { g: Grouped::Q6, .. } => nb!(2),
            Weights::Grouped { g: Grouped::W8, .. } => nb!(3),
            Weights::Bf16 { .. } => nb!(BF16),
            Weights::Fp32 { .. } => nb!(FP32),
            _ => {}
        }
    }};
}

/// AVX-512 row loop.
#[inline(always)]
pub(crate) fn rows_v4(s: pulp::x86::V4, job: F32Job<'_, '_, '_>) {
    by_kind_and_batch!(job.w, job.nb, rows_v4_impl(s, job))
}

/// Whether a `V4` call runs the AVX2 rows ([`FastV3`], chosen by the dispatcher in `gemv`, so
/// that the two kernels' stack frames are never nested: in a debug build each is over a MiB) for
/// these weights: Q6 and W8 on AMD cores, where the AVX2 per-group kernels ([`pass_v3_split`]) are
/// the faster ones. A Zen 4 class core splits each 512-bit operation into two 256-bit halves, so
/// [`pass_v4_split`] does the same work per weight in as many pipe slots, and the AVX2 kernel has
/// the L2-only prefetch and (W8) the two weight streams measured for it. Session 24's AMD EPYC (Zen
/// 4 class), `report --isa V4`, G weights/s, one / two threads, medians of 3-5 alternations: W8
/// 8192x8192 from memory 12.25 / 23.75 -> 18.88 / 34.65, 4096x16384 12.37 / 24.66 -> 18.15 / 34.50,
/// 16384x2048 13.41 / 26.43 -> 18.47 / 34.77, cache-resident 256x8192 13.65 -> 19.64, 1024x2048
/// 17.78 -> 19.08; Q6 8192x8192 14.62 / 26.36 -> 15.49 / 30.45 (a second set, 7 alternations: 14.73
/// / 29.51 -> 15.56 / 30.29), 4096x16384 14.98 / 25.23 -> 14.70 / 29.08, 16384x2048 14.16 / 28.52
/// -> 15.86 / 31.23, cache-resident 256x8192 14.89 -> 16.11, 1024x2048 16.69 -> 16.26. The AVX-512
/// Q4/Q5 table kernels, BF16 and FP32 stay: faster there than the AVX2 ones (session 22, two
/// threads from memory: Q4 50.25 against 38.26, Q5 33.36 against 28.62). Other cores keep the
/// AVX-512 kernels: session 24 had no Intel host to compare the two on.
pub(crate) fn v3_rows_on_v4(w: &Weights<'_>) -> bool {
    matches!(
        w,
        Weights::Grouped {
            g: Grouped::W8 | Grouped::Q6,
            ..
        }
    ) && amd_cores()
}

/// A row-split payload's code plane, scale plane, code bytes per row and groups per row (empty
/// and 0 for the other formats).
#[inline(always)]
fn grouped_parts<'a>(w: &Weights<'a>) -> (&'a [u8], &'a [u8], usize, usize) {
    match *w {
        Weights::Grouped {
            codes,
            scales,
            rcb,
            gp,
            ..
        } => (codes, scales, rcb, gp),
        _ => (&[], &[], 0, 0),
    }
}

/// The bytes of a row-major direct-format row (`width` bytes per word), or an empty slice.
#[inline(always)]
fn words_of<'a>(w: &Weights<'a>) -> &'a [u8] {
    match *w {
        Weights::Bf16 { words, .. } | Weights::Fp32 { words, .. } => words,
        _ => &[],
    }
}

/// One weight kind `KIND`, batch rows `min(nb, NB)` (exactly `NB` when `NB <= 2`).
///
/// With one batch row the block `r0..r1` is cut into [`STREAMS`] contiguous parts and each
/// pass does one row of each part ([`pass_v4`]): four sequential weight streams far apart
/// instead of one, sharing each activation load (see the module docs for the measurements).
#[inline(always)]
fn rows_v4_impl<const KIND: u8, const NB: usize>(s: pulp::x86::V4, job: F32Job<'_, '_, '_>) {
    let F32Job {
        w,
        xs,
        nb,
        r0,
        r1,
        ys,
    } = job;
    let gp = grouped_parts(&w).3;
    // Per weight stream a row's group scales.
    let mut sc = vec![0f32; STREAMS * gp];
    // The table kernels read the activations in their table order (see `Q4_TABLE`); the
    // per-group kernels ([`v4_split`]) in the Q5 table order.
    let xp: Vec<f32>;
    let split = v4_split(KIND);
    let xs = if KIND <= Q5_TABLE && !split {
        xp = table_order(KIND, xs);
        &xp[..]
    } else if KIND < BF16 {
        xp = table_order(Q5_TABLE, xs);
        &xp[..]
    } else {
        xs
    };
    let mut row = r0;
    if NB == 1 {
        let q = (r1 - r0) / STREAMS;
        for i in 0..q {
            let rows = stream_rows::<STREAMS>(r0, q, i);
            let y = if split {
                pass_v4_split::<KIND, 1, STREAMS>(s, &w, xs, nb, rows, &mut sc)
            } else {
                pass_v4::<KIND, 1, STREAMS>(s, &w, xs, nb, rows, &mut sc)
            };
            store_rows(ys, r0, rows, &y, 1);
        }
        row = r0 + STREAMS * q;
    }
    let live = if NB <= 2 { NB } else { nb.min(NB) };
    while row < r1 {
        let y = if split {
            pass_v4_split::<KIND, NB, 1>(s, &w, xs, nb, [row], &mut sc)
        } else {
            pass_v4::<KIND, NB, 1>(s, &w, xs, nb, [row], &mut sc)
        };
        store_rows(ys, r0, [row], &y, live);
        row += 1;
    }
}

/// The rows `rows` (one per weight stream) against batch rows `min(nb, NB)`: `out[r][b]`.
/// Per row, the generic kernel's operations in its order.
#[inline(always)]
fn pass_v4<const KIND: u8, const NB: usize, const R: usize>(
    s: pulp::x86::V4,
    w: &Weights<'_>,
    xs: &[f32],
    nb: usize,
    rows: [usize; R],
    sc: &mut [f32],
) -> [[f32; NB]; R] {
    let f = s.avx512f;
    let chunks = w.chunks();
    let kc = chunks * CHUNK;
    let k = w.k();
    let (codes, scales, rcb, gp) = grouped_parts(w);
    let words = words_of(w);
    let live = |b: usize| NB <= 2 || b < nb;
    let mut buf = [0f32; CHUNK];
    if KIND < BF16 {
        for (r, &row) in rows.iter().enumerate() {
            row_scales(scales, row, gp, &mut sc[r * gp..(r + 1) * gp]);
        }
    }
    // Q4 by table: the signed code of each nibble as f32, and the shift of each vector.
    let q4: __m512 = pulp::cast(Q4_CODES);
    let q5: [__m512; 2] = pulp::cast(Q5_CODES);
    let mut shifts = [f._mm512_setzero_si512(); 8];
    for (t, o) in shifts.iter_mut().enumerate() {
        *o = f._mm512_set1_epi32(4 * t as i32);
    }
    let mut acc = [[[f._mm512_setzero_ps(); 4]; NB]; R];
    for c in 0..chunks {
        let full = CHUNK * (c + 1) <= k;
        for (r, &row) in rows.iter().enumerate() {
            let wv: [__m512; 8] = if KIND == Q4_TABLE {
                // Q4 by table: vector t, lane l is the nibble `4t` bits up in the 32-bit lane l
                // of the 64 code bytes (position `table_position(0, t, l)`), looked up in the 16-entry
                // table `q * s` of its group (exact: section 6.2).
                let at = row * rcb + c * 64;
                crate::prefetch::line(codes.as_ptr().wrapping_add(at + rcb));
                let v: __m512i = ld(&codes[at..at + 64]);
                let tbl = [
                    f._mm512_mul_ps(q4, f._mm512_set1_ps(sc[r * gp + 2 * c])),
                    f._mm512_mul_ps(q4, f._mm512_set1_ps(sc[r * gp + 2 * c + 1])),
                ];
                let mut wv = [f._mm512_setzero_ps(); 8];
                for (t, o) in wv.iter_mut().enumerate() {
                    let idx = f._mm512_srlv_epi32(v, shifts[t]);
                    *o = f._mm512_permutexvar_ps(idx, tbl[t % 2]);
                }
                wv
            } else if KIND == Q5_TABLE {
                // Q5 by table: the offset codes `u' = q + 16` of each 64-position half (one
                // group) from the register decode; vector j = 4h + t, lane l is byte t of the
                // 32-bit lane l of half h (position `table_position(1, j, l)`), looked up with
                // its low 5 bits in the 32-entry table `q * s` of its group.
                let cb = 80;
                let at = row * rcb + c * cb;
                crate::prefetch::span(codes.as_ptr().wrapping_add(at + rcb), cb);
                let u = decode_v4(s, Grouped::Q5, &codes[at..at + cb]);
                let mut wv = [f._mm512_setzero_ps(); 8];
                for h in 0..2 {
                    let sg = f._mm512_set1_ps(sc[r * gp + 2 * c + h]);
                    let (lo, hi) = (f._mm512_mul_ps(q5[0], sg), f._mm512_mul_ps(q5[1], sg));
                    for t in 0..4 {
                        let idx = f._mm512_srlv_epi32(u[h], shifts[2 * t]);
                        wv[4 * h + t] = f._mm512_permutex2var_ps(lo, idx, hi);
                    }
                }
                wv
            } else if KIND == BF16 && full {
                // `WORDS_AHEAD` bytes ahead in the stream's row (BF16 only; FP32 measured slower
                // with it).
                let p = 2 * (row * k + CHUNK * c);
                crate::prefetch::span(words.as_ptr().wrapping_add(p + WORDS_AHEAD), 2 * CHUNK);
                let rb = &words[p..p + 2 * CHUNK];
                let mut wv = [f._mm512_setzero_ps(); 8];
                for (j, o) in wv.iter_mut().enumerate() {
                    let v: __m256i = ld(&rb[32 * j..32 * j + 32]);
                    *o = pulp::cast(f._mm512_slli_epi32::<16>(f._mm512_cvtepu16_epi32(v)));
                }
                wv
            } else if KIND == FP32 && full {
                let rb = &words[4 * (row * k + CHUNK * c)..4 * (row * k + CHUNK * (c + 1))];
                let v: &[u8; 512] = rb.try_into().unwrap_or(&[0; 512]);
                pulp::cast(*v)
            } else {
                w.pre_chunk(row, c, &mut buf);
                pulp::cast(buf)
            };
            for (b, a) in acc[r].iter_mut().enumerate() {
                if !live(b) {
                    break;
                }
                let xr = &xs[b * kc + CHUNK * c..b * kc + CHUNK * (c + 1)];
                let xv: &[f32; CHUNK] = xr.try_into().unwrap_or(&[0.0; CHUNK]);
                let xv: [__m512; 8] = pulp::cast(*xv);
                for j in 0..8 {
                    a[j % 4] = f._mm512_fmadd_ps(wv[j], xv[j], a[j % 4]);
                }
            }
        }
    }
    let mut out = [[0f32; NB]; R];
    for ((o, ar), &row) in out.iter_mut().zip(&acc).zip(&rows) {
        let post = w.post(row);
        for (b, a) in ar.iter().enumerate() {
            if !live(b) {
                break;
            }
            let t = f._mm512_add_ps(f._mm512_add_ps(a[0], a[1]), f._mm512_add_ps(a[2], a[3]));
            o[b] = post.apply(s.reduce_sum_f32s(pulp::cast(t)));
        }
    }
    out
}

/// The weight kind whose AVX-512 `F32` kernel decodes by table (Q4): per chunk, vector `t`
/// (0..8), lane `l` (0..16) holds position [`table_position`]`(0, t, l)`: the nibble `4t` bits up
/// in the 32-bit lane `l` of the chunk's 64 code bytes (low nibble of byte j: position j, high
/// nibble: position j + 64; layouts.md, row-split). One shift and one `permutexvar` per 16
/// weights instead of a widening, a conversion and a multiply; the activations are staged in
/// the same order once per call. The products are the same exact `q * s` times `x`, summed in
/// another order than the generic kernel's: the result meets the `F32` criterion, and is
/// bit-identical to the generic kernel run on the decoded weights and activations permuted
/// into this order (tested in `gemv/x86_tests.rs`).
const Q4_TABLE: u8 = 0;

/// The signed Q4 code of each nibble (two's complement, section 6.2) as f32.
const Q4_CODES: [f32; 16] = [
    0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, -8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0,
];

/// The weight kind whose AVX-512 `F32` kernel decodes by a 32-entry table (Q5), as
/// [`Q4_TABLE`] does with 16: the register decode's offset codes `u' = q + 16` (one byte per
/// position, a group per 64-byte half) shifted by `8t` index `permutex2var` (its low 5 bits);
/// vector `j = 4h + t`, lane `l` holds position `64h + 4l + t`. Tested the same way as Q4.
/// (Q6 the same way, with two `permutex2var` and a blend on bit 5, was slower than the
/// widen-convert-multiply decode: 9.7 against 11.7 G weights/s, measured; Q6 and W8 take their
/// codes in this order and sum per group instead, [`v4_split`].)
const Q5_TABLE: u8 = 1;

/// The weight kinds whose AVX-512 `F32` kernel sums per group ([`pass_v4_split`], session 21):
/// Q6 and W8. Q4 and Q5 keep their tables ([`pass_v4`]), which that kernel does not beat.
/// Session 21's AMD EPYC (Zen 4 class), `report --isa V4`, G weights/s, 256x8192 cache-resident
/// one thread (single runs), then 8192x8192 from memory one / two threads (medians of 2
/// alternations): Q6 13.88 -> 16.94, 12.82 / 25.41 -> 15.89 / 31.58; W8 14.98 -> 16.98, 11.65 /
/// 22.87 -> 12.15 / 23.67; Q4 27.76 -> 19.65 cache-resident (kept the table); Q5 17.44 -> 16.69,
/// 17.35 / 34.02 -> 16.69 / 31.86 (kept the table). The kernels they replaced took their codes
/// in the [`Q5_TABLE`] order too: Q6 made each weight by one FMA with the exact constant
/// `-(2^15 + 32) s` from the byte moved under the exponent of 2^15 (a shuffle, an OR and two FMAs
/// per 16 weights; sessions 3-8 before it: two shifts and a conversion, then the exponent of
/// 2^23 and a subtraction), W8 by two shifts, a conversion and a multiplication by the scale.
/// (Q6 by two `permutex2var` tables and a blend on bit 5 had measured 9.7 against 11.7 G
/// weights/s for the widening decode of its time.)
const fn v4_split(kind: u8) -> bool {
    kind == 2 || kind == 3
}

/// The signed Q5 code of each offset code `u'` (`q = u' - 16`) as f32, in two 16-entry halves.
const Q5_CODES: [f32; 32] = [
    -16.0, -15.0, -14.0, -13.0, -12.0, -11.0, -10.0, -9.0, -8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0,
    0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0,
];

/// The staged order of the AVX2 row-split kernels (Q4/Q5/Q6/W8, 8 lanes): vector `j` (0..16), lane
/// `l` holds position `32 (j / 4) + 4 l + j % 4`, field `j % 4` of the 32-bit lane `l` of the
/// chunk's 32-position block `j / 4` (see [`pass_v3_split`]).
pub(crate) const SPLIT_V3: u8 = 2;

/// The staged order of the AVX2 BF16 kernel (8 lanes): vector `j` (0..16), lane `l` holds
/// position `16 (j / 2) + 2 l + j % 2`: 32 bytes of words hold 16 positions, the low half of
/// each 32-bit lane (shifted left by 16) the even ones, the high half (masked) the odd ones.
pub(crate) const BF16_V3: u8 = 3;

/// Lanes per vector of a staged order ([`Q4_TABLE`], [`Q5_TABLE`], [`SPLIT_V3`], [`BF16_V3`]).
pub(crate) const fn order_lanes(order: u8) -> usize {
    if order == SPLIT_V3 || order == BF16_V3 {
        8
    } else {
        16
    }
}

/// The chunk position of vector `j`, lane `l` in the staged order `order` ([`Q4_TABLE`],
/// [`Q5_TABLE`] or [`SPLIT_V3`]).
pub(crate) const fn table_position(order: u8, j: usize, l: usize) -> usize {
    if order == Q4_TABLE {
        4 * l + j / 2 + 64 * (j % 2)
    } else if order == BF16_V3 {
        16 * (j / 2) + 2 * l + j % 2
    } else {
        // A block of `4 * lanes` positions per four vectors; byte `j % 4` of each 32-bit lane.
        4 * order_lanes(order) * (j / 4) + 4 * l + j % 4
    }
}

/// Staged activations (whole chunks, batch rows one after another) in the staged order
/// `order`.
pub(crate) fn table_order(order: u8, xs: &[f32]) -> Vec<f32> {
    let lanes = order_lanes(order);
    // The source position of each staged position, worked out once per call (not per chunk).
    let mut from = [0u8; CHUNK];
    for (i, f) in from.iter_mut().enumerate() {
        *f = table_position(order, i / lanes, i % lanes) as u8;
    }
    let mut out = vec![0f32; xs.len()];
    for (o, x) in out.chunks_exact_mut(CHUNK).zip(xs.chunks_exact(CHUNK)) {
        let x: &[f32; CHUNK] = x.try_into().unwrap_or(&[0.0; CHUNK]);
        for (v, &f) in o.iter_mut().zip(&from) {
            *v = x[f as usize];
        }
    }
    out
}

/// Weight streams per pass of the one-batch-row `F32` kernels.
const STREAMS: usize = 4;

/// Weight streams per pass of the AVX2 one-batch-row W8 `F32` kernel ([`pass_v3_split`]; the other
/// row-split kinds take one). Session 21's AMD EPYC (Zen 4 class), `report --isa V3`, G
/// weights/s, one stream -> two -> four: 8192x8192 from memory, medians of 3 alternations, one
/// thread 10.55 -> 14.21 -> 13.86, two threads 21.18 -> 27.39 -> 25.29; 256x8192 cache-resident
/// one thread 16.83 -> 20.19 -> 17.50. Two streams made Q4/Q5/Q6 slower (their decode needs more
/// registers; medians of 2, from memory, two threads: Q4 31.34 -> 27.62, Q5 29.94 -> 22.01, Q6
/// 26.83 -> 26.04).
const W8_STREAMS_V3: usize = 2;

/// AVX2 row loop: one 32-position block (four 8-lane vectors) at a time, so the pre-weights
/// stay in registers; the accumulator order equals the generic kernel's (for BF16: on weights
/// and activations permuted into [`BF16_V3`]), except the row-split kinds, which sum per group
/// in the staged order [`SPLIT_V3`] ([`pass_v3_split`]; both tested in `gemv/x86_tests.rs`).
#[inline(always)]
pub(crate) fn rows_v3(s: pulp::x86::V3, job: F32Job<'_, '_, '_>) {
    by_kind_and_batch!(job.w, job.nb, rows_v3_impl(s, job))
}

/// One weight kind `KIND`, batch rows `min(nb, NB)` (exactly `NB` when `NB <= 2`). With one
/// batch row, weight streams far apart per pass as [`rows_v4_impl`] does: four for BF16, two
/// for W8 and FP32 (AVX2 has half the vector registers; see the module docs).
#[inline(always)]
fn rows_v3_impl<const KIND: u8, const NB: usize>(s: pulp::x86::V3, job: F32Job<'_, '_, '_>) {
    rows_v3_route::<KIND, NB, false>(s, job)
}

/// [`rows_v3_impl`], with the Q5/Q6 code bytes decoded by GFNI affine transforms where `GFNI`
/// ([`rows_v3_gfni`]).
#[inline(always)]
fn rows_v3_route<const KIND: u8, const NB: usize, const GFNI: bool>(
    s: pulp::x86::V3,
    job: F32Job<'_, '_, '_>,
) {
    let F32Job {
        w,
        xs,
        nb,
        r0,
        r1,
        ys,
    } = job;
    // The row-split kernels read the activations in their staged order.
    let xp: Vec<f32>;
    let xs = if KIND < BF16 {
        xp = table_order(SPLIT_V3, xs);
        &xp[..]
    } else if KIND == BF16 {
        xp = table_order(BF16_V3, xs);
        &xp[..]
    } else {
        xs
    };
    if KIND < BF16 {
        // The chain count is a constant of each kernel (see `split_chains_v3`).
        if split_chains_v3(grouped(KIND), w.k()) == 1 {
            split_rows_v3::<KIND, NB, 1, GFNI>(s, &w, xs, nb, (r0, r1), ys);
        } else {
            split_rows_v3::<KIND, NB, SPLIT_CHAINS, GFNI>(s, &w, xs, nb, (r0, r1), ys);
        }
        return;
    }
    let mut row = r0;
    // Streams: four for BF16, two for FP32 (measured, see the module docs).
    if NB == 1 && KIND == BF16 {
        row = streams_v3::<KIND, 4>(s, &w, xs, (r0, r1), ys);
    } else if NB == 1 && KIND == FP32 {
        row = streams_v3::<KIND, 2>(s, &w, xs, (r0, r1), ys);
    }
    let live = if NB <= 2 { NB } else { nb.min(NB) };
    while row < r1 {
        let y = pass_v3::<KIND, NB, 1>(s, &w, xs, nb, [row]);
        store_rows(ys, r0, [row], &y, live);
        row += 1;
    }
}

/// The row-split rows `r0..r1` of [`rows_v3_impl`] with `CH` sum chains per group: with one
/// batch row, two weight rows per pass where [`split_streams_v3`] says so.
#[inline(always)]
fn split_rows_v3<const KIND: u8, const NB: usize, const CH: usize, const GFNI: bool>(
    s: pulp::x86::V3,
    w: &Weights<'_>,
    xs: &[f32],
    nb: usize,
    (r0, r1): (usize, usize),
    ys: &mut [&mut [f32]],
) {
    let streams = if NB == 1 {
        split_streams_v3(grouped(KIND), w.k())
    } else {
        1
    };
    // Per weight stream a row's group scales.
    let mut sc = vec![0f32; streams * grouped_parts(w).3];
    let mut row = r0;
    if streams == PAIR {
        let q = (r1 - r0) / PAIR;
        for i in 0..q {
            let rows = stream_rows::<PAIR>(r0, q, i);
            let y = pass_v3_split::<KIND, 1, PAIR, CH, GFNI>(s, w, xs, 1, rows, &mut sc);
            store_rows(ys, r0, rows, &y, 1);
        }
        row = r0 + PAIR * q;
    }
    let live = if NB <= 2 { NB } else { nb.min(NB) };
    while row < r1 {
        let y = pass_v3_split::<KIND, NB, 1, CH, GFNI>(s, w, xs, nb, [row], &mut sc);
        store_rows(ys, r0, [row], &y, live);
        row += 1;
    }
}

/// The one-batch-row passes of `R` weight streams over the block `r0..r1` (one row of each of
/// its `R` contiguous parts per pass); returns the first row they leave over.
#[inline(always)]
fn streams_v3<const KIND: u8, const R: usize>(
    s: pulp::x86::V3,
    w: &Weights<'_>,
    xs: &[f32],
    (r0, r1): (usize, usize),
    ys: &mut [&mut [f32]],
) -> usize {
    let q = (r1 - r0) / R;
    for i in 0..q {
        let rows = stream_rows::<R>(r0, q, i);
        let y = pass_v3::<KIND, 1, R>(s, w, xs, 1, rows);
        store_rows(ys, r0, rows, &y, 1);
    }
    r0 + R * q
}

/// The BF16/FP32 rows `rows` (one per weight stream) against batch rows `min(nb, NB)`:
/// `out[r][b]`. Per row, the generic kernel's operations in its order (BF16: on the staged
/// order [`BF16_V3`]). The row-split kinds take [`pass_v3_split`].
#[inline(always)]
fn pass_v3<const KIND: u8, const NB: usize, const R: usize>(
    s: pulp::x86::V3,
    w: &Weights<'_>,
    xs: &[f32],
    nb: usize,
    rows: [usize; R],
) -> [[f32; NB]; R] {
    let (avx, avx2, fma) = (s.avx, s.avx2, s.fma);
    let chunks = w.chunks();
    let kc = chunks * CHUNK;
    let k = w.k();
    let words = words_of(w);
    let live = |b: usize| NB <= 2 || b < nb;
    let mut buf = [0f32; CHUNK];
    let mut acc = [[[avx._mm256_setzero_ps(); 4]; NB]; R];
    for c in 0..chunks {
        let xc = chunk_acts::<NB>(xs, kc, c, nb);
        for (r, &row) in rows.iter().enumerate() {
            let full = CHUNK * (c + 1) <= k;
            if !full {
                w.pre_chunk(row, c, &mut buf);
                if KIND == BF16 {
                    // The activations are in the staged order: the partial chunk too.
                    let nat = buf;
                    for (j, o) in buf.chunks_exact_mut(8).enumerate() {
                        for (l, v) in o.iter_mut().enumerate() {
                            *v = nat[table_position(BF16_V3, j, l)];
                        }
                    }
                }
            }
            for blk in 0..4 {
                let wv: [__m256; 4] = if KIND == BF16 && full {
                    // Staged order `BF16_V3`: the even positions of 16 words, then the odd ones.
                    let p = 2 * (row * k + CHUNK * c + 32 * blk);
                    // `WORDS_AHEAD` bytes ahead in the stream's row.
                    crate::prefetch::line(words.as_ptr().wrapping_add(p + WORDS_AHEAD));
                    let rb = &words[p..p + 64];
                    let hi = avx._mm256_set1_epi32(0xffff_0000u32 as i32);
                    let mut wv = [avx._mm256_setzero_ps(); 4];
                    for h in 0..2 {
                        let v: __m256i = ld(&rb[32 * h..32 * h + 32]);
                        wv[2 * h] = pulp::cast(avx2._mm256_slli_epi32::<16>(v));
                        wv[2 * h + 1] = pulp::cast(avx2._mm256_and_si256(v, hi));
                    }
                    wv
                } else if KIND == FP32 && full {
                    let p = 4 * (row * k + CHUNK * c + 32 * blk);
                    crate::prefetch::span(words.as_ptr().wrapping_add(p + WORDS_AHEAD), 128);
                    let rb = &words[p..p + 128];
                    let v: &[u8; 128] = rb.try_into().unwrap_or(&[0; 128]);
                    pulp::cast(*v)
                } else {
                    let bb: &[f32; 32] = buf[32 * blk..32 * blk + 32].try_into().unwrap_or(&[0.0; 32]);
                    pulp::cast(*bb)
                };
                for (b, a) in acc[r].iter_mut().enumerate() {
                    if !live(b) {
                        break;
                    }
                    let xr: &[f32; 32] = xc[b][32 * blk..32 * blk + 32].try_into().unwrap_or(&[0.0; 32]);
                    let xv: [__m256; 4] = pulp::cast(*xr);
                    for j in 0..4 {
                        a[j] = fma._mm256_fmadd_ps(wv[j], xv[j], a[j]);
                    }
                }
            }
        }
    }
    let mut out = [[0f32; NB]; R];
    for ((o, ar), &row) in out.iter_mut().zip(&acc).zip(&rows) {
        let post = w.post(row);
        for (b, a) in ar.iter().enumerate() {
            if !live(b) {
                break;
            }
            let t = avx._mm256_add_ps(avx._mm256_add_ps(a[0], a[1]), avx._mm256_add_ps(a[2], a[3]));
            o[b] = post.apply(s.reduce_sum_f32s(pulp::cast(t)));
        }
    }
    out
}

/// Byte-shuffle controls (one 128-bit lane): control `j` moves byte `j` of each 32-bit lane into
/// its byte `to` and zeroes the other three (`0x80` selects zero).
const fn byte_moves<const N: usize>(to: usize) -> [[i8; 16]; N] {
    let mut t = [[-128i8; 16]; N];
    let mut j = 0;
    while j < N {
        let mut l = 0;
        while l < 4 {
            t[j][4 * l + to] = (4 * l + j) as i8;
            l += 1;
        }
        j += 1;
    }
    t
}

/// [`byte_moves`] into byte 3, for bytes 0..3 (byte 3 itself is a mask).
const BYTE_TO3: [[i8; 16]; 3] = byte_moves(3);

/// How far ahead in its row the AVX2 BF16 and FP32 and the AVX-512 BF16 `F32` kernels prefetch
/// each line of weights they read (one prefetch per line): 1 KiB. Until session 21 the BF16
/// kernels fetched the same line of the stream's next row (one pass, `2 K` bytes, ahead) and
/// AVX2 FP32 fetched nothing; four streams a row apart, each 16 KiB ahead at K = 8192, had 64
/// KiB in flight, twice the L1 data cache. Session 21's AMD EPYC (Zen 4 class), G weights/s,
/// one / two threads, 8192x8192 from memory unless named:
/// - AVX2 BF16 (`report --isa V3`, medians of 3 alternations): next row 8.27 / 14.74, 256 B
///   10.02 / 16.62, 512 B 9.98 / 16.06, 1 KiB 10.66 / 16.28 (a second set: 10.48 / 16.83), 2 KiB
///   10.66 / 16.37, 4 KiB 8.57 / 14.82, none 9.07 / 15.83; 1 KiB against the next row, medians of
///   2: 16384x2048 8.90 / 15.81 -> 11.31 / 18.76, 4096x16384 8.81 / 15.61 -> 10.50 / 15.51,
///   256x8192 cache-resident one thread 17.45 -> 17.23.
/// - AVX2 FP32 (medians of 4): none 4.71 / 7.96, 1 KiB 6.67 / 8.85, 2 KiB 6.83 / 8.61.
/// - AVX-512 BF16 (`--isa V4`, medians of 3): next row 9.12 / 16.14, 1 KiB 13.08 / 17.86, 2 KiB
///   11.78 / 15.05, 4 KiB 9.38 / 16.38. AVX-512 FP32 stays without (1 KiB: 7.38 / 9.18 -> 6.59 /
///   8.56).
const WORDS_AHEAD: usize = 1024;

/// `2^-(32 - b)`: a `b`-bit signed code in the top bits of a 32-bit lane converts to
/// `q 2^(32 - b)` ([`top_floats`]); the group scales of [`pass_v3_split`] are multiplied by this.
pub(crate) fn top_unit(g: Grouped) -> f32 {
    f32::from_bits((127 - (32 - g.bits())) << 23)
}

/// AVX2 decode of a Q4/Q5/Q6/W8 chunk into four 32-byte blocks in the position order of
/// [`super::i8x86::decode_v3`], each byte the signed code `q = u' - o` in its top `b` bits
/// (`q 2^(8 - b)` as an i8; W8: the code bytes themselves).
#[inline(always)]
fn decode_top_v3(s: pulp::x86::V3, g: Grouped, chunk: &[u8]) -> [__m256i; 4] {
    let (avx, avx2) = (s.avx, s.avx2);
    let v0: __m256i = ld(chunk);
    let v1: __m256i = ld(&chunk[32..]);
    match g {
        Grouped::Q4 => {
            // The stored nibble is q in two's complement (section 6.2, layouts.md).
            let m = avx._mm256_set1_epi8(0xf0u8 as i8);
            [
                avx2._mm256_and_si256(avx2._mm256_slli_epi16::<4>(v0), m),
                avx2._mm256_and_si256(avx2._mm256_slli_epi16::<4>(v1), m),
                avx2._mm256_and_si256(v0, m),
                avx2._mm256_and_si256(v1, m),
            ]
        }
        Grouped::Q5 => {
            let m = avx._mm256_set1_epi8(0x78);
            let nib = [
                avx2._mm256_and_si256(avx2._mm256_slli_epi16::<3>(v0), m),
                avx2._mm256_and_si256(avx2._mm256_slli_epi16::<3>(v1), m),
                avx2._mm256_and_si256(avx2._mm256_srli_epi16::<1>(v0), m),
                avx2._mm256_and_si256(avx2._mm256_srli_epi16::<1>(v1), m),
            ];
            // Block b holds runs t = 2b (low 16 bytes) and 2b + 1 (high 16 bytes); bit t of the
            // high plane (the sign of q) goes to bit 7.
            let h: __m256i = avx2._mm256_broadcastsi128_si256(ld(&chunk[64..]));
            let m80 = avx._mm256_set1_epi8(0x80u8 as i8);
            let cnt = |a: i32, b: i32| avx._mm256_setr_epi32(a, a, a, a, b, b, b, b);
            let hb = [
                avx2._mm256_sllv_epi32(h, cnt(7, 6)),
                avx2._mm256_sllv_epi32(h, cnt(5, 4)),
                avx2._mm256_sllv_epi32(h, cnt(3, 2)),
                avx2._mm256_sllv_epi32(h, cnt(1, 0)),
            ];
            core::array::from_fn(|i| avx2._mm256_or_si256(nib[i], avx2._mm256_and_si256(hb[i], m80)))
        }
        // W8: the code bytes are the signed codes, in position order.
        Grouped::W8 => [v0, v1, ld(&chunk[64..]), ld(&chunk[96..])],
        _ => {
            // Q6: block b = run p, bits 2p, 2p + 1 of the high plane (q's top two) to bits 6, 7.
            let m = avx._mm256_set1_epi8(0x3c);
            let nib = [
                avx2._mm256_and_si256(avx2._mm256_slli_epi16::<2>(v0), m),
                avx2._mm256_and_si256(avx2._mm256_slli_epi16::<2>(v1), m),
                avx2._mm256_and_si256(avx2._mm256_srli_epi16::<2>(v0), m),
                avx2._mm256_and_si256(avx2._mm256_srli_epi16::<2>(v1), m),
            ];
            let h: __m256i = ld(&chunk[64..]);
            let mc0 = avx._mm256_set1_epi8(0xc0u8 as i8);
            let hb = [
                avx2._mm256_slli_epi16::<6>(h),
                avx2._mm256_slli_epi16::<4>(h),
                avx2._mm256_slli_epi16::<2>(h),
                h,
            ];
            core::array::from_fn(|i| avx2._mm256_or_si256(nib[i], avx2._mm256_and_si256(hb[i], mc0)))
        }
    }
}

/// Block `blk` (0..4) of [`decode_top_v3`] alone: the same bytes. With `GFNI` (only inside
/// [`rows_v3_gfni`]), the Q5/Q6 bytes come from [`decode_top_block_gfni`].
#[inline(always)]
fn decode_top_block_v3<const GFNI: bool>(s: pulp::x86::V3, g: Grouped, chunk: &[u8], blk: usize) -> __m256i {
    if GFNI && matches!(g, Grouped::Q5 | Grouped::Q6) {
        // SAFETY: `GFNI` is only true inside `rows_v3_gfni`, whose caller guarantees GFNI.
        return unsafe { decode_top_block_gfni(s, g, chunk, blk) };
    }
    let (avx, avx2) = (s.avx, s.avx2);
    let v: __m256i = ld(&chunk[32 * (blk % 2)..]);
    match g {
        Grouped::Q4 => {
            let m = avx._mm256_set1_epi8(0xf0u8 as i8);
            if blk < 2 {
                avx2._mm256_and_si256(avx2._mm256_slli_epi16::<4>(v), m)
            } else {
                avx2._mm256_and_si256(v, m)
            }
        }
        Grouped::Q5 => {
            let m = avx._mm256_set1_epi8(0x78);
            let nib = if blk < 2 {
                avx2._mm256_and_si256(avx2._mm256_slli_epi16::<3>(v), m)
            } else {
                avx2._mm256_and_si256(avx2._mm256_srli_epi16::<1>(v), m)
            };
            let h: __m256i = avx2._mm256_broadcastsi128_si256(ld(&chunk[64..]));
            let (a, b) = (7 - 2 * blk as i32, 6 - 2 * blk as i32);
            let cnt = avx._mm256_setr_epi32(a, a, a, a, b, b, b, b);
            let hb = avx2._mm256_sllv_epi32(h, cnt);
            avx2._mm256_or_si256(nib, avx2._mm256_and_si256(hb, avx._mm256_set1_epi8(0x80u8 as i8)))
        }
        Grouped::W8 => ld(&chunk[32 * blk..]),
        _ => {
            let m = avx._mm256_set1_epi8(0x3c);
            let nib = if blk < 2 {
                avx2._mm256_and_si256(avx2._mm256_slli_epi16::<2>(v), m)
            } else {
                avx2._mm256_and_si256(avx2._mm256_srli_epi16::<2>(v), m)
            };
            let h: __m256i = ld(&chunk[64..]);
            let hb = match blk {
                0 => avx2._mm256_slli_epi16::<6>(h),
                1 => avx2._mm256_slli_epi16::<4>(h),
                2 => avx2._mm256_slli_epi16::<2>(h),
                _ => h,
            };
            avx2._mm256_or_si256(nib, avx2._mm256_and_si256(hb, avx._mm256_set1_epi8(0xc0u8 as i8)))
        }
    }
}

/// Q5 codes' low bits to bits 3..=6 of a byte: from the low nibble (positions `32 b + i` of
/// blocks 0 and 1) and from the high nibble (blocks 2 and 3).
const Q5_NIB: [i64; 2] = [
    bit_matrix([-1, -1, -1, 0, 1, 2, 3, -1]),
    bit_matrix([-1, -1, -1, 4, 5, 6, 7, -1]),
];
/// Q6 codes' low bits to bits 2..=5 of a byte, from the low and from the high nibble.
const Q6_NIB: [i64; 2] = [
    bit_matrix([-1, -1, 0, 1, 2, 3, -1, -1]),
    bit_matrix([-1, -1, 4, 5, 6, 7, -1, -1]),
];

/// Bit `t` of each byte to bit 7, the rest zero (the Q5 sign of run `t`).
const fn q5_sign(t: i8) -> i64 {
    bit_matrix([-1, -1, -1, -1, -1, -1, -1, t])
}

/// Bits `2 p` and `2 p + 1` of each byte to bits 6 and 7, the rest zero (the Q6 top two bits
/// of run `p`).
const fn q6_top(p: i8) -> i64 {
    bit_matrix([-1, -1, -1, -1, -1, -1, 2 * p, 2 * p + 1])
}

/// [`decode_top_block_v3`] for Q5 and Q6 with GFNI: each of the two parts of a byte, the low
/// code bits from the nibble plane and the top bits from the high plane, is one affine
/// transform (`vgf2p8affineqb`, a bit matrix per 64-bit lane) in place of a shift and a mask,
/// so a block takes three operations instead of five. The same bytes (tested over every pair of
/// plane bytes, `gfni_decode_gives_the_same_bytes`).
///
/// # Safety
/// The CPU must have GFNI (and the `V3` features, which the token proves).
#[inline(always)]
unsafe fn decode_top_block_gfni(s: pulp::x86::V3, g: Grouped, chunk: &[u8], blk: usize) -> __m256i {
    use core::arch::x86_64::_mm256_gf2p8affine_epi64_epi8 as affine;
    let (avx, avx2) = (s.avx, s.avx2);
    let v: __m256i = ld(&chunk[32 * (blk % 2)..]);
    let (nib, top) = if g == Grouped::Q5 {
        // The 16-byte high plane in both 128-bit lanes: run `2 blk` (low lane) and `2 blk + 1`
        // (high lane), as in `decode_top_v3`.
        let h: __m256i = avx2._mm256_broadcastsi128_si256(ld(&chunk[64..]));
        let t = 2 * blk as i8;
        let (lo, hi) = (q5_sign(t), q5_sign(t + 1));
        (Q5_NIB[blk / 2], (h, avx._mm256_setr_epi64x(lo, lo, hi, hi)))
    } else {
        let h: __m256i = ld(&chunk[64..]);
        (Q6_NIB[blk / 2], (h, avx._mm256_set1_epi64x(q6_top(blk as i8))))
    };
    // SAFETY: the caller guarantees GFNI; AVX is a `V3` feature.
    let (n, t) = unsafe {
        (
            affine::<0>(v, avx._mm256_set1_epi64x(nib)),
            affine::<0>(top.0, top.1),
        )
    };
    avx2._mm256_or_si256(n, t)
}

/// Byte `j` (0..4) of each 32-bit lane of `u` moved to its byte 3, the other three zero: a
/// byte shuffle ([`BYTE_TO3`]; the compiler turns the byte-0 one into a shift) or, for byte 3, a
/// mask. A signed byte `v` becomes the i32 `v 2^24`. Shared by the AVX2 row-split and NVFP4
/// `F32` kernels.
#[inline(always)]
pub(crate) fn top_bytes_v3(s: pulp::x86::V3, u: __m256i) -> [__m256i; 4] {
    let (avx, avx2) = (s.avx, s.avx2);
    [
        avx2._mm256_shuffle_epi8(u, pulp::cast([BYTE_TO3[0]; 2])),
        avx2._mm256_shuffle_epi8(u, pulp::cast([BYTE_TO3[1]; 2])),
        avx2._mm256_shuffle_epi8(u, pulp::cast([BYTE_TO3[2]; 2])),
        avx2._mm256_and_si256(u, avx._mm256_set1_epi32(0xff00_0000u32 as i32)),
    ]
}

/// Vector `j` of a block: byte `j` of each 32-bit lane of `u` (a signed code in its top bits,
/// [`decode_top_v3`]) moved to byte 3 ([`top_bytes_v3`]) and converted: `q 2^(32 - b)`, exact.
#[inline(always)]
fn top_floats(s: pulp::x86::V3, u: __m256i) -> [__m256; 4] {
    let avx = s.avx;
    let b = top_bytes_v3(s, u);
    [
        avx._mm256_cvtepi32_ps(b[0]),
        avx._mm256_cvtepi32_ps(b[1]),
        avx._mm256_cvtepi32_ps(b[2]),
        avx._mm256_cvtepi32_ps(b[3]),
    ]
}

/// AVX-512 decode of a Q4/Q5/Q6/W8 chunk into two 64-byte blocks in the position order of
/// [`decode_v4`] (block `h`, byte `i`: position `64 h + i`), each byte the signed code `q` in its
/// top `b` bits (`q 2^(8 - b)` as an i8; W8: the code bytes themselves): [`decode_top_v3`] on
/// 64-byte blocks. Unlike [`decode_v4`] it makes no offset codes (the stored codes are `q` in
/// two's complement, section 6.2), so the high-plane bits go straight to the top of each byte.
#[inline(always)]
fn decode_top_v4(s: pulp::x86::V4, g: Grouped, chunk: &[u8]) -> [__m512i; 2] {
    let (f, bw) = (s.avx512f, s.avx512bw);
    let v: __m512i = ld(chunk);
    match g {
        Grouped::Q4 => {
            let m = f._mm512_set1_epi8(0xf0u8 as i8);
            [
                f._mm512_and_si512(bw._mm512_slli_epi16::<4>(v), m),
                f._mm512_and_si512(v, m),
            ]
        }
        Grouped::Q5 => {
            let m = f._mm512_set1_epi8(0x78);
            let nib = [
                f._mm512_and_si512(bw._mm512_slli_epi16::<3>(v), m),
                f._mm512_and_si512(bw._mm512_srli_epi16::<1>(v), m),
            ];
            // 128-bit lane t of block 0 is run t (bit t of the high plane, the sign of q, to
            // bit 7), of block 1 run 4 + t.
            let h = f._mm512_broadcast_i32x4(ld::<__m128i>(&chunk[64..]));
            let c0 = f._mm512_setr_epi32(7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4);
            let c1 = f._mm512_setr_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
            let m80 = f._mm512_set1_epi8(0x80u8 as i8);
            [
                f._mm512_or_si512(nib[0], f._mm512_and_si512(f._mm512_sllv_epi32(h, c0), m80)),
                f._mm512_or_si512(nib[1], f._mm512_and_si512(f._mm512_sllv_epi32(h, c1), m80)),
            ]
        }
        Grouped::W8 => [v, ld(&chunk[64..])],
        _ => {
            // Q6: 256-bit half p' of block h is run p = 2h + p' (bits 2p, 2p + 1 of the high
            // plane, q's top two, to bits 6, 7).
            let m = f._mm512_set1_epi8(0x3c);
            let nib = [
                f._mm512_and_si512(bw._mm512_slli_epi16::<2>(v), m),
                f._mm512_and_si512(bw._mm512_srli_epi16::<2>(v), m),
            ];
            let h = f._mm512_broadcast_i64x4(ld::<__m256i>(&chunk[64..]));
            let c0 = f._mm512_setr_epi32(6, 6, 6, 6, 6, 6, 6, 6, 4, 4, 4, 4, 4, 4, 4, 4);
            let c1 = f._mm512_setr_epi32(2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0);
            let mc0 = f._mm512_set1_epi8(0xc0u8 as i8);
            [
                f._mm512_or_si512(nib[0], f._mm512_and_si512(f._mm512_sllv_epi32(h, c0), mc0)),
                f._mm512_or_si512(nib[1], f._mm512_and_si512(f._mm512_sllv_epi32(h, c1), mc0)),
            ]
        }
    }
}

/// [`top_floats`] on 16 lanes: vector `t` is byte `t` of each 32-bit lane of `u` moved to byte 3
/// (a byte shuffle, or a mask for byte 3) and converted, `q 2^(32 - b)` exactly.
#[inline(always)]
fn top_floats_v4(s: pulp::x86::V4, u: __m512i) -> [__m512; 4] {
    let (f, bw) = (s.avx512f, s.avx512bw);
    let b = [
        bw._mm512_shuffle_epi8(u, pulp::cast([BYTE_TO3[0]; 4])),
        bw._mm512_shuffle_epi8(u, pulp::cast([BYTE_TO3[1]; 4])),
        bw._mm512_shuffle_epi8(u, pulp::cast([BYTE_TO3[2]; 4])),
        f._mm512_and_si512(u, f._mm512_set1_epi32(0xff00_0000u32 as i32)),
    ];
    [
        f._mm512_cvtepi32_ps(b[0]),
        f._mm512_cvtepi32_ps(b[1]),
        f._mm512_cvtepi32_ps(b[2]),
        f._mm512_cvtepi32_ps(b[3]),
    ]
}

/// The rows `rows` (one per weight stream) of an AVX-512 row-split `F32` pass against batch
/// rows `min(nb, NB)` (exactly `NB` when `NB <= 2`): [`pass_v3_split`]'s per-group sums on 16
/// lanes, over the staged order [`Q5_TABLE`] (vector `j = 4 h + t` of a chunk, lane `l`:
/// position `64 h + 4 l + t`).
///
/// Per 64-position block `h` ([`decode_top_v4`]), lane `l` and row, two chains
/// `A_c = sum d_p x_p` (vectors `t = c` and `t = c + 2`: the first a product, the second an
/// FMA) of the exact `d_p = q_p 2^(32 - b)` ([`top_floats_v4`]), then one FMA per chain
/// `Y_c = A_c s' + Y_c` with the lane's `s' = s 2^-(32 - b)` (Q4/Q5/Q6: the block is one group;
/// W8: lanes 0..8 group `2 h`, lanes 8..16 group `2 h + 1`). The row's result is pulp's
/// reduction of `Y_0 + Y_1`. The criterion argument is [`pass_v3_split`]'s word for word (every
/// product is the exact `q x` times a power of two; at most one rounded product and K + 1
/// rounded additions per term); the order is checked bit for bit against a scalar model in
/// `gemv/x86_tests.rs`.
///
/// Per 16 weights a shuffle (or a mask), a conversion and an FMA, where the kernels it replaced
/// spent a shuffle, an OR and two FMAs (Q6) and two shifts, a conversion, a multiplication and an
/// FMA (W8); measured in [`v4_split`].
#[inline(always)]
fn pass_v4_split<const KIND: u8, const NB: usize, const R: usize>(
    s: pulp::x86::V4,
    w: &Weights<'_>,
    xs: &[f32],
    nb: usize,
    rows: [usize; R],
    sc: &mut [f32],
) -> [[f32; NB]; R] {
    let f = s.avx512f;
    let g = grouped(KIND);
    let chunks = w.chunks();
    let (_, scales, rcb, gp) = grouped_parts(w);
    let live = |b: usize| NB <= 2 || b < nb;
    for (r, &row) in rows.iter().enumerate() {
        row_scales_times(scales, row, gp, top_unit(g), &mut sc[r * gp..(r + 1) * gp]);
    }
    let cb = 16 * g.bits() as usize;
    let mut y = [[[f._mm512_setzero_ps(); 2]; NB]; R];
    let runs = SplitRuns::<NB, R>::new(g, w, rows, sc, xs, nb);
    for c in 0..chunks {
        let xc = runs.acts(c);
        for (r, (cr, sr)) in runs.codes.iter().zip(&runs.scales).enumerate() {
            let cv = cr.get(c);
            // The same chunk of the stream's next row: one pass ahead.
            crate::prefetch::span(cv.as_ptr().wrapping_add(rcb), cb);
            let q = decode_top_v4(s, g, cv);
            let sr = sr.get(c);
            for (h, &qh) in q.iter().enumerate() {
                let sg = if g == Grouped::W8 {
                    let (lo, hi) = (f._mm512_set1_ps(sr[2 * h]), f._mm512_set1_ps(sr[2 * h + 1]));
                    f._mm512_mask_blend_ps(0xff00, lo, hi)
                } else {
                    f._mm512_set1_ps(sr[h])
                };
                let d = top_floats_v4(s, qh);
                for (b, yb) in y[r].iter_mut().enumerate() {
                    if !live(b) {
                        break;
                    }
                    let xr: &[f32; 64] = xc[b][64 * h..64 * h + 64].try_into().unwrap_or(&[0.0; 64]);
                    let xv: [__m512; 4] = pulp::cast(*xr);
                    let a0 = f._mm512_fmadd_ps(d[2], xv[2], f._mm512_mul_ps(d[0], xv[0]));
                    let a1 = f._mm512_fmadd_ps(d[3], xv[3], f._mm512_mul_ps(d[1], xv[1]));
                    yb[0] = f._mm512_fmadd_ps(a0, sg, yb[0]);
                    yb[1] = f._mm512_fmadd_ps(a1, sg, yb[1]);
                }
            }
        }
    }
    let mut out = [[0f32; NB]; R];
    for (o, yr) in out.iter_mut().zip(&y) {
        for (b, (ob, yb)) in o.iter_mut().zip(yr).enumerate() {
            if !live(b) {
                break;
            }
            *ob = s.reduce_sum_f32s(pulp::cast(f._mm512_add_ps(yb[0], yb[1])));
        }
    }
    out
}

/// Sum chains per group and batch row of [`pass_v3_split`]: a chain for the even and one for the
/// odd vectors of each block, for Q4 (unless paired, [`split_chains_v3`]), Q5, Q6 and W8. The
/// same for every batch size: a batch row's result equals the single-vector GEMV's. Until
/// session 14 Q4 took one chain, measured on the
/// Xeon of session 9 (two made Q4 slower there, 14.7 -> 14.3 G weights/s cache-resident, and Q6
/// faster, 12.2 -> 12.6); on the AVX2-only AMD EPYC (Zen 3) of session 14, where this kernel is
/// the one dispatched, two chains made Q4 faster: one thread, 256x8192 cache-resident, medians
/// of 7 alternations, 14.07 -> 15.98 G weights/s; 8192x8192 from memory, medians of 5, one / two
/// threads, 13.67 / 26.39 -> 15.09 / 30.23. (The Xeons dispatch the AVX-512 kernels.) Four
/// chains for Q5 (session 23, Zen 4 class, 256x8192 and 1024x2048 cache-resident): the same
/// times; the loop is bound by its conversions and shifts, not by the chains' latency (README,
/// "Session 23").
pub(crate) const SPLIT_CHAINS: usize = 2;

/// Sum chains per group of [`pass_v3_split`] for scheme `g` at K = `k`: one where that kernel
/// pairs rows ([`paired_v3`]: each row's chain runs beside the other row's), else
/// [`SPLIT_CHAINS`]. A property of the tensor alone, so a row's result does not depend on the
/// thread count, on whether its row was paired or left over, or on the batch size.
pub(crate) const fn split_chains_v3(g: Grouped, k: usize) -> usize {
    if paired_v3(g, k) {
        1
    } else {
        SPLIT_CHAINS
    }
}

/// Whether [`pass_v3_split`] runs two weight rows per pass for one batch row, the rows taking
/// each block in turn so that both use the block's activation loads, with one sum chain per
/// row ([`split_chains_v3`]): Q4 where K exceeds [`X_IN_L1_K`]. Session 21's AMD EPYC (Zen 4
/// class), `report --isa V3`, G weights/s, one row per pass with two chains -> this: 8192x8192
/// from memory, medians of 5 alternations, one / two threads 18.23 / 34.50 -> 19.18 / 38.19;
/// 4096x16384, medians of 3, 16.94 / 33.21 -> 19.45 / 38.47; 256x8192 cache-resident one
/// thread 19.98 -> 19.83. Where the activation row stays in L1 (K <= 4096) pairing was slower
/// (1024x4096 cache-resident one thread 22.16 -> 20.03, 16384x2048 from memory 21.36 / 42.33
/// -> 19.40 / 38.39), so those keep one row and two chains (1024x4096 after the change: 21.64
/// -> 21.01, the per-block decode). Tried and dropped: Q5 and Q6 paired the same way (their
/// high plane decoded per block: 8192x8192 from memory one thread 14.40 -> 9.88 and 13.22 ->
/// 10.10), Q4 in four rows per pass (16.57 / 33.34 against 19.15 / 38.13 for two), two rows
/// with two chains each (18.24 / 35.85, register spills), the pair's chains split by block
/// instead of by vector (18.21 / 36.39), and, without pairing, K slabs of 4096 positions that
/// keep the activations in L1 (256x8192 cache-resident 19.18 -> 19.48, from memory 18.53 / 36.47
/// -> 15.76 / 31.72) or the rows of two streams alternated one whole row at a time (no change).
const fn paired_v3(g: Grouped, k: usize) -> bool {
    matches!(g, Grouped::Q4) && k > X_IN_L1_K
}

/// The largest K whose f32 activation row (16 KiB) the AVX2 `F32` kernels count on staying in
/// the L1 data cache beside the weights: above it Q4 pairs its rows ([`paired_v3`]), and on AMD
/// cores the row-split ([`pass_v3_split`]) and NVFP4 kernels prefetch their code bytes into L2
/// only ([`codes_l2_only`]).
pub(crate) const X_IN_L1_K: usize = 4096;

/// Whether the AVX2 row-split ([`pass_v3_split`]) and NVFP4 `F32` kernels prefetch their code
/// bytes into L2 only (`prefetcht1`) for rows of `k` positions: on AMD cores (`amd`, whether
/// the CPU has them, [`amd_cores`]; a constant of the NVFP4 kernel) where `k` exceeds
/// [`X_IN_L1_K`] (session 23, figures at [`pass_v3_split`]); elsewhere into L1 at every K.
/// Session 26's Intel Xeon (family 6 model 167 under KVM, AVX-512, 48 KiB L1d, 2 MiB L2 a
/// core, about 3.5 GHz; session 10's host), `report --isa V3`, 8192x8192 from memory, G
/// weights/s, one / two threads, medians of 3 alternations, L2 only -> L1: Q5 11.96 / 23.74 ->
/// 12.50 / 25.14, Q6 11.68 / 23.03 -> 12.76 / 24.82, NVFP4 12.96 / 24.98 -> 13.32 / 25.95; the
/// binary of session 13 (before the L2-only prefetch) read 13.04 / 25.04, 12.69 / 24.66 and
/// 13.24 / 26.31 in the same alternations. With this function in place, 3 alternations: Q5
/// 12.57 / 24.28 -> 13.21 / 26.22, Q6 11.55 / 22.64 -> 12.37 / 24.37, W8 12.27 / 23.30 -> 12.50
/// / 24.14, Q4 16.60 / 33.82 -> 16.79 / 34.25, NVFP4 12.54 / 25.08 -> 12.63 / 25.22.
pub(crate) const fn codes_l2_only(amd: bool, k: usize) -> bool {
    amd && k > X_IN_L1_K
}

/// Weight rows per pass of [`pass_v3_split`] for one batch row: [`PAIR`] for W8
/// ([`W8_STREAMS_V3`]) and where [`paired_v3`], else one.
const fn split_streams_v3(g: Grouped, k: usize) -> usize {
    if matches!(g, Grouped::W8) {
        W8_STREAMS_V3
    } else if paired_v3(g, k) {
        PAIR
    } else {
        1
    }
}

/// The rows of a multi-row [`pass_v3_split`] ([`split_rows_v3`] runs no other count).
const PAIR: usize = 2;
const _: () = assert!(W8_STREAMS_V3 == PAIR);

// [`pass_v3_split`] keeps its chains and accumulators in pairs and adds the two at the end.
const _: () = assert!(SPLIT_CHAINS == 2);

/// The rows `rows` (one per weight stream) of an AVX2 row-split (Q4/Q5/Q6/W8) `F32` pass
/// against batch rows `min(nb, NB)` (exactly `NB` when `NB <= 2`), with `CH` sum chains per
/// group ([`split_chains_v3`]). The rows take each 32-position block in turn
/// ([`decode_top_block_v3`]), so that they share its activation loads; each row's operations and
/// their order do not depend on the other rows of its pass.
///
/// The codes are summed per group and the group scale applied once (the `F32` criterion allows
/// this order; section 2): per group `G` (Q4/Q5/Q6: 64 positions, blocks `2h` and `2h + 1` of the
/// chunk; W8: 32 positions, block `h`) and lane `l`, `C = CH` chains
/// `A_c = sum d_p x_p` over the staged order [`SPLIT_V3`] (vector `j` of a block feeds chain
/// `j % C`; its first vector by a product, the others by FMAs), where `d_p = q_p 2^(32 - b)` is
/// the signed code converted from the top of a 32-bit lane ([`top_floats`], exact); then one
/// FMA per chain `Y_c = A_c s' + Y_c` with `s' = s 2^-(32 - b)` (exact: a power of two times a
/// binary16 value, at least 2^-52). The row's result is pulp's reduction of `Y_0 + Y_1`
/// (`Y_1 = 0` with one chain). Every product `d_p x_p` is the exact `q_p x_p` times a power of
/// two, so the rounding is that of a sum of `q x` per group: within the criterion (at most one
/// rounded product and K + 1 rounded additions per term; tested in `gemv/x86_tests.rs`, which
/// also checks this order bit for bit against a scalar model). The sums run `2^(32 - b)` above
/// `q x`: they overflow to infinity only where `|q x|` sums pass `2^(96 + b)` (with the largest
/// code, `|q| = 2^(b - 1)`, activations beyond about `2^97`; the generic kernel's products
/// overflow where `|q s x| > 2^128`).
///
/// Per 8 weights a shuffle (or a mask), a conversion and an FMA, against the shuffle, OR and two
/// FMAs of the FMA-made weights before it (session 9; Xeon, 256x8192 cache-resident one thread,
/// medians of 3 alternations, G weights/s: Q4 11.37 -> 14.75, Q5 10.67 -> 12.39, Q6 10.65 ->
/// 12.64).
///
/// The chunks of the codes, scales and activations come from [`SplitRuns`], bounds checked once
/// per pass instead of per chunk (session 30: Q4 +9%, Q5 and Q6 +6% from memory, see
/// [`crate::runs`]).
///
/// The next row's code bytes are prefetched one chunk at a time, on AMD cores into L2 only
/// (`prefetcht1`, [`crate::prefetch::span_in`]) where K exceeds [`X_IN_L1_K`] ([`codes_l2_only`];
/// on session 26's Intel Xeon into L1 was the faster). Fetched into L1 a row (5-8
/// KiB at K = 8192) ahead, they likely took the room of the 32 KiB activation row there (this
/// VM has no hardware counters to confirm it). Session 23's
/// AMD EPYC (Zen 4 class), `report --isa V3`, G weights/s, two threads, 8192x8192 from memory,
/// medians of 7 alternations: Q5 29.94 -> 32.69, Q6 26.94 -> 32.00, W8 26.42 -> 32.43, Q4 38.22
/// -> 39.03 (one thread, medians of 5: Q5 14.98 -> 16.11, Q6 13.08 -> 15.22, W8 13.88 ->
/// 18.26, Q4 19.12 -> 19.29); 4096x16384, one thread, medians of 4: Q5 14.01 -> 15.64, Q6
/// 13.38 -> 15.54, W8 12.32 -> 17.91; cache-resident 256x8192 within 2%. At K = 2048 (16384x2048,
/// where the activations stay in L1) the L2-only prefetch was slower with one thread (3-7%)
/// and for Q4 and W8 with two (10-15%), so those keep `prefetcht0`.
#[inline(always)]
fn pass_v3_split<const KIND: u8, const NB: usize, const R: usize, const CH: usize, const GFNI: bool>(
    s: pulp::x86::V3,
    w: &Weights<'_>,
    xs: &[f32],
    nb: usize,
    rows: [usize; R],
    sc: &mut [f32],
) -> [[f32; NB]; R] {
    let (avx, fma) = (s.avx, s.fma);
    let g = grouped(KIND);
    let chunks = w.chunks();
    let (_, scales, rcb, gp) = grouped_parts(w);
    let live = |b: usize| NB <= 2 || b < nb;
    for (r, &row) in rows.iter().enumerate() {
        row_scales_times(scales, row, gp, top_unit(g), &mut sc[r * gp..(r + 1) * gp]);
    }
    let cb = 16 * g.bits() as usize;
    // Groups per chunk and 32-position blocks per group: 2 and 2 (Q4/Q5/Q6), 4 and 1 (W8).
    let gpc = CHUNK / g.group_size();
    let bpg = 4 / gpc;
    let mut y = [[[avx._mm256_setzero_ps(); 2]; NB]; R];
    let l2 = codes_l2_only(amd_cores(), w.k());
    let runs = SplitRuns::<NB, R>::new(g, w, rows, sc, xs, nb);
    for c in 0..chunks {
        let xc = runs.acts(c);
        let mut cr: [&[u8]; R] = [&[]; R];
        for (cv, cw) in cr.iter_mut().zip(&runs.codes) {
            *cv = cw.get(c);
            // The same chunk of the next row: one row ahead, as the I8 kernels do; on AMD
            // cores into L2 only where the activations do not stay in L1 (see above).
            crate::prefetch::span_in(cv.as_ptr().wrapping_add(rcb), cb, l2);
        }
        for h in 0..gpc {
            let mut acc = [[[avx._mm256_setzero_ps(); 2]; NB]; R];
            for bi in 0..bpg {
                let blk = bpg * h + bi;
                // The rows of a pass take the block in turn, sharing its activation loads.
                for (ar, &cv) in acc.iter_mut().zip(&cr) {
                    let d = top_floats(s, decode_top_block_v3::<GFNI>(s, g, cv, blk));
                    for (b, a) in ar.iter_mut().enumerate() {
                        if !live(b) {
                            break;
                        }
                        let xr: &[f32; 32] = xc[b][32 * blk..32 * blk + 32].try_into().unwrap_or(&[0.0; 32]);
                        let xv: [__m256; 4] = pulp::cast(*xr);
                        for j in 0..4 {
                            a[j % CH] = if bi == 0 && j < CH {
                                avx._mm256_mul_ps(d[j], xv[j])
                            } else {
                                fma._mm256_fmadd_ps(d[j], xv[j], a[j % CH])
                            };
                        }
                    }
                }
            }
            for (r, (yr, ar)) in y.iter_mut().zip(&acc).enumerate() {
                let sg = avx._mm256_set1_ps(runs.scales[r].get(c)[h]);
                for (b, (yb, a)) in yr.iter_mut().zip(ar).enumerate() {
                    if !live(b) {
                        break;
                    }
                    for i in 0..CH {
                        yb[i] = fma._mm256_fmadd_ps(a[i], sg, yb[i]);
                    }
                }
            }
        }
    }
    let mut out = [[0f32; NB]; R];
    for (o, yr) in out.iter_mut().zip(&y) {
        for (b, (ob, yb)) in o.iter_mut().zip(yr).enumerate() {
            if !live(b) {
                break;
            }
            *ob = s.reduce_sum_f32s(pulp::cast(avx._mm256_add_ps(yb[0], yb[1])));
        }
    }
    out
}

/// `vpshufb` masks that move 16 bytes of a 16-byte half (in both 128-bit lanes) into the top
/// bytes of the 32-bit lanes of two vectors, the other bytes zero (index `0x80`): lane `l` of
/// vector `v` takes byte `8 v + l` ([`TOP_BYTES`], position order: the low 128-bit lane bytes
/// `8v..8v + 4`, the high one `8v + 4..8v + 8`), or, `even_odd`, byte `2 l + v`
/// ([`TOP_BYTES_EVEN_ODD`]: the even bytes in vector 0, the odd ones in vector 1; the low
/// 128-bit lane holds bytes 0..8 of the half, the high one bytes 8..16).
const fn top_byte_masks(even_odd: bool) -> [[u8; 32]; 2] {
    let mut m = [[0x80u8; 32]; 2];
    let mut v = 0;
    while v < 2 {
        let mut l = 0;
        while l < 8 {
            m[v][16 * (l / 4) + 4 * (l % 4) + 3] = if even_odd { 2 * l + v } else { 8 * v + l } as u8;
            l += 1;
        }
        v += 1;
    }
    m
}

/// The position-order masks of [`dequant_row_v3`] ([`top_byte_masks`]).
const TOP_BYTES: [[u8; 32]; 2] = top_byte_masks(false);

/// The even/odd masks of [`dequant_row_v3`] for an output word that rounds by Veltkamp's split
/// (`ChunkOut::SPLIT_ROUND`, [`chunk_products_v3`], [`top_byte_masks`]).
const TOP_BYTES_EVEN_ODD: [[u8; 32]; 2] = top_byte_masks(true);

/// Dequantize one Q4/Q5/Q6/W8 row to f32 (AVX2; `V4` runs it too), bit-identical to the
/// oracle (section 6.2: `s * q`, one correctly rounded binary32 multiplication).
///
/// A chunk is decoded as the `F32` kernel decodes it ([`decode_top_v3`]: block `b`, byte `i`
/// is position `32 b + i`, the signed code in its top `b` bits); each 16-byte half of a block
/// goes to both 128-bit lanes (`vpermq`) and one `vpshufb` per 8 positions puts their bytes at
/// the top of the eight 32-bit lanes, in position order, the rest zero, so the conversion
/// gives `q 2^(32 - b)` exactly; times `s 2^-(32 - b)` ([`top_unit`], exact) the exact product
/// is `s q`'s and rounds the same. The row's group scales are widened (F16C where present)
/// and multiplied by the unit 64 chunks at a time (`row_scales_span`). Session 18, AMD EPYC
/// Zen 3, against the generic decoder (LLVM-vectorised `Weights::pre_chunk`), medians of 3
/// alternations, G weights/s: 128x8192 in L3, one thread, Q4 5.68 -> 10.28, Q5 5.13 -> 9.40,
/// Q6 5.46 -> 9.77, W8 4.07 -> 9.09; 8192x8192 from memory, one / two threads, Q4 5.46 /
/// 9.94 -> 9.20 / 16.88, W8 4.20 / 7.89 -> 8.37 / 14.18. A first version that converted each
/// group's scale word by the scalar `f16_to_f32_exact` call and chose its destination per
/// chunk (`cmov`s) ran at the generic decoder's speed (Q4 5.66), and one with the chunk as a
/// closure at 0.30 (a closure is not inlined into the `target_feature` context: every
/// intrinsic a call). `out` holds the row's positions from chunk `c0` on (`128 c0..`): its
/// length is a multiple of 128, or reaches K (a partial last chunk goes through a buffer).
#[inline(always)]
pub(crate) fn dequant_row_v3<T: ChunkOut>(
    cpu: T::Cpu,
    w: &Weights<'_>,
    row: usize,
    c0: usize,
    out: &mut [T],
) {
    let Weights::Grouped { g, .. } = *w else {
        return;
    };
    if g == Grouped::Q4 {
        dequant_row_g_v3::<T, true>(cpu, w, g, row, c0, out)
    } else {
        dequant_row_g_v3::<T, false>(cpu, w, g, row, c0, out)
    }
}

/// [`dequant_row_v3`] for `g` (`Q4`: `g` is Q4; its own loop, so that the Q4 table route and
/// the other schemes' two product routes do not share one: measured, the BF16 Q4 row lost 7%
/// when they did).
#[inline(always)]
fn dequant_row_g_v3<T: ChunkOut, const Q4: bool>(
    cpu: T::Cpu,
    w: &Weights<'_>,
    g: Grouped,
    row: usize,
    c0: usize,
    out: &mut [T],
) {
    let (codes, scales, rcb, gp) = grouped_parts(w);
    let cb = 16 * g.bits() as usize;
    let gpc = CHUNK / g.group_size();
    // The row's group scales times `2^-(32 - b)`, a span of `SPAN` chunks at a time.
    const SPAN: usize = 64;
    let mut sc = [0f32; 4 * SPAN];
    let end = c0 + out.len().div_ceil(CHUNK);
    // Every line of the code bytes, `DEQUANT_AHEAD` ahead (the hardware prefetchers alone
    // left the loop waiting on its loads; see there).
    let ahead = codes
        .as_ptr()
        .wrapping_add(row * rcb + crate::prefetch::DEQUANT_AHEAD);
    let mut a = c0;
    while a < end {
        let b = (a + SPAN).min(end);
        let g0 = gpc * a;
        let ng = (gpc * b).min(gp) - g0;
        row_scales_span(scales, row, gp, g0, top_unit(g), &mut sc[..ng]);
        for c in a..b {
            crate::prefetch::span(ahead.wrapping_add(c * cb), cb);
            let scc = &sc[gpc * (c - a)..];
            let at = CHUNK * (c - c0);
            match out
                .get_mut(at..at + CHUNK)
                .and_then(|o| <&mut [T; CHUNK]>::try_from(o).ok())
            {
                Some(o) => dequant_chunk_v3::<T, Q4>(cpu, g, &codes[row * rcb + c * cb..], scc, o),
                None => {
                    let mut b = [T::default(); CHUNK];
                    dequant_chunk_v3::<T, Q4>(cpu, g, &codes[row * rcb + c * cb..], scc, &mut b);
                    let o = &mut out[at..];
                    let n = o.len();
                    o.copy_from_slice(&b[..n]);
                }
            }
        }
        a = b;
    }
}

/// One chunk of [`dequant_row_v3`]: `code` from the chunk's first byte, `sc` its group scales
/// times `2^-(32 - b)`, `d` its 128 positions in order. An output word that rounds by
/// Veltkamp's split (`ChunkOut::SPLIT_ROUND`: the AVX2 BF16 words) takes the products of each
/// 16 positions as the even and the odd ones ([`TOP_BYTES_EVEN_ODD`]) where the chunk's scales
/// are finite: the split gives `f32_to_bf16_rne`'s words for every value `s q` of a finite
/// binary16 scale (`crate::dequant::x86::split16`), not for an infinity.
#[inline(always)]
fn dequant_chunk_v3<T: ChunkOut, const Q4: bool>(
    cpu: T::Cpu,
    g: Grouped,
    code: &[u8],
    sc: &[f32],
    d: &mut [T; CHUNK],
) {
    if Q4 && T::q4_chunk(cpu, code, sc, d) {
        return;
    }
    let gpc = CHUNK / g.group_size();
    if T::SPLIT_ROUND && sc.iter().take(gpc).all(|x| x.is_finite()) {
        chunk_products_v3::<T, true>(cpu, g, code, sc, d)
    } else {
        chunk_products_v3::<T, false>(cpu, g, code, sc, d)
    }
}

/// The products `s q` of [`dequant_chunk_v3`], 16 positions at a time to `put16` in position
/// order ([`TOP_BYTES`]) or, `SPLIT`, to `put16_split` as the even and the odd ones
/// ([`TOP_BYTES_EVEN_ODD`]); a const parameter, so the loop has no branch.
#[inline(always)]
fn chunk_products_v3<T: ChunkOut, const SPLIT: bool>(
    cpu: T::Cpu,
    g: Grouped,
    code: &[u8],
    sc: &[f32],
    d: &mut [T; CHUNK],
) {
    let s = T::v3(cpu);
    let (avx, avx2) = (s.avx, s.avx2);
    let gpc = CHUNK / g.group_size();
    let masks: [__m256i; 2] = pulp::cast(if SPLIT { TOP_BYTES_EVEN_ODD } else { TOP_BYTES });
    let q = decode_top_v3(s, g, code);
    for (b, &u) in q.iter().enumerate() {
        let sg = avx._mm256_set1_ps(sc.get(b * gpc / 4).copied().unwrap_or(0.0));
        let halves = [
            avx2._mm256_permute4x64_epi64::<0x44>(u),
            avx2._mm256_permute4x64_epi64::<0xee>(u),
        ];
        for (h, &v) in halves.iter().enumerate() {
            let [lo, hi] =
                masks.map(|m| avx._mm256_mul_ps(avx._mm256_cvtepi32_ps(avx2._mm256_shuffle_epi8(v, m)), sg));
            if SPLIT {
                T::put16_split(cpu, d, 2 * b + h, lo, hi);
            } else {
                T::put16(cpu, d, 2 * b + h, lo, hi);
            }
        }
    }
}

/// `q 2^28` for the Q4 codes `u = 0 .. 15` (two's complement nibbles: `q = u`, then `u - 16`).
const Q4_TOP: [[f32; 8]; 2] = {
    let mut t = [[0f32; 8]; 2];
    let mut u = 0;
    while u < 16 {
        t[u / 8][u % 8] = (if u < 8 { u as i32 } else { u as i32 - 16 }) as f32 * (1u32 << 28) as f32;
        u += 1;
    }
    t
};

/// The `vpshufb` tables of [`dequant_chunk_q4_bf16_v3`] for group `g` of the chunk: the low
/// bytes and the high bytes of the 16 words `bf16(s q)`, each table in both 128-bit lanes.
#[inline(always)]
fn q4_bf16_tables(s: pulp::x86::V3, sc: &[f32], g: usize) -> (__m256i, __m256i) {
    let (avx, avx2) = (s.avx, s.avx2);
    let qt: [__m256; 2] = pulp::cast(Q4_TOP);
    // Within each 128-bit lane: the 8 low bytes of its words, then the 8 high bytes.
    let split = avx._mm256_setr_epi8(
        0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11,
        13, 15,
    );
    let sg = avx._mm256_set1_ps(sc.get(g).copied().unwrap_or(0.0));
    let words = crate::dequant::x86::round16(s, avx._mm256_mul_ps(qt[0], sg), avx._mm256_mul_ps(qt[1], sg));
    // Qwords: low bytes of words 0-7, of 8-15, high bytes of 0-7, of 8-15.
    let t = avx2._mm256_permute4x64_epi64::<0xd8>(avx2._mm256_shuffle_epi8(words, split));
    (
        avx2._mm256_permute4x64_epi64::<0x44>(t),
        avx2._mm256_permute4x64_epi64::<0xee>(t),
    )
}

/// One Q4 chunk of [`dequant_row_v3`] to BF16 words by table: per group, the 16 words
/// `bf16(s q)` (`q 2^28` times `s 2^-28`, the exact product, rounded by `round16`: the words the
/// oracle's value rounds to) split into a low-byte and a high-byte `vpshufb` table; per 32
/// positions, the nibbles index both tables and two byte unpacks interleave them into words.
/// The code bytes' 8-byte quarters are reordered first (`vpermq` 0xd8) so that the unpacks
/// give positions in order. `code` from the chunk's first byte, `sc` the chunk's two group
/// scales times `2^-28` (a missing one 0, as in [`dequant_chunk_v3`]).
#[inline(always)]
pub(crate) fn dequant_chunk_q4_bf16_v3(s: pulp::x86::V3, code: &[u8], sc: &[f32], d: &mut [u16; CHUNK]) {
    let (avx, avx2) = (s.avx, s.avx2);
    let t = [q4_bf16_tables(s, sc, 0), q4_bf16_tables(s, sc, 1)];
    let m = avx._mm256_set1_epi8(0x0f);
    let v0 = avx2._mm256_permute4x64_epi64::<0xd8>(ld(code));
    let v1 = avx2._mm256_permute4x64_epi64::<0xd8>(ld(&code[32..]));
    // Block b (positions 32 b ..): the low nibbles of v0, v1, then the high ones; group b / 2.
    let idx = [
        avx2._mm256_and_si256(v0, m),
        avx2._mm256_and_si256(v1, m),
        avx2._mm256_and_si256(avx2._mm256_srli_epi16::<4>(v0), m),
        avx2._mm256_and_si256(avx2._mm256_srli_epi16::<4>(v1), m),
    ];
    let d: &mut [[u16; 16]; 8] = pulp::bytemuck::cast_mut(d);
    for (b, &i) in idx.iter().enumerate() {
        let (tl, th) = t[b / 2];
        let (lo, hi) = (avx2._mm256_shuffle_epi8(tl, i), avx2._mm256_shuffle_epi8(th, i));
        d[2 * b] = pulp::cast(avx2._mm256_unpacklo_epi8(lo, hi));
        d[2 * b + 1] = pulp::cast(avx2._mm256_unpackhi_epi8(lo, hi));
    }
}

/// Chunk `c` of each batch row's activations (rows `kc` apart) for batch rows `min(nb, NB)`
/// (all `NB` when `NB <= 2`), zeros for the others: one bounds check per batch row and chunk,
/// not per block. Shared by [`pass_v3`] and [`pass_v3_split`].
#[inline(always)]
fn chunk_acts<const NB: usize>(xs: &[f32], kc: usize, c: usize, nb: usize) -> [&[f32; CHUNK]; NB] {
    let mut xc = [&[0f32; CHUNK]; NB];
    for (b, o) in xc.iter_mut().enumerate() {
        if NB <= 2 || b < nb {
            *o = xs[b * kc + CHUNK * c..][..CHUNK]
                .try_into()
                .unwrap_or(&[0.0; CHUNK]);
        }
    }
    xc
}

/// The chunks of a row-split pass as [`Runs`], each bounds checked once when made instead of
/// per chunk: per weight row (`rows`) its code bytes and its group scales in `sc` (rows `gp`
/// apart, as [`row_scales_times`] wrote them), per batch row its activations (the rows past
/// `nb`, which the kernels skip, repeat row 0). Filled by loops, not `array::map`: a closure is
/// not inlined into the `target_feature` context, and the runs' constant widths would be lost.
struct SplitRuns<'a, const NB: usize, const R: usize> {
    codes: [Runs<'a, u8>; R],
    scales: [Runs<'a, f32>; R],
    acts: [Runs<'a, f32>; NB],
}

impl<'a, const NB: usize, const R: usize> SplitRuns<'a, NB, R> {
    #[inline(always)]
    fn new(g: Grouped, w: &Weights<'a>, rows: [usize; R], sc: &'a [f32], xs: &'a [f32], nb: usize) -> Self {
        let (codes, _, rcb, gp) = grouped_parts(w);
        let chunks = w.chunks();
        let (cb, gpc) = (16 * g.bits() as usize, CHUNK / g.group_size());
        let mut runs = SplitRuns {
            codes: [Runs::EMPTY; R],
            scales: [Runs::EMPTY; R],
            acts: [Runs::EMPTY; NB],
        };
        for (r, &row) in rows.iter().enumerate() {
            runs.codes[r] = Runs::new(codes, row * rcb, cb, chunks);
            runs.scales[r] = Runs::new(sc, r * gp, gpc, chunks);
        }
        for (b, xr) in runs.acts.iter_mut().enumerate() {
            let b = if NB <= 2 || b < nb { b } else { 0 };
            *xr = Runs::new(xs, b * chunks * CHUNK, CHUNK, chunks);
        }
        runs
    }

    /// Chunk `c` of each batch row's activations.
    #[inline(always)]
    fn acts(&self, c: usize) -> [&'a [f32; CHUNK]; NB] {
        let mut xc = [&[0f32; CHUNK]; NB];
        for (xb, runs) in xc.iter_mut().zip(&self.acts) {
            *xb = runs.get(c).try_into().unwrap_or(&[0.0; CHUNK]);
        }
        xc
    }
}

/// Load `N` bytes as a vector type of that size (an unaligned load after inlining).
#[inline(always)]
fn ld<T: pulp::bytemuck::Pod>(b: &[u8]) -> T {
    let mut v = T::zeroed();
    pulp::bytemuck::bytes_of_mut(&mut v).copy_from_slice(&b[..core::mem::size_of::<T>()]);
    v
}

/// Runs [`rows_v3`] inside the `V3` token's `target_feature` context.
pub(crate) struct FastV3<'a, 'b, 'c>(pub(crate) pulp::x86::V3, pub(crate) F32Job<'a, 'b, 'c>);

impl pulp::WithSimd for FastV3<'_, '_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        rows_v3(self.0, self.1)
    }
}

/// [`rows_v3`] for Q5 and Q6 with the code bytes decoded by GFNI affine transforms
/// ([`decode_top_block_gfni`]): bit-identical to it (the same bytes, the same sums). Other
/// weights are not taken ([`super::i8x86::gfni_takes`]; the dispatcher in `gemv` chooses this
/// kernel, so that its stack frame and [`rows_v3`]'s are never nested: in a debug build each is
/// over a MiB). GFNI is not part of x86-64-v3, so this is a route of its own: AVX2
/// cores with GFNI include Intel's since Ice Lake and Alder Lake (client cores without AVX-512
/// among them) and AMD's since Zen 4. Session 30's Xeon (family 6 model 167, KVM), `report --isa
/// V3 --kernels gemv-f32`, G weights/s, medians of 3 alternations, without -> with: 8192x8192
/// from memory, one / two threads, Q5 13.51 / 27.34 -> 14.37 / 28.84, Q6 12.89 / 25.89 -> 13.03
/// / 26.12; 256x8192 cache-resident, one thread, Q5 14.53 -> 15.32, Q6 14.70 -> 15.28.
///
/// # Safety
/// The CPU must have the `V3` features (the token proves them) and GFNI.
#[target_feature(enable = "avx,avx2,fma,gfni,bmi1,bmi2,lzcnt,popcnt")]
pub(crate) unsafe fn rows_v3_gfni(s: pulp::x86::V3, job: F32Job<'_, '_, '_>) {
    macro_rules! nb {
        ($K:expr) => {
            match job.nb {
                1 => rows_v3_route::<$K, 1, true>(s, job),
                2 => rows_v3_route::<$K, 2, true>(s, job),
                3 | 4 => rows_v3_route::<$K, 4, true>(s, job),
                _ => rows_v3_route::<$K, MAX_BATCH, true>(s, job),
            }
        };
    }
    match job.w {
        Weights::Grouped { g: Grouped::Q5, .. } => nb!(1),
        Weights::Grouped { g: Grouped::Q6, .. } => nb!(2),
        // The dispatcher sends only Q5 and Q6 (`i8x86::gfni_takes`); running `rows_v3` here would
        // put its frame inside this one.
        _ => debug_assert!(false, "rows_v3_gfni takes Q5 and Q6 only"),
    }
}

/// Runs [`rows_v4`] inside the `V4` token's `target_feature` context.
pub(crate) struct FastV4<'a, 'b, 'c>(pub(crate) pulp::x86::V4, pub(crate) F32Job<'a, 'b, 'c>);

impl pulp::WithSimd for FastV4<'_, '_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        rows_v4(self.0, self.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `decode_top_block_gfni` inside a function compiled with GFNI.
    #[target_feature(enable = "avx,avx2,fma,gfni")]
    unsafe fn gfni_block(s: pulp::x86::V3, g: Grouped, chunk: &[u8], blk: usize) -> [u8; 32] {
        // SAFETY: the caller guarantees GFNI.
        pulp::cast(unsafe { decode_top_block_gfni(s, g, chunk, blk) })
    }

    /// Every block of [`decode_top_block_v3`], by the shifts and masks and by GFNI, is the
    /// block of [`decode_top_v3`] (which `top_floats_are_the_signed_codes_for_every_code`
    /// checks against the core's codes), for Q5 and Q6 chunks whose nibble-plane bytes are all
    /// `a` and high-plane bytes all `b`, over every pair `(a, b)`: each output byte depends on
    /// one byte of each plane, its block and its 128-bit lane only.
    #[test]
    fn gfni_decode_gives_the_same_bytes() {
        let Some(s) = pulp::x86::V3::try_new() else {
            println!("SKIPPED: AVX2 decode_top_block_v3: this CPU has no AVX2+FMA");
            return;
        };
        let gfni = std::arch::is_x86_feature_detected!("gfni");
        if !gfni {
            println!("SKIPPED: GFNI decode_top_block_gfni: this CPU has no GFNI");
        }
        for g in [Grouped::Q5, Grouped::Q6] {
            let cb = 16 * g.bits() as usize;
            for a in 0..=255u8 {
                for b in 0..=255u8 {
                    let chunk: Vec<u8> = (0..cb).map(|i| if i < 64 { a } else { b }).collect();
                    let want: [[u8; 32]; 4] = pulp::cast(s.vectorize(|| decode_top_v3(s, g, &chunk)));
                    for (blk, w) in want.iter().enumerate() {
                        let plain: [u8; 32] =
                            s.vectorize(|| pulp::cast(decode_top_block_v3::<false>(s, g, &chunk, blk)));
                        assert_eq!(&plain, w, "{g:?} nibbles {a:#04x} high {b:#04x} block {blk}");
                        if gfni {
                            // SAFETY: GFNI was detected above; the token proves the V3 features.
                            let got = unsafe { gfni_block(s, g, &chunk, blk) };
                            assert_eq!(&got, w, "GFNI {g:?} nibbles {a:#04x} high {b:#04x} block {blk}");
                        }
                    }
                }
            }
        }
    }

    /// `decode_top_v3` / `top_floats` (AVX2) and `decode_top_v4` / `top_floats_v4` (AVX-512)
    /// against the generic decoder (`grouped_codes`): vector `j`, lane `l` of block `b` is
    /// `q 2^(32 - bits)` for the code at position `L b + 4 l + j` (`L` = 32 or 64 positions per
    /// block), bit for bit, over chunks of every constant byte (each code value at every position,
    /// with the high plane all ones or all zeros) and pseudo-random chunks, for every row-split
    /// scheme; and `top_unit` is its inverse.
    #[test]
    fn top_floats_are_the_signed_codes_for_every_code() {
        let v3 = pulp::x86::V3::try_new();
        let v4 = pulp::x86::V4::try_new();
        if v3.is_none() {
            println!("SKIPPED: AVX2 top_floats: this CPU has no AVX2+FMA");
        }
        if v4.is_none() {
            println!("SKIPPED: AVX-512 top_floats_v4: this CPU has no AVX-512");
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for g in [Grouped::Q4, Grouped::Q5, Grouped::Q6, Grouped::W8] {
            let cb = 16 * g.bits() as usize;
            let scale = f64::from(1u32 << (32 - g.bits()));
            assert_eq!(f64::from(top_unit(g)), 1.0 / scale, "{g:?}");
            for t in 0..256 + 512 {
                let chunk: Vec<u8> = (0..cb)
                    .map(|_| {
                        if t < 256 {
                            t as u8
                        } else {
                            state ^= state << 13;
                            state ^= state >> 7;
                            state ^= state << 17;
                            (state >> 24) as u8
                        }
                    })
                    .collect();
                let mut q = [0i8; CHUNK];
                crate::weights::grouped_codes(g, &chunk, &mut q);
                let check = |lanes_per: usize, b: usize, j: usize, lanes: &[f32], isa: &str| {
                    for (l, &d) in lanes.iter().enumerate() {
                        let p = 4 * lanes_per * b + 4 * l + j;
                        assert_eq!(
                            f64::from(d),
                            f64::from(q[p]) * scale,
                            "{isa} {g:?} chunk {t} position {p}"
                        );
                    }
                };
                if let Some(s) = v3 {
                    let got: [[[f32; 8]; 4]; 4] = s.vectorize(|| {
                        let u = decode_top_v3(s, g, &chunk);
                        core::array::from_fn(|b| pulp::cast(top_floats(s, u[b])))
                    });
                    for (b, vs) in got.iter().enumerate() {
                        for (j, lanes) in vs.iter().enumerate() {
                            check(8, b, j, lanes, "V3");
                        }
                    }
                }
                if let Some(s) = v4 {
                    let got: [[[f32; 16]; 4]; 2] = s.vectorize(|| {
                        let u = decode_top_v4(s, g, &chunk);
                        core::array::from_fn(|b| pulp::cast(top_floats_v4(s, u[b])))
                    });
                    for (b, vs) in got.iter().enumerate() {
                        for (j, lanes) in vs.iter().enumerate() {
                            check(16, b, j, lanes, "V4");
                        }
                    }
                }
            }
        }
    }
}
