//! GEMV and batch GEMV: every instruction-set path meets its profile's named criterion against
//! `y_ref` (the f64 sum of exactly decoded weights times x) at the shapes, with unaligned
//! buffers; results do not depend on the thread count; the batch equals the single-vector GEMV
//! bit for bit for B = 1..8; requests outside the whitelist fail naming the combination.

mod common;

use common::*;
use ninfer_core::layout::TensorDesc;
use ninfer_core::registry::{Format, Layout};
use ninfer_simd::whitelist::{combinations, is_listed};
use ninfer_simd::{Isa, KernelError, Op, Platform, Profile, MAX_BATCH};

fn every_shape(format: Format) {
    let i8_too = I8_FORMATS.contains(&format);
    for (i, &k) in ks_for(format).iter().enumerate() {
        for (j, &n) in NS.iter().enumerate() {
            let seed = 0x51 + 17 * i as u64 + j as u64;
            let (desc, p) = build(format, n, k, seed);
            let want = oracle(&desc, &p);
            let threads = 1 + (i + j) % 3;
            let x = activations(k, 1, seed, false);
            let xp = activations(k, 1, seed + 1, true);
            for isa in Isa::available() {
                check_gemv(isa, &desc, &p, &want, Profile::F32, &x, threads);
                check_gemv(isa, &desc, &p, &want, Profile::F32, &xp, threads);
                if i8_too {
                    check_gemv(isa, &desc, &p, &want, Profile::I8, &x, threads);
                    check_gemv(isa, &desc, &p, &want, Profile::I8, &xp, threads);
                }
            }
        }
    }
}

#[test]
fn q4_gemv_meets_criteria() {
    every_shape(Format::Q4G64F16S);
}

#[test]
fn q5_gemv_meets_criteria() {
    every_shape(Format::Q5G64F16S);
}

#[test]
fn q6_gemv_meets_criteria() {
    every_shape(Format::Q6G64F16S);
}

#[test]
fn w8_gemv_meets_criteria() {
    every_shape(Format::W8G32F16S);
}

#[test]
fn nvfp4_gemv_meets_criteria() {
    every_shape(Format::Nvfp4);
}

#[test]
fn fp8_bf16_fp32_gemv_meet_the_f32_criterion() {
    every_shape(Format::Fp8E4m3fnRowBf16s);
    every_shape(Format::Bf16);
    every_shape(Format::Fp32);
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    for f in FORMATS {
        let k = if f == Format::Nvfp4 { 144 } else { 129 };
        let (desc, p) = build(f, 129, k, 77);
        let x = activations(k, 1, 78, false);
        for isa in Isa::available() {
            for profile in [Profile::F32, Profile::I8] {
                if !is_listed(f, desc.layout(), Op::Gemv, profile, isa.platform()) {
                    continue;
                }
                let mut y1 = vec![0f32; 129];
                isa.gemv(&desc, &p, profile, &x, &mut y1, 1).unwrap();
                for t in [2, 3, 8] {
                    let mut yt = vec![0f32; 129];
                    isa.gemv(&desc, &p, profile, &x, &mut yt, t).unwrap();
                    assert!(
                        y1.iter().zip(&yt).all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{isa:?} {profile:?} {} threads {t}",
                        f.name()
                    );
                }
                let mut d = vec![0f32; 129 * k];
                let mut d3 = vec![0f32; 129 * k];
                isa.dequantize_f32(&desc, &p, 0..129, &mut d, 1).unwrap();
                isa.dequantize_f32(&desc, &p, 0..129, &mut d3, 3).unwrap();
                assert!(d.iter().zip(&d3).all(|(a, b)| a.to_bits() == b.to_bits()));
            }
        }
    }
}

#[test]
fn batch_equals_single_vector_gemv_for_b_1_to_8() {
    for f in FORMATS {
        let k = if f == Format::Nvfp4 { 80 } else { 65 };
        let (desc, p) = build(f, 7, k, 5);
        let want = oracle(&desc, &p);
        for isa in Isa::available() {
            for profile in [Profile::F32, Profile::I8] {
                if !is_listed(f, desc.layout(), Op::GemvBatch, profile, isa.platform()) {
                    continue;
                }
                for nb in 1..=MAX_BATCH {
                    let xs = activations(k, nb, 100 + nb as u64, false);
                    check_batch(isa, &desc, &p, profile, &xs, nb, 1 + nb % 3);
                    check_gemv(isa, &desc, &p, &want, profile, &xs[(nb - 1) * k..], 2);
                }
            }
        }
    }
}

