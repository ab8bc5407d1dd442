//! BF16, the bfloat16 bit encoding (section 3.1): a direct format and the FP8 row-scale word
//! (section 3.4). All 65,536 words are valid; signed zeros, infinities and NaN payloads are
//! distinct words that a direct layout preserves.

use crate::error::ConvertError;

/// Exact expansion to binary32: the word in the high 16 bits, 16 zero low bits (section 3.1).
/// NaN payloads and the quiet/signalling bit are kept as bits.
pub const fn bf16_to_f32_exact(w: u16) -> f32 {
    f32::from_bits((w as u32) << 16)
}

/// Round a binary32 to BF16 with round-to-nearest, ties-to-even (bit-level oracle).
///
/// Subnormals round like any other value (no flush-to-zero); finite values that round past the
/// largest finite BF16 become infinity (use [`f32_to_bf16_rne_checked`] to have that reported);
/// a NaN keeps its sign and top 7 payload bits and is forced quiet, so it never becomes infinity.
pub const fn f32_to_bf16_rne(x: f32) -> u16 {
    let bits = x.to_bits();
    if bits & 0x7fff_ffff > 0x7f80_0000 {
        return ((bits >> 16) as u16) | 0x0040;
    }
    let lsb = (bits >> 16) & 1;
    // Adding 0x7fff plus the kept LSB makes a tie round to the even word; a carry propagates
    // into the exponent (and up to infinity) by itself.
    ((bits + 0x7fff + lsb) >> 16) as u16
}

/// [`f32_to_bf16_rne`] that reports a non-finite input and a finite input that rounds to infinity.
pub const fn f32_to_bf16_rne_checked(x: f32) -> Result<u16, ConvertError> {
    if x.to_bits() & 0x7f80_0000 == 0x7f80_0000 {
        return Err(ConvertError::NotFinite);
    }
    let w = f32_to_bf16_rne(x);
    if w & 0x7fff == 0x7f80 {
        Err(ConvertError::Overflow)
    } else {
        Ok(w)
    }
}

/// Whether a BF16 word is finite.
pub const fn bf16_is_finite(w: u16) -> bool {
    w & 0x7f80 != 0x7f80
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::bf16;

    #[test]
    #[cfg_attr(miri, ignore)]
    fn exact_expansion_matches_half_for_all_65536_words() {
        for w in 0..=u16::MAX {
            let ours = bf16_to_f32_exact(w).to_bits();
            assert_eq!(ours, (w as u32) << 16);
            let theirs = bf16::from_bits(w).to_f32();
            if theirs.is_nan() {
                assert!(f32::from_bits(ours).is_nan());
            } else {
                assert_eq!(ours, theirs.to_bits(), "{w:#06x}");
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn every_word_round_trips_bit_for_bit_including_nan_payloads() {
        for w in 0..=u16::MAX {
            let back = f32_to_bf16_rne(bf16_to_f32_exact(w));
            if w & 0x7fff > 0x7f80 {
                // NaN: sign and payload kept, quiet bit forced.
                assert_eq!(back, w | 0x0040, "{w:#06x}");
            } else {
                assert_eq!(back, w, "{w:#06x}");
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn rne_matches_half_at_every_midpoint() {
        for w in 0..0x7f7fu16 {
            for sign in [0u32, 0x8000_0000] {
                let mid = ((w as u32) << 16) | 0x8000 | sign;
                for b in [mid - 1, mid, mid + 1] {
                    let x = f32::from_bits(b);
                    assert_eq!(f32_to_bf16_rne(x), bf16::from_f32(x).to_bits(), "{b:#010x}");
                }
            }
        }
    }

    #[test]
    fn ties_to_even_and_overflow() {
        assert_eq!(f32_to_bf16_rne(f32::from_bits(0x3f80_8000)), 0x3f80); // tie, even kept
        assert_eq!(f32_to_bf16_rne(f32::from_bits(0x3f81_8000)), 0x3f82); // tie, odd rounds up
        assert_eq!(f32_to_bf16_rne(f32::from_bits(0xbf81_8000)), 0xbf82);
        assert_eq!(f32_to_bf16_rne(f32::from_bits(0x0000_8000)), 0x0000); // subnormal tie
        assert_eq!(f32_to_bf16_rne(f32::from_bits(0x0001_8000)), 0x0002);
        assert_eq!(f32_to_bf16_rne_checked(f32::MAX), Err(ConvertError::Overflow));
        assert_eq!(f32_to_bf16_rne_checked(f32::from_bits(0x7f7f_7fff)), Ok(0x7f7f));
        assert_eq!(
            f32_to_bf16_rne_checked(f32::NEG_INFINITY),
            Err(ConvertError::NotFinite)
        );
        assert_eq!(f32_to_bf16_rne(f32::from_bits(0x7f80_0001)), 0x7fc0); // sNaN stays NaN
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 20_000 }))]
        #[test]
        fn rne_matches_half_on_raw_bits(bits in proptest::prelude::any::<u32>()) {
            let x = f32::from_bits(bits);
            if !x.is_nan() {
                proptest::prop_assert_eq!(f32_to_bf16_rne(x), bf16::from_f32(x).to_bits());
            } else {
                proptest::prop_assert!(f32_to_bf16_rne(x) & 0x7fff > 0x7f80);
            }
        }
    }
}
