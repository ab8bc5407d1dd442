//! The x86 fast paths (AVX2 `V3`, AVX-512 `V4`) of NVFP4 (`blockscale-k16-m128x4-v1`) GEMV, both
//! profiles: the E2M1 nibbles are decoded in registers straight from the row bytes.
//!
//! **Nibble order.** Byte j of a row holds position 2j in its low nibble and 2j + 1 in its high
//! nibble (layouts.md). The kernels keep the nibbles where they are and reorder the
//! activations instead, once per call (see below).
//!
//! **Scales.** The E4M3FN block scale of sub-block `kb` of row n sits at
//! `scale_index(n, kb, nkt) = base(n) + (kb / 4) * 512 + kb % 4`: the four scales of one
//! 64-position K-tile are consecutive bytes, so a chunk (128 positions) reads two runs of 4
//! bytes at `base(n) + 1024 c` and `+ 512`, decoded exactly in registers
//! ([`super::fp8x86::e4m3fn_lanes_v3`], the bit construction of `weights::e4m3fn_value`).
//! The AVX-512 kernels decode two rows' chunk scales per 16-lane vector, through binary16 when
//! no scale byte is a NaN word ([`scales16_v4`]), and run four weight streams per pass for one
//! batch row (see `f32x86`): one thread, `I8` cache-resident 22 -> 25-28 G weights/s; `F32`
//! 8192x8192 from memory 15.1 -> 18.4 G weights/s. The four rows of a pass are
//! `n, n + 32, n + 64, n + 96` of one 128-row scale tile (when the thread's block holds the
//! whole tile): the swizzle puts their scales of one K-tile in one 16-byte unit, so a chunk's
//! 32 scales are two 16-byte loads ([`pass_scales_v4`]) instead of eight 4-byte loads from 8
//! cache lines (the next three passes reuse the same lines). Measured (5 alternations, median,
//! G weights/s, 8192x8192 from memory, against four streams a quarter-block apart): `I8` one
//! thread 24.2 -> 26.2, two 43.7 -> 45.9; `F32` one thread 18.4 -> 22.1, two 35.7 -> 39.3.
//! Found by replacing the scale loads with register values (a wrong-result experiment): two
//! threads from memory 37.2 -> 47.2. Tried and dropped: gathering a pass's scale bytes for all
//! chunks into a buffer before the chunk loop (the loads then stall together: 2 threads 39.7
//! -> 32.3), and on AVX2 pairs of rows 32 apart (no change: its 2-row passes are bound by the
//! decode).
//! Sub-blocks at or beyond the physical `Sb` get scale 0, as in the generic decoder. Both
//! streams are software-prefetched ([`PF`]; on AMD cores the codes into L2 only in the AVX2
//! `F32` kernel where K > 4096 and in both `I8` kernels, [`ahead_codes`], [`i8_codes_l2`],
//! elsewhere into L1 (session 26's Intel Xeon); the scales per kernel, both lines of a chunk,
//! [`PF_S_I8`], except in the AVX2 GEMV kernels and the AVX-512 `I8` kernel on AMD cores,
//! [`scale_prefetch`]; the AVX2 kernels also fetch the next 128-row band's scale plane a share
//! per row, [`band_share`]).
//!
//! **`I8` profile.** One `pshufb` with a 16-entry table maps each nibble to `u = 2 e2m1 + 12`
//! (an integer in `[0, 24]`), so `maddubs(u, xq)` does not saturate (`2 * 24 * 127 < 2^15`),
//! and an exact correction `-12 * sum xq` makes every i32 lane an exact `sum 2 e2m1 xq`.
//!
//! - AVX2 (`V3`, and `V3_512b`, whose generic I8 kernel is the AVX2 one) and AVX-512 (`V4`)
//!   alike keep the nibbles where they are: the low nibbles (even positions) and the high
//!   nibbles (odd positions) of the code bytes are two `pshufb`s, dotted with the activation
//!   codes split the same way (once per call, `QuantAct::split`), both into the same i32
//!   lanes: lane l is exactly `sum 2 e2m1 xq` over positions `8l .. 8l + 7` of the 64 (AVX2:
//!   per 32 code bytes) or 128 (AVX-512: the whole chunk) positions (one sub-block, one
//!   activation block), with the correction lanes `QuantAct::corr`. VNNI: two `vpdpbusd` from
//!   the correction lanes; without: two `maddubs` summed in i16 (at most `4 * 24 * 127 <
//!   2^15`) and one `madd`. Then one FMA per 8 positions with `s_sub * d_b` (rounded once) per
//!   lane, a fixed reduction, `* 0.5`, `/ d_w`. AVX2 sums further before the float step: the
//!   i16 sums of the two halves of a chunk go through one `hadd_epi16` (at most `8 * 24 * 127
//!   < 2^15`) and the widening `madd`, so lane j is the exact total of sub-block
//!   [`TOTALS_ORDER`]`[j]` (corrections summed to match once per call, [`totals_corr`]), and
//!   one conversion and one FMA per chunk (with `s_sub * d_b` in that order: permuted there until
//!   session 13, see below) replace
//!   two permutes, two conversions and two FMAs: one thread, 256x8192 (L2-resident), medians of
//!   3, 22.6 -> 25.2 G weights/s; 8192x8192 from memory 19.8 -> 20.8 (two threads 39.1 ->
//!   41.4). Each lane term is an exact integer times one
//!   rounded product, folded by one rounded multiply-add, as in the generic kernel, so the
//!   derivation of [`crate::criteria::C_I8`] applies unchanged (the grouping of the additions
//!   differs: tested against the criterion; the VNNI and `maddubs` variants, and the AVX2 F16C
//!   and integer scale routes, are bit-identical to each other). On AVX2 this replaced a
//!   kernel that moved each nibble into position order (5 more instructions per 32 positions)
//!   and did one float step per 4 positions: one thread, cache-resident, 18.4 -> 25.9 G
//!   weights/s. On AVX2 cores with AVX-VNNI ([`i8_rows_v3_f16c_vnni`]) each half chunk's i32
//!   lanes come from two `vpdpbusd` and the sub-block totals from one `hadd_epi32` (the same
//!   [`TOTALS_ORDER`]), in place of four `maddubs`, two adds, the `hadd_epi16` and the `madd`:
//!   the same integers, so the same bits (tested against the `maddubs` form). Session 10's
//!   host (a Xeon with 2 MiB L2 per core and a 480 MiB L3), medians, G weights/s: 8192x8192 from memory, two threads, 4 alternations, 38.0
//!   -> 39.4; 256x8192 (L2), one thread, 2 alternations, 26.1 -> 27.1 (within this host's
//!   noise there: a binary without the change read 27.3 in the same alternation).
//! - AVX2, session 13: the chunk loop of [`i8_pass_v3`] runs over the whole chunks with no
//!   partial-chunk path in it. Before, `chunk_of`'s copy of a short last chunk into a padded
//!   buffer (a `memcpy` call) sat in the loop, and the compiler kept several vector registers on
//!   the stack around it on every chunk; the partial chunk now has its own loop after it. And
//!   the scales come out in [`TOTALS_ORDER`] and times `2^-8` ([`scales_totals`]): one byte
//!   shuffle ([`TOTALS_HI`]) puts each scale byte in the high byte of its 16-bit lane and in
//!   the totals' order at once, so the binary16 route needs no multiply by `2^8` and the
//!   product `s_sub * d_b` no permute (the steps `d_b` are staged in that order once per call,
//!   [`totals_dsub`]); the row's sum is multiplied by `128` instead of `0.5`. Without
//!   underflow every value is the one before times an exact power of two: `s 2^-8 d_b` rounds
//!   to `RN(s d_b) 2^-8`, and so on down the sums (the criteria assume no underflow, see
//!   [`crate::criteria`]; `tests::totals_scales_are_the_exact_scales_in_totals_order` checks
//!   both routes against the core table for every byte in every position). Session 13's host,
//!   8192x8192 from memory, medians of 4 alternations, G weights/s, one / two threads: 24.4 /
//!   48.9 -> 25.6 / 50.3 (the loop), 25.7 / 49.6 -> 26.0 / 51.9 (the scales); 256x8192
//!   L2-resident, one thread, 31.2 -> 34.0 (the loop), 34.4 -> 36.4 (the scales). Tried with it
//!   and dropped: the correction lanes as the `vpdpbusd` accumulators' start (one add less per
//!   chunk: no change); reading the code and scale bytes without bounds checks (`unsafe`, an
//!   experiment: L2-resident +6%, from memory no change).
//!
//! **`F32` profile.**
//!
//! - AVX2: the nibbles stay in place (two `pshufb`s per 32 code bytes give the signed integers `2
//!   e2m1` of the even and the odd positions as bytes); byte t of every 32-bit lane is moved to the
//!   lane's top byte (`f32x86::top_bytes_v3`: a byte shuffle, or a mask for byte 3) and converted,
//!   `2 e2m1 * 2^24` exactly, with the chunk's scales times `2^-8` (exact; binary16's bias gives
//!   them so, [`scales_lo_f16c`]) and the row's sum times [`ROW_UNIT`] `= 2^-17`: every product is
//!   the one of `2 e2m1` and `s` times a power of two, so the bits are those of the plain scaling
//!   short of overflow (the two-shift form it replaced in session 9 spent two shifts per vector on
//!   ports 0 and 1 beside the conversion and the FMAs; Xeon, 256x8192 L2-resident, one thread,
//!   medians of 3: 12.75 -> 16.79 G weights/s). The sums `blk` run `2^24` above `sum 2 e2m1 x`, the
//!   accumulators `2^16` above `sum 2 e2m1 x s`: they overflow only where those pass `2^104` and
//!   `2^112`. Vector `j = 4p + t` of a half chunk, lane l is position `64h + 8l + 2t + p` (the
//!   activations are staged in that order once per call and thread). Per half chunk and lane, `blk
//!   = sum_j 2 e2m1 * x` (two chains, each started by a multiply), then `acc = fma(blk, s_lane,
//!   acc)`, a fixed reduction, `* 2^-17` (exact) and `/ d_w`: the AVX-512 kernel's arithmetic
//!   (below) on 8 lanes, with the same criterion argument; tested against the criterion. Session 24
//!   (Zen 4 class, `report --isa V3`, medians of 3-7 alternations, G weights/s): the chains started
//!   by a multiply instead of an FMA on a zeroed register, and the scales taken as `hi_bytes_f16c`
//!   gives them (times `2^-8`) with the power of two moved to the row's sum, instead of two
//!   multiplies per chunk (`2^8`, then `2^-24`), took 6 of the 78 vector instructions of a chunk (a
//!   zeroing, two multiplies and their broadcasts, and with the registers freed a reloaded constant
//!   and an accumulator's spill; a bare copy of the loop, 24.1 -> 23.3 cycles a chunk): one thread,
//!   256x8192 15.84 -> 17.05, 1024x2048 16.10 -> 17.75; 8192x8192 from memory 15.39 / 30.98 ->
//!   16.05 / 32.13 (one / two threads, 7 alternations). Tried in session 24 and dropped, all
//!   slower: four product chains a half chunk summed by two adds (256x8192 17.05 -> 16.49), and a
//!   kernel that decoded the codes a few chunks ahead into binary16 words on the stack (the table
//!   giving each value's high byte, two shifts and two ANDs a half chunk making the words) and
//!   converted them with `vcvtph2ps` from memory, one instruction per 8 weights instead of a byte
//!   move and a conversion: a hand-written bare loop of it ran 20.5-21.8 cycles a chunk against
//!   24 for this one, but the compiled kernel 13.1-13.6 G weights/s against 16.0 (per chunk 16
//!   more loads, 9 to 12 stores and more loop bookkeeping; decoding a block of 4 chunks at a
//!   time, 12.2; `docs/perf/2026-12-07-s24-nvfp4-loop/`). The
//!   byte-move kernel replaced one that moved every nibble into position order and widened 8 codes
//!   at a time to multiply each by `s / 2` (bit-identical to the generic kernel, 35% more
//!   instructions): one thread, medians of 5, G weights/s: cache-resident 9.9 -> 14.0, 8192x8192
//!   from memory 9.0 -> 13.8. Tried in session 8 (Xeon, 256x8192 L2-resident, one thread, medians
//!   of 3) and dropped, both slower than the two shifts and the conversion used then: the row-split
//!   kernels' byte under the exponent of 2^15 (`u = 2 e2m1 + 12` from the table, a shuffle, an OR,
//!   a subtraction of `2^15 + 12`), 10.62 -> 10.26; the same with the subtraction and the sub-block
//!   scale folded into one FMA per weight vector (session 8's AVX2 `f32x86::split_weights`, since
//!   replaced, with per-lane scales, no per-lane partial sums), 10.62 -> 9.96. This kernel already
//!   spends port 5 on two table shuffles and a scale permute per half chunk. Tried in session 23
//!   (Zen 4 class, one thread, medians of 4) and dropped: bfloat16 words from two table shuffles
//!   (high and low bytes) and two byte unpacks, widened by a shift or an AND instead of converted
//!   (1024x2048 16.30 -> 17.33 G weights/s, 256x8192 16.19 -> 15.90, 8192x8192 from memory two
//!   threads 29.21 -> 28.52). Session 25 (same host; `docs/perf/2026-12-07-s25-nvfp4-bounds/`):
//!   no one pipe class bounds the chunk loop (a bare copy swapping any class onto other pipes
//!   saves 1-1.5 of its 23 cycles), and with no scale loads at all (a wrong-result experiment)
//!   the kernel gains only 4% cache-resident, 8% from memory. Tried and dropped, all slower: one
//!   product chain per half chunk (256x8192 17.86 -> 16.64), two rows far apart a pass (17.10),
//!   each band's scales converted to f32 into a buffer before its rows (13.04-13.79), a second
//!   code prefetch into L1 (no change).
//! - AVX-512: vector j of a chunk is the code register shifted right by `4j` per 32-bit lane,
//!   so `permutexvar` on the 16-entry `E2M1_TO_F32` table gives lane l the value of position
//!   `8l + j`; the activations are reordered to match once per call and thread. Per chunk and
//!   lane, `blk = sum_j e2m1 * x` (two FMA chains), then `acc = fma(blk, s_lane, acc)`, pulp's
//!   fixed reduction and `/ d_w`. Criterion: `fma(blk, s, acc)` multiplies exactly, so every
//!   term `w x = (e2m1 x) s / d_w` still reaches y through one rounded product (`e2m1 * x`,
//!   inside an FMA), rounded additions along one fixed tree of K leaves (at most K - 1) and
//!   the finishing division: the derivation of [`crate::C_F32`] holds as written, with its
//!   no-underflow assumption covering the products `e2m1 * x` (within a factor `2^9` of
//!   `w x d_w`).

