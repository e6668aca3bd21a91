//! Progress, logs and kept results (echomq:2.1.0): `emq_update_progress`,
//! `emq_log`, `emq_logs`, `emq_result`, `emq_wait_for_result`. A progress value
//! is its JSON text (`"42"`, `"{\"done\":3}"`); a result is bytes.

use std::ffi::c_char;
use std::time::Duration;

use crate::admin::emq_string_list;
use crate::client::{client_arg, emq_client};
use crate::guard::*;
use crate::status::*;
use crate::types::{free_raw_bytes, into_raw_bytes, into_raw_list};

/// A kept result: bytes owned by the library; release with `emq_value_free`.
/// `data` is NULL when `len` is 0.
#[repr(C)]
pub struct emq_value {
    pub data: *const u8,
    pub len: usize,
}

fn boxed_value(value: Vec<u8>) -> *mut emq_value {
    let (data, len) = if value.is_empty() {
        (std::ptr::null(), 0)
    } else {
        into_raw_bytes(value)
    };
    Box::into_raw(Box::new(emq_value { data, len }))
}

/// As the job's holder (its `token`), record how far it got: `progress` is
/// one JSON value as text (a number such as `"42"` or a small object), at most
/// 64 KiB. It is stored in the row field `progress` (`emq_get_job` shows it)
/// and a `progress` queue event follows. `EMQ_ERR_STALE` unless the token
/// matches an active job; `EMQ_ERR_GONE` without a row; `EMQ_ERR_INVALID_ARGUMENT`
/// when the text is not one JSON value.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_update_progress(
    client: *const emq_client,
    queue: *const c_char,
    id: *const c_char,
    token: u64,
    progress: *const c_char,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        let client = unsafe { client_arg(client) }?;
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let (queue, id, progress) = unsafe {
            (
                str_arg(queue, "queue")?,
                str_arg(id, "id")?,
                str_arg(progress, "progress")?,
            )
        };
        client.update_progress(queue, id, token, progress)?;
        Ok(())
    })
}

/// Append `line` to the job's log, keeping the newest `max_lines` (0 = the
/// default, 1000). `*len` (may be NULL) is the log's length afterwards.
/// `EMQ_ERR_GONE` once the job has no row.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_log(
    client: *const emq_client,
    queue: *const c_char,
    id: *const c_char,
    line: *const c_char,
    max_lines: u64,
    len: *mut u64,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        let client = unsafe { client_arg(client) }?;
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let (queue, id, line) = unsafe {
            (
                str_arg(queue, "queue")?,
                str_arg(id, "id")?,
                str_arg(line, "line")?,
            )
        };
        let n = client.log(queue, id, line, (max_lines > 0).then_some(max_lines))?;
        // SAFETY: out-parameters are NULL or valid for writes (`# Safety`).
        if let Some(out) = unsafe { len.as_mut() } {
            *out = n;
        }
        Ok(())
    })
}

/// Lines `start..=end` of the job's log, oldest first (LRANGE indexes: `0, -1`
/// is the whole log), in one round trip. `*out` is a new list (empty when
/// there is no log) released with `emq_string_list_free`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_logs(
    client: *const emq_client,
    queue: *const c_char,
    id: *const c_char,
    start: i64,
    end: i64,
    out: *mut *mut emq_string_list,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        let client = unsafe { client_arg(client) }?;
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let (queue, id) = unsafe { (str_arg(queue, "queue")?, str_arg(id, "id")?) };
        let lines = client.logs(queue, id, start, end)?;
        let items = lines.iter().map(|l| c_string_raw(l)).collect();
        let (items, len) = into_raw_list(items);
        *out = Box::into_raw(Box::new(emq_string_list { items, len }));
        Ok(())
    })
}

/// The value a worker kept for the job (`keep_result_ms`): `*out` is new bytes
/// released with `emq_value_free`, or NULL when none is kept (still `EMQ_OK`).
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_result(
    client: *const emq_client,
    queue: *const c_char,
    id: *const c_char,
    out: *mut *mut emq_value,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        let client = unsafe { client_arg(client) }?;
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let (queue, id) = unsafe { (str_arg(queue, "queue")?, str_arg(id, "id")?) };
        if let Some(value) = client.result(queue, id)? {
            *out = boxed_value(value);
        }
        Ok(())
    })
}

/// Wait up to `timeout_ms` for the job's kept result; `*out` is new bytes
/// released with `emq_value_free`. A job that went dead is `EMQ_ERR_JOB_DEAD`
/// (its `last_error` in `(*err)->last_error`); one with neither a row nor a
/// kept result is `EMQ_ERR_GONE`; the deadline passing is `EMQ_ERR_TIMEOUT`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_wait_for_result(
    client: *const emq_client,
    queue: *const c_char,
    id: *const c_char,
    timeout_ms: u64,
    out: *mut *mut emq_value,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        let client = unsafe { client_arg(client) }?;
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let (queue, id) = unsafe { (str_arg(queue, "queue")?, str_arg(id, "id")?) };
        let value = client.wait_for_result(queue, id, Duration::from_millis(timeout_ms))?;
        *out = boxed_value(value);
        Ok(())
    })
}

/// Release bytes made by the library (NULL is a no-op).
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn emq_value_free(value: *mut emq_value) {
    guard_void(|| {
        if value.is_null() {
            return;
        }
        // SAFETY: a non-NULL pointer here came from this library (`Box::into_raw`) and is released exactly once (`# Safety`).
        let value = unsafe { Box::from_raw(value) };
        if !value.data.is_null() {
            // SAFETY: the bytes were allocated by this library with this length and are freed once (`# Safety`).
            unsafe { free_raw_bytes(value.data, value.len) };
        }
    })
}
