//! Equal-width runs of a slice, bounds checked once when made, so that a kernel's chunk loop
//! takes run `c` without a check of its own per run.
//!
//! A chunk loop that slices `&codes[row * rcb + c * cb..][..cb]` (and the activations and the
//! scales likewise) pays per chunk for the address arithmetic, the overflow test of the range
//! end and a compare-and-branch pair per slice, and the extra live values spill. On a core
//! with three vector ports those scalar operations share ports 0, 1 and 5 with the vector work:
//! `llvm-mca -mcpu=icelake-server` on the AVX2 Q5 `F32` loop (`gemv::f32x86::pass_v3_split`)
//! put ports 0 and 1 at 29 cycles per chunk, against 22 for its vector operations alone.
//! Session 30's Xeon (family 6 model 167, KVM), `report --isa V3`, `F32`, G weights/s, medians
//! of 3 alternations, before -> with [`Runs`]: 8192x8192 from memory, one / two threads, Q4
//! 17.01 / 33.64 -> 18.45 / 36.53, Q5 12.66 / 24.85 -> 13.28 / 26.36, Q6 11.98 / 24.06 ->
//! 12.70 / 25.25, W8 12.53 / 24.88 -> 12.82 / 25.05; 256x8192 cache-resident, one thread, Q4
//! 17.1 -> 18.9, Q5 13.0 -> 13.9, Q6 12.9 -> 13.6. The AVX-512 Q6/W8 kernel
//! (`pass_v4_split`) takes the same runs; it measured unchanged. The AVX2 NVFP4 kernels
//! (`gemv::nvfp4x86`, the whole chunks whose scale words lie inside the row's span), same
//! method: `I8` from memory 22.74 / 46.00 -> 24.28 / 47.69, cache-resident 29.76 -> 32.45;
//! `F32` from memory 12.99 / 25.90 -> 13.34 / 26.94, cache-resident 16.00 -> 16.41.
//!
//! [`Runs::get`] still asserts `i < n`; in a loop `for c in 0..n` over the same `n` the
//! compiler removes that test, and outside one it keeps the access safe. `.ci/run` runs this
//! module's tests under Miri.

use core::marker::PhantomData;

/// `n` runs of `width` elements each, `stride` elements apart, from an offset of a slice: run
/// `i` is `s[start + i * stride..][..width]`.
#[derive(Clone, Copy)]
pub(crate) struct Runs<'a, T> {
    /// The first element of run 0.
    base: *const T,
    stride: usize,
    width: usize,
    n: usize,
    _s: PhantomData<&'a [T]>,
}

impl<'a, T> Runs<'a, T> {
    /// No runs (every [`Runs::get`] panics): a placeholder for arrays filled in a loop.
    pub(crate) const EMPTY: Self = Runs {
        base: core::ptr::NonNull::dangling().as_ptr(),
        stride: 0,
        width: 0,
        n: 0,
        _s: PhantomData,
    };

    /// Back-to-back runs (`stride == width`): [`Runs::strided`].
    #[inline(always)]
    pub(crate) fn new(s: &'a [T], start: usize, width: usize, n: usize) -> Self {
        Self::strided(s, start, width, width, n)
    }

    /// The runs of `s` from `start`. Panics, as slicing `s` would, if `n > 0` and the runs do
    /// not all lie inside `s` (the kernels make them from a validated
    /// [`crate::weights::Weights`], so that is a bug in the caller).
    #[inline(always)]
    pub(crate) fn strided(s: &'a [T], start: usize, stride: usize, width: usize, n: usize) -> Self {
        if n == 0 {
            return Self::EMPTY;
        }
        let extent = (n - 1)
            .checked_mul(stride)
            .and_then(|e| e.checked_add(width))
            .unwrap_or(usize::MAX);
        let all = &s[start..][..extent];
        Runs {
            base: all.as_ptr(),
            stride,
            width,
            n,
            _s: PhantomData,
        }
    }

