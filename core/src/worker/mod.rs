//! The worker runtime, written once for every language: claim in batches, run
//! handlers concurrently, heartbeat leases, settle, and pump promote/reap.
//!
//! Bindings hand it a handler and nothing else: an async closure (Rust, Node),
//! or a blocking one run on tokio's blocking pool (C callbacks, Python functions).

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::client::Client;
use futures_util::FutureExt;

use crate::defaults;
use crate::error::{Error, ErrorKind, Result};
use crate::keys;
use crate::option_schema::{self, OptionGroup};
use crate::types::Job;

mod adapt;
mod events;
mod pump;
mod run;
pub(crate) mod series;
mod settle;
mod state;
pub(crate) mod wake;

pub use events::{EventListener, WorkerEvent};

use state::{panic_message, BatchFuture, Counters, Dispatch, HandlerFuture, Shared};

/// How long to wait before the next attempt of a failed job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backoff {
    /// Always `base_ms`.
    Fixed,
    /// `base_ms * 2^(attempt-1)`, capped at `cap_ms`.
    Exponential,
    /// Uniform in `[0, min(cap, base * 2^(attempt-1))]` ("full jitter").
    FullJitter,
}

impl Backoff {
    /// Parse a policy name (`fixed`, `exponential`, `full_jitter`); anything else is an invalid-argument error.
    pub fn parse(text: &str) -> Result<Backoff> {
        match text {
            "fixed" => Ok(Backoff::Fixed),
            "exponential" => Ok(Backoff::Exponential),
            "jitter" | "full_jitter" => Ok(Backoff::FullJitter),
            other => Err(Error::invalid_argument(format!(
                "unknown backoff {other:?}: expected fixed, exponential or jitter"
            ))),
        }
    }
}

/// Worker options; `Default` gives the documented defaults.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// Handlers running at once. Default 10.
    pub concurrency: usize,
    /// Lease per claim, renewed every `lease_ms / 3`. Default 30 000.
    pub lease_ms: u64,
    /// Attempts before a job is dead-lettered. Default 5.
    pub max_attempts: u64,
    /// How retry delays grow. Default exponential.
    pub backoff: Backoff,
    /// Default 1 000.
    pub backoff_base_ms: u64,
    /// Default 60 000.
    pub backoff_cap_ms: u64,
    /// How often the worker runs promote and reap. Default 1 000.
    pub pump_interval_ms: u64,
    /// Longest idle poll interval (the adaptive back-off's ceiling). Default
    /// 50. At wire 2.1.0 an idle worker parks on the wake list instead
    /// (`wake_fallback_ms`); this still bounds the waits after a claim
    /// failure or at the queue's concurrency ceiling, and the whole idle poll
    /// of a client speaking 2.0.0.
    pub idle_max_ms: u64,
    /// How long an idle worker (wire 2.1.0) stays parked on the queue's wake
    /// list before it looks anyway: it claims, and its pumps run at least
    /// this often while it holds nothing. Our producers' hints wake it at
    /// once; this bounds the delay for jobs written without one (another
    /// runtime, `redis-cli`, a lost hint). Default 5 000.
    pub wake_fallback_ms: u64,
    /// How long in-flight handlers may run after `stop()`. Default 10 000.
    pub shutdown_grace_ms: u64,
    /// Jobs claimed ahead of free slots, so the next claim's round trip
    /// overlaps running handlers. `None` (the default) adapts: the worker
    /// prefetches as many jobs as its slots finish during one claim round
    /// trip (measured), at most `concurrency` — the full window for
    /// handlers much shorter than a round trip, none for slow ones, so a
    /// slow worker holds no more than its running jobs plus the completions
    /// still on the wire. `Some(n)` fixes the window at `n`; `Some(0)`
    /// claims only for free slots. Prefetched jobs are leased and
    /// heartbeated like running ones, and handed back at once on `stop()`.
    pub prefetch: Option<usize>,
    /// Jobs handed to a batch handler (Python, Node, C) in one call, to
    /// amortise the crossing into the language. Default 1. A batch's jobs
    /// run one after another (blocking handlers) or together (async
    /// handlers), and their slots free when the whole batch is done.
    /// Per-job Rust handlers ignore it.
    pub handler_batch: usize,
    /// Dead-set retention, applied by the pump: dead jobs minted longer ago
    /// than this are deleted (rows and logs). Default `None`: keep them all.
    pub dead_max_age_ms: Option<u64>,
    /// Dead-set retention, applied by the pump: the oldest dead jobs beyond
    /// this many are deleted. Default `None`: keep them all.
    pub dead_max_len: Option<u64>,
    /// Stalls (lapsed leases: the worker died or hung) a job survives before
    /// the reap pump dead-letters it with `last_error` = `stalled`. Default 2
    /// (one stall is forgiven). Needs wire 2.1.0; a client speaking 2.0.0
    /// reaps without a cap, as 2.0.0 does.
    pub max_stalls: u64,
    /// Keep each completed job's result — the handler's return value (see
    /// [`Output`]) — at `emq:{q}:job:<id>:result` for this long, written by
    /// the script that completes the job; the job's log is kept as long.
    /// Default 0: completion deletes the job and its log, as before. Needs
    /// wire 2.1.0.
    pub keep_result_ms: u64,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions {
            concurrency: defaults::CONCURRENCY,
            lease_ms: defaults::LEASE_MS,
            max_attempts: defaults::MAX_ATTEMPTS,
            backoff: Backoff::parse(defaults::BACKOFF).expect("the default backoff parses"),
            backoff_base_ms: defaults::BACKOFF_BASE_MS,
            backoff_cap_ms: defaults::BACKOFF_CAP_MS,
            pump_interval_ms: defaults::PUMP_INTERVAL_MS,
            idle_max_ms: defaults::IDLE_MAX_MS,
            wake_fallback_ms: defaults::WAKE_FALLBACK_MS,
            shutdown_grace_ms: defaults::SHUTDOWN_GRACE_MS,
            prefetch: None,
            handler_batch: defaults::HANDLER_BATCH,
            dead_max_age_ms: None,
            dead_max_len: None,
            max_stalls: defaults::MAX_STALLS,
            keep_result_ms: defaults::KEEP_RESULT_MS,
        }
    }
}

