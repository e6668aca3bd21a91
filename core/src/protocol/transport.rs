//! The one seam between the client and the server.
//!
//! It owns one connection ([`Conn`]: a multiplexed connection to a standalone
//! server, or the cluster client), fences before the connection carries
//! anything else, and retries transient server states with backoff inside
//! the response timeout:
//!
//! - Standalone: reconnects lazily after a loss. A request in flight when the
//!   socket drops fails with a connection error and is never replayed.
//! - Cluster: redis-rs routes each request to the master owning its slot,
//!   follows MOVED/ASK and reconnects nodes by itself (replaying a request
//!   whose node connection dropped). Whenever a node's connection ends, the
//!   next request re-fences first (the fence key's master may have changed).
//!
//! A reply that means "not now, nothing ran" (`LOADING`, `BUSY`, `TRYAGAIN`,
//! `CLUSTERDOWN`, `MASTERDOWN`, `READONLY`, MOVED/ASK inside a pipeline) is
//! retried until the response timeout and then answered as
//! [`ErrorKind::Unavailable`]. A failure to (re)connect before anything was
//! sent (refused, reset) is retried too, but only while the server has been
//! unreachable for less than the connect timeout: the response timeout is
//! for a server that is up and slow, and a server that is gone must not cost
//! every call the full response timeout (issue #39 §3). Once the transport
//! has been unreachable that long, each call tries one reconnect and answers
//! `Unavailable` at once if it is refused.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::{ArcSwap, ArcSwapOption};
use redis::aio::MultiplexedConnection;
use redis::Value;

use crate::conn::{Conn, Target};
use crate::error::{transient_code, Error, ErrorKind, Result};
use crate::fence::{self, BundleMismatch};
use crate::options::ConnectOptions;
use crate::scripts::Script;

/// The `CLIENT SETINFO LIB-NAME` every connection of this client sends in
/// its handshake; its `LIB-VER` is the wire version the connection speaks
/// (the upgrade verb reads them back from `CLIENT LIST`).
pub(crate) const LIB_NAME: &str = "echomq";

/// How long transient states are retried when `response_timeout` is `None`.
const RETRY_BUDGET_WITHOUT_TIMEOUT: Duration = Duration::from_secs(30);
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const LONGEST_PAUSE: Duration = Duration::from_millis(400);
/// The least time an attempt gets, so a retry that starts just before the
/// deadline can still hear the server's (transient) answer instead of
/// timing out: a call may overrun the response timeout by this much.
const LAST_ATTEMPT: Duration = Duration::from_millis(100);

#[derive(Clone)]
struct Live {
    conn: Conn,
    generation: u64,
    /// Set by a standalone connection's driver when the socket ends, so the
    /// next call reconnects instead of failing on a connection known dead.
    dead: Arc<AtomicBool>,
    /// The process that opened the socket. A forked child must not write to
    /// its parent's socket; it leaks the handle and reconnects.
    pid: u32,
}

pub(crate) struct Transport {
    target: Target,
    /// The URL connected to (with its password: never shown, see redact.rs),
    /// for the read-only probe's connection of its own.
    url: String,
    options: ConnectOptions,
    /// The connection in use. Read on every call, so never behind a lock: a
    /// lock one of the parent's threads held at `fork()` is never released
    /// in the child, whose next reconnect would wait on it for ever.
    live: ArcSwapOption<Live>,
    /// The process that created this transport: in a forked child, locks a
    /// parent's thread held at `fork()` are never released, so close and
    /// drop only try them there.
    pid: u32,
    /// One reconnect at a time, per process: a child that inherits the lock
    /// from a parent caught mid-reconnect gets a fresh one ([`Self::reconnect_lock`]).
    reconnect: ArcSwap<ReconnectLock>,
    generation: AtomicU64,
    closed: AtomicBool,
    /// Wakes what waits on [`Transport::closed`] (a parked worker's `BLPOP`).
    closing: tokio::sync::Notify,
    mismatches: Mutex<Vec<BundleMismatch>>,
    /// Cluster: a node connection ended (or a request met an unavailable
    /// node) since the last fence; the next request re-fences first.
    refence: Arc<AtomicBool>,
    /// How many times the fence has run on this transport (diagnostics, tests).
    fences: AtomicU64,
    /// When reconnecting started failing, as milliseconds since `born` plus
    /// one (0: the last attempt connected). Shared by every call, so a
    /// server that stays down costs one connect timeout, not one per call.
    unreachable_since: AtomicU64,
    born: Instant,
    /// Threads' own transports for this one's client ([`crate::direct`]):
    /// closed with it, so a closed or dropped client leaves none open.
    companions: Mutex<Vec<std::sync::Weak<dyn Companion>>>,
}

