//! Queue events: what happened to a queue, for processes that are not its
//! worker (a web server waiting for a job, a dashboard).
//!
//! Each transition a verb's reply proves is published on the pub/sub channel
//! `emq:{q}:events` (a channel, not a key: the key grammar is untouched) as one
//! JSON object whose values are all strings: `event`, `job` (the id; empty for
//! queue-wide events such as `paused`) and the fields that fit the event. See
//! docs/PROTOCOL-DECISIONS.md "Observability". Delivery is at-most-once, like
//! Redis pub/sub itself: nobody subscribed, or a subscriber reconnecting,
//! means the message is gone.
//!
//! Publishing never adds a round trip to a verb: the client hands messages to
//! one background task per client, which sends whatever has queued up as one
//! pipeline of `PUBLISH`es, in the order the verbs answered. Closing the
//! client lets that task send what is still queued, on the connection that
//! was live, for at most [`CLOSE_FLUSH`];
//! [`Client::closed`](crate::Client::closed) waits for it.

use std::collections::{BTreeMap, HashMap};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use arc_swap::ArcSwap;

use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::conn::Conn;
use crate::error::{Error, ErrorKind, Result};
use crate::keys::QueueKeys;
use crate::scripts;
use crate::transport::{self, Transport};

/// The pub/sub channel of a queue's events: `emq:{q}:events`.
pub fn events_channel(queue: &str) -> Result<String> {
    Ok(format!("{}events", QueueKeys::new(queue)?.base))
}

/// One message of `emq:{q}:events`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueEvent {
    /// The queue the message was published for.
    pub queue: String,
    /// `added`, `active`, `completed`, `retried`, `dead`, `stalled`,
    /// `removed`, `requeued`, `paused`, `resumed` (later features add theirs).
    pub event: String,
    /// The job's id; empty for queue-wide events (`paused`, `resumed`).
    pub job: String,
    /// Every other field of the message (`token`, `attempts`, `error`, `delay_ms`, ...).
    pub fields: BTreeMap<String, String>,
}

impl QueueEvent {
    /// A field other than `event` and `job`.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }

    /// The message as published: a JSON object of strings.
    pub fn to_json(&self) -> String {
        encode(&self.event, &self.job, self.fields.iter())
    }

    /// Read a message; `None` when it is not a JSON object with an `event`.
    /// Non-string values (another publisher's) are kept as their JSON text.
    pub fn parse(queue: &str, payload: &[u8]) -> Option<QueueEvent> {
        let serde_json::Value::Object(map) = serde_json::from_slice(payload).ok()? else {
            return None;
        };
        let mut fields: BTreeMap<String, String> = map
            .into_iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => (k, s),
                other => (k, other.to_string()),
            })
            .collect();
        let event = fields.remove("event")?;
        let job = fields.remove("job").unwrap_or_default();
        Some(QueueEvent {
            queue: queue.to_string(),
            event,
            job,
            fields,
        })
    }
}

/// `{"event":…,"job":…,<fields>}`: written directly (JSON escaping by
/// serde_json), as this runs for every transition.
fn encode<K: AsRef<str>, V: AsRef<str>>(
    event: &str,
    job: &str,
    fields: impl Iterator<Item = (K, V)>,
) -> String {
    fn pair(out: &mut Vec<u8>, key: &str, value: &str) {
        out.push(if out.is_empty() { b'{' } else { b',' });
        serde_json::to_writer(&mut *out, key).expect("writing to a Vec cannot fail");
        out.push(b':');
        serde_json::to_writer(&mut *out, value).expect("writing to a Vec cannot fail");
    }
    let mut out = Vec::with_capacity(96);
    pair(&mut out, "event", event);
    pair(&mut out, "job", job);
    for (k, v) in fields {
        pair(&mut out, k.as_ref(), v.as_ref());
    }
    out.push(b'}');
    String::from_utf8(out).expect("JSON written from str is UTF-8")
}

