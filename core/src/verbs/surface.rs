//! The surface, declared once. Each verb's body is written once, as an async
//! method of [`Client`] (client.rs, enqueue.rs, admin.rs, ...); the table
//! below names its signature, and the macro derives from it every other
//! form the core offers:
//!
//! - `queue` rows: [`blocking::Client`](crate::blocking::Client) (the queue
//!   name first), [`Queue`] (async) and [`blocking::Queue`](crate::blocking::Queue)
//!   (the name taken from the handle);
//! - `client` rows: [`blocking::Client`](crate::blocking::Client) only.
//!
//! `direct` runs a blocking call on the caller's thread when it can
//! ([`crate::direct`]: the low-latency path for one-at-a-time producers);
//! `wait` runs it on the process runtime. A verb added here is a verb of
//! all four types; the bindings wrap these (docs/CONTRIBUTING.md).
//!
//! The few forms that are not plain forwards stay hand-written beside their
//! types: `subscribe` (the blocking subscription is its own type), the
//! handles' `retry` and `browse` (they take the options structs), and
//! `upgrade_protocol_with` (it takes callbacks).

use std::time::Duration;

use crate::admin::{DeadBound, JobView};
use crate::browse_page::BrowsePage;
use crate::error::Result;
use crate::queue::{BlockingQueue, Queue};
use crate::repeat::{Repeat, RepeatOptions};

use crate::types::*;
use crate::types::{Reaped, UpgradeReport};
use crate::verb_options::{BrowseOptions, EnqueueOptions, RetryOptions};
use crate::wire::WireVersion;
use crate::{BrandedId, Client};

/// Run `$call` (a closure taking the client by value) the `$how` way.
macro_rules! run {
    (direct, $client:expr, $call:expr) => {
        crate::direct::call($client, $call)
    };
    (wait, $client:expr, $call:expr) => {
        crate::runtime::runtime().block_on(($call)($client.clone()))
    };
}

macro_rules! surface {
    (
        queue {
            $( $qhow:ident fn $q:ident ( $( $qa:ident : $qt:ty ),* $(,)? ) -> $qr:ty ; )*
        }
        client {
            $( $chow:ident fn $c:ident ( $( $ca:ident : $ct:ty ),* $(,)? ) -> $cr:ty ; )*
        }
    ) => {
        impl crate::blocking::Client {
            $(
                #[doc = concat!("Blocking [`Client::", stringify!($q), "`](crate::Client::", stringify!($q), ").")]
                pub fn $q(&self, queue: &str, $( $qa: $qt ),*) -> Result<$qr> {
                    run!($qhow, self.as_async(), |c: Client| async move { c.$q(queue, $( $qa ),*).await })
                }
            )*
            $(
                #[doc = concat!("Blocking [`Client::", stringify!($c), "`](crate::Client::", stringify!($c), ").")]
                pub fn $c(&self, $( $ca: $ct ),*) -> Result<$cr> {
                    run!($chow, self.as_async(), |c: Client| async move { c.$c($( $ca ),*).await })
                }
            )*
        }

        impl Queue {
            $(
                #[doc = concat!("[`Client::", stringify!($q), "`](crate::Client::", stringify!($q), ") on this queue.")]
                pub async fn $q(&self, $( $qa: $qt ),*) -> Result<$qr> {
                    self.client.$q(&self.name, $( $qa ),*).await
                }
            )*
        }

        impl BlockingQueue {
            $(
                #[doc = concat!("Blocking [`Queue::", stringify!($q), "`](crate::Queue::", stringify!($q), ").")]
                pub fn $q(&self, $( $qa: $qt ),*) -> Result<$qr> {
                    let queue = self.inner.name.as_str();
                    run!($qhow, &self.inner.client, |c: Client| async move { c.$q(queue, $( $qa ),*).await })
                }
            )*
        }
    };
}