/// A connection that closes with a transport: a thread's own connection for
/// the same client ([`crate::direct`]'s slot, which adopts itself here). The
/// transport holds it weakly and knows it only by this.
pub(crate) trait Companion: Send + Sync {
    /// Close it: from any thread, inside a runtime or not.
    fn close(&self);
}

/// The reconnect lock of one process.
struct ReconnectLock {
    pid: u32,
    lock: tokio::sync::Mutex<()>,
}

impl ReconnectLock {
    fn new() -> Arc<Self> {
        Arc::new(ReconnectLock {
            pid: std::process::id(),
            lock: tokio::sync::Mutex::new(()),
        })
    }
}

impl Drop for Transport {
    fn drop(&mut self) {
        self.close_companions();
        release(self.live.swap(None));
    }
}

/// Drop a connection that is done with, unless it is a parent's inherited
/// across `fork()`: dropping its last clone aborts its driver task on the
/// parent's runtime, whose scheduler locks one of the parent's threads may
/// have held at the fork, so the child would hang for ever. That one leaks.
fn release(live: Option<Arc<Live>>) {
    if let Some(live) = live {
        if live.pid != std::process::id() {
            std::mem::forget(live);
        }
    }
}

/// How one attempt failed: was anything sent to the server?
enum Failure {
    BeforeSending(Error),
    AfterSending(Error),
}

impl Transport {
    /// Open, fence and record the bundle; fail on the first error.
    pub async fn connect(url: &str, options: ConnectOptions) -> Result<Arc<Self>> {
        let refence = Arc::new(AtomicBool::new(false));
        let target = Target::parse(url, options.connect_timeout, refence.clone())?;
        let transport = Arc::new(Transport {
            target,
            url: url.to_string(),
            options,
            live: ArcSwapOption::const_empty(),
            pid: std::process::id(),
            reconnect: ArcSwap::new(ReconnectLock::new()),
            generation: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            closing: tokio::sync::Notify::new(),
            mismatches: Mutex::new(Vec::new()),
            refence,
            fences: AtomicU64::new(0),
            unreachable_since: AtomicU64::new(0),
            born: Instant::now(),
            companions: Mutex::new(Vec::new()),
        });
        transport.current().await?;
        Ok(transport)
    }

    pub fn options(&self) -> &ConnectOptions {
        &self.options
    }

    /// The URL this transport connected to (secrets included: never log it).
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn is_cluster(&self) -> bool {
        self.target.is_cluster()
    }

    pub fn fence_count(&self) -> u64 {
        self.fences.load(Ordering::Relaxed)
    }

    /// Where the event subscriber of the channel `channel` connects, in the
    /// order to try: the one server; on a cluster, the master owning the
    /// channel's slot first — the `publish` script counts subscribers with
    /// `PUBSUB NUMSUB`, which sees only the node it runs on — then the seeds.
    pub async fn pubsub_clients(&self, channel: &str) -> Vec<redis::Client> {
        let mut clients = Vec::new();
        if self.is_cluster() {
            let slot = crate::slot::slot(channel.as_bytes());
            match self.masters().await {
                Ok(masters) => {
                    let owner = masters
                        .iter()
                        .find(|m| m.slots.iter().any(|&(a, b)| (a..=b).contains(&slot)));
                    if let Some(client) =
                        owner.and_then(|m| self.target.node_client(&m.host, m.port))
                    {
                        clients.push(client);
                    }
                }
                Err(e) => log::debug!("echomq: cannot read the cluster's masters: {e}"),
            }
        }
        clients.extend(self.target.seed_clients());
        clients
    }

    /// The cluster's masters and their slots (`CLUSTER SLOTS` on any node).
    pub(crate) async fn masters(&self) -> Result<Vec<crate::conn::Master>> {
        let reply: Value = self.query(redis::cmd("CLUSTER").arg("SLOTS")).await?;
        crate::conn::masters_of(&reply)
    }

