//! Job features of wire 2.1.0 in the C ABI: the stall-capped reap and the
//! queue limits (enqueue's `dedup_id` is an option, in client.rs). Each
//! refuses with `EMQ_ERR_UNSUPPORTED` (before any I/O) on a client connected
//! with `wire_version` `"echomq:2.0.0"`.

use std::ffi::c_char;

use emq_core::BrandedId;

use crate::client::{client_arg, emq_client, put};
use crate::guard::*;
use crate::status::*;
use crate::types::*;

fn id_list(ids: &[BrandedId]) -> emq_id_list {
    let ids = ids.iter().map(|id| emq_id { text: id_buf(id) }).collect();
    let (ids, len) = into_raw_list(ids);
    emq_id_list { ids, len }
}

/// Reap up to `limit` lapsed leases, counting a stall on each: at
/// `max_stalls` a job goes to dead (`last_error` `"stalled"`), the others
/// back to pending. `*recovered` and `*dead` get the ids (release each with
/// `emq_id_list_free`); both are NULL on error.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_reap_stalled(
    client: *const emq_client,
    queue: *const c_char,
    limit: u64,
    max_stalls: u64,
    recovered: *mut *mut emq_id_list,
    dead: *mut *mut emq_id_list,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (`# Safety`).
        let (recovered, dead) =
            unsafe { (out_arg(recovered, "recovered")?, out_arg(dead, "dead")?) };
        *recovered = std::ptr::null_mut();
        *dead = std::ptr::null_mut();
        // SAFETY: the client handle is NULL or live; strings are NUL-terminated (`# Safety`).
        let (client, queue) = unsafe { (client_arg(client)?, str_arg(queue, "queue")?) };
        let reaped = client.reap_stalled(queue, limit, max_stalls)?;
        put(recovered, id_list(&reaped.recovered));
        put(dead, id_list(&reaped.dead));
        Ok(())
    })
}

/// At most `n` jobs of the queue active at once across every worker (0
/// removes the ceiling). A claim at the ceiling fails `EMQ_ERR_RATE_LIMITED`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_set_concurrency(
    client: *const emq_client,
    queue: *const c_char,
    n: u64,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live; strings are NUL-terminated (`# Safety`).
        let (client, queue) = unsafe { (client_arg(client)?, str_arg(queue, "queue")?) };
        client.set_concurrency(queue, n)?;
        Ok(())
    })
}

/// At most `max` claims per `per_ms` window (0 removes the limit). A claim
/// in a full window fails `EMQ_ERR_RATE_LIMITED`; the wait is in the message.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_set_rate_limit(
    client: *const emq_client,
    queue: *const c_char,
    max: u64,
    per_ms: u64,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live; strings are NUL-terminated (`# Safety`).
        let (client, queue) = unsafe { (client_arg(client)?, str_arg(queue, "queue")?) };
        client.set_rate_limit(queue, max, per_ms)?;
        Ok(())
    })
}

/// From a handler (say after an HTTP 429): the held job waits `ms` in
/// schedule without counting an attempt, and claims on the queue pause for
/// `ms`. The holder must not settle the job afterwards.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_rate_limit(
    client: *const emq_client,
    queue: *const c_char,
    id: *const c_char,
    token: u64,
    ms: u64,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live; strings are NUL-terminated (`# Safety`).
        let (client, queue, id) = unsafe {
            (
                client_arg(client)?,
                str_arg(queue, "queue")?,
                str_arg(id, "id")?,
            )
        };
        client.rate_limit(queue, id, token, ms)?;
        Ok(())
    })
}
