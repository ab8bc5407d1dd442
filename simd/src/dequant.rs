//! Dequantize rows to f32 or BF16 words, bit-exact (profile `Exact`).
//!
//! The f32 result of every position is the spec's reconstruction, computed in the same binary32
//! arithmetic as the core oracle: grouped `s32 * q` (section 6.2, exact), NVFP4
//! `(e2m1 * e4m3fn) / d_w` (section 3.3: an exact product, then one correctly rounded IEEE
//! division), FP8 `e4m3fn * bf16` (section 3.4: one correctly rounded IEEE multiplication), BF16
//! `word << 16` and FP32 the word itself (section 3.1). No fused multiply-add is used on this
//! path (vector `mul`/`div` are IEEE operations, identical on every ISA), so the result equals
//! `TensorDesc::decode_f32` bit for bit on every platform.
//!
//! The BF16 output is the round-to-nearest-even BF16 word of that exact f32 value
//! ([`f32_to_bf16_rne`], the same function as `ninfer_core::word::bf16::f32_to_bf16_rne`: a
//! NaN keeps its sign and top payload bits and is made quiet).
//!
//! On AVX2 (`x86::row_bf16_v3`) the BF16 words are rounded 16 at a time in registers: the
//! grouped, NVFP4 and FP8 formats straight from their f32 dequantizers' registers
//! (`ChunkOut`, the same decode as the f32 output; NVFP4 and FP8 went through 4 KiB segments of
//! f32 values until session 20), FP32 straight from the payload, BF16 copied with each NaN made
//! quiet.
//! One unordered comparison per 16 values takes the NaN-free case without a blend. Measured
//! with the report (`report --isa V3`, G weights/s, against the generic row, which decoded a
//! chunk, then rounded it value by value): 64×8192 in L3, one thread, Q4 3.51 -> 5.92, FP32
//! 2.89 -> 12.00. The grouped rows first went through segments too; fusing them gained a
//! little (64×8192, Q4 4.36-4.59 -> 4.64 in an earlier, slower hour of the host). The rounding
//! (about 14 vector operations per 16 values) costs about as much as the Q4 decode itself.
//! So Q4 takes a table instead (`f32x86::dequant_chunk_q4_bf16_v3`): per group the 16 words
//! `bf16(s q)`, rounded once, then two `vpshufb` lookups and two byte unpacks per 32
//! positions. Medians of 3 alternations, G weights/s: 64×8192 in L3, one thread, 6.02 ->
//! 16.16; 8192×8192 from memory, one / two threads, 5.92 / 11.17 -> 15.70 / 26.09. Q5 (32
//! codes) and Q6/W8 would need two or more tables and a blend per lookup. Since session 29
//! they round by Veltkamp's split instead (`x86::split16`, `ChunkOut::SPLIT_ROUND`,
//! `f32x86::dequant_chunk_v3`): `c = v (2^16 + 1)`, `v` rounded to 8 significant
//! bits is `c - (c - v)`, three float operations per 8 values, and the words of the even and
//! the odd positions pack by one shift and one 16-bit blend. That is not `f32_to_bf16_rne` for
//! every binary32 value (an infinity becomes a NaN, and a subnormal keeps bits BF16 drops), but
//! it is for every value a grouped format makes, `s q` with a finite binary16 scale `s` and a
//! code `q` in `-128..=127`: a test rounds all 16.25 million of them, about 250 thousand ties
//! at BF16's precision among them, and a chunk with a non-finite scale keeps the integer
//! rounding. 14 vector operations per 16 positions where the route before took 21. Session
//! 29's Xeon (family 6 model 167), `report --isa V3 --kernels dequant-bf16`, medians of 3
//! alternations, G weights/s: 256×8192 cache-resident, one thread, in two code layouts (as
//! built and `-align-all-functions=6`, the same figures to 0.03), Q5 5.52 -> 6.71, Q6 5.36 ->
//! 6.90, W8 6.10 -> 8.10; 8192×8192 from memory, one / two threads, Q5 5.31 / 9.26 -> 6.37 /
//! 10.82, Q6 5.19 / 8.86 -> 6.59 / 10.87, W8 5.69 / 9.72 -> 7.15 / 10.82. `V4NoVnni`, whose
//! BF16 words are the AVX2 ones, gains the same (cache-resident, two alternations: Q5 5.58 ->
//! 6.97, W8 4.77 -> 8.04); `V4` with AVX-512 BF16 converts by `vcvtne2ps2bf16` as before.
//! FP8 rows whose BF16 multiplier `m` is zero or of magnitude `2^-117 ..= 2^100` round the
//! same way (`x86::split16_in_order`, `ChunkOut::words16_split`, in position order: two shifts
//! and `packus` pack them): every product `w m` is then zero, a NaN or normal and below
//! `2^112`, and a test rounds all 14 million of them (NaN words included) against
//! `f32_to_bf16_rne`; other multipliers keep the integer rounding. Medians of 3 alternations,
//! G weights/s: 256×8192 cache-resident, one thread, 5.41 -> 6.60; 8192×8192 from memory, one
//! / two threads, 5.09 / 9.05 -> 6.00 / 10.51.
//!
//! With AVX-512 BF16 (`Isa::V4` on such a CPU: AMD Zen 4 and later, Intel Cooper Lake and
//! Sapphire Rapids and later) one `vcvtne2ps2bf16` rounds 16 values
//! (`x86::row_bf16_avx512bf16`, the `CvtBf16` output word). Its rounding and NaN quieting are
//! [`f32_to_bf16_rne`]'s, but it reads a subnormal binary32 as zero, so NVFP4, FP8 and FP32
//! test each 16 values (`vfpclassps`) and round a block that holds one in integer registers;
//! the grouped formats never produce one and skip the test (it cost them 20-25%). Q4 keeps its
//! table. An ignored test checks all 2^32 binary32 words on every path (`.ci/run` runs it).
//! `Isa::V4NoVnni` keeps the integer rounding, so both stay tested on such a CPU. Session 20,
//! AMD EPYC (Zen 4 class), the report alternating the old and the new binary (`--isa V4`),
//! medians, G weights/s: 64×8192 in L3, one thread, 3 alternations: Q5 5.64 -> 12.64, Q6 5.64
//! -> 12.75, W8 6.29 -> 14.54, NVFP4 4.53 -> 6.78, FP8 6.43 -> 9.77, FP32 12.41 -> 14.61;
//! 8192×8192 from memory, one / two threads, 2 alternations: Q5 5.61 / 10.66 -> 12.25 / 22.07,
//! W8 6.26 / 11.81 -> 13.09 / 22.41, NVFP4 4.59 / 8.87 -> 6.86 / 12.73, FP8 6.04 / 10.68 ->
//! 8.50 / 15.29. A first form that decoded to f32 segments and converted them afterwards gained
//! far less (64×8192: Q5 5.66 -> 7.29): the store and reload of the f32 values cost as much as
//! the conversion saved. On AVX2 the same session moved NVFP4 and FP8 from segments to the
//! fused rounding: no change measured (64×8192: NVFP4 4.16 -> 4.18, FP8 6.26 -> 6.42), and the
//! FP8 f32 row, now written 32 values at a time through `ChunkOut::words16`, reads about 3%
//! slower (128×8192 in L3, 5 alternations: 12.94 -> 12.54; a first form, per 128-value chunk,
//! read 12.33). NVFP4's BF16 words on AVX2 then came from
//! quotient tables rounded once per sub-block (`nvfp4x86::dequant_row_v3`): 8192×8192 from
//! memory, one / two threads, 3.90 / 7.17 -> 4.58 / 8.22.
//!
//! The f32 output on AVX2 (`x86::row_f32_v3`) has a register decoder for every format: besides
//! the grouped, NVFP4 and FP8 ones (in `gemv::f32x86`, `nvfp4x86`, `fp8x86`), BF16 words are
//! widened 8 at a time (`vpmovzxwd`, a shift) and FP32 words copied, where the generic row
//! went through a 128-value chunk buffer. Medians of 3 alternations, G weights/s: 8192×8192
//! from memory, one / two threads, BF16 7.83 / 13.00 -> 10.09 / 14.88, FP32 5.14 / 6.40 ->
//! 6.07 / 7.74; 64×8192 in L3, one thread, BF16 9.37 -> 15.07, FP32 7.73 -> 10.43.
//!
//! **Prefetch (session 28).** The grouped and FP8 row dequantizers prefetch every cache line of
//! their code bytes `crate::prefetch::DEQUANT_AHEAD` (2 KiB) ahead; until then the grouped
//! ones left the stream to the hardware prefetchers and FP8 prefetched one line per 4 KiB. On
//! the Xeon of sessions 26-28 (family 6 model 167, KVM) the hardware did not keep up while the
//! output words were written: `perf` put most of FP8's BF16 loop on the first use of its
//! loaded bytes, and from memory it ran at a quarter of its cache-resident rate (1.9 against
//! 8.2 G weights/s). Both ISAs run these rows (`V4` with `vcvtne2ps2bf16` for the BF16 words).
//! A dedicated report of the dequantize rows alternating the old and the new binary, each
//! built as is and with `-C llvm-args=-align-all-functions=6`, medians of 3, G weights/s,
//! 8192×8192 from memory, one / two threads, old -> new, as built. In the second layout the
//! BF16 rows agreed within about 10%, but some f32 rows gained less or nothing (two threads:
//! `V4` Q6 9.90 -> 11.10, `V3` Q4 11.48 -> 10.87, Q6 9.69 -> 11.15, W8 9.10 -> 9.43; one
//! thread `V3` W8 6.12 -> 6.17; the f32 rows write twice the bytes of the BF16 ones).
//!
//! | row | `V4` | `V3` |
//! |---|---|---|
//! | Q4 to f32 | 6.99 / 10.60 -> 7.41 / 13.13 | 6.88 / 10.89 -> 7.56 / 13.15 |
//! | Q4 to BF16 | 7.19 / 12.21 -> 14.71 / 21.54 | 7.18 / 12.23 -> 14.14 / 20.42 |
//! | Q5 to f32 | 7.07 / 11.09 -> 7.88 / 13.20 | 7.22 / 10.79 -> 7.88 / 12.98 |
//! | Q5 to BF16 | 7.16 / 10.60 -> 9.04 / 14.93 | 4.87 / 7.53 -> 5.40 / 9.45 |
//! | Q6 to f32 | 6.23 / 10.39 -> 7.53 / 13.00 | 6.10 / 9.92 -> 7.31 / 13.99 |
//! | Q6 to BF16 | 6.34 / 9.66 -> 8.87 / 15.40 | 4.45 / 6.93 -> 5.23 / 9.35 |
//! | W8 to f32 | 5.82 / 9.72 -> 6.37 / 10.61 | 5.54 / 9.12 -> 6.76 / 11.48 |
//! | W8 to BF16 | 5.16 / 8.84 -> 9.17 / 14.44 | 4.61 / 7.49 -> 5.68 / 9.76 |
//! | FP8 to f32 | 5.92 / 9.23 -> 6.84 / 11.20 | 5.79 / 10.27 -> 6.89 / 11.25 |
//! | FP8 to BF16 | 1.91 / 3.64 -> 6.98 / 12.05 | 1.86 / 3.35 -> 5.12 / 9.24 |
//!
//! Cache-resident (256×8192, one thread, `V4`) every row moved by 2% or less. FP8 to BF16 by
//! distance (`V4`, one thread, one 64-row block at a time over 30 copies): 0.5 KiB 3.6, 1 KiB
//! 6.3, 2 KiB 6.5, 4 KiB 6.4 (to f32: 6.1, 6.3, 6.3, 5.5). NVFP4 prefetches its own way
//! (`nvfp4x86::dequant_row_v3`); its divisions, which bound it, are made once per call since
//! the same session (`x86::Aux`, `nvfp4x86::Quotients`: from memory, one thread, to BF16
//! 4.35 -> 7.18 on `V4`, 3.68 -> 5.19 on `V3`); for BF16 and FP32 a prefetch
//! per line in the `x86` widening, rounding and copying loops did not move the rows out of
//! their noise (those rows read and write 4 to 8 bytes per weight). AMD cores, whose hardware
//! prefetchers fed these loops (session 19's Zen 4, two threads: Q4 to f32 22.95), were not
//! measured with the change.

