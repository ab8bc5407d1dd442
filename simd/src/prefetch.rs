//! Software prefetch (x86-64), shared by the GEMV fast paths and the encoder. SSE is part of
//! the x86-64 baseline, so these need no ISA token and work on every x86-64 path, the portable
//! one included. The pointers are made with `wrapping_add` and never dereferenced: a prefetch
//! reads nothing architecturally and never faults, whatever the address.

/// How far ahead (bytes) the row dequantizers of the grouped formats
/// (`gemv::f32x86::dequant_row_v3`) and of FP8 (`gemv::fp8x86`) prefetch every cache line of
/// their code stream (the rows are contiguous, so near a row's end the next row's bytes).
/// Until session 28 the grouped ones prefetched nothing and FP8 one line per 4 KiB: on the
/// Xeon of sessions 26-28 (family 6 model 167) the hardware prefetchers did not keep up while
/// the output words were written, and the loops waited on their code loads (`perf`: most
/// samples on the first use of the loaded bytes). 2 KiB was the best of 0.5, 1, 2 and 4 KiB
/// measured (figures in `crate::dequant`).
pub(crate) const DEQUANT_AHEAD: usize = 2048;

/// Prefetch the cache line holding `p` into every cache level.
#[inline(always)]
pub(crate) fn line(p: *const u8) {
    hint::<false>(p)
}

/// [`line()`], or with `l2_only` into L2 (and outer levels) but not L1 (`prefetcht1`): for a
/// stream read well ahead of its use while other data must stay in L1 (see
/// `gemv::f32x86::pass_v3_split`); the hardware prefetchers bring it on into L1.
#[inline(always)]
pub(crate) fn line_in(p: *const u8, l2_only: bool) {
    if l2_only {
        hint::<true>(p)
    } else {
        hint::<false>(p)
    }
}

#[inline(always)]
fn hint<const L2_ONLY: bool>(p: *const u8) {
    use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0, _MM_HINT_T1};
    // SAFETY: `prefetcht0` and `prefetcht1` need SSE, which every x86-64 CPU has; they read no
    // memory that the program can observe and never fault, whatever the address.
    unsafe {
        if L2_ONLY {
            _mm_prefetch::<_MM_HINT_T1>(p.cast())
        } else {
            _mm_prefetch::<_MM_HINT_T0>(p.cast())
        }
    }
}

/// Prefetch every cache line of the `len` bytes at `p` (`len >= 1`): one prefetch per 64 bytes
/// and one for the last byte, so a span that straddles a line boundary (a Q5 chunk is 80 bytes,
/// Q6 96, W8 128; an unaligned f32 group) has all its lines fetched.
#[inline(always)]
pub(crate) fn span(p: *const u8, len: usize) {
    span_to::<false>(p, len)
}

/// [`span`], or with `l2_only` into L2 only ([`line_in`]).
#[inline(always)]
pub(crate) fn span_in(p: *const u8, len: usize, l2_only: bool) {
    if l2_only {
        span_to::<true>(p, len)
    } else {
        span_to::<false>(p, len)
    }
}

#[inline(always)]
fn span_to<const L2_ONLY: bool>(p: *const u8, len: usize) {
    let mut o = 0;
    while o < len {
        hint::<L2_ONLY>(p.wrapping_add(o));
        o += 64;
    }
    hint::<L2_ONLY>(p.wrapping_add(len.max(1) - 1));
}