// ---- publishing ------------------------------------------------------------

/// Messages waiting for the publisher task; more are dropped (at-most-once),
/// never allowed to slow a verb down or grow without bound.
const PUBLISH_BUFFER: usize = 65_536;
/// Messages sent in one round trip at most.
const PUBLISH_BATCH: usize = 1_024;

/// After a `publish` call found nobody subscribed to a channel, that
/// channel's events are dropped here, without a round trip, for this long
/// before the server is asked again (docs/PROTOCOL-DECISIONS.md 12.10): a
/// worker with nobody listening sends ten trivial calls a second per queue
/// instead of one per settled batch. So a subscriber in another process may
/// miss what happened in its first this-long: one that must not (a
/// dashboard) re-reads the queue once this has passed after subscribing.
pub const LISTENER_RECHECK: Duration = Duration::from_millis(100);

/// Bumped by every subscription this process makes, so a publisher in the
/// same process asks the server again at once rather than after
/// [`LISTENER_RECHECK`].
static SUBSCRIPTIONS: AtomicU64 = AtomicU64::new(0);

/// A queue's base (`emq:{q}:`) and one JSON message for its channel.
type Message = (Arc<str>, String);

/// Channels last found without a subscriber: when, and the process's
/// subscription count then. Shared by the publisher task (which writes it)
/// and the verbs (which read it), so an event for a channel nobody heard a
/// moment ago is not even built, let alone handed to the task: with nobody
/// listening, a one-in-flight enqueue wakes no other thread. Per process
/// ([`ProcessTask`]): every enqueue locks it, so a parent's thread may hold
/// it at fork().
type Unheard = Arc<Mutex<HashMap<Arc<str>, (Instant, u64)>>>;

/// Whether `base`'s channel was found without subscribers less than
/// [`LISTENER_RECHECK`] ago, with no subscription made in this process since.
fn recently_unheard(unheard: &Unheard, base: &str) -> bool {
    let map = unheard.lock().unwrap_or_else(|p| p.into_inner());
    matches!(map.get(base), Some(&(at, seen))
        if at.elapsed() < LISTENER_RECHECK && seen == SUBSCRIPTIONS.load(Ordering::Acquire))
}

/// How long, after [`Client::close`](crate::Client::close), the events
/// queued before it may take to go out before the rest are dropped
/// (docs/PROTOCOL-DECISIONS.md 12.4).
pub const CLOSE_FLUSH: Duration = Duration::from_secs(1);

/// One client's publisher: a channel to a background task that owns the
/// sending. Started lazily on the calling runtime, and again in a forked
/// child (the parent's task does not exist there).
pub(crate) struct Publisher {
    enabled: bool,
    transport: Arc<Transport>,
    task: ArcSwap<ProcessTask>,
}

/// The publishing state of one process. A forked child gets a fresh one
/// (see [`Publisher::task`]): a parent thread may have held either lock at
/// fork(), and no thread of the child would ever release it. The parent's
/// is never dropped in the child: its task's sender would wake the parent's
/// publisher task, scheduling it on the parent's runtime, whose scheduler
/// lock a parent thread may have held at fork() too.
struct ProcessTask {
    pid: u32,
    task: Mutex<Task>,
    unheard: Unheard,
}

impl ProcessTask {
    fn new(task: Task) -> ProcessTask {
        ProcessTask {
            pid: std::process::id(),
            task: Mutex::new(task),
            unheard: Unheard::default(),
        }
    }
}

/// The publisher task's state, as the verbs see it.
enum Task {
    /// Not started yet.
    Idle,
    /// Started by process `pid` (a forked child starts its own).
    Running {
        pid: u32,
        tx: mpsc::Sender<Message>,
        drain: Arc<Drain>,
    },
    /// The client closed: nothing more is queued; the task, if it ran in
    /// this process, is sending what it holds.
    Closed(Option<Arc<Drain>>),
}

