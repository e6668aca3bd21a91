//! `emq_worker`: the core's worker with a C callback as its handler.
//!
//! The core runs each handler call on tokio's blocking pool
//! (`Worker::new_blocking`); this file only converts the job, the callback's
//! verdict and the options, and counts the callbacks still running so that
//! `emq_worker_join` can promise that none is.

use std::ffi::{c_char, c_void, CStr};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use emq_core::{Backoff, HandlerError, Output, Worker, WorkerHandle, WorkerOptions};

use crate::client::emq_client;
use crate::guard::*;
use crate::sized;
use crate::status::*;
use crate::types::*;

/// What a handler returns (`EMQ_HANDLER_*`).
pub type emq_handler_status = i32;
/// Success: the job is completed.
pub const EMQ_HANDLER_OK: emq_handler_status = 0;
/// A failure that may succeed later: retried with the backoff (dead at
/// `max_attempts`); the message set on the result becomes `last_error`.
pub const EMQ_HANDLER_RETRY: emq_handler_status = 1;
/// A failure no retry can fix: the job goes straight to dead.
pub const EMQ_HANDLER_FATAL: emq_handler_status = 2;

/// The backoff between attempts (`EMQ_BACKOFF_*`).
pub type emq_backoff = i32;
/// `base * 2^(attempt-1)`, capped at `cap` (the default).
pub const EMQ_BACKOFF_EXPONENTIAL: emq_backoff = 0;
/// Always `base`.
pub const EMQ_BACKOFF_FIXED: emq_backoff = 1;
/// Uniform in `[0, min(cap, base * 2^(attempt-1))]` ("full jitter").
pub const EMQ_BACKOFF_JITTER: emq_backoff = 2;

/// Where a handler reports its failure message, or its value to keep as the
/// job's result (opaque; valid only during the handler call). See
/// `emq_handler_result_set_message` and `emq_handler_result_set_value`.
pub struct emq_handler_result {
    message: Option<String>,
    value: Option<Vec<u8>>,
}

/// A job handler. Called on a library-owned thread, up to `concurrency`
/// calls at once, so it must be thread-safe. `job` and everything it points
/// to are valid only during the call (copy what you keep; never free it).
/// Return `EMQ_HANDLER_OK`, `EMQ_HANDLER_RETRY` or `EMQ_HANDLER_FATAL` (any
/// other value counts as a retryable failure); on failure, optionally set the
/// message with `emq_handler_result_set_message(result, ...)`. The handler may
/// call any `emq_*` client function (e.g. enqueue a follow-up job) but must
/// not unwind (C++ exceptions, longjmp) out of the call.
pub type emq_handler = Option<
    unsafe extern "C" fn(
        job: *const emq_job,
        user_data: *mut c_void,
        result: *mut emq_handler_result,
    ) -> emq_handler_status,
>;

/// Worker options; start from `emq_worker_options_init(&o, sizeof o)`. The
/// struct may grow in later versions (new fields are appended); a program
/// built against an older, smaller one keeps working.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct emq_worker_options {
    /// `sizeof` the struct as the caller compiled it; set by the init function.
    pub size: usize,
    /// Handlers running at once. Default 10.
    pub concurrency: u32,
    /// One of `EMQ_BACKOFF_*`. Default `EMQ_BACKOFF_EXPONENTIAL`.
    pub backoff: emq_backoff,
    /// Lease per claim, renewed every `lease_ms / 3`. Default 30000.
    pub lease_ms: u64,
    /// Attempts before a job is dead-lettered. Default 5.
    pub max_attempts: u64,
    /// Default 1000.
    pub backoff_base_ms: u64,
    /// Default 60000.
    pub backoff_cap_ms: u64,
    /// How often the worker runs promote and reap. Default 1000.
    pub pump_interval_ms: u64,
    /// Longest idle poll interval. Default 50.
    pub idle_max_ms: u64,
    /// How long in-flight handlers may run after a stop. Default 10000.
    pub shutdown_grace_ms: u64,
    /// Jobs claimed ahead of free slots, so the next claim overlaps running
    /// callbacks; `EMQ_PREFETCH_ADAPTIVE` (-1, the default) adapts the window
    /// to handler time against the claim round trip (at most `concurrency`,
    /// none for slow callbacks), 0 claims only for free slots.
    pub prefetch: i64,
    /// Jobs handed to one blocking call, whose callbacks then run one after
    /// another (fewer thread hand-offs; slots free when the batch is done).
    /// Default 1.
    pub handler_batch: u32,
    /// Dead-set retention by age: the pump deletes dead jobs minted longer
    /// ago than this. 0 (the default) keeps them.
    pub dead_max_age_ms: u64,
    /// Dead-set retention by length: the pump keeps at most this many dead
    /// jobs (the oldest go first). `EMQ_DEAD_KEEP_ALL` (-1, the default) keeps all.
    pub dead_max_len: i64,
    /// Stalls (lapsed leases: the worker died or hung) a job survives before
    /// the reap pump dead-letters it with `last_error` `"stalled"`. Default 2.
    pub max_stalls: u64,
    /// Keep the value a handler sets with `emq_handler_result_set_value` as
    /// the job's result for this long (`emq_result`, `emq_wait_for_result`;
    /// wire 2.1.0). 0 (the default) keeps nothing.
    pub keep_result_ms: u64,
    /// How long an idle worker stays parked on the queue's wake list before
    /// it looks anyway (jobs written without a wake hint). Default 5000.
    pub wake_fallback_ms: u64,
}

