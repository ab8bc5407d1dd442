//! The row-split (Q4/Q5/Q6/W8), BF16 and FP32 x86 fast paths ([`super::f32x86`],
//! [`super::i8x86`]) are bit-identical to the generic kernels for every batch size 1..=8; the
//! AVX-512 Q4/Q5 `F32` table kernels and the AVX2 BF16 kernel, which sum in their own orders,
//! are bit-identical to the generic kernel run on its decoded weights and activations permuted
//! into that order; the row-split `F32` kernels that sum per group (AVX2 Q4/Q5/Q6/W8, AVX-512
//! Q6/W8) are bit-identical to a plain scalar model of that order (`split_order`); each of
//! these meets the criterion.
//!
//! The NVFP4 and FP8 x86 fast paths ([`super::nvfp4x86`], [`super::fp8x86`]) against the
//! generic kernels on the same token ([`super::f32::GemvF32Op`], [`super::i8::rows`] with
//! [`super::i8::V3I8`] / [`super::i8::V4I8`]), over every E2M1 code, every E4M3FN scale byte
//! (NaN included) and every FP8 byte, at K across partial chunks and N across the 128-row
//! scale tiles:
//!
//! - bit-identical (a NaN for a NaN): the AVX2 paths but the NVFP4 `F32` one, and the AVX-512
//!   FP8 path;
//! - the AVX2 NVFP4 `F32` path sums per lane in its own order: it meets the criterion and is
//!   bit-identical to a plain scalar model of that order (`nvfp4_v3_model`), by both of its
//!   scale routes (F16C and integer);
//! - the AVX-512 NVFP4 paths regroup the float sums (see `nvfp4x86`): they meet the profile's
//!   criterion against the f64 reference, give a NaN exactly where the generic kernel does, and
//!   the VNNI and `maddubs` I8 variants agree bit for bit.

use ninfer_core::layout::{Geometry, TensorDesc};
use ninfer_core::registry::{Format, Grouped};
use pulp::Simd;

use super::f32::GemvF32Op;
use super::i8::{quantize, tree8, I8Job, I8Op, QuantAct, V3I8, V4I8};
use super::{f32x86, fast, fp8x86, i8x86, nvfp4x86};
use crate::criteria::{f32_bound, i8_bound, reference_dot};
use crate::weights::Weights;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f32 {
        ((self.next() >> 40) as f32 / (1u64 << 23) as f32) - 1.0
    }
}

/// NVFP4 `[n, k]`: random codes; scales walk through all 256 bytes (`nan`: the NaN bytes
/// 0x7f / 0xff kept, else replaced by 0x38).
fn nvfp4(n: usize, k: usize, seed: u64, nan: bool) -> (TensorDesc, Vec<u8>) {
    let desc = TensorDesc::for_format(Format::Nvfp4, &[n, k]).unwrap();
    let Geometry::Blockscale(g) = desc.geometry() else {
        unreachable!()
    };
    let mut rng = Rng(seed | 1);
    let codes: Vec<u8> = (0..n * k).map(|_| (rng.next() % 16) as u8).collect();
    let scales: Vec<u8> = (0..n * k / 16)
        .map(|i| {
            let b = (i * 97 + seed as usize) as u8;
            if !nan && b & 0x7f == 0x7f {
                0x38
            } else {
                b
            }
        })
        .collect();
    let mut out = vec![0u8; desc.payload_len()];
    g.pack(&codes, &scales, 3.0f32.to_bits(), &mut out).unwrap();
    (desc, out)
}

/// FP8 `[n, k]`: every byte (NaN words included when `nan`), BF16 row scales near 1.
fn fp8(n: usize, k: usize, seed: u64, nan: bool) -> (TensorDesc, Vec<u8>) {
    let desc = TensorDesc::for_format(Format::Fp8E4m3fnRowBf16s, &[n, k]).unwrap();
    let Geometry::RowScale(g) = desc.geometry() else {
        unreachable!()
    };
    let codes: Vec<u8> = (0..n * k)
        .map(|i| {
            let b = (i * 131 + seed as usize) as u8;
            if !nan && b & 0x7f == 0x7f {
                0x40
            } else {
                b
            }
        })
        .collect();
    let scales: Vec<u16> = (0..n).map(|r| 0x3f00 + (r as u16 % 0x200)).collect();
    let mut out = vec![0u8; desc.payload_len()];
    g.pack(&codes, &scales, &mut out).unwrap();
    (desc, out)
}

/// `got` meets the profile's criterion (I8 when `i8`) against the f64 reference for every
/// output whose weights are finite, and is a NaN exactly where the generic kernel's `want` is.
#[allow(clippy::too_many_arguments)]
fn meets(desc: &TensorDesc, p: &[u8], x: &[f32], nb: usize, got: &[f32], want: &[f32], i8: bool, ctx: &str) {
    let (n, k) = (desc.shape()[0], desc.shape()[1]);
    let mut wd = vec![0f32; n * k];
    desc.decode_f32(p, &mut wd).unwrap();
    for b in 0..nb {
        let xb = &x[b * k..(b + 1) * k];
        for row in 0..n {
            let (y, g) = (got[b * n + row], want[b * n + row]);
            assert_eq!(
                y.is_nan(),
                g.is_nan(),
                "{ctx}: batch {b} row {row}: fast {y:e} generic {g:e}"
            );
            let wr = &wd[row * k..(row + 1) * k];
            if wr.iter().any(|v| !v.is_finite()) {
                continue;
            }
            let yr = reference_dot(wr, xb);
            let bound = if i8 { i8_bound(wr, xb) } else { f32_bound(wr, xb) };
            let err = (y as f64 - yr).abs();
            assert!(
                err <= bound,
                "{ctx}: batch {b} row {row}: y {y:e} y_ref {yr:e} |err| {err:e} > {bound:e}"
            );
        }
    }
}