use core::arch::x86_64::{__m128i, __m256, __m256i, __m512, __m512i, _CMP_UNORD_Q};

use ninfer_core::layout::blockscale::scale_index;
use ninfer_core::tables::{E2M1_TO_F32, E4M3FN_TO_F32_BITS};
use pulp::Simd;

use super::f32x86::{codes_l2_only, top_bytes_v3, F32Job};
use super::fp8x86::e4m3fn_lanes_v3;
use super::i8::{tree8, I8Job, QuantAct};
use super::i8x86::amd_cores;
use super::{store_rows, stream_rows};
use crate::dequant::ChunkOut;
use crate::prefetch;
use crate::runs::Runs;
use crate::weights::{Post, Weights, CHUNK};

/// The code offset of the `I8` fast path: `u = 2 e2m1 + OFFSET` is unsigned (`gemv::run`
/// passes the same 12 to `quantize` for the correction lanes).
const OFFSET: i8 = 12;

/// Software prefetch distance in the code stream (bytes).
const PF: usize = 2048;
/// Software prefetch distances in a row's scale span (bytes; 512 per K-tile, so 1024 per
/// chunk): 8 chunks ahead for the `I8` kernels, 32 for the slower `F32` ones, 4 for the
/// dequantizer. Both scale lines of a chunk are prefetched ([`ahead`]). Until session 11 one
/// distance of 4096 served all and only the even K-tile's line was prefetched (the odd one
/// was a demand miss wherever the line was new, on every fourth row); session 11's host
/// (8192x8192 from memory, medians of 3 alternations, G weights/s, 1 / 2 threads):
/// AVX2 `I8` 20.5 -> 21.3 / 40.5 -> 43.1, AVX2 `F32` 11.7 -> 13.4 / 23.5 -> 26.8,
/// AVX-512 `I8` 25.8 -> 26.4 / 50.0 -> 50.9, AVX-512 `F32` 17.6 -> 19.3 / 34.1 -> 38.4.
/// Both lines at 4096: AVX2 `I8` 41.3, `F32` 25.0 (2 threads); both at 16384: `I8` 40.0
/// (slower than the old one), `F32` 26.9. Prefetches past the end of a row's span land on
/// the same row of the next 128-row tile (or outside the plane: a prefetch never faults);
/// clamping them to the span cost more than it saved (`I8` two threads 43.1 -> 41.9).
const PF_S_I8: usize = 8192;
/// See [`PF_S_I8`].
const PF_S_F32: usize = 32768;
/// See [`PF_S_I8`].
const PF_S_DEQ: usize = 4096;

/// Whether the AVX2 GEMV kernels and the AVX-512 `I8` kernel prefetch each chunk's scale lines
/// ([`ahead_scales`]), `amd` saying whether the CPU has AMD cores ([`amd_cores`]; a constant of
/// the AVX2 kernels, `by_vendor_and_batch!`): not on AMD cores, where the code prefetch
/// ([`ahead_codes`]) and, in the AVX2 kernels, the band share ([`band_share`]) are kept and
/// the per-chunk scale prefetch cost more than it saved.
/// - AVX2, on the AVX2-only AMD EPYC (Zen 3) of session 17, 8192x8192 from memory, `report
///   --isa V3`, G weights/s, medians of 7 (one thread) and 9 (two threads) alternations: `I8`
///   23.09 -> 25.41 / 45.28 -> 48.00; `F32` (5 and 9 alternations) 12.18 -> 12.80 / 24.04 ->
///   25.96; in L3 (1024x8192, one thread, best of 2 s of calls) without any prefetch `I8` 22.9
///   -> 27.7.
/// - AVX-512 `I8`, on the AMD EPYC (Zen 4 class) of session 22, `report --isa V4`, G
///   weights/s, one / two threads, medians of 4-5 alternations: 8192x8192 from memory 26.74 /
///   50.09 -> 30.17 / 54.80 (another set: 26.73 / 47.92 -> 30.56 / 59.52), 16384x2048 26.12 /
///   53.50 -> 31.90 / 57.52, 4096x16384 27.10 / 50.66 -> 31.48 / 55.67; cache-resident, one
///   thread, 256x8192 35.28 -> 40.83, 1024x4096 36.47 -> 42.25. Before, this kernel was slower
///   than the AVX2 one on the same host (two threads from memory, about 50 against 52 G
///   weights/s). The AVX-512 `F32` kernel keeps its prefetch: without it, 8192x8192 from memory
///   read 23.40 / 40.84 -> 21.71 / 37.00 (medians of 5; that row moves by 10% between sets of
///   the same binary on this host).
///
/// Session 11's host (see [`PF_S_I8`]) gained from the scale lines; it was an Intel Xeon.
const fn scale_prefetch(amd: bool) -> bool {
    !amd
}

/// `2^-17`: the factor on a row's sum in the AVX2 `F32` kernel, whose codes are `2 e2m1`
/// converted from the top byte of a 32-bit lane (times `2^24`, [`top_bytes_v3`]) and whose
/// scales are taken times `2^-8` ([`scales_lo_f16c`]): the sums run `2^16` above
/// `sum 2 e2m1 x s`, so they overflow only where that passes `2^112`.
const ROW_UNIT: f32 = 1.0 / 131_072.0;

/// Nibble to `2 e2m1 + 12`.
const U_TBL: [i8; 16] = [12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0];
/// Nibble to `2 e2m1`.
const Q_TBL: [i8; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

// The two tables agree with each other and with the word decoder `e2m1_twice`.
const _: () = {
    let mut i = 0;
    while i < 16 {
        assert!(U_TBL[i] == Q_TBL[i] + OFFSET && Q_TBL[i] as f32 == 2.0 * E2M1_TO_F32[i]);
        i += 1;
    }
};

/// `by_batch!` with one more const parameter before the batch size, `AMD`: whether the CPU has AMD
/// cores ([`amd_cores`], read once per call; the tests pass the opposite, `amd = ...;`, to run the
/// kernels this CPU does not dispatch, see `PlainV3`). The AVX2 GEMV kernels take their prefetch
/// choices ([`scale_prefetch`], [`i8_codes_l2`], [`codes_l2_only`]) from it as constants, so that
/// their chunk loops carry no test of them; read at run time as flags (sessions 17-26), they cost
/// the `I8` kernel 8-9% cache-resident on session 27's Intel Xeon (family 6 model 167, the host of
/// sessions 10 and 26; bisected to 2d97d99, the first such flag: session 13's binary 30.51, 9dc187d
/// 30.63, 2d97d99 28.45 G weights/s). `report --isa V3`, G weights/s, medians of 3 alternations,
/// each side built four times, in different code layouts (as built, and with `-C
/// llvm-args=-align-all-functions=6`, `=7`, `-align-loops=64`): 256x8192 cache-resident, one
/// thread, `I8` 27.73 / 27.73 / 27.72 / 27.75 -> 30.22 / 30.04 / 29.96 / 29.91, `F32` 15.36 / 15.40
/// / 15.43 / 15.35 -> 15.96 / 15.96 / 15.93 / 15.78; 8192x8192 from memory, one / two threads, the
/// first and third layouts: `I8` 22.91 / 43.81 -> 23.89 / 46.76 and 22.38 / 43.66 -> 23.06 / 45.12,
/// `F32` 12.77 / 25.55 -> 13.10 / 26.20 and 13.04 / 26.37 -> 13.04 / 26.15. The AVX-512 `I8` kernel
/// keeps the flags: with them as constants it ran slower there (`--isa V4`, 256x8192, 37.13 / 36.02
/// -> 33.86 / 33.51 in two layouts; from memory 24.78 / 49.34 -> 24.23 / 47.54). AMD cores were not
/// measured: their kernels issue the same prefetches as before. (The AVX2 row-split kernels'
/// `codes_l2_only` flag made a constant the same way moved nothing consistently: Q5 `F32`
/// cache-resident 14.19 / 14.25 / 13.32 -> 14.57 / 13.67 / 14.53 in three layouts.)
macro_rules! by_vendor_and_batch {
    ($nb:expr, $k:ident [ $($c:tt),* ] ( $($a:expr),* )) => {
        by_vendor_and_batch!(amd = amd_cores(); $nb, $k[$($c),*]($($a),*))
    };
    (amd = $amd:expr; $nb:expr, $k:ident [ $($c:tt),* ] ( $($a:expr),* )) => {
        if $amd {
            by_batch!($nb, $k[$($c,)* true]($($a),*))
        } else {
            by_batch!($nb, $k[$($c,)* false]($($a),*))
        }
    };
}

/// Whether the fast path takes these weights (NVFP4).
pub(crate) fn takes(w: &Weights<'_>) -> bool {
    matches!(w, Weights::Nvfp4 { .. })
}

/// One row's code bytes and the span of the scale plane holding its block scales (the 4
/// scales of K-tile t at `512 t`, up to the last tile).
#[inline(always)]
fn row_slices<'a>(
    codes: &'a [u8],
    scales: &'a [u8],
    row: usize,
    row_bytes: usize,
    nkt: usize,
) -> (&'a [u8], &'a [u8]) {
    let rc = codes.get(row * row_bytes..(row + 1) * row_bytes).unwrap_or(&[]);
    let base = scale_index(row, 0, nkt);
    let sr = scales
        .get(base..base + 512 * nkt.saturating_sub(1) + 4)
        .unwrap_or(&[]);
    (rc, sr)
}

