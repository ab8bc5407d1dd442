//! The canonical grouped encoder `MAXABS_F16_RECIP_RNE_V1` (numeric-formats section 7),
//! vectorised with `pulp`, writing a complete `row-split-k128-v1` payload (layouts.md) straight
//! from f32, BF16, binary16 or f64 source rows.
//!
//! # The oracle it matches
//!
//! The output is byte-identical to
//! `RowSplitGeom::encode_into(src, ninfer_core::encode::oracle::encode_group, out)`: the
//! bit-level oracle `ninfer_core::encode::oracle` driven by the core's own layout writer. That
//! includes the zero padding (codes of positions `k >= K`, scales of groups wholly in padding,
//! the bytes between the planes), the error value (the first failing `(row, group, element)` in
//! row-major order) and the zero-filled output on error. The parity tests in
//! `simd/tests/encode_parity.rs` compare every instruction-set path with that oracle.
//!
//! # The arithmetic, step by step (section 7), and why each step is exact
//!
//! One kernel, generic over `pulp::Simd`, walks each row in blocks of up to 1024 positions (8
//! chunks of 128) in three passes: amax per group, the scale step for all the block's groups at
//! once, then codes and packing per chunk.
//!
//! 1. **Source to binary32.** f32 is read in place; BF16 words are widened by `<< 16` (exact);
//!    binary16 words through the core's exact expansion; f64 through the core's RNE conversion,
//!    where a value that is not a finite binary32 becomes a NaN so that step 2 reports it at its
//!    own position, in row-major order, exactly like the core. A partial last chunk is copied
//!    into a zeroed stack block: zeros never raise a group's amax and always encode as code 0,
//!    and a group wholly in the padding gets scale 0x0000, which is the layout's padding.
//! 2. **amax** is the maximum of `bits & 0x7fff_ffff` over the group as `u32` lanes (for
//!    non-negative binary32 the bit order is the value order). Lanes are clamped to the bits of
//!    `+inf` and the horizontal maximum is taken as binary32 (exact: a maximum never rounds).
//!    `amax >= +inf` means a NaN or infinity is in the group: the element is then located by a
//!    scalar scan (cold path).
//! 3. **Scale, vectorised across groups** (one group per lane, see `block_scales`):
//!    `raw = amax / qmax` is an IEEE binary32 vector division (correctly rounded, ties to even,
//!    on every path, like the scalar one). `round_f16(raw)` is done at bit level, branch-free,
//!    with integer lane operations — neither F16C's `vcvtps2ph` nor a scalar call per group:
//!    in the normal binary16 range `bits + 0xfff + bit13`, shifted right by 13 and rebiased
//!    (ties to even at bit 13; a carry steps into the exponent; raw >= 65520 lands on
//!    `>= 0x7c00`, the overflow), in the subnormal range `raw * 2^24` (exact) plus 1.5 * 2^23
//!    (the hardware's RNE to an integer count of 2^-24 steps). Then the `0x0001` rescue,
//!    the overflow check (`scale16 >= 0x7c00`), the exact expansion `scale32`, and `inv =
//!    1 / scale32` (IEEE vector division). An all-zero group (`+0` or `-0` elements) gets
//!    `scale16 = 0` and `inv = 0`, so step 4 yields code 0 without a branch. The tests check
//!    this rounding against the oracle on every binary16 rounding boundary.
//! 4. **Codes, per lane**: `n = x * inv` — a plain IEEE multiply, never a fused multiply-add
//!    (`mul_add_e_*` would fuse on V3 and not on `Scalar`) — then `c = min(max(n, qmin), qmax)`
//!    and `bits(c + 1.5 * 2^23)`. Clamping to the integer bounds *before* rounding gives the
//!    same code as the spec's clamp *after* rounding (rounding is monotone and fixes integers).
//!    For `|c| <= 128`, `c + 1.5 * 2^23` lies in `[2^23, 2^24)` where the binary32 ulp is 1, so
//!    the hardware's round-to-nearest-even addition *is* `round_to_integral_ties_to_even`, and
//!    the low byte of the sum's bits is the code as an 8-bit two's-complement word (the magic
//!    constant's bits are a multiple of 256). `-0.0`, `+-0.5` and all ties come out as the spec
//!    examples require. W8 clamps to `[-127, 127]`, so `0x80` is never produced.
//! 5. **Packing into the split-half chunk** with vector masks and shifts on the `u32` words:
//!    nibble plane byte `j = (u(j) & 15) | (u(j + 64) & 15) << 4`; the Q5 high plane ORs
//!    `bit 4 of u(16t + j)` into bit `t`, the Q6 one `bits 4, 5 of u(32p + j)` into bits `2p,
//!    2p + 1`; W8 keeps the low byte. The final `u32 -> u8` narrowing is explicit on x86
//!    (`Narrow`: AVX-512 `vpmovdb`; AVX2 mask, two packs, a lane permutation): left to LLVM,
//!    the portable loop became one `vpinsrb`/`vpextrb` per byte, most of the encoder's time
//!    (perf). Other paths keep the portable loop.
//!
//! No floating-point environment is touched: Rust leaves flush-to-zero and denormals-are-zero
//! off, so subnormal sources, subnormal `raw` scales and subnormal products are exact IEEE
//! operations on every path.
//!
//! # Speed
//!
//! Xeon (Emerald Rapids, KVM), 1 thread, G weights/s from f32, medians of 2-3 alternations of
//! the old and new binary (`report --threads 1,2 8192x8192 1024x1024`): the explicit narrowing
//! took 1024x1024 (cache-resident) Q4 1.87 -> 4.65, Q5 1.41 -> 3.73, Q6 1.31 -> 4.10 (W8, one
//! byte per word, 4.1 either way); 8192x8192 with its 256 MiB source streamed from memory Q4
//! 1.21 -> 1.93-2.17, Q5 1.06 -> 1.78, Q6 0.97 -> 1.73. Prefetching the next 4 KiB source block
//! before the three passes over the current one: 8192x8192 Q4 1.16 -> 1.23, W8 1.68 -> 1.93
//! (two blocks ahead measured the same as one). Spreading those prefetches over the amax pass
//! instead (with each group, the lines of the same group of the next block: 4 lines per Q4
//! group rather than 64 at once, more than the core's outstanding-miss slots), 8192x8192, one
//! thread, medians of 3: AVX2 Q4 1.85 -> 2.46, W8 1.89 -> 2.12; AVX-512 Q4 2.07 -> 2.24, Q5
//! 2.08 -> 2.22, W8 2.02 -> 2.33; two threads AVX2 Q4 3.9 -> 5.3 (two blocks ahead: the same).
//!
//! # Paths, dispatch and threads
//!
//! [`EncodePath::detect`] resolves [`Isa::detect`]: AVX-512 (`pulp::x86::V4`), else
//! AVX2+FMA+F16C (`V3`), else NEON, else `pulp::Scalar`, once per call. Every path can be
//! selected explicitly with [`EncodePath::new`] (including [`Isa::V3_512b`], the 16-lane shapes
//! of V4 on AVX2) so that tests compare each of them with the oracle. Rows are split into
//! contiguous blocks encoded on scoped threads; every byte depends only on its own group, so the
//! payload does not depend on the thread count, and the reported error is the one of the lowest
//! failing block, which is the row-major-first one.

