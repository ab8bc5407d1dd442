//! The `I8` profile's x86 fast path for the row-split formats (Q4/Q5/Q6/W8), AVX2 (`V3`) and
//! AVX-512BW (`V4`): the codes are decoded straight from the chunk bytes in registers (no
//! staging through a stack array), following the split-half order (layouts.md, "Why the
//! split-half order"):
//!
//! - the nibble plane gives each 32-position activation block (AVX2) or each 64-position group
//!   (AVX-512) with one `and 0x0f`, or one 16-bit shift by 4 and the same mask;
//! - Q5/Q6 high-plane bits are moved to bit 4 (bits 4..5) with one per-32-bit-lane variable
//!   shift (`sllv`/`srlv`, a different count per 16- or 32-byte run) and a mask;
//! - instead of sign-extending, the codes are offset to unsigned: `u' = u ^ 2^(b-1) = q + 2^(b-1)`
//!   (flipping the top bit of each word: `xor 0x88` on nibble bytes, the complement of the Q5
//!   high plane, `xor 0xAA` on the Q6 one), so `maddubs(u', xq)` computes `sum (q + o) xq`
//!   without saturation (`2 * 63 * 127 < 2^15`), and the exact integer correction
//!   `-o * sum xq` is subtracted (on AVX2 from the block totals, eight blocks at a time, as
//!   `sum xq << log2 o` from the staging's block sums; on AVX-512 made in registers from the
//!   same activation codes, a `vpdpbusd` or `maddubs` + `madd` per half shared by the weight
//!   rows of a pass): the i32 block sums are exactly `sum q xq`, as in the generic kernel;
//! - W8 codes span [-127, 127] (`u'` would saturate `maddubs`): `maddubs(|xq|, sign(q, xq))`.
//! - On AVX2 cores with AVX-VNNI each block takes one `vpdpbusd` in place of the `maddubs`
//!   steps ([`rows_v3_vnni`]; the same integers, so the same bits).
//! - On AVX2 cores with GFNI, Q5/Q6 high nibbles and high-plane bits (complement included) come
//!   from one affine bit transform each ([`decode_v3_gfni`], [`rows_v3_gfni`],
//!   [`rows_v3_vnni_gfni`]; the same bytes, so the same bits).
//!
//! The activations are read as codes and one step per block only (1 byte + 1/8 of a float per
//! position: at K = 8192 they stay in the L1 cache while the weights stream past).
//!
//! **The float part, AVX-512** is the generic kernel's, operation for operation: per 32-position
//! block one product `s_g * d_b` and one FMA of the converted i32 lanes into the accumulator of
//! that block's position in the chunk (2 accumulators), then the same fixed reduction. The
//! integer sums being exact, the result is bit-identical to [`super::i8::rows`] with
//! [`super::i8::V4I8`], for every batch size and thread count (tested in `gemv/x86_tests.rs`).
//!
//! **The float part, AVX2: block totals.** Converting and multiply-adding every i32 lane of
//! every block (a product, a conversion and an FMA per block, all on Intel's ports 0 and 1 with
//! the `maddubs` and `madd`) left the kernel instruction-bound. Instead each block's lanes are
//! summed first: the kernel takes two chunks (eight blocks) at a time, reduces the eight i32
//! vectors to one vector whose lane j is the exact integer dot `T_j` of block j (for Q4/Q5/Q6
//! the first step is a `hadd_epi16` of two blocks' `maddubs` lanes before the widening `madd`,
//! one `madd` per two blocks — two such lanes sum to at most `2 * 2 * 63 * 127 < 2^15`; then
//! `hadd_epi32` steps and a cross-half add; Q4/Q5, whose codes stop at 31, take a second
//! `hadd_epi16` level in place of the `hadd_epi32` step, four lanes summing to at most
//! `4 * 2 * 31 * 127 < 2^15`, and one `madd` per four blocks: session 14, AMD EPYC (Zen 3),
//! medians of 7 alternations, one thread, 256 x 8192 cache-resident, G weights/s, Q4 24.16 ->
//! 25.46, Q5 19.20 -> 19.56; 8192 x 8192 from memory, medians of 5, one / two threads, Q4 21.51
//! / 35.43 -> 22.79 / 40.53, Q5 17.10 / 22.40 -> 18.00 / 32.11 (the two-thread figures in the
//! host's noise; `x86_tests::v3_i8_block_totals_hold_at_the_largest_dots` checks the i16 bound
//! at the largest codes and activation codes), subtracts the
//! offset corrections of the eight blocks at once (`o * sum xq`, summed once per call by the
//! staging, [`QuantAct::bsum`]), converts (exact: `|T_j| < 2^24`) and does one FMA
//! `lane_j += T_j * (s_j * d_j)` with the eight block scales and steps as vectors. A missing
//! second chunk (an odd chunk count) is eight zero blocks with zero scales and steps; the row
//! result is [`tree8`] of the eight lanes. This order is written plainly in
//! `x86_tests::v3_block_order` from the generic decoder, and the kernel is bit-identical to it
//! for every scheme, batch size 1..=8 and K from 1 to 4097. It meets the `I8` criterion (the
//! same roundings per block: one product, one FMA, then additions). Xeon (Emerald Rapids), AVX2,
//! one thread, 256 x 8192 (L2-resident), medians of 3, G weights/s: Q4 23.3 -> 29.1, Q5 18.2 ->
//! 21.6, Q6 19.2 -> 22.9, W8 20.3 -> 25.1. (`V3_512b` runs this kernel too.)
//!
//! **Shape of the loops.** Each kernel is monomorphised over the scheme and the batch size
//! (`by_scheme_and_batch!`), so the decode has no branch and the accumulators are registers.
//! Both kernels do several weight rows per pass from parts of the thread's row block far apart
//! (several sequential weight streams). AVX-512, sharing every activation load and correction
//! between the rows of a pass: for one batch row, four rows from the four quarters of the
//! block, for two batch rows two (the two halves). Far apart matters: two adjacent rows per pass
//! gave 28 G weights/s for Q4 8192x8192 from memory on one thread, four quarters give 36 (the
//! cache-resident rate); W8 11 -> 17. AVX2, for one batch row, two streams ([`V3_STREAMS`]),
//! interleaved a chunk pair at a time (only the accumulators are doubled: the 16 registers
//! held two decoded rows badly): 8192x8192 from memory, two threads, medians of 3, G weights/s:
//! Q4 42.2 -> 45.8, Q5 32.4 -> 34.5, Q6 30.3 -> 31.7 (four streams: no better on that host,
//! an Emerald Rapids with a 260 MiB L3). On session 10's host (2 MiB L2 per core, 480 MiB
//! L3) four streams ([`V3_STREAMS_FAR`]) were faster from memory and slower in L2, so the
//! dispatch takes four where a thread's row block has at least [`FAR_BYTES`] of codes, each
//! stream count compiled as a function of its own ([`rows_v3_streams`], [`rows_v3_vnni`]):
//! medians of 3 alternations, G weights/s, 8192x8192 from memory, one and two threads: Q4
//! 23.23 -> 25.78 and 45.49 -> 50.36, Q5 18.77 -> 18.97 and 35.40 -> 37.12, Q6 16.49 ->
//! 17.06 and 32.09 -> 32.90, W8 12.40 -> 12.77 and 23.85 -> 24.95; four streams everywhere
//! cost 4-9% in L2 (256x8192, one thread: Q4 28.73 -> 27.46, Q6 24.62 -> 22.89, W8 24.55 ->
//! 22.23). On AMD cores the AVX2 kernel takes one stream whatever the block ([`amd_cores`]):
//! on the AVX2-only AMD EPYC (Zen 3) of sessions 14-16 two and four streams were slower than
//! one, from memory by a fifth (two threads, Q4 44.1 -> 54.8 G weights/s, session 16). Each chunk's
//! bytes are software-prefetched one row ahead in its stream: measured 12 -> 15 GB/s from memory
//! on one thread against a fixed 4 KiB distance (two rows ahead: no better). Every line of the
//! chunk's span is prefetched (`prefetch::span`; one prefetch per chunk missed every other line
//! of a 128-byte W8 chunk and every third of a 96-byte Q6 one): Xeon (Emerald Rapids), 8192x8192
//! from memory, one thread, medians of 3 alternations, G weights/s: AVX2 W8 10.05 -> 12.01 (two
//! threads 20.0 -> 23.6), AVX-512 W8 12.28 -> 13.70, Q6 17.36 -> 18.64, Q5 20.99 -> 21.94.
//!
//! Tried in session 14 (AMD EPYC, Zen 3, AVX2 only) and dropped: the block scales converted
//! eight at a time in registers (the operations of `f16_to_f32_branchless` lane for lane, then
//! a lane permute for the two blocks of a group) instead of the word-at-a-time loop. One
//! thread, 256 x 8192 cache-resident, medians of 7 alternations, G weights/s: Q4 24.09 -> 24.40,
//! Q5 18.35 -> 19.06, Q6 19.27 -> 19.06, W8 20.44 -> 20.11, within the host's noise (leaving
//! the scales out altogether gave Q4 26.1); the same conversion in the AVX2 row-split `F32`
//! kernels was slower (5 alternations: Q4 14.20 -> 13.20, Q5 12.96 -> 12.27, Q6 13.02 -> 12.26).

