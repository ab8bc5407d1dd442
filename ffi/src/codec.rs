//! Payload functions: the canonical encoder into `row-split-k128-v1`, pack and unpack for every
//! layout, the two validators, decode and gather of rows to f32 and BF16, and row re-packing.
//!
//! Every function validates all of its arguments (pointers, descriptor, lengths, overlap, row
//! indices, words that must fit a field, encoder inputs) before it writes any output, so an
//! output buffer is untouched on failure (docs/c-api.md, "Outputs").

use crate::boundary::{disjoint, guard, slice_in, slice_out, Out};
use crate::desc::{desc_in, ninfer_desc};
use crate::status::{ninfer_error_location, ninfer_status, Fail};
use ninfer_core::encode::{encode_with, twin, Source};
use ninfer_core::layout::contiguous::{Words, WordsMut};
use ninfer_core::layout::{Geometry, TensorDesc};
use ninfer_core::registry::Format;
use ninfer_core::word::bf16::f32_to_bf16_rne;

/// Borrow the payload of `td`, requiring exactly `payload_len` bytes.
///
/// # Safety
///
/// `payload` points to `len` readable bytes or is NULL with `len == 0`.
unsafe fn payload_in<'a>(td: &TensorDesc, payload: *const u8, len: usize) -> Result<&'a [u8], Fail> {
    // SAFETY: forwarded contract.
    let p = unsafe { slice_in(payload, len) }?;
    if p.len() != td.payload_len() {
        return Err(Fail::lengths(
            ninfer_status::PayloadLength,
            td.payload_len(),
            p.len(),
        ));
    }
    Ok(p)
}

fn expect_len(status: ninfer_status, expected: usize, actual: usize) -> Result<(), Fail> {
    if expected == actual {
        Ok(())
    } else {
        Err(Fail::lengths(status, expected, actual))
    }
}

fn encode(td: &TensorDesc, src: Source<'_>, out: &mut [u8]) -> Result<(), Fail> {
    let Geometry::RowSplit(g) = td.geometry() else {
        return Err(ninfer_status::NotDefinedForFormat.into());
    };
    expect_len(ninfer_status::BufferLength, g.n * g.k, src.len())?;
    expect_len(ninfer_status::PayloadLength, g.len, out.len())?;
    // Validation pass: the same encoder with a sink that writes nothing, so every failure
    // (non-finite source, scale overflow) is found before the first output byte is written.
    encode_with(g.scheme, src, g.n, g.k, twin::encode_group, |_, _, _, _, _| {})?;
    // Cannot fail after the pass above (same deterministic encoder); on a failure it would
    // zero-fill `out` (RowSplitGeom::encode_into).
    g.encode_into(src, twin::encode_group, out)?;
    Ok(())
}

/// The body of the `ninfer_encode_*` functions, their source words read as `source` says.
///
/// # Safety
///
/// `desc` points to a readable descriptor; `src` to `src_len` readable, aligned elements; `out`
/// to `out_len` writable bytes not overlapping `src`; `loc` is NULL or writable.
unsafe fn encode_entry<'a, T: 'a>(
    desc: *const ninfer_desc,
    src: *const T,
    src_len: usize,
    out: *mut u8,
    out_len: usize,
    loc: *mut ninfer_error_location,
    source: fn(&'a [T]) -> Source<'a>,
) -> ninfer_status {
    // SAFETY: the pointers satisfy the contract of this function; overlap is checked before
    // the output slice is formed.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let s = slice_in(src, src_len)?;
            disjoint(src, src_len, out, out_len)?;
            let o = slice_out(out, out_len)?;
            encode(&td, source(s), o)
        })
    }
}