use core::sync::atomic::{AtomicUsize, Ordering};

use ninfer_core::encode::Source;
use ninfer_core::error::{EncodeError, EncodeErrorKind};
use ninfer_core::layout::row_split::{chunk_bytes, RowSplitGeom, CHUNK};
use ninfer_core::registry::Grouped;
use ninfer_core::word::f16::f16_to_f32_bits;
use ninfer_core::word::fp32::f64_to_f32_rne_checked;
use pulp::{Simd, WithSimd};

#[cfg(target_arch = "x86_64")]
use crate::isa::As512b;
use crate::Isa;

/// 1.5 * 2^23: adding it to a binary32 of magnitude <= 2^22 rounds to an integer, ties to even.
const RNE_MAGIC: f32 = 12_582_912.0;

/// Bits of binary32 `+inf`; `abs bits >= INF_BITS` means NaN or infinity.
const INF_BITS: u32 = 0x7f80_0000;

/// Magnitude mask of a binary32 word.
const MAG: u32 = 0x7fff_ffff;

/// Positions per pass of the row loop: 8 chunks (a multiple of both group sizes).
const BLOCK: usize = 8 * CHUNK;

/// Groups in a block of the smaller group size (W8's 32).
const MAX_BLOCK_GROUPS: usize = BLOCK / 32;

/// Bits of [`RNE_MAGIC`].
const RNE_MAGIC_BITS: u32 = 0x4b40_0000;

/// [`encode_row_split_with`] never starts more threads than this, whatever it is asked for.
pub const MAX_THREADS: usize = 256;

/// [`encode_row_split`] gives a thread no fewer than this many physical weights (thread start-up
/// costs about as much as encoding them).
pub const MIN_WEIGHTS_PER_THREAD: usize = 1 << 16;

