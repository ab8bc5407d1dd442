//! `row-scale-v1`: the FP8_E4M3FN_ROW_BF16S layout (layouts.md). Code plane: N rows of K E4M3FN
//! bytes. Scale plane at `align(N * K, 128)`: N little-endian BF16 words. No padding inside a
//! plane; only the gap between the planes must be zero.

use super::{
    add, align_up, check_range, check_rows, decode_all_rows, expect_buf, expect_payload, gather_rows, mul,
    zeros, LayoutError, PLANE_ALIGN,
};
use crate::error::ValueError;
use crate::scheme::fp8_row::{reconstruct, validate_by};

/// Physical extents of a `[n, k]` FP8 row-scaled payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowScaleGeom {
    /// Logical rows N.
    pub n: usize,
    /// Logical K.
    pub k: usize,
    /// Byte offset of the scale plane: `align(N * K, 128)`.
    pub scale_offset: usize,
    /// Payload length: `scale_offset + 2 * N`.
    pub len: usize,
}

impl RowScaleGeom {
    /// Geometry of a positive `[n, k]` matrix; every size checked for overflow.
    pub const fn new(n: usize, k: usize) -> Result<RowScaleGeom, LayoutError> {
        if n == 0 || k == 0 {
            return Err(LayoutError::ZeroDim);
        }
        let scale_offset = tryc!(align_up(tryc!(mul(n, k)), PLANE_ALIGN));
        let len = tryc!(add(scale_offset, tryc!(mul(n, 2))));
        Ok(RowScaleGeom {
            n,
            k,
            scale_offset,
            len,
        })
    }

    /// Borrow a payload of exactly [`RowScaleGeom::len`] bytes as a tensor.
    pub fn tensor<'a>(&self, payload: &'a [u8]) -> Result<Fp8RowTensor<'a>, LayoutError> {
        expect_payload(payload.len(), self.len)?;
        Ok(Fp8RowTensor {
            n: self.n,
            k: self.k,
            codes: &payload[..self.n * self.k],
            scales: &payload[self.scale_offset..],
        })
    }

    /// Pack `N * K` E4M3FN code words and `N` BF16 row scales into `out` (exactly
    /// [`RowScaleGeom::len`] bytes), zeroing the gap between the planes.
    pub fn pack(&self, codes: &[u8], scales: &[u16], out: &mut [u8]) -> Result<(), LayoutError> {
        expect_buf(codes.len(), self.n * self.k)?;
        expect_buf(scales.len(), self.n)?;
        expect_payload(out.len(), self.len)?;
        out.fill(0);
        out[..codes.len()].copy_from_slice(codes);
        for (i, s) in scales.iter().enumerate() {
            let at = self.scale_offset + 2 * i;
            out[at..at + 2].copy_from_slice(&s.to_le_bytes());
        }
        Ok(())
    }

    /// The layout validator: exact length and a zero gap between the planes.
    pub fn validate_layout(&self, payload: &[u8]) -> Result<(), LayoutError> {
        expect_payload(payload.len(), self.len)?;
        zeros(payload, self.n * self.k, self.scale_offset)
    }
}

/// A borrowed FP8 row-scaled tensor: a whole payload or a view of consecutive rows.
#[derive(Clone, Copy, Debug)]
pub struct Fp8RowTensor<'a> {
    n: usize,
    k: usize,
    codes: &'a [u8],
    scales: &'a [u8],
}

impl<'a> Fp8RowTensor<'a> {
    /// Rows of this tensor or view.
    pub const fn rows(&self) -> usize {
        self.n
    }

    /// Logical K.
    pub const fn k(&self) -> usize {
        self.k
    }

    /// The code bytes of these rows (`rows * K`).
    pub const fn code_plane(&self) -> &'a [u8] {
        self.codes
    }

    /// The BF16 scale bytes of these rows (`2 * rows`).
    pub const fn scale_plane(&self) -> &'a [u8] {
        self.scales
    }

    /// Rows `r0..r1`: code bytes `[r0 * K, r1 * K)`, scale bytes `[2 * r0, 2 * r1)`.
    pub fn view(&self, r0: usize, r1: usize) -> Result<Fp8RowTensor<'a>, LayoutError> {
        check_range(r0, r1, self.n)?;
        Ok(Fp8RowTensor {
            n: r1 - r0,
            k: self.k,
            codes: &self.codes[r0 * self.k..r1 * self.k],
            scales: &self.scales[2 * r0..2 * r1],
        })
    }

    /// E4M3FN code of (row, k).
    pub fn code(&self, row: usize, k: usize) -> u8 {
        self.codes[row * self.k + k]
    }

    /// BF16 scale word of `row`.
    pub fn scale(&self, row: usize) -> u16 {
        u16::from_le_bytes([self.scales[2 * row], self.scales[2 * row + 1]])
    }

    /// Unpack `rows * K` code words and `rows` scale words.
    pub fn unpack(&self, codes: &mut [u8], scales: &mut [u16]) -> Result<(), LayoutError> {
        expect_buf(codes.len(), self.n * self.k)?;
        expect_buf(scales.len(), self.n)?;
        codes.copy_from_slice(self.codes);
        for (row, s) in scales.iter_mut().enumerate() {
            *s = self.scale(row);
        }
        Ok(())
    }

    /// Decode one row to f32 (`out.len() == K`) through the section 3.4 oracle.
    pub fn decode_row_f32(&self, row: usize, out: &mut [f32]) -> Result<(), LayoutError> {
        check_rows(&[row], self.n)?;
        expect_buf(out.len(), self.k)?;
        let s = self.scale(row);
        for (o, &c) in out.iter_mut().zip(&self.codes[row * self.k..(row + 1) * self.k]) {
            *o = reconstruct(c, s);
        }
        Ok(())
    }

    /// Decode every row (`out.len() == rows * K`).
    pub fn decode_f32(&self, out: &mut [f32]) -> Result<(), LayoutError> {
        decode_all_rows(self.n, self.k, out, |r, o| self.decode_row_f32(r, o))
    }

    /// Decode the listed rows to f32 (`out.len() == rows.len() * K`).
    pub fn gather_f32(&self, rows: &[usize], out: &mut [f32]) -> Result<(), LayoutError> {
        gather_rows(self.n, self.k, rows, out, |r, o| self.decode_row_f32(r, o))
    }

    /// Copy the listed rows into a new payload of geometry `target` (`target.n == rows.len()`).
    pub fn gather_pack(
        &self,
        rows: &[usize],
        target: &RowScaleGeom,
        out: &mut [u8],
    ) -> Result<(), LayoutError> {
        check_rows(rows, self.n)?;
        if target.k != self.k || target.n != rows.len() {
            return Err(LayoutError::BufferLength {
                expected: target.n,
                actual: rows.len(),
            });
        }
        expect_payload(out.len(), target.len)?;
        out.fill(0);
        let k = self.k;
        for (i, &r) in rows.iter().enumerate() {
            out[i * k..(i + 1) * k].copy_from_slice(&self.codes[r * k..(r + 1) * k]);
            let at = target.scale_offset + 2 * i;
            out[at..at + 2].copy_from_slice(&self.scales[2 * r..2 * r + 2]);
        }
        Ok(())
    }

    /// The value validator (section 3.4): finite codes, valid BF16 row scales, and only
    /// signed-zero codes in a +0 row.
    pub fn validate_values(&self) -> Result<(), ValueError> {
        validate_by(self.n, self.k, |r, k| self.code(r, k), |r| self.scale(r))
    }
}
