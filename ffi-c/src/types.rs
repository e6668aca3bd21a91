//! The structs C reads and writes, and the `emq_*_free` functions of what the
//! library allocates. Every struct here is `#[repr(C)]` with a layout test.

use std::ffi::c_char;

use emq_core::{BrandedId, JobState};

use crate::guard::guard_void;
use crate::status::*;

/// Bytes in a branded id (`JOB` + 11 base62 characters).
pub const EMQ_ID_LEN: usize = 14;
/// Bytes of an id buffer: the id and its terminating NUL.
pub const EMQ_ID_BUF: usize = 15;

/// A branded id held inline: 14 ASCII characters and a NUL. No free needed.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct emq_id {
    pub text: [c_char; EMQ_ID_BUF],
}

/// The answer to an enqueue: the id (the producer's receipt) and whether a
/// row with that id already existed (`duplicate`, still a success).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct emq_enqueued {
    /// NUL-terminated id.
    pub id: [c_char; EMQ_ID_BUF],
    pub duplicate: bool,
}

/// A borrowed byte string: `len` bytes at `data` (`data` may be NULL when `len` is 0).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct emq_bytes {
    pub data: *const u8,
    pub len: usize,
}

/// A job to settle: its id (NUL-terminated) and the fencing token of its claim.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct emq_job_ref {
    pub id: *const c_char,
    pub token: u64,
}

/// A claimed job. From `emq_claim` it is owned by the caller and released
/// with `emq_job_free`; inside a `emq_job_list` the list owns it; passed to a
/// worker handler it is valid only during that call.
#[repr(C)]
pub struct emq_job {
    /// NUL-terminated id.
    pub id: [c_char; EMQ_ID_BUF],
    /// The fencing token: pass it back to complete / retry / extend.
    pub token: u64,
    /// `payload_len` bytes (any values; not NUL-terminated). NULL when empty.
    pub payload: *const u8,
    pub payload_len: usize,
    /// Which attempt this claim is (1 on the first claim). Equal to `token`
    /// at claim time under echomq:2.x, but only `token` settles.
    pub attempts: u64,
}

/// Jobs from `emq_claim_many`, released with `emq_job_list_free`
/// (`jobs` is NULL when `len` is 0).
#[repr(C)]
pub struct emq_job_list {
    pub jobs: *mut emq_job,
    pub len: usize,
}

/// One verdict of `emq_enqueue_many`: `status` is `EMQ_OK` and `id` /
/// `duplicate` are set, or `error` (owned by the list) says why not.
#[repr(C)]
pub struct emq_enqueue_result {
    pub status: emq_status,
    pub id: [c_char; EMQ_ID_BUF],
    pub duplicate: bool,
    /// NULL on success; owned by the list (do not free it separately).
    pub error: *mut emq_error,
}

/// The answer of `emq_enqueue_many`, in input order; release with `emq_enqueue_list_free`.
#[repr(C)]
pub struct emq_enqueue_list {
    pub items: *mut emq_enqueue_result,
    pub len: usize,
}

/// One verdict of a batch settle (`emq_complete_many`, `emq_extend_many`).
#[repr(C)]
pub struct emq_verdict {
    pub status: emq_status,
    /// NULL on success; owned by the list (do not free it separately).
    pub error: *mut emq_error,
}

/// Verdicts in input order; release with `emq_verdict_list_free`.
#[repr(C)]
pub struct emq_verdict_list {
    pub items: *mut emq_verdict,
    pub len: usize,
}

/// Sizes of a queue's four sets and its two counters.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct emq_queue_counts {
    pub pending: u64,
    pub active: u64,
    pub scheduled: u64,
    pub dead: u64,
    /// Jobs completed since the queue began.
    pub completed: u64,
    /// Jobs dead-lettered since the queue began.
    pub failed: u64,
}

