//! The `ninfer` command line (clap derive). `main.rs` calls [`main`].

use crate::container::Artifact;
use crate::convert::recipe::Recipe;
use crate::convert::source::SourceSet;
use crate::errors::{Error, Result};
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// NInfer persistent numeric formats: the `.ninfer` container tool.
#[derive(Parser, Debug)]
#[command(name = "ninfer", version, about)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Build a built-in transformer-block checkpoint, convert it with a recipe touching all nine
    /// formats, verify it against its source and print a report.
    Demo {
        /// Keep the demo's safetensors source and .ninfer artifact in this directory (default: a
        /// temporary directory that is removed afterwards).
        #[arg(long)]
        keep: Option<PathBuf>,
        /// Seconds of decode timing per tensor.
        #[arg(long, default_value_t = 0.05)]
        bench_seconds: f64,
    },
    /// Convert a safetensors checkpoint to a .ninfer artifact: INPUT... OUTPUT. Inputs are
    /// .safetensors files (all shards) or one model.safetensors.index.json.
    Convert {
        /// Input files followed by the output path.
        #[arg(required = true, num_args = 2.., value_name = "INPUT... OUTPUT")]
        paths: Vec<PathBuf>,
        /// The checkpoint numeric recipe (TOML).
        #[arg(long)]
        recipe: PathBuf,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Print an artifact's directory.
    Inspect {
        /// The artifact.
        file: PathBuf,
        /// Machine-readable JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Verify an artifact: checksums, layouts, values; with --source, exact source words where
    /// copied, canonical re-encode parity where quantized, and error statistics.
    Verify {
        /// The artifact.
        file: PathBuf,
        /// The source checkpoint (.safetensors files or an index.json); repeat for shards.
        #[arg(long, num_args = 1..)]
        source: Vec<PathBuf>,
    },
    /// The SIMD bandwidth report: the memory read bandwidth (1 and 2 threads), then per kernel
    /// (GEMV per profile, dequantize) weights/s, GB/s of weight bytes and the ratio to that
    /// bandwidth, on an artifact's tensors or, without FILE, on built-in synthetic shapes.
    Bench {
        /// The artifact (default: built-in synthetic tensors of every format, see --shape).
        file: Option<PathBuf>,
        /// Seconds of timing per kernel and thread count (the best call is reported).
        #[arg(long, default_value_t = 0.5)]
        seconds: f64,
        /// Built-in shapes NxK (repeatable; default 8192x8192). Ignored with FILE.
        #[arg(long)]
        shape: Vec<String>,
        /// Thread counts, comma-separated.
        #[arg(long, default_value = "1,2")]
        threads: String,
        /// MiB of the read-bandwidth buffer (default: 512 or four last-level caches, whichever is
        /// more; keep it far above the LLC).
        #[arg(long)]
        bw_mib: Option<usize>,
        /// When the weights rotate over copies that together exceed four LLCs: `memory` (always),
        /// `auto` (when the tensor is at least half the LLC) or `cache` (never). Default: memory
        /// for the built-in shapes, auto for FILE.
        #[arg(long)]
        placement: Option<String>,
        /// The instruction set the kernels run on: V4, V4NoVnni, V3, V3_512b, Neon,
        /// NeonNoDotprod or Scalar, as far as this CPU runs it (default: the widest it runs, as
        /// every library call does). `--isa V3` measures the AVX2 kernels on an AVX-512 machine.
        #[arg(long)]
        isa: Option<String>,
        /// Only these formats, comma-separated registered names (default: every format but I32).
        /// With FILE: only its tensors of these formats.
        #[arg(long)]
        formats: Option<String>,
        /// Only these kernels, comma-separated: gemv-f32, gemv-i8, dequant-f32, dequant-bf16,
        /// encode-f32 (default: all; FILE's tensors have no encoder row).
        #[arg(long)]
        kernels: Option<String>,
        /// Print the finished report as one JSON document on stdout (the table lines go to
        /// stderr as they are measured).
        #[arg(long)]
        json: bool,
    },
}

/// Run the command line; returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("ninfer: error: {e}");
            1
        }
    }
}

fn io(e: std::io::Error) -> Error {
    Error::file(format!("output: {e}"))
}

fn duration(secs: f64) -> Duration {
    Duration::from_secs_f64(if secs.is_finite() && secs > 0.0 {
        secs.min(60.0)
    } else {
        0.0
    })
}