/// Chunk `c` of a row from [`row_slices`]: its 64 code bytes (a partial last chunk zero-padded
/// into `pad`; nothing is read past the row) and its 8 block-scale bytes (code 0, value 0,
/// beyond the physical `Sb`, as in the generic decoder).
#[inline(always)]
fn chunk_of<'p>(rc: &'p [u8], sr: &[u8], c: usize, pad: &'p mut [u8; 64]) -> (&'p [u8; 64], [u8; 8]) {
    let sb = chunk_scales(sr, c);
    if let Some(b) = rc.get(64 * c..64 * c + 64).and_then(|b| b.try_into().ok()) {
        return (b, sb);
    }
    *pad = [0; 64];
    let tail = rc.get(64 * c..).unwrap_or(&[]);
    let len = tail.len().min(64);
    pad[..len].copy_from_slice(&tail[..len]);
    (pad, sb)
}

/// A chunk's two 4-byte scale words in a row span from [`row_slices`]: chunk `c`'s low word at
/// `SCALE_STRIDE c`, its high word `SCALE_HI` after it.
const SCALE_STRIDE: usize = 1024;
/// See [`SCALE_STRIDE`].
const SCALE_HI: usize = 512;

/// The 8 block-scale bytes of chunk `c` of a row span from [`row_slices`] (0 beyond the
/// physical scales).
#[inline(always)]
fn chunk_scales(sr: &[u8], c: usize) -> [u8; 8] {
    let (lo, hi) = (SCALE_STRIDE * c, SCALE_STRIDE * c + SCALE_HI);
    scale_words(
        sr.get(lo..lo + 4).unwrap_or(&[]),
        sr.get(hi..hi + 4).unwrap_or(&[]),
    )
}

/// The 8 block-scale bytes of a chunk from its low and high 4-byte words (a word of another
/// length reads 0).
#[inline(always)]
fn scale_words(lo: &[u8], hi: &[u8]) -> [u8; 8] {
    let lo: [u8; 4] = lo.try_into().unwrap_or([0; 4]);
    let hi: [u8; 4] = hi.try_into().unwrap_or([0; 4]);
    (u32::from_le_bytes(lo) as u64 | (u32::from_le_bytes(hi) as u64) << 32).to_le_bytes()
}

/// The first `n` chunks of a row from [`row_slices`] as [`Runs`], checked once when made: its
/// code bytes and both scale words ([`SCALE_STRIDE`]). For the AVX2 kernels' chunk loops, whose
/// other chunks (a partial last one, scales past the physical plane) take [`chunk_of`].
#[derive(Clone, Copy)]
struct RowRuns<'a> {
    codes: Runs<'a, u8>,
    lo: Runs<'a, u8>,
    hi: Runs<'a, u8>,
}

impl<'a> RowRuns<'a> {
    /// How many leading chunks of the row `(rc, sr)` have all their code bytes and both scale
    /// words inside the spans, at most `limit`.
    fn count(rc: &[u8], sr: &[u8], limit: usize) -> usize {
        limit
            .min(rc.len() / 64)
            .min(Runs::<u8>::fitting(sr.len(), SCALE_HI, SCALE_STRIDE, 4))
    }

    /// The first `n` chunks (`n` at most [`RowRuns::count`]).
    #[inline(always)]
    fn new(rc: &'a [u8], sr: &'a [u8], n: usize) -> Self {
        RowRuns {
            codes: Runs::new(rc, 0, 64, n),
            lo: Runs::strided(sr, 0, SCALE_STRIDE, 4, n),
            hi: Runs::strided(sr, SCALE_HI, SCALE_STRIDE, 4, n),
        }
    }

    /// Chunk `c`'s code bytes and block-scale bytes, as [`chunk_of`] gives them.
    #[inline(always)]
    fn chunk(&self, c: usize) -> (&'a [u8; 64], [u8; 8]) {
        let bytes = self.codes.get(c).try_into().unwrap_or(&[0; 64]);
        (bytes, scale_words(self.lo.get(c), self.hi.get(c)))
    }
}

const _: () = assert!(SCALE_STRIDE == 2 * SCALE_HI);

/// Software prefetch of the code bytes [`PF`] ahead (rows are contiguous, so this runs into
/// the next rows; with `l2_only` into L2 only, [`ahead_codes`]) and, where `scales`, of the
/// scales ([`ahead_scales`]; not for the later rows of an AVX-512 quad pass, which share the
/// first row's lines, nor on AMD cores in the AVX2 GEMV kernels and the AVX-512 `I8` kernel,
/// [`scale_prefetch`]).
#[inline(always)]
fn ahead<const D: usize>(rc: &[u8], sr: &[u8], c: usize, scales: bool, l2_only: bool) {
    ahead_codes(rc, c, l2_only);
    if scales {
        ahead_scales::<D>(sr, c);
    }
}

/// Software prefetch of the code bytes [`PF`] ahead of chunk `c`; with `l2_only` into L2 only
/// ([`prefetch::line_in`]): the AVX2 `F32` kernel's on AMD cores where K exceeds 4096
/// ([`codes_l2_only`]; on session 26's Intel Xeon into L1 was the faster), so that the
/// line fetched ahead does not take L1 room from the staged activations (4 K bytes, 32 KiB at
/// K = 8192: as much as the L1 data cache of the hosts measured). Session 23's AMD EPYC (Zen 4
/// class), `report --isa V3`, 8192x8192 from memory, G weights/s, one / two threads, medians of
/// 5 alternations: 14.80 / 27.87 -> 15.21 / 30.41, a second set 14.91 / 29.96 -> 15.31 / 30.41
/// (4096 bytes ahead instead of `PF`: 15.37 / 30.96, within the noise of it). The `I8` kernels
/// fetch into L2 only on AMD cores, at every K ([`i8_codes_l2`]).
#[inline(always)]
fn ahead_codes(rc: &[u8], c: usize, l2_only: bool) {
    prefetch::line_in(rc.as_ptr().wrapping_add(64 * c + PF), l2_only);
}

/// Whether the `I8` kernels (AVX2 and AVX-512) prefetch their code bytes into L2 only
/// ([`ahead_codes`]), at every K: on AMD cores (`amd`, as in [`scale_prefetch`]), not
/// elsewhere. Their lines then come into L1 only when read, and leave its room to the
/// activations, the staged steps and corrections and above all the scale lines (a row's 128
/// scale lines at K = 8192 fall in 8 of the L1's 64 sets, see [`band_share`]).
/// Session 25's AMD EPYC (Zen 4 class), G weights/s, one / two threads, from memory, against
/// `prefetcht0`: `report --isa V3`, medians of 5 alternations, 8192x8192 26.56 / 52.07 ->
/// 29.12 / 56.58; medians of 3, 4096x16384 25.03 / 47.44 -> 28.17 / 52.55, 16384x2048 27.43 /
/// 53.66 -> 28.57 / 55.62; cache-resident (one thread) 256x8192 30.00 -> 30.21, 1024x2048 29.89
/// -> 29.92. `--isa V4`, medians of 5: 8192x8192 27.38 / 50.47 -> 27.78 / 58.70, 4096x16384
/// 27.01 / 49.23 -> 27.65 / 57.39. Tried at the same time and not taken: the same for the
/// AVX-512 `F32` kernel (8192x8192 20.46 / 40.27 -> 20.28 / 39.83), the dequantizer (within
/// the noise), the AVX2 row-split `I8` kernels (Q4 34.51 / 67.45 -> 35.21 / 66.51, Q5 25.94 /
/// 51.50 -> 26.51 / 51.32) and the AVX2 BF16 and FP32 `F32` kernels (slower: BF16 10.62 /
/// 17.18 -> 8.88 / 16.10, FP32 6.64 / 9.03 -> 4.73 / 8.37). On session 26's Intel Xeon (family 6
/// model 167 under KVM, 48 KiB L1d, 2 MiB L2 a core) `prefetcht0` was the faster, in each of four
/// sets: 8192x8192 from memory, medians of 5 alternations, L2 only -> L1, `--isa V3` 21.28 /
/// 41.71 -> 22.65 / 44.12, `--isa V4` 23.36 / 43.77 -> 24.28 / 45.89 (sets of 3: V3 22.12 /
/// 43.70 -> 22.84 / 44.58 and 22.09 / 39.75 -> 22.67 / 44.20, V4 24.28 / 46.68 -> 24.47 /
/// 48.99), and with this function in place, `--isa V3`, 3 alternations, 21.40 / 42.88 -> 22.67
/// / 44.37.
const fn i8_codes_l2(amd: bool) -> bool {
    amd
}

/// The start of row `row`'s share of the next 128-row band's scale plane, for the AVX2
/// kernels' band prefetch (`I8` since session 12, `F32` since session 24): the band's plane is `512 nkt` contiguous bytes, and row `j` of a
/// band prefetches bytes `4 nkt j .. 4 nkt (j + 1)` of the next one, one line per 8 chunks
/// (`4 nkt <= 8 chunks`), so by the end of a band the whole next plane has been fetched in
/// order, at an even rate of one line per 8 code lines.
///
/// Why: the first 32 rows of a band are the first to touch each of its 1024 scale lines (a
/// line holds the scales of 16 rows: 4 consecutive rows in each of the 4 sub-bands 32 apart):
/// every fourth of them brings in 128 new lines, 512 bytes apart (8 KiB beside its 4 KiB of
/// codes at K = 8192), while rows 32-127 read no scales from memory: a burst that the per-chunk
/// prefetch ([`ahead_scales`]) only starts 8 chunks ahead. Session 12's host (8192x8192 from
/// memory, medians of 3-4 alternations, G weights/s, 1 / 2 threads): 23.6-24.2 -> 24.0-25.4 /
/// 46.1-47.6 -> 48.5-50.1. Tried with it and dropped: prefetching 32 rows further ahead
/// (47.6 -> 46.9), in the band's second half at twice the rate (the same as this), by
/// `prefetcht1` (into L2 only: 49.1 -> 49.0), without the per-chunk scale prefetch (slightly
/// slower, 49.8 -> 49.1), and with that prefetch 4096 bytes ahead instead of [`PF_S_I8`]
/// (49.1 -> 48.4).
///
/// What the swizzle still costs (two threads, same host and method): reading the scales as if
/// they were row-major, 8 bytes per chunk (a wrong-result experiment), gives 55-58 against
/// 45-47 here; reading only the first of a chunk's two lines, 51. A likely reason (this VM has
/// no hardware counters to confirm it): a row's 128 scale lines are 512 bytes apart, so they
/// fall in 8 of the L1 cache's 64 sets (16 lines a set, 12 ways), and the next row, which
/// shares every line, misses them all again. Tried to get there and dropped: copying each band
/// into a row-major buffer (AVX2 4x4 transposes of 8 tiles, rows padded by a cache line; the
/// copy took about 5 us, 13K TSC cycles, a band) 44.7-46.5 -> 47.6-47.9; the same copy built a
/// share per row into a second buffer, 45.7 -> 46.0; four rows 32 apart per pass (the AVX-512
/// quad, sharing the 16-byte units) 43.9 -> 42.4, cache-resident 29 -> 25; pairs 32 apart
/// 45.2 -> 46.2, within the noise. Session 13: rows `n` and `n + 1` in one pass, sharing every
/// scale line (49.7 -> 40.4: one code stream per thread instead of two); odd rows walking their
/// chunks backwards, to start on the scale lines the row before left in L1 (47.9 -> 27.5:
/// backward code streams defeat the prefetchers).
/// Session 25 (Zen 4 class, `docs/perf/2026-12-07-s25-nvfp4-bounds/`, one thread, 256x8192
/// cache-resident): with no scale loads the `I8` kernel gains 14% (30.5 -> 34.8), with the
/// first line of each chunk loaded but not the second 18%, with both loaded but no NaN test and
/// no conversion 5%. Tried and dropped: each band's scale bytes copied row-major into a buffer,
/// 8 bytes a store (30.5 -> 24.2), and two pairs of adjacent rows a pass (27.6; from memory, two
/// threads, 53.0 -> 28.0).
///
/// The AVX2 `F32` kernel (session 24, Zen 4 class, `report --isa V3`, G weights/s, one / two
/// threads, from memory, medians of 7 alternations): 8192x8192 16.04 / 32.09 -> 16.74 / 33.47,
/// 4096x16384 16.20 / 32.59 -> 16.25 / 32.45; medians of 5: 16384x2048 17.65 / 35.08 -> 17.60
/// / 34.81; cache-resident, one thread, 1024x2048 18.12 -> 17.87, 256x8192 (3) 17.00 -> 16.85.
#[inline(always)]
fn band_share(scales: &[u8], row: usize, nkt: usize) -> *const u8 {
    let next = scale_index(128 * (row / 128 + 1), 0, nkt);
    scales.as_ptr().wrapping_add(next + (row % 128) * 4 * nkt)
}

