//! `ninfer convert`: safetensors checkpoint + recipe -> `.ninfer` artifact.
//!
//! Planning (pure, before any output exists) pairs every source tensor with exactly one recipe
//! rule and one production path, and refuses everything else naming the tensor:
//!
//! | source | format | path | provenance |
//! |---|---|---|---|
//! | BF16/F16/F32/F64/I32/I64 | BF16, FP32, I32 | direct words; a type change only through the rule's explicit `convert` ([`direct_conversion`]) | `identity` / conversion name; `copied from source` / `direct conversion` |
//! | BF16/F16/F32/F64, rank 2 | Q4/Q5/Q6/W8 | canonical encoder straight into row-split-k128-v1 | section-7 input step; `MAXABS_F16_RECIP_RNE_V1` |
//! | compressed-tensors `<s>.weight_packed` U8 `[N, K/2]`, `<s>.weight_scale` F8_E4M3 `[N, K/16]`, `<s>.weight_global_scale` F32 `[1]` | NVFP4 (output `<s>.weight`) | words copied, validated (section 3.3); `weight_global_scale` is d_w | `identity`; `copied from source` |
//! | compressed-tensors `<s>.weight` F8_E4M3 `[N, K]`, `<s>.weight_scale` BF16 `[N, 1]` | FP8_E4M3FN_ROW_BF16S | words copied, validated (section 3.4) | `identity`; `copied from source` |
//!
//! Production streams: one tensor is produced, validated and appended at a time, in ascending
//! output-name order, through [`crate::container::Writer`].

pub mod recipe;
pub mod source;

use crate::container::{Meta, Provenance, SourceRef, Writer, Written, COPIED, DIRECT_CONVERSION, TOOL};
use crate::errors::{Error, Result};
use ninfer_core::encode::{GroupFn, Source, PROFILE};
use ninfer_core::error::{EncodeErrorKind, ValueError, ValueErrorKind};
use ninfer_core::layout::{Geometry, TensorDesc};
use ninfer_core::registry::{Category, Format};
use ninfer_core::word::bf16::{bf16_is_finite, bf16_to_f32_exact, f32_to_bf16_rne, f32_to_bf16_rne_checked};
use ninfer_core::word::f16::f16_to_f32_exact;
use ninfer_core::word::fp32::f64_to_f32_rne_checked;
use ninfer_core::word::i32::i64_to_i32_checked;
use ninfer_core::word::{direct_conversion, Conversion, SourceType};
use recipe::{conversion_name, Recipe};
use safetensors::tensor::Dtype;
use source::{dtype_name, SourceSet, SrcTensor};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How one output tensor is produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Direct words from one source tensor.
    Direct {
        /// Source tensor.
        src: String,
        /// The conversion ([`Conversion::Identity`] for the same type).
        conversion: Conversion,
        /// Keep non-finite float words.
        allow_non_finite: bool,
    },
    /// The canonical grouped encoder over one rank-2 float source.
    Grouped {
        /// Source tensor.
        src: String,
    },
    /// Compressed-tensors NVFP4 words copied.
    Nvfp4 {
        /// `<s>.weight_packed`.
        packed: String,
        /// `<s>.weight_scale`.
        scale: String,
        /// `<s>.weight_global_scale` (d_w).
        global: String,
    },
    /// Compressed-tensors FP8 channel words copied.
    Fp8 {
        /// `<s>.weight`.
        weight: String,
        /// `<s>.weight_scale`.
        scale: String,
    },
}

/// One planned output tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// Output tensor name.
    pub name: String,
    /// Target format.
    pub format: Format,
    /// Production path.
    pub kind: Kind,
}

/// One produced tensor, ready for the writer.
pub struct Produced {
    /// Its descriptor.
    pub desc: TensorDesc,
    /// Its payload.
    pub payload: Vec<u8>,
    /// Its provenance.
    pub prov: Provenance,
}

/// The source type of a safetensors dtype, for the direct and encoder paths.
pub fn source_type(d: Dtype) -> Option<SourceType> {
    Some(match d {
        Dtype::BF16 => SourceType::Bf16,
        Dtype::F16 => SourceType::F16,
        Dtype::F32 => SourceType::F32,
        Dtype::F64 => SourceType::F64,
        Dtype::I32 => SourceType::I32,
        Dtype::I64 => SourceType::I64,
        _ => return None,
    })
}

