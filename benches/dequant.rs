//! Dequantize-to-f32 throughput per format (`Throughput::Bytes` = payload bytes of the rows
//! decoded per call): the whole tensor in row blocks of about 2 MiB of f32 output per thread
//! (the output stays in the caches, the weights stream from memory for the larger shapes,
//! rotating over copies), 1 and 2 threads, on the detected instruction set.
//!
//! `cargo bench --bench dequant` (`NINFER_BENCH_QUICK=1` for a smoke run).

mod common;

use criterion::{BenchmarkId, Throughput};
use ninfer_simd::report::{synthetic, FORMATS};
use ninfer_simd::Isa;

fn main() {
    let mut c = common::criterion();
    let isa = Isa::detect();
    for &(n, k) in common::shapes() {
        for f in FORMATS {
            let (desc, payload) = synthetic(f, n, k).expect("synthetic payload");
            let copies = common::copies(&payload, n, k);
            let mut g = c.benchmark_group(format!("dequant_f32/{}", f.name()));
            g.throughput(Throughput::Bytes(payload.len() as u64));
            for t in common::THREADS {
                let rows = ((t << 19) / k).clamp(1, n);
                let mut out = vec![0f32; rows * k];
                let id = BenchmarkId::new(format!("{n}x{k}"), format!("{t}thr"));
                let mut i = 0usize;
                g.bench_function(id, |b| {
                    b.iter(|| {
                        i += 1;
                        let p = &copies[i % copies.len()];
                        let mut r0 = 0;
                        while r0 < n {
                            let r1 = (r0 + rows).min(n);
                            isa.dequantize_f32(&desc, p, r0..r1, &mut out[..(r1 - r0) * k], t)
                                .expect("dequantize");
                            r0 = r1;
                        }
                    })
                });
            }
            g.finish();
        }
    }
    c.final_summary();
}