/// An FP32 `[n, chunks * 128]` tensor holding the decoded weights of a row-split `[n, k]`
/// tensor with each chunk's positions in the staged order `order` (zero past `k`; see
/// `f32x86::table_position`).
fn table_order_fp32(order: u8, desc: &TensorDesc, p: &[u8]) -> (TensorDesc, Vec<u8>) {
    let (n, k) = (desc.shape()[0], desc.shape()[1]);
    let kc = k.div_ceil(128) * 128;
    let mut wd = vec![0f32; n * k];
    desc.decode_f32(p, &mut wd).unwrap();
    let mut out = Vec::with_capacity(4 * n * kc);
    for row in 0..n {
        for c in 0..kc / 128 {
            let lanes = f32x86::order_lanes(order);
            for t in 0..128 / lanes {
                for l in 0..lanes {
                    let pos = 128 * c + f32x86::table_position(order, t, l);
                    let v = if pos < k { wd[row * k + pos] } else { 0.0 };
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
    (TensorDesc::for_format(Format::Fp32, &[n, kc]).unwrap(), out)
}

fn same(a: &[f32], b: &[f32], ctx: &str) {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
            "{ctx}: output {i}: fast {x:e} generic {y:e}"
        );
    }
}

/// Run `f` on `nb` batch rows of `n` outputs; returns the outputs, batch-major.
fn outputs(n: usize, nb: usize, f: impl FnOnce(&mut [&mut [f32]])) -> Vec<f32> {
    let mut y = vec![0f32; nb * n];
    let mut ys: Vec<&mut [f32]> = y.chunks_exact_mut(n).collect();
    f(&mut ys);
    y
}

fn activations(k: usize, nb: usize, chunks: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut rng = Rng(seed | 1);
    let x: Vec<f32> = (0..nb * k)
        .map(|i| rng.unit() * [1.0, 7.0, 0.01][i % 3])
        .collect();
    let kc = chunks * 128;
    let mut xs = vec![0f32; nb * kc];
    for b in 0..nb {
        xs[b * kc..b * kc + k].copy_from_slice(&x[b * k..(b + 1) * k]);
    }
    (x, xs)
}

fn f32_op<'a, 'b, 'c>(
    w: Weights<'a>,
    xs: &'a [f32],
    nb: usize,
    ys: &'b mut [&'c mut [f32]],
) -> GemvF32Op<'a, 'b, 'c> {
    GemvF32Op {
        w,
        xs,
        nb,
        r0: 0,
        r1: w.rows(),
        ys,
    }
}

fn i8_job<'a, 'b, 'c>(
    w: Weights<'a>,
    act: &'a QuantAct,
    nb: usize,
    ys: &'b mut [&'c mut [f32]],
) -> I8Job<'a, 'b, 'c> {
    I8Job {
        w,
        act,
        nb,
        r0: 0,
        r1: w.rows(),
        ys,
    }
}

fn f32_parity(desc: &TensorDesc, p: &[u8], nb: usize, seed: u64) {
    let w = Weights::new(desc, p).unwrap();
    let (n, k) = (w.rows(), w.k());
    let (x, xs) = activations(k, nb, w.chunks(), seed);
    let ctx = format!("{} [{n}, {k}] nb {nb} F32", desc.format().name());
    let nv = matches!(w, Weights::Nvfp4 { .. });
    if let Some(s) = pulp::x86::V3::try_new() {
        let want = outputs(n, nb, |ys| Simd::vectorize(s, f32_op(w, &xs, nb, ys)));
        let got = outputs(n, nb, |ys| {
            let job = fast(f32_op(w, &xs, nb, ys));
            if nv {
                Simd::vectorize(s, nvfp4x86::F32V3(s, job))
            } else {
                Simd::vectorize(s, fp8x86::FastV3(s, job))
            }
        });
        if nv {
            // Per-lane sums of `2 e2m1 * x`, then the scale: the criterion (as on AVX-512), and
            // bit for bit the scalar model of that order.
            meets(desc, p, &x, nb, &got, &want, false, &format!("V3 {ctx}"));
            same(&got, &nvfp4_v3_model(w, &xs, nb), &format!("V3 model {ctx}"));
        } else {
            same(&got, &want, &format!("V3 {ctx}"));
        }
        // The fast paths take the F16C route where the CPU has F16C: the integer route too
        // (the same exact values, so the same bits).
        let plain = outputs(n, nb, |ys| {
            let job = fast(f32_op(w, &xs, nb, ys));
            if nv {
                Simd::vectorize(s, nvfp4x86::PlainV3::F32(s, job, false))
            } else {
                Simd::vectorize(s, fp8x86::PlainV3(s, job))
            }
        });
        same(&plain, &got, &format!("V3 (no F16C) {ctx}"));
        if nv {
            // The NVFP4 kernels are compiled per vendor's prefetch choices: the other one too.
            let other = outputs(n, nb, |ys| {
                let job = fast(f32_op(w, &xs, nb, ys));
                Simd::vectorize(s, nvfp4x86::PlainV3::F32(s, job, true))
            });
            same(&other, &plain, &format!("V3 (other vendor's prefetches) {ctx}"));
        }
    }
    if let Some(s) = pulp::x86::V4::try_new() {
        let want = outputs(n, nb, |ys| Simd::vectorize(s, f32_op(w, &xs, nb, ys)));
        let got = outputs(n, nb, |ys| {
            let job = fast(f32_op(w, &xs, nb, ys));
            if nv {
                Simd::vectorize(s, nvfp4x86::F32V4(s, job))
            } else {
                Simd::vectorize(s, fp8x86::FastV4(s, job))
            }
        });
        if nv {
            meets(desc, p, &x, nb, &got, &want, false, &format!("V4 {ctx}"));
        } else {
            same(&got, &want, &format!("V4 {ctx}"));
        }
    } else {
        println!("SKIPPED: AVX-512 F32 parity ({ctx}): this CPU has no AVX-512");
    }
}

