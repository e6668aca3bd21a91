//! `emq_client`: the core's blocking client behind an opaque handle, one thin
//! function per verb of docs/API.md.

use std::ffi::c_char;
use std::time::Duration;

use emq_core::{blocking, BrowseSet, ConnectOptions, EnqueueOptions, RetryOutcome, TimeRange};

use crate::guard::*;
use crate::sized;
use crate::status::*;
use crate::types::*;

/// A connection to one EchoMQ deployment (opaque). Made by `emq_connect`,
/// released by `emq_client_free`.
///
/// Thread safety: one handle may be used from any number of threads at once
/// (calls pipeline over one multiplexed connection). Only `emq_client_free`
/// must not race with other calls on the same handle.
pub struct emq_client {
    pub(crate) inner: blocking::Client,
}

/// Connect options; start from `emq_connect_options_init(&o, sizeof o)` and
/// set only what you need. Strings are borrowed for the duration of
/// `emq_connect`. The struct may grow in later versions (new fields are
/// appended); a program built against an older, smaller one keeps working.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct emq_connect_options {
    /// `sizeof` the struct as the caller compiled it; set by the init function.
    pub size: usize,
    /// Node id mixed into minted ids, 0..=1023; -1 (default) = `EMQ_NODE_ID`,
    /// else a per-process random value.
    pub node_id: i32,
    /// Make a script-bundle mismatch a connect error (`EMQ_ERR_BUNDLE_MISMATCH`). Default false.
    pub strict_bundle: bool,
    /// `CLIENT SETNAME` for every connection; NULL (default) = none.
    pub client_name: *const c_char,
    /// One connection attempt (TCP + TLS + handshake + fence). Default 5000.
    pub connect_timeout_ms: u64,
    /// How long one command may wait for its answer. Default 30000; 0 = no limit.
    pub response_timeout_ms: u64,
    /// Largest payload accepted before the wire, in bytes. Default 16 MiB.
    pub max_payload: u64,
    /// Publish queue events on `emq:{q}:events` after each transition. Default true.
    pub publish_events: bool,
    /// The wire version to speak and fence: `"echomq:2.1.0"` or
    /// `"echomq:2.0.0"` (2.1.0 verbs then fail `EMQ_ERR_UNSUPPORTED`).
    /// NULL (default) = the newest.
    pub wire_version: *const c_char,
    /// Durable writes: `WAIT` for this many replicas after every enqueue verb
    /// and complete; fewer answers `EMQ_ERR_NOT_DURABLE`. Default 0 (no WAIT).
    pub wait_replicas: u32,
    /// How long one `WAIT` may block, ms. Default 1000.
    pub wait_timeout_ms: u64,
}

/// The documented defaults (node_id -1, no client name, 5000 / 30000 ms, 16 MiB, not
/// strict, events published), by value, `size` set. Returned by value the struct cannot
/// grow under an already-built program: prefer `emq_connect_options_init`.
#[no_mangle]
pub extern "C" fn emq_connect_options_default() -> emq_connect_options {
    let d = ConnectOptions::default();
    emq_connect_options {
        size: std::mem::size_of::<emq_connect_options>(),
        node_id: d.node_id.map_or(-1, i32::from),
        strict_bundle: d.strict_bundle,
        client_name: std::ptr::null(),
        connect_timeout_ms: d.connect_timeout.as_millis() as u64,
        response_timeout_ms: d.response_timeout.map_or(0, |t| t.as_millis() as u64),
        max_payload: d.max_payload as u64,
        publish_events: d.publish_events,
        wire_version: std::ptr::null(),
        wait_replicas: d.wait_replicas,
        wait_timeout_ms: d.wait_timeout_ms,
    }
}

/// Fill `*options` (`size` bytes, normally `sizeof *options`) with the
/// defaults and record `size`, so a later library knows which fields this
/// program has. NULL is a no-op.
///
/// # Safety
/// `options` is NULL or valid for writes of `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn emq_connect_options_init(options: *mut emq_connect_options, size: usize) {
    // SAFETY: `options` is NULL or `size` writable bytes (`# Safety`).
    unsafe { sized::init(options, size) }
}