/// A resolved instruction-set path of the encoder: a [`crate::Isa`] together with the proof
/// (pulp's token) that this CPU has its features. Get one with [`EncodePath::detect`] or
/// [`EncodePath::new`]; the latter returns `None` where the target or the CPU lacks the path.
#[derive(Clone, Copy, Debug)]
pub struct EncodePath {
    isa: Isa,
    token: Token,
}

#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug)]
enum Token {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    V3(pulp::x86::V3),
    #[cfg(target_arch = "x86_64")]
    V3_512b(pulp::x86::V3),
    #[cfg(target_arch = "x86_64")]
    V4(pulp::x86::V4),
    #[cfg(target_arch = "aarch64")]
    Neon(pulp::aarch64::Neon),
}

impl EncodePath {
    /// The widest path this CPU supports ([`Isa::detect`]: V4, V3, NEON, else scalar).
    pub fn detect() -> EncodePath {
        EncodePath::new(Isa::detect()).unwrap_or(EncodePath {
            isa: Isa::Scalar,
            token: Token::Scalar,
        })
    }

    /// The path `isa` if this CPU can run it. [`Isa::V3_512b`] runs the 16-lane shapes (those of
    /// V4) on AVX2; [`Isa::NeonNoDotprod`] is the same encoder path as [`Isa::Neon`] (the
    /// encoder has no dot products).
    pub fn new(isa: Isa) -> Option<EncodePath> {
        let token = match isa {
            Isa::Scalar => Some(Token::Scalar),
            #[cfg(target_arch = "x86_64")]
            Isa::V3 => pulp::x86::V3::try_new().map(Token::V3),
            #[cfg(target_arch = "x86_64")]
            Isa::V3_512b => pulp::x86::V3::try_new().map(Token::V3_512b),
            #[cfg(target_arch = "x86_64")]
            Isa::V4 => pulp::x86::V4::try_new().map(Token::V4),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon | Isa::NeonNoDotprod => pulp::aarch64::Neon::try_new().map(Token::Neon),
            #[allow(unreachable_patterns)]
            _ => None,
        };
        token.map(|token| EncodePath { isa, token })
    }

    /// The instruction set this path runs.
    pub fn isa(self) -> Isa {
        self.isa
    }

    /// The byte narrowing of this path ([`Narrow`]).
    fn narrow(self) -> Narrow {
        match self.token {
            #[cfg(target_arch = "x86_64")]
            Token::V3(s) | Token::V3_512b(s) => Narrow::V3(s),
            #[cfg(target_arch = "x86_64")]
            Token::V4(s) => Narrow::V4(s),
            _ => Narrow::Portable,
        }
    }

    /// Run `op` on this path (inside the path's `target_feature` context).
    fn run<Op: WithSimd>(self, op: Op) -> Op::Output {
        match self.token {
            Token::Scalar => Simd::vectorize(pulp::Scalar::new(), op),
            #[cfg(target_arch = "x86_64")]
            Token::V3(s) => Simd::vectorize(s, op),
            #[cfg(target_arch = "x86_64")]
            Token::V3_512b(s) => Simd::vectorize(s, As512b(s, op)),
            #[cfg(target_arch = "x86_64")]
            Token::V4(s) => Simd::vectorize(s, op),
            #[cfg(target_arch = "aarch64")]
            Token::Neon(s) => Simd::vectorize(s, op),
        }
    }
}

/// The number of threads [`encode_row_split`] uses for `geom`: `available_parallelism`, but
/// no more than one per [`MIN_WEIGHTS_PER_THREAD`] physical weights.
pub fn default_threads_for(geom: &RowSplitGeom) -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    cpus.min((geom.n.saturating_mul(geom.kp) / MIN_WEIGHTS_PER_THREAD).max(1))
}

/// Encode `src` (`[geom.n, geom.k]`, row-major) with `MAXABS_F16_RECIP_RNE_V1` into the
/// `row-split-k128-v1` payload `out`, on the widest path ([`EncodePath::detect`]) and
/// [`default_threads_for`] threads. Same contract as [`encode_row_split_with`].
pub fn encode_row_split(geom: &RowSplitGeom, src: Source<'_>, out: &mut [u8]) -> Result<(), EncodeError> {
    encode_row_split_with(EncodePath::detect(), default_threads_for(geom), geom, src, out)
}

