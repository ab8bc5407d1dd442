//! Zero-copy access to the registered layouts' bytes, one 128-position chunk at a time.
//!
//! [`Weights`] borrows a payload through the core's geometry (which checks the exact length) and
//! decodes a chunk of one row straight from the layout bytes: no load-time repacking. Every
//! decoder here is plain fixed-length Rust marked `#[inline(always)]`: it is compiled inside the
//! `target_feature` context of the instruction set the call dispatched to (pulp's `vectorize`),
//! where LLVM turns the fixed-length loops into that ISA's vector code. The same code run in the
//! `Scalar` context is the scalar twin. Only exact operations appear (integer work, exact
//! integer-to-float conversions, exact products), so the result does not depend on the ISA.
//!
//! A chunk is 128 logical positions `128c .. 128c + 127` of a row.
//!
//! - *Pre-weights* ([`Weights::pre_chunk`]): the exact binary32 value of the part of the
//!   reconstruction that is a product of words — grouped `s * q` (section 6.2, exact, so this is
//!   the weight itself), NVFP4 `e2m1 * e4m3fn` (section 3.3, exact), FP8 the E4M3FN code value,
//!   BF16/FP32 the word's value. The per-row [`Post`] step finishes the weight: NVFP4 divides by
//!   `d_w`, FP8 multiplies by the BF16 row scale (one rounding each, as in the spec).
//! - *Integer codes* ([`Weights::int_chunk`], grouped and NVFP4 only): the signed code q
//!   (grouped) or `2 * e2m1` (NVFP4, an integer in `[-12, 12]`) as i8, with the scale of each
//!   16-position sub-block from [`Weights::sub_scales`].

use ninfer_core::layout::{Geometry, TensorDesc};
use ninfer_core::registry::{Format, Grouped};
use ninfer_core::word::bf16::bf16_to_f32_exact;
use ninfer_core::word::f16::f16_to_f32_exact;

use crate::error::KernelError;

/// Positions per chunk.
pub(crate) const CHUNK: usize = 128;

/// How a row's pre-weights become weights (and a dot product of pre-weights a dot product of
/// weights).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Post {
    /// Pre-weights are the weights.
    None,
    /// Divide by the NVFP4 divisor `d_w` (section 3.3).
    Div(f32),
    /// Multiply by the FP8 BF16 row multiplier (section 3.4).
    Mul(f32),
}

impl Post {
    #[inline(always)]
    pub(crate) fn apply(self, v: f32) -> f32 {
        match self {
            Post::None => v,
            Post::Div(d) => v / d,
            Post::Mul(s) => v * s,
        }
    }
}

/// A borrowed payload of one of the registered layouts, viewed as rows of K positions.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Weights<'a> {
    Grouped {
        g: Grouped,
        n: usize,
        k: usize,
        codes: &'a [u8],
        scales: &'a [u8],
        rcb: usize,
        gp: usize,
    },
    Nvfp4 {
        n: usize,
        k: usize,
        row_bytes: usize,
        codes: &'a [u8],
        scales: &'a [u8],
        nkt: usize,
        sb: usize,
        d: f32,
    },
    Fp8 {
        n: usize,
        k: usize,
        codes: &'a [u8],
        scales: &'a [u8],
    },
    Bf16 {
        n: usize,
        k: usize,
        words: &'a [u8],
    },
    Fp32 {
        n: usize,
        k: usize,
        words: &'a [u8],
    },
}