const NVFP4_PARTS: [&str; 3] = [".weight_packed", ".weight_scale", ".weight_global_scale"];

/// Pair every source tensor with a rule and a production path (see the module docs).
pub fn plan(src: &SourceSet, recipe: &Recipe) -> Result<Vec<Job>> {
    // (output name, format-kind candidates, source names)
    enum Cand {
        Plain(String),
        Nvfp4 {
            packed: String,
            scale: String,
            global: String,
        },
        Fp8 {
            weight: String,
            scale: String,
        },
    }
    let mut consumed: BTreeMap<String, ()> = BTreeMap::new();
    let mut cands: Vec<(String, Cand)> = Vec::new();
    for name in src.names() {
        if let Some(stem) = name.strip_suffix(NVFP4_PARTS[0]) {
            let scale = format!("{stem}{}", NVFP4_PARTS[1]);
            let global = format!("{stem}{}", NVFP4_PARTS[2]);
            for part in [&scale, &global] {
                if src.get(part).is_none() {
                    return Err(Error::tensor(
                        name,
                        format!("compressed-tensors NVFP4 packing without its companion `{part}`"),
                    ));
                }
            }
            for n in [name, &scale, &global] {
                consumed.insert(n.to_string(), ());
            }
            cands.push((
                format!("{stem}.weight"),
                Cand::Nvfp4 {
                    packed: name.to_string(),
                    scale,
                    global,
                },
            ));
        }
    }
    for name in src.names() {
        if consumed.contains_key(name) {
            continue;
        }
        let t = src.require(name)?;
        if let Some(stem) = name.strip_suffix(".weight") {
            let scale = format!("{stem}.weight_scale");
            if t.dtype == Dtype::F8_E4M3 && src.get(&scale).is_some() && !consumed.contains_key(&scale) {
                consumed.insert(name.to_string(), ());
                consumed.insert(scale.clone(), ());
                cands.push((
                    name.to_string(),
                    Cand::Fp8 {
                        weight: name.to_string(),
                        scale,
                    },
                ));
            }
        }
    }
    for name in src.names() {
        if !consumed.contains_key(name) {
            cands.push((name.to_string(), Cand::Plain(name.to_string())));
        }
    }
    cands.sort_by(|a, b| a.0.cmp(&b.0));
    for w in cands.windows(2) {
        if w[0].0 == w[1].0 {
            return Err(Error::tensor(
                w[0].0.clone(),
                "two source groups would produce this output name (a plain tensor and a compressed-tensors group)",
            ));
        }
    }

    let mut jobs = Vec::new();
    for (out, cand) in cands {
        let source_names: Vec<&str> = match &cand {
            Cand::Plain(s) => vec![s],
            Cand::Nvfp4 {
                packed,
                scale,
                global,
            } => vec![packed, scale, global],
            Cand::Fp8 { weight, scale } => vec![weight, scale],
        };
        if recipe.skipped(&out) || source_names.iter().any(|s| recipe.skipped(s)) {
            continue;
        }
        let rule = recipe.rule_for(&out).ok_or_else(|| {
            Error::tensor(
                &out,
                "no recipe rule matches it (add a [[tensor]] rule, or list it under `skip` to leave it out deliberately)",
            )
        })?;
        let f = rule.format;
        let kind = match cand {
            Cand::Nvfp4 {
                packed,
                scale,
                global,
            } => {
                if f != Format::Nvfp4 {
                    return Err(Error::tensor(
                        &out,
                        format!(
                            "unsupported pair: the source is compressed-tensors NVFP4 and the recipe asks for {}; \
                             NVFP4 words are copied, never requantized",
                            f.name()
                        ),
                    ));
                }
                Kind::Nvfp4 {
                    packed,
                    scale,
                    global,
                }
            }
            Cand::Fp8 { weight, scale } => {
                if f != Format::Fp8E4m3fnRowBf16s {
                    return Err(Error::tensor(
                        &out,
                        format!(
                            "unsupported pair: the source is a compressed-tensors FP8 channel tensor and the recipe \
                             asks for {}; FP8 words are copied into FP8_E4M3FN_ROW_BF16S only",
                            f.name()
                        ),
                    ));
                }
                Kind::Fp8 { weight, scale }
            }
            Cand::Plain(s) => {
                let t = src.require(&s)?;
                plain_kind(&out, &t, rule)?
            }
        };
        jobs.push(Job {
            name: out,
            format: f,
            kind,
        });
    }
    Ok(jobs)
}

