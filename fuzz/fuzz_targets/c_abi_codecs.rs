//! The C ABI exports the `c_abi` target leaves out, fed random descriptors, random buffers and
//! random lengths: the encoders (f32 / BF16 / binary16 sources), pack and unpack of every layout,
//! row-range decodes, BF16 row gathers, `ninfer_desc_with_rows`, GEMV in both profiles (and bad
//! ones) with random activations (NaN and infinities included), batch sizes and thread counts,
//! the kernel whitelist query, the registry queries and CRC-32C. As in `c_abi`, pointers always
//! cover the lengths passed with them (the caller's side of the contract); every call must
//! return a status — no panic escapes, no out-of-bounds access (AddressSanitizer).
#![no_main]
use libfuzzer_sys::fuzz_target;
use ninfer_ffi::codec::*;
use ninfer_ffi::container::ninfer_crc32c;
use ninfer_ffi::desc::*;
use ninfer_ffi::kernels::*;
use ninfer_ffi::registry::*;
use ninfer_ffi::{ninfer_error_location, ninfer_status};

fn take<'a>(data: &mut &'a [u8], n: usize) -> &'a [u8] {
    let n = n.min(data.len());
    let (a, b) = data.split_at(n);
    *data = b;
    a
}

/// `n` values cycled from the input bytes (zeros when there are none).
fn fill<T: Copy>(data: &[u8], n: usize, f: impl Fn(&[u8]) -> T, width: usize, zero: T) -> Vec<T> {
    if data.len() < width {
        return vec![zero; n];
    }
    let m = data.len() / width;
    (0..n).map(|i| f(&data[(i % m) * width..(i % m) * width + width])).collect()
}

/// A length near `want`: exact, one short, one long, or zero.
fn len_near(want: usize, sel: u8) -> usize {
    match sel % 4 {
        0 | 1 => want,
        2 => want.saturating_sub(1),
        _ => want + 1,
    }
}