/// What closing hands the task: the connection its last messages go out on
/// and until when; and what the task tells
/// [`Client::closed`](crate::Client::closed) when it is done.
#[derive(Default)]
struct Drain {
    last: Mutex<Option<Conn>>,
    deadline: OnceLock<Instant>,
    done: AtomicBool,
    finished: Notify,
}

impl Drain {
    /// Closing: `last` carries what is queued, until [`CLOSE_FLUSH`] from now.
    fn arm(&self, last: Option<Conn>) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = last;
        let _ = self.deadline.set(Instant::now() + CLOSE_FLUSH);
    }

    fn expired(&self) -> bool {
        self.deadline.get().is_some_and(|d| Instant::now() >= *d)
    }

    /// One `publish` call on the connection closing left, within the deadline.
    async fn send_last(&self, meta: &str, args: &[&[u8]]) -> Result<redis::Value> {
        let closed = || Error::new(ErrorKind::Closed, "client is closed");
        let conn = self.last.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let (Some(conn), Some(deadline)) = (conn, self.deadline.get()) else {
            return Err(closed());
        };
        let keys = [meta];
        let call = transport::script_on(conn, &scripts::PUBLISH, &keys, args);
        tokio::time::timeout_at(*deadline, call)
            .await
            .unwrap_or_else(|_| Err(Error::new(ErrorKind::Timeout, "close's flush ran out")))
    }

    /// The task ended: release the connection and wake who waits.
    fn finish(&self) {
        drop(self.last.lock().unwrap_or_else(|p| p.into_inner()).take());
        self.done.store(true, Ordering::Release);
        self.finished.notify_waiters();
    }

    /// Ready once the task ended or the deadline passed.
    async fn finished(&self) {
        let notified = self.finished.notified();
        tokio::pin!(notified);
        // Registered before the check, so a finish in between still wakes it.
        notified.as_mut().enable();
        if self.done.load(Ordering::Acquire) {
            return;
        }
        match self.deadline.get() {
            Some(deadline) => drop(tokio::time::timeout_at(*deadline, notified).await),
            None => notified.await,
        }
    }
}

/// The messages of one verb's answer, sent together.
pub(crate) struct Batch<'a> {
    publisher: &'a Publisher,
    base: Arc<str>,
    messages: Vec<Message>,
}

impl Batch<'_> {
    /// Add one event; `fields` are the extra string fields.
    pub(crate) fn add(&mut self, event: &str, job: &str, fields: &[(&str, &str)]) {
        let json = encode(event, job, fields.iter().map(|(k, v)| (*k, *v)));
        self.messages.push((self.base.clone(), json));
    }

    /// Hand the messages to the publisher task (never waits).
    pub(crate) fn send(self) {
        if !self.messages.is_empty() {
            self.publisher.enqueue(self.messages);
        }
    }
}

impl Publisher {
    pub(crate) fn new(transport: Arc<Transport>, enabled: bool) -> Publisher {
        Publisher {
            enabled,
            transport,
            task: ArcSwap::from_pointee(ProcessTask::new(Task::Idle)),
        }
    }

