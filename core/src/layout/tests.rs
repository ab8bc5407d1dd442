//! Layout evidence that needs no files (section 12 layout items; the golden vectors are checked
//! in the facade's `tests/golden.rs`): geometry, descriptors on hostile shapes, the worked
//! swizzle offsets, plane bit order, pack/unpack identity, views, gathers and both validators.

use super::blockscale::{scale_index, BlockscaleGeom};
use super::contiguous::{Words, WordsMut};
use super::row_scale::RowScaleGeom;
use super::row_split::{chunk_bytes, RowSplitGeom};
use super::*;
use crate::encode::{self, twin, Source};
use crate::error::{ValueError, ValueErrorKind};
use crate::registry::{Format, Grouped, Layout};
use proptest::prelude::*;
use std::vec;
use std::vec::Vec;

const CASES: u32 = if cfg!(miri) { 4 } else { 64 };

fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

#[test]
fn descriptors_reject_unsupported_pairs_ranks_and_zero_dims() {
    for f in Format::ALL {
        for l in Layout::ALL {
            let shape: &[usize] = if l == Layout::ContiguousLeV1 {
                &[2, 3]
            } else {
                &[2, 64]
            };
            let r = TensorDesc::new(f, l, shape);
            assert_eq!(r.is_ok(), crate::registry::is_supported(f, l), "{f:?} {l:?}");
            if !crate::registry::is_supported(f, l) {
                assert_eq!(r.unwrap_err(), LayoutError::UnsupportedPair);
            }
        }
    }
    let q4 = Format::Q4G64F16S;
    assert_eq!(
        TensorDesc::for_format(q4, &[64]).unwrap_err(),
        LayoutError::BadRank
    );
    assert_eq!(
        TensorDesc::for_format(q4, &[2, 2, 64]).unwrap_err(),
        LayoutError::BadRank
    );
    assert_eq!(
        TensorDesc::for_format(q4, &[0, 64]).unwrap_err(),
        LayoutError::ZeroDim
    );
    assert_eq!(
        TensorDesc::for_format(q4, &[4, 0]).unwrap_err(),
        LayoutError::ZeroDim
    );
    assert_eq!(
        TensorDesc::for_format(Format::Fp8E4m3fnRowBf16s, &[1, 0]).unwrap_err(),
        LayoutError::ZeroDim
    );
    for k in [0usize, 8, 15, 17, 40] {
        let e = TensorDesc::for_format(Format::Nvfp4, &[1, k]).unwrap_err();
        assert!(
            matches!(e, LayoutError::KNotMultipleOf16 | LayoutError::ZeroDim),
            "{k}: {e:?}"
        );
    }
    assert!(TensorDesc::for_format(Format::Nvfp4, &[1, 16]).is_ok());
    // Direct formats: rank 0..=8, zero dimensions allowed, rank 9 refused.
    assert_eq!(
        TensorDesc::for_format(Format::Fp32, &[]).unwrap().payload_len(),
        4
    );
    assert_eq!(
        TensorDesc::for_format(Format::Bf16, &[0, 4])
            .unwrap()
            .payload_len(),
        0
    );
    assert!(TensorDesc::for_format(Format::I32, &[1; 8]).is_ok());
    assert_eq!(
        TensorDesc::for_format(Format::I32, &[1; 9]).unwrap_err(),
        LayoutError::BadRank
    );
}

#[test]
#[cfg_attr(miri, ignore)]
fn hostile_dimensions_overflow_into_errors_never_panics() {
    let big = [
        usize::MAX,
        usize::MAX / 2,
        usize::MAX / 64,
        1 << (usize::BITS - 2),
        usize::MAX - 127,
    ];
    for f in Format::ALL {
        for &a in &big {
            for &b in &[1usize, 16, 128, a] {
                for shape in [[a, b], [b, a]] {
                    match TensorDesc::for_format(f, &shape) {
                        Ok(d) => assert!(d.payload_len() >= d.numel() / 2, "{f:?} {shape:?}"),
                        Err(e) => assert!(
                            matches!(e, LayoutError::SizeOverflow | LayoutError::KNotMultipleOf16),
                            "{f:?} {shape:?} {e:?}"
                        ),
                    }
                }
            }
        }
        let _ = TensorDesc::for_format(f, &[usize::MAX; 8]);
    }
    assert_eq!(
        TensorDesc::for_format(Format::Fp32, &[usize::MAX, 2]).unwrap_err(),
        LayoutError::SizeOverflow
    );
}

