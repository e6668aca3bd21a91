//! EchoMQ: a job queue whose protocol lives in Redis/Valkey Lua scripts and a
//! closed key grammar. This crate is the one client every runtime uses: the
//! C ABI, the Python and the Node packages are thin translations of it.
//!
//! Modules, one concern each:
//! - [`id`]: branded ids and the lock-free minter
//! - [`keys`]: the closed key grammar (build, parse, classify)
//! - [`slot`]: the cluster slot function
//! - [`scripts`]: the embedded Lua bundle
//! - [`Client`]: the async client; [`blocking::Client`]: the blocking facade;
//!   [`Queue`] / [`blocking::Queue`]: one queue's verbs (`client.queue("emails")?`)
//! - [`worker`]: the worker runtime (claim, run, heartbeat, settle, pumps)
//!   and its [`WorkerEvent`]s
//! - [`Subscription`]: queue events on `emq:{q}:events`, and `wait_for`
//! - [`metrics`]: Prometheus text for a set of queues
//! - [`probe`] and [`health`]: read-only facts about a deployment and the
//!   PASS/WARN/FAIL checks judged from them (`emq doctor`, the dashboard)
//! - [`logging`]: the core logs through the `log` crate; a forwarding logger
//!   for bindings whose language has no `log` bridge (Node, C)

#![deny(missing_docs)]

mod admin;
mod browse_page;
pub mod caller;
mod client;
mod conn;
pub mod defaults;
pub mod direct;
mod error;
mod fence;
pub mod option_schema;
mod options;
pub mod queue;
mod queue_events;
pub mod redact;
mod spin_wait;
mod surface;
mod transport;
mod types;
mod verb_options;
mod wire;

mod dedup;
mod enqueue;
mod limits;
mod progress;
pub mod repeat;
mod results;
mod stall;
mod upgrade;

pub mod blocking;
pub mod health;
pub mod id;
pub mod keys;
pub mod logging;
pub mod metrics;
pub mod probe;
#[doc(hidden)]
pub mod replies;
pub mod runtime;
pub mod scripts;
pub mod server_info;
pub mod slot;
pub mod worker;

pub use admin::{DeadBound, JobView, BATCH as ADMIN_BATCH};
pub use browse_page::{BrowseEntry, BrowsePage, MAX_PAGE};
pub use client::Client;
pub use error::{panicked, BatchItem, Error, ErrorKind, Fact, FactValue, Result, WriteState};
pub use fence::BundleMismatch;
pub use id::BrandedId;
pub use options::{ConnectOptions, DEFAULT_MAX_PAYLOAD};
pub use queue::Queue;
pub use queue_events::{
    events_channel, BlockingSubscription, QueueEvent, Settled, Subscription, SubscriptionCloser,
    CLOSE_FLUSH, LISTENER_RECHECK,
};
pub use repeat::{repeat_job_id, Repeat, RepeatOptions};
pub use stall::Reaped;
pub use types::{BrowseSet, Counts, Enqueued, Job, JobInfo, JobState, RetryOutcome, TimeRange};
pub use upgrade::{UpgradeReport, UpgradeStep};
pub use verb_options::{BrowseOptions, EnqueueOptions, RetryOptions};
pub use wire::WireVersion;
pub use worker::{
    Backoff, HandlerError, Output, Verdict, Worker, WorkerEvent, WorkerHandle, WorkerOptions,
    WorkerStats,
};

/// The newest wire protocol this client speaks (its default); the value of
/// `{emq}:version` it fences. See [`WireVersion`] for speaking an older one.
pub const PROTOCOL_VERSION: &str = "echomq:2.1.0";