/// `emq_worker_options.dead_max_len`: no length bound.
pub const EMQ_DEAD_KEEP_ALL: i64 = -1;

/// `emq_worker_options.prefetch`: the adaptive window (see docs/API.md).
pub const EMQ_PREFETCH_ADAPTIVE: i64 = -1;

/// The former name of [`EMQ_PREFETCH_ADAPTIVE`] (same value), kept so
/// existing callers compile; the default it names is now adaptive.
pub const EMQ_PREFETCH_CONCURRENCY: i64 = EMQ_PREFETCH_ADAPTIVE;

/// The worker's counters.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct emq_stats {
    pub claimed: u64,
    pub completed: u64,
    pub retried: u64,
    pub dead: u64,
    pub lease_lost: u64,
    pub in_flight: u64,
    /// Claims that failed (connection lost, timeout); retried after a pause.
    pub claim_failures: u64,
    /// Heartbeat round trips that failed (those leases were not renewed).
    pub heartbeat_failures: u64,
    /// Settlements that failed or timed out (the lease lapses; the job is reaped).
    pub settle_failures: u64,
    /// Jobs handed back to pending unrun (prefetched at stop, past the grace period).
    pub released: u64,
}

/// The documented defaults (concurrency 10, lease 30000 ms, 5 attempts,
/// exponential 1000..60000 ms, pumps every 1000 ms, idle poll 50 ms, grace 10000 ms),
/// by value, `size` set. Returned by value the struct cannot grow under an
/// already-built program: prefer `emq_worker_options_init`.
#[no_mangle]
pub extern "C" fn emq_worker_options_default() -> emq_worker_options {
    let d = WorkerOptions::default();
    emq_worker_options {
        size: std::mem::size_of::<emq_worker_options>(),
        concurrency: u32::try_from(d.concurrency).unwrap_or(u32::MAX),
        backoff: match d.backoff {
            Backoff::Exponential => EMQ_BACKOFF_EXPONENTIAL,
            Backoff::Fixed => EMQ_BACKOFF_FIXED,
            Backoff::FullJitter => EMQ_BACKOFF_JITTER,
        },
        lease_ms: d.lease_ms,
        max_attempts: d.max_attempts,
        backoff_base_ms: d.backoff_base_ms,
        backoff_cap_ms: d.backoff_cap_ms,
        pump_interval_ms: d.pump_interval_ms,
        idle_max_ms: d.idle_max_ms,
        shutdown_grace_ms: d.shutdown_grace_ms,
        prefetch: d.prefetch.map_or(EMQ_PREFETCH_ADAPTIVE, |p| {
            i64::try_from(p).unwrap_or(i64::MAX)
        }),
        handler_batch: u32::try_from(d.handler_batch).unwrap_or(u32::MAX),
        dead_max_age_ms: d.dead_max_age_ms.unwrap_or(0),
        dead_max_len: d
            .dead_max_len
            .map_or(EMQ_DEAD_KEEP_ALL, |n| i64::try_from(n).unwrap_or(i64::MAX)),
        max_stalls: d.max_stalls,
        keep_result_ms: d.keep_result_ms,
        wake_fallback_ms: d.wake_fallback_ms,
    }
}

/// Fill `*options` (`size` bytes, normally `sizeof *options`) with the
/// defaults and record `size`, so a later library knows which fields this
/// program has. NULL is a no-op.
///
/// # Safety
/// `options` is NULL or valid for writes of `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn emq_worker_options_init(options: *mut emq_worker_options, size: usize) {
    // SAFETY: `options` is NULL or `size` writable bytes (`# Safety`).
    unsafe { sized::init(options, size) }
}