#[test]
fn row_split_geometry_matches_the_layout_formulas() {
    // (scheme, N, K) -> (Kp, row_code_bytes, Gp, scale_offset, len)
    let cases = [
        (Grouped::Q4, 3, 65, 128, 64, 2, 256, 256 + 12),
        (Grouped::Q5, 3, 300, 384, 240, 6, 768, 768 + 36),
        (Grouped::Q6, 1, 1, 128, 96, 2, 128, 132),
        (Grouped::W8, 2, 129, 256, 256, 8, 512, 512 + 32),
        (Grouped::Q4, 1, 128, 128, 64, 2, 128, 132),
    ];
    for (g, n, k, kp, rcb, gp, so, len) in cases {
        let geo = RowSplitGeom::new(g, n, k).unwrap();
        assert_eq!(
            (geo.kp, geo.row_code_bytes, geo.gp, geo.scale_offset, geo.len),
            (kp, rcb, gp, so, len)
        );
        let d = TensorDesc::for_format(g.format(), &[n, k]).unwrap();
        assert_eq!(d.payload_len(), len);
        let planes = d.geometry().planes();
        assert_eq!(planes[0].unwrap().offset, 0);
        assert_eq!(planes[1].unwrap().offset % PLANE_ALIGN, 0);
        assert_eq!(planes[1].unwrap().offset + planes[1].unwrap().len, len);
    }
    assert_eq!([64, 80, 96, 128], Grouped::ALL.map(chunk_bytes));
}

#[test]
fn nvfp4_swizzle_matches_the_worked_offsets() {
    // layouts.md, N = 200, K = 4096 (nKT = 64).
    let g = BlockscaleGeom::new(200, 4096).unwrap();
    assert_eq!((g.kp, g.sb, g.np, g.nkt), (4096, 256, 256, 64));
    let worked = [
        ((0, 0), 0),
        ((0, 1), 1),
        ((0, 4), 512),
        ((1, 0), 16),
        ((31, 0), 496),
        ((32, 0), 4),
        ((33, 2), 22),
        ((64, 0), 8),
        ((96, 1), 13),
        ((127, 3), 511),
        ((128, 0), 32768),
        ((130, 5), 33313),
        ((199, 255), 65147),
    ];
    for ((n, kb), off) in worked {
        assert_eq!(scale_index(n, kb, g.nkt), off, "({n}, {kb})");
    }
    // The swizzle is a bijection on the Np x Sb scale plane.
    let g = BlockscaleGeom::new(130, 272).unwrap();
    let mut seen = vec![false; g.np * g.sb];
    for n in 0..g.np {
        for kb in 0..g.sb {
            let i = scale_index(n, kb, g.nkt);
            assert!(!seen[i], "({n}, {kb}) collides");
            seen[i] = true;
        }
    }
    assert!(seen.iter().all(|&s| s));
    assert_eq!(g.divisor_offset % PLANE_ALIGN, 0);
    assert_eq!(g.len, g.divisor_offset + 4);
}