impl<'a> Weights<'a> {
    /// Borrow `payload` as described by `desc`. Matrix layouts give `[N, K]`; contiguous tensors
    /// of rank >= 1 give rows of the first dimension (K = product of the others). The payload
    /// length is checked by the core geometry. I32 is refused (no f32 meaning).
    pub(crate) fn new(desc: &TensorDesc, payload: &'a [u8]) -> Result<Weights<'a>, KernelError> {
        Ok(match desc.geometry() {
            Geometry::RowSplit(geo) => {
                let t = geo.tensor(payload)?;
                Weights::Grouped {
                    g: geo.scheme,
                    n: geo.n,
                    k: geo.k,
                    codes: t.code_plane(),
                    scales: t.scale_plane(),
                    rcb: geo.row_code_bytes,
                    gp: geo.gp,
                }
            }
            Geometry::Blockscale(geo) => {
                let t = geo.tensor(payload)?;
                Weights::Nvfp4 {
                    n: geo.n,
                    k: geo.k,
                    row_bytes: geo.kp / 2,
                    codes: t.code_plane(),
                    scales: t.scale_plane(),
                    nkt: geo.nkt,
                    sb: geo.sb,
                    d: f32::from_bits(t.divisor_bits()),
                }
            }
            Geometry::RowScale(geo) => {
                let t = geo.tensor(payload)?;
                Weights::Fp8 {
                    n: geo.n,
                    k: geo.k,
                    codes: t.code_plane(),
                    scales: t.scale_plane(),
                }
            }
            Geometry::Contiguous(geo) => {
                geo.validate_layout(payload)?;
                if geo.rank == 0 {
                    return Err(KernelError::NotAMatrix { rank: 0 });
                }
                match desc.format() {
                    Format::Bf16 => Weights::Bf16 {
                        n: geo.rows,
                        k: geo.row_len,
                        words: payload,
                    },
                    Format::Fp32 => Weights::Fp32 {
                        n: geo.rows,
                        k: geo.row_len,
                        words: payload,
                    },
                    _ => {
                        return Err(KernelError::Layout(
                            ninfer_core::layout::LayoutError::UnsupportedPair,
                        ))
                    }
                }
            }
        })
    }

    pub(crate) const fn rows(&self) -> usize {
        match *self {
            Weights::Grouped { n, .. }
            | Weights::Nvfp4 { n, .. }
            | Weights::Fp8 { n, .. }
            | Weights::Bf16 { n, .. }
            | Weights::Fp32 { n, .. } => n,
        }
    }

    pub(crate) const fn k(&self) -> usize {
        match *self {
            Weights::Grouped { k, .. }
            | Weights::Nvfp4 { k, .. }
            | Weights::Fp8 { k, .. }
            | Weights::Bf16 { k, .. }
            | Weights::Fp32 { k, .. } => k,
        }
    }

    /// Chunks per row: `ceil(K / 128)`.
    pub(crate) const fn chunks(&self) -> usize {
        self.k().div_ceil(CHUNK)
    }

    /// The per-row finishing step.
    #[inline(always)]
    pub(crate) fn post(&self, row: usize) -> Post {
        match *self {
            Weights::Nvfp4 { d, .. } => Post::Div(d),
            Weights::Fp8 { scales, .. } => Post::Mul(bf16_to_f32_exact(u16::from_le_bytes([
                scales[2 * row],
                scales[2 * row + 1],
            ]))),
            _ => Post::None,
        }
    }

    /// Pre-weights of chunk `c` of `row` into `out`. Positions at or beyond K are zero for the
    /// FP8 and contiguous layouts (nothing is read past the row) and hold the layout's padding
    /// decode (code 0, so zero for a valid payload) for the row-split and NVFP4 layouts.
    #[inline(always)]
    pub(crate) fn pre_chunk(&self, row: usize, c: usize, out: &mut [f32; CHUNK]) {
        match *self {
            Weights::Grouped {
                g,
                codes,
                scales,
                rcb,
                gp,
                ..
            } => {
                let cb = 16 * g.bits() as usize;
                let at = row * rcb + c * cb;
                let mut q = [0i8; CHUNK];
                grouped_codes(g, &codes[at..at + cb], &mut q);
                let gs = g.group_size();
                let s0 = 2 * (row * gp + c * (CHUNK / gs));
                for (grp, (o, q)) in out.chunks_exact_mut(gs).zip(q.chunks_exact(gs)).enumerate() {
                    let s = f16_to_f32_exact(u16::from_le_bytes([
                        scales[s0 + 2 * grp],
                        scales[s0 + 2 * grp + 1],
                    ]));
                    for (o, &q) in o.iter_mut().zip(q) {
                        *o = s * q as f32;
                    }
                }
            }
            Weights::Nvfp4 {
                row_bytes,
                codes,
                scales,
                nkt,
                sb,
                ..
            } => {
                let s = nvfp4_sub_scales(scales, row, c, nkt, sb);
                let start = row * row_bytes + 64 * c;
                let len = (row_bytes - 64 * c).min(64);
                let mut bytes = [0u8; 64];
                bytes[..len].copy_from_slice(&codes[start..start + len]);
                for (sub, o) in out.chunks_exact_mut(16).enumerate() {
                    let b = &bytes[8 * sub..8 * sub + 8];
                    for (j, o) in o.iter_mut().enumerate() {
                        let w = (b[j / 2] >> (4 * (j % 2))) & 0x0f;
                        *o = e2m1_value(w) * s[sub];
                    }
                }
            }
            Weights::Fp8 { k, codes, .. } => {
                let (start, len) = (row * k + CHUNK * c, (k - CHUNK * c).min(CHUNK));
                let mut bytes = [0u8; CHUNK];
                bytes[..len].copy_from_slice(&codes[start..start + len]);
                for (o, &b) in out.iter_mut().zip(&bytes) {
                    *o = e4m3fn_value(b);
                }
            }
            Weights::Bf16 { k, words, .. } => {
                let (start, len) = (row * k + CHUNK * c, (k - CHUNK * c).min(CHUNK));
                let mut w = [0u8; 2 * CHUNK];
                w[..2 * len].copy_from_slice(&words[2 * start..2 * (start + len)]);
                for (o, b) in out.iter_mut().zip(w.chunks_exact(2)) {
                    *o = f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16);
                }
            }
            Weights::Fp32 { k, words, .. } => {
                let (start, len) = (row * k + CHUNK * c, (k - CHUNK * c).min(CHUNK));
                let mut w = [0u8; 4 * CHUNK];
                w[..4 * len].copy_from_slice(&words[4 * start..4 * (start + len)]);
                for (o, b) in out.iter_mut().zip(w.chunks_exact(4)) {
                    *o = f32::from_bits(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                }
            }
        }
    }

    /// Integer codes of chunk `c` of `row` (grouped: q; NVFP4: `2 * e2m1`). Other formats leave
    /// `out` untouched (the I8 profile is not whitelisted for them).
    #[inline(always)]
    pub(crate) fn int_chunk(&self, row: usize, c: usize, out: &mut [i8; CHUNK]) {
        match *self {
            Weights::Grouped { g, codes, rcb, .. } => {
                let cb = 16 * g.bits() as usize;
                let at = row * rcb + c * cb;
                grouped_codes(g, &codes[at..at + cb], out);
            }
            Weights::Nvfp4 { row_bytes, codes, .. } => {
                let start = row * row_bytes + 64 * c;
                let len = (row_bytes - 64 * c).min(64);
                let mut bytes = [0u8; 64];
                bytes[..len].copy_from_slice(&codes[start..start + len]);
                for (o, &b) in out.chunks_exact_mut(2).zip(&bytes) {
                    o[0] = e2m1_twice(b & 0x0f);
                    o[1] = e2m1_twice(b >> 4);
                }
            }
            _ => {}
        }
    }

    /// The scale of each 16-position sub-block of chunk `c` (grouped: the binary16 group scale;
    /// NVFP4: the E4M3FN block scale), exact binary32.
    #[inline(always)]
    pub(crate) fn sub_scales(&self, row: usize, c: usize) -> [f32; 8] {
        match *self {
            Weights::Grouped { g, scales, gp, .. } => {
                // 2 (Q4/Q5/Q6) or 4 (W8) groups per chunk: convert each scale once.
                let per = CHUNK / g.group_size();
                let s0 = 2 * (row * gp + c * per);
                let mut gs = [0f32; 4];
                for (grp, v) in gs.iter_mut().enumerate().take(per) {
                    *v = f16_to_f32_exact(u16::from_le_bytes([
                        scales[s0 + 2 * grp],
                        scales[s0 + 2 * grp + 1],
                    ]));
                }
                core::array::from_fn(|i| gs[i * per / 8])
            }
            Weights::Nvfp4 { scales, nkt, sb, .. } => nvfp4_sub_scales(scales, row, c, nkt, sb),
            _ => [0.0; 8],
        }
    }
}

/// The E4M3FN block scales of the 8 sub-blocks of chunk `c` (zero beyond the physical `Sb`).
#[inline(always)]
fn nvfp4_sub_scales(scales: &[u8], row: usize, c: usize, nkt: usize, sb: usize) -> [f32; 8] {
    let mut s = [0f32; 8];
    for (i, s) in s.iter_mut().enumerate() {
        let kb = 8 * c + i;
        if kb < sb {
            let at = ninfer_core::layout::blockscale::scale_index(row, kb, nkt);
            *s = e4m3fn_value(scales[at]);
        }
    }
    s
}

/// Signed codes of one row-split chunk in logical position order (layouts.md, split-half
/// order): each 64-position half of the nibble plane is one mask (`& 15`) or one shift (`>> 4`);
/// Q5/Q6 add their high-plane bits per run of 16/32 positions with a constant shift; the sign
/// extension `(u ^ 2^(b-1)) - 2^(b-1)` is lane-local.
#[inline(always)]
pub(crate) fn grouped_codes(g: Grouped, chunk: &[u8], q: &mut [i8; CHUNK]) {
    match g {
        Grouped::W8 => {
            for (q, &b) in q.iter_mut().zip(&chunk[..CHUNK]) {
                *q = b as i8;
            }
        }
        Grouped::Q4 => {
            let nib: &[u8; 64] = chunk[..64].try_into().unwrap_or(&[0; 64]);
            let (lo, hi) = q.split_at_mut(64);
            for ((l, h), &b) in lo.iter_mut().zip(hi.iter_mut()).zip(nib) {
                *l = (((b & 15) ^ 8) as i8).wrapping_sub(8);
                *h = (((b >> 4) ^ 8) as i8).wrapping_sub(8);
            }
        }
        Grouped::Q5 => {
            let nib: &[u8; 64] = chunk[..64].try_into().unwrap_or(&[0; 64]);
            let high: &[u8; 16] = chunk[64..80].try_into().unwrap_or(&[0; 16]);
            for (t, run) in q.chunks_exact_mut(16).enumerate() {
                let (half, base) = (t / 4, 16 * (t % 4));
                for (j, o) in run.iter_mut().enumerate() {
                    let lo = (nib[base + j] >> (4 * half)) & 15;
                    let hb = (high[j] >> t) & 1;
                    *o = ((lo | (hb << 4)) ^ 16) as i8 - 16;
                }
            }
        }
        Grouped::Q6 => {
            let nib: &[u8; 64] = chunk[..64].try_into().unwrap_or(&[0; 64]);
            let high: &[u8; 32] = chunk[64..96].try_into().unwrap_or(&[0; 32]);
            for (p, run) in q.chunks_exact_mut(32).enumerate() {
                let (half, base) = (p / 2, 32 * (p % 2));
                for (j, o) in run.iter_mut().enumerate() {
                    let lo = (nib[base + j] >> (4 * half)) & 15;
                    let hb = (high[j] >> (2 * p)) & 3;
                    *o = ((lo | (hb << 4)) ^ 32) as i8 - 32;
                }
            }
        }
    }
}

/// binary16 bits to the exact binary32 value, branch-free so that a loop of it vectorises:
/// `(h & 0x7fff) << 13` read as binary32 is the magnitude times 2^-112 (binary16 subnormals land
/// on binary32 subnormals), multiplying by 2^112 is exact; infinities and NaNs (exponent 31)
/// take the all-ones exponent instead, keeping the payload. Equal to
/// `ninfer_core::word::f16::f16_to_f32_exact` for every non-NaN word (a NaN stays a NaN).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn f16_to_f32_branchless(h: u16) -> f32 {
    let h = h as u32;
    let mag = (h & 0x7fff) << 13;
    let scaled = (f32::from_bits(mag) * f32::from_bits(0x7780_0000)).to_bits(); // 2^112
    let bits = if h & 0x7c00 == 0x7c00 {
        mag | 0x7f80_0000
    } else {
        scaled
    };
    f32::from_bits(bits | ((h & 0x8000) << 16))
}

