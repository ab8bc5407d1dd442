//! `row-split-k128-v1`: the grouped signed-integer layout (layouts.md).
//!
//! A row is `C = Kp / 128` chunks of 128 positions, `16 * b` bytes each (Q4 64, Q5 80, Q6 96,
//! W8 128). Q4/Q5/Q6 keep the low 4 bits of positions j and j + 64 in byte j (low and high
//! nibble); Q5 adds a 16-byte high plane (bit t of byte 64 + j is bit 4 of position 16t + j), Q6 a
//! 32-byte one (bits 2p, 2p+1 of byte 64 + j are bits 4, 5 of position 32p + j). W8 stores one i8
//! per position. The scale plane follows at `align(N * row_code_bytes, 128)`: N rows of
//! `Gp = Kp / G` binary16 words, little-endian. Positions k >= K hold code 0; groups wholly in
//! k >= K hold scale 0x0000.

use super::{
    add, align_up, check_range, check_rows, decode_all_rows, expect_buf, expect_payload, gather_rows, mul,
    zeros, LayoutError, PLANE_ALIGN,
};
use crate::encode::{encode_with, GroupFn, Source};
use crate::error::{EncodeError, EncodeErrorKind, ValueError};
use crate::registry::Grouped;
use crate::scheme::grouped::{code_from_word, reconstruct, validate_by, word_from_code};

/// Positions per chunk.
pub const CHUNK: usize = 128;

/// Bytes of one chunk: `16 * b`.
pub const fn chunk_bytes(g: Grouped) -> usize {
    16 * g.bits() as usize
}

/// The b-bit unsigned word of position `i` (0..128) of a chunk.
pub fn get_word(g: Grouped, chunk: &[u8], i: usize) -> u8 {
    if let Grouped::W8 = g {
        return chunk[i];
    }
    let lo = (chunk[i % 64] >> (4 * (i / 64))) & 0x0f;
    let hi = match g {
        Grouped::Q5 => (chunk[64 + i % 16] >> (i / 16)) & 1,
        Grouped::Q6 => (chunk[64 + i % 32] >> (2 * (i / 32))) & 3,
        _ => 0,
    };
    lo | (hi << 4)
}

/// OR the b-bit word `u` of position `i` into a chunk whose fields for `i` are still zero.
pub fn put_word(g: Grouped, chunk: &mut [u8], i: usize, u: u8) {
    if let Grouped::W8 = g {
        chunk[i] = u;
        return;
    }
    chunk[i % 64] |= (u & 0x0f) << (4 * (i / 64));
    match g {
        Grouped::Q5 => chunk[64 + i % 16] |= ((u >> 4) & 1) << (i / 16),
        Grouped::Q6 => chunk[64 + i % 32] |= ((u >> 4) & 3) << (2 * (i / 32)),
        _ => {}
    }
}

/// The payload byte offsets (within a chunk) that hold bits of position `i`: the low field and,
/// for Q5/Q6, the high-plane byte.
pub const fn word_bytes(g: Grouped, i: usize) -> (usize, Option<usize>) {
    match g {
        Grouped::W8 => (i, None),
        Grouped::Q4 => (i % 64, None),
        Grouped::Q5 => (i % 64, Some(64 + i % 16)),
        Grouped::Q6 => (i % 64, Some(64 + i % 32)),
    }
}

/// Physical extents of a `[n, k]` row-split payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowSplitGeom {
    /// The scheme.
    pub scheme: Grouped,
    /// Logical rows N.
    pub n: usize,
    /// Logical K.
    pub k: usize,
    /// Physical K: `align(K, 128)`.
    pub kp: usize,
    /// Code bytes per row: `Kp / 128 * 16 * b`.
    pub row_code_bytes: usize,
    /// Logical groups per row: `ceil(K / G)`.
    pub groups: usize,
    /// Physical groups (scale words) per row: `Kp / G`.
    pub gp: usize,
    /// Byte offset of the scale plane: `align(N * row_code_bytes, 128)`.
    pub scale_offset: usize,
    /// Payload length: `scale_offset + 2 * N * Gp`.
    pub len: usize,
}

