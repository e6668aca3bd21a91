//! Status codes and the error record.

use std::ffi::{c_char, CStr, CString};
use std::sync::OnceLock;

use emq_core::{ErrorKind, Fact, FactValue};

/// The result of every fallible function: `EMQ_OK` (0) or an error code.
///
/// Codes 1..=23 are the core's error kinds (the numbers of docs/API.md, stable
/// forever); codes from 100 up belong to the C boundary itself.
pub type emq_status = i32;

/// Success.
pub const EMQ_OK: emq_status = 0;
/// `EMQKIND`: the enqueue script refused the id's namespace.
pub const EMQ_ERR_KIND: emq_status = 1;
/// `EMQSTALE`: the fencing token no longer matches, or the job is no longer held.
pub const EMQ_ERR_STALE: emq_status = 2;
/// The job's row does not exist (completed, removed, or never enqueued).
pub const EMQ_ERR_GONE: emq_status = 3;
/// `extend` on a job that is no longer active (a reaper took it back).
pub const EMQ_ERR_LEASE_LOST: emq_status = 4;
/// `requeue_dead` on a job that is not in the dead set.
pub const EMQ_ERR_NOT_DEAD: emq_status = 5;
/// `{emq}:version` holds another protocol version; `emq_error.found` holds it.
pub const EMQ_ERR_VERSION_FENCE: emq_status = 6;
/// Not a valid 14-byte branded id.
pub const EMQ_ERR_INVALID_ID: emq_status = 7;
/// A queue name outside `[A-Za-z0-9._-]{1,128}`, or `emq`.
pub const EMQ_ERR_INVALID_QUEUE: emq_status = 8;
/// A bad argument caught before the wire (zero lease, oversized payload, ...).
pub const EMQ_ERR_INVALID_ARGUMENT: emq_status = 9;
/// The connection could not be made or was lost.
pub const EMQ_ERR_CONNECTION: emq_status = 10;
/// The server did not answer in time.
pub const EMQ_ERR_TIMEOUT: emq_status = 11;
/// An `EMQ*` class word this version does not know; `emq_error.class_word` holds it.
pub const EMQ_ERR_PROTOCOL: emq_status = 12;
/// Any other error reply from the server.
pub const EMQ_ERR_SERVER: emq_status = 13;
/// `remove` on a job that is currently active.
pub const EMQ_ERR_JOB_ACTIVE: emq_status = 14;
/// Another runtime deployed different script bytes (only with `strict_bundle`).
pub const EMQ_ERR_BUNDLE_MISMATCH: emq_status = 15;
/// The client (or worker) was closed.
pub const EMQ_ERR_CLOSED: emq_status = 16;
/// The verb needs a newer wire version than the client speaks (`wire_version`).
pub const EMQ_ERR_UNSUPPORTED: emq_status = 17;
/// `EMQRATE`: the queue's concurrency ceiling or rate limit refused the claim;
/// `emq_error_retry_after_ms` says how long to wait.
pub const EMQ_ERR_RATE_LIMITED: emq_status = 18;
/// A transient server state (loading, busy, failover, slot migration)
/// outlasted the retries inside the response timeout; nothing ran, and
/// sending the same call again is safe.
pub const EMQ_ERR_UNAVAILABLE: emq_status = 20;
/// Written on the master, but fewer than `wait_replicas` replicas acknowledged
/// it in time (`emq_error_job_id` names the job); a failover now may lose it.
pub const EMQ_ERR_NOT_DURABLE: emq_status = 21;
/// `emq_enqueue_many` lost its connection part way; `emq_error_items` says
/// which items were written. (Resend the others with their ids as
/// `emq_enqueue_options.id`.)
pub const EMQ_ERR_PARTIAL_BATCH: emq_status = 22;
/// A bug inside the library (a panic in its threads, caught); the operation
/// did not finish. `emq_worker_join` answers it when the worker's run panicked.
pub const EMQ_ERR_INTERNAL: emq_status = 23;
/// The job `emq_wait_for_result` waited on went dead; `emq_error.last_error`
/// holds its `last_error`.
pub const EMQ_ERR_JOB_DEAD: emq_status = 24;
/// C boundary: a required pointer argument was NULL.
pub const EMQ_ERR_NULL_POINTER: emq_status = 100;
/// C boundary: a string argument was not valid UTF-8.
pub const EMQ_ERR_INVALID_UTF8: emq_status = 101;
/// C boundary: the library caught a panic (a bug: please report it). The
/// call had no effect on the handles passed in beyond what the message says.
pub const EMQ_ERR_PANIC: emq_status = 102;

