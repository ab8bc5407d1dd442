//! The `I8` profile: activations quantized on the fly, integer dot products.
//!
//! **Activation staging** ([`quantize`]), once per call: each activation row is cut into blocks
//! of [`I8_BLOCK`] = 32 positions (zero-padded to whole 128-position chunks). A block with
//! `amax_b = max |x_k|` gets the step `d_b = amax_b / 127` (binary32, RNE) and codes
//! `xq_k = clamp(round_ties_even(x_k * (127 / amax_b)), -127, 127)`; an all-zero block gets
//! `d_b = 0` and zero codes. Non-finite activations are refused.
//!
//! The staging runs inside the ISA token's `target_feature` context ([`Quantize`]) and is
//! written so that it vectorises without changing a value: the finiteness scan is a branch-free
//! fold, `amax_b` is an integer maximum of magnitude bits, and the rounding adds `1.5 * 2^23`
//! instead of calling `round_ties_even` ([`code`]; a block whose factor `127 / amax_b`
//! overflows keeps the plain expression). Tested against the plain definition (exact ties,
//! overflowing factors, zeros, the largest finite values). Measured (AVX-512, one thread,
//! K = 8192): 21.7 -> 2.1 µs per activation row; a 16 x 8192 Q4 `I8` GEMV 25 -> 5.2 µs per
//! call, 1024 x 1024 36 -> 40 G weights/s (one thread) and 54 -> 59 (two), medians of 3. The
//! NVFP4 forms (`split`, `corr`) are plain loops over the chunk arrays: a 16 x 8192 NVFP4 `I8`
//! GEMV 13.0 -> 7.9 µs per call.
//!
//! **Per chunk of a row** the weights' integer codes (grouped q, NVFP4 `2 * e2m1`) are dotted
//! with `xq` exactly in i32, one 16-position sub-block at a time, and each sub-block sum is
//! folded into f32 accumulators with one multiply-add by `s_sub * d_b` (the weight scale of the
//! sub-block times the activation step of its block). The ISA kernels differ only in how the
//! integer dot is done:
//!
//! - x86 `V3` (AVX2): `_mm256_sign_epi8` moves the activation's sign onto the code,
//!   `_mm256_maddubs_epi16(|xq|, q * sign)` (no saturation: `2 * 127 * 127 < 2^15`),
//!   `_mm256_madd_epi16(.., 1)` to i32, `cvtepi32_ps` and one FMA per 32 weights into 4
//!   accumulators. `V3_512b` runs this kernel too (there is no 16-lane integer emulation).
//!   This is the reference of the AVX2 NVFP4 fast path; the AVX2 row-split fast path sums each
//!   32-position block to one exact integer first and has its own fixed order (see
//!   `gemv/i8x86.rs`, "block totals"), with [`QuantAct::dblk`] and [`QuantAct::bsum`].
//! - x86 `V4` (AVX-512BW): the same with 64-byte registers; the sign is applied with
//!   `_mm512_movepi8_mask` + `_mm512_mask_sub_epi8` (AVX-512 has no `sign_epi8`).
//! - NEON: `vdotq_s32` (sdot) where the CPU has dotprod, else `vmull_s8`/`vmull_high_s8` and
//!   `vpaddlq_s16`; `vcvtq_f32_s32` and `vfmaq_f32` into 4 accumulators.
//! - Scalar: plain i32 sums per sub-block.
//!
//! The row result is the accumulators summed in a fixed order; NVFP4 multiplies by `0.5`
//! (exact) and divides by `d_w`. Integer sums are exact, so every ISA computes the same real
//! number up to the float rounding of the block terms, which the criterion bounds.

use pulp::{Simd, WithSimd};

use crate::error::KernelError;
use crate::weights::{Post, Weights, CHUNK};
use crate::I8_BLOCK;