    /// A batch for `base` (`emq:{q}:`), or `None` when publishing is off or
    /// nobody listened a moment ago, so callers build nothing then.
    pub(crate) fn batch(&self, base: &str) -> Option<Batch<'_>> {
        let wanted = self.enabled && !recently_unheard(&self.task().unheard, base);
        wanted.then(|| Batch {
            publisher: self,
            base: Arc::from(base),
            messages: Vec::new(),
        })
    }

    /// This process's publishing state. Found without a lock; in a forked
    /// child the parent's state is replaced once (a client closed before the
    /// fork stays closed, when its lock can be read) and leaked.
    fn task(&self) -> Arc<ProcessTask> {
        let pid = std::process::id();
        let current = self.task.load_full();
        if current.pid == pid {
            return current;
        }
        let closed = matches!(current.task.try_lock().as_deref(), Ok(Task::Closed(_)));
        let fresh = Arc::new(ProcessTask::new(if closed {
            Task::Closed(None)
        } else {
            Task::Idle
        }));
        let previous = self.task.compare_and_swap(&current, fresh.clone());
        let replaced = Arc::ptr_eq(&previous, &current);
        drop(previous);
        // The parent's state: this reference is never given back, so the
        // swap above never drops its last one (see [`ProcessTask`]).
        std::mem::forget(current);
        if replaced {
            fresh
        } else {
            self.task.load_full() // another thread of the child replaced it first
        }
    }

    fn enqueue(&self, messages: Vec<Message>) {
        let state = self.task();
        let mut task = state.task.lock().unwrap_or_else(|p| p.into_inner());
        let pid = std::process::id();
        match &*task {
            Task::Running { pid: owner, tx, .. } if *owner == pid && !tx.is_closed() => {}
            // A verb that raced close(): its events are not sent.
            Task::Closed(_) => return,
            _ => *task = self.start(pid, state.unheard.clone()),
        }
        let Task::Running { tx, .. } = &*task else {
            return;
        };
        let mut dropped = 0;
        for message in messages {
            dropped += usize::from(tx.try_send(message).is_err());
        }
        drop(task);
        if dropped > 0 {
            log::debug!("echomq: event buffer full; {dropped} events dropped");
        }
    }

    /// Start this process's publisher task.
    fn start(&self, pid: u32, unheard: Unheard) -> Task {
        let (tx, rx) = mpsc::channel(PUBLISH_BUFFER);
        let drain = Arc::new(Drain::default());
        let task = publish_loop(self.transport.clone(), unheard, rx, drain.clone());
        // Inside a direct call the current runtime is the caller's thread's,
        // which runs only during calls: not a home for a task.
        match tokio::runtime::Handle::try_current() {
            Ok(handle) if !crate::runtime::direct_call_active() => drop(handle.spawn(task)),
            _ => drop(crate::runtime::runtime().spawn(task)),
        }
        Task::Running { pid, tx, drain }
    }

    /// The client is closing: queue nothing more, and let this process's
    /// task send what it holds on `last` (the connection that was live) for
    /// at most [`CLOSE_FLUSH`].
    pub(crate) fn close(&self, last: Option<Conn>) {
        let state = self.task();
        let mut task = state.task.lock().unwrap_or_else(|p| p.into_inner());
        let drain = match std::mem::replace(&mut *task, Task::Closed(None)) {
            Task::Running { pid, tx, drain } if pid == std::process::id() && !tx.is_closed() => {
                drain.arm(last);
                drop(tx); // the task ends once it has sent what is queued
                Some(drain)
            }
            Task::Closed(drain) => drain,
            _ => None,
        };
        *task = Task::Closed(drain);
    }

    /// Is a closed client's task still sending what it held? (Nothing to wait
    /// for otherwise: never started, a forked child's copy, or done.)
    pub(crate) fn flushing(&self) -> bool {
        let state = self.task();
        let task = state.task.lock().unwrap_or_else(|p| p.into_inner());
        match &*task {
            Task::Closed(Some(drain)) => !drain.done.load(Ordering::Acquire),
            _ => false,
        }
    }

    /// Ready once the task started before close has sent what it held, or
    /// [`CLOSE_FLUSH`] after close; at once if there was nothing to send.
    pub(crate) async fn closed(&self) {
        let drain = {
            let state = self.task();
            let task = state.task.lock().unwrap_or_else(|p| p.into_inner());
            match &*task {
                Task::Closed(drain) => drain.clone(),
                _ => None,
            }
        };
        if let Some(drain) = drain {
            drain.finished().await;
        }
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        // A client dropped in a forked child before it published: the
        // state is still the parent's, and must not be dropped here (see
        // [`ProcessTask`]).
        let current = self.task.load_full();
        if current.pid != std::process::id() {
            std::mem::forget(current);
        }
    }
}