/// The E2M1 value of a 4-bit word (section 3.3), computed from its bits so that it vectorises
/// (selects, no table): the normal words (`w & 6 != 0`) are `(w & 7) << 22` with the exponent
/// rebased by 126, the subnormal word 1 is 0.5 and 0 is 0; the sign is bit 3. No floating-point
/// operation is involved, so no subnormal operand can reach the FPU (on x86 a subnormal operand
/// of a vector multiply costs a microcode assist; an earlier `bits * 2^126` formulation did that
/// for word 1 and ran NVFP4 dequantize at 0.7 G weights/s).
#[inline(always)]
pub(crate) fn e2m1_value(w: u8) -> f32 {
    let w = w as u32;
    let m = w & 7;
    let mag = if m >= 2 {
        (m << 22) + (126 << 23)
    } else if m == 1 {
        0x3f00_0000 // 0.5
    } else {
        0
    };
    f32::from_bits(((w & 8) << 28) | mag)
}

/// `2 * e2m1(w)` as an integer in [-12, 12].
#[inline(always)]
pub(crate) fn e2m1_twice(w: u8) -> i8 {
    const T: [i8; 8] = [0, 1, 2, 3, 4, 6, 8, 12];
    let m = T[(w & 7) as usize];
    if w & 8 != 0 {
        -m
    } else {
        m
    }
}

