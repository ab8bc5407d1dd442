//! Dequantize and gather: every instruction-set path against the core oracle
//! (`TensorDesc::decode_f32`), bit for bit, at the awkward shapes, unaligned buffers and
//! 1/2/3 threads. The ISA list is `Isa::available()`: on x86-64 with AVX2 that is V3, V3_512b
//! (the 16-lane shapes) and Scalar (plus V4 on AVX-512 hardware); under qemu-aarch64 NEON,
//! NEON without dotprod and Scalar.

mod common;

use common::*;
use ninfer_core::layout::{LayoutError, TensorDesc};
use ninfer_core::registry::Format;
use ninfer_simd::{Isa, KernelError, Op, Profile};

fn every_shape(format: Format) {
    for isa in Isa::available() {
        for (i, &k) in ks_for(format).iter().enumerate() {
            for (j, &n) in NS.iter().enumerate() {
                let (desc, p) = build(format, n, k, 0x9e37 + 31 * i as u64 + j as u64);
                check_dequant(isa, &desc, &p, 1 + (i + j) % 3);
            }
        }
    }
}

#[test]
fn q4_dequantize_matches_oracle_bit_for_bit() {
    every_shape(Format::Q4G64F16S);
}

#[test]
fn q5_dequantize_matches_oracle_bit_for_bit() {
    every_shape(Format::Q5G64F16S);
}

#[test]
fn q6_dequantize_matches_oracle_bit_for_bit() {
    every_shape(Format::Q6G64F16S);
}

#[test]
fn w8_dequantize_matches_oracle_bit_for_bit() {
    every_shape(Format::W8G32F16S);
}

#[test]
fn nvfp4_dequantize_matches_oracle_bit_for_bit() {
    every_shape(Format::Nvfp4);
}

#[test]
fn fp8_dequantize_matches_oracle_bit_for_bit() {
    every_shape(Format::Fp8E4m3fnRowBf16s);
}

#[test]
fn bf16_and_fp32_dequantize_match_oracle_bit_for_bit() {
    every_shape(Format::Bf16);
    every_shape(Format::Fp32);
}

#[test]
fn every_fp8_code_and_extreme_row_scales_decode_exactly() {
    // All 254 valid codes in each row, row scales from the smallest subnormal BF16 to large
    // ones: products that round, that are subnormal, and signed zeros. Among them the edges
    // of the multipliers whose BF16 words the AVX2 route rounds by Veltkamp's split
    // (`fp8x86::dequant_row_f16c`: zero, or 2^-117 ..= 2^100 in magnitude) and the first ones
    // past them (131 * 2^-125, 2^104).
    let scales = [
        0x0001u16, 0x0080, 0x3f80, 0x3e4d, 0x4049, 0x7f00, 0x0000, 0x00ff, 0x0500, 0x8500, 0x0483, 0x7180,
        0xf180, 0x7181, 0x7380, 0x8000,
    ];
    let codes: Vec<u8> = (0..=255u8).filter(|c| c & 0x7f != 0x7f).collect();
    let k = codes.len();
    let n = scales.len();
    let desc = TensorDesc::for_format(Format::Fp8E4m3fnRowBf16s, &[n, k]).unwrap();
    let mut all = Vec::new();
    for (r, &s) in scales.iter().enumerate() {
        // A zero row may only hold signed zeros.
        all.extend(
            codes
                .iter()
                .map(|&c| if s == 0 { c & 0x80 } else { c.rotate_left(r as u32) }),
        );
    }
    // rotate_left can produce a NaN word; map those back to a valid one.
    for c in all.iter_mut() {
        if *c & 0x7f == 0x7f {
            *c &= 0xfe;
        }
    }
    let mut p = vec![0u8; desc.payload_len()];
    if let ninfer_core::layout::Geometry::RowScale(g) = desc.geometry() {
        g.pack(&all, &scales, &mut p).unwrap();
    }
    for isa in Isa::available() {
        check_dequant(isa, &desc, &p, 2);
    }
}