/// Encode binary32 source values into a `row-split-k128-v1` payload.
///
/// The descriptor must be a grouped format in `row-split-k128-v1` (else
/// `NOT_DEFINED_FOR_FORMAT`); `src` holds `N * K` values row-major (`BUFFER_LENGTH`
/// otherwise); `out` exactly `payload_len` bytes (`PAYLOAD_LENGTH`). Implements
/// MAXABS_F16_RECIP_RNE_V1 (numeric-formats section 7) bit for bit, padding written as
/// zeros. A NaN or infinite source value fails with `NON_FINITE_SOURCE`, an
/// unrepresentable group scale with `SCALE_OVERFLOW`; the location names row, group and
/// element. The whole source is checked before `out` is written: on failure `out` is
/// untouched. Other errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_DESCRIPTOR`,
/// `OVERLAPPING_BUFFERS`.
///
/// # Safety
///
/// `desc` points to a readable descriptor; `src` to `src_len` readable, aligned
/// elements; `out` to `out_len` writable bytes not overlapping `src`; `loc` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_encode_f32(
    desc: *const ninfer_desc,
    src: *const f32,
    src_len: usize,
    out: *mut u8,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: the pointers satisfy the contract of this function, which is `encode_entry`'s.
    unsafe { encode_entry(desc, src, src_len, out, out_len, loc, Source::F32) }
}

/// Encode BF16 source words (expanded exactly to binary32) into a `row-split-k128-v1` payload.
///
/// The descriptor must be a grouped format in `row-split-k128-v1` (else
/// `NOT_DEFINED_FOR_FORMAT`); `src` holds `N * K` values row-major (`BUFFER_LENGTH`
/// otherwise); `out` exactly `payload_len` bytes (`PAYLOAD_LENGTH`). Implements
/// MAXABS_F16_RECIP_RNE_V1 (numeric-formats section 7) bit for bit, padding written as
/// zeros. A NaN or infinite source value fails with `NON_FINITE_SOURCE`, an
/// unrepresentable group scale with `SCALE_OVERFLOW`; the location names row, group and
/// element. The whole source is checked before `out` is written: on failure `out` is
/// untouched. Other errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_DESCRIPTOR`,
/// `OVERLAPPING_BUFFERS`.
///
/// # Safety
///
/// `desc` points to a readable descriptor; `src` to `src_len` readable, aligned
/// elements; `out` to `out_len` writable bytes not overlapping `src`; `loc` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_encode_bf16(
    desc: *const ninfer_desc,
    src: *const u16,
    src_len: usize,
    out: *mut u8,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: the pointers satisfy the contract of this function, which is `encode_entry`'s.
    unsafe { encode_entry(desc, src, src_len, out, out_len, loc, Source::Bf16) }
}

/// Encode IEEE binary16 source words (expanded exactly to binary32) into a `row-split-k128-v1`
/// payload.
///
/// The descriptor must be a grouped format in `row-split-k128-v1` (else
/// `NOT_DEFINED_FOR_FORMAT`); `src` holds `N * K` values row-major (`BUFFER_LENGTH`
/// otherwise); `out` exactly `payload_len` bytes (`PAYLOAD_LENGTH`). Implements
/// MAXABS_F16_RECIP_RNE_V1 (numeric-formats section 7) bit for bit, padding written as
/// zeros. A NaN or infinite source value fails with `NON_FINITE_SOURCE`, an
/// unrepresentable group scale with `SCALE_OVERFLOW`; the location names row, group and
/// element. The whole source is checked before `out` is written: on failure `out` is
/// untouched. Other errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_DESCRIPTOR`,
/// `OVERLAPPING_BUFFERS`.
///
/// # Safety
///
/// `desc` points to a readable descriptor; `src` to `src_len` readable, aligned
/// elements; `out` to `out_len` writable bytes not overlapping `src`; `loc` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_encode_f16(
    desc: *const ninfer_desc,
    src: *const u16,
    src_len: usize,
    out: *mut u8,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: the pointers satisfy the contract of this function, which is `encode_entry`'s.
    unsafe { encode_entry(desc, src, src_len, out, out_len, loc, Source::F16) }
}

/// Pack direct 16-bit words (BF16) into a `contiguous-le-v1` payload, little-endian, bit for bit.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_DESCRIPTOR`, `NOT_DEFINED_FOR_FORMAT` (not
/// BF16), `BUFFER_LENGTH` (`words_len != numel`), `PAYLOAD_LENGTH`, `OVERLAPPING_BUFFERS`.
///
/// # Safety
///
/// `words` points to `words_len` readable `uint16_t`; `out` to `out_len` writable bytes not
/// overlapping `words`; `desc` readable; `loc` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_pack_words16(
    desc: *const ninfer_desc,
    words: *const u16,
    words_len: usize,
    out: *mut u8,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function; overlap checked before forming the output slice.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let w = slice_in(words, words_len)?;
            disjoint(words, words_len, out, out_len)?;
            let o = slice_out(out, out_len)?;
            let Geometry::Contiguous(g) = td.geometry() else {
                return Err(ninfer_status::NotDefinedForFormat.into());
            };
            if g.width != 2 {
                return Err(ninfer_status::NotDefinedForFormat.into());
            }
            expect_len(ninfer_status::BufferLength, g.numel, w.len())?;
            expect_len(ninfer_status::PayloadLength, g.len, o.len())?;
            Ok(g.pack(Words::U16(w), o)?)
        })
    }
}

