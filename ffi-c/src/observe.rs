//! Observability through C: the core's log records to a callback (default:
//! warnings and errors to stderr), worker events to a callback, queue event
//! subscriptions, `emq_wait_for` and `emq_metrics_text`. Conversion only.

use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use emq_core::{QueueEvent, Settled, SubscriptionCloser, WorkerEvent};

use crate::client::emq_client;
use crate::guard::*;
use crate::status::*;
use crate::worker::emq_worker;

// ---- logs ------------------------------------------------------------------

/// A log level (`EMQ_LOG_*`), most severe first.
pub type emq_log_level = i32;
/// No records at all (as `min_level`).
pub const EMQ_LOG_OFF: emq_log_level = 0;
pub const EMQ_LOG_ERROR: emq_log_level = 1;
pub const EMQ_LOG_WARN: emq_log_level = 2;
pub const EMQ_LOG_INFO: emq_log_level = 3;
pub const EMQ_LOG_DEBUG: emq_log_level = 4;
pub const EMQ_LOG_TRACE: emq_log_level = 5;

/// Receives one core log record. Called on the library's threads (several at
/// once, possibly while another emq_* call runs); `target` (the Rust module,
/// e.g. "echomq::worker::run") and `message` are valid only during the call.
/// Must return quickly and must not call back into the library.
pub type emq_log_handler = Option<
    unsafe extern "C" fn(
        level: emq_log_level,
        target: *const c_char,
        message: *const c_char,
        user_data: *mut c_void,
    ),
>;

/// `user_data` travels to the library's threads; the caller vouches for it.
#[derive(Clone, Copy)]
struct UserData(*mut c_void);
// SAFETY: the documented contract: user_data is valid and safe to use from
// any thread until it is replaced (logs) or the owner is released.
unsafe impl Send for UserData {}
unsafe impl Sync for UserData {}

fn level_filter(level: emq_log_level) -> FfiResult<log::LevelFilter> {
    Ok(match level {
        EMQ_LOG_OFF => log::LevelFilter::Off,
        EMQ_LOG_ERROR => log::LevelFilter::Error,
        EMQ_LOG_WARN => log::LevelFilter::Warn,
        EMQ_LOG_INFO => log::LevelFilter::Info,
        EMQ_LOG_DEBUG => log::LevelFilter::Debug,
        EMQ_LOG_TRACE => log::LevelFilter::Trace,
        other => {
            return Err(Fail::invalid_argument(format!(
                "log level {other} is not one of EMQ_LOG_OFF..EMQ_LOG_TRACE"
            )))
        }
    })
}

fn level_code(level: log::Level) -> emq_log_level {
    match level {
        log::Level::Error => EMQ_LOG_ERROR,
        log::Level::Warn => EMQ_LOG_WARN,
        log::Level::Info => EMQ_LOG_INFO,
        log::Level::Debug => EMQ_LOG_DEBUG,
        log::Level::Trace => EMQ_LOG_TRACE,
    }
}

/// Send the core's log records at or above `min_level` to `handler`.
/// The default (before any call, and after a call with a NULL handler) is
/// stderr: records at or above `min_level` (`EMQ_LOG_WARN` by default) are
/// printed there as "[echomq LEVEL] target: message". `EMQ_LOG_OFF` silences
/// everything. `user_data` must stay valid until the handler is replaced.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_set_log_handler(
    handler: emq_log_handler,
    user_data: *mut c_void,
    min_level: emq_log_level,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        let min = level_filter(min_level)?;
        let Some(handler) = handler else {
            emq_core::logging::set_forwarding(None, min);
            return Ok(());
        };
        let data = UserData(user_data);
        let sink: emq_core::logging::LogSink = Arc::new(move |level, target, message| {
            let data = data;
            let (target, message) = (c_string(target), c_string(message));
            // SAFETY: the caller's handler and user_data, per the contract above.
            unsafe { handler(level_code(level), target.as_ptr(), message.as_ptr(), data.0) };
        });
        emq_core::logging::set_forwarding(Some(sink), min);
        Ok(())
    })
}

// ---- worker events ------------------------------------------------------------

