//! The `ninfer` command line (clap derive). `main.rs` calls [`main`].

use crate::bench::{default_backend, measure};
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
    /// Decode throughput per tensor (core scalar decode until ninfer_simd provides its report),
    /// on an artifact or, without FILE, on the demo's tensors.
    Bench {
        /// The artifact (default: build the demo artifact in a temporary directory).
        file: Option<PathBuf>,
        /// Seconds of timing per tensor.
        #[arg(long, default_value_t = 0.2)]
        seconds: f64,
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
        Cmd::Bench { file, seconds } => {
            let tmp;
            let path = match file {
                Some(f) => f,
                None => {
                    tmp =
                        tempfile::tempdir().map_err(|e| Error::file(format!("temporary directory: {e}")))?;
                    let (ts, _) = crate::demo::demo_checkpoint();
                    let sp = tmp.path().join("demo-block.safetensors");
                    crate::demo::write_safetensors(&sp, &ts, None)?;
                    let recipe = Recipe::parse(crate::demo::DEMO_RECIPE)?;
                    let ap = tmp.path().join("demo-block.ninfer");
                    crate::convert::convert(&[sp], &ap, &recipe, true)?;
                    ap
                }
            };
            let art = Artifact::open(&path)?;
            let c = art.container()?;
            let backend = default_backend();
            writeln!(
                out,
                "decode throughput, backend: {} (whole tensor to f32; SIMD report pending ninfer_simd)",
                backend.name()
            )
            .map_err(io)?;
            writeln!(
                out,
                "{:<48} {:<20} {:>12} {:>12} {:>8}",
                "tensor", "format", "Mweights/s", "payload MB/s", "reps"
            )
            .map_err(io)?;
            for e in c.entries() {
                match measure(backend, &e.desc, e.payload, duration(seconds)) {
                    Some(t) => writeln!(
                        out,
                        "{:<48} {:<20} {:>12.1} {:>12.1} {:>8}",
                        e.name,
                        e.format().name(),
                        t.weights_per_s / 1e6,
                        t.payload_bytes_per_s / 1e6,
                        t.reps
                    ),
                    None => writeln!(
                        out,
                        "{:<48} {:<20} {:>12} {:>12} {:>8}",
                        e.name,
                        e.format().name(),
                        "-",
                        "-",
                        "-"
                    ),
                }
                .map_err(io)?;
            }
        }
    }
    Ok(())
}