use core::arch::x86_64::{__m256, __m256i, __m512i};

use ninfer_core::registry::Grouped;

use super::i8::{tree8, I8Job, QuantAct};
use super::store_rows;
use crate::weights::{f16_to_f32_branchless, Weights, CHUNK};

/// Load 32 bytes (an unaligned load after inlining).
#[inline(always)]
fn ld32(b: &[u8]) -> __m256i {
    let a: &[u8; 32] = b[..32].try_into().unwrap_or(&[0; 32]);
    pulp::cast(*a)
}

/// Load 64 bytes.
#[inline(always)]
fn ld64(b: &[u8]) -> __m512i {
    let a: &[u8; 64] = b[..64].try_into().unwrap_or(&[0; 64]);
    pulp::cast(*a)
}

/// Load 16 bytes.
#[inline(always)]
fn ld16(b: &[u8]) -> core::arch::x86_64::__m128i {
    let a: &[u8; 16] = b[..16].try_into().unwrap_or(&[0; 16]);
    pulp::cast(*a)
}

/// The row's group scales as exact binary32 into `out` (`gp` values).
#[inline(always)]
pub(crate) fn row_scales(scales: &[u8], row: usize, gp: usize, out: &mut [f32]) {
    widen_scales(scale_row(scales, row, gp), false, None, out);
}

/// [`row_scales`], each value times `m` in the same pass (the AVX2 row-split `F32` kernel's
/// `s 2^-(32 - b)`: with `m` a power of two the product is exact unless it leaves the normal
/// range). Before session 17 that kernel multiplied in a second pass over the row's scales:
/// AMD EPYC (Zen 3), one thread, 1024x8192 in L3, medians of 5 alternations, G weights/s, Q4
/// 16.59 -> 16.89, Q5 13.43 -> 13.62, Q6 14.18 -> 14.28.
#[inline(always)]
pub(crate) fn row_scales_times(scales: &[u8], row: usize, gp: usize, m: f32, out: &mut [f32]) {
    widen_scales(scale_row(scales, row, gp), false, Some(m), out);
}

/// Groups `g0..g0 + out.len()` of [`row_scales_times`]: a span of the row's scales.
pub(crate) fn row_scales_span(scales: &[u8], row: usize, gp: usize, g0: usize, m: f32, out: &mut [f32]) {
    let r = &scales[2 * row * gp..2 * (row + 1) * gp];
    widen_scales(&r[2 * g0..2 * (g0 + out.len())], false, Some(m), out);
}

/// binary16 scale bytes `s` (little-endian words) as exact binary32 into `out`, each value
/// once or (`twice`) in two consecutive entries, as many as `out` holds; times `m` (one
/// rounded multiplication) where given. With F16C (detected
/// per call; the result is cached by `std`) eight words at a time by `vcvtph2ps`
/// ([`widen_scales_f16c`]), else word by word ([`f16_to_f32_branchless`]): the same values
/// (both exact; a NaN stays a NaN). Called once per weight row, so the detection and the call
/// cost nothing next to the row; the conversion itself did: with the word loop, 13% of the
/// time of the AVX2 `I8` Q4 kernel in L3 (session 16, AMD EPYC, `perf` samples).
#[inline(always)]
fn widen_scales(s: &[u8], twice: bool, m: Option<f32>, out: &mut [f32]) {
    if std::arch::is_x86_feature_detected!("f16c") {
        // SAFETY: F16C was detected just above; AVX with it (every CPU with F16C has AVX, and
        // the callers run under the `V3` or `V4` token, which proves it).
        unsafe { widen_scales_f16c(s, twice, m, out) }
    } else {
        widen_scales_words(s, twice, m, out)
    }
}

/// [`widen_scales`] word by word.
#[inline(always)]
fn widen_scales_words(s: &[u8], twice: bool, m: Option<f32>, out: &mut [f32]) {
    let per = if twice { 2 } else { 1 };
    for (o, b) in out.chunks_exact_mut(per).zip(s.chunks_exact(2)) {
        let v = f16_to_f32_branchless(u16::from_le_bytes([b[0], b[1]]));
        o.fill(m.map_or(v, |m| v * m));
    }
}

/// [`widen_scales`] with F16C: eight words per `vcvtph2ps`, duplicated in place by two unpacks
/// and two 128-bit permutes (`twice`); the tail word by word.
///
/// # Safety
/// The CPU must have AVX and F16C.
#[target_feature(enable = "avx,f16c")]
unsafe fn widen_scales_f16c(s: &[u8], twice: bool, m: Option<f32>, out: &mut [f32]) {
    use core::arch::x86_64::{
        __m128i, _mm256_cvtph_ps, _mm256_mul_ps, _mm256_permute2f128_ps, _mm256_set1_ps, _mm256_unpackhi_ps,
        _mm256_unpacklo_ps,
    };
    let per = if twice { 2 } else { 1 };
    let n = (s.len() / 2).min(out.len() / per);
    let full = n / 8;
    for i in 0..full {
        let w: &[u8; 16] = s[16 * i..16 * i + 16].try_into().unwrap_or(&[0; 16]);
        let mut v = _mm256_cvtph_ps(pulp::cast::<[u8; 16], __m128i>(*w));
        if let Some(m) = m {
            v = _mm256_mul_ps(v, _mm256_set1_ps(m));
        }
        if twice {
            let (lo, hi) = (_mm256_unpacklo_ps(v, v), _mm256_unpackhi_ps(v, v));
            let o: [__m256; 2] = [
                _mm256_permute2f128_ps::<0x20>(lo, hi),
                _mm256_permute2f128_ps::<0x31>(lo, hi),
            ];
            let o: [f32; 16] = pulp::cast(o);
            out[16 * i..16 * i + 16].copy_from_slice(&o);
        } else {
            let o: [f32; 8] = pulp::cast(v);
            out[8 * i..8 * i + 8].copy_from_slice(&o);
        }
    }
    widen_scales_words(&s[16 * full..], twice, m, &mut out[8 * per * full..]);
}

/// The binary16 scale bytes of `row` (`gp` groups), with a software prefetch of the next row's,
/// which follow them in the scale plane (a stream of its own beside the codes; the next row is
/// the next pass's row in the same weight stream). Every row-split kernel on x86 reads its
/// scales through [`row_scales`] or [`block_scales`], both through this, so all of them
/// prefetch. Session 11's host, 8192x8192
/// from memory, medians of 4 (AVX2) and 3 (AVX-512) alternations, G weights/s, two threads:
/// AVX2 `I8` Q4 56.2 -> 57.1, Q6 37.9 -> 38.6, W8 27.9 -> 28.4 (Q5 42.0 -> 41.4, one thread
/// 21.6 -> 21.8); AVX-512 `I8` Q4 58.4 -> 60.0, Q5 46.2 -> 47.3, Q6 38.9 -> 40.3, W8 28.1 ->
/// 28.8; the `F32` rows moved both ways within the host's noise.
#[inline(always)]
fn scale_row(scales: &[u8], row: usize, gp: usize) -> &[u8] {
    let s = &scales[2 * row * gp..2 * (row + 1) * gp];
    crate::prefetch::span(s.as_ptr().wrapping_add(s.len()), s.len());
    s
}

/// The code offset `2^(b-1)` of Q4/Q5/Q6 (W8: 0, it uses the sign trick instead).
#[inline(always)]
pub(crate) const fn offset(g: Grouped) -> i8 {
    match g {
        Grouped::Q4 => 8,
        Grouped::Q5 => 16,
        Grouped::Q6 => 32,
        Grouped::W8 => 0,
    }
}

/// Whether the fast path takes this job (row-split formats).
pub(crate) fn takes(w: &Weights<'_>) -> bool {
    matches!(w, Weights::Grouped { .. })
}

