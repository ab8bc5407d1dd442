//! The `.ninfer` container reader on hostile bytes: `open` and `open_structure` return a
//! container or an error; walking a container that opened touches every field and payload.
//! Never panics, never reads out of bounds, never loops forever.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ninfer_core::container::Container;

fuzz_target!(|data: &[u8]| {
    let _ = Container::open(data);
    let Ok(c) = Container::open_structure(data) else { return };
    let meta = c.meta();
    let _ = (meta, c.len(), c.is_empty());
    for e in c.entries() {
        let _ = (e.format(), e.layout(), e.shape());
        let _ = e.verify_checksum();
        let _ = e.validate();
        for s in e.provenance.sources() {
            let _ = s;
        }
        let _ = c.find(e.name);
    }
    let _ = c.find("");
    let _ = ninfer_core::container::tensor_name_hint(data, 0);
});