/// Quantized activations of `nb` rows: per chunk 128 codes and the step of each 16-position
/// sub-block (the step of the 32-block holding it), plus two derived forms the NVFP4 x86 fast
/// paths share across all rows and threads (see `gemv/nvfp4x86.rs`).
pub(crate) struct QuantAct {
    pub(crate) chunks: usize,
    pub(crate) xq: Vec<[i8; CHUNK]>,
    pub(crate) dsub: Vec<[f32; 8]>,
    /// The codes of each chunk split into even positions then odd positions (the order of the
    /// low and high nibbles of 64 NVFP4 code bytes; empty when `offset` is 0).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) split: Vec<[i8; CHUNK]>,
    /// Lane l: `-offset * (xq[8l] + .. + xq[8l + 7])`, the exact integer correction of a dot
    /// product with codes offset by `+offset` (empty when `offset` is 0).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) corr: Vec<[i32; CHUNK / 8]>,
    /// Per batch row, [`QuantAct::bstride`] entries: the step `d_b` of each 32-position block
    /// (zero past the last chunk), the block-total order's operand (see `gemv/i8x86.rs`; empty
    /// unless staged with `blocks`).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) dblk: Vec<f32>,
    /// The same layout: `sum xq` over each block (exact), for the offset correction (empty
    /// unless staged with `blocks`).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) bsum: Vec<i32>,
}

impl QuantAct {
    /// Entries per batch row of [`QuantAct::dblk`] and [`QuantAct::bsum`] when staged: the
    /// blocks of the chunks rounded up to a whole pair of chunks (eight blocks).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) fn bstride(&self) -> usize {
        8 * self.chunks.div_ceil(2)
    }
}

/// [`quantize`] compiled inside an ISA token's `target_feature` context (see
/// [`crate::isa::Token::vectorize`]): the same operations on the same values, so the same
/// codes and steps, but LLVM may use that ISA's vector instructions (and its rounding
/// instruction instead of a library call per value).
pub(crate) struct Quantize<'a> {
    pub(crate) x: &'a [f32],
    pub(crate) nb: usize,
    pub(crate) k: usize,
    pub(crate) chunks: usize,
    pub(crate) offset: i32,
    pub(crate) blocks: bool,
}

impl pulp::WithSimd for Quantize<'_> {
    type Output = Result<QuantAct, KernelError>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Self::Output {
        quantize(self.x, self.nb, self.k, self.chunks, self.offset, self.blocks)
    }
}

/// Quantize `nb` activation rows of length `k` (row-major in `x`), see the module docs.
/// `offset` is the code offset of the x86 NVFP4 fast paths' correction term (0 where unused);
/// `blocks`: also stage the per-block steps and code sums the AVX2 row-split fast path reads.
#[inline(always)]
pub(crate) fn quantize(
    x: &[f32],
    nb: usize,
    k: usize,
    chunks: usize,
    offset: i32,
    blocks: bool,
) -> Result<QuantAct, KernelError> {
    let mut xq = vec![[0i8; CHUNK]; nb * chunks];
    let mut dsub = vec![[0f32; 8]; nb * chunks];
    for b in 0..nb {
        let row = &x[b * k..(b + 1) * k];
        // A branch-free scan first (it vectorises), the position only on failure.
        if row.iter().fold(false, |bad, v| bad | !v.is_finite()) {
            let kk = row.iter().position(|v| !v.is_finite()).unwrap_or(0);
            return Err(KernelError::NonFiniteActivation { batch: b, k: kk });
        }
        for (blk, xs) in row.chunks(I8_BLOCK).enumerate() {
            // `max |x|` over finite values as the maximum of their magnitude bits (the order of
            // non-negative binary32 values is the order of their bit patterns): the same value
            // as a float maximum, as an integer reduction that vectorises.
            let amax = f32::from_bits(xs.iter().fold(0u32, |m, v| m.max(v.to_bits() & 0x7fff_ffff)));
            let (c, i) = (blk / 4, blk % 4);
            let (d, inv) = if amax == 0.0 {
                (0.0, 0.0)
            } else {
                (amax / 127.0, 127.0 / amax)
            };
            dsub[b * chunks + c][2 * i] = d;
            dsub[b * chunks + c][2 * i + 1] = d;
            let dst = &mut xq[b * chunks + c][I8_BLOCK * i..I8_BLOCK * i + xs.len()];
            if inv.is_finite() {
                for (q, &v) in dst.iter_mut().zip(xs) {
                    *q = code(v * inv);
                }
            } else {
                // `amax_b` below `127 / f32::MAX`: the plain expression (`0 * inf` is NaN,
                // whose code is 0).
                for (q, &v) in dst.iter_mut().zip(xs) {
                    *q = plain_code(v * inv);
                }
            }
        }
    }
    let (mut dblk, mut bsum) = (Vec::new(), Vec::new());
    if blocks {
        let bstride = 8 * chunks.div_ceil(2);
        dblk = vec![0f32; nb * bstride];
        bsum = vec![0i32; nb * bstride];
        for b in 0..nb {
            for c in 0..chunks {
                for i in 0..4 {
                    let at = b * bstride + 4 * c + i;
                    dblk[at] = dsub[b * chunks + c][2 * i];
                    let codes = &xq[b * chunks + c][I8_BLOCK * i..I8_BLOCK * (i + 1)];
                    bsum[at] = codes.iter().map(|&q| i32::from(q)).sum();
                }
            }
        }
    }
    let (split, corr) = if offset == 0 {
        (Vec::new(), Vec::new())
    } else {
        // Plain loops over fixed-size arrays (they vectorise; per-element closures did not).
        let mut split = vec![[0i8; CHUNK]; xq.len()];
        let mut corr = vec![[0i32; CHUNK / 8]; xq.len()];
        for ((c, sp), co) in xq.iter().zip(&mut split).zip(&mut corr) {
            let (even, odd) = sp.split_at_mut(CHUNK / 2);
            for ((e, o), pair) in even.iter_mut().zip(odd).zip(c.chunks_exact(2)) {
                *e = pair[0];
                *o = pair[1];
            }
            for (v, eight) in co.iter_mut().zip(c.chunks_exact(8)) {
                *v = -offset * eight.iter().map(|&q| i32::from(q)).sum::<i32>();
            }
        }
        (split, corr)
    };
    Ok(QuantAct {
        chunks,
        xq,
        dsub,
        split,
        corr,
        dblk,
        bsum,
    })
}

