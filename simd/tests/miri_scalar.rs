//! The scalar paths on small shapes, written to run under Miri (`.ci/run`:
//! `cargo +nightly miri test -p ninfer-simd --test miri_scalar`): dequantize, gather and GEMV
//! for every whitelisted format, and the encoder, each compared with the core oracle. The same
//! checks run natively with the other test files; under Miri they also prove the scalar twins
//! free of undefined behaviour (out-of-bounds reads, uninitialised memory, invalid pointers).

mod common;

use common::{activations, build, check_dequant, check_gemv, oracle as decode_oracle};
use ninfer_core::encode::{oracle, Source};
use ninfer_core::layout::row_split::RowSplitGeom;
use ninfer_core::registry::{Format, Grouped};
use ninfer_simd::encode::{encode_row_split_with, EncodePath};
use ninfer_simd::{Isa, Profile};

#[test]
fn scalar_dequantize_and_gemv_on_small_shapes() {
    for f in Format::ALL {
        if f == Format::I32 {
            continue;
        }
        let k = if f == Format::Nvfp4 { 32 } else { 65 };
        let (desc, payload) = build(f, 3, k, 7);
        check_dequant(Isa::Scalar, &desc, &payload, 2);
        let want = decode_oracle(&desc, &payload);
        let x = activations(k, 1, 3, false);
        for profile in [Profile::F32, Profile::I8] {
            if ninfer_simd::whitelist::is_listed(
                f,
                desc.layout(),
                ninfer_simd::whitelist::Op::Gemv,
                profile,
                Isa::Scalar.platform(),
            ) {
                check_gemv(Isa::Scalar, &desc, &payload, &want, profile, &x, 2);
            }
        }
    }
}

#[test]
fn scalar_encoder_matches_the_oracle_on_small_shapes() {
    let path = EncodePath::new(Isa::Scalar).unwrap();
    for g in Grouped::ALL {
        let (n, k) = (2, 70);
        let src: Vec<f32> = (0..n * k)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) * 0.37)
            .collect();
        let geom = RowSplitGeom::new(g, n, k).unwrap();
        let mut want = vec![0u8; geom.len];
        geom.encode_into(Source::F32(&src), oracle::encode_group, &mut want)
            .unwrap();
        let mut got = vec![0xffu8; geom.len];
        encode_row_split_with(path, 2, &geom, Source::F32(&src), &mut got).unwrap();
        assert_eq!(got, want, "{g:?}");
    }
}
