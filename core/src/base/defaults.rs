//! The one home of every default and every option range. `WorkerOptions` and
//! `ConnectOptions` take their `Default` from here, the bindings fill their
//! omitted arguments from here (Python's signatures take `None`), and each
//! binding's tests check that what it documents equals these values.

/// Handlers running at once.
pub const CONCURRENCY: usize = 10;
/// Lease per claim, renewed every `lease_ms / 3`.
pub const LEASE_MS: u64 = 30_000;
/// Attempts before a job is dead-lettered.
pub const MAX_ATTEMPTS: u64 = 5;
/// The default backoff policy's name (see `Backoff::parse`).
pub const BACKOFF: &str = "exponential";
/// First retry delay of the default back-off, ms.
pub const BACKOFF_BASE_MS: u64 = 1_000;
/// Longest retry delay of the default back-off, ms.
pub const BACKOFF_CAP_MS: u64 = 60_000;
/// How often a worker runs promote and reap.
pub const PUMP_INTERVAL_MS: u64 = 1_000;
/// The idle poll's ceiling.
pub const IDLE_MAX_MS: u64 = 50;
/// How long an idle worker stays parked on its wake list before it looks
/// anyway (and its pumps' idle ceiling): with the pumps' `next_due`, about
/// three commands per period, 0.6 a second (the budget of issue #16 is 1).
pub const WAKE_FALLBACK_MS: u64 = 5_000;
/// How long in-flight handlers may run after `stop()`.
pub const SHUTDOWN_GRACE_MS: u64 = 10_000;
/// Jobs handed to a batch handler in one call.
pub const HANDLER_BATCH: usize = 1;
/// Stalls (lapsed leases) a job survives before the reaper dead-letters it
/// (wire 2.1.0): one stall is forgiven, as BullMQ's default.
pub const MAX_STALLS: u64 = 2;

/// One connection attempt's limit.
pub const CONNECT_TIMEOUT_MS: u64 = 5_000;
/// One command's limit; the bindings' `0` means "no limit".
pub const RESPONSE_TIMEOUT_MS: u64 = 30_000;
/// The payload ceiling: 16 MiB.
pub const MAX_PAYLOAD: usize = 16 * 1024 * 1024;
/// Whether a script-bundle mismatch fails `connect` (else it is logged).
pub const STRICT_BUNDLE: bool = false;
/// Whether a client publishes queue events after its transitions.
pub const PUBLISH_EVENTS: bool = true;
/// Replicas a durable write waits for (`WAIT`); 0 = no `WAIT`.
pub const WAIT_REPLICAS: u64 = 0;
/// How long one `WAIT` may block.
pub const WAIT_TIMEOUT_MS: u64 = 1_000;

/// `browse`'s default page.
pub const BROWSE_LIMIT: u64 = 100;
/// `promote`'s and `reap`'s default batch (also the worker's pump batch).
pub const PUMP_LIMIT: u64 = 1_000;

/// Jobs one `complete_many` script call settles at most (the worker's
/// settler batches to the same size).
pub const SETTLE_BATCH: usize = 500;

/// Lines a job's log keeps (the newest) when `log` is not told otherwise
/// (echomq:2.1.0).
pub const LOG_MAX_LINES: u64 = 1_000;
/// The largest `max_lines` `log` accepts.
pub const LOG_MAX_LINES_LIMIT: u64 = 1_000_000;
/// The largest line `log` accepts, in bytes (also never above the client's
/// `max_payload`): a line is a message, not a payload. Room for a long stack
/// trace, while a log at its default length (1 000 lines) stays within 64 MiB.
pub const MAX_LOG_LINE_BYTES: usize = 64 * 1024;
/// The largest progress value (its JSON text) `update_progress` accepts: a
/// progress report, not a payload.
pub const MAX_PROGRESS_BYTES: usize = 64 * 1024;
/// How long a worker keeps each handler's return value (`keep_result_ms`);
/// 0 = not at all: completion deletes the job, as in 2.0.0.
pub const KEEP_RESULT_MS: u64 = 0;

/// The largest `concurrency`, `prefetch` and `handler_batch` a worker accepts:
/// far above any useful value, far below what overflows its arithmetic.
pub const MAX_WORKER_SLOTS: usize = 100_000;
/// The largest duration option (`*_ms`) a worker accepts: 30 days.
pub const MAX_DURATION_MS: u64 = 30 * 24 * 3_600_000;
/// The largest `max_attempts` (the scripts compare it as a Lua number).
pub const MAX_ATTEMPTS_LIMIT: u64 = 1_000_000;

/// The binding convention for an optional timeout given as a number of
/// milliseconds: `0` means "wait for ever".
pub fn timeout_from_ms(ms: u64) -> Option<std::time::Duration> {
    (ms > 0).then(|| std::time::Duration::from_millis(ms))
}

/// The server `connect` talks to when given no URL and `EMQ_URL` is unset or empty.
pub const URL: &str = "redis://127.0.0.1:6379/";
/// The environment variable a URL-less `connect` reads.
pub const URL_ENV: &str = "EMQ_URL";

/// The URL a `connect` without one uses: `EMQ_URL` when set and not empty,
/// else [`URL`]. Read at each call, so a test or a forked child can change it.
pub fn url() -> String {
    match std::env::var(URL_ENV) {
        Ok(url) if !url.trim().is_empty() => url,
        _ => URL.to_string(),
    }
}