/// A plain scalar model of the AVX2 NVFP4 `F32` kernel's order (`nvfp4x86`, `F32` profile):
/// per chunk, half h and lane l, two sums `blk[0]`, `blk[1]` of `(2 e2m1 2^24) x` over the
/// vectors `j = 4 p + t` with `j` even and odd (position `64 h + 8 l + 2 t + p`; a product,
/// then fused multiply-adds, in j order), `acc[i][l] = fma(blk[i], s 2^-8, acc[i][l])` with the
/// scale of that lane's sub-block `4 h + l / 2` (0 past the scale plane's tiles); the row's sum
/// is the fixed tree of `acc[0][l] + acc[1][l]`, times `2^-17`, divided by `d_w`. `xs`: the
/// activations padded to whole chunks, batch-major. Returns the outputs batch-major.
fn nvfp4_v3_model(w: Weights<'_>, xs: &[f32], nb: usize) -> Vec<f32> {
    use ninfer_core::layout::blockscale::scale_index;
    use ninfer_core::tables::{E2M1_TO_F32, E4M3FN_TO_F32};
    let Weights::Nvfp4 {
        n,
        row_bytes,
        codes,
        scales,
        nkt,
        d,
        ..
    } = w
    else {
        unreachable!()
    };
    let chunks = w.chunks();
    let kc = 128 * chunks;
    let mut y = vec![0f32; nb * n];
    for b in 0..nb {
        let x = &xs[b * kc..(b + 1) * kc];
        for row in 0..n {
            let code = |pos: usize| {
                let byte = if pos / 2 < row_bytes {
                    codes[row * row_bytes + pos / 2]
                } else {
                    0
                };
                2.0 * E2M1_TO_F32[usize::from((byte >> (4 * (pos % 2))) & 15)] * 16_777_216.0
            };
            let scale = |kb: usize| {
                let s = if kb < 4 * nkt {
                    E4M3FN_TO_F32[usize::from(scales[scale_index(row, kb, nkt)])]
                } else {
                    0.0
                };
                s / 256.0
            };
            let mut acc = [[0f32; 8]; 2];
            for c in 0..chunks {
                for h in 0..2 {
                    for l in 0..8 {
                        let pos = |j: usize| 128 * c + 64 * h + 8 * l + 2 * (j % 4) + j / 4;
                        let mut blk = [0f32; 2];
                        for (j, v) in blk.iter_mut().enumerate() {
                            *v = code(pos(j)) * x[pos(j)];
                        }
                        for j in 2..8 {
                            blk[j % 2] = code(pos(j)).mul_add(x[pos(j)], blk[j % 2]);
                        }
                        let s = scale(8 * c + 4 * h + l / 2);
                        for (a, v) in acc.iter_mut().zip(blk) {
                            a[l] = v.mul_add(s, a[l]);
                        }
                    }
                }
            }
            let t = tree8(core::array::from_fn(|l| acc[0][l] + acc[1][l]));
            y[b * n + row] = t / 131_072.0 / d;
        }
    }
    y
}

