//! The grouped signed-integer schemes Q4G64_F16S, Q5G64_F16S, Q6G64_F16S, W8G32_F16S
//! (sections 4, 5, 6) over logical `[N, K]` arrays: `codes` holds N*K signed codes row-major,
//! `scales` holds N * ceil(K / G) binary16 words row-major.

use super::{checked_area, expect_len};
use crate::error::{ValueError, ValueErrorKind};
use crate::registry::Grouped;
use crate::word::f16::f16_to_f32_exact;

/// Number of logical groups in a row of K values: `ceil(K / G)` (section 4).
pub const fn groups_per_row(g: Grouped, k: usize) -> usize {
    k.div_ceil(g.group_size())
}

/// Validity of one binary16 scale (section 6.1): +0 (0x0000) or a finite positive normal or
/// subnormal. -0, negatives, infinities and NaNs are invalid.
pub const fn check_f16_scale(s: u16) -> Result<(), ValueErrorKind> {
    let exp = s & 0x7c00;
    let frac = s & 0x03ff;
    if exp == 0x7c00 {
        return Err(if frac != 0 {
            ValueErrorKind::ScaleNan
        } else {
            ValueErrorKind::ScaleInfinite
        });
    }
    if s == 0x8000 {
        return Err(ValueErrorKind::ScaleNegativeZero);
    }
    if s & 0x8000 != 0 {
        return Err(ValueErrorKind::ScaleNegative);
    }
    Ok(())
}

/// Whether `q` is in the legal interval of `g` (section 5; W8 excludes -128).
pub const fn is_legal_code(g: Grouped, q: i32) -> bool {
    q >= g.qmin() && q <= g.qmax()
}

/// The signed code of a b-bit unsigned logical word: `q = u` if `u < 2^(b-1)`, else `u - 2^b`
/// (section 5). Bits of `u` above b are ignored.
pub const fn code_from_word(g: Grouped, u: u8) -> i8 {
    let b = g.bits();
    let u = (u as u32) & ((1 << b) - 1);
    if u < (1 << (b - 1)) {
        u as i8
    } else {
        (u as i32 - (1 << b)) as i8
    }
}

/// The b-bit unsigned logical word of signed code `q` (inverse of [`code_from_word`]).
pub const fn word_from_code(g: Grouped, q: i8) -> u8 {
    ((q as i32) & ((1 << g.bits()) - 1)) as u8
}

/// The represented weight `binary32(s32 * binary32(q))` (section 6.2). Exact: an 11-bit
/// significand times a code of at most 8 bits fits binary32, and every binary16 value is a
/// binary32 normal.
pub const fn reconstruct(scale: u16, q: i8) -> f32 {
    f16_to_f32_exact(scale) * (q as f32)
}

/// Check every value rule of sections 5 and 6.1 over a logical `[n, k]` tensor; the first
/// offender in row-major order (scale before the codes of its group) is reported.
pub fn validate(g: Grouped, n: usize, k: usize, codes: &[i8], scales: &[u16]) -> Result<(), ValueError> {
    let gp = groups_per_row(g, k);
    expect_len(codes.len(), checked_area(n, k)?)?;
    expect_len(scales.len(), checked_area(n, gp)?)?;
    validate_by(g, n, k, |r, kk| codes[r * k + kk], |r, grp| scales[r * gp + grp])
}