fn plain_kind(out: &str, t: &SrcTensor<'_>, rule: &recipe::Rule) -> Result<Kind> {
    let f = rule.format;
    let dt = dtype_name(t.dtype);
    match f.category() {
        Category::DirectFloat | Category::DirectInt => {
            let st = source_type(t.dtype).ok_or_else(|| {
                Error::tensor(out, format!("unsupported pair: source dtype {dt} cannot become {}", f.name()))
            })?;
            let conversion = direct_conversion(f, st, rule.convert).map_err(|_| {
                let hint = match (st, f) {
                    (SourceType::F32, Format::Bf16) => " (e.g. convert = \"f32_to_bf16_rne\")",
                    (SourceType::I64, Format::I32) => " (e.g. convert = \"i64_to_i32_checked\")",
                    (SourceType::F16, Format::Fp32) => " (e.g. convert = \"f16_to_f32_exact\")",
                    (SourceType::Bf16, Format::Fp32) => " (e.g. convert = \"bf16_to_f32_exact\")",
                    (SourceType::F16, Format::Bf16) => " (e.g. convert = \"f16_to_bf16_rne\")",
                    _ => "",
                };
                match rule.convert {
                    Some(c) => Error::tensor(
                        out,
                        format!(
                            "unsupported pair: conversion `{}` does not connect source {dt} to {}",
                            conversion_name(c),
                            f.name()
                        ),
                    ),
                    None => Error::tensor(
                        out,
                        format!(
                            "source is {dt}, target is {}: a type change needs an explicit `convert` rule{hint}; \
                             nothing is converted implicitly (numeric-formats 3.1)",
                            f.name()
                        ),
                    ),
                }
            })?;
            if t.shape.len() > ninfer_core::layout::MAX_RANK {
                return Err(Error::tensor(out, format!("rank {} exceeds 8", t.shape.len())));
            }
            Ok(Kind::Direct { src: t.name.to_string(), conversion, allow_non_finite: rule.allow_non_finite })
        }
        Category::GroupedSignedInt => {
            if !matches!(t.dtype, Dtype::BF16 | Dtype::F16 | Dtype::F32 | Dtype::F64) {
                return Err(Error::tensor(
                    out,
                    format!("unsupported pair: the canonical encoder takes float sources, not {dt}"),
                ));
            }
            if t.shape.len() != 2 || t.shape[0] == 0 || t.shape[1] == 0 {
                return Err(Error::tensor(
                    out,
                    format!(
                        "{} needs a positive rank-2 [N, K] matrix (row-split-k128-v1); source shape is {:?}",
                        f.name(),
                        t.shape
                    ),
                ));
            }
            Ok(Kind::Grouped { src: t.name.to_string() })
        }
        Category::BlockScaledFloat => Err(Error::tensor(
            out,
            format!(
                "unsupported pair: {dt} source to NVFP4; NVFP4 is copied from compressed-tensors \
                 `<name>.weight_packed` / `.weight_scale` / `.weight_global_scale` tensors and NInfer owns \
                 no source-to-NVFP4 encoder (numeric-formats 2)"
            ),
        )),
        Category::RowScaledFloat => Err(Error::tensor(
            out,
            format!(
                "unsupported pair: {dt} source to FP8_E4M3FN_ROW_BF16S; it is copied from compressed-tensors \
                 `<name>.weight` F8_E4M3 + `<name>.weight_scale` BF16 [N, 1] and NInfer owns no source-to-FP8 \
                 encoder (numeric-formats 2)"
            ),
        )),
    }
}

fn u16s(b: &[u8]) -> Vec<u16> {
    b.chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}
fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
fn f64s(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}
fn i64s(b: &[u8]) -> Vec<i64> {
    b.chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}

