//! Validity rules and reconstruction oracles of the quantized schemes, over *logical* arrays
//! (codes and scales as the spec defines them, before any layout): grouped signed-integer
//! (sections 4 to 6), NVFP4 (3.3) and FP8 row-scaled (3.4). Layout codecs recover these words;
//! this module decides whether they are legal and what they mean.
//!
//! Every oracle is written as the spec's equation, evaluated in binary32. Rust's `f32`
//! operations are IEEE-754 round-to-nearest-even with subnormals, so `a * b` *is*
//! `binary32(a * b)`; where the product is exact (grouped, NVFP4) no rounding happens at all.

pub mod fp8_row;
pub mod grouped;
pub mod nvfp4;

use crate::error::{ValueError, ValueErrorKind};

/// `a * b` with overflow reported as [`ValueErrorKind::BadShape`].
pub(crate) const fn checked_area(a: usize, b: usize) -> Result<usize, ValueError> {
    match a.checked_mul(b) {
        Some(x) => Ok(x),
        None => Err(ValueError::whole(ValueErrorKind::BadShape)),
    }
}

/// Fail with [`ValueErrorKind::LengthMismatch`] unless `have == want`.
pub(crate) const fn expect_len(have: usize, want: usize) -> Result<(), ValueError> {
    if have == want {
        Ok(())
    } else {
        Err(ValueError::whole(ValueErrorKind::LengthMismatch))
    }
}