/// The `state` of a job row (`EMQ_STATE_*`).
///
/// An answer-only enum: the library writes it, C reads it, so a Rust enum is
/// sound here (see docs/C.md, "Enums"). Appending a variant is compatible;
/// a value an older header does not name is still a valid `int32_t`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum emq_job_state {
    EMQ_STATE_PENDING = 0,
    EMQ_STATE_ACTIVE = 1,
    EMQ_STATE_SCHEDULED = 2,
    EMQ_STATE_DEAD = 3,
    /// A state this library does not know, written by another runtime sharing
    /// the deployment (say the reference runtime's `awaiting_children`).
    EMQ_STATE_UNKNOWN = 4,
}
pub use emq_job_state::*;

/// A job row as stored, from `emq_get_job`; release with `emq_job_info_free`.
#[repr(C)]
pub struct emq_job_info {
    /// NUL-terminated id.
    pub id: [c_char; EMQ_ID_BUF],
    /// One of `EMQ_STATE_*` (`EMQ_STATE_UNKNOWN` for a state another
    /// runtime wrote).
    pub state: emq_job_state,
    pub attempts: u64,
    /// `payload_len` bytes; NULL when empty.
    pub payload: *const u8,
    pub payload_len: usize,
    /// The last failure's text, NUL-terminated; NULL when there is none.
    pub last_error: *const c_char,
    /// The last progress the holder wrote (echomq:2.1.0), its JSON text
    /// NUL-terminated; NULL when none was written.
    pub progress: *const c_char,
}

/// Where a failed job went (`emq_retry`).
///
/// An answer-only enum: the library writes it, C reads it, so a Rust enum is
/// sound here (see docs/C.md, "Enums"). Appending a variant is compatible;
/// a value an older header does not name is still a valid `int32_t`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum emq_retry_outcome {
    /// Back in `schedule`, to run again after the delay.
    EMQ_RETRY_SCHEDULED = 0,
    /// At max attempts: in the dead set with its `last_error`.
    EMQ_RETRY_DEAD = 1,
}
pub use emq_retry_outcome::*;

/// The set `emq_browse` reads (`EMQ_BROWSE_*`).
pub type emq_browse_set = i32;
/// Lex order = mint order; the range filters by mint time.
pub const EMQ_BROWSE_PENDING: emq_browse_set = 0;
/// Lex order = mint order; the range filters by mint time.
pub const EMQ_BROWSE_DEAD: emq_browse_set = 1;
/// Score = run-at; the range filters by run-at.
pub const EMQ_BROWSE_SCHEDULE: emq_browse_set = 2;
/// Score = lease deadline; the range filters by deadline.
pub const EMQ_BROWSE_ACTIVE: emq_browse_set = 3;

/// A half-open range of unix milliseconds, `[from_ms, to_ms)`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct emq_time_range {
    pub from_ms: u64,
    pub to_ms: u64,
}

/// Ids from `emq_browse`; release with `emq_id_list_free` (`ids` is NULL when `len` is 0).
#[repr(C)]
pub struct emq_id_list {
    pub ids: *mut emq_id,
    pub len: usize,
}

/// One `{emq}:bundle` field another runtime recorded with a different SHA.
#[repr(C)]
pub struct emq_bundle_mismatch {
    /// Script name, or `bundle` for the whole-bundle hash.
    pub field: *const c_char,
    /// The SHA this client would have written.
    pub ours: *const c_char,
    /// The SHA already recorded.
    pub theirs: *const c_char,
}

/// Mismatches from `emq_bundle_mismatches`; release with `emq_bundle_mismatch_list_free`.
#[repr(C)]
pub struct emq_bundle_mismatch_list {
    pub items: *mut emq_bundle_mismatch,
    pub len: usize,
}

// ---- construction helpers (Rust side only) -----------------------------

pub(crate) fn id_buf(id: &BrandedId) -> [c_char; EMQ_ID_BUF] {
    text_buf(id.as_str())
}

/// Copy up to 14 ASCII bytes into a NUL-terminated buffer.
pub(crate) fn text_buf(text: &str) -> [c_char; EMQ_ID_BUF] {
    let mut buf = [0 as c_char; EMQ_ID_BUF];
    for (slot, byte) in buf.iter_mut().zip(text.bytes().take(EMQ_ID_LEN)) {
        *slot = byte as c_char;
    }
    buf
}

