//! The idle worker's wake listener (echomq:2.1.0, docs/PROTOCOL-DECISIONS.md 16.x).
//!
//! An idle worker parks in `BLPOP emq:{q}:wake <fallback>` on a connection of
//! its own (a blocked connection carries nothing else, so it cannot share the
//! client's multiplexed one). Our producers push a token after every write that
//! makes a job claimable, and the claim script keeps the list honest (emptied
//! when pending is, one token while a backlog remains), so a token means "claim
//! now". Producers that send none are picked up when the BLPOP times out.
//!
//! The claim goes out with the `BLPOP`, queued behind it on the same
//! connection (16.9): the server runs it the moment the `BLPOP` answers, woken
//! or timed out, so a pickup costs no round trip between the two. Stopping
//! ends the `BLPOP` early with `CLIENT UNBLOCK` ([`Wake::unblock`]); the claim
//! then runs and answers, and the worker hands its jobs back.
//!
//! Producers that send no hint (another runtime, a raw `EVALSHA`, redis-cli;
//! 39.12): the park names the pending set too, `BLPOP wake pending`, so a
//! park that starts with pending non-empty answers at once (`WRONGTYPE`:
//! pending is a sorted set) and the claim runs. A job written while the
//! park waits is heard one of two ways: where the server publishes keyspace
//! events for the pending set, [`Wake::watch`] hears its `zadd` and ends the
//! park (`CLIENT UNBLOCK`); elsewhere the park lasts at most [`POLL`] and,
//! timed out, is simply sent again, so the next one's `WRONGTYPE` finds it —
//! one command a second.
//!
//! That command is all an idle worker sends (39.12, "a look the park stands
//! in for"): while the pumps' last `next_due` found the schedule, active and
//! repeat sets empty, a polling park names them as well ([`Names::Quiet`]).
//! A park that times out has seen all five keys absent when it began, which
//! is everything the pumps' next look would have told them, so the pumps
//! skip it; one that answers `WRONGTYPE` sends the pumps to look at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as SyncMutex};
use std::time::Duration;

use redis::Value;
use tokio::sync::Mutex;

use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::transport::BlockingConn;

/// Whether the server's `notify-keyspace-events` flags publish what an idle
/// worker listens for: keyspace events (`K`) of sorted-set commands (`z`,
/// or `A` for all classes), so a `ZADD` to a queue's pending set reaches
/// `__keyspace@<db>__:emq:{q}:pending` (docs/PROTOCOL-DECISIONS.md 39.12).
pub fn keyspace_events_cover_pending(flags: &str) -> bool {
    flags.contains('K') && (flags.contains('z') || flags.contains('A'))
}

/// Where the open wake connection sits on the server: its `CLIENT ID`, and
/// on a cluster the master it is connected to.
type BlockedOn = Option<(u64, Option<(String, u16)>)>;

/// The longest park without keyspace events: a job written without a hint
/// is claimed within about this long, and an idle worker sends one `BLPOP`
/// per this long.
pub(crate) const POLL: Duration = Duration::from_secs(1);

/// How often a worker without keyspace events asks again whether the server
/// now publishes them (one short-lived connection and a `CONFIG GET`).
const RECHECK: Duration = Duration::from_secs(300);

/// The keys a park's `BLPOP` names after the wake list. Every one but the
/// wake list is a sorted set, present only while it holds members, so the
/// `BLPOP` answers `WRONGTYPE` at once while any of them holds one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Names {
    /// The wake list only: a woken park whose claim found nothing (a paused
    /// queue's backlog would answer every park at once).
    WakeOnly,
    /// And the pending set: a job written without a hint answers the park.
    Pending,
    /// And the schedule, active and repeat sets, the ones the pumps'
    /// `next_due` reads: sent while the pumps last found those empty, so a
    /// park that times out stands in for the pumps' next look.
    Quiet,
}

/// One worker run's wake listener; cheap to clone (the tasks share it).
#[derive(Clone)]
pub(crate) struct Wake {
    client: Client,
    key: String,
    /// The queue's pending set, named by the park (its `WRONGTYPE`) and
    /// watched through keyspace events.
    pending: String,
    /// The schedule, active and repeat sets, named by a [`Names::Quiet`] park.
    pump_sets: [String; 3],
    conn: Arc<Mutex<Option<BlockingConn>>>,
    /// The open connection's `CLIENT ID` and (cluster) node, readable while
    /// `conn` is locked by a park.
    blocked_on: Arc<SyncMutex<BlockedOn>>,
    /// A park is on the wire (so a keyspace event should end it).
    parked: Arc<AtomicBool>,
    /// Keyspace events for the pending set are subscribed to.
    watched: Arc<AtomicBool>,
}