/// AVX2: decoded chunk, four 32-byte blocks: offset codes `u'` (Q4/Q5/Q6) or signed q (W8).
#[inline(always)]
pub(crate) fn decode_v3(s: pulp::x86::V3, g: Grouped, chunk: &[u8]) -> [__m256i; 4] {
    let (avx, avx2) = (s.avx, s.avx2);
    let m0f = avx._mm256_set1_epi8(0x0f);
    match g {
        Grouped::W8 => [
            ld32(chunk),
            ld32(&chunk[32..]),
            ld32(&chunk[64..]),
            ld32(&chunk[96..]),
        ],
        Grouped::Q4 => {
            let f = avx._mm256_set1_epi8(0x88u8 as i8);
            let v0 = avx2._mm256_xor_si256(ld32(chunk), f);
            let v1 = avx2._mm256_xor_si256(ld32(&chunk[32..]), f);
            [
                avx2._mm256_and_si256(v0, m0f),
                avx2._mm256_and_si256(v1, m0f),
                avx2._mm256_and_si256(avx2._mm256_srli_epi16::<4>(v0), m0f),
                avx2._mm256_and_si256(avx2._mm256_srli_epi16::<4>(v1), m0f),
            ]
        }
        Grouped::Q5 => {
            let (v0, v1) = (ld32(chunk), ld32(&chunk[32..]));
            let nib = [
                avx2._mm256_and_si256(v0, m0f),
                avx2._mm256_and_si256(v1, m0f),
                avx2._mm256_and_si256(avx2._mm256_srli_epi16::<4>(v0), m0f),
                avx2._mm256_and_si256(avx2._mm256_srli_epi16::<4>(v1), m0f),
            ];
            // Block b holds runs t = 2b (low 16 bytes) and 2b + 1 (high 16 bytes); bit t of the
            // high plane goes to bit 4, complemented (the offset `^ 16`).
            let h = avx2._mm256_broadcastsi128_si256(ld16(&chunk[64..]));
            let hn = avx2._mm256_xor_si256(h, avx._mm256_set1_epi8(-1));
            let m10 = avx._mm256_set1_epi8(0x10);
            let cnt = |a: i32, b: i32| avx._mm256_setr_epi32(a, a, a, a, b, b, b, b);
            let hb = [
                avx2._mm256_sllv_epi32(hn, cnt(4, 3)),
                avx2._mm256_sllv_epi32(hn, cnt(2, 1)),
                avx2._mm256_srlv_epi32(hn, cnt(0, 1)),
                avx2._mm256_srlv_epi32(hn, cnt(2, 3)),
            ];
            [
                avx2._mm256_or_si256(nib[0], avx2._mm256_and_si256(hb[0], m10)),
                avx2._mm256_or_si256(nib[1], avx2._mm256_and_si256(hb[1], m10)),
                avx2._mm256_or_si256(nib[2], avx2._mm256_and_si256(hb[2], m10)),
                avx2._mm256_or_si256(nib[3], avx2._mm256_and_si256(hb[3], m10)),
            ]
        }
        Grouped::Q6 => {
            let (v0, v1) = (ld32(chunk), ld32(&chunk[32..]));
            let nib = [
                avx2._mm256_and_si256(v0, m0f),
                avx2._mm256_and_si256(v1, m0f),
                avx2._mm256_and_si256(avx2._mm256_srli_epi16::<4>(v0), m0f),
                avx2._mm256_and_si256(avx2._mm256_srli_epi16::<4>(v1), m0f),
            ];
            // Block b = run p: bits 2p, 2p + 1 to bits 4, 5; bit 5 flipped (the offset `^ 32`).
            let h = avx2._mm256_xor_si256(ld32(&chunk[64..]), avx._mm256_set1_epi8(0xaau8 as i8));
            let m30 = avx._mm256_set1_epi8(0x30);
            let hb = [
                avx2._mm256_slli_epi16::<4>(h),
                avx2._mm256_slli_epi16::<2>(h),
                h,
                avx2._mm256_srli_epi16::<2>(h),
            ];
            [
                avx2._mm256_or_si256(nib[0], avx2._mm256_and_si256(hb[0], m30)),
                avx2._mm256_or_si256(nib[1], avx2._mm256_and_si256(hb[1], m30)),
                avx2._mm256_or_si256(nib[2], avx2._mm256_and_si256(hb[2], m30)),
                avx2._mm256_or_si256(nib[3], avx2._mm256_and_si256(hb[3], m30)),
            ]
        }
    }
}

/// [`decode_v3`], or with `GFNI` (only inside [`rows_v3_gfni`] and [`rows_v3_vnni_gfni`])
/// [`decode_v3_gfni`].
#[inline(always)]
fn decode_by<const GFNI: bool>(s: pulp::x86::V3, g: Grouped, chunk: &[u8]) -> [__m256i; 4] {
    if GFNI {
        // SAFETY: `GFNI` is only true inside `rows_v3_gfni` and `rows_v3_vnni_gfni`, whose
        // callers guarantee GFNI.
        unsafe { decode_v3_gfni(s, g, chunk) }
    } else {
        decode_v3(s, g, chunk)
    }
}

/// The 8x8 bit matrix of a GFNI affine transform (`vgf2p8affineqb`, 64 bits per matrix) that
/// sets bit `j` of each output byte to bit `from[j]` of the input byte, or to 0 where
/// `from[j]` is negative: output bit `j` is the parity of the input byte AND matrix byte
/// `7 - j`.
pub(crate) const fn bit_matrix(from: [i8; 8]) -> i64 {
    let mut m = [0u8; 8];
    let mut j = 0;
    while j < 8 {
        if from[j] >= 0 {
            m[7 - j] = 1 << from[j];
        }
        j += 1;
    }
    i64::from_le_bytes(m)
}

/// The high nibble of each byte to its low nibble, the rest zero.
const HIGH_NIBBLE: i64 = bit_matrix([4, 5, 6, 7, -1, -1, -1, -1]);

/// [`decode_v3`] for Q5 and Q6 (other schemes: [`decode_v3`] itself) with GFNI: the high
/// nibbles and the high-plane bits, complemented as the offset asks (`^ 16`, `^ 32`), each by
/// one affine transform (a bit matrix per 64-bit lane and a constant XOR) in place of shifts,
/// masks and the XOR: 12 operations per chunk instead of 19 (Q5). The same bytes (tested over
/// every pair of plane bytes, `gfni_decode_gives_the_same_offset_codes`).
///
/// # Safety
/// The CPU must have GFNI (and the `V3` features, which the token proves).
#[inline(always)]
pub(crate) unsafe fn decode_v3_gfni(s: pulp::x86::V3, g: Grouped, chunk: &[u8]) -> [__m256i; 4] {
    use core::arch::x86_64::_mm256_gf2p8affine_epi64_epi8 as affine;
    let (avx, avx2) = (s.avx, s.avx2);
    let m0f = avx._mm256_set1_epi8(0x0f);
    let (v0, v1) = (ld32(chunk), ld32(&chunk[32..]));
    let hn = avx._mm256_set1_epi64x(HIGH_NIBBLE);
    // SAFETY: the caller guarantees GFNI; AVX is a `V3` feature.
    let nib = unsafe {
        [
            avx2._mm256_and_si256(v0, m0f),
            avx2._mm256_and_si256(v1, m0f),
            affine::<0>(v0, hn),
            affine::<0>(v1, hn),
        ]
    };
    let top: [__m256i; 4] = match g {
        Grouped::Q5 => {
            // Block b: runs 2b (low 128-bit lane) and 2b + 1 (high) of the broadcast 16-byte
            // high plane, bit t to bit 4, complemented.
            let h = avx2._mm256_broadcastsi128_si256(ld16(&chunk[64..]));
            let [m0, m1, m2, m3] = Q5_SIGN_I8;
            // SAFETY: as above.
            unsafe {
                [
                    affine::<0x10>(h, avx._mm256_setr_epi64x(m0[0], m0[0], m0[1], m0[1])),
                    affine::<0x10>(h, avx._mm256_setr_epi64x(m1[0], m1[0], m1[1], m1[1])),
                    affine::<0x10>(h, avx._mm256_setr_epi64x(m2[0], m2[0], m2[1], m2[1])),
                    affine::<0x10>(h, avx._mm256_setr_epi64x(m3[0], m3[0], m3[1], m3[1])),
                ]
            }
        }
        Grouped::Q6 => {
            // Block b = run p: bits 2p, 2p + 1 to bits 4, 5, bit 5 complemented.
            let h = ld32(&chunk[64..]);
            // SAFETY: as above.
            unsafe {
                [
                    affine::<0x20>(h, avx._mm256_set1_epi64x(Q6_TOP_I8[0])),
                    affine::<0x20>(h, avx._mm256_set1_epi64x(Q6_TOP_I8[1])),
                    affine::<0x20>(h, avx._mm256_set1_epi64x(Q6_TOP_I8[2])),
                    affine::<0x20>(h, avx._mm256_set1_epi64x(Q6_TOP_I8[3])),
                ]
            }
        }
        _ => return decode_v3(s, g, chunk),
    };
    [
        avx2._mm256_or_si256(nib[0], top[0]),
        avx2._mm256_or_si256(nib[1], top[1]),
        avx2._mm256_or_si256(nib[2], top[2]),
        avx2._mm256_or_si256(nib[3], top[3]),
    ]
}

