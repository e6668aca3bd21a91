//! Repeatable jobs (wire 2.1.0) in the C ABI: `emq_upsert_repeat`,
//! `emq_remove_repeat`, `emq_list_repeats`, `emq_fire_repeats`. Each refuses
//! with `EMQ_ERR_UNSUPPORTED` (before any I/O) on a client connected with
//! `wire_version` `"echomq:2.0.0"`.

use std::ffi::c_char;

use emq_core::{Repeat, RepeatOptions};

use crate::client::{client_arg, emq_client, put};
use crate::guard::*;
use crate::status::*;
use crate::types::*;

/// A repeatable job as stored (`emq_list_repeats`). Optional numbers are 0
/// when not set; optional strings NULL.
#[repr(C)]
pub struct emq_repeat {
    /// The repeat's name, NUL-terminated.
    pub name: *const c_char,
    /// The interval in ms; 0 for a cron repeat.
    pub every_ms: u64,
    /// The cron pattern; NULL for an interval repeat.
    pub cron: *const c_char,
    /// The cron pattern's IANA time zone; NULL for an interval repeat.
    pub tz: *const c_char,
    /// The payload each fired job carries: `payload_len` bytes; NULL when empty.
    pub payload: *const u8,
    pub payload_len: usize,
    /// The slot it waits for (unix ms, server clock).
    pub next_run_ms: u64,
    pub start_at: u64,
    pub end_at: u64,
    pub limit: u64,
    /// Jobs fired since the spec last changed.
    pub count: u64,
    /// The slot of the last fire (0 = none yet) and its job's id ("" = none).
    pub last_run_ms: u64,
    pub last_id: [c_char; EMQ_ID_BUF],
}

/// Repeats from `emq_list_repeats`; release with `emq_repeat_list_free`
/// (`items` is NULL when `len` is 0).
#[repr(C)]
pub struct emq_repeat_list {
    pub items: *mut emq_repeat,
    pub len: usize,
}

fn nonzero(n: u64) -> Option<u64> {
    (n > 0).then_some(n)
}

fn repeat_c(r: Repeat) -> emq_repeat {
    let (payload, payload_len) = into_raw_bytes(r.payload);
    emq_repeat {
        name: c_string_raw(&r.name),
        every_ms: r.every_ms.unwrap_or(0),
        cron: opt_c_string_raw(r.cron.as_deref()),
        tz: opt_c_string_raw(r.tz.as_deref()),
        payload,
        payload_len,
        next_run_ms: r.next_run_ms,
        start_at: r.start_at.unwrap_or(0),
        end_at: r.end_at.unwrap_or(0),
        limit: r.limit.unwrap_or(0),
        count: r.count,
        last_run_ms: r.last_run_ms.unwrap_or(0),
        last_id: r.last_id.as_ref().map(id_buf).unwrap_or([0; EMQ_ID_BUF]),
    }
}

/// Create or update the repeatable job `name` (`[A-Za-z0-9._-]{1,255}`):
/// exactly one of `every_ms` (> 0) and `cron` (non-NULL: 5 fields, or 6 with
/// seconds first); `tz` (NULL = `"UTC"`) only with `cron`; `start_at`,
/// `end_at` (unix ms) and `limit` are 0 when not set. Upserting the same spec
/// keeps its slot and count and replaces the payload. `next_run_ms` (may be
/// NULL) gets the slot it waits for. Bad input is `EMQ_ERR_INVALID_ARGUMENT`
/// with nothing written.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_upsert_repeat(
    client: *const emq_client,
    queue: *const c_char,
    name: *const c_char,
    payload: *const u8,
    payload_len: usize,
    every_ms: u64,
    cron: *const c_char,
    tz: *const c_char,
    start_at: u64,
    end_at: u64,
    limit: u64,
    next_run_ms: *mut u64,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        let client = unsafe { client_arg(client) }?;
        // SAFETY: `payload` is NULL or valid for `payload_len` bytes (`# Safety`).
        let payload = unsafe { slice_arg(payload, payload_len, "payload") }?;
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let (queue, name, cron, tz) = unsafe {
            (
                str_arg(queue, "queue")?,
                str_arg(name, "name")?,
                opt_str_arg(cron, "cron")?,
                opt_str_arg(tz, "tz")?,
            )
        };
        let options = RepeatOptions {
            every_ms: nonzero(every_ms),
            cron: cron.map(str::to_string),
            tz: tz.map(str::to_string),
            start_at: nonzero(start_at),
            end_at: nonzero(end_at),
            limit: nonzero(limit),
        };
        let repeat = client.upsert_repeat(queue, name, payload, &options)?;
        if !next_run_ms.is_null() {
            // SAFETY: a non-NULL `next_run_ms` is valid for writes (`# Safety`).
            unsafe { *next_run_ms = repeat.next_run_ms };
        }
        Ok(())
    })
}

