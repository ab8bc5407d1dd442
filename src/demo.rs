//! `ninfer demo`: a built-in transformer-block checkpoint, converted with a mixed recipe that
//! touches all nine formats, written, read back, verified against its source and reported.
//!
//! The checkpoint is made in memory with deterministic pseudo-random weights and written as a
//! real safetensors file, so the demo runs the same code as `ninfer convert` and `ninfer verify
//! --source`. Its NVFP4 and FP8 tensors are built the way compressed-tensors ships them
//! ([`ct_nvfp4`], [`ct_fp8_channel`]): the demo computes their block scales, global scale, row
//! scales and codes itself from dense weights, and reports reconstruction error against those
//! dense weights.

use crate::bench::{default_backend, measure};
use crate::container::Artifact;
use crate::convert::recipe::Recipe;
use crate::convert::source::SourceSet;
use crate::errors::{Error, Result};
use crate::verify::{error_stats, source_f32, verify, Stats, TensorCheck};
use ninfer_core::registry::Format;
use ninfer_core::tables::E2M1_TO_F32;
use ninfer_core::word::bf16::{bf16_to_f32_exact, f32_to_bf16_rne};
use ninfer_core::word::e4m3fn::e4m3fn_to_f32;
use safetensors::tensor::{Dtype, TensorView};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Deterministic SplitMix64.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// Seeded generator.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in (0, 1].
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }
    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// A dense `[n, k]` weight matrix with Gaussian entries of deviation `std`, a mild per-row gain
/// and a few outlier input channels, like trained projection weights.
pub fn dense_weights(rng: &mut Rng, n: usize, k: usize, std: f64) -> Vec<f32> {
    let col: Vec<f64> = (0..k).map(|j| if j % 97 == 13 { 3.0 } else { 1.0 }).collect();
    let mut w = Vec::with_capacity(n * k);
    for _ in 0..n {
        let gain = 0.75 + 0.5 * rng.uniform();
        for c in &col {
            w.push((rng.normal() * std * gain * c) as f32);
        }
    }
    w
}

/// Nearest value of a sorted, non-negative table, ties to the even index (RNE).
fn nearest_even(table: &[f32], x: f32) -> usize {
    let i = table.partition_point(|&v| v < x);
    if i == 0 {
        return 0;
    }
    if i >= table.len() {
        return table.len() - 1;
    }
    let (lo, hi) = (x - table[i - 1], table[i] - x);
    if lo < hi || (lo == hi && (i - 1) % 2 == 0) {
        i - 1
    } else {
        i
    }
}

fn e4m3_positive_table() -> Vec<f32> {
    (0u8..=0x7e).map(e4m3fn_to_f32).collect()
}

/// f32 -> E4M3FN, round to nearest even, saturating at 448 (the torch cast after clamping).
pub fn f32_to_e4m3fn_sat(x: f32, table: &[f32]) -> u8 {
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    let c = nearest_even(table, x.abs().min(448.0)) as u8;
    if c == 0 {
        0
    } else {
        c | sign
    }
}

/// Compressed-tensors NVFP4 of a dense `[n, k]` matrix (k % 16 == 0): returns
/// (`weight_packed` U8 `[n, k/2]`, `weight_scale` E4M3FN `[n, k/16]`, `weight_global_scale`).
/// The global scale is `448 * 6 / amax`; each block scale is `E4M3(amax_block / 6 * global)`;
/// codes are `E2M1(x * global / scale)` with ties to even. The represented weight is
/// `e2m1 * e4m3 / global`: `weight_global_scale` is the NVFP4 divisor d_w.
pub fn ct_nvfp4(w: &[f32], n: usize, k: usize) -> (Vec<u8>, Vec<u8>, f32) {
    let amax = w.iter().fold(0f32, |m, x| m.max(x.abs()));
    let global = if amax > 0.0 { 448.0 * 6.0 / amax } else { 1.0 };
    let t8 = e4m3_positive_table();
    let t4: Vec<f32> = E2M1_TO_F32[..8].to_vec();
    let mut packed = vec![0u8; n * k / 2];
    let mut scales = vec![0u8; n * k / 16];
    for r in 0..n {
        for b in 0..k / 16 {
            let blk = &w[r * k + b * 16..r * k + b * 16 + 16];
            let bmax = blk.iter().fold(0f32, |m, x| m.max(x.abs()));
            let s = f32_to_e4m3fn_sat(bmax / 6.0 * global, &t8);
            scales[r * (k / 16) + b] = s;
            let sf = e4m3fn_to_f32(s);
            for (j, &x) in blk.iter().enumerate() {
                let code = if sf == 0.0 {
                    0
                } else {
                    let v = x * global / sf;
                    let c = nearest_even(&t4, v.abs().min(6.0)) as u8;
                    if v < 0.0 && c != 0 {
                        c | 8
                    } else {
                        c
                    }
                };
                let kk = b * 16 + j;
                packed[r * k / 2 + kk / 2] |= code << (4 * (kk % 2));
            }
        }
    }
    (packed, scales, global)
}