// SAFETY: `#[repr(C)]`, `size: usize` first; every field accepts any bit pattern
// a C caller can write except `strict_bundle` and `publish_events`, C `bool`s (0 or 1).
unsafe impl sized::SizedOptions for emq_connect_options {
    const NAME: &'static str = "emq_connect_options";
    fn defaults() -> Self {
        emq_connect_options_default()
    }
    fn set_size(&mut self, size: usize) {
        self.size = size;
    }
}

impl emq_connect_options {
    /// # Safety
    /// The pointer arguments are NULL or valid as the exported caller's
    /// `# Safety` section states; the returned borrow must not outlive the call.
    unsafe fn to_core(self) -> FfiResult<ConnectOptions> {
        // -1 is the process default; any other value must be a node id.
        let node_id = match self.node_id {
            -1 => None,
            n => Some(emq_core::id::check_node_id(n)?),
        };
        Ok(ConnectOptions {
            node_id,
            // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
            client_name: unsafe { opt_str_arg(self.client_name, "options.client_name") }?
                .map(String::from),
            connect_timeout: Duration::from_millis(self.connect_timeout_ms),
            response_timeout: emq_core::defaults::timeout_from_ms(self.response_timeout_ms),
            max_payload: usize::try_from(self.max_payload).unwrap_or(usize::MAX),
            strict_bundle: self.strict_bundle,
            publish_events: self.publish_events,
            // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
            wire_version: match unsafe { opt_str_arg(self.wire_version, "options.wire_version") }? {
                Some(v) => emq_core::WireVersion::parse(v)?,
                None => emq_core::WireVersion::NEWEST,
            },
            wait_replicas: self.wait_replicas,
            wait_timeout_ms: self.wait_timeout_ms,
        })
    }
}

/// # Safety
/// The pointer arguments are NULL or valid as the exported caller's
/// `# Safety` section states; the returned borrow must not outlive the call.
pub(crate) unsafe fn client_arg<'a>(client: *const emq_client) -> FfiResult<&'a blocking::Client> {
    // SAFETY: the handle is NULL or a live one this library returned (`# Safety`).
    Ok(&unsafe { ref_arg(client, "client") }?.inner)
}

/// Store a freshly allocated answer in `*out`.
pub(crate) fn put<T>(out: &mut *mut T, value: T) {
    *out = Box::into_raw(Box::new(value));
}

fn verdicts(results: Vec<emq_core::Result<()>>) -> emq_verdict_list {
    let items = results
        .into_iter()
        .map(|r| match r {
            Ok(()) => emq_verdict {
                status: EMQ_OK,
                error: std::ptr::null_mut(),
            },
            Err(e) => emq_verdict {
                status: status_of(e.kind()),
                error: emq_error::from_core(&e),
            },
        })
        .collect();
    let (items, len) = into_raw_list(items);
    emq_verdict_list { items, len }
}

/// # Safety
/// The pointer arguments are NULL or valid as the exported caller's
/// `# Safety` section states; the returned borrow must not outlive the call.
unsafe fn job_refs<'a>(jobs: *const emq_job_ref, count: usize) -> FfiResult<Vec<(&'a str, u64)>> {
    // SAFETY: the array is NULL or holds `len`/`count` elements (`# Safety`).
    unsafe { slice_arg(jobs, count, "jobs") }?
        .iter()
        .enumerate()
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        .map(|(i, r)| Ok((unsafe { str_arg(r.id, &format!("jobs[{i}].id")) }?, r.token)))
        .collect()
}

pub(crate) fn enqueued(answer: emq_core::Enqueued, out: *mut emq_enqueued) {
    if !out.is_null() {
        // SAFETY: the caller passes NULL or a valid `emq_enqueued *`.
        unsafe {
            *out = emq_enqueued {
                id: id_buf(&answer.id),
                duplicate: answer.duplicate,
            }
        };
    }
}

// ---- lifecycle -----------------------------------------------------------