// SAFETY: `#[repr(C)]`, `size: usize` first; every field is an integer.
unsafe impl sized::SizedOptions for emq_worker_options {
    const NAME: &'static str = "emq_worker_options";
    fn defaults() -> Self {
        emq_worker_options_default()
    }
    fn set_size(&mut self, size: usize) {
        self.size = size;
    }
}

impl emq_worker_options {
    fn to_core(self) -> FfiResult<WorkerOptions> {
        Ok(WorkerOptions {
            concurrency: self.concurrency as usize,
            lease_ms: self.lease_ms,
            max_attempts: self.max_attempts,
            backoff: match self.backoff {
                EMQ_BACKOFF_EXPONENTIAL => Backoff::Exponential,
                EMQ_BACKOFF_FIXED => Backoff::Fixed,
                EMQ_BACKOFF_JITTER => Backoff::FullJitter,
                other => {
                    return Err(Fail::invalid_argument(format!(
                        "unknown backoff {other}: expected one of EMQ_BACKOFF_*"
                    )))
                }
            },
            backoff_base_ms: self.backoff_base_ms,
            backoff_cap_ms: self.backoff_cap_ms,
            pump_interval_ms: self.pump_interval_ms,
            idle_max_ms: self.idle_max_ms,
            shutdown_grace_ms: self.shutdown_grace_ms,
            prefetch: match self.prefetch {
                EMQ_PREFETCH_ADAPTIVE => None,
                p if p >= 0 => Some(usize::try_from(p).unwrap_or(usize::MAX)),
                other => {
                    return Err(Fail::invalid_argument(format!(
                        "prefetch {other}: expected >= 0 or EMQ_PREFETCH_ADAPTIVE"
                    )))
                }
            },
            handler_batch: self.handler_batch as usize,
            dead_max_age_ms: (self.dead_max_age_ms > 0).then_some(self.dead_max_age_ms),
            dead_max_len: match self.dead_max_len {
                EMQ_DEAD_KEEP_ALL => None,
                n if n >= 0 => Some(n as u64),
                other => {
                    return Err(Fail::invalid_argument(format!(
                        "dead_max_len {other}: expected >= 0 or EMQ_DEAD_KEEP_ALL"
                    )))
                }
            },
            max_stalls: self.max_stalls,
            keep_result_ms: self.keep_result_ms,
            wake_fallback_ms: self.wake_fallback_ms,
        })
    }
}

/// The caller's `user_data`. The caller guarantees it may be used from the
/// worker's threads (documented on `emq_worker_new`); this type only lets it
/// travel there.
#[derive(Clone, Copy)]
struct UserData(*mut c_void);
// SAFETY: thread safety of what `user_data` points to is the caller's
// documented obligation; the library never dereferences it.
unsafe impl Send for UserData {}
// SAFETY: as for Send: the library only copies the pointer between threads.
unsafe impl Sync for UserData {}

/// Counts handler calls in progress so `join` can wait for the last one (a
/// handler that outlives the grace period keeps running on the pool).
#[derive(Default)]
struct CallGate {
    running: Mutex<usize>,
    idle: Condvar,
}

struct CallTicket<'a>(&'a CallGate);

impl CallGate {
    fn lock(&self) -> MutexGuard<'_, usize> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn enter(&self) -> CallTicket<'_> {
        *self.lock() += 1;
        CallTicket(self)
    }