/// At chunk `c` of a row, the line of its [`band_share`] `bp` due then: one line per 8 chunks.
#[inline(always)]
fn band_ahead(bp: *const u8, c: usize) {
    if c.is_multiple_of(8) {
        prefetch::line(bp.wrapping_add(8 * c));
    }
}

/// Software prefetch of both scale lines of chunk `c`, `D` bytes ahead in the row's scale span
/// ([`PF_S_I8`]). The four rows of an AVX-512 quad pass share these lines, so only its first
/// row prefetches them (each row had prefetched them, 8 prefetches for 2 lines; session 11's
/// host, 8192x8192 from memory, medians of 4 alternations, G weights/s, 1 / 2 threads:
/// AVX-512 `F32` 19.8 -> 21.9 / 40.0 -> 43.4, `I8` unchanged, 27.6 -> 27.7 / 53.8 -> 53.9).
#[inline(always)]
fn ahead_scales<const D: usize>(sr: &[u8], c: usize) {
    prefetch::line(sr.as_ptr().wrapping_add(SCALE_STRIDE * c + D));
    prefetch::line(sr.as_ptr().wrapping_add(SCALE_STRIDE * c + SCALE_HI + D));
}

/// The 8 block scales of a chunk as exact binary32 (AVX2; `V4` runs it too).
#[inline(always)]
fn scales_v3(s: pulp::x86::V3, b: [u8; 8]) -> __m256 {
    let t = s
        .avx2
        ._mm256_cvtepu8_epi32(pulp::cast([u64::from_le_bytes(b), 0u64]));
    e4m3fn_lanes_v3(s, t)
}

/// Whether any of the 8 E4M3FN bytes of `v` is a NaN word (0x7f or 0xff): one scalar test for
/// the binary16 routes, which would not give those a NaN.
#[inline(always)]
fn has_nan_word(v: u64) -> bool {
    (v & 0x7f7f_7f7f_7f7f_7f7f).wrapping_add(0x0101_0101_0101_0101) & 0x8080_8080_8080_8080 != 0
}

/// AVX2 + F16C: 8 non-NaN E4M3FN bytes, each in the high byte of a 16-bit lane of `w` (low bytes
/// zero), to their exact values times `2^-8`: `(b << 8) >>arith 1 & 0xbf80` is the binary16 word
/// of that (see [`scales16_v4`]), widened exactly by `vcvtph2ps`. Only inlined into the `_f16c`
/// kernels.
#[inline(always)]
fn hi_bytes_f16c(s: pulp::x86::V3, w: __m128i) -> __m256 {
    let h = s.sse2._mm_and_si128(
        s.sse2._mm_srai_epi16::<1>(w),
        s.sse2._mm_set1_epi16(0xbf80u16 as i16),
    );
    // SAFETY: only reached from the `_f16c` kernels, whose callers guarantee F16C.
    unsafe { core::arch::x86_64::_mm256_cvtph_ps(h) }
}

/// Two chunks' block scales (8 bytes each, as from [`chunk_scales`]) as exact binary32 in one
/// 16-lane vector. When no byte is a NaN word (one scalar test per 8 bytes), through binary16 as
/// in `fp8x86::decode32_v4` — in 16-bit lanes `((b << 8) >>arith 1) & 0xbf80` is the binary16
/// word of the value times 2^-8 (subnormals included), widened exactly, and the product by 2^8
/// is exact: 6 vector instructions for 16 scales instead of 32; else each half through
/// [`scales_v3`].
#[inline(always)]
fn scales16_v4(s: pulp::x86::V4, b0: u64, b1: u64) -> __m512 {
    if has_nan_word(b0) || has_nan_word(b1) {
        return pulp::cast([scales_v3(*s, b0.to_le_bytes()), scales_v3(*s, b1.to_le_bytes())]);
    }
    let w = s.avx2._mm256_cvtepu8_epi16(pulp::cast([b0, b1]));
    let h = s.avx2._mm256_and_si256(
        s.avx2._mm256_srai_epi16::<1>(s.avx2._mm256_slli_epi16::<8>(w)),
        s.avx._mm256_set1_epi16(0xbf80u16 as i16),
    );
    s.avx512f
        ._mm512_mul_ps(s.avx512f._mm512_cvtph_ps(h), s.avx512f._mm512_set1_ps(256.0))
}

/// The 16-byte scale unit of K-tile `t` shared by the rows `n, n + 32, n + 64, n + 96` of a
/// 128-row tile (`qs` starts at `scale_index(n, 0, nkt)`, `n % 128 < 32`): row `n + 32 j` has
/// bytes `4 j .. 4 j + 4`. Zero for a K-tile beyond the physical ones.
#[inline(always)]
fn quad_unit(qs: &[u8], nkt: usize, t: usize) -> u128 {
    if t >= nkt {
        return 0;
    }
    qs.get(512 * t..512 * t + 16)
        .and_then(|b| <[u8; 16]>::try_from(b).ok())
        .map_or(0, u128::from_le_bytes)
}

/// The block scales of chunk `c` of a pass's rows (their scale spans `sr`, from
/// [`row_slices`]), two rows per 16-lane vector: `out[2p]` holds row `2p` in its low half and
/// row `2p + 1` in its high half (the odd entries are unused). `QUAD`: the rows are
/// `n, n + 32, n + 64, n + 96` of one 128-row tile and `qs` starts at `scale_index(n, 0, nkt)`:
/// their 8 scale bytes each come from two 16-byte loads ([`quad_unit`]).
#[inline(always)]
fn pass_scales_v4<const QUAD: bool, const R: usize>(
    s: pulp::x86::V4,
    sr: &[&[u8]; R],
    qs: &[u8],
    nkt: usize,
    c: usize,
) -> [__m512; R] {
    let mut out = [s.avx512f._mm512_setzero_ps(); R];
    if QUAD {
        let (a, b) = (quad_unit(qs, nkt, 2 * c), quad_unit(qs, nkt, 2 * c + 1));
        out[0] = scales16_v4(s, quad_row(a, b, 0), quad_row(a, b, 1));
        out[2 % R] = scales16_v4(s, quad_row(a, b, 2), quad_row(a, b, 3));
        return out;
    }
    let mut r = 0;
    while r < R {
        let b0 = u64::from_le_bytes(chunk_scales(sr[r], c));
        let b1 = if r + 1 < R {
            u64::from_le_bytes(chunk_scales(sr[r + 1], c))
        } else {
            0
        };
        out[r] = scales16_v4(s, b0, b1);
        r += 2;
    }
    out
}

/// Row `j`'s 8 chunk-scale bytes (as from [`chunk_scales`]) from the two [`quad_unit`]s of a
/// chunk.
#[inline(always)]
fn quad_row(a: u128, b: u128, j: u32) -> u64 {
    (a >> (32 * j)) as u32 as u64 | ((b >> (32 * j)) as u32 as u64) << 32
}

/// The `I8` AVX2 row loop (`V3`, and `V3_512b`, whose generic I8 kernel is the AVX2 one).
#[inline(always)]
pub(crate) fn i8_rows_v3(s: pulp::x86::V3, job: I8Job<'_, '_, '_>) {
    by_vendor_and_batch!(job.nb, i8_rows_v3_nb[false, false](s, job))
}

/// [`i8_rows_v3`] for `min(nb, NB)` batch rows (exactly `NB` when `NB <= 2`); with one batch
/// row, [`V3_STREAMS`] weight streams far apart per pass. Per row the same operations in the
/// same order either way.
#[inline(always)]
fn i8_rows_v3_nb<const F16C: bool, const VNNI: bool, const AMD: bool, const NB: usize>(
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
    let corr = totals_corr(act);
    let dtot = totals_dsub(act);
    let st = (&corr[..], &dtot[..]);
    let mut row = r0;
    if NB == 1 {
        let q = (r1 - r0) / V3_STREAMS;
        for i in 0..q {
            let rows = stream_rows::<V3_STREAMS>(r0, q, i);
            let y = i8_pass_v3::<F16C, VNNI, AMD, 1, V3_STREAMS>(s, &w, act, st, nb, rows);
            store_rows(ys, r0, rows, &y, 1);
        }
        row = r0 + V3_STREAMS * q;
    }
    let live = if NB <= 2 { NB } else { nb.min(NB) };
    while row < r1 {
        let y = i8_pass_v3::<F16C, VNNI, AMD, NB, 1>(s, &w, act, st, nb, [row]);
        store_rows(ys, r0, [row], &y, live);
        row += 1;
    }
}

/// Weight streams per pass of the AVX2 `I8` kernel with one batch row (two far apart, as
/// `f32x86` does; one thread, 8192x8192 from memory, three alternations against one stream:
/// 19.4-21.1 -> 21.4-22.9 G weights/s).
const V3_STREAMS: usize = 2;

/// The sub-block of each lane of the AVX2 `I8` kernel's sub-block totals: `hadd_epi16` of the
/// two half-chunk sums and the widening `madd` leave sub-blocks 0, 1 (half 0), 4, 5 (half 1)
/// in the low 128 bits and 2, 3, 6, 7 in the high ones.
const TOTALS_ORDER: [usize; 8] = [0, 1, 4, 5, 2, 3, 6, 7];

/// The offset correction of each sub-block, per batch row and chunk, in [`TOTALS_ORDER`]: the
/// sum of its two 8-position correction lanes (`QuantAct::corr`).
fn totals_corr(act: &QuantAct) -> Vec<[i32; 8]> {
    act.corr
        .iter()
        .map(|cv| TOTALS_ORDER.map(|j| cv[2 * j] + cv[2 * j + 1]))
        .collect()
}

/// Each chunk's activation steps `d_b` per sub-block in [`TOTALS_ORDER`], per batch row and chunk.
fn totals_dsub(act: &QuantAct) -> Vec<[f32; 8]> {
    act.dsub.iter().map(|d| TOTALS_ORDER.map(|j| d[j])).collect()
}

/// Byte-shuffle control taking 8 scale bytes (sub-blocks 0..7) to the high bytes of 8 16-bit
/// lanes in [`TOTALS_ORDER`], the low bytes zero: `b << 8` per lane, in the totals' order.
const TOTALS_HI: [i8; 16] = {
    let mut t = [-128i8; 16];
    let mut j = 0;
    while j < 8 {
        t[2 * j + 1] = TOTALS_ORDER[j] as i8;
        j += 1;
    }
    t
};

/// A chunk's 8 block scales (as from [`chunk_scales`]) times `2^-8`, exactly, in lane order
/// [`TOTALS_ORDER`]: with F16C and no NaN word, [`TOTALS_HI`] then [`hi_bytes_f16c`] (the
/// binary16 route of [`scales_lo_f16c`], in another order); else [`scales_v3`] of the reordered
/// bytes times `2^-8` (exact: the least E4M3FN magnitude is `2^-9`). The same values either
/// way.
///
/// This conversion is a fifth of the AVX2 `I8` kernel's time on the AMD EPYC (Zen 3) of session
/// 17 (1024x8192 in L3, one thread, best of 2 s of calls: a wrong-result build with the bytes
/// loaded but not converted ran 30.8 G weights/s against 25.5). Tried there and dropped: the
/// binary16 words built on the integer side by two BMI2 `pdep` (mask `0xbf80` per lane) and
/// moved over by two `vmovq` (21.9), the bytes loaded a second time straight into a vector
/// register (`vmovd`, `vpinsrd`) beside the scalar NaN test (21-22), each chunk's scales
/// converted one chunk ahead in the loop (23.8), and the integer route ([`scales_v3`]) in place
/// of F16C (20.1).
#[inline(always)]
fn scales_totals<const F16C: bool>(s: pulp::x86::V3, b: [u8; 8]) -> __m256 {
    let v = u64::from_le_bytes(b);
    if F16C && !has_nan_word(v) {
        // F16C is only true inside the `_f16c` kernels.
        let w = s
            .ssse3
            ._mm_shuffle_epi8(pulp::cast([v, 0u64]), pulp::cast(TOTALS_HI));
        return hi_bytes_f16c(s, w);
    }
    // The 16-bit units (sub-blocks 0-1, 2-3, 4-5, 6-7) in the order 0, 2, 1, 3.
    let t = (v & 0xffff_0000_0000_ffff) | (v >> 16 & 0xffff_0000) | (v << 16 & 0xffff_0000_0000);
    scales_lo_v3(s, t.to_le_bytes())
}

