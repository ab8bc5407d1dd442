//! The AVX-512 (`Isa::V4`) paths: the 16-lane F32 kernels on real 512-bit registers and the
//! AVX-512BW integer dot (`_mm512_maddubs_epi16`, `_mm512_mask_sub_epi8`, ...) of the I8
//! profile. They compile everywhere on x86-64; these tests run them where the CPU has AVX-512
//! and otherwise print `SKIPPED: ...` (run with `-- --nocapture` to see the line) and check
//! nothing — a skipped run is not evidence for these paths.

mod common;

use common::*;
use ninfer_simd::{Isa, KernelError, Profile};

fn v4_or_skip(what: &str) -> bool {
    if Isa::V4.is_available() {
        return true;
    }
    println!("SKIPPED: {what}: this CPU has no AVX-512 (F/BW/CD/DQ/VL); the Isa::V4 kernels were not run");
    false
}

#[test]
fn v4_dequantize_matches_oracle_or_skipped() {
    if !v4_or_skip("AVX-512 dequantize") {
        assert_eq!(
            Isa::V4.dequantize_f32(&build(FORMATS[0], 1, 1, 1).0, &[], 0..0, &mut [], 1),
            Err(KernelError::IsaUnavailable(Isa::V4))
        );
        return;
    }
    for f in FORMATS {
        for &k in ks_for(f) {
            for n in NS {
                let (desc, p) = build(f, n, k, 11 + k as u64);
                check_dequant(Isa::V4, &desc, &p, 2);
            }
        }
    }
}

/// The BF16 output by AVX-512 BF16 (`vcvtne2ps2bf16`, `Isa::V4` where the CPU has it) against
/// the oracle, and the same rows by `Isa::V4NoVnni` (which turns the extension off: the BF16
/// words rounded in integer registers). The FP32 tensor holds every BF16 high half with low
/// halves at and around the rounding ties, so every binary32 class is met: zeros, subnormals
/// (which the instruction would read as zero: those blocks are rounded value by value), normals,
/// infinities, NaNs with every top payload; rows 7 long shift the 32-value blocks against them.
#[test]
fn v4_bf16_output_by_avx512bf16_matches_the_oracle_or_skipped() {
    if !v4_or_skip("AVX-512 BF16 output") {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    let bf16 = std::arch::is_x86_feature_detected!("avx512bf16");
    #[cfg(not(target_arch = "x86_64"))]
    let bf16 = false;
    if !bf16 {
        println!("SKIPPED: this CPU has AVX-512 but not AVX-512 BF16; the vcvtne2ps2bf16 route was not run");
        return;
    }
    let lows = [0u32, 1, 0x1234, 0x7fff, 0x8000, 0x8001, 0xffff];
    let words: Vec<u32> = (0..1u32 << 16)
        .flat_map(|h| lows.iter().map(move |&l| h << 16 | l))
        .collect();
    for k in [words.len(), 7] {
        let n = words.len() / k;
        let desc = ninfer_core::layout::TensorDesc::for_format(ninfer_core::registry::Format::Fp32, &[n, k])
            .unwrap();
        let p: Vec<u8> = words[..n * k].iter().flat_map(|w| w.to_le_bytes()).collect();
        for isa in [Isa::V4, Isa::V4NoVnni] {
            check_dequant(isa, &desc, &p, 2);
        }
    }
    for f in FORMATS {
        for &k in ks_for(f) {
            let (desc, p) = build(f, 7, k, 31 + k as u64);
            for isa in [Isa::V4, Isa::V4NoVnni] {
                check_dequant(isa, &desc, &p, 2);
            }
        }
    }
}

#[test]
fn v4_gemv_meets_criteria_or_skipped() {
    if !v4_or_skip("AVX-512 GEMV (F32 16-lane, I8 AVX-512BW)") {
        return;
    }
    for f in FORMATS {
        for &k in ks_for(f) {
            for n in NS {
                let (desc, p) = build(f, n, k, 23 + k as u64);
                let want = oracle(&desc, &p);
                let x = activations(k, 1, 5, false);
                check_gemv(Isa::V4, &desc, &p, &want, Profile::F32, &x, 3);
                if I8_FORMATS.contains(&f) {
                    check_gemv(Isa::V4, &desc, &p, &want, Profile::I8, &x, 3);
                    let xs = activations(k, 8, 6, false);
                    check_batch(Isa::V4, &desc, &p, Profile::I8, &xs, 8, 2);
                }
                let xs = activations(k, 5, 7, false);
                check_batch(Isa::V4, &desc, &p, Profile::F32, &xs, 5, 2);
            }
        }
    }
}
