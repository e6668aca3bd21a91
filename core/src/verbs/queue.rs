//! Queue handles: one queue's verbs without repeating its name.
//!
//! `client.queue("emails")?` checks the name once and answers a [`Queue`]
//! (async) or, from the blocking client, a [`BlockingQueue`]
//! (`echomq::blocking::Queue`). A handle is the client plus the name: cheap
//! to clone, sharing the client's connection; every verb is the client's
//! verb of the same name, so there is no second implementation to keep in
//! step. The client-level verbs (`queues`, `metrics_text`, `close`, ...)
//! stay on the client. Bindings wrap these handles, nothing more.

use std::time::Duration;

use crate::error::Result;
use crate::keys;
use crate::queue_events::{BlockingSubscription, Settled, Subscription};
use crate::runtime::runtime;
use crate::types::*;
use crate::verb_options::{BrowseOptions, EnqueueOptions, RetryOptions};
use crate::{BrandedId, Client};

/// One queue of an async [`Client`].
#[derive(Clone, Debug)]
pub struct Queue {
    client: Client,
    name: String,
}

impl Client {
    /// A handle on one queue: the per-queue verbs without repeating its
    /// name. The name is checked here (*invalid queue*), before any I/O;
    /// the handle shares this client's connection.
    pub fn queue(&self, name: &str) -> Result<Queue> {
        Queue::new(self.clone(), name)
    }
}

impl Queue {
    pub(crate) fn new(client: Client, name: &str) -> Result<Queue> {
        keys::validate_queue(name)?;
        Ok(Queue {
            client,
            name: name.to_string(),
        })
    }

    /// The queue's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The client underneath (for the client-level verbs).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Enqueue now under a freshly minted id.
    pub async fn enqueue(&self, payload: impl AsRef<[u8]>) -> Result<Enqueued> {
        self.client.enqueue(&self.name, payload).await
    }

    /// Enqueue as `options` say (`id`, `run_at_ms` / `delay_ms`).
    pub async fn enqueue_with(
        &self,
        payload: impl AsRef<[u8]>,
        options: &EnqueueOptions,
    ) -> Result<Enqueued> {
        self.client.enqueue_with(&self.name, payload, options).await
    }

    /// [`Client::enqueue_many`](crate::Client::enqueue_many) on this queue.
    pub async fn enqueue_many<P: AsRef<[u8]>>(
        &self,
        payloads: &[P],
    ) -> Result<Vec<Result<Enqueued>>> {
        self.client.enqueue_many(&self.name, payloads).await
    }

    /// [`Client::claim`](crate::Client::claim) on this queue.
    pub async fn claim(&self, lease_ms: u64) -> Result<Option<Job>> {
        self.client.claim(&self.name, lease_ms).await
    }

    /// [`Client::claim_many`](crate::Client::claim_many) on this queue.
    pub async fn claim_many(&self, max: u64, lease_ms: u64) -> Result<Vec<Job>> {
        self.client.claim_many(&self.name, max, lease_ms).await
    }

    /// [`Client::complete`](crate::Client::complete) on this queue.
    pub async fn complete(&self, id: &str, token: u64) -> Result<()> {
        self.client.complete(&self.name, id, token).await
    }

    /// [`Client::complete_many`](crate::Client::complete_many) on this queue.
    pub async fn complete_many(&self, jobs: &[(&str, u64)]) -> Result<Vec<Result<()>>> {
        self.client.complete_many(&self.name, jobs).await
    }

    /// [`Client::retry`](crate::Client::retry) on this queue.
    pub async fn retry(
        &self,
        id: &str,
        token: u64,
        options: &RetryOptions,
    ) -> Result<RetryOutcome> {
        self.client.retry_with(&self.name, id, token, options).await
    }

    /// [`Client::extend`](crate::Client::extend) on this queue.
    pub async fn extend(&self, id: &str, token: u64, lease_ms: u64) -> Result<()> {
        self.client.extend(&self.name, id, token, lease_ms).await
    }

