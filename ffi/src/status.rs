//! Status codes, their static messages, the optional error-location out-struct, and the mapping
//! from every core error to them. The numeric values are part of the ABI: a value is never
//! renumbered or reused (docs/c-api.md, "Status codes").

use core::ffi::c_char;
use ninfer_core::error::{EncodeError, EncodeErrorKind, RegistryError, ValueError, ValueErrorKind};
use ninfer_core::layout::{LayoutError, ValidateError};

/// The result of every fallible call. `NINFER_STATUS_OK` is 0; the other values are grouped by
/// hundreds (arguments 1.., registry 100.., shapes and layouts 200.., value rules 300..,
/// encoder and GEMV 400.., CUDA 500.., container 600.., internal 900..). Values are fixed and never reused.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ninfer_status {
    /// Success. Every output was written.
    Ok = 0,
    /// A pointer that must not be NULL was NULL (a NULL buffer with length 0 is accepted where
    /// documented).
    NullPointer = 1,
    /// A pointer is not aligned for its element type (see docs/c-api.md, "Alignment").
    Misaligned = 2,
    /// A caller buffer has the wrong number of elements; `expected`/`actual` in the location.
    BufferLength = 3,
    /// An input buffer overlaps an output buffer.
    OverlappingBuffers = 4,
    /// The `ninfer_desc` was not produced by `ninfer_desc_new` (or was modified afterwards).
    InvalidDescriptor = 5,
    /// An argument is outside its documented domain (an unknown enum value, batch 0, ...).
    InvalidArgument = 6,
    /// The string is not exactly one of the nine canonical format names.
    UnknownFormatName = 100,
    /// The number is not one of the nine format ids.
    UnknownFormatId = 101,
    /// The string is not exactly one of the four canonical layout names.
    UnknownLayoutName = 102,
    /// The number is not one of the four layout ids.
    UnknownLayoutId = 103,
    /// The (format, layout) pair is not in the support matrix.
    UnsupportedPair = 104,
    /// The operation is not defined for this format (I32 to float, encoding a non-grouped
    /// format, packing words of the wrong type, ...).
    NotDefinedForFormat = 105,
    /// The (format, layout, op, profile, platform) combination is not in the kernel whitelist:
    /// there is no kernel and no fallback.
    KernelNotListed = 106,
    /// The rank is not allowed by the layout.
    BadRank = 200,
    /// N or K is zero where the layout needs N >= 1 and K >= 1.
    ZeroDim = 201,
    /// NVFP4 needs K >= 16 and K % 16 == 0.
    KNotBlockMultiple = 202,
    /// A size or offset overflows the address space.
    SizeOverflow = 203,
    /// The payload length differs from the descriptor's `payload_len`; `expected`/`actual`.
    PayloadLength = 204,
    /// A padding byte or a byte between planes is not zero; `byte_offset`.
    NonZeroPadding = 205,
    /// A logical word does not fit its field (a Q4 code outside -8..7, an E2M1 word above 0xF);
    /// `index` (and `row`, `element`).
    WordDoesNotFit = 206,
    /// A requested row is outside the tensor; `index` is the position in the row list, `row`
    /// the row.
    RowOutOfRange = 207,
    /// A scale is negative zero; `row`, `group`, `element`.
    ScaleNegativeZero = 300,
    /// A scale is negative.
    ScaleNegative = 301,
    /// A scale is infinite.
    ScaleInfinite = 302,
    /// A scale is NaN.
    ScaleNan = 303,
    /// A group or FP8 row with scale +0 holds a nonzero code.
    NonZeroCodeWithZeroScale = 304,
    /// A grouped code is outside its legal interval (W8 -128).
    CodeOutOfRange = 305,
    /// An FP8 code is a NaN word (0x7f, 0xff).
    CodeNan = 306,
    /// The NVFP4 divisor is infinite or NaN.
    DivisorNotFinite = 307,
    /// The NVFP4 divisor is zero or negative.
    DivisorNotPositive = 308,
    /// A source value of the encoder is NaN or infinite; `row`, `group`, `element`.
    NonFiniteSource = 400,
    /// A group's binary16 scale would be infinite; `row`, `group`, `element` (first k).
    ScaleOverflow = 401,
    /// An activation is NaN or infinite where the I8 GEMV profile must quantize it; `index` is
    /// the batch row, `element` the k.
    NonFiniteActivation = 402,
    /// A CUDA runtime call failed (CUDA launchers only).
    CudaError = 500,
    /// A `.ninfer` container breaks a rule of docs/container.md; the location's `detail` is the
    /// rule id (`ninfer_container_rule_str`), `tensor` the directory index when there is one.
    ContainerInvalid = 600,
    /// No tensor of the container has that name or index.
    NotFound = 601,
    /// A panic was caught at the boundary: a bug in the library. Outputs are unspecified.
    Panic = 900,
}

