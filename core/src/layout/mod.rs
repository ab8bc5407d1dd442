//! The four registered storage layouts (layouts.md), allocation-free: tensor descriptors and
//! their geometry, pack and unpack, decode to f32, borrowed row views, row gathers, and the two
//! validators (layout: exact length and zero padding; values: the numeric spec's rules).
//!
//! Callers own every buffer; geometry tells them the exact sizes. Readers compute extents from
//! the descriptor and never guess them from a payload's length (layouts.md common rules,
//! numeric-formats section 9): a payload whose length differs from [`TensorDesc::payload_len`]
//! is rejected.

/// `?` for `const fn`s: unwrap an `Ok` or return the `Err`.
macro_rules! tryc {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Err(e),
        }
    };
}

pub mod blockscale;
pub mod contiguous;
pub mod row_scale;
pub mod row_split;

use crate::error::RegistryError;
use crate::registry::{check_pair, Format, Layout};
use core::fmt;

/// Every plane starts at a multiple of this many bytes from the payload start (layouts.md).
pub const PLANE_ALIGN: usize = 128;

/// Largest tensor rank a descriptor holds (contiguous-le-v1 allows 0..=8).
pub const MAX_RANK: usize = 8;

/// Why a descriptor, payload or gather request was refused by a layout codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LayoutError {
    /// The (format, layout) pair is not in the support matrix.
    UnsupportedPair,
    /// The rank is not allowed by the layout (rank 2 for the matrix layouts, <= 8 otherwise).
    BadRank,
    /// A dimension is zero where the layout requires N >= 1 and K >= 1.
    ZeroDim,
    /// NVFP4 needs K >= 16 and K % 16 == 0.
    KNotMultipleOf16,
    /// A size or offset overflows `usize`.
    SizeOverflow,
    /// The payload length is not the size the descriptor computes.
    PayloadLength {
        /// Expected length in bytes.
        expected: usize,
        /// Actual length in bytes.
        actual: usize,
    },
    /// A caller buffer (logical words, output) has the wrong length.
    BufferLength {
        /// Expected number of elements.
        expected: usize,
        /// Actual number of elements.
        actual: usize,
    },
    /// A padding byte (physical padding or the gap between planes) is not zero.
    NonZeroPadding {
        /// Byte offset in the payload.
        offset: usize,
    },
    /// A logical word does not fit the layout's field (a Q4 code outside -8..=7, an E2M1 word
    /// above 0xF): packing it would lose bits.
    WordDoesNotFit {
        /// Index of the word in the logical input.
        index: usize,
    },
    /// A requested row is outside the tensor.
    RowOutOfRange {
        /// Position in the index list (0 for a range).
        position: usize,
        /// The offending row.
        row: usize,
    },
    /// The operation needs a full payload and was given a row view (NVFP4 views are not
    /// standalone payloads).
    NotAPayload,
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::UnsupportedPair => f.write_str("format/layout pair is not in the support matrix"),
            LayoutError::BadRank => f.write_str("rank not allowed by the layout"),
            LayoutError::ZeroDim => f.write_str("zero dimension where the layout needs N >= 1 and K >= 1"),
            LayoutError::KNotMultipleOf16 => f.write_str("NVFP4 needs K >= 16 and K % 16 == 0"),
            LayoutError::SizeOverflow => f.write_str("size overflows usize"),
            LayoutError::PayloadLength { expected, actual } => {
                write!(f, "payload is {actual} bytes, descriptor requires {expected}")
            }
            LayoutError::BufferLength { expected, actual } => {
                write!(f, "buffer holds {actual} elements, {expected} required")
            }
            LayoutError::NonZeroPadding { offset } => write!(f, "non-zero padding byte at offset {offset}"),
            LayoutError::WordDoesNotFit { index } => write!(f, "logical word {index} does not fit its field"),
            LayoutError::RowOutOfRange { position, row } => {
                write!(f, "row {row} (index position {position}) is out of range")
            }
            LayoutError::NotAPayload => f.write_str("operation needs a full payload, not a row view"),
        }
    }
}

impl core::error::Error for LayoutError {}

impl core::error::Error for ValidateError {}

impl From<RegistryError> for LayoutError {
    fn from(_: RegistryError) -> Self {
        LayoutError::UnsupportedPair
    }
}

/// `align(x, a)`: x rounded up to a multiple of a, checked.
pub const fn align_up(x: usize, a: usize) -> Result<usize, LayoutError> {
    match x.checked_add(a - 1) {
        Some(v) => Ok(v / a * a),
        None => Err(LayoutError::SizeOverflow),
    }
}

