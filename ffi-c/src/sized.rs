//! Option structs that grow without breaking callers built against an older
//! header.
//!
//! Each options struct starts with `size`: the `sizeof` the caller was
//! compiled with, written by `emq_*_options_init(opts, sizeof *opts)`. The
//! library reads only those bytes and keeps its defaults for the fields an
//! older, smaller struct does not have. A newer, larger struct (a program
//! built against a newer header, run with an older library) is accepted when
//! every byte this library does not know is zero, i.e. when the caller left
//! the new fields at their defaults; otherwise it is an invalid argument, not
//! a silently ignored setting.
//!
//! The rule for whoever adds a field: append it at the end, never reorder or
//! retype one, and never place it inside the previous version's tail padding
//! (align the new field so that it starts at or after the old `sizeof`). Fields
//! are integers, C `bool`s and pointers, never Rust enums: the bytes are the
//! caller's, and a value a Rust enum does not name would be undefined
//! behaviour instead of `EMQ_ERR_INVALID_ARGUMENT` (hence `emq_backoff` is an
//! `int32_t` checked by `to_core`).

use std::mem::size_of;

use crate::guard::{Fail, FfiResult};

/// A `#[repr(C)]` options struct whose first field is `size: usize`.
///
/// # Safety
/// Implementors must be `#[repr(C)]` with `size: usize` at offset 0, and every
/// byte pattern a C caller may legally write must be a valid value.
pub(crate) unsafe trait SizedOptions: Copy {
    /// The struct's C name, for messages.
    const NAME: &'static str;
    /// The library defaults, with `size` set to this library's `sizeof`.
    fn defaults() -> Self;
    fn set_size(&mut self, size: usize);
}

/// Read `*ptr` as the caller's version of `T` (see the module docs). NULL is
/// `None` (the caller wants the defaults).
///
/// # Safety
/// `ptr` is NULL or valid for reads of the `size` bytes its first field states.
pub(crate) unsafe fn read<T: SizedOptions>(ptr: *const T) -> FfiResult<Option<T>> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: a non-NULL pointer holds at least the leading `size` field (`# Safety`).
    let size = unsafe { ptr.cast::<usize>().read_unaligned() };
    let ours = size_of::<T>();
    if size < size_of::<usize>() {
        return Err(Fail::invalid_argument(format!(
            "{}.size is {size}: initialise the struct with {}_init(&opts, sizeof opts)",
            T::NAME,
            T::NAME
        )));
    }
    if size > ours {
        // SAFETY: the caller's struct is `size` bytes long (`# Safety`).
        let extra = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>().add(ours), size - ours) };
        if extra.iter().any(|&b| b != 0) {
            return Err(Fail::invalid_argument(format!(
                "{} ({size} bytes) sets fields this library ({ours} bytes) does not know: \
                 link a newer libechomq or leave them at their defaults",
                T::NAME
            )));
        }
    }
    let mut value = T::defaults();
    // SAFETY: both regions are at least `size.min(ours)` bytes and do not
    // overlap; a byte copy keeps whatever padding the caller had, which is fine.
    unsafe {
        std::ptr::copy_nonoverlapping(
            ptr.cast::<u8>(),
            (&mut value as *mut T).cast::<u8>(),
            size.min(ours),
        )
    };
    value.set_size(ours);
    Ok(Some(value))
}

/// Fill the caller's `size`-byte struct with the defaults: the bytes this
/// library knows get the default values, the rest are zeroed, and `size` is
/// stored in the leading field. Sizes below `sizeof(size_t)` leave it zeroed,
/// which `read` then refuses.
///
/// # Safety
/// `ptr` is NULL (a no-op) or valid for writes of `size` bytes.
pub(crate) unsafe fn init<T: SizedOptions>(ptr: *mut T, size: usize) {
    if ptr.is_null() {
        return;
    }
    let bytes = ptr.cast::<u8>();
    let defaults = T::defaults();
    // SAFETY: the caller's struct is `size` bytes long (`# Safety`); the
    // defaults are a local value of `size_of::<T>()` bytes.
    unsafe {
        std::ptr::write_bytes(bytes, 0, size);
        std::ptr::copy_nonoverlapping(
            (&defaults as *const T).cast::<u8>(),
            bytes,
            size.min(size_of::<T>()),
        );
        if size >= size_of::<usize>() {
            bytes.cast::<usize>().write_unaligned(size);
        }
    }
}
