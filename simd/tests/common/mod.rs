//! Shared test support: payload builders (through the core's encoder and `pack` functions), the
//! oracle, and the checks every path must pass. A failing check prints the inputs that broke it.
#![allow(dead_code)]

use ninfer_core::encode::{twin, Source};
use ninfer_core::layout::contiguous::Words;
use ninfer_core::layout::{Geometry, TensorDesc};
use ninfer_core::registry::Format;
use ninfer_core::word::bf16::f32_to_bf16_rne as oracle_bf16;
use ninfer_simd::criteria::{f32_bound, i8_bound, reference_dot};
use ninfer_simd::{Isa, KernelError, Profile};

/// K values of the issue (Q4/Q5/Q6/W8/FP8/BF16/FP32).
pub const KS: [usize; 8] = [1, 63, 64, 65, 127, 128, 129, 4097];
/// K values for NVFP4 (multiples of 16 near the same boundaries).
pub const KS_NVFP4: [usize; 6] = [16, 64, 80, 128, 144, 4112];
/// N values of the issue.
pub const NS: [usize; 3] = [1, 7, 129];

/// Every format with a GEMV/dequantize kernel.
pub const FORMATS: [Format; 8] = [
    Format::Q4G64F16S,
    Format::Q5G64F16S,
    Format::Q6G64F16S,
    Format::W8G32F16S,
    Format::Nvfp4,
    Format::Fp8E4m3fnRowBf16s,
    Format::Bf16,
    Format::Fp32,
];

/// Formats of the I8 profile.
pub const I8_FORMATS: [Format; 5] = [
    Format::Q4G64F16S,
    Format::Q5G64F16S,
    Format::Q6G64F16S,
    Format::W8G32F16S,
    Format::Nvfp4,
];

/// xorshift64*: deterministic test data without a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f32 {
        ((self.next() >> 40) as f32 / (1u64 << 23) as f32) - 1.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

pub fn ks_for(f: Format) -> &'static [usize] {
    if f == Format::Nvfp4 {
        &KS_NVFP4
    } else {
        &KS
    }
}

/// A valid payload of `format` with shape `[n, k]` and mixed-magnitude data.
pub fn build(format: Format, n: usize, k: usize, seed: u64) -> (TensorDesc, Vec<u8>) {
    let desc = TensorDesc::for_format(format, &[n, k]).expect("descriptor");
    let mut rng = Rng(seed | 1);
    let mut out = vec![0u8; desc.payload_len()];
    match desc.geometry() {
        Geometry::RowSplit(g) => {
            // Source values with a per-group magnitude spread, some all-zero groups.
            let src: Vec<f32> = (0..n * k)
                .map(|i| {
                    let grp = i / 32;
                    let mag = [1.0f32, 0.01, 37.0, 0.0, 2.5e-3, 100.0][grp % 6];
                    rng.unit() * mag
                })
                .collect();
            g.encode_into(Source::F32(&src), twin::encode_group, &mut out)
                .expect("encode");
        }
        Geometry::Blockscale(g) => {
            let codes: Vec<u8> = (0..n * k).map(|_| rng.below(16) as u8).collect();
            // Valid scales: sign-zero finite E4M3FN words (0x00..=0x7e), biased to moderate ones.
            let scales: Vec<u8> = (0..n * k / 16)
                .map(|_| {
                    if rng.below(8) == 0 {
                        rng.below(0x7f) as u8
                    } else {
                        0x30 + rng.below(0x18) as u8
                    }
                })
                .collect();
            g.pack(&codes, &scales, 3.0f32.to_bits(), &mut out).expect("pack");
        }
        Geometry::RowScale(g) => {
            let codes: Vec<u8> = (0..n * k)
                .map(|_| loop {
                    let c = rng.below(256) as u8;
                    if c & 0x7f != 0x7f {
                        break c;
                    }
                })
                .collect();
            let scales: Vec<u16> = (0..n).map(|_| 0x3c00 + rng.below(0x0300) as u16).collect();
            g.pack(&codes, &scales, &mut out).expect("pack");
        }
        Geometry::Contiguous(g) => match format {
            Format::Bf16 => {
                let w: Vec<u16> = (0..n * k).map(|_| oracle_bf16(rng.unit() * 4.0)).collect();
                g.pack(Words::U16(&w), &mut out).expect("pack");
            }
            _ => {
                let w: Vec<u32> = (0..n * k).map(|_| (rng.unit() * 4.0).to_bits()).collect();
                g.pack(Words::U32(&w), &mut out).expect("pack");
            }
        },
    }
    (desc, out)
}

/// A copy of `bytes` that starts one byte past an allocation's start (odd address).
pub fn unaligned(bytes: &[u8]) -> (Vec<u8>, usize) {
    let mut v = vec![0u8; bytes.len() + 1];
    v[1..].copy_from_slice(bytes);
    (v, 1)
}

/// The oracle: every weight through the core (`TensorDesc::decode_f32`).
pub fn oracle(desc: &TensorDesc, payload: &[u8]) -> Vec<f32> {
    let mut w = vec![0f32; desc.numel()];
    desc.decode_f32(payload, &mut w).expect("oracle decode");
    w
}