pub(crate) const fn mul(a: usize, b: usize) -> Result<usize, LayoutError> {
    match a.checked_mul(b) {
        Some(v) => Ok(v),
        None => Err(LayoutError::SizeOverflow),
    }
}

pub(crate) const fn add(a: usize, b: usize) -> Result<usize, LayoutError> {
    match a.checked_add(b) {
        Some(v) => Ok(v),
        None => Err(LayoutError::SizeOverflow),
    }
}

pub(crate) const fn expect_buf(actual: usize, expected: usize) -> Result<(), LayoutError> {
    if actual == expected {
        Ok(())
    } else {
        Err(LayoutError::BufferLength { expected, actual })
    }
}

pub(crate) const fn expect_payload(actual: usize, expected: usize) -> Result<(), LayoutError> {
    if actual == expected {
        Ok(())
    } else {
        Err(LayoutError::PayloadLength { expected, actual })
    }
}

/// Check that `bytes[from..to]` are zero; the error names the payload offset.
pub(crate) fn zeros(bytes: &[u8], from: usize, to: usize) -> Result<(), LayoutError> {
    match bytes[from..to].iter().position(|&b| b != 0) {
        Some(i) => Err(LayoutError::NonZeroPadding { offset: from + i }),
        None => Ok(()),
    }
}

/// One plane of a payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Plane {
    /// What the plane holds: "words", "codes", "scales" or "divisor".
    pub name: &'static str,
    /// Byte offset from the payload start (a multiple of [`PLANE_ALIGN`]).
    pub offset: usize,
    /// Length in bytes.
    pub len: usize,
}

/// The geometry of a payload: per-layout physical extents (see each layout module).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Geometry {
    /// contiguous-le-v1.
    Contiguous(contiguous::ContiguousGeom),
    /// row-split-k128-v1.
    RowSplit(row_split::RowSplitGeom),
    /// blockscale-k16-m128x4-v1.
    Blockscale(blockscale::BlockscaleGeom),
    /// row-scale-v1.
    RowScale(row_scale::RowScaleGeom),
}

impl Geometry {
    /// Total payload length in bytes.
    pub const fn payload_len(&self) -> usize {
        match self {
            Geometry::Contiguous(g) => g.len,
            Geometry::RowSplit(g) => g.len,
            Geometry::Blockscale(g) => g.len,
            Geometry::RowScale(g) => g.len,
        }
    }

    /// The planes in payload order; unused entries of the array are `None`.
    pub const fn planes(&self) -> [Option<Plane>; 3] {
        match self {
            Geometry::Contiguous(g) => [
                Some(Plane {
                    name: "words",
                    offset: 0,
                    len: g.len,
                }),
                None,
                None,
            ],
            Geometry::RowSplit(g) => [
                Some(Plane {
                    name: "codes",
                    offset: 0,
                    len: g.n * g.row_code_bytes,
                }),
                Some(Plane {
                    name: "scales",
                    offset: g.scale_offset,
                    len: 2 * g.n * g.gp,
                }),
                None,
            ],
            Geometry::Blockscale(g) => [
                Some(Plane {
                    name: "codes",
                    offset: 0,
                    len: g.n * g.kp / 2,
                }),
                Some(Plane {
                    name: "scales",
                    offset: g.scale_offset,
                    len: g.np * g.sb,
                }),
                Some(Plane {
                    name: "divisor",
                    offset: g.divisor_offset,
                    len: 4,
                }),
            ],
            Geometry::RowScale(g) => [
                Some(Plane {
                    name: "codes",
                    offset: 0,
                    len: g.n * g.k,
                }),
                Some(Plane {
                    name: "scales",
                    offset: g.scale_offset,
                    len: 2 * g.n,
                }),
                None,
            ],
        }
    }
}

/// A tensor descriptor: format, layout and logical shape (rank <= 8), checked against the support
/// matrix and the layout's shape rules, with its geometry computed once with checked arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorDesc {
    format: Format,
    layout: Layout,
    rank: u8,
    dims: [usize; MAX_RANK],
    geometry: Geometry,
}