/// Encode `src` (`[geom.n, geom.k]`, row-major) with `MAXABS_F16_RECIP_RNE_V1` into the
/// `row-split-k128-v1` payload `out` on `path` with `threads` threads (0 counts as 1; never
/// more threads than rows or [`MAX_THREADS`]). The rows are cut into `threads` contiguous
/// blocks; the calling thread encodes the first.
///
/// The result is byte-identical to `geom.encode_into(src, oracle::encode_group, out)`, for every
/// path and thread count:
///
/// - `out.len() != geom.len`: `LengthMismatch`, `out` untouched.
/// - `geom` not the geometry `RowSplitGeom::new(geom.scheme, geom.n, geom.k)` computes:
///   `BadShape`; `src.len() != n * k`: `LengthMismatch`.
/// - A NaN or infinite source value (`NonFiniteSource`, located at its element) or a scale that
///   rounds to binary16 infinity (`ScaleOverflow`, located at the group's first k): the first
///   such `(row, group)` in row-major order is reported.
/// - On every error after the length check, `out` is zero-filled.
pub fn encode_row_split_with(
    path: EncodePath,
    threads: usize,
    geom: &RowSplitGeom,
    src: Source<'_>,
    out: &mut [u8],
) -> Result<(), EncodeError> {
    if out.len() != geom.len {
        return Err(EncodeError::whole(EncodeErrorKind::LengthMismatch));
    }
    let r = encode_checked(path, threads, geom, src, out);
    if r.is_err() {
        out.fill(0);
    }
    r
}

fn encode_checked(
    path: EncodePath,
    threads: usize,
    geom: &RowSplitGeom,
    src: Source<'_>,
    out: &mut [u8],
) -> Result<(), EncodeError> {
    match RowSplitGeom::new(geom.scheme, geom.n, geom.k) {
        Ok(ours) if ours == *geom => {}
        _ => return Err(EncodeError::whole(EncodeErrorKind::BadShape)),
    }
    if src.len() != geom.codes_len() {
        return Err(EncodeError::whole(EncodeErrorKind::LengthMismatch));
    }
    let (n, rcb, gp) = (geom.n, geom.row_code_bytes, geom.gp);
    let (codes, scales) = out.split_at_mut(geom.scale_offset);
    let (codes, gap) = codes.split_at_mut(n * rcb);
    gap.fill(0); // the bytes between the planes; the kernel writes every other byte
    let threads = threads.clamp(1, n.min(MAX_THREADS));
    let stop = AtomicUsize::new(usize::MAX);
    let job = |block: usize, row0: usize, codes: &mut [u8], scales: &mut [u8]| {
        let rows = codes.len() / rcb;
        let r = path.run(RowsOp {
            geom,
            src,
            row0,
            rows,
            codes,
            scales,
            block,
            stop: &stop,
            narrow: path.narrow(),
        });
        if r.is_err() {
            stop.fetch_min(block, Ordering::Relaxed);
        }
        r
    };
    if threads == 1 {
        return job(0, 0, codes, scales);
    }
    let per = n.div_ceil(threads);
    std::thread::scope(|s| {
        let mut blocks = codes
            .chunks_mut(per * rcb)
            .zip(scales.chunks_mut(per * 2 * gp))
            .enumerate();
        let first = blocks.next();
        let handles: Vec<_> = blocks
            .map(|(b, (c, sc))| {
                let job = &job;
                s.spawn(move || job(b, b * per, c, sc))
            })
            .collect();
        let mut result = match first {
            Some((_, (c, sc))) => job(0, 0, c, sc),
            None => Ok(()),
        };
        for h in handles {
            let r = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            if result.is_ok() {
                result = r; // blocks are joined in row order: keep the first error
            }
        }
        result
    })
}

/// Encode rows `row0 .. row0 + rows` into their code-plane and scale-plane byte ranges.
struct RowsOp<'a> {
    geom: &'a RowSplitGeom,
    src: Source<'a>,
    row0: usize,
    rows: usize,
    codes: &'a mut [u8],
    scales: &'a mut [u8],
    block: usize,
    stop: &'a AtomicUsize,
    narrow: Narrow,
}

impl WithSimd for RowsOp<'_> {
    type Output = Result<(), EncodeError>;

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Self::Output {
        const {
            // The packing walks 16- and 32-position runs in whole vectors.
            assert!(S::F32_LANES == S::U32_LANES && S::F32_LANES <= 16 && 16 % S::F32_LANES == 0);
        }
        // One monomorphisation per code width: the chunk packing is then branch-free.
        match self.geom.scheme {
            Grouped::Q4 => encode_rows::<S, 4>(simd, self),
            Grouped::Q5 => encode_rows::<S, 5>(simd, self),
            Grouped::Q6 => encode_rows::<S, 6>(simd, self),
            Grouped::W8 => encode_rows::<S, 8>(simd, self),
        }
    }
}

