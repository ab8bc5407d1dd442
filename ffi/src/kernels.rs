//! CPU GEMV (from `ninfer-simd`) and the kernel whitelist (CPU rows from `ninfer-simd`, CUDA
//! rows for the launchers of `ffi/cuda/`) over the C ABI (numeric-formats sections 2 and 9: a
//! closed whitelist of (format, layout, op, profile, platform), no dense fallback).

use crate::boundary::{disjoint, guard, slice_in, slice_out, Out};
use crate::desc::{desc_in, ninfer_desc};
use crate::status::{ninfer_error_location, ninfer_status, Fail, NINFER_LOC_ELEMENT, NINFER_LOC_INDEX};
use ninfer_core::registry::{Format, Layout};
use ninfer_simd::whitelist::{is_listed, Op, Platform, Profile};
use ninfer_simd::{Isa, KernelError};

/// Compute profile `Exact`: bit-exact dequantize / gather.
pub const NINFER_PROFILE_EXACT: u32 = 1;
/// Compute profile `F32`: f32 activations, f32 products and sums. Criterion per output:
/// `|y - y_ref| <= NINFER_GEMV_C_F32 * K * 2^-24 * sum_k |w_k x_k|`.
pub const NINFER_PROFILE_F32: u32 = 2;
/// Compute profile `I8`: activations quantized per block of `NINFER_I8_BLOCK` to i8 (symmetric,
/// RNE), integer dots, one float multiply-add per sub-block (Q4/Q5/Q6/W8 and NVFP4 only); its
/// criterion adds the activation rounding term (see `ninfer-simd` `criteria::i8_bound`).
pub const NINFER_PROFILE_I8: u32 = 3;

/// The constant of the `F32` GEMV criterion (4).
pub const NINFER_GEMV_C_F32: u32 = 4;
/// The constant of the rounding part of the `I8` GEMV criterion (4).
pub const NINFER_GEMV_C_I8: u32 = 4;
/// Positions per activation block of the `I8` profile.
pub const NINFER_I8_BLOCK: u32 = 32;
/// Largest GEMV batch.
pub const NINFER_MAX_BATCH: u32 = 8;

/// Operation ids of the whitelist.
pub const NINFER_OP_DEQUANTIZE_F32: u32 = 1;
/// Rows to BF16 words.
pub const NINFER_OP_DEQUANTIZE_BF16: u32 = 2;
/// A row list to f32.
pub const NINFER_OP_GATHER_F32: u32 = 3;
/// A row list to BF16 words.
pub const NINFER_OP_GATHER_BF16: u32 = 4;
/// `y = W x`.
pub const NINFER_OP_GEMV: u32 = 5;
/// `Y = X W^T` for batch 1..8.
pub const NINFER_OP_GEMV_BATCH: u32 = 6;

/// Platform ids of the whitelist: portable scalar CPU code.
pub const NINFER_PLATFORM_SCALAR: u32 = 1;
/// x86-64 AVX2 + FMA + F16C.
pub const NINFER_PLATFORM_X86_V3: u32 = 2;
/// x86-64 AVX-512.
pub const NINFER_PLATFORM_X86_V4: u32 = 3;
/// aarch64 NEON.
pub const NINFER_PLATFORM_NEON: u32 = 4;
/// NVIDIA GPUs through `ffi/cuda/ninfer_cuda.h` (compiled for sm_90 and sm_100a).
pub const NINFER_PLATFORM_CUDA: u32 = 5;

fn op_of(id: u32) -> Option<Op> {
    Some(match id {
        NINFER_OP_DEQUANTIZE_F32 => Op::DequantizeF32,
        NINFER_OP_DEQUANTIZE_BF16 => Op::DequantizeBf16,
        NINFER_OP_GATHER_F32 => Op::GatherF32,
        NINFER_OP_GATHER_BF16 => Op::GatherBf16,
        NINFER_OP_GEMV => Op::Gemv,
        NINFER_OP_GEMV_BATCH => Op::GemvBatch,
        _ => return None,
    })
}

fn profile_of(id: u32) -> Option<Profile> {
    Some(match id {
        NINFER_PROFILE_EXACT => Profile::Exact,
        NINFER_PROFILE_F32 => Profile::F32,
        NINFER_PROFILE_I8 => Profile::I8,
        _ => return None,
    })
}