impl ninfer_status {
    /// The static message of this status.
    pub const fn message(self) -> &'static str {
        use ninfer_status as S;
        match self {
            S::Ok => "ok\0",
            S::NullPointer => "a required pointer is NULL\0",
            S::Misaligned => "a pointer is not aligned for its element type\0",
            S::BufferLength => "a caller buffer has the wrong number of elements\0",
            S::OverlappingBuffers => "an input buffer overlaps an output buffer\0",
            S::InvalidDescriptor => "the descriptor was not produced by ninfer_desc_new\0",
            S::InvalidArgument => "an argument is outside its documented domain\0",
            S::UnknownFormatName => "not a registered canonical format name\0",
            S::UnknownFormatId => "not a registered format id\0",
            S::UnknownLayoutName => "not a registered layout name\0",
            S::UnknownLayoutId => "not a registered layout id\0",
            S::UnsupportedPair => "format/layout pair is not in the support matrix\0",
            S::NotDefinedForFormat => "operation is not defined for this format\0",
            S::KernelNotListed => "combination is not in the kernel whitelist\0",
            S::BadRank => "rank not allowed by the layout\0",
            S::ZeroDim => "zero dimension where the layout needs N >= 1 and K >= 1\0",
            S::KNotBlockMultiple => "NVFP4 needs K >= 16 and K % 16 == 0\0",
            S::SizeOverflow => "size overflows the address space\0",
            S::PayloadLength => "payload length differs from the descriptor's payload_len\0",
            S::NonZeroPadding => "non-zero padding byte\0",
            S::WordDoesNotFit => "logical word does not fit its field\0",
            S::RowOutOfRange => "row index out of range\0",
            S::ScaleNegativeZero => "scale is negative zero\0",
            S::ScaleNegative => "scale is negative\0",
            S::ScaleInfinite => "scale is infinite\0",
            S::ScaleNan => "scale is NaN\0",
            S::NonZeroCodeWithZeroScale => "nonzero code in a group or row with scale +0\0",
            S::CodeOutOfRange => "code outside its legal interval\0",
            S::CodeNan => "FP8 code is a NaN word\0",
            S::DivisorNotFinite => "NVFP4 divisor is not finite\0",
            S::DivisorNotPositive => "NVFP4 divisor is not positive\0",
            S::NonFiniteSource => "encoder source value is NaN or infinite\0",
            S::ScaleOverflow => "group scale overflows binary16\0",
            S::NonFiniteActivation => "activation is NaN or infinite (I8 profile)\0",
            S::CudaError => "CUDA runtime error\0",
            S::ContainerInvalid => "container breaks a rule of the .ninfer format\0",
            S::NotFound => "no tensor with that name or index\0",
            S::Panic => "internal error: panic caught at the C boundary\0",
        }
    }

    /// Every status, in numeric order (for tests and the docs table).
    pub const ALL: [ninfer_status; 38] = {
        use ninfer_status as S;
        [
            S::Ok,
            S::NullPointer,
            S::Misaligned,
            S::BufferLength,
            S::OverlappingBuffers,
            S::InvalidDescriptor,
            S::InvalidArgument,
            S::UnknownFormatName,
            S::UnknownFormatId,
            S::UnknownLayoutName,
            S::UnknownLayoutId,
            S::UnsupportedPair,
            S::NotDefinedForFormat,
            S::KernelNotListed,
            S::BadRank,
            S::ZeroDim,
            S::KNotBlockMultiple,
            S::SizeOverflow,
            S::PayloadLength,
            S::NonZeroPadding,
            S::WordDoesNotFit,
            S::RowOutOfRange,
            S::ScaleNegativeZero,
            S::ScaleNegative,
            S::ScaleInfinite,
            S::ScaleNan,
            S::NonZeroCodeWithZeroScale,
            S::CodeOutOfRange,
            S::CodeNan,
            S::DivisorNotFinite,
            S::DivisorNotPositive,
            S::NonFiniteSource,
            S::ScaleOverflow,
            S::NonFiniteActivation,
            S::CudaError,
            S::ContainerInvalid,
            S::NotFound,
            S::Panic,
        ]
    };
}