fn i8_parity(desc: &TensorDesc, p: &[u8], nb: usize, seed: u64) {
    let w = Weights::new(desc, p).unwrap();
    let (n, k) = (w.rows(), w.k());
    let (x, _) = activations(k, nb, w.chunks(), seed);
    let act = quantize(&x, nb, k, w.chunks(), 12, false).unwrap();
    let ctx = format!("NVFP4 [{n}, {k}] nb {nb} I8");
    if let Some(s) = pulp::x86::V3::try_new() {
        let want = outputs(n, nb, |ys| {
            Simd::vectorize(
                s,
                I8Op {
                    kern: V3I8(s),
                    job: i8_job(w, &act, nb, ys),
                },
            )
        });
        let got = outputs(n, nb, |ys| {
            Simd::vectorize(s, nvfp4x86::I8V3(s, i8_job(w, &act, nb, ys)))
        });
        meets(desc, p, &x, nb, &got, &want, true, &format!("V3 {ctx}"));
        // `I8V3` takes the F16C scale route where the CPU has F16C: the integer route too
        // (the same exact scales, so the same bits).
        let plain = outputs(n, nb, |ys| {
            Simd::vectorize(s, nvfp4x86::PlainV3::I8(s, i8_job(w, &act, nb, ys), false))
        });
        same(&plain, &got, &format!("V3 (no F16C) {ctx}"));
        // The kernels are compiled per vendor's prefetch choices: the other one too.
        let other = outputs(n, nb, |ys| {
            Simd::vectorize(s, nvfp4x86::PlainV3::I8(s, i8_job(w, &act, nb, ys), true))
        });
        same(&other, &plain, &format!("V3 (other vendor's prefetches) {ctx}"));
        if std::arch::is_x86_feature_detected!("f16c") {
            // SAFETY: F16C was detected just above; the token proves the V3 features.
            let f16c = outputs(n, nb, |ys| unsafe {
                nvfp4x86::i8_rows_v3_f16c(s, i8_job(w, &act, nb, ys))
            });
            same(&f16c, &plain, &format!("V3 F16C (maddubs form) {ctx}"));
            if std::arch::is_x86_feature_detected!("avxvnni") {
                // SAFETY: F16C and AVX-VNNI were detected; the token proves the V3 features.
                let vnni = outputs(n, nb, |ys| unsafe {
                    nvfp4x86::i8_rows_v3_f16c_vnni(s, i8_job(w, &act, nb, ys))
                });
                same(&vnni, &plain, &format!("V3 AVX-VNNI {ctx}"));
            } else {
                println!("SKIPPED: NVFP4 AVX-VNNI I8 parity ({ctx}): this CPU has no AVX-VNNI");
            }
        } else {
            println!("SKIPPED: NVFP4 F16C I8 parity ({ctx}): this CPU has no F16C");
        }
    }
    if let Some(s) = pulp::x86::V4::try_new() {
        let want = outputs(n, nb, |ys| {
            Simd::vectorize(
                s,
                I8Op {
                    kern: V4I8(s),
                    job: i8_job(w, &act, nb, ys),
                },
            )
        });
        let got = outputs(n, nb, |ys| {
            Simd::vectorize(s, nvfp4x86::I8V4(s, i8_job(w, &act, nb, ys)))
        });
        meets(desc, p, &x, nb, &got, &want, true, &format!("V4 {ctx}"));
        if std::arch::is_x86_feature_detected!("avx512vnni") {
            // SAFETY: AVX-512 VNNI was detected just above; the token proves the V4 features.
            let vnni = outputs(n, nb, |ys| unsafe {
                nvfp4x86::i8_rows_v4_vnni(s, i8_job(w, &act, nb, ys))
            });
            same(&vnni, &got, &format!("V4 VNNI {ctx}"));
        } else {
            println!("SKIPPED: AVX-512 VNNI I8 parity ({ctx}): this CPU has no VNNI");
        }
    } else {
        println!("SKIPPED: AVX-512 I8 parity ({ctx}): this CPU has no AVX-512");
    }
}

#[test]
fn nvfp4_fast_paths_match_the_generic_kernels() {
    for (i, &k) in [16, 32, 48, 64, 80, 128, 144, 4112].iter().enumerate() {
        for (j, &n) in [1, 7, 130, 257].iter().enumerate() {
            if k == 4112 && n > 7 {
                continue;
            }
            let seed = 3 + 11 * i as u64 + j as u64;
            for nan in [false, true] {
                let (desc, p) = nvfp4(n, k, seed, nan);
                for nb in [1, 3] {
                    f32_parity(&desc, &p, nb, seed);
                    i8_parity(&desc, &p, nb, seed);
                }
            }
        }
    }
}

#[test]
fn fp8_fast_paths_equal_the_generic_kernel_bit_for_bit() {
    for (i, &k) in [1, 31, 127, 128, 129, 256, 300, 4097].iter().enumerate() {
        for (j, &n) in [1, 7, 129].iter().enumerate() {
            let seed = 5 + 13 * i as u64 + j as u64;
            for nan in [false, true] {
                let (desc, p) = fp8(n, k, seed, nan);
                // 3 and 8: the kernels for up to 4 and up to `MAX_BATCH` batch rows, partly used
                // and full.
                for nb in [1, 2, 3, 8] {
                    f32_parity(&desc, &p, nb, seed);
                }
            }
        }
    }
}

/// The AVX2 F16C route and the AVX-512 kernel multiply the activations by 2^8 (their weights
/// are `w * 2^-8`): still
/// bit-identical to the generic kernel at the edges of that exactness (subnormal activations,
/// |x| just below 2^120, and from 2^120 up, where the call takes the integer route instead).
#[test]
fn fp8_f16c_route_stays_bit_identical_at_extreme_activations() {
    let Some(s) = pulp::x86::V3::try_new() else {
        println!("SKIPPED: AVX2 FP8 extreme activations: this CPU has no AVX2");
        return;
    };
    let (n, k) = (7, 256);
    let (desc, p) = fp8(n, k, 3, false);
    let w = Weights::new(&desc, &p).unwrap();
    for big in [1.5 * 2f32.powi(119), 2f32.powi(120), f32::MAX, f32::INFINITY] {
        let mut xs: Vec<f32> = (0..k).map(|i| [1e-40, -3e-39, 0.5, -2.0][i % 4]).collect();
        xs[5] = big;
        let want = outputs(n, 1, |ys| Simd::vectorize(s, f32_op(w, &xs, 1, ys)));
        let got = outputs(n, 1, |ys| {
            Simd::vectorize(s, fp8x86::FastV3(s, fast(f32_op(w, &xs, 1, ys))))
        });
        same(&got, &want, &format!("V3 FP8 F32, x[5] = {big:e}"));
        if let Some(s4) = pulp::x86::V4::try_new() {
            // The AVX-512 kernel scales the same way (`fp8x86::rows_v4`).
            let want = outputs(n, 1, |ys| Simd::vectorize(s4, f32_op(w, &xs, 1, ys)));
            let got = outputs(n, 1, |ys| {
                Simd::vectorize(s4, fp8x86::FastV4(s4, fast(f32_op(w, &xs, 1, ys))))
            });
            same(&got, &want, &format!("V4 FP8 F32, x[5] = {big:e}"));
        }
        if big < f32::MAX {
            assert!(
                want.iter().any(|y| y.is_finite()),
                "x[5] = {big:e}: no finite output"
            );
        }
    }
}

