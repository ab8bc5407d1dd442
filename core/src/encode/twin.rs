//! The fast scalar twin of [`super::oracle`]: the same section 7 algorithm with hardware binary32
//! arithmetic, `half`'s binary16 conversion (F16C where the target has it) and branch-free
//! ties-to-even rounding. Bit-identical to the oracle; `encode::tests` checks parity.

use super::GroupFault;
use crate::registry::Grouped;

/// 1.5 * 2^23: adding it to |v| <= 2^22 lands in [2^23, 2^24), where the binary32 ulp is 1, so the
/// hardware's round-to-nearest-even addition performs `round_to_integral_ties_to_even`.
const RNE_MAGIC: f32 = 12_582_912.0;

/// Same contract as [`super::oracle::encode_group`].
pub fn encode_group(g: Grouped, x: &[f32], codes: &mut [i8]) -> Result<u16, GroupFault> {
    if x.is_empty() || x.len() > g.group_size() || codes.len() != x.len() {
        return Err(GroupFault::Length);
    }
    let mut amax = 0u32;
    for v in x {
        amax = amax.max(v.to_bits() & 0x7fff_ffff);
    }
    if amax >= 0x7f80_0000 {
        let i = x.iter().position(|v| !v.is_finite()).unwrap_or(0);
        return Err(GroupFault::NonFinite(i));
    }
    if amax == 0 {
        codes.fill(0);
        return Ok(0);
    }
    let qmax = g.qmax() as f32;
    let raw = f32::from_bits(amax) / qmax;
    let mut scale16 = half::f16::from_f32(raw).to_bits();
    if scale16 == 0 {
        scale16 = 0x0001;
    }
    if scale16 >= 0x7c00 {
        return Err(GroupFault::ScaleOverflow);
    }
    let inv = 1.0 / half::f16::from_bits(scale16).to_f32();
    // Clamping to +-(qmax + 1) before rounding gives the same code as clamping to the legal
    // interval after it (rounding is monotone and both bounds are integers), and keeps |v| small
    // enough for RNE_MAGIC.
    let bound = qmax + 1.0;
    let (qmin, qmax) = (g.qmin(), g.qmax());
    for (c, v) in codes.iter_mut().zip(x) {
        let n = (v * inv).clamp(-bound, bound);
        let r = (n + RNE_MAGIC) - RNE_MAGIC;
        *c = (r as i32).clamp(qmin, qmax) as i8;
    }
    Ok(scale16)
}