    /// [`Client::extend_many`](crate::Client::extend_many) on this queue.
    pub async fn extend_many(
        &self,
        jobs: &[(&str, u64)],
        lease_ms: u64,
    ) -> Result<Vec<Result<()>>> {
        self.client.extend_many(&self.name, jobs, lease_ms).await
    }

    /// [`Client::promote`](crate::Client::promote) on this queue.
    pub async fn promote(&self, limit: u64) -> Result<u64> {
        self.client.promote(&self.name, limit).await
    }

    /// [`Client::reap`](crate::Client::reap) on this queue.
    pub async fn reap(&self, limit: u64) -> Result<u64> {
        self.client.reap(&self.name, limit).await
    }

    /// [`Client::counts`](crate::Client::counts) on this queue.
    pub async fn counts(&self) -> Result<Counts> {
        self.client.counts(&self.name).await
    }

    /// [`Client::job`](crate::Client::job) on this queue.
    pub async fn job(&self, id: &str) -> Result<Option<JobInfo>> {
        self.client.job(&self.name, id).await
    }

    /// [`Client::browse`](crate::Client::browse) on this queue.
    pub async fn browse(&self, set: BrowseSet, options: &BrowseOptions) -> Result<Vec<BrandedId>> {
        self.client.browse_with(&self.name, set, options).await
    }

    /// [`Client::pause`](crate::Client::pause) on this queue.
    pub async fn pause(&self) -> Result<()> {
        self.client.pause(&self.name).await
    }

    /// [`Client::resume`](crate::Client::resume) on this queue.
    pub async fn resume(&self) -> Result<()> {
        self.client.resume(&self.name).await
    }

    /// [`Client::is_paused`](crate::Client::is_paused) on this queue.
    pub async fn is_paused(&self) -> Result<bool> {
        self.client.is_paused(&self.name).await
    }

    /// [`Client::requeue_dead`](crate::Client::requeue_dead) on this queue.
    pub async fn requeue_dead(&self, id: &str) -> Result<()> {
        self.client.requeue_dead(&self.name, id).await
    }

    /// [`Client::remove`](crate::Client::remove) on this queue.
    pub async fn remove(&self, id: &str) -> Result<()> {
        self.client.remove(&self.name, id).await
    }

    /// [`Client::drain`](crate::Client::drain) on this queue.
    pub async fn drain(&self, include_scheduled: bool, limit: Option<u64>) -> Result<u64> {
        self.client
            .drain(&self.name, include_scheduled, limit)
            .await
    }

    /// [`Client::purge_dead`](crate::Client::purge_dead) on this queue.
    pub async fn purge_dead(&self, older_than_ms: Option<u64>, limit: Option<u64>) -> Result<u64> {
        self.client
            .purge_dead(&self.name, older_than_ms, limit)
            .await
    }

    /// [`Client::requeue_all_dead`](crate::Client::requeue_all_dead) on this queue.
    pub async fn requeue_all_dead(&self, limit: Option<u64>) -> Result<u64> {
        self.client.requeue_all_dead(&self.name, limit).await
    }

    /// [`Client::subscribe`](crate::Client::subscribe) on this queue.
    pub async fn subscribe(&self) -> Result<Subscription> {
        self.client.subscribe(&self.name).await
    }

    /// [`Client::wait_for`](crate::Client::wait_for) on this queue.
    pub async fn wait_for(&self, id: &str, timeout: Duration) -> Result<Settled> {
        self.client.wait_for(&self.name, id, timeout).await
    }

    /// [`Client::logs`](crate::Client::logs) on this queue (wire 2.1.0).
    pub async fn logs(&self, id: &str, start: i64, end: i64) -> Result<Vec<String>> {
        self.client.logs(&self.name, id, start, end).await
    }