use pulp::{Simd, WithSimd};

use crate::weights::{Post, Weights, CHUNK};

/// Which source rows the output rows come from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Sel<'a> {
    /// Output row i is source row `start + i`.
    Range(usize),
    /// Output row i is source row `rows[i]` (checked by the caller).
    List(&'a [usize]),
}

impl Sel<'_> {
    #[inline(always)]
    fn src(&self, i: usize) -> usize {
        match *self {
            Sel::Range(s) => s + i,
            Sel::List(r) => r[i],
        }
    }
}

/// Round a binary32 to BF16, nearest-even (bit-level, branch-free so that it vectorises).
/// Identical to `ninfer_core::word::bf16::f32_to_bf16_rne` for every input.
#[inline(always)]
pub fn f32_to_bf16_rne(x: f32) -> u16 {
    let b = x.to_bits();
    let rounded = (b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16) as u16;
    let nan = ((b >> 16) as u16) | 0x0040;
    if b & 0x7fff_ffff > 0x7f80_0000 {
        nan
    } else {
        rounded
    }
}

#[inline(always)]
fn apply_post(post: Post, v: &mut [f32]) {
    match post {
        Post::None => {}
        Post::Div(d) => v.iter_mut().for_each(|x| *x /= d),
        Post::Mul(s) => v.iter_mut().for_each(|x| *x *= s),
    }
}