/// The row-split `F32` kernels' per-group order (`f32x86::pass_v3_split` with `L = 8` lanes,
/// `f32x86::pass_v4_split` with `L = 16`), written plainly from the generic decoder
/// (`Weights::int_chunk`, `Weights::sub_scales`): a chunk is blocks of `4 L` positions (vector `j`
/// of a block, lane `l`: position `4 L b + 4 l + j`, the staged orders `f32x86::SPLIT_V3` and
/// `Q5_TABLE`); per group of blocks (a group of 64 positions is 2 AVX2 blocks or 1 AVX-512 block;
/// W8's group of 32 is 1 AVX2 block or half the lanes of an AVX-512 one) and lane `l`,
/// `C = chains(g, k)` chains of `d x` (AVX2: `f32x86::split_chains_v3`) with `d = q 2^(32 - b)`
/// (vector `j` of a block feeds chain `j % C`, the first term of each chain a product, the rest
/// FMAs), each chain then folded into its accumulator by one FMA with the lane's
/// `s 2^-(32 - b)`; the output is `reduce` (pulp's reduction) of the accumulators' lane sum.
fn split_order<const L: usize>(
    reduce: impl Fn([f32; L]) -> f32,
    chains: fn(Grouped, usize) -> usize,
    w: Weights<'_>,
    xs: &[f32],
    nb: usize,
    ys: &mut [&mut [f32]],
) {
    let Weights::Grouped { g, .. } = w else {
        panic!("split_order: a row-split tensor")
    };
    let chunks = w.chunks();
    let kc = chunks * 128;
    let ch = chains(g, w.k());
    let unit = f32x86::top_unit(g);
    let mut q = [0i8; crate::weights::CHUNK];
    // Blocks per chunk and per fold (a group, or for W8 on 16 lanes, one block of two groups).
    let bpc = 128 / (4 * L);
    let bpg = (g.group_size() / (4 * L)).max(1);
    for (b, y) in ys.iter_mut().enumerate().take(nb) {
        for (row, out) in y.iter_mut().enumerate() {
            let mut acc = [[0f32; L]; 2];
            for c in 0..chunks {
                w.int_chunk(row, c, &mut q);
                let sub = w.sub_scales(row, c);
                for h in 0..bpc / bpg {
                    let mut a = [[0f32; L]; 2];
                    for bi in 0..bpg {
                        for j in 0..4 {
                            for (l, lane) in (0..L).map(|l| (l, j % ch)) {
                                let p = 4 * L * (bpg * h + bi) + 4 * l + j;
                                let d = f32::from(q[p]) / unit;
                                let x = xs[b * kc + 128 * c + p];
                                a[lane][l] = if bi == 0 && j < ch {
                                    d * x
                                } else {
                                    d.mul_add(x, a[lane][l])
                                };
                            }
                        }
                    }
                    for (yc, ac) in acc.iter_mut().zip(&a).take(ch) {
                        for (l, (yl, al)) in yc.iter_mut().zip(ac).enumerate() {
                            // The lane's sub-block (16 positions; every one of a group has the
                            // group's scale).
                            let p = 4 * L * bpg * h + 4 * l;
                            *yl = al.mul_add(sub[p / 16] * unit, *yl);
                        }
                    }
                }
            }
            let t: [f32; L] = core::array::from_fn(|l| acc[0][l] + acc[1][l]);
            *out = reduce(t);
        }
    }
}

/// The AVX2 row-split `I8` kernel's order (`i8x86` module docs, "The float part"), written
/// plainly from the generic decoder (`Weights::int_chunk`, `Weights::sub_scales`) and the
/// staging's block steps: per output eight f32 lanes; block j of chunk pair p (block `j % 4` of
/// chunk `2p + j / 4`) adds its exact integer dot `T` as `fma(T, s * d, lane j)`; a pair's missing
/// second chunk is eight zero blocks with zero scales and steps; the output is [`tree8`] of the
/// lanes.
fn v3_block_order(w: Weights<'_>, act: &QuantAct, nb: usize, ys: &mut [&mut [f32]]) {
    let chunks = act.chunks;
    let mut q = [0i8; crate::weights::CHUNK];
    for (b, y) in ys.iter_mut().enumerate().take(nb) {
        for (row, out) in y.iter_mut().enumerate() {
            let mut lanes = [0f32; 8];
            for p in 0..chunks.div_ceil(2) {
                for (j, lane) in lanes.iter_mut().enumerate() {
                    let (c, i) = (2 * p + j / 4, j % 4);
                    let (t, sd) = if c < chunks {
                        w.int_chunk(row, c, &mut q);
                        let xq = &act.xq[b * chunks + c];
                        let t: i32 = (32 * i..32 * i + 32).map(|l| q[l] as i32 * xq[l] as i32).sum();
                        (t, w.sub_scales(row, c)[2 * i] * act.dsub[b * chunks + c][2 * i])
                    } else {
                        (0, 0.0f32 * 0.0)
                    };
                    *lane = (t as f32).mul_add(sd, *lane);
                }
            }
            *out = tree8(lanes);
        }
    }
}

