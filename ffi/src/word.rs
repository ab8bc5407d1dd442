//! Per-word oracles over the C ABI: the exact expansions and reconstructions of
//! numeric-formats sections 3.1, 3.3, 3.4 and 6.2, as binary32 bit patterns. They take every
//! input word (no invalid inputs) and cannot fail; C, C++ and CUDA code checks its own decoders
//! against them (tests/c/cuda_decode_host.cpp).

use crate::boundary::guard_value;
use ninfer_core::layout::blockscale::scale_index;
use ninfer_core::scheme::{fp8_row, grouped, nvfp4};
use ninfer_core::word::bf16::{bf16_to_f32_exact, f32_to_bf16_rne};
use ninfer_core::word::e2m1::e2m1_to_f32;
use ninfer_core::word::e4m3fn::e4m3fn_to_f32;
use ninfer_core::word::f16::f16_to_f32_bits;

/// Exact binary32 expansion of a BF16 word (the word in the high 16 bits), as bits.
#[no_mangle]
pub extern "C" fn ninfer_bf16_to_f32_bits(w: u16) -> u32 {
    guard_value(0, || bf16_to_f32_exact(w).to_bits())
}

/// Exact binary32 expansion of an IEEE binary16 word, as bits (NaN payloads kept).
#[no_mangle]
pub extern "C" fn ninfer_f16_to_f32_bits(h: u16) -> u32 {
    guard_value(0, || f16_to_f32_bits(h))
}

/// Value of an E2M1 word (low 4 bits of `w`; higher bits ignored), as binary32 bits.
#[no_mangle]
pub extern "C" fn ninfer_e2m1_to_f32_bits(w: u8) -> u32 {
    guard_value(0, || e2m1_to_f32(w).to_bits())
}

/// Value of an E4M3FN word as binary32 bits (0x7f / 0xff give the quiet NaN of their sign).
#[no_mangle]
pub extern "C" fn ninfer_e4m3fn_to_f32_bits(w: u8) -> u32 {
    guard_value(0, || e4m3fn_to_f32(w).to_bits())
}

/// Round binary32 bits to BF16 with round-to-nearest-even (no flush-to-zero; NaN keeps its sign
/// and top payload bits and is quieted; a finite value may round to infinity).
#[no_mangle]
pub extern "C" fn ninfer_f32_to_bf16_rne(bits: u32) -> u16 {
    guard_value(0, || f32_to_bf16_rne(f32::from_bits(bits)))
}

/// Grouped reconstruction (section 6.2): `binary32(f16(scale) * code)`, as bits.
#[no_mangle]
pub extern "C" fn ninfer_grouped_reconstruct_bits(scale: u16, code: i8) -> u32 {
    guard_value(0, || grouped::reconstruct(scale, code).to_bits())
}

/// NVFP4 reconstruction (section 3.3): `e2m1(code) * e4m3fn(scale) / d_w` in binary32, as bits.
#[no_mangle]
pub extern "C" fn ninfer_nvfp4_reconstruct_bits(code: u8, scale: u8, divisor_bits: u32) -> u32 {
    guard_value(0, || nvfp4::reconstruct(code, scale, divisor_bits).to_bits())
}

/// FP8 row-scaled reconstruction (section 3.4): `binary32(e4m3fn(code) * bf16(scale))`, as bits.
#[no_mangle]
pub extern "C" fn ninfer_fp8_row_reconstruct_bits(code: u8, scale: u16) -> u32 {
    guard_value(0, || fp8_row::reconstruct(code, scale).to_bits())
}

/// Index of the NVFP4 scale of (row `n`, block `kb`) inside the scale plane of a tensor with
/// `k_tiles` 128x4 K-tiles (layouts.md). Returns `UINT64_MAX` if the index overflows.
#[no_mangle]
pub extern "C" fn ninfer_nvfp4_scale_index(n: u64, kb: u64, k_tiles: u64) -> u64 {
    guard_value(u64::MAX, || {
        // The formula's largest term is (n / 128) * nkt * 512; check it before evaluating.
        let ok = (n / 128)
            .checked_mul(k_tiles)
            .and_then(|x| x.checked_mul(512))
            .and_then(|x| x.checked_add((kb / 4).checked_mul(512)?))
            .and_then(|x| x.checked_add(511));
        match (
            ok,
            usize::try_from(n),
            usize::try_from(kb),
            usize::try_from(k_tiles),
        ) {
            (Some(_), Ok(n), Ok(kb), Ok(t)) => scale_index(n, kb, t) as u64,
            _ => u64::MAX,
        }
    })
}