impl RowSplitGeom {
    /// Geometry of a positive `[n, k]` matrix, with every size checked for overflow.
    pub const fn new(scheme: Grouped, n: usize, k: usize) -> Result<RowSplitGeom, LayoutError> {
        if n == 0 || k == 0 {
            return Err(LayoutError::ZeroDim);
        }
        let kp = tryc!(align_up(k, CHUNK));
        // N * Kp must fit too: it bounds the logical element count N * K.
        tryc!(mul(n, kp));
        let row_code_bytes = (kp / CHUNK) * chunk_bytes(scheme); // <= kp, cannot overflow
        let gp = kp / scheme.group_size();
        let scale_offset = tryc!(align_up(tryc!(mul(n, row_code_bytes)), PLANE_ALIGN));
        let len = tryc!(add(scale_offset, tryc!(mul(tryc!(mul(n, gp)), 2))));
        Ok(RowSplitGeom {
            scheme,
            n,
            k,
            kp,
            row_code_bytes,
            groups: k.div_ceil(scheme.group_size()),
            gp,
            scale_offset,
            len,
        })
    }

    /// Number of logical codes, `N * K`.
    pub const fn codes_len(&self) -> usize {
        self.n * self.k // <= N * Kp, checked in `new`
    }

    /// Number of logical scales, `N * ceil(K / G)`.
    pub const fn scales_len(&self) -> usize {
        self.n * self.groups
    }

    /// Borrow a payload of exactly [`RowSplitGeom::len`] bytes as a tensor.
    pub fn tensor<'a>(&self, payload: &'a [u8]) -> Result<RowSplitTensor<'a>, LayoutError> {
        expect_payload(payload.len(), self.len)?;
        Ok(RowSplitTensor {
            geom: *self,
            codes: &payload[..self.n * self.row_code_bytes],
            scales: &payload[self.scale_offset..],
        })
    }

    /// Pack logical codes (`N * K` signed codes) and scales (`N * ceil(K / G)` binary16 words)
    /// into `out` (exactly [`RowSplitGeom::len`] bytes), writing every padding byte as zero.
    /// A code that does not fit b bits is refused (value rules such as W8's -128 are the value
    /// validator's business, not the layout's). On error `out` is zero-filled.
    pub fn pack(&self, codes: &[i8], scales: &[u16], out: &mut [u8]) -> Result<(), LayoutError> {
        expect_buf(codes.len(), self.codes_len())?;
        expect_buf(scales.len(), self.scales_len())?;
        expect_payload(out.len(), self.len)?;
        out.fill(0);
        let g = self.scheme;
        let b = g.bits();
        for (i, &q) in codes.iter().enumerate() {
            let fits = (q as i32) >= -(1 << (b - 1)) && (q as i32) < (1 << (b - 1));
            if !fits {
                out.fill(0);
                return Err(LayoutError::WordDoesNotFit { index: i });
            }
            let (row, k) = (i / self.k, i % self.k);
            let c0 = row * self.row_code_bytes + (k / CHUNK) * chunk_bytes(g);
            put_word(
                g,
                &mut out[c0..c0 + chunk_bytes(g)],
                k % CHUNK,
                word_from_code(g, q),
            );
        }
        for row in 0..self.n {
            for grp in 0..self.groups {
                let at = self.scale_offset + 2 * (row * self.gp + grp);
                out[at..at + 2].copy_from_slice(&scales[row * self.groups + grp].to_le_bytes());
            }
        }
        Ok(())
    }

    /// The layout validator: exact length, code 0 at every position k >= K, scale 0x0000 for
    /// every group wholly in k >= K, and zero bytes between the planes.
    pub fn validate_layout(&self, payload: &[u8]) -> Result<(), LayoutError> {
        expect_payload(payload.len(), self.len)?;
        let g = self.scheme;
        let cb = chunk_bytes(g);
        if self.kp > self.k {
            let last = (self.kp / CHUNK - 1) * cb; // only the last chunk holds padding
            for row in 0..self.n {
                let c0 = row * self.row_code_bytes + last;
                let chunk = &payload[c0..c0 + cb];
                for i in self.k % CHUNK..CHUNK {
                    if get_word(g, chunk, i) != 0 {
                        let (lo, hi) = word_bytes(g, i);
                        let off = if get_word(g, chunk, i) & 0x0f != 0 || hi.is_none() {
                            lo
                        } else {
                            hi.unwrap_or(lo)
                        };
                        return Err(LayoutError::NonZeroPadding { offset: c0 + off });
                    }
                }
            }
        }
        zeros(payload, self.n * self.row_code_bytes, self.scale_offset)?;
        for row in 0..self.n {
            let s0 = self.scale_offset + 2 * (row * self.gp + self.groups);
            zeros(payload, s0, self.scale_offset + 2 * (row + 1) * self.gp)?;
        }
        Ok(())
    }

    /// The canonical encoder MAXABS_F16_RECIP_RNE_V1 writing straight into a payload: no logical
    /// code or scale buffer, one group at a time (`group_fn` is [`crate::encode::twin::encode_group`]
    /// or the oracle). `out` must be exactly [`RowSplitGeom::len`] bytes; padding is written as
    /// zeros. On error `out` is zero-filled and the error names row and group.
    pub fn encode_into(&self, src: Source<'_>, group_fn: GroupFn, out: &mut [u8]) -> Result<(), EncodeError> {
        if out.len() != self.len {
            return Err(EncodeError::whole(EncodeErrorKind::LengthMismatch));
        }
        out.fill(0);
        let g = self.scheme;
        let cb = chunk_bytes(g);
        let (rcb, so, gp) = (self.row_code_bytes, self.scale_offset, self.gp);
        let (codes_plane, scale_plane) = out.split_at_mut(so);
        let r = encode_with(g, src, self.n, self.k, group_fn, |row, grp, k0, scale, q| {
            let at = 2 * (row * gp + grp);
            scale_plane[at..at + 2].copy_from_slice(&scale.to_le_bytes());
            // A group never straddles a chunk: 128 is a multiple of G.
            let c0 = row * rcb + (k0 / CHUNK) * cb;
            let chunk = &mut codes_plane[c0..c0 + cb];
            for (j, &c) in q.iter().enumerate() {
                put_word(g, chunk, (k0 % CHUNK) + j, word_from_code(g, c));
            }
        });
        if r.is_err() {
            out.fill(0);
        }
        r
    }
}

