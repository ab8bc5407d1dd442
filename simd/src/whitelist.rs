//! The closed kernel whitelist (numeric-formats sections 2 and 9).
//!
//! A kernel is usable only for an explicitly listed combination of numeric format, storage
//! layout, operation, compute profile and execution platform. [`WHITELIST`] is that list; every
//! public entry point checks it ([`check`]) before touching the payload, and a request outside it
//! fails with [`KernelError::Unsupported`] naming the whole combination. There is no generic
//! unpack-to-dense path and no slower compatibility kernel behind it.

use ninfer_core::registry::{Format, Layout};

use crate::error::KernelError;

/// An operation the crate implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// Decode a range of rows to f32 ([`crate::dequantize_f32`]).
    DequantizeF32,
    /// Decode a range of rows to BF16 words, RNE of the exact f32 value
    /// ([`crate::dequantize_bf16`]).
    DequantizeBf16,
    /// Decode a list of rows (an embedding lookup) to f32 ([`crate::gather_f32`]).
    GatherF32,
    /// Decode a list of rows to BF16 words ([`crate::gather_bf16`]).
    GatherBf16,
    /// `y[N] = W[N, K] x[K]` ([`crate::gemv()`]).
    Gemv,
    /// `Y[B, N] = X[B, K] W[N, K]^T` for `1 <= B <= 8` ([`crate::gemv_batch`]).
    GemvBatch,
}

/// A compute profile: the observable types and the criterion a result meets (section 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Profile {
    /// Bit-exact: the f32 result of the spec's reconstruction equation (and, for BF16 output,
    /// its round-to-nearest-even BF16 word). The dequantize and gather operations.
    Exact,
    /// f32 activations, f32 products and sums; criterion [`crate::C_F32`].
    F32,
    /// Activations quantized per block of [`crate::I8_BLOCK`] to i8, integer dot products, one
    /// float multiply-add per block; criterion [`crate::C_I8`] plus the activation rounding term.
    I8,
}

/// An execution platform, as dispatched once per call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Platform {
    /// Portable scalar code (any CPU).
    Scalar,
    /// x86-64 AVX2 + FMA + F16C (pulp `V3`).
    X86V3,
    /// x86-64 AVX-512 F/BW/CD/DQ/VL (pulp `V4`).
    X86V4,
    /// aarch64 NEON (the I8 profile uses `sdot` where the CPU has dotprod).
    Neon,
}