pub fn activations(k: usize, nb: usize, seed: u64, positive: bool) -> Vec<f32> {
    let mut rng = Rng(seed | 1);
    (0..nb * k)
        .map(|i| {
            let v = rng.unit() * [1.0f32, 3.0, 0.05][(i / 40) % 3];
            if positive {
                v.abs()
            } else {
                v
            }
        })
        .collect()
}

/// Dequantize (range, sub-range, gather; f32 and BF16) on `isa` equals the oracle bit for bit.
pub fn check_dequant(isa: Isa, desc: &TensorDesc, payload: &[u8], threads: usize) {
    let (n, k) = (desc.shape()[0], desc.shape()[1]);
    let want = oracle(desc, payload);
    let (buf, o) = unaligned(payload);
    let p = &buf[o..];
    let ctx = format!("{isa:?} {} [{n}, {k}] threads {threads}", desc.format().name());

    let mut out = vec![0f32; n * k + 1];
    isa.dequantize_f32(desc, p, 0..n, &mut out[1..], threads)
        .expect("dequantize_f32");
    for (i, (a, b)) in out[1..].iter().zip(&want).enumerate() {
        assert_eq!(a.to_bits(), b.to_bits(), "{ctx}: f32 row {} k {}", i / k, i % k);
    }
    let mut bf = vec![0u16; n * k + 1];
    isa.dequantize_bf16(desc, p, 0..n, &mut bf[1..], threads)
        .expect("dequantize_bf16");
    for (i, (a, b)) in bf[1..].iter().zip(&want).enumerate() {
        assert_eq!(
            *a,
            oracle_bf16(*b),
            "{ctx}: bf16 row {} k {} (f32 {b:e})",
            i / k,
            i % k
        );
    }
    if n > 1 {
        let r = 1..n;
        let mut sub = vec![0f32; (n - 1) * k];
        isa.dequantize_f32(desc, p, r, &mut sub, threads)
            .expect("sub-range");
        assert!(
            sub.iter()
                .zip(&want[k..])
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "{ctx}: rows 1..n"
        );
    }
    let rows = [n - 1, 0, n / 2, n - 1];
    let mut g = vec![0f32; rows.len() * k];
    isa.gather_f32(desc, p, &rows, &mut g, threads)
        .expect("gather_f32");
    let mut gb = vec![0u16; rows.len() * k];
    isa.gather_bf16(desc, p, &rows, &mut gb, threads)
        .expect("gather_bf16");
    for (j, &r) in rows.iter().enumerate() {
        for kk in 0..k {
            let w = want[r * k + kk];
            assert_eq!(
                g[j * k + kk].to_bits(),
                w.to_bits(),
                "{ctx}: gather row {r} k {kk}"
            );
            assert_eq!(
                gb[j * k + kk],
                oracle_bf16(w),
                "{ctx}: gather bf16 row {r} k {kk}"
            );
        }
    }
}

/// GEMV on `isa` with `profile` meets the named criterion for every output, against `y_ref`.
/// Returns y for further comparisons.
pub fn check_gemv(
    isa: Isa,
    desc: &TensorDesc,
    payload: &[u8],
    want: &[f32],
    profile: Profile,
    x: &[f32],
    threads: usize,
) -> Vec<f32> {
    let (n, k) = (desc.shape()[0], desc.shape()[1]);
    let (buf, o) = unaligned(payload);
    let mut xb = vec![0f32; k + 1];
    xb[1..].copy_from_slice(x);
    let mut y = vec![f32::NAN; n + 1];
    isa.gemv(desc, &buf[o..], profile, &xb[1..], &mut y[1..], threads)
        .expect("gemv");
    let y = y[1..].to_vec();
    for row in 0..n {
        let w = &want[row * k..(row + 1) * k];
        let yr = reference_dot(w, x);
        let bound = match profile {
            Profile::F32 => f32_bound(w, x),
            _ => i8_bound(w, x),
        };
        let err = (y[row] as f64 - yr).abs();
        assert!(
            err <= bound,
            "{isa:?} {profile:?} {} [{n}, {k}] threads {threads} row {row}: y {} y_ref {yr} |err| {err:e} > bound {bound:e}",
            desc.format().name(),
            y[row]
        );
    }
    y
}

/// The batch GEMV gives, for each b, exactly the single-vector GEMV of x_b (bit for bit).
pub fn check_batch(
    isa: Isa,
    desc: &TensorDesc,
    payload: &[u8],
    profile: Profile,
    xs: &[f32],
    nb: usize,
    threads: usize,
) {
    let (n, k) = (desc.shape()[0], desc.shape()[1]);
    let mut y = vec![0f32; nb * n];
    isa.gemv_batch(desc, payload, profile, xs, nb, &mut y, threads)
        .expect("gemv_batch");
    for b in 0..nb {
        let mut y1 = vec![0f32; n];
        isa.gemv(desc, payload, profile, &xs[b * k..(b + 1) * k], &mut y1, 1)
            .expect("gemv");
        for row in 0..n {
            assert_eq!(
                y[b * n + row].to_bits(),
                y1[row].to_bits(),
                "{isa:?} {profile:?} {} [{n}, {k}] batch {nb} b {b} row {row}",
                desc.format().name()
            );
        }
    }
}

pub fn unsupported(e: KernelError) -> bool {
    matches!(e, KernelError::Unsupported { .. })
}