#[test]
fn every_e2m1_word_and_e4m3fn_scale_decodes_exactly() {
    // Each row holds all 16 E2M1 words per block; the 127 valid scale words cycle over blocks;
    // divisors that round (3), are tiny (1e-30) or huge (7e20, and 1e36, which makes the
    // smallest values binary32 subnormals: the AVX-512 BF16 route rounds those blocks itself).
    let (n, k) = (3, 127 * 16 + 16);
    for d in [3.0f32, 1e-30, 7.0e20, 1e36, 1.0] {
        let desc = TensorDesc::for_format(Format::Nvfp4, &[n, k]).unwrap();
        let codes: Vec<u8> = (0..n * k).map(|i| (i % 16) as u8).collect();
        let scales: Vec<u8> = (0..n * k / 16).map(|i| (i % 127) as u8).collect();
        let mut p = vec![0u8; desc.payload_len()];
        if let ninfer_core::layout::Geometry::Blockscale(g) = desc.geometry() {
            g.pack(&codes, &scales, d.to_bits(), &mut p).unwrap();
        }
        for isa in Isa::available() {
            check_dequant(isa, &desc, &p, 3);
        }
    }
}

/// Long rows of every row-split scheme: the x86 dequantizer widens a row's group scales 64
/// chunks at a time, so K of 2.5 such spans (and a partial last chunk) crosses its span
/// boundaries; the oracle bit for bit on every path.
#[test]
fn row_split_long_rows_match_the_oracle_bit_for_bit() {
    let k = 64 * 128 * 2 + 64 * 64 + 37;
    for format in [
        Format::Q4G64F16S,
        Format::Q5G64F16S,
        Format::Q6G64F16S,
        Format::W8G32F16S,
    ] {
        let (desc, p) = build(format, 3, k, 0x51);
        for isa in Isa::available() {
            check_dequant(isa, &desc, &p, 2);
        }
    }
}

/// FP8 rows holding every byte, the NaN words 0x7f and 0xff included (invalid under section
/// 3.4, but the kernels read the bytes as they are), at K that leaves a partial last block of
/// 32: the x86 binary16 route hands a block with a NaN word to the integer route, and both meet
/// the oracle bit for bit.
#[test]
fn fp8_nan_words_decode_as_the_oracle_does() {
    let k = 3 * 256 + 13;
    let scales = [0x3f80u16, 0xc0a0, 0x0003];
    let n = scales.len();
    let codes: Vec<u8> = (0..n * k).map(|i| (i * 7 + i / 97) as u8).collect();
    let desc = TensorDesc::for_format(Format::Fp8E4m3fnRowBf16s, &[n, k]).unwrap();
    let mut p = vec![0u8; desc.payload_len()];
    if let ninfer_core::layout::Geometry::RowScale(g) = desc.geometry() {
        g.pack(&codes, &scales, &mut p).unwrap();
    }
    assert!(codes.iter().any(|&c| c & 0x7f == 0x7f), "the rows hold NaN words");
    for isa in Isa::available() {
        check_dequant(isa, &desc, &p, 2);
    }
}