    /// [`Client::result`](crate::Client::result) on this queue (wire 2.1.0).
    pub async fn result(&self, id: &str) -> Result<Option<Vec<u8>>> {
        self.client.result(&self.name, id).await
    }

    /// [`Client::wait_for_result`](crate::Client::wait_for_result) on this
    /// queue (wire 2.1.0).
    pub async fn wait_for_result(&self, id: &str, timeout: Duration) -> Result<Vec<u8>> {
        self.client.wait_for_result(&self.name, id, timeout).await
    }
}

/// One queue of a [`crate::blocking::Client`] (`echomq::blocking::Queue`).
#[derive(Clone, Debug)]
pub struct BlockingQueue {
    inner: Queue,
}

fn wait<F: std::future::Future>(fut: F) -> F::Output {
    runtime().block_on(fut)
}

impl BlockingQueue {
    pub(crate) fn new(client: Client, name: &str) -> Result<BlockingQueue> {
        Ok(BlockingQueue {
            inner: Queue::new(client, name)?,
        })
    }

    /// This queue's name.
    pub fn name(&self) -> &str {
        self.inner.name()
    }

    /// The async handle underneath (shares the connection).
    pub fn as_async(&self) -> &Queue {
        &self.inner
    }

    /// Blocking [`Queue::enqueue`](crate::Queue::enqueue).
    pub fn enqueue(&self, payload: impl AsRef<[u8]>) -> Result<Enqueued> {
        let name = self.inner.name.as_str();
        crate::direct::call(&self.inner.client, |c| async move {
            c.enqueue(name, payload).await
        })
    }

    /// Blocking [`Queue::enqueue_with`](crate::Queue::enqueue_with).
    pub fn enqueue_with(
        &self,
        payload: impl AsRef<[u8]>,
        options: &EnqueueOptions,
    ) -> Result<Enqueued> {
        let name = self.inner.name.as_str();
        crate::direct::call(&self.inner.client, |c| async move {
            c.enqueue_with(name, payload, options).await
        })
    }

    /// Blocking [`Queue::enqueue_many`](crate::Queue::enqueue_many).
    pub fn enqueue_many<P: AsRef<[u8]>>(&self, payloads: &[P]) -> Result<Vec<Result<Enqueued>>> {
        wait(self.inner.enqueue_many(payloads))
    }

    /// Blocking [`Queue::claim`](crate::Queue::claim).
    pub fn claim(&self, lease_ms: u64) -> Result<Option<Job>> {
        wait(self.inner.claim(lease_ms))
    }

    /// Blocking [`Queue::claim_many`](crate::Queue::claim_many).
    pub fn claim_many(&self, max: u64, lease_ms: u64) -> Result<Vec<Job>> {
        wait(self.inner.claim_many(max, lease_ms))
    }

    /// Blocking [`Queue::complete`](crate::Queue::complete).
    pub fn complete(&self, id: &str, token: u64) -> Result<()> {
        wait(self.inner.complete(id, token))
    }

    /// Blocking [`Queue::complete_many`](crate::Queue::complete_many).
    pub fn complete_many(&self, jobs: &[(&str, u64)]) -> Result<Vec<Result<()>>> {
        wait(self.inner.complete_many(jobs))
    }

    /// Blocking [`Queue::retry`](crate::Queue::retry).
    pub fn retry(&self, id: &str, token: u64, options: &RetryOptions) -> Result<RetryOutcome> {
        wait(self.inner.retry(id, token, options))
    }

    /// Blocking [`Queue::extend`](crate::Queue::extend).
    pub fn extend(&self, id: &str, token: u64, lease_ms: u64) -> Result<()> {
        wait(self.inner.extend(id, token, lease_ms))
    }

    /// Blocking [`Queue::extend_many`](crate::Queue::extend_many).
    pub fn extend_many(&self, jobs: &[(&str, u64)], lease_ms: u64) -> Result<Vec<Result<()>>> {
        wait(self.inner.extend_many(jobs, lease_ms))
    }

