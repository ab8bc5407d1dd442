//! Software prefetch (x86-64), shared by the GEMV fast paths and the encoder. SSE is part of
//! the x86-64 baseline, so these need no ISA token and work on every x86-64 path, the portable
//! one included. The pointers are made with `wrapping_add` and never dereferenced: a prefetch
//! reads nothing architecturally and never faults, whatever the address.

/// Prefetch the cache line holding `p` into every cache level.
#[inline(always)]
pub(crate) fn line(p: *const u8) {
    // SAFETY: `prefetcht0` needs SSE, which every x86-64 CPU has; it reads no memory that the
    // program can observe and never faults, whatever the address.
    unsafe { core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast()) }
}

/// Prefetch every cache line of the `len` bytes at `p` (`len >= 1`): one prefetch per 64 bytes
/// and one for the last byte, so a span that straddles a line boundary (a Q5 chunk is 80 bytes,
/// Q6 96, W8 128; an unaligned f32 group) has all its lines fetched.
#[inline(always)]
pub(crate) fn span(p: *const u8, len: usize) {
    let mut o = 0;
    while o < len {
        line(p.wrapping_add(o));
        o += 64;
    }
    line(p.wrapping_add(len.max(1) - 1));
}
