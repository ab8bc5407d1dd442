//! IEEE-754 binary16, the `F16S` scale word of the grouped formats (section 6.1). Binary16 is a
//! scale component only; it is not a direct format (section 1).

use crate::error::ConvertError;

/// Exact expansion of a binary16 word to binary32 (every binary16 value, subnormals included, is
/// a binary32 normal; NaN payloads move to the top of the binary32 fraction, quiet bit included).
pub const fn f16_to_f32_exact(h: u16) -> f32 {
    f32::from_bits(f16_to_f32_bits(h))
}

/// [`f16_to_f32_exact`] as binary32 bits.
pub const fn f16_to_f32_bits(h: u16) -> u32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    if exp == 0x1f {
        return sign | 0x7f80_0000 | (frac << 13);
    }
    if exp == 0 {
        if frac == 0 {
            return sign;
        }
        // Subnormal: frac * 2^-24. Normalise so the leading one lands on bit 10.
        let shift = frac.leading_zeros() - 21; // leading zeros within the 11-bit field
        let mant = (frac << shift) & 0x3ff;
        let e32 = 127 - 15 + 1 - shift;
        return sign | (e32 << 23) | (mant << 13);
    }
    sign | ((exp + 127 - 15) << 23) | (frac << 13)
}

/// Round a binary32 to binary16 with round-to-nearest, ties-to-even (bit-level oracle).
///
/// Subnormal results are produced (no flush-to-zero); finite values at or beyond
/// 65520 round to infinity (use [`f32_to_f16_rne_checked`] to have that reported); NaNs stay NaN
/// with their sign and the top 10 payload bits, forced quiet if the kept payload would be zero.
pub const fn f32_to_f16_rne(x: f32) -> u16 {
    f32_bits_to_f16_rne(x.to_bits())
}

/// [`f32_to_f16_rne`] on raw binary32 bits.
pub const fn f32_bits_to_f16_rne(bits: u32) -> u16 {
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let frac = bits & 0x007f_ffff;
    if exp == 0xff {
        if frac == 0 {
            return sign | 0x7c00;
        }
        let payload = (frac >> 13) as u16;
        return sign | 0x7c00 | if payload == 0 { 0x0200 } else { payload };
    }
    // Unbiased exponent of the value; binary32 subnormals are far below binary16's range and
    // round to zero, which the general path below handles (their significand lacks the hidden 1).
    let e = exp - 127;
    if e > 15 {
        return sign | 0x7c00;
    }
    let mant = if exp == 0 { frac } else { frac | 0x0080_0000 };
    // Number of low bits of the 24-bit significand to drop: 13 for normal results, more for
    // subnormal results whose ulp is 2^-24.
    let shift: i32 = if e >= -14 { 13 } else { 13 + (-14 - e) };
    if shift > 24 {
        // Below half the smallest subnormal (2^-25): rounds to zero.
        return sign;
    }
    let q = mant >> shift;
    let rem = mant & ((1u32 << shift) - 1);
    let half = 1u32 << (shift - 1);
    let round_up = rem > half || (rem == half && (q & 1) == 1);
    let q = q + round_up as u32;
    // Pack by addition so a carry moves into the exponent (largest subnormal -> min normal, max
    // finite -> infinity).
    let packed = if e >= -14 {
        (((e + 14) as u32) << 10) + q
    } else {
        q
    };
    sign | packed as u16
}

/// [`f32_to_f16_rne`] that reports a non-finite input and a finite input that rounds to infinity.
pub const fn f32_to_f16_rne_checked(x: f32) -> Result<u16, ConvertError> {
    let bits = x.to_bits();
    if bits & 0x7f80_0000 == 0x7f80_0000 {
        return Err(ConvertError::NotFinite);
    }
    let h = f32_bits_to_f16_rne(bits);
    if h & 0x7fff == 0x7c00 {
        Err(ConvertError::Overflow)
    } else {
        Ok(h)
    }
}

