//! The closed registries over the C ABI: formats and layouts by exact name and by id, their
//! names and properties, and the support matrix (numeric-formats sections 1, 3.2, 13;
//! layouts.md).

use crate::boundary::{guard, slice_in, slice_out, Out};
use crate::status::{ninfer_error_location, ninfer_status, Fail};
use core::ffi::c_char;
use ninfer_core::registry::{check_pair, Category, Format, Layout, ScaleWord};

/// Format id of `BF16` (ids are stable and never reused; 0 is never an id).
pub const NINFER_FORMAT_BF16: u32 = 1;
/// Format id of `FP32`.
pub const NINFER_FORMAT_FP32: u32 = 2;
/// Format id of `I32`.
pub const NINFER_FORMAT_I32: u32 = 3;
/// Format id of `Q4G64_F16S`.
pub const NINFER_FORMAT_Q4G64_F16S: u32 = 4;
/// Format id of `Q5G64_F16S`.
pub const NINFER_FORMAT_Q5G64_F16S: u32 = 5;
/// Format id of `Q6G64_F16S`.
pub const NINFER_FORMAT_Q6G64_F16S: u32 = 6;
/// Format id of `W8G32_F16S`.
pub const NINFER_FORMAT_W8G32_F16S: u32 = 7;
/// Format id of `NVFP4`.
pub const NINFER_FORMAT_NVFP4: u32 = 8;
/// Format id of `FP8_E4M3FN_ROW_BF16S`.
pub const NINFER_FORMAT_FP8_E4M3FN_ROW_BF16S: u32 = 9;
/// Number of formats; the ids are exactly 1..=NINFER_FORMAT_COUNT.
pub const NINFER_FORMAT_COUNT: u32 = 9;

/// Layout id of `contiguous-le-v1`.
pub const NINFER_LAYOUT_CONTIGUOUS_LE_V1: u32 = 1;
/// Layout id of `row-split-k128-v1`.
pub const NINFER_LAYOUT_ROW_SPLIT_K128_V1: u32 = 2;
/// Layout id of `blockscale-k16-m128x4-v1`.
pub const NINFER_LAYOUT_BLOCKSCALE_K16_M128X4_V1: u32 = 3;
/// Layout id of `row-scale-v1`.
pub const NINFER_LAYOUT_ROW_SCALE_V1: u32 = 4;
/// Number of layouts; the ids are exactly 1..=NINFER_LAYOUT_COUNT.
pub const NINFER_LAYOUT_COUNT: u32 = 4;

/// `ninfer_format_props::category`: direct floating point (BF16, FP32).
pub const NINFER_CATEGORY_DIRECT_FLOAT: u32 = 1;
/// Direct signed integer (I32).
pub const NINFER_CATEGORY_DIRECT_INT: u32 = 2;
/// Grouped signed-integer quantized weights (Q4/Q5/Q6/W8).
pub const NINFER_CATEGORY_GROUPED_SIGNED_INT: u32 = 3;
/// Block-scaled floating point (NVFP4).
pub const NINFER_CATEGORY_BLOCK_SCALED_FLOAT: u32 = 4;
/// Row-scaled floating point (FP8_E4M3FN_ROW_BF16S).
pub const NINFER_CATEGORY_ROW_SCALED_FLOAT: u32 = 5;

/// `ninfer_format_props::scale_word`: no scale (direct formats).
pub const NINFER_SCALE_NONE: u32 = 0;
/// IEEE binary16 multiplier per group (`F16S`).
pub const NINFER_SCALE_F16: u32 = 1;
/// E4M3FN block scale per 16 K-values (NVFP4).
pub const NINFER_SCALE_E4M3FN: u32 = 2;
/// BF16 multiplier per row (FP8 row-scaled).
pub const NINFER_SCALE_BF16: u32 = 3;

