//! The `F32` profile's x86 fast path (AVX2 `V3`, AVX-512 `V4`) for FP8 (`row-scale-v1`): the
//! E4M3FN bytes become their exact binary32 values in registers.
//!
//! - AVX2: the construction of [`crate::weights::e4m3fn_value`] lane-wise: a normal word is
//!   `(b & 0x7f) << 20` with the exponent rebased by 120 (integer work), a subnormal word
//!   `m * 2^-9` (a product of normal numbers: no subnormal operand, which costs an x86 vector
//!   multiply a microcode assist), the sign OR-ed in; the NaN words (`b & 0x7f == 0x7f`) become
//!   the quiet NaN with the word's sign, as in the core table
//!   (`ninfer_core::tables::E4M3FN_TO_F32`).
//! - AVX-512: through binary16 and `vcvtph2ps`, 32 words per 512-bit register (see
//!   [`decode32_v4`]); a chunk is tested once for NaN words and patched only when it has one.
//!   The binary16 route yields `w * 2^-8`: instead of multiplying every weight by 2^8, the
//!   activations are multiplied by 2^8 once per call (exact unless a finite |x| >= 2^120; then
//!   the weights are multiplied instead), so each product is the same exact `w x` (one thread,
//!   medians of 5 alternations, G weights/s: cache-resident 12.3 -> 14.1, 8192x8192 from memory
//!   10.8 -> 12.7; the AVX2 F16C route does the same).
//!
//! The pre-weights are therefore exactly the generic decoder's (or those times 2^-8, met by the
//! activations times 2^8: the same exact products), the FMAs run in the generic
//! kernel's order ([`super::f32`]) and the BF16 row scale is applied once per output by the same
//! [`crate::weights::Post`] step, so the result is bit-identical to the generic kernel (where a NaN weight
//! makes the output a NaN, its payload may differ on AVX-512) and the `F32` criterion's
//! derivation (one product, the additions, one finishing multiplication) applies unchanged.
//! A partial last chunk (K not a multiple of 128; nothing may be read past the row) goes
//! through the generic chunk decoder. The code stream is software-prefetched [`PF`] bytes ahead.

use core::arch::x86_64::{__m128i, __m256, __m256i, __m512, __m512i};

use pulp::Simd;

use super::f32x86::F32Job;
use super::{store_rows, stream_rows};
use crate::dequant::ChunkOut;
use crate::prefetch;
use crate::weights::{Weights, CHUNK};

/// 2^-9 (binary32 bits).
const TWO_M9: u32 = 0x3b00_0000;

/// Software prefetch distance in the code stream (bytes; the rows are contiguous).
const PF: usize = 4096;

/// Whether the fast path takes these weights (FP8 row).
pub(crate) fn takes(w: &Weights<'_>) -> bool {
    matches!(w, Weights::Fp8 { .. })
}

/// AVX2: 8 E4M3FN bytes (the low 8 of `b`) to their exact values.
#[inline(always)]
fn decode8_v3(s: pulp::x86::V3, b: __m128i) -> __m256 {
    e4m3fn_lanes_v3(s, s.avx2._mm256_cvtepu8_epi32(b))
}

/// AVX2: the exact value of the E4M3FN word in each i32 lane (each lane in `0..=255`); also the
/// NVFP4 block-scale decoder (`nvfp4x86`).
#[inline(always)]
pub(crate) fn e4m3fn_lanes_v3(s: pulp::x86::V3, t: __m256i) -> __m256 {
    let (avx, avx2) = (s.avx, s.avx2);
    let m7f = avx._mm256_set1_epi32(0x7f);
    let mag = avx2._mm256_and_si256(t, m7f);
    // Normal words: the bits with the exponent rebased by 120 (integer work only).
    let normal = avx2._mm256_add_epi32(
        avx2._mm256_slli_epi32::<20>(mag),
        avx._mm256_set1_epi32(120 << 23),
    );
    // Subnormal words: m * 2^-9, a product of normal numbers.
    let m = avx._mm256_cvtepi32_ps(avx2._mm256_and_si256(t, avx._mm256_set1_epi32(7)));
    let sub = avx._mm256_mul_ps(m, avx._mm256_set1_ps(f32::from_bits(TWO_M9)));
    let is_sub = avx2._mm256_cmpeq_epi32(
        avx2._mm256_and_si256(t, avx._mm256_set1_epi32(0x78)),
        avx._mm256_setzero_si256(),
    );
    let v = avx._mm256_blendv_ps(pulp::cast(normal), sub, pulp::cast(is_sub));
    let sign = avx2._mm256_slli_epi32::<24>(avx2._mm256_and_si256(t, avx._mm256_set1_epi32(0x80)));
    let v = avx2._mm256_or_si256(pulp::cast(v), sign);
    let nan = avx2._mm256_cmpeq_epi32(mag, m7f);
    let qnan = avx2._mm256_or_si256(sign, avx._mm256_set1_epi32(0x7fc0_0000));
    avx._mm256_blendv_ps(pulp::cast(v), pulp::cast(qnan), pulp::cast(nan))
}

