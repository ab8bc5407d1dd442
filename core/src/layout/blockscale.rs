//! `blockscale-k16-m128x4-v1`: the NVFP4 layout (layouts.md).
//!
//! Code plane: N rows of `Kp / 2` bytes (`Kp = align(K, 64)`), the E2M1 word of even k in bits
//! 0..3 and of odd k in bits 4..7. Scale plane at `align(N * Kp / 2, 128)`: `Np * Sb` E4M3FN bytes
//! (`Np = align(N, 128)`, `Sb = Kp / 16`) in the 128x4 tile order of Blackwell block-scaled GEMMs
//! ([`scale_index`]). Divisor plane at `align(scale_offset + Np * Sb, 128)`: the FP32 word d_w.

use super::{
    add, align_up, check_range, check_rows, decode_all_rows, expect_buf, expect_payload, gather_rows, mul,
    zeros, LayoutError, PLANE_ALIGN,
};
use crate::error::ValueError;
use crate::scheme::nvfp4::{reconstruct, validate_by, BLOCK};

/// Index of the scale of (n, kb) inside the scale plane, for a tensor with `nkt = Sb / 4`
/// K-tiles (layouts.md):
///
/// `(n / 128) * nkt * 512 + (kb / 4) * 512 + (n % 32) * 16 + ((n % 128) / 32) * 4 + (kb % 4)`.
pub const fn scale_index(n: usize, kb: usize, nkt: usize) -> usize {
    (n / 128) * nkt * 512 + (kb / 4) * 512 + (n % 32) * 16 + ((n % 128) / 32) * 4 + (kb % 4)
}

/// Physical extents of a `[n, k]` NVFP4 payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockscaleGeom {
    /// Logical rows N.
    pub n: usize,
    /// Logical K (a multiple of 16).
    pub k: usize,
    /// Physical K: `align(K, 64)`.
    pub kp: usize,
    /// Scale columns: `Kp / 16`.
    pub sb: usize,
    /// Scale rows: `align(N, 128)`.
    pub np: usize,
    /// K-tiles: `Sb / 4`.
    pub nkt: usize,
    /// Byte offset of the scale plane: `align(N * Kp / 2, 128)`.
    pub scale_offset: usize,
    /// Byte offset of the divisor: `align(scale_offset + Np * Sb, 128)`.
    pub divisor_offset: usize,
    /// Payload length: `divisor_offset + 4`.
    pub len: usize,
}

impl BlockscaleGeom {
    /// Geometry of `[n, k]` with N >= 1, K >= 16, K % 16 == 0; every size checked for overflow.
    pub const fn new(n: usize, k: usize) -> Result<BlockscaleGeom, LayoutError> {
        if n == 0 || k == 0 {
            return Err(LayoutError::ZeroDim);
        }
        if k < BLOCK || !k.is_multiple_of(BLOCK) {
            return Err(LayoutError::KNotMultipleOf16);
        }
        let kp = tryc!(align_up(k, 64));
        let sb = kp / BLOCK;
        let np = tryc!(align_up(n, 128));
        let code_plane = tryc!(mul(n, kp / 2));
        tryc!(mul(n, kp)); // bounds the logical element count N * K
        let scale_offset = tryc!(align_up(code_plane, PLANE_ALIGN));
        let scale_end = tryc!(add(scale_offset, tryc!(mul(np, sb))));
        let divisor_offset = tryc!(align_up(scale_end, PLANE_ALIGN));
        let len = tryc!(add(divisor_offset, 4));
        Ok(BlockscaleGeom {
            n,
            k,
            kp,
            sb,
            np,
            nkt: sb / 4,
            scale_offset,
            divisor_offset,
            len,
        })
    }

    /// Logical scales per row, `K / 16`.
    pub const fn blocks(&self) -> usize {
        self.k / BLOCK
    }