/// Pack direct 32-bit words (FP32 or I32 bits) into a `contiguous-le-v1` payload.
///
/// Errors as `ninfer_pack_words16` (`NOT_DEFINED_FOR_FORMAT` unless FP32 or I32).
///
/// # Safety
///
/// As `ninfer_pack_words16`, with `uint32_t` words.
#[no_mangle]
pub unsafe extern "C" fn ninfer_pack_words32(
    desc: *const ninfer_desc,
    words: *const u32,
    words_len: usize,
    out: *mut u8,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function; overlap checked before forming the output slice.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let w = slice_in(words, words_len)?;
            disjoint(words, words_len, out, out_len)?;
            let o = slice_out(out, out_len)?;
            let Geometry::Contiguous(g) = td.geometry() else {
                return Err(ninfer_status::NotDefinedForFormat.into());
            };
            if g.width != 4 {
                return Err(ninfer_status::NotDefinedForFormat.into());
            }
            expect_len(ninfer_status::BufferLength, g.numel, w.len())?;
            expect_len(ninfer_status::PayloadLength, g.len, o.len())?;
            Ok(g.pack(Words::U32(w), o)?)
        })
    }
}

/// Pack logical grouped codes (`N * K` signed codes, row-major) and binary16 scales
/// (`N * ceil(K / G)` words, row-major) into a `row-split-k128-v1` payload, padding as zeros.
///
/// A code that does not fit the format's b bits fails with `WORD_DOES_NOT_FIT` (location:
/// `index`, `row`, `element`). Value rules (W8's -128, scale validity) are not checked here; run
/// `ninfer_validate_values`. Errors also: `NULL_POINTER`, `MISALIGNED`, `INVALID_DESCRIPTOR`,
/// `NOT_DEFINED_FOR_FORMAT`, `BUFFER_LENGTH` (codes, then scales), `PAYLOAD_LENGTH`,
/// `OVERLAPPING_BUFFERS`. `out` is untouched on failure.
///
/// # Safety
///
/// `codes`, `scales` readable for their lengths; `out` writable for `out_len` bytes, not
/// overlapping the inputs; `desc` readable; `loc` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_pack_grouped(
    desc: *const ninfer_desc,
    codes: *const i8,
    codes_len: usize,
    scales: *const u16,
    scales_len: usize,
    out: *mut u8,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function; overlap checked before forming the output slice.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let c = slice_in(codes, codes_len)?;
            let s = slice_in(scales, scales_len)?;
            disjoint(codes, codes_len, out, out_len)?;
            disjoint(scales, scales_len, out, out_len)?;
            let o = slice_out(out, out_len)?;
            let Geometry::RowSplit(g) = td.geometry() else {
                return Err(ninfer_status::NotDefinedForFormat.into());
            };
            expect_len(ninfer_status::BufferLength, g.codes_len(), c.len())?;
            expect_len(ninfer_status::BufferLength, g.scales_len(), s.len())?;
            expect_len(ninfer_status::PayloadLength, g.len, o.len())?;
            let half = 1i32 << (g.scheme.bits() - 1);
            if let Some(i) = c.iter().position(|&q| (q as i32) < -half || (q as i32) >= half) {
                return Err(Fail::word(i, g.k));
            }
            Ok(g.pack(c, s, o)?)
        })
    }
}