/// AVX-512: 32 E4M3FN bytes to their exact values, through binary16: in 16-bit lanes,
/// `((b << 8) >>arith 1) & 0xbf80` is `sign << 15 | (b & 0x7f) << 7`, the binary16 word of the
/// value times 2^-8 (the exponent biases differ by 8; E4M3FN subnormals land on binary16
/// subnormals), `vcvtph2ps` widens it exactly and multiplying by 2^8 is exact. The NaN words get
/// the all-ones binary16 exponent first (a NaN of the word's sign; only its payload may differ
/// from the core table's).
#[inline(always)]
///
/// `NAN`: whether the words may include NaN words (false: the caller checked there are none).
/// `SX`: leave out the multiplication by 2^8 (the caller multiplied the activations by 2^8).
fn decode32_v4<const NAN: bool, const SX: bool>(s: pulp::x86::V4, b: __m256i) -> [__m512; 2] {
    let (f, bw) = (s.avx512f, s.avx512bw);
    let t = bw._mm512_slli_epi16::<8>(bw._mm512_cvtepu8_epi16(b));
    let mut h = f._mm512_and_si512(
        bw._mm512_srai_epi16::<1>(t),
        f._mm512_set1_epi16(0xbf80u16 as i16),
    );
    if NAN {
        let mag = f._mm512_set1_epi16(0x3f80);
        let nan = bw._mm512_cmpeq_epi16_mask(f._mm512_and_si512(h, mag), mag);
        h = bw._mm512_mask_mov_epi16(h, nan, f._mm512_or_si512(h, f._mm512_set1_epi16(0x7e00)));
    }
    let hs: [__m256i; 2] = pulp::cast(h);
    let (w0, w1) = (f._mm512_cvtph_ps(hs[0]), f._mm512_cvtph_ps(hs[1]));
    if SX {
        return [w0, w1];
    }
    let k = f._mm512_set1_ps(256.0);
    [f._mm512_mul_ps(w0, k), f._mm512_mul_ps(w1, k)]
}

/// AVX2 row loop: one 32-position block (four 8-lane vectors) at a time, the words decoded
/// with integer lane operations ([`decode8_v3`]).
#[inline(always)]
pub(crate) fn rows_v3(s: pulp::x86::V3, job: F32Job<'_, '_, '_>) {
    by_batch!(job.nb, rows_v3_nb[false](s, job))
}

/// [`rows_v3`] compiled with F16C: a chunk without NaN words is decoded through binary16 as
/// in [`decode32_v4`] (9 instructions per 16 words instead of 32) and met by the activations
/// times 2^8 ([`decode32_f16c`]; one thread, cache-resident, 10.9 -> 12.4 G weights/s); a chunk
/// with one goes through [`decode8_v3`]. Bit-identical to [`rows_v3`] (the same exact products,
/// the same sums; tested at the edges of the 2^8 scaling too).
///
/// # Safety
/// The CPU must have the `V3` features (the token proves them) and F16C.
#[target_feature(enable = "avx,avx2,fma,f16c,bmi1,bmi2,lzcnt,popcnt")]
pub(crate) unsafe fn rows_v3_f16c(s: pulp::x86::V3, job: F32Job<'_, '_, '_>) {
    // The binary16 route yields `w * 2^-8`; the activations times 2^8 make each product the
    // same exact `w * x` (see `decode32_f16c`). Exact unless a finite |x| >= 2^120 would
    // overflow: such activations take the integer route.
    if scalable(job.xs) {
        by_batch!(job.nb, rows_v3_nb[true](s, job))
    } else {
        by_batch!(job.nb, rows_v3_nb[false](s, job))
    }
}

/// 2^120: below it, multiplying a binary32 value by 2^8 is exact.
const TWO_P120: f32 = 1.329_228e36;