impl WorkerOptions {
    /// Refuse every option outside its range before anything runs: zero
    /// where a positive value is needed, and values so large that the loop's
    /// arithmetic (channel sizes, deadlines) would overflow. The ranges are
    /// the option schema's ([`crate::option_schema`]).
    pub fn validate(&self) -> Result<()> {
        for (name, value) in self.numeric_values() {
            if let Some(value) = value {
                option_schema::spec(OptionGroup::Worker, name).check(value)?;
            }
        }
        if self.backoff_cap_ms < self.backoff_base_ms {
            return Err(Error::invalid_argument(
                "backoff_cap_ms is below backoff_base_ms",
            ));
        }
        Ok(())
    }

    /// Every numeric option by its schema name, in the schema's order
    /// (`None`: unset). `validate` checks each; a unit test checks that the
    /// names are exactly the schema's numeric worker options.
    pub(crate) fn numeric_values(&self) -> Vec<(&'static str, Option<u64>)> {
        vec![
            ("concurrency", Some(self.concurrency as u64)),
            ("lease_ms", Some(self.lease_ms)),
            ("max_attempts", Some(self.max_attempts)),
            ("backoff_base_ms", Some(self.backoff_base_ms)),
            ("backoff_cap_ms", Some(self.backoff_cap_ms)),
            ("pump_interval_ms", Some(self.pump_interval_ms)),
            ("idle_max_ms", Some(self.idle_max_ms)),
            ("wake_fallback_ms", Some(self.wake_fallback_ms)),
            ("shutdown_grace_ms", Some(self.shutdown_grace_ms)),
            ("prefetch", self.prefetch.map(|p| p as u64)),
            ("handler_batch", Some(self.handler_batch as u64)),
            ("dead_max_age_ms", self.dead_max_age_ms),
            ("dead_max_len", self.dead_max_len),
            ("max_stalls", Some(self.max_stalls)),
            ("keep_result_ms", Some(self.keep_result_ms)),
        ]
    }