/// Describe a numeric-formats value violation in words, with its location.
pub fn describe_value_error(format: Format, e: &ValueError) -> String {
    let (r, g, k) = (e.row, e.group, e.element);
    let scale = match format {
        Format::Nvfp4 => format!("E4M3FN block scale of row {r}, block {g}"),
        Format::Fp8E4m3fnRowBf16s => format!("BF16 row scale of row {r}"),
        _ => format!("binary16 scale of row {r}, group {g}"),
    };
    let sect = match format {
        Format::Nvfp4 => "numeric-formats 3.3",
        Format::Fp8E4m3fnRowBf16s => "numeric-formats 3.4",
        _ => "numeric-formats 5-6",
    };
    match e.kind {
        ValueErrorKind::ScaleNegative => format!("{scale} is negative ({sect}: scales are sign-zero finite)"),
        ValueErrorKind::ScaleNegativeZero => {
            format!("{scale} is negative zero ({sect}: scales are sign-zero finite)")
        }
        ValueErrorKind::ScaleNan => format!("{scale} is NaN ({sect})"),
        ValueErrorKind::ScaleInfinite => format!("{scale} is infinite ({sect})"),
        ValueErrorKind::NonZeroCodeWithZeroScale => {
            format!("row {r}, element {k}: nonzero code under a +0 scale ({sect})")
        }
        ValueErrorKind::CodeOutOfRange => {
            format!("row {r}, element {k}: code outside the legal interval ({sect})")
        }
        ValueErrorKind::CodeNan => {
            format!("row {r}, element {k}: E4M3FN code is a NaN word 0x7f/0xff ({sect})")
        }
        ValueErrorKind::DivisorNotFinite => {
            format!(
                "weight_global_scale (the NVFP4 divisor d_w) is not finite ({sect}: d_w is finite and > 0)"
            )
        }
        ValueErrorKind::DivisorNotPositive => {
            format!("weight_global_scale (the NVFP4 divisor d_w) is zero or negative ({sect}: d_w is finite and > 0)")
        }
        ValueErrorKind::LengthMismatch | ValueErrorKind::BadShape => {
            format!("shape/length mismatch ({sect})")
        }
    }
}

fn shape_err(out: &str, t: &SrcTensor<'_>, want: &str) -> Error {
    Error::tensor(
        out,
        format!(
            "source `{}` is {} {:?}; compressed-tensors layout requires {want}",
            t.name,
            dtype_name(t.dtype),
            t.shape
        ),
    )
}

fn sref(t: &SrcTensor<'_>) -> SourceRef {
    SourceRef {
        name: t.name.to_string(),
        dtype: dtype_name(t.dtype),
    }
}