/// The static, NUL-terminated message of a status. Any 32-bit value is accepted: a value that
/// is not a status returns "unknown status". Never NULL; the string lives forever.
#[no_mangle]
pub extern "C" fn ninfer_status_str(status: u32) -> *const c_char {
    // Nothing here can panic (a table scan), but every export is guarded.
    let msg = std::panic::catch_unwind(|| {
        ninfer_status::ALL
            .iter()
            .find(|s| **s as u32 == status)
            .map_or("unknown status\0", |s| s.message())
    })
    .unwrap_or("unknown status\0");
    msg.as_ptr().cast()
}

/// Bits of `ninfer_error_location::fields`: which members carry a value.
pub const NINFER_LOC_ROW: u32 = 1;
/// `group` is set (scale column along K).
pub const NINFER_LOC_GROUP: u32 = 2;
/// `element` is set (logical k).
pub const NINFER_LOC_ELEMENT: u32 = 4;
/// `byte_offset` is set (offset in the payload).
pub const NINFER_LOC_BYTE_OFFSET: u32 = 8;
/// `index` is set (position in an index list, or index of a logical word).
pub const NINFER_LOC_INDEX: u32 = 16;
/// `expected` and `actual` are set (lengths in elements or bytes).
pub const NINFER_LOC_LENGTHS: u32 = 32;
/// `tensor` is set (tensor index in a container).
pub const NINFER_LOC_TENSOR: u32 = 64;

/// Where a failure happened. Optional: every function that can report a location takes a
/// `ninfer_error_location *` last, which may be NULL. When non-NULL it is always written: cleared
/// (`fields == 0`) on success and on failures without a location, filled on the others. Only the
/// members named by `fields` are meaningful; the others are 0.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ninfer_error_location {
    /// Bitmask of `NINFER_LOC_*`: which members below are set.
    pub fields: u32,
    /// A status-specific detail code, 0 unless stated: for `NINFER_STATUS_CONTAINER_INVALID` the
    /// container rule id (`ninfer_container_rule_str`).
    pub detail: u32,
    /// Logical row n.
    pub row: u64,
    /// Group (scale column) along K.
    pub group: u64,
    /// Logical column k.
    pub element: u64,
    /// Byte offset in the payload.
    pub byte_offset: u64,
    /// Position in a row-index list, or index of a logical word in an input buffer.
    pub index: u64,
    /// Expected length (elements for word buffers, bytes for payloads).
    pub expected: u64,
    /// Actual length.
    pub actual: u64,
    /// Tensor index in a container.
    pub tensor: u64,
}

/// A failure inside the library: a status plus its location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fail {
    pub status: ninfer_status,
    pub loc: ninfer_error_location,
}

impl Fail {
    pub const fn bare(status: ninfer_status) -> Fail {
        Fail {
            status,
            loc: ninfer_error_location {
                fields: 0,
                detail: 0,
                row: 0,
                group: 0,
                element: 0,
                byte_offset: 0,
                index: 0,
                expected: 0,
                actual: 0,
                tensor: 0,
            },
        }
    }