/// The staging definition of an activation code (module docs), for any `y`.
fn plain_code(y: f32) -> i8 {
    y.round_ties_even().clamp(-127.0, 127.0) as i8
}

/// [`plain_code`]`(y)` for `|y| <= 2^22` (here `|y| <= 127 (1 + 2^-23)`):
/// adding `1.5 * 2^23` rounds `y` to an integer in the sum's low mantissa bits with the
/// default round-to-nearest-even, so the bits minus those of `1.5 * 2^23` are
/// `round_ties_even(y)`. Integer and float operations only (no rounding-function call), so the
/// staging loop vectorises; equal to the plain expression for every such `y` (tested).
#[inline(always)]
fn code(y: f32) -> i8 {
    const MAGIC: f32 = 12_582_912.0;
    let r = (y + MAGIC).to_bits() as i32 - MAGIC.to_bits() as i32;
    r.clamp(-127, 127) as i8
}

/// One ISA's integer-dot kernel over a 128-position chunk.
pub(crate) trait I8Kernel: Copy {
    type Acc: Copy;
    fn zero(self) -> Self::Acc;
    /// `acc += sum over sub-blocks i of sd[i] * (q . x over positions 16i .. 16i + 15)`.
    fn chunk(self, acc: Self::Acc, q: &[i8; CHUNK], x: &[i8; CHUNK], sd: &[f32; 8]) -> Self::Acc;
    /// The accumulators summed in a fixed order.
    fn finish(self, acc: Self::Acc) -> f32;
}

/// Fixed pairwise sum of 8 values.
#[inline(always)]
pub(crate) fn tree8(a: [f32; 8]) -> f32 {
    ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
}

/// The scalar twin.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScalarI8;

impl I8Kernel for ScalarI8 {
    type Acc = [f32; 8];

    #[inline(always)]
    fn zero(self) -> [f32; 8] {
        [0.0; 8]
    }

    #[inline(always)]
    fn chunk(self, mut acc: [f32; 8], q: &[i8; CHUNK], x: &[i8; CHUNK], sd: &[f32; 8]) -> [f32; 8] {
        for (i, a) in acc.iter_mut().enumerate() {
            let mut s = 0i32;
            for j in 16 * i..16 * i + 16 {
                s += q[j] as i32 * x[j] as i32;
            }
            *a += sd[i] * s as f32;
        }
        acc
    }