/// Compressed-tensors FP8 channel quantization of a dense `[n, k]` matrix: returns (`weight`
/// E4M3FN `[n, k]`, `weight_scale` BF16 `[n]` words). Row scale `BF16(amax_row / 448)`, codes
/// `E4M3(x / scale)` saturated, ties to even.
pub fn ct_fp8_channel(w: &[f32], n: usize, k: usize) -> (Vec<u8>, Vec<u16>) {
    let t8 = e4m3_positive_table();
    let mut codes = vec![0u8; n * k];
    let mut scales = vec![0u16; n];
    for r in 0..n {
        let row = &w[r * k..(r + 1) * k];
        let amax = row.iter().fold(0f32, |m, x| m.max(x.abs()));
        let s = f32_to_bf16_rne(amax / 448.0);
        scales[r] = s;
        let sf = bf16_to_f32_exact(s);
        if sf > 0.0 {
            for (c, &x) in codes[r * k..(r + 1) * k].iter_mut().zip(row) {
                *c = f32_to_e4m3fn_sat(x / sf, &t8);
            }
        }
    }
    (codes, scales)
}

/// An owned tensor for writing safetensors files.
#[derive(Clone, Debug)]
pub struct StTensor {
    /// Name.
    pub name: String,
    /// Dtype.
    pub dtype: Dtype,
    /// Shape.
    pub shape: Vec<usize>,
    /// Little-endian bytes.
    pub data: Vec<u8>,
}

impl StTensor {
    /// A tensor from raw bytes.
    pub fn new(name: &str, dtype: Dtype, shape: &[usize], data: Vec<u8>) -> StTensor {
        StTensor {
            name: name.into(),
            dtype,
            shape: shape.to_vec(),
            data,
        }
    }
    /// BF16 words from f32 values (RNE).
    pub fn bf16(name: &str, shape: &[usize], v: &[f32]) -> StTensor {
        let data = v.iter().flat_map(|&x| f32_to_bf16_rne(x).to_le_bytes()).collect();
        StTensor::new(name, Dtype::BF16, shape, data)
    }
    /// F32 values.
    pub fn f32(name: &str, shape: &[usize], v: &[f32]) -> StTensor {
        StTensor::new(
            name,
            Dtype::F32,
            shape,
            v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        )
    }
}