/// The value rules over any word source: `code(row, k)` and `scale(row, group)` are read in
/// row-major order (each scale before its group's codes) and the first offender is reported.
/// Layout validators call this on stored bytes; [`validate`] on logical slices.
pub fn validate_by(
    g: Grouped,
    n: usize,
    k: usize,
    code: impl Fn(usize, usize) -> i8,
    scale: impl Fn(usize, usize) -> u16,
) -> Result<(), ValueError> {
    let gs = g.group_size();
    for row in 0..n {
        for grp in 0..groups_per_row(g, k) {
            let s = scale(row, grp);
            let k0 = grp * gs;
            if let Err(kind) = check_f16_scale(s) {
                return Err(ValueError::at(kind, row, grp, k0));
            }
            for kk in k0..(k0 + gs).min(k) {
                let q = code(row, kk);
                if !is_legal_code(g, q as i32) {
                    return Err(ValueError::at(ValueErrorKind::CodeOutOfRange, row, grp, kk));
                }
                if s == 0 && q != 0 {
                    return Err(ValueError::at(
                        ValueErrorKind::NonZeroCodeWithZeroScale,
                        row,
                        grp,
                        kk,
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Decode a logical `[n, k]` tensor to f32 through [`reconstruct`]. Lengths are checked; values
/// are not (run [`validate`] on untrusted words).
pub fn decode(
    g: Grouped,
    n: usize,
    k: usize,
    codes: &[i8],
    scales: &[u16],
    out: &mut [f32],
) -> Result<(), ValueError> {
    let gp = groups_per_row(g, k);
    let nk = checked_area(n, k)?;
    expect_len(codes.len(), nk)?;
    expect_len(out.len(), nk)?;
    expect_len(scales.len(), checked_area(n, gp)?)?;
    for row in 0..n {
        for kk in 0..k {
            let i = row * k + kk;
            out[i] = reconstruct(scales[row * gp + kk / g.group_size()], codes[i]);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::word::f16::f16_to_f32_bits;

    #[test]
    #[cfg_attr(miri, ignore)]
    fn scale_validity_over_all_65536_binary16_words() {
        for s in 0..=u16::MAX {
            let v = half::f16::from_bits(s).to_f32();
            let expect = if v.is_nan() {
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
            assert_eq!(check_f16_scale(s), expect, "{s:#06x}");
        }
        // The minimum positive scale 2^-24 is valid and keeps its value.
        assert_eq!(check_f16_scale(0x0001), Ok(()));
        assert_eq!(f16_to_f32_exact(0x0001), crate::testutil::p2f(-24));
    }

    #[test]
    fn code_word_conversion_is_twos_complement_for_every_width() {
        for g in Grouped::ALL {
            let b = g.bits();
            for u in 0..(1u32 << b) {
                let q = code_from_word(g, u as u8) as i32;
                let want = if u < 1 << (b - 1) {
                    u as i32
                } else {
                    u as i32 - (1 << b)
                };
                assert_eq!(q, want, "{g:?} {u}");
                assert_eq!(word_from_code(g, q as i8) as u32, u);
            }
        }
        // Legal endpoints and the one illegal W8 word.
        assert!(is_legal_code(Grouped::Q4, -8) && is_legal_code(Grouped::Q4, 7));
        assert!(!is_legal_code(Grouped::Q4, 8) && !is_legal_code(Grouped::Q4, -9));
        assert!(is_legal_code(Grouped::Q5, -16) && is_legal_code(Grouped::Q5, 15));
        assert!(is_legal_code(Grouped::Q6, -32) && is_legal_code(Grouped::Q6, 31));
        assert!(is_legal_code(Grouped::W8, -127) && is_legal_code(Grouped::W8, 127));
        assert!(!is_legal_code(Grouped::W8, -128));
        assert_eq!(code_from_word(Grouped::W8, 0x80), -128);
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn reconstruction_is_the_exact_product_for_every_scale_and_code() {
        for g in Grouped::ALL {
            for s in (0..0x7c00u16).step_by(7).chain([0x0001, 0x03ff, 0x0400, 0x7bff]) {
                for q in g.qmin()..=g.qmax() {
                    let w = reconstruct(s, q as i8);
                    let exact = f32::from_bits(f16_to_f32_bits(s)) as f64 * q as f64;
                    assert_eq!(w as f64, exact, "{g:?} s={s:#06x} q={q}");
                }
            }
        }
        // A multiplier, not a divisor: scale 2.0 and code 3 give 6.0.
        assert_eq!(reconstruct(0x4000, 3), 6.0);
        assert_eq!(reconstruct(0x4000, -3), -6.0);
        assert_eq!(reconstruct(0x0000, 0).to_bits(), 0);
    }

    #[test]
    fn validate_reports_the_first_offender_with_its_location() {
        let g = Grouped::W8; // G = 32
        let (n, k) = (2, 40); // two groups per row, the second partial (8 values)
        let mut codes = [0i8; 80];
        let mut scales = [0x3c00u16; 4];
        assert_eq!(validate(g, n, k, &codes, &scales), Ok(()));
        codes[40 + 35] = -128;
        assert_eq!(
            validate(g, n, k, &codes, &scales),
            Err(ValueError::at(ValueErrorKind::CodeOutOfRange, 1, 1, 35))
        );
        codes[40 + 35] = 0;
        scales[1] = 0x0000;
        codes[33] = 1;
        assert_eq!(
            validate(g, n, k, &codes, &scales),
            Err(ValueError::at(ValueErrorKind::NonZeroCodeWithZeroScale, 0, 1, 33))
        );
        codes[33] = 0;
        assert_eq!(validate(g, n, k, &codes, &scales), Ok(()));
        scales[2] = 0x8000;
        assert_eq!(
            validate(g, n, k, &codes, &scales),
            Err(ValueError::at(ValueErrorKind::ScaleNegativeZero, 1, 0, 0))
        );
        scales[2] = 0x7e00;
        assert_eq!(
            validate(g, n, k, &codes, &scales).unwrap_err().kind,
            ValueErrorKind::ScaleNan
        );
        scales[2] = 0xfc00;
        assert_eq!(
            validate(g, n, k, &codes, &scales).unwrap_err().kind,
            ValueErrorKind::ScaleInfinite
        );
        scales[2] = 0xbc00;
        assert_eq!(
            validate(g, n, k, &codes, &scales).unwrap_err().kind,
            ValueErrorKind::ScaleNegative
        );
        assert_eq!(
            validate(g, n, k, &codes[..79], &scales).unwrap_err().kind,
            ValueErrorKind::LengthMismatch
        );
        assert_eq!(
            validate(g, usize::MAX, 2, &codes, &scales).unwrap_err().kind,
            ValueErrorKind::BadShape
        );
        // Q4: 8 is outside [-8, 7].
        let q4 = [8i8; 64];
        assert_eq!(
            validate(Grouped::Q4, 1, 64, &q4, &[0x3c00]).unwrap_err(),
            ValueError::at(ValueErrorKind::CodeOutOfRange, 0, 0, 0)
        );
    }

    #[test]
    fn positive_scale_with_all_zero_codes_is_valid() {
        // Section 6.1: "The converse is not required".
        assert_eq!(validate(Grouped::Q5, 1, 64, &[0i8; 64], &[0x3c00]), Ok(()));
    }
}