/// The status of each core kind, in `ErrorKind::ALL` order (checked by a test
/// against `ErrorKind::status()`).
pub(crate) const KIND_STATUS: [(ErrorKind, emq_status); 23] = [
    (ErrorKind::Kind, EMQ_ERR_KIND),
    (ErrorKind::Stale, EMQ_ERR_STALE),
    (ErrorKind::Gone, EMQ_ERR_GONE),
    (ErrorKind::LeaseLost, EMQ_ERR_LEASE_LOST),
    (ErrorKind::NotDead, EMQ_ERR_NOT_DEAD),
    (ErrorKind::VersionFence, EMQ_ERR_VERSION_FENCE),
    (ErrorKind::InvalidId, EMQ_ERR_INVALID_ID),
    (ErrorKind::InvalidQueue, EMQ_ERR_INVALID_QUEUE),
    (ErrorKind::InvalidArgument, EMQ_ERR_INVALID_ARGUMENT),
    (ErrorKind::Connection, EMQ_ERR_CONNECTION),
    (ErrorKind::Timeout, EMQ_ERR_TIMEOUT),
    (ErrorKind::Protocol, EMQ_ERR_PROTOCOL),
    (ErrorKind::Server, EMQ_ERR_SERVER),
    (ErrorKind::JobActive, EMQ_ERR_JOB_ACTIVE),
    (ErrorKind::BundleMismatch, EMQ_ERR_BUNDLE_MISMATCH),
    (ErrorKind::Closed, EMQ_ERR_CLOSED),
    (ErrorKind::Unsupported, EMQ_ERR_UNSUPPORTED),
    (ErrorKind::RateLimited, EMQ_ERR_RATE_LIMITED),
    (ErrorKind::Unavailable, EMQ_ERR_UNAVAILABLE),
    (ErrorKind::NotDurable, EMQ_ERR_NOT_DURABLE),
    (ErrorKind::PartialBatch, EMQ_ERR_PARTIAL_BATCH),
    (ErrorKind::Internal, EMQ_ERR_INTERNAL),
    (ErrorKind::JobDead, EMQ_ERR_JOB_DEAD),
];

/// An error record. Allocated by the library, released with `emq_error_free`.
/// Every string field is NUL-terminated UTF-8 owned by the record.
#[repr(C)]
pub struct emq_error {
    /// The status the failing call returned.
    pub status: emq_status,
    /// The stable code (`"EMQSTALE"`, `"EMQ_GONE"`, `"EMQ_NULL_POINTER"`, ...);
    /// static storage, never freed.
    pub code: *const c_char,
    /// A human-readable message (for logs; never parse it).
    pub message: *mut c_char,
    /// `EMQ_ERR_VERSION_FENCE` only: the value found in `{emq}:version`; else NULL.
    pub found: *mut c_char,
    /// `EMQ_ERR_PROTOCOL` only: the unknown `EMQ*` class word; else NULL.
    pub class_word: *mut c_char,
    /// `EMQ_ERR_PARTIAL_BATCH` only: one entry per payload of the batch, in
    /// input order (its pre-minted id and whether it was written); else NULL.
    pub batch: *mut emq_batch_item,
    /// The number of entries in `batch` (0 when NULL).
    pub batch_len: usize,
    /// `EMQ_ERR_JOB_DEAD` only: the job's `last_error` (NULL if none was recorded); else NULL.
    pub last_error: *mut c_char,
    /// The id of the job the error is about (`EMQ_ERR_STALE`, `EMQ_ERR_GONE`,
    /// `EMQ_ERR_LEASE_LOST`, `EMQ_ERR_NOT_DEAD`, `EMQ_ERR_JOB_ACTIVE`,
    /// `EMQ_ERR_NOT_DURABLE`, `EMQ_ERR_JOB_DEAD`); else NULL.
    pub job_id: *mut c_char,
    /// `EMQ_ERR_RATE_LIMITED` only: how long to wait before claiming again,
    /// ms (0 = until a slot frees); else -1.
    pub retry_after_ms: i64,
}

/// The item's row exists: it was written; do not send it again.
pub const EMQ_WRITTEN: i32 = 0;
/// The item's row does not exist and its connection is gone: resend it.
pub const EMQ_NOT_WRITTEN: i32 = 1;
/// Could not be told: resend it with the same id (`emq_enqueue_options.id`;
/// the answer is `duplicate` if it had been written).
pub const EMQ_WRITE_UNKNOWN: i32 = 2;

/// One payload of a batch cut short by a lost connection.
#[repr(C)]
pub struct emq_batch_item {
    /// The id minted for the payload before the batch was sent.
    pub id: crate::types::emq_id,
    /// `EMQ_WRITTEN`, `EMQ_NOT_WRITTEN` or `EMQ_WRITE_UNKNOWN`.
    pub state: i32,
}

/// A Rust string as an owned C string (interior NULs become U+FFFD).
pub(crate) fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "\u{FFFD}")).expect("NULs were replaced")
}