/// Which worker event (`EMQ_EVENT_*`).
///
/// An answer-only enum: the library writes it, C reads it, so a Rust enum is
/// sound here (see docs/C.md, "Enums"). Appending a variant is compatible;
/// a value an older header does not name is still a valid `int32_t`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum emq_worker_event_kind {
    /// A handler started on a job (`id`, `token`).
    EMQ_EVENT_ACTIVE = 1,
    /// The job completed (`id`, `token`, `duration_ms`).
    EMQ_EVENT_COMPLETED = 2,
    /// The handler failed (`id`, `token`, `error`, `duration_ms`; `retry_in_ms`
    /// until the next attempt, or -1 when the job went dead).
    EMQ_EVENT_FAILED = 3,
    /// The job went dead (`id`, `token`, `error`).
    EMQ_EVENT_DEAD = 4,
    /// The worker no longer holds the job (`id`, `token`).
    EMQ_EVENT_LEASE_LOST = 5,
    /// The reap pump returned `count` lapsed jobs to pending.
    EMQ_EVENT_STALLED = 6,
    /// A non-fatal failure of the worker's own calls (`error`, `error_status`).
    EMQ_EVENT_ERROR = 7,
    /// A claim found the queue empty after work.
    EMQ_EVENT_DRAINED = 8,
    /// The worker stopped; the last event of a run.
    EMQ_EVENT_CLOSED = 9,
}
pub use emq_worker_event_kind::*;

/// One worker event. Fields that do not fit the event are NULL / 0 / -1.
/// Valid only during the callback.
#[repr(C)]
pub struct emq_worker_event {
    pub kind: emq_worker_event_kind,
    /// The failure's status (`EMQ_EVENT_ERROR`), else `EMQ_OK`.
    pub error_status: emq_status,
    /// "active", "completed", ... (static storage).
    pub name: *const c_char,
    /// The job id, or NULL.
    pub id: *const c_char,
    pub token: u64,
    /// The failure text, or NULL.
    pub error: *const c_char,
    /// `EMQ_EVENT_FAILED`: ms until the next attempt; -1 otherwise (dead).
    pub retry_in_ms: i64,
    /// How long the handler ran (completed / failed), in ms.
    pub duration_ms: f64,
    /// `EMQ_EVENT_STALLED`: how many jobs.
    pub count: u64,
}

/// Receives a worker's events, on the worker's own threads, while it runs:
/// it must return quickly and must not call blocking emq_* functions (they
/// would stall the worker). Copy what you keep.
pub type emq_worker_event_handler =
    Option<unsafe extern "C" fn(event: *const emq_worker_event, user_data: *mut c_void)>;

fn kind_of(e: &WorkerEvent) -> emq_worker_event_kind {
    match e {
        WorkerEvent::Active { .. } => EMQ_EVENT_ACTIVE,
        WorkerEvent::Completed { .. } => EMQ_EVENT_COMPLETED,
        WorkerEvent::Failed { .. } => EMQ_EVENT_FAILED,
        WorkerEvent::Dead { .. } => EMQ_EVENT_DEAD,
        WorkerEvent::LeaseLost { .. } => EMQ_EVENT_LEASE_LOST,
        WorkerEvent::Stalled { .. } => EMQ_EVENT_STALLED,
        WorkerEvent::Error { .. } => EMQ_EVENT_ERROR,
        WorkerEvent::Drained => EMQ_EVENT_DRAINED,
        _ => EMQ_EVENT_CLOSED,
    }
}

fn static_name(e: &WorkerEvent) -> &'static std::ffi::CStr {
    match e {
        WorkerEvent::Active { .. } => c"active",
        WorkerEvent::Completed { .. } => c"completed",
        WorkerEvent::Failed { .. } => c"failed",
        WorkerEvent::Dead { .. } => c"dead",
        WorkerEvent::LeaseLost { .. } => c"lease_lost",
        WorkerEvent::Stalled { .. } => c"stalled",
        WorkerEvent::Error { .. } => c"error",
        WorkerEvent::Drained => c"drained",
        _ => c"closed",
    }
}

/// Call `handler(event, user_data)` for each of the worker's events. Set it
/// before `emq_worker_start`, once. `user_data` must stay valid until
/// `emq_worker_join` (or `emq_worker_free`) has returned; after that no event
/// is delivered.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_worker_set_event_handler(
    worker: *const emq_worker,
    handler: emq_worker_event_handler,
    user_data: *mut c_void,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: handles are NULL or live ones this library returned (the header's contract).
        let worker = unsafe { ref_arg(worker, "worker") }?;
        let handler = handler.ok_or_else(|| Fail::null("handler"))?;
        let data = UserData(user_data);
        worker.core().on_event(move |e| {
            let data = data;
            let id = e.job().map(|(id, _)| c_string(id.as_str()));
            let error = e.error().map(c_string);
            let event = emq_worker_event {
                kind: kind_of(e),
                error_status: e.error_kind().map_or(EMQ_OK, status_of),
                name: static_name(e).as_ptr(),
                id: id.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
                token: e.job().map_or(0, |(_, token)| token),
                error: error.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
                retry_in_ms: e.retry_in_ms().map_or(-1, |ms| ms as i64),
                duration_ms: e.duration_ms().unwrap_or(0.0),
                count: e.count().unwrap_or(0),
            };
            // SAFETY: the caller's handler and user_data, per the contract above.
            unsafe { handler(&event, data.0) };
        })?;
        Ok(())
    })
}

