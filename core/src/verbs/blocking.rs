//! A blocking facade over [`crate::Client`] for callers without an async
//! runtime (the C ABI, Python's sync API). Every call runs on the process's
//! one runtime; do not call it from inside a tokio runtime.

use crate::error::Result;
use crate::fence::BundleMismatch;
use crate::options::ConnectOptions;
use crate::runtime::runtime;
use crate::types::*;
use crate::verb_options::{BrowseOptions, EnqueueOptions, RetryOptions};
use crate::BrandedId;

/// One queue of a blocking client: see [`crate::queue`].
pub use crate::queue::BlockingQueue as Queue;

/// The blocking client. Cheap to clone, `Send + Sync`.
#[derive(Clone, Debug)]
pub struct Client {
    inner: crate::Client,
}

fn wait<F: std::future::Future>(fut: F) -> F::Output {
    runtime().block_on(fut)
}

impl Client {
    /// Blocking [`Client::connect`](crate::Client::connect).
    pub fn connect(url: &str, options: ConnectOptions) -> Result<Client> {
        let inner = wait(crate::Client::connect(url, options))?;
        Ok(Client { inner })
    }

    /// Connect without naming a URL: `EMQ_URL` when set, else
    /// `redis://127.0.0.1:6379/` ([`crate::defaults::url`]).
    pub fn connect_default(options: ConnectOptions) -> Result<Client> {
        Client::connect(&crate::defaults::url(), options)
    }

    /// A handle on one queue (the name checked here, before any I/O).
    pub fn queue(&self, name: &str) -> Result<Queue> {
        Queue::new(self.inner.clone(), name)
    }

    /// The async client underneath (shares the connection).
    pub fn as_async(&self) -> &crate::Client {
        &self.inner
    }

    /// Wrap an async client; the two share one connection.
    pub fn from_async(inner: crate::Client) -> Client {
        Client { inner }
    }

    /// Blocking [`Client::node_id`](crate::Client::node_id).
    pub fn node_id(&self) -> u16 {
        self.inner.node_id()
    }

    /// Blocking [`Client::bundle_mismatches`](crate::Client::bundle_mismatches).
    pub fn bundle_mismatches(&self) -> Result<Vec<BundleMismatch>> {
        self.inner.bundle_mismatches()
    }

    /// [`Client::close`](crate::Client::close), then wait until
    /// [`Client::closed`](crate::Client::closed): the queue events of calls
    /// that answered before it are published (at most
    /// [`CLOSE_FLUSH`](crate::CLOSE_FLUSH)).
    /// Called on a thread of a tokio runtime (a callback), it cannot block
    /// there: it closes, and the flush goes on in the background. With
    /// nothing to flush (a forked child's inherited client) it never enters
    /// the runtime.
    pub fn close(&self) {
        let closed = self.inner.close_and_wait();
        if self.inner.flushing() && tokio::runtime::Handle::try_current().is_err() {
            wait(closed);
        }
    }

    /// Blocking [`Client::enqueue`](crate::Client::enqueue).
    pub fn enqueue(&self, queue: &str, payload: impl AsRef<[u8]>) -> Result<Enqueued> {
        crate::direct::call(
            &self.inner,
            |c| async move { c.enqueue(queue, payload).await },
        )
    }

    /// Blocking [`Client::enqueue_with_id`](crate::Client::enqueue_with_id).
    pub fn enqueue_with_id(
        &self,
        queue: &str,
        id: &str,
        payload: impl AsRef<[u8]>,
    ) -> Result<Enqueued> {
        crate::direct::call(&self.inner, |c| async move {
            c.enqueue_with_id(queue, id, payload).await
        })
    }

    /// Blocking [`Client::enqueue_at`](crate::Client::enqueue_at).
    pub fn enqueue_at(
        &self,
        queue: &str,
        payload: impl AsRef<[u8]>,
        run_at_ms: u64,
    ) -> Result<Enqueued> {
        crate::direct::call(&self.inner, |c| async move {
            c.enqueue_at(queue, payload, run_at_ms).await
        })
    }

    /// Blocking [`Client::enqueue_in`](crate::Client::enqueue_in).
    pub fn enqueue_in(
        &self,
        queue: &str,
        payload: impl AsRef<[u8]>,
        delay_ms: u64,
    ) -> Result<Enqueued> {
        crate::direct::call(&self.inner, |c| async move {
            c.enqueue_in(queue, payload, delay_ms).await
        })
    }

    /// Enqueue as `options` say (see [`crate::Client::enqueue_with`]).
    pub fn enqueue_with(
        &self,
        queue: &str,
        payload: impl AsRef<[u8]>,
        options: &EnqueueOptions,
    ) -> Result<Enqueued> {
        crate::direct::call(&self.inner, |c| async move {
            c.enqueue_with(queue, payload, options).await
        })
    }