/// Per Q5 block `b`, the matrices of its low and high 128-bit lanes: bit `2b`, resp. `2b + 1`,
/// of each byte to bit 4 ([`decode_v3_gfni`]).
const Q5_SIGN_I8: [[i64; 2]; 4] = {
    let mut m = [[0; 2]; 4];
    let mut t = 0;
    while t < 8 {
        m[t / 2][t % 2] = bit_matrix([-1, -1, -1, -1, t as i8, -1, -1, -1]);
        t += 1;
    }
    m
};

/// Per Q6 block `p`: bits `2p` and `2p + 1` of each byte to bits 4 and 5 ([`decode_v3_gfni`]).
const Q6_TOP_I8: [i64; 4] = {
    let mut m = [0; 4];
    let mut p = 0;
    while p < 4 {
        m[p] = bit_matrix([-1, -1, -1, -1, 2 * p as i8, 2 * p as i8 + 1, -1, -1]);
        p += 1;
    }
    m
};

/// AVX-512: decoded chunk, two 64-byte halves (one Q4/Q5/Q6 group each, two W8 groups each).
#[inline(always)]
pub(crate) fn decode_v4(s: pulp::x86::V4, g: Grouped, chunk: &[u8]) -> [__m512i; 2] {
    let (f, bw) = (s.avx512f, s.avx512bw);
    let m0f = f._mm512_set1_epi8(0x0f);
    match g {
        Grouped::W8 => [ld64(chunk), ld64(&chunk[64..])],
        Grouped::Q4 => {
            let v = f._mm512_xor_si512(ld64(chunk), f._mm512_set1_epi8(0x88u8 as i8));
            [
                f._mm512_and_si512(v, m0f),
                f._mm512_and_si512(bw._mm512_srli_epi16::<4>(v), m0f),
            ]
        }
        Grouped::Q5 => {
            let v = ld64(chunk);
            let nib = [
                f._mm512_and_si512(v, m0f),
                f._mm512_and_si512(bw._mm512_srli_epi16::<4>(v), m0f),
            ];
            // 128-bit lane t of group 0 is run t (bit t to bit 4), of group 1 run 4 + t.
            let h = f._mm512_broadcast_i32x4(ld16(&chunk[64..]));
            let hn = f._mm512_xor_si512(h, f._mm512_set1_epi8(-1));
            let m10 = f._mm512_set1_epi8(0x10);
            let c0 = f._mm512_setr_epi32(4, 4, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1);
            let c1 = f._mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
            let hb = [f._mm512_sllv_epi32(hn, c0), f._mm512_srlv_epi32(hn, c1)];
            [
                f._mm512_or_si512(nib[0], f._mm512_and_si512(hb[0], m10)),
                f._mm512_or_si512(nib[1], f._mm512_and_si512(hb[1], m10)),
            ]
        }
        Grouped::Q6 => {
            let v = ld64(chunk);
            let nib = [
                f._mm512_and_si512(v, m0f),
                f._mm512_and_si512(bw._mm512_srli_epi16::<4>(v), m0f),
            ];
            // 256-bit half p' of group h is run p = 2h + p'.
            let h = f._mm512_broadcast_i64x4(ld32(&chunk[64..]));
            let h = f._mm512_xor_si512(h, f._mm512_set1_epi8(0xaau8 as i8));
            let m30 = f._mm512_set1_epi8(0x30);
            let c0 = f._mm512_setr_epi32(4, 4, 4, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2, 2, 2, 2);
            let c1 = f._mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2);
            let hb = [f._mm512_sllv_epi32(h, c0), f._mm512_srlv_epi32(h, c1)];
            [
                f._mm512_or_si512(nib[0], f._mm512_and_si512(hb[0], m30)),
                f._mm512_or_si512(nib[1], f._mm512_and_si512(hb[1], m30)),
            ]
        }
    }
}

/// The grouped scheme with const id `G` (0..3: Q4, Q5, Q6, W8).
#[inline(always)]
pub(crate) const fn grouped(g: u8) -> Grouped {
    match g {
        0 => Grouped::Q4,
        1 => Grouped::Q5,
        2 => Grouped::Q6,
        _ => Grouped::W8,
    }
}

/// Monomorphise a row kernel `$k::<..., G, NB>` over the scheme and the batch size (1, 2, up
/// to 4, up to [`MAX_BATCH`](crate::MAX_BATCH)): with both constant, the decode has no branch and the
/// accumulators are registers.
macro_rules! by_scheme_and_batch {
    ($g:expr, $nb:expr, $k:ident [ $($c:tt),* ] ( $($a:expr),* )) => {{
        macro_rules! nb {
            ($G:expr) => {
                match $nb {
                    1 => $k::<$($c,)* $G, 1>($($a),*),
                    2 => $k::<$($c,)* $G, 2>($($a),*),
                    3 | 4 => $k::<$($c,)* $G, 4>($($a),*),
                    _ => $k::<$($c,)* $G, { crate::MAX_BATCH }>($($a),*),
                }
            };
        }
        match $g {
            Grouped::Q4 => nb!(0),
            Grouped::Q5 => nb!(1),
            Grouped::Q6 => nb!(2),
            Grouped::W8 => nb!(3),
        }
    }};
}

/// The AVX2 row loop (see the module docs), `nb` batch rows, with `R` weight streams for one
/// batch row, compiled as a function of its own (with the `V3` features): the same operations
/// per row, so the same bits for every `R`. Each stream count and dot form is its own function,
/// and [`FastV3`] only calls them: two row loops inlined into one function measured slower (in
/// L2, one thread, Q4 30.9 -> 20.5 G weights/s, session 10's host), and in a debug build each
/// of these functions takes over 1 MiB of stack (every scheme and batch size inlined, each
/// with its own slots), so two nested ones overflowed a 2 MiB thread stack.
///
/// # Safety
/// The CPU must have the `V3` features (the token proves them).
#[target_feature(enable = "avx,avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
pub(crate) unsafe fn rows_v3_streams<const R: usize>(s: pulp::x86::V3, job: I8Job<'_, '_, '_>) {
    rows_v3_by::<false, R>(s, job)
}

/// The AVX2 row loop compiled with AVX-VNNI (the VEX `vpdpbusd` of recent AVX2 cores): each
/// block's i32 lanes come from one `vpdpbusd` instead of a `maddubs`, half a `hadd_epi16` and
/// half a `madd` (the block totals then take one more `hadd_epi32` step per two blocks). The
/// same exact integer totals, so bit-identical to [`rows_v3_streams`] for every scheme (tested in
/// `gemv/x86_tests.rs`, both forms by name against `v3_block_order`).
///
/// Session 10's host (see the module docs), two weight streams, alternating with the `maddubs`
/// form, medians, G weights/s: 256x8192 (L2), one thread, 3 alternations: Q4 29.50 -> 29.91,
/// Q5 22.02 -> 23.12, Q6 24.12 -> 24.43, W8 25.42 -> 25.43. From memory (8192x8192) the
/// difference is within the noise of code placement: one and two threads, 3 alternations, Q4
/// 24.61 -> 24.98 and 47.96 -> 49.07, Q5 18.79 -> 19.79 and 38.09 -> 37.46, Q6 17.25 -> 17.24
/// and 34.60 -> 33.13, W8 12.94 -> 13.58 and 24.98 -> 25.83; Q6's two-thread loss appeared as
/// well (33.95 -> 33.11) with Q6 on the `maddubs` form compiled inside this function, so it is
/// not the instruction.
///
/// # Safety
/// The CPU must have the `V3` features (the token proves them) and AVX-VNNI.
#[target_feature(enable = "avx,avx2,fma,bmi1,bmi2,lzcnt,popcnt,avxvnni")]
pub(crate) unsafe fn rows_v3_vnni<const R: usize>(s: pulp::x86::V3, job: I8Job<'_, '_, '_>) {
    rows_v3_by::<true, R>(s, job)
}

#[inline(always)]
fn rows_v3_by<const VNNI: bool, const R: usize>(s: pulp::x86::V3, job: I8Job<'_, '_, '_>) {
    if let Weights::Grouped { g, .. } = job.w {
        by_scheme_and_batch!(g, job.nb, rows_v3_impl[VNNI, R, false](s, job))
    }
}

/// [`rows_v3_streams`] for Q5 and Q6 with the code bytes decoded by GFNI affine transforms
/// ([`decode_v3_gfni`]): the same bytes, so the same bits. Other weights are not taken
/// ([`gfni_takes`]). Session 30's Xeon (family 6 model 167, KVM; AVX-VNNI, so
/// [`rows_v3_vnni_gfni`] ran), `report --isa V3 --kernels gemv-i8`, G weights/s, medians of 3
/// alternations, without -> with: 8192x8192 from memory, one / two threads, Q5 20.68 / 39.99 ->
/// 22.17 / 43.48, Q6 18.70 / 36.21 -> 18.76 / 36.89; 256x8192 cache-resident, one thread (2
/// alternations), Q5 24.41 -> 26.80, Q6 24.64 -> 25.71.
///
/// # Safety
/// The CPU must have the `V3` features (the token proves them) and GFNI.
#[target_feature(enable = "avx,avx2,fma,bmi1,bmi2,lzcnt,popcnt,gfni")]
pub(crate) unsafe fn rows_v3_gfni<const R: usize>(s: pulp::x86::V3, job: I8Job<'_, '_, '_>) {
    rows_v3_by_gfni::<false, R>(s, job)
}