fn platform_of(id: u32) -> Option<Platform> {
    Some(match id {
        NINFER_PLATFORM_SCALAR => Platform::Scalar,
        NINFER_PLATFORM_X86_V3 => Platform::X86V3,
        NINFER_PLATFORM_X86_V4 => Platform::X86V4,
        NINFER_PLATFORM_NEON => Platform::Neon,
        _ => return None,
    })
}

/// The CUDA rows: the formats the launchers accept, Exact dequantize (range, f32 and BF16) and
/// F32-profile GEMV (batch 1..8). No gathers, no I8 profile.
fn cuda_listed(format: Format, layout: Layout, op: u32, profile: u32) -> bool {
    let fmt_ok = matches!(
        format,
        Format::Q4G64F16S
            | Format::Q5G64F16S
            | Format::Q6G64F16S
            | Format::W8G32F16S
            | Format::Nvfp4
            | Format::Fp8E4m3fnRowBf16s
            | Format::Bf16
    ) && format.layout() == layout;
    fmt_ok
        && matches!(
            (op, profile),
            (
                NINFER_OP_DEQUANTIZE_F32 | NINFER_OP_DEQUANTIZE_BF16,
                NINFER_PROFILE_EXACT
            ) | (NINFER_OP_GEMV | NINFER_OP_GEMV_BATCH, NINFER_PROFILE_F32)
        )
}

/// Whether the kernel whitelist lists (format, layout, op, profile, platform): `*out_listed` is
/// true or false. Unknown format or layout ids are `UNKNOWN_FORMAT_ID` / `UNKNOWN_LAYOUT_ID`;
/// unknown op, profile or platform ids are `INVALID_ARGUMENT`. Unlisted combinations have no
/// kernel at all (no fallback).
///
/// # Safety
///
/// `out_listed` points to a writable `bool`.
#[no_mangle]
pub unsafe extern "C" fn ninfer_kernel_is_listed(
    format: u32,
    layout: u32,
    op: u32,
    profile: u32,
    platform: u32,
    out_listed: *mut bool,
) -> ninfer_status {
    // SAFETY: the pointer satisfies the contract of this function.
    unsafe {
        guard(std::ptr::null_mut(), || {
            let o = Out::new(out_listed)?;
            let f = Format::from_id(format)?;
            let l = Layout::from_id(layout)?;
            let (Some(op_k), Some(pr)) = (op_of(op), profile_of(profile)) else {
                return Err(ninfer_status::InvalidArgument.into());
            };
            let listed = if platform == NINFER_PLATFORM_CUDA {
                cuda_listed(f, l, op, profile)
            } else {
                let p = platform_of(platform).ok_or(Fail::bare(ninfer_status::InvalidArgument))?;
                is_listed(f, l, op_k, pr, p)
            };
            o.write(listed);
            Ok(())
        })
    }
}

/// The CPU platform this library dispatches to on this machine (`NINFER_PLATFORM_*`).
#[no_mangle]
pub extern "C" fn ninfer_cpu_platform() -> u32 {
    crate::boundary::guard_value(NINFER_PLATFORM_SCALAR, || match Isa::detect().platform() {
        Platform::Scalar => NINFER_PLATFORM_SCALAR,
        Platform::X86V3 => NINFER_PLATFORM_X86_V3,
        Platform::X86V4 => NINFER_PLATFORM_X86_V4,
        Platform::Neon => NINFER_PLATFORM_NEON,
    })
}

impl From<KernelError> for Fail {
    fn from(e: KernelError) -> Fail {
        use ninfer_status as S;
        match e {
            KernelError::Unsupported { .. } => Fail::bare(S::KernelNotListed),
            KernelError::Layout(l) => l.into(),
            KernelError::NotAMatrix { .. } => Fail::bare(S::BadRank),
            KernelError::BufferLength { expected, actual, .. } => {
                Fail::lengths(S::BufferLength, expected, actual)
            }
            KernelError::RowOutOfRange { position, row, .. } => Fail::row_out_of_range(position, row as u64),
            KernelError::BadBatch { .. } => Fail::bare(S::InvalidArgument),
            KernelError::NonFiniteActivation { batch, k } => {
                let mut f = Fail::bare(S::NonFiniteActivation);
                f.loc.fields = NINFER_LOC_INDEX | NINFER_LOC_ELEMENT;
                f.loc.index = batch as u64;
                f.loc.element = k as u64;
                f
            }
            KernelError::IsaUnavailable(_) => Fail::bare(S::InvalidArgument),
            KernelError::SizeOverflow => Fail::bare(S::SizeOverflow),
        }
    }
}