/// The row loop for code width `B` (the scheme `op.geom.scheme`).
#[inline(always)]
fn encode_rows<S: Simd, const B: u32>(simd: S, op: RowsOp<'_>) -> Result<(), EncodeError> {
    let RowsOp {
        geom,
        src,
        row0,
        rows,
        codes,
        scales,
        block,
        stop,
        narrow,
    } = op;
    let g = geom.scheme;
    let (k, kp, rcb, gp, gs) = (geom.k, geom.kp, geom.row_code_bytes, geom.gp, g.group_size());
    let cb = chunk_bytes(g);
    let mut buf = [0f32; BLOCK];
    // Per group of the current block. Entries past the block's groups stay 0 (amax 0 encodes
    // as scale 0 without a fault) so the scale pass can always run over whole vectors.
    let mut amax = [0u32; MAX_BLOCK_GROUPS];
    let mut scale16 = [0u32; MAX_BLOCK_GROUPS];
    let mut inv = [0f32; MAX_BLOCK_GROUPS];
    for r in 0..rows {
        if stop.load(Ordering::Relaxed) < block {
            // An earlier row block failed; its error wins and this block's output is void.
            return Ok(());
        }
        let row = row0 + r;
        let row_codes = &mut codes[r * rcb..(r + 1) * rcb];
        let row_scales = &mut scales[r * 2 * gp..(r + 1) * 2 * gp];
        // Blocks of up to 8 chunks in three passes: amax per group; the scale step for all the
        // block's groups at once (vectorised across groups); codes and packing per chunk.
        for b0 in (0..kp).step_by(BLOCK) {
            let len = BLOCK.min(kp - b0); // physical positions, a multiple of 128
            let logical = len.min(k - b0); // b0 < kp, hence b0 < k
            let base = row * k + b0;
            let x: &[f32] = match src {
                Source::F32(s) if logical == len => &s[base..base + len],
                _ => {
                    load_block(src, base, logical, &mut buf[..len]);
                    &buf[..len]
                }
            };
            let groups = len / gs;
            for (gi, (a, xs)) in amax.iter_mut().zip(x.chunks_exact(gs)).enumerate() {
                prefetch_lines(src, base + PF_DIST * len + gi * gs, gs);
                *a = group_amax(simd, xs);
            }
            amax[groups..].fill(0);
            block_scales(simd, g, &amax, &mut scale16, &mut inv);
            let g0 = b0 / gs;
            // Faults, first group first: a NaN or infinity, else an overflowing scale.
            let fault = amax[..groups]
                .iter()
                .zip(&scale16)
                .position(|(&a, &s)| a >= INF_BITS || s >= 0x7c00);
            if let Some(gi) = fault {
                let k0 = b0 + gi * gs;
                let (kind, element) = if amax[gi] >= INF_BITS {
                    let xs = &x[gi * gs..(gi + 1) * gs];
                    let i = xs.iter().position(|v| !v.is_finite()).unwrap_or(0);
                    (EncodeErrorKind::NonFiniteSource, k0 + i)
                } else {
                    (EncodeErrorKind::ScaleOverflow, k0)
                };
                return Err(EncodeError {
                    kind,
                    row,
                    group: g0 + gi,
                    element,
                });
            }
            let sc = &mut row_scales[2 * g0..2 * (g0 + groups)];
            for (o, &h) in sc.chunks_exact_mut(2).zip(&scale16) {
                o.copy_from_slice(&(h as u16).to_le_bytes());
            }
            let c0 = b0 / CHUNK;
            let out = &mut row_codes[c0 * cb..(c0 + len / CHUNK) * cb];
            for ((xc, oc), ic) in x
                .chunks_exact(CHUNK)
                .zip(out.chunks_exact_mut(cb))
                .zip(inv.chunks_exact(CHUNK / gs))
            {
                encode_chunk_codes::<S, B>(simd, narrow, xc, ic, oc);
            }
        }
    }
    Ok(())
}

/// How far ahead the amax pass prefetches the f32 source, in blocks: with group `i` of a block
/// it prefetches the lines of group `i` of the block [`PF_DIST`] blocks on (the next block of
/// this row or the start of the next row); see the module docs.
const PF_DIST: usize = 1;

/// Software-prefetch the f32 source elements `next .. next + n` (the three passes over a block
/// are compute, and without it the block's first pass waits on memory): every line of the span
/// ([`crate::prefetch::span`]). A no-op off x86-64 and for the other source types; a prefetch
/// never faults, so `next` may point past the source.
#[inline(always)]
fn prefetch_lines(src: Source<'_>, next: usize, n: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Source::F32(s) = src {
        crate::prefetch::span(s.as_ptr().wrapping_add(next).cast(), 4 * n);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (src, next, n);
}