/// Pack NVFP4 logical words into a `blockscale-k16-m128x4-v1` payload: `N * K` E2M1 words (one
/// per byte, each <= 0xF), `N * K / 16` E4M3FN scales row-major (swizzled here into the 128x4
/// tile order) and the FP32 divisor bits, padding as zeros.
///
/// Errors: `WORD_DOES_NOT_FIT` (a code above 0xF; location `index`, `row`, `element`), and as
/// `ninfer_pack_grouped`. Value rules are not checked here. `out` is untouched on failure.
///
/// # Safety
///
/// As `ninfer_pack_grouped`.
#[no_mangle]
pub unsafe extern "C" fn ninfer_pack_nvfp4(
    desc: *const ninfer_desc,
    codes: *const u8,
    codes_len: usize,
    scales: *const u8,
    scales_len: usize,
    divisor_bits: u32,
    out: *mut u8,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function; overlap checked before forming the output slice.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let c = slice_in(codes, codes_len)?;
            let s = slice_in(scales, scales_len)?;
            disjoint(codes, codes_len, out, out_len)?;
            disjoint(scales, scales_len, out, out_len)?;
            let o = slice_out(out, out_len)?;
            let Geometry::Blockscale(g) = td.geometry() else {
                return Err(ninfer_status::NotDefinedForFormat.into());
            };
            expect_len(ninfer_status::BufferLength, g.n * g.k, c.len())?;
            expect_len(ninfer_status::BufferLength, g.n * g.blocks(), s.len())?;
            expect_len(ninfer_status::PayloadLength, g.len, o.len())?;
            if let Some(i) = c.iter().position(|&w| w > 0x0f) {
                return Err(Fail::word(i, g.k));
            }
            Ok(g.pack(c, s, divisor_bits, o)?)
        })
    }
}

/// Pack FP8_E4M3FN_ROW_BF16S logical words into a `row-scale-v1` payload: `N * K` E4M3FN codes
/// row-major and `N` BF16 row scales. Value rules are not checked here.
///
/// Errors as `ninfer_pack_grouped` (no word can fail to fit). `out` is untouched on failure.
///
/// # Safety
///
/// As `ninfer_pack_grouped`.
#[no_mangle]
pub unsafe extern "C" fn ninfer_pack_fp8_row(
    desc: *const ninfer_desc,
    codes: *const u8,
    codes_len: usize,
    scales: *const u16,
    scales_len: usize,
    out: *mut u8,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function; overlap checked before forming the output slice.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let c = slice_in(codes, codes_len)?;
            let s = slice_in(scales, scales_len)?;
            disjoint(codes, codes_len, out, out_len)?;
            disjoint(scales, scales_len, out, out_len)?;
            let o = slice_out(out, out_len)?;
            let Geometry::RowScale(g) = td.geometry() else {
                return Err(ninfer_status::NotDefinedForFormat.into());
            };
            expect_len(ninfer_status::BufferLength, g.n * g.k, c.len())?;
            expect_len(ninfer_status::BufferLength, g.n, s.len())?;
            expect_len(ninfer_status::PayloadLength, g.len, o.len())?;
            Ok(g.pack(c, s, o)?)
        })
    }
}

/// Unpack a `contiguous-le-v1` BF16 payload into `numel` words, bit for bit.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_DESCRIPTOR`, `NOT_DEFINED_FOR_FORMAT` (not
/// BF16), `PAYLOAD_LENGTH`, `BUFFER_LENGTH`, `OVERLAPPING_BUFFERS`. Output only on success.
///
/// # Safety
///
/// `payload` readable for `payload_len` bytes; `out` writable for `out_len` words, not
/// overlapping `payload`; `desc` readable; `loc` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_unpack_words16(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    out: *mut u16,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function; overlap checked before forming the output slice.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let p = payload_in(&td, payload, payload_len)?;
            disjoint(payload, payload_len, out, out_len)?;
            let o = slice_out(out, out_len)?;
            match td.geometry() {
                Geometry::Contiguous(g) if g.width == 2 => {
                    expect_len(ninfer_status::BufferLength, g.numel, o.len())?;
                    Ok(g.unpack(p, WordsMut::U16(o))?)
                }
                _ => Err(ninfer_status::NotDefinedForFormat.into()),
            }
        })
    }
}