/// Decode one row (`out.len() == K`) to f32.
#[inline(always)]
pub(crate) fn row_f32(w: &Weights<'_>, row: usize, out: &mut [f32]) {
    let k = w.k();
    let post = w.post(row);
    let mut buf = [0f32; CHUNK];
    for c in 0..w.chunks() {
        let lo = CHUNK * c;
        let hi = (lo + CHUNK).min(k);
        match <&mut [f32; CHUNK]>::try_from(&mut out[lo..hi]) {
            Ok(full) => {
                w.pre_chunk(row, c, full);
                apply_post(post, full);
            }
            Err(_) => {
                w.pre_chunk(row, c, &mut buf);
                apply_post(post, &mut buf);
                out[lo..hi].copy_from_slice(&buf[..hi - lo]);
            }
        }
    }
}

/// Decode one row (`out.len() == K`) to BF16 words.
#[inline(always)]
pub(crate) fn row_bf16(w: &Weights<'_>, row: usize, out: &mut [u16]) {
    let k = w.k();
    let post = w.post(row);
    let mut buf = [0f32; CHUNK];
    for c in 0..w.chunks() {
        let lo = CHUNK * c;
        let hi = (lo + CHUNK).min(k);
        w.pre_chunk(row, c, &mut buf);
        apply_post(post, &mut buf);
        for (o, &v) in out[lo..hi].iter_mut().zip(&buf) {
            *o = f32_to_bf16_rne(v);
        }
    }
}

/// Output element of a dequantize kernel.
pub(crate) trait OutWord: Copy + Send + Sync {
    fn row(w: &Weights<'_>, row: usize, out: &mut [Self]);

    /// The row on an x86 token with AVX2: a register-decode fast path where one exists;
    /// `bf16`: the CPU has AVX-512 BF16 and the token's path may use it (`V4Ext::bf16`);
    /// `aux`: what the call's rows share ([`x86::Aux`]: the NVFP4 quotient tables, where built).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn row_v3(
        _s: pulp::x86::V3,
        _bf16: bool,
        w: &Weights<'_>,
        row: usize,
        out: &mut [Self],
        _aux: &x86::Aux,
    ) {
        Self::row(w, row, out)
    }
}

