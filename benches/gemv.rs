//! GEMV throughput per format and profile (`Throughput::Bytes` = payload bytes per call):
//! 1024 x 1024 (cache-resident), 4096 x 4096 and 8192 x 8192 (memory-resident, rotating over
//! copies that together exceed the LLC), 1 and 2 threads, on the detected instruction set.
//!
//! `cargo bench --bench gemv` (`NINFER_BENCH_QUICK=1` for a smoke run; a criterion filter such
//! as `cargo bench --bench gemv -- Q4G64_F16S/I8` narrows it).

mod common;

use criterion::{BenchmarkId, Throughput};
use ninfer_simd::report::{kernels_for, synthetic, synthetic_f32, Kernel, FORMATS};
use ninfer_simd::Isa;

fn main() {
    let mut c = common::criterion();
    let isa = Isa::detect();
    for &(n, k) in common::shapes() {
        for f in FORMATS {
            let (desc, payload) = synthetic(f, n, k).expect("synthetic payload");
            let copies = common::copies(&payload, n, k);
            let x = synthetic_f32(k, 7);
            let mut y = vec![0f32; n];
            for kernel in kernels_for(f) {
                let Kernel::Gemv(profile) = kernel else {
                    continue;
                };
                let mut g = c.benchmark_group(format!("gemv/{}/{profile:?}", f.name()));
                g.throughput(Throughput::Bytes(payload.len() as u64));
                for t in common::THREADS {
                    let id = BenchmarkId::new(format!("{n}x{k}"), format!("{t}thr"));
                    let mut rot = common::Rotate::new(&copies);
                    g.bench_function(id, |b| {
                        b.iter(|| {
                            let p = rot.next_copy();
                            isa.gemv(&desc, p, profile, &x, &mut y, t).expect("gemv");
                        })
                    });
                }
                g.finish();
            }
        }
    }
    c.final_summary();
}