/// Unpack a `contiguous-le-v1` FP32 or I32 payload into `numel` 32-bit words, bit for bit.
///
/// Errors as `ninfer_unpack_words16`.
///
/// # Safety
///
/// As `ninfer_unpack_words16`, with `uint32_t` words.
#[no_mangle]
pub unsafe extern "C" fn ninfer_unpack_words32(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    out: *mut u32,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function; overlap checked before forming the output slice.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let p = payload_in(&td, payload, payload_len)?;
            disjoint(payload, payload_len, out, out_len)?;
            let o = slice_out(out, out_len)?;
            match td.geometry() {
                Geometry::Contiguous(g) if g.width == 4 => {
                    expect_len(ninfer_status::BufferLength, g.numel, o.len())?;
                    Ok(g.unpack(p, WordsMut::U32(o))?)
                }
                _ => Err(ninfer_status::NotDefinedForFormat.into()),
            }
        })
    }
}

/// Unpack a `row-split-k128-v1` payload into `N * K` signed codes and `N * ceil(K / G)` binary16
/// scales (row-major). Padding is not inspected (see `ninfer_validate_layout`).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_DESCRIPTOR`, `NOT_DEFINED_FOR_FORMAT`,
/// `PAYLOAD_LENGTH`, `BUFFER_LENGTH`, `OVERLAPPING_BUFFERS`. Outputs only on success.
///
/// # Safety
///
/// `payload` readable; `codes`, `scales` writable for their lengths, overlapping neither
/// `payload` nor each other; `desc` readable; `loc` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_unpack_grouped(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    codes: *mut i8,
    codes_len: usize,
    scales: *mut u16,
    scales_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function; overlaps checked before forming the output slices.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let p = payload_in(&td, payload, payload_len)?;
            disjoint(payload, payload_len, codes, codes_len)?;
            disjoint(payload, payload_len, scales, scales_len)?;
            disjoint(codes, codes_len, scales, scales_len)?;
            let c = slice_out(codes, codes_len)?;
            let s = slice_out(scales, scales_len)?;
            let Geometry::RowSplit(g) = td.geometry() else {
                return Err(ninfer_status::NotDefinedForFormat.into());
            };
            Ok(g.tensor(p)?.unpack(c, s)?)
        })
    }
}

/// Unpack a `blockscale-k16-m128x4-v1` payload into `N * K` E2M1 words (one per byte),
/// `N * K / 16` E4M3FN scales (row-major, un-swizzled) and the FP32 divisor bits.
///
/// Errors as `ninfer_unpack_grouped`. Outputs only on success.
///
/// # Safety
///
/// As `ninfer_unpack_grouped`; `divisor_bits` points to a writable `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn ninfer_unpack_nvfp4(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    codes: *mut u8,
    codes_len: usize,
    scales: *mut u8,
    scales_len: usize,
    divisor_bits: *mut u32,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function; overlaps checked before forming the output slices.
    unsafe {
        guard(loc, || {
            let od = Out::new(divisor_bits)?;
            let td = desc_in(desc)?;
            let p = payload_in(&td, payload, payload_len)?;
            disjoint(payload, payload_len, codes, codes_len)?;
            disjoint(payload, payload_len, scales, scales_len)?;
            disjoint(codes, codes_len, scales, scales_len)?;
            disjoint(divisor_bits, 1, codes, codes_len)?;
            disjoint(divisor_bits, 1, scales, scales_len)?;
            let c = slice_out(codes, codes_len)?;
            let s = slice_out(scales, scales_len)?;
            let Geometry::Blockscale(g) = td.geometry() else {
                return Err(ninfer_status::NotDefinedForFormat.into());
            };
            let t = g.tensor(p)?;
            t.unpack(c, s)?;
            od.write(t.divisor_bits());
            Ok(())
        })
    }
}

/// Unpack a `row-scale-v1` payload into `N * K` E4M3FN codes and `N` BF16 row scales.
///
/// Errors as `ninfer_unpack_grouped`. Outputs only on success.
///
/// # Safety
///
/// As `ninfer_unpack_grouped`.
#[no_mangle]
pub unsafe extern "C" fn ninfer_unpack_fp8_row(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    codes: *mut u8,
    codes_len: usize,
    scales: *mut u16,
    scales_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function; overlaps checked before forming the output slices.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let p = payload_in(&td, payload, payload_len)?;
            disjoint(payload, payload_len, codes, codes_len)?;
            disjoint(payload, payload_len, scales, scales_len)?;
            disjoint(codes, codes_len, scales, scales_len)?;
            let c = slice_out(codes, codes_len)?;
            let s = slice_out(scales, scales_len)?;
            let Geometry::RowScale(g) = td.geometry() else {
                return Err(ninfer_status::NotDefinedForFormat.into());
            };
            Ok(g.tensor(p)?.unpack(c, s)?)
        })
    }
}