/// Connect to `url` (`redis://[user:password@]host:port/db`, `rediss://…`,
/// `redis+unix:///path`) and run the version fence before anything else.
/// `url` may be NULL: then `EMQ_URL` when set, else `redis://127.0.0.1:6379/`.
/// `options` may be NULL (defaults). On success `*out` is a new handle the
/// caller releases with `emq_client_free`; on failure `*out` is NULL.
/// A fence mismatch is `EMQ_ERR_VERSION_FENCE` with the value in `(*err)->found`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_connect(
    url: *const c_char,
    options: *const emq_connect_options,
    out: *mut *mut emq_client,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // Warnings and errors reach stderr unless `emq_set_log_handler` says otherwise.
        emq_core::logging::install_forwarding();
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let url = unsafe { opt_str_arg(url, "url") }?;
        // SAFETY: the options pointer is NULL or points to a valid options struct
        // of the size it states (`# Safety`).
        let options = match unsafe { sized::read(options) }? {
            None => ConnectOptions::default(),
            // SAFETY: the options' strings are NULL or NUL-terminated (`# Safety`).
            Some(o) => unsafe { o.to_core() }?,
        };
        // NULL: `EMQ_URL`, else `redis://127.0.0.1:6379/` (the core's rule).
        let inner = match url {
            Some(url) => blocking::Client::connect(url, options)?,
            None => blocking::Client::connect_default(options)?,
        };
        put(out, emq_client { inner });
        Ok(())
    })
}

/// Release a handle (NULL is a no-op). Workers made from it keep their own
/// reference to the connection, which closes when the last user is gone.
/// No other call on this handle may run concurrently or afterwards.
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn emq_client_free(client: *mut emq_client) {
    guard_void(|| {
        if !client.is_null() {
            // SAFETY: a non-NULL pointer here came from this library (`Box::into_raw` / `CString::into_raw`) and is released exactly once (`# Safety`).
            drop(unsafe { Box::from_raw(client) });
        }
    })
}

/// Close the connection: every later call on this client, on clones sharing
/// its connection and on workers made from it fails with `EMQ_ERR_CLOSED`.
/// Returns once the queue events of calls that answered before it are
/// published (usually one round trip, at most one second): call it before
/// the process exits, or those events may be lost.
/// The handle itself must still be released with `emq_client_free`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_close(
    client: *const emq_client,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        unsafe { client_arg(client) }?.close();
        Ok(())
    })
}

/// The node id this client mixes into the ids it mints.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_client_node_id(
    client: *const emq_client,
    out: *mut u16,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`); the client handle is NULL or live, from `emq_connect` (`# Safety`).
        *unsafe { out_arg(out, "out") }? = unsafe { client_arg(client) }?.node_id();
        Ok(())
    })
}

/// `{emq}:bundle` fields another runtime recorded with different SHAs (found
/// at connect). `*out` is a new list (possibly empty) released with
/// `emq_bundle_mismatch_list_free`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_bundle_mismatches(
    client: *const emq_client,
    out: *mut *mut emq_bundle_mismatch_list,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        let items = unsafe { client_arg(client) }?
            .bundle_mismatches()?
            .into_iter()
            .map(|m| emq_bundle_mismatch {
                field: c_string_raw(&m.field),
                ours: c_string_raw(&m.ours),
                theirs: c_string_raw(&m.theirs),
            })
            .collect();
        let (items, len) = into_raw_list(items);
        put(out, emq_bundle_mismatch_list { items, len });
        Ok(())
    })
}

// ---- enqueue ---------------------------------------------------------------

