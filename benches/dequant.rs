//! Dequantize throughput per format, to f32 (`dequant_f32/...`) and to BF16 words
//! (`dequant_bf16/...`); `Throughput::Bytes` = payload bytes of the rows decoded per call. The
//! whole tensor in row blocks of about 2 MiB of f32 output per thread (1 MiB of BF16; the
//! output stays in the caches, the weights stream from memory for the larger shapes, rotating
//! over copies), 1 and 2 threads, on the detected instruction set.
//!
//! `cargo bench --bench dequant` (`NINFER_BENCH_QUICK=1` for a smoke run).

mod common;

use criterion::{BenchmarkId, Criterion, Throughput};
use ninfer_core::layout::TensorDesc;
use ninfer_simd::report::{synthetic, FORMATS};
use ninfer_simd::{Isa, KernelError};

/// The call that dequantizes rows into words of `T` (`Isa::dequantize_f32` or `_bf16`).
type Dequant<T> =
    fn(Isa, &TensorDesc, &[u8], core::ops::Range<usize>, &mut [T], usize) -> Result<(), KernelError>;

fn group<T: Copy + Default>(
    c: &mut Criterion,
    isa: Isa,
    (desc, copies): (&TensorDesc, &[Vec<u8>]),
    (name, call): (&str, Dequant<T>),
) {
    let (n, k) = (desc.shape()[0], desc.shape()[1]);
    let mut g = c.benchmark_group(format!("dequant_{name}/{}", desc.format().name()));
    g.throughput(Throughput::Bytes(copies[0].len() as u64));
    for t in common::THREADS {
        let rows = ((t << 19) / k).clamp(1, n);
        let mut out = vec![T::default(); rows * k];
        let id = BenchmarkId::new(format!("{n}x{k}"), format!("{t}thr"));
        let mut rot = common::Rotate::new(copies);
        g.bench_function(id, |b| {
            b.iter(|| {
                let p = rot.next_copy();
                let mut r0 = 0;
                while r0 < n {
                    let r1 = (r0 + rows).min(n);
                    call(isa, desc, p, r0..r1, &mut out[..(r1 - r0) * k], t).expect("dequantize");
                    r0 = r1;
                }
            })
        });
    }
    g.finish();
}

fn main() {
    let mut c = common::criterion();
    let isa = Isa::detect();
    for &(n, k) in common::shapes() {
        for f in FORMATS {
            let (desc, payload) = synthetic(f, n, k).expect("synthetic payload");
            let copies = common::copies(&payload, n, k);
            group::<f32>(&mut c, isa, (&desc, &copies), ("f32", Isa::dequantize_f32));
            group::<u16>(&mut c, isa, (&desc, &copies), ("bf16", Isa::dequantize_bf16));
        }
    }
    c.final_summary();
}