    /// Borrow a payload of exactly [`BlockscaleGeom::len`] bytes as a tensor.
    pub fn tensor<'a>(&self, payload: &'a [u8]) -> Result<Nvfp4Tensor<'a>, LayoutError> {
        expect_payload(payload.len(), self.len)?;
        let d = self.divisor_offset;
        Ok(Nvfp4Tensor {
            n: self.n,
            k: self.k,
            row_bytes: self.kp / 2,
            nkt: self.nkt,
            row0: 0,
            codes: &payload[..self.n * self.kp / 2],
            scales: &payload[self.scale_offset..self.scale_offset + self.np * self.sb],
            divisor: u32::from_le_bytes([payload[d], payload[d + 1], payload[d + 2], payload[d + 3]]),
            full: true,
        })
    }

    /// Pack logical E2M1 words (`N * K`, one per byte, each <= 0xF), E4M3FN scales
    /// (`N * K / 16`, row-major) and the divisor bits into `out` (exactly
    /// [`BlockscaleGeom::len`] bytes), swizzling the scales and zeroing all padding. On error
    /// `out` is zero-filled.
    pub fn pack(&self, codes: &[u8], scales: &[u8], divisor: u32, out: &mut [u8]) -> Result<(), LayoutError> {
        expect_buf(codes.len(), self.n * self.k)?;
        expect_buf(scales.len(), self.n * self.blocks())?;
        expect_payload(out.len(), self.len)?;
        out.fill(0);
        if let Some(index) = codes.iter().position(|&c| c > 0x0f) {
            return Err(LayoutError::WordDoesNotFit { index });
        }
        let rb = self.kp / 2;
        for (i, &c) in codes.iter().enumerate() {
            let (row, k) = (i / self.k, i % self.k);
            out[row * rb + k / 2] |= c << (4 * (k % 2));
        }
        let sb = self.blocks();
        for (i, &s) in scales.iter().enumerate() {
            out[self.scale_offset + scale_index(i / sb, i % sb, self.nkt)] = s;
        }
        out[self.divisor_offset..].copy_from_slice(&divisor.to_le_bytes());
        Ok(())
    }

    /// The layout validator: exact length, code 0x0 at k >= K, scale 0x00 at every padding entry
    /// (n >= N or kb >= K / 16), zero bytes between planes.
    pub fn validate_layout(&self, payload: &[u8]) -> Result<(), LayoutError> {
        expect_payload(payload.len(), self.len)?;
        let rb = self.kp / 2;
        if self.kp > self.k {
            for row in 0..self.n {
                // K is a multiple of 16, so padding starts on a byte boundary.
                zeros(payload, row * rb + self.k / 2, (row + 1) * rb)?;
            }
        }
        zeros(payload, self.n * rb, self.scale_offset)?;
        for n in 0..self.np {
            for kb in 0..self.sb {
                if n >= self.n || kb >= self.blocks() {
                    let at = self.scale_offset + scale_index(n, kb, self.nkt);
                    if payload[at] != 0 {
                        return Err(LayoutError::NonZeroPadding { offset: at });
                    }
                }
            }
        }
        zeros(
            payload,
            self.scale_offset + self.np * self.sb,
            self.divisor_offset,
        )
    }
}

/// A borrowed NVFP4 tensor: a whole payload, or a view of consecutive rows that reaches its
/// scales through the parent's tile order (`scale_index(row0 + n, kb, nkt)`).
#[derive(Clone, Copy, Debug)]
pub struct Nvfp4Tensor<'a> {
    n: usize,
    k: usize,
    row_bytes: usize,
    nkt: usize,
    row0: usize,
    codes: &'a [u8],
    scales: &'a [u8],
    divisor: u32,
    full: bool,
}

impl<'a> Nvfp4Tensor<'a> {
    /// Rows of this tensor or view.
    pub const fn rows(&self) -> usize {
        self.n
    }

    /// Logical K.
    pub const fn k(&self) -> usize {
        self.k
    }

    /// The divisor d_w as binary32 bits.
    pub const fn divisor_bits(&self) -> u32 {
        self.divisor
    }

