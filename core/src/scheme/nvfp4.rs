//! NVFP4 (section 3.3) over logical `[N, K]` arrays: `codes` holds N*K E2M1 words (one per byte,
//! 0..=15) row-major, `scales` holds N * K/16 E4M3FN words row-major, plus the FP32 divisor d_w.

use super::{checked_area, expect_len};
use crate::error::{ValueError, ValueErrorKind};
use crate::word::e2m1::{e2m1_is_word, e2m1_to_f32};
use crate::word::e4m3fn::{e4m3fn_is_nan, e4m3fn_to_f32};

/// K values per block scale.
pub const BLOCK: usize = 16;

/// Validity of one stored block scale: sign-zero finite words only, +0 included; negative
/// values, -0 (0x80) and both NaN words are invalid (section 3.3).
pub const fn check_block_scale(s: u8) -> Result<(), ValueErrorKind> {
    if e4m3fn_is_nan(s) {
        Err(ValueErrorKind::ScaleNan)
    } else if s == 0x80 {
        Err(ValueErrorKind::ScaleNegativeZero)
    } else if s & 0x80 != 0 {
        Err(ValueErrorKind::ScaleNegative)
    } else {
        Ok(())
    }
}

/// Validity of the serialized binary32 divisor d_w: finite and strictly positive (section 3.3).
pub const fn check_divisor(d_bits: u32) -> Result<(), ValueErrorKind> {
    if d_bits & 0x7f80_0000 == 0x7f80_0000 {
        Err(ValueErrorKind::DivisorNotFinite)
    } else if d_bits & 0x8000_0000 != 0 || d_bits == 0 {
        Err(ValueErrorKind::DivisorNotPositive)
    } else {
        Ok(())
    }
}

/// The represented weight `decode_e2m1(c) * decode_e4m3fn(s) / d_w` (section 3.3), in binary32:
/// the product is exact (2 x 4 significant bits, magnitude >= 2^-10), so the division is the only
/// rounding and the result is the correctly rounded real value.
pub fn reconstruct(c: u8, s: u8, d_bits: u32) -> f32 {
    (e2m1_to_f32(c) * e4m3fn_to_f32(s)) / f32::from_bits(d_bits)
}

/// Check every NVFP4 value rule over a logical `[n, k]` tensor: divisor first, then per row each
/// block scale before its codes. Fails on K not a multiple of 16 and on code bytes above 0xF.
pub fn validate(n: usize, k: usize, codes: &[u8], scales: &[u8], d_bits: u32) -> Result<(), ValueError> {
    if !k.is_multiple_of(BLOCK) {
        return Err(ValueError::whole(ValueErrorKind::BadShape));
    }
    let sb = k / BLOCK;
    expect_len(codes.len(), checked_area(n, k)?)?;
    expect_len(scales.len(), checked_area(n, sb)?)?;
    validate_by(
        n,
        k,
        |r, kk| codes[r * k + kk],
        |r, kb| scales[r * sb + kb],
        d_bits,
    )
}

/// The value rules over any word source (`code(row, k)`, `scale(row, kb)`), in the order of
/// [`validate`]. Layout validators call this on stored bytes.
pub fn validate_by(
    n: usize,
    k: usize,
    code: impl Fn(usize, usize) -> u8,
    scale: impl Fn(usize, usize) -> u8,
    d_bits: u32,
) -> Result<(), ValueError> {
    if let Err(kind) = check_divisor(d_bits) {
        return Err(ValueError::whole(kind));
    }
    for row in 0..n {
        for kb in 0..k / BLOCK {
            if let Err(kind) = check_block_scale(scale(row, kb)) {
                return Err(ValueError::at(kind, row, kb, kb * BLOCK));
            }
            for kk in kb * BLOCK..(kb + 1) * BLOCK {
                if !e2m1_is_word(code(row, kk)) {
                    return Err(ValueError::at(ValueErrorKind::CodeOutOfRange, row, kb, kk));
                }
            }
        }
    }
    Ok(())
}

