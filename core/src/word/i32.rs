//! I32, 32-bit two's complement (section 3.1): every word valid, value interval
//! [-2147483648, 2147483647], no scale, saturation or sentinel.

use crate::error::ConvertError;

/// The value of unsigned logical word `u`: `u` if `u < 2^31`, else `u - 2^32` (section 3.1).
pub const fn i32_value(u: u32) -> i32 {
    if u < (1 << 31) {
        u as i32
    } else {
        (u as i64 - (1i64 << 32)) as i32
    }
}

/// The logical word of value `v` (inverse of [`i32_value`]).
pub const fn i32_word(v: i32) -> u32 {
    v as u32
}

/// I64 -> I32 with a range check: a value outside I32 is an error, never wrapped or saturated
/// (section 3.1).
pub const fn i64_to_i32_checked(v: i64) -> Result<i32, ConvertError> {
    if v < i32::MIN as i64 || v > i32::MAX as i64 {
        Err(ConvertError::OutOfRange)
    } else {
        Ok(v as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_formula_and_extrema() {
        assert_eq!(i32_value(0), 0);
        assert_eq!(i32_value(0x7fff_ffff), 2_147_483_647);
        assert_eq!(i32_value(0x8000_0000), -2_147_483_648);
        assert_eq!(i32_value(0xffff_ffff), -1);
        for v in [i32::MIN, -1, 0, 1, i32::MAX] {
            assert_eq!(i32_value(i32_word(v)), v);
        }
    }

    #[test]
    fn i64_conversion_never_wraps() {
        assert_eq!(i64_to_i32_checked(i32::MAX as i64), Ok(i32::MAX));
        assert_eq!(i64_to_i32_checked(i32::MIN as i64), Ok(i32::MIN));
        assert_eq!(
            i64_to_i32_checked(i32::MAX as i64 + 1),
            Err(ConvertError::OutOfRange)
        );
        assert_eq!(
            i64_to_i32_checked(i32::MIN as i64 - 1),
            Err(ConvertError::OutOfRange)
        );
        assert_eq!(i64_to_i32_checked(1 << 32), Err(ConvertError::OutOfRange));
    }

    proptest::proptest! {
        #[test]
        fn value_matches_two_complement_reinterpretation(u in proptest::prelude::any::<u32>()) {
            proptest::prop_assert_eq!(i32_value(u), u as i32);
            proptest::prop_assert_eq!(i32_word(i32_value(u)), u);
        }
    }
}
