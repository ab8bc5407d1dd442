//! E2M1, the NVFP4 code word (section 3.3): sign bit 3, exponent bits 2:1, mantissa bit 0. All 16
//! words are valid and distinct (0x0 and 0x8 are +0 and -0).

use crate::tables::E2M1_TO_F32;

/// The value of E2M1 word `w` (low 4 bits; higher bits are ignored — validate with
/// [`e2m1_is_word`] first where the input is untrusted).
pub const fn e2m1_to_f32(w: u8) -> f32 {
    E2M1_TO_F32[(w & 0xf) as usize]
}

/// Whether `w` fits in 4 bits.
pub const fn e2m1_is_word(w: u8) -> bool {
    w < 16
}