/// The layout validator (layouts.md): exact length, zero padding inside planes, zero bytes
/// between planes. The first offending byte is reported in `byte_offset`.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_DESCRIPTOR`, `PAYLOAD_LENGTH`,
/// `NON_ZERO_PADDING`.
///
/// # Safety
///
/// `desc` readable; `payload` readable for `payload_len` bytes; `loc` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_validate_layout(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let p = payload_in(&td, payload, payload_len)?;
            Ok(td.validate_layout(p)?)
        })
    }
}

/// The value validator (numeric-formats sections 3.3, 3.4, 5, 6.1): scale validity, legal code
/// intervals, zero-scale groups and rows, NaN codes, the NVFP4 divisor. Direct formats have no
/// value rules. The first offender is reported as a value status (300..308) with `row`, `group`
/// and `element` (FP8 row scales use group 0; divisor faults have no location).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_DESCRIPTOR`, `PAYLOAD_LENGTH`, 300..308.
///
/// # Safety
///
/// As `ninfer_validate_layout`.
#[no_mangle]
pub unsafe extern "C" fn ninfer_validate_values(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let p = payload_in(&td, payload, payload_len)?;
            Ok(td.validate_values(p)?)
        })
    }
}

/// Both validators, layout first.
///
/// # Safety
///
/// As `ninfer_validate_layout`.
#[no_mangle]
pub unsafe extern "C" fn ninfer_validate(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let p = payload_in(&td, payload, payload_len)?;
            Ok(td.validate(p)?)
        })
    }
}

/// The rows a decode or gather reads: a range or a list of `uint64_t` indices.
#[derive(Clone, Copy)]
enum Rows<'a> {
    Range(u64, u64),
    List(&'a [u64]),
}

impl Rows<'_> {
    fn count(&self) -> usize {
        match self {
            // Checked against the tensor's rows before use, so it fits usize then.
            Rows::Range(_, n) => *n as usize,
            Rows::List(l) => l.len(),
        }
    }

    fn get(&self, i: usize) -> usize {
        match self {
            Rows::Range(r0, _) => *r0 as usize + i,
            Rows::List(l) => l[i] as usize,
        }
    }

    /// Every row must be `< n`; the error names the first offender.
    fn check(&self, n: usize) -> Result<(), Fail> {
        match self {
            Rows::Range(r0, count) => {
                let end = r0.checked_add(*count);
                match end {
                    Some(e) if e <= n as u64 => Ok(()),
                    _ => {
                        let bad = (*r0).max(n as u64);
                        Err(Fail::row_out_of_range((bad - r0) as usize, bad))
                    }
                }
            }
            Rows::List(l) => match l.iter().position(|&r| r >= n as u64) {
                Some(p) => Err(Fail::row_out_of_range(p, l[p])),
                None => Ok(()),
            },
        }
    }
}

/// Output element of a decode: f32, or BF16 by RNE of the exact f32.
trait DecodeOut: Copy {
    fn from_f32(x: f32) -> Self;
}

impl DecodeOut for f32 {
    fn from_f32(x: f32) -> f32 {
        x
    }
}

impl DecodeOut for u16 {
    fn from_f32(x: f32) -> u16 {
        f32_to_bf16_rne(x)
    }
}