    /// Every key matching `pattern`: one `SCAN` walk of the server, or of
    /// each master of a cluster (a `SCAN` sees one node's keys only).
    pub async fn scan_keys(&self, pattern: &str, count: u64) -> Result<Vec<Vec<u8>>> {
        let nodes: Vec<Option<(String, u16)>> = if self.is_cluster() {
            self.masters()
                .await?
                .into_iter()
                .map(|m| Some((m.host, m.port)))
                .collect()
        } else {
            vec![None]
        };
        let mut found = Vec::new();
        for node in &nodes {
            let node = node.as_ref().map(|(host, port)| (host.as_str(), *port));
            let mut cursor: u64 = 0;
            loop {
                let mut scan = redis::cmd("SCAN");
                scan.arg(cursor)
                    .arg("MATCH")
                    .arg(pattern)
                    .arg("COUNT")
                    .arg(count);
                let (next, keys): (u64, Vec<Vec<u8>>) = self
                    .run(|mut conn| {
                        let scan = &scan;
                        async move { Ok(redis::from_redis_value(conn.on_node(node, scan).await?)?) }
                    })
                    .await?;
                found.extend(keys);
                if next == 0 {
                    break;
                }
                cursor = next;
            }
        }
        Ok(found)
    }

    pub fn bundle_mismatches(&self) -> Vec<BundleMismatch> {
        self.mismatches.lock().expect("mismatch lock").clone()
    }