/// How `emq_enqueue` (and each item of `emq_enqueue_many`) writes a job.
/// Start from `emq_enqueue_options_init(&o, sizeof o)` and set only what you
/// need; every default is zero or NULL (enqueue now, under a freshly minted
/// id). Strings are borrowed for the duration of the call. The struct may
/// grow in later versions (new fields are appended, their defaults zero); a
/// program built against an older, smaller one keeps working.
///
/// Refused with `EMQ_ERR_INVALID_ARGUMENT` before anything is sent:
/// `run_at_ms` and `delay_ms` both set; `dedup_id` with `id`, `run_at_ms` or
/// `delay_ms`; `dedup_ttl_ms` without `dedup_id`; `priority` above
/// `EMQ_MAX_PRIORITY`. A bad `id` is `EMQ_ERR_INVALID_ID`. A `priority` on a
/// client not speaking wire 2.2.0 is `EMQ_ERR_UNSUPPORTED`, also before
/// anything is sent.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct emq_enqueue_options {
    /// `sizeof` the struct as the caller compiled it; set by the init function.
    pub size: usize,
    /// A caller-chosen `JOB` id (the producer's receipt): a row that already
    /// holds it answers `duplicate = true` and is left untouched. NULL
    /// (default) = a freshly minted id.
    pub id: *const c_char,
    /// Run at this absolute unix-ms instant (the caller's clock). 0 (default) = not set.
    pub run_at_ms: u64,
    /// Run this many ms after the server's now. 0 (default) = not set (now).
    pub delay_ms: u64,
    /// Wire 2.1.0 (else `EMQ_ERR_UNSUPPORTED`): while the job holding this
    /// dedup id (`[A-Za-z0-9._-]{1,255}`) is pending, scheduled or active,
    /// another enqueue with it answers that job's id with `duplicate = true`.
    /// Enqueues now under a minted id. NULL (default) = none.
    pub dedup_id: *const c_char,
    /// Release the dedup id after this long even if its job still lives
    /// (throttle mode). 0 (default) = held until the job completes, is
    /// removed or goes dead.
    pub dedup_ttl_ms: u64,
    /// Wire 2.2.0 (else `EMQ_ERR_UNSUPPORTED`): `1..=EMQ_MAX_PRIORITY`, higher
    /// claimed first, before every job without one; mint order within one
    /// priority. 0 (default) = none. 64 bits wide though the range fits 32,
    /// so the struct keeps no tail padding a later field could fall into
    /// (`sized.rs`); a value above the range (a negative one cast) is
    /// `EMQ_ERR_INVALID_ARGUMENT`.
    pub priority: u64,
}

/// The highest `emq_enqueue_options.priority` (1 is the lowest; wire 2.2.0).
/// A literal so cbindgen writes it into the header; equal to the core's.
pub const EMQ_MAX_PRIORITY: u32 = 1_000_000;
const _: () = assert!(EMQ_MAX_PRIORITY == emq_core::MAX_PRIORITY);

/// Fill `*options` (`size` bytes, normally `sizeof *options`) with the
/// defaults (all zero / NULL) and record `size`, so a later library knows
/// which fields this program has. NULL is a no-op.
///
/// # Safety
/// `options` is NULL or valid for writes of `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn emq_enqueue_options_init(options: *mut emq_enqueue_options, size: usize) {
    // SAFETY: `options` is NULL or `size` writable bytes (`# Safety`).
    unsafe { sized::init(options, size) }
}

// SAFETY: `#[repr(C)]`, `size: usize` first; every field is an integer or a pointer.
unsafe impl sized::SizedOptions for emq_enqueue_options {
    const NAME: &'static str = "emq_enqueue_options";
    fn defaults() -> Self {
        emq_enqueue_options {
            size: std::mem::size_of::<emq_enqueue_options>(),
            id: std::ptr::null(),
            run_at_ms: 0,
            delay_ms: 0,
            dedup_id: std::ptr::null(),
            dedup_ttl_ms: 0,
            priority: 0,
        }
    }
    fn set_size(&mut self, size: usize) {
        self.size = size;
    }
}