    pub fn lengths(status: ninfer_status, expected: usize, actual: usize) -> Fail {
        let mut f = Fail::bare(status);
        f.loc.fields = NINFER_LOC_LENGTHS;
        f.loc.expected = expected as u64;
        f.loc.actual = actual as u64;
        f
    }

    pub fn at(status: ninfer_status, row: usize, group: usize, element: usize) -> Fail {
        let mut f = Fail::bare(status);
        f.loc.fields = NINFER_LOC_ROW | NINFER_LOC_GROUP | NINFER_LOC_ELEMENT;
        f.loc.row = row as u64;
        f.loc.group = group as u64;
        f.loc.element = element as u64;
        f
    }

    pub fn row_out_of_range(position: usize, row: u64) -> Fail {
        let mut f = Fail::bare(ninfer_status::RowOutOfRange);
        f.loc.fields = NINFER_LOC_ROW | NINFER_LOC_INDEX;
        f.loc.row = row;
        f.loc.index = position as u64;
        f
    }

    /// A word at `index` of a row-major `[.., k]` input that does not fit its field.
    pub fn word(index: usize, k: usize) -> Fail {
        let mut f = Fail::bare(ninfer_status::WordDoesNotFit);
        f.loc.fields = NINFER_LOC_INDEX | NINFER_LOC_ROW | NINFER_LOC_ELEMENT;
        f.loc.index = index as u64;
        if let (Some(row), Some(element)) = (index.checked_div(k), index.checked_rem(k)) {
            f.loc.row = row as u64;
            f.loc.element = element as u64;
        }
        f
    }
}

impl From<ninfer_status> for Fail {
    fn from(s: ninfer_status) -> Fail {
        Fail::bare(s)
    }
}

impl From<RegistryError> for Fail {
    fn from(e: RegistryError) -> Fail {
        Fail::bare(match e {
            RegistryError::UnknownFormatName => ninfer_status::UnknownFormatName,
            RegistryError::UnknownFormatId => ninfer_status::UnknownFormatId,
            RegistryError::UnknownLayoutName => ninfer_status::UnknownLayoutName,
            RegistryError::UnknownLayoutId => ninfer_status::UnknownLayoutId,
            RegistryError::UnsupportedPair => ninfer_status::UnsupportedPair,
        })
    }
}

impl From<LayoutError> for Fail {
    fn from(e: LayoutError) -> Fail {
        use ninfer_status as S;
        match e {
            LayoutError::UnsupportedPair => Fail::bare(S::UnsupportedPair),
            LayoutError::BadRank => Fail::bare(S::BadRank),
            LayoutError::ZeroDim => Fail::bare(S::ZeroDim),
            LayoutError::KNotMultipleOf16 => Fail::bare(S::KNotBlockMultiple),
            LayoutError::SizeOverflow => Fail::bare(S::SizeOverflow),
            LayoutError::PayloadLength { expected, actual } => {
                Fail::lengths(S::PayloadLength, expected, actual)
            }
            LayoutError::BufferLength { expected, actual } => {
                Fail::lengths(S::BufferLength, expected, actual)
            }
            LayoutError::NonZeroPadding { offset } => {
                let mut f = Fail::bare(S::NonZeroPadding);
                f.loc.fields = NINFER_LOC_BYTE_OFFSET;
                f.loc.byte_offset = offset as u64;
                f
            }
            LayoutError::WordDoesNotFit { index } => {
                let mut f = Fail::bare(S::WordDoesNotFit);
                f.loc.fields = NINFER_LOC_INDEX;
                f.loc.index = index as u64;
                f
            }
            LayoutError::RowOutOfRange { position, row } => Fail::row_out_of_range(position, row as u64),
            // The C API never hands out NVFP4 row views, so this cannot reach a caller; it is
            // mapped rather than unreachable.
            LayoutError::NotAPayload => Fail::bare(S::InvalidArgument),
        }
    }
}

