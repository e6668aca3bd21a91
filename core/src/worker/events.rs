//! What a worker reports while it runs, to one listener per worker (Node's
//! EventEmitter, Python's callbacks, the C event callback) and to this
//! process's metrics ([`crate::metrics`]). Each event is emitted after the
//! transition it names happened on the server, from the worker's own tasks:
//! a listener must return quickly (bindings hand the event to their language's
//! thread and return).

use std::sync::Arc;
use std::time::Duration;

use crate::error::ErrorKind;
use crate::id::BrandedId;

/// One worker event. Fields are the ones the event name promises.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WorkerEvent {
    /// A handler started on a job.
    Active {
        /// The job's id.
        id: BrandedId,
        /// The lease token of the attempt.
        token: u64,
    },
    /// The job's handler succeeded and its completion was accepted.
    Completed {
        /// The job's id.
        id: BrandedId,
        /// The lease token of the attempt.
        token: u64,
        /// How long the handler call ran (for a batch handler, the batch's call).
        duration: Duration,
    },
    /// The handler failed and the failure was recorded: scheduled again after
    /// `retry_in_ms`, or (`None`) dead-lettered (a `Dead` event follows).
    Failed {
        /// The job's id.
        id: BrandedId,
        /// The lease token of the attempt.
        token: u64,
        /// The handler's error message.
        error: String,
        /// Delay before the next attempt; `None` when dead-lettered.
        retry_in_ms: Option<u64>,
        /// How long the handler call ran.
        duration: Duration,
    },
    /// The job went to the dead set (after its last attempt, or a fatal error).
    Dead {
        /// The job's id.
        id: BrandedId,
        /// The lease token of the attempt.
        token: u64,
        /// The last error, stored as the job's `last_error`.
        error: String,
    },
    /// The worker no longer holds the job: its lease lapsed and the job was
    /// taken back (a settlement with this token was refused, or a heartbeat
    /// found it gone).
    LeaseLost {
        /// The job's id.
        id: BrandedId,
        /// The lease token of the attempt.
        token: u64,
    },
    /// The reap pump returned `count` jobs whose leases lapsed to pending.
    Stalled {
        /// Jobs returned to pending.
        count: u64,
    },
    /// A non-fatal failure of the worker's own calls (claim, heartbeat,
    /// settle, a pump); the worker keeps running. Also logged.
    Error {
        /// What failed, as a matchable kind.
        kind: ErrorKind,
        /// The error's message.
        message: String,
    },
    /// A claim found the queue empty after this worker had processed jobs.
    Drained,
    /// The worker stopped and drained; the last event of a run.
    Closed,
}

impl WorkerEvent {
    /// Every event's name, in the order the docs list them ([`WorkerEvent::name`]).
    pub const NAMES: [&'static str; 9] = [
        "active",
        "completed",
        "failed",
        "dead",
        "lease_lost",
        "stalled",
        "error",
        "drained",
        "closed",
    ];

    /// The event's name, as Node's EventEmitter and Python's callbacks use it.
    pub fn name(&self) -> &'static str {
        Self::NAMES[self.index()]
    }

    /// The event's position in [`WorkerEvent::NAMES`].
    pub(crate) fn index(&self) -> usize {
        match self {
            WorkerEvent::Active { .. } => 0,
            WorkerEvent::Completed { .. } => 1,
            WorkerEvent::Failed { .. } => 2,
            WorkerEvent::Dead { .. } => 3,
            WorkerEvent::LeaseLost { .. } => 4,
            WorkerEvent::Stalled { .. } => 5,
            WorkerEvent::Error { .. } => 6,
            WorkerEvent::Drained => 7,
            WorkerEvent::Closed => 8,
        }
    }

    /// The job the event is about, if any.
    pub fn job(&self) -> Option<(BrandedId, u64)> {
        match self {
            WorkerEvent::Active { id, token }
            | WorkerEvent::Completed { id, token, .. }
            | WorkerEvent::Failed { id, token, .. }
            | WorkerEvent::Dead { id, token, .. }
            | WorkerEvent::LeaseLost { id, token } => Some((*id, *token)),
            _ => None,
        }
    }

    /// The failure text of `failed`, `dead` and `error`.
    pub fn error(&self) -> Option<&str> {
        match self {
            WorkerEvent::Failed { error, .. } | WorkerEvent::Dead { error, .. } => Some(error),
            WorkerEvent::Error { message, .. } => Some(message),
            _ => None,
        }
    }

    /// The kind of an `error` event's failure.
    pub fn error_kind(&self) -> Option<ErrorKind> {
        match self {
            WorkerEvent::Error { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    /// `failed`: milliseconds until the next attempt (`None` when it went dead).
    pub fn retry_in_ms(&self) -> Option<u64> {
        match self {
            WorkerEvent::Failed { retry_in_ms, .. } => *retry_in_ms,
            _ => None,
        }
    }

    /// How long the handler ran, for `completed` and `failed`, in milliseconds.
    pub fn duration_ms(&self) -> Option<f64> {
        match self {
            WorkerEvent::Completed { duration, .. } | WorkerEvent::Failed { duration, .. } => {
                Some(duration.as_secs_f64() * 1000.0)
            }
            _ => None,
        }
    }

    /// `stalled`: how many jobs the reap pump returned to pending.
    pub fn count(&self) -> Option<u64> {
        match self {
            WorkerEvent::Stalled { count } => Some(*count),
            _ => None,
        }
    }
}

/// A worker's listener. Called on the worker's tasks; must not block.
pub type EventListener = Arc<dyn Fn(&WorkerEvent) + Send + Sync>;