    /// The most runs of `width` elements, `stride` apart from `start`, that lie inside a slice
    /// of `len` elements.
    pub(crate) const fn fitting(len: usize, start: usize, stride: usize, width: usize) -> usize {
        match len.checked_sub(start) {
            Some(room) if room >= width => match stride {
                0 => usize::MAX,
                _ => (room - width) / stride + 1,
            },
            _ => 0,
        }
    }

    /// Run `i`. Panics if `i >= n`.
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> &'a [T] {
        assert!(i < self.n);
        // SAFETY: `strided` checked that `(n - 1) * stride + width` elements from `base` lie
        // inside one slice that lives for `'a` (the sum did not overflow, or the slicing
        // panicked). With `i < n`, `i * stride + width <= (n - 1) * stride + width`, so the run
        // is inside it and its offset does not overflow.
        unsafe { core::slice::from_raw_parts(self.base.add(i * self.stride), self.width) }
    }
}

#[cfg(test)]
mod tests {
    use super::Runs;

    #[test]
    fn every_run_is_the_slice_it_names() {
        let s: Vec<u32> = (0..1000).collect();
        for (start, width, n) in [
            (0, 1, 1000),
            (3, 80, 12),
            (7, 128, 7),
            (999, 1, 1),
            (1000, 0, 5),
            (5, 0, 0),
        ] {
            let runs = Runs::new(&s, start, width, n);
            for i in 0..n {
                assert_eq!(
                    runs.get(i),
                    &s[start + i * width..start + (i + 1) * width],
                    "{start} {width} {n} {i}"
                );
            }
        }
    }

    #[test]
    fn strided_runs_are_the_slices_they_name() {
        let s: Vec<u16> = (0..2000).collect();
        for (start, stride, width, n) in [
            (0, 1024, 4, 2),
            (512, 1024, 4, 2),
            (3, 7, 7, 285),
            (5, 3, 9, 663),
            (1999, 5, 1, 1),
        ] {
            let runs = Runs::strided(&s, start, stride, width, n);
            for i in 0..n {
                assert_eq!(
                    runs.get(i),
                    &s[start + i * stride..][..width],
                    "{start} {stride} {width} {i}"
                );
            }
        }
        // No runs ask nothing of the slice, not even that `start` is inside it.
        let _ = Runs::strided(&s[..0], 512, 1024, 4, 0);
    }

    #[test]
    fn fitting_counts_the_most_runs_inside() {
        for len in 0..40 {
            for (start, stride, width) in [(0, 4, 4), (3, 7, 2), (5, 1, 3), (0, 10, 1), (12, 5, 9)] {
                let n = Runs::<u8>::fitting(len, start, stride, width);
                let ends = |k: usize| start + (k - 1) * stride + width;
                assert!(n == 0 || ends(n) <= len, "{len} {start} {stride} {width}: {n}");
                assert!(
                    ends(n + 1) > len,
                    "{len} {start} {stride} {width}: {n} is not the most"
                );
                let s = vec![0u8; len];
                let runs = Runs::strided(&s, start, stride, width, n);
                for i in 0..n {
                    assert_eq!(runs.get(i).len(), width);
                }
            }
        }
        assert_eq!(Runs::<u8>::fitting(10, 2, 0, 3), usize::MAX);
    }

    #[test]
    #[should_panic]
    fn strided_runs_past_the_end_are_refused() {
        let s = [0u8; 100];
        let _ = Runs::strided(&s, 0, 33, 5, 4);
    }

    #[test]
    #[should_panic]
    fn runs_past_the_end_are_refused() {
        let s = [0u8; 100];
        let _ = Runs::new(&s, 21, 20, 4);
    }

    #[test]
    #[should_panic]
    fn an_overflowing_length_is_refused() {
        let s = [0u8; 100];
        let _ = Runs::new(&s, 0, usize::MAX / 2 + 1, 2);
    }

    #[test]
    #[should_panic]
    fn a_run_past_n_is_refused() {
        let s = [0u8; 100];
        let runs = Runs::new(&s, 0, 10, 5);
        let _ = runs.get(5);
    }
}