/// The rows `rows` (one per weight stream) against batch rows `min(nb, NB)`: `out[r][b]`.
/// `corr`, `dtot`: [`totals_corr`], [`totals_dsub`]. `VNNI`: only true inside
/// [`i8_rows_v3_f16c_vnni`].
#[inline(always)]
fn i8_pass_v3<const F16C: bool, const VNNI: bool, const AMD: bool, const NB: usize, const R: usize>(
    s: pulp::x86::V3,
    w: &Weights<'_>,
    act: &QuantAct,
    (corr, dtot): (&[[i32; 8]], &[[f32; 8]]),
    nb: usize,
    rows: [usize; R],
) -> [[f32; NB]; R] {
    let nb = if NB <= 2 { NB } else { nb.min(NB) };
    let mut out = [[0f32; NB]; R];
    let Weights::Nvfp4 {
        row_bytes,
        codes,
        scales,
        nkt,
        d,
        ..
    } = *w
    else {
        return out;
    };
    let QuantAct {
        chunks,
        split: xsplit,
        ..
    } = act;
    let chunks = *chunks;
    let (avx, avx2, fma) = (s.avx, s.avx2, s.fma);
    let tbl: __m256i = pulp::cast([U_TBL, U_TBL]);
    let m0f = avx._mm256_set1_epi8(0x0f);
    let ones = avx._mm256_set1_epi16(1);
    let post = Post::Div(d);
    let mut pad = [0u8; 64];
    let mut acc = [[avx._mm256_setzero_ps(); NB]; R];
    // Per batch row its staged activation codes, sub-block steps and corrections, checked once.
    let (mut xr, mut dr, mut kr) = ([Runs::EMPTY; NB], [Runs::EMPTY; NB], [Runs::EMPTY; NB]);
    for b in 0..nb {
        xr[b] = Runs::new(xsplit, b * chunks, 1, chunks);
        dr[b] = Runs::new(dtot, b * chunks, 1, chunks);
        kr[b] = Runs::new(corr, b * chunks, 1, chunks);
    }
    let mut rc: [&[u8]; R] = [&[]; R];
    let mut sr: [&[u8]; R] = [&[]; R];
    let mut bp = [core::ptr::null::<u8>(); R];
    for (r, &row) in rows.iter().enumerate() {
        (rc[r], sr[r]) = row_slices(codes, scales, row, row_bytes, nkt);
        bp[r] = band_share(scales, row, nkt);
    }
    // One chunk `c` of row `r`: its code bytes and its 8 block-scale bytes (a macro, not a
    // closure: a closure does not inherit the kernel's target features).
    macro_rules! step {
        ($c:expr, $r:expr, $bytes:expr, $sbytes:expr) => {{
            let (c, r, bytes, sbytes): (usize, usize, &[u8; 64], [u8; 8]) = ($c, $r, $bytes, $sbytes);
            let sv = scales_totals::<F16C>(s, sbytes);
            // Half h: even positions (low nibbles), odd positions (high nibbles), offset codes.
            let hv: [__m256i; 2] = pulp::cast(*bytes);
            let mut ue = [avx._mm256_setzero_si256(); 2];
            let mut uo = [avx._mm256_setzero_si256(); 2];
            for h in 0..2 {
                ue[h] = avx2._mm256_shuffle_epi8(tbl, avx2._mm256_and_si256(hv[h], m0f));
                let hi = avx2._mm256_and_si256(avx2._mm256_srli_epi16::<4>(hv[h]), m0f);
                uo[h] = avx2._mm256_shuffle_epi8(tbl, hi);
            }
            for (b, a) in acc[r].iter_mut().enumerate().take(nb) {
                let (xb, db, cb) = (xr[b].get(c), dr[b].get(c), kr[b].get(c));
                // Even positions of halves 0, 1, then odd positions of halves 0, 1.
                let xv: [__m256i; 4] = pulp::cast(xb[0]);
                let sd = avx._mm256_mul_ps(sv, pulp::cast(db[0]));
                let m = if VNNI {
                    // Two `vpdpbusd` per half: lane l of half h is exactly the sum over its
                    // 8-position lane l; `hadd_epi32` of the halves puts the sub-block totals in
                    // [`TOTALS_ORDER`], as below (the same integers, so the same bits).
                    let mut q = [avx._mm256_setzero_si256(); 2];
                    for (h, qh) in q.iter_mut().enumerate() {
                        // SAFETY: VNNI is only true inside `i8_rows_v3_f16c_vnni`, whose
                        // caller guarantees AVX-VNNI.
                        *qh = unsafe {
                            use core::arch::x86_64::_mm256_dpbusd_avx_epi32 as dp;
                            dp(dp(*qh, ue[h], xv[h]), uo[h], xv[2 + h])
                        };
                    }
                    avx2._mm256_hadd_epi32(q[0], q[1])
                } else {
                    // No i16 overflow: |each maddubs lane| <= 2 * 24 * 127, the sums of two
                    // and of four at most 4 and 8 times that.
                    let mut p = [avx._mm256_setzero_si256(); 2];
                    for (h, ph) in p.iter_mut().enumerate() {
                        *ph = avx2._mm256_add_epi16(
                            avx2._mm256_maddubs_epi16(ue[h], xv[h]),
                            avx2._mm256_maddubs_epi16(uo[h], xv[2 + h]),
                        );
                    }
                    avx2._mm256_madd_epi16(avx2._mm256_hadd_epi16(p[0], p[1]), ones)
                };
                let m = avx2._mm256_add_epi32(m, pulp::cast(cb[0]));
                *a = fma._mm256_fmadd_ps(avx._mm256_cvtepi32_ps(m), sd, *a);
            }
        }};
    }
    // The software prefetches of chunk `c` of row `r`.
    let spf = scale_prefetch(AMD);
    let l2 = i8_codes_l2(AMD);
    let pf = |c: usize, r: usize| {
        band_ahead(bp[r], c);
        ahead::<PF_S_I8>(rc[r], sr[r], c, spf, l2);
    };
    // The whole chunks first, in a loop with no partial-chunk path: `chunk_of`'s copy into
    // `pad` is a `memcpy` call, and around it the compiler kept vector registers on the stack
    // on every chunk (see the module docs).
    let whole = (row_bytes / 64).min(chunks);
    // Of those, the chunks whose two scale words lie inside every row's scale span take their
    // bytes from runs checked once here ([`Runs`]).
    let mut fast = whole;
    for (rcr, srr) in rc.iter().zip(&sr) {
        fast = RowRuns::count(rcr, srr, fast);
    }
    let mut runs = [RowRuns::new(&[], &[], 0); R];
    for (run, (rcr, srr)) in runs.iter_mut().zip(rc.iter().zip(&sr)) {
        *run = RowRuns::new(rcr, srr, fast);
    }
    for c in 0..fast {
        for (r, run) in runs.iter().enumerate() {
            pf(c, r);
            let (bytes, sbytes) = run.chunk(c);
            step!(c, r, bytes, sbytes);
        }
    }
    for c in fast..whole {
        for r in 0..R {
            pf(c, r);
            let bytes = rc[r]
                .get(64 * c..64 * c + 64)
                .and_then(|b| b.try_into().ok())
                .unwrap_or(&[0; 64]);
            step!(c, r, bytes, chunk_scales(sr[r], c));
        }
    }
    for c in whole..chunks {
        for r in 0..R {
            pf(c, r);
            let (bytes, sbytes) = chunk_of(rc[r], sr[r], c, &mut pad);
            step!(c, r, bytes, sbytes);
        }
    }
    for (o, ar) in out.iter_mut().zip(&acc) {
        for (b, a) in ar.iter().enumerate().take(nb) {
            o[b] = post.apply(tree8(pulp::cast(*a)) * 128.0);
        }
    }
    out
}

/// The `I8` AVX-512 row loop compiled with VNNI (see `i8x86::rows_v4_vnni`).
///
/// # Safety
/// The CPU must have the `V4` features (the token proves them) and AVX-512 VNNI.
#[target_feature(
    enable = "avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx512vnni,avx2,fma,bmi1,bmi2,lzcnt,popcnt"
)]
pub(crate) unsafe fn i8_rows_v4_vnni(s: pulp::x86::V4, job: I8Job<'_, '_, '_>) {
    i8_rows_v4_impl::<true>(s, job)
}

/// The `I8` AVX-512BW row loop.
#[inline(always)]
pub(crate) fn i8_rows_v4(s: pulp::x86::V4, job: I8Job<'_, '_, '_>) {
    i8_rows_v4_impl::<false>(s, job)
}

/// `VNNI`: only true when called from [`i8_rows_v4_vnni`].
#[inline(always)]
fn i8_rows_v4_impl<const VNNI: bool>(s: pulp::x86::V4, job: I8Job<'_, '_, '_>) {
    by_batch!(job.nb, i8_rows_v4_impl_nb[VNNI](s, job))
}

/// [`i8_rows_v4_impl`] for `min(nb, NB)` batch rows (exactly `NB` when `NB <= 2`). With one
/// batch row, each whole 128-row scale tile of the block runs as 32 passes of four rows 32
/// apart (four weight streams, see `f32x86::rows_v4_impl`, sharing their scale units; see the
/// module docs); the other rows one per pass, with the same per-row arithmetic.
#[inline(always)]
fn i8_rows_v4_impl_nb<const VNNI: bool, const NB: usize>(s: pulp::x86::V4, job: I8Job<'_, '_, '_>) {
    let I8Job {
        w,
        act,
        nb,
        r0,
        r1,
        ys,
    } = job;
    let (xsplit, corr8) = (&act.split[..], &act.corr[..]);
    let live = if NB <= 2 { NB } else { nb.min(NB) };
    let mut row = r0;
    while row < r1 {
        if NB == 1 && row % 128 == 0 && row + 128 <= r1 {
            // A whole 128-row scale tile: quads of rows 32 apart.
            for i in 0..32 {
                let rows = [row + i, row + i + 32, row + i + 64, row + i + 96];
                let y = i8_pass_v4::<VNNI, true, 1, 4>(s, &w, act, xsplit, corr8, nb, rows);
                store_rows(ys, r0, rows, &y, 1);
            }
            row += 128;
        } else {
            let y = i8_pass_v4::<VNNI, false, NB, 1>(s, &w, act, xsplit, corr8, nb, [row]);
            store_rows(ys, r0, [row], &y, live);
            row += 1;
        }
    }
}

