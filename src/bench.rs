//! Decode throughput per tensor and the SIMD bandwidth report behind `ninfer bench`.
//!
//! [`default_backend`] is the SIMD decode of `ninfer_simd` ([`SimdDecode`]: `dequantize_f32` on
//! the detected instruction set, all available threads); the core's scalar oracle path stays
//! available as [`CoreDecode`]. The demo's per-tensor decode column uses the default backend.
//!
//! `ninfer bench` prints `ninfer_simd::report`: it first measures the machine's memory read
//! bandwidth (1 and 2 threads), then per kernel weights/s, GB/s of weight bytes and the ratio
//! to that bandwidth — on an artifact's own tensors ([`report_container`]) or on built-in
//! synthetic shapes ([`report_builtin`]). The ratio only means "from memory" for tensors larger
//! than the last-level cache; smaller ones are marked `llc` (cache-resident). `--isa`,
//! `--formats` and `--kernels` choose what runs (`ninfer_simd::report::{parse_isa,
//! parse_formats, parse_kernels}`, shared with the report example); `--json` prints the
//! finished report as one document ([`report_json`]).

use ninfer_core::container::Container;
use ninfer_core::layout::{LayoutError, TensorDesc};
use ninfer_core::registry::Format;
use ninfer_simd::report::{
    kernels_for, run_builtin, selected_kernels, Kernel, Report, ReportError, Settings,
};
use ninfer_simd::KernelError;
use std::fmt;
use std::io::Write;
use std::time::{Duration, Instant};

/// Why a backend could not decode a payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The core layout codec refused it.
    Layout(LayoutError),
    /// The SIMD kernel refused it.
    Kernel(KernelError),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Layout(e) => write!(f, "{e}"),
            DecodeError::Kernel(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// A way to decode a whole payload to f32.
pub trait DecodeBackend {
    /// Name shown in reports.
    fn name(&self) -> &'static str;
    /// Decode `payload` (described by `desc`) into `out` (`desc.numel()` values).
    fn decode_f32(&self, desc: &TensorDesc, payload: &[u8], out: &mut [f32]) -> Result<(), DecodeError>;
}

/// The core's scalar decode ([`TensorDesc::decode_f32`]).
pub struct CoreDecode;

impl DecodeBackend for CoreDecode {
    fn name(&self) -> &'static str {
        "ninfer-core scalar decode_f32"
    }
    fn decode_f32(&self, desc: &TensorDesc, payload: &[u8], out: &mut [f32]) -> Result<(), DecodeError> {
        desc.decode_f32(payload, out).map_err(DecodeError::Layout)
    }
}

/// `ninfer_simd::dequantize_f32` on the detected instruction set with all available threads
/// (bit-exact with the core decode). A rank-0 tensor (one word) has no rows for the kernel and
/// is decoded by the core.
pub struct SimdDecode;

impl DecodeBackend for SimdDecode {
    fn name(&self) -> &'static str {
        "ninfer-simd dequantize_f32 (detected ISA, all threads)"
    }
    fn decode_f32(&self, desc: &TensorDesc, payload: &[u8], out: &mut [f32]) -> Result<(), DecodeError> {
        if desc.rank() == 0 {
            return CoreDecode.decode_f32(desc, payload, out);
        }
        let rows = desc.shape()[0];
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        ninfer_simd::dequantize_f32(desc, payload, 0..rows, out, threads).map_err(DecodeError::Kernel)
    }
}

/// The backend `demo` and `bench` use.
pub fn default_backend() -> &'static dyn DecodeBackend {
    &SimdDecode
}

/// A measured decode rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Throughput {
    /// Logical weights decoded per second.
    pub weights_per_s: f64,
    /// Payload bytes consumed per second.
    pub payload_bytes_per_s: f64,
    /// Timed repetitions.
    pub reps: u32,
}

/// Time whole-tensor decodes for about `budget` (at least one timed run after a warm-up).
/// `None` for I32 (no f32 meaning), empty tensors and payloads the backend refuses.
pub fn measure(
    backend: &dyn DecodeBackend,
    desc: &TensorDesc,
    payload: &[u8],
    budget: Duration,
) -> Option<Throughput> {
    if desc.format() == Format::I32 || desc.numel() == 0 {
        return None;
    }
    let mut out = vec![0f32; desc.numel()];
    backend.decode_f32(desc, payload, &mut out).ok()?;
    let start = Instant::now();
    let mut reps = 0u32;
    loop {
        backend.decode_f32(desc, payload, &mut out).ok()?;
        std::hint::black_box(&out);
        reps += 1;
        if start.elapsed() >= budget || reps >= 10_000 {
            break;
        }
    }
    let secs = start.elapsed().as_secs_f64().max(1e-9);
    Some(Throughput {
        weights_per_s: desc.numel() as f64 * reps as f64 / secs,
        payload_bytes_per_s: payload.len() as f64 * reps as f64 / secs,
        reps,
    })
}