/// 32 E4M3FN bytes (no NaN word among them) to their exact values times 2^-8, four 8-lane
/// vectors, through binary16 (see [`decode32_v4`], without its final multiplication by 2^8:
/// the caller multiplies the activations by 2^8 once per call instead, so that
/// `(w 2^-8)(x 2^8)` is the same exact product `w x` and every FMA rounds as the generic
/// kernel's does; one vector multiplication per 8 weights less). The bytes reach the high
/// halves of 16-bit words by a byte unpack rather than a widening and a shift, and the four
/// vectors come back in position order. With that and the one-maximum NaN test of a chunk
/// (session 8; it was a mask, a compare and an OR per 32 bytes): one thread, 128x8192
/// cache-resident, medians of 3 alternations, 8.55 -> 9.19 G weights/s. Only inlined into code
/// with F16C: [`rows_v3_f16c`] and [`dequant_row_f16c`] (whose callers guarantee it).
#[inline(always)]
fn decode32_f16c(s: pulp::x86::V3, b: __m256i) -> [__m256; 4] {
    let (avx, avx2) = (s.avx, s.avx2);
    let m = avx._mm256_set1_epi16(0xbf80u16 as i16);
    let z = avx._mm256_setzero_si256();
    // The bytes into the high halves of 16-bit words (`b << 8`) by an unpack with zero bytes:
    // the low unpack holds bytes 0-7 and 16-23, the high one 8-15 and 24-31.
    let words = [avx2._mm256_unpacklo_epi8(z, b), avx2._mm256_unpackhi_epi8(z, b)];
    let mut out = [avx._mm256_setzero_ps(); 4];
    for (h, &w) in words.iter().enumerate() {
        let w = avx2._mm256_and_si256(avx2._mm256_srai_epi16::<1>(w), m);
        let q: [__m128i; 2] = pulp::cast(w);
        for (j, &qj) in q.iter().enumerate() {
            // SAFETY: only reached from `rows_v3_f16c` and `dequant_row_f16c`, whose callers
            // guarantee F16C.
            // Word vector h, 128-bit half j: bytes 16 j + 8 h.. (position order 2 j + h).
            out[2 * j + h] = unsafe { core::arch::x86_64::_mm256_cvtph_ps(qj) };
        }
    }
    out
}

