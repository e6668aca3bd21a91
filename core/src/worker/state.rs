//! The state one worker's tasks share: the handler dispatch, the counters
//! behind [`super::WorkerStats`], and the flags that stop a run. It lives apart
//! from the public API in `mod.rs` so the loop (`run.rs`) and the settler
//! (`settle.rs`) depend on it, not on each other's callers.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, OnceLock};

use super::events::{EventListener, WorkerEvent};
use super::series::WorkerMetrics;
use super::{Output, WorkerOptions};
use crate::client::Client;
use crate::types::Job;

pub(crate) type HandlerFuture = Pin<Box<dyn Future<Output = Output> + Send>>;
pub(crate) type BatchFuture = Pin<Box<dyn Future<Output = Vec<Output>> + Send>>;

/// How the loop hands jobs over: one call per job (its slot frees when it
/// ends), or one call per batch of up to `handler_batch` jobs answering a
/// verdict per job in order (one crossing into Python/Node/C per batch).
#[derive(Clone)]
pub(crate) enum Dispatch {
    PerJob(Arc<dyn Fn(Job) -> HandlerFuture + Send + Sync>),
    Batch(Arc<dyn Fn(Vec<Job>) -> BatchFuture + Send + Sync>),
}

#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) claimed: AtomicU64,
    pub(crate) completed: AtomicU64,
    pub(crate) retried: AtomicU64,
    pub(crate) dead: AtomicU64,
    pub(crate) lease_lost: AtomicU64,
    pub(crate) in_flight: AtomicU64,
    pub(crate) claim_failures: AtomicU64,
    pub(crate) heartbeat_failures: AtomicU64,
    pub(crate) settle_failures: AtomicU64,
    pub(crate) released: AtomicU64,
}

pub(crate) struct Shared {
    pub(crate) client: Client,
    pub(crate) queue: String,
    pub(crate) options: WorkerOptions,
    pub(crate) dispatch: Dispatch,
    pub(crate) counters: Counters,
    pub(crate) stopping: AtomicBool,
    pub(crate) stop_signal: tokio::sync::Notify,
    pub(crate) running: AtomicBool,
    /// The test-only hook behind `Worker::panic_next_run_for_tests`.
    pub(crate) panic_next_run: AtomicBool,
    /// The listener for this worker's events, if one was set.
    pub(crate) events: OnceLock<EventListener>,
    /// This worker's series in the process's metrics.
    pub(crate) metrics: WorkerMetrics,
    /// When the pumps next look (brought forward by what the worker learns).
    pub(crate) plan: super::pump::PumpPlan,
    /// Why the run must end, when something other than `stop()` ends it: an
    /// error no retry can cure (the version fence refusing this worker's
    /// wire after an upgrade). The run drains as for `stop()` and answers it.
    pub(crate) fatal: OnceLock<crate::error::Error>,
}

impl Shared {
    /// Report an event to the metrics and the listener (if any). Costs a few
    /// atomic adds when nobody listens.
    pub(crate) fn emit(&self, event: WorkerEvent) {
        self.metrics.observe(&event);
        if let Some(listener) = self.events.get() {
            listener(&event);
        }
    }

    /// End the run with `e` (the first such error wins): stop claiming,
    /// drain as for `stop()`, and answer `e` from `run`.
    pub(crate) fn fail(&self, e: &crate::error::Error) {
        if self.fatal.set(e.clone()).is_ok() {
            log::error!("echomq worker: {} stops: {e}", self.queue);
        }
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.stop_signal.notify_one();
    }

    /// Report a non-fatal failure of the worker's own calls.
    pub(crate) fn emit_error(&self, e: &crate::error::Error) {
        self.emit(WorkerEvent::Error {
            kind: e.kind(),
            message: e.to_string(),
        });
    }
}

pub(crate) fn panic_message(e: tokio::task::JoinError) -> String {
    if e.is_cancelled() {
        return "handler cancelled".to_string();
    }
    panic_text(&*e.into_panic())
}

/// The failure text for a handler's panic payload.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    format!("handler {}", crate::error::panicked(payload))
}