/// CPU GEMV over a rank-2 weight `[N, K]`: `x` holds `batch` activation rows of K (row-major,
/// `x_len == batch * K`), `y` receives `batch` rows of N (`y_len == batch * N`), row b being
/// `W x_b`. `profile` is `NINFER_PROFILE_F32` or `NINFER_PROFILE_I8`; `threads` is the number of
/// threads the call may use (0 means 1). The result is deterministic and independent of
/// `threads`; it meets the profile's criterion against the f64 sum over the exactly decoded
/// weights. The combination must be in the whitelist for `ninfer_cpu_platform()`
/// (`KERNEL_NOT_LISTED` otherwise; I32 never, the I8 profile only for Q4/Q5/Q6/W8 and NVFP4).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_DESCRIPTOR`, `PAYLOAD_LENGTH`, `BAD_RANK`,
/// `INVALID_ARGUMENT` (profile id, batch 0 or above `NINFER_MAX_BATCH`), `BUFFER_LENGTH`,
/// `OVERLAPPING_BUFFERS`, `KERNEL_NOT_LISTED`, `NON_FINITE_ACTIVATION` (I8 profile: `index` is
/// the batch row, `element` the k). `y` is written only on success.
///
/// # Safety
///
/// `desc` readable; `payload` readable for `payload_len` bytes; `x` readable for `x_len` floats;
/// `y` writable for `y_len` floats, overlapping no input; `loc` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ninfer_gemv(
    desc: *const ninfer_desc,
    payload: *const u8,
    payload_len: usize,
    profile: u32,
    x: *const f32,
    x_len: usize,
    batch: u32,
    threads: u32,
    y: *mut f32,
    y_len: usize,
    loc: *mut ninfer_error_location,
) -> ninfer_status {
    // SAFETY: contract of this function; overlaps are checked before the output slice is formed.
    unsafe {
        guard(loc, || {
            let td = desc_in(desc)?;
            let p = slice_in(payload, payload_len)?;
            if p.len() != td.payload_len() {
                return Err(Fail::lengths(
                    ninfer_status::PayloadLength,
                    td.payload_len(),
                    p.len(),
                ));
            }
            let xs = slice_in(x, x_len)?;
            disjoint(payload, payload_len, y, y_len)?;
            disjoint(x, x_len, y, y_len)?;
            let ys = slice_out(y, y_len)?;
            let pr = match profile {
                NINFER_PROFILE_F32 => Profile::F32,
                NINFER_PROFILE_I8 => Profile::I8,
                _ => return Err(ninfer_status::InvalidArgument.into()),
            };
            // Compute into a scratch buffer and copy on success: `y` is never half-written.
            let mut tmp = vec![0f32; ys.len()];
            ninfer_simd::gemv_batch(&td, p, pr, xs, batch as usize, &mut tmp, threads.max(1) as usize)?;
            ys.copy_from_slice(&tmp);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_match_the_simd_crate() {
        assert_eq!(NINFER_GEMV_C_F32 as f64, ninfer_simd::C_F32);
        assert_eq!(NINFER_GEMV_C_I8 as f64, ninfer_simd::C_I8);
        assert_eq!(NINFER_I8_BLOCK as usize, ninfer_simd::I8_BLOCK);
        assert_eq!(NINFER_MAX_BATCH as usize, ninfer_simd::MAX_BATCH);
        // Every CPU whitelist row is reachable through the C ids.
        for (f, l, op, pr, pl) in ninfer_simd::whitelist::combinations() {
            let op_id = (1..=6).find(|&i| op_of(i) == Some(op)).unwrap();
            let pr_id = (1..=3).find(|&i| profile_of(i) == Some(pr)).unwrap();
            let pl_id = (1..=4).find(|&i| platform_of(i) == Some(pl)).unwrap();
            let mut listed = false;
            // SAFETY: `listed` is a valid bool.
            let s = unsafe { ninfer_kernel_is_listed(f.id(), l.id(), op_id, pr_id, pl_id, &mut listed) };
            assert_eq!((s, listed), (ninfer_status::Ok, true));
        }
    }
}
