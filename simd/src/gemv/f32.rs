//! The `F32` profile: f32 activations, f32 products and f32 sums.
//!
//! Per row, each 128-position chunk is decoded to its exact pre-weights (see
//! [`crate::weights`]) and multiplied into four `S::f32s` accumulators per batch row with
//! `mul_add_e_f32s` (fused where the ISA has FMA; mul + add on `Scalar` — either way the
//! criterion holds, see [`crate::C_F32`]). The four accumulators are summed in a fixed order,
//! reduced with pulp's fixed pairwise tree and finished with the row's [`Post`](crate::weights::Post) step (NVFP4
//! `/ d_w`, FP8 `* s_row`). Written once over `pulp::Simd`: 1 lane (`Scalar`), 4 (NEON),
//! 8 (`V3`) and 16 (`V4`, `V3_512b`).

use pulp::{Simd, WithSimd};

use crate::weights::{Weights, CHUNK};

pub(crate) struct GemvF32Op<'a, 'b, 'c> {
    pub(crate) w: Weights<'a>,
    /// `nb` activation rows, each zero-padded to `chunks * 128`.
    pub(crate) xs: &'a [f32],
    pub(crate) nb: usize,
    pub(crate) r0: usize,
    pub(crate) r1: usize,
    /// `nb` output slices of `r1 - r0` values.
    pub(crate) ys: &'b mut [&'c mut [f32]],
}

impl WithSimd for GemvF32Op<'_, '_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        by_batch!(self.nb, rows[S](simd, self))
    }
}

/// The generic kernel for `min(nb, NB)` batch rows (`NB` constant: the accumulators are
/// registers where the ISA has enough).
#[inline(always)]
fn rows<S: Simd, const NB: usize>(simd: S, op: GemvF32Op<'_, '_, '_>) {
    let GemvF32Op {
        w,
        xs,
        nb,
        r0,
        r1,
        ys,
    } = op;
    let nb = nb.min(NB);
    let chunks = w.chunks();
    let kc = chunks * CHUNK;
    let mut buf = [0f32; CHUNK];
    let zero = simd.splat_f32s(0.0);
    for row in r0..r1 {
        let mut acc = [[zero; 4]; NB];
        for c in 0..chunks {
            w.pre_chunk(row, c, &mut buf);
            let (wv, _) = S::as_simd_f32s(&buf);
            for (b, a) in acc.iter_mut().enumerate().take(nb) {
                let (xv, _) = S::as_simd_f32s(&xs[b * kc + CHUNK * c..b * kc + CHUNK * (c + 1)]);
                for (w4, x4) in wv.chunks_exact(4).zip(xv.chunks_exact(4)) {
                    a[0] = simd.mul_add_e_f32s(w4[0], x4[0], a[0]);
                    a[1] = simd.mul_add_e_f32s(w4[1], x4[1], a[1]);
                    a[2] = simd.mul_add_e_f32s(w4[2], x4[2], a[2]);
                    a[3] = simd.mul_add_e_f32s(w4[3], x4[3], a[3]);
                }
            }
        }
        let post = w.post(row);
        for (b, a) in acc.iter().enumerate().take(nb) {
            let s = simd.add_f32s(simd.add_f32s(a[0], a[1]), simd.add_f32s(a[2], a[3]));
            ys[b][row - r0] = post.apply(simd.reduce_sum_f32s(s));
        }
    }
}