/// [`rows_v3`] for `min(nb, NB)` batch rows (exactly `NB` when `NB <= 2`). `F16C`: only true
/// inside [`rows_v3_f16c`]. One row per pass: two weight streams (as `f32x86` does) made this
/// kernel slower on AVX2 (measured, 8192x8192 from memory, one thread: 9.7 -> 8.1 G weights/s).
///
/// A chunk's activations are sliced once per batch row and each route has its own block loop
/// ([`fma_block`]): with one block loop matching on the route per block and slicing the
/// activations per block, the compiler kept bounds checks in the loop and spilled the
/// accumulators (session 18, AMD EPYC Zen 3, one thread, medians of 3 / 5 alternations, G
/// weights/s: 1024x8192 in L3 10.97 -> 12.15, 8192x8192 from memory 10.23 -> 11.04).
///
/// Tried and dropped on that host: decoding without a conversion instruction — each byte by
/// `vpshufb` to the top of its 32-bit lane, an arithmetic shift by 4 and a mask give
/// `sign << 31 | (b & 0x7f) << 20`, the value times 2^-120 (a subnormal binary32 number where
/// the word is subnormal), and one multiplication by 2^120 the value, exactly: 4.5 G weights/s
/// in L3 against 11.0 (subnormal operands are slow in this loop on Zen 3 although an isolated
/// multiplication loop ran at full speed with them; with them made normal, 7.0); the F16C
/// route's binary16 words stored and converted from memory (`vcvtph2ps ymm, m128`) instead of
/// `vextracti128`: 12.13 -> 11.93.
#[inline(always)]
fn rows_v3_nb<const F16C: bool, const NB: usize>(s: pulp::x86::V3, job: F32Job<'_, '_, '_>) {
    let F32Job {
        w,
        xs,
        nb,
        r0,
        r1,
        ys,
    } = job;
    let nb = if NB <= 2 { NB } else { nb.min(NB) };
    let Weights::Fp8 { k, codes, .. } = w else {
        return;
    };
    let avx = s.avx;
    let chunks = w.chunks();
    let kc = chunks * CHUNK;
    let mut buf = [0f32; CHUNK];
    // The F16C route's activations: times 2^8 (exact, checked by `rows_v3_f16c`).
    let x8: Vec<f32> = if F16C {
        xs.iter().map(|&x| x * 256.0).collect()
    } else {
        Vec::new()
    };
    for row in r0..r1 {
        let mut acc = [[avx._mm256_setzero_ps(); 4]; NB];
        for c in 0..chunks {
            let start = row * k + CHUNK * c;
            // A chunk is two cache lines.
            prefetch::line(codes.as_ptr().wrapping_add(start + PF));
            prefetch::line(codes.as_ptr().wrapping_add(start + PF + 64));
            let full: Option<&[u8; CHUNK]> = if CHUNK * (c + 1) <= k {
                codes.get(start..start + CHUNK).and_then(|b| b.try_into().ok())
            } else {
                None
            };
            if full.is_none() {
                w.pre_chunk(row, c, &mut buf);
            }
            // NaN words are rare: test the chunk once (F16C route only).
            let clean = match full {
                Some(bytes) if F16C => {
                    // `b + b` drops the sign bit: `0xfe` for a NaN word, the largest value it
                    // takes, so the unsigned maximum over the chunk finds one.
                    let vv: [__m256i; 4] = pulp::cast(*bytes);
                    let avx2 = s.avx2;
                    let mut d = vv;
                    for v in d.iter_mut() {
                        *v = avx2._mm256_add_epi8(*v, *v);
                    }
                    let top = avx2
                        ._mm256_max_epu8(avx2._mm256_max_epu8(d[0], d[1]), avx2._mm256_max_epu8(d[2], d[3]));
                    let nan = avx2._mm256_cmpeq_epi8(top, s.avx._mm256_set1_epi8(0xfeu8 as i8));
                    avx2._mm256_movemask_epi8(nan) == 0
                }
                _ => false,
            };
            let xs = if F16C && clean { &x8[..] } else { xs };
            // The chunk's activations of each batch row, sliced once per chunk (not through
            // `f32x86::chunk_acts`: here that measured slower, 11.08 -> 9.41 G weights/s in L3).
            let mut xc = [&[0f32; CHUNK]; NB];
            for (b, o) in xc.iter_mut().enumerate().take(nb) {
                let p = b * kc + CHUNK * c;
                *o = xs
                    .get(p..p + CHUNK)
                    .and_then(|x| x.try_into().ok())
                    .unwrap_or(&[0.0; CHUNK]);
            }
            match full {
                Some(bytes) if clean => {
                    let bv: [[u8; 32]; 4] = pulp::cast(*bytes);
                    for (blk, b) in bv.iter().enumerate() {
                        fma_block(s, &mut acc, nb, decode32_f16c(s, pulp::cast(*b)), &xc, blk);
                    }
                }
                Some(bytes) => {
                    let bv: [[u64; 4]; 4] = pulp::cast(*bytes);
                    for (blk, v) in bv.iter().enumerate() {
                        // A loop, not `array::from_fn`: a closure there is not inlined into the
                        // `target_feature` context.
                        let mut wv = [s.avx._mm256_setzero_ps(); 4];
                        for (o, &v) in wv.iter_mut().zip(v) {
                            *o = decode8_v3(s, pulp::cast([v, 0u64]));
                        }
                        fma_block(s, &mut acc, nb, wv, &xc, blk);
                    }
                }
                None => {
                    let bv: [[__m256; 4]; 4] = pulp::cast(buf);
                    for (blk, &wv) in bv.iter().enumerate() {
                        fma_block(s, &mut acc, nb, wv, &xc, blk);
                    }
                }
            }
        }
        let post = w.post(row);
        for (b, a) in acc.iter().enumerate().take(nb) {
            let t = avx._mm256_add_ps(avx._mm256_add_ps(a[0], a[1]), avx._mm256_add_ps(a[2], a[3]));
            ys[b][row - r0] = post.apply(s.reduce_sum_f32s(pulp::cast(t)));
        }
    }
}

/// `acc[b][j] += wv[j] * x[b][32 blk + 8 j..]` over the batch rows `b < nb` (`x`: a chunk's
/// activations per batch row).
#[inline(always)]
fn fma_block<const NB: usize>(
    s: pulp::x86::V3,
    acc: &mut [[__m256; 4]; NB],
    nb: usize,
    wv: [__m256; 4],
    x: &[&[f32; CHUNK]; NB],
    blk: usize,
) {
    for (a, x) in acc.iter_mut().zip(x).take(nb) {
        let xb: [[__m256; 4]; 4] = pulp::cast(**x);
        for j in 0..4 {
            a[j] = s.fma._mm256_fmadd_ps(wv[j], xb[blk][j], a[j]);
        }
    }
}

