//! CPU reference kernels for the NInfer numeric formats.
//!
//! Placeholder crate: the `pulp` dequantize, encode and GEMV kernels land with the SIMD issue.
//! Until then it only re-exports the core so the workspace layout exists.
#![forbid(unsafe_code)]

pub use ninfer_core as core;
