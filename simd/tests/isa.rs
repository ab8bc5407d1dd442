//! Which instruction-set paths this machine runs (printed with `-- --nocapture`), and that the
//! paths a target must have are there: on x86-64 with AVX2, `V3` and its 16-lane twin `V3_512b`;
//! on aarch64, `Neon` and `NeonNoDotprod`; everywhere, `Scalar`.

use ninfer_simd::{Isa, KernelError, Platform};

#[test]
fn available_paths_are_reported_and_cover_the_target() {
    let avail = Isa::available();
    println!("Isa::detect() = {:?}; available: {avail:?}", Isa::detect());
    assert!(avail.contains(&Isa::Scalar));
    assert!(avail.contains(&Isa::detect()));
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        assert!(avail.contains(&Isa::V3) && avail.contains(&Isa::V3_512b));
    }
    #[cfg(target_arch = "aarch64")]
    {
        println!("dotprod: {}", std::arch::is_aarch64_feature_detected!("dotprod"));
        assert!(avail.contains(&Isa::Neon) && avail.contains(&Isa::NeonNoDotprod));
    }
    for isa in Isa::ALL {
        if !avail.contains(&isa) {
            // An unavailable path is refused, never emulated.
            let r = isa.gemv_batch(
                &ninfer_simd::core::layout::TensorDesc::for_format(
                    ninfer_simd::core::registry::Format::Fp32,
                    &[1, 1],
                )
                .unwrap(),
                &[0; 4],
                ninfer_simd::Profile::F32,
                &[0.0],
                1,
                &mut [0.0],
                1,
            );
            assert_eq!(r, Err(KernelError::IsaUnavailable(isa)));
        }
    }
    assert_eq!(Isa::V3_512b.platform(), Platform::X86V3);
}