/// AVX-512 row loop: one chunk (eight 16-lane vectors) at a time.
#[inline(always)]
pub(crate) fn rows_v4(s: pulp::x86::V4, job: F32Job<'_, '_, '_>) {
    // As on AVX2 (`rows_v3_f16c`): the weights without the factor 2^8, the activations with it.
    if scalable(job.xs) {
        by_batch!(job.nb, rows_v4_nb[true](s, job))
    } else {
        by_batch!(job.nb, rows_v4_nb[false](s, job))
    }
}

/// Whether every activation times 2^8 is exact (no finite |x| >= 2^120).
fn scalable(xs: &[f32]) -> bool {
    xs.iter().all(|x| !x.is_finite() || x.abs() < TWO_P120)
}

/// [`rows_v4`] for `min(nb, NB)` batch rows (exactly `NB` when `NB <= 2`). With one batch
/// row, four weight streams far apart per pass (see `f32x86::rows_v4_impl`).
#[inline(always)]
fn rows_v4_nb<const SX: bool, const NB: usize>(s: pulp::x86::V4, job: F32Job<'_, '_, '_>) {
    let F32Job {
        w,
        xs,
        nb,
        r0,
        r1,
        ys,
    } = job;
    let x8: Vec<f32> = if SX {
        xs.iter().map(|&x| x * 256.0).collect()
    } else {
        Vec::new()
    };
    let mut row = r0;
    if NB == 1 {
        let q = (r1 - r0) / 4;
        for i in 0..q {
            let rows = stream_rows::<4>(r0, q, i);
            store_rows(ys, r0, rows, &pass_v4::<SX, 1, 4>(s, &w, xs, &x8, nb, rows), 1);
        }
        row = r0 + 4 * q;
    }
    let live = if NB <= 2 { NB } else { nb.min(NB) };
    while row < r1 {
        store_rows(
            ys,
            r0,
            [row],
            &pass_v4::<SX, NB, 1>(s, &w, xs, &x8, nb, [row]),
            live,
        );
        row += 1;
    }
}

/// The rows `rows` (one per weight stream) against batch rows `min(nb, NB)`: `out[r][b]`.
/// `SX`: the whole chunks' weights are decoded without the factor 2^8 and met by `x8`, the
/// activations times 2^8 (the same exact products).
#[inline(always)]
fn pass_v4<const SX: bool, const NB: usize, const R: usize>(
    s: pulp::x86::V4,
    w: &Weights<'_>,
    xs: &[f32],
    x8: &[f32],
    nb: usize,
    rows: [usize; R],
) -> [[f32; NB]; R] {
    let nb = if NB <= 2 { NB } else { nb.min(NB) };
    let mut out = [[0f32; NB]; R];
    let Weights::Fp8 { k, codes, .. } = *w else {
        return out;
    };
    let (f, bw) = (s.avx512f, s.avx512bw);
    let chunks = w.chunks();
    let kc = chunks * CHUNK;
    let mut buf = [0f32; CHUNK];
    let mut acc = [[[f._mm512_setzero_ps(); 4]; NB]; R];
    for c in 0..chunks {
        for (r, &row) in rows.iter().enumerate() {
            let start = row * k + CHUNK * c;
            // A chunk is two cache lines.
            prefetch::line(codes.as_ptr().wrapping_add(start + PF));
            prefetch::line(codes.as_ptr().wrapping_add(start + PF + 64));
            let full: Option<&[u8; CHUNK]> = if CHUNK * (c + 1) <= k {
                codes.get(start..start + CHUNK).and_then(|b| b.try_into().ok())
            } else {
                None
            };
            let wv: [__m512; 8] = match full {
                Some(bytes) => {
                    let v: [__m256i; 4] = pulp::cast(*bytes);
                    // NaN words are rare: test the chunk once, patch only when present.
                    let vv: [__m512i; 2] = pulp::cast(*bytes);
                    let m7f = f._mm512_set1_epi8(0x7f);
                    let any_nan = bw._mm512_cmpeq_epi8_mask(f._mm512_and_si512(vv[0], m7f), m7f)
                        | bw._mm512_cmpeq_epi8_mask(f._mm512_and_si512(vv[1], m7f), m7f);
                    // A loop, not `array::from_fn` (see `rows_v3`).
                    let mut wv = [[f._mm512_setzero_ps(); 2]; 4];
                    if any_nan == 0 {
                        for (o, &v) in wv.iter_mut().zip(&v) {
                            *o = decode32_v4::<false, SX>(s, v);
                        }
                    } else {
                        for (o, &v) in wv.iter_mut().zip(&v) {
                            *o = decode32_v4::<true, SX>(s, v);
                        }
                    }
                    pulp::cast(wv)
                }
                None => {
                    w.pre_chunk(row, c, &mut buf);
                    pulp::cast(buf)
                }
            };
            let xs = if SX && full.is_some() { x8 } else { xs };
            for (b, a) in acc[r].iter_mut().enumerate().take(nb) {
                let xr = &xs[b * kc + CHUNK * c..b * kc + CHUNK * (c + 1)];
                let xv: &[f32; CHUNK] = xr.try_into().unwrap_or(&[0.0; CHUNK]);
                let xv: [__m512; 8] = pulp::cast(*xv);
                for j in 0..8 {
                    a[j % 4] = f._mm512_fmadd_ps(wv[j], xv[j], a[j % 4]);
                }
            }
        }
    }
    for ((o, ar), &row) in out.iter_mut().zip(&acc).zip(&rows) {
        let post = w.post(row);
        for (b, a) in ar.iter().enumerate().take(nb) {
            let t = f._mm512_add_ps(f._mm512_add_ps(a[0], a[1]), f._mm512_add_ps(a[2], a[3]));
            o[b] = post.apply(s.reduce_sum_f32s(pulp::cast(t)));
        }
    }
    out
}