    /// Blocking [`Client::enqueue_many`](crate::Client::enqueue_many).
    pub fn enqueue_many<P: AsRef<[u8]>>(
        &self,
        queue: &str,
        payloads: &[P],
    ) -> Result<Vec<Result<Enqueued>>> {
        wait(self.inner.enqueue_many(queue, payloads))
    }

    /// Blocking [`Client::claim`](crate::Client::claim).
    pub fn claim(&self, queue: &str, lease_ms: u64) -> Result<Option<Job>> {
        wait(self.inner.claim(queue, lease_ms))
    }

    /// Blocking [`Client::claim_many`](crate::Client::claim_many).
    pub fn claim_many(&self, queue: &str, max: u64, lease_ms: u64) -> Result<Vec<Job>> {
        wait(self.inner.claim_many(queue, max, lease_ms))
    }

    /// Blocking [`Client::complete`](crate::Client::complete).
    pub fn complete(&self, queue: &str, id: &str, token: u64) -> Result<()> {
        wait(self.inner.complete(queue, id, token))
    }

    /// Blocking [`Client::complete_many`](crate::Client::complete_many).
    pub fn complete_many(&self, queue: &str, jobs: &[(&str, u64)]) -> Result<Vec<Result<()>>> {
        wait(self.inner.complete_many(queue, jobs))
    }

    /// Blocking [`Client::retry`](crate::Client::retry).
    pub fn retry(
        &self,
        queue: &str,
        id: &str,
        token: u64,
        delay_ms: u64,
        max_attempts: u64,
        error: &str,
    ) -> Result<RetryOutcome> {
        wait(
            self.inner
                .retry(queue, id, token, delay_ms, max_attempts, error),
        )
    }

    /// [`Client::retry`] with its options named.
    pub fn retry_with(
        &self,
        queue: &str,
        id: &str,
        token: u64,
        options: &RetryOptions,
    ) -> Result<RetryOutcome> {
        wait(self.inner.retry_with(queue, id, token, options))
    }

    /// Blocking [`Client::extend`](crate::Client::extend).
    pub fn extend(&self, queue: &str, id: &str, token: u64, lease_ms: u64) -> Result<()> {
        wait(self.inner.extend(queue, id, token, lease_ms))
    }

    /// Blocking [`Client::extend_many`](crate::Client::extend_many).
    pub fn extend_many(
        &self,
        queue: &str,
        jobs: &[(&str, u64)],
        lease_ms: u64,
    ) -> Result<Vec<Result<()>>> {
        wait(self.inner.extend_many(queue, jobs, lease_ms))
    }

    /// Blocking [`Client::promote`](crate::Client::promote).
    pub fn promote(&self, queue: &str, limit: u64) -> Result<u64> {
        wait(self.inner.promote(queue, limit))
    }

    /// Blocking [`Client::reap`](crate::Client::reap).
    pub fn reap(&self, queue: &str, limit: u64) -> Result<u64> {
        wait(self.inner.reap(queue, limit))
    }

    /// Blocking [`Client::counts`](crate::Client::counts).
    pub fn counts(&self, queue: &str) -> Result<Counts> {
        wait(self.inner.counts(queue))
    }

    /// Blocking [`Client::job`](crate::Client::job).
    pub fn job(&self, queue: &str, id: &str) -> Result<Option<JobInfo>> {
        wait(self.inner.job(queue, id))
    }

    /// Blocking [`Client::browse`](crate::Client::browse).
    pub fn browse(
        &self,
        queue: &str,
        set: BrowseSet,
        newest_first: bool,
        limit: u64,
        range: Option<TimeRange>,
    ) -> Result<Vec<BrandedId>> {
        wait(self.inner.browse(queue, set, newest_first, limit, range))
    }

    /// [`Client::browse`] with its options named.
    pub fn browse_with(
        &self,
        queue: &str,
        set: BrowseSet,
        options: &BrowseOptions,
    ) -> Result<Vec<BrandedId>> {
        wait(self.inner.browse_with(queue, set, options))
    }

    /// Blocking [`Client::pause`](crate::Client::pause).
    pub fn pause(&self, queue: &str) -> Result<()> {
        wait(self.inner.pause(queue))
    }

    /// Blocking [`Client::resume`](crate::Client::resume).
    pub fn resume(&self, queue: &str) -> Result<()> {
        wait(self.inner.resume(queue))
    }

    /// Blocking [`Client::is_paused`](crate::Client::is_paused).
    pub fn is_paused(&self, queue: &str) -> Result<bool> {
        wait(self.inner.is_paused(queue))
    }

    /// Blocking [`Client::requeue_dead`](crate::Client::requeue_dead).
    pub fn requeue_dead(&self, queue: &str, id: &str) -> Result<()> {
        wait(self.inner.requeue_dead(queue, id))
    }

    /// Blocking [`Client::remove`](crate::Client::remove).
    pub fn remove(&self, queue: &str, id: &str) -> Result<()> {
        wait(self.inner.remove(queue, id))
    }
}