/// Produce one planned tensor. `group_fn` is the grouped encoder (the converter uses the fast
/// twin; `verify` reproduces with the bit-level oracle).
pub fn produce(job: &Job, src: &SourceSet, group_fn: GroupFn) -> Result<Produced> {
    let out = job.name.as_str();
    let f = job.format;
    match &job.kind {
        Kind::Direct {
            src: s,
            conversion,
            allow_non_finite,
        } => {
            let t = src.require(s)?;
            let desc = TensorDesc::for_format(f, t.shape).map_err(|e| {
                Error::tensor(
                    out,
                    format!("shape {:?} refused by {}: {e}", t.shape, f.layout().name()),
                )
            })?;
            let payload = direct_payload(out, &t, *conversion, *allow_non_finite)?;
            let profile = if *conversion == Conversion::Identity {
                COPIED
            } else {
                DIRECT_CONVERSION
            };
            let prov = Provenance {
                conversion: conversion_name(*conversion).into(),
                encoder_profile: profile.into(),
                sources: vec![sref(&t)],
            };
            if payload.len() != desc.payload_len() {
                return Err(Error::tensor(out, "source byte length does not match its shape"));
            }
            Ok(Produced { desc, payload, prov })
        }
        Kind::Grouped { src: s } => {
            let t = src.require(s)?;
            let (n, k) = match t.shape {
                [n, k] => (*n, *k),
                _ => {
                    return Err(Error::tensor(
                        out,
                        format!("needs rank 2, source shape {:?}", t.shape),
                    ))
                }
            };
            let desc = TensorDesc::for_format(f, &[n, k]).map_err(|e| {
                Error::tensor(out, format!("shape [{n}, {k}] refused by row-split-k128-v1: {e}"))
            })?;
            let Geometry::RowSplit(geom) = desc.geometry() else {
                return Err(Error::tensor(
                    out,
                    "internal: grouped format without row-split geometry",
                ));
            };
            let mut payload = vec![0u8; desc.payload_len()];
            let (u, fl, d);
            let (source, conversion) = match t.dtype {
                Dtype::BF16 => {
                    u = u16s(t.data);
                    (Source::Bf16(&u), "bf16_to_f32_exact")
                }
                Dtype::F16 => {
                    u = u16s(t.data);
                    (Source::F16(&u), "f16_to_f32_exact")
                }
                Dtype::F32 => {
                    fl = f32s(t.data);
                    (Source::F32(&fl), "identity")
                }
                Dtype::F64 => {
                    d = f64s(t.data);
                    (Source::F64(&d), "f64_to_f32_rne")
                }
                other => {
                    return Err(Error::tensor(
                        out,
                        format!("unsupported pair: {} source to {}", dtype_name(other), f.name()),
                    ))
                }
            };
            geom.encode_into(source, group_fn, &mut payload).map_err(|e| {
                let why = match e.kind {
                    EncodeErrorKind::NonFiniteSource => {
                        "source value is NaN or infinite (numeric-formats 7: never quantized silently)"
                    }
                    EncodeErrorKind::ScaleOverflow => {
                        "the group's scale overflows binary16 (numeric-formats 7)"
                    }
                    EncodeErrorKind::LengthMismatch => "source length does not match its shape",
                    EncodeErrorKind::BadShape => "shape refused",
                };
                Error::tensor(
                    out,
                    format!(
                        "{PROFILE} refused row {}, group {}, element {}: {why}",
                        e.row, e.group, e.element
                    ),
                )
            })?;
            let prov = Provenance {
                conversion: conversion.into(),
                encoder_profile: PROFILE.into(),
                sources: vec![sref(&t)],
            };
            Ok(Produced { desc, payload, prov })
        }
        Kind::Nvfp4 {
            packed,
            scale,
            global,
        } => {
            let (p, s, g) = (src.require(packed)?, src.require(scale)?, src.require(global)?);
            let (n, half) = match (p.dtype, p.shape) {
                (Dtype::U8, [n, h]) if *n >= 1 && *h >= 1 => (*n, *h),
                _ => return Err(shape_err(out, &p, "U8 [N, K/2]")),
            };
            let k = half * 2;
            if k % 16 != 0 {
                return Err(Error::tensor(
                    out,
                    format!("K = {k} is not a multiple of 16 (NVFP4 blocks are 16 wide)"),
                ));
            }
            match (s.dtype, s.shape) {
                (Dtype::F8_E4M3, [sn, sk]) if *sn == n && *sk == k / 16 => {}
                _ => return Err(shape_err(out, &s, &format!("F8_E4M3 [{n}, {}]", k / 16))),
            }
            let d_bits = match (g.dtype, g.data.len()) {
                (Dtype::F32, 4) => u32::from_le_bytes([g.data[0], g.data[1], g.data[2], g.data[3]]),
                _ => return Err(shape_err(out, &g, "F32 with one element")),
            };
            let mut codes = Vec::with_capacity(n * k);
            for &b in p.data {
                codes.push(b & 0x0f);
                codes.push(b >> 4);
            }
            ninfer_core::scheme::nvfp4::validate(n, k, &codes, s.data, d_bits)
                .map_err(|e| Error::tensor(out, describe_value_error(f, &e)))?;
            let desc = TensorDesc::for_format(f, &[n, k]).map_err(|e| Error::tensor(out, e))?;
            let Geometry::Blockscale(geom) = desc.geometry() else {
                return Err(Error::tensor(out, "internal: NVFP4 without blockscale geometry"));
            };
            let mut payload = vec![0u8; desc.payload_len()];
            geom.pack(&codes, s.data, d_bits, &mut payload)
                .map_err(|e| Error::tensor(out, e))?;
            let prov = Provenance {
                conversion: "identity".into(),
                encoder_profile: COPIED.into(),
                sources: vec![sref(&p), sref(&s), sref(&g)],
            };
            Ok(Produced { desc, payload, prov })
        }
        Kind::Fp8 { weight, scale } => {
            let (w, s) = (src.require(weight)?, src.require(scale)?);
            let (n, k) = match (w.dtype, w.shape) {
                (Dtype::F8_E4M3, [n, k]) if *n >= 1 && *k >= 1 => (*n, *k),
                _ => return Err(shape_err(out, &w, "F8_E4M3 [N, K]")),
            };
            match (s.dtype, s.shape) {
                (Dtype::BF16, [sn, 1]) | (Dtype::BF16, [sn]) if *sn == n => {}
                _ => return Err(shape_err(out, &s, &format!("BF16 [{n}, 1]"))),
            }
            let scales = u16s(s.data);
            ninfer_core::scheme::fp8_row::validate(n, k, w.data, &scales)
                .map_err(|e| Error::tensor(out, describe_value_error(f, &e)))?;
            let desc = TensorDesc::for_format(f, &[n, k]).map_err(|e| Error::tensor(out, e))?;
            let Geometry::RowScale(geom) = desc.geometry() else {
                return Err(Error::tensor(out, "internal: FP8 without row-scale geometry"));
            };
            let mut payload = vec![0u8; desc.payload_len()];
            geom.pack(w.data, &scales, &mut payload)
                .map_err(|e| Error::tensor(out, e))?;
            let prov = Provenance {
                conversion: "identity".into(),
                encoder_profile: COPIED.into(),
                sources: vec![sref(&w), sref(&s)],
            };
            Ok(Produced { desc, payload, prov })
        }
    }
}

