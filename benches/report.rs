//! The bandwidth report as a bench binary (see `ninfer_simd::report`): the memory read
//! bandwidth with 1 and 2 threads, then per kernel weights/s, GB/s of weight bytes and the
//! ratio to that bandwidth, on 8192 x 8192 (every format, GEMV in each profile, dequantize,
//! encode), the weights rotated over copies that exceed four LLCs (`Placement::Memory`).
//!
//! `cargo bench --bench report` (`NINFER_BENCH_QUICK=1`: 4096 x 4096, shorter timing).

mod common;

use ninfer_simd::report::{run_builtin, Placement, Settings, FORMATS};

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not meaningful here.
    let quick = common::quick() || std::env::args().any(|a| a == "--quick");
    let (mut settings, shape) = if quick {
        (Settings::quick(), (4096, 4096))
    } else {
        (Settings::full(), (8192, 8192))
    };
    settings.placement = Placement::Memory;
    let mut first = true;
    let r = run_builtin(&[shape], &FORMATS, &settings, |rep, m| {
        if first {
            println!("{}", rep.header());
            first = false;
        }
        println!("{}", rep.line(m));
    });
    if let Err(e) = r {
        eprintln!("report: {e}");
        std::process::exit(1);
    }
}
