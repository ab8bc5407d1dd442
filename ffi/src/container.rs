//! The `.ninfer` container reader (`ninfer_core::container`, docs/container.md) over the C ABI:
//! an opaque handle that borrows the caller's file bytes (for example a memory map), entries
//! with their descriptor, payload and provenance, lookup by name, and on-demand payload checks.

use crate::boundary::{guard, ref_in, slice_in, Out};
use crate::desc::{ninfer_desc, to_c};
use crate::status::{
    ninfer_error_location, ninfer_status, Fail, NINFER_LOC_BYTE_OFFSET, NINFER_LOC_LENGTHS, NINFER_LOC_TENSOR,
};
use core::ffi::c_char;
use ninfer_core::container::{Container, ContainerError, Entry, Rule};
use ninfer_core::crc32c::crc32c;

/// `ninfer_container_open` flag: also verify every payload CRC-32C while opening (reads the
/// whole file). Without it, header and directory CRCs are still checked and payloads can be
/// verified lazily with `ninfer_container_verify_entry`.
pub const NINFER_CONTAINER_VERIFY_PAYLOADS: u32 = 1;

/// Most source tensors one entry's provenance lists.
pub const NINFER_CONTAINER_MAX_SOURCES: usize = 4;

/// A borrowed byte string: `len` bytes of UTF-8 at `ptr`, NOT NUL-terminated. It points into the
/// container's bytes and is valid as long as they are.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ninfer_str {
    /// First byte (never NULL; a valid pointer even when `len == 0`).
    pub ptr: *const c_char,
    /// Length in bytes.
    pub len: usize,
}

impl ninfer_str {
    fn of(s: &str) -> ninfer_str {
        ninfer_str {
            ptr: s.as_ptr().cast(),
            len: s.len(),
        }
    }

    const EMPTY: ninfer_str = ninfer_str {
        ptr: c"".as_ptr(),
        len: 0,
    };
}

/// File-level metadata of a container.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ninfer_file_meta {
    /// Identity of the source checkpoint.
    pub source_checkpoint: ninfer_str,
    /// Identity of the checkpoint numeric recipe.
    pub recipe: ninfer_str,
    /// The producing tool and its version.
    pub tool: ninfer_str,
}

/// One tensor of a container. Pointers borrow the container's bytes.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ninfer_tensor_entry {
    /// Directory index.
    pub index: u32,
    /// Stored CRC-32C of the payload.
    pub payload_crc32c: u32,
    /// Tensor name.
    pub name: ninfer_str,
    /// Format, layout, shape and every derived extent (a valid descriptor for every payload
    /// function).
    pub desc: ninfer_desc,
    /// File offset of the payload (a multiple of 128).
    pub payload_offset: u64,
    /// The payload: exactly `desc.payload_len` bytes inside the container's bytes.
    pub payload: *const u8,
    /// Payload length in bytes.
    pub payload_len: usize,
    /// Source-type conversion applied (provenance).
    pub conversion: ninfer_str,
    /// Encoder profile (provenance).
    pub encoder_profile: ninfer_str,
    /// Number of source tensors, 1..=4.
    pub source_count: u32,
    /// Always 0.
    pub reserved: u32,
    /// Source tensor names (`source_count` used).
    pub source_names: [ninfer_str; NINFER_CONTAINER_MAX_SOURCES],
    /// Source dtypes as the source format spells them.
    pub source_dtypes: [ninfer_str; NINFER_CONTAINER_MAX_SOURCES],
}

/// An opened container (opaque). Borrows the bytes given to `ninfer_container_open`.
#[allow(non_camel_case_types)]
pub struct ninfer_container {
    inner: Container<'static>,
}

/// Rule ids reported in `ninfer_error_location::detail` with `NINFER_STATUS_CONTAINER_INVALID`
/// (docs/container.md): the file is shorter than the header.
pub const NINFER_CONTAINER_RULE_TOO_SHORT: u32 = 1;

