//! Differential test across every implementation of the same numbers: the core oracles
//! (`TensorDesc::decode_f32`, the bit-level encoder oracle), the core's fast scalar twin, every
//! SIMD path this machine runs (`Isa::available()`, `EncodePath`), and the C ABI
//! (`ninfer_decode_f32`, `ninfer_encode_f32`). Random shapes and random valid words; every
//! dequantized value and every encoded byte must be identical. (The CUDA host decode functions
//! are compared with the C ABI by `tests/c/cuda_decode_host.cpp`, run from `ninfer-ffi`'s tests.)

use ninfer::core::encode::{oracle, twin, Source};
use ninfer::core::layout::blockscale::BlockscaleGeom;
use ninfer::core::layout::contiguous::Words;
use ninfer::core::layout::row_scale::RowScaleGeom;
use ninfer::core::layout::row_split::RowSplitGeom;
use ninfer::core::layout::{Geometry, TensorDesc};
use ninfer::core::registry::{Format, Grouped};
use ninfer_ffi::codec::{ninfer_decode_f32, ninfer_encode_f32};
use ninfer_ffi::desc::ninfer_desc_new;
use ninfer_ffi::{ninfer_desc, ninfer_status};
use ninfer_simd::encode::{encode_row_split_with, EncodePath};
use ninfer_simd::Isa;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn c_desc(d: &TensorDesc) -> ninfer_desc {
    let shape: Vec<u64> = d.shape().iter().map(|&x| x as u64).collect();
    let mut out = std::mem::MaybeUninit::<ninfer_desc>::zeroed();
    // SAFETY: shape covers rank u64s, out is writable, loc may be NULL.
    let st = unsafe {
        ninfer_desc_new(
            d.format().id(),
            d.layout().id(),
            shape.as_ptr(),
            shape.len(),
            out.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(st, ninfer_status::Ok);
    // SAFETY: written on success.
    unsafe { out.assume_init() }
}

/// A random valid payload of `format` with a random shape.
fn random_tensor(r: &mut Rng, format: Format) -> (TensorDesc, Vec<u8>) {
    let n = 1 + r.below(140) as usize;
    let k = match format {
        Format::Nvfp4 => 16 * (1 + r.below(20) as usize),
        _ => 1 + r.below(300) as usize,
    };
    let d = TensorDesc::for_format(format, &[n, k]).unwrap();
    let mut payload = vec![0u8; d.payload_len()];
    match *d.geometry() {
        Geometry::Contiguous(c) => match format {
            Format::Bf16 => {
                let w: Vec<u16> = (0..n * k).map(|_| r.next() as u16).collect();
                c.pack(Words::U16(&w), &mut payload).unwrap()
            }
            _ => {
                let w: Vec<u32> = (0..n * k).map(|_| r.next() as u32).collect();
                c.pack(Words::U32(&w), &mut payload).unwrap()
            }
        },
        Geometry::RowSplit(g) => {
            // Real encoder output of raw-bit sources, so scales cover subnormals and extremes.
            let src: Vec<f32> = (0..n * k)
                .map(|_| {
                    let e = 40 + r.below(100) as u32; // up to 2^12: every scale stays finite
                    f32::from_bits((r.next() as u32 & 0x807f_ffff) | (e << 23))
                })
                .collect();
            g.encode_into(Source::F32(&src), twin::encode_group, &mut payload)
                .unwrap()
        }
        Geometry::Blockscale(g) => {
            let codes: Vec<u8> = (0..n * k).map(|_| r.below(16) as u8).collect();
            let scales: Vec<u8> = (0..n * k / 16).map(|_| r.below(0x7f) as u8).collect();
            let d_w = f32::from_bits(0x3000_0000 + r.below(0x1800_0000) as u32);
            g.pack(&codes, &scales, d_w.to_bits(), &mut payload).unwrap()
        }
        Geometry::RowScale(g) => {
            let codes: Vec<u8> = (0..n * k)
                .map(|_| {
                    let c = r.next() as u8;
                    if c & 0x7f == 0x7f {
                        0x7e
                    } else {
                        c
                    }
                })
                .collect();
            let scales: Vec<u16> = (0..n).map(|_| r.below(0x7f00) as u16).collect();
            g.pack(&codes, &scales, &mut payload).unwrap()
        }
    }
    d.validate(&payload).unwrap();
    (d, payload)
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn dequantized_values_are_bit_identical_across_core_simd_and_c_abi() {
    let mut r = Rng(0x5eed_1234_abcd_0001);
    let isas = Isa::available();
    for round in 0..if cfg!(debug_assertions) { 3 } else { 20 } {
        for f in Format::ALL {
            if f == Format::I32 {
                continue; // no f32 meaning
            }
            let (d, payload) = random_tensor(&mut r, f);
            let n = d.shape()[0];
            let mut want = vec![0f32; d.numel()];
            d.decode_f32(&payload, &mut want).unwrap();
            let want = bits(&want);
            for &isa in &isas {
                let mut got = vec![0f32; d.numel()];
                isa.dequantize_f32(&d, &payload, 0..n, &mut got, 1 + round % 3)
                    .unwrap();
                assert!(
                    bits(&got) == want,
                    "{f:?} {:?} {isa:?}: SIMD dequantize differs",
                    d.shape()
                );
            }
            let cd = c_desc(&d);
            let mut got = vec![0f32; d.numel()];
            // SAFETY: every pointer covers the length passed beside it.
            let st = unsafe {
                ninfer_decode_f32(
                    &cd,
                    payload.as_ptr(),
                    payload.len(),
                    got.as_mut_ptr(),
                    got.len(),
                    std::ptr::null_mut(),
                )
            };
            assert_eq!(st, ninfer_status::Ok);
            assert!(bits(&got) == want, "{f:?} {:?}: C ABI decode differs", d.shape());
        }
    }
}

#[test]
fn encoder_output_is_byte_identical_across_oracle_twin_simd_and_c_abi() {
    let mut r = Rng(0x0dd_ba11_cafe_f00d);
    let paths: Vec<EncodePath> = Isa::available().into_iter().filter_map(EncodePath::new).collect();
    assert!(!paths.is_empty());
    for _ in 0..if cfg!(debug_assertions) { 4 } else { 40 } {
        for g in Grouped::ALL {
            let n = 1 + r.below(40) as usize;
            let k = 1 + r.below(700) as usize;
            let src: Vec<f32> = (0..n * k)
                .map(|_| match r.below(8) {
                    0 => 0.0,
                    1 => -0.0,
                    _ => {
                        let e = 1 + r.below(200) as u32;
                        f32::from_bits((r.next() as u32 & 0x807f_ffff) | (e << 23))
                    }
                })
                .collect();
            let geom = RowSplitGeom::new(g, n, k).unwrap();
            let mut want = vec![0u8; geom.len];
            let oracle_result = geom.encode_into(Source::F32(&src), oracle::encode_group, &mut want);
            let mut twin_out = vec![0xffu8; geom.len];
            let twin_result = geom.encode_into(Source::F32(&src), twin::encode_group, &mut twin_out);
            assert_eq!(oracle_result, twin_result);
            assert!(twin_out == want, "{g:?} [{n}, {k}]: twin differs");
            for &p in &paths {
                let mut out = vec![0xa5u8; geom.len];
                let res = encode_row_split_with(p, 2, &geom, Source::F32(&src), &mut out);
                assert_eq!(res.is_ok(), oracle_result.is_ok(), "{g:?} {:?}", p.isa());
                assert!(
                    out == want,
                    "{g:?} [{n}, {k}] {:?}: SIMD encoder differs",
                    p.isa()
                );
            }
            let d = TensorDesc::for_format(g.format(), &[n, k]).unwrap();
            let cd = c_desc(&d);
            let mut out = vec![0x5au8; geom.len];
            // SAFETY: every pointer covers the length passed beside it.
            let st = unsafe {
                ninfer_encode_f32(
                    &cd,
                    src.as_ptr(),
                    src.len(),
                    out.as_mut_ptr(),
                    out.len(),
                    std::ptr::null_mut(),
                )
            };
            assert_eq!(
                st == ninfer_status::Ok,
                oracle_result.is_ok(),
                "{g:?}: C ABI status {st:?}"
            );
            if st == ninfer_status::Ok {
                assert!(out == want, "{g:?} [{n}, {k}]: C ABI encoder differs");
            }
        }
    }
}

#[test]
fn nvfp4_and_fp8_views_decode_like_their_parents_on_every_path() {
    // Row views are borrowed sub-tensors; SIMD row ranges must agree with core views.
    let mut r = Rng(77);
    for f in [Format::Nvfp4, Format::Fp8E4m3fnRowBf16s, Format::Q5G64F16S] {
        let (d, payload) = random_tensor(&mut r, f);
        let n = d.shape()[0];
        let k = d.shape()[1];
        let (r0, r1) = (n / 3, n);
        let mut want = vec![0f32; (r1 - r0) * k];
        match *d.geometry() {
            Geometry::Blockscale(g) => g
                .tensor(&payload)
                .unwrap()
                .view(r0, r1)
                .unwrap()
                .decode_f32(&mut want)
                .unwrap(),
            Geometry::RowScale(g) => g
                .tensor(&payload)
                .unwrap()
                .view(r0, r1)
                .unwrap()
                .decode_f32(&mut want)
                .unwrap(),
            Geometry::RowSplit(g) => g
                .tensor(&payload)
                .unwrap()
                .view(r0, r1)
                .unwrap()
                .decode_f32(&mut want)
                .unwrap(),
            Geometry::Contiguous(_) => unreachable!(),
        }
        for isa in Isa::available() {
            let mut got = vec![0f32; want.len()];
            isa.dequantize_f32(&d, &payload, r0..r1, &mut got, 2).unwrap();
            assert!(bits(&got) == bits(&want), "{f:?} {isa:?}");
        }
        let _ = (BlockscaleGeom::new(1, 16), RowScaleGeom::new(1, 1));
    }
}
