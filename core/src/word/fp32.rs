//! FP32, IEEE-754 binary32 (section 3.1). All 2^32 words are valid and persist bit for bit; this
//! file holds the little-endian word codec and the F64 -> FP32 conversion a recipe may name.

use crate::error::ConvertError;

/// Decode one little-endian FP32 word, bit for bit (NaN payloads untouched).
pub const fn fp32_from_le(b: [u8; 4]) -> f32 {
    f32::from_bits(u32::from_le_bytes(b))
}

/// Encode one FP32 word little-endian, bit for bit.
pub const fn fp32_to_le(x: f32) -> [u8; 4] {
    x.to_bits().to_le_bytes()
}

/// F64 -> binary32 with round-to-nearest-even (the conversion section 7 applies to sources),
/// failing when the source is not finite or the result is not a finite binary32.
pub fn f64_to_f32_rne_checked(x: f64) -> Result<f32, ConvertError> {
    if !x.is_finite() {
        return Err(ConvertError::NotFinite);
    }
    // Rust's `as` from f64 to f32 is IEEE round-to-nearest-even, subnormals included.
    let y = x as f32;
    if y.is_finite() {
        Ok(y)
    } else {
        Err(ConvertError::Overflow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_bit_for_bit() {
        for bits in [
            0x0000_0000u32,
            0x8000_0000,
            0x0000_0001, // min subnormal 2^-149
            0x807f_ffff,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0x7f80_0001, // signalling NaN, payload 1
            0xffbf_ffff, // negative signalling NaN, full payload
            0x7fff_ffff,
            0x3f80_0000,
        ] {
            assert_eq!(fp32_to_le(fp32_from_le(bits.to_le_bytes())), bits.to_le_bytes());
            assert_eq!(fp32_from_le(bits.to_le_bytes()).to_bits(), bits);
        }
        assert_eq!(f32::from_bits(0x0000_0001) as f64, crate::testutil::p2(-149));
    }

    #[test]
    fn f64_source_rounds_to_nearest_even_and_rejects_non_finite() {
        // 1 + 2^-24 is the tie between 1 and 1 + 2^-23: even is 1.
        assert_eq!(f64_to_f32_rne_checked(1.0 + crate::testutil::p2(-24)), Ok(1.0));
        assert_eq!(
            f64_to_f32_rne_checked(1.0 + 3.0 * crate::testutil::p2(-24))
                .unwrap()
                .to_bits(),
            0x3f80_0002
        );
        assert_eq!(f64_to_f32_rne_checked(crate::testutil::p2(-150)), Ok(0.0));
        assert_eq!(
            f64_to_f32_rne_checked(3.0 * crate::testutil::p2(-151))
                .unwrap()
                .to_bits(),
            1
        );
        assert_eq!(f64_to_f32_rne_checked(f64::NAN), Err(ConvertError::NotFinite));
        assert_eq!(
            f64_to_f32_rne_checked(f64::INFINITY),
            Err(ConvertError::NotFinite)
        );
        assert_eq!(f64_to_f32_rne_checked(1e39), Err(ConvertError::Overflow));
        assert_eq!(f64_to_f32_rne_checked(f32::MAX as f64), Ok(f32::MAX));
    }
}