fuzz_target!(|input: &[u8]| {
    let mut data = input;
    let head = take(&mut data, 8);
    if head.len() < 8 {
        return;
    }
    let format = 1 + head[0] as u32 % 10; // 10: unknown id
    let layout = 1 + head[1] as u32 % 5;
    // Small shapes: every whole-tensor call stays cheap.
    let rows = 1 + head[2] as u64 % 40;
    let k = 1 + (head[3] as u64 | (head[4] as u64) << 8) % 600;
    let shape = [rows, k];
    let (sel, op) = (head[5], head[6]);
    let mut desc = std::mem::MaybeUninit::<ninfer_desc>::zeroed();
    let mut loc = std::mem::MaybeUninit::<ninfer_error_location>::zeroed();
    let l = loc.as_mut_ptr();
    // SAFETY: shape covers 2 u64s; desc and loc are valid for writes.
    let st = unsafe { ninfer_desc_new(format, layout, shape.as_ptr(), 2, desc.as_mut_ptr(), l) };
    // The registry and whitelist queries take any ids.
    // SAFETY: every out pointer is valid for writes (or NULL where the ABI allows it).
    unsafe {
        let (mut name, mut len) = (std::ptr::null::<std::ffi::c_char>(), 0usize);
        let _ = ninfer_format_name(format, &mut name, &mut len);
        let _ = ninfer_layout_name(layout, &mut name, &mut len);
        let mut props = std::mem::MaybeUninit::<ninfer_format_props>::zeroed();
        let _ = ninfer_format_properties(format, props.as_mut_ptr());
        let mut ids = vec![0u32; (sel % 12) as usize];
        let mut count = 0usize;
        let _ = ninfer_layout_formats(layout, ids.as_mut_ptr(), ids.len(), &mut count, l);
        let mut listed = false;
        let _ = ninfer_kernel_is_listed(format, layout, head[7] as u32 % 8, op as u32 % 5, sel as u32 % 6, &mut listed);
        let mut crc = 0u32;
        let _ = ninfer_crc32c(input.as_ptr(), input.len(), &mut crc);
    }
    if st != ninfer_status::Ok {
        return;
    }
    // SAFETY: written by ninfer_desc_new on success.
    let desc = unsafe { desc.assume_init() };
    let numel = desc.numel as usize;
    let plen = desc.payload_len as usize;
    // A payload: the input bytes stretched to (about) the descriptor's length.
    let payload: Vec<u8> = fill(data, len_near(plen, sel), |b| b[0], 1, 0);
    let n_out = len_near(numel, sel >> 2);
    // SAFETY (whole block): every pointer covers the length passed beside it; desc and loc are
    // valid; output buffers are distinct allocations.
    unsafe {
        match op % 8 {
            0 => {
                let src: Vec<f32> = fill(data, n_out, |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]), 4, 0.0);
                let mut out = vec![0u8; len_near(plen, sel >> 4)];
                let _ = ninfer_encode_f32(&desc, src.as_ptr(), src.len(), out.as_mut_ptr(), out.len(), l);
            }
            1 => {
                let src: Vec<u16> = fill(data, n_out, |b| u16::from_le_bytes([b[0], b[1]]), 2, 0);
                let mut out = vec![0u8; len_near(plen, sel >> 4)];
                let _ = ninfer_encode_bf16(&desc, src.as_ptr(), src.len(), out.as_mut_ptr(), out.len(), l);
                let _ = ninfer_encode_f16(&desc, src.as_ptr(), src.len(), out.as_mut_ptr(), out.len(), l);
            }
            2 => {
                let w16: Vec<u16> = fill(data, n_out, |b| u16::from_le_bytes([b[0], b[1]]), 2, 0);
                let w32: Vec<u32> = fill(data, n_out, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]), 4, 0);
                let mut out = vec![0u8; len_near(plen, sel >> 4)];
                let _ = ninfer_pack_words16(&desc, w16.as_ptr(), w16.len(), out.as_mut_ptr(), out.len(), l);
                let _ = ninfer_pack_words32(&desc, w32.as_ptr(), w32.len(), out.as_mut_ptr(), out.len(), l);
                let mut u16s = vec![0u16; n_out];
                let mut u32s = vec![0u32; n_out];
                let _ = ninfer_unpack_words16(&desc, payload.as_ptr(), payload.len(), u16s.as_mut_ptr(), u16s.len(), l);
                let _ = ninfer_unpack_words32(&desc, payload.as_ptr(), payload.len(), u32s.as_mut_ptr(), u32s.len(), l);
            }
            3 => {
                // Codes per element; scales per group (grouped), per block (NVFP4), per row (FP8).
                let codes: Vec<u8> = fill(data, n_out, |b| b[0], 1, 0);
                let nsc = len_near(numel / 16 + rows as usize, sel >> 4);
                let s16: Vec<u16> = fill(data, nsc, |b| u16::from_le_bytes([b[0], b[1]]), 2, 0);
                let s8: Vec<u8> = fill(data, nsc, |b| b[0], 1, 0);
                let mut out = vec![0u8; len_near(plen, sel >> 6)];
                let _ = ninfer_pack_grouped(&desc, codes.as_ptr().cast(), codes.len(), s16.as_ptr(), s16.len(), out.as_mut_ptr(), out.len(), l);
                let _ = ninfer_pack_nvfp4(&desc, codes.as_ptr(), codes.len(), s8.as_ptr(), s8.len(), 0x4000_0000, out.as_mut_ptr(), out.len(), l);
                let _ = ninfer_pack_fp8_row(&desc, codes.as_ptr(), codes.len(), s16.as_ptr(), s16.len(), out.as_mut_ptr(), out.len(), l);
            }
            4 => {
                let mut codes = vec![0u8; n_out];
                let nsc = len_near(numel / 16 + rows as usize, sel >> 4);
                let mut s16 = vec![0u16; nsc];
                let mut s8 = vec![0u8; nsc];
                let mut d = 0u32;
                let _ = ninfer_unpack_grouped(&desc, payload.as_ptr(), payload.len(), codes.as_mut_ptr().cast(), codes.len(), s16.as_mut_ptr(), s16.len(), l);
                let _ = ninfer_unpack_nvfp4(&desc, payload.as_ptr(), payload.len(), codes.as_mut_ptr(), codes.len(), s8.as_mut_ptr(), s8.len(), &mut d, l);
                let _ = ninfer_unpack_fp8_row(&desc, payload.as_ptr(), payload.len(), codes.as_mut_ptr(), codes.len(), s16.as_mut_ptr(), s16.len(), l);
            }
            5 => {
                let row0 = head[7] as u64 % (rows + 2);
                let count = (sel as u64 >> 3) % (rows + 2);
                let want = (count * desc.row_len) as usize;
                let mut f = vec![0f32; len_near(want, sel)];
                let mut h = vec![0u16; len_near(want, sel)];
                let _ = ninfer_decode_rows_f32(&desc, payload.as_ptr(), payload.len(), row0, count, f.as_mut_ptr(), f.len(), l);
                let _ = ninfer_decode_rows_bf16(&desc, payload.as_ptr(), payload.len(), row0, count, h.as_mut_ptr(), h.len(), l);
                let picks = [0u64, rows - 1, rows, row0, u64::MAX];
                let np = (sel as usize) % 6;
                let mut g = vec![0u16; len_near(np * desc.row_len as usize, sel >> 1)];
                let _ = ninfer_gather_rows_bf16(&desc, payload.as_ptr(), payload.len(), picks.as_ptr(), np.min(5), g.as_mut_ptr(), g.len(), l);
                let mut sub = std::mem::MaybeUninit::<ninfer_desc>::zeroed();
                let _ = ninfer_desc_with_rows(&desc, count, sub.as_mut_ptr(), l);
            }
            _ => {
                // GEMV: profile 0..3 (2 F32, 3 I8; 1 Exact and 0 are refused), batch 0..9,
                // threads 0..3, activations from the input bytes (any f32 bits).
                let profile = (op as u32 >> 3) % 4;
                let batch = (sel as u32) % 10;
                let threads = (head[7] as u32) % 4;
                let nx = len_near(batch as usize * k as usize, sel >> 4);
                let x: Vec<f32> = fill(data, nx, |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]), 4, 1.0);
                let mut y = vec![0f32; len_near(batch as usize * rows as usize, sel >> 6)];
                let _ = ninfer_gemv(&desc, payload.as_ptr(), payload.len(), profile, x.as_ptr(), x.len(), batch, threads, y.as_mut_ptr(), y.len(), l);
            }
        }
    }
});