/// The kernels [`report_container`] measures on `desc`, in order: those of
/// [`selected_kernels`], GEMV only for rank-2 tensors, no encoder (it needs a
/// source); none for I32, empty or rank-0 tensors.
pub fn container_kernels(desc: &TensorDesc, settings: &Settings) -> Vec<Kernel> {
    if desc.format() == Format::I32 || desc.numel() == 0 || desc.rank() == 0 {
        return Vec::new();
    }
    selected_kernels(desc.format(), settings)
        .into_iter()
        .filter(|k| match k {
            Kernel::Gemv(_) => desc.rank() == 2,
            Kernel::DequantizeF32 | Kernel::DequantizeBf16 => true,
            Kernel::EncodeF32 => false,
        })
        .collect()
}

/// The report over an artifact's own tensors whose format is one of `formats`: the kernels of
/// [`container_kernels`] for each (GEMV in each whitelisted profile for rank-2 tensors,
/// dequantize to f32 and to BF16 words for every tensor of rank >= 1, as far as
/// `settings.kernels` selects them; I32 and empty tensors are skipped, and the encoder needs a
/// source and is not measured here). Lines are written as they are measured.
pub fn report_container(
    c: &Container<'_>,
    formats: &[Format],
    settings: &Settings,
    out: &mut dyn Write,
) -> std::io::Result<Report> {
    let mut report = Report::start(settings);
    writeln!(out, "{}", report.header())?;
    for e in c.entries() {
        let desc = &e.desc;
        if !formats.contains(&desc.format()) {
            continue;
        }
        for kernel in container_kernels(desc, settings) {
            match report.measure(e.name, desc, e.payload, kernel, settings) {
                Ok(ms) => {
                    for m in ms {
                        writeln!(out, "{}", report.line(&m))?;
                        report.rows.push(m);
                    }
                }
                Err(err) => writeln!(out, "{:<22} {:<12} refused: {err}", e.name, kernel.to_string())?,
            }
        }
    }
    writeln!(out, "{}", report.finish(settings))?;
    Ok(report)
}

/// The report on built-in synthetic `[n, k]` shapes of `formats`, the kernels
/// `settings.kernels` selects (`ninfer_simd::report::run_builtin`), lines written as they are
/// measured.
pub fn report_builtin(
    shapes: &[(usize, usize)],
    formats: &[Format],
    settings: &Settings,
    out: &mut dyn Write,
) -> Result<Report, ReportError> {
    let mut first = true;
    let mut io_ok = true;
    let r = run_builtin(shapes, formats, settings, |rep, m| {
        if first {
            io_ok &= writeln!(out, "{}", rep.header()).is_ok();
            first = false;
        }
        io_ok &= writeln!(out, "{}", rep.line(m)).is_ok();
    });
    let mut r = r?;
    io_ok &= writeln!(out, "{}", r.finish(settings)).is_ok();
    let _ = io_ok;
    Ok(r)
}

/// Why a selection of formats and kernels measures nothing, naming what each selected format
/// offers; `None` where `formats` and `settings.kernels` select at least one kernel of the
/// built-in report.
pub fn empty_builtin_selection(formats: &[Format], settings: &Settings) -> Option<String> {
    let any = formats.iter().any(|&f| !selected_kernels(f, settings).is_empty());
    (!any).then(|| {
        let offers: Vec<String> = formats
            .iter()
            .map(|&f| {
                let ks: Vec<&str> = kernels_for(f).into_iter().map(Kernel::name).collect();
                format!("{}: {}", f.name(), ks.join(", "))
            })
            .collect();
        format!(
            "nothing to measure: the selected formats have none of the selected kernels ({})",
            offers.join("; ")
        )
    })
}

/// A finished report as one JSON document (`ninfer bench --json`): the instruction set, the LLC
/// size and placement, the read bandwidth before and after the kernels, and per row the
/// measurement with its ratios (`of_bw` to the bandwidth at its thread count measured before
/// the kernels, `of_local` to its local probes; `null` where there is none). Rates are per
/// second (weights, bytes), not scaled to G.
pub fn report_json(report: &Report) -> serde_json::Value {
    use ninfer_simd::report::{Bandwidth, Residency};
    use serde_json::json;
    let bw = |v: &[Bandwidth]| -> Vec<serde_json::Value> {
        v.iter()
            .map(|b| json!({"threads": b.threads, "bytes_per_s": b.bytes_per_s, "streams": b.streams}))
            .collect()
    };
    let rows: Vec<serde_json::Value> = report
        .rows
        .iter()
        .map(|m| {
            json!({
                "label": m.label,
                "format": m.format.name(),
                "kernel": m.kernel.name(),
                "shape": [m.shape.0, m.shape.1],
                "threads": m.threads,
                "residency": match m.residency {
                    Residency::Cache => "cache",
                    Residency::Memory => "memory",
                },
                "seconds": m.seconds,
                "weights": m.weights,
                "weight_bytes": m.weight_bytes,
                "weights_per_s": m.weights_per_s(),
                "bytes_per_s": m.bytes_per_s(),
                "of_bw": report.ratio(m),
                "local_bytes_per_s": m.local_bw,
                "of_local": Report::local_ratio(m),
            })
        })
        .collect();
    json!({
        "isa": report.isa.name(),
        "llc_bytes": report.llc,
        "placement": report.placement.name(),
        "bandwidth": bw(&report.bandwidth),
        "bandwidth_after": bw(&report.bandwidth_after),
        "rows": rows,
    })
}