    /// The live connection of this process, for a caller with something
    /// left to send after [`Transport::close`] (the event publisher's last
    /// messages): a clone keeps the socket open until it is dropped.
    pub(crate) fn last_connection(&self) -> Option<Conn> {
        let live = self.live.load();
        let pid = std::process::id();
        Option::as_ref(&live)
            .filter(|l| l.pid == pid && !l.dead.load(Ordering::Acquire))
            .map(|l| l.conn.clone())
    }

    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        release(self.live.swap(None));
        self.close_companions();
        self.closing.notify_waiters();
    }

    /// Ready once the client is closed (at once if it already is).
    pub(crate) async fn closed(&self) {
        loop {
            let notified = self.closing.notified();
            tokio::pin!(notified);
            // Registered before the check, so a close in between still wakes it.
            notified.as_mut().enable();
            if self.is_closed() {
                return;
            }
            notified.await;
        }
    }

    /// Close `companion` (a thread's own connection) with this one.
    pub(crate) fn adopt<C: Companion + 'static>(&self, companion: &Arc<C>) {
        let mut list = self.companions.lock().unwrap_or_else(|p| p.into_inner());
        list.retain(|c| c.strong_count() > 0);
        let companion: std::sync::Weak<C> = Arc::downgrade(companion);
        list.push(companion);
    }

    /// Is this a forked child's copy of a parent's transport?
    fn forked(&self) -> bool {
        self.pid != std::process::id()
    }

    fn close_companions(&self) {
        let companions = if self.forked() {
            // As in close(): never wait on a lock a parent's thread may hold.
            match self.companions.try_lock() {
                Ok(mut list) => std::mem::take(&mut *list),
                Err(_) => return,
            }
        } else {
            std::mem::take(&mut *self.companions.lock().unwrap_or_else(|p| p.into_inner()))
        };
        for companion in companions.iter().filter_map(std::sync::Weak::upgrade) {
            companion.close();
        }
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    fn closed_error() -> Error {
        Error::new(ErrorKind::Closed, "client is closed")
    }

    /// The live connection, opening (and fencing) a new one when there is
    /// none, and re-fencing a cluster connection after a topology event.
    async fn current(&self) -> Result<Live> {
        if self.is_closed() {
            return Err(Self::closed_error());
        }
        let pid = std::process::id();
        let usable = |l: &Live| l.pid == pid && !l.dead.load(Ordering::Acquire);
        if let Some(live) = Option::as_ref(&self.live.load()) {
            if usable(live) && !self.refence.load(Ordering::Acquire) {
                return Ok(Live::clone(live));
            }
        }
        let reconnect = self.reconnect_lock();
        let _one_at_a_time = reconnect.lock.lock().await;
        let existing = match Option::as_ref(&self.live.load()) {
            Some(live) if usable(live) => Some(Live::clone(live)),
            // Inherited across fork(): its driver task and socket belong to
            // the parent. Leak it rather than close or write to it.
            Some(live) if live.pid != pid => {
                release(self.live.swap(None));
                None
            }
            _ => None,
        };
        if let Some(live) = existing {
            if self.refence.swap(false, Ordering::AcqRel) {
                let mut conn = live.conn.clone();
                if let Err(e) = self.within_connect_timeout(self.prepare(&mut conn)).await {
                    self.refence.store(true, Ordering::Release);
                    return Err(e);
                }
            }
            return Ok(live);
        }
        self.refence.store(false, Ordering::Release);
        let dead = Arc::new(AtomicBool::new(false));
        let conn = self
            .within_connect_timeout(async {
                let mut conn = self
                    .target
                    .open(self.options.connect_timeout, dead.clone())
                    .await?;
                self.prepare(&mut conn).await?;
                Ok(conn)
            })
            .await?;
        let live = Live {
            conn,
            generation: self.generation.fetch_add(1, Ordering::SeqCst) + 1,
            dead,
            pid,
        };
        self.unreachable_since.store(0, Ordering::Release);
        if self.is_closed() {
            return Err(Self::closed_error());
        }
        release(self.live.swap(Some(Arc::new(live.clone()))));
        Ok(live)
    }

    async fn within_connect_timeout<T>(&self, fut: impl Future<Output = Result<T>>) -> Result<T> {
        let limit = self.options.connect_timeout;
        tokio::time::timeout(limit, fut).await.map_err(|_| {
            Error::new(
                ErrorKind::Timeout,
                format!("connect did not finish within {limit:?}"),
            )
        })?
    }

    /// Name a connection to one server and label it with the wire version
    /// it speaks.
    async fn label(&self, single: &mut MultiplexedConnection) -> Result<()> {
        if let Some(name) = &self.options.client_name {
            let _: () = redis::cmd("CLIENT")
                .arg("SETNAME")
                .arg(name)
                .query_async(single)
                .await?;
        }
        // Part of the handshake: lets `CLIENT LIST` tell which wire version
        // each connection speaks (the upgrade verb lists the older ones).
        // Servers before Redis 7.2 do not know SETINFO; that is not an
        // error. (The cluster client opens node connections itself.)
        let _: redis::RedisResult<()> = redis::cmd("CLIENT")
            .arg("SETINFO")
            .arg("LIB-NAME")
            .arg(LIB_NAME)
            .query_async(single)
            .await;
        let _: redis::RedisResult<()> = redis::cmd("CLIENT")
            .arg("SETINFO")
            .arg("LIB-VER")
            .arg(self.options.wire_version.as_str())
            .query_async(single)
            .await;
        Ok(())
    }

    /// Name the connection, fence, record the bundle.
    async fn prepare(&self, conn: &mut Conn) -> Result<()> {
        if let Conn::Single(single) = &mut *conn {
            self.label(single).await?;
        }
        let speaks = self.options.wire_version;
        fence::fence(conn, speaks).await?;
        self.fences.fetch_add(1, Ordering::Relaxed);
        let mismatches = fence::record_bundle(conn, speaks).await?;
        if !mismatches.is_empty() {
            let text = mismatches
                .iter()
                .map(|m| format!("{}: ours {} theirs {}", m.field, m.ours, m.theirs))
                .collect::<Vec<_>>()
                .join("; ");
            if self.options.strict_bundle {
                return Err(Error::new(
                    ErrorKind::BundleMismatch,
                    format!("script bundle mismatch: {text}"),
                ));
            }
            // Logged after the lock is released: a logger may wait for another
            // thread (Python's GIL) that waits for this lock.
            let first = {
                let mut seen = self.mismatches.lock().expect("mismatch lock");
                let first = seen.is_empty();
                *seen = mismatches;
                first
            };
            if first {
                log::warn!("echomq: script bundle mismatch in {{emq}}:bundle: {text}");
            }
        }
        Ok(())
    }

    /// How long reconnecting has been failing (since the first failure that
    /// no later connect undid), recording now as its start if it was not.
    fn unreachable_for(&self) -> Duration {
        let now = self.born.elapsed().as_millis() as u64 + 1;
        let since = match self.unreachable_since.compare_exchange(
            0,
            now,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => now,
            Err(earlier) => earlier,
        };
        Duration::from_millis(now.saturating_sub(since))
    }

    /// Forget a connection that failed, unless a newer one already replaced it.
    fn invalidate(&self, generation: u64) {
        let current = self.live.load();
        if Option::as_ref(&current).is_some_and(|l| l.generation == generation) {
            // Only if it is still the one: a reconnect may have replaced it.
            let _ = self.live.compare_and_swap(&*current, None);
        }
    }

    /// This process's reconnect lock. A forked child's first reconnect
    /// replaces the parent's, which one of the parent's threads may hold
    /// for ever there (it is leaked, never dropped, like the parent's
    /// connection).
    fn reconnect_lock(&self) -> Arc<ReconnectLock> {
        let pid = std::process::id();
        let current = self.reconnect.load_full();
        if current.pid == pid {
            return current;
        }
        let fresh = ReconnectLock::new();
        let previous = self.reconnect.compare_and_swap(&current, fresh);
        if Arc::ptr_eq(&*previous, &current) {
            std::mem::forget(current); // the parent's: see above
        }
        self.reconnect.load_full()
    }

    /// One attempt: get the connection, run `op` on it within `limit`.
    async fn attempt<T, F, Fut>(&self, op: &mut F, limit: Option<Duration>) -> Result<T, Failure>
    where
        F: FnMut(Conn) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let live = self.current().await.map_err(Failure::BeforeSending)?;
        let fut = op(live.conn.clone());
        let answer = match limit {
            Some(limit) => tokio::time::timeout(limit, fut).await.unwrap_or_else(|_| {
                Err(Error::new(
                    ErrorKind::Timeout,
                    format!("no answer within {limit:?}"),
                ))
            }),
            None => fut.await,
        };
        answer.map_err(|e| {
            match e.kind() {
                ErrorKind::Connection if !self.is_cluster() => self.invalidate(live.generation),
                ErrorKind::Connection | ErrorKind::Unavailable if self.is_cluster() => {
                    self.refence.store(true, Ordering::Release)
                }
                _ => {}
            }
            Failure::AfterSending(e)
        })
    }

    /// Run `op` on the live connection, retrying transient states with
    /// backoff until the response timeout (see the module docs).
    async fn run<T, F, Fut>(&self, mut op: F) -> Result<T>
    where
        F: FnMut(Conn) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let started = Instant::now();
        let budget = self
            .options
            .response_timeout
            .unwrap_or(RETRY_BUDGET_WITHOUT_TIMEOUT);
        let mut pause = FIRST_PAUSE;
        let mut last: Option<Error> = None;
        loop {
            let left = budget.saturating_sub(started.elapsed());
            if let Some(error) = last.take() {
                if left.is_zero() {
                    return Err(Error::new(
                        ErrorKind::Unavailable,
                        format!(
                            "still unavailable after {budget:?} of retries: {}",
                            error.message()
                        ),
                    ));
                }
                log::debug!("echomq: transient failure, retrying in {pause:?}: {error}");
                tokio::time::sleep(pause.min(left)).await;
                pause = (pause * 2).min(LONGEST_PAUSE);
            }
            let limit = self
                .options
                .response_timeout
                .map(|t| t.saturating_sub(started.elapsed()).max(LAST_ATTEMPT));
            match self.attempt(&mut op, limit).await {
                Ok(value) => return Ok(value),
                Err(Failure::BeforeSending(e)) if e.kind() == ErrorKind::Connection => {
                    let down = self.unreachable_for();
                    let patience = self.options.connect_timeout.min(budget);
                    if down >= patience {
                        return Err(Error::new(
                            ErrorKind::Unavailable,
                            format!(
                                "the server has been unreachable for {down:?} (connect \
                                 timeout {:?}): {}",
                                self.options.connect_timeout,
                                e.message()
                            ),
                        ));
                    }
                    // Never sleep past the moment the server counts as gone.
                    pause = pause.min(patience - down).max(Duration::from_millis(1));
                    last = Some(e)
                }
                Err(Failure::BeforeSending(e) | Failure::AfterSending(e))
                    if e.kind() == ErrorKind::Unavailable =>
                {
                    last = Some(e)
                }
                Err(Failure::BeforeSending(e) | Failure::AfterSending(e)) => return Err(e),
            }
            if self.is_closed() {
                return Err(Self::closed_error());
            }
        }
    }

    /// Run one command.
    pub async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T> {
        self.run(|mut conn| async move { Ok(cmd.query_async::<T>(&mut conn).await?) })
            .await
    }

    /// Run a pipeline whose commands all touch one slot.
    pub async fn pipeline(&self, pipe: &redis::Pipeline) -> Result<Vec<Value>> {
        self.run(|mut conn| async move { Ok(pipe.query_async::<Vec<Value>>(&mut conn).await?) })
            .await
    }

    /// EVALSHA; on NOSCRIPT (a new, flushed or failed-over master) the same
    /// call as EVAL, which runs it and caches the script on that master.
    pub async fn script(&self, script: &Script, keys: &[&str], args: &[&[u8]]) -> Result<Value> {
        self.run(|conn| script_on(conn, script, keys, args)).await
    }

    /// The script, then `then` on the same connection in the same round
    /// trip (the wake hint after an enqueue: no extra round trip, and the
    /// server runs it after the script). Every command of `then` must touch
    /// the script's slot (a queue's keys share its `{q}` hash tag, so the
    /// cluster sends the whole pipeline to the queue's master). Answers the
    /// script's reply; the others' answers are dropped (a hint that fails
    /// only delays a pickup).
    pub async fn script_then(
        &self,
        script: &Script,
        keys: &[&str],
        args: &[&[u8]],
        then: &[redis::Cmd],
    ) -> Result<Value> {
        if then.is_empty() {
            return self.script(script, keys, args).await;
        }
        let mut answers = self.script_pipeline(script, keys, args, then).await?;
        answers.swap_remove(0).map_err(Error::from)
    }

    /// The script, then `then`, then `WAIT replicas timeout` on the same
    /// connection in the same round trip. Answers the script's reply and how
    /// many replicas acknowledged the writes.
    pub async fn script_then_wait(
        &self,
        script: &Script,
        keys: &[&str],
        args: &[&[u8]],
        then: &[redis::Cmd],
    ) -> Result<(Value, u64)> {
        let mut cmds = then.to_vec();
        cmds.push(self.wait_cmd());
        let mut answers = self.script_pipeline(script, keys, args, &cmds).await?;
        let acked = answers.pop().expect("the WAIT's answer")?;
        let reply = answers.swap_remove(0)?;
        Ok((reply, redis::from_redis_value(acked)?))
    }

    /// EVALSHA and `then` in one pipeline, one answer per command; on
    /// NOSCRIPT the pipeline again with EVAL, and on a transient refusal of
    /// the script the whole pipeline again after `run`'s backoff (the
    /// commands of `then` may run twice then: they must be idempotent
    /// enough, as a hint and `WAIT` are).
    async fn script_pipeline(
        &self,
        script: &Script,
        keys: &[&str],
        args: &[&[u8]],
        then: &[redis::Cmd],
    ) -> Result<Vec<redis::RedisResult<Value>>> {
        let pipe_of = |first: redis::Cmd| {
            let mut pipe = redis::pipe();
            pipe.ignore_errors();
            pipe.add_command(first);
            for cmd in then {
                pipe.add_command(cmd.clone());
            }
            pipe
        };
        let answers: Vec<redis::RedisResult<Value>> = self
            .run(|mut conn| {
                let pipe_of = &pipe_of;
                async move {
                    let mut answers = pipe_of(evalsha(script, keys, args))
                        .query_async::<Vec<redis::RedisResult<Value>>>(&mut conn)
                        .await?;
                    if matches!(answers.first(), Some(Err(e)) if is_noscript(e)) {
                        answers = pipe_of(eval(script, keys, args))
                            .query_async(&mut conn)
                            .await?;
                    }
                    // A transient refusal of the script (BUSY, LOADING, MOVED
                    // inside the pipeline, ...): it did not run; fail the
                    // attempt so `run` retries it like a lone script call.
                    if matches!(answers.first(), Some(Err(e)) if transient_code(e).is_some()) {
                        let refused = answers.swap_remove(0).expect_err("matched above");
                        return Err(Error::from(refused));
                    }
                    Ok(answers)
                }
            })
            .await?;
        if answers.len() != then.len() + 1 {
            return Err(Error::new(
                ErrorKind::Protocol,
                format!(
                    "a pipeline of {} commands answered {}",
                    then.len() + 1,
                    answers.len()
                ),
            ));
        }
        Ok(answers)
    }

    fn wait_cmd(&self) -> redis::Cmd {
        let mut cmd = redis::cmd("WAIT");
        cmd.arg(self.options.wait_replicas)
            .arg(self.options.wait_timeout_ms);
        cmd
    }

    /// `WAIT` on the master owning `key`, over the connection that carried
    /// the writes to it. For a batch whose writes all rode one connection.
    pub async fn wait_on(&self, key: &str) -> Result<u64> {
        let wait = self.wait_cmd();
        self.run(|mut conn| {
            let wait = &wait;
            async move {
                Ok(redis::from_redis_value(
                    conn.on_master_of(key, wait).await?,
                )?)
            }
        })
        .await
    }

    /// A connection of its own for a command that blocks (the idle worker's
    /// `BLPOP` on its wake list `key`): a blocked connection carries nothing
    /// else, so it cannot be the shared one. Fenced like every connection
    /// before it is handed out (it is not counted in `fence_count`, which counts
    /// the shared connection's fences). Standalone: a fresh connection to the
    /// one server, named, labelled and fenced. Cluster: a
    /// connection to the master owning `key`'s slot (found as the event
    /// subscriber finds its node, `CLUSTER SLOTS`), named and labelled; the
    /// fence runs first on the routed connection, where the fence key's
    /// master answers it. A later failover shows as a MOVED or a dropped
    /// connection on the blocked command; the caller drops this connection
    /// and opens a new one, which finds the new owner.
    pub async fn open_blocking(&self, key: &str) -> Result<BlockingConn> {
        if self.is_closed() {
            return Err(Self::closed_error());
        }
        let timeout = self.options.connect_timeout;
        let speaks = self.options.wire_version;
        let mut node = None;
        let conn = if self.is_cluster() {
            // The routed connection (opened and fenced if it was not yet,
            // re-fenced after a topology event) reaches the fence key's
            // master; the fence runs there again for this connection.
            let mut routed = self.run(|conn| async move { Ok(conn) }).await?;
            self.within_connect_timeout(fence::fence(&mut routed, speaks))
                .await?;
            let (host, port) = self.master_of(key).await?;
            let client = self.target.node_client(&host, port).ok_or_else(|| {
                Error::new(
                    ErrorKind::Connection,
                    format!("cannot address the cluster node {host}:{port}"),
                )
            })?;
            let conn = self
                .within_connect_timeout(async {
                    let mut conn = crate::conn::open_node(&client, timeout).await?;
                    self.label(&mut conn).await?;
                    Ok(Conn::Single(conn))
                })
                .await?;
            node = Some((host, port));
            conn
        } else {
            // Named, labelled and fenced; the bundle is the shared
            // connection's to record (this one only ever blocks).
            let dead = Arc::new(AtomicBool::new(false));
            self.within_connect_timeout(async {
                let mut conn = self.target.open(timeout, dead).await?;
                if let Conn::Single(single) = &mut conn {
                    self.label(single).await?;
                }
                fence::fence(&mut conn, speaks).await?;
                Ok(conn)
            })
            .await?
        };
        if self.is_closed() {
            return Err(Self::closed_error());
        }
        let mut conn = conn;
        // Its id lets `unblock` end a blocked command without closing it.
        let id = redis::cmd("CLIENT")
            .arg("ID")
            .query_async::<u64>(&mut conn)
            .await?;
        Ok(BlockingConn { conn, id, node })
    }

    /// End the blocked command of the blocking connection `id` now, as if it
    /// had timed out (`CLIENT UNBLOCK`), so what is queued behind it runs and
    /// answers. Sent on the shared connection (standalone) or on a
    /// connection of its own to `node` (cluster: the connection's master).
    /// True if a command was blocked.
    pub(crate) async fn unblock(&self, id: u64, node: Option<&(String, u16)>) -> Result<bool> {
        let mut cmd = redis::cmd("CLIENT");
        cmd.arg("UNBLOCK").arg(id);
        let unblocked: i64 = match node {
            None => self.query(&cmd).await?,
            Some((host, port)) => {
                let client = self.target.node_client(host, *port).ok_or_else(|| {
                    Error::new(
                        ErrorKind::Connection,
                        format!("cannot address the cluster node {host}:{port}"),
                    )
                })?;
                let timeout = self.options.connect_timeout;
                self.within_connect_timeout(async {
                    let mut conn = crate::conn::open_node(&client, timeout).await?;
                    Ok(cmd.query_async::<i64>(&mut conn).await?)
                })
                .await?
            }
        };
        Ok(unblocked == 1)
    }

    /// The master owning `key`'s slot, as `CLUSTER SLOTS` tells it.
    async fn master_of(&self, key: &str) -> Result<(String, u16)> {
        let slot = crate::slot::slot(key.as_bytes());
        self.masters()
            .await?
            .into_iter()
            .find(|m| m.slots.iter().any(|&(a, b)| (a..=b).contains(&slot)))
            .map(|m| (m.host, m.port))
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Unavailable,
                    format!("no master serves slot {slot} (of {key})"),
                )
            })
    }

    /// Run many invocations of one script in one round trip, with a verdict
    /// per item. Items refused with NOSCRIPT or a transient reply (MOVED,
    /// ASK, TRYAGAIN during a slot migration, ...) did not run; each is sent
    /// again on its own, routed and healed like [`Transport::script`].
    pub async fn script_many(
        &self,
        script: &Script,
        calls: &[(Vec<String>, Vec<Vec<u8>>)],
    ) -> Result<Vec<Result<Value>>> {
        if calls.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        for (keys, args) in calls {
            pipe.add_command(evalsha_owned(script, keys, args));
        }
        let answers = self
            .run(|mut conn| {
                let pipe = &pipe;
                async move {
                    Ok(pipe
                        .query_async::<Vec<redis::RedisResult<Value>>>(&mut conn)
                        .await?)
                }
            })
            .await?;
        let resend = answers
            .into_iter()
            .zip(calls)
            .map(|(answer, (keys, args))| async move {
                match answer {
                    Err(e) if did_not_run(&e) => {
                        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
                        let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
                        self.script(script, &keys, &args).await
                    }
                    other => other.map_err(Error::from),
                }
            });
        Ok(futures_util::future::join_all(resend).await)
    }
}