    /// Set a numeric option by its schema name (the schema's unit tests).
    #[cfg(test)]
    pub(crate) fn set_for_tests(&mut self, name: &str, value: u64) {
        match name {
            "concurrency" => self.concurrency = value as usize,
            "lease_ms" => self.lease_ms = value,
            "max_attempts" => self.max_attempts = value,
            // Moved together, so the cap-below-base rule does not answer first.
            "backoff_base_ms" => (self.backoff_base_ms, self.backoff_cap_ms) = (value, value),
            "backoff_cap_ms" => (self.backoff_base_ms, self.backoff_cap_ms) = (0, value),
            "pump_interval_ms" => self.pump_interval_ms = value,
            "idle_max_ms" => self.idle_max_ms = value,
            "wake_fallback_ms" => self.wake_fallback_ms = value,
            "shutdown_grace_ms" => self.shutdown_grace_ms = value,
            "prefetch" => self.prefetch = Some(value as usize),
            "handler_batch" => self.handler_batch = value as usize,
            "dead_max_age_ms" => self.dead_max_age_ms = Some(value),
            "dead_max_len" => self.dead_max_len = Some(value),
            "max_stalls" => self.max_stalls = value,
            "keep_result_ms" => self.keep_result_ms = value,
            other => panic!("no numeric worker option {other}"),
        }
    }

    /// The most jobs claimed ahead of free slots: an explicit `prefetch`, or
    /// `concurrency`, the adaptive window's ceiling.
    pub fn prefetch_jobs(&self) -> usize {
        self.prefetch.unwrap_or(self.concurrency)
    }

    /// The delay before attempt `attempt + 1`, after `attempt` failed.
    pub fn backoff_ms(&self, attempt: u64) -> u64 {
        let exp = attempt.saturating_sub(1).min(62) as u32;
        let grown = self
            .backoff_base_ms
            .saturating_mul(1u64.checked_shl(exp).unwrap_or(u64::MAX))
            .min(self.backoff_cap_ms);
        match self.backoff {
            Backoff::Fixed => self.backoff_base_ms,
            Backoff::Exponential => grown,
            Backoff::FullJitter => jitter(grown),
        }
    }
}

fn jitter(max: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(max);
    h.finish() % (max + 1)
}

/// A handler's failure. `fatal` skips the remaining attempts (straight to dead).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerError {
    /// Why the handler failed; stored as the job's `last_error`.
    pub message: String,
    /// `true` to dead-letter at once, skipping remaining attempts.
    pub fatal: bool,
}

impl HandlerError {
    /// A failure that may succeed on a later attempt.
    pub fn retry(message: impl Into<String>) -> Self {
        HandlerError {
            message: message.into(),
            fatal: false,
        }
    }

    /// A failure no retry can fix: the job goes straight to dead.
    pub fn fatal(message: impl Into<String>) -> Self {
        HandlerError {
            message: message.into(),
            fatal: true,
        }
    }
}

impl<E: std::fmt::Display> From<E> for HandlerError {
    fn from(e: E) -> Self {
        HandlerError::retry(e.to_string())
    }
}

/// Counters a caller can read at any time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerStats {
    /// Jobs claimed.
    pub claimed: u64,
    /// Jobs completed.
    pub completed: u64,
    /// Jobs failed and scheduled for another attempt.
    pub retried: u64,
    /// Jobs dead-lettered.
    pub dead: u64,
    /// Jobs whose lease was lost before they settled.
    pub lease_lost: u64,
    /// Jobs claimed and not yet settled, now.
    pub in_flight: u64,
    /// Claims that failed (connection lost, timeout); the loop retries them.
    pub claim_failures: u64,
    /// Heartbeat round trips that failed; those leases were not renewed.
    pub heartbeat_failures: u64,
    /// Jobs whose settlement failed or timed out: they stay active until
    /// their lease lapses and the reaper hands them out again.
    pub settle_failures: u64,
    /// Jobs handed back to pending unrun (prefetched at `stop()`, past the
    /// grace period, or held by a dropped run). Once a run has ended,
    /// `claimed = completed + retried + dead + lease_lost + settle_failures
    /// + released`.
    pub released: u64,
}

/// What a handler answers for one job.
pub type Verdict = std::result::Result<(), HandlerError>;

/// What a handler that returns a value answers for one job (the
/// `*_returning` constructors): `Ok(Some(bytes))` is kept as the job's
/// result when the worker's `keep_result_ms` > 0 (`Ok(None)` keeps an empty
/// one); with `keep_result_ms` = 0 the value is dropped.
pub type Output = std::result::Result<Option<Vec<u8>>, HandlerError>;

fn no_value(verdict: Verdict) -> Output {
    verdict.map(|()| None)
}

/// A worker over one queue. Cheap to clone; clones control the same worker.
#[derive(Clone)]
pub struct Worker {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("queue", &self.shared.queue)
            .finish_non_exhaustive()
    }
}