/// Properties of one format (numeric-formats sections 1, 5, 6.3).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ninfer_format_props {
    /// The format id.
    pub id: u32,
    /// `NINFER_CATEGORY_*`.
    pub category: u32,
    /// Bits of one logical word (direct) or one code (quantized).
    pub code_bits: u32,
    /// Logical K values per scale: 64, 32 (W8), 16 (NVFP4); 0 when none (direct, FP8 rows).
    pub group_size: u32,
    /// `NINFER_SCALE_*`.
    pub scale_word: u32,
    /// The one layout id this format is stored in.
    pub layout: u32,
    /// 1 for grouped formats: `qmin`, `qmax`, `reference_qmax` are set.
    pub has_code_interval: u32,
    /// Smallest legal code (-8, -16, -32, -127), else 0.
    pub qmin: i32,
    /// Largest legal code (7, 15, 31, 127), else 0.
    pub qmax: i32,
    /// The canonical encoder's scale denominator (equal to qmax), else 0.
    pub reference_qmax: i32,
    /// 1 when `bits_per_weight_num / bits_per_weight_den` is set (all but FP8 rows, whose cost
    /// 8 + 16/K depends on K).
    pub has_bits_per_weight: u32,
    /// Full-group logical bits per weight, numerator (e.g. 17 for Q4: 17/4 = 4.25).
    pub bits_per_weight_num: u32,
    /// Denominator (never 0 when set).
    pub bits_per_weight_den: u32,
}

fn format_id(id: u32) -> Result<Format, Fail> {
    Ok(Format::from_id(id)?)
}

fn layout_id(id: u32) -> Result<Layout, Fail> {
    Ok(Layout::from_id(id)?)
}

/// Name bytes `(name, name_len)`: NULL with length 0 is the empty name (never registered).
///
/// # Safety
///
/// `name` is NULL or points to `name_len` readable bytes.
unsafe fn name_bytes<'a>(name: *const c_char, name_len: usize) -> Result<&'a [u8], Fail> {
    // SAFETY: forwarded contract of this function.
    unsafe { slice_in(name.cast::<u8>(), name_len) }
}

/// Resolve a format by exact, case-sensitive comparison of `name_len` bytes with the nine
/// canonical names (no trimming, no case folding, no NUL needed or allowed inside).
///
/// Errors: `NULL_POINTER` (`name` NULL with `name_len > 0`, or `out_id` NULL),
/// `UNKNOWN_FORMAT_NAME`. `*out_id` is written only on success.
///
/// # Safety
///
/// `name` points to `name_len` readable bytes (or is NULL with length 0); `out_id` points to a
/// writable `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn ninfer_format_from_name(
    name: *const c_char,
    name_len: usize,
    out_id: *mut u32,
) -> ninfer_status {
    // SAFETY: the pointers satisfy the contract of this function; `guard` accepts NULL `loc`.
    unsafe {
        guard(std::ptr::null_mut(), || {
            let out = Out::new(out_id)?;
            let bytes = name_bytes(name, name_len)?;
            let s = std::str::from_utf8(bytes).map_err(|_| Fail::bare(ninfer_status::UnknownFormatName))?;
            let f = Format::from_name(s)?;
            out.write(f.id());
            Ok(())
        })
    }
}

/// Resolve a layout by exact, case-sensitive comparison with the four canonical names.
///
/// Errors: `NULL_POINTER`, `UNKNOWN_LAYOUT_NAME`. `*out_id` is written only on success.
///
/// # Safety
///
/// As `ninfer_format_from_name`.
#[no_mangle]
pub unsafe extern "C" fn ninfer_layout_from_name(
    name: *const c_char,
    name_len: usize,
    out_id: *mut u32,
) -> ninfer_status {
    // SAFETY: the pointers satisfy the contract of this function.
    unsafe {
        guard(std::ptr::null_mut(), || {
            let out = Out::new(out_id)?;
            let bytes = name_bytes(name, name_len)?;
            let s = std::str::from_utf8(bytes).map_err(|_| Fail::bare(ninfer_status::UnknownLayoutName))?;
            let l = Layout::from_name(s)?;
            out.write(l.id());
            Ok(())
        })
    }
}

/// The canonical name of format `id`: `*out_name` receives a static NUL-terminated string and
/// `*out_len` its length without the NUL. Both outputs are required.
///
/// Errors: `NULL_POINTER`, `UNKNOWN_FORMAT_ID`.
///
/// # Safety
///
/// `out_name` and `out_len` point to writable objects.
#[no_mangle]
pub unsafe extern "C" fn ninfer_format_name(
    id: u32,
    out_name: *mut *const c_char,
    out_len: *mut usize,
) -> ninfer_status {
    // SAFETY: the pointers satisfy the contract of this function.
    unsafe {
        guard(std::ptr::null_mut(), || {
            let (on, ol) = (Out::new(out_name)?, Out::new(out_len)?);
            let f = format_id(id)?;
            let (p, n) = static_name(f.name());
            on.write(p);
            ol.write(n);
            Ok(())
        })
    }
}

