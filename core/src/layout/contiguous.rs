//! `contiguous-le-v1`: the direct-word layout (layouts.md). One plane at offset 0 holding the
//! logical words row-major (last index fastest), each little-endian, `width` bytes (BF16 2,
//! FP32 4, I32 4), stored untouched: NaN payloads, signed zeros and every I32 word survive bit
//! for bit. Rank 0..=8; a rank-0 tensor has one element; a zero dimension gives an empty payload.
//! Rows, views and gathers index the first dimension.

use super::{check_range, check_rows, expect_buf, expect_payload, mul, LayoutError};
use crate::registry::Format;
use crate::word::bf16::bf16_to_f32_exact;

/// Physical extents of a contiguous payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ContiguousGeom {
    /// The direct format.
    pub format: Format,
    /// Bytes per word.
    pub width: usize,
    /// Number of logical words.
    pub numel: usize,
    /// Size of the first dimension (1 for rank 0).
    pub rows: usize,
    /// Words per row: product of the remaining dimensions.
    pub row_len: usize,
    /// Rank of the shape.
    pub rank: usize,
    /// Payload length: `numel * width`.
    pub len: usize,
}

/// Direct logical words handed to or taken from a contiguous payload.
#[derive(Debug)]
pub enum WordsMut<'a> {
    /// BF16 words.
    U16(&'a mut [u16]),
    /// FP32 or I32 words (raw bits).
    U32(&'a mut [u32]),
}

/// Direct logical words to pack.
#[derive(Clone, Copy, Debug)]
pub enum Words<'a> {
    /// BF16 words.
    U16(&'a [u16]),
    /// FP32 or I32 words (raw bits).
    U32(&'a [u32]),
}

impl ContiguousGeom {
    /// Geometry of a direct tensor of `shape` (rank <= 8, any dimension may be 0).
    pub fn new(format: Format, shape: &[usize]) -> Result<ContiguousGeom, LayoutError> {
        let width = match format {
            Format::Bf16 => 2,
            Format::Fp32 | Format::I32 => 4,
            _ => return Err(LayoutError::UnsupportedPair),
        };
        if shape.len() > super::MAX_RANK {
            return Err(LayoutError::BadRank);
        }
        let mut row_len = 1usize;
        for &d in shape.iter().skip(1) {
            row_len = mul(row_len, d)?;
        }
        let rows = shape.first().copied().unwrap_or(1);
        let numel = mul(rows, row_len)?;
        let len = mul(numel, width)?;
        Ok(ContiguousGeom {
            format,
            width,
            numel,
            rows,
            row_len,
            rank: shape.len(),
            len,
        })
    }

    fn check_words(&self, n: usize, is_u16: bool) -> Result<(), LayoutError> {
        if is_u16 != (self.width == 2) {
            return Err(LayoutError::UnsupportedPair);
        }
        expect_buf(n, self.numel)
    }

    /// Pack `numel` words little-endian into `out` (exactly [`ContiguousGeom::len`] bytes). BF16
    /// takes `Words::U16`, FP32 and I32 take `Words::U32`.
    pub fn pack(&self, words: Words<'_>, out: &mut [u8]) -> Result<(), LayoutError> {
        expect_payload(out.len(), self.len)?;
        match words {
            Words::U16(w) => {
                self.check_words(w.len(), true)?;
                for (o, v) in out.chunks_exact_mut(2).zip(w) {
                    o.copy_from_slice(&v.to_le_bytes());
                }
            }
            Words::U32(w) => {
                self.check_words(w.len(), false)?;
                for (o, v) in out.chunks_exact_mut(4).zip(w) {
                    o.copy_from_slice(&v.to_le_bytes());
                }
            }
        }
        Ok(())
    }

    /// Unpack every word bit for bit.
    pub fn unpack(&self, payload: &[u8], words: WordsMut<'_>) -> Result<(), LayoutError> {
        expect_payload(payload.len(), self.len)?;
        match words {
            WordsMut::U16(w) => {
                self.check_words(w.len(), true)?;
                for (v, b) in w.iter_mut().zip(payload.chunks_exact(2)) {
                    *v = u16::from_le_bytes([b[0], b[1]]);
                }
            }
            WordsMut::U32(w) => {
                self.check_words(w.len(), false)?;
                for (v, b) in w.iter_mut().zip(payload.chunks_exact(4)) {
                    *v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
            }
        }
        Ok(())
    }

    /// The layout validator: the length is exact (direct words have no padding).
    pub fn validate_layout(&self, payload: &[u8]) -> Result<(), LayoutError> {
        expect_payload(payload.len(), self.len)
    }

    /// The bytes of rows `r0..r1` of the first dimension, borrowed (a view of a sub-tensor).
    pub fn view<'a>(&self, payload: &'a [u8], r0: usize, r1: usize) -> Result<&'a [u8], LayoutError> {
        expect_payload(payload.len(), self.len)?;
        if self.rank == 0 {
            return Err(LayoutError::BadRank);
        }
        check_range(r0, r1, self.rows)?;
        let rb = self.row_len * self.width;
        Ok(&payload[r0 * rb..r1 * rb])
    }

    fn word_f32(&self, b: &[u8]) -> f32 {
        match self.width {
            2 => bf16_to_f32_exact(u16::from_le_bytes([b[0], b[1]])),
            _ => f32::from_bits(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        }
    }

    /// Decode to f32: BF16 expands exactly, FP32 is copied bit for bit. I32 has no f32 meaning
    /// and is refused with [`LayoutError::UnsupportedPair`].
    pub fn decode_f32(&self, payload: &[u8], out: &mut [f32]) -> Result<(), LayoutError> {
        expect_payload(payload.len(), self.len)?;
        if self.format == Format::I32 {
            return Err(LayoutError::UnsupportedPair);
        }
        expect_buf(out.len(), self.numel)?;
        for (o, b) in out.iter_mut().zip(payload.chunks_exact(self.width)) {
            *o = self.word_f32(b);
        }
        Ok(())
    }

    /// Decode the listed rows of the first dimension to f32 (an embedding lookup).
    pub fn gather_f32(&self, payload: &[u8], rows: &[usize], out: &mut [f32]) -> Result<(), LayoutError> {
        expect_payload(payload.len(), self.len)?;
        if self.rank == 0 {
            return Err(LayoutError::BadRank);
        }
        if self.format == Format::I32 {
            return Err(LayoutError::UnsupportedPair);
        }
        check_rows(rows, self.rows)?;
        expect_buf(out.len(), mul(rows.len(), self.row_len)?)?;
        let rb = self.row_len * self.width;
        for (i, &r) in rows.iter().enumerate() {
            let src = &payload[r * rb..(r + 1) * rb];
            for (o, b) in out[i * self.row_len..(i + 1) * self.row_len]
                .iter_mut()
                .zip(src.chunks_exact(self.width))
            {
                *o = self.word_f32(b);
            }
        }
        Ok(())
    }

    /// Copy the listed rows of the first dimension into a new payload (`out.len()` must be
    /// `rows.len() * row_len * width`).
    pub fn gather_pack(&self, payload: &[u8], rows: &[usize], out: &mut [u8]) -> Result<(), LayoutError> {
        expect_payload(payload.len(), self.len)?;
        if self.rank == 0 {
            return Err(LayoutError::BadRank);
        }
        check_rows(rows, self.rows)?;
        let rb = self.row_len * self.width;
        expect_payload(out.len(), mul(rows.len(), rb)?)?;
        for (o, &r) in out.chunks_exact_mut(rb.max(1)).zip(rows) {
            o.copy_from_slice(&payload[r * rb..(r + 1) * rb]);
        }
        Ok(())
    }
}