/// Serialize tensors as a safetensors file (optionally with `__metadata__`).
pub fn write_safetensors(
    path: &Path,
    tensors: &[StTensor],
    meta: Option<HashMap<String, String>>,
) -> Result<()> {
    let views: Vec<(String, TensorView<'_>)> = tensors
        .iter()
        .map(|t| {
            TensorView::new(t.dtype, t.shape.clone(), &t.data)
                .map(|v| (t.name.clone(), v))
                .map_err(|e| Error::tensor(&t.name, format!("cannot serialize: {e}")))
        })
        .collect::<Result<_>>()?;
    let bytes = safetensors::serialize(views, meta).map_err(|e| Error::file(format!("safetensors: {e}")))?;
    std::fs::write(path, bytes).map_err(|e| Error::io(path, e))
}

/// The demo's geometry.
pub const HIDDEN: usize = 1024;
/// MLP width.
pub const MLP: usize = 2816;
/// Vocabulary.
pub const VOCAB: usize = 8192;
/// Attention heads and KV heads (head dim 128).
pub const HEADS: usize = 8;
/// KV heads.
pub const KV_HEADS: usize = 2;
const HEAD_DIM: usize = HIDDEN / HEADS;

/// The demo recipe: all nine formats.
pub const DEMO_RECIPE: &str = r#"name = "ninfer-demo-block-mixed-v1"
source = "ninfer built-in demo checkpoint: 1 transformer block, hidden 1024, MLP 2816, vocab 8192, seed 0x5eed"

[[tensor]]
match = "model.embed_tokens.weight"
format = "W8G32_F16S"

[[tensor]]
match = "*.self_attn.q_proj.weight"
format = "Q4G64_F16S"

[[tensor]]
match = "*.self_attn.k_proj.weight"
format = "Q6G64_F16S"

[[tensor]]
match = "*.self_attn.v_proj.weight"
format = "Q6G64_F16S"

[[tensor]]
match = "*.self_attn.o_proj.weight"
format = "Q5G64_F16S"

[[tensor]]
match = "*.mlp.gate_proj.weight"
format = "NVFP4"

[[tensor]]
match = "*.mlp.up_proj.weight"
format = "NVFP4"

[[tensor]]
match = "*.mlp.down_proj.weight"
format = "FP8_E4M3FN_ROW_BF16S"

[[tensor]]
match = "*.input_global_scale"
format = "FP32"

[[tensor]]
match = "*layernorm.weight"
format = "BF16"

[[tensor]]
match = "model.norm.weight"
format = "BF16"
convert = "f32_to_bf16_rne"

[[tensor]]
match = "*.inv_freq"
format = "FP32"

[[tensor]]
match = "*.kv_head_map"
format = "I32"

[[tensor]]
match = "model.vocab_map"
format = "I32"
convert = "i64_to_i32_checked"
"#;

/// The built-in checkpoint: its tensors, and the dense weights behind the NVFP4 and FP8 ones
/// (keyed by output tensor name).
pub fn demo_checkpoint() -> (Vec<StTensor>, HashMap<String, Vec<f32>>) {
    let mut rng = Rng::new(0x5eed);
    let mut ts = Vec::new();
    let mut dense = HashMap::new();
    let l = "model.layers.0";
    let emb = dense_weights(&mut rng, VOCAB, HIDDEN, 0.02);
    ts.push(StTensor::bf16(
        "model.embed_tokens.weight",
        &[VOCAB, HIDDEN],
        &emb,
    ));
    for (name, n, k) in [
        ("q_proj", HIDDEN, HIDDEN),
        ("k_proj", KV_HEADS * HEAD_DIM, HIDDEN),
        ("v_proj", KV_HEADS * HEAD_DIM, HIDDEN),
        ("o_proj", HIDDEN, HIDDEN),
    ] {
        let w = dense_weights(&mut rng, n, k, 0.03);
        ts.push(StTensor::bf16(
            &format!("{l}.self_attn.{name}.weight"),
            &[n, k],
            &w,
        ));
    }
    for name in ["gate_proj", "up_proj"] {
        let w = dense_weights(&mut rng, MLP, HIDDEN, 0.02);
        let (packed, scales, global) = ct_nvfp4(&w, MLP, HIDDEN);
        let p = format!("{l}.mlp.{name}");
        ts.push(StTensor::new(
            &format!("{p}.weight_packed"),
            Dtype::U8,
            &[MLP, HIDDEN / 2],
            packed,
        ));
        ts.push(StTensor::new(
            &format!("{p}.weight_scale"),
            Dtype::F8_E4M3,
            &[MLP, HIDDEN / 16],
            scales,
        ));
        ts.push(StTensor::f32(
            &format!("{p}.weight_global_scale"),
            &[1],
            &[global],
        ));
        ts.push(StTensor::f32(
            &format!("{p}.input_global_scale"),
            &[1],
            &[448.0 * 6.0 / 4.0],
        ));
        dense.insert(format!("{p}.weight"), w);
    }
    let w = dense_weights(&mut rng, HIDDEN, MLP, 0.02);
    let (codes, scales) = ct_fp8_channel(&w, HIDDEN, MLP);
    let p = format!("{l}.mlp.down_proj");
    ts.push(StTensor::new(
        &format!("{p}.weight"),
        Dtype::F8_E4M3,
        &[HIDDEN, MLP],
        codes,
    ));
    let sb: Vec<u8> = scales.iter().flat_map(|s| s.to_le_bytes()).collect();
    ts.push(StTensor::new(
        &format!("{p}.weight_scale"),
        Dtype::BF16,
        &[HIDDEN, 1],
        sb,
    ));
    dense.insert(format!("{p}.weight"), w);
    for name in ["input_layernorm", "post_attention_layernorm"] {
        let v: Vec<f32> = (0..HIDDEN).map(|_| (1.0 + 0.1 * rng.normal()) as f32).collect();
        ts.push(StTensor::bf16(&format!("{l}.{name}.weight"), &[HIDDEN], &v));
    }
    let v: Vec<f32> = (0..HIDDEN).map(|_| (1.0 + 0.1 * rng.normal()) as f32).collect();
    ts.push(StTensor::f32("model.norm.weight", &[HIDDEN], &v));
    let inv: Vec<f32> = (0..HEAD_DIM / 2)
        .map(|i| (10000f64.powf(-(2.0 * i as f64) / HEAD_DIM as f64)) as f32)
        .collect();
    ts.push(StTensor::f32(
        &format!("{l}.self_attn.rotary_emb.inv_freq"),
        &[HEAD_DIM / 2],
        &inv,
    ));
    let map: Vec<u8> = (0..HEADS as i32)
        .flat_map(|h| (h / (HEADS / KV_HEADS) as i32).to_le_bytes())
        .collect();
    ts.push(StTensor::new(
        &format!("{l}.self_attn.kv_head_map"),
        Dtype::I32,
        &[HEADS],
        map,
    ));
    // A vocabulary permutation stored as I64 upstream, narrowed with a range check.
    let mut perm: Vec<i64> = (0..VOCAB as i64).collect();
    for i in (1..perm.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        perm.swap(i, j);
    }
    ts.push(StTensor::new(
        "model.vocab_map",
        Dtype::I64,
        &[VOCAB],
        perm.iter().flat_map(|v| v.to_le_bytes()).collect(),
    ));
    (ts, dense)
}

/// One row of the demo table.
#[derive(Clone, Debug)]
pub struct DemoRow {
    /// The verification result.
    pub check: TensorCheck,
    /// Error against the dense source (dense weights for NVFP4/FP8, source words otherwise).
    pub stats: Option<Stats>,
    /// Decode throughput in weights per second.
    pub weights_per_s: Option<f64>,
    /// The provenance path.
    pub path: String,
}

/// Everything the demo produced.
pub struct DemoReport {
    /// Rows in directory order.
    pub rows: Vec<DemoRow>,
    /// Source checkpoint size in bytes.
    pub source_bytes: u64,
    /// Artifact size in bytes.
    pub artifact_bytes: u64,
    /// Where the artifact was written.
    pub artifact: PathBuf,
    /// Seconds spent converting.
    pub convert_s: f64,
    /// Seconds spent verifying (oracle parity included).
    pub verify_s: f64,
    /// The decode backend's name.
    pub backend: &'static str,
}

/// Run the demo in `dir`, printing progress to stderr.
pub fn run(dir: &Path, bench_budget: Duration, progress: bool) -> Result<DemoReport> {
    let (tensors, dense) = demo_checkpoint();
    let src_path = dir.join("demo-block.safetensors");
    let out_path = dir.join("demo-block.ninfer");
    write_safetensors(&src_path, &tensors, None)?;
    drop(tensors);
    let recipe = Recipe::parse(DEMO_RECIPE)?;
    let t0 = Instant::now();
    let written = crate::convert::convert(std::slice::from_ref(&src_path), &out_path, &recipe, progress)?;
    let convert_s = t0.elapsed().as_secs_f64();

    let t1 = Instant::now();
    let art = Artifact::open(&out_path)?;
    let c = art.container()?;
    let src = SourceSet::open(std::slice::from_ref(&src_path))?;
    let checks = verify(&c, Some(&src), ninfer_core::encode::oracle::encode_group)?;
    let verify_s = t1.elapsed().as_secs_f64();

    let backend = default_backend();
    let mut rows = Vec::new();
    for (e, check) in c.entries().zip(checks) {
        let stats = match dense.get(e.name) {
            Some(w) => {
                let mut d = vec![0f32; e.desc.numel()];
                e.desc
                    .decode_f32(e.payload, &mut d)
                    .map_err(|err| Error::tensor(e.name, err))?;
                Some(error_stats(&d, w))
            }
            None => check.stats,
        };
        let wps = measure(backend, &e.desc, e.payload, bench_budget).map(|t| t.weights_per_s);
        let path = match (e.provenance.encoder_profile, e.provenance.conversion) {
            (p, "identity") if p == crate::container::COPIED => "copied".to_string(),
            (p, c) if p == crate::container::DIRECT_CONVERSION => c.to_string(),
            (p, _) => p.to_string(),
        };
        rows.push(DemoRow {
            check,
            stats,
            weights_per_s: wps,
            path,
        });
    }
    let _ = source_f32; // the verifier's reference path is reused through `check.stats`
    Ok(DemoReport {
        rows,
        source_bytes: std::fs::metadata(&src_path).map(|m| m.len()).unwrap_or(0),
        artifact_bytes: written.file_len,
        artifact: out_path,
        convert_s,
        verify_s,
        backend: backend.name(),
    })
}

/// Human-readable numbers.
pub fn fmt_bytes(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.2} MiB", b as f64 / (1u64 << 20) as f64)
    } else if b >= 1 << 10 {
        format!("{:.1} KiB", b as f64 / 1024.0)
    } else {
        format!("{b} B")
    }
}