/// `*options` (NULL = the defaults) as the core's options; `what` names the
/// struct in messages (`options`, `options[2]`).
///
/// # Safety
/// `options` is NULL or valid for reads of the `size` bytes it states, and its
/// strings are NULL or NUL-terminated, live for the call.
pub(crate) unsafe fn enqueue_options(
    options: *const emq_enqueue_options,
    what: &str,
) -> FfiResult<EnqueueOptions> {
    // SAFETY: the options pointer is NULL or points to a valid options struct
    // of the size it states (`# Safety`).
    let Some(o) = unsafe { sized::read(options) }.map_err(|f| f.context(what))? else {
        return Ok(EnqueueOptions::default());
    };
    let nonzero = |ms: u64| (ms > 0).then_some(ms);
    // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
    let (id, dedup_id) = unsafe {
        (
            opt_str_arg(o.id, &format!("{what}.id"))?,
            opt_str_arg(o.dedup_id, &format!("{what}.dedup_id"))?,
        )
    };
    Ok(EnqueueOptions {
        id: id.map(String::from),
        run_at_ms: nonzero(o.run_at_ms),
        delay_ms: nonzero(o.delay_ms),
        dedup_id: dedup_id.map(String::from),
        dedup_ttl_ms: nonzero(o.dedup_ttl_ms),
        // 0 is none, as for every field; the core checks the range and the
        // wire version, this only that the value fits the core's `u32`.
        priority: match o.priority {
            0 => None,
            p => Some(u32::try_from(p).map_err(|_| {
                Fail::invalid_argument(format!(
                    "{what}.priority {p} is out of range: 1..={EMQ_MAX_PRIORITY} (0: no priority)"
                ))
            })?),
        },
    })
}

fn enqueue_result(r: emq_core::Result<emq_core::Enqueued>) -> emq_enqueue_result {
    match r {
        Ok(e) => emq_enqueue_result {
            status: EMQ_OK,
            id: id_buf(&e.id),
            duplicate: e.duplicate,
            error: std::ptr::null_mut(),
        },
        Err(e) => emq_enqueue_result {
            status: status_of(e.kind()),
            id: [0; EMQ_ID_BUF],
            duplicate: false,
            error: emq_error::from_core(&e),
        },
    }
}

/// Enqueue `payload_len` bytes (copied; `payload` may be NULL when the length
/// is 0) as `options` say (NULL = now, under a freshly minted `JOB` id; see
/// `emq_enqueue_options`). `out` may be NULL; else it receives the id and
/// `duplicate` (a chosen id whose row exists, or a dedup id held by a live
/// job: still `EMQ_OK`).
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_enqueue(
    client: *const emq_client,
    queue: *const c_char,
    payload: *const u8,
    payload_len: usize,
    options: *const emq_enqueue_options,
    out: *mut emq_enqueued,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live, from `emq_connect`; the
        // payload is NULL or `payload_len` bytes; strings and the options are
        // NULL or valid for the call (`# Safety`).
        let (client, queue, payload, options) = unsafe {
            (
                client_arg(client)?,
                str_arg(queue, "queue")?,
                slice_arg(payload, payload_len, "payload")?,
                enqueue_options(options, "options")?,
            )
        };
        enqueued(client.enqueue(queue, payload, options)?, out);
        Ok(())
    })
}

/// Enqueue `count` payloads in one round trip per kind of write, item `i`
/// with `options[i]`: `options` is NULL (every item with the defaults) or
/// `count` pointers, any of which may be NULL (that item with the defaults).
/// Every item is checked before anything is sent: a bad one fails the whole
/// call (`EMQ_ERR_INVALID_ARGUMENT`, message `item N: ...`) and writes
/// nothing. `*out` is a new list with one verdict per item, in input order,
/// released with `emq_enqueue_list_free`. A connection lost part way is
/// `EMQ_ERR_PARTIAL_BATCH` (`emq_error_items`: every item's id and whether it
/// was written; resend the others with those ids as `options.id`).
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_enqueue_many(
    client: *const emq_client,
    queue: *const c_char,
    payloads: *const emq_bytes,
    count: usize,
    options: *const *const emq_enqueue_options,
    out: *mut *mut emq_enqueue_list,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the client handle is NULL or live, from `emq_connect`; strings
        // are NUL-terminated; `payloads` is NULL or `count` elements (`# Safety`).
        let (client, queue, payloads) = unsafe {
            (
                client_arg(client)?,
                str_arg(queue, "queue")?,
                slice_arg(payloads, count, "payloads")?,
            )
        };
        // SAFETY: `options` is NULL or `count` pointers, each NULL or a valid
        // options struct (`# Safety`).
        let options = (!options.is_null())
            .then(|| unsafe { slice_arg(options, count, "options") })
            .transpose()?;
        let items = payloads
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let what = format!("options[{i}]");
                let o = options.map_or(std::ptr::null(), |o| o[i]);
                // SAFETY: each payload is NULL or `len` bytes; each options
                // pointer NULL or valid for the call (`# Safety`).
                let item = unsafe {
                    (
                        slice_arg(b.data, b.len, &format!("payloads[{i}].data"))?,
                        enqueue_options(o, &what)?,
                    )
                };
                Ok(item)
            })
            .collect::<FfiResult<Vec<_>>>()?;
        let results = client.enqueue_many(queue, &items)?;
        let (items, len) = into_raw_list(results.into_iter().map(enqueue_result).collect());
        put(out, emq_enqueue_list { items, len });
        Ok(())
    })
}

