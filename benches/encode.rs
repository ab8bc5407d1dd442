//! Canonical encoder throughput (`ninfer_simd::encode`, MAXABS_F16_RECIP_RNE_V1) from f32 and
//! BF16 sources into a `row-split-k128-v1` payload, per grouped scheme, 1 and 2 threads, on the
//! widest path. `Throughput::Bytes` = payload (encoded weight) bytes per call.
//!
//! `cargo bench --bench encode` (`NINFER_BENCH_QUICK=1` for a smoke run).

mod common;

use criterion::{BenchmarkId, Throughput};
use ninfer_simd::core::encode::Source;
use ninfer_simd::core::layout::row_split::RowSplitGeom;
use ninfer_simd::core::registry::Grouped;
use ninfer_simd::encode::{encode_row_split_with, EncodePath};
use ninfer_simd::report::synthetic_f32;

fn main() {
    let mut c = common::criterion();
    let path = EncodePath::detect();
    for &(n, k) in common::shapes() {
        let f = synthetic_f32(n * k, 11);
        let bf: Vec<u16> = f.iter().map(|v| (v.to_bits() >> 16) as u16).collect();
        for g in Grouped::ALL {
            let geo = RowSplitGeom::new(g, n, k).expect("geometry");
            let mut out = vec![0u8; geo.len];
            let mut grp = c.benchmark_group(format!("encode/{g:?}"));
            grp.throughput(Throughput::Bytes(geo.len as u64));
            for t in common::THREADS {
                for (name, src) in [("f32", Source::F32(&f)), ("bf16", Source::Bf16(&bf))] {
                    let id = BenchmarkId::new(format!("{n}x{k}/{name}"), format!("{t}thr"));
                    grp.bench_function(id, |b| {
                        b.iter(|| encode_row_split_with(path, t, &geo, src, &mut out).expect("encode"))
                    });
                }
            }
            grp.finish();
        }
    }
    c.final_summary();
}