/// [`rows_v3_vnni`] with the GFNI decode of [`rows_v3_gfni`].
///
/// # Safety
/// The CPU must have the `V3` features (the token proves them), AVX-VNNI and GFNI.
#[target_feature(enable = "avx,avx2,fma,bmi1,bmi2,lzcnt,popcnt,avxvnni,gfni")]
pub(crate) unsafe fn rows_v3_vnni_gfni<const R: usize>(s: pulp::x86::V3, job: I8Job<'_, '_, '_>) {
    rows_v3_by_gfni::<true, R>(s, job)
}

#[inline(always)]
fn rows_v3_by_gfni<const VNNI: bool, const R: usize>(s: pulp::x86::V3, job: I8Job<'_, '_, '_>) {
    macro_rules! nb {
        ($G:expr) => {
            match job.nb {
                1 => rows_v3_impl::<VNNI, R, true, $G, 1>(s, job),
                2 => rows_v3_impl::<VNNI, R, true, $G, 2>(s, job),
                3 | 4 => rows_v3_impl::<VNNI, R, true, $G, 4>(s, job),
                _ => rows_v3_impl::<VNNI, R, true, $G, { crate::MAX_BATCH }>(s, job),
            }
        };
    }
    match job.w {
        Weights::Grouped { g: Grouped::Q5, .. } => nb!(1),
        Weights::Grouped { g: Grouped::Q6, .. } => nb!(2),
        _ => debug_assert!(false, "rows_v3_by_gfni takes Q5 and Q6 only"),
    }
}

/// Whether the AVX2 kernels for these weights take the GFNI decode: Q5 or Q6, on a CPU with
/// GFNI. `I8`: [`rows_v3_gfni`], [`rows_v3_vnni_gfni`]; `F32`: `f32x86::rows_v3_gfni`.
pub(crate) fn gfni_takes(w: &Weights<'_>) -> bool {
    matches!(
        w,
        Weights::Grouped {
            g: Grouped::Q5 | Grouped::Q6,
            ..
        }
    ) && std::arch::is_x86_feature_detected!("gfni")
}

/// The weight streams of the AVX2 kernel for `job` (one batch row; more batch rows take one
/// row at a time whatever this says): one on AMD cores ([`amd_cores`]), else [`V3_STREAMS`], or
/// [`V3_STREAMS_FAR`] where the thread's rows stream from beyond the L2 cache ([`far`]).
fn v3_streams(job: &I8Job<'_, '_, '_>) -> usize {
    if amd_cores() {
        1
    } else if far(job) {
        V3_STREAMS_FAR
    } else {
        V3_STREAMS
    }
}

/// Whether the CPU's vendor string (CPUID leaf 0) is AMD's or Hygon's (whose cores are AMD's
/// Zen), read once. On the AVX2-only AMD EPYC (Zen 3) of sessions 14-16 one weight stream beat
/// two and four, from memory by more than a fifth: session 16, 8192x8192, `report --isa V3
/// --threads 1,2`, medians of 3 alternations, one / two threads, G weights/s, two or four
/// streams -> one: Q4 23.45 / 44.07 -> 27.73 / 54.84, Q5 18.83 / 34.00 -> 20.46 / 40.33, Q6
/// 18.46 / 31.11 -> 20.36 / 38.49, W8 15.26 / 27.33 -> 16.59 / 31.01; cache-resident
/// (1024x8192, one thread, best of 2 s of calls by a timing program not kept) Q4 25.5 -> 28.6.
/// The Xeons of sessions 7-10,
/// where the streams were measured faster (see the module docs), are Intel's; no AVX2-only
/// Intel core has been measured. The NVFP4 GEMV kernels read it too (no per-chunk scale
/// prefetch on AMD cores in the AVX2 kernels, session 17, and the AVX-512 `I8` one, session 22:
/// `nvfp4x86::scale_prefetch`).
pub(crate) fn amd_cores() -> bool {
    static AMD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AMD.get_or_init(|| {
        let v = core::arch::x86_64::__cpuid(0);
        let mut id = [0u8; 12];
        for (o, w) in id.chunks_exact_mut(4).zip([v.ebx, v.edx, v.ecx]) {
            o.copy_from_slice(&w.to_le_bytes());
        }
        &id == b"AuthenticAMD" || &id == b"HygonGenuine"
    })
}

/// Whether the thread's rows of `job` stream from beyond the L2 cache ([`FAR_BYTES`]).
fn far(job: &I8Job<'_, '_, '_>) -> bool {
    match job.w {
        Weights::Grouped { rcb, .. } => (job.r1 - job.r0).saturating_mul(rcb) >= FAR_BYTES,
        _ => false,
    }
}

/// The eight i32 lanes of each of `m[0..8]` summed: lane j of the result is the total of `m[j]`.
#[inline(always)]
fn totals8(s: pulp::x86::V3, m: &[__m256i; 8]) -> __m256i {
    let avx2 = s.avx2;
    totals4(
        s,
        &[
            avx2._mm256_hadd_epi32(m[0], m[1]),
            avx2._mm256_hadd_epi32(m[2], m[3]),
            avx2._mm256_hadd_epi32(m[4], m[5]),
            avx2._mm256_hadd_epi32(m[6], m[7]),
        ],
    )
}

/// [`totals8`] after its first step: `m[i]` holds the pairwise sums of blocks `2i` and `2i + 1`
/// (`hadd_epi32` of their lanes, or the same layout from `hadd_epi16` and `madd`).
#[inline(always)]
fn totals4(s: pulp::x86::V3, m: &[__m256i; 4]) -> __m256i {
    let avx2 = s.avx2;
    // Lane j (j < 4) of `a`: the low 128 bits of block j summed; lane 4 + j: the high 128 bits.
    let a = avx2._mm256_hadd_epi32(m[0], m[1]);
    let b = avx2._mm256_hadd_epi32(m[2], m[3]);
    halves_sum(s, a, b)
}

/// The last step of the block totals: lane k of each 128-bit half of `a` holds that half of
/// block k summed, of `b` that half of block 4 + k; lane j of the result is block j's total.
#[inline(always)]
fn halves_sum(s: pulp::x86::V3, a: __m256i, b: __m256i) -> __m256i {
    let avx2 = s.avx2;
    avx2._mm256_add_epi32(
        avx2._mm256_permute2x128_si256::<0x20>(a, b),
        avx2._mm256_permute2x128_si256::<0x31>(a, b),
    )
}

/// The weight scale of every 32-position block of `row` into the first `2 * gp` (Q4/Q5/Q6) or
/// `gp` (W8) entries of `out`; the rest of `out` is left as it is (zeros in the kernel's buffer,
/// which every row writes to the same length).
#[inline(always)]
fn block_scales(g: Grouped, scales: &[u8], row: usize, gp: usize, out: &mut [f32]) {
    widen_scales(scale_row(scales, row, gp), g.group_size() == 64, None, out);
}

/// One scheme `G` ([`grouped`]), batch rows `min(nb, NB)` (exactly `NB` when `NB <= 2`).
/// `VNNI`: only true when called from [`rows_v3_vnni`]. `R`: weight streams for one batch row.
#[inline(always)]
fn rows_v3_impl<const VNNI: bool, const R: usize, const GFNI: bool, const G: u8, const NB: usize>(
    s: pulp::x86::V3,
    job: I8Job<'_, '_, '_>,
) {
    let I8Job {
        w,
        act,
        nb,
        r0,
        r1,
        ys,
    } = job;
    let Weights::Grouped {
        codes,
        scales,
        rcb,
        gp,
        ..
    } = w
    else {
        return;
    };
    let rs = Rows {
        codes,
        scales,
        rcb,
        gp,
        chunks: act.chunks,
        act,
        nb: nb.min(NB),
    };
    let mut sb = vec![0f32; R * act.bstride()];
    let mut row = match NB {
        1 => passes_v3::<VNNI, GFNI, G, NB, R>(s, rs, r0, r1, ys, &mut sb),
        _ => r0,
    };
    while row < r1 {
        let y = block_v3::<VNNI, GFNI, G, NB, 1>(s, rs, [row], &mut sb);
        store_rows(ys, r0, [row], &y, rs.nb);
        row += 1;
    }
}

/// Weight streams of the AVX2 kernel with one batch row (see the module docs) where the
/// thread's rows have fewer than [`FAR_BYTES`] code bytes.
pub(crate) const V3_STREAMS: usize = 2;