/// Runs [`rows_v3`] inside the `V3` token's `target_feature` context.
pub(crate) struct FastV3<'a, 'b, 'c>(pub(crate) pulp::x86::V3, pub(crate) F32Job<'a, 'b, 'c>);

impl pulp::WithSimd for FastV3<'_, '_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        if std::arch::is_x86_feature_detected!("f16c") {
            // SAFETY: F16C was detected just above; the token proves the V3 features.
            unsafe { rows_v3_f16c(self.0, self.1) }
        } else {
            rows_v3(self.0, self.1)
        }
    }
}

/// Runs [`rows_v3`] (the integer decode, whatever the CPU has) inside the `V3` token's
/// `target_feature` context: the tests' handle on the route [`FastV3`] skips where F16C is
/// present.
#[cfg(test)]
pub(crate) struct PlainV3<'a, 'b, 'c>(pub(crate) pulp::x86::V3, pub(crate) F32Job<'a, 'b, 'c>);

#[cfg(test)]
impl pulp::WithSimd for PlainV3<'_, '_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        rows_v3(self.0, self.1)
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

/// Dequantize one FP8 row on AVX2 ([`ChunkOut`]: to f32, or to BF16 words rounded 16 at a time):
/// [`dequant_row_v3_f16c`] where the CPU has F16C, else [`dequant_row_v3`].
#[inline(always)]
pub(crate) fn dequant_row_fast_v3<T: ChunkOut>(
    cpu: T::Cpu,
    w: &Weights<'_>,
    row: usize,
    c0: usize,
    out: &mut [T],
) {
    if std::arch::is_x86_feature_detected!("f16c") {
        // SAFETY: F16C was detected just above; the token proves the V3 features.
        unsafe { dequant_row_v3_f16c(cpu, w, row, c0, out) }
    } else {
        dequant_row_v3(cpu, w, row, c0, out)
    }
}

/// [`dequant_row_v3`] through binary16, bit-identical to it: 32 words without a NaN word are
/// decoded by [`decode32_f16c`] as `w 2^-8` and multiplied by `m 2^8` (`m` the row's BF16
/// multiplier): the exact product is `w m`'s, so its one rounding is the same, subnormal
/// results included. A row whose `m 2^8` would not be exact (`|m| >= 2^120`, or `m` not
/// finite) and 32 words with a NaN word among them take the integer route. To BF16 words, a
/// row whose `m` is zero or of magnitude `2^-117 ..= 2^100` rounds by Veltkamp's split
/// ([`ChunkOut::words16_split`]; session 29). Session 18, AMD
/// EPYC Zen 3, medians of 3 alternations, G weights/s: 128x8192 in L3, one thread, 4.12 ->
/// 9.19; 8192x8192 from memory, one / two threads, 3.87 / 7.30 -> 7.31 / 13.27.
/// `out` and `c0` as in [`dequant_row_v3`].
///
/// # Safety
/// The CPU must have the `V3` features (the token proves them) and F16C.
#[target_feature(enable = "avx,avx2,fma,f16c,bmi1,bmi2,lzcnt,popcnt")]
pub(crate) unsafe fn dequant_row_v3_f16c<T: ChunkOut>(
    cpu: T::Cpu,
    w: &Weights<'_>,
    row: usize,
    c0: usize,
    out: &mut [T],
) {
    // SAFETY: this function's caller guarantees F16C.
    unsafe { dequant_row_f16c(cpu, w, row, c0, out) }
}

