//! Decode throughput, per tensor.
//!
//! For now every number comes from the core's scalar oracle path, [`TensorDesc::decode_f32`],
//! through the [`DecodeBackend`] hook. **Switch point:** when `ninfer_simd` exposes its decode
//! kernels and bandwidth report, add a backend here that calls it and make [`default_backend`]
//! return it (and let `ninfer bench` print the SIMD report); the demo and `bench` pick it up
//! without other changes. No bandwidth ratio is claimed here: the figures are measured decode
//! rates of this backend on this machine, nothing more.

use ninfer_core::layout::{LayoutError, TensorDesc};
use ninfer_core::registry::Format;
use std::time::{Duration, Instant};

/// A way to decode a whole payload to f32.
pub trait DecodeBackend {
    /// Name shown in reports.
    fn name(&self) -> &'static str;
    /// Decode `payload` (described by `desc`) into `out` (`desc.numel()` values).
    fn decode_f32(&self, desc: &TensorDesc, payload: &[u8], out: &mut [f32]) -> Result<(), LayoutError>;
}

/// The core's scalar decode ([`TensorDesc::decode_f32`]).
pub struct CoreDecode;

impl DecodeBackend for CoreDecode {
    fn name(&self) -> &'static str {
        "ninfer-core scalar decode_f32"
    }
    fn decode_f32(&self, desc: &TensorDesc, payload: &[u8], out: &mut [f32]) -> Result<(), LayoutError> {
        desc.decode_f32(payload, out)
    }
}

/// The backend `demo` and `bench` use (the SIMD switch point, see the module docs).
pub fn default_backend() -> &'static dyn DecodeBackend {
    &CoreDecode
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
/// `None` for I32 (no f32 meaning) and empty tensors.
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