/// A Vec as a (pointer, length) pair C can index; NULL when empty.
pub(crate) fn into_raw_list<T>(items: Vec<T>) -> (*mut T, usize) {
    if items.is_empty() {
        return (std::ptr::null_mut(), 0);
    }
    let boxed = items.into_boxed_slice();
    let len = boxed.len();
    (Box::into_raw(boxed) as *mut T, len)
}

/// Take back what `into_raw_list` gave out.
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
pub(crate) unsafe fn from_raw_list<T>(items: *mut T, len: usize) -> Vec<T> {
    if items.is_null() || len == 0 {
        return Vec::new();
    }
    // SAFETY: a non-NULL pointer here came from this library (`Box::into_raw` / `CString::into_raw`) and is released exactly once (`# Safety`).
    unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(items, len)) }.into_vec()
}

/// Payload bytes as a (pointer, length) pair; NULL when empty.
pub(crate) fn into_raw_bytes(bytes: Vec<u8>) -> (*const u8, usize) {
    let (p, len) = into_raw_list(bytes);
    (p as *const u8, len)
}

/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
pub(crate) unsafe fn free_raw_bytes(p: *const u8, len: usize) {
    // SAFETY: the list was built by `into_raw_list` with this length and is freed once (`# Safety`).
    drop(unsafe { from_raw_list(p as *mut u8, len) });
}

impl emq_job {
    pub(crate) fn owned(job: emq_core::Job) -> emq_job {
        let (payload, payload_len) = into_raw_bytes(job.payload);
        emq_job {
            id: id_buf(&job.id),
            token: job.token,
            payload,
            payload_len,
            attempts: job.attempts,
        }
    }

    /// A view of a job for a handler call (borrows `job`'s payload).
    pub(crate) fn borrowed(job: &emq_core::Job) -> emq_job {
        emq_job {
            id: id_buf(&job.id),
            token: job.token,
            payload: if job.payload.is_empty() {
                std::ptr::null()
            } else {
                job.payload.as_ptr()
            },
            payload_len: job.payload.len(),
            attempts: job.attempts,
        }
    }

    /// # Safety
    /// The argument is NULL or a value this library returned that has not been
    /// freed; it must not be used afterwards.
    unsafe fn release_owned(self) {
        // SAFETY: the bytes were allocated by this library with this length and are freed once (`# Safety`).
        unsafe { free_raw_bytes(self.payload, self.payload_len) };
    }
}

pub(crate) fn state_code(state: &JobState) -> emq_job_state {
    match state {
        JobState::Pending => EMQ_STATE_PENDING,
        JobState::Active => EMQ_STATE_ACTIVE,
        JobState::Scheduled => EMQ_STATE_SCHEDULED,
        JobState::Dead => EMQ_STATE_DEAD,
        JobState::Unknown(_) => EMQ_STATE_UNKNOWN,
    }
}

// ---- free functions ----------------------------------------------------

/// Release a job from `emq_claim` (NULL is a no-op). Never call it on the job
/// a worker handler receives, nor on a job inside a list.
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn emq_job_free(job: *mut emq_job) {
    guard_void(|| {
        if !job.is_null() {
            // SAFETY: a non-NULL `job` came from this library (Box::into_raw) and is
            // freed once (`# Safety`); its fields were allocated by this library too.
            unsafe { Box::from_raw(job).release_owned() };
        }
    })
}

/// Release a job list and every job in it (NULL is a no-op).
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn emq_job_list_free(list: *mut emq_job_list) {
    guard_void(|| {
        if list.is_null() {
            return;
        }
        // SAFETY: a non-NULL pointer here came from this library (`Box::into_raw` / `CString::into_raw`) and is released exactly once (`# Safety`).
        let list = unsafe { Box::from_raw(list) };
        // SAFETY: the list was built by `into_raw_list` with this length and is freed once (`# Safety`).
        for job in unsafe { from_raw_list(list.jobs, list.len) } {
            // SAFETY: the value's pointers were allocated by this library and are freed once (`# Safety`).
            unsafe { job.release_owned() };
        }
    })
}