// ---- claim and settle ------------------------------------------------------

/// Claim the oldest pending job, leased for `lease_ms` (> 0). `*out` is a new
/// job released with `emq_job_free`, or NULL when the queue has nothing
/// pending (or is paused) — still `EMQ_OK`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_claim(
    client: *const emq_client,
    queue: *const c_char,
    lease_ms: u64,
    out: *mut *mut emq_job,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        let client = unsafe { client_arg(client) }?;
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let queue = unsafe { str_arg(queue, "queue") }?;
        if let Some(job) = client.claim(queue, lease_ms)? {
            put(out, emq_job::owned(job));
        }
        Ok(())
    })
}

/// Claim up to `max` jobs in one call, all with one lease deadline. `*out` is
/// a new list (possibly empty) released with `emq_job_list_free`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_claim_many(
    client: *const emq_client,
    queue: *const c_char,
    max: u64,
    lease_ms: u64,
    out: *mut *mut emq_job_list,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`); string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let jobs = unsafe { client_arg(client) }?.claim_many(
            unsafe { str_arg(queue, "queue") }?,
            max,
            lease_ms,
        )?;
        let (jobs, len) = into_raw_list(jobs.into_iter().map(emq_job::owned).collect());
        put(out, emq_job_list { jobs, len });
        Ok(())
    })
}

/// Complete a claimed job: its row is deleted. A token that no longer
/// matches is `EMQ_ERR_STALE` (the row is left intact); a missing row is
/// `EMQ_ERR_GONE`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_complete(
    client: *const emq_client,
    queue: *const c_char,
    id: *const c_char,
    token: u64,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        let client = unsafe { client_arg(client) }?;
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let (queue, id) = unsafe { (str_arg(queue, "queue")?, str_arg(id, "id")?) };
        client.complete(queue, id, token)?;
        Ok(())
    })
}

/// Complete `count` jobs in one round trip. `*out` is a new list with one
/// verdict per job, in input order, released with `emq_verdict_list_free`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_complete_many(
    client: *const emq_client,
    queue: *const c_char,
    jobs: *const emq_job_ref,
    count: usize,
    out: *mut *mut emq_verdict_list,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        let client = unsafe { client_arg(client) }?;
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let queue = unsafe { str_arg(queue, "queue") }?;
        // SAFETY: the array is NULL or holds `count` elements whose ids are NUL-terminated (`# Safety`).
        let jobs = unsafe { job_refs(jobs, count) }?;
        put(out, verdicts(client.complete_many(queue, &jobs)?));
        Ok(())
    })
}

/// Fail a claimed job: back to `schedule` after `delay_ms`, or to the dead set
/// when it has had `max_attempts` attempts. `error` (UTF-8) becomes the row's
/// `last_error`. `*out` (required) receives `EMQ_RETRY_SCHEDULED` or `EMQ_RETRY_DEAD`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_retry(
    client: *const emq_client,
    queue: *const c_char,
    id: *const c_char,
    token: u64,
    delay_ms: u64,
    max_attempts: u64,
    error: *const c_char,
    out: *mut emq_retry_outcome,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // Written, never read: the caller's initial value need not be an outcome.
        let out = out_slot(out, "out")?;
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        let outcome = unsafe { client_arg(client) }?.retry(
            // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
            unsafe { str_arg(queue, "queue") }?,
            // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
            unsafe { str_arg(id, "id") }?,
            token,
            delay_ms,
            max_attempts,
            // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
            unsafe { str_arg(error, "error") }?,
        )?;
        let outcome = match outcome {
            RetryOutcome::Scheduled => EMQ_RETRY_SCHEDULED,
            RetryOutcome::Dead => EMQ_RETRY_DEAD,
        };
        // SAFETY: `out` is valid for writes (`# Safety`); `write` does not read the old value.
        unsafe { out.as_ptr().write(outcome) };
        Ok(())
    })
}