impl OutWord for f32 {
    #[inline(always)]
    fn row(w: &Weights<'_>, row: usize, out: &mut [f32]) {
        row_f32(w, row, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn row_v3(s: pulp::x86::V3, _bf16: bool, w: &Weights<'_>, row: usize, out: &mut [f32], aux: &x86::Aux) {
        x86::row_f32_v3(s, w, row, 0, out, aux)
    }
}

impl OutWord for u16 {
    #[inline(always)]
    fn row(w: &Weights<'_>, row: usize, out: &mut [u16]) {
        row_bf16(w, row, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn row_v3(s: pulp::x86::V3, bf16: bool, w: &Weights<'_>, row: usize, out: &mut [u16], aux: &x86::Aux) {
        if bf16 {
            // SAFETY: `bf16` is only true on a `V4` token whose CPU has AVX-512 BF16 (`V4Ext`),
            // and the `V4` token proves the AVX-512 F/BW/CD/DQ/VL features.
            unsafe { x86::row_bf16_avx512bf16(s, w, row, out, aux) }
        } else {
            x86::row_bf16_v3(s, w, row, out, aux)
        }
    }
}

/// Where an AVX2 dequantizer puts a chunk's 128 values: f32 words as they are, or their BF16
/// words ([`f32_to_bf16_rne`], 16 at a time).
#[cfg(target_arch = "x86_64")]
pub(crate) trait ChunkOut: Copy + Default + pulp::bytemuck::Pod {
    /// The proof that the CPU runs this output's rounding, a value only code that checked the
    /// features can make: the `V3` token for f32 and `u16`, [`Avx512Bf16`] for [`CvtBf16`].
    /// Every method takes it, so none can be reached without it.
    type Cpu: Copy;

    /// The `V3` token inside `cpu`.
    fn v3(cpu: Self::Cpu) -> pulp::x86::V3;

    /// The output words of 16 values, `lo` the first 8.
    fn words16(cpu: Self::Cpu, lo: core::arch::x86_64::__m256, hi: core::arch::x86_64::__m256) -> [Self; 16];

    /// Values `16 j .. 16 j + 16` of the chunk ([`ChunkOut::words16`]), `lo` the first 8.
    #[inline(always)]
    fn put16(
        cpu: Self::Cpu,
        d: &mut [Self; CHUNK],
        j: usize,
        lo: core::arch::x86_64::__m256,
        hi: core::arch::x86_64::__m256,
    ) {
        let d: &mut [[Self; 16]; 8] = pulp::bytemuck::cast_mut(d);
        d[j % 8] = Self::words16(cpu, lo, hi);
    }

    /// A whole Q4 chunk by another route, if this output word has one (`code` from the chunk's
    /// first byte, `sc` its two group scales times `2^-28`); `false`: nothing written.
    #[inline(always)]
    fn q4_chunk(_cpu: Self::Cpu, _code: &[u8], _sc: &[f32], _d: &mut [Self; CHUNK]) -> bool {
        false
    }

    /// The output words of 16 values, `lo` the first 8, for values whose rounding by Veltkamp's
    /// split was checked in full: FP8's products `w m` with a multiplier `m` that is zero or of
    /// magnitude `2^-117 ..= 2^100` (the default: [`ChunkOut::words16`]; the AVX2 BF16 words
    /// round them by that split, [`x86::split16_in_order`]).
    #[inline(always)]
    fn words16_split(
        cpu: Self::Cpu,
        lo: core::arch::x86_64::__m256,
        hi: core::arch::x86_64::__m256,
    ) -> [Self; 16] {
        Self::words16(cpu, lo, hi)
    }

    /// Whether the grouped dequantizer hands this output word its finite products as even and
    /// odd positions ([`ChunkOut::put16_split`]) for rounding by Veltkamp's split (the AVX2
    /// BF16 words, [`x86::split16`]).
    const SPLIT_ROUND: bool = false;

    /// Values `16 j .. 16 j + 16` of the chunk, `ev` those at the even positions and `od` those
    /// at the odd ones (the default: put back in order, then [`ChunkOut::put16`]).
    #[inline(always)]
    fn put16_split(
        cpu: Self::Cpu,
        d: &mut [Self; CHUNK],
        j: usize,
        ev: core::arch::x86_64::__m256,
        od: core::arch::x86_64::__m256,
    ) {
        let avx = Self::v3(cpu).avx;
        // Per 128-bit lane: positions 0..4 and 4..8 of that lane's eight.
        let (a, b) = (avx._mm256_unpacklo_ps(ev, od), avx._mm256_unpackhi_ps(ev, od));
        let lo = avx._mm256_permute2f128_ps::<0x20>(a, b);
        let hi = avx._mm256_permute2f128_ps::<0x31>(a, b);
        Self::put16(cpu, d, j, lo, hi)
    }

    /// The sign bit of this output word within a 32-bit lane of [`ChunkOut::table8`]'s words:
    /// 31 for f32, 15 for a BF16 word (`nvfp4x86::dequant_row_v3` XORs the sign of each code
    /// there).
    const SIGN_BIT: u32 = 31;

    /// Eight values (none a NaN) as this output's words, one per 32-bit lane, for a table
    /// lookup: f32 as it is (the default); `u16`: the BF16 word rounded ([`f32_to_bf16_rne`])
    /// in the low 16 bits.
    #[inline(always)]
    fn table8(_cpu: Self::Cpu, q: core::arch::x86_64::__m256) -> core::arch::x86_64::__m256i {
        pulp::cast(q)
    }

    /// Values `16 j .. 16 j + 16` of the chunk from two vectors of [`ChunkOut::table8`] words
    /// (the default: f32 values through [`ChunkOut::put16`]).
    #[inline(always)]
    fn put16_words(
        cpu: Self::Cpu,
        d: &mut [Self; CHUNK],
        j: usize,
        lo: core::arch::x86_64::__m256i,
        hi: core::arch::x86_64::__m256i,
    ) {
        Self::put16(cpu, d, j, pulp::cast(lo), pulp::cast(hi))
    }
}

#[cfg(target_arch = "x86_64")]
impl ChunkOut for f32 {
    type Cpu = pulp::x86::V3;

    #[inline(always)]
    fn v3(cpu: pulp::x86::V3) -> pulp::x86::V3 {
        cpu
    }

    #[inline(always)]
    fn words16(
        _: pulp::x86::V3,
        lo: core::arch::x86_64::__m256,
        hi: core::arch::x86_64::__m256,
    ) -> [f32; 16] {
        pulp::cast([lo, hi])
    }
}

#[cfg(target_arch = "x86_64")]
impl ChunkOut for u16 {
    type Cpu = pulp::x86::V3;

    #[inline(always)]
    fn v3(cpu: pulp::x86::V3) -> pulp::x86::V3 {
        cpu
    }

    #[inline(always)]
    fn words16(
        s: pulp::x86::V3,
        lo: core::arch::x86_64::__m256,
        hi: core::arch::x86_64::__m256,
    ) -> [u16; 16] {
        pulp::cast(x86::round16(s, lo, hi))
    }

    #[inline(always)]
    fn q4_chunk(s: pulp::x86::V3, code: &[u8], sc: &[f32], d: &mut [u16; CHUNK]) -> bool {
        crate::gemv::f32x86::dequant_chunk_q4_bf16_v3(s, code, sc, d);
        true
    }

    // Grouped values: finite products `s q`, rounded by Veltkamp's split.
    const SPLIT_ROUND: bool = true;

    #[inline(always)]
    fn words16_split(
        s: pulp::x86::V3,
        lo: core::arch::x86_64::__m256,
        hi: core::arch::x86_64::__m256,
    ) -> [u16; 16] {
        pulp::cast(x86::split16_in_order(s, lo, hi))
    }

    #[inline(always)]
    fn put16_split(
        s: pulp::x86::V3,
        d: &mut [u16; CHUNK],
        j: usize,
        ev: core::arch::x86_64::__m256,
        od: core::arch::x86_64::__m256,
    ) {
        let d: &mut [[u16; 16]; 8] = pulp::bytemuck::cast_mut(d);
        d[j % 8] = pulp::cast(x86::split16(s, ev, od));
    }

    // NVFP4's quotient tables rounded once per sub-block, 16 words packed from two vectors.
    const SIGN_BIT: u32 = 15;

    #[inline(always)]
    fn table8(s: pulp::x86::V3, q: core::arch::x86_64::__m256) -> core::arch::x86_64::__m256i {
        x86::round8(s, q)
    }

    #[inline(always)]
    fn put16_words(
        s: pulp::x86::V3,
        d: &mut [u16; CHUNK],
        j: usize,
        lo: core::arch::x86_64::__m256i,
        hi: core::arch::x86_64::__m256i,
    ) {
        let d: &mut [[u16; 16]; 8] = pulp::bytemuck::cast_mut(d);
        d[j % 8] = pulp::cast(x86::pack16(s, lo, hi));
    }
}

/// BF16 words rounded by AVX-512 BF16 (`vcvtne2ps2bf16`, [`x86::cvt16`]): the output word of
/// the dequantizers under [`x86::row_bf16_avx512bf16`]. Its [`ChunkOut`] methods take the
/// [`Avx512Bf16`] proof, which only an `unsafe` constructor makes (until session 23 they took
/// the `V3` token, and only a convention kept them under that function). The instruction reads
/// a subnormal binary32 as zero, so with `SUB` each 16 values are first tested for one
/// (`vfpclassps`) and, if any, rounded in integer registers ([`x86::round16`]). The grouped
/// formats go without the test (`SUB = false`; it cost 20-25% there): a grouped value `s q` is
/// never subnormal (zero, or at least `2^-24` in magnitude: a binary16 scale times an integer
/// code; the dequantizer's exact factors `q 2^(32 - b)` and `s 2^-(32 - b)` are normal too).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Default)]
#[repr(transparent)]
pub(crate) struct CvtBf16<const SUB: bool>(u16);

// SAFETY: a transparent wrapper of `u16`: every bit pattern is valid, zero included, no padding.
#[cfg(target_arch = "x86_64")]
unsafe impl<const SUB: bool> pulp::bytemuck::Zeroable for CvtBf16<SUB> {}
// SAFETY: as above.
#[cfg(target_arch = "x86_64")]
unsafe impl<const SUB: bool> pulp::bytemuck::Pod for CvtBf16<SUB> {}

#[cfg(target_arch = "x86_64")]
impl<const SUB: bool> ChunkOut for CvtBf16<SUB> {
    type Cpu = Avx512Bf16;

    #[inline(always)]
    fn v3(cpu: Avx512Bf16) -> pulp::x86::V3 {
        cpu.v3()
    }

    #[inline(always)]
    fn words16(
        cpu: Avx512Bf16,
        lo: core::arch::x86_64::__m256,
        hi: core::arch::x86_64::__m256,
    ) -> [CvtBf16<SUB>; 16] {
        // SAFETY: an `Avx512Bf16` is only made where AVX-512 F/BW/CD/DQ/VL and BF16 are known to
        // be present (`Avx512Bf16::new_unchecked`'s contract).
        pulp::cast(unsafe { x86::cvt16_or_round(cpu.v3(), SUB, lo, hi) })
    }

    #[inline(always)]
    fn q4_chunk(cpu: Avx512Bf16, code: &[u8], sc: &[f32], d: &mut [CvtBf16<SUB>; CHUNK]) -> bool {
        crate::gemv::f32x86::dequant_chunk_q4_bf16_v3(cpu.v3(), code, sc, pulp::bytemuck::cast_mut(d));
        true
    }

    // NVFP4: the f32 tables and `put16` (a rounded table was slower here, measured in
    // `nvfp4x86::dequant_row_v3`).
}

#[cfg(target_arch = "x86_64")]
pub(crate) use proof::Avx512Bf16;

/// Its own module, so that no code beside [`Avx512Bf16::new_unchecked`] can fill in the private
/// field (the rest of this file, its `x86` module included, could otherwise).
#[cfg(target_arch = "x86_64")]
mod proof {
    /// The proof [`super::CvtBf16`] needs ([`super::ChunkOut::Cpu`]): the CPU has AVX-512
    /// F/BW/CD/DQ/VL and BF16. Made only by the `unsafe` [`Avx512Bf16::new_unchecked`], so the
    /// safe [`super::ChunkOut`] methods of `CvtBf16`, which run AVX-512 BF16 instructions, cannot
    /// be reached without it.
    #[derive(Clone, Copy)]
    pub(crate) struct Avx512Bf16(pulp::x86::V3);

    impl Avx512Bf16 {
        /// # Safety
        /// The CPU must have AVX-512 F/BW/CD/DQ/VL and BF16 (the `V3` token proves the rest).
        #[inline(always)]
        pub(crate) unsafe fn new_unchecked(s: pulp::x86::V3) -> Self {
            Self(s)
        }

        /// The `V3` token it holds.
        #[inline(always)]
        pub(crate) fn v3(self) -> pulp::x86::V3 {
            self.0
        }
    }
}

/// The AVX2 rows (`V3`; `V4` runs them too).
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    use core::arch::x86_64::{__m256, __m256i, _CMP_UNORD_Q};

    use super::{f32_to_bf16_rne, ChunkOut};
    use crate::gemv::{f32x86, fp8x86, nvfp4x86};
    use crate::weights::{Weights, CHUNK};

    /// What one call's rows share on x86, made once per call and thread ([`Aux::new`]): the
    /// NVFP4 quotient tables (`nvfp4x86::Quotients`) where the rows have enough chunks for them
    /// to pay.
    pub(crate) struct Aux {
        pub(super) quot: Option<nvfp4x86::Quotients>,
    }

    impl Aux {
        /// For `rows` rows of `w`.
        #[inline(always)]
        pub(crate) fn new(s: pulp::x86::V3, w: &Weights<'_>, rows: usize) -> Aux {
            let quot = match *w {
                Weights::Nvfp4 { d, .. } if rows * w.chunks() >= nvfp4x86::QUOTIENT_CHUNKS => {
                    nvfp4x86::quotients_v3(s, d)
                }
                _ => None,
            };
            Aux { quot }
        }
    }

    /// One row to f32 on AVX2, from chunk `c0` on (`out` as in `f32x86::dequant_row_v3`),
    /// bit-identical to [`super::row_f32`]: the register decoders of the grouped, NVFP4 and FP8
    /// formats, BF16 words widened ([`widen_bf16`]), FP32 words copied.
    #[inline(always)]
    pub(super) fn row_f32_v3(
        s: pulp::x86::V3,
        w: &Weights<'_>,
        row: usize,
        c0: usize,
        out: &mut [f32],
        aux: &Aux,
    ) {
        match *w {
            Weights::Nvfp4 { .. } => nvfp4x86::dequant_row_v3(s, w, row, c0, out, aux.quot.as_ref()),
            Weights::Fp8 { .. } => fp8x86::dequant_row_fast_v3(s, w, row, c0, out),
            Weights::Grouped { .. } => f32x86::dequant_row_v3(s, w, row, c0, out),
            Weights::Bf16 { k, words, .. } => {
                widen_bf16(s, row_words(words, 2, k, row, CHUNK * c0, out.len()), out)
            }
            Weights::Fp32 { k, words, .. } => {
                let src = row_words(words, 4, k, row, CHUNK * c0, out.len());
                pulp::bytemuck::cast_slice_mut::<f32, u8>(out).copy_from_slice(src)
            }
        }
    }

    /// The payload bytes of `n` words of a direct-format row (`width` bytes per word, `k` words
    /// per row) from position `p0` on.
    #[inline(always)]
    fn row_words(words: &[u8], width: usize, k: usize, row: usize, p0: usize, n: usize) -> &[u8] {
        let at = width * (k * row + p0);
        &words[at..at + width * n]
    }

    /// The little-endian BF16 words in `src` to their f32 values `w << 16` (exact),
    /// `out.len() == src.len() / 2`, 8 at a time (`vpmovzxwd`, a shift).
    #[inline(always)]
    fn widen_bf16(s: pulp::x86::V3, src: &[u8], out: &mut [f32]) {
        let avx2 = s.avx2;
        let (o8, orest) = out.as_chunks_mut::<8>();
        let (s16, srest) = src.as_chunks::<16>();
        for (o, b) in o8.iter_mut().zip(s16) {
            let v = avx2._mm256_cvtepu16_epi32(pulp::cast(*b));
            *o = pulp::cast(avx2._mm256_slli_epi32::<16>(v));
        }
        for (o, b) in orest.iter_mut().zip(srest.as_chunks::<2>().0) {
            *o = f32::from_bits(u32::from(u16::from_le_bytes(*b)) << 16);
        }
    }

    /// One row to BF16 words on AVX2, bit-identical to [`super::row_bf16`]: the grouped, NVFP4
    /// and FP8 rows by their f32 register decoders (those of [`row_f32_v3`]), each 16 values
    /// rounded in registers as they come ([`round16`], `ChunkOut for u16`; the Q4 rows by table);
    /// FP32 words rounded straight from the payload ([`bf16_of_f32`]); BF16 words copied, a NaN
    /// word made quiet ([`quiet_bf16`]).
    #[inline(always)]
    pub(super) fn row_bf16_v3(s: pulp::x86::V3, w: &Weights<'_>, row: usize, out: &mut [u16], aux: &Aux) {
        match *w {
            Weights::Bf16 { k, words, .. } => quiet_bf16(s, row_words(words, 2, k, row, 0, k), out),
            Weights::Fp32 { k, words, .. } => bf16_of_f32(s, row_words(words, 4, k, row, 0, k), out),
            Weights::Grouped { .. } => f32x86::dequant_row_v3(s, w, row, 0, out),
            Weights::Nvfp4 { .. } => nvfp4x86::dequant_row_v3(s, w, row, 0, out, aux.quot.as_ref()),
            Weights::Fp8 { .. } => fp8x86::dequant_row_fast_v3(s, w, row, 0, out),
        }
    }

    /// [`row_bf16_v3`] with the rounding by AVX-512 BF16 ([`cvt16_or_round`]): the grouped
    /// rows (`CvtBf16<false>`: never a subnormal; Q4 still by table), NVFP4 and FP8
    /// (`CvtBf16<true>`) from their f32 register decoders, FP32 (`CvtBf16<true>`) from the
    /// payload ([`bf16_of_f32`]), BF16 as [`row_bf16_v3`] copies it. This function enables the
    /// AVX-512 features itself so that the rounding inlines into each decoder's chunk loop (FP8
    /// enters its F16C body directly for that reason).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F/BW/CD/DQ/VL and BF16.
    #[target_feature(
        enable = "avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx512bf16,avx2,fma,bmi1,bmi2,lzcnt,popcnt"
    )]
    pub(super) unsafe fn row_bf16_avx512bf16(
        s: pulp::x86::V3,
        w: &Weights<'_>,
        row: usize,
        out: &mut [u16],
        aux: &Aux,
    ) {
        // SAFETY: this function's caller guarantees AVX-512 F/BW/CD/DQ/VL and BF16.
        let cpu = unsafe { super::Avx512Bf16::new_unchecked(s) };
        match *w {
            Weights::Bf16 { .. } => row_bf16_v3(s, w, row, out, aux),
            Weights::Fp32 { k, words, .. } => bf16_of_f32(
                cpu,
                row_words(words, 4, k, row, 0, k),
                pulp::bytemuck::cast_slice_mut::<u16, super::CvtBf16<true>>(out),
            ),
            Weights::Grouped { .. } => f32x86::dequant_row_v3(
                cpu,
                w,
                row,
                0,
                pulp::bytemuck::cast_slice_mut::<u16, super::CvtBf16<false>>(out),
            ),
            Weights::Nvfp4 { .. } => nvfp4x86::dequant_row_v3(
                cpu,
                w,
                row,
                0,
                pulp::bytemuck::cast_slice_mut::<u16, super::CvtBf16<true>>(out),
                aux.quot.as_ref(),
            ),
            Weights::Fp8 { .. } => {
                let out = pulp::bytemuck::cast_slice_mut::<u16, super::CvtBf16<true>>(out);
                // SAFETY: AVX-512 F implies F16C (this function's caller proved AVX-512 F).
                unsafe { fp8x86::dequant_row_f16c(cpu, w, row, 0, out) }
            }
        }
    }

    /// [`f32_to_bf16_rne`] of 16 values (`lo` the first 8) by one `vcvtne2ps2bf16` ([`cvt16`]),
    /// which rounds to nearest even and quiets a NaN the same way but reads a subnormal binary32
    /// as zero: with `sub` the values are first tested for one ([`any_subnormal`]) and, if any,
    /// rounded in integer registers ([`round16`]); without, the caller vouches there is none.
    /// Meant to be inlined into code that enables AVX-512 F/DQ/VL and BF16
    /// ([`row_bf16_avx512bf16`]).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F/DQ/VL and BF16.
    #[inline(always)]
    pub(crate) unsafe fn cvt16_or_round(s: pulp::x86::V3, sub: bool, lo: __m256, hi: __m256) -> [u16; 16] {
        // SAFETY: the caller guarantees AVX-512 F/DQ/VL.
        if sub && unsafe { any_subnormal(lo, hi) } {
            pulp::cast(round16(s, lo, hi))
        } else {
            // SAFETY: the caller guarantees AVX-512 F/VL and BF16.
            unsafe { cvt16(lo, hi) }
        }
    }

    /// The BF16 words of `lo` (the first 8) and `hi` by one `vcvtne2ps2bf16`: [`f32_to_bf16_rne`]
    /// of each value that is not a subnormal binary32 (which it reads as zero).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, VL and BF16.
    #[target_feature(enable = "avx512f,avx512vl,avx512bf16")]
    #[inline]
    pub(crate) unsafe fn cvt16(lo: __m256, hi: __m256) -> [u16; 16] {
        let r = core::arch::x86_64::_mm256_cvtne2ps_pbh(hi, lo);
        // SAFETY: 16 BF16 lanes are 16 plain 16-bit words.
        unsafe { core::mem::transmute::<core::arch::x86_64::__m256bh, [u16; 16]>(r) }
    }

    /// Whether any of the 16 values is a subnormal binary32 (`vfpclassps` category 0x20).
    ///
    /// # Safety
    /// The CPU must have AVX-512 DQ and VL.
    #[target_feature(enable = "avx512f,avx512vl,avx512dq")]
    #[inline]
    pub(crate) unsafe fn any_subnormal(lo: __m256, hi: __m256) -> bool {
        use core::arch::x86_64::_mm256_fpclass_ps_mask;
        _mm256_fpclass_ps_mask::<0x20>(lo) | _mm256_fpclass_ps_mask::<0x20>(hi) != 0
    }

    /// The rounded BF16 word of 8 lanes that are not NaN, each in the low half of its 32-bit
    /// lane: `(b + 0x7fff + (b >> 16 & 1)) >> 16` (nearest, ties to even; an infinity stays
    /// one, a finite value may round to one).
    #[inline(always)]
    fn rne8(s: pulp::x86::V3, v: __m256) -> __m256i {
        let (avx, avx2) = (s.avx, s.avx2);
        let b: __m256i = pulp::cast(v);
        let lsb = avx2._mm256_and_si256(avx2._mm256_srli_epi32::<16>(b), avx._mm256_set1_epi32(1));
        avx2._mm256_srli_epi32::<16>(
            avx2._mm256_add_epi32(avx2._mm256_add_epi32(b, avx._mm256_set1_epi32(0x7fff)), lsb),
        )
    }

    /// The BF16 words of 16 values, `ev` those at the even positions and `od` those at the
    /// odd ones, in order, by Veltkamp's split: `c = RN(v (2^16 + 1))`, `hi = RN(c - RN(c -
    /// v))` is `v` rounded to 8 significant bits, its low 16 bits zero, and its high half is
    /// `f32_to_bf16_rne(v)` for every value `s q` of a finite binary16 scale `s` and an integer
    /// `q` in `-128..=127` (ties to even included; `-0` stays `-0` in this order of the
    /// subtractions): `tests::split16_rounds_every_grouped_value_as_f32_to_bf16_rne` checks all
    /// 16.25 million. Not for other values: an infinity becomes a NaN, and ties are not proved
    /// to go to even outside that set. Three float operations per 8 values, and one shift and
    /// one 16-bit blend pack the 16 words (the even ones shifted down into the low halves): six
    /// operations fewer than [`rne8`] twice and [`pack16`].
    #[inline(always)]
    pub(crate) fn split16(s: pulp::x86::V3, ev: __m256, od: __m256) -> __m256i {
        let avx2 = s.avx2;
        avx2._mm256_blend_epi16::<0xaa>(
            avx2._mm256_srli_epi32::<16>(pulp::cast(split8(s, ev))),
            pulp::cast(split8(s, od)),
        )
    }

    /// `v` rounded to 8 significant bits by Veltkamp's split ([`split16`]), in its 32-bit lanes.
    #[inline(always)]
    fn split8(s: pulp::x86::V3, v: __m256) -> __m256 {
        let avx = s.avx;
        let c = avx._mm256_mul_ps(v, avx._mm256_set1_ps(65537.0));
        avx._mm256_sub_ps(c, avx._mm256_sub_ps(c, v))
    }

    /// [`split16`] for 16 values in position order (`lo` the first 8), packed by two shifts,
    /// `packus` and `vpermq` ([`pack16`]). `f32_to_bf16_rne`'s words for the values checked in
    /// full: FP8's products `w m` of every E4M3FN word (a NaN comes back made quiet, the word
    /// `b >> 16 | 0x40`) and every BF16 multiplier `m` that is zero or of magnitude
    /// `2^-117 ..= 2^100` (`fp8x86::dequant_row_f16c`;
    /// `tests::split16_in_order_rounds_every_fp8_value_as_f32_to_bf16_rne`). Not for a
    /// subnormal value (rounded at the wrong bit), an infinity, or one whose splitter product
    /// overflows.
    #[inline(always)]
    pub(crate) fn split16_in_order(s: pulp::x86::V3, lo: __m256, hi: __m256) -> __m256i {
        let avx2 = s.avx2;
        let word = |v: __m256| avx2._mm256_srli_epi32::<16>(pulp::cast(split8(s, v)));
        pack16(s, word(lo), word(hi))
    }

    /// [`rne8`], and a NaN lane `b >> 16 | 0x40` (sign and top payload kept, made quiet).
    #[inline(always)]
    pub(crate) fn round8(s: pulp::x86::V3, v: __m256) -> __m256i {
        let (avx, avx2) = (s.avx, s.avx2);
        let nan = avx2._mm256_or_si256(
            avx2._mm256_srli_epi32::<16>(pulp::cast(v)),
            avx._mm256_set1_epi32(0x40),
        );
        let unord: __m256i = pulp::cast(avx._mm256_cmp_ps::<_CMP_UNORD_Q>(v, v));
        avx2._mm256_blendv_epi8(rne8(s, v), nan, unord)
    }

    /// The 16-bit words in the low halves of the 32-bit lanes of `lo` (the first 8) and `hi`,
    /// in order (`packus`, which keeps a word below 2^16 as it is, interleaves the halves by
    /// 128-bit lane; `vpermq` puts them back).
    #[inline(always)]
    pub(crate) fn pack16(s: pulp::x86::V3, lo: __m256i, hi: __m256i) -> __m256i {
        let avx2 = s.avx2;
        avx2._mm256_permute4x64_epi64::<0xd8>(avx2._mm256_packus_epi32(lo, hi))
    }

    /// `f32_to_bf16_rne` of 16 values, the words in order: one unordered comparison of the two
    /// halves tells whether any is NaN; only then are the NaN lanes chosen lane by lane
    /// ([`round8`]).
    #[inline(always)]
    pub(crate) fn round16(s: pulp::x86::V3, lo: __m256, hi: __m256) -> __m256i {
        let avx = s.avx;
        let any_nan = avx._mm256_movemask_ps(avx._mm256_cmp_ps::<_CMP_UNORD_Q>(lo, hi)) != 0;
        if any_nan {
            pack16(s, round8(s, lo), round8(s, hi))
        } else {
            pack16(s, rne8(s, lo), rne8(s, hi))
        }
    }

    /// The little-endian binary32 values in `src` (4 bytes each, any alignment) to their BF16
    /// words ([`f32_to_bf16_rne`]), 16 at a time ([`ChunkOut::words16`]); `out.len() ==
    /// src.len() / 4`. The tail from a zero-padded copy.
    #[inline(always)]
    fn bf16_of_f32<T: ChunkOut>(cpu: T::Cpu, src: &[u8], out: &mut [T]) {
        let (o16, orest) = out.as_chunks_mut::<16>();
        let (s64, srest) = src.as_chunks::<64>();
        for (o, b) in o16.iter_mut().zip(s64) {
            let [lo, hi]: [__m256; 2] = pulp::cast(*b);
            *o = T::words16(cpu, lo, hi);
        }
        if !orest.is_empty() {
            let mut b = [0u8; 64];
            b[..srest.len()].copy_from_slice(srest);
            let [lo, hi]: [__m256; 2] = pulp::cast(b);
            let n = orest.len();
            orest.copy_from_slice(&T::words16(cpu, lo, hi)[..n]);
        }
    }

    /// The little-endian BF16 words in `src` to `out` (`out.len() == src.len() / 2`), each NaN
    /// made quiet (`| 0x40`): the BF16 word of the exact f32 value `w << 16`.
    #[inline(always)]
    fn quiet_bf16(s: pulp::x86::V3, src: &[u8], out: &mut [u16]) {
        let (avx, avx2) = (s.avx, s.avx2);
        let (o16, orest) = out.as_chunks_mut::<16>();
        let (s32, srest) = src.as_chunks::<32>();
        for (o, b) in o16.iter_mut().zip(s32) {
            let v: __m256i = pulp::cast(*b);
            let mag = avx2._mm256_and_si256(v, avx._mm256_set1_epi16(0x7fff));
            let nan = avx2._mm256_cmpgt_epi16(mag, avx._mm256_set1_epi16(0x7f80));
            *o = pulp::cast(avx2._mm256_or_si256(v, avx2._mm256_and_si256(nan, avx._mm256_set1_epi16(0x40))));
        }
        for (o, b) in orest.iter_mut().zip(srest.as_chunks::<2>().0) {
            *o = f32_to_bf16_rne(f32::from_bits(u32::from(u16::from_le_bytes(*b)) << 16));
        }
    }
}

/// The dequantize kernel over a block of output rows `i0 ..`, written once over `pulp::Simd`
/// (the body is ISA-agnostic fixed-length code that LLVM vectorises inside the token's
/// `target_feature` context).
pub(crate) struct DequantOp<'a, 'b, T> {
    pub(crate) w: Weights<'a>,
    pub(crate) sel: Sel<'a>,
    pub(crate) i0: usize,
    pub(crate) out: &'b mut [T],
}

impl<T: OutWord> WithSimd for DequantOp<'_, '_, T> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) {
        let k = self.w.k();
        if k == 0 {
            return;
        }
        for (j, o) in self.out.chunks_exact_mut(k).enumerate() {
            T::row(&self.w, self.sel.src(self.i0 + j), o);
        }
    }
}

