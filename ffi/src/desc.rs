//! Tensor descriptors as a plain C struct: identity (format, layout, shape) plus every derived
//! physical extent, plane offset and length (layouts.md). Functions that take a descriptor
//! rebuild it from its identity and refuse one whose derived members differ
//! (`INVALID_DESCRIPTOR`), so a C caller can read the struct freely but cannot smuggle in
//! inconsistent extents.

use crate::boundary::{guard, ref_in, slice_in, Out};
use crate::status::{ninfer_error_location, ninfer_status, Fail};
use ninfer_core::layout::{Geometry, TensorDesc};
use ninfer_core::registry::{Format, Layout};

/// Largest rank of a descriptor (contiguous-le-v1 allows 0..=8; the matrix layouts need 2).
pub const NINFER_MAX_RANK: usize = 8;

/// Most planes in one payload (NVFP4: codes, scales, divisor).
pub const NINFER_MAX_PLANES: usize = 3;

/// Every plane offset is a multiple of this many bytes from the payload start (layouts.md).
pub const NINFER_PLANE_ALIGN: u64 = 128;

/// `ninfer_plane::kind`: unused entry.
pub const NINFER_PLANE_NONE: u32 = 0;
/// Direct logical words (contiguous-le-v1).
pub const NINFER_PLANE_WORDS: u32 = 1;
/// Codes of a quantized format.
pub const NINFER_PLANE_CODES: u32 = 2;
/// Scales of a quantized format.
pub const NINFER_PLANE_SCALES: u32 = 3;
/// The NVFP4 FP32 divisor d_w.
pub const NINFER_PLANE_DIVISOR: u32 = 4;

/// One plane of a payload: byte offset from the payload start and length in bytes.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ninfer_plane {
    /// `NINFER_PLANE_*`.
    pub kind: u32,
    /// Always 0.
    pub reserved: u32,
    /// Byte offset (a multiple of `NINFER_PLANE_ALIGN`).
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
}

/// A tensor descriptor: produced by `ninfer_desc_new`, read freely by C, passed by pointer to
/// every payload function. Only `format`, `layout`, `rank` and `dims` are identity; every other
/// member is derived and checked on use. Contains no pointers and no implicit padding; a
/// byte copy is a valid descriptor.
///
/// Extents, per layout (layouts.md):
///
/// | member | contiguous-le-v1 | row-split-k128-v1 | blockscale-k16-m128x4-v1 | row-scale-v1 |
/// |---|---|---|---|---|
/// | `rows` | `dims[0]` (1 at rank 0) | N | N | N |
/// | `row_len` | product of `dims[1..]` | K | K | K |
/// | `k_physical` | row_len | align(K, 128) | align(K, 64) | K |
/// | `row_code_bytes` | row_len * width | Kp / 128 * 16 * b | Kp / 2 | K |
/// | `groups` | 0 | ceil(K / G) | K / 16 | 1 |
/// | `physical_groups` | 0 | Kp / G | Kp / 16 (Sb) | 1 |
/// | `scale_rows` | 0 | N | align(N, 128) (Np) | N |
/// | `k_tiles` | 0 | 0 | Sb / 4 (nKT) | 0 |
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ninfer_desc {
    /// Format id (`NINFER_FORMAT_*`).
    pub format: u32,
    /// Layout id (`NINFER_LAYOUT_*`).
    pub layout: u32,
    /// Rank, 0..=NINFER_MAX_RANK.
    pub rank: u32,
    /// Number of used entries of `planes`.
    pub plane_count: u32,
    /// Logical shape; entries at and beyond `rank` are 0.
    pub dims: [u64; NINFER_MAX_RANK],
    /// Number of logical elements (1 at rank 0).
    pub numel: u64,
    /// Exact payload length in bytes.
    pub payload_len: u64,
    /// Logical rows (first dimension).
    pub rows: u64,
    /// Logical elements per row.
    pub row_len: u64,
    /// Physical K.
    pub k_physical: u64,
    /// Bytes of the code (or word) plane per row.
    pub row_code_bytes: u64,
    /// Logical scales per row.
    pub groups: u64,
    /// Physical scale columns per row.
    pub physical_groups: u64,
    /// Physical scale rows.
    pub scale_rows: u64,
    /// NVFP4 128x4 K-tiles per row tile.
    pub k_tiles: u64,
    /// The planes in payload order.
    pub planes: [ninfer_plane; NINFER_MAX_PLANES],
}

pub(crate) fn to_c(d: &TensorDesc) -> ninfer_desc {
    let mut dims = [0u64; NINFER_MAX_RANK];
    for (o, &v) in dims.iter_mut().zip(d.shape()) {
        *o = v as u64;
    }
    let mut c = ninfer_desc {
        format: d.format().id(),
        layout: d.layout().id(),
        rank: d.rank() as u32,
        dims,
        numel: d.numel() as u64,
        payload_len: d.payload_len() as u64,
        ..Default::default()
    };
    let u = |x: usize| x as u64;
    match d.geometry() {
        Geometry::Contiguous(g) => {
            c.rows = u(g.rows);
            c.row_len = u(g.row_len);
            c.k_physical = u(g.row_len);
            c.row_code_bytes = u(g.row_len * g.width);
        }
        Geometry::RowSplit(g) => {
            (c.rows, c.row_len, c.k_physical) = (u(g.n), u(g.k), u(g.kp));
            c.row_code_bytes = u(g.row_code_bytes);
            (c.groups, c.physical_groups, c.scale_rows) = (u(g.groups), u(g.gp), u(g.n));
        }
        Geometry::Blockscale(g) => {
            (c.rows, c.row_len, c.k_physical) = (u(g.n), u(g.k), u(g.kp));
            c.row_code_bytes = u(g.kp / 2);
            (c.groups, c.physical_groups, c.scale_rows) = (u(g.blocks()), u(g.sb), u(g.np));
            c.k_tiles = u(g.nkt);
        }
        Geometry::RowScale(g) => {
            (c.rows, c.row_len, c.k_physical) = (u(g.n), u(g.k), u(g.k));
            c.row_code_bytes = u(g.k);
            (c.groups, c.physical_groups, c.scale_rows) = (1, 1, u(g.n));
        }
    }
    let planes = d.geometry().planes();
    for (o, p) in c.planes.iter_mut().zip(planes.iter().flatten()) {
        *o = ninfer_plane {
            kind: match p.name {
                "words" => NINFER_PLANE_WORDS,
                "codes" => NINFER_PLANE_CODES,
                "scales" => NINFER_PLANE_SCALES,
                _ => NINFER_PLANE_DIVISOR,
            },
            reserved: 0,
            offset: p.offset as u64,
            len: p.len as u64,
        };
        c.plane_count += 1;
    }
    c
}

