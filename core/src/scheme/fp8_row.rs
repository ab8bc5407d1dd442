//! FP8_E4M3FN_ROW_BF16S (section 3.4) over logical `[N, K]` arrays: `codes` holds N*K E4M3FN
//! words row-major, `scales` holds N BF16 row multipliers.

use super::{checked_area, expect_len};
use crate::error::{ValueError, ValueErrorKind};
use crate::word::bf16::bf16_to_f32_exact;
use crate::word::e4m3fn::{e4m3fn_is_nan, e4m3fn_to_f32};

/// Validity of one code word: every finite E4M3FN word, both zeros included; 0x7f / 0xff (NaN)
/// are invalid (section 3.4).
pub const fn check_code(c: u8) -> Result<(), ValueErrorKind> {
    if e4m3fn_is_nan(c) {
        Err(ValueErrorKind::CodeNan)
    } else {
        Ok(())
    }
}

/// Validity of one BF16 row scale: sign bit zero and finite (+0 and positive subnormals valid);
/// -0, negatives, infinities, NaN invalid (section 3.4).
pub const fn check_row_scale(s: u16) -> Result<(), ValueErrorKind> {
    if s & 0x7f80 == 0x7f80 {
        Err(if s & 0x007f != 0 {
            ValueErrorKind::ScaleNan
        } else {
            ValueErrorKind::ScaleInfinite
        })
    } else if s == 0x8000 {
        Err(ValueErrorKind::ScaleNegativeZero)
    } else if s & 0x8000 != 0 {
        Err(ValueErrorKind::ScaleNegative)
    } else {
        Ok(())
    }
}

/// The represented weight `binary32(c32 * s32)` (section 3.4): one correctly rounded binary32
/// multiplication (it can round when the product is a binary32 subnormal).
pub fn reconstruct(c: u8, s: u16) -> f32 {
    e4m3fn_to_f32(c) * bf16_to_f32_exact(s)
}

/// Check every value rule over a logical `[n, k]` tensor, row by row: the row scale, then its
/// codes, including the zero-row rule (scale +0 allows only codes 0x00 and 0x80).
pub fn validate(n: usize, k: usize, codes: &[u8], scales: &[u16]) -> Result<(), ValueError> {
    expect_len(codes.len(), checked_area(n, k)?)?;
    expect_len(scales.len(), n)?;
    validate_by(n, k, |r, kk| codes[r * k + kk], |r| scales[r])
}

/// The value rules over any word source (`code(row, k)`, `scale(row)`), in the order of
/// [`validate`]. Layout validators call this on stored bytes.
pub fn validate_by(
    n: usize,
    k: usize,
    code: impl Fn(usize, usize) -> u8,
    scale: impl Fn(usize) -> u16,
) -> Result<(), ValueError> {
    for row in 0..n {
        let s = scale(row);
        if let Err(kind) = check_row_scale(s) {
            return Err(ValueError::at(kind, row, 0, 0));
        }
        for kk in 0..k {
            let c = code(row, kk);
            if let Err(kind) = check_code(c) {
                return Err(ValueError::at(kind, row, 0, kk));
            }
            if s == 0 && c & 0x7f != 0 {
                return Err(ValueError::at(
                    ValueErrorKind::NonZeroCodeWithZeroScale,
                    row,
                    0,
                    kk,
                ));
            }
        }
    }
    Ok(())
}

/// Decode a logical `[n, k]` tensor to f32 through [`reconstruct`]. Lengths are checked; values
/// are not (run [`validate`] on untrusted words).
pub fn decode(n: usize, k: usize, codes: &[u8], scales: &[u16], out: &mut [f32]) -> Result<(), ValueError> {
    let nk = checked_area(n, k)?;
    expect_len(codes.len(), nk)?;
    expect_len(out.len(), nk)?;
    expect_len(scales.len(), n)?;
    for (i, o) in out.iter_mut().enumerate() {
        *o = reconstruct(codes[i], scales[i / k]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_validity_over_all_256_words() {
        for c in 0..=255u8 {
            let want = if c == 0x7f || c == 0xff {
                Err(ValueErrorKind::CodeNan)
            } else {
                Ok(())
            };
            assert_eq!(check_code(c), want, "{c:#04x}");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn row_scale_validity_over_all_65536_bf16_words() {
        for s in 0..=u16::MAX {
            let v = bf16_to_f32_exact(s);
            let want = if v.is_nan() {
                Err(ValueErrorKind::ScaleNan)
            } else if v.is_infinite() {
                Err(ValueErrorKind::ScaleInfinite)
            } else if s == 0x8000 {
                Err(ValueErrorKind::ScaleNegativeZero)
            } else if v < 0.0 {
                Err(ValueErrorKind::ScaleNegative)
            } else {
                Ok(())
            };
            assert_eq!(check_row_scale(s), want, "{s:#06x}");
        }
        assert_eq!(check_row_scale(0x0001), Ok(())); // positive subnormal
    }

    #[test]
    fn reconstruction_is_one_rounded_binary32_product_for_all_codes() {
        let scales = [0x3f80u16, 0x0001, 0x0080, 0x7f7f, 0x3e4d, 0x0000, 0x4049, 0x00ff];
        for c in 0..=255u8 {
            if c & 0x7f == 0x7f {
                continue;
            }
            for s in scales {
                let got = reconstruct(c, s);
                // f64 product of two binary32 values is exact; `as f32` rounds it once (RNE).
                let want = (e4m3fn_to_f32(c) as f64 * bf16_to_f32_exact(s) as f64) as f32;
                assert_eq!(got.to_bits(), want.to_bits(), "c={c:#04x} s={s:#06x}");
            }
        }
        // A multiplier: code 2.0 (0x40), scale 0.5 (0x3f00) -> 1.0.
        assert_eq!(reconstruct(0x40, 0x3f00), 1.0);
        // Signed-zero codes in a zero row decode to signed zeros.
        assert_eq!(reconstruct(0x80, 0x0000).to_bits(), 0x8000_0000);
    }

    #[test]
    fn zero_row_admits_only_signed_zero_codes() {
        let codes = [0x00u8, 0x80, 0x00, 0x80, 0x01, 0x00];
        assert_eq!(validate(2, 3, &codes, &[0x0000, 0x3f80]), Ok(()));
        assert_eq!(
            validate(2, 3, &codes, &[0x3f80, 0x0000]),
            Err(ValueError::at(ValueErrorKind::NonZeroCodeWithZeroScale, 1, 0, 1))
        );
        assert_eq!(
            validate(1, 3, &[0x00, 0xff, 0x00], &[0x3f80]),
            Err(ValueError::at(ValueErrorKind::CodeNan, 0, 0, 1))
        );
        assert_eq!(
            validate(1, 3, &[0; 3], &[0x8000]).unwrap_err().kind,
            ValueErrorKind::ScaleNegativeZero
        );
        assert_eq!(
            validate(1, 3, &[0; 3], &[0x7f80]).unwrap_err().kind,
            ValueErrorKind::ScaleInfinite
        );
        assert_eq!(
            validate(1, 3, &[0; 3], &[0x7fc1]).unwrap_err().kind,
            ValueErrorKind::ScaleNan
        );
        assert_eq!(
            validate(1, 3, &[0; 3], &[0xbf80]).unwrap_err().kind,
            ValueErrorKind::ScaleNegative
        );
        assert_eq!(
            validate(1, 3, &[0; 2], &[0x3f80]).unwrap_err().kind,
            ValueErrorKind::LengthMismatch
        );
    }
}