/// A borrowed row-split tensor: a whole payload or a view of consecutive rows.
#[derive(Clone, Copy, Debug)]
pub struct RowSplitTensor<'a> {
    geom: RowSplitGeom,
    codes: &'a [u8],
    scales: &'a [u8],
}

impl<'a> RowSplitTensor<'a> {
    /// Rows of this tensor (the view's row count for a view).
    pub const fn rows(&self) -> usize {
        self.geom.n
    }

    /// Logical K.
    pub const fn k(&self) -> usize {
        self.geom.k
    }

    /// The scheme.
    pub const fn scheme(&self) -> Grouped {
        self.geom.scheme
    }

    /// The code-plane bytes of these rows (`rows * row_code_bytes`).
    pub const fn code_plane(&self) -> &'a [u8] {
        self.codes
    }

    /// The scale-plane bytes of these rows (`rows * Gp` little-endian binary16 words).
    pub const fn scale_plane(&self) -> &'a [u8] {
        self.scales
    }

    /// Rows `r0..r1` as a borrowed sub-tensor: the byte ranges `[r0, r1) * row_code_bytes` of the
    /// code plane and `[r0, r1) * Gp` words of the scale plane (layouts.md, Views).
    pub fn view(&self, r0: usize, r1: usize) -> Result<RowSplitTensor<'a>, LayoutError> {
        check_range(r0, r1, self.geom.n)?;
        let mut geom = self.geom;
        geom.n = r1 - r0;
        let (rcb, gp) = (self.geom.row_code_bytes, self.geom.gp);
        Ok(RowSplitTensor {
            geom,
            codes: &self.codes[r0 * rcb..r1 * rcb],
            scales: &self.scales[2 * r0 * gp..2 * r1 * gp],
        })
    }

    /// Signed code of (row, k), k < K.
    pub fn code(&self, row: usize, k: usize) -> i8 {
        let g = self.geom.scheme;
        let c0 = row * self.geom.row_code_bytes + (k / CHUNK) * chunk_bytes(g);
        code_from_word(g, get_word(g, &self.codes[c0..c0 + chunk_bytes(g)], k % CHUNK))
    }

    /// Binary16 scale word of (row, group).
    pub fn scale(&self, row: usize, group: usize) -> u16 {
        let at = 2 * (row * self.geom.gp + group);
        u16::from_le_bytes([self.scales[at], self.scales[at + 1]])
    }

    /// Unpack the logical words: `rows * K` codes and `rows * ceil(K / G)` scales.
    pub fn unpack(&self, codes: &mut [i8], scales: &mut [u16]) -> Result<(), LayoutError> {
        let (n, k, groups) = (self.geom.n, self.geom.k, self.geom.groups);
        expect_buf(codes.len(), n * k)?;
        expect_buf(scales.len(), n * groups)?;
        for row in 0..n {
            for kk in 0..k {
                codes[row * k + kk] = self.code(row, kk);
            }
            for grp in 0..groups {
                scales[row * groups + grp] = self.scale(row, grp);
            }
        }
        Ok(())
    }

    /// Decode one row to f32 through [`reconstruct`] (`out.len() == K`).
    pub fn decode_row_f32(&self, row: usize, out: &mut [f32]) -> Result<(), LayoutError> {
        check_rows(&[row], self.geom.n)?;
        expect_buf(out.len(), self.geom.k)?;
        let gs = self.geom.scheme.group_size();
        for (kk, o) in out.iter_mut().enumerate() {
            *o = reconstruct(self.scale(row, kk / gs), self.code(row, kk));
        }
        Ok(())
    }

    /// Decode every row to f32 (`out.len() == rows * K`).
    pub fn decode_f32(&self, out: &mut [f32]) -> Result<(), LayoutError> {
        decode_all_rows(self.geom.n, self.geom.k, out, |r, o| self.decode_row_f32(r, o))
    }

    /// Decode the listed rows to f32 (`out.len() == rows.len() * K`).
    pub fn gather_f32(&self, rows: &[usize], out: &mut [f32]) -> Result<(), LayoutError> {
        gather_rows(self.geom.n, self.geom.k, rows, out, |r, o| {
            self.decode_row_f32(r, o)
        })
    }

    /// Copy the listed rows' code and scale ranges into a new payload of geometry `target`
    /// (`target.n == rows.len()`, same scheme and K).
    pub fn gather_pack(
        &self,
        rows: &[usize],
        target: &RowSplitGeom,
        out: &mut [u8],
    ) -> Result<(), LayoutError> {
        check_rows(rows, self.geom.n)?;
        if target.scheme != self.geom.scheme || target.k != self.geom.k || target.n != rows.len() {
            return Err(LayoutError::BufferLength {
                expected: target.n,
                actual: rows.len(),
            });
        }
        expect_payload(out.len(), target.len)?;
        out.fill(0);
        let (rcb, gp) = (self.geom.row_code_bytes, self.geom.gp);
        for (i, &r) in rows.iter().enumerate() {
            out[i * rcb..(i + 1) * rcb].copy_from_slice(&self.codes[r * rcb..(r + 1) * rcb]);
            let s = target.scale_offset + 2 * i * gp;
            out[s..s + 2 * gp].copy_from_slice(&self.scales[2 * r * gp..2 * (r + 1) * gp]);
        }
        Ok(())
    }

    /// The value validator (sections 5, 6.1) on the stored words: binary16 scale validity, legal
    /// code intervals (W8 0x80 invalid), and all-zero codes in a zero-scale group. Reports the
    /// first offender (row, group, element).
    pub fn validate_values(&self) -> Result<(), ValueError> {
        validate_by(
            self.geom.scheme,
            self.geom.n,
            self.geom.k,
            |r, k| self.code(r, k),
            |r, g| self.scale(r, g),
        )
    }
}
