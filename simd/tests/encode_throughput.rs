//! Encoder throughput (weights per second), printed, never asserted. Run in release:
//!
//! ```text
//! cargo test -p ninfer-simd --release --test encode_throughput -- --ignored --nocapture
//! ```
//!
//! Shapes: 64 x 4096 (1 MiB of f32, cache-resident) and 4096 x 4096 (64 MiB, memory-resident),
//! f32 and BF16 sources, every path, 1 and 2 threads; the best of several repetitions (wall
//! time, so a busy machine lowers the figures).

use ninfer_core::encode::Source;
use ninfer_core::layout::row_split::RowSplitGeom;
use ninfer_core::registry::Grouped;
use ninfer_simd::encode::{encode_row_split_with, EncodePath};
use ninfer_simd::Isa;
use std::time::Instant;

fn source(len: usize) -> Vec<f32> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            // Roughly normal-looking weights: magnitudes 2^-12 .. 2^0, both signs.
            let e = 115 + (s >> 59) as u32 % 12;
            f32::from_bits(((s >> 32) as u32 & 0x807f_ffff) | e << 23)
        })
        .collect()
}

#[test]
#[ignore = "timing: run in release mode (see the module doc)"]
fn encode_throughput() {
    let paths: Vec<EncodePath> = [Isa::Scalar, Isa::V3, Isa::V3_512b, Isa::V4, Isa::Neon]
        .into_iter()
        .filter_map(EncodePath::new)
        .collect();
    for (n, k, reps) in [(64usize, 4096usize, 200usize), (4096, 4096, 6)] {
        let f = source(n * k);
        let bf: Vec<u16> = f.iter().map(|v| (v.to_bits() >> 16) as u16).collect();
        for g in Grouped::ALL {
            let geo = RowSplitGeom::new(g, n, k).unwrap();
            let mut out = vec![0u8; geo.len];
            for &path in &paths {
                for threads in [1usize, 2] {
                    let mut line = format!("{n}x{k} {g:?} {:>8} x{threads}:", format!("{:?}", path.isa()));
                    for (name, src) in [("f32", Source::F32(&f)), ("bf16", Source::Bf16(&bf))] {
                        let mut best = f64::INFINITY;
                        for _ in 0..reps {
                            let t0 = Instant::now();
                            encode_row_split_with(path, threads, &geo, src, &mut out).unwrap();
                            best = best.min(t0.elapsed().as_secs_f64());
                        }
                        line += &format!("  {name} {:5.2} Gw/s", (n * k) as f64 / best / 1e9);
                    }
                    println!("{line}");
                }
            }
        }
    }
}