fn non_finite(out: &str, i: usize, what: &str) -> Error {
    Error::tensor(
        out,
        format!(
            "element {i} is {what}; the recipe does not allow non-finite words in this tensor \
             (set allow_non_finite = true on its rule to keep them)"
        ),
    )
}

fn direct_payload(out: &str, t: &SrcTensor<'_>, c: Conversion, allow: bool) -> Result<Vec<u8>> {
    let conv_err = |i: usize, e: ninfer_core::error::ConvertError| {
        Error::tensor(
            out,
            format!("element {i}: {e} (conversion {})", conversion_name(c)),
        )
    };
    let mut payload = Vec::new();
    match (c, t.dtype) {
        (Conversion::Identity, Dtype::BF16) => {
            if !allow {
                if let Some(i) = u16s(t.data).iter().position(|&w| !bf16_is_finite(w)) {
                    return Err(non_finite(out, i, "NaN or infinite"));
                }
            }
            payload.extend_from_slice(t.data);
        }
        (Conversion::Identity, Dtype::F32) => {
            if !allow {
                if let Some(i) = f32s(t.data).iter().position(|x| !x.is_finite()) {
                    return Err(non_finite(out, i, "NaN or infinite"));
                }
            }
            payload.extend_from_slice(t.data);
        }
        (Conversion::Identity, Dtype::I32) => payload.extend_from_slice(t.data),
        (Conversion::F32ToBf16Rne, Dtype::F32) => {
            for (i, x) in f32s(t.data).into_iter().enumerate() {
                let w = if !x.is_finite() {
                    if !allow {
                        return Err(non_finite(out, i, "NaN or infinite"));
                    }
                    f32_to_bf16_rne(x)
                } else {
                    f32_to_bf16_rne_checked(x).map_err(|e| conv_err(i, e))?
                };
                payload.extend_from_slice(&w.to_le_bytes());
            }
        }
        (Conversion::F64ToF32Rne | Conversion::F64ToBf16Rne, Dtype::F64) => {
            for (i, x) in f64s(t.data).into_iter().enumerate() {
                let y = if !x.is_finite() {
                    if !allow {
                        return Err(non_finite(out, i, "NaN or infinite"));
                    }
                    x as f32
                } else {
                    f64_to_f32_rne_checked(x).map_err(|e| conv_err(i, e))?
                };
                if c == Conversion::F64ToF32Rne {
                    payload.extend_from_slice(&y.to_bits().to_le_bytes());
                } else {
                    let w = if y.is_finite() {
                        f32_to_bf16_rne_checked(y).map_err(|e| conv_err(i, e))?
                    } else {
                        f32_to_bf16_rne(y)
                    };
                    payload.extend_from_slice(&w.to_le_bytes());
                }
            }
        }
        (Conversion::F16ToF32Exact | Conversion::F16ToBf16Rne, Dtype::F16) => {
            for (i, h) in u16s(t.data).into_iter().enumerate() {
                let y = f16_to_f32_exact(h);
                if !y.is_finite() && !allow {
                    return Err(non_finite(out, i, "NaN or infinite"));
                }
                if c == Conversion::F16ToF32Exact {
                    payload.extend_from_slice(&y.to_bits().to_le_bytes());
                } else {
                    let w = if y.is_finite() {
                        f32_to_bf16_rne_checked(y).map_err(|e| conv_err(i, e))?
                    } else {
                        f32_to_bf16_rne(y)
                    };
                    payload.extend_from_slice(&w.to_le_bytes());
                }
            }
        }
        (Conversion::Bf16ToF32Exact, Dtype::BF16) => {
            for (i, w) in u16s(t.data).into_iter().enumerate() {
                let y = bf16_to_f32_exact(w);
                if !y.is_finite() && !allow {
                    return Err(non_finite(out, i, "NaN or infinite"));
                }
                payload.extend_from_slice(&y.to_bits().to_le_bytes());
            }
        }
        (Conversion::I64ToI32Checked, Dtype::I64) => {
            for (i, v) in i64s(t.data).into_iter().enumerate() {
                let y = i64_to_i32_checked(v).map_err(|_| {
                    Error::tensor(
                        out,
                        format!("element {i} = {v} is outside I32 (numeric-formats 3.1: never wrapped or saturated)"),
                    )
                })?;
                payload.extend_from_slice(&y.to_le_bytes());
            }
        }
        (c, d) => {
            return Err(Error::tensor(
                out,
                format!(
                    "unsupported pair: conversion {} from {}",
                    conversion_name(c),
                    dtype_name(d)
                ),
            ))
        }
    }
    Ok(payload)
}