/// A dedicated connection from [`Transport::open_blocking`]. Dropping it
/// closes the socket, which also ends a command still blocked on it.
pub(crate) struct BlockingConn {
    conn: Conn,
    /// The server's `CLIENT ID` of this connection (for [`Transport::unblock`]).
    pub(crate) id: u64,
    /// Cluster: the master it is connected to; `None` standalone.
    pub(crate) node: Option<(String, u16)>,
}

impl BlockingConn {
    /// Run `cmds` in one round trip (no response timeout: the caller bounds
    /// it), an answer per command: the server runs what follows a blocking
    /// command once that command answers, without waiting for us.
    pub async fn pipeline(
        &mut self,
        cmds: Vec<redis::Cmd>,
    ) -> Result<Vec<redis::RedisResult<Value>>> {
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        for cmd in cmds {
            pipe.add_command(cmd);
        }
        Ok(pipe
            .query_async::<Vec<redis::RedisResult<Value>>>(&mut self.conn)
            .await?)
    }
}

/// EVALSHA on `conn`, once; on NOSCRIPT the same call as EVAL. No retry,
/// no reconnect: [`Transport::script`] adds those.
pub(crate) async fn script_on(
    mut conn: Conn,
    script: &Script,
    keys: &[&str],
    args: &[&[u8]],
) -> Result<Value> {
    match evalsha(script, keys, args)
        .query_async::<Value>(&mut conn)
        .await
    {
        Err(e) if is_noscript(&e) => Ok(eval(script, keys, args).query_async(&mut conn).await?),
        other => Ok(other?),
    }
}