pub(crate) fn c_string_raw(text: &str) -> *mut c_char {
    c_string(text).into_raw()
}

pub(crate) fn opt_c_string_raw(text: Option<&str>) -> *mut c_char {
    text.map_or(std::ptr::null_mut(), c_string_raw)
}

/// Release a string made by `c_string_raw` (NULL is a no-op).
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
pub(crate) unsafe fn free_c_string(p: *mut c_char) {
    if !p.is_null() {
        // SAFETY: a non-NULL pointer here came from this library (`Box::into_raw` / `CString::into_raw`) and is released exactly once (`# Safety`).
        drop(unsafe { CString::from_raw(p) });
    }
}

/// The stable code string of a status, with static storage.
pub(crate) fn status_code(status: emq_status) -> &'static CStr {
    static KINDS: OnceLock<Vec<(emq_status, CString)>> = OnceLock::new();
    let kinds = KINDS.get_or_init(|| {
        KIND_STATUS
            .iter()
            .map(|(kind, status)| (*status, c_string(kind.code())))
            .collect()
    });
    match status {
        EMQ_OK => c"EMQ_OK",
        EMQ_ERR_NULL_POINTER => c"EMQ_NULL_POINTER",
        EMQ_ERR_INVALID_UTF8 => c"EMQ_INVALID_UTF8",
        EMQ_ERR_PANIC => c"EMQ_PANIC",
        other => kinds
            .iter()
            .find(|(s, _)| *s == other)
            .map_or(c"EMQ_UNKNOWN_STATUS", |(_, code)| code.as_c_str()),
    }
}

pub(crate) fn status_of(kind: ErrorKind) -> emq_status {
    KIND_STATUS
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, s)| *s)
        .expect("every kind has a status")
}

impl emq_error {
    pub(crate) fn boxed(
        status: emq_status,
        message: &str,
        found: Option<&str>,
        class_word: Option<&str>,
    ) -> *mut emq_error {
        Box::into_raw(Box::new(emq_error {
            status,
            code: status_code(status).as_ptr(),
            message: c_string_raw(message),
            found: opt_c_string_raw(found),
            class_word: opt_c_string_raw(class_word),
            batch: std::ptr::null_mut(),
            batch_len: 0,
            last_error: std::ptr::null_mut(),
            job_id: std::ptr::null_mut(),
            retry_after_ms: -1,
        }))
    }

    /// The record of a core error: every fact its kind declares
    /// (`ErrorKind::facts`) lands in its field, read through the
    /// `emq_error_<fact>` accessors below.
    pub(crate) fn from_core(err: &emq_core::Error) -> *mut emq_error {
        let boxed = emq_error::boxed(status_of(err.kind()), err.message(), None, None);
        // SAFETY: `boxed` was just allocated above and is not shared yet.
        let record = unsafe { &mut *boxed };
        for fact in err.kind().facts() {
            let Some(value) = err.fact(*fact) else {
                continue;
            };
            match (fact, value) {
                (Fact::JobId, FactValue::Text(t)) => record.job_id = c_string_raw(t),
                (Fact::Found, FactValue::Text(t)) => record.found = c_string_raw(t),
                (Fact::Word, FactValue::Text(t)) => record.class_word = c_string_raw(t),
                (Fact::LastError, FactValue::Text(t)) => record.last_error = c_string_raw(t),
                (Fact::RetryAfterMs, FactValue::Number(ms)) => {
                    record.retry_after_ms = i64::try_from(ms).unwrap_or(i64::MAX)
                }
                (Fact::Items, FactValue::Items(items)) => {
                    let items: Vec<emq_batch_item> = items
                        .iter()
                        .map(|i| emq_batch_item {
                            id: crate::types::emq_id {
                                text: crate::types::id_buf(&i.id),
                            },
                            state: match i.state {
                                emq_core::WriteState::Written => EMQ_WRITTEN,
                                emq_core::WriteState::NotWritten => EMQ_NOT_WRITTEN,
                                emq_core::WriteState::Unknown => EMQ_WRITE_UNKNOWN,
                            },
                        })
                        .collect();
                    (record.batch, record.batch_len) = crate::types::into_raw_list(items);
                }
                // A fact's value always has its fact's shape (`Error::fact`).
                _ => {}
            }
        }
        boxed
    }
}

/// The record behind `err`, or None for NULL.
fn record<'a>(err: *const emq_error) -> Option<&'a emq_error> {
    // SAFETY: the caller passes NULL or a record this library made that is
    // not yet freed (the accessors' `# Safety`).
    unsafe { err.as_ref() }
}