/// The canonical name of layout `id` (see `ninfer_format_name`).
///
/// Errors: `NULL_POINTER`, `UNKNOWN_LAYOUT_ID`.
///
/// # Safety
///
/// `out_name` and `out_len` point to writable objects.
#[no_mangle]
pub unsafe extern "C" fn ninfer_layout_name(
    id: u32,
    out_name: *mut *const c_char,
    out_len: *mut usize,
) -> ninfer_status {
    // SAFETY: the pointers satisfy the contract of this function.
    unsafe {
        guard(std::ptr::null_mut(), || {
            let (on, ol) = (Out::new(out_name)?, Out::new(out_len)?);
            let l = layout_id(id)?;
            let (p, n) = static_name(l.name());
            on.write(p);
            ol.write(n);
            Ok(())
        })
    }
}

/// NUL-terminated static copies of the registry names (the core's `&str`s carry no NUL).
const NAMES_Z: [&str; 13] = [
    "BF16\0",
    "FP32\0",
    "I32\0",
    "Q4G64_F16S\0",
    "Q5G64_F16S\0",
    "Q6G64_F16S\0",
    "W8G32_F16S\0",
    "NVFP4\0",
    "FP8_E4M3FN_ROW_BF16S\0",
    "contiguous-le-v1\0",
    "row-split-k128-v1\0",
    "blockscale-k16-m128x4-v1\0",
    "row-scale-v1\0",
];

fn static_name(name: &str) -> (*const c_char, usize) {
    let z = NAMES_Z
        .iter()
        .find(|z| &z[..z.len() - 1] == name)
        .copied()
        // The test `nul_terminated_names_match_the_core_registry` proves every core name is here.
        .unwrap_or("\0");
    (z.as_ptr().cast(), z.len() - 1)
}

/// Properties of format `id`.
///
/// Errors: `NULL_POINTER`, `UNKNOWN_FORMAT_ID`. `*out` is written only on success.
///
/// # Safety
///
/// `out` points to a writable `ninfer_format_props`.
#[no_mangle]
pub unsafe extern "C" fn ninfer_format_properties(id: u32, out: *mut ninfer_format_props) -> ninfer_status {
    // SAFETY: the pointer satisfies the contract of this function.
    unsafe {
        guard(std::ptr::null_mut(), || {
            let o = Out::new(out)?;
            let f = format_id(id)?;
            o.write(props(f));
            Ok(())
        })
    }
}

pub(crate) fn props(f: Format) -> ninfer_format_props {
    let (has_iv, qmin, qmax) = match f.code_interval() {
        Some((a, b)) => (1, a, b),
        None => (0, 0, 0),
    };
    let (has_bpw, num, den) = match f.full_group_bits_per_weight() {
        Some(r) => (1, r.num, r.den),
        None => (0, 0, 0),
    };
    ninfer_format_props {
        id: f.id(),
        category: match f.category() {
            Category::DirectFloat => NINFER_CATEGORY_DIRECT_FLOAT,
            Category::DirectInt => NINFER_CATEGORY_DIRECT_INT,
            Category::GroupedSignedInt => NINFER_CATEGORY_GROUPED_SIGNED_INT,
            Category::BlockScaledFloat => NINFER_CATEGORY_BLOCK_SCALED_FLOAT,
            Category::RowScaledFloat => NINFER_CATEGORY_ROW_SCALED_FLOAT,
        },
        code_bits: f.code_bits(),
        group_size: f.group_size().unwrap_or(0),
        scale_word: match f.scale_word() {
            None => NINFER_SCALE_NONE,
            Some(ScaleWord::F16) => NINFER_SCALE_F16,
            Some(ScaleWord::E4m3fn) => NINFER_SCALE_E4M3FN,
            Some(ScaleWord::Bf16) => NINFER_SCALE_BF16,
        },
        layout: f.layout().id(),
        has_code_interval: has_iv,
        qmin,
        qmax,
        reference_qmax: f.reference_qmax().unwrap_or(0),
        has_bits_per_weight: has_bpw,
        bits_per_weight_num: num,
        bits_per_weight_den: den,
    }
}