/// Convert source elements `base .. base + len` to binary32 into `buf[..len]` and zero the rest
/// of `buf` (padding positions encode as code 0 and never raise a group's amax). A value that is
/// not a finite binary32 becomes a NaN, reported by the fault scan at its position.
#[inline(always)]
fn load_block(src: Source<'_>, base: usize, len: usize, buf: &mut [f32]) {
    let (head, tail) = buf.split_at_mut(len);
    match src {
        Source::F32(s) => head.copy_from_slice(&s[base..base + len]),
        Source::Bf16(s) => {
            for (o, &h) in head.iter_mut().zip(&s[base..base + len]) {
                *o = f32::from_bits((h as u32) << 16);
            }
        }
        Source::F16(s) => {
            for (o, &h) in head.iter_mut().zip(&s[base..base + len]) {
                *o = f32::from_bits(f16_to_f32_bits(h));
            }
        }
        Source::F64(s) => {
            for (o, &v) in head.iter_mut().zip(&s[base..base + len]) {
                *o = f64_to_f32_rne_checked(v).unwrap_or(f32::NAN);
            }
        }
    }
    tail.fill(0.0);
}

/// `max(bits & 0x7fff_ffff)` over a group, saturated at `INF_BITS`.
#[inline(always)]
fn group_amax<S: Simd>(simd: S, xs: &[f32]) -> u32 {
    let (vs, tail) = S::as_simd_f32s(xs);
    let mag = simd.splat_u32s(MAG);
    let mut acc = simd.splat_u32s(0);
    for &v in vs {
        acc = simd.max_u32s(acc, simd.and_u32s(simd.transmute_u32s_f32s(v), mag));
    }
    // Clamped to +inf every lane is a non-NaN binary32 whose value order is its bit order, so
    // the float horizontal maximum is the integer one.
    let acc = simd.min_u32s(acc, simd.splat_u32s(INF_BITS));
    let mut amax = simd.reduce_max_f32s(simd.transmute_f32s_u32s(acc)).to_bits();
    for t in tail {
        amax = amax.max((t.to_bits() & MAG).min(INF_BITS));
    }
    amax
}

/// Section 7's scale step for every group of a block at once, one group per lane: from the
/// finite `amax` bits, `scale16` (as `u32`; `>= 0x7c00` means the scale overflows) and
/// `inv = round_f32(1 / scale32)`. Lanes whose amax is not finite produce garbage, which the
/// caller never uses (it reports them first).
///
/// - `raw = amax / qmax`: an IEEE binary32 division per lane.
/// - `round_f16(raw)`, bit-level and branch-free. Normal binary16 range (`raw >= 2^-14`): add
///   `0xfff + bit 13` to the bits (ties to even at bit 13), shift right by 13 and rebias the
///   exponent by `127 - 15`; a carry moves into the exponent, and `raw >= 65520` lands on
///   `>= 0x7c00`. Subnormal range: `raw * 2^24` is exact and below 2^10, so adding 1.5 * 2^23
///   rounds it to the integer count of 2^-24 steps, ties to even (1024 is the smallest normal,
///   0x0400, as it should be).
/// - The rescue: a positive raw rounding to 0 becomes 0x0001; `amax == 0` gives scale 0 and
///   `inv = 0` (codes 0 without a branch).
/// - `scale32`, the exact expansion: `(h << 13) + (112 << 23)` for normal words; for subnormal
///   words `(bits(2^23 | h) - 2^23) * 2^-24`, two exact operations.
/// - `inv = 1 / scale32`: an IEEE binary32 division per lane.
///
/// `simd/tests/encode_parity.rs` checks it against the core's `f32_bits_to_f16_rne` on every
/// binary16 rounding boundary and over random raw scales, through the whole encoder.
#[inline(always)]
fn block_scales<S: Simd>(simd: S, g: Grouped, amax: &[u32], scale16: &mut [u32], inv: &mut [f32]) {
    let (av, _) = S::as_simd_u32s(amax);
    let (hv, _) = S::as_mut_simd_u32s(scale16);
    let (iv, _) = S::as_mut_simd_f32s(inv);
    let u = |v: u32| simd.splat_u32s(v);
    let f = |v: f32| simd.splat_f32s(v);
    let qmax = f(g.qmax() as f32);
    for ((&a, h_out), inv_out) in av.iter().zip(hv).zip(iv) {
        let raw = simd.div_f32s(simd.transmute_f32s_u32s(a), qmax);
        let rb = simd.transmute_u32s_f32s(raw);
        // Normal binary16 range.
        let lsb = simd.and_u32s(simd.wrapping_dyn_shr_u32s(rb, u(13)), u(1));
        let rounded = simd.add_u32s(rb, simd.add_u32s(u(0xfff), lsb));
        let h_norm = simd.sub_u32s(simd.wrapping_dyn_shr_u32s(rounded, u(13)), u(112 << 10));
        // Subnormal binary16 range.
        let t = simd.add_f32s(simd.mul_f32s(raw, f(16_777_216.0)), f(RNE_MAGIC));
        let h_sub = simd.sub_u32s(simd.transmute_u32s_f32s(t), u(RNE_MAGIC_BITS));
        let is_norm = simd.greater_than_or_equal_u32s(rb, u(0x3880_0000)); // raw >= 2^-14
        let h = simd.select_u32s(is_norm, h_norm, h_sub);
        let h = simd.max_u32s(h, u(1)); // 2^-24 underflow rescue
        let zero = simd.equal_u32s(a, u(0));
        let h = simd.select_u32s(zero, u(0), h);
        // scale32 = exact_binary16_to_binary32(scale16).
        let s_norm =
            simd.transmute_f32s_u32s(simd.add_u32s(simd.wrapping_dyn_shl_u32s(h, u(13)), u(112 << 23)));
        let s_sub = simd.mul_f32s(
            simd.sub_f32s(
                simd.transmute_f32s_u32s(simd.or_u32s(h, u(0x4b00_0000))),
                f(8_388_608.0),
            ),
            f(1.0 / 16_777_216.0),
        );
        let s32 = simd.select_f32s(simd.greater_than_or_equal_u32s(h, u(0x0400)), s_norm, s_sub);
        let inv = simd.div_f32s(f(1.0), s32);
        *inv_out = simd.select_f32s(zero, f(0.0), inv);
        *h_out = h;
    }
}