/// Execute one parsed command.
pub fn run(cli: Cli) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match cli.cmd {
        Cmd::Demo { keep, bench_seconds } => {
            let tmp;
            let dir = match keep {
                Some(d) => {
                    std::fs::create_dir_all(&d).map_err(|e| Error::io(&d, e))?;
                    d
                }
                None => {
                    tmp =
                        tempfile::tempdir().map_err(|e| Error::file(format!("temporary directory: {e}")))?;
                    tmp.path().to_path_buf()
                }
            };
            eprintln!(
                "ninfer demo: building the checkpoint, converting, verifying in {}",
                dir.display()
            );
            let report = crate::demo::run(&dir, duration(bench_seconds), true)?;
            crate::demo::print(&report, &mut out).map_err(io)?;
        }
        Cmd::Convert {
            mut paths,
            recipe,
            quiet,
        } => {
            let output = paths.pop().ok_or_else(|| Error::file("missing output path"))?;
            let recipe = Recipe::from_path(&recipe)?;
            let w = crate::convert::convert(&paths, &output, &recipe, !quiet)?;
            writeln!(
                out,
                "wrote {} ({} tensors, {} bytes)",
                w.path.display(),
                w.tensors,
                w.file_len
            )
            .map_err(io)?;
        }
        Cmd::Inspect { file, json } => {
            let art = Artifact::open(&file)?;
            let c = art.container()?;
            if json {
                let tensors: Vec<_> = c
                    .entries()
                    .map(|e| {
                        serde_json::json!({
                            "name": e.name,
                            "format": e.format().name(),
                            "layout": e.layout().name(),
                            "shape": e.shape(),
                            "payload_offset": e.payload_offset,
                            "payload_len": e.payload.len(),
                            "payload_crc32c": format!("{:08x}", e.payload_crc32c),
                            "conversion": e.provenance.conversion,
                            "encoder_profile": e.provenance.encoder_profile,
                            "sources": e.provenance.sources().map(|s| serde_json::json!({"name": s.name, "dtype": s.dtype})).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                let m = c.meta();
                let doc = serde_json::json!({
                    "container_version": ninfer_core::container::VERSION,
                    "file_len": c.bytes().len(),
                    "source_checkpoint": m.source_checkpoint,
                    "recipe": m.recipe,
                    "tool": m.tool,
                    "tensors": tensors,
                });
                let s = serde_json::to_string_pretty(&doc).map_err(|e| Error::file(e.to_string()))?;
                writeln!(out, "{s}").map_err(io)?;
            } else {
                let m = c.meta();
                writeln!(
                    out,
                    "{}: .ninfer v{}, {} bytes, {} tensors",
                    file.display(),
                    ninfer_core::container::VERSION,
                    c.bytes().len(),
                    c.len()
                )
                .map_err(io)?;
                writeln!(
                    out,
                    "source:  {}\nrecipe:  {}\ntool:    {}\n",
                    m.source_checkpoint, m.recipe, m.tool
                )
                .map_err(io)?;
                writeln!(
                    out,
                    "{:<48} {:<20} {:<24} {:<14} {:>10} {:>10} {:<8}  provenance",
                    "tensor", "format", "layout", "shape", "offset", "bytes", "crc32c"
                )
                .map_err(io)?;
                for e in c.entries() {
                    let srcs: Vec<String> = e
                        .provenance
                        .sources()
                        .map(|s| format!("{} {}", s.name, s.dtype))
                        .collect();
                    writeln!(
                        out,
                        "{:<48} {:<20} {:<24} {:<14} {:>10} {:>10} {:08x}  {} / {} <- {}",
                        e.name,
                        e.format().name(),
                        e.layout().name(),
                        format!("{:?}", e.shape()).replace(' ', ""),
                        e.payload_offset,
                        e.payload.len(),
                        e.payload_crc32c,
                        e.provenance.encoder_profile,
                        e.provenance.conversion,
                        srcs.join(", ")
                    )
                    .map_err(io)?;
                }
            }
        }
        Cmd::Verify { file, source } => {
            let art = Artifact::open(&file)?;
            let c = art.container()?;
            let src = if source.is_empty() {
                None
            } else {
                Some(SourceSet::open(&source)?)
            };
            let checks = crate::verify::verify(&c, src.as_ref(), ninfer_core::encode::oracle::encode_group)?;
            for ch in &checks {
                let s = match ch.stats {
                    Some(st) => format!("  max|err| {:.3e}  rms rel {:.3e}", st.max_abs, st.rms_rel),
                    None => String::new(),
                };
                writeln!(
                    out,
                    "ok  {:<48} {:<20} {}{}",
                    ch.name,
                    ch.format.name(),
                    ch.source.map(|x| x.label()).unwrap_or("layout + values"),
                    s
                )
                .map_err(io)?;
            }
            writeln!(
                out,
                "verified {}: {} tensors (checksums, layouts, values{})",
                file.display(),
                checks.len(),
                if src.is_some() { ", source parity" } else { "" }
            )
            .map_err(io)?;
        }
        Cmd::Bench {
            file,
            seconds,
            shape,
            threads,
            bw_mib,
            placement,
            isa,
            formats,
            kernels,
            json,
        } => {
            use ninfer_simd::report::Placement;
            let mut settings = ninfer_simd::report::Settings::full();
            if let Some(name) = isa {
                settings.isa = ninfer_simd::report::parse_isa(&name).map_err(Error::file)?;
            }
            if let Some(list) = kernels {
                settings.kernels = ninfer_simd::report::parse_kernels(&list).map_err(Error::file)?;
            }
            let formats = match formats {
                Some(list) => ninfer_simd::report::parse_formats(&list).map_err(Error::file)?,
                None => ninfer_simd::report::FORMATS.to_vec(),
            };
            settings.min_time = duration(seconds);
            settings.min_reps = 2;
            if let Some(mib) = bw_mib {
                settings.bw_bytes = mib.clamp(1, 1 << 16) << 20;
            }
            settings.placement = match placement {
                Some(p) => Placement::from_name(&p).ok_or_else(|| {
                    Error::file(format!("--placement: `{p}` is not one of auto, memory, cache"))
                })?,
                None if file.is_some() => Placement::Auto,
                None => Placement::Memory,
            };
            settings.threads = threads
                .split(',')
                .map(|t| t.trim().parse::<usize>().ok().filter(|t| (1..=256).contains(t)))
                .collect::<Option<Vec<_>>>()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| {
                    Error::file(format!("--threads: `{threads}` is not a list of counts 1..=256"))
                })?;
            // With --json the table lines go to stderr as progress and the document to stdout.
            let mut err = std::io::stderr().lock();
            let lines: &mut dyn Write = if json { &mut err } else { &mut out };
            let report = match file {
                Some(path) => {
                    let art = Artifact::open(&path)?;
                    let c = art.container()?;
                    let measured = c.entries().any(|e| {
                        formats.contains(&e.desc.format())
                            && !crate::bench::container_kernels(&e.desc, &settings).is_empty()
                    });
                    if !measured {
                        return Err(Error::file(format!(
                            "nothing to measure: no tensor of {} has a selected format and kernel",
                            path.display()
                        )));
                    }
                    writeln!(
                        lines,
                        "bandwidth report on {} ({} tensors)",
                        path.display(),
                        c.len()
                    )
                    .map_err(io)?;
                    crate::bench::report_container(&c, &formats, &settings, lines).map_err(io)?
                }
                None => {
                    let mut shapes = Vec::new();
                    for s in &shape {
                        let parsed = s
                            .split_once('x')
                            .and_then(|(n, k)| Some((n.parse::<usize>().ok()?, k.parse::<usize>().ok()?)))
                            .filter(|&(n, k)| {
                                n >= 1
                                    && k >= 64
                                    && k % 64 == 0
                                    && n.checked_mul(k).is_some_and(|nk| nk <= 1 << 28)
                            });
                        shapes.push(parsed.ok_or_else(|| {
                            Error::file(format!(
                                "--shape: `{s}` is not NxK (N >= 1, K a multiple of 64, N*K <= 2^28)"
                            ))
                        })?);
                    }
                    if shapes.is_empty() {
                        shapes.push((8192, 8192));
                    }
                    if let Some(why) = crate::bench::empty_builtin_selection(&formats, &settings) {
                        return Err(Error::file(why));
                    }
                    writeln!(lines, "bandwidth report on built-in synthetic tensors").map_err(io)?;
                    crate::bench::report_builtin(&shapes, &formats, &settings, lines)
                        .map_err(|e| Error::file(format!("report: {e}")))?
                }
            };
            if json {
                let doc = crate::bench::report_json(&report);
                writeln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(&doc).map_err(Error::file)?
                )
                .map_err(io)?;
            }
        }
    }
    Ok(())
}