/// Convert `inputs` (safetensors files or a shard index) to `output` with `recipe`. Nothing
/// appears at `output` unless every tensor converted and the artifact was completely written.
pub fn convert(inputs: &[PathBuf], output: &Path, recipe: &Recipe, progress: bool) -> Result<Written> {
    let src = SourceSet::open(inputs)?;
    let jobs = plan(&src, recipe)?;
    let source_checkpoint = match &recipe.source {
        Some(s) => format!("{s}; files: {}", src.identity()),
        None => src.identity().to_string(),
    };
    let meta = Meta {
        source_checkpoint,
        recipe: recipe.name.clone(),
        tool: TOOL.into(),
    };
    let mut w = Writer::create(output, meta)?;
    let pb = if progress {
        let pb = indicatif::ProgressBar::new(jobs.len() as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{spinner} [{elapsed}] {bar:30} {pos}/{len} {msg}")
        {
            pb.set_style(style);
        }
        pb
    } else {
        indicatif::ProgressBar::hidden()
    };
    for job in &jobs {
        pb.set_message(job.name.clone());
        let p = produce(job, &src, ninfer_core::encode::twin::encode_group)?;
        w.add(&job.name, &p.desc, &p.prov, &p.payload)?;
        pb.inc(1);
    }
    pb.finish_and_clear();
    w.finish()
}

/// Rebuild the job that produced a container entry from its recorded provenance (for `verify
/// --source`).
pub fn job_from_entry(e: &ninfer_core::container::Entry<'_>) -> Result<Job> {
    let srcs: Vec<_> = e.provenance.sources().collect();
    let name = e.name.to_string();
    let f = e.format();
    let bad = || {
        Error::tensor(
            &name,
            "provenance does not describe a production path this tool knows",
        )
    };
    let kind = match f.category() {
        Category::DirectFloat | Category::DirectInt => {
            let conversion = recipe::conversion_from_name(e.provenance.conversion).ok_or_else(bad)?;
            let [s] = srcs.as_slice() else { return Err(bad()) };
            // Non-finite words were either refused at conversion or explicitly allowed; the words
            // themselves are compared, so allow them here.
            Kind::Direct {
                src: s.name.to_string(),
                conversion,
                allow_non_finite: true,
            }
        }
        Category::GroupedSignedInt => {
            if e.provenance.encoder_profile != PROFILE {
                return Err(Error::tensor(
                    &name,
                    format!(
                        "encoder profile `{}` has no parity oracle here",
                        e.provenance.encoder_profile
                    ),
                ));
            }
            let [s] = srcs.as_slice() else { return Err(bad()) };
            Kind::Grouped {
                src: s.name.to_string(),
            }
        }
        Category::BlockScaledFloat => {
            let [p, s, g] = srcs.as_slice() else {
                return Err(bad());
            };
            Kind::Nvfp4 {
                packed: p.name.to_string(),
                scale: s.name.to_string(),
                global: g.name.to_string(),
            }
        }
        Category::RowScaledFloat => {
            let [w, s] = srcs.as_slice() else {
                return Err(bad());
            };
            Kind::Fp8 {
                weight: w.name.to_string(),
                scale: s.name.to_string(),
            }
        }
    };
    Ok(Job {
        name,
        format: f,
        kind,
    })
}