/// The rows `rows` (one per weight stream) against batch rows `min(nb, NB)`: `out[r][b]`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn i8_pass_v4<const VNNI: bool, const QUAD: bool, const NB: usize, const R: usize>(
    s: pulp::x86::V4,
    w: &Weights<'_>,
    act: &QuantAct,
    xsplit: &[[i8; CHUNK]],
    corr8: &[[i32; CHUNK / 8]],
    nb: usize,
    rows: [usize; R],
) -> [[f32; NB]; R] {
    let nb = if NB <= 2 { NB } else { nb.min(NB) };
    let mut out = [[0f32; NB]; R];
    let Weights::Nvfp4 {
        row_bytes,
        codes,
        scales,
        nkt,
        d,
        ..
    } = *w
    else {
        return out;
    };
    let QuantAct { chunks, dsub, .. } = act;
    let chunks = *chunks;
    let (f, bw) = (s.avx512f, s.avx512bw);
    let tbl: __m512i = pulp::cast([U_TBL; 4]);
    let m0f = f._mm512_set1_epi8(0x0f);
    let ones = f._mm512_set1_epi16(1);
    // Lane l holds positions 8l .. 8l + 7: sub-block l / 2.
    let idx: __m512i = pulp::cast(core::array::from_fn::<i32, 16, _>(|l| (l / 2) as i32));
    let post = Post::Div(d);
    let mut pad = [0u8; 64];
    let mut acc = [[f._mm512_setzero_ps(); NB]; R];
    let mut rc: [&[u8]; R] = [&[]; R];
    let mut sr: [&[u8]; R] = [&[]; R];
    for (r, &row) in rows.iter().enumerate() {
        (rc[r], sr[r]) = row_slices(codes, scales, row, row_bytes, nkt);
    }
    let full = row_bytes / 64;
    let qs = scales.get(scale_index(rows[0], 0, nkt)..).unwrap_or(&[]);
    let amd = amd_cores();
    let spf = scale_prefetch(amd);
    let l2 = i8_codes_l2(amd);
    for c in 0..chunks {
        let pv = pass_scales_v4::<QUAD, R>(s, &sr, qs, nkt, c);
        let mut sv = [s.avx._mm256_setzero_ps(); R];
        for (r, o) in sv.iter_mut().enumerate() {
            let v: [__m256; 2] = pulp::cast(pv[r & !1]);
            *o = v[r & 1];
        }
        for r in 0..R {
            ahead::<PF_S_I8>(rc[r], sr[r], c, spf && (!QUAD || r == 0), l2);
            let bytes = if c < full {
                rc[r][64 * c..64 * c + 64].try_into().unwrap_or(&[0; 64])
            } else {
                chunk_of(rc[r], sr[r], c, &mut pad).0
            };
            let sv = sv[r];
            let v: __m512i = pulp::cast(*bytes);
            // Even positions (low nibbles), odd positions (high nibbles), offset codes.
            let ue = bw._mm512_shuffle_epi8(tbl, f._mm512_and_si512(v, m0f));
            let uo = bw._mm512_shuffle_epi8(tbl, f._mm512_and_si512(bw._mm512_srli_epi16::<4>(v), m0f));
            for (b, a) in acc[r].iter_mut().enumerate().take(nb) {
                let i = b * chunks + c;
                let xv: [__m512i; 2] = pulp::cast(xsplit[i]);
                let cv: __m512i = pulp::cast(corr8[i]);
                let m = if VNNI {
                    // SAFETY: VNNI is only true inside `i8_rows_v4_vnni`, whose caller
                    // guarantees AVX-512 VNNI.
                    unsafe {
                        use core::arch::x86_64::_mm512_dpbusd_epi32 as dp;
                        dp(dp(cv, ue, xv[0]), uo, xv[1])
                    }
                } else {
                    // No i16 overflow: |each maddubs lane| <= 2 * 24 * 127, the sum twice that.
                    let p = bw._mm512_add_epi16(
                        bw._mm512_maddubs_epi16(ue, xv[0]),
                        bw._mm512_maddubs_epi16(uo, xv[1]),
                    );
                    f._mm512_add_epi32(bw._mm512_madd_epi16(p, ones), cv)
                };
                let sd: __m256 = s.avx._mm256_mul_ps(sv, pulp::cast(dsub[i]));
                let sc = f._mm512_permutexvar_ps(idx, f._mm512_castps256_ps512(sd));
                *a = f._mm512_fmadd_ps(f._mm512_cvtepi32_ps(m), sc, *a);
            }
        }
    }
    for (o, ar) in out.iter_mut().zip(&acc) {
        for (b, a) in ar.iter().enumerate().take(nb) {
            o[b] = post.apply(s.reduce_sum_f32s(pulp::cast(*a)) * 0.5);
        }
    }
    out
}

/// The `F32` AVX2 row loop: four 8-lane pre-weight vectors per 32 positions, fed to the
/// accumulators in the generic kernel's order.
#[inline(always)]
pub(crate) fn f32_rows_v3(s: pulp::x86::V3, job: F32Job<'_, '_, '_>) {
    by_vendor_and_batch!(job.nb, f32_rows_v3_nb[false](s, job))
}

/// [`f32_rows_v3`] for `min(nb, NB)` batch rows (exactly `NB` when `NB <= 2`).
#[inline(always)]
fn f32_rows_v3_nb<const F16C: bool, const AMD: bool, const NB: usize>(
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
    let nb = if NB <= 2 { NB } else { nb.min(NB) };
    let Weights::Nvfp4 {
        row_bytes,
        codes,
        scales,
        nkt,
        d,
        ..
    } = w
    else {
        return;
    };
    let (avx, avx2, fma) = (s.avx, s.avx2, s.fma);
    let chunks = w.chunks();
    let kc = chunks * CHUNK;
    // The activations of each chunk in the nibble-field order: half h, vector j = 4 p + t,
    // lane l is position 64 h + 8 l + 2 t + p (byte t of the 32-bit lane l of the half's code
    // bytes, low nibble p = 0, high nibble p = 1).
    let xp: Vec<[f32; CHUNK]> = (0..nb * chunks)
        .map(|i| {
            let (b, c) = (i / chunks, i % chunks);
            let xr = &xs[b * kc + CHUNK * c..b * kc + CHUNK * (c + 1)];
            core::array::from_fn(|q| {
                let (h, j, l) = (q / 64, (q % 64) / 8, q % 8);
                xr[64 * h + 8 * l + 2 * (j % 4) + j / 4]
            })
        })
        .collect();
    let tbl: __m256i = pulp::cast([Q_TBL, Q_TBL]);
    let m0f = avx._mm256_set1_epi8(0x0f);
    // Lane l of half h holds positions 64 h + 8 l .. + 7: sub-block 4 h + l / 2.
    let idx = [
        avx._mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3),
        avx._mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7),
    ];
    let post = Post::Div(d);
    let mut pad = [0u8; 64];
    let spf = scale_prefetch(AMD);
    let l2 = codes_l2_only(AMD, kc);
    let mut xr = [Runs::EMPTY; NB];
    for (b, r) in xr.iter_mut().enumerate().take(nb) {
        *r = Runs::new(&xp, b * chunks, 1, chunks);
    }
    for row in r0..r1 {
        let mut acc = [[avx._mm256_setzero_ps(); 2]; NB];
        let (rc, sr) = row_slices(codes, scales, row, row_bytes, nkt);
        let bp = band_share(scales, row, nkt);
        // One chunk `c`: its code bytes and block-scale bytes (a macro, not a closure: a
        // closure does not inherit the kernel's target features).
        macro_rules! step {
            ($c:expr, $bytes:expr, $sbytes:expr) => {{
                let (c, bytes, sbytes): (usize, &[u8; 64], [u8; 8]) = ($c, $bytes, $sbytes);
                // The scales times 2^-8 and the codes below times 2^24: the sums run 2^16 above
                // `sum 2 e2m1 x s` (see `ROW_UNIT`).
                let sv = if F16C {
                    scales_lo_f16c(s, sbytes)
                } else {
                    scales_lo_v3(s, sbytes)
                };
                let hv: [__m256i; 2] = pulp::cast(*bytes);
                for h in 0..2 {
                    // `2 e2m1` of the even (low nibble) and odd (high nibble) positions as bytes.
                    let q = [
                        avx2._mm256_shuffle_epi8(tbl, avx2._mm256_and_si256(hv[h], m0f)),
                        avx2._mm256_shuffle_epi8(
                            tbl,
                            avx2._mm256_and_si256(avx2._mm256_srli_epi16::<4>(hv[h]), m0f),
                        ),
                    ];
                    let mut ev = [avx._mm256_setzero_ps(); 8];
                    for p in 0..2 {
                        // Byte t of each 32-bit lane moved to its top byte (the rest zero) and
                        // converted: `2 e2m1 * 2^24`, exact.
                        let f = top_bytes_v3(s, q[p]);
                        for t in 0..4 {
                            ev[4 * p + t] = avx._mm256_cvtepi32_ps(f[t]);
                        }
                    }
                    let sl = avx2._mm256_permutevar8x32_ps(sv, idx[h]);
                    for (b, a) in acc.iter_mut().enumerate().take(nb) {
                        let xh: &[f32; 64] = xr[b].get(c)[0][64 * h..64 * h + 64]
                            .try_into()
                            .unwrap_or(&[0.0; 64]);
                        let xv: [__m256; 8] = pulp::cast(*xh);
                        let mut blk = [
                            avx._mm256_mul_ps(ev[0], xv[0]),
                            avx._mm256_mul_ps(ev[1], xv[1]),
                        ];
                        for j in 2..8 {
                            blk[j % 2] = fma._mm256_fmadd_ps(ev[j], xv[j], blk[j % 2]);
                        }
                        a[0] = fma._mm256_fmadd_ps(blk[0], sl, a[0]);
                        a[1] = fma._mm256_fmadd_ps(blk[1], sl, a[1]);
                    }
                }
            }};
        }
        // The chunks whose code bytes and both scale words lie inside the row take them from
        // runs checked once here ([`Runs`]); the rest (a partial last chunk, scales past the
        // physical plane) through [`chunk_of`].
        let fast = RowRuns::count(rc, sr, chunks);
        let runs = RowRuns::new(rc, sr, fast);
        for c in 0..fast {
            ahead::<PF_S_F32>(rc, sr, c, spf, l2);
            band_ahead(bp, c);
            let (bytes, sbytes) = runs.chunk(c);
            step!(c, bytes, sbytes);
        }
        for c in fast..chunks {
            ahead::<PF_S_F32>(rc, sr, c, spf, l2);
            band_ahead(bp, c);
            let (bytes, sbytes) = chunk_of(rc, sr, c, &mut pad);
            step!(c, bytes, sbytes);
        }
        for (b, a) in acc.iter().enumerate().take(nb) {
            let t = tree8(pulp::cast(avx._mm256_add_ps(a[0], a[1])));
            ys[b][row - r0] = post.apply(t * ROW_UNIT);
        }
    }
}

/// The `F32` AVX-512 row loop: per 16-position sub-block a 16-entry table `E2M1 * s` indexed
/// with `permutexvar`.
#[inline(always)]
pub(crate) fn f32_rows_v4(s: pulp::x86::V4, job: F32Job<'_, '_, '_>) {
    by_batch!(job.nb, f32_rows_v4_nb[](s, job))
}

/// [`f32_rows_v4`] for `min(nb, NB)` batch rows (exactly `NB` when `NB <= 2`).
#[inline(always)]
fn f32_rows_v4_nb<const NB: usize>(s: pulp::x86::V4, job: F32Job<'_, '_, '_>) {
    let F32Job {
        w,
        xs,
        nb,
        r0,
        r1,
        ys,
    } = job;
    let nbl = if NB <= 2 { NB } else { nb.min(NB) };
    let chunks = w.chunks();
    let kc = chunks * CHUNK;
    // The activations of each chunk in nibble-lane order: vector j, lane l is position 8l + j
    // (the nibble `4j` bits up in the 32-bit lane l of the 64 code bytes).
    let xp: Vec<[f32; CHUNK]> = (0..nbl * chunks)
        .map(|i| {
            let (b, c) = (i / chunks, i % chunks);
            let xr = &xs[b * kc + CHUNK * c..b * kc + CHUNK * (c + 1)];
            core::array::from_fn(|p| xr[8 * (p % 16) + p / 16])
        })
        .collect();
    let mut row = r0;
    while row < r1 {
        if NB == 1 && row % 128 == 0 && row + 128 <= r1 {
            // A whole 128-row scale tile: quads of rows 32 apart (see `i8_rows_v4_impl_nb`).
            for i in 0..32 {
                let rows = [row + i, row + i + 32, row + i + 64, row + i + 96];
                store_rows(ys, r0, rows, &f32_pass_v4::<true, 1, 4>(s, &w, &xp, nb, rows), 1);
            }
            row += 128;
        } else {
            store_rows(
                ys,
                r0,
                [row],
                &f32_pass_v4::<false, NB, 1>(s, &w, &xp, nb, [row]),
                nbl,
            );
            row += 1;
        }
    }
}