/// Extend a claimed job's lease to `lease_ms` from now. `EMQ_ERR_LEASE_LOST`
/// when a reaper already took it back; `EMQ_ERR_STALE` / `EMQ_ERR_GONE` as for complete.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_extend(
    client: *const emq_client,
    queue: *const c_char,
    id: *const c_char,
    token: u64,
    lease_ms: u64,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        unsafe { client_arg(client) }?.extend(
            // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
            unsafe { str_arg(queue, "queue") }?,
            // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
            unsafe { str_arg(id, "id") }?,
            token,
            lease_ms,
        )?;
        Ok(())
    })
}

/// Extend `count` leases in one round trip. `*out` is a new verdict list
/// released with `emq_verdict_list_free`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_extend_many(
    client: *const emq_client,
    queue: *const c_char,
    jobs: *const emq_job_ref,
    count: usize,
    lease_ms: u64,
    out: *mut *mut emq_verdict_list,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        let client = unsafe { client_arg(client) }?;
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let queue = unsafe { str_arg(queue, "queue") }?;
        // SAFETY: the array is NULL or holds `count` elements whose ids are NUL-terminated (`# Safety`).
        let jobs = unsafe { job_refs(jobs, count) }?;
        put(out, verdicts(client.extend_many(queue, &jobs, lease_ms)?));
        Ok(())
    })
}

// ---- pumps and inspection --------------------------------------------------

/// Move up to `limit` due scheduled jobs to pending; `*out` = how many moved.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_promote(
    client: *const emq_client,
    queue: *const c_char,
    limit: u64,
    out: *mut u64,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`); string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        *out =
            unsafe { client_arg(client) }?.promote(unsafe { str_arg(queue, "queue") }?, limit)?;
        Ok(())
    })
}

/// Return up to `limit` lapsed leases to pending; `*out` = how many.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_reap(
    client: *const emq_client,
    queue: *const c_char,
    limit: u64,
    out: *mut u64,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`); string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        *out = unsafe { client_arg(client) }?.reap(unsafe { str_arg(queue, "queue") }?, limit)?;
        Ok(())
    })
}

/// The queue's set sizes and counters, into the caller's `*out`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_counts(
    client: *const emq_client,
    queue: *const c_char,
    out: *mut emq_queue_counts,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`); string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let c = unsafe { client_arg(client) }?.counts(unsafe { str_arg(queue, "queue") }?)?;
        *out = emq_queue_counts {
            pending: c.pending,
            active: c.active,
            scheduled: c.scheduled,
            dead: c.dead,
            completed: c.completed,
            failed: c.failed,
        };
        Ok(())
    })
}

/// The `job` verb (named `emq_get_job` because `emq_job` is the claimed-job
/// struct): read a job row. `*out` is a new record released with `emq_job_info_free`,
/// or NULL when there is no such row (still `EMQ_OK`).
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_get_job(
    client: *const emq_client,
    queue: *const c_char,
    id: *const c_char,
    out: *mut *mut emq_job_info,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`); string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let row = unsafe { client_arg(client) }?
            .job(unsafe { str_arg(queue, "queue") }?, unsafe {
                str_arg(id, "id")
            }?)?;
        if let Some(row) = row {
            let (payload, payload_len) = into_raw_bytes(row.payload);
            put(
                out,
                emq_job_info {
                    id: id_buf(&row.id),
                    state: state_code(&row.state),
                    attempts: row.attempts,
                    payload,
                    payload_len,
                    last_error: opt_c_string_raw(row.last_error.as_deref()),
                    progress: opt_c_string_raw(row.progress.as_deref()),
                },
            );
        }
        Ok(())
    })
}