/// How a park ended: `woken` by a token (false: timed out or unblocked),
/// and the answer of the command queued behind the `BLPOP`, if one was.
pub(crate) struct Woke {
    pub(crate) woken: bool,
    /// Woken by `WRONGTYPE`: a set the park named after the wake list holds
    /// members (false for a token, a timeout or an unblock).
    pub(crate) occupied: bool,
    pub(crate) then: Option<redis::RedisResult<Value>>,
    /// The `BLPOP` itself was refused (a wrong-typed wake key, say; the
    /// connection is dropped). What was queued behind it still ran, so its
    /// answer is in `then` all the same.
    pub(crate) failed: Option<Error>,
}

impl Wake {
    pub(crate) fn new(client: Client, keys: crate::keys::QueueKeys) -> Wake {
        Wake {
            client,
            key: keys.wake,
            pending: keys.pending,
            pump_sets: [keys.schedule, keys.active, keys.repeat],
            conn: Arc::default(),
            blocked_on: Arc::default(),
            parked: Arc::default(),
            watched: Arc::default(),
        }
    }

    /// Keyspace events for the pending set are heard: a park may last the
    /// whole fallback, and its claim is queued behind it.
    pub(crate) fn watched(&self) -> bool {
        self.watched.load(Ordering::Acquire)
    }