/// The row-split F32 and I8 fast paths (and the BF16/FP32 F32 one) against the generic kernels
/// on the same token, bit for bit, for every batch size (each is its own monomorphised kernel).
fn grouped_parity(desc: &TensorDesc, p: &[u8], nb: usize, seed: u64) {
    let w = Weights::new(desc, p).unwrap();
    let (n, k) = (w.rows(), w.k());
    let (x, xs) = activations(k, nb, w.chunks(), seed);
    let ctx = format!("{} [{n}, {k}] nb {nb}", desc.format().name());
    // No NVFP4 correction lanes; the block forms the AVX2 kernel reads.
    let act = quantize(&x, nb, k, w.chunks(), 0, true).unwrap();
    let grouped = matches!(w, Weights::Grouped { .. });
    if let Some(s) = pulp::x86::V3::try_new() {
        let want = outputs(n, nb, |ys| Simd::vectorize(s, f32_op(w, &xs, nb, ys)));
        let got = outputs(n, nb, |ys| {
            Simd::vectorize(s, f32x86::FastV3(s, fast(f32_op(w, &xs, nb, ys))))
        });
        if grouped {
            // The AVX2 row-split kernels sum per group (`f32x86::pass_v3_split`): that order
            // written plainly.
            let want = outputs(n, nb, |ys| {
                split_order::<8>(
                    |t| s.reduce_sum_f32s(pulp::cast(t)),
                    f32x86::split_chains_v3,
                    w,
                    &xs,
                    nb,
                    ys,
                )
            });
            same(&got, &want, &format!("V3 F32 (per-group order) {ctx}"));
            meets(desc, p, &x, nb, &got, &want, false, &format!("V3 F32 {ctx}"));
            // The dispatcher sends Q5/Q6 to the GFNI decode where the CPU has GFNI
            // (`i8x86::gfni_takes`; `FastV3` above is the route without it).
            let q5_q6 = matches!(desc.format(), Format::Q5G64F16S | Format::Q6G64F16S);
            if q5_q6 && std::arch::is_x86_feature_detected!("gfni") {
                // SAFETY: GFNI was detected just above; the token proves the V3 features.
                let gfni = outputs(n, nb, |ys| unsafe {
                    f32x86::rows_v3_gfni(s, fast(f32_op(w, &xs, nb, ys)))
                });
                same(&gfni, &want, &format!("V3 F32 GFNI decode {ctx}"));
            } else if q5_q6 {
                println!("SKIPPED: V3 F32 GFNI decode ({ctx}): this CPU has no GFNI");
            }
        } else if desc.format() == Format::Bf16 {
            // The AVX2 BF16 kernel sums in its staged order (`f32x86::BF16_V3`): the generic
            // kernel on the decoded weights and the activations permuted into it.
            let order = f32x86::BF16_V3;
            let (pd, pp) = table_order_fp32(order, desc, p);
            let pw = Weights::new(&pd, &pp).unwrap();
            let xp = f32x86::table_order(order, &xs);
            let want = outputs(n, nb, |ys| Simd::vectorize(s, f32_op(pw, &xp, nb, ys)));
            same(&got, &want, &format!("V3 F32 (staged order) {ctx}"));
            meets(desc, p, &x, nb, &got, &want, false, &format!("V3 F32 {ctx}"));
        } else {
            same(&got, &want, &format!("V3 F32 {ctx}"));
        }
        if grouped {
            let want = outputs(n, nb, |ys| v3_block_order(w, &act, nb, ys));
            let got = outputs(n, nb, |ys| {
                Simd::vectorize(s, i8x86::FastV3(s, i8_job(w, &act, nb, ys)))
            });
            same(&got, &want, &format!("V3 I8 (block-total order) {ctx}"));
            meets(desc, p, &x, nb, &got, &want, true, &format!("V3 I8 {ctx}"));
            // `FastV3` takes the AVX-VNNI form where the CPU has it, one weight stream on AMD
            // cores and four for large row blocks elsewhere (never at these shapes): every form
            // and stream count by name.
            // SAFETY: the token proves the V3 features.
            let plain = outputs(n, nb, |ys| unsafe {
                i8x86::rows_v3_streams::<{ i8x86::V3_STREAMS }>(s, i8_job(w, &act, nb, ys))
            });
            same(&plain, &want, &format!("V3 I8 maddubs form {ctx}"));
            // SAFETY: the token proves the V3 features.
            let one = outputs(n, nb, |ys| unsafe {
                i8x86::rows_v3_streams::<1>(s, i8_job(w, &act, nb, ys))
            });
            same(&one, &want, &format!("V3 I8 maddubs form, one stream {ctx}"));
            // SAFETY: the token proves the V3 features.
            let far = outputs(n, nb, |ys| unsafe {
                i8x86::rows_v3_streams::<{ i8x86::V3_STREAMS_FAR }>(s, i8_job(w, &act, nb, ys))
            });
            same(&far, &want, &format!("V3 I8 maddubs form, far streams {ctx}"));
            // The GFNI decode (`i8x86::gfni_takes`: Q5/Q6 where the CPU has GFNI), both dot
            // forms, every stream count.
            let q5_q6 = matches!(desc.format(), Format::Q5G64F16S | Format::Q6G64F16S);
            if q5_q6 && std::arch::is_x86_feature_detected!("gfni") {
                // SAFETY: GFNI was detected just above; the token proves the V3 features.
                let gfni = outputs(n, nb, |ys| unsafe {
                    i8x86::rows_v3_gfni::<{ i8x86::V3_STREAMS }>(s, i8_job(w, &act, nb, ys))
                });
                same(&gfni, &want, &format!("V3 I8 GFNI decode {ctx}"));
                // SAFETY: as above.
                let gfni = outputs(n, nb, |ys| unsafe {
                    i8x86::rows_v3_gfni::<{ i8x86::V3_STREAMS_FAR }>(s, i8_job(w, &act, nb, ys))
                });
                same(&gfni, &want, &format!("V3 I8 GFNI decode, far streams {ctx}"));
                if std::arch::is_x86_feature_detected!("avxvnni") {
                    for r in [1, 2] {
                        // SAFETY: GFNI and AVX-VNNI were detected just above; the token proves
                        // the V3 features.
                        let both = outputs(n, nb, |ys| unsafe {
                            if r == 1 {
                                i8x86::rows_v3_vnni_gfni::<1>(s, i8_job(w, &act, nb, ys))
                            } else {
                                i8x86::rows_v3_vnni_gfni::<{ i8x86::V3_STREAMS }>(s, i8_job(w, &act, nb, ys))
                            }
                        });
                        same(
                            &both,
                            &want,
                            &format!("V3 AVX-VNNI I8 GFNI decode, {r} stream(s) {ctx}"),
                        );
                    }
                }
            } else if q5_q6 {
                println!("SKIPPED: V3 I8 GFNI decode ({ctx}): this CPU has no GFNI");
            }
            if std::arch::is_x86_feature_detected!("avxvnni") {
                // SAFETY: AVX-VNNI was detected just above; the token proves the V3 features.
                let vnni = outputs(n, nb, |ys| unsafe {
                    i8x86::rows_v3_vnni::<{ i8x86::V3_STREAMS }>(s, i8_job(w, &act, nb, ys))
                });
                same(&vnni, &want, &format!("V3 AVX-VNNI I8 {ctx}"));
                // SAFETY: as above.
                let vnni = outputs(n, nb, |ys| unsafe {
                    i8x86::rows_v3_vnni::<1>(s, i8_job(w, &act, nb, ys))
                });
                same(&vnni, &want, &format!("V3 AVX-VNNI I8, one stream {ctx}"));
                // SAFETY: as above.
                let vnni = outputs(n, nb, |ys| unsafe {
                    i8x86::rows_v3_vnni::<{ i8x86::V3_STREAMS_FAR }>(s, i8_job(w, &act, nb, ys))
                });
                same(&vnni, &want, &format!("V3 AVX-VNNI I8, far streams {ctx}"));
            } else {
                println!("SKIPPED: AVX-VNNI I8 parity ({ctx}): this CPU has no AVX-VNNI");
            }
        }
    }
    if let Some(s) = pulp::x86::V4::try_new() {
        let got = outputs(n, nb, |ys| {
            Simd::vectorize(s, f32x86::FastV4(s, fast(f32_op(w, &xs, nb, ys))))
        });
        let table = match desc.format() {
            Format::Q4G64F16S => Some(0),
            Format::Q5G64F16S => Some(1),
            _ => None,
        };
        if matches!(desc.format(), Format::Q6G64F16S | Format::W8G32F16S) {
            // Q6 and W8 sum per group (`f32x86::pass_v4_split`): that order written plainly.
            // (On AMD cores a `V4` call runs the AVX2 rows instead, `f32x86::v3_rows_on_v4`:
            // see `v4_calls_run_on_the_avx2_rows_give_their_bits`.)
            let want = outputs(n, nb, |ys| {
                split_order::<16>(
                    |t| s.reduce_sum_f32s(pulp::cast(t)),
                    |_, _| f32x86::SPLIT_CHAINS,
                    w,
                    &xs,
                    nb,
                    ys,
                )
            });
            same(&got, &want, &format!("V4 F32 (per-group order) {ctx}"));
            meets(desc, p, &x, nb, &got, &want, false, &format!("V4 F32 {ctx}"));
        } else if let Some(kind) = table {
            // The table kernels sum in their own order (see `f32x86::Q4_TABLE`): the generic
            // kernel on the decoded weights and the activations permuted into that order.
            let (pd, pp) = table_order_fp32(kind, desc, p);
            let pw = Weights::new(&pd, &pp).unwrap();
            let xp = f32x86::table_order(kind, &xs);
            let want = outputs(n, nb, |ys| Simd::vectorize(s, f32_op(pw, &xp, nb, ys)));
            same(&got, &want, &format!("V4 F32 (table order) {ctx}"));
            meets(desc, p, &x, nb, &got, &want, false, &format!("V4 F32 {ctx}"));
        } else {
            let want = outputs(n, nb, |ys| Simd::vectorize(s, f32_op(w, &xs, nb, ys)));
            same(&got, &want, &format!("V4 F32 {ctx}"));
        }
        if grouped {
            let want = outputs(n, nb, |ys| {
                Simd::vectorize(
                    s,
                    I8Op {
                        kern: V4I8(s),
                        job: i8_job(w, &act, nb, ys),
                    },
                )
            });
            let got = outputs(n, nb, |ys| {
                Simd::vectorize(s, i8x86::FastV4(s, i8_job(w, &act, nb, ys)))
            });
            same(&got, &want, &format!("V4 I8 {ctx}"));
            if std::arch::is_x86_feature_detected!("avx512vnni") {
                // SAFETY: AVX-512 VNNI was detected just above; the token proves the V4 features.
                let vnni = outputs(n, nb, |ys| unsafe {
                    i8x86::rows_v4_vnni(s, i8_job(w, &act, nb, ys))
                });
                same(&vnni, &want, &format!("V4 VNNI I8 {ctx}"));
            } else {
                println!("SKIPPED: AVX-512 VNNI I8 parity ({ctx}): this CPU has no VNNI");
            }
        }
    } else {
        println!("SKIPPED: AVX-512 parity ({ctx}): this CPU has no AVX-512");
    }
}