/// Decode the selected rows of `td` into `out` (`count * row_len` elements).
fn decode_rows<T: DecodeOut>(td: &TensorDesc, p: &[u8], rows: Rows<'_>, out: &mut [T]) -> Result<(), Fail> {
    if td.format() == Format::I32 {
        return Err(ninfer_status::NotDefinedForFormat.into());
    }
    if td.rank() == 0 {
        return Err(ninfer_status::BadRank.into());
    }
    let n = td.shape()[0];
    let row_len = match td.geometry() {
        Geometry::Contiguous(g) => g.row_len,
        _ => td.shape()[1],
    };
    rows.check(n)?;
    let want = rows
        .count()
        .checked_mul(row_len)
        .ok_or(Fail::bare(ninfer_status::SizeOverflow))?;
    expect_len(ninfer_status::BufferLength, want, out.len())?;
    // Nothing to decode (no rows selected, or empty rows). Checked before the scratch row is
    // allocated: its size comes from the descriptor, and a shape such as [0, 2^40] is valid.
    // Past this point row_len <= out.len(), so the scratch is bounded by the caller's buffer.
    if want == 0 {
        return Ok(());
    }
    let mut scratch = vec![0f32; row_len];
    for (i, o) in out.chunks_exact_mut(row_len).enumerate() {
        let r = rows.get(i);
        if let Err(e) = td.gather_f32(p, &[r], &mut scratch) {
            // Unreachable after the checks above; never leave a partial result.
            out.fill(T::from_f32(0.0));
            return Err(e.into());
        }
        for (d, &x) in o.iter_mut().zip(&scratch) {
            *d = T::from_f32(x);
        }
    }
    Ok(())
}

/// Which rows a decode export reads, as the C caller passed them.
#[derive(Clone, Copy)]
enum Select {
    All,
    Range(u64, u64),
    List(*const u64, usize),
}

/// Shared body of the six decode/gather exports.
///
/// # Safety
///
/// Contract of the decode exports.
unsafe fn decode_export<T: DecodeOut>(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    sel: Select,
    out: *mut T,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of the calling export; overlaps checked before the output slice.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let p = payload_in(&td, payload, payload_len)?;
            disjoint(payload, payload_len, out, out_len)?;
            let sel = match sel {
                Select::List(ptr, len) => {
                    disjoint(ptr, len, out, out_len)?;
                    Rows::List(slice_in(ptr, len)?)
                }
                Select::Range(r0, count) => Rows::Range(r0, count),
                Select::All => {
                    // Whole tensor: every row, or the single element of a rank-0 tensor.
                    let o = slice_out(out, out_len)?;
                    if td.format() == Format::I32 {
                        return Err(ninfer_status::NotDefinedForFormat.into());
                    }
                    if td.rank() == 0 {
                        expect_len(ninfer_status::BufferLength, 1, o.len())?;
                        let mut x = [0f32];
                        td.decode_f32(p, &mut x)?;
                        o[0] = T::from_f32(x[0]);
                        return Ok(());
                    }
                    return decode_rows(&td, p, Rows::Range(0, td.shape()[0] as u64), o);
                }
            };
            let o = slice_out(out, out_len)?;
            decode_rows(&td, p, sel, o)
        })
    }
}

/// Decode the whole tensor to binary32 (row-major, `numel` values) through the spec's
/// reconstruction oracles: BF16 expands exactly, FP32 is copied bit for bit, grouped
/// `scale * code`, NVFP4 `e2m1 * e4m3fn / d_w`, FP8 `e4m3fn * bf16` (each one binary32
/// rounding at most). Values are not validated (run `ninfer_validate_values` on untrusted data).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_DESCRIPTOR`, `PAYLOAD_LENGTH`,
/// `NOT_DEFINED_FOR_FORMAT` (I32), `BUFFER_LENGTH`, `OVERLAPPING_BUFFERS`. Output only on
/// success.
///
/// # Safety
///
/// `desc` readable; `payload` readable for `payload_len` bytes; `out` writable for `out_len`
/// floats, not overlapping the inputs; `loc` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_decode_f32(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    out: *mut f32,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: forwarded contract.
    unsafe { decode_export(desc, payload, payload_len, Select::All, out, out_len, loc) }
}

/// `ninfer_decode_f32`, then each value rounded to BF16 with round-to-nearest-even (NaN stays
/// NaN, quieted; a finite value may round to infinity).
///
/// # Safety
///
/// As `ninfer_decode_f32`, with `uint16_t` output words.
#[no_mangle]
pub unsafe extern "C" fn ninfer_decode_bf16(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    out: *mut u16,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: forwarded contract.
    unsafe { decode_export(desc, payload, payload_len, Select::All, out, out_len, loc) }
}

