//! Layout decoders and validators on hostile payloads. The first bytes pick a format and a small
//! shape; the rest is the payload (usually of the wrong length, sometimes exactly right).
//! Validation, decoding, views and gathers must return errors, never panic or read out of bounds.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ninfer_core::layout::{Geometry, TensorDesc};
use ninfer_core::registry::Format;

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let Ok(f) = Format::from_id(1 + data[0] as u32 % 9) else { return };
    // Rows past 128 only matter to the block-scale layout (its swizzle tiles are 128 rows); the
    // row layouts see every case with a few rows, which keeps an execution cheap.
    let (n, k) = match f {
        Format::Nvfp4 => (1 + data[1] as usize % 140, 16 * (1 + data[2] as usize % 20)),
        _ => (1 + data[1] as usize % 24, 1 + (data[2] as usize | (data[3] as usize) << 8) % 400),
    };
    let Ok(d) = TensorDesc::for_format(f, &[n, k]) else { return };
    let body = &data[5..];
    // Mode bit: use the fuzzer's bytes as-is, or stretch them to the exact payload length so the
    // deeper decoders run.
    let owned;
    let payload: &[u8] = if data[4] & 1 == 0 {
        body
    } else {
        let mut v = vec![0u8; d.payload_len()];
        for (i, b) in v.iter_mut().enumerate() {
            *b = body.get(i % body.len().max(1)).copied().unwrap_or(0);
        }
        owned = v;
        &owned
    };
    let _ = d.validate_layout(payload);
    let _ = d.validate_values(payload);
    let _ = d.validate(payload);
    if f != Format::I32 {
        let mut out = vec![0f32; d.numel()];
        let _ = d.decode_f32(payload, &mut out);
        let rows = [0usize, n - 1, n, data[1] as usize];
        let mut g = vec![0f32; rows.len() * k];
        let _ = d.gather_f32(payload, &rows, &mut g);
        let _ = d.gather_f32(payload, &rows[..2], &mut g[..2 * k]);
        if let Ok(sub) = d.with_rows(2) {
            let mut packed = vec![0u8; sub.payload_len()];
            if d.gather_pack(payload, &rows[..2], &mut packed).is_ok() {
                let _ = sub.validate(&packed);
            }
        }
    }
    match d.geometry() {
        Geometry::RowSplit(g) => {
            if let Ok(t) = g.tensor(payload) {
                let _ = t.view(data[1] as usize % (n + 2), n);
            }
        }
        Geometry::Blockscale(g) => {
            if let Ok(t) = g.tensor(payload) {
                if let Ok(v) = t.view(n / 2, n) {
                    let mut out = vec![0f32; v.rows() * k];
                    let _ = v.decode_f32(&mut out);
                }
            }
        }
        Geometry::RowScale(g) => {
            if let Ok(t) = g.tensor(payload) {
                let _ = t.view(1, n);
            }
        }
        Geometry::Contiguous(_) => {}
    }
});