fn is_noscript(e: &redis::RedisError) -> bool {
    e.code() == Some("NOSCRIPT")
}

/// The server refused to run a script call for now (NOSCRIPT, or a
/// transient reply such as MOVED during a slot migration): sending it again
/// through [`Transport::script`] heals it.
pub(crate) fn did_not_run(e: &redis::RedisError) -> bool {
    is_noscript(e) || transient_code(e).is_some()
}

fn call(verb: &str, head: &str, keys: &[&str], args: &[&[u8]]) -> redis::Cmd {
    let mut cmd = redis::cmd(verb);
    cmd.arg(head).arg(keys.len());
    for k in keys {
        cmd.arg(*k);
    }
    for a in args {
        cmd.arg(*a);
    }
    cmd
}

pub(crate) fn evalsha(script: &Script, keys: &[&str], args: &[&[u8]]) -> redis::Cmd {
    call("EVALSHA", script.sha1(), keys, args)
}

fn eval(script: &Script, keys: &[&str], args: &[&[u8]]) -> redis::Cmd {
    call("EVAL", script.source, keys, args)
}

fn evalsha_owned(script: &Script, keys: &[String], args: &[Vec<u8>]) -> redis::Cmd {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(script.sha1()).arg(keys.len()).arg(keys).arg(args);
    cmd
}