fn build(format: u32, layout: u32, shape: &[u64]) -> Result<TensorDesc, Fail> {
    let f = Format::from_id(format)?;
    let l = Layout::from_id(layout)?;
    if shape.len() > NINFER_MAX_RANK {
        return Err(ninfer_status::BadRank.into());
    }
    let mut dims = [0usize; NINFER_MAX_RANK];
    for (o, &v) in dims.iter_mut().zip(shape) {
        *o = usize::try_from(v).map_err(|_| Fail::bare(ninfer_status::SizeOverflow))?;
    }
    Ok(TensorDesc::new(f, l, &dims[..shape.len()])?)
}

/// Rebuild and check a C descriptor.
///
/// # Safety
///
/// `d` is NULL or points to a readable `ninfer_desc`.
pub(crate) unsafe fn desc_in(d: *const ninfer_desc) -> Result<TensorDesc, Fail> {
    // SAFETY: forwarded contract.
    let c = unsafe { ref_in(d) }?;
    let c = *c;
    let rank = c.rank as usize;
    if rank > NINFER_MAX_RANK {
        return Err(ninfer_status::InvalidDescriptor.into());
    }
    let td = build(c.format, c.layout, &c.dims[..rank])
        .map_err(|_| Fail::bare(ninfer_status::InvalidDescriptor))?;
    if to_c(&td) != c {
        return Err(ninfer_status::InvalidDescriptor.into());
    }
    Ok(td)
}

/// Build a descriptor for `format` stored in `layout` with logical shape `shape[0..rank]`
/// (`shape` may be NULL when `rank == 0`). Computes every extent with checked arithmetic.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `UNKNOWN_FORMAT_ID`, `UNKNOWN_LAYOUT_ID`,
/// `UNSUPPORTED_PAIR`, `BAD_RANK` (rank > 8, or not 2 for the matrix layouts), `ZERO_DIM`,
/// `K_NOT_MULTIPLE_OF_16`, `SIZE_OVERFLOW`. `*out` is written only on success.
///
/// # Safety
///
/// `shape` points to `rank` readable `uint64_t` (or is NULL with rank 0); `out` to a writable
/// `ninfer_desc`; `loc` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_desc_new(
    format: u32,
    layout: u32,
    shape: *const u64,
    rank: usize,
    out: *mut ninfer_desc,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: the pointers satisfy the contract of this function.
    unsafe {
        guard(loc, || {
            let o = Out::new(out)?;
            if rank > NINFER_MAX_RANK {
                // Refused before the shape is read: no slice longer than any valid shape.
                return Err(ninfer_status::BadRank.into());
            }
            let shape = slice_in(shape, rank)?;
            let td = build(format, layout, shape)?;
            o.write(to_c(&td));
            Ok(())
        })
    }
}

/// Check that `desc` is a descriptor `ninfer_desc_new` would produce (identity valid, every
/// derived member consistent). Returns `OK` or `INVALID_DESCRIPTOR` (`NULL_POINTER`,
/// `MISALIGNED` for bad pointers).
///
/// # Safety
///
/// `desc` is NULL or points to a readable `ninfer_desc`.
#[no_mangle]
pub unsafe extern "C" fn ninfer_desc_check(desc: *const ninfer_desc) -> ninfer_status {
    // SAFETY: the pointer satisfies the contract of this function.
    unsafe { guard(std::ptr::null_mut(), || desc_in(desc).map(|_| ())) }
}

/// The descriptor of a tensor made of `rows` rows of `desc` (same format, layout and trailing
/// dimensions): the shape of a row gather, for `ninfer_gather_pack`.
///
/// Errors: `NULL_POINTER`, `INVALID_DESCRIPTOR`, `BAD_RANK` (rank 0), `ZERO_DIM` (rows 0 for a
/// matrix layout), `SIZE_OVERFLOW`. `*out` is written only on success.
///
/// # Safety
///
/// `desc` points to a readable descriptor, `out` to a writable one; `loc` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_desc_with_rows(
    desc: *const ninfer_desc,
    rows: u64,
    out: *mut ninfer_desc,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: the pointers satisfy the contract of this function.
    unsafe {
        guard(loc, || {
            let o = Out::new(out)?;
            let td = desc_in(desc)?;
            let r = usize::try_from(rows).map_err(|_| Fail::bare(ninfer_status::SizeOverflow))?;
            let t = td.with_rows(r)?;
            o.write(to_c(&t));
            Ok(())
        })
    }
}