/// Send whatever has queued up, one `publish` script call per queue (in
/// order within each queue), until every sender is gone; after close, on the
/// connection close left, until [`CLOSE_FLUSH`] has passed.
async fn publish_loop(
    transport: Arc<Transport>,
    unheard: Unheard,
    mut rx: mpsc::Receiver<Message>,
    drain: Arc<Drain>,
) {
    let mut batch: Vec<Message> = Vec::with_capacity(64);
    while rx.recv_many(&mut batch, PUBLISH_BATCH).await > 0 {
        if drain.expired() {
            log::debug!("echomq: client closed; {} events dropped", batch.len());
            batch.clear();
            continue;
        }
        let mut queues: Vec<(Arc<str>, Vec<Vec<u8>>)> = Vec::new();
        for (base, json) in batch.drain(..) {
            match queues.iter_mut().find(|(b, _)| *b == base) {
                Some((_, messages)) => messages.push(json.into_bytes()),
                None => {
                    let channel = format!("{base}events").into_bytes();
                    queues.push((base, vec![channel, json.into_bytes()]));
                }
            }
        }
        for (base, args) in queues {
            let subscriptions = SUBSCRIPTIONS.load(Ordering::Acquire);
            if recently_unheard(&unheard, &base) {
                continue; // nobody listened a moment ago: at-most-once
            }
            let meta = format!("{base}meta");
            let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            match publish(&transport, &drain, &meta, &args).await {
                Ok(redis::Value::Int(0)) => {
                    let mut map = unheard.lock().unwrap_or_else(|p| p.into_inner());
                    map.insert(base, (Instant::now(), subscriptions));
                }
                Ok(_) => {
                    let mut map = unheard.lock().unwrap_or_else(|p| p.into_inner());
                    map.remove(&base);
                }
                Err(e) => log::debug!("echomq: publishing queue events failed: {e}"),
            }
        }
    }
    drain.finish();
}

/// One `publish` call: on the client's connection while it is open, else
/// (it closed before or during the call) on the one close left.
async fn publish(
    transport: &Transport,
    drain: &Drain,
    meta: &str,
    args: &[&[u8]],
) -> Result<redis::Value> {
    if !transport.is_closed() {
        match transport.script(&scripts::PUBLISH, &[meta], args).await {
            // Refused before it was sent: closed meanwhile.
            Err(e) if e.kind() == ErrorKind::Closed => {}
            other => return other,
        }
    }
    drain.send_last(meta, args).await
}

// ---- subscribing ------------------------------------------------------------

/// Events held for a subscriber that is not reading; more are dropped.
const SUBSCRIBER_BUFFER: usize = 65_536;
/// Longest pause between attempts to re-subscribe after the connection dropped.
const RESUBSCRIBE_MAX: Duration = Duration::from_secs(2);

/// A live subscription to a queue's events, on its own connection. After the
/// connection drops it re-subscribes by itself (messages published meanwhile
/// are lost: at-most-once). Read it with [`Subscription::next`] or as a
/// [`futures_util::Stream`]; dropping it unsubscribes.
pub struct Subscription {
    /// The queues subscribed to (one, unless from
    /// [`Client::subscribe_many`](crate::Client::subscribe_many)).
    queues: Vec<String>,
    rx: mpsc::Receiver<QueueEvent>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("queues", &self.queues)
            .finish_non_exhaustive()
    }
}