/// Words outside NVFP4's validity rules (section 3.3) still decode as the oracle does, bit
/// for bit: every scale byte (negative scales, negative zero and both NaN words among them) and
/// divisors that are zero, negative, infinite or NaN. The kernels read the bytes as they are
/// (validation is a separate step); the x86 dequantizer's quotient tables meet NaN quotients
/// here and take the oracle's order for those chunks.
///
/// Both x86 routes meet them: [2, 4096] (32 chunks a row) is long enough for the call's
/// quotient tables built once (`nvfp4x86::Quotients`, at 1 and 2 threads), [2, 256] (2 chunks
/// a row, NaN words among the first 8 scales) keeps the per-chunk tables.
#[test]
fn nvfp4_invalid_scales_and_divisors_decode_as_the_oracle_does() {
    let few = [0x7fu8, 0x38, 0xff, 0xb8, 0x00, 0x80, 0x01, 0x7e];
    for (n, k) in [(2, 256 * 16), (2, 256)] {
        let codes: Vec<u8> = (0..n * k).map(|i| ((i * 7 + i / 16) % 16) as u8).collect();
        let scales: Vec<u8> = (0..n * k / 16)
            .map(|i| if k > 256 { (i % 256) as u8 } else { few[i % 8] })
            .collect();
        for d in [3.0f32, -2.0, 0.0, -0.0, f32::INFINITY, f32::NAN, 1e-45] {
            let desc = TensorDesc::for_format(Format::Nvfp4, &[n, k]).unwrap();
            let mut p = vec![0u8; desc.payload_len()];
            if let ninfer_core::layout::Geometry::Blockscale(g) = desc.geometry() {
                g.pack(&codes, &scales, d.to_bits(), &mut p).unwrap();
            }
            for isa in Isa::available() {
                for threads in [1, 2] {
                    check_dequant(isa, &desc, &p, threads);
                }
            }
        }
    }
}

#[test]
fn f32_to_bf16_rne_matches_the_core_oracle() {
    let mut rng = Rng(7);
    let mut bits: Vec<u32> = (0..200_000).map(|_| rng.next() as u32).collect();
    for w in (0..=u16::MAX as u32).step_by(3) {
        let b = w << 16;
        bits.extend([b, b | 0x7fff, b | 0x8000, b | 0x8001, b | 0xffff]);
    }
    for b in bits {
        let x = f32::from_bits(b);
        assert_eq!(
            ninfer_simd::f32_to_bf16_rne(x),
            ninfer_core::word::bf16::f32_to_bf16_rne(x),
            "{b:#010x}"
        );
    }
}

/// The BF16-output rounding of the FP32 and BF16 formats at its boundaries, on every path:
/// FP32 words with each high half of interest and the low halves at a tie (`0x8000`, odd and
/// even), either side of it, zero and all ones, in runs of 16 with no NaN (the x86 path's
/// fast case) and runs with NaNs of either sign and both kinds (signaling ones are made
/// quiet); and a BF16 tensor holding all 65536 words. K = 4097 leaves a partial last run.
#[test]
fn bf16_output_rounds_fp32_and_bf16_words_at_every_boundary() {
    let highs = [
        0x0000u32, 0x0001, 0x007f, 0x0080, 0x0081, 0x3f80, 0x3f81, 0x7f7e, 0x7f7f, 0x7f80, 0x7f81, 0x7fbf,
        0x7fc0, 0x7fff, 0x8000, 0x8001, 0x807f, 0x8080, 0xbf80, 0xff7f, 0xff80, 0xff81, 0xffc0, 0xffff,
    ];
    let lows = [0u32, 1, 0x7fff, 0x8000, 0x8001, 0xffff];
    let all: Vec<u32> = highs
        .iter()
        .flat_map(|&h| lows.iter().map(move |&l| h << 16 | l))
        .collect();
    let finite: Vec<u32> = all
        .iter()
        .copied()
        .filter(|&b| !f32::from_bits(b).is_nan())
        .collect();
    let k = 4097;
    // Row 0 holds no NaN; rows 1 and 2 hold every word, row 2 at another phase.
    let words: Vec<u32> = (0..k)
        .map(|i| finite[i % finite.len()])
        .chain((0..k).map(|i| all[i % all.len()]))
        .chain((0..k).map(|i| all[(7 * i + 3) % all.len()]))
        .collect();
    let desc = TensorDesc::for_format(Format::Fp32, &[3, k]).unwrap();
    let p: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(p.len(), desc.payload_len());
    for isa in Isa::available() {
        check_dequant(isa, &desc, &p, 2);
    }

    let n = 65536usize.div_ceil(k);
    let desc = TensorDesc::for_format(Format::Bf16, &[n, k]).unwrap();
    let p: Vec<u8> = (0..n * k).flat_map(|i| (i as u16).to_le_bytes()).collect();
    assert_eq!(p.len(), desc.payload_len());
    for isa in Isa::available() {
        check_dequant(isa, &desc, &p, 2);
    }
}