/// Weight streams of the AVX2 kernel with one batch row where the thread's rows have at least
/// [`FAR_BYTES`] code bytes (see the module docs).
pub(crate) const V3_STREAMS_FAR: usize = 4;

/// A thread's row block of at least this many code bytes, twice a core's L2 cache on the
/// cores this was measured on (2 MiB), streams from L3 or memory: there four weight streams
/// measured faster than two, in L2 slower (see the module docs).
const FAR_BYTES: usize = 4 << 20;

/// The passes of `R` weight streams over the row block `r0..r1` (as [`stream_passes`]).
#[inline(always)]
fn passes_v3<const VNNI: bool, const GFNI: bool, const G: u8, const NB: usize, const R: usize>(
    s: pulp::x86::V3,
    rs: Rows<'_>,
    r0: usize,
    r1: usize,
    ys: &mut [&mut [f32]],
    sb: &mut [f32],
) -> usize {
    let q = (r1 - r0) / R;
    for i in 0..q {
        let rows = super::stream_rows(r0, q, i);
        let y = block_v3::<VNNI, GFNI, G, NB, R>(s, rs, rows, sb);
        store_rows(ys, r0, rows, &y, rs.nb);
    }
    r0 + R * q
}

/// Weight rows `rows` (one per stream, chunk pairs interleaved) against the live batch rows:
/// `out[r][b]`.
#[inline(always)]
fn block_v3<const VNNI: bool, const GFNI: bool, const G: u8, const NB: usize, const R: usize>(
    s: pulp::x86::V3,
    rs: Rows<'_>,
    rows: [usize; R],
    sb: &mut [f32],
) -> [[f32; NB]; R] {
    let Rows {
        codes,
        scales,
        rcb,
        gp,
        chunks,
        act,
        nb,
    } = rs;
    let g = grouped(G);
    let cb = 16 * g.bits() as usize;
    let bstride = act.bstride();
    let zero = s.avx._mm256_setzero_si256();
    for (r, &row) in rows.iter().enumerate() {
        block_scales(g, scales, row, gp, &mut sb[r * bstride..(r + 1) * bstride]);
    }
    let sb = &*sb;
    let mut acc = [[s.avx._mm256_setzero_ps(); NB]; R];
    for p in 0..chunks / 2 {
        for r in 0..R {
            let at = rows[r] * rcb + 2 * p * cb;
            let two = &codes[at..at + 2 * cb];
            // One pass (one row) ahead, see the module docs.
            crate::prefetch::span(two.as_ptr().wrapping_add(rcb), 2 * cb);
            let u = [decode_by::<GFNI>(s, g, two), decode_by::<GFNI>(s, g, &two[cb..])];
            pair_v3::<VNNI, G, NB>(s, act, nb, p, u, &sb[r * bstride..], &mut acc[r]);
        }
    }
    if chunks % 2 == 1 {
        for r in 0..R {
            let at = rows[r] * rcb + (chunks - 1) * cb;
            let last = &codes[at..at + cb];
            crate::prefetch::span(last.as_ptr().wrapping_add(rcb), cb);
            let u = [decode_by::<GFNI>(s, g, last), [zero; 4]];
            pair_v3::<VNNI, G, NB>(s, act, nb, chunks / 2, u, &sb[r * bstride..], &mut acc[r]);
        }
    }
    let mut out = [[0f32; NB]; R];
    for (o, a) in out.iter_mut().zip(&acc) {
        for (y, v) in o.iter_mut().zip(a).take(nb) {
            *y = tree8(pulp::cast(*v));
        }
    }
    out
}

/// Chunk pair `p` (chunks `2p`, `2p + 1`; `u[1]` zero past the last chunk) of one weight row,
/// decoded into `u`, against `nb` batch rows: the eight block totals, each folded into lane j of
/// `acc[b]` by one multiply-add with `s_j * d_j` (see the module docs).
#[inline(always)]
fn pair_v3<const VNNI: bool, const G: u8, const NB: usize>(
    s: pulp::x86::V3,
    act: &QuantAct,
    nb: usize,
    p: usize,
    u: [[__m256i; 4]; 2],
    sb: &[f32],
    acc: &mut [__m256; NB],
) {
    let g = grouped(G);
    let (avx, avx2, fma) = (s.avx, s.avx2, s.fma);
    let w8 = g == Grouped::W8;
    let ones = avx._mm256_set1_epi16(1);
    let zero = avx._mm256_setzero_si256();
    let shift = s.sse2._mm_cvtsi32_si128(offset(g).trailing_zeros() as i32);
    let (chunks, bstride) = (act.chunks, act.bstride());
    let sv: &[f32; 8] = sb[8 * p..8 * p + 8].try_into().unwrap_or(&[0.0; 8]);
    let sv: __m256 = pulp::cast(*sv);
    for (b, a) in acc.iter_mut().enumerate().take(nb) {
        let c = b * chunks + 2 * p;
        let x0 = &act.xq[c];
        let x1 = if 2 * p + 1 < chunks {
            &act.xq[c + 1]
        } else {
            &[0; CHUNK]
        };
        let xv: [[__m256i; 4]; 2] = [pulp::cast(*x0), pulp::cast(*x1)];
        let t = if VNNI {
            // One `vpdpbusd` per block: the same exact i32 lanes as `maddubs` + `madd` (W8 as
            // `|xq|` times `sign(q, xq)`).
            let mut m = [zero; 8];
            for (j, mj) in m.iter_mut().enumerate() {
                let (uq, xq) = (u[j / 4][j % 4], xv[j / 4][j % 4]);
                let (a, b) = if w8 {
                    (avx2._mm256_abs_epi8(xq), avx2._mm256_sign_epi8(uq, xq))
                } else {
                    (uq, xq)
                };
                // SAFETY: VNNI is only true inside `rows_v3_vnni`, whose caller guarantees
                // AVX-VNNI.
                *mj = unsafe { core::arch::x86_64::_mm256_dpbusd_avx_epi32(zero, a, b) };
            }
            totals8(s, &m)
        } else if w8 {
            let mut m = [zero; 8];
            for j in 0..8 {
                let (uq, xq) = (u[j / 4][j % 4], xv[j / 4][j % 4]);
                let p = avx2._mm256_maddubs_epi16(avx2._mm256_abs_epi8(xq), avx2._mm256_sign_epi8(uq, xq));
                m[j] = avx2._mm256_madd_epi16(p, ones);
            }
            totals8(s, &m)
        } else {
            // `maddubs(u', xq)` lanes are at most `2 * 63 * 127`: the sum of two adjacent ones
            // fits in i16, so the first reduction step is `hadd_epi16` before the widening
            // `madd`.
            let mut h = [zero; 4];
            for (i, hi) in h.iter_mut().enumerate() {
                let (j0, j1) = (2 * i, 2 * i + 1);
                let p0 = avx2._mm256_maddubs_epi16(u[j0 / 4][j0 % 4], xv[j0 / 4][j0 % 4]);
                let p1 = avx2._mm256_maddubs_epi16(u[j1 / 4][j1 % 4], xv[j1 / 4][j1 % 4]);
                *hi = avx2._mm256_hadd_epi16(p0, p1);
            }
            if matches!(g, Grouped::Q4 | Grouped::Q5) {
                // Q4/Q5 lanes are at most `2 * 31 * 127`, so four adjacent ones still fit in
                // i16 (`4 * 7874 < 2^15`): a second `hadd_epi16` level, then one `madd` per four
                // blocks (session 14, see the module docs). Per 128-bit half, i32 lane k of `a`
                // is that half of block k summed, of `b` that of block 4 + k.
                let a = avx2._mm256_madd_epi16(avx2._mm256_hadd_epi16(h[0], h[1]), ones);
                let b = avx2._mm256_madd_epi16(avx2._mm256_hadd_epi16(h[2], h[3]), ones);
                halves_sum(s, a, b)
            } else {
                // Q6: one `madd` per two blocks, then the `hadd_epi32` steps.
                for hi in h.iter_mut() {
                    *hi = avx2._mm256_madd_epi16(*hi, ones);
                }
                totals4(s, &h)
            }
        };
        let at = b * bstride + 8 * p;
        let mut t = t;
        if !w8 {
            // The offset correction `-o * sum xq` of each block (`o` a power of two).
            let bs: &[i32; 8] = act.bsum[at..at + 8].try_into().unwrap_or(&[0; 8]);
            t = avx2._mm256_sub_epi32(t, avx2._mm256_sll_epi32(pulp::cast(*bs), shift));
        }
        let dv: &[f32; 8] = act.dblk[at..at + 8].try_into().unwrap_or(&[0.0; 8]);
        let sd = avx._mm256_mul_ps(sv, pulp::cast(*dv));
        *a = fma._mm256_fmadd_ps(avx._mm256_cvtepi32_ps(t), sd, *a);
    }
}