/// Print the demo table.
pub fn print(r: &DemoReport, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{:<48} {:<20} {:<12} {:>10} {:>7} {:>10} {:>9} {:>10}  path",
        "tensor", "format", "shape", "bytes", "bits/w", "max|err|", "rms rel", "decode"
    )?;
    let mut formats = std::collections::BTreeSet::new();
    for row in &r.rows {
        let c = &row.check;
        formats.insert(c.format);
        let shape = format!("{:?}", c.shape).replace(' ', "");
        let (ea, er) = match (c.format, row.stats) {
            (Format::I32, _) => ("exact".to_string(), "exact".to_string()),
            (_, Some(s)) if s.max_abs == 0.0 => ("0".to_string(), "0".to_string()),
            (_, Some(s)) => (format!("{:.2e}", s.max_abs), format!("{:.2e}", s.rms_rel)),
            (_, None) => ("-".into(), "-".into()),
        };
        let wps = row
            .weights_per_s
            .map(|w| format!("{:.0} Mw/s", w / 1e6))
            .unwrap_or_else(|| "-".into());
        writeln!(
            out,
            "{:<48} {:<20} {:<12} {:>10} {:>7.3} {:>10} {:>9} {:>10}  {}",
            c.name,
            c.format.name(),
            shape,
            c.bytes,
            c.bits_per_weight(),
            ea,
            er,
            wps,
            row.path
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{} tensors in {} of the 9 formats; source {} -> artifact {} ({})",
        r.rows.len(),
        formats.len(),
        fmt_bytes(r.source_bytes),
        fmt_bytes(r.artifact_bytes),
        r.artifact.display()
    )?;
    writeln!(
        out,
        "converted in {:.2} s; verified in {:.2} s: checksums, layouts, values, source parity \
         (copied words exact, grouped tensors re-encoded with the section-7 oracle)",
        r.convert_s, r.verify_s
    )?;
    writeln!(
        out,
        "errors: NVFP4/FP8 against the dense weights behind their compressed-tensors source; others against \
         the source words. bits/w = payload bits / logical weights. decode = {} (whole tensor to f32)",
        r.backend
    )
}