/// `bits(clamp(x * inv, qmin, qmax) + 1.5 * 2^23)` per lane: the low byte is the code's
/// two's-complement word.
#[inline(always)]
fn code_words<S: Simd>(simd: S, x: S::f32s, inv: S::f32s, lo: S::f32s, hi: S::f32s) -> S::u32s {
    let n = simd.mul_f32s(x, inv);
    let c = simd.min_f32s(simd.max_f32s(n, lo), hi);
    simd.transmute_u32s_f32s(simd.add_f32s(c, simd.splat_f32s(RNE_MAGIC)))
}

/// Shift every lane left by `s` bits, or right by `-s`.
#[inline(always)]
fn shift<S: Simd>(simd: S, v: S::u32s, s: i32) -> S::u32s {
    if s >= 0 {
        simd.wrapping_dyn_shl_u32s(v, simd.splat_u32s(s as u32))
    } else {
        simd.wrapping_dyn_shr_u32s(v, simd.splat_u32s((-s) as u32))
    }
}

/// How [`narrow`] turns `u32` words into their low bytes on a path. The portable loop is left to
/// LLVM, which scalarised it into one `vpinsrb`/`vpextrb` per byte inside the AVX2 and AVX-512
/// contexts (perf on the Xeon: most of the encoder's time), so the x86 paths narrow with
/// explicit instructions: AVX-512 `vpmovdb` (truncation), AVX2 a mask, two unsigned-saturating
/// packs (exact on values <= 255) and a lane permutation.
#[derive(Clone, Copy, Debug)]
enum Narrow {
    Portable,
    #[cfg(target_arch = "x86_64")]
    V3(pulp::x86::V3),
    #[cfg(target_arch = "x86_64")]
    V4(pulp::x86::V4),
}

