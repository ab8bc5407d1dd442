//! Quick timing sanity check (not a benchmark suite; the criterion benches come separately):
//! GEMV on an 8192 x 8192 matrix per format and profile, 1 and 2 threads, as GB/s of payload
//! bytes and as a ratio to a simple read-bandwidth probe run in the same process; and Q4
//! dequantize-to-f32 throughput.
//!
//! `cargo run --release -p ninfer-simd --example quick_perf [N] [K]`

use std::time::Instant;

use ninfer_core::encode::{twin, Source};
use ninfer_core::layout::contiguous::Words;
use ninfer_core::layout::{Geometry, TensorDesc};
use ninfer_core::registry::Format;
use ninfer_simd::{Isa, Profile};

fn read_bw(buf: &[u64], threads: usize) -> f64 {
    let t = Instant::now();
    let reps = 5;
    for _ in 0..reps {
        std::thread::scope(|s| {
            let per = buf.len() / threads;
            let hs: Vec<_> = (0..threads)
                .map(|i| {
                    let part = &buf[i * per..(i + 1) * per];
                    s.spawn(move || part.iter().fold(0u64, |a, &b| a.wrapping_add(b)))
                })
                .collect();
            let v: u64 = hs
                .into_iter()
                .map(|h| h.join().unwrap_or(0))
                .fold(0, u64::wrapping_add);
            std::hint::black_box(v);
        });
    }
    (reps * buf.len() * 8) as f64 / t.elapsed().as_secs_f64() / 1e9
}

fn payload(format: Format, n: usize, k: usize) -> (TensorDesc, Vec<u8>) {
    let desc = TensorDesc::for_format(format, &[n, k]).unwrap();
    let mut out = vec![0u8; desc.payload_len()];
    let mut s = 0x1234_5678u32;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    };
    match desc.geometry() {
        Geometry::RowSplit(g) => {
            let src: Vec<f32> = (0..n * k)
                .map(|_| (rnd() >> 8) as f32 / 16_777_216.0 - 0.5)
                .collect();
            g.encode_into(Source::F32(&src), twin::encode_group, &mut out)
                .unwrap();
        }
        Geometry::Blockscale(g) => {
            let codes: Vec<u8> = (0..n * k).map(|_| (rnd() & 15) as u8).collect();
            let scales: Vec<u8> = (0..n * k / 16).map(|_| 0x30 + (rnd() % 16) as u8).collect();
            g.pack(&codes, &scales, 2.0f32.to_bits(), &mut out).unwrap();
        }
        Geometry::RowScale(g) => {
            let codes: Vec<u8> = (0..n * k).map(|_| (rnd() & 0x7e) as u8).collect();
            g.pack(&codes, &vec![0x3c00; n], &mut out).unwrap();
        }
        Geometry::Contiguous(g) => {
            let w: Vec<u16> = (0..n * k).map(|_| 0x3c00 + (rnd() & 0xff) as u16).collect();
            g.pack(Words::U16(&w), &mut out).unwrap();
        }
    }
    (desc, out)
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let (n, k) = (
        args.first().copied().unwrap_or(8192),
        args.get(1).copied().unwrap_or(8192),
    );
    let isa = Isa::detect();
    let probe = vec![1u64; 64 << 20]; // 512 MiB
    let bw = [read_bw(&probe, 1), read_bw(&probe, 2)];
    println!(
        "isa {isa:?}; read bandwidth probe: 1 thread {:.1} GB/s, 2 threads {:.1} GB/s",
        bw[0], bw[1]
    );
    drop(probe);
    let x: Vec<f32> = (0..k).map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0).collect();
    let formats = [
        Format::Q4G64F16S,
        Format::Q5G64F16S,
        Format::Q6G64F16S,
        Format::W8G32F16S,
        Format::Nvfp4,
        Format::Fp8E4m3fnRowBf16s,
        Format::Bf16,
    ];
    for f in formats {
        let (desc, p) = payload(f, n, k);
        // Two copies, used alternately, so consecutive calls do not hit a warm cache.
        let copies = [p.clone(), p];
        for profile in [Profile::F32, Profile::I8] {
            let mut y = vec![0f32; n];
            if isa.gemv(&desc, &copies[0], profile, &x, &mut y, 1).is_err() {
                continue;
            }
            for (ti, threads) in [1usize, 2].into_iter().enumerate() {
                let reps = 10;
                let t = Instant::now();
                for r in 0..reps {
                    isa.gemv(&desc, &copies[r % 2], profile, &x, &mut y, threads)
                        .unwrap();
                }
                let s = t.elapsed().as_secs_f64() / reps as f64;
                let gbs = desc.payload_len() as f64 / s / 1e9;
                println!(
                    "{:>22} {:?} threads {threads}: {:7.2} ms  {:6.2} G weights/s  {:6.2} GB/s  {:5.1}% of read bw",
                    f.name(),
                    profile,
                    s * 1e3,
                    (n * k) as f64 / s / 1e9,
                    gbs,
                    100.0 * gbs / bw[ti]
                );
            }
        }
        if f == Format::Q4G64F16S {
            let rows = 512;
            let mut out = vec![0f32; rows * k];
            let t = Instant::now();
            let reps = 10;
            for r in 0..reps {
                let r0 = (r * rows) % (n - rows + 1);
                isa.dequantize_f32(&desc, &copies[r % 2], r0..r0 + rows, &mut out, 1)
                    .unwrap();
            }
            let s = t.elapsed().as_secs_f64() / reps as f64;
            println!(
                "Q4G64_F16S dequantize to f32, 1 thread: {:.2} G weights/s",
                (rows * k) as f64 / s / 1e9
            );
        }
    }
}