/// Release an enqueue list and every error in it (NULL is a no-op).
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn emq_enqueue_list_free(list: *mut emq_enqueue_list) {
    guard_void(|| {
        if list.is_null() {
            return;
        }
        // SAFETY: a non-NULL pointer here came from this library (`Box::into_raw` / `CString::into_raw`) and is released exactly once (`# Safety`).
        let list = unsafe { Box::from_raw(list) };
        // SAFETY: the list was built by `into_raw_list` with this length and is freed once (`# Safety`).
        for item in unsafe { from_raw_list(list.items, list.len) } {
            // SAFETY: the error records were allocated by this library and are freed once here.
            unsafe { emq_error_free(item.error) };
        }
    })
}

/// Release a verdict list and every error in it (NULL is a no-op).
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn emq_verdict_list_free(list: *mut emq_verdict_list) {
    guard_void(|| {
        if list.is_null() {
            return;
        }
        // SAFETY: a non-NULL pointer here came from this library (`Box::into_raw` / `CString::into_raw`) and is released exactly once (`# Safety`).
        let list = unsafe { Box::from_raw(list) };
        // SAFETY: the list was built by `into_raw_list` with this length and is freed once (`# Safety`).
        for item in unsafe { from_raw_list(list.items, list.len) } {
            // SAFETY: the error records were allocated by this library and are freed once here.
            unsafe { emq_error_free(item.error) };
        }
    })
}

/// Release a job row from `emq_get_job` (NULL is a no-op).
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn emq_job_info_free(info: *mut emq_job_info) {
    guard_void(|| {
        if info.is_null() {
            return;
        }
        // SAFETY: a non-NULL pointer here came from this library (`Box::into_raw` / `CString::into_raw`) and is released exactly once (`# Safety`).
        let info = unsafe { Box::from_raw(info) };
        // SAFETY: the bytes were allocated by this library with this length and are freed once (`# Safety`).
        unsafe { free_raw_bytes(info.payload, info.payload_len) };
        // SAFETY: the string was allocated by this library and is freed once (`# Safety`).
        unsafe { free_c_string(info.last_error as *mut c_char) };
        // SAFETY: the string was allocated by this library and is freed once (`# Safety`).
        unsafe { free_c_string(info.progress as *mut c_char) };
    })
}

/// Release an id list (NULL is a no-op).
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn emq_id_list_free(list: *mut emq_id_list) {
    guard_void(|| {
        if !list.is_null() {
            // SAFETY: a non-NULL pointer here came from this library (`Box::into_raw` / `CString::into_raw`) and is released exactly once (`# Safety`).
            let list = unsafe { Box::from_raw(list) };
            // SAFETY: the list was built by `into_raw_list` with this length and is freed once (`# Safety`).
            drop(unsafe { from_raw_list(list.ids, list.len) });
        }
    })
}

/// Release a bundle-mismatch list and its strings (NULL is a no-op).
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn emq_bundle_mismatch_list_free(list: *mut emq_bundle_mismatch_list) {
    guard_void(|| {
        if list.is_null() {
            return;
        }
        // SAFETY: a non-NULL pointer here came from this library (`Box::into_raw` / `CString::into_raw`) and is released exactly once (`# Safety`).
        let list = unsafe { Box::from_raw(list) };
        // SAFETY: the list was built by `into_raw_list` with this length and is freed once (`# Safety`).
        for item in unsafe { from_raw_list(list.items, list.len) } {
            // SAFETY: the string was allocated by this library and is freed once (`# Safety`).
            unsafe { free_c_string(item.field as *mut c_char) };
            // SAFETY: the string was allocated by this library and is freed once (`# Safety`).
            unsafe { free_c_string(item.ours as *mut c_char) };
            // SAFETY: the string was allocated by this library and is freed once (`# Safety`).
            unsafe { free_c_string(item.theirs as *mut c_char) };
        }
    })
}

/// Release a string the library returned (`emq_queue_key`, `emq_job_key`;
/// NULL is a no-op).
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn emq_string_free(text: *mut c_char) {
    // SAFETY: the string was allocated by this library and is freed once (`# Safety`).
    guard_void(|| unsafe { free_c_string(text) })
}
