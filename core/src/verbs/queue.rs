//! Queue handles: one queue's verbs without repeating its name.
//!
//! `client.queue("emails")?` checks the name once and answers a [`Queue`]
//! (async) or, from the blocking client, a [`BlockingQueue`]
//! (`echomq::blocking::Queue`). A handle is the client plus the name: cheap
//! to clone, sharing the client's connection; every verb is the client's
//! verb of the same name, derived from the one table in `surface.rs`, so
//! there is no second implementation to keep in step. The client-level
//! verbs (`queues`, `metrics_text`, `close`, ...) stay on the client.
//! Bindings wrap these handles, nothing more.

use crate::error::Result;
use crate::keys;
use crate::queue_events::{BlockingSubscription, Subscription};
use crate::runtime::runtime;
use crate::types::*;
use crate::verb_options::{BrowseOptions, RetryOptions};
use crate::{BrandedId, Client};

/// One queue of an async [`Client`]. Its verbs are listed in `surface.rs`.
#[derive(Clone, Debug)]
pub struct Queue {
    pub(crate) client: Client,
    pub(crate) name: String,
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

    /// [`Client::retry_with`](crate::Client::retry_with) on this queue.
    pub async fn retry(
        &self,
        id: &str,
        token: u64,
        options: &RetryOptions,
    ) -> Result<RetryOutcome> {
        self.client.retry_with(&self.name, id, token, options).await
    }

    /// [`Client::browse_with`](crate::Client::browse_with) on this queue.
    pub async fn browse(&self, set: BrowseSet, options: &BrowseOptions) -> Result<Vec<BrandedId>> {
        self.client.browse_with(&self.name, set, options).await
    }

    /// [`Client::subscribe`](crate::Client::subscribe) to this queue.
    pub async fn subscribe(&self) -> Result<Subscription> {
        self.client.subscribe(&self.name).await
    }
}

/// One queue of a [`crate::blocking::Client`] (`echomq::blocking::Queue`).
#[derive(Clone, Debug)]
pub struct BlockingQueue {
    pub(crate) inner: Queue,
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

    /// Blocking [`Queue::retry`](crate::Queue::retry).
    pub fn retry(&self, id: &str, token: u64, options: &RetryOptions) -> Result<RetryOutcome> {
        wait(self.inner.retry(id, token, options))
    }

    /// Blocking [`Queue::browse`](crate::Queue::browse).
    pub fn browse(&self, set: BrowseSet, options: &BrowseOptions) -> Result<Vec<BrandedId>> {
        wait(self.inner.browse(set, options))
    }

    /// Blocking [`Queue::subscribe`](crate::Queue::subscribe).
    pub fn subscribe(&self) -> Result<BlockingSubscription> {
        wait(self.inner.subscribe()).map(BlockingSubscription::new)
    }
}