/// The status of a value rule.
pub(crate) const fn value_status(kind: ValueErrorKind) -> ninfer_status {
    use ninfer_status as S;
    match kind {
        ValueErrorKind::ScaleNegativeZero => S::ScaleNegativeZero,
        ValueErrorKind::ScaleNegative => S::ScaleNegative,
        ValueErrorKind::ScaleInfinite => S::ScaleInfinite,
        ValueErrorKind::ScaleNan => S::ScaleNan,
        ValueErrorKind::NonZeroCodeWithZeroScale => S::NonZeroCodeWithZeroScale,
        ValueErrorKind::CodeOutOfRange => S::CodeOutOfRange,
        ValueErrorKind::CodeNan => S::CodeNan,
        ValueErrorKind::DivisorNotFinite => S::DivisorNotFinite,
        ValueErrorKind::DivisorNotPositive => S::DivisorNotPositive,
        ValueErrorKind::LengthMismatch => S::PayloadLength,
        ValueErrorKind::BadShape => S::SizeOverflow,
    }
}

impl From<ValueError> for Fail {
    fn from(e: ValueError) -> Fail {
        let status = value_status(e.kind);
        match e.kind {
            ValueErrorKind::DivisorNotFinite
            | ValueErrorKind::DivisorNotPositive
            | ValueErrorKind::LengthMismatch
            | ValueErrorKind::BadShape => Fail::bare(status),
            _ => Fail::at(status, e.row, e.group, e.element),
        }
    }
}

impl From<ValidateError> for Fail {
    fn from(e: ValidateError) -> Fail {
        match e {
            ValidateError::Layout(l) => l.into(),
            ValidateError::Value(v) => v.into(),
        }
    }
}

impl From<EncodeError> for Fail {
    fn from(e: EncodeError) -> Fail {
        use ninfer_status as S;
        match e.kind {
            EncodeErrorKind::NonFiniteSource => Fail::at(S::NonFiniteSource, e.row, e.group, e.element),
            EncodeErrorKind::ScaleOverflow => Fail::at(S::ScaleOverflow, e.row, e.group, e.element),
            EncodeErrorKind::LengthMismatch => Fail::bare(S::BufferLength),
            EncodeErrorKind::BadShape => Fail::bare(S::ZeroDim),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn status_values_are_fixed_and_messages_are_nul_terminated_and_distinct() {
        let fixed = [
            (ninfer_status::Ok, 0),
            (ninfer_status::NullPointer, 1),
            (ninfer_status::InvalidArgument, 6),
            (ninfer_status::UnknownFormatName, 100),
            (ninfer_status::NotDefinedForFormat, 105),
            (ninfer_status::BadRank, 200),
            (ninfer_status::RowOutOfRange, 207),
            (ninfer_status::ScaleNegativeZero, 300),
            (ninfer_status::DivisorNotPositive, 308),
            (ninfer_status::NonFiniteSource, 400),
            (ninfer_status::ScaleOverflow, 401),
            (ninfer_status::CudaError, 500),
            (ninfer_status::Panic, 900),
        ];
        for (s, v) in fixed {
            assert_eq!(s as u32, v, "{s:?}");
        }
        let mut seen = std::collections::HashSet::new();
        let mut prev = None;
        for s in ninfer_status::ALL {
            assert!(prev.is_none_or(|p| p < s as u32), "ALL is in numeric order");
            prev = Some(s as u32);
            let m = s.message();
            assert!(m.ends_with('\0') && !m[..m.len() - 1].contains('\0'), "{s:?}");
            assert!(seen.insert(m), "duplicate message for {s:?}");
            // SAFETY: ninfer_status_str returns a pointer to a static NUL-terminated string.
            let c = unsafe { CStr::from_ptr(ninfer_status_str(s as u32)) };
            assert_eq!(c.to_bytes(), &m.as_bytes()[..m.len() - 1]);
        }
        // SAFETY: as above.
        let unknown = unsafe { CStr::from_ptr(ninfer_status_str(12345)) };
        assert_eq!(unknown.to_bytes(), b"unknown status");
    }
}