/// A row-split tensor of `format` with one group per binary16 scale word (all 65536, so
/// infinities, NaNs, subnormals, zeros of both signs and the products that tie at BF16's
/// precision among them), to f32 and BF16 words on every path, bit for bit against the oracle.
/// Group `i`'s codes run through the scheme's `levels` codes from `-levels / 2` at stride 5
/// starting at `i`: every code of Q4, Q5 and Q6 in each group, 32 of W8's in each.
fn every_scale_word_with_every_code(format: Format, group: usize, levels: usize) {
    let (n, k) = (64, 1024 * group);
    let desc = TensorDesc::for_format(format, &[n, k]).unwrap();
    let codes: Vec<i8> = (0..n * k)
        .map(|i| ((i * 5 + i / group) % levels) as i32 - (levels / 2) as i32)
        .map(|q| q as i8)
        .collect();
    let scales: Vec<u16> = (0..n * k / group).map(|i| i as u16).collect();
    let mut p = vec![0u8; desc.payload_len()];
    if let ninfer_core::layout::Geometry::RowSplit(g) = desc.geometry() {
        g.pack(&codes, &scales, &mut p).unwrap();
    }
    assert!(p.iter().any(|&b| b != 0));
    for isa in Isa::available() {
        check_dequant(isa, &desc, &p, 2);
    }
}

/// Q4 to BF16: the x86 path rounds the 16 values `s q` of a group once into a table and looks
/// the codes up.
#[test]
fn q4_every_scale_word_with_every_code_dequantizes_exactly() {
    every_scale_word_with_every_code(Format::Q4G64F16S, 64, 16);
}

/// Q5, Q6 and W8 to BF16: the AVX2 path rounds by Veltkamp's split where a chunk's scales are
/// finite and in integer registers where one is not (`f32x86::dequant_chunk_v3`);
/// W8 takes its codes `-127..=127` (the byte `0x80` is outside its language).
#[test]
fn q5_q6_w8_every_scale_word_dequantizes_exactly() {
    every_scale_word_with_every_code(Format::Q5G64F16S, 64, 32);
    every_scale_word_with_every_code(Format::Q6G64F16S, 64, 64);
    every_scale_word_with_every_code(Format::W8G32F16S, 32, 255);
}