/// Names of the container rules, indexed by rule id - 1.
const RULE_NAMES: [&str; 33] = [
    "file shorter than the 64-byte header\0",
    "bad magic: not a .ninfer container\0",
    "unsupported container version\0",
    "header length field is not 64\0",
    "flags field is not 0\0",
    "reserved header bytes are not zero\0",
    "header checksum mismatch\0",
    "file length differs from the header's\0",
    "tensor count exceeds the limit or the directory\0",
    "directory outside the file\0",
    "directory checksum mismatch\0",
    "directory truncated\0",
    "trailing bytes after the directory\0",
    "directory not at its canonical offset\0",
    "string too long\0",
    "string is not UTF-8\0",
    "empty string\0",
    "entry length mismatch\0",
    "tensor names not strictly ascending\0",
    "unknown format name\0",
    "unknown layout name\0",
    "rank above 8\0",
    "source count not in 1..=4\0",
    "reserved entry field is not zero\0",
    "dimension does not fit the address space\0",
    "descriptor refused by the layout rules\0",
    "payload length differs from the descriptor's\0",
    "payload offset not a multiple of 128\0",
    "payload overlaps the previous one\0",
    "payload not at its canonical offset\0",
    "payload outside the file\0",
    "payload checksum mismatch\0",
    "non-zero padding byte\0",
];

fn rule_id(r: &Rule) -> u32 {
    match r {
        Rule::TooShort { .. } => 1,
        Rule::BadMagic => 2,
        Rule::UnsupportedVersion { .. } => 3,
        Rule::BadHeaderLength { .. } => 4,
        Rule::NonZeroFlags { .. } => 5,
        Rule::NonZeroReserved => 6,
        Rule::HeaderChecksum { .. } => 7,
        Rule::FileLength { .. } => 8,
        Rule::TooManyTensors { .. } => 9,
        Rule::DirectoryBounds { .. } => 10,
        Rule::DirectoryChecksum { .. } => 11,
        Rule::DirectoryTruncated => 12,
        Rule::DirectoryTrailing { .. } => 13,
        Rule::DirectoryPlacement { .. } => 14,
        Rule::StringTooLong { .. } => 15,
        Rule::StringNotUtf8 => 16,
        Rule::EmptyString => 17,
        Rule::EntryLength { .. } => 18,
        Rule::NameNotAscending => 19,
        Rule::UnknownFormat => 20,
        Rule::UnknownLayout => 21,
        Rule::RankTooLarge { .. } => 22,
        Rule::SourceCount { .. } => 23,
        Rule::NonZeroReservedField => 24,
        Rule::DimTooLarge { .. } => 25,
        Rule::Descriptor(_) => 26,
        Rule::PayloadLength { .. } => 27,
        Rule::PayloadMisaligned { .. } => 28,
        Rule::PayloadOverlap { .. } => 29,
        Rule::PayloadGap { .. } => 30,
        Rule::PayloadOutOfBounds { .. } => 31,
        Rule::PayloadChecksum { .. } => 32,
        Rule::NonZeroPadding { .. } => 33,
    }
}

impl From<ContainerError> for Fail {
    fn from(e: ContainerError) -> Fail {
        let mut f = Fail::bare(ninfer_status::ContainerInvalid);
        f.loc.detail = rule_id(&e.rule);
        if let Some(t) = e.tensor {
            f.loc.fields |= NINFER_LOC_TENSOR;
            f.loc.tensor = t as u64;
        }
        let (offset, lengths) = match e.rule {
            Rule::FileLength { declared, actual } => (None, Some((declared, actual))),
            Rule::PayloadLength { expected, stored } => (None, Some((expected, stored))),
            Rule::DirectoryPlacement { offset, .. }
            | Rule::PayloadMisaligned { offset }
            | Rule::PayloadOverlap { offset, .. }
            | Rule::PayloadGap { offset, .. }
            | Rule::PayloadOutOfBounds { offset, .. }
            | Rule::NonZeroPadding { offset } => (Some(offset), None),
            _ => (None, None),
        };
        if let Some(o) = offset {
            f.loc.fields |= NINFER_LOC_BYTE_OFFSET;
            f.loc.byte_offset = o;
        }
        if let Some((exp, act)) = lengths {
            f.loc.fields |= NINFER_LOC_LENGTHS;
            (f.loc.expected, f.loc.actual) = (exp, act);
        }
        f
    }
}

/// The static, NUL-terminated description of container rule `rule` (1..=33, as reported in
/// `ninfer_error_location::detail`); "unknown rule" otherwise. Never NULL.
#[no_mangle]
pub extern "C" fn ninfer_container_rule_str(rule: u32) -> *const c_char {
    let s = crate::boundary::guard_value("unknown rule\0", || {
        (rule as usize)
            .checked_sub(1)
            .and_then(|i| RULE_NAMES.get(i))
            .copied()
            .unwrap_or("unknown rule\0")
    });
    s.as_ptr().cast()
}