impl Worker {
    /// A worker whose handler is an async closure, called once per job.
    pub fn new<F, Fut>(
        client: Client,
        queue: &str,
        options: WorkerOptions,
        handler: F,
    ) -> Result<Worker>
    where
        F: Fn(Job) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Verdict> + Send + 'static,
    {
        Self::new_returning(client, queue, options, move |job| {
            handler(job).map(no_value)
        })
    }

    /// Like [`Worker::new`], but the handler answers a value to keep as the
    /// job's result (see `keep_result_ms`).
    pub fn new_returning<F, Fut>(
        client: Client,
        queue: &str,
        options: WorkerOptions,
        handler: F,
    ) -> Result<Worker>
    where
        F: Fn(Job) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Output> + Send + 'static,
    {
        let dispatch =
            Dispatch::PerJob(Arc::new(move |job| Box::pin(handler(job)) as HandlerFuture));
        Self::with_dispatch(client, queue, options, dispatch)
    }

    /// A worker whose async handler takes up to `options.handler_batch` jobs
    /// at once and answers one verdict per job, in order (Node's handler:
    /// one crossing to the JS thread per batch). A missing verdict counts
    /// as a failure of its job.
    pub fn new_batch<F, Fut>(
        client: Client,
        queue: &str,
        options: WorkerOptions,
        handler: F,
    ) -> Result<Worker>
    where
        F: Fn(Vec<Job>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<Verdict>> + Send + 'static,
    {
        Self::new_batch_returning(client, queue, options, move |jobs| {
            handler(jobs).map(|verdicts| verdicts.into_iter().map(no_value).collect())
        })
    }

    /// Like [`Worker::new_batch`], with one [`Output`] per job (the values
    /// Node's handlers return).
    pub fn new_batch_returning<F, Fut>(
        client: Client,
        queue: &str,
        options: WorkerOptions,
        handler: F,
    ) -> Result<Worker>
    where
        F: Fn(Vec<Job>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<Output>> + Send + 'static,
    {
        let dispatch =
            Dispatch::Batch(Arc::new(move |jobs| Box::pin(handler(jobs)) as BatchFuture));
        Self::with_dispatch(client, queue, options, dispatch)
    }

    /// A worker whose handler blocks (a C callback, a Python function). It
    /// runs on tokio's blocking pool so it never stalls the runtime: one
    /// blocking call per batch of up to `options.handler_batch` jobs, run one
    /// after another.
    pub fn new_blocking<F>(
        client: Client,
        queue: &str,
        options: WorkerOptions,
        handler: F,
    ) -> Result<Worker>
    where
        F: Fn(&Job) -> Verdict + Send + Sync + 'static,
    {
        Self::new_blocking_returning(client, queue, options, move |job: &Job| {
            no_value(handler(job))
        })
    }

    /// Like [`Worker::new_blocking`], but the handler answers a value to
    /// keep as the job's result (see `keep_result_ms`).
    pub fn new_blocking_returning<F>(
        client: Client,
        queue: &str,
        options: WorkerOptions,
        handler: F,
    ) -> Result<Worker>
    where
        F: Fn(&Job) -> Output + Send + Sync + 'static,
    {
        Self::new_blocking_batch_returning(client, queue, options, move |jobs: &[Job]| {
            jobs.iter().map(&handler).collect()
        })
    }

    /// Like [`Worker::new_blocking`], but the closure sees the whole batch
    /// (Python enters the interpreter once per batch) and answers one
    /// verdict per job, in order.
    pub fn new_blocking_batch<F>(
        client: Client,
        queue: &str,
        options: WorkerOptions,
        handler: F,
    ) -> Result<Worker>
    where
        F: Fn(&[Job]) -> Vec<Verdict> + Send + Sync + 'static,
    {
        Self::new_blocking_batch_returning(client, queue, options, move |jobs: &[Job]| {
            handler(jobs).into_iter().map(no_value).collect()
        })
    }

    /// Like [`Worker::new_blocking_batch`], with one [`Output`] per job (the
    /// values Python's and C's handlers return).
    pub fn new_blocking_batch_returning<F>(
        client: Client,
        queue: &str,
        options: WorkerOptions,
        handler: F,
    ) -> Result<Worker>
    where
        F: Fn(&[Job]) -> Vec<Output> + Send + Sync + 'static,
    {
        let handler = Arc::new(handler);
        Self::new_batch_returning(client, queue, options, move |jobs: Vec<Job>| {
            let handler = handler.clone();
            async move {
                let n = jobs.len();
                match tokio::task::spawn_blocking(move || handler(&jobs)).await {
                    Ok(verdicts) => verdicts,
                    Err(e) => vec![Err(HandlerError::retry(panic_message(e))); n],
                }
            }
        })
    }

    fn with_dispatch(
        client: Client,
        queue: &str,
        options: WorkerOptions,
        dispatch: Dispatch,
    ) -> Result<Worker> {
        keys::validate_queue(queue)?;
        options.validate()?;
        if options.keep_result_ms > 0 {
            client.require(crate::WireVersion::V2_1_0, "keep_result_ms")?;
        }
        client.check_open()?;
        Ok(Worker {
            shared: Arc::new(Shared {
                client,
                queue: queue.to_string(),
                options,
                dispatch,
                counters: Counters::default(),
                stopping: AtomicBool::new(false),
                stop_signal: tokio::sync::Notify::new(),
                running: AtomicBool::new(false),
                panic_next_run: AtomicBool::new(false),
                events: std::sync::OnceLock::new(),
                metrics: series::WorkerMetrics::for_queue(queue),
                plan: pump::PumpPlan::default(),
                fatal: std::sync::OnceLock::new(),
            }),
        })
    }

    /// The queue it works.
    pub fn queue(&self) -> &str {
        &self.shared.queue
    }

    /// The client this worker claims and settles through.
    pub fn client(&self) -> &Client {
        &self.shared.client
    }

    /// Send this worker's [`WorkerEvent`]s to `listener`, called on the
    /// worker's tasks (it must return quickly). One listener per worker, set
    /// before `run`; a second call is an *invalid argument* error.
    pub fn on_event(&self, listener: impl Fn(&WorkerEvent) + Send + Sync + 'static) -> Result<()> {
        if self.shared.running.load(Ordering::SeqCst) {
            return Err(Error::invalid_argument(
                "set the event listener before the worker runs",
            ));
        }
        self.shared
            .events
            .set(Arc::new(listener))
            .map_err(|_| Error::invalid_argument("this worker already has an event listener"))
    }

    /// [`Worker::on_event`] for the events named in `names` only (from
    /// [`WorkerEvent::NAMES`]); the others are never handed to `listener`.
    /// This is how a binding keeps an event nobody listens to on its own
    /// side of the language boundary: no thread hand-off, no interpreter
    /// entry. An unknown name is an *invalid argument* error, as is a second
    /// listener.
    pub fn on_events<S: AsRef<str>>(
        &self,
        names: impl IntoIterator<Item = S>,
        listener: impl Fn(&WorkerEvent) + Send + Sync + 'static,
    ) -> Result<()> {
        // A bit per position in NAMES: the filter is one AND per event.
        let mut wanted: u16 = 0;
        for name in names {
            let name = name.as_ref();
            let Some(bit) = WorkerEvent::NAMES.iter().position(|n| *n == name) else {
                return Err(Error::invalid_argument(format!(
                    "unknown worker event {name:?}: expected one of {}",
                    WorkerEvent::NAMES.join(", ")
                )));
            };
            wanted |= 1 << bit;
        }
        self.on_event(move |event| {
            if wanted & (1 << event.index()) != 0 {
                listener(event);
            }
        })
    }

    /// The options it runs with.
    pub fn options(&self) -> &WorkerOptions {
        &self.shared.options
    }

    /// A snapshot of its counters.
    pub fn stats(&self) -> WorkerStats {
        Self::stats_of(&self.shared)
    }

    pub(crate) fn stats_of(shared: &Shared) -> WorkerStats {
        let c = &shared.counters;
        WorkerStats {
            claimed: c.claimed.load(Ordering::Relaxed),
            completed: c.completed.load(Ordering::Relaxed),
            retried: c.retried.load(Ordering::Relaxed),
            dead: c.dead.load(Ordering::Relaxed),
            lease_lost: c.lease_lost.load(Ordering::Relaxed),
            in_flight: c.in_flight.load(Ordering::Relaxed),
            claim_failures: c.claim_failures.load(Ordering::Relaxed),
            heartbeat_failures: c.heartbeat_failures.load(Ordering::Relaxed),
            settle_failures: c.settle_failures.load(Ordering::Relaxed),
            released: c.released.load(Ordering::Relaxed),
        }
    }

    /// Ask the worker to stop: no new claims; in-flight jobs get the grace period.
    /// Idempotent and non-blocking.
    pub fn stop(&self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // A stored permit: the loop's wait wakes even if it starts just after.
        self.shared.stop_signal.notify_one();
    }

    /// `true` once `stop()` was called.
    pub fn is_stopping(&self) -> bool {
        self.shared.stopping.load(Ordering::SeqCst)
    }

    /// Run until [`Worker::stop`], then drain. Errors for a second
    /// concurrent `run` of the same worker, and with [`ErrorKind::Closed`]
    /// (after the same drain) when the client is closed under it.
    ///
    /// Dropping the future (a `select!`, a `timeout`) cancels the run: its
    /// background tasks and handlers are aborted and the jobs it held are
    /// handed back to pending, so it never keeps leases alive unattended.
    pub async fn run(&self) -> Result<()> {
        run::run(self.shared.clone()).await
    }

    /// `run` on the process's runtime, blocking the calling thread.
    pub fn run_blocking(&self) -> Result<()> {
        // block_on resumes a panic on this thread; answer it as a typed error.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::runtime::runtime().block_on(self.run())
        }))
        .unwrap_or_else(|p| Err(run_panicked(&*p)))
    }

    /// Test-only: make the next `run` panic inside the loop (not in a
    /// handler), to prove `join` and the bindings answer a typed error.
    #[doc(hidden)]
    pub fn panic_next_run_for_tests(&self) {
        self.shared.panic_next_run.store(true, Ordering::SeqCst);
    }

    /// Start `run` on the process's runtime and return a handle to join it.
    pub fn spawn(&self) -> WorkerHandle {
        let done = Arc::new((Mutex::new(None), Condvar::new()));
        let (worker, outcome) = (self.clone(), Outcome(done.clone()));
        crate::runtime::runtime().spawn(async move {
            // A panic inside the run (never a handler's: those fail their
            // jobs) must still answer `join`, as a typed error.
            let ran = std::panic::AssertUnwindSafe(worker.run())
                .catch_unwind()
                .await
                .unwrap_or_else(|p| Err(run_panicked(&*p)));
            outcome.fill(ran);
        });
        WorkerHandle {
            worker: self.clone(),
            done,
        }
    }
}

