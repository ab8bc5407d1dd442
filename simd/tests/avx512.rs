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