impl Subscription {
    /// Subscribe to `channels` (each a queue's channel and the queue) on a
    /// connection of its own to `transport`'s server, answering once the
    /// server confirmed ([`Client::subscribe_many`](crate::Client::subscribe_many)).
    pub(crate) async fn open(
        transport: Arc<Transport>,
        channels: Vec<Channel>,
        timeout: Duration,
    ) -> Result<Subscription> {
        // On a cluster the connection goes to the master owning the first
        // queue's slot (the publish script counts that node's subscribers);
        // queues on other masters are still heard through the cluster bus
        // whenever a subscriber there makes their publisher send.
        let clients = transport.pubsub_clients(&channels[0].0).await;
        let first = open_pubsub(&clients, &channels, timeout).await?;
        let (tx, rx) = mpsc::channel(SUBSCRIBER_BUFFER);
        let queues = channels.iter().map(|(_, q)| q.clone()).collect();
        let task = tokio::spawn(follow(transport, channels, first, tx, timeout));
        Ok(Subscription { queues, rx, task })
    }

    /// The queue subscribed to (the first one, for
    /// [`Client::subscribe_many`](crate::Client::subscribe_many)).
    pub fn queue(&self) -> &str {
        &self.queues[0]
    }

    /// Every queue subscribed to; each event names its own in [`QueueEvent::queue`].
    pub fn queues(&self) -> &[String] {
        &self.queues
    }

    /// The next event; `None` once the subscription is closed.
    pub async fn next(&mut self) -> Option<QueueEvent> {
        self.rx.recv().await
    }

    /// An event already received, without waiting.
    pub fn try_next(&mut self) -> Option<QueueEvent> {
        self.rx.try_recv().ok()
    }

    /// A handle that closes this subscription from anywhere (another thread,
    /// while a `next` is waiting), without borrowing it.
    pub fn closer(&self) -> SubscriptionCloser {
        SubscriptionCloser(self.task.abort_handle())
    }

    /// Unsubscribe and close the connection; `next` then answers `None`.
    pub fn close(&mut self) {
        self.task.abort();
        self.rx.close();
    }
}

/// Closes a [`Subscription`]: a waiting `next` answers the events already
/// received, then `None`.
#[derive(Debug, Clone)]
pub struct SubscriptionCloser(tokio::task::AbortHandle);

impl SubscriptionCloser {
    /// Close the subscription.
    pub fn close(&self) {
        self.0.abort();
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl futures_util::Stream for Subscription {
    type Item = QueueEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<QueueEvent>> {
        self.rx.poll_recv(cx)
    }
}

/// A queue's channel name and the queue, for telling messages apart.
pub(crate) type Channel = (String, String);

/// Subscribe on the first of `clients` that answers (a cluster's seeds: a
/// dead master's seed is skipped, and the next one still hears every event).
async fn open_pubsub(
    clients: &[redis::Client],
    channels: &[Channel],
    timeout: Duration,
) -> Result<redis::aio::PubSub> {
    let names: Vec<&str> = channels.iter().map(|(c, _)| c.as_str()).collect();
    let connect = async {
        let mut last = Error::new(ErrorKind::Connection, "cannot subscribe: no server address");
        for client in clients {
            let attempt = async {
                let mut pubsub = client.get_async_pubsub().await.map_err(|e| {
                    Error::new(ErrorKind::Connection, format!("cannot subscribe: {e}"))
                })?;
                // One SUBSCRIBE for all of them: one round trip, one connection.
                pubsub.subscribe(&names).await?;
                SUBSCRIPTIONS.fetch_add(1, Ordering::Release);
                Ok::<_, Error>(pubsub)
            };
            match attempt.await {
                Ok(pubsub) => return Ok(pubsub),
                Err(e) => last = e,
            }
        }
        Err(last)
    };
    tokio::time::timeout(timeout, connect).await.map_err(|_| {
        Error::new(
            ErrorKind::Timeout,
            format!("subscribing did not finish within {timeout:?}"),
        )
    })?
}

/// Forward messages until the subscriber is gone, re-subscribing after drops.
async fn follow(
    transport: Arc<Transport>,
    channels: Vec<Channel>,
    first: redis::aio::PubSub,
    tx: mpsc::Sender<QueueEvent>,
    timeout: Duration,
) {
    use futures_util::StreamExt;
    let described = match channels.as_slice() {
        [(only, _)] => only.clone(),
        many => format!("{} event channels", many.len()),
    };
    let mut pubsub = first;
    loop {
        let mut messages = pubsub.into_on_message();
        loop {
            tokio::select! {
                message = messages.next() => match message {
                    Some(message) => {
                        let channel = message.get_channel_name();
                        let Some((_, queue)) = channels.iter().find(|(c, _)| c == channel) else {
                            continue;
                        };
                        let Some(event) = QueueEvent::parse(queue, message.get_payload_bytes())
                        else {
                            log::debug!("echomq: ignored a non-event message on {channel}");
                            continue;
                        };
                        if let Err(mpsc::error::TrySendError::Closed(_)) = tx.try_send(event) {
                            return;
                        }
                    }
                    None => break,
                },
                _ = tx.closed() => return,
            }
        }
        log::warn!("echomq: the event subscription to {described} dropped; re-subscribing");
        let mut pause = Duration::from_millis(50);
        pubsub = loop {
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = tx.closed() => return,
            }
            let clients = transport.pubsub_clients(&channels[0].0).await;
            match open_pubsub(&clients, &channels, timeout).await {
                Ok(pubsub) => {
                    log::info!("echomq: re-subscribed to {described}");
                    break pubsub;
                }
                Err(e) => {
                    log::debug!("echomq: re-subscribing to {described} failed: {e}");
                    pause = (pause * 2).min(RESUBSCRIBE_MAX);
                }
            }
        };
    }
}

/// How a job [`Client::wait_for`](crate::Client::wait_for) waited on ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// Completed (in echomq:2.0.0 a completed job leaves no row).
    Completed,
    /// Dead-lettered, with its `last_error`.
    Dead {
        /// The job's `last_error`, if it has one.
        error: Option<String>,
    },
}