#[test]
fn contiguous_tensors_of_other_ranks_decode_by_first_dimension() {
    let desc = TensorDesc::for_format(Format::Bf16, &[4, 3, 5]).unwrap();
    let words: Vec<u16> = (0..60u16).map(|i| 0x3f80 + i * 3).collect();
    let mut p = vec![0u8; desc.payload_len()];
    if let ninfer_core::layout::Geometry::Contiguous(g) = desc.geometry() {
        g.pack(ninfer_core::layout::contiguous::Words::U16(&words), &mut p)
            .unwrap();
    }
    let want = oracle(&desc, &p);
    for isa in Isa::available() {
        let mut out = vec![0f32; 2 * 15];
        isa.dequantize_f32(&desc, &p, 1..3, &mut out, 2).unwrap();
        assert!(out
            .iter()
            .zip(&want[15..45])
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        let mut g = vec![0f32; 15];
        isa.gather_f32(&desc, &p, &[3], &mut g, 1).unwrap();
        assert!(g.iter().zip(&want[45..]).all(|(a, b)| a.to_bits() == b.to_bits()));
    }
}

#[test]
fn bad_requests_are_errors_not_panics() {
    let (desc, p) = build(Format::Q4G64F16S, 7, 65, 1);
    let isa = Isa::detect();
    let mut out = vec![0f32; 7 * 65];
    // Rows out of range.
    assert_eq!(
        isa.dequantize_f32(&desc, &p, 3..8, &mut out[..5 * 65], 1),
        Err(KernelError::RowOutOfRange {
            position: 0,
            row: 8,
            rows: 7
        })
    );
    assert_eq!(
        isa.gather_f32(&desc, &p, &[0, 7], &mut out[..2 * 65], 1),
        Err(KernelError::RowOutOfRange {
            position: 1,
            row: 7,
            rows: 7
        })
    );
    // Output length.
    assert_eq!(
        isa.dequantize_f32(&desc, &p, 0..7, &mut out[1..], 1),
        Err(KernelError::BufferLength {
            what: "out",
            expected: 7 * 65,
            actual: 7 * 65 - 1
        })
    );
    // Payload length.
    assert!(matches!(
        isa.dequantize_f32(&desc, &p[1..], 0..7, &mut out, 1),
        Err(KernelError::Layout(LayoutError::PayloadLength { .. }))
    ));
    // I32 has no f32 meaning: not in the whitelist.
    let d32 = TensorDesc::for_format(Format::I32, &[2, 2]).unwrap();
    let e = isa
        .dequantize_f32(&d32, &[0u8; 16], 0..2, &mut [0f32; 4], 1)
        .unwrap_err();
    assert_eq!(
        e,
        KernelError::Unsupported {
            format: Format::I32,
            layout: ninfer_core::registry::Layout::ContiguousLeV1,
            op: Op::DequantizeF32,
            profile: Profile::Exact,
            platform: isa.platform(),
        }
    );
    assert!(
        e.to_string().contains("I32") && e.to_string().contains("DequantizeF32"),
        "{e}"
    );
    // Empty ranges and lists are fine.
    isa.dequantize_f32(&desc, &p, 3..3, &mut [], 2).unwrap();
    isa.gather_bf16(&desc, &p, &[], &mut [], 2).unwrap();
}

/// Every binary32 bit pattern (all 2^32) as an FP32 tensor dequantized to BF16 words on every
/// available path against the core's `f32_to_bf16_rne`, 2^24 words per call. Exhaustive, so
/// it runs in release only where asked (`.ci/run`: `cargo test -p ninfer-simd --release --test
/// dequant -- --ignored every_binary32 --nocapture`; about 6 s per path on a 2-core AMD EPYC).
/// It covers the AVX2 rounding in registers (`V3`) and, where the CPU has AVX-512 BF16, the
/// `vcvtne2ps2bf16` route with its value-by-value rounding of blocks holding a subnormal (`V4`).
#[test]
#[ignore = "exhaustive (2^32 words per path): run in release, see the doc comment"]
fn every_binary32_word_rounds_to_bf16_on_every_path() {
    use ninfer_core::word::bf16::f32_to_bf16_rne;
    let k = 1usize << 24;
    let desc = TensorDesc::for_format(Format::Fp32, &[1, k]).unwrap();
    let mut p = vec![0u8; 4 * k];
    let mut out = vec![0u16; k];
    for isa in Isa::available() {
        let t = std::time::Instant::now();
        for c in 0..256u32 {
            for (i, w) in p.chunks_exact_mut(4).enumerate() {
                w.copy_from_slice(&(c << 24 | i as u32).to_le_bytes());
            }
            isa.dequantize_bf16(&desc, &p, 0..1, &mut out, 2)
                .expect("dequantize_bf16");
            for (i, &b) in out.iter().enumerate() {
                let v = f32::from_bits(c << 24 | i as u32);
                assert_eq!(
                    b,
                    f32_to_bf16_rne(v),
                    "{isa:?}: binary32 word {:#010x}",
                    v.to_bits()
                );
            }
        }
        println!(
            "{isa:?}: all 2^32 binary32 words round as the oracle does ({:.1} s)",
            t.elapsed().as_secs_f64()
        );
    }
}
