//! Descriptor construction from arbitrary ids and shapes (hostile dimensions included): either a
//! descriptor whose geometry is self-consistent, or an error. Never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ninfer_core::layout::{TensorDesc, PLANE_ALIGN};
use ninfer_core::registry::{Format, Layout};

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let (Ok(f), Ok(l)) = (Format::from_id(data[0] as u32 % 11), Layout::from_id(data[1] as u32 % 6)) else {
        return;
    };
    let rank = (data[2] % 10) as usize;
    let mut shape = [0usize; 9];
    for (i, d) in shape.iter_mut().take(rank).enumerate() {
        let at = 3 + 8 * i;
        let mut b = [0u8; 8];
        if let Some(s) = data.get(at..at + 8) {
            b.copy_from_slice(s);
        }
        // Mix small and huge dimensions.
        let v = u64::from_le_bytes(b);
        *d = if v >> 63 == 1 { v as usize } else { (v % 1024) as usize };
    }
    if let Ok(d) = TensorDesc::new(f, l, &shape[..rank]) {
        let len = d.payload_len();
        let mut end = 0;
        for p in d.geometry().planes().into_iter().flatten() {
            assert_eq!(p.offset % PLANE_ALIGN, 0);
            assert!(p.offset >= end);
            end = p.offset.checked_add(p.len).unwrap();
        }
        assert_eq!(end, len);
        assert_eq!(d.shape(), &shape[..rank]);
    }
});