// ---- queue events -----------------------------------------------------------------

/// One message of `emq:{q}:events`. Valid only during the callback.
#[repr(C)]
pub struct emq_queue_event {
    pub queue: *const c_char,
    /// "added", "active", "completed", "retried", "dead", "removed", ...
    pub event: *const c_char,
    /// The job id; "" for queue-wide events ("paused", "resumed").
    pub job: *const c_char,
    /// The other fields ("token", "attempts", "error", "delay_ms", ...):
    /// `field_count` names and values, index for index.
    pub field_names: *const *const c_char,
    pub field_values: *const *const c_char,
    pub field_count: usize,
    /// The whole message as published (a JSON object of strings).
    pub json: *const c_char,
}

/// Receives queue events, one call at a time, on a thread the subscription
/// owns (so it may call any emq_* function). Copy what you keep.
pub type emq_queue_event_handler =
    Option<unsafe extern "C" fn(event: *const emq_queue_event, user_data: *mut c_void)>;

/// A live subscription (opaque): made by `emq_subscribe`, released by
/// `emq_subscription_free`.
pub struct emq_subscription {
    closer: SubscriptionCloser,
    thread: std::sync::Mutex<Option<JoinHandle<()>>>,
}

fn deliver(
    handler: unsafe extern "C" fn(*const emq_queue_event, *mut c_void),
    data: UserData,
    e: &QueueEvent,
) {
    let text = |s: &str| c_string(s);
    let (queue, event, job, json) = (
        text(&e.queue),
        text(&e.event),
        text(&e.job),
        text(&e.to_json()),
    );
    let names: Vec<CString> = e.fields.keys().map(|k| text(k)).collect();
    let values: Vec<CString> = e.fields.values().map(|v| text(v)).collect();
    let name_ptrs: Vec<*const c_char> = names.iter().map(|s| s.as_ptr()).collect();
    let value_ptrs: Vec<*const c_char> = values.iter().map(|s| s.as_ptr()).collect();
    let c_event = emq_queue_event {
        queue: queue.as_ptr(),
        event: event.as_ptr(),
        job: job.as_ptr(),
        field_names: name_ptrs.as_ptr(),
        field_values: value_ptrs.as_ptr(),
        field_count: name_ptrs.len(),
        json: json.as_ptr(),
    };
    // SAFETY: the caller's handler and user_data, per `emq_subscribe`'s contract.
    unsafe { handler(&c_event, data.0) };
}

/// Subscribe to `queue`'s events on a connection of its own (re-subscribing
/// by itself after a drop; delivery is at-most-once). Returns once the server
/// confirmed the subscription; from then on `handler(event, user_data)` is
/// called for each message on the subscription's own thread, until
/// `emq_subscription_close` / `emq_subscription_free`. `user_data` must stay
/// valid until `emq_subscription_free` has returned.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_subscribe(
    client: *const emq_client,
    queue: *const c_char,
    handler: emq_queue_event_handler,
    user_data: *mut c_void,
    out: *mut *mut emq_subscription,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: out-parameters are NULL or valid for writes (the header's contract).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: handles are NULL or live ones this library returned (the header's contract).
        let client = &unsafe { ref_arg(client, "client") }?.inner;
        // SAFETY: strings are NULL or NUL-terminated and live for the call (the header's contract).
        let queue = unsafe { str_arg(queue, "queue") }?;
        let handler = handler.ok_or_else(|| Fail::null("handler"))?;
        let mut sub = client.subscribe(queue)?.into_async();
        let closer = sub.closer();
        let data = UserData(user_data);
        let thread = std::thread::Builder::new()
            .name("echomq-subscription".into())
            .spawn(move || {
                let data = data;
                emq_core::runtime::runtime().block_on(async {
                    while let Some(event) = sub.next().await {
                        deliver(handler, data, &event);
                    }
                });
            })
            .map_err(|e| Fail::invalid_argument(format!("cannot start a thread: {e}")))?;
        *out = Box::into_raw(Box::new(emq_subscription {
            closer,
            thread: std::sync::Mutex::new(Some(thread)),
        }));
        Ok(())
    })
}

