//! The bandwidth report on built-in shapes (see `ninfer_simd::report`):
//!
//! ```text
//! cargo run --release -p ninfer-simd --example report [-- [--quick] [--threads 1,2] [--isa V3]
//!     [--placement memory] [--formats F,...] [--kernels K,...] [NxK ...]]
//! ```
//!
//! Default: 8192x8192, 1 and 2 threads, every format, weights rotated over copies that exceed
//! four LLCs (`--placement memory`; `auto` rotates only tensors of at least half the LLC, `cache`
//! never rotates). `--quick` measures shorter with a smaller
//! bandwidth buffer (a smoke run). `--formats Q4G64_F16S,BF16` limits the formats and
//! `--kernels gemv-f32,dequant-bf16` the kernels (`Kernel::name`). `ninfer bench` takes the same
//! options (and an artifact's own tensors).

use std::io::Write;

use ninfer_simd::core::registry::Format;
use ninfer_simd::report::{
    parse_formats, parse_isa, parse_kernels, run_builtin, Placement, Settings, FORMATS,
};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut settings = if args.iter().any(|a| a == "--quick") {
        Settings::quick()
    } else {
        Settings::full()
    };
    settings.placement = Placement::Memory;
    let mut shapes = Vec::new();
    let mut formats: Vec<Format> = FORMATS.to_vec();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => {}
            "--threads" => {
                if let Some(v) = it.next() {
                    settings.threads = v.split(',').filter_map(|t| t.parse().ok()).collect();
                }
            }
            "--isa" => {
                let v = it.next().map_or("", String::as_str);
                settings.isa = parse_isa(v).unwrap_or_else(|e| fail(&e));
            }
            "--placement" => match it.next().and_then(|v| Placement::from_name(v)) {
                Some(p) => settings.placement = p,
                None => fail("--placement takes auto, memory or cache"),
            },
            "--formats" => {
                formats = parse_formats(it.next().map_or("", String::as_str)).unwrap_or_else(|e| fail(&e));
            }
            "--kernels" => {
                settings.kernels =
                    parse_kernels(it.next().map_or("", String::as_str)).unwrap_or_else(|e| fail(&e));
            }
            s => {
                if let Some((n, k)) = s.split_once('x') {
                    if let (Ok(n), Ok(k)) = (n.parse(), k.parse()) {
                        shapes.push((n, k));
                        continue;
                    }
                }
                fail(&format!("unknown argument {s}"));
            }
        }
    }
    if shapes.is_empty() {
        shapes.push((8192, 8192));
    }
    let mut printed = false;
    let r = run_builtin(&shapes, &formats, &settings, |rep, m| {
        let mut o = std::io::stdout().lock();
        if !printed {
            let _ = writeln!(o, "{}", rep.header());
            printed = true;
        }
        let _ = writeln!(o, "{}", rep.line(m));
    });
    match r {
        Ok(mut rep) => println!("{}", rep.finish(&settings)),
        Err(e) => {
            eprintln!("report: {e}");
            std::process::exit(1);
        }
    }
}

/// A bad option: the message on stderr, exit status 2.
fn fail(msg: &str) -> ! {
    eprintln!("report: {msg}");
    std::process::exit(2);
}