fn run_panicked(payload: &(dyn std::any::Any + Send)) -> Error {
    Error::internal_panic("the worker run", payload)
}

/// The slot `join` waits on. Filled once; if the task ends without filling it
/// (the runtime shut down under it), dropping fills it with a closed error so
/// `join` still returns.
struct Outcome(Arc<(Mutex<Option<Result<()>>>, Condvar)>);

impl Outcome {
    fn fill(&self, outcome: Result<()>) {
        let (slot, cv) = &*self.0;
        let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(outcome);
        }
        cv.notify_all();
    }
}

impl Drop for Outcome {
    fn drop(&mut self) {
        self.fill(Err(Error::new(
            ErrorKind::Closed,
            "the worker task ended without an outcome (its runtime shut down)",
        )));
    }
}

/// A worker started with [`Worker::spawn`].
pub struct WorkerHandle {
    worker: Worker,
    done: Arc<(Mutex<Option<Result<()>>>, Condvar)>,
}

impl WorkerHandle {
    /// The worker this handle runs.
    pub fn worker(&self) -> &Worker {
        &self.worker
    }

    /// Ask the worker to stop (see [`Worker::stop`]).
    pub fn stop(&self) {
        self.worker.stop();
    }

    /// Wait up to `limit` for the worker to finish; `None` if it is still running.
    pub fn join_timeout(&self, limit: Duration) -> Option<Result<()>> {
        let (slot, cv) = &*self.done;
        let guard = slot.lock().unwrap_or_else(|p| p.into_inner());
        let (guard, _) = cv
            .wait_timeout_while(guard, limit, |v| v.is_none())
            .unwrap_or_else(|p| p.into_inner());
        // Kept, not taken: another watcher (`wait_finished`) may be waiting too.
        guard.clone()
    }

    /// Wait up to `limit` for the worker to finish; true once it has. For a
    /// watcher other than the joiner (a binding's exit hook waiting for a
    /// drain).
    pub fn wait_finished(&self, limit: Duration) -> bool {
        self.join_timeout(limit).is_some()
    }

    /// Block until the worker has finished.
    pub fn join(self) -> Result<()> {
        loop {
            if let Some(outcome) = self.join_timeout(Duration::from_millis(200)) {
                return outcome;
            }
        }
    }
}
