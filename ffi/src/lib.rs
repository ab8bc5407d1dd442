//! C ABI of the NInfer numeric formats.
//!
//! Placeholder crate: the cbindgen header, status codes and exports land with the C ABI issue.
#![forbid(unsafe_code)]

pub use ninfer_core as core;
