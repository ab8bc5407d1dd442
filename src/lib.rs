//! # ninfer
//!
//! Facade of the NInfer numeric-formats reference implementation: re-exports [`ninfer_core`]
//! (registry, words, schemes, canonical encoder, layouts) and hosts the command-line tool, the
//! cross-crate conformance tests and the benches.

pub use ninfer_core as core;
pub use ninfer_core::{encode, error, layout, registry, scheme, tables, word};

pub mod bench;
pub mod cli;
pub mod container;
pub mod convert;
pub mod demo;
pub mod errors;
pub mod mmap;
pub mod verify;