/// CRC-32C (Castagnoli) of `bytes[0..len]`, the container's checksum (docs/container.md §6).
///
/// Errors: `NULL_POINTER`. `*out_crc` is written only on success.
///
/// # Safety
///
/// `bytes` readable for `len` bytes (NULL allowed when 0); `out_crc` writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_crc32c(bytes: *const u8, len: usize, out_crc: *mut u32) -> ninfer_status {
    // SAFETY: contract of this function.
    unsafe {
        guard(std::ptr::null_mut(), || {
            let o = Out::new(out_crc)?;
            let b = slice_in(bytes, len)?;
            o.write(crc32c(b));
            Ok(())
        })
    }
}

/// Open a `.ninfer` container held in `bytes[0..len]` (a file read or memory-mapped by the
/// caller). Validates the header, directory, every entry's format/layout/shape, placement, zero
/// padding, name order, the header and directory CRCs, and with
/// `NINFER_CONTAINER_VERIFY_PAYLOADS` every payload CRC. It does not run the value validator
/// (numeric-formats §9); `ninfer_container_verify_entry` does on demand.
///
/// The handle borrows `bytes`: they must stay valid and unmodified until
/// `ninfer_container_free`. The handle is immutable and may be used from several threads.
///
/// Errors: `NULL_POINTER`, `INVALID_ARGUMENT` (unknown flag bits), `CONTAINER_INVALID` (the
/// location's `detail` is the rule id, see `ninfer_container_rule_str`; `tensor` the directory
/// index when the fault belongs to one; `byte_offset` or `expected`/`actual` where the rule has
/// them). `*out` is written only on success.
///
/// # Safety
///
/// `bytes` readable for `len` bytes and kept alive and unmodified until the handle is freed;
/// `out` writable; `loc` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_container_open(
    bytes: *const u8,
    len: usize,
    flags: u32,
    out: *mut *mut ninfer_container,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function. The `'static` lifetime given to `bytes` is the caller's
    // promise (function contract) that they stay valid and unmodified until
    // `ninfer_container_free`, which is the only place the handle that borrows them ends.
    unsafe {
        guard(loc, || {
            let o = Out::new(out)?;
            if flags & !NINFER_CONTAINER_VERIFY_PAYLOADS != 0 {
                return Err(ninfer_status::InvalidArgument.into());
            }
            let b: &'static [u8] = slice_in(bytes, len)?;
            let inner = if flags & NINFER_CONTAINER_VERIFY_PAYLOADS != 0 {
                Container::open(b)?
            } else {
                Container::open_structure(b)?
            };
            o.write(Box::into_raw(Box::new(ninfer_container { inner })));
            Ok(())
        })
    }
}

/// Free a handle from `ninfer_container_open`. NULL is a no-op. The bytes it borrowed may be
/// released afterwards; entries obtained from it point into those bytes.
///
/// # Safety
///
/// `c` is NULL or a handle from `ninfer_container_open` not freed before, not in use by another
/// thread.
#[no_mangle]
pub unsafe extern "C" fn ninfer_container_free(c: *mut ninfer_container) {
    crate::boundary::guard_value((), || {
        if !c.is_null() {
            // SAFETY: `c` came from `Box::into_raw` in `ninfer_container_open` and is freed once
            // (function contract).
            drop(unsafe { Box::from_raw(c) });
        }
    });
}

/// Number of tensors of the container.
///
/// Errors: `NULL_POINTER`. `*out_count` written only on success.
///
/// # Safety
///
/// `c` a live handle; `out_count` writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_container_count(
    c: *const ninfer_container,
    out_count: *mut u32,
) -> ninfer_status {
    // SAFETY: contract of this function.
    unsafe {
        guard(std::ptr::null_mut(), || {
            let o = Out::new(out_count)?;
            let h = ref_in(c)?;
            o.write(h.inner.len() as u32);
            Ok(())
        })
    }
}

/// The file-level metadata (borrowed strings).
///
/// Errors: `NULL_POINTER`.
///
/// # Safety
///
/// `c` a live handle; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_container_meta(
    c: *const ninfer_container,
    out: *mut ninfer_file_meta,
) -> ninfer_status {
    // SAFETY: contract of this function.
    unsafe {
        guard(std::ptr::null_mut(), || {
            let o = Out::new(out)?;
            let m = ref_in(c)?.inner.meta();
            o.write(ninfer_file_meta {
                source_checkpoint: ninfer_str::of(m.source_checkpoint),
                recipe: ninfer_str::of(m.recipe),
                tool: ninfer_str::of(m.tool),
            });
            Ok(())
        })
    }
}

