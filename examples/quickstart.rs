//! The README's "Using the core" snippet, compiled and run by `cargo test` (examples build with
//! the tests; `cargo run --example quickstart` runs it): encode a small matrix with the
//! canonical encoder straight into a row-split payload, validate it, decode it.

use ninfer::core::encode::{twin, Source};
use ninfer::core::layout::{Geometry, TensorDesc};
use ninfer::core::registry::Format;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let weights: Vec<f32> = (0..2 * 65).map(|i| (i as f32 - 65.0) * 0.01).collect();

    let desc = TensorDesc::for_format(Format::Q4G64F16S, &[2, 65])?; // checked geometry
    let Geometry::RowSplit(geo) = *desc.geometry() else {
        unreachable!()
    };
    let mut payload = vec![0u8; desc.payload_len()];
    geo.encode_into(Source::F32(&weights), twin::encode_group, &mut payload)?; // canonical encoder
    desc.validate(&payload)?; // layout + value rules
    let mut w = vec![0f32; desc.numel()];
    desc.decode_f32(&payload, &mut w)?; // section 6.2 oracle

    let max_err = weights
        .iter()
        .zip(&w)
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    println!(
        "{} bytes for {} weights, max |error| {max_err:.2e}",
        payload.len(),
        w.len()
    );
    assert!(max_err <= 0.65 / 7.0 / 2.0 * 1.01, "error beyond half a Q4 step"); // amax / qmax / 2
    Ok(())
}
