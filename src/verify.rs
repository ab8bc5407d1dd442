//! `ninfer verify`: everything the reader checks (done at open), then per tensor the layout and
//! value validators, and against the source checkpoint: the exact words where they were copied
//! or converted, canonical re-encode parity where they were quantized (reproduced with the
//! bit-level oracle of section 7, not the converter's fast twin), and error statistics.

use crate::convert::source::{SourceSet, SrcTensor};
use crate::convert::{describe_value_error, job_from_entry, produce};
use crate::errors::{Error, Result};
use ninfer_core::container::{Container, Entry};
use ninfer_core::encode::GroupFn;
use ninfer_core::layout::ValidateError;
use ninfer_core::registry::{Category, Format};
use ninfer_core::word::bf16::bf16_to_f32_exact;
use ninfer_core::word::f16::f16_to_f32_exact;
use safetensors::tensor::Dtype;

/// Reconstruction error of decoded values against reference values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// max |decoded - reference|.
    pub max_abs: f64,
    /// sqrt(sum (decoded - reference)^2 / sum reference^2); 0 when the reference is all zero.
    pub rms_rel: f64,
}

/// Error statistics over the pairs where both values are finite.
pub fn error_stats(decoded: &[f32], reference: &[f32]) -> Stats {
    let (mut max_abs, mut num, mut den) = (0f64, 0f64, 0f64);
    for (&d, &r) in decoded.iter().zip(reference) {
        if !(d.is_finite() && r.is_finite()) {
            continue;
        }
        let e = (d as f64 - r as f64).abs();
        max_abs = max_abs.max(e);
        num += e * e;
        den += (r as f64) * (r as f64);
    }
    Stats {
        max_abs,
        rms_rel: if den > 0.0 { (num / den).sqrt() } else { 0.0 },
    }
}

/// The source values as binary32 (float sources only).
pub fn source_f32(t: &SrcTensor<'_>) -> Option<Vec<f32>> {
    let b = t.data;
    Some(match t.dtype {
        Dtype::BF16 => b
            .chunks_exact(2)
            .map(|c| bf16_to_f32_exact(u16::from_le_bytes([c[0], c[1]])))
            .collect(),
        Dtype::F16 => b
            .chunks_exact(2)
            .map(|c| f16_to_f32_exact(u16::from_le_bytes([c[0], c[1]])))
            .collect(),
        Dtype::F32 => b
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        Dtype::F64 => b
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f32)
            .collect(),
        _ => return None,
    })
}

/// What was checked against the source for one tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceCheck {
    /// Payload equals the words reproduced from the source (copies and direct conversions).
    ExactWords,
    /// Payload equals the canonical encoder's output, reproduced with the oracle.
    CanonicalParity,
}

impl SourceCheck {
    /// Short label.
    pub fn label(self) -> &'static str {
        match self {
            SourceCheck::ExactWords => "exact words",
            SourceCheck::CanonicalParity => "canonical re-encode parity",
        }
    }
}

/// The verification result of one tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorCheck {
    /// Tensor name.
    pub name: String,
    /// Format.
    pub format: Format,
    /// Logical shape.
    pub shape: Vec<usize>,
    /// Payload bytes.
    pub bytes: usize,
    /// Logical elements.
    pub numel: usize,
    /// What was compared with the source, when a source was given.
    pub source: Option<SourceCheck>,
    /// Decoded values against the source values (float sources only).
    pub stats: Option<Stats>,
}

impl TensorCheck {
    /// Actual bits per weight: payload bits over logical elements.
    pub fn bits_per_weight(&self) -> f64 {
        if self.numel == 0 {
            0.0
        } else {
            self.bytes as f64 * 8.0 / self.numel as f64
        }
    }
}

/// Describe a validator failure for one tensor.
pub fn describe_validate(e: &Entry<'_>, err: ValidateError) -> Error {
    match err {
        ValidateError::Layout(l) => Error::tensor(e.name, format!("layout {}: {l}", e.layout().name())),
        ValidateError::Value(v) => Error::tensor(e.name, describe_value_error(e.format(), &v)),
    }
}

/// Verify every tensor of `c`; with `source`, also reproduce each from the source through its
/// recorded provenance (`group_fn` is the grouped encoder used for parity: normally the oracle).
pub fn verify(c: &Container<'_>, source: Option<&SourceSet>, group_fn: GroupFn) -> Result<Vec<TensorCheck>> {
    let mut out = Vec::with_capacity(c.len());
    for e in c.entries() {
        e.validate().map_err(|err| describe_validate(&e, err))?;
        let mut check = TensorCheck {
            name: e.name.to_string(),
            format: e.format(),
            shape: e.shape().to_vec(),
            bytes: e.payload.len(),
            numel: e.desc.numel(),
            source: None,
            stats: None,
        };
        if let Some(src) = source {
            let job = job_from_entry(&e)?;
            let p = produce(&job, src, group_fn)?;
            if p.desc != e.desc {
                return Err(Error::tensor(
                    e.name,
                    "descriptor differs from the one the source produces",
                ));
            }
            if let Some(at) = p.payload.iter().zip(e.payload).position(|(a, b)| a != b) {
                let what = if e.format().category() == Category::GroupedSignedInt {
                    "canonical re-encode parity fails"
                } else {
                    "stored words differ from the source words"
                };
                return Err(Error::tensor(
                    e.name,
                    format!("{what}: first difference at payload byte {at}"),
                ));
            }
            check.source = Some(if e.format().category() == Category::GroupedSignedInt {
                SourceCheck::CanonicalParity
            } else {
                SourceCheck::ExactWords
            });
            // Error statistics where a float source maps one-to-one onto the tensor.
            let srcs: Vec<_> = e.provenance.sources().collect();
            if let ([s], true) = (srcs.as_slice(), e.format() != Format::I32) {
                let t = src.require(s.name)?;
                if let Some(reference) = source_f32(&t) {
                    let mut decoded = vec![0f32; e.desc.numel()];
                    e.desc
                        .decode_f32(e.payload, &mut decoded)
                        .map_err(|err| Error::tensor(e.name, err))?;
                    check.stats = Some(error_stats(&decoded, &reference));
                }
            }
        }
        out.push(check);
    }
    Ok(out)
}