/// The blocking face of a [`Subscription`].
#[derive(Debug)]
pub struct BlockingSubscription {
    inner: Subscription,
}

impl BlockingSubscription {
    /// The blocking face of `inner`.
    pub(crate) fn new(inner: Subscription) -> Self {
        BlockingSubscription { inner }
    }

    /// The queue it listens to.
    pub fn queue(&self) -> &str {
        self.inner.queue()
    }

    /// The next event, waiting up to `limit` (`None` = forever); `None` on
    /// timeout or once closed.
    pub fn next_timeout(&mut self, limit: Option<Duration>) -> Option<QueueEvent> {
        let next = self.inner.next();
        crate::runtime::runtime().block_on(async move {
            match limit {
                Some(limit) => tokio::time::timeout(limit, next).await.ok().flatten(),
                None => next.await,
            }
        })
    }

    /// An event already received, without waiting.
    pub fn try_next(&mut self) -> Option<QueueEvent> {
        self.inner.try_next()
    }

    /// Is the subscription closed (by [`BlockingSubscription::close`])?
    pub fn is_closed(&self) -> bool {
        self.inner.rx.is_closed()
    }

    /// Unsubscribe and close the connection; `next_timeout` then answers `None`.
    pub fn close(&mut self) {
        self.inner.close()
    }

    /// The async subscription underneath.
    pub fn into_async(self) -> Subscription {
        self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_json_objects_of_strings() {
        let json = encode(
            "retried",
            "JOB1",
            [("error", "a \"quoted\" \\ line\n")].into_iter(),
        );
        let event = QueueEvent::parse("q", json.as_bytes()).expect("parses back");
        assert_eq!(event.event, "retried");
        assert_eq!(event.job, "JOB1");
        assert_eq!(event.field("error"), Some("a \"quoted\" \\ line\n"));
        assert_eq!(event.to_json(), json);
        assert!(QueueEvent::parse("q", b"not json").is_none());
        assert!(QueueEvent::parse("q", br#"{"job":"x"}"#).is_none());
        assert_eq!(events_channel("orders").unwrap(), "emq:{orders}:events");
        assert!(events_channel("bad queue").is_err());
    }
}
