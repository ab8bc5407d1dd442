//! The library version, from the crate version (`CARGO_PKG_VERSION_*`). The header's
//! `NINFER_VERSION_*` macros are generated from the same variables by the header test, so a
//! version bump makes the committed header stale until it is regenerated.

use crate::boundary::guard_value;
use core::ffi::c_char;

const fn parse(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut v = 0u32;
    let mut i = 0;
    while i < b.len() {
        v = v * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    v
}

/// Major version of the crate.
pub(crate) const MAJOR: u32 = parse(env!("CARGO_PKG_VERSION_MAJOR"));
/// Minor version.
pub(crate) const MINOR: u32 = parse(env!("CARGO_PKG_VERSION_MINOR"));
/// Patch version.
pub(crate) const PATCH: u32 = parse(env!("CARGO_PKG_VERSION_PATCH"));
const STRING_Z: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

/// The library's version as `major * 10000 + minor * 100 + patch`; equals `NINFER_VERSION_NUMBER`
/// of the header the caller compiled against when header and library match.
#[no_mangle]
pub extern "C" fn ninfer_version_number() -> u32 {
    guard_value(0, || MAJOR * 10000 + MINOR * 100 + PATCH)
}

/// The library's version string ("0.1.0"), static and NUL-terminated; equals
/// `NINFER_VERSION_STRING` when header and library match.
#[no_mangle]
pub extern "C" fn ninfer_version_string() -> *const c_char {
    guard_value(STRING_Z.as_ptr().cast(), || STRING_Z.as_ptr().cast())
}
