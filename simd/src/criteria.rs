//! The named output criteria of the two GEMV profiles, as functions a test (or a caller's own
//! qualification run) evaluates against the reference `y_ref = sum_k w_k * x_k` computed in f64
//! from the exactly decoded weights (`TensorDesc::decode_f32`).
//!
//! Both assume that no product or partial sum overflows or falls into the binary32 subnormal
//! range (the bounds are relative; underflow adds an absolute error the bound does not model).

use crate::I8_BLOCK;

/// Unit roundoff of binary32, `2^-24`.
pub const U32: f64 = 1.0 / 16_777_216.0;

/// The constant `c` of the `F32` criterion `|y - y_ref| <= C_F32 * K * 2^-24 * sum_k |w_k x_k|`.
///
/// Derivation: every term `w_k x_k` reaches `y` through at most one rounded product (the
/// pre-weight times x; FMA or not), at most `K - 1` rounded additions (a sum of K terms in any
/// fixed tree: additions with a zero operand are exact), and at most one finishing operation
/// (NVFP4 `/ d_w`, FP8 `* s_row`); `y_ref` itself uses the rounded weight (one more rounding for
/// NVFP4/FP8). So `|y - y_ref| <= gamma_(K+2) * sum |w_k x_k|` with
/// `gamma_n = n u / (1 - n u)`, and `(K + 2) / (1 - (K + 2) u) <= 4 K` for every `K >= 1`.
pub const C_F32: f64 = 4.0;

/// The constant of the rounding part of the `I8` criterion (see [`i8_bound`]).
///
/// Derivation: each sub-block term `s * d_b * I` (with `I` an exact integer dot) goes through one
/// rounded product `s * d_b`, one rounded multiply-add into an accumulator, at most `K - 1`
/// rounded additions, and the finishing division of NVFP4 (plus the rounded NVFP4 weight in
/// `y_ref`): at most `K + 3` roundings, and `|s d_b I| <= sum_(k in block) |w_k| (|x_k| + step_k)`.
/// `(K + 3) / (1 - (K + 3) u) <= 4 K` for every `K >= 1`.
pub const C_I8: f64 = 4.0;

/// Relative slack on the activation step `amax_b / 254` in the I8 criterion: the step
/// `d_b = round(amax_b / 127)` and the scaled value `round(x * round(127 / amax_b))` are each off
/// by a few ulps, which moves `|x_k - d_b xq_k|` above `amax_b / 254` by at most
/// `762 * 2^-24 * amax_b / 254 < 2^-14 * amax_b / 254`. The constant is `2^-13`.
pub const I8_STEP_SLACK: f64 = 1.0 / 8192.0;

/// `y_ref = sum_k w_k x_k` in f64 (exact products of binary32 values; f64 sums).
pub fn reference_dot(w: &[f32], x: &[f32]) -> f64 {
    w.iter().zip(x).map(|(&a, &b)| a as f64 * b as f64).sum()
}

/// The `F32` criterion's bound: `C_F32 * K * 2^-24 * sum_k |w_k x_k|`.
pub fn f32_bound(w: &[f32], x: &[f32]) -> f64 {
    let s: f64 = w.iter().zip(x).map(|(&a, &b)| (a as f64 * b as f64).abs()).sum();
    C_F32 * w.len() as f64 * U32 * s
}

/// The `I8` criterion's bound for one output:
///
/// `(1 + I8_STEP_SLACK) * sum_k |w_k| * amax_b(k) / 254
///   + C_I8 * K * 2^-24 * sum_k |w_k| * (|x_k| + amax_b(k) / 254)`
///
/// where `amax_b(k)` is the largest `|x|` of the [`I8_BLOCK`]-position activation block holding
/// k. The first term is the activation rounding (each `x_k` is replaced by `d_b xq_k`, off by at
/// most half a step, `amax_b / 254`); the second the float rounding of the block terms.
pub fn i8_bound(w: &[f32], x: &[f32]) -> f64 {
    let mut act = 0f64;
    let mut rnd = 0f64;
    for (wb, xb) in w.chunks(I8_BLOCK).zip(x.chunks(I8_BLOCK)) {
        let half_step = xb.iter().fold(0f32, |m, v| m.max(v.abs())) as f64 / 254.0;
        for (&a, &b) in wb.iter().zip(xb) {
            let a = (a as f64).abs();
            act += a * half_step;
            rnd += a * ((b as f64).abs() + half_step);
        }
    }
    (1.0 + I8_STEP_SLACK) * act + C_I8 * w.len() as f64 * U32 * rnd
}