#[test]
fn row_split_bf16_fp32_fast_paths_equal_the_generic_kernels_bit_for_bit() {
    let formats = [
        Format::Q4G64F16S,
        Format::Q5G64F16S,
        Format::Q6G64F16S,
        Format::W8G32F16S,
        Format::Bf16,
        Format::Fp32,
    ];
    for (fi, &format) in formats.iter().enumerate() {
        for (i, &k) in [1, 63, 64, 65, 127, 128, 129, 300, 4097].iter().enumerate() {
            for (j, &n) in [1, 7, 33].iter().enumerate() {
                let (desc, p) = crate::report::synthetic(format, n, k).unwrap();
                for nb in 1..=crate::MAX_BATCH {
                    if k == 4097 && nb % 3 != 1 {
                        continue;
                    }
                    grouped_parity(
                        &desc,
                        &p,
                        nb,
                        7 + 31 * fi as u64 + 5 * i as u64 + j as u64 + 97 * nb as u64,
                    );
                }
            }
        }
    }
}

/// Where a `V4` call runs the AVX2 row-split rows (`f32x86::v3_rows_on_v4`, F32;
/// `i8x86::v3_rows_on_v4`, I8: AMD cores), the public GEMV gives the `V3` call's bits, at K
/// past the L2-only prefetch's threshold and below it, one and three batch rows.
#[test]
fn v4_calls_run_on_the_avx2_rows_give_their_bits() {
    use crate::{Isa, Profile};
    if pulp::x86::V4::try_new().is_none() {
        println!("SKIPPED: V4 calls on the AVX2 rows: this CPU has no AVX-512");
        return;
    }
    for format in [Format::Q6G64F16S, Format::W8G32F16S] {
        for (n, k) in [(33, 300), (9, 4097)] {
            let (desc, p) = crate::report::synthetic(format, n, k).unwrap();
            let w = Weights::new(&desc, &p).unwrap();
            for (profile, routed) in [
                (Profile::F32, f32x86::v3_rows_on_v4(&w)),
                (Profile::I8, i8x86::v3_rows_on_v4(&w)),
            ] {
                let ctx = format!("{} [{n}, {k}] {profile:?}", format.name());
                if !routed {
                    println!("SKIPPED: {ctx}: a V4 call runs the AVX-512 kernel on this CPU");
                    continue;
                }
                for nb in [1, 3] {
                    let (x, _) = activations(k, nb, w.chunks(), 5 + nb as u64);
                    let run = |isa: Isa| {
                        let mut y = vec![0f32; nb * n];
                        isa.gemv_batch(&desc, &p, profile, &x, nb, &mut y, 2).unwrap();
                        y
                    };
                    same(&run(Isa::V4), &run(Isa::V3), &format!("{ctx} nb {nb}"));
                }
            }
        }
    }
}