/// The id of the job the error is about (`EMQ_ERR_STALE`, `EMQ_ERR_GONE`,
/// `EMQ_ERR_LEASE_LOST`, `EMQ_ERR_NOT_DEAD`, `EMQ_ERR_JOB_ACTIVE`,
/// `EMQ_ERR_NOT_DURABLE`, `EMQ_ERR_JOB_DEAD`), or NULL. Borrowed from the
/// record: valid until `emq_error_free(err)`; never free it.
///
/// # Safety
/// `err` is NULL or a record this library returned that is not yet freed.
#[no_mangle]
pub unsafe extern "C" fn emq_error_job_id(err: *const emq_error) -> *const c_char {
    record(err).map_or(std::ptr::null(), |e| e.job_id)
}

/// `EMQ_ERR_RATE_LIMITED`: how long to wait before claiming again, in ms (0 =
/// until a slot frees); -1 for any other error or NULL.
///
/// # Safety
/// `err` is NULL or a record this library returned that is not yet freed.
#[no_mangle]
pub unsafe extern "C" fn emq_error_retry_after_ms(err: *const emq_error) -> i64 {
    record(err).map_or(-1, |e| e.retry_after_ms)
}

/// `EMQ_ERR_VERSION_FENCE`: the value found in `{emq}:version`, or NULL.
/// Borrowed from the record (valid until `emq_error_free(err)`).
///
/// # Safety
/// `err` is NULL or a record this library returned that is not yet freed.
#[no_mangle]
pub unsafe extern "C" fn emq_error_found(err: *const emq_error) -> *const c_char {
    record(err).map_or(std::ptr::null(), |e| e.found)
}

/// `EMQ_ERR_PROTOCOL`: the unknown `EMQ*` class word, or NULL. Borrowed from
/// the record (valid until `emq_error_free(err)`).
///
/// # Safety
/// `err` is NULL or a record this library returned that is not yet freed.
#[no_mangle]
pub unsafe extern "C" fn emq_error_word(err: *const emq_error) -> *const c_char {
    record(err).map_or(std::ptr::null(), |e| e.class_word)
}

/// `EMQ_ERR_JOB_DEAD`: the job's `last_error`, or NULL (also when none was
/// recorded). Borrowed from the record (valid until `emq_error_free(err)`).
///
/// # Safety
/// `err` is NULL or a record this library returned that is not yet freed.
#[no_mangle]
pub unsafe extern "C" fn emq_error_last_error(err: *const emq_error) -> *const c_char {
    record(err).map_or(std::ptr::null(), |e| e.last_error)
}

/// `EMQ_ERR_PARTIAL_BATCH`: every payload's id and write state, in input
/// order, with their number in `*len` (`len` may be NULL); NULL and 0 for any
/// other error. Borrowed from the record (valid until `emq_error_free(err)`).
///
/// # Safety
/// `err` is NULL or a record this library returned that is not yet freed;
/// `len` is NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn emq_error_items(
    err: *const emq_error,
    len: *mut usize,
) -> *const emq_batch_item {
    let (items, n) = record(err).map_or((std::ptr::null(), 0), |e| {
        (e.batch.cast_const(), e.batch_len)
    });
    if !len.is_null() {
        // SAFETY: `len` is valid for one write (`# Safety`).
        unsafe { *len = n };
    }
    items
}

/// Release an error record made by the library (NULL is a no-op). Do not
/// free the `error` of an item inside a list: the list's free releases it.
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn emq_error_free(err: *mut emq_error) {
    crate::guard::guard_void(|| {
        if err.is_null() {
            return;
        }
        // SAFETY: a non-NULL pointer here came from this library (`Box::into_raw` / `CString::into_raw`) and is released exactly once (`# Safety`).
        let err = unsafe { Box::from_raw(err) };
        // SAFETY: the string was allocated by this library and is freed once (`# Safety`).
        unsafe { free_c_string(err.message) };
        // SAFETY: the string was allocated by this library and is freed once (`# Safety`).
        unsafe { free_c_string(err.found) };
        // SAFETY: the string was allocated by this library and is freed once (`# Safety`).
        unsafe { free_c_string(err.class_word) };
        // SAFETY: the string was allocated by this library and is freed once (`# Safety`).
        unsafe { free_c_string(err.last_error) };
        // SAFETY: the string was allocated by this library and is freed once (`# Safety`).
        unsafe { free_c_string(err.job_id) };
        // SAFETY: the list was built by `into_raw_list` with this length and is freed once.
        drop(unsafe { crate::types::from_raw_list(err.batch, err.batch_len) });
    })
}

/// The stable code of a status (`"EMQ_OK"`, `"EMQSTALE"`, `"EMQ_GONE"`, ...,
/// `"EMQ_UNKNOWN_STATUS"` for a number this library does not know).
/// Static storage: never free it.
#[no_mangle]
pub extern "C" fn emq_status_code(status: emq_status) -> *const c_char {
    status_code(status).as_ptr()
}