impl TensorDesc {
    /// Build a descriptor. Fails on an unsupported (format, layout) pair, a rank the layout does
    /// not allow, zero N or K for the matrix layouts, NVFP4 K not a multiple of 16 (or below 16),
    /// and any size that overflows `usize`. Never panics, whatever the dimensions.
    pub fn new(format: Format, layout: Layout, shape: &[usize]) -> Result<TensorDesc, LayoutError> {
        check_pair(format, layout)?;
        if shape.len() > MAX_RANK {
            return Err(LayoutError::BadRank);
        }
        let mut dims = [0usize; MAX_RANK];
        dims[..shape.len()].copy_from_slice(shape);
        let matrix = || -> Result<(usize, usize), LayoutError> {
            match shape {
                [n, k] if *n >= 1 && *k >= 1 => Ok((*n, *k)),
                [_, _] => Err(LayoutError::ZeroDim),
                _ => Err(LayoutError::BadRank),
            }
        };
        let geometry = match layout {
            Layout::ContiguousLeV1 => Geometry::Contiguous(contiguous::ContiguousGeom::new(format, shape)?),
            Layout::RowSplitK128V1 => {
                let (n, k) = matrix()?;
                let g = format.grouped().ok_or(LayoutError::UnsupportedPair)?;
                Geometry::RowSplit(row_split::RowSplitGeom::new(g, n, k)?)
            }
            Layout::BlockscaleK16M128x4V1 => {
                let (n, k) = matrix()?;
                Geometry::Blockscale(blockscale::BlockscaleGeom::new(n, k)?)
            }
            Layout::RowScaleV1 => {
                let (n, k) = matrix()?;
                Geometry::RowScale(row_scale::RowScaleGeom::new(n, k)?)
            }
        };
        Ok(TensorDesc {
            format,
            layout,
            rank: shape.len() as u8,
            dims,
            geometry,
        })
    }

    /// Build a descriptor for `format` in its one registered layout.
    pub fn for_format(format: Format, shape: &[usize]) -> Result<TensorDesc, LayoutError> {
        TensorDesc::new(format, format.layout(), shape)
    }

    /// The numeric format.
    pub const fn format(&self) -> Format {
        self.format
    }

    /// The storage layout.
    pub const fn layout(&self) -> Layout {
        self.layout
    }

    /// The logical shape.
    pub fn shape(&self) -> &[usize] {
        &self.dims[..self.rank as usize]
    }

    /// The rank.
    pub const fn rank(&self) -> usize {
        self.rank as usize
    }

    /// Number of logical elements (1 for rank 0). Cannot overflow: the geometry was checked.
    pub fn numel(&self) -> usize {
        self.shape().iter().product()
    }

    /// The geometry (physical extents, plane offsets and lengths).
    pub const fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The exact payload length in bytes.
    pub const fn payload_len(&self) -> usize {
        self.geometry.payload_len()
    }

    /// The layout validator: exact length and zero bytes in every padding position and between
    /// planes. Reports the first offending byte offset.
    pub fn validate_layout(&self, payload: &[u8]) -> Result<(), LayoutError> {
        match &self.geometry {
            Geometry::Contiguous(g) => g.validate_layout(payload),
            Geometry::RowSplit(g) => g.validate_layout(payload),
            Geometry::Blockscale(g) => g.validate_layout(payload),
            Geometry::RowScale(g) => g.validate_layout(payload),
        }
    }

    /// The value validator: every value rule of numeric-formats.txt for this format, on the
    /// words the layout stores. Direct formats have no value rules (every word is valid).
    /// Checks the payload length first.
    pub fn validate_values(&self, payload: &[u8]) -> Result<(), ValidateError> {
        match &self.geometry {
            Geometry::Contiguous(g) => {
                expect_payload(payload.len(), g.len)?;
                Ok(())
            }
            Geometry::RowSplit(g) => g.tensor(payload)?.validate_values().map_err(ValidateError::Value),
            Geometry::Blockscale(g) => g.tensor(payload)?.validate_values().map_err(ValidateError::Value),
            Geometry::RowScale(g) => g.tensor(payload)?.validate_values().map_err(ValidateError::Value),
        }
    }

    /// Both validators, layout first.
    pub fn validate(&self, payload: &[u8]) -> Result<(), ValidateError> {
        self.validate_layout(payload)?;
        self.validate_values(payload)
    }

    /// Decode the whole tensor to f32 through the core oracles (BF16 and FP32 expand exactly; I32
    /// has no f32 meaning and is refused with [`LayoutError::UnsupportedPair`]).
    pub fn decode_f32(&self, payload: &[u8], out: &mut [f32]) -> Result<(), LayoutError> {
        match &self.geometry {
            Geometry::Contiguous(g) => g.decode_f32(payload, out),
            Geometry::RowSplit(g) => g.tensor(payload)?.decode_f32(out),
            Geometry::Blockscale(g) => g.tensor(payload)?.decode_f32(out),
            Geometry::RowScale(g) => g.tensor(payload)?.decode_f32(out),
        }
    }

