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

    /// The row on an x86 token with AVX2: a register-decode fast path where one exists.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn row_v3(_s: pulp::x86::V3, w: &Weights<'_>, row: usize, out: &mut [Self]) {
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
    fn row_v3(s: pulp::x86::V3, w: &Weights<'_>, row: usize, out: &mut [f32]) {
        match w {
            Weights::Nvfp4 { .. } => crate::gemv::nvfp4x86::dequant_row_v3(s, w, row, out),
            Weights::Fp8 { .. } => crate::gemv::fp8x86::dequant_row_fast_v3(s, w, row, out),
            Weights::Grouped { .. } => crate::gemv::f32x86::dequant_row_v3(s, w, row, out),
            _ => row_f32(w, row, out),
        }
    }
}

impl OutWord for u16 {
    #[inline(always)]
    fn row(w: &Weights<'_>, row: usize, out: &mut [u16]) {
        row_bf16(w, row, out)
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
pub(crate) struct DequantV3Op<'a, 'b, T>(pub(crate) pulp::x86::V3, pub(crate) DequantOp<'a, 'b, T>);

#[cfg(target_arch = "x86_64")]
impl<T: OutWord> WithSimd for DequantV3Op<'_, '_, T> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) {
        let DequantV3Op(s, op) = self;
        let k = op.w.k();
        if k == 0 {
            return;
        }
        for (j, o) in op.out.chunks_exact_mut(k).enumerate() {
            T::row_v3(s, &op.w, op.sel.src(op.i0 + j), o);
        }
    }
}