#[test]
fn requests_outside_the_whitelist_fail_naming_the_combination() {
    let isa = Isa::detect();
    let plat = isa.platform();
    let d32 = TensorDesc::for_format(Format::I32, &[2, 3]).unwrap();
    let e = isa
        .gemv(&d32, &[0u8; 24], Profile::F32, &[0.0; 3], &mut [0.0; 2], 1)
        .unwrap_err();
    assert_eq!(
        e,
        KernelError::Unsupported {
            format: Format::I32,
            layout: Layout::ContiguousLeV1,
            op: Op::Gemv,
            profile: Profile::F32,
            platform: plat
        }
    );
    let msg = e.to_string();
    assert!(
        msg.contains("I32") && msg.contains("contiguous-le-v1") && msg.contains("Gemv"),
        "{msg}"
    );
    for f in [Format::Fp8E4m3fnRowBf16s, Format::Bf16, Format::Fp32] {
        let (desc, p) = build(f, 2, 64, 3);
        let e = isa
            .gemv(&desc, &p, Profile::I8, &[0.5; 64], &mut [0.0; 2], 1)
            .unwrap_err();
        assert!(unsupported(e), "{f:?} I8 must be refused: {e:?}");
        assert!(
            e.to_string().contains(f.name()) && e.to_string().contains("I8"),
            "{e}"
        );
        let e = isa
            .gemv_batch(&desc, &p, Profile::I8, &[0.5; 128], 2, &mut [0.0; 4], 1)
            .unwrap_err();
        assert!(unsupported(e));
    }
    let (desc, p) = build(Format::Q4G64F16S, 2, 64, 3);
    assert!(unsupported(
        isa.gemv(&desc, &p, Profile::Exact, &[0.5; 64], &mut [0.0; 2], 1)
            .unwrap_err()
    ));
    // The table: 8 formats x 4 dequantize ops + 8 x 2 GEMV ops (F32) + 5 x 2 (I8), per platform.
    assert_eq!(combinations().count(), (8 * 4 + 8 * 2 + 5 * 2) * 4);
    assert!(combinations().all(|(f, l, ..)| f != Format::I32 && f.layout() == l));
    for p in Platform::ALL {
        assert!(is_listed(
            Format::Nvfp4,
            Layout::BlockscaleK16M128x4V1,
            Op::GemvBatch,
            Profile::I8,
            p
        ));
        assert!(!is_listed(
            Format::Fp8E4m3fnRowBf16s,
            Layout::RowScaleV1,
            Op::Gemv,
            Profile::I8,
            p
        ));
    }
}

#[test]
fn bad_requests_are_errors_not_panics() {
    let isa = Isa::detect();
    let (desc, p) = build(Format::W8G32F16S, 3, 40, 9);
    let x = [0.25f32; 40];
    let mut y = [0f32; 3];
    assert_eq!(
        isa.gemv(&desc, &p, Profile::F32, &x[..39], &mut y, 1),
        Err(KernelError::BufferLength {
            what: "x",
            expected: 40,
            actual: 39
        })
    );
    assert_eq!(
        isa.gemv(&desc, &p, Profile::I8, &x, &mut y[..2], 1),
        Err(KernelError::BufferLength {
            what: "y",
            expected: 3,
            actual: 2
        })
    );
    assert_eq!(
        isa.gemv_batch(&desc, &p, Profile::F32, &[], 0, &mut [], 1),
        Err(KernelError::BadBatch { batch: 0 })
    );
    assert_eq!(
        isa.gemv_batch(&desc, &p, Profile::F32, &[0.0; 360], 9, &mut [0.0; 27], 1),
        Err(KernelError::BadBatch { batch: 9 })
    );
    let mut xn = x;
    xn[17] = f32::NAN;
    assert_eq!(
        isa.gemv(&desc, &p, Profile::I8, &xn, &mut y, 1),
        Err(KernelError::NonFiniteActivation { batch: 0, k: 17 })
    );
    let d3 = TensorDesc::for_format(Format::Fp32, &[2, 2, 2]).unwrap();
    assert_eq!(
        isa.gemv(&d3, &[0u8; 32], Profile::F32, &[0.0; 2], &mut [0.0; 2], 1),
        Err(KernelError::NotAMatrix { rank: 3 })
    );
    assert!(matches!(
        isa.gemv(&desc, &p[..p.len() - 1], Profile::F32, &x, &mut y, 1),
        Err(KernelError::Layout(_))
    ));
    // Zero activations give exact zeros in both profiles.
    for profile in [Profile::F32, Profile::I8] {
        isa.gemv(&desc, &p, profile, &[0.0; 40], &mut y, 2).unwrap();
        assert!(y.iter().all(|v| *v == 0.0));
    }
}

/// NVFP4 with every E2M1 code and every finite E4M3FN scale byte (both signs), at K on and off
/// the 64-position tiles and N across the 128-row scale tiles: every path meets both criteria.
#[test]
fn nvfp4_every_code_and_scale_meets_the_criteria() {
    use ninfer_core::layout::Geometry;
    for (i, &k) in [16usize, 32, 48, 4112].iter().enumerate() {
        for &n in &[130usize, 257] {
            if k == 4112 && n > 130 {
                continue;
            }
            let desc = TensorDesc::for_format(Format::Nvfp4, &[n, k]).unwrap();
            let Geometry::Blockscale(g) = desc.geometry() else {
                unreachable!()
            };
            let codes: Vec<u8> = (0..n * k).map(|j| ((j * 7 + j / 16) % 16) as u8).collect();
            let finite: Vec<u8> = (0..=255u8).filter(|b| b & 0x7f != 0x7f).collect();
            let scales: Vec<u8> = (0..n * k / 16)
                .map(|j| finite[(j * 37 + i) % finite.len()])
                .collect();
            let mut p = vec![0u8; desc.payload_len()];
            g.pack(&codes, &scales, 1.5f32.to_bits(), &mut p).unwrap();
            let want = oracle(&desc, &p);
            let x = activations(k, 1, 40 + i as u64, false);
            for isa in Isa::available() {
                for profile in [Profile::F32, Profile::I8] {
                    check_gemv(isa, &desc, &p, &want, profile, &x, 1 + i % 2);
                }
            }
        }
    }
}