/// The AVX2 `I8` block totals at the largest integer dots the schemes allow: every weight the
/// largest positive code (`u' = 2^b - 1`: Q4/Q5 sum four `maddubs` lanes in i16 before widening,
/// Q6 two; W8's `|q| = 127`) against activation codes all `+127` or all `-127`. Bit-identical to
/// the plainly written order, whose dots are i32, and within the `I8` criterion; an i16 overflow
/// in a reduction step would be far off both.
#[test]
fn v3_i8_block_totals_hold_at_the_largest_dots() {
    use ninfer_core::encode::{twin, Source};
    let Some(s) = pulp::x86::V3::try_new() else {
        println!("SKIPPED: AVX2 I8 largest dots: this CPU has no AVX2");
        return;
    };
    let (n, k, nb) = (2, 256, 2);
    for format in [
        Format::Q4G64F16S,
        Format::Q5G64F16S,
        Format::Q6G64F16S,
        Format::W8G32F16S,
    ] {
        let desc = TensorDesc::for_format(format, &[n, k]).unwrap();
        let Geometry::RowSplit(geo) = *desc.geometry() else {
            panic!("{format:?} is row-split")
        };
        // Row 0 all +1 (the largest positive code), row 1 all -1.
        let wts: Vec<f32> = (0..n * k).map(|i| if i < k { 1.0 } else { -1.0 }).collect();
        let mut p = vec![0u8; desc.payload_len()];
        geo.encode_into(Source::F32(&wts), twin::encode_group, &mut p)
            .unwrap();
        let w = Weights::new(&desc, &p).unwrap();
        let Weights::Grouped { g, .. } = w else {
            panic!("{format:?} is grouped")
        };
        let top = (1i32 << (g.bits() - 1)) - 1;
        let mut q = [0i8; crate::weights::CHUNK];
        w.int_chunk(0, 0, &mut q);
        assert!(q.iter().all(|&v| i32::from(v) == top), "{format:?}: codes {q:?}");
        // Batch row 0 all +1, row 1 all -1: activation codes +127 and -127.
        let x: Vec<f32> = (0..nb * k).map(|i| if i < k { 1.0 } else { -1.0 }).collect();
        let act = quantize(&x, nb, k, w.chunks(), 0, true).unwrap();
        let want = outputs(n, nb, |ys| v3_block_order(w, &act, nb, ys));
        // SAFETY: the token proves the V3 features.
        let got = outputs(n, nb, |ys| unsafe {
            i8x86::rows_v3_streams::<{ i8x86::V3_STREAMS }>(s, i8_job(w, &act, nb, ys))
        });
        let ctx = format!("{} largest dots", format.name());
        same(&got, &want, &ctx);
        meets(&desc, &p, &x, nb, &got, &want, true, &ctx);
        // y = sum of w x: +-k, to within the scale's binary16 rounding.
        for (i, y) in got.iter().enumerate() {
            let sign = if (i / n == 0) == (i % n == 0) { 1.0 } else { -1.0 };
            assert!(
                (y - sign * k as f32).abs() < 0.01 * k as f32,
                "{ctx}: output {i} = {y}"
            );
        }
    }
}