impl Platform {
    /// All four platforms.
    pub const ALL: [Platform; 4] = [Platform::Scalar, Platform::X86V3, Platform::X86V4, Platform::Neon];

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of platforms (bit set over [`Platform`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PlatformSet(u8);

impl PlatformSet {
    /// Every platform.
    pub const ALL: PlatformSet = PlatformSet(0b1111);

    /// Whether `p` is in the set.
    pub const fn contains(self, p: Platform) -> bool {
        self.0 & p.bit() != 0
    }
}

/// One row of the whitelist: a (format, layout, op, profile) with the platforms that have it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelEntry {
    /// Numeric format.
    pub format: Format,
    /// Storage layout (always the format's one registered layout).
    pub layout: Layout,
    /// Operation.
    pub op: Op,
    /// Compute profile.
    pub profile: Profile,
    /// Platforms with this kernel.
    pub platforms: PlatformSet,
}

macro_rules! rows {
    ($( $fmt:ident / $lay:ident : [$($op:ident),*] $prof:ident ;)*) => {
        &[ $( $( KernelEntry {
            format: Format::$fmt,
            layout: Layout::$lay,
            op: Op::$op,
            profile: Profile::$prof,
            platforms: PlatformSet::ALL,
        }, )* )* ]
    };
}

/// The whitelist. Each row holds for every platform in [`Platform::ALL`]:
///
/// | format | layout | operations | profile |
/// |---|---|---|---|
/// | Q4G64_F16S, Q5G64_F16S, Q6G64_F16S, W8G32_F16S | row-split-k128-v1 | dequantize/gather to f32 and BF16 | Exact |
/// | NVFP4 | blockscale-k16-m128x4-v1 | dequantize/gather to f32 and BF16 | Exact |
/// | FP8_E4M3FN_ROW_BF16S | row-scale-v1 | dequantize/gather to f32 and BF16 | Exact |
/// | BF16, FP32 | contiguous-le-v1 | dequantize/gather to f32 and BF16 | Exact |
/// | all of the above | their layout | GEMV, batch GEMV | F32 |
/// | Q4G64_F16S, Q5G64_F16S, Q6G64_F16S, W8G32_F16S, NVFP4 | their layout | GEMV, batch GEMV | I8 |
///
/// Not listed, hence refused: anything on I32 (it has no f32 meaning); the I8 profile on
/// FP8_E4M3FN_ROW_BF16S, BF16 and FP32 (their weights are not small integers times a block
/// scale, so an integer dot product would need a different staging than this profile names);
/// the Exact profile for GEMV and F32/I8 for dequantize.
pub const WHITELIST: &[KernelEntry] = rows! {
    Q4G64F16S / RowSplitK128V1 : [DequantizeF32, DequantizeBf16, GatherF32, GatherBf16] Exact;
    Q5G64F16S / RowSplitK128V1 : [DequantizeF32, DequantizeBf16, GatherF32, GatherBf16] Exact;
    Q6G64F16S / RowSplitK128V1 : [DequantizeF32, DequantizeBf16, GatherF32, GatherBf16] Exact;
    W8G32F16S / RowSplitK128V1 : [DequantizeF32, DequantizeBf16, GatherF32, GatherBf16] Exact;
    Nvfp4 / BlockscaleK16M128x4V1 : [DequantizeF32, DequantizeBf16, GatherF32, GatherBf16] Exact;
    Fp8E4m3fnRowBf16s / RowScaleV1 : [DequantizeF32, DequantizeBf16, GatherF32, GatherBf16] Exact;
    Bf16 / ContiguousLeV1 : [DequantizeF32, DequantizeBf16, GatherF32, GatherBf16] Exact;
    Fp32 / ContiguousLeV1 : [DequantizeF32, DequantizeBf16, GatherF32, GatherBf16] Exact;
    Q4G64F16S / RowSplitK128V1 : [Gemv, GemvBatch] F32;
    Q5G64F16S / RowSplitK128V1 : [Gemv, GemvBatch] F32;
    Q6G64F16S / RowSplitK128V1 : [Gemv, GemvBatch] F32;
    W8G32F16S / RowSplitK128V1 : [Gemv, GemvBatch] F32;
    Nvfp4 / BlockscaleK16M128x4V1 : [Gemv, GemvBatch] F32;
    Fp8E4m3fnRowBf16s / RowScaleV1 : [Gemv, GemvBatch] F32;
    Bf16 / ContiguousLeV1 : [Gemv, GemvBatch] F32;
    Fp32 / ContiguousLeV1 : [Gemv, GemvBatch] F32;
    Q4G64F16S / RowSplitK128V1 : [Gemv, GemvBatch] I8;
    Q5G64F16S / RowSplitK128V1 : [Gemv, GemvBatch] I8;
    Q6G64F16S / RowSplitK128V1 : [Gemv, GemvBatch] I8;
    W8G32F16S / RowSplitK128V1 : [Gemv, GemvBatch] I8;
    Nvfp4 / BlockscaleK16M128x4V1 : [Gemv, GemvBatch] I8;
};

/// Whether the combination is in [`WHITELIST`].
pub fn is_listed(format: Format, layout: Layout, op: Op, profile: Profile, platform: Platform) -> bool {
    WHITELIST.iter().any(|e| {
        e.format == format
            && e.layout == layout
            && e.op == op
            && e.profile == profile
            && e.platforms.contains(platform)
    })
}

/// `Ok(())` when the combination is listed, otherwise [`KernelError::Unsupported`] naming it.
pub fn check(
    format: Format,
    layout: Layout,
    op: Op,
    profile: Profile,
    platform: Platform,
) -> Result<(), KernelError> {
    if is_listed(format, layout, op, profile, platform) {
        Ok(())
    } else {
        Err(KernelError::Unsupported {
            format,
            layout,
            op,
            profile,
            platform,
        })
    }
}

/// Every listed combination expanded to one `(format, layout, op, profile, platform)` tuple.
pub fn combinations() -> impl Iterator<Item = (Format, Layout, Op, Profile, Platform)> {
    WHITELIST.iter().flat_map(|e| {
        Platform::ALL
            .into_iter()
            .filter(move |p| e.platforms.contains(*p))
            .map(move |p| (e.format, e.layout, e.op, e.profile, p))
    })
}