/// Up to `limit` ids of one set (`EMQ_BROWSE_*`), oldest first unless
/// `newest_first`; `range` (may be NULL = all) filters `[from_ms, to_ms)` by
/// mint time (pending, dead) or score (schedule, active). `*out` is a new list
/// released with `emq_id_list_free`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_browse(
    client: *const emq_client,
    queue: *const c_char,
    set: emq_browse_set,
    newest_first: bool,
    limit: u64,
    range: *const emq_time_range,
    out: *mut *mut emq_id_list,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        let set = match set {
            EMQ_BROWSE_PENDING => BrowseSet::Pending,
            EMQ_BROWSE_DEAD => BrowseSet::Dead,
            EMQ_BROWSE_SCHEDULE => BrowseSet::Schedule,
            EMQ_BROWSE_ACTIVE => BrowseSet::Active,
            other => {
                return Err(Fail::invalid_argument(format!(
                    "unknown browse set {other}: expected one of EMQ_BROWSE_*"
                )))
            }
        };
        // SAFETY: the options pointer is NULL or points to a valid options struct (`# Safety`).
        let range = unsafe { range.as_ref() }.map(|r| TimeRange {
            from_ms: r.from_ms,
            to_ms: r.to_ms,
        });
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        let ids = unsafe { client_arg(client) }?.browse(
            // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
            unsafe { str_arg(queue, "queue") }?,
            set,
            newest_first,
            limit,
            range,
        )?;
        let ids = ids.iter().map(|id| emq_id { text: id_buf(id) }).collect();
        let (ids, len) = into_raw_list(ids);
        put(out, emq_id_list { ids, len });
        Ok(())
    })
}

// ---- administration --------------------------------------------------------

/// Pause a queue: claims answer nothing until `emq_resume`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_pause(
    client: *const emq_client,
    queue: *const c_char,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`); string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        unsafe { client_arg(client) }?.pause(unsafe { str_arg(queue, "queue") }?)?;
        Ok(())
    })
}

/// Resume a paused queue.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_resume(
    client: *const emq_client,
    queue: *const c_char,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`); string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        unsafe { client_arg(client) }?.resume(unsafe { str_arg(queue, "queue") }?)?;
        Ok(())
    })
}

/// Whether the job's row exists (in any state), into `*out`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_exists(
    client: *const emq_client,
    queue: *const c_char,
    id: *const c_char,
    out: *mut bool,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`); string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let (client, queue, id) = unsafe {
            (
                client_arg(client)?,
                str_arg(queue, "queue")?,
                str_arg(id, "id")?,
            )
        };
        *out = client.exists(queue, id)?;
        Ok(())
    })
}

/// Whether the queue is paused, into `*out`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_is_paused(
    client: *const emq_client,
    queue: *const c_char,
    out: *mut bool,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`); string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        *out = unsafe { client_arg(client) }?.is_paused(unsafe { str_arg(queue, "queue") }?)?;
        Ok(())
    })
}

/// Move a dead job back to pending (attempts kept, last_error cleared);
/// `EMQ_ERR_NOT_DEAD` when it is not in the dead set.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_requeue_dead(
    client: *const emq_client,
    queue: *const c_char,
    id: *const c_char,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`).
        let client = unsafe { client_arg(client) }?;
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let (queue, id) = unsafe { (str_arg(queue, "queue")?, str_arg(id, "id")?) };
        client.requeue_dead(queue, id)?;
        Ok(())
    })
}

/// Delete a job that is not active; `EMQ_ERR_JOB_ACTIVE` / `EMQ_ERR_GONE` otherwise.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_remove(
    client: *const emq_client,
    queue: *const c_char,
    id: *const c_char,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the client handle is NULL or live, from `emq_connect` (`# Safety`); string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        unsafe { client_arg(client) }?.remove(unsafe { str_arg(queue, "queue") }?, unsafe {
            str_arg(id, "id")
        }?)?;
        Ok(())
    })
}