/// The body of [`dequant_row_v3_f16c`], inlined into it and into the AVX-512 BF16 row
/// (`dequant::x86::row_bf16_avx512bf16`, whose rounding must inline into the chunk loop: it
/// could not inside [`dequant_row_v3_f16c`], which lacks those features).
///
/// # Safety
/// The CPU must have the `V3` features (the token proves them) and F16C.
#[inline(always)]
pub(crate) unsafe fn dequant_row_f16c<T: ChunkOut>(
    cpu: T::Cpu,
    w: &Weights<'_>,
    row: usize,
    c0: usize,
    out: &mut [T],
) {
    let crate::weights::Post::Mul(m) = w.post(row) else {
        return;
    };
    // NaN and infinite multipliers fail this too.
    if m.abs() >= TWO_P120 || m.is_nan() {
        return dequant_row_v3(cpu, w, row, c0, out);
    }
    let avx = T::v3(cpu).avx;
    let (m8, mv) = (avx._mm256_set1_ps(m * 256.0), avx._mm256_set1_ps(m));
    // Every product `w m` is then zero, a NaN or normal and at most 448 * 2^100 < 2^112 in
    // magnitude (the smallest nonzero E4M3FN magnitude is 2^-9), where Veltkamp's split rounds
    // as `f32_to_bf16_rne` does (`ChunkOut::words16_split`).
    if split_rounds(m) {
        row_blocks(cpu, F16cBlock::<true> { m8, mv }, w, row, c0, out);
    } else {
        row_blocks(cpu, F16cBlock::<false> { m8, mv }, w, row, c0, out);
    }
}

/// Whether a row with BF16 multiplier `m` rounds its BF16 words by Veltkamp's split
/// (`ChunkOut::words16_split`): `m` is zero or of magnitude `2^-117 ..= 2^100`, the range in
/// which the split was checked on every product (`dequant::tests`).
pub(crate) fn split_rounds(m: f32) -> bool {
    const TWO_M117: f32 = f32::from_bits((127 - 117) << 23);
    const TWO_P100: f32 = f32::from_bits((127 + 100) << 23);
    m == 0.0 || (TWO_M117..=TWO_P100).contains(&m.abs())
}

/// How a row dequantizer decodes 32 FP8 codes (a trait, not a closure: a closure is not
/// inlined into the `target_feature` context).
trait Fp8Block: Copy {
    /// The 32 values of code bytes `b` into `d`, 16 at a time ([`ChunkOut::words16`]).
    fn block<T: ChunkOut>(self, cpu: T::Cpu, b: &[u8; 32], d: &mut [T; 32]);
}

/// [`dequant_row_f16c`]'s block: through binary16 ([`decode32_f16c`], times `m8 = m 2^8`), or,
/// with a NaN word among the 32, the integer route ([`int32_times`], times `mv = m`); the
/// output words by [`ChunkOut::words16_split`] where `SPLIT` (the row's multiplier keeps every
/// product in its range), else [`ChunkOut::words16`]. Only used inside [`dequant_row_f16c`]
/// (F16C).
#[derive(Clone, Copy)]
struct F16cBlock<const SPLIT: bool> {
    m8: __m256,
    mv: __m256,
}

impl<const SPLIT: bool> Fp8Block for F16cBlock<SPLIT> {
    #[inline(always)]
    fn block<T: ChunkOut>(self, cpu: T::Cpu, b: &[u8; 32], d: &mut [T; 32]) {
        let s = T::v3(cpu);
        let (avx, avx2) = (s.avx, s.avx2);
        let v: __m256i = pulp::cast(*b);
        // `b + b` is `0xfe` exactly for a NaN word (see `rows_v3_nb`).
        let fe = avx._mm256_set1_epi8(0xfeu8 as i8);
        let nan = avx2._mm256_movemask_epi8(avx2._mm256_cmpeq_epi8(avx2._mm256_add_epi8(v, v), fe)) != 0;
        let q: [__m256; 4] = if nan {
            pulp::cast(int32_times(s, b, self.mv))
        } else {
            let wv = decode32_f16c(s, v);
            [
                avx._mm256_mul_ps(wv[0], self.m8),
                avx._mm256_mul_ps(wv[1], self.m8),
                avx._mm256_mul_ps(wv[2], self.m8),
                avx._mm256_mul_ps(wv[3], self.m8),
            ]
        };
        let d: &mut [[T; 16]; 2] = pulp::bytemuck::cast_mut(d);
        if SPLIT {
            d[0] = T::words16_split(cpu, q[0], q[1]);
            d[1] = T::words16_split(cpu, q[2], q[3]);
        } else {
            d[0] = T::words16(cpu, q[0], q[1]);
            d[1] = T::words16(cpu, q[2], q[3]);
        }
    }
}