    /// Blocking [`Queue::promote`](crate::Queue::promote).
    pub fn promote(&self, limit: u64) -> Result<u64> {
        wait(self.inner.promote(limit))
    }

    /// Blocking [`Queue::reap`](crate::Queue::reap).
    pub fn reap(&self, limit: u64) -> Result<u64> {
        wait(self.inner.reap(limit))
    }

    /// Blocking [`Queue::counts`](crate::Queue::counts).
    pub fn counts(&self) -> Result<Counts> {
        wait(self.inner.counts())
    }

    /// Blocking [`Queue::job`](crate::Queue::job).
    pub fn job(&self, id: &str) -> Result<Option<JobInfo>> {
        wait(self.inner.job(id))
    }

    /// Blocking [`Queue::browse`](crate::Queue::browse).
    pub fn browse(&self, set: BrowseSet, options: &BrowseOptions) -> Result<Vec<BrandedId>> {
        wait(self.inner.browse(set, options))
    }

    /// Blocking [`Queue::pause`](crate::Queue::pause).
    pub fn pause(&self) -> Result<()> {
        wait(self.inner.pause())
    }

    /// Blocking [`Queue::resume`](crate::Queue::resume).
    pub fn resume(&self) -> Result<()> {
        wait(self.inner.resume())
    }

    /// Blocking [`Queue::is_paused`](crate::Queue::is_paused).
    pub fn is_paused(&self) -> Result<bool> {
        wait(self.inner.is_paused())
    }

    /// Blocking [`Queue::requeue_dead`](crate::Queue::requeue_dead).
    pub fn requeue_dead(&self, id: &str) -> Result<()> {
        wait(self.inner.requeue_dead(id))
    }

    /// Blocking [`Queue::remove`](crate::Queue::remove).
    pub fn remove(&self, id: &str) -> Result<()> {
        wait(self.inner.remove(id))
    }

    /// Blocking [`Queue::drain`](crate::Queue::drain).
    pub fn drain(&self, include_scheduled: bool, limit: Option<u64>) -> Result<u64> {
        wait(self.inner.drain(include_scheduled, limit))
    }

    /// Blocking [`Queue::purge_dead`](crate::Queue::purge_dead).
    pub fn purge_dead(&self, older_than_ms: Option<u64>, limit: Option<u64>) -> Result<u64> {
        wait(self.inner.purge_dead(older_than_ms, limit))
    }

    /// Blocking [`Queue::requeue_all_dead`](crate::Queue::requeue_all_dead).
    pub fn requeue_all_dead(&self, limit: Option<u64>) -> Result<u64> {
        wait(self.inner.requeue_all_dead(limit))
    }

    /// Blocking [`Queue::subscribe`](crate::Queue::subscribe).
    pub fn subscribe(&self) -> Result<BlockingSubscription> {
        wait(self.inner.subscribe()).map(BlockingSubscription::new)
    }

    /// Blocking [`Queue::wait_for`](crate::Queue::wait_for).
    pub fn wait_for(&self, id: &str, timeout: Duration) -> Result<Settled> {
        wait(self.inner.wait_for(id, timeout))
    }

    /// Blocking [`Queue::logs`](crate::Queue::logs).
    pub fn logs(&self, id: &str, start: i64, end: i64) -> Result<Vec<String>> {
        wait(self.inner.logs(id, start, end))
    }

    /// Blocking [`Queue::result`](crate::Queue::result).
    pub fn result(&self, id: &str) -> Result<Option<Vec<u8>>> {
        wait(self.inner.result(id))
    }

    /// Blocking [`Queue::wait_for_result`](crate::Queue::wait_for_result).
    pub fn wait_for_result(&self, id: &str, timeout: Duration) -> Result<Vec<u8>> {
        wait(self.inner.wait_for_result(id, timeout))
    }
}