    #[inline(always)]
    fn finish(self, acc: [f32; 8]) -> f32 {
        tree8(acc)
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::*;
    use core::arch::x86_64::{__m256, __m256i, __m512, __m512i};

    /// AVX2 kernel (pulp `V3` token; pulp's safe intrinsic wrappers).
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct V3I8(pub(crate) pulp::x86::V3);

    impl I8Kernel for V3I8 {
        type Acc = [__m256; 4];

        #[inline(always)]
        fn zero(self) -> [__m256; 4] {
            [self.0.avx._mm256_setzero_ps(); 4]
        }

        #[inline(always)]
        fn chunk(self, acc: [__m256; 4], q: &[i8; CHUNK], x: &[i8; CHUNK], sd: &[f32; 8]) -> [__m256; 4] {
            let s = self.0;
            let qv: [__m256i; 4] = pulp::cast(*q);
            let xv: [__m256i; 4] = pulp::cast(*x);
            let ones = s.avx._mm256_set1_epi16(1);
            let mut out = acc;
            for v in 0..4 {
                let ax = s.avx2._mm256_abs_epi8(xv[v]);
                let sq = s.avx2._mm256_sign_epi8(qv[v], xv[v]);
                let m = s
                    .avx2
                    ._mm256_madd_epi16(s.avx2._mm256_maddubs_epi16(ax, sq), ones);
                // i32 lane l holds positions 4l..4l+3 of this 32-byte block: lanes 0..3 are
                // sub-block 2v, lanes 4..7 sub-block 2v + 1.
                let sc = s.avx._mm256_setr_ps(
                    sd[2 * v],
                    sd[2 * v],
                    sd[2 * v],
                    sd[2 * v],
                    sd[2 * v + 1],
                    sd[2 * v + 1],
                    sd[2 * v + 1],
                    sd[2 * v + 1],
                );
                out[v] = s.fma._mm256_fmadd_ps(s.avx._mm256_cvtepi32_ps(m), sc, out[v]);
            }
            out
        }

        #[inline(always)]
        fn finish(self, acc: [__m256; 4]) -> f32 {
            let s = self.0;
            let t = s.avx._mm256_add_ps(
                s.avx._mm256_add_ps(acc[0], acc[1]),
                s.avx._mm256_add_ps(acc[2], acc[3]),
            );
            tree8(pulp::cast(t))
        }
    }

    /// AVX-512BW kernel (pulp `V4` token).
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct V4I8(pub(crate) pulp::x86::V4);

    impl I8Kernel for V4I8 {
        type Acc = [__m512; 2];

        #[inline(always)]
        fn zero(self) -> [__m512; 2] {
            [self.0.avx512f._mm512_setzero_ps(); 2]
        }

        #[inline(always)]
        fn chunk(self, acc: [__m512; 2], q: &[i8; CHUNK], x: &[i8; CHUNK], sd: &[f32; 8]) -> [__m512; 2] {
            let s = self.0;
            let qv: [__m512i; 2] = pulp::cast(*q);
            let xv: [__m512i; 2] = pulp::cast(*x);
            let ones = s.avx512f._mm512_set1_epi16(1);
            let zero = s.avx512f._mm512_setzero_si512();
            let mut out = acc;
            for h in 0..2 {
                let neg = s.avx512bw._mm512_movepi8_mask(xv[h]);
                let sq = s.avx512bw._mm512_mask_sub_epi8(qv[h], neg, zero, qv[h]);
                let ax = s.avx512bw._mm512_abs_epi8(xv[h]);
                let m = s
                    .avx512bw
                    ._mm512_madd_epi16(s.avx512bw._mm512_maddubs_epi16(ax, sq), ones);
                // i32 lane l holds positions 4l..4l+3 of this 64-byte half: sub-block 4h + l/4.
                let sc: [f32; 16] = core::array::from_fn(|l| sd[4 * h + l / 4]);
                out[h] = s
                    .avx512f
                    ._mm512_fmadd_ps(s.avx512f._mm512_cvtepi32_ps(m), pulp::cast(sc), out[h]);
            }
            out
        }

        #[inline(always)]
        fn finish(self, acc: [__m512; 2]) -> f32 {
            let a: [[f32; 8]; 2] = pulp::cast(self.0.avx512f._mm512_add_ps(acc[0], acc[1]));
            let t: [f32; 8] = core::array::from_fn(|i| a[0][i] + a[1][i]);
            tree8(t)
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{V3I8, V4I8};

#[cfg(target_arch = "aarch64")]
mod neon {
    use super::*;
    use core::arch::aarch64::{float32x4_t, int32x4_t, int8x16_t};
    use pulp::aarch64::Neon;

    #[inline(always)]
    fn fold(n: Neon, acc: [float32x4_t; 4], sums: [int32x4_t; 8], sd: &[f32; 8]) -> [float32x4_t; 4] {
        let n = n.neon;
        let mut out = acc;
        for i in 0..8 {
            out[i % 4] = n.vfmaq_f32(out[i % 4], n.vcvtq_f32_s32(sums[i]), n.vdupq_n_f32(sd[i]));
        }
        out
    }

    #[inline(always)]
    fn finish4(n: Neon, acc: [float32x4_t; 4]) -> f32 {
        let n = n.neon;
        let t = n.vaddq_f32(n.vaddq_f32(acc[0], acc[1]), n.vaddq_f32(acc[2], acc[3]));
        let a: [f32; 4] = pulp::cast(t);
        (a[0] + a[1]) + (a[2] + a[3])
    }

    /// `sdot`: `acc[l] += sum_(j < 4) a[4l + j] * b[4l + j]` (signed bytes). `vdotq_s32` is not
    /// stable in `core::arch` yet, so the instruction is written as inline assembly.
    ///
    /// # Safety
    /// The CPU must have the dotprod extension.
    #[inline]
    #[target_feature(enable = "neon,dotprod")]
    unsafe fn sdot(acc: int32x4_t, a: int8x16_t, b: int8x16_t) -> int32x4_t {
        let mut acc = acc;
        // SAFETY: `sdot` reads and writes only the three vector registers named here (no memory,
        // no stack, no flags); the caller guarantees the CPU implements it (dotprod).
        unsafe {
            core::arch::asm!(
                "sdot {0:v}.4s, {1:v}.16b, {2:v}.16b",
                inout(vreg) acc,
                in(vreg) a,
                in(vreg) b,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        acc
    }

    /// NEON kernel with `sdot` (only constructed inside [`rows_neon_dotprod`]).
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct NeonDotI8(Neon);

    impl I8Kernel for NeonDotI8 {
        type Acc = [float32x4_t; 4];

        #[inline(always)]
        fn zero(self) -> [float32x4_t; 4] {
            [self.0.neon.vdupq_n_f32(0.0); 4]
        }

        #[inline(always)]
        fn chunk(
            self,
            acc: [float32x4_t; 4],
            q: &[i8; CHUNK],
            x: &[i8; CHUNK],
            sd: &[f32; 8],
        ) -> [float32x4_t; 4] {
            let qv: [int8x16_t; 8] = pulp::cast(*q);
            let xv: [int8x16_t; 8] = pulp::cast(*x);
            let z = self.0.neon.vdupq_n_s32(0);
            let sums: [int32x4_t; 8] = core::array::from_fn(|i| {
                // SAFETY: `NeonDotI8` values are only made in `rows_neon_dotprod`, whose caller
                // guarantees the dotprod extension.
                unsafe { sdot(z, qv[i], xv[i]) }
            });
            fold(self.0, acc, sums, sd)
        }

        #[inline(always)]
        fn finish(self, acc: [float32x4_t; 4]) -> f32 {
            finish4(self.0, acc)
        }
    }

    /// NEON kernel with widening multiplies (any aarch64 CPU).
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct NeonWideI8(pub(crate) Neon);

    impl I8Kernel for NeonWideI8 {
        type Acc = [float32x4_t; 4];

        #[inline(always)]
        fn zero(self) -> [float32x4_t; 4] {
            [self.0.neon.vdupq_n_f32(0.0); 4]
        }

        #[inline(always)]
        fn chunk(
            self,
            acc: [float32x4_t; 4],
            q: &[i8; CHUNK],
            x: &[i8; CHUNK],
            sd: &[f32; 8],
        ) -> [float32x4_t; 4] {
            let n = self.0.neon;
            let qv: [int8x16_t; 8] = pulp::cast(*q);
            let xv: [int8x16_t; 8] = pulp::cast(*x);
            let sums: [int32x4_t; 8] = core::array::from_fn(|i| {
                let lo = n.vmull_s8(n.vget_low_s8(qv[i]), n.vget_low_s8(xv[i]));
                let hi = n.vmull_high_s8(qv[i], xv[i]);
                n.vaddq_s32(n.vpaddlq_s16(lo), n.vpaddlq_s16(hi))
            });
            fold(self.0, acc, sums, sd)
        }

        #[inline(always)]
        fn finish(self, acc: [float32x4_t; 4]) -> f32 {
            finish4(self.0, acc)
        }
    }

    /// The row driver compiled with dotprod enabled.
    ///
    /// # Safety
    /// The CPU must have the dotprod extension.
    #[target_feature(enable = "neon,dotprod")]
    pub(crate) unsafe fn rows_neon_dotprod(neon: Neon, job: I8Job<'_, '_, '_>) {
        rows(NeonDotI8(neon), job)
    }
}

#[cfg(target_arch = "aarch64")]
pub(crate) use neon::{rows_neon_dotprod, NeonWideI8};

/// The rows `r0..r1` of one thread.
pub(crate) struct I8Job<'a, 'b, 'c> {
    pub(crate) w: Weights<'a>,
    pub(crate) act: &'a QuantAct,
    pub(crate) nb: usize,
    pub(crate) r0: usize,
    pub(crate) r1: usize,
    pub(crate) ys: &'b mut [&'c mut [f32]],
}

/// The row driver, shared by every ISA kernel.
#[inline(always)]
pub(crate) fn rows<K: I8Kernel>(kern: K, job: I8Job<'_, '_, '_>) {
    by_batch!(job.nb, rows_nb[K](kern, job))
}

/// [`rows`] for `min(nb, NB)` batch rows.
#[inline(always)]
fn rows_nb<K: I8Kernel, const NB: usize>(kern: K, job: I8Job<'_, '_, '_>) {
    let I8Job {
        w,
        act,
        nb,
        r0,
        r1,
        ys,
    } = job;
    let nb = nb.min(NB);
    let chunks = act.chunks;
    let mut q = [0i8; CHUNK];
    let (half, post) = match w {
        Weights::Nvfp4 { d, .. } => (true, Post::Div(d)),
        _ => (false, Post::None),
    };
    for row in r0..r1 {
        let mut acc = [kern.zero(); NB];
        for c in 0..chunks {
            w.int_chunk(row, c, &mut q);
            let s = w.sub_scales(row, c);
            for (b, a) in acc.iter_mut().enumerate().take(nb) {
                let d = &act.dsub[b * chunks + c];
                let sd: [f32; 8] = core::array::from_fn(|i| s[i] * d[i]);
                *a = kern.chunk(*a, &q, &act.xq[b * chunks + c], &sd);
            }
        }
        for (b, a) in acc.iter().enumerate().take(nb) {
            let v = kern.finish(*a);
            ys[b][row - r0] = post.apply(if half { v * 0.5 } else { v });
        }
    }
}

/// Runs [`rows`] with kernel `K` inside the `target_feature` context of a pulp token.
pub(crate) struct I8Op<'a, 'b, 'c, K> {
    pub(crate) kern: K,
    pub(crate) job: I8Job<'a, 'b, 'c>,
}

impl<K: I8Kernel> WithSimd for I8Op<'_, '_, '_, K> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) {
        rows(self.kern, self.job)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `code` against `plain_code`: every 61st binary32 of magnitude up to 2^22, and every
    /// value within 4 ulps of each `k + 1/2` (the ties and their neighbours) for |k| <= 300.
    #[test]
    fn magic_rounding_equals_the_plain_definition() {
        let limit = 4_194_304f32.to_bits();
        let mut checked = 0u64;
        for m in (0..=limit).step_by(61).chain([0, limit]) {
            for y in [f32::from_bits(m), -f32::from_bits(m)] {
                assert_eq!(code(y), plain_code(y), "y = {y:e} ({:#010x})", y.to_bits());
                checked += 1;
            }
        }
        for k in -300i32..=300 {
            let tie = k as f32 + 0.5;
            for d in -4i32..=4 {
                let y = f32::from_bits((tie.to_bits() as i32 + d) as u32);
                assert_eq!(code(y), plain_code(y), "y = {y:e}");
                checked += 1;
            }
        }
        assert!(checked > 30_000_000);
    }

    /// The staging against its definition written plainly, on awkward blocks: exact ties
    /// (`amax = 127`, so the factor is 1), `amax` so small that `127 / amax` overflows (zeros
    /// there give NaN, code 0), negative zeros, all-zero blocks, the largest finite values, a
    /// partial last block.
    #[test]
    fn staging_equals_the_plain_definition() {
        let k = 4 * I8_BLOCK + 5;
        let mut rows: Vec<Vec<f32>> = Vec::new();
        let ties: Vec<f32> = (0..k)
            .map(|i| (i as f32 - 64.0) + 0.5)
            .map(|v| v.clamp(-127.0, 127.0))
            .collect();
        rows.push(ties);
        let tiny: Vec<f32> = (0..k)
            .map(|i| match i % 3 {
                0 => 0.0,
                1 => f32::from_bits(1 + (i as u32 % 7)),
                _ => -f32::from_bits(3),
            })
            .collect();
        rows.push(tiny);
        let mixed: Vec<f32> = (0..k)
            .map(|i| match i / I8_BLOCK {
                0 => -0.0,
                1 => {
                    if i % 2 == 0 {
                        f32::MAX
                    } else {
                        -f32::MAX / 3.0
                    }
                }
                2 => (i as f32 * 0.37).sin() * 1e-30,
                _ => (i as f32 * 1.1).cos() * 3e5,
            })
            .collect();
        rows.push(mixed);
        let x: Vec<f32> = rows.concat();
        let nb = rows.len();
        let chunks = k.div_ceil(CHUNK);
        let act = quantize(&x, nb, k, chunks, 0, true).unwrap();
        for b in 0..nb {
            for (blk, xs) in x[b * k..(b + 1) * k].chunks(I8_BLOCK).enumerate() {
                let amax = xs.iter().fold(0f32, |m, v| m.max(v.abs()));
                let (d, inv) = if amax == 0.0 {
                    (0.0, 0.0)
                } else {
                    (amax / 127.0, 127.0 / amax)
                };
                let (c, i) = (blk / 4, blk % 4);
                assert_eq!(act.dsub[b * chunks + c][2 * i].to_bits(), d.to_bits());
                for (j, &v) in xs.iter().enumerate() {
                    let want = (v * inv).round_ties_even().clamp(-127.0, 127.0) as i8;
                    assert_eq!(
                        act.xq[b * chunks + c][I8_BLOCK * i + j],
                        want,
                        "row {b} block {blk} pos {j} x {v:e}"
                    );
                }
            }
            // The block forms: steps and code sums per block, zeros up to the pair boundary.
            let bs = act.bstride();
            assert_eq!(bs, 8 * chunks.div_ceil(2));
            for blk in 0..bs {
                let (c, i) = (blk / 4, blk % 4);
                let (d, sum) = if c < chunks {
                    let q = &act.xq[b * chunks + c][I8_BLOCK * i..I8_BLOCK * (i + 1)];
                    (act.dsub[b * chunks + c][2 * i], q.iter().map(|&v| v as i32).sum())
                } else {
                    (0.0, 0)
                };
                assert_eq!(
                    act.dblk[b * bs + blk].to_bits(),
                    d.to_bits(),
                    "row {b} block {blk}"
                );
                assert_eq!(act.bsum[b * bs + blk], sum, "row {b} block {blk}");
            }
            assert!(act.bsum[b * bs..(b + 1) * bs].iter().any(|&v| v != 0));
        }
    }

    /// The derived forms against their definitions (`QuantAct::split`, `QuantAct::corr`).
    #[test]
    fn split_codes_and_correction_lanes_match_their_definitions() {
        let k = 300;
        let x: Vec<f32> = (0..2 * k).map(|i| ((i * 37 % 101) as f32 - 50.0) * 0.3).collect();
        let act = quantize(&x, 2, k, 3, 12, false).unwrap();
        // The block forms only when asked for.
        assert!(act.dblk.is_empty() && act.bsum.is_empty());
        assert_eq!(act.split.len(), act.xq.len());
        for ((c, sp), co) in act.xq.iter().zip(&act.split).zip(&act.corr) {
            for i in 0..CHUNK {
                let want = if i < 64 { c[2 * i] } else { c[2 * (i - 64) + 1] };
                assert_eq!(sp[i], want, "split position {i}");
            }
            for l in 0..CHUNK / 8 {
                let want = -12 * c[8 * l..8 * l + 8].iter().map(|&v| v as i32).sum::<i32>();
                assert_eq!(co[l], want, "correction lane {l}");
            }
        }
        assert!(act.xq.iter().any(|c| c.iter().any(|&v| v != 0)));
    }

    #[test]
    fn staging_refuses_a_non_finite_activation_at_its_position() {
        let mut x = vec![1.0f32; 2 * 300];
        x[300 + 77] = f32::NAN;
        assert!(matches!(
            quantize(&x, 2, 300, 3, 0, false),
            Err(KernelError::NonFiniteActivation { batch: 1, k: 77 })
        ));
    }
}