/// The AVX-512 row loop compiled with VNNI: `vpdpbusd` starting from the correction lanes does
/// `maddubs` + `madd` + the correction in one instruction (no i16 intermediate; the same exact
/// i32 lanes).
///
/// Every `V4` feature is enabled here too (target features do not carry over from the caller),
/// so pulp's wrappers inline.
///
/// # Safety
/// The CPU must have the `V4` features (the token proves them) and AVX-512 VNNI.
#[target_feature(
    enable = "avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx512vnni,avx2,fma,bmi1,bmi2,lzcnt,popcnt"
)]
pub(crate) unsafe fn rows_v4_vnni(s: pulp::x86::V4, job: I8Job<'_, '_, '_>) {
    rows_v4_by::<true>(s, job)
}

/// The AVX-512BW row loop (see the module docs). `nb` batch rows.
#[inline(always)]
pub(crate) fn rows_v4(s: pulp::x86::V4, job: I8Job<'_, '_, '_>) {
    rows_v4_by::<false>(s, job)
}

#[inline(always)]
fn rows_v4_by<const VNNI: bool>(s: pulp::x86::V4, job: I8Job<'_, '_, '_>) {
    if let Weights::Grouped { g, .. } = job.w {
        by_scheme_and_batch!(g, job.nb, rows_v4_impl[VNNI](s, job))
    }
}

/// The parts of an [`I8Job`] a row-split row block reads.
#[derive(Clone, Copy)]
struct Rows<'a> {
    codes: &'a [u8],
    scales: &'a [u8],
    rcb: usize,
    gp: usize,
    chunks: usize,
    act: &'a QuantAct,
    /// Live batch rows.
    nb: usize,
}

/// One scheme `G` ([`grouped`]), batch rows `min(nb, NB)` (exactly `NB` when `NB <= 2`). For
/// one or two batch rows, two weight rows are done per pass, sharing the activation loads.
/// `VNNI`: only true when called from [`rows_v4_vnni`].
#[inline(always)]
fn rows_v4_impl<const VNNI: bool, const G: u8, const NB: usize>(s: pulp::x86::V4, job: I8Job<'_, '_, '_>) {
    let I8Job {
        w,
        act,
        nb,
        r0,
        r1,
        ys,
    } = job;
    let Weights::Grouped {
        codes,
        scales,
        rcb,
        gp,
        ..
    } = w
    else {
        return;
    };
    let rs = Rows {
        codes,
        scales,
        rcb,
        gp,
        chunks: act.chunks,
        act,
        nb: nb.min(NB),
    };
    let mut sc = vec![0f32; 4 * (gp + 4)];
    // Several weight streams far apart (see the module docs): four for one batch row, two
    // for two.
    let mut row = match NB {
        1 => stream_passes::<VNNI, G, NB, 4>(s, rs, r0, r1, ys, &mut sc),
        2 => stream_passes::<VNNI, G, NB, 2>(s, rs, r0, r1, ys, &mut sc),
        _ => r0,
    };
    while row < r1 {
        let y = block_v4::<VNNI, G, NB, 1>(s, rs, [row], &mut sc);
        for (b, yb) in y.iter().enumerate().take(rs.nb) {
            ys[b][row - r0] = yb[0];
        }
        row += 1;
    }
}

/// The passes of `R` weight streams over the row block `r0..r1` (`NB <= 2` batch rows, all
/// live): pass `i` takes row `i` of each of the block's `R` parts. Returns the first row left
/// for single-row passes.
#[inline(always)]
fn stream_passes<const VNNI: bool, const G: u8, const NB: usize, const R: usize>(
    s: pulp::x86::V4,
    rs: Rows<'_>,
    r0: usize,
    r1: usize,
    ys: &mut [&mut [f32]],
    sc: &mut [f32],
) -> usize {
    let q = (r1 - r0) / R;
    for i in 0..q {
        let y = block_v4::<VNNI, G, NB, R>(s, rs, super::stream_rows(r0, q, i), sc);
        for (b, yb) in y.iter().enumerate() {
            for (r, &v) in yb.iter().enumerate() {
                ys[b][r * q + i] = v;
            }
        }
    }
    r0 + R * q
}

/// Weight rows `rows` (one per weight stream) against the live batch rows: `out[b][r]`.
#[inline(always)]
fn block_v4<const VNNI: bool, const G: u8, const NB: usize, const R: usize>(
    s: pulp::x86::V4,
    rs: Rows<'_>,
    rows: [usize; R],
    sc: &mut [f32],
) -> [[f32; R]; NB] {
    let Rows {
        codes,
        scales,
        rcb,
        gp,
        chunks,
        act,
        nb,
    } = rs;
    let g = grouped(G);
    let (f, bw) = (s.avx512f, s.avx512bw);
    let cb = 16 * g.bits() as usize;
    let per = CHUNK / g.group_size();
    let w8 = g == Grouped::W8;
    let ones = f._mm512_set1_epi16(1);
    let zero = f._mm512_setzero_si512();
    // W8: lanes 0..7 of half h belong to group 2h, lanes 8..15 to group 2h + 1.
    let pick = [
        f._mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
        f._mm512_setr_epi32(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3),
    ];
    let live = |b: usize| NB <= 2 || b < nb;
    let st = gp + 4;
    for r in 0..R {
        row_scales(scales, rows[r], gp, &mut sc[r * st..r * st + gp]);
    }
    let sc = &*sc;
    // The code offset as bytes: a dot product with it is the correction of each i32 lane.
    let ob = f._mm512_set1_epi8(offset(g));
    // Lanes 0..7 of half h: activation block 2h (`dsub[4h]`), lanes 8..15: block 2h + 1.
    let dpick = [
        f._mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2),
        f._mm512_setr_epi32(4, 4, 4, 4, 4, 4, 4, 4, 6, 6, 6, 6, 6, 6, 6, 6),
    ];
    let mut acc = [[[f._mm512_setzero_ps(); 2]; R]; NB];
    for c in 0..chunks {
        // Plain loops, not `array::from_fn` closures: every intrinsic must inline into this
        // target-feature context.
        let mut u = [[zero; 2]; R];
        let mut sg = [[f._mm512_setzero_ps(); 2]; R];
        for r in 0..R {
            let at = rows[r] * rcb + c * cb;
            crate::prefetch::span(codes.as_ptr().wrapping_add(at + rcb), cb);
            u[r] = decode_v4(s, g, &codes[at..at + cb]);
            // The weight scale of each i32 lane.
            let at = r * st + c * per;
            sg[r] = if w8 {
                let s4: &[f32; 4] = sc[at..at + 4].try_into().unwrap_or(&[0.0; 4]);
                let s4 = f._mm512_broadcast_f32x4(pulp::cast(*s4));
                [
                    f._mm512_permutexvar_ps(pick[0], s4),
                    f._mm512_permutexvar_ps(pick[1], s4),
                ]
            } else {
                [f._mm512_set1_ps(sc[at]), f._mm512_set1_ps(sc[at + 1])]
            };
        }
        for (b, ab) in acc.iter_mut().enumerate() {
            if !live(b) {
                break;
            }
            let i = b * chunks + c;
            let xv: [__m512i; 2] = pulp::cast(act.xq[i]);
            let d8 = f._mm512_castps256_ps512(pulp::cast(act.dsub[i]));
            let dl = [
                f._mm512_permutexvar_ps(dpick[0], d8),
                f._mm512_permutexvar_ps(dpick[1], d8),
            ];
            // Per half: the correction lanes `-o * sum xq` (Q4/Q5/Q6; shared by the R rows),
            // or `|xq|` and its sign mask (W8).
            let mut cv = [zero; 2];
            let mut ax = [zero; 2];
            let mut neg = [0u64; 2];
            for h in 0..2 {
                if w8 {
                    neg[h] = bw._mm512_movepi8_mask(xv[h]);
                    ax[h] = bw._mm512_abs_epi8(xv[h]);
                } else if VNNI {
                    // SAFETY: VNNI is only true inside `rows_v4_vnni`, whose caller
                    // guarantees AVX-512 VNNI.
                    let o = unsafe { core::arch::x86_64::_mm512_dpbusd_epi32(zero, ob, xv[h]) };
                    cv[h] = f._mm512_sub_epi32(zero, o);
                } else {
                    let o = bw._mm512_madd_epi16(bw._mm512_maddubs_epi16(ob, xv[h]), ones);
                    cv[h] = f._mm512_sub_epi32(zero, o);
                }
            }
            for (r, a) in ab.iter_mut().enumerate() {
                for h in 0..2 {
                    let m = if w8 {
                        let sq = bw._mm512_mask_sub_epi8(u[r][h], neg[h], zero, u[r][h]);
                        if VNNI {
                            // SAFETY: as above.
                            unsafe { core::arch::x86_64::_mm512_dpbusd_epi32(zero, ax[h], sq) }
                        } else {
                            bw._mm512_madd_epi16(bw._mm512_maddubs_epi16(ax[h], sq), ones)
                        }
                    } else if VNNI {
                        // SAFETY: as above.
                        unsafe { core::arch::x86_64::_mm512_dpbusd_epi32(cv[h], u[r][h], xv[h]) }
                    } else {
                        let p = bw._mm512_maddubs_epi16(u[r][h], xv[h]);
                        f._mm512_add_epi32(bw._mm512_madd_epi16(p, ones), cv[h])
                    };
                    // `s_g * d_b` per lane: the generic kernel's `sd` (the same product).
                    let sv = f._mm512_mul_ps(sg[r][h], dl[h]);
                    a[h] = f._mm512_fmadd_ps(f._mm512_cvtepi32_ps(m), sv, a[h]);
                }
            }
        }
    }
    let mut out = [[0f32; R]; NB];
    for (o, ab) in out.iter_mut().zip(&acc) {
        for (y, a) in o.iter_mut().zip(ab) {
            let v: [[f32; 8]; 2] = pulp::cast(f._mm512_add_ps(a[0], a[1]));
            let t: [f32; 8] = core::array::from_fn(|i| v[0][i] + v[1][i]);
            *y = tree8(t);
        }
    }
    out
}