#[test]
#[cfg_attr(miri, ignore)]
fn row_split_plane_bit_order_single_bits() {
    // One set bit of the b-bit word walked through every position of a chunk lands exactly
    // where layouts.md puts it.
    for g in Grouped::ALL {
        let geo = RowSplitGeom::new(g, 1, 128).unwrap();
        for i in 0..128 {
            for bit in 0..g.bits() {
                let u = 1u8 << bit;
                let mut codes = [0i8; 128];
                codes[i] = crate::scheme::grouped::code_from_word(g, u);
                let mut out = vec![0u8; geo.len];
                geo.pack(&codes, &[0x3c00, 0x3c00, 0x3c00, 0x3c00][..geo.groups], &mut out)
                    .unwrap();
                let (byte, shift) = match (g, bit) {
                    (Grouped::W8, b) => (i, b),
                    (_, b) if b < 4 => (i % 64, 4 * (i / 64) as u32 + b),
                    (Grouped::Q5, _) => (64 + i % 16, (i / 16) as u32),
                    (Grouped::Q6, b) => (64 + i % 32, 2 * (i / 32) as u32 + (b - 4)),
                    _ => unreachable!(),
                };
                let mut want = vec![0u8; geo.row_code_bytes];
                want[byte] = 1 << shift;
                assert_eq!(
                    &out[..geo.row_code_bytes],
                    &want[..],
                    "{g:?} position {i} bit {bit}"
                );
            }
        }
    }
}

fn random_row_split(g: Grouped, n: usize, k: usize, seed: u64) -> (Vec<i8>, Vec<u16>) {
    let mut r = rng(seed);
    let groups = k.div_ceil(g.group_size());
    let mut scales: Vec<u16> = (0..n * groups).map(|_| (r() % 0x7c00) as u16).collect();
    scales[0] = 0; // a zero-scale group
    let mut codes = vec![0i8; n * k];
    for row in 0..n {
        for kk in 0..k {
            if scales[row * groups + kk / g.group_size()] != 0 {
                codes[row * k + kk] = (g.qmin() + (r() % (g.qmax() - g.qmin() + 1) as u64) as i32) as i8;
            }
        }
    }
    (codes, scales)
}

