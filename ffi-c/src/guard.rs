//! The one wrapper every extern function runs in, and the argument readers.
//!
//! [`guard`] catches panics (none may cross into C), clears `*err`, and turns
//! a [`Fail`] into a status plus an optional `emq_error`.

use std::any::Any;
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::status::*;

/// Why a call failed: a core error, or a problem at the C boundary itself.
pub(crate) enum Fail {
    Core(emq_core::Error),
    Boundary(emq_status, String),
}

impl From<emq_core::Error> for Fail {
    fn from(err: emq_core::Error) -> Self {
        Fail::Core(err)
    }
}

impl Fail {
    pub(crate) fn null(what: &str) -> Fail {
        Fail::Boundary(EMQ_ERR_NULL_POINTER, format!("`{what}` is NULL"))
    }

    pub(crate) fn invalid_argument(message: impl Into<String>) -> Fail {
        Fail::Core(emq_core::Error::new(
            emq_core::ErrorKind::InvalidArgument,
            message,
        ))
    }

    /// The same failure, its message prefixed with `what: ` (which argument
    /// of several, e.g. `options[2]`).
    pub(crate) fn context(self, what: &str) -> Fail {
        match self {
            Fail::Core(e) => Fail::Core(emq_core::Error::new(
                e.kind(),
                format!("{what}: {}", e.message()),
            )),
            Fail::Boundary(status, message) => Fail::Boundary(status, format!("{what}: {message}")),
        }
    }

    fn panic(payload: Box<dyn Any + Send>) -> Fail {
        let what = emq_core::panicked(&*payload);
        Fail::Boundary(EMQ_ERR_PANIC, format!("echomq {what}"))
    }

    pub(crate) fn status(&self) -> emq_status {
        match self {
            Fail::Core(e) => status_of(e.kind()),
            Fail::Boundary(status, _) => *status,
        }
    }

    pub(crate) fn into_error(self) -> *mut emq_error {
        match self {
            Fail::Core(e) => emq_error::from_core(&e),
            Fail::Boundary(status, message) => emq_error::boxed(status, &message, None, None),
        }
    }
}

pub(crate) type FfiResult<T = ()> = Result<T, Fail>;

/// Run `body` with panics caught. `*err` (when `err` is not NULL) becomes NULL
/// on success and a new `emq_error` on failure.
pub(crate) fn guard(err: *mut *mut emq_error, body: impl FnOnce() -> FfiResult) -> emq_status {
    if !err.is_null() {
        // SAFETY: the caller passes NULL or a valid `emq_error **`.
        unsafe { *err = std::ptr::null_mut() };
    }
    let outcome = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|p| Err(Fail::panic(p)));
    match outcome {
        Ok(()) => EMQ_OK,
        Err(fail) => {
            let status = fail.status();
            if !err.is_null() {
                // SAFETY: as above.
                unsafe { *err = fail.into_error() };
            }
            status
        }
    }
}

/// For functions with nothing to report (the `*_free` family): panics are
/// caught and dropped.
pub(crate) fn guard_void(body: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(body));
}

/// A required `const char *` argument as UTF-8.
///
/// # Safety
/// The pointer arguments are NULL or valid as the exported caller's
/// `# Safety` section states; the returned borrow must not outlive the call.
pub(crate) unsafe fn str_arg<'a>(p: *const c_char, what: &str) -> FfiResult<&'a str> {
    if p.is_null() {
        return Err(Fail::null(what));
    }
    // SAFETY: checked non-NULL above; the caller guarantees a NUL-terminated string live for the call (`# Safety`).
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|e| {
        Fail::Boundary(
            EMQ_ERR_INVALID_UTF8,
            format!("`{what}` is not valid UTF-8 ({e})"),
        )
    })
}

/// An optional `const char *` argument (NULL = none).
///
/// # Safety
/// The pointer arguments are NULL or valid as the exported caller's
/// `# Safety` section states; the returned borrow must not outlive the call.
pub(crate) unsafe fn opt_str_arg<'a>(p: *const c_char, what: &str) -> FfiResult<Option<&'a str>> {
    if p.is_null() {
        Ok(None)
    } else {
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        unsafe { str_arg(p, what) }.map(Some)
    }
}

/// A `(pointer, length)` pair; NULL is accepted only with length 0.
///
/// # Safety
/// The pointer arguments are NULL or valid as the exported caller's
/// `# Safety` section states; the returned borrow must not outlive the call.
pub(crate) unsafe fn slice_arg<'a, T>(p: *const T, len: usize, what: &str) -> FfiResult<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Fail::null(what));
    }
    // SAFETY: checked non-NULL above; the caller guarantees `len` readable elements live for the call (`# Safety`).
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// A required reference argument (a handle or an input struct).
///
/// # Safety
/// The pointer arguments are NULL or valid as the exported caller's
/// `# Safety` section states; the returned borrow must not outlive the call.
pub(crate) unsafe fn ref_arg<'a, T>(p: *const T, what: &str) -> FfiResult<&'a T> {
    // SAFETY: the caller passes NULL or a pointer to a live value (`# Safety`).
    unsafe { p.as_ref() }.ok_or_else(|| Fail::null(what))
}

/// A required out-parameter that is only written, never read: for the answer
/// enums, whose caller-side initial value (`-1`, garbage) need not be a valid
/// Rust value, so no `&mut` to it may be formed. Write with `.as_ptr().write()`.
pub(crate) fn out_slot<T>(p: *mut T, what: &str) -> FfiResult<std::ptr::NonNull<T>> {
    std::ptr::NonNull::new(p).ok_or_else(|| Fail::null(what))
}

/// A required out-parameter.
///
/// # Safety
/// The pointer arguments are NULL or valid as the exported caller's
/// `# Safety` section states; the returned borrow must not outlive the call.
pub(crate) unsafe fn out_arg<'a, T>(p: *mut T, what: &str) -> FfiResult<&'a mut T> {
    // SAFETY: the caller passes NULL or a pointer valid for writes (`# Safety`).
    unsafe { p.as_mut() }.ok_or_else(|| Fail::null(what))
}