    fn wait_idle(&self) {
        let mut running = self.lock();
        while *running > 0 {
            running = self.idle.wait(running).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for CallTicket<'_> {
    fn drop(&mut self) {
        let mut running = self.0.lock();
        *running -= 1;
        if *running == 0 {
            self.0.idle.notify_all();
        }
    }
}

/// Run the C handler for one job and turn its verdict into the core's.
fn call_handler(
    handler: unsafe extern "C" fn(
        *const emq_job,
        *mut c_void,
        *mut emq_handler_result,
    ) -> emq_handler_status,
    user_data: UserData,
    gate: &CallGate,
    job: &emq_core::Job,
) -> Output {
    let _ticket = gate.enter();
    let view = emq_job::borrowed(job);
    let mut result = emq_handler_result {
        message: None,
        value: None,
    };
    // SAFETY: `view` and `result` live until the call returns; the handler's
    // contract is documented on `emq_handler`.
    let status = unsafe { handler(&view, user_data.0, &mut result) };
    let message = result.message.take();
    match status {
        EMQ_HANDLER_OK => Ok(result.value.take()),
        EMQ_HANDLER_FATAL => {
            Err(HandlerError::fatal(message.unwrap_or_else(|| {
                "handler returned EMQ_HANDLER_FATAL".into()
            })))
        }
        EMQ_HANDLER_RETRY => {
            Err(HandlerError::retry(message.unwrap_or_else(|| {
                "handler returned EMQ_HANDLER_RETRY".into()
            })))
        }
        other => Err(HandlerError::retry(message.unwrap_or_else(|| {
            format!("handler returned unknown status {other}")
        }))),
    }
}

/// A worker over one queue (opaque). Made by `emq_worker_new`, released by
/// `emq_worker_free`. `emq_worker_stop` and `emq_worker_stats` may be called
/// from any thread while it runs.
pub struct emq_worker {
    worker: Worker,
    gate: Arc<CallGate>,
    handle: Mutex<Option<Arc<WorkerHandle>>>,
    /// Held for the whole of a join; holds the outcome once known.
    joined: Mutex<Option<emq_core::Result<()>>>,
}

impl emq_worker {
    /// The core worker (for `observe.rs`).
    pub(crate) fn core(&self) -> &Worker {
        &self.worker
    }

    fn handle(&self) -> Option<Arc<WorkerHandle>> {
        self.handle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn start(&self) -> FfiResult {
        let mut handle = self.handle.lock().unwrap_or_else(|p| p.into_inner());
        if handle.is_some() {
            return Err(Fail::invalid_argument("this worker was already started"));
        }
        self.worker.client().check_open()?;
        *handle = Some(Arc::new(self.worker.spawn()));
        Ok(())
    }

    fn join(&self) -> emq_core::Result<()> {
        let mut joined = self.joined.lock().unwrap_or_else(|p| p.into_inner());
        if joined.is_none() {
            let Some(handle) = self.handle() else {
                return Ok(()); // never started: nothing to wait for
            };
            let outcome = loop {
                if let Some(outcome) = handle.join_timeout(Duration::from_millis(200)) {
                    break outcome;
                }
            };
            *joined = Some(outcome);
        }
        self.gate.wait_idle();
        joined.clone().expect("set above")
    }
}

/// Make a worker for `queue` that calls `handler(job, user_data, result)` for
/// each job it claims. `client` is only borrowed (the worker shares its
/// connection, so the client handle may be freed afterwards; `emq_close` on
/// it stops the worker's calls too). `options` may be NULL (defaults).
///
/// `user_data` is passed to every call, from several library threads at
/// once: the caller guarantees that is safe and that it stays valid until
/// `emq_worker_join` (or `emq_worker_free`) has returned.
///
/// Nothing runs until `emq_worker_start` (or `emq_worker_run`). `*out` is a
/// new worker released with `emq_worker_free`; NULL on failure.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_worker_new(
    client: *const emq_client,
    queue: *const c_char,
    options: *const emq_worker_options,
    handler: emq_handler,
    user_data: *mut c_void,
    out: *mut *mut emq_worker,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: the handle is NULL or a live one this library returned (`# Safety`).
        let client = unsafe { ref_arg(client, "client") }?
            .inner
            .as_async()
            .clone();
        // SAFETY: string arguments are NULL or NUL-terminated and live for the call (`# Safety`).
        let queue = unsafe { str_arg(queue, "queue") }?;
        let handler = handler.ok_or_else(|| Fail::null("handler"))?;
        // SAFETY: the options pointer is NULL or points to a valid options struct
        // of the size it states (`# Safety`).
        let options = match unsafe { sized::read(options) }? {
            None => WorkerOptions::default(),
            Some(o) => o.to_core()?,
        };
        let gate = Arc::new(CallGate::default());
        let (user_data, call_gate) = (UserData(user_data), gate.clone());
        let worker = Worker::new_blocking_returning(client, queue, options, move |job| {
            call_handler(handler, user_data, &call_gate, job)
        })?;
        *out = Box::into_raw(Box::new(emq_worker {
            worker,
            gate,
            handle: Mutex::new(None),
            joined: Mutex::new(None),
        }));
        Ok(())
    })
}

/// # Safety
/// The pointer arguments are NULL or valid as the exported caller's
/// `# Safety` section states; the returned borrow must not outlive the call.
unsafe fn worker_arg<'a>(worker: *const emq_worker) -> FfiResult<&'a emq_worker> {
    // SAFETY: the handle is NULL or a live one this library returned (`# Safety`).
    unsafe { ref_arg(worker, "worker") }
}

/// Start the worker on the library's threads and return at once.
/// `EMQ_ERR_INVALID_ARGUMENT` if it was already started (a worker runs once).
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_worker_start(
    worker: *const emq_worker,
    err: *mut *mut emq_error,
) -> emq_status {
    // SAFETY: the worker handle is NULL or live, from `emq_worker_new` (`# Safety`).
    guard(err, || unsafe { worker_arg(worker) }?.start())
}