/// [`DequantOp`] on an x86 token with AVX2 (`V3`, or `V4` which includes it): rows through
/// [`OutWord::row_v3`].
#[cfg(target_arch = "x86_64")]
pub(crate) struct DequantV3Op<'a, 'b, T>(
    pub(crate) pulp::x86::V3,
    /// The BF16 output may use AVX-512 BF16 ([`OutWord::row_v3`]).
    pub(crate) bool,
    pub(crate) DequantOp<'a, 'b, T>,
);

#[cfg(target_arch = "x86_64")]
impl<T: OutWord> WithSimd for DequantV3Op<'_, '_, T> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) {
        let DequantV3Op(s, bf16, op) = self;
        let k = op.w.k();
        if k == 0 {
            return;
        }
        let aux = x86::Aux::new(s, &op.w, op.out.len() / k);
        for (j, o) in op.out.chunks_exact_mut(k).enumerate() {
            T::row_v3(s, bf16, &op.w, op.sel.src(op.i0 + j), o, &aux);
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::{f32_to_bf16_rne, x86};

    /// `x86::split16` (Veltkamp's split) rounds every value a grouped format can make, `s q`
    /// for each finite binary16 scale word `s` (both signs, subnormals, zeros) and each code
    /// `q` in `-128..=127` (Q5, Q6 and W8 codes and more), to `f32_to_bf16_rne`'s word: 16.25
    /// million values, about 250 thousand of them ties at BF16's precision, and the `-0` of a
    /// zero code under a negative scale. The even and odd positions of each 16 are passed as
    /// the kernel passes them.
    #[test]
    fn split16_rounds_every_grouped_value_as_f32_to_bf16_rne() {
        let Some(s) = pulp::x86::V3::try_new() else {
            std::println!("SKIPPED: no AVX2 on this CPU");
            return;
        };
        let mut checked = 0usize;
        for w in 0..=u16::MAX {
            let sc = ninfer_core::word::f16::f16_to_f32_exact(w);
            if !sc.is_finite() {
                continue;
            }
            for q0 in (-128i32..128).step_by(16) {
                let v: [f32; 16] = core::array::from_fn(|i| sc * (q0 + i as i32) as f32);
                let ev: [f32; 8] = core::array::from_fn(|l| v[2 * l]);
                let od: [f32; 8] = core::array::from_fn(|l| v[2 * l + 1]);
                let got: [u16; 16] = pulp::cast(x86::split16(s, pulp::cast(ev), pulp::cast(od)));
                for i in 0..16 {
                    assert_eq!(
                        got[i],
                        f32_to_bf16_rne(v[i]),
                        "scale {w:#06x} q {}",
                        q0 + i as i32
                    );
                }
                checked += 16;
            }
        }
        assert_eq!(checked, (65536 - 2048) * 256);
    }

    /// `x86::split16_in_order` rounds every value of the FP8 rows that take it
    /// (`fp8x86::dequant_row_f16c`), `w m` for each E4M3FN word `w` (NaN words included) and
    /// each BF16 multiplier `m` that is zero or of magnitude `2^-117 ..= 2^100`, to
    /// `f32_to_bf16_rne`'s word: 14 million values, 1.8 million of them ties at BF16's
    /// precision. The bounds are near the edge: below them `131 * 2^-125` makes subnormal
    /// products that it rounds at the wrong bit, and above them `2^104` products whose
    /// splitter product overflows.
    #[test]
    fn split16_in_order_rounds_every_fp8_value_as_f32_to_bf16_rne() {
        let Some(s) = pulp::x86::V3::try_new() else {
            std::println!("SKIPPED: no AVX2 on this CPU");
            return;
        };
        let words: std::vec::Vec<f32> = (0..=255u8)
            .map(ninfer_core::word::e4m3fn::e4m3fn_to_f32)
            .collect();
        let round_all = |m: f32| -> bool {
            words.chunks(16).all(|w| {
                let v: [f32; 16] = core::array::from_fn(|i| w[i] * m);
                let lo: [f32; 8] = core::array::from_fn(|i| v[i]);
                let hi: [f32; 8] = core::array::from_fn(|i| v[8 + i]);
                let got: [u16; 16] = pulp::cast(x86::split16_in_order(s, pulp::cast(lo), pulp::cast(hi)));
                (0..16).all(|i| got[i] == f32_to_bf16_rne(v[i]))
            })
        };
        let mut rows = 0usize;
        for mw in 0..=u16::MAX {
            let m = f32::from_bits(u32::from(mw) << 16);
            if crate::gemv::fp8x86::split_rounds(m) {
                assert!(round_all(m), "multiplier {mw:#06x}");
                rows += 1;
            }
        }
        assert_eq!(rows, 2 * (1 + 217 * 128 + 1));
        assert!(!round_all(131.0 * 2f32.powi(-125)) && !round_all(-(2f32.powi(104))));
    }

    /// `ChunkOut::put16_split`'s default (the f32 output's) writes the even and the odd values
    /// in position order, as `put16` writes them in order.
    #[test]
    fn put16_split_puts_even_and_odd_values_in_position_order() {
        use super::ChunkOut;
        use crate::weights::CHUNK;
        let Some(s) = pulp::x86::V3::try_new() else {
            std::println!("SKIPPED: no AVX2 on this CPU");
            return;
        };
        let v: [f32; 16] = core::array::from_fn(|i| i as f32 + 0.5);
        let ev: [f32; 8] = core::array::from_fn(|l| v[2 * l]);
        let od: [f32; 8] = core::array::from_fn(|l| v[2 * l + 1]);
        for j in [0, 5, 7] {
            let mut d = [f32::NAN; CHUNK];
            <f32 as ChunkOut>::put16_split(s, &mut d, j, pulp::cast(ev), pulp::cast(od));
            assert_eq!(d[16 * j..16 * j + 16], v, "block {j}");
            assert!(d.iter().enumerate().all(|(i, x)| i / 16 == j || x.is_nan()));
        }
    }
}
