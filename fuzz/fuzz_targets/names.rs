//! Name parsing: any byte string either resolves to exactly the canonical name it spells, or is
//! refused. Never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ninfer_core::registry::{Format, Layout};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = core::str::from_utf8(data) else { return };
    if let Ok(f) = Format::from_name(s) {
        assert_eq!(f.name(), s);
    }
    if let Ok(l) = Layout::from_name(s) {
        assert_eq!(l.name(), s);
    }
    if data.len() >= 4 {
        let id = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
        if let Ok(f) = Format::from_id(id) {
            assert_eq!(f.id(), id);
        }
        if let Ok(l) = Layout::from_id(id) {
            assert_eq!(l.id(), id);
        }
    }
});
