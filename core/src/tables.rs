//! Every decode table, as `pub const`: the single source for Rust, the C header and CUDA
//! (section 3.3). The C header and the CUDA `__constant__` copies are generated from these
//! arrays; nothing else spells the values out.
//!
//! Tables are given both as `f32` and as binary32 bit patterns (`*_BITS`), which is what a C
//! header can state without relying on the C compiler's decimal-to-float rounding.

/// E2M1 words 0..15 to their values (section 3.3): positive words 0..7 decode to
/// 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0 and bit 3 negates. Word 0x8 is -0.0.
pub const E2M1_TO_F32: [f32; 16] = [
    0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0,
];

/// [`E2M1_TO_F32`] as binary32 bits.
pub const E2M1_TO_F32_BITS: [u32; 16] = {
    let mut t = [0u32; 16];
    let mut i = 0;
    while i < 16 {
        t[i] = E2M1_TO_F32[i].to_bits();
        i += 1;
    }
    t
};

/// E4M3FN words 0..255 to binary32 bits (section 3.3), built from the bit fields: sign bit 7,
/// exponent e in bits 6:3 (bias 7), fraction m in bits 2:0. `e == 0` is zero or the subnormal
/// `m * 2^-9`; `e == 15, m == 7` (0x7f, 0xff) is NaN, given here as the quiet NaN with the word's
/// sign (0x7fc00000 / 0xffc00000). There are no infinities.
pub const E4M3FN_TO_F32_BITS: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut w = 0;
    while w < 256 {
        let sign = ((w as u32) & 0x80) << 24;
        let e = ((w >> 3) & 0xf) as u32;
        let m = (w & 0x7) as u32;
        t[w] = if e == 15 && m == 7 {
            sign | 0x7fc0_0000
        } else if e == 0 {
            if m == 0 {
                sign
            } else {
                // m * 2^-9 with m in 1..7: leading one at bit p gives 2^(p-9), i.e. biased
                // exponent 118 + p, and the bits below it become the top of the fraction.
                let p = 31 - m.leading_zeros();
                let frac = (m << (23 - p)) & 0x007f_ffff;
                sign | ((118 + p) << 23) | frac
            }
        } else {
            // (1 + m/8) * 2^(e-7): binary32 exponent field e - 7 + 127.
            sign | ((e + 120) << 23) | (m << 20)
        };
        w += 1;
    }
    t
};

/// [`E4M3FN_TO_F32_BITS`] as `f32` values.
pub const E4M3FN_TO_F32: [f32; 256] = {
    let mut t = [0f32; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = f32::from_bits(E4M3FN_TO_F32_BITS[i]);
        i += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The section 3.3 formulas, evaluated independently in f64.
    fn e4m3fn_formula(w: u8) -> Option<f64> {
        let sign = if w & 0x80 != 0 { -1.0 } else { 1.0 };
        let e = ((w >> 3) & 0xf) as i32;
        let m = (w & 7) as f64;
        match (e, w & 7) {
            (15, 7) => None,
            (0, _) => Some(sign * m * crate::testutil::p2(-9)),
            _ => Some(sign * (1.0 + m / 8.0) * crate::testutil::p2(e - 7)),
        }
    }

    fn e2m1_formula(w: u8) -> f64 {
        let sign = if w & 8 != 0 { -1.0 } else { 1.0 };
        let e = ((w >> 1) & 3) as i32;
        let m = (w & 1) as f64;
        sign * if e == 0 {
            m * 0.5
        } else {
            (1.0 + m / 2.0) * crate::testutil::p2(e - 1)
        }
    }

    #[test]
    fn all_256_e4m3fn_words_match_the_section_3_3_formula() {
        for w in 0..=255u8 {
            let v = E4M3FN_TO_F32[w as usize];
            match e4m3fn_formula(w) {
                None => {
                    assert!(v.is_nan(), "{w:#04x}");
                    assert!(w == 0x7f || w == 0xff);
                }
                Some(x) => {
                    assert_eq!(v as f64, x, "{w:#04x}");
                    assert_eq!(v.is_sign_negative(), w & 0x80 != 0, "{w:#04x} sign");
                }
            }
            assert_eq!(
                E4M3FN_TO_F32[w as usize].to_bits(),
                E4M3FN_TO_F32_BITS[w as usize]
            );
        }
        // Spot values: max normal 448, min subnormal 2^-9, 0x80 is -0.
        assert_eq!(E4M3FN_TO_F32[0x7e], 448.0);
        assert_eq!(E4M3FN_TO_F32[0xfe], -448.0);
        assert_eq!(E4M3FN_TO_F32[0x01], crate::testutil::p2f(-9));
        assert_eq!(E4M3FN_TO_F32_BITS[0x80], 0x8000_0000);
        assert_eq!(E4M3FN_TO_F32[0x08], crate::testutil::p2f(-6));
    }

    #[test]
    fn all_16_e2m1_words_match_the_section_3_3_formula() {
        for w in 0..16u8 {
            let v = E2M1_TO_F32[w as usize];
            assert_eq!(v as f64, e2m1_formula(w), "{w:#x}");
            assert_eq!(v.is_sign_negative(), w & 8 != 0, "{w:#x} sign");
            assert_eq!(v.to_bits(), E2M1_TO_F32_BITS[w as usize]);
        }
        assert_eq!(E2M1_TO_F32_BITS[8], 0x8000_0000);
    }
}
