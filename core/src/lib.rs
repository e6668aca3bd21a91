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
//!
//! # Layers
//!
//! The modules sit in five layers, one folder each under `core/src/`, lowest
//! first. A module imports from its own layer (never round a cycle) and from
//! the layers below, never from one above; `core/tests/layers.rs` holds this
//! table and fails on an import that breaks it. The module tree stays flat
//! (lib.rs finds each file with `#[path]`), so paths (`echomq::keys`,
//! `crate::transport`) and log targets (`echomq::transport`) name no layer:
//! the folder does. lib.rs itself only declares and re-exports.
//!
//! 1. `base/`: values and process plumbing, no server. `branded` (the
//!    branded id's value), [`Error`], [`id`] (checking and minting ids),
//!    [`WireVersion`] and [`PROTOCOL_VERSION`], the values the client hands
//!    back ([`Job`], [`Counts`], ...), [`defaults`], [`option_schema`] and
//!    [`ConnectOptions`], [`logging`], [`redact`], the process [`runtime`],
//!    and how a direct call waits (spin, then park).
//! 2. `protocol/`: the wire as this client speaks it. The key grammar
//!    ([`keys`], [`slot`]), the Lua bundle ([`scripts`]) and its fence,
//!    connections (`conn`, `transport`), the reply decoders ([`replies`]),
//!    [`server_info`], and queue events: the channel, the client's
//!    publisher, a [`Subscription`].
//! 3. `verbs/`: the client. [`Client`] and its core verbs (`client.rs`), the
//!    one enqueue (`enqueue.rs`), the verb options, the direct paths
//!    ([`direct`], [`caller`]), the handles ([`queue`], [`blocking`]), and
//!    one file per family of verbs, each an `impl Client` block: admin,
//!    dedup, browse pages, results, progress, limits, [`repeat`], stall,
//!    subscribe. `surface.rs` lists every verb's signature once and derives
//!    the blocking client's and both queue handles' forms from it.
//! 4. `worker/`: the [`worker`] runtime: claim, run, heartbeat, settle,
//!    pumps, the wake listener, this process's worker series.
//! 5. `ops/`: operating a deployment: [`probe`] and [`health`] (`emq
//!    doctor`), [`metrics`] (Prometheus text), the protocol upgrade.
//!
//! A lower layer that needs something from a higher one gets it moved down
//! to the layer that owns it (a value type, a constant) or inverts the
//! dependency (the transport closes a thread's connection as a `Companion`).

#![deny(missing_docs)]

// base (core/src/base/)
#[path = "base/branded.rs"]
mod branded;
#[path = "base/defaults.rs"]
pub mod defaults;
#[path = "base/error.rs"]
mod error;
#[path = "base/id.rs"]
pub mod id;
#[path = "base/logging.rs"]
pub mod logging;
#[path = "base/option_schema.rs"]
pub mod option_schema;
#[path = "base/options.rs"]
mod options;
#[path = "base/redact.rs"]
pub mod redact;
#[path = "base/runtime.rs"]
pub mod runtime;
#[path = "base/spin_wait.rs"]
mod spin_wait;
#[path = "base/types.rs"]
mod types;
#[path = "base/wire.rs"]
mod wire;

// protocol (core/src/protocol/)
#[path = "protocol/conn.rs"]
mod conn;
#[path = "protocol/fence.rs"]
mod fence;
#[path = "protocol/keys.rs"]
pub mod keys;
#[path = "protocol/queue_events.rs"]
mod queue_events;
#[path = "protocol/replies.rs"]
#[doc(hidden)]
pub mod replies;
#[path = "protocol/scripts.rs"]
pub mod scripts;
#[path = "protocol/server_info.rs"]
pub mod server_info;
#[path = "protocol/slot.rs"]
pub mod slot;
#[path = "protocol/transport.rs"]
mod transport;

// verbs (core/src/verbs/)
#[path = "verbs/admin.rs"]
mod admin;
#[path = "verbs/blocking.rs"]
pub mod blocking;
#[path = "verbs/browse_page.rs"]
mod browse_page;
#[path = "verbs/caller.rs"]
pub mod caller;
#[path = "verbs/client.rs"]
mod client;
#[path = "verbs/dedup.rs"]
mod dedup;
#[path = "verbs/direct.rs"]
pub mod direct;
#[path = "verbs/enqueue.rs"]
mod enqueue;
#[path = "verbs/limits.rs"]
mod limits;
#[path = "verbs/progress.rs"]
mod progress;
#[path = "verbs/queue.rs"]
pub mod queue;
#[path = "verbs/repeat.rs"]
pub mod repeat;
#[path = "verbs/results.rs"]
mod results;
#[path = "verbs/stall.rs"]
mod stall;
#[path = "verbs/subscribe.rs"]
mod subscribe;
#[path = "verbs/surface.rs"]
mod surface;
#[path = "verbs/verb_options.rs"]
mod verb_options;

// worker (core/src/worker/)
pub mod worker;

// ops (core/src/ops/)
#[path = "ops/health.rs"]
pub mod health;
#[path = "ops/metrics.rs"]
pub mod metrics;
#[path = "ops/probe.rs"]
pub mod probe;
#[path = "ops/upgrade.rs"]
mod upgrade;

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
pub use types::{
    BrowseSet, Counts, Enqueued, Job, JobInfo, JobState, Reaped, RetryOutcome, TimeRange,
    UpgradeReport, UpgradeStep,
};
pub use verb_options::{BrowseOptions, EnqueueOptions, RetryOptions, MAX_PRIORITY};
pub use wire::{WireVersion, PROTOCOL_VERSION};
pub use worker::{
    Backoff, HandlerError, Output, Verdict, Worker, WorkerEvent, WorkerHandle, WorkerOptions,
    WorkerStats,
};