/// Take the repeatable job `name` off the schedule and delete it (jobs it
/// already fired stay). `*removed` (may be NULL) is false when there was none.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_remove_repeat(
    client: *const emq_client,
    queue: *const c_char,
    name: *const c_char,
    removed: *mut bool,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live; strings are NUL-terminated (`# Safety`).
        let (client, queue, name) = unsafe {
            (
                client_arg(client)?,
                str_arg(queue, "queue")?,
                str_arg(name, "name")?,
            )
        };
        let answer = client.remove_repeat(queue, name)?;
        if !removed.is_null() {
            // SAFETY: a non-NULL `removed` is valid for writes (`# Safety`).
            unsafe { *removed = answer };
        }
        Ok(())
    })
}

/// Every repeatable job of `queue`, soonest slot first. `*out` is a new list
/// released with `emq_repeat_list_free` (NULL on error).
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_list_repeats(
    client: *const emq_client,
    queue: *const c_char,
    out: *mut *mut emq_repeat_list,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (`# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the client handle is NULL or live; strings are NUL-terminated (`# Safety`).
        let (client, queue) = unsafe { (client_arg(client)?, str_arg(queue, "queue")?) };
        let items = client
            .list_repeats(queue)?
            .into_iter()
            .map(repeat_c)
            .collect();
        let (items, len) = into_raw_list(items);
        put(out, emq_repeat_list { items, len });
        Ok(())
    })
}

/// The repeat pump (the worker runs it every `pump_interval_ms`): fire up to
/// `limit` repeats whose slot is due by the server clock, one job per slot
/// however many pumps race. `*fired` (may be NULL) gets how many jobs were
/// enqueued.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_fire_repeats(
    client: *const emq_client,
    queue: *const c_char,
    limit: u64,
    fired: *mut u64,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live; strings are NUL-terminated (`# Safety`).
        let (client, queue) = unsafe { (client_arg(client)?, str_arg(queue, "queue")?) };
        let n = client.fire_repeats(queue, limit)?;
        if !fired.is_null() {
            // SAFETY: a non-NULL `fired` is valid for writes (`# Safety`).
            unsafe { *fired = n };
        }
        Ok(())
    })
}

/// Release a repeat list and its strings and payloads (NULL is a no-op).
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn emq_repeat_list_free(list: *mut emq_repeat_list) {
    guard_void(|| {
        if list.is_null() {
            return;
        }
        // SAFETY: a non-NULL pointer here came from this library (`Box::into_raw`) and is released exactly once (`# Safety`).
        let list = unsafe { Box::from_raw(list) };
        // SAFETY: the list was built by `into_raw_list` with this length and is freed once (`# Safety`).
        for item in unsafe { from_raw_list(list.items, list.len) } {
            // SAFETY: the strings and bytes were allocated by this library and are freed once (`# Safety`).
            unsafe {
                free_c_string(item.name as *mut c_char);
                free_c_string(item.cron as *mut c_char);
                free_c_string(item.tz as *mut c_char);
                free_raw_bytes(item.payload, item.payload_len);
            }
        }
    })
}