fn entry_c(e: &Entry<'_>) -> ninfer_tensor_entry {
    let mut names = [ninfer_str::EMPTY; NINFER_CONTAINER_MAX_SOURCES];
    let mut dtypes = [ninfer_str::EMPTY; NINFER_CONTAINER_MAX_SOURCES];
    let mut count = 0u32;
    for (i, s) in e
        .provenance
        .sources()
        .take(NINFER_CONTAINER_MAX_SOURCES)
        .enumerate()
    {
        names[i] = ninfer_str::of(s.name);
        dtypes[i] = ninfer_str::of(s.dtype);
        count += 1;
    }
    ninfer_tensor_entry {
        index: e.index,
        payload_crc32c: e.payload_crc32c,
        name: ninfer_str::of(e.name),
        desc: to_c(&e.desc),
        payload_offset: e.payload_offset,
        payload: e.payload.as_ptr(),
        payload_len: e.payload.len(),
        conversion: ninfer_str::of(e.provenance.conversion),
        encoder_profile: ninfer_str::of(e.provenance.encoder_profile),
        source_count: count,
        reserved: 0,
        source_names: names,
        source_dtypes: dtypes,
    }
}

fn nth(c: &ninfer_container, index: u32) -> Result<Entry<'static>, Fail> {
    c.inner
        .entries()
        .nth(index as usize)
        .ok_or(Fail::bare(ninfer_status::NotFound))
}

/// Entry `index` (directory order, ascending names).
///
/// Errors: `NULL_POINTER`, `NOT_FOUND` (index >= count). `*out` written only on success.
///
/// # Safety
///
/// `c` a live handle; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_container_entry(
    c: *const ninfer_container,
    index: u32,
    out: *mut ninfer_tensor_entry,
) -> ninfer_status {
    // SAFETY: contract of this function.
    unsafe {
        guard(std::ptr::null_mut(), || {
            let o = Out::new(out)?;
            let e = nth(ref_in(c)?, index)?;
            o.write(entry_c(&e));
            Ok(())
        })
    }
}

/// The entry named exactly `name[0..name_len]`.
///
/// Errors: `NULL_POINTER`, `NOT_FOUND`. `*out` written only on success.
///
/// # Safety
///
/// `c` a live handle; `name` readable for `name_len` bytes; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_container_find(
    c: *const ninfer_container,
    name: *const c_char,
    name_len: usize,
    out: *mut ninfer_tensor_entry,
) -> ninfer_status {
    // SAFETY: contract of this function.
    unsafe {
        guard(std::ptr::null_mut(), || {
            let o = Out::new(out)?;
            let h = ref_in(c)?;
            let n = slice_in(name.cast::<u8>(), name_len)?;
            let n = std::str::from_utf8(n).map_err(|_| Fail::bare(ninfer_status::NotFound))?;
            let e = h.inner.find(n).ok_or(Fail::bare(ninfer_status::NotFound))?;
            o.write(entry_c(&e));
            Ok(())
        })
    }
}

/// Verify entry `index` on demand: its payload CRC-32C (`CONTAINER_INVALID`, rule 32, `tensor`
/// set), then the layout validator (`NON_ZERO_PADDING`, ...) and the value validator (300..308,
/// with `row`/`group`/`element`).
///
/// # Safety
///
/// `c` a live handle; `loc` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_container_verify_entry(
    c: *const ninfer_container,
    index: u32,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function.
    unsafe {
        guard(loc, || {
            let e = nth(ref_in(c)?, index)?;
            e.verify_checksum()?;
            let mut r: Result<(), Fail> = e.validate().map_err(Fail::from);
            if let Err(f) = &mut r {
                f.loc.fields |= NINFER_LOC_TENSOR;
                f.loc.tensor = index as u64;
            }
            r
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_names_are_nul_terminated_and_the_first_rule_is_one() {
        assert!(RULE_NAMES.iter().all(|s| s.ends_with('\0') && s.len() > 1));
        assert_eq!(
            rule_id(&Rule::TooShort { len: 0 }),
            NINFER_CONTAINER_RULE_TOO_SHORT
        );
        assert_eq!(
            rule_id(&Rule::NonZeroPadding { offset: 0 }) as usize,
            RULE_NAMES.len()
        );
    }
}
