//! The canonical grouped encoder MAXABS_F16_RECIP_RNE_V1 (section 7) for Q4/Q5/Q6/W8 over
//! positive rank-2 `[N, K]` sources.
//!
//! - [`oracle`] is the bit-level oracle: it follows the ordered algorithm line by line with its
//!   own binary16 rounding and software binary32 arithmetic ([`crate::soft`]), so it does not
//!   depend on the host FPU.
//! - [`twin`] is the faster scalar twin (hardware binary32, `half`'s conversion, branch-free
//!   rounding). It must match the oracle bit for bit; the tests here check that on the section
//!   12 boundary families and on random raw bit patterns.
//!
//! Sources ([`Source`]) are binary32, BF16 and binary16 words (converted exactly) or f64
//! (rounded to binary32 with RNE first, failing when not finite). Outputs go to caller slices
//! sized by [`codes_len`] and [`scales_len`]; on error both are zero-filled, never left
//! partially encoded.

pub mod oracle;
pub mod twin;

use crate::error::{EncodeError, EncodeErrorKind};
use crate::registry::Grouped;
use crate::word::bf16::bf16_to_f32_exact;
use crate::word::f16::f16_to_f32_exact;
use crate::word::fp32::f64_to_f32_rne_checked;

/// The name of the encoder profile, as recorded in provenance (section 7).
pub const PROFILE: &str = "MAXABS_F16_RECIP_RNE_V1";

/// Largest group size of any grouped scheme (64).
pub const MAX_GROUP: usize = 64;

/// A logical `[N, K]` source tensor, row-major.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// binary32 values (unchanged).
    F32(&'a [f32]),
    /// BF16 words (exact expansion).
    Bf16(&'a [u16]),
    /// binary16 words (exact expansion).
    F16(&'a [u16]),
    /// binary64 values (RNE to binary32; a value that is not a finite binary32 fails).
    F64(&'a [f64]),
}

impl Source<'_> {
    /// Number of source elements.
    pub fn len(&self) -> usize {
        match self {
            Source::F32(s) => s.len(),
            Source::Bf16(s) | Source::F16(s) => s.len(),
            Source::F64(s) => s.len(),
        }
    }

    /// Whether the source is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` as binary32 (section 7's first step), `None` when it is not a finite binary32.
    /// `i` must be in bounds (callers check the length first).
    pub fn get_f32(&self, i: usize) -> Option<f32> {
        let x = match self {
            Source::F32(s) => s[i],
            Source::Bf16(s) => bf16_to_f32_exact(s[i]),
            Source::F16(s) => f16_to_f32_exact(s[i]),
            Source::F64(s) => return f64_to_f32_rne_checked(s[i]).ok(),
        };
        if x.is_finite() {
            Some(x)
        } else {
            None
        }
    }
}

/// Why one group could not be encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupFault {
    /// Element `i` of the group is NaN or infinite.
    NonFinite(usize),
    /// The scale rounds to binary16 infinity.
    ScaleOverflow,
    /// The group is empty, longer than G, or `codes` has another length than `x`.
    Length,
}

/// Number of codes for `[n, k]`: `n * k` (`None` on overflow).
pub const fn codes_len(n: usize, k: usize) -> Option<usize> {
    n.checked_mul(k)
}

/// Number of scales for `[n, k]`: `n * ceil(k / G)` (`None` on overflow).
pub const fn scales_len(g: Grouped, n: usize, k: usize) -> Option<usize> {
    n.checked_mul(k.div_ceil(g.group_size()))
}

/// Encode with the bit-level [`oracle`]. See [`encode_with`] for the contract.
pub fn encode_oracle(
    g: Grouped,
    src: Source<'_>,
    n: usize,
    k: usize,
    codes: &mut [i8],
    scales: &mut [u16],
) -> Result<(), EncodeError> {
    encode_into_slices(g, src, n, k, codes, scales, oracle::encode_group)
}

/// Encode with the fast scalar [`twin`] (bit-identical to the oracle).
pub fn encode(
    g: Grouped,
    src: Source<'_>,
    n: usize,
    k: usize,
    codes: &mut [i8],
    scales: &mut [u16],
) -> Result<(), EncodeError> {
    encode_into_slices(g, src, n, k, codes, scales, twin::encode_group)
}

/// A per-group encoder: section 7 applied to one group of finite binary32 values.
pub type GroupFn = fn(Grouped, &[f32], &mut [i8]) -> Result<u16, GroupFault>;

fn encode_into_slices(
    g: Grouped,
    src: Source<'_>,
    n: usize,
    k: usize,
    codes: &mut [i8],
    scales: &mut [u16],
    group_fn: GroupFn,
) -> Result<(), EncodeError> {
    let (nc, ns) = match (codes_len(n, k), scales_len(g, n, k)) {
        (Some(a), Some(b)) => (a, b),
        _ => return Err(EncodeError::whole(EncodeErrorKind::BadShape)),
    };
    if codes.len() != nc || scales.len() != ns {
        return Err(EncodeError::whole(EncodeErrorKind::LengthMismatch));
    }
    let gp = k.div_ceil(g.group_size());
    let result = encode_with(g, src, n, k, group_fn, |row, grp, k0, scale, group_codes| {
        scales[row * gp + grp] = scale;
        let start = row * k + k0;
        codes[start..start + group_codes.len()].copy_from_slice(group_codes);
    });
    if result.is_err() {
        codes.fill(0);
        scales.fill(0);
    }
    result
}

/// Drive `group_fn` over every group of a `[n, k]` source in row-major order and hand each
/// result to `sink(row, group, k0, scale16, codes)`. A partial last group (K % G != 0) is encoded
/// from its logical values only (section 4). Stops at the first failing group with its location;
/// groups before it have already been handed to `sink`.
pub fn encode_with(
    g: Grouped,
    src: Source<'_>,
    n: usize,
    k: usize,
    group_fn: GroupFn,
    mut sink: impl FnMut(usize, usize, usize, u16, &[i8]),
) -> Result<(), EncodeError> {
    if n == 0 || k == 0 {
        return Err(EncodeError::whole(EncodeErrorKind::BadShape));
    }
    match codes_len(n, k) {
        Some(len) if len == src.len() => {}
        Some(_) => return Err(EncodeError::whole(EncodeErrorKind::LengthMismatch)),
        None => return Err(EncodeError::whole(EncodeErrorKind::BadShape)),
    }
    let gs = g.group_size();
    let mut x = [0f32; MAX_GROUP];
    let mut q = [0i8; MAX_GROUP];
    for row in 0..n {
        for (grp, k0) in (0..k).step_by(gs).enumerate() {
            let len = gs.min(k - k0);
            for (i, xi) in x[..len].iter_mut().enumerate() {
                *xi = src.get_f32(row * k + k0 + i).ok_or(EncodeError {
                    kind: EncodeErrorKind::NonFiniteSource,
                    row,
                    group: grp,
                    element: k0 + i,
                })?;
            }
            let scale = group_fn(g, &x[..len], &mut q[..len]).map_err(|f| {
                let (kind, element) = match f {
                    GroupFault::NonFinite(i) => (EncodeErrorKind::NonFiniteSource, k0 + i),
                    GroupFault::ScaleOverflow => (EncodeErrorKind::ScaleOverflow, k0),
                    GroupFault::Length => (EncodeErrorKind::LengthMismatch, k0),
                };
                EncodeError {
                    kind,
                    row,
                    group: grp,
                    element,
                }
            })?;
            sink(row, grp, k0, scale, &q[..len]);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