    /// The code-plane bytes of these rows (`rows * Kp / 2`).
    pub const fn code_plane(&self) -> &'a [u8] {
        self.codes
    }

    /// The parent's whole swizzled scale plane (views share it).
    pub const fn scale_plane(&self) -> &'a [u8] {
        self.scales
    }

    /// First parent row of this view (0 for a whole payload).
    pub const fn first_row(&self) -> usize {
        self.row0
    }

    /// K-tiles of the parent's scale plane.
    pub const fn k_tiles(&self) -> usize {
        self.nkt
    }

    /// Rows `r0..r1` as a view: borrowed code rows, scales through the parent's tile order.
    pub fn view(&self, r0: usize, r1: usize) -> Result<Nvfp4Tensor<'a>, LayoutError> {
        check_range(r0, r1, self.n)?;
        Ok(Nvfp4Tensor {
            n: r1 - r0,
            row0: self.row0 + r0,
            codes: &self.codes[r0 * self.row_bytes..r1 * self.row_bytes],
            full: false,
            ..*self
        })
    }

    /// Whether this is a whole payload rather than a row view.
    pub const fn is_full(&self) -> bool {
        self.full
    }

    /// E2M1 word of (row, k).
    pub fn code(&self, row: usize, k: usize) -> u8 {
        (self.codes[row * self.row_bytes + k / 2] >> (4 * (k % 2))) & 0x0f
    }

    /// E4M3FN scale word of (row, kb).
    pub fn scale(&self, row: usize, kb: usize) -> u8 {
        self.scales[scale_index(self.row0 + row, kb, self.nkt)]
    }

    /// Unpack the logical words: `rows * K` E2M1 words and `rows * K / 16` scales (row-major).
    /// The divisor is [`Nvfp4Tensor::divisor_bits`].
    pub fn unpack(&self, codes: &mut [u8], scales: &mut [u8]) -> Result<(), LayoutError> {
        let sb = self.k / BLOCK;
        expect_buf(codes.len(), self.n * self.k)?;
        expect_buf(scales.len(), self.n * sb)?;
        for row in 0..self.n {
            for k in 0..self.k {
                codes[row * self.k + k] = self.code(row, k);
            }
            for kb in 0..sb {
                scales[row * sb + kb] = self.scale(row, kb);
            }
        }
        Ok(())
    }

    /// Decode one row to f32 (`out.len() == K`) through the section 3.3 oracle.
    pub fn decode_row_f32(&self, row: usize, out: &mut [f32]) -> Result<(), LayoutError> {
        check_rows(&[row], self.n)?;
        expect_buf(out.len(), self.k)?;
        for (k, o) in out.iter_mut().enumerate() {
            *o = reconstruct(self.code(row, k), self.scale(row, k / BLOCK), self.divisor);
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

    /// Re-pack the listed rows into a new payload of geometry `target` (`target.n == rows.len()`,
    /// same K): code rows copied, scales re-swizzled for the new `Np`, divisor copied.
    pub fn gather_pack(
        &self,
        rows: &[usize],
        target: &BlockscaleGeom,
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
        let rb = self.row_bytes;
        for (i, &r) in rows.iter().enumerate() {
            out[i * rb..(i + 1) * rb].copy_from_slice(&self.codes[r * rb..(r + 1) * rb]);
            for kb in 0..self.k / BLOCK {
                out[target.scale_offset + scale_index(i, kb, target.nkt)] = self.scale(r, kb);
            }
        }
        out[target.divisor_offset..].copy_from_slice(&self.divisor.to_le_bytes());
        Ok(())
    }

    /// The value validator (section 3.3): divisor finite and positive, block scales sign-zero
    /// finite, code words within 4 bits (always true for stored nibbles).
    pub fn validate_values(&self) -> Result<(), ValueError> {
        validate_by(
            self.n,
            self.k,
            |r, k| self.code(r, k),
            |r, kb| self.scale(r, kb),
            self.divisor,
        )
    }
}