/// Stop the subscription: no handler call starts after this returns...
/// except the ones for messages already received, which run first. Any
/// thread; idempotent. `emq_subscription_free` waits for them.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_subscription_close(
    subscription: *const emq_subscription,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: handles are NULL or live ones this library returned (the header's contract).
        unsafe { ref_arg(subscription, "subscription") }?
            .closer
            .close();
        Ok(())
    })
}

/// Close the subscription, wait until its thread has delivered its last
/// event, and release it (NULL is a no-op). Never call it from the handler.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_subscription_free(subscription: *mut emq_subscription) {
    guard_void(|| {
        if subscription.is_null() {
            return;
        }
        // SAFETY: a live handle from `emq_subscribe`, released once (the header's contract).
        let sub = unsafe { Box::from_raw(subscription) };
        sub.closer.close();
        let thread = sub.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    })
}

/// How a waited-on job ended (`EMQ_SETTLED_*`).
///
/// An answer-only enum: the library writes it, C reads it, so a Rust enum is
/// sound here (see docs/C.md, "Enums"). Appending a variant is compatible;
/// a value an older header does not name is still a valid `int32_t`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum emq_settled {
    EMQ_SETTLED_COMPLETED = 1,
    EMQ_SETTLED_DEAD = 2,
}
pub use emq_settled::*;

/// Wait up to `timeout_ms` for job `id` to complete or go dead; `*state` is
/// `EMQ_SETTLED_COMPLETED` or `EMQ_SETTLED_DEAD`. When dead and `last_error`
/// is not NULL, `*last_error` is the job's error text (release with
/// `emq_string_free`; NULL if none). The deadline passing is
/// `EMQ_ERR_TIMEOUT`; the job being removed meanwhile is `EMQ_ERR_GONE`.
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_wait_for(
    client: *const emq_client,
    queue: *const c_char,
    id: *const c_char,
    timeout_ms: u64,
    state: *mut emq_settled,
    last_error: *mut *mut c_char,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // Written, never read: the caller's initial value need not be an `emq_settled`.
        let state = out_slot(state, "state")?;
        // SAFETY: out-parameters are NULL or valid for writes (the header's contract).
        if let Some(out) = unsafe { last_error.as_mut() } {
            *out = std::ptr::null_mut();
        }
        // SAFETY: handles are NULL or live ones this library returned (the header's contract).
        let client = &unsafe { ref_arg(client, "client") }?.inner;
        // SAFETY: strings are NULL or NUL-terminated and live for the call (the header's contract).
        let (queue, id) = unsafe { (str_arg(queue, "queue")?, str_arg(id, "id")?) };
        let settled = client.wait_for(queue, id, Duration::from_millis(timeout_ms))?;
        let value = match settled {
            Settled::Completed => EMQ_SETTLED_COMPLETED,
            Settled::Dead { .. } => EMQ_SETTLED_DEAD,
        };
        // SAFETY: `state` is valid for writes (the header's contract); `write` does not read it.
        unsafe { state.as_ptr().write(value) };
        if let Settled::Dead { error } = settled {
            // SAFETY: out-parameters are NULL or valid for writes (the header's contract).
            if let Some(out) = unsafe { last_error.as_mut() } {
                *out = opt_c_string_raw(error.as_deref());
            }
        }
        Ok(())
    })
}

/// Prometheus text exposition for `count` queues, into `*out` (release with
/// `emq_string_free`).
///
/// # Safety
/// Every pointer argument is NULL or valid for the access its type implies
/// for the duration of the call: strings NUL-terminated, arrays as long as
/// their count, handles live ones from this library (see the header's
/// preamble). NULL where a value is required is `EMQ_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn emq_metrics_text(
    client: *const emq_client,
    queues: *const *const c_char,
    count: usize,
    out: *mut *mut c_char,
    err: *mut *mut emq_error,
) -> emq_status {
    guard(err, || {
        // SAFETY: out-parameters are NULL or valid for writes (the header's contract).
        let out = unsafe { out_arg(out, "out") }?;
        *out = std::ptr::null_mut();
        // SAFETY: handles are NULL or live ones this library returned (the header's contract).
        let client = &unsafe { ref_arg(client, "client") }?.inner;
        // SAFETY: `queues` is NULL or holds `count` string pointers (the header's contract).
        let names: Vec<&str> = unsafe { slice_arg(queues, count, "queues") }?
            .iter()
            .enumerate()
            // SAFETY: as above, each a NUL-terminated string.
            .map(|(i, q)| unsafe { str_arg(*q, &format!("queues[{i}]")) })
            .collect::<FfiResult<_>>()?;
        *out = c_string_raw(&client.metrics_text(&names)?);
        Ok(())
    })
}