/// Whether a binary16 word is finite.
pub const fn f16_is_finite(h: u16) -> bool {
    h & 0x7c00 != 0x7c00
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    #[test]
    #[cfg_attr(miri, ignore)]
    fn exact_decode_matches_half_for_all_65536_words() {
        for h in 0..=u16::MAX {
            let ours = f16_to_f32_bits(h);
            let theirs = f16::from_bits(h).to_f32();
            if theirs.is_nan() {
                assert!(f32::from_bits(ours).is_nan(), "{h:#06x}");
                // Payload and quiet bit survive in our expansion.
                assert_eq!(
                    ours,
                    (((h as u32) & 0x8000) << 16) | 0x7f80_0000 | ((h as u32 & 0x3ff) << 13)
                );
            } else {
                assert_eq!(ours, theirs.to_bits(), "{h:#06x}");
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn every_f16_word_round_trips_through_f32() {
        for h in 0..=u16::MAX {
            assert_eq!(f32_to_f16_rne(f16_to_f32_exact(h)), h, "{h:#06x}");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn rne_matches_half_on_all_midpoints_and_neighbours() {
        // Every binary16 value, the midpoint to its successor and one binary32 ulp either side of
        // that midpoint: the complete set of rounding boundaries.
        for h in 0..0x7c00u16 {
            for sign in [0u32, 0x8000_0000] {
                let lo = f16_to_f32_bits(h);
                let hi = f16_to_f32_bits(h + 1);
                let mid = (f32::from_bits(lo) as f64 + f32::from_bits(hi) as f64) / 2.0;
                let mid = mid as f32; // exact: the midpoint has at most 12 significant bits
                for b in [mid.to_bits() - 1, mid.to_bits(), mid.to_bits() + 1, lo, hi] {
                    let x = f32::from_bits(b | sign);
                    assert_eq!(
                        f32_to_f16_rne(x),
                        f16::from_f32(x).to_bits(),
                        "{:#010x}",
                        b | sign
                    );
                }
            }
        }
    }

    #[test]
    fn ties_go_to_even_in_both_signs() {
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even 1.0.
        assert_eq!(f32_to_f16_rne(1.0 + crate::testutil::p2f(-11)), 0x3c00);
        assert_eq!(f32_to_f16_rne(-(1.0 + crate::testutil::p2f(-11))), 0xbc00);
        // 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9 (even): rounds up.
        assert_eq!(f32_to_f16_rne(1.0 + 3.0 * crate::testutil::p2f(-11)), 0x3c02);
        assert_eq!(f32_to_f16_rne(-(1.0 + 3.0 * crate::testutil::p2f(-11))), 0xbc02);
        // Subnormal ties: 0.5 * 2^-24 -> 0, 1.5 * 2^-24 -> 2 * 2^-24.
        assert_eq!(f32_to_f16_rne(crate::testutil::p2f(-25)), 0x0000);
        assert_eq!(f32_to_f16_rne(-(crate::testutil::p2f(-25))), 0x8000);
        assert_eq!(f32_to_f16_rne(1.5 * crate::testutil::p2f(-24)), 0x0002);
        assert_eq!(f32_to_f16_rne(crate::testutil::p2f(-25) * 1.0000001), 0x0001);
    }

    #[test]
    fn overflow_is_reported_not_clipped() {
        assert_eq!(f32_to_f16_rne_checked(65504.0), Ok(0x7bff));
        // 65519.996 rounds down to max finite, 65520 is the tie that rounds to infinity.
        assert_eq!(f32_to_f16_rne_checked(65519.996), Ok(0x7bff));
        assert_eq!(f32_to_f16_rne_checked(65520.0), Err(ConvertError::Overflow));
        assert_eq!(f32_to_f16_rne_checked(-1e30), Err(ConvertError::Overflow));
        assert_eq!(
            f32_to_f16_rne_checked(f32::INFINITY),
            Err(ConvertError::NotFinite)
        );
        assert_eq!(f32_to_f16_rne_checked(f32::NAN), Err(ConvertError::NotFinite));
        assert_eq!(f32_to_f16_rne(65520.0), 0x7c00);
    }

    #[test]
    fn nan_stays_nan_with_sign() {
        assert_eq!(f32_to_f16_rne(f32::from_bits(0x7f80_0001)) & 0x7c00, 0x7c00);
        assert_ne!(f32_to_f16_rne(f32::from_bits(0x7f80_0001)) & 0x3ff, 0);
        assert_eq!(f32_to_f16_rne(f32::from_bits(0xffc0_0000)), 0xfe00);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 20_000 }))]
        #[test]
        fn rne_matches_half_on_raw_bits(bits in proptest::prelude::any::<u32>()) {
            let x = f32::from_bits(bits);
            let ours = f32_to_f16_rne(x);
            let theirs = f16::from_f32(x).to_bits();
            if x.is_nan() {
                proptest::prop_assert!(ours & 0x7c00 == 0x7c00 && ours & 0x3ff != 0);
            } else {
                proptest::prop_assert_eq!(ours, theirs, "{:#010x}", bits);
            }
        }
    }
}