/// The support matrix: `NINFER_STATUS_OK` when (format, layout) is one of the registered pairs,
/// `UNSUPPORTED_PAIR` when both ids exist but the pair is not registered, `UNKNOWN_FORMAT_ID` /
/// `UNKNOWN_LAYOUT_ID` otherwise. There is no fallback pairing.
#[no_mangle]
pub extern "C" fn ninfer_check_pair(format: u32, layout: u32) -> ninfer_status {
    // SAFETY: `guard` is called with a NULL location, which it never dereferences.
    unsafe {
        guard(std::ptr::null_mut(), || {
            let (f, l) = (format_id(format)?, layout_id(layout)?);
            Ok(check_pair(f, l)?)
        })
    }
}

/// The formats stored by layout `layout` (its row of the support matrix), in id order, written
/// to `out_ids[0..*out_count]`. `out_ids_len` must be at least the row's count
/// (`NINFER_LAYOUT_MAX_FORMATS` always suffices); a shorter buffer fails with `BUFFER_LENGTH`
/// (the location gives the required count in `expected`).
///
/// Errors: `NULL_POINTER`, `UNKNOWN_LAYOUT_ID`, `BUFFER_LENGTH`. Outputs only on success.
///
/// # Safety
///
/// `out_ids` points to `out_ids_len` writable `uint32_t`; `out_count` to a writable `size_t`;
/// `loc` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_layout_formats(
    layout: u32,
    out_ids: *mut u32,
    out_ids_len: usize,
    out_count: *mut usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: the pointers satisfy the contract of this function.
    unsafe {
        guard(loc, || {
            let oc = Out::new(out_count)?;
            if out_ids.is_null() {
                return Err(ninfer_status::NullPointer.into());
            }
            let l = layout_id(layout)?;
            let fs = l.formats();
            if out_ids_len < fs.len() {
                return Err(Fail::lengths(ninfer_status::BufferLength, fs.len(), out_ids_len));
            }
            let ids = slice_out(out_ids, out_ids_len)?;
            for (o, f) in ids.iter_mut().zip(fs) {
                *o = f.id();
            }
            oc.write(fs.len());
            Ok(())
        })
    }
}

/// The most formats one layout stores (row-split-k128-v1: four).
pub const NINFER_LAYOUT_MAX_FORMATS: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_terminated_names_match_the_core_registry_and_ids_match_the_constants() {
        for f in Format::ALL {
            let (p, n) = static_name(f.name());
            assert_eq!(n, f.name().len());
            // SAFETY: `static_name` returns a pointer to a static string of `n + 1` bytes.
            let s = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n + 1) };
            assert_eq!(&s[..n], f.name().as_bytes());
            assert_eq!(s[n], 0);
        }
        for l in Layout::ALL {
            assert_eq!(static_name(l.name()).1, l.name().len());
        }
        let consts = [
            (NINFER_FORMAT_BF16, Format::Bf16),
            (NINFER_FORMAT_FP32, Format::Fp32),
            (NINFER_FORMAT_I32, Format::I32),
            (NINFER_FORMAT_Q4G64_F16S, Format::Q4G64F16S),
            (NINFER_FORMAT_Q5G64_F16S, Format::Q5G64F16S),
            (NINFER_FORMAT_Q6G64_F16S, Format::Q6G64F16S),
            (NINFER_FORMAT_W8G32_F16S, Format::W8G32F16S),
            (NINFER_FORMAT_NVFP4, Format::Nvfp4),
            (NINFER_FORMAT_FP8_E4M3FN_ROW_BF16S, Format::Fp8E4m3fnRowBf16s),
        ];
        for (c, f) in consts {
            assert_eq!(c, f.id());
        }
        assert_eq!(NINFER_FORMAT_COUNT as usize, Format::ALL.len());
        let lconsts = [
            (NINFER_LAYOUT_CONTIGUOUS_LE_V1, Layout::ContiguousLeV1),
            (NINFER_LAYOUT_ROW_SPLIT_K128_V1, Layout::RowSplitK128V1),
            (
                NINFER_LAYOUT_BLOCKSCALE_K16_M128X4_V1,
                Layout::BlockscaleK16M128x4V1,
            ),
            (NINFER_LAYOUT_ROW_SCALE_V1, Layout::RowScaleV1),
        ];
        for (c, l) in lconsts {
            assert_eq!(c, l.id());
        }
        assert_eq!(NINFER_LAYOUT_COUNT as usize, Layout::ALL.len());
        let max = Layout::ALL.iter().map(|l| l.formats().len()).max().unwrap();
        assert_eq!(NINFER_LAYOUT_MAX_FORMATS, max);
    }
}