/// The rows `rows` (one per weight stream) against batch rows `min(nb, NB)`: `out[r][b]`.
/// `xp`: the activations in nibble-lane order.
#[inline(always)]
fn f32_pass_v4<const QUAD: bool, const NB: usize, const R: usize>(
    s: pulp::x86::V4,
    w: &Weights<'_>,
    xp: &[[f32; CHUNK]],
    nb: usize,
    rows: [usize; R],
) -> [[f32; NB]; R] {
    let nb = if NB <= 2 { NB } else { nb.min(NB) };
    let mut out = [[0f32; NB]; R];
    let Weights::Nvfp4 {
        row_bytes,
        codes,
        scales,
        nkt,
        d,
        ..
    } = *w
    else {
        return out;
    };
    let f = s.avx512f;
    let chunks = w.chunks();
    let e2m1: __m512 = pulp::cast(E2M1_TO_F32);
    // Lane l holds positions 8l .. 8l + 7: sub-block l / 2 (of the first row's 8 scales; the
    // second row of a pair: l / 2 + 8).
    let idx: __m512i = pulp::cast(core::array::from_fn::<i32, 16, _>(|l| (l / 2) as i32));
    let idx2 = f._mm512_add_epi32(idx, f._mm512_set1_epi32(8));
    let post = Post::Div(d);
    let mut pad = [0u8; 64];
    let mut acc = [[[f._mm512_setzero_ps(); 2]; NB]; R];
    let mut rc: [&[u8]; R] = [&[]; R];
    let mut sr: [&[u8]; R] = [&[]; R];
    for (r, &row) in rows.iter().enumerate() {
        (rc[r], sr[r]) = row_slices(codes, scales, row, row_bytes, nkt);
    }
    let full = row_bytes / 64;
    let qs = scales.get(scale_index(rows[0], 0, nkt)..).unwrap_or(&[]);
    for c in 0..chunks {
        let pv = pass_scales_v4::<QUAD, R>(s, &sr, qs, nkt, c);
        let mut sl = [f._mm512_setzero_ps(); R];
        for (r, o) in sl.iter_mut().enumerate() {
            *o = f._mm512_permutexvar_ps(if r & 1 == 0 { idx } else { idx2 }, pv[r & !1]);
        }
        for r in 0..R {
            ahead::<PF_S_F32>(rc[r], sr[r], c, !QUAD || r == 0, false);
            let bytes = if c < full {
                rc[r][64 * c..64 * c + 64].try_into().unwrap_or(&[0; 64])
            } else {
                chunk_of(rc[r], sr[r], c, &mut pad).0
            };
            let v: __m512i = pulp::cast(*bytes);
            // A loop, not `array::from_fn` (see `i8_rows_v3`).
            let mut ev = [f._mm512_setzero_ps(); 8];
            for (j, e) in ev.iter_mut().enumerate() {
                let nib = f._mm512_srlv_epi32(v, f._mm512_set1_epi32(4 * j as i32));
                *e = f._mm512_permutexvar_ps(nib, e2m1);
            }
            for (b, a) in acc[r].iter_mut().enumerate().take(nb) {
                let xv: [__m512; 8] = pulp::cast(xp[b * chunks + c]);
                let mut blk = [f._mm512_setzero_ps(); 2];
                for j in 0..8 {
                    blk[j % 2] = f._mm512_fmadd_ps(ev[j], xv[j], blk[j % 2]);
                }
                a[0] = f._mm512_fmadd_ps(blk[0], sl[r], a[0]);
                a[1] = f._mm512_fmadd_ps(blk[1], sl[r], a[1]);
            }
        }
    }
    for (o, ar) in out.iter_mut().zip(&acc) {
        for (b, a) in ar.iter().enumerate().take(nb) {
            o[b] = post.apply(s.reduce_sum_f32s(pulp::cast(f._mm512_add_ps(a[0], a[1]))));
        }
    }
    out
}

/// [`i8_rows_v3`] compiled with F16C: the block scales go through binary16
/// ([`scales_totals`]); bit-identical to [`i8_rows_v3`] (the same exact scales).
///
/// # Safety
/// The CPU must have the `V3` features (the token proves them) and F16C.
#[target_feature(enable = "avx,avx2,fma,f16c,bmi1,bmi2,lzcnt,popcnt")]
pub(crate) unsafe fn i8_rows_v3_f16c(s: pulp::x86::V3, job: I8Job<'_, '_, '_>) {
    by_vendor_and_batch!(job.nb, i8_rows_v3_nb[true, false](s, job))
}

/// [`i8_rows_v3_f16c`] compiled with AVX-VNNI too: each half chunk's i32 lanes from two
/// `vpdpbusd` and the sub-block totals from one `hadd_epi32`, in place of four `maddubs`, two
/// adds, a `hadd_epi16` and a `madd`; bit-identical to [`i8_rows_v3`] (the same integers).
///
/// # Safety
/// The CPU must have the `V3` features (the token proves them), F16C and AVX-VNNI.
#[target_feature(enable = "avx,avx2,fma,f16c,avxvnni,bmi1,bmi2,lzcnt,popcnt")]
pub(crate) unsafe fn i8_rows_v3_f16c_vnni(s: pulp::x86::V3, job: I8Job<'_, '_, '_>) {
    by_vendor_and_batch!(job.nb, i8_rows_v3_nb[true, true](s, job))
}

/// [`f32_rows_v3`] compiled with F16C (see [`i8_rows_v3_f16c`]).
///
/// # Safety
/// The CPU must have the `V3` features (the token proves them) and F16C.
#[target_feature(enable = "avx,avx2,fma,f16c,bmi1,bmi2,lzcnt,popcnt")]
pub(crate) unsafe fn f32_rows_v3_f16c(s: pulp::x86::V3, job: F32Job<'_, '_, '_>) {
    by_vendor_and_batch!(job.nb, f32_rows_v3_nb[true](s, job))
}

/// [`scales_lo_v3`] through binary16 when no byte is a NaN word (as [`scales16_v4`] does, with
/// F16C's `vcvtph2ps`; `hi_bytes_f16c` gives the values times `2^-8` without a multiply). Only
/// inlined into the `_f16c` kernels.
#[inline(always)]
fn scales_lo_f16c(s: pulp::x86::V3, b: [u8; 8]) -> __m256 {
    let v = u64::from_le_bytes(b);
    if has_nan_word(v) {
        return scales_lo_v3(s, b);
    }
    let w = s.sse4_1._mm_cvtepu8_epi16(pulp::cast([v, 0u64]));
    hi_bytes_f16c(s, s.sse2._mm_slli_epi16::<8>(w))
}

/// The 8 block scales of a chunk times `2^-8` (exact: the least nonzero E4M3FN value is
/// `2^-9`), as the AVX2 kernels take them without F16C ([`scales_v3`] and a multiply; the
/// `F32` kernel's scales, and [`scales_totals`] after its reordering).
#[inline(always)]
fn scales_lo_v3(s: pulp::x86::V3, b: [u8; 8]) -> __m256 {
    s.avx
        ._mm256_mul_ps(scales_v3(s, b), s.avx._mm256_set1_ps(1.0 / 256.0))
}

/// Runs [`i8_rows_v3`] inside the `V3` token's `target_feature` context.
pub(crate) struct I8V3<'a, 'b, 'c>(pub(crate) pulp::x86::V3, pub(crate) I8Job<'a, 'b, 'c>);

impl pulp::WithSimd for I8V3<'_, '_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let f16c = std::arch::is_x86_feature_detected!("f16c");
        if f16c && std::arch::is_x86_feature_detected!("avxvnni") {
            // SAFETY: F16C and AVX-VNNI were detected just above; the token proves the V3
            // features.
            unsafe { i8_rows_v3_f16c_vnni(self.0, self.1) }
        } else if f16c {
            // SAFETY: F16C was detected just above; the token proves the V3 features.
            unsafe { i8_rows_v3_f16c(self.0, self.1) }
        } else {
            i8_rows_v3(self.0, self.1)
        }
    }
}

/// Runs [`i8_rows_v4`] inside the `V4` token's `target_feature` context.
pub(crate) struct I8V4<'a, 'b, 'c>(pub(crate) pulp::x86::V4, pub(crate) I8Job<'a, 'b, 'c>);

impl pulp::WithSimd for I8V4<'_, '_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        i8_rows_v4(self.0, self.1)
    }
}

/// Runs [`f32_rows_v3`] inside the `V3` token's `target_feature` context.
pub(crate) struct F32V3<'a, 'b, 'c>(pub(crate) pulp::x86::V3, pub(crate) F32Job<'a, 'b, 'c>);

impl pulp::WithSimd for F32V3<'_, '_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        if std::arch::is_x86_feature_detected!("f16c") {
            // SAFETY: F16C was detected just above; the token proves the V3 features.
            unsafe { f32_rows_v3_f16c(self.0, self.1) }
        } else {
            f32_rows_v3(self.0, self.1)
        }
    }
}

/// Runs [`i8_rows_v3`] and [`f32_rows_v3`] (the integer scale decode, whatever the CPU has):
/// the tests' handle on the route [`I8V3`] / [`F32V3`] skip where F16C is present. With the
/// last field true, compiled for the other vendor's prefetch choices (`AMD` the opposite of
/// [`amd_cores`], see `by_vendor_and_batch!`): the handle on the kernels this CPU does not
/// dispatch. A prefetch changes no result, so both give the same bits.
#[cfg(test)]
pub(crate) enum PlainV3<'a, 'b, 'c> {
    I8(pulp::x86::V3, I8Job<'a, 'b, 'c>, bool),
    F32(pulp::x86::V3, F32Job<'a, 'b, 'c>, bool),
}

#[cfg(test)]
impl pulp::WithSimd for PlainV3<'_, '_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        match self {
            PlainV3::I8(s, job, other) => {
                by_vendor_and_batch!(amd = amd_cores() != other; job.nb, i8_rows_v3_nb[false, false](s, job))
            }
            PlainV3::F32(s, job, other) => {
                by_vendor_and_batch!(amd = amd_cores() != other; job.nb, f32_rows_v3_nb[false](s, job))
            }
        }
    }
}

/// Runs [`f32_rows_v4`] inside the `V4` token's `target_feature` context.
pub(crate) struct F32V4<'a, 'b, 'c>(pub(crate) pulp::x86::V4, pub(crate) F32Job<'a, 'b, 'c>);

impl pulp::WithSimd for F32V4<'_, '_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        f32_rows_v4(self.0, self.1)
    }
}

/// The E2M1 magnitudes (`w & 7`) as binary32, for `permutevar8x32`.
const MAG: [f32; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];

/// The quotients `(m s) / d_w` of [`dequant_row_v3`] for every E4M3FN scale byte: row `b`
/// holds the eight E2M1 magnitudes `m` ([`MAG`]) times the byte's exact value `s`, each divided
/// by `d_w` (the product exact, one IEEE division: the same operations, so the same bits, as the
/// per-chunk tables). Built once per call and thread ([`quotients_v3`]) where the call has at
/// least [`QUOTIENT_CHUNKS`] chunks, so that a chunk loads its eight rows instead of dividing.
pub(crate) struct Quotients([[f32; 8]; 256]);

/// The fewest chunks of one call and thread for which [`quotients_v3`] pays: its 256 divisions
/// of 8 lanes are those of 32 chunks.
pub(crate) const QUOTIENT_CHUNKS: usize = 32;

/// The [`Quotients`] of divisor `d` (AVX2), or `None` where `d` is zero or NaN: a zero
/// magnitude's quotient is then NaN for every scale, and every chunk takes the oracle's order
/// (see [`dequant_row_v3`]). The rows of the two NaN scale words (0x7f, 0xff) are never read.
#[inline(always)]
pub(crate) fn quotients_v3(s: pulp::x86::V3, d: f32) -> Option<Quotients> {
    if d == 0.0 || d.is_nan() {
        return None;
    }
    let avx = s.avx;
    let mag: __m256 = pulp::cast(MAG);
    let dv = avx._mm256_set1_ps(d);
    let mut q = [[0f32; 8]; 256];
    for (o, &bits) in q.iter_mut().zip(E4M3FN_TO_F32_BITS.iter()) {
        let sv = avx._mm256_set1_ps(f32::from_bits(bits));
        *o = pulp::cast(avx._mm256_div_ps(avx._mm256_mul_ps(mag, sv), dv));
    }
    Some(Quotients(q))
}