/// Ask the worker to stop: no new claims; in-flight handlers get
/// `shutdown_grace_ms` to finish. Returns at once; idempotent; any thread.
/// Not async-signal-safe: from a signal handler, set a flag and call this
/// from a normal thread.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_worker_stop(
    worker: *const emq_worker,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the worker handle is NULL or live, from `emq_worker_new` (`# Safety`).
        unsafe { worker_arg(worker) }?.worker.stop();
        Ok(())
    })
}

/// Block until the started worker has stopped and drained, and no handler
/// call is still running (a handler that outlived the grace period is waited
/// for; its job was already released back to pending). Returns at once for a
/// worker never started. Call `emq_worker_stop` first (from any thread), or
/// this waits forever. Never call it from inside a handler (it would wait for
/// that very call).
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_worker_join(
    worker: *const emq_worker,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the worker handle is NULL or live, from `emq_worker_new` (`# Safety`).
        unsafe { worker_arg(worker) }?.join()?;
        Ok(())
    })
}

/// Start the worker and block until it has stopped (`emq_worker_start` +
/// `emq_worker_join`); another thread calls `emq_worker_stop`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_worker_run(
    worker: *const emq_worker,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: the worker handle is NULL or live, from `emq_worker_new` (`# Safety`).
        let w = unsafe { worker_arg(worker) }?;
        w.start()?;
        w.join()?;
        Ok(())
    })
}

/// The worker's counters, into `*out`. Any thread, any time.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_worker_stats(
    worker: *const emq_worker,
    out: *mut emq_stats,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let out = unsafe { out_arg(out, "out") }?;
        // SAFETY: the worker handle is NULL or live, from `emq_worker_new` (`# Safety`).
        let s = unsafe { worker_arg(worker) }?.worker.stats();
        *out = emq_stats {
            claimed: s.claimed,
            completed: s.completed,
            retried: s.retried,
            dead: s.dead,
            lease_lost: s.lease_lost,
            in_flight: s.in_flight,
            claim_failures: s.claim_failures,
            heartbeat_failures: s.heartbeat_failures,
            settle_failures: s.settle_failures,
            released: s.released,
        };
        Ok(())
    })
}

/// Release a worker (NULL is a no-op). A running worker is stopped and joined
/// first, so this may block up to the grace period (and for any handler still
/// running). No other call on this worker may run concurrently or afterwards.
///
/// # Safety
/// The argument is NULL or a value this library returned that has not been
/// freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn emq_worker_free(worker: *mut emq_worker) {
    guard_void(|| {
        if worker.is_null() {
            return;
        }
        // SAFETY: a non-NULL pointer here came from this library (`Box::into_raw` / `CString::into_raw`) and is released exactly once (`# Safety`).
        let w = unsafe { Box::from_raw(worker) };
        w.worker.stop();
        let _ = w.join();
    })
}

/// Set the failure message of the current handler call (copied; UTF-8, NUL
/// terminated; invalid UTF-8 is replaced). It becomes the job's `last_error`
/// when the handler returns `EMQ_HANDLER_RETRY` or `EMQ_HANDLER_FATAL`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_handler_result_set_message(
    result: *mut emq_handler_result,
    message: *const c_char,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let result = unsafe { out_arg(result, "result") }?;
        if message.is_null() {
            return Err(Fail::null("message"));
        }
        // SAFETY: checked non-NULL above; the caller guarantees a NUL-terminated string live for the call (`# Safety`).
        result.message = Some(
            unsafe { CStr::from_ptr(message) }
                .to_string_lossy()
                .into_owned(),
        );
        Ok(())
    })
}

/// Set the value the current handler call answers, kept as the job's result
/// when the worker's `keep_result_ms` > 0 and the handler returns
/// `EMQ_HANDLER_OK` (copied; `len` bytes, `value` may be NULL when `len` is 0;
/// a later call replaces it). Without it a kept result is empty.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_handler_result_set_value(
    result: *mut emq_handler_result,
    value: *const u8,
    len: usize,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: `out` pointers are NULL or valid for writes (this function's `# Safety`).
        let result = unsafe { out_arg(result, "result") }?;
        // SAFETY: `value` is NULL (with `len` 0) or valid for `len` bytes (`# Safety`).
        let bytes = unsafe { slice_arg(value, len, "value") }?;
        result.value = Some(bytes.to_vec());
        Ok(())
    })
}
