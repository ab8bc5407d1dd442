//! The C ABI entry points fed random descriptors (built, or forged field by field), random
//! payload bytes and random buffer lengths. Pointers always cover the lengths passed with them
//! (that is the caller's side of the contract); everything else is hostile. Every call must
//! return a status — no panic escapes, no out-of-bounds access (run under ASan by cargo-fuzz).
#![no_main]
use libfuzzer_sys::fuzz_target;
use ninfer_ffi::codec::*;
use ninfer_ffi::container::*;
use ninfer_ffi::desc::*;
use ninfer_ffi::registry::*;
use ninfer_ffi::{ninfer_error_location, ninfer_status};

fn take<'a>(data: &mut &'a [u8], n: usize) -> &'a [u8] {
    let n = n.min(data.len());
    let (a, b) = data.split_at(n);
    *data = b;
    a
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    for (j, x) in w.iter_mut().enumerate() {
        *x = b.get(i * 8 + j).copied().unwrap_or(0);
    }
    u64::from_le_bytes(w)
}

fuzz_target!(|input: &[u8]| {
    let mut data = input;
    let head = take(&mut data, 4);
    if head.len() < 4 {
        return;
    }
    let format = 1 + head[0] as u32 % 10; // 10: unknown id
    let layout = 1 + head[1] as u32 % 5;
    let rank = head[2] as usize % 10;
    let mode = head[3];
    let dims_raw = take(&mut data, 8 * rank);
    let shape: Vec<u64> = (0..rank)
        .map(|i| {
            let v = u64_at(dims_raw, i);
            if mode & 0x80 != 0 {
                v
            } else if rank <= 2 {
                v % 300
            } else {
                v % 24 // higher ranks: small axes keep whole tensors decodable
            }
        })
        .collect();
    let mut desc = std::mem::MaybeUninit::<ninfer_desc>::zeroed();
    let mut loc = std::mem::MaybeUninit::<ninfer_error_location>::zeroed();
    // SAFETY: shape covers `rank` u64s; desc and loc are valid for writes.
    let st = unsafe { ninfer_desc_new(format, layout, shape.as_ptr(), rank, desc.as_mut_ptr(), loc.as_mut_ptr()) };
    if st != ninfer_status::Ok {
        return;
    }
    // SAFETY: written by ninfer_desc_new on success.
    let mut desc = unsafe { desc.assume_init() };
    if mode & 0x40 != 0 {
        // Forge one field: the ABI must refuse a descriptor it would not have produced.
        let field = take(&mut data, 9);
        if field.len() == 9 {
            let v = u64_at(&field[1..], 0);
            match field[0] % 6 {
                0 => desc.payload_len = v,
                1 => desc.numel = v,
                2 => desc.dims[0] = v,
                3 => desc.rank = v as u32,
                4 => desc.planes[0].offset = v,
                _ => desc.k_physical = v,
            }
        }
    }
    let payload: Vec<u8> = if mode & 0x20 != 0 {
        // Exactly the expected length (when sane), filled from the input.
        let want = (desc.payload_len as usize).min(1 << 16);
        if data.is_empty() {
            vec![0; want]
        } else {
            data.iter().copied().cycle().take(want).collect()
        }
    } else {
        data.to_vec()
    };
    // Output buffers are capped (a larger tensor then meets a too-short buffer, which is one of the
    // cases under test); the caps keep one execution cheap enough for 10M-run campaigns.
    let numel = (desc.numel as usize).min(1 << 13);
    let out_len = if mode & 0x10 != 0 { numel } else { numel.saturating_sub(1) };
    let mut f = vec![0f32; out_len];
    let mut h = vec![0u16; out_len];
    let rows = [0u64, 1, desc.rows, u64::MAX];
    let nr = (mode as usize) % 5;
    let gather_len = nr.saturating_mul(desc.row_len as usize).min(1 << 13);
    let mut g = vec![0f32; gather_len];
    let mut packed = vec![0u8; payload.len()];
    // SAFETY: every pointer covers the length passed beside it; desc and loc are valid.
    unsafe {
        let l = loc.as_mut_ptr();
        let _ = ninfer_desc_check(&desc);
        let _ = ninfer_validate_layout(&desc, payload.as_ptr(), payload.len(), l);
        let _ = ninfer_validate_values(&desc, payload.as_ptr(), payload.len(), l);
        let _ = ninfer_validate(&desc, payload.as_ptr(), payload.len(), l);
        let _ = ninfer_decode_f32(&desc, payload.as_ptr(), payload.len(), f.as_mut_ptr(), f.len(), l);
        let _ = ninfer_decode_bf16(&desc, payload.as_ptr(), payload.len(), h.as_mut_ptr(), h.len(), l);
        let _ = ninfer_gather_rows_f32(&desc, payload.as_ptr(), payload.len(), rows.as_ptr(), nr.min(4), g.as_mut_ptr(), g.len(), l);
        let _ = ninfer_gather_pack(&desc, payload.as_ptr(), payload.len(), rows.as_ptr(), nr.min(4), packed.as_mut_ptr(), packed.len(), l);
        let mut c: *mut ninfer_container = std::ptr::null_mut();
        if ninfer_container_open(input.as_ptr(), input.len(), 0, &mut c, l) == ninfer_status::Ok {
            ninfer_container_free(c);
        }
        let mut id = 0u32;
        let _ = ninfer_format_from_name(input.as_ptr().cast(), input.len(), &mut id);
        let _ = ninfer_layout_from_name(input.as_ptr().cast(), input.len(), &mut id);
    }
});