    /// Listen for keyspace events of the pending set while the server
    /// publishes them (`notify-keyspace-events` with `K` and `z`, read with
    /// `CONFIG GET`, never set), on a subscriber of its own on the node that
    /// owns the queue's slot; a `zadd` ends a park. Without them (or with
    /// `CONFIG` refused) ask again every [`RECHECK`]. Runs until aborted.
    pub(crate) async fn watch(self) {
        use futures_util::StreamExt;
        loop {
            match self.subscribe().await {
                Ok(Some(pubsub)) => {
                    self.watched.store(true, Ordering::Release);
                    log::debug!("echomq worker: keyspace events of {} heard", self.pending);
                    let mut messages = pubsub.into_on_message();
                    while let Some(message) = messages.next().await {
                        if message.get_payload_bytes() == b"zadd"
                            && self.parked.swap(false, Ordering::AcqRel)
                        {
                            if let Err(e) = self.unblock().await {
                                log::debug!("echomq worker: cannot end the park: {e}");
                            }
                        }
                    }
                    self.watched.store(false, Ordering::Release);
                    log::debug!("echomq worker: keyspace events of {} dropped", self.pending);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Ok(None) => tokio::time::sleep(RECHECK).await,
                Err(e) => {
                    log::debug!("echomq worker: keyspace events unavailable: {e}");
                    tokio::time::sleep(RECHECK).await;
                }
            }
        }
    }

    /// A subscription to the pending set's keyspace channel, or `None` when
    /// the server does not publish those events (or refuses `CONFIG`).
    async fn subscribe(&self) -> Result<Option<redis::aio::PubSub>> {
        let timeout = self.client.options().connect_timeout;
        let transport = self.client.transport();
        let clients = transport.pubsub_clients(&self.pending).await;
        let Some(node) = clients.first() else {
            return Ok(None);
        };
        let open = async {
            let mut conn = node.get_multiplexed_async_connection().await?;
            // A map in RESP3, name/value pairs in RESP2: both read as a map.
            let flags: redis::RedisResult<std::collections::HashMap<String, String>> =
                redis::cmd("CONFIG")
                    .arg("GET")
                    .arg("notify-keyspace-events")
                    .query_async(&mut conn)
                    .await;
            let on = match flags {
                Ok(config) => config
                    .get("notify-keyspace-events")
                    .is_some_and(|f| keyspace_events_cover_pending(f)),
                Err(_) => false, // CONFIG refused: poll.
            };
            if !on {
                return Ok(None);
            }
            let db = node.get_connection_info().redis_settings().db();
            let mut pubsub = node.get_async_pubsub().await?;
            pubsub
                .subscribe(format!("__keyspace@{db}__:{}", self.pending))
                .await?;
            Ok::<_, Error>(Some(pubsub))
        };
        tokio::time::timeout(timeout, open).await.map_err(|_| {
            Error::new(
                ErrorKind::Timeout,
                format!("keyspace events: no answer within {timeout:?}"),
            )
        })?
    }

    /// Wait up to `timeout` for a token, then run `then` (the claim) on the
    /// same connection without a round trip in between. Naming more than the
    /// wake list (`names`), the park also answers at once (as woken and
    /// occupied) while any of those sets holds members. A
    /// failed connection is dropped and reopened on the next call.
    /// Closing the client ends the wait at once with `Closed`, dropping the
    /// connection (the server then discards the queued command unless it
    /// already ran).
    pub(crate) async fn wait(
        &self,
        timeout: Duration,
        then: Option<redis::Cmd>,
        names: Names,
    ) -> Result<Woke> {
        let transport = self.client.transport();
        let mut slot = self.conn.lock().await;
        if transport.is_closed() {
            slot.take();
            self.blocked_on().take();
            return Err(Error::new(ErrorKind::Closed, "client is closed"));
        }
        if slot.is_none() {
            let conn = self.client.transport().open_blocking(&self.key).await?;
            *self.blocked_on() = Some((conn.id, conn.node.clone()));
            *slot = Some(conn);
        }
        let conn = slot.as_mut().expect("opened above");
        // BLPOP takes seconds (a float since Redis 6); the socket gets a margin on top.
        let secs = format!("{:.3}", timeout.as_secs_f64().max(0.001));
        let mut blpop = redis::cmd("BLPOP");
        blpop.arg(&self.key);
        if names != Names::WakeOnly {
            // Not a list: BLPOP answers WRONGTYPE at once while it holds jobs.
            blpop.arg(&self.pending);
        }
        if names == Names::Quiet {
            // BLPOP looks at its keys in order when it arrives: answering
            // nil, it found every one of these absent too.
            blpop.arg(&self.pump_sets[..]);
        }
        blpop.arg(secs);
        let cmds: Vec<redis::Cmd> = std::iter::once(blpop).chain(then).collect();
        let margin = self.client.options().connect_timeout;
        // The connection is dropped after any failure: a fresh one parks next.
        let drop_conn = |slot: &mut Option<BlockingConn>| {
            slot.take();
            self.blocked_on().take();
        };
        let failed = |slot: &mut Option<BlockingConn>, e: Error| {
            drop_conn(slot);
            Err(e)
        };
        self.parked.store(true, Ordering::Release);
        let answered = tokio::select! {
            answered = tokio::time::timeout(timeout + margin, conn.pipeline(cmds)) => answered,
            () = transport.closed() => {
                self.parked.store(false, Ordering::Release);
                return failed(&mut slot, Error::new(ErrorKind::Closed, "client is closed"));
            }
        };
        self.parked.store(false, Ordering::Release);
        match answered {
            Ok(Ok(answers)) => {
                let mut answers = answers.into_iter();
                let (woken, occupied, refused) = match answers.next() {
                    Some(Ok(Value::Nil)) => (false, false, None),
                    Some(Ok(_)) => (true, false, None),
                    // A named sorted set holds members (pending: jobs).
                    Some(Err(e)) if names != Names::WakeOnly && e.code() == Some("WRONGTYPE") => {
                        (true, true, None)
                    }
                    // MOVED after a failover, say: a fresh connection finds the owner.
                    Some(Err(e)) => {
                        drop_conn(&mut slot);
                        (false, false, Some(e.into()))
                    }
                    None => {
                        return failed(
                            &mut slot,
                            Error::new(ErrorKind::Protocol, "BLPOP gave no answer"),
                        )
                    }
                };
                Ok(Woke {
                    woken,
                    occupied,
                    then: answers.next(),
                    failed: refused,
                })
            }
            Ok(Err(e)) => failed(&mut slot, e),
            Err(_) => failed(
                &mut slot,
                Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "BLPOP on {} did not answer within {:?}",
                        self.key,
                        timeout + margin
                    ),
                ),
            ),
        }
    }

    /// End a park's `BLPOP` now, as a timeout (what is queued behind it then
    /// runs and answers). False if no connection is open, or none was
    /// blocked (the park has not reached the server yet, or has answered).
    pub(crate) async fn unblock(&self) -> Result<bool> {
        let Some((id, node)) = self.blocked_on().clone() else {
            return Ok(false);
        };
        self.client.transport().unblock(id, node.as_ref()).await
    }

    fn blocked_on(&self) -> std::sync::MutexGuard<'_, BlockedOn> {
        self.blocked_on.lock().unwrap_or_else(|p| p.into_inner())
    }
}
