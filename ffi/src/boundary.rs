//! The boundary: panic catching, the location out-parameter, and every conversion of a C
//! `(pointer, length)` pair or out-pointer into a Rust reference. All `unsafe` of the crate that
//! turns raw pointers into references lives here, each block with its proof.

use crate::status::{ninfer_error_location, ninfer_status, Fail};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Run `body`, catch any panic, write the location (when `loc` is non-NULL and aligned) and
/// return the status. This is the only way an export returns a status.
///
/// # Safety
///
/// `loc` is NULL or points to writable memory for one `ninfer_error_location`.
pub(crate) unsafe fn guard(
    loc: *mut ninfer_error_location,
    body: impl FnOnce() -> Result<(), Fail>,
) -> ninfer_status {
    // Checked before the body runs, so a bad location pointer never follows written outputs.
    if !loc.is_null() && !loc.is_aligned() {
        return ninfer_status::Misaligned;
    }
    let (status, where_) = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => (ninfer_status::Ok, ninfer_error_location::default()),
        Ok(Err(f)) => (f.status, f.loc),
        Err(_) => (ninfer_status::Panic, ninfer_error_location::default()),
    };
    if !loc.is_null() {
        // SAFETY: `loc` is non-NULL and aligned, and the caller guarantees it points to a writable
        // `ninfer_error_location` (function contract). `write` does not read the old value.
        unsafe { loc.write(where_) };
    }
    status
}

/// Run `body` for an infallible export, returning `fallback` if it panics.
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

fn check_ptr<T>(ptr: *const T, len: usize) -> Result<(), Fail> {
    if ptr.is_null() {
        return if len == 0 {
            Ok(())
        } else {
            Err(Fail::bare(ninfer_status::NullPointer))
        };
    }
    if !ptr.is_aligned() {
        return Err(Fail::bare(ninfer_status::Misaligned));
    }
    match len.checked_mul(size_of::<T>()) {
        Some(b) if b <= isize::MAX as usize => Ok(()),
        _ => Err(Fail::bare(ninfer_status::SizeOverflow)),
    }
}

/// Borrow a C input buffer. NULL with `len == 0` is the empty slice; NULL with `len > 0` is
/// `NullPointer`; a misaligned pointer is `Misaligned`.
///
/// # Safety
///
/// When `ptr` is non-NULL it points to `len` initialized `T`s that stay valid and unmodified
/// for `'a` (the duration of the call).
pub(crate) unsafe fn slice_in<'a, T>(ptr: *const T, len: usize) -> Result<&'a [T], Fail> {
    check_ptr(ptr, len)?;
    if ptr.is_null() || len == 0 {
        return Ok(&[]);
    }
    // SAFETY: `ptr` is non-NULL and aligned (checked), `len * size_of::<T>()` fits `isize`
    // (checked), and the caller guarantees `len` initialized elements valid for `'a` with no
    // concurrent writer (function contract).
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Borrow a C output buffer, with the same NULL and alignment rules as [`slice_in`].
///
/// # Safety
///
/// When `ptr` is non-NULL it points to `len` writable `T`s valid for `'a` that no other live
/// reference aliases (callers check overlap with their inputs through [`disjoint`]).
pub(crate) unsafe fn slice_out<'a, T>(ptr: *mut T, len: usize) -> Result<&'a mut [T], Fail> {
    check_ptr(ptr.cast_const(), len)?;
    if ptr.is_null() || len == 0 {
        return Ok(&mut []);
    }
    // SAFETY: non-NULL, aligned and size-checked as in `slice_in`; the caller guarantees the
    // memory is writable for `'a` and that no other reference aliases it (inputs were checked
    // for overlap with `disjoint` before this call). Every `T` used here is a plain integer or
    // float for which any bit pattern is valid, so uninitialized-but-allocated C memory is read
    // only after we write it.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// Borrow a required C input object.
///
/// # Safety
///
/// When non-NULL, `ptr` points to an initialized `T` valid for the call.
pub(crate) unsafe fn ref_in<'a, T>(ptr: *const T) -> Result<&'a T, Fail> {
    if ptr.is_null() {
        return Err(Fail::bare(ninfer_status::NullPointer));
    }
    if !ptr.is_aligned() {
        return Err(Fail::bare(ninfer_status::Misaligned));
    }
    // SAFETY: non-NULL and aligned (checked); the caller guarantees an initialized `T` that
    // outlives the call (function contract).
    Ok(unsafe { &*ptr })
}

/// A checked, not yet written, required output pointer.
pub(crate) struct Out<T>(*mut T);

impl<T> Out<T> {
    /// Check a required output pointer without writing it (outputs are written only on
    /// success, after every other check).
    pub fn new(ptr: *mut T) -> Result<Out<T>, Fail> {
        if ptr.is_null() {
            return Err(Fail::bare(ninfer_status::NullPointer));
        }
        if !ptr.is_aligned() {
            return Err(Fail::bare(ninfer_status::Misaligned));
        }
        Ok(Out(ptr))
    }

    /// Write the output.
    ///
    /// # Safety
    ///
    /// The pointer given to [`Out::new`] points to writable memory for one `T`.
    pub unsafe fn write(self, v: T) {
        // SAFETY: non-NULL and aligned (checked in `new`); writable per the caller's contract.
        // `write` does not drop or read the old contents (they may be uninitialized).
        unsafe { self.0.write(v) }
    }
}

/// Fail with `OverlappingBuffers` when the byte ranges of an input and an output intersect
/// (Rust forbids a shared and a mutable reference to the same memory).
pub(crate) fn disjoint<A, B>(a: *const A, a_len: usize, b: *const B, b_len: usize) -> Result<(), Fail> {
    let (a0, b0) = (a as usize, b as usize);
    let a1 = a0.saturating_add(a_len.saturating_mul(size_of::<A>()));
    let b1 = b0.saturating_add(b_len.saturating_mul(size_of::<B>()));
    if a0 < a1 && b0 < b1 && a0 < b1 && b0 < a1 {
        Err(Fail::bare(ninfer_status::OverlappingBuffers))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_a_body_becomes_the_panic_status_and_clears_the_location() {
        let mut loc = ninfer_error_location {
            fields: 7,
            ..Default::default()
        };
        // SAFETY: `loc` is a valid, aligned, writable location.
        let s = unsafe { guard(&mut loc, || panic!("deliberate")) };
        assert_eq!(s, ninfer_status::Panic);
        assert_eq!(loc, ninfer_error_location::default());
        assert_eq!(guard_value(7u32, || panic!("deliberate")), 7);
    }

    #[test]
    fn null_with_zero_length_is_empty_and_null_with_length_is_refused() {
        // SAFETY: NULL pointers are never dereferenced by slice_in.
        unsafe {
            assert_eq!(slice_in::<u32>(std::ptr::null(), 0).unwrap().len(), 0);
            assert_eq!(
                slice_in::<u32>(std::ptr::null(), 1).unwrap_err().status,
                ninfer_status::NullPointer
            );
        }
        let v = [0u32; 4];
        let mis = (v.as_ptr() as *const u8).wrapping_add(1) as *const u32;
        // SAFETY: the misaligned pointer is refused before any dereference.
        let e = unsafe { slice_in(mis, 1) }.unwrap_err();
        assert_eq!(e.status, ninfer_status::Misaligned);
        assert!(disjoint(v.as_ptr(), 2, v[1..].as_ptr(), 1).is_err());
        assert!(disjoint(v.as_ptr(), 1, v[1..].as_ptr(), 1).is_ok());
        assert!(disjoint(v.as_ptr(), 0, v.as_ptr(), 4).is_ok());
    }
}