surface! {
    queue {
        // produce
        direct fn enqueue(payload: impl AsRef<[u8]>, options: EnqueueOptions) -> Enqueued;
        wait fn enqueue_many(items: &[(impl AsRef<[u8]>, EnqueueOptions)]) -> Vec<Result<Enqueued>>;
        // claim and settle
        wait fn claim(lease_ms: u64) -> Option<Job>;
        wait fn claim_many(max: u64, lease_ms: u64) -> Vec<Job>;
        wait fn complete(id: &str, token: u64) -> ();
        wait fn complete_many(jobs: &[(&str, u64)]) -> Vec<Result<()>>;
        wait fn extend(id: &str, token: u64, lease_ms: u64) -> ();
        wait fn extend_many(jobs: &[(&str, u64)], lease_ms: u64) -> Vec<Result<()>>;
        wait fn rate_limit(id: &str, token: u64, ms: u64) -> ();
        wait fn update_progress(id: &str, token: u64, progress: &str) -> ();
        wait fn log(id: &str, line: &str, max_lines: Option<u64>) -> u64;
        // pumps
        wait fn promote(limit: u64) -> u64;
        wait fn reap(limit: u64) -> u64;
        wait fn reap_stalled(limit: u64, max_stalls: u64) -> Reaped;
        wait fn fire_repeats(limit: u64) -> u64;
        // inspect
        wait fn counts() -> Counts;
        wait fn job(id: &str) -> Option<JobInfo>;
        wait fn exists(id: &str) -> bool;
        wait fn inspect(id: &str) -> Option<JobView>;
        wait fn job_due_ms(id: &str) -> Option<u64>;
        wait fn browse_page(
            set: BrowseSet,
            newest_first: bool,
            offset: u64,
            limit: u64,
            range: Option<TimeRange>,
        ) -> BrowsePage;
        wait fn logs(id: &str, start: i64, end: i64) -> Vec<String>;
        wait fn result(id: &str) -> Option<Vec<u8>>;
        wait fn wait_for(id: &str, timeout: Duration) -> crate::Settled;
        wait fn wait_for_result(id: &str, timeout: Duration) -> Vec<u8>;
        wait fn is_paused() -> bool;
        wait fn list_repeats() -> Vec<Repeat>;
        // operate
        wait fn pause() -> ();
        wait fn resume() -> ();
        wait fn set_concurrency(n: u64) -> ();
        wait fn set_rate_limit(max: u64, per_ms: u64) -> ();
        wait fn requeue_dead(id: &str) -> ();
        wait fn requeue_all_dead(limit: Option<u64>) -> u64;
        wait fn remove(id: &str) -> ();
        wait fn drain(include_scheduled: bool, limit: Option<u64>) -> u64;
        wait fn purge_dead(older_than_ms: Option<u64>, limit: Option<u64>) -> u64;
        wait fn trim_dead(bound: DeadBound, limit: Option<u64>) -> u64;
        wait fn upsert_repeat(name: &str, payload: impl AsRef<[u8]>, options: &RepeatOptions) -> Repeat;
        wait fn remove_repeat(name: &str) -> bool;
    }
    client {
        wait fn queues() -> Vec<String>;
        wait fn server_now_ms() -> u64;
        wait fn metrics_text(queues: &[&str]) -> String;
        wait fn upgrade_protocol(from: WireVersion, to: WireVersion, dry_run: bool) -> UpgradeReport;
        wait fn retry(
            queue: &str,
            id: &str,
            token: u64,
            delay_ms: u64,
            max_attempts: u64,
            error: &str,
        ) -> RetryOutcome;
        wait fn retry_with(queue: &str, id: &str, token: u64, options: &RetryOptions) -> RetryOutcome;
        wait fn browse(
            queue: &str,
            set: BrowseSet,
            newest_first: bool,
            limit: u64,
            range: Option<TimeRange>,
        ) -> Vec<BrandedId>;
        wait fn browse_with(queue: &str, set: BrowseSet, options: &BrowseOptions) -> Vec<BrandedId>;
    }
}
