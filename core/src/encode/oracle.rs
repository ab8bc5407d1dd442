//! The MAXABS_F16_RECIP_RNE_V1 oracle (section 7), line by line, in bit-level arithmetic.
//!
//! Every binary32 operation goes through [`crate::soft`] (RNE, subnormals, no flush-to-zero) and
//! the binary16 rounding through [`crate::word::f16::f32_bits_to_f16_rne`], so the result does not
//! depend on the host FPU. Code selection multiplies by the reciprocal; it never divides.

use super::GroupFault;
use crate::registry::Grouped;
use crate::soft::{f32_abs_bits, f32_div_rne, f32_is_finite_bits, f32_mul_rne, f32_round_ties_even_to_i32};
use crate::word::f16::{f16_is_finite, f16_to_f32_bits, f32_bits_to_f16_rne};

const ONE: u32 = 0x3f80_0000; // binary32(1.0)

/// Encode one logical group `x` (1..=G finite binary32 values) into `codes` (same length) and
/// return the binary16 scale word.
pub fn encode_group(g: Grouped, x: &[f32], codes: &mut [i8]) -> Result<u16, GroupFault> {
    if x.is_empty() || x.len() > g.group_size() || codes.len() != x.len() {
        return Err(GroupFault::Length);
    }
    // Section 7: NaN and infinity are never quantized silently.
    if let Some(i) = x.iter().position(|v| !f32_is_finite_bits(v.to_bits())) {
        return Err(GroupFault::NonFinite(i));
    }
    // amax = max_i(abs(x[i])); for non-negative binary32 the bit order is the value order.
    let amax = x.iter().map(|v| f32_abs_bits(v.to_bits())).max().unwrap_or(0);
    // if amax == +0: scale16 = +0, code[i] = 0.
    if amax == 0 {
        codes.fill(0);
        return Ok(0x0000);
    }
    // raw_scale32 = round_f32(amax / binary32(qmax))
    let qmax32 = (g.qmax() as f32).to_bits(); // 7, 15, 31, 127: exact
    let raw_scale32 = f32_div_rne(amax, qmax32);
    // scale16 = round_f16(raw_scale32)
    let mut scale16 = f32_bits_to_f16_rne(raw_scale32);
    // if scale16 == +0: scale16 = 0x0001 (2^-24 underflow rescue)
    if scale16 == 0x0000 {
        scale16 = 0x0001;
    }
    // if scale16 is not finite and positive: fail
    if !f16_is_finite(scale16) || scale16 & 0x8000 != 0 {
        return Err(GroupFault::ScaleOverflow);
    }
    // scale32 = exact_binary16_to_binary32(scale16); inv32 = round_f32(1.0 / scale32)
    let scale32 = f16_to_f32_bits(scale16);
    let inv32 = f32_div_rne(ONE, scale32);
    let (qmin, qmax) = (g.qmin(), g.qmax());
    for (c, v) in codes.iter_mut().zip(x) {
        // normalized32 = round_f32(x[i] * inv32)
        let normalized32 = f32_mul_rne(v.to_bits(), inv32);
        // rounded = round_to_integral_ties_to_even(normalized32); clamp after rounding
        let rounded = f32_round_ties_even_to_i32(normalized32);
        *c = rounded.clamp(qmin, qmax) as i8;
    }
    Ok(scale16)
}