/// Decode rows `row0 .. row0 + row_count` (first dimension) to binary32: `row_count * row_len`
/// values. A range reaching past the last row fails with `ROW_OUT_OF_RANGE` (location: `row`,
/// the first missing row, and `index`, its position in the range). Rank-0 tensors have no rows
/// (`BAD_RANK`). Other errors as `ninfer_decode_f32`.
///
/// # Safety
///
/// As `ninfer_decode_f32`.
#[no_mangle]
pub unsafe extern "C" fn ninfer_decode_rows_f32(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    row0: u64,
    row_count: u64,
    out: *mut f32,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: forwarded contract.
    unsafe {
        decode_export(
            desc,
            payload,
            payload_len,
            Select::Range(row0, row_count),
            out,
            out_len,
            loc,
        )
    }
}

/// `ninfer_decode_rows_f32` with BF16 output (RNE of the exact binary32 value).
///
/// # Safety
///
/// As `ninfer_decode_f32`, with `uint16_t` output words.
#[no_mangle]
pub unsafe extern "C" fn ninfer_decode_rows_bf16(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    row0: u64,
    row_count: u64,
    out: *mut u16,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: forwarded contract.
    unsafe {
        decode_export(
            desc,
            payload,
            payload_len,
            Select::Range(row0, row_count),
            out,
            out_len,
            loc,
        )
    }
}

/// Decode the rows listed in `rows[0..rows_len]` (an embedding lookup; repeats allowed) to
/// binary32: `rows_len * row_len` values. The first index `>= rows` fails with
/// `ROW_OUT_OF_RANGE` (location: `index` its position, `row` its value). Other errors as
/// `ninfer_decode_f32`.
///
/// # Safety
///
/// As `ninfer_decode_f32`; `rows` readable for `rows_len` `uint64_t` (NULL allowed when 0).
#[no_mangle]
pub unsafe extern "C" fn ninfer_gather_rows_f32(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    rows: *const u64,
    rows_len: usize,
    out: *mut f32,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: forwarded contract.
    unsafe {
        decode_export(
            desc,
            payload,
            payload_len,
            Select::List(rows, rows_len),
            out,
            out_len,
            loc,
        )
    }
}

/// `ninfer_gather_rows_f32` with BF16 output (RNE of the exact binary32 value).
///
/// # Safety
///
/// As `ninfer_gather_rows_f32`, with `uint16_t` output words.
#[no_mangle]
pub unsafe extern "C" fn ninfer_gather_rows_bf16(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    rows: *const u64,
    rows_len: usize,
    out: *mut u16,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: forwarded contract.
    unsafe {
        decode_export(
            desc,
            payload,
            payload_len,
            Select::List(rows, rows_len),
            out,
            out_len,
            loc,
        )
    }
}

/// Re-pack the rows listed in `rows[0..rows_len]` into a new payload of the same layout whose
/// descriptor is `ninfer_desc_with_rows(desc, rows_len)`; `out_len` must be its `payload_len`.
/// Row-split and row-scale rows are copied; NVFP4 scales are re-swizzled for the new row count
/// and the divisor copied; contiguous rows are copied.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_DESCRIPTOR`, `PAYLOAD_LENGTH` (input or
/// `out_len`), `ROW_OUT_OF_RANGE`, `ZERO_DIM` (no rows for a matrix layout), `BAD_RANK` (rank
/// 0), `OVERLAPPING_BUFFERS`. `out` is untouched on failure.
///
/// # Safety
///
/// `desc` readable; `payload` readable; `rows` readable for `rows_len`; `out` writable for
/// `out_len` bytes, overlapping no input; `loc` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_gather_pack(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    rows: *const u64,
    rows_len: usize,
    out: *mut u8,
    out_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function; overlaps checked before the output slice.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let p = payload_in(&td, payload, payload_len)?;
            let list = slice_in(rows, rows_len)?;
            disjoint(payload, payload_len, out, out_len)?;
            disjoint(rows, rows_len, out, out_len)?;
            let o = slice_out(out, out_len)?;
            if td.rank() == 0 {
                return Err(ninfer_status::BadRank.into());
            }
            Rows::List(list).check(td.shape()[0])?;
            let target = td.with_rows(list.len())?;
            expect_len(ninfer_status::PayloadLength, target.payload_len(), o.len())?;
            let idx: Vec<usize> = list.iter().map(|&r| r as usize).collect();
            Ok(td.gather_pack(p, &idx, o)?)
        })
    }
}