    /// Decode the rows listed in `rows` (an embedding lookup) to f32, `rows.len() * row_len`
    /// values. Rows index the first dimension; out-of-range indices are errors.
    pub fn gather_f32(&self, payload: &[u8], rows: &[usize], out: &mut [f32]) -> Result<(), LayoutError> {
        match &self.geometry {
            Geometry::Contiguous(g) => g.gather_f32(payload, rows, out),
            Geometry::RowSplit(g) => g.tensor(payload)?.gather_f32(rows, out),
            Geometry::Blockscale(g) => g.tensor(payload)?.gather_f32(rows, out),
            Geometry::RowScale(g) => g.tensor(payload)?.gather_f32(rows, out),
        }
    }

    /// The descriptor of a tensor made of `rows` rows of this one (a gather's or a view's shape).
    pub fn with_rows(&self, rows: usize) -> Result<TensorDesc, LayoutError> {
        if self.rank == 0 {
            return Err(LayoutError::BadRank);
        }
        let mut shape = self.dims;
        shape[0] = rows;
        TensorDesc::new(self.format, self.layout, &shape[..self.rank as usize])
    }

    /// Re-pack the rows listed in `rows` into a new payload of the same layout, whose descriptor
    /// is [`TensorDesc::with_rows`]`(rows.len())` and whose length `out` must have. NVFP4 scales
    /// are re-swizzled for the new row count; the divisor is copied.
    pub fn gather_pack(&self, payload: &[u8], rows: &[usize], out: &mut [u8]) -> Result<(), LayoutError> {
        let target = self.with_rows(rows.len())?;
        expect_payload(out.len(), target.payload_len())?;
        match (&self.geometry, target.geometry) {
            (Geometry::Contiguous(g), _) => g.gather_pack(payload, rows, out),
            (Geometry::RowSplit(g), Geometry::RowSplit(t)) => g.tensor(payload)?.gather_pack(rows, &t, out),
            (Geometry::Blockscale(g), Geometry::Blockscale(t)) => {
                g.tensor(payload)?.gather_pack(rows, &t, out)
            }
            (Geometry::RowScale(g), Geometry::RowScale(t)) => g.tensor(payload)?.gather_pack(rows, &t, out),
            _ => Err(LayoutError::UnsupportedPair),
        }
    }
}

/// A payload failed the layout validator or the value validator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValidateError {
    /// Structural: length or padding.
    Layout(LayoutError),
    /// A value rule of the numeric spec.
    Value(crate::error::ValueError),
}

impl From<LayoutError> for ValidateError {
    fn from(e: LayoutError) -> Self {
        ValidateError::Layout(e)
    }
}

impl fmt::Display for ValidateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValidateError::Layout(e) => write!(f, "layout: {e}"),
            ValidateError::Value(e) => write!(f, "value: {e}"),
        }
    }
}

/// Whole-tensor decode written once for the three matrix tensor types: every row through
/// `decode_row` (`out.len() == n * k`).
pub(crate) fn decode_all_rows(
    n: usize,
    k: usize,
    out: &mut [f32],
    mut decode_row: impl FnMut(usize, &mut [f32]) -> Result<(), LayoutError>,
) -> Result<(), LayoutError> {
    expect_buf(out.len(), mul(n, k)?)?;
    for (row, o) in out.chunks_exact_mut(k).enumerate() {
        decode_row(row, o)?;
    }
    Ok(())
}

/// Row gather written once for the three matrix tensor types: each listed row through
/// `decode_row` (`out.len() == rows.len() * k`); out-of-range rows are errors.
pub(crate) fn gather_rows(
    n: usize,
    k: usize,
    rows: &[usize],
    out: &mut [f32],
    mut decode_row: impl FnMut(usize, &mut [f32]) -> Result<(), LayoutError>,
) -> Result<(), LayoutError> {
    check_rows(rows, n)?;
    expect_buf(out.len(), mul(rows.len(), k)?)?;
    for (&r, o) in rows.iter().zip(out.chunks_exact_mut(k)) {
        decode_row(r, o)?;
    }
    Ok(())
}

/// Check a gather's indices against `n` rows.
pub(crate) fn check_rows(rows: &[usize], n: usize) -> Result<(), LayoutError> {
    match rows.iter().position(|&r| r >= n) {
        Some(position) => Err(LayoutError::RowOutOfRange {
            position,
            row: rows[position],
        }),
        None => Ok(()),
    }
}

/// Check a view's row range `r0..r1` against `n` rows.
pub(crate) fn check_range(r0: usize, r1: usize, n: usize) -> Result<(), LayoutError> {
    if r0 > r1 || r1 > n {
        Err(LayoutError::RowOutOfRange {
            position: 0,
            row: if r1 > n { r1 } else { r0 },
        })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
