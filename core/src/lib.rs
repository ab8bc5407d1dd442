//! # ninfer-core
//!
//! The `no_std`, allocation-free core of the NInfer persistent numeric formats: everything
//! `numeric-formats.txt` defines about numbers, exactly once.
//!
//! - [`registry`] — the closed registry of nine formats and four layouts (sections 1, 3.2, 13)
//!   and the support matrix of legal (format, layout) pairs (layouts.md).
//! - [`word`] — the logical words: BF16, FP32, I32 (3.1), binary16 scales (6.1), E2M1 and
//!   E4M3FN (3.3), with exact expansions and oracle-grade RNE conversions.
//! - [`tables`] — the E2M1 and E4M3FN decode tables, the single source for Rust, C and CUDA.
//! - [`scheme`] — validity rules and reconstruction oracles of the grouped (4, 5, 6), NVFP4
//!   (3.3) and FP8 row-scaled (3.4) schemes.
//! - [`encode`] — the canonical encoder MAXABS_F16_RECIP_RNE_V1 (section 7): a bit-level oracle
//!   and a faster scalar twin with parity tests.
//! - [`soft`] — bit-level binary32 arithmetic the oracle uses, independent of the host FPU mode.
//! - [`error`] — small `Copy` error values carrying the first offending index.
//!
//! Nothing here allocates or panics on caller input: every length and index is checked and
//! reported as an error.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(test)]
extern crate std;

/// Test helpers. Powers of two are built by exact doubling/halving rather than `powi`, whose
/// result Miri deliberately perturbs (it is not an IEEE basic operation).
#[cfg(test)]
pub(crate) mod testutil {
    /// 2^e as f64, exact for every e in the f64 range.
    pub fn p2(e: i32) -> f64 {
        let mut x = 1.0f64;
        for _ in 0..e.unsigned_abs() {
            x = if e > 0 { x * 2.0 } else { x * 0.5 };
        }
        x
    }

    /// 2^e as f32, exact for every e in the f32 range (subnormals included).
    pub fn p2f(e: i32) -> f32 {
        p2(e) as f32
    }
}

pub mod container;
pub mod crc32c;
pub mod encode;
pub mod error;
pub mod layout;
pub mod registry;
pub mod scheme;
pub mod soft;
pub mod tables;
pub mod word;

pub use error::{EncodeError, EncodeErrorKind, ValueError, ValueErrorKind};
pub use registry::{Category, Format, Grouped, Layout, ScaleWord};
