//! The verbs over queue events ([`crate::queue_events`], which holds the
//! channel, the publisher and the subscription itself): subscribe to a
//! queue's events, and wait for a job to settle.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::id::BrandedId;
use crate::keys::{self, QueueKeys};
use crate::queue_events::{
    events_channel, BlockingSubscription, Channel, QueueEvent, Settled, Subscription,
};

/// How often a waiter re-reads the job besides waking on its events: a lost
/// message (or a publisher with events off) costs at most this long.
const WAIT_POLL: Duration = Duration::from_secs(1);

impl Client {
    /// Subscribe to `emq:{q}:events` on a connection of its own. Answers
    /// once the server confirmed the subscription, so every event published
    /// after this returns is delivered (at-most-once: barring a drop).
    pub async fn subscribe(&self, queue: &str) -> Result<Subscription> {
        self.subscribe_many(&[queue]).await
    }

    /// Subscribe to the events of several queues on one connection (a
    /// dashboard showing many queues holds one connection, not one per
    /// queue). Each event names its queue; otherwise as [`Client::subscribe`].
    pub async fn subscribe_many<Q: AsRef<str>>(&self, queues: &[Q]) -> Result<Subscription> {
        if queues.is_empty() {
            return Err(Error::invalid_argument("subscribe to at least one queue"));
        }
        let channels = queues
            .iter()
            .map(|q| Ok((events_channel(q.as_ref())?, q.as_ref().to_string())))
            .collect::<Result<Vec<Channel>>>()?;
        let timeout = self.options().connect_timeout;
        Subscription::open(self.transport_arc(), channels, timeout).await
    }

    /// Wait up to `timeout` for job `id` to complete or go dead. It subscribes
    /// first and reads the row second, so a job settling in between is not
    /// missed; a job whose row is already gone answers `Completed` (2.0.0
    /// deletes a completed job's row, so an id that was removed or never
    /// existed answers the same). A `removed` event while waiting is a
    /// *gone* error; the deadline passing is a *timeout* error.
    pub async fn wait_for(&self, queue: &str, id: &str, timeout: Duration) -> Result<Settled> {
        let keys = QueueKeys::new(queue)?;
        let id = BrandedId::parse(id)?;
        let row = keys.job(&id);
        let this = self.clone();
        self.wait_until(queue, id.as_str(), timeout, move |event| {
            let (this, row, id) = (this.clone(), row.clone(), id);
            async move {
                match event.as_ref().map(|e| e.event.as_str()) {
                    Some("completed") => return Ok(Some(Settled::Completed)),
                    Some("dead") => {
                        let error = event.and_then(|e| e.fields.get("error").cloned());
                        return Ok(Some(Settled::Dead { error }));
                    }
                    Some("removed") => {
                        return Err(Error::new(
                            ErrorKind::Gone,
                            format!("job {id} was removed while waiting"),
                        )
                        .about(&id))
                    }
                    _ => {}
                }
                let (state, error): (Option<String>, Option<String>) = this
                    .transport()
                    .query(redis::cmd("HMGET").arg(&row).arg("state").arg("last_error"))
                    .await?;
                Ok(match state.as_deref() {
                    None => Some(Settled::Completed),
                    Some("dead") => Some(Settled::Dead { error }),
                    Some(_) => None,
                })
            }
        })
        .await
    }

    /// The waiting loop under [`Client::wait_for`], for verbs that wait on a
    /// job in other ways (a result, ...). `probe` answers `Some` when the wait
    /// is over: it is called once after subscribing with `None`, then with
    /// each event about this job, and with `None` every second in case a
    /// message was lost.
    pub async fn wait_until<T, P, F>(
        &self,
        queue: &str,
        id: &str,
        timeout: Duration,
        mut probe: P,
    ) -> Result<T>
    where
        P: FnMut(Option<QueueEvent>) -> F,
        F: Future<Output = Result<Option<T>>>,
    {
        keys::validate_queue(queue)?;
        let id = BrandedId::parse(id)?;
        let deadline = Instant::now() + timeout;
        let timed_out = || {
            Error::new(
                ErrorKind::Timeout,
                format!("job {id} did not settle within {timeout:?}"),
            )
        };
        let mut events = tokio::time::timeout_at(deadline, self.subscribe(queue))
            .await
            .map_err(|_| timed_out())??;
        if let Some(done) = probe(None).await? {
            return Ok(done);
        }
        loop {
            let wake = deadline.min(Instant::now() + WAIT_POLL);
            let event = match tokio::time::timeout_at(wake, events.next()).await {
                Ok(Some(event)) if event.job == id.as_str() => Some(event),
                Ok(Some(_)) => continue,
                Ok(None) => return Err(Error::new(ErrorKind::Closed, "subscription closed")),
                Err(_) if Instant::now() >= deadline => return Err(timed_out()),
                Err(_) => None,
            };
            if let Some(done) = probe(event).await? {
                return Ok(done);
            }
        }
    }
}

impl crate::blocking::Client {
    /// Blocking [`Client::subscribe`](crate::Client::subscribe).
    pub fn subscribe(&self, queue: &str) -> Result<BlockingSubscription> {
        let inner = crate::runtime::runtime().block_on(self.as_async().subscribe(queue))?;
        Ok(BlockingSubscription::new(inner))
    }
}