/// Chooses the AVX2 row loop for the CPU and the row block ([`rows_v3_vnni`] or
/// [`rows_v3_streams`], one, two or four streams: [`v3_streams`]) inside the `V3` token's
/// `target_feature` context.
pub(crate) struct FastV3<'a, 'b, 'c>(pub(crate) pulp::x86::V3, pub(crate) I8Job<'a, 'b, 'c>);

impl pulp::WithSimd for FastV3<'_, '_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let (s, job) = (self.0, self.1);
        let streams = v3_streams(&job);
        let vnni = std::arch::is_x86_feature_detected!("avxvnni");
        if gfni_takes(&job.w) {
            // SAFETY: `gfni_takes` detected GFNI, AVX-VNNI was detected where `vnni`; the token
            // proves the V3 features.
            unsafe {
                match (vnni, streams) {
                    (true, 1) => rows_v3_vnni_gfni::<1>(s, job),
                    (true, V3_STREAMS_FAR) => rows_v3_vnni_gfni::<V3_STREAMS_FAR>(s, job),
                    (true, _) => rows_v3_vnni_gfni::<V3_STREAMS>(s, job),
                    (false, 1) => rows_v3_gfni::<1>(s, job),
                    (false, V3_STREAMS_FAR) => rows_v3_gfni::<V3_STREAMS_FAR>(s, job),
                    (false, _) => rows_v3_gfni::<V3_STREAMS>(s, job),
                }
            }
        } else if vnni {
            // SAFETY: AVX-VNNI was detected just above; the token proves the V3 features.
            unsafe {
                match streams {
                    1 => rows_v3_vnni::<1>(s, job),
                    V3_STREAMS_FAR => rows_v3_vnni::<V3_STREAMS_FAR>(s, job),
                    _ => rows_v3_vnni::<V3_STREAMS>(s, job),
                }
            }
        } else {
            // SAFETY: the token proves the V3 features.
            unsafe {
                match streams {
                    1 => rows_v3_streams::<1>(s, job),
                    V3_STREAMS_FAR => rows_v3_streams::<V3_STREAMS_FAR>(s, job),
                    _ => rows_v3_streams::<V3_STREAMS>(s, job),
                }
            }
        }
    }
}

/// Whether a `V4` `I8` call runs the AVX2 rows ([`FastV3`], with the activations staged for
/// them) for these weights: W8 on AMD cores, where they are the faster ones (every path gives
/// the generic kernel's bits). Session 24's AMD EPYC (Zen 4 class, AVX-512 VNNI), `report --isa
/// V4`, 8192x8192 from memory, G weights/s, one / two threads, medians of 5 alternations: 16.36
/// / 28.13 -> 21.99 / 34.47. In three alternated calls of `report --isa V3` and `--isa V4`,
/// Q4 and Q6 were within the noise of their AVX-512 kernels and Q5 faster on AVX-512. Other
/// cores keep the AVX-512 kernels (see `f32x86::v3_rows_on_v4`).
pub(crate) fn v3_rows_on_v4(w: &Weights<'_>) -> bool {
    matches!(w, Weights::Grouped { g: Grouped::W8, .. }) && amd_cores()
}

/// Runs [`rows_v4`] inside the `V4` token's `target_feature` context.
pub(crate) struct FastV4<'a, 'b, 'c>(pub(crate) pulp::x86::V4, pub(crate) I8Job<'a, 'b, 'c>);

impl pulp::WithSimd for FastV4<'_, '_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        rows_v4(self.0, self.1)
    }
}

#[cfg(test)]
mod tests {
    use ninfer_core::registry::Grouped;

    use super::{decode_v3, decode_v3_gfni, offset, widen_scales_f16c, widen_scales_words};
    use crate::weights::CHUNK;

    /// `decode_v3_gfni` inside a function compiled with GFNI.
    #[target_feature(enable = "avx,avx2,fma,gfni")]
    unsafe fn gfni_chunk(s: pulp::x86::V3, g: Grouped, chunk: &[u8]) -> [u8; CHUNK] {
        // SAFETY: the caller guarantees GFNI.
        pulp::cast(unsafe { decode_v3_gfni(s, g, chunk) })
    }

    /// [`decode_v3`] gives the offset codes `q + 2^(b-1)` of the core's decoder (byte `i` of
    /// block `b` is position `32 b + i`), and [`decode_v3_gfni`] the same bytes, for Q5 and Q6
    /// chunks whose nibble-plane bytes are all `a` and high-plane bytes all `h`, over every
    /// pair `(a, h)`: each output byte depends on one byte of each plane, its block and its
    /// 128-bit lane only.
    #[test]
    fn gfni_decode_gives_the_same_offset_codes() {
        let Some(s) = pulp::x86::V3::try_new() else {
            println!("SKIPPED: AVX2 decode_v3: this CPU has no AVX2+FMA");
            return;
        };
        let gfni = std::arch::is_x86_feature_detected!("gfni");
        if !gfni {
            println!("SKIPPED: GFNI decode_v3_gfni: this CPU has no GFNI");
        }
        for g in [Grouped::Q5, Grouped::Q6] {
            let cb = 16 * g.bits() as usize;
            for a in 0..=255u8 {
                for h in 0..=255u8 {
                    let chunk: Vec<u8> = (0..cb).map(|i| if i < 64 { a } else { h }).collect();
                    let mut q = [0i8; CHUNK];
                    crate::weights::grouped_codes(g, &chunk, &mut q);
                    let want: [u8; CHUNK] = s.vectorize(|| pulp::cast(decode_v3(s, g, &chunk)));
                    for (p, (&w, &c)) in want.iter().zip(&q).enumerate() {
                        assert_eq!(
                            w as i32,
                            c as i32 + offset(g) as i32,
                            "{g:?} {a:#04x} {h:#04x} position {p}"
                        );
                    }
                    if gfni {
                        // SAFETY: GFNI was detected above; the token proves the V3 features.
                        let got = unsafe { gfni_chunk(s, g, &chunk) };
                        assert_eq!(got, want, "GFNI {g:?} nibbles {a:#04x} high {h:#04x}");
                    }
                }
            }
        }
    }

    /// The F16C scale widening equals the word-by-word one for every binary16 word (a NaN for
    /// a NaN: `vcvtph2ps` quiets a signalling one), once and twice per word, at lengths that
    /// leave every tail of a group of eight, plain and times a multiplier (the `F32` kernels'
    /// `2^-28`, and 3, whose products round).
    #[test]
    fn f16c_scale_widening_equals_the_word_loop_for_every_word() {
        if !std::arch::is_x86_feature_detected!("f16c") {
            println!("SKIPPED: F16C scale widening: this CPU has no F16C");
            return;
        }
        let words: Vec<u8> = (0..=u16::MAX).flat_map(u16::to_le_bytes).collect();
        for (twice, m) in [false, true]
            .into_iter()
            .flat_map(|t| [None, Some(f32::from_bits((127 - 28) << 23)), Some(3.0)].map(|m| (t, m)))
        {
            let per = if twice { 2 } else { 1 };
            for len in [65_536, 65_535, 65_529, 9, 8, 7, 1, 0] {
                let s = &words[2 * (65_536 - len)..];
                let (mut got, mut want) = (vec![-1f32; per * len + 3], vec![-1f32; per * len + 3]);
                // SAFETY: F16C was detected above; every CPU with F16C has AVX.
                unsafe { widen_scales_f16c(s, twice, m, &mut got[..per * len]) };
                widen_scales_words(s, twice, m, &mut want[..per * len]);
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                        "twice {twice}, times {m:?}, len {len}, entry {i}: {g:e} against {w:e}"
                    );
                }
            }
        }
    }
}
