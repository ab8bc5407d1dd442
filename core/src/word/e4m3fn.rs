//! E4M3FN (section 3.3): sign bit 7, exponent bits 6:3 with bias 7, fraction bits 2:0, no
//! infinities, NaN only at 0x7f and 0xff. It is the NVFP4 block-scale word and the FP8 code
//! word; it is not a direct format (section 1).

use crate::tables::E4M3FN_TO_F32;

/// The exact binary32 value of word `w` (NaN words give a quiet NaN of the same sign).
pub const fn e4m3fn_to_f32(w: u8) -> f32 {
    E4M3FN_TO_F32[w as usize]
}

/// Whether `w` is one of the two NaN words 0x7f / 0xff.
pub const fn e4m3fn_is_nan(w: u8) -> bool {
    w & 0x7f == 0x7f
}