/// Narrow `u32` words to their low bytes (`out.len() == words.len()`, a multiple of 16).
#[inline(always)]
fn narrow(nar: Narrow, out: &mut [u8], words: &[u32]) {
    for (o, w) in out.chunks_exact_mut(16).zip(words.chunks_exact(16)) {
        let (Ok(o), Ok(w)) = (<&mut [u8; 16]>::try_from(o), <&[u32; 16]>::try_from(w)) else {
            continue;
        };
        match nar {
            #[cfg(target_arch = "x86_64")]
            Narrow::V4(s) => {
                let v: core::arch::x86_64::__m512i = pulp::cast(*w);
                *o = pulp::cast(s.avx512f._mm512_cvtepi32_epi8(v));
            }
            #[cfg(target_arch = "x86_64")]
            Narrow::V3(s) => {
                let (avx, avx2) = (s.avx, s.avx2);
                let m = avx._mm256_set1_epi32(0xff);
                let v: [core::arch::x86_64::__m256i; 2] = pulp::cast(*w);
                // u16 [w0..4 w8..12 | w4..8 w12..16], then bytes of both halves twice over.
                let p =
                    avx2._mm256_packus_epi32(avx2._mm256_and_si256(v[0], m), avx2._mm256_and_si256(v[1], m));
                let p = avx2._mm256_packus_epi16(p, p);
                // 32-bit groups 0, 4, 1, 5: w0..4, w4..8, w8..12, w12..16.
                let p = avx2._mm256_permutevar8x32_epi32(p, avx._mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
                let b: [[u8; 16]; 2] = pulp::cast(p);
                *o = b[0];
            }
            Narrow::Portable => {
                for i in 0..16 {
                    o[i] = w[i] as u8;
                }
            }
        }
    }
}

/// Codes of one 128-position chunk `x` (padding already zero) of code width `B` into its
/// `16 * B` bytes, given the reciprocal scale of each of its `128 / G` groups.
#[inline(always)]
fn encode_chunk_codes<S: Simd, const B: u32>(simd: S, nar: Narrow, x: &[f32], inv: &[f32], out: &mut [u8]) {
    let lanes = S::F32_LANES;
    let (qmin, qmax) = match B {
        4 => (-8.0, 7.0),
        5 => (-16.0, 15.0),
        6 => (-32.0, 31.0),
        _ => (-127.0, 127.0),
    };
    let (lo, hi) = (simd.splat_f32s(qmin), simd.splat_f32s(qmax));
    let (xv, _) = S::as_simd_f32s(x);
    if B == 8 {
        // W8: four groups of 32; byte i is the low byte of word i.
        let mut w = [0u32; CHUNK];
        let (wv, _) = S::as_mut_simd_u32s(&mut w);
        let per = 32 / lanes;
        for (i, (o, &xi)) in wv.iter_mut().zip(xv).enumerate() {
            *o = code_words(simd, xi, simd.splat_f32s(inv[i / per]), lo, hi);
        }
        narrow(nar, out, &w);
        return;
    }
    // Q4/Q5/Q6: group a = positions 0..64, group b = 64..128. Vector v of each holds positions
    // v * lanes .. (v + 1) * lanes of its group.
    let (xa, xb) = xv.split_at(64 / lanes);
    let (inv_a, inv_b) = (simd.splat_f32s(inv[0]), simd.splat_f32s(inv[1]));
    let mut nib = [0u32; 64];
    let (nv, _) = S::as_mut_simd_u32s(&mut nib);
    let zero = simd.splat_u32s(0);
    let mut high = [zero; 32];
    for (v, ((o, &x_a), &x_b)) in nv.iter_mut().zip(xa).zip(xb).enumerate() {
        let a = code_words(simd, x_a, inv_a, lo, hi);
        let b = code_words(simd, x_b, inv_b, lo, hi);
        let m = simd.splat_u32s(0x0f);
        // Nibble plane: byte j = (u(j) & 15) | (u(j + 64) & 15) << 4.
        *o = simd.or_u32s(simd.and_u32s(a, m), shift(simd, simd.and_u32s(b, m), 4));
        let p = v * lanes; // first position of this vector within its group
        if B == 5 {
            // Bit t of byte 64 + j is bit 4 of u(16t + j): a gives t = p / 16, b gives t + 4.
            let (t, j) = ((p / 16) as i32, (p % 16) / lanes);
            let bit4 = simd.splat_u32s(0x10);
            let both = simd.or_u32s(
                shift(simd, simd.and_u32s(a, bit4), t - 4),
                shift(simd, simd.and_u32s(b, bit4), t),
            );
            high[j] = simd.or_u32s(high[j], both);
        } else if B == 6 {
            // Bits 2q, 2q + 1 of byte 64 + j are bits 4, 5 of u(32q + j): a gives q = p / 32,
            // b gives q + 2.
            let (q, j) = ((p / 32) as i32, (p % 32) / lanes);
            let bits45 = simd.splat_u32s(0x30);
            let both = simd.or_u32s(
                shift(simd, simd.and_u32s(a, bits45), 2 * q - 4),
                shift(simd, simd.and_u32s(b, bits45), 2 * q),
            );
            high[j] = simd.or_u32s(high[j], both);
        }
    }
    narrow(nar, &mut out[..64], &nib);
    if B == 5 || B == 6 {
        let hb = if B == 5 { 16 } else { 32 };
        let mut h = [0u32; 32];
        let (hv, _) = S::as_mut_simd_u32s(&mut h[..hb]);
        for (o, &v) in hv.iter_mut().zip(&high) {
            *o = v;
        }
        narrow(nar, &mut out[64..64 + hb], &h[..hb]);
    }
}
