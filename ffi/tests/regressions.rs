//! Inputs found by fuzzing (`fuzz/regressions/`), kept as tests of the C ABI.

use ninfer_ffi::codec::{ninfer_decode_bf16, ninfer_decode_f32, ninfer_gather_rows_f32};
use ninfer_ffi::desc::ninfer_desc_new;
use ninfer_ffi::{ninfer_desc, ninfer_status};

fn desc(format: u32, layout: u32, shape: &[u64]) -> ninfer_desc {
    let mut d = std::mem::MaybeUninit::<ninfer_desc>::zeroed();
    // SAFETY: shape covers its length; d is writable; loc may be NULL.
    let st = unsafe {
        ninfer_desc_new(
            format,
            layout,
            shape.as_ptr(),
            shape.len(),
            d.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(st, ninfer_status::Ok);
    // SAFETY: written on success.
    unsafe { d.assume_init() }
}

#[test]
fn decoding_zero_rows_of_huge_rows_allocates_nothing() {
    // fuzz/regressions/c_abi/oom-empty-rows-huge-row-len: a valid BF16 tensor [0, 2^40] has an
    // empty payload; decoding it used to allocate a scratch row of 2^40 floats and abort.
    let d = desc(1, 1, &[0, 1 << 40]);
    assert_eq!(d.payload_len, 0);
    let mut out = [0f32; 0];
    let mut out16 = [0u16; 0];
    // SAFETY: every pointer covers the length passed beside it (empty buffers, dangling but
    // non-NULL and aligned pointers from empty arrays).
    unsafe {
        let st = ninfer_decode_f32(
            &d,
            [0u8; 0].as_ptr(),
            0,
            out.as_mut_ptr(),
            0,
            std::ptr::null_mut(),
        );
        assert_eq!(st, ninfer_status::Ok);
        let st = ninfer_decode_bf16(
            &d,
            [0u8; 0].as_ptr(),
            0,
            out16.as_mut_ptr(),
            0,
            std::ptr::null_mut(),
        );
        assert_eq!(st, ninfer_status::Ok);
        // An empty row list over a matrix with enormous rows: also nothing to allocate.
        let d = desc(9, 4, &[1, 1 << 40]);
        let payload = [0u8; 0];
        let st = ninfer_gather_rows_f32(
            &d,
            payload.as_ptr(),
            0,
            [0u64; 0].as_ptr(),
            0,
            out.as_mut_ptr(),
            0,
            std::ptr::null_mut(),
        );
        // The payload length is checked first (2^40 + ... bytes expected): a clean error.
        assert_eq!(st, ninfer_status::PayloadLength);
    }
}