/// Decode a logical `[n, k]` tensor to f32 through [`reconstruct`]. Lengths are checked; values
/// are not (run [`validate`] on untrusted words).
pub fn decode(
    n: usize,
    k: usize,
    codes: &[u8],
    scales: &[u8],
    d_bits: u32,
    out: &mut [f32],
) -> Result<(), ValueError> {
    if !k.is_multiple_of(BLOCK) {
        return Err(ValueError::whole(ValueErrorKind::BadShape));
    }
    let sb = k / BLOCK;
    let nk = checked_area(n, k)?;
    expect_len(codes.len(), nk)?;
    expect_len(out.len(), nk)?;
    expect_len(scales.len(), checked_area(n, sb)?)?;
    for (i, o) in out.iter_mut().enumerate() {
        let (row, kk) = (i / k, i % k);
        *o = reconstruct(codes[i], scales[row * sb + kk / BLOCK], d_bits);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_scale_validity_over_all_256_words() {
        for s in 0..=255u8 {
            let want = match s {
                0x7f | 0xff => Err(ValueErrorKind::ScaleNan),
                0x80 => Err(ValueErrorKind::ScaleNegativeZero),
                0x81..=0xfe => Err(ValueErrorKind::ScaleNegative),
                _ => Ok(()),
            };
            assert_eq!(check_block_scale(s), want, "{s:#04x}");
        }
    }

    #[test]
    fn divisor_must_be_finite_and_strictly_positive() {
        assert_eq!(check_divisor(1.0f32.to_bits()), Ok(()));
        assert_eq!(check_divisor(1), Ok(())); // min subnormal is positive
        assert_eq!(check_divisor(f32::MAX.to_bits()), Ok(()));
        assert_eq!(check_divisor(0), Err(ValueErrorKind::DivisorNotPositive));
        assert_eq!(
            check_divisor(0x8000_0000),
            Err(ValueErrorKind::DivisorNotPositive)
        );
        assert_eq!(
            check_divisor((-2.0f32).to_bits()),
            Err(ValueErrorKind::DivisorNotPositive)
        );
        assert_eq!(
            check_divisor(f32::INFINITY.to_bits()),
            Err(ValueErrorKind::DivisorNotFinite)
        );
        assert_eq!(check_divisor(0x7fc0_0000), Err(ValueErrorKind::DivisorNotFinite));
        assert_eq!(check_divisor(0xff80_0001), Err(ValueErrorKind::DivisorNotFinite));
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn reconstruction_is_the_correctly_rounded_divisor_equation() {
        // Correct rounding of num / d, checked without double rounding: `got` must be at least
        // as close to num / d as both binary32 neighbours, i.e. minimise |y * d - num| (f64
        // products of two binary32 values are exact).
        let divisors = [1.0f32, 3.0, 0.1, 448.0 * 6.0, 1e-30, 7.0e20, f32::from_bits(1)];
        for c in 0..16u8 {
            for s in (0..=0x7eu8).chain([0x00]) {
                for d in divisors {
                    let got = reconstruct(c, s, d.to_bits());
                    let num = e2m1_to_f32(c) as f64 * e4m3fn_to_f32(s) as f64; // exact
                    if got.is_finite() && got != 0.0 {
                        let err = |y: f32| ((y as f64) * (d as f64) - num).abs();
                        let up = f32::from_bits(got.to_bits() + 1);
                        let down = f32::from_bits(got.to_bits() - 1);
                        assert!(
                            err(got) <= err(up) && err(got) <= err(down),
                            "c={c} s={s:#x} d={d}"
                        );
                    }
                    assert_eq!(got.is_sign_negative(), c & 8 != 0);
                }
            }
        }
        // 6 * 448 / 1 = 2688; -0 code stays -0.
        assert_eq!(reconstruct(0x7, 0x7e, 1.0f32.to_bits()), 2688.0);
        assert_eq!(reconstruct(0x8, 0x38, 2.0f32.to_bits()).to_bits(), 0x8000_0000);
        // The divisor divides: code 1.0 (0x2), scale 1.0 (0x38), d_w 4 -> 0.25.
        assert_eq!(reconstruct(0x2, 0x38, 4.0f32.to_bits()), 0.25);
    }

    #[test]
    fn validate_finds_scale_code_and_divisor_faults() {
        let (n, k) = (2, 32);
        let mut codes = [0u8; 64];
        let mut scales = [0x38u8; 4];
        let d = 1.0f32.to_bits();
        assert_eq!(validate(n, k, &codes, &scales, d), Ok(()));
        assert_eq!(
            validate(n, k, &codes, &scales, 0).unwrap_err().kind,
            ValueErrorKind::DivisorNotPositive
        );
        scales[3] = 0x80;
        assert_eq!(
            validate(n, k, &codes, &scales, d),
            Err(ValueError::at(ValueErrorKind::ScaleNegativeZero, 1, 1, 16))
        );
        scales[3] = 0x00; // +0 scale is valid, with any codes
        codes[40] = 0x10;
        assert_eq!(
            validate(n, k, &codes, &scales, d),
            Err(ValueError::at(ValueErrorKind::CodeOutOfRange, 1, 0, 8))
        );
        codes[40] = 0x8;
        assert_eq!(validate(n, k, &codes, &scales, d), Ok(()));
        assert_eq!(
            validate(1, 24, &codes[..24], &scales[..1], d).unwrap_err().kind,
            ValueErrorKind::BadShape
        );
    }
}
