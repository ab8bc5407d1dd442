//! The one error type of the kernels. Every caller mistake (a length, a row index, a
//! combination outside the whitelist) comes back as a [`KernelError`]; nothing panics on input.

use core::fmt;

use ninfer_core::layout::LayoutError;
use ninfer_core::registry::{Format, Layout};

use crate::whitelist::{Op, Platform, Profile};

/// Why a kernel call was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelError {
    /// The (format, layout, op, profile, platform) combination is not in [`crate::WHITELIST`]
    /// (numeric-formats sections 2 and 9: a closed whitelist, no dense fallback).
    Unsupported {
        /// Format of the tensor.
        format: Format,
        /// Layout of the tensor.
        layout: Layout,
        /// Requested operation.
        op: Op,
        /// Requested compute profile.
        profile: Profile,
        /// Platform the call would run on.
        platform: Platform,
    },
    /// The descriptor or the payload was refused by the layout codec (length, rank, ...).
    Layout(LayoutError),
    /// The operation needs a rank-2 `[N, K]` tensor.
    NotAMatrix {
        /// The rank of the descriptor.
        rank: usize,
    },
    /// A caller buffer (activations, outputs) has the wrong number of elements.
    BufferLength {
        /// What the buffer is ("x", "y", "out", "rows").
        what: &'static str,
        /// Expected number of elements.
        expected: usize,
        /// Actual number of elements.
        actual: usize,
    },
    /// A requested row (or row range end) is outside the tensor.
    RowOutOfRange {
        /// Position in the index list (0 for a range).
        position: usize,
        /// The offending row.
        row: usize,
        /// Number of rows of the tensor.
        rows: usize,
    },
    /// The batch size is 0 or above [`crate::MAX_BATCH`].
    BadBatch {
        /// The requested batch size.
        batch: usize,
    },
    /// An activation value is NaN or infinite where the I8 profile must quantize it.
    NonFiniteActivation {
        /// Batch index.
        batch: usize,
        /// Position k.
        k: usize,
    },
    /// The requested instruction set is not available on this CPU.
    IsaUnavailable(crate::Isa),
    /// A size computation overflowed `usize`.
    SizeOverflow,
}

impl From<LayoutError> for KernelError {
    fn from(e: LayoutError) -> Self {
        KernelError::Layout(e)
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::Unsupported {
                format,
                layout,
                op,
                profile,
                platform,
            } => write!(
                f,
                "no kernel for format {} / layout {} / op {:?} / profile {:?} / platform {:?} \
                 (not in the kernel whitelist)",
                format.name(),
                layout.name(),
                op,
                profile,
                platform
            ),
            KernelError::Layout(e) => write!(f, "layout: {e}"),
            KernelError::NotAMatrix { rank } => write!(f, "operation needs a rank-2 tensor, got rank {rank}"),
            KernelError::BufferLength {
                what,
                expected,
                actual,
            } => {
                write!(f, "buffer `{what}` holds {actual} elements, {expected} required")
            }
            KernelError::RowOutOfRange { position, row, rows } => {
                write!(
                    f,
                    "row {row} (index position {position}) is outside the tensor's {rows} rows"
                )
            }
            KernelError::BadBatch { batch } => {
                write!(f, "batch size {batch} is outside 1..={}", crate::MAX_BATCH)
            }
            KernelError::NonFiniteActivation { batch, k } => {
                write!(f, "activation x[{batch}][{k}] is not finite (I8 profile)")
            }
            KernelError::IsaUnavailable(isa) => write!(f, "instruction set {isa:?} is not available here"),
            KernelError::SizeOverflow => f.write_str("size overflows usize"),
        }
    }
}

impl std::error::Error for KernelError {}