/// [`dequant_row_v3`]'s block: the integer route ([`int32_times`], times `mv = m`).
#[derive(Clone, Copy)]
struct IntBlock {
    mv: __m256,
}

impl Fp8Block for IntBlock {
    #[inline(always)]
    fn block<T: ChunkOut>(self, cpu: T::Cpu, b: &[u8; 32], d: &mut [T; 32]) {
        let q: [__m256; 4] = pulp::cast(int32_times(T::v3(cpu), b, self.mv));
        let d: &mut [[T; 16]; 2] = pulp::bytemuck::cast_mut(d);
        d[0] = T::words16(cpu, q[0], q[1]);
        d[1] = T::words16(cpu, q[2], q[3]);
    }
}

/// An FP8 row from chunk `c0` on, 32 codes at a time decoded by `dec` straight into `out`; the
/// last `K % 32` from a zero-padded copy (nothing is read past the row, and only the row's
/// values are written). Every cache line of the code bytes is prefetched
/// [`prefetch::DEQUANT_AHEAD`] bytes ahead.
#[inline(always)]
fn row_blocks<T: ChunkOut, D: Fp8Block>(
    cpu: T::Cpu,
    dec: D,
    w: &Weights<'_>,
    row: usize,
    c0: usize,
    out: &mut [T],
) {
    let Weights::Fp8 { k, codes, .. } = *w else {
        return;
    };
    let base = row * k + CHUNK * c0;
    let rc = &codes[base..base + out.len()];
    let (o32, orest) = out.as_chunks_mut::<32>();
    let (b32, brest) = rc.as_chunks::<32>();
    for (i, (o, b)) in o32.iter_mut().zip(b32).enumerate() {
        if i % 2 == 0 {
            prefetch::line(b.as_ptr().wrapping_add(prefetch::DEQUANT_AHEAD));
        }
        dec.block(cpu, b, o);
    }
    if !orest.is_empty() {
        let mut pb = [0u8; 32];
        pb[..brest.len()].copy_from_slice(brest);
        let mut buf = [T::default(); 32];
        dec.block(cpu, &pb, &mut buf);
        let n = orest.len();
        orest.copy_from_slice(&buf[..n]);
    }
}

/// 32 E4M3FN words by the integer route ([`decode8_v3`]), each value times `m` (one rounding).
#[inline(always)]
fn int32_times(s: pulp::x86::V3, b: &[u8; 32], m: __m256) -> [[f32; 8]; 4] {
    let q: [u64; 4] = pulp::cast(*b);
    let mut out = [[0f32; 8]; 4];
    for (d, &q) in out.iter_mut().zip(&q) {
        *d = pulp::cast(s.avx._mm256_mul_ps(decode8_v3(s, pulp::cast([q, 0u64])), m));
    }
    out
}

/// Dequantize one FP8 row (AVX2; `V4` runs it too; [`ChunkOut`]: to f32, or to BF16 words
/// rounded 16 at a time), bit-identical to the generic decoder: each byte's exact E4M3FN value
/// ([`e4m3fn_lanes_v3`]) times the row's BF16 multiplier (one correctly rounded IEEE
/// multiplication, section 3.4). `out` holds the row's positions from chunk `c0` on
/// (`128 c0..`): its length is a multiple of 128, or reaches K; a partial last block of 32 is
/// decoded from a zero-padded copy (nothing is read past the row).
#[inline(always)]
pub(crate) fn dequant_row_v3<T: ChunkOut>(
    cpu: T::Cpu,
    w: &Weights<'_>,
    row: usize,
    c0: usize,
    out: &mut [T],
) {
    let crate::weights::Post::Mul(m) = w.post(row) else {
        return;
    };
    let dec = IntBlock {
        mv: T::v3(cpu).avx._mm256_set1_ps(m),
    };
    row_blocks(cpu, dec, w, row, c0, out);
}