/// Dequantize one NVFP4 row (AVX2; `V4` runs it too; [`ChunkOut`]: to f32, or to BF16 words),
/// bit-identical to the generic decoder (`Weights::pre_chunk` + `/ d_w`, section 3.3), and the
/// BF16 words to `f32_to_bf16_rne` of those values.
///
/// BF16 words on AVX2 (`u16`): the eight quotients of each sub-block are rounded once
/// (`ChunkOut::table8`) and looked up like the f32 ones, the sign XOR-ed in at bit 15 (rounding
/// to nearest even is symmetric in the sign), two vectors of words packed to 16 (session 20,
/// AMD EPYC Zen 4 class, `report --isa V3`, medians, G weights/s: 64x8192 in L3, one thread,
/// 3 alternations, 4.19 -> 4.67; 8192x8192 from memory, one / two threads, 2 alternations,
/// 3.90 / 7.17 -> 4.58 / 8.22; the f32 values rounded 16 at a time, which it replaced, had
/// been about as fast as the 4 KiB f32 segments before them). With AVX-512 BF16 the f32 values
/// go through `vcvtne2ps2bf16` instead (`CvtBf16`: the rounded tables measured 20% slower
/// there, 6.89 -> 5.50 in L3).
///
/// Per 16-position sub-block the eight quotients `(m s) / d_w` of the E2M1 magnitudes `m`
/// (0, 0.5, 1, 1.5, 2, 3, 4, 6) and the block scale `s` are computed once — the product exact,
/// one correctly rounded IEEE division, as in the oracle — and each weight is its quotient
/// (`permutevar8x32` on the code's three low bits) with the code's sign bit XOR-ed in: IEEE
/// multiplication and division are symmetric in the sign, so `(-m s) / d_w` is `-((m s) / d_w)`
/// bit for bit, a negative-zero code included. A chunk whose quotients include a NaN (a NaN
/// scale, or `d_w` zero or NaN: words the validity rules exclude) takes the oracle's order
/// instead: the signed `e2m1` times `s`, then divided by `d_w` (the sign of a NaN result
/// follows x86's NaN propagation there, as in the oracle). Eight
/// divisions per chunk instead of sixteen and no per-weight multiplication, and each group of 8
/// positions is one 4-byte broadcast load and a variable shift (its eight nibbles at the bottom
/// of the eight lanes) instead of a byte widening (a lane-crossing operation, slow on Zen 3);
/// a whole chunk is stored straight into `out`. Session 18, AMD EPYC Zen 3, medians of 3
/// alternations, G weights/s: 128x8192 in L3, one thread, 3.25 -> 4.96; 8192x8192 from memory,
/// one / two threads, 3.43 / 6.66 -> 4.94 / 9.47 (of that, the in-place stores alone: 3.24 ->
/// 4.46 in L3, the `memmove` of a staged chunk having been a call per chunk; the broadcast
/// from memory: 4.32 -> 4.96). Slower, and dropped: the tables built inside the per-word loop
/// with the NaN test there (3.40), and the chunk as a fixed-size array, fully unrolled (4.38).
///
/// Since session 28 a call with enough chunks per thread passes `quot`, the quotients of every
/// scale byte divided once per call ([`Quotients`]): a chunk loads its eight tables (the same
/// bits) and tests its scale bytes for a NaN word ([`has_nan_word`]) instead of eight
/// multiplications, eight divisions and a NaN test of the quotients. Xeon (family 6 model 167),
/// G weights/s, medians of 3 alternations in each of two code layouts (as built; `-C
/// llvm-args=-align-all-functions=6`): 256x8192 cache-resident, one thread, `V4` to BF16
/// (`vcvtne2ps2bf16`) 4.64 / 4.63 -> 8.03 / 8.05, to f32 6.69 / 6.61 -> 7.38 / 7.37; `V3` to
/// BF16 3.98 / 3.97 -> 5.83 / 5.83, to f32 6.77 / 6.62 -> 7.39 / 7.06; 8192x8192 from memory,
/// one / two threads (as built), `V4` to BF16 4.35 / 7.75 -> 7.18 / 12.26, `V3` 3.68 / 6.73 ->
/// 5.19 / 8.95, to f32 within the noise of its stores (`V4` 6.02 / 9.60 -> 6.26 / 9.73).
/// `out` holds the row's positions from chunk `c0` on (`128 c0..`): its length is a multiple
/// of 128, or reaches K.
#[inline(always)]
pub(crate) fn dequant_row_v3<T: ChunkOut>(
    cpu: T::Cpu,
    w: &Weights<'_>,
    row: usize,
    c0: usize,
    out: &mut [T],
    quot: Option<&Quotients>,
) {
    let Weights::Nvfp4 {
        row_bytes,
        codes,
        scales,
        nkt,
        d,
        ..
    } = *w
    else {
        return;
    };
    let s = T::v3(cpu);
    let (avx, avx2) = (s.avx, s.avx2);
    let mag: __m256 = pulp::cast(MAG);
    let dv = avx._mm256_set1_ps(d);
    let sh = avx._mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    let sign_bit = avx._mm256_set1_epi32(i32::MIN);
    let (rc, sr) = row_slices(codes, scales, row, row_bytes, nkt);
    let mut pad = [0u8; 64];
    for (c, o) in (c0..).zip(out.chunks_mut(CHUNK)) {
        ahead::<PF_S_DEQ>(rc, sr, c, true, false);
        let (bytes, sbytes) = chunk_of(rc, sr, c, &mut pad);
        // The eight sub-blocks' quotient tables and whether any holds a NaN: with the call's
        // `Quotients`, their rows (NaN only for a NaN scale word, `d_w` being neither zero nor
        // NaN there); else computed here, independent of each other (the divisions overlap).
        let mut q = [avx._mm256_setzero_ps(); 8];
        let nan = match quot {
            Some(Quotients(rows)) => {
                for (t, &b) in q.iter_mut().zip(&sbytes) {
                    *t = pulp::cast(rows[usize::from(b)]);
                }
                has_nan_word(u64::from_le_bytes(sbytes))
            }
            None => {
                let sc: [f32; 8] = pulp::cast(scales_v3(s, sbytes));
                let mut unord = avx._mm256_setzero_ps();
                for (t, &sv) in q.iter_mut().zip(&sc) {
                    *t = avx._mm256_div_ps(avx._mm256_mul_ps(mag, avx._mm256_set1_ps(sv)), dv);
                    unord = avx._mm256_or_ps(unord, avx._mm256_cmp_ps::<_CMP_UNORD_Q>(*t, *t));
                }
                avx._mm256_movemask_ps(unord) != 0
            }
        };
        // Positions 8 i + l: nibble l of code word i at lane l's bottom (sub-block i / 2), and
        // its sign bit at the top.
        let nib = |i: usize| {
            // SAFETY: bytes 4 i..4 i + 4 of the chunk are in bounds (`i < 16`; an unaligned
            // load); the token proves AVX2. One `vpbroadcastd` from memory: a word taken by
            // value went through a general register first.
            let b = unsafe {
                use core::arch::x86_64::{_mm256_broadcastd_epi32, _mm_loadu_si32};
                _mm256_broadcastd_epi32(_mm_loadu_si32(bytes.as_ptr().add(4 * (i % 16))))
            };
            avx2._mm256_srlv_epi32(b, sh)
        };
        let mut buf = [T::default(); CHUNK];
        // A whole chunk is written in place, 16 values at a time (through `buf` the copy was a
        // `memmove` call per chunk); a partial last chunk through `buf`.
        let (dst, partial) = match <&mut [T; CHUNK]>::try_from(&mut *o) {
            Ok(d) => (d, false),
            Err(_) => (&mut buf, true),
        };
        // Sub-block j: positions 16 j .. 16 j + 16, code words 2 j and 2 j + 1.
        if nan {
            let sc: [f32; 8] = pulp::cast(scales_v3(s, sbytes));
            for (j, &sj) in sc.iter().enumerate() {
                let scale = avx._mm256_set1_ps(sj);
                let (v0, v1) = (nib(2 * j), nib(2 * j + 1));
                let sign0 = avx2._mm256_and_si256(avx2._mm256_slli_epi32::<28>(v0), sign_bit);
                let sign1 = avx2._mm256_and_si256(avx2._mm256_slli_epi32::<28>(v1), sign_bit);
                let e0 = avx2._mm256_or_si256(pulp::cast(avx2._mm256_permutevar8x32_ps(mag, v0)), sign0);
                let e1 = avx2._mm256_or_si256(pulp::cast(avx2._mm256_permutevar8x32_ps(mag, v1)), sign1);
                let lo = avx._mm256_div_ps(avx._mm256_mul_ps(pulp::cast(e0), scale), dv);
                let hi = avx._mm256_div_ps(avx._mm256_mul_ps(pulp::cast(e1), scale), dv);
                T::put16(cpu, dst, j, lo, hi);
            }
        } else {
            // The quotient tables as output words (BF16: rounded once per sub-block), the code's
            // sign bit XOR-ed in at the word's sign (`T::SIGN_BIT`): rounding to nearest even is
            // symmetric in the sign, so `bf16(-x)` is `bf16(x)` with its sign flipped.
            let mut tw = [avx._mm256_setzero_si256(); 8];
            for (t, &qj) in tw.iter_mut().zip(&q) {
                *t = T::table8(cpu, qj);
            }
            let word_sign = avx._mm256_set1_epi32((1u32 << T::SIGN_BIT) as i32);
            for (j, &tj) in tw.iter().enumerate() {
                let (v0, v1) = (nib(2 * j), nib(2 * j + 1));
                let (sign0, sign1) = if T::SIGN_BIT == 31 {
                    (avx2._mm256_slli_epi32::<28>(v0), avx2._mm256_slli_epi32::<28>(v1))
                } else {
                    (avx2._mm256_slli_epi32::<12>(v0), avx2._mm256_slli_epi32::<12>(v1))
                };
                let lo = avx2._mm256_xor_si256(
                    avx2._mm256_permutevar8x32_epi32(tj, v0),
                    avx2._mm256_and_si256(sign0, word_sign),
                );
                let hi = avx2._mm256_xor_si256(
                    avx2._mm256_permutevar8x32_epi32(tj, v1),
                    avx2._mm256_and_si256(sign1, word_sign),
                );
                T::put16_words(cpu, dst, j, lo, hi);
            }
        }
        if partial {
            let n = o.len();
            o.copy_from_slice(&buf[..n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ninfer_core::tables::E4M3FN_TO_F32_BITS;

    /// [`scales_totals`], both routes, against the core table: lane j is the scale byte
    /// `TOTALS_ORDER[j]` times `2^-8`, bit for bit (a NaN word: a NaN of its sign), for every byte
    /// value in every position.
    #[test]
    fn totals_scales_are_the_exact_scales_in_totals_order() {
        let Some(s) = pulp::x86::V3::try_new() else {
            println!("SKIPPED: AVX2 NVFP4 totals scales: this CPU has no AVX2");
            return;
        };
        let f16c = std::arch::is_x86_feature_detected!("f16c");
        if !f16c {
            println!("SKIPPED: the F16C route of the NVFP4 totals scales: this CPU has no F16C");
        }
        for p in 0..8 {
            for v in 0..=255u8 {
                // The other bytes: a spread of non-NaN words (0x7f and 0xff avoided).
                let mut b: [u8; 8] = core::array::from_fn(|i| ((37 * i + v as usize) % 0x7e) as u8);
                b[p] = v;
                let want =
                    TOTALS_ORDER.map(|j| f32::from_bits(E4M3FN_TO_F32_BITS[b[j] as usize]) * (1.0 / 256.0));
                let plain: [f32; 8] = pulp::cast(scales_totals::<false>(s, b));
                let mut routes = vec![("integer", plain)];
                if f16c {
                    let h: [f32; 8] = pulp::cast(scales_totals::<true>(s, b));
                    routes.push(("F16C", h));
                }
                for (route, got) in routes {
                    for j in 0..8 {
                        let (g, w) = (got[j], want[j]);
                        let ok = if w.is_nan() {
                            g.is_nan() && g.is_sign_negative() == w.is_sign_negative()
                        } else {
                            g.to_bits() == w.to_bits()
                        };
                        assert!(
                            ok,
                            "{route} route, bytes {b:02x?}, lane {j}: {g:e} ({:#x}), want {w:e}",
                            g.to_bits()
                        );
                    }
                }
            }
        }
    }
}
