//! The operator verbs: `emq_queues`, `emq_drain`, `emq_purge_dead`,
//! `emq_requeue_all_dead`. Bulk verbs work in the core's bounded batches;
//! `limit` 0 means no limit.

use std::ffi::c_char;

use crate::client::{client_arg, emq_client};
use crate::guard::*;
use crate::status::*;
use crate::types::{from_raw_list, into_raw_list};

/// Queue names from `emq_queues`; release with `emq_string_list_free`
/// (`items` is NULL when `len` is 0).
#[repr(C)]
pub struct emq_string_list {
    pub items: *mut *mut c_char,
    pub len: usize,
}

/// `limit` 0 = no limit.
fn limit_arg(limit: u64) -> Option<u64> {
    (limit > 0).then_some(limit)
}

/// Every queue of the deployment (SCAN over the key grammar), sorted.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_queues(
    client: *const emq_client,
    out: *mut *mut emq_string_list,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        let names = unsafe { client_arg(client) }?.queues()?;
        let items = names.iter().map(|n| c_string_raw(n)).collect();
        let (items, len) = into_raw_list(items);
        *out = Box::into_raw(Box::new(emq_string_list { items, len }));
        Ok(())
    })
}

/// Release a string list and its strings (NULL is a no-op).
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn emq_string_list_free(list: *mut emq_string_list) {
    guard_void(|| {
        if list.is_null() {
            return;
        }
        // SAFETY: a non-NULL pointer here came from this library (`Box::into_raw`) and is released exactly once (`# Safety`).
        let list = unsafe { Box::from_raw(list) };
        // SAFETY: the list was built by `into_raw_list` with this length and is freed once (`# Safety`).
        for item in unsafe { from_raw_list(list.items, list.len) } {
            // SAFETY: each item came from `c_string_raw` and is freed once.
            unsafe { free_c_string(item) };
        }
    })
}

/// Delete up to `limit` (0 = all) waiting jobs, oldest first: pending, then
/// scheduled when `include_scheduled`. Active jobs survive. `*out` = how many.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_drain(
    client: *const emq_client,
    queue: *const c_char,
    include_scheduled: bool,
    limit: u64,
    out: *mut u64,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        // SAFETY: the client handle is NULL or live (`# Safety`); the queue is NULL or NUL-terminated (`# Safety`).
        let (client, queue) = unsafe { (client_arg(client)?, str_arg(queue, "queue")?) };
        *out = client.drain(queue, include_scheduled, limit_arg(limit))?;
        Ok(())
    })
}

/// Delete up to `limit` (0 = all) dead jobs, rows and logs, oldest first by
/// mint time; with a non-NULL `older_than_ms`, only those minted longer ago
/// than that before the server's now. `*out` = how many.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_purge_dead(
    client: *const emq_client,
    queue: *const c_char,
    older_than_ms: *const u64,
    limit: u64,
    out: *mut u64,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        // SAFETY: the client handle is NULL or live (`# Safety`); the queue is NULL or NUL-terminated (`# Safety`).
        let (client, queue) = unsafe { (client_arg(client)?, str_arg(queue, "queue")?) };
        // SAFETY: `older_than_ms` is NULL or valid for reads (`# Safety`).
        let older = unsafe { older_than_ms.as_ref() }.copied();
        *out = client.purge_dead(queue, older, limit_arg(limit))?;
        Ok(())
    })
}

/// Put up to `limit` (0 = all) dead jobs back to pending, oldest first, as
/// `emq_requeue_dead` does. `*out` = how many moved.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_requeue_all_dead(
    client: *const emq_client,
    queue: *const c_char,
    limit: u64,
    out: *mut u64,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        // SAFETY: the client handle is NULL or live (`# Safety`); the queue is NULL or NUL-terminated (`# Safety`).
        let (client, queue) = unsafe { (client_arg(client)?, str_arg(queue, "queue")?) };
        *out = client.requeue_all_dead(queue, limit_arg(limit))?;
        Ok(())
    })
}