/// The E4M3FN value of a byte (section 3.3), from its bits, without a subnormal operand ever
/// reaching the FPU (see [`e2m1_value`]): a normal word (exponent field `e != 0`) is
/// `(w & 0x7f) << 20` with the exponent rebased by 120; a subnormal word is `m * 2^-9` (an exact
/// product of normal numbers, `m` its 3-bit mantissa); the sign is bit 7. The NaN words 0x7f /
/// 0xff give the quiet NaN of the core table.
#[inline(always)]
pub(crate) fn e4m3fn_value(w: u8) -> f32 {
    let w = w as u32;
    let sign = (w & 0x80) << 24;
    let mag = if w & 0x78 != 0 {
        f32::from_bits(((w & 0x7f) << 20) + (120 << 23))
    } else {
        (w & 7) as f32 * f32::from_bits(0x3b00_0000) // 2^-9
    };
    if w & 0x7f == 0x7f {
        f32::from_bits(sign | 0x7fc0_0000)
    } else {
        f32::from_bits(mag.to_bits() | sign)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_branchless_equals_the_core_expansion_for_all_65536_words() {
        for h in 0..=u16::MAX {
            let (a, b) = (f16_to_f32_branchless(h), f16_to_f32_exact(h));
            if b.is_nan() {
                assert!(a.is_nan(), "{h:#06x}");
            } else {
                assert_eq!(a.to_bits(), b.to_bits(), "{h:#06x}");
            }
        }
    }

    #[test]
    fn small_float_words_equal_the_core_tables_bit_for_bit() {
        use ninfer_core::tables::{E2M1_TO_F32_BITS, E4M3FN_TO_F32_BITS};
        for w in 0..16u8 {
            assert_eq!(
                e2m1_value(w).to_bits(),
                E2M1_TO_F32_BITS[w as usize],
                "E2M1 {w:#x}"
            );
            assert_eq!(e2m1_twice(w) as f32, 2.0 * e2m1_value(w), "E2M1 {w:#x}");
        }
        for w in 0..=255u8 {
            assert_eq!(
                e4m3fn_value(w).to_bits(),
                E4M3FN_TO_F32_BITS[w as usize],
                "E4M3FN {w:#04x}"
            );
        }
    }
}