fn pack_row_split(g: Grouped, n: usize, k: usize, codes: &[i8], scales: &[u16]) -> (TensorDesc, Vec<u8>) {
    let d = TensorDesc::for_format(g.format(), &[n, k]).unwrap();
    let Geometry::RowSplit(geo) = *d.geometry() else {
        unreachable!()
    };
    let mut out = vec![0xaau8; geo.len];
    geo.pack(codes, scales, &mut out).unwrap();
    (d, out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn row_split_pack_then_unpack_is_identity(
        gi in 0usize..4, n in 1usize..4,
        k in prop::sample::select(vec![1usize, 63, 64, 65, 127, 128, 129, 300]),
        seed in any::<u64>(),
    ) {
        let g = Grouped::ALL[gi];
        let (codes, scales) = random_row_split(g, n, k, seed);
        let (d, payload) = pack_row_split(g, n, k, &codes, &scales);
        d.validate(&payload).unwrap();
        let Geometry::RowSplit(geo) = *d.geometry() else { unreachable!() };
        let t = geo.tensor(&payload).unwrap();
        let mut c2 = vec![0i8; n * k];
        let mut s2 = vec![0u16; scales.len()];
        t.unpack(&mut c2, &mut s2).unwrap();
        prop_assert_eq!(&c2, &codes);
        prop_assert_eq!(&s2, &scales);
        // Decode equals the scheme oracle on the logical words.
        let mut want = vec![0f32; n * k];
        crate::scheme::grouped::decode(g, n, k, &codes, &scales, &mut want).unwrap();
        let mut got = vec![0f32; n * k];
        d.decode_f32(&payload, &mut got).unwrap();
        prop_assert_eq!(got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), want.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    }

    #[test]
    fn nvfp4_pack_then_unpack_is_identity(
        n in prop::sample::select(vec![1usize, 127, 128, 129]),
        k in prop::sample::select(vec![16usize, 48, 64, 80, 144]),
        seed in any::<u64>(),
    ) {
        let mut r = rng(seed);
        let codes: Vec<u8> = (0..n * k).map(|_| (r() % 16) as u8).collect();
        let scales: Vec<u8> = (0..n * k / 16).map(|_| (r() % 0x7f) as u8).collect();
        let d_bits = 1.5f32.to_bits();
        let geo = BlockscaleGeom::new(n, k).unwrap();
        let mut out = vec![0x55u8; geo.len];
        geo.pack(&codes, &scales, d_bits, &mut out).unwrap();
        let desc = TensorDesc::for_format(Format::Nvfp4, &[n, k]).unwrap();
        desc.validate(&out).unwrap();
        let t = geo.tensor(&out).unwrap();
        let mut c2 = vec![0u8; codes.len()];
        let mut s2 = vec![0u8; scales.len()];
        t.unpack(&mut c2, &mut s2).unwrap();
        prop_assert_eq!(&c2, &codes);
        prop_assert_eq!(&s2, &scales);
        prop_assert_eq!(t.divisor_bits(), d_bits);
    }

    #[test]
    fn fp8_and_direct_pack_then_unpack_is_identity(
        n in 1usize..5, k in prop::sample::select(vec![1usize, 63, 64, 65, 127, 128, 129, 300]),
        seed in any::<u64>(),
    ) {
        let mut r = rng(seed);
        let codes: Vec<u8> = (0..n * k).map(|_| { let c = r() as u8; if c & 0x7f == 0x7f { 0 } else { c } }).collect();
        let scales: Vec<u16> = (0..n).map(|_| (r() % 0x7f80) as u16).collect();
        let geo = RowScaleGeom::new(n, k).unwrap();
        let mut out = vec![1u8; geo.len];
        geo.pack(&codes, &scales, &mut out).unwrap();
        geo.validate_layout(&out).unwrap();
        let t = geo.tensor(&out).unwrap();
        let mut c2 = vec![0u8; codes.len()];
        let mut s2 = vec![0u16; n];
        t.unpack(&mut c2, &mut s2).unwrap();
        prop_assert_eq!(&c2, &codes);
        prop_assert_eq!(&s2, &scales);
        // Direct words: any u32 / u16 pattern, NaN payloads included.
        for f in [Format::Bf16, Format::Fp32, Format::I32] {
            let d = TensorDesc::for_format(f, &[n, k]).unwrap();
            let Geometry::Contiguous(c) = *d.geometry() else { unreachable!() };
            let mut payload = vec![0u8; d.payload_len()];
            if f == Format::Bf16 {
                let w: Vec<u16> = (0..n * k).map(|_| r() as u16).collect();
                c.pack(Words::U16(&w), &mut payload).unwrap();
                let mut back = vec![0u16; w.len()];
                c.unpack(&payload, WordsMut::U16(&mut back)).unwrap();
                prop_assert_eq!(back, w);
            } else {
                let w: Vec<u32> = (0..n * k).map(|_| r() as u32).collect();
                c.pack(Words::U32(&w), &mut payload).unwrap();
                let mut back = vec![0u32; w.len()];
                c.unpack(&payload, WordsMut::U32(&mut back)).unwrap();
                prop_assert_eq!(back, w);
            }
        }
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn partial_k_padding_is_zero_and_every_padding_byte_is_checked() {
    for g in Grouped::ALL {
        for k in [1usize, 63, 65, 129, 300] {
            let n = 2;
            let (codes, scales) = random_row_split(g, n, k, 7 + k as u64);
            let (d, payload) = pack_row_split(g, n, k, &codes, &scales);
            let Geometry::RowSplit(geo) = *d.geometry() else {
                unreachable!()
            };
            d.validate_layout(&payload).unwrap();
            // Flip each byte in turn: the layout validator must object exactly when the byte is
            // padding (it carries no logical bit), and name that byte.
            let mut logical = vec![false; payload.len()];
            for row in 0..n {
                for kk in 0..k {
                    let c0 = row * geo.row_code_bytes + (kk / 128) * chunk_bytes(g);
                    let (lo, hi) = row_split::word_bytes(g, kk % 128);
                    logical[c0 + lo] = true;
                    if let Some(h) = hi {
                        logical[c0 + h] = true;
                    }
                }
                for grp in 0..geo.groups {
                    let s = geo.scale_offset + 2 * (row * geo.gp + grp);
                    logical[s] = true;
                    logical[s + 1] = true;
                }
            }
            for i in 0..payload.len() {
                // Flip only bits that belong to padding positions: for a shared nibble byte,
                // the bits of the other position are logical.
                let mut bad = payload.clone();
                bad[i] ^= 0xff;
                let r = d.validate_layout(&bad);
                if !logical[i] {
                    assert_eq!(
                        r,
                        Err(LayoutError::NonZeroPadding { offset: i }),
                        "{g:?} K={k} byte {i}"
                    );
                }
            }
            // Short and long payloads are refused before anything is read.
            assert!(matches!(
                d.validate_layout(&payload[1..]),
                Err(LayoutError::PayloadLength { .. })
            ));
        }
    }
}

#[test]
fn nvfp4_and_fp8_padding_bytes_are_checked() {
    let geo = BlockscaleGeom::new(3, 48).unwrap();
    let d = TensorDesc::for_format(Format::Nvfp4, &[3, 48]).unwrap();
    let mut out = vec![0u8; geo.len];
    geo.pack(&[1u8; 144], &[0x38u8; 9], 1.0f32.to_bits(), &mut out)
        .unwrap();
    d.validate(&out).unwrap();
    // Code padding (k = 48..64 of row 1), scale padding (row 5 >= N; kb 3 of row 0), gap bytes.
    for at in [
        32 + 24,
        32 + 31,
        geo.scale_offset + scale_index(5, 0, geo.nkt),
        geo.scale_offset + scale_index(0, 3, geo.nkt),
        3 * 32,
        geo.divisor_offset - 1,
    ] {
        let mut bad = out.clone();
        bad[at] = 0x10;
        assert_eq!(
            d.validate_layout(&bad),
            Err(LayoutError::NonZeroPadding { offset: at }),
            "byte {at}"
        );
    }
    let geo = RowScaleGeom::new(3, 65).unwrap();
    let d = TensorDesc::for_format(Format::Fp8E4m3fnRowBf16s, &[3, 65]).unwrap();
    let mut out = vec![0u8; geo.len];
    geo.pack(&[0x38; 195], &[0x3f80; 3], &mut out).unwrap();
    assert_eq!(geo.scale_offset, 256);
    d.validate(&out).unwrap();
    out[200] = 1;
    assert_eq!(
        d.validate_layout(&out),
        Err(LayoutError::NonZeroPadding { offset: 200 })
    );
}

#[test]
fn value_validator_reports_first_offender_from_payload_bytes() {
    // W8 byte 0x80 is representable in the layout but outside the valid language.
    let (d, mut payload) = pack_row_split(Grouped::W8, 2, 40, &[1i8; 80], &[0x3c00; 4]);
    d.validate(&payload).unwrap();
    payload[128 + 35] = 0x80; // row 1, k 35
    assert_eq!(
        d.validate_values(&payload),
        Err(ValidateError::Value(ValueError::at(
            ValueErrorKind::CodeOutOfRange,
            1,
            1,
            35
        )))
    );
    // A zero-scale group holding a nonzero code, and a -0 scale.
    let (d, mut payload) = pack_row_split(Grouped::Q4, 1, 130, &[0i8; 130], &[0x3c00, 0x0000, 0x0000]);
    d.validate(&payload).unwrap();
    payload[1] = 0x10; // position 65 (high nibble of byte 1) -> group 1, whose scale is +0
    assert_eq!(
        d.validate_values(&payload),
        Err(ValidateError::Value(ValueError::at(
            ValueErrorKind::NonZeroCodeWithZeroScale,
            0,
            1,
            65
        )))
    );
    let Geometry::RowSplit(geo) = *d.geometry() else {
        unreachable!()
    };
    payload[1] = 0;
    payload[geo.scale_offset] = 0x00;
    payload[geo.scale_offset + 1] = 0x80; // scale 0 -> 0x8000
    assert_eq!(
        d.validate_values(&payload).unwrap_err(),
        ValidateError::Value(ValueError::at(ValueErrorKind::ScaleNegativeZero, 0, 0, 0))
    );
    payload[geo.scale_offset + 1] = 0xbc; // -1.0
    assert_eq!(
        d.validate_values(&payload).unwrap_err(),
        ValidateError::Value(ValueError::at(ValueErrorKind::ScaleNegative, 0, 0, 0))
    );
    // NVFP4: zero divisor and negative scale; FP8 NaN code.
    let geo = BlockscaleGeom::new(1, 16).unwrap();
    let d = TensorDesc::for_format(Format::Nvfp4, &[1, 16]).unwrap();
    let mut out = vec![0u8; geo.len];
    geo.pack(&[3u8; 16], &[0xb8], 1.0f32.to_bits(), &mut out).unwrap();
    assert_eq!(
        d.validate_values(&out).unwrap_err(),
        ValidateError::Value(ValueError::at(ValueErrorKind::ScaleNegative, 0, 0, 0))
    );
    geo.pack(&[3u8; 16], &[0x38], 0, &mut out).unwrap();
    assert_eq!(
        d.validate_values(&out).unwrap_err(),
        ValidateError::Value(ValueError::whole(ValueErrorKind::DivisorNotPositive))
    );
    let d = TensorDesc::for_format(Format::Fp8E4m3fnRowBf16s, &[1, 4]).unwrap();
    let geo = RowScaleGeom::new(1, 4).unwrap();
    let mut out = vec![0u8; geo.len];
    geo.pack(&[0, 0x7f, 0, 0], &[0x3f80], &mut out).unwrap();
    assert_eq!(
        d.validate_values(&out).unwrap_err(),
        ValidateError::Value(ValueError::at(ValueErrorKind::CodeNan, 0, 0, 1))
    );
}

#[test]
fn pack_refuses_words_that_do_not_fit() {
    let geo = RowSplitGeom::new(Grouped::Q4, 1, 4).unwrap();
    let mut out = vec![0u8; geo.len];
    assert_eq!(
        geo.pack(&[0, 7, 8, 0], &[0x3c00], &mut out),
        Err(LayoutError::WordDoesNotFit { index: 2 })
    );
    assert!(out.iter().all(|&b| b == 0));
    let geo = BlockscaleGeom::new(1, 16).unwrap();
    let mut out = vec![0u8; geo.len];
    let mut codes = [0u8; 16];
    codes[9] = 0x10;
    assert_eq!(
        geo.pack(&codes, &[0], 1, &mut out),
        Err(LayoutError::WordDoesNotFit { index: 9 })
    );
}

#[test]
#[cfg_attr(miri, ignore)]
fn canonical_encoder_writes_the_payload_that_pack_would() {
    for g in Grouped::ALL {
        for k in [1usize, 65, 128, 300] {
            let n = 3;
            let mut r = rng(k as u64);
            let src: Vec<f32> = (0..n * k)
                .map(|_| ((r() % 2001) as f32 - 1000.0) / 37.0)
                .collect();
            let mut codes = vec![0i8; n * k];
            let mut scales = vec![0u16; encode::scales_len(g, n, k).unwrap()];
            encode::encode_oracle(g, Source::F32(&src), n, k, &mut codes, &mut scales).unwrap();
            let (_, packed) = pack_row_split(g, n, k, &codes, &scales);
            let geo = RowSplitGeom::new(g, n, k).unwrap();
            let mut direct = vec![0xffu8; geo.len];
            geo.encode_into(Source::F32(&src), twin::encode_group, &mut direct)
                .unwrap();
            assert_eq!(direct, packed, "{g:?} K={k}");
            let mut direct_oracle = vec![0u8; geo.len];
            geo.encode_into(
                Source::F32(&src),
                encode::oracle::encode_group,
                &mut direct_oracle,
            )
            .unwrap();
            assert_eq!(direct_oracle, packed);
        }
    }
    // On error the payload is zero-filled and the error is located.
    let geo = RowSplitGeom::new(Grouped::Q6, 2, 70).unwrap();
    let mut src = vec![1.0f32; 140];
    src[70 + 66] = f32::INFINITY;
    let mut out = vec![0xffu8; geo.len];
    let e = geo
        .encode_into(Source::F32(&src), twin::encode_group, &mut out)
        .unwrap_err();
    assert_eq!((e.row, e.group, e.element), (1, 1, 66));
    assert!(out.iter().all(|&b| b == 0));
}

#[test]
fn partially_populated_group_decodes_to_its_stored_words() {
    // Section 12: canonical quantization followed by exact stored code/scale decode for a
    // partially populated group.
    for g in Grouped::ALL {
        let k = g.group_size() + 5; // last group holds 5 logical values
        let src: Vec<f32> = (0..k)
            .map(|i| {
                if i < g.group_size() {
                    1000.0
                } else {
                    (i as f32 - 66.0) * 0.01
                }
            })
            .collect();
        let geo = RowSplitGeom::new(g, 1, k).unwrap();
        let mut payload = vec![0u8; geo.len];
        geo.encode_into(Source::F32(&src), twin::encode_group, &mut payload)
            .unwrap();
        let t = geo.tensor(&payload).unwrap();
        let mut codes = [0i8; 5];
        let s = encode::oracle::encode_group(g, &src[g.group_size()..], &mut codes).unwrap();
        assert_eq!(t.scale(0, 1), s, "{g:?}");
        let mut row = vec![0f32; k];
        t.decode_row_f32(0, &mut row).unwrap();
        for j in 0..5 {
            assert_eq!(t.code(0, g.group_size() + j), codes[j]);
            assert_eq!(
                row[g.group_size() + j].to_bits(),
                crate::scheme::grouped::reconstruct(s, codes[j]).to_bits()
            );
        }
        // Padding positions past K hold code 0 and the padding group scale is 0x0000.
        let chunk = &payload[..geo.row_code_bytes];
        for i in k..128 {
            assert_eq!(row_split::get_word(g, chunk, i), 0);
        }
        for grp in geo.groups..geo.gp {
            assert_eq!(t.scale(0, grp), 0);
        }
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn views_and_gathers_match_the_whole_tensor() {
    let mut r = rng(99);
    // Row-split.
    for g in Grouped::ALL {
        let (n, k) = (7, 129);
        let (codes, scales) = random_row_split(g, n, k, 3);
        let (d, payload) = pack_row_split(g, n, k, &codes, &scales);
        check_views_and_gathers(&d, &payload, &mut r);
    }
    // NVFP4 across a tile boundary.
    let (n, k) = (130, 80);
    let codes: Vec<u8> = (0..n * k).map(|_| (r() % 16) as u8).collect();
    let scales: Vec<u8> = (0..n * k / 16).map(|_| (r() % 0x7f) as u8).collect();
    let geo = BlockscaleGeom::new(n, k).unwrap();
    let mut payload = vec![0u8; geo.len];
    geo.pack(&codes, &scales, 0.75f32.to_bits(), &mut payload)
        .unwrap();
    check_views_and_gathers(
        &TensorDesc::for_format(Format::Nvfp4, &[n, k]).unwrap(),
        &payload,
        &mut r,
    );
    // FP8 rows and a direct BF16 embedding.
    let (n, k) = (9, 65);
    let geo = RowScaleGeom::new(n, k).unwrap();
    let mut payload = vec![0u8; geo.len];
    let codes: Vec<u8> = (0..n * k).map(|i| (i % 126) as u8).collect();
    geo.pack(
        &codes,
        &[
            0x3f80, 0x0001, 0x4000, 0x3e00, 0x3f00, 0x3f80, 0x3f80, 0x0080, 0x3c00,
        ],
        &mut payload,
    )
    .unwrap();
    check_views_and_gathers(
        &TensorDesc::for_format(Format::Fp8E4m3fnRowBf16s, &[n, k]).unwrap(),
        &payload,
        &mut r,
    );
    let d = TensorDesc::for_format(Format::Bf16, &[11, 3, 5]).unwrap();
    let words: Vec<u16> = (0..165).map(|_| r() as u16 & 0x7f7f).collect();
    let Geometry::Contiguous(c) = *d.geometry() else {
        unreachable!()
    };
    let mut payload = vec![0u8; d.payload_len()];
    c.pack(Words::U16(&words), &mut payload).unwrap();
    check_views_and_gathers(&d, &payload, &mut r);
    assert_eq!(c.view(&payload, 2, 4).unwrap(), &payload[2 * 30..4 * 30]);
}

fn check_views_and_gathers(d: &TensorDesc, payload: &[u8], r: &mut impl FnMut() -> u64) {
    let n = d.shape()[0];
    let row_len = d.numel() / n;
    let mut all = vec![0f32; d.numel()];
    d.decode_f32(payload, &mut all).unwrap();
    let rows: Vec<usize> = (0..n + 3).map(|_| (r() as usize) % n).collect();
    let mut got = vec![0f32; rows.len() * row_len];
    d.gather_f32(payload, &rows, &mut got).unwrap();
    let mut packed = vec![0u8; d.with_rows(rows.len()).unwrap().payload_len()];
    d.gather_pack(payload, &rows, &mut packed).unwrap();
    let sub = d.with_rows(rows.len()).unwrap();
    sub.validate(&packed).unwrap();
    let mut repacked = vec![0f32; got.len()];
    sub.decode_f32(&packed, &mut repacked).unwrap();
    for (i, &row) in rows.iter().enumerate() {
        let want = &all[row * row_len..(row + 1) * row_len];
        let g = &got[i * row_len..(i + 1) * row_len];
        let p = &repacked[i * row_len..(i + 1) * row_len];
        for j in 0..row_len {
            assert_eq!(
                g[j].to_bits(),
                want[j].to_bits(),
                "{:?} gather row {row}",
                d.format()
            );
            assert_eq!(
                p[j].to_bits(),
                want[j].to_bits(),
                "{:?} gather_pack row {row}",
                d.format()
            );
        }
    }
    // Out-of-range rows are errors naming the position.
    assert_eq!(
        d.gather_f32(payload, &[0, n], &mut vec![0f32; 2 * row_len]),
        Err(LayoutError::RowOutOfRange { position: 1, row: n })
    );
    // Consecutive row views decode like the parent's rows.
    let (r0, r1) = (1.min(n), n);
    let mut view_rows = vec![0f32; (r1 - r0) * row_len];
    match d.geometry() {
        Geometry::RowSplit(geo) => geo
            .tensor(payload)
            .unwrap()
            .view(r0, r1)
            .unwrap()
            .decode_f32(&mut view_rows)
            .unwrap(),
        Geometry::Blockscale(geo) => {
            let v = geo.tensor(payload).unwrap().view(r0, r1).unwrap();
            assert!(!v.is_full());
            v.decode_f32(&mut view_rows).unwrap()
        }
        Geometry::RowScale(geo) => geo
            .tensor(payload)
            .unwrap()
            .view(r0, r1)
            .unwrap()
            .decode_f32(&mut view_rows)
            .unwrap(),
        Geometry::Contiguous(_) => view_rows.copy_from_slice(&all[r0 * row_len..r1 * row_len]),
    }
    for (a, b) in view_rows.iter().zip(&all[r0 * row_len..r1 * row_len]) {
        assert_eq!(a.to_bits(), b.to_bits());
    }
    match d.geometry() {
        Geometry::RowSplit(geo) => assert!(geo.tensor(payload).unwrap().view(2, 1).is_err()),
        Geometry::RowScale(geo) => assert!(geo.tensor(payload).unwrap().view(0, n + 1).is_err()),
        _ => {}
    }
}
