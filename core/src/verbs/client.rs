//! The async client: every verb of docs/API.md, once. Arguments are checked
//! here, before the wire, so bad input never half-writes anything.

use std::sync::Arc;

use redis::Value;

use crate::defaults::SETTLE_BATCH;
use crate::error::{Error, ErrorKind, Result};
use crate::fence::BundleMismatch;
use crate::id::{self, BrandedId};
use crate::keys::QueueKeys;
use crate::options::ConnectOptions;
use crate::queue_events::{Batch, Publisher};
use crate::replies;
use crate::scripts;
use crate::transport::Transport;
use crate::types::*;
use crate::verb_options::{BrowseOptions, RetryOptions};
use crate::wire::WireVersion;

/// The most wake tokens `emq:{q}:wake` holds (the reference's trim).
pub(crate) const WAKE_TOKENS: i64 = 64;

/// When a worker's pumps next have work (the `next_due` script's answer):
/// milliseconds until the first scheduled job is due, until the first lease
/// lapses and until the first repeat slot, `Some(0)` when already due,
/// `None` for an empty set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NextDue {
    pub schedule_ms: Option<u64>,
    pub lease_ms: Option<u64>,
    pub repeat_ms: Option<u64>,
}

/// When a write's wake hint goes out (issue #39 item 14: a token only for a
/// job that was written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hint {
    /// Pipelined after the script, same round trip: for a write that can
    /// only write (a freshly minted `JOB` id; a collision re-mints and the
    /// next attempt writes, so its token is not wasted).
    Pipelined,
    /// After the reply, on its own round trip, and only when the script
    /// wrote: for a caller-chosen id, which the script may refuse (`EMQKIND`)
    /// or answer as a duplicate. A refused write leaves no key and wakes no
    /// one; the extra round trip is paid only by a write that happened.
    IfWritten,
}

/// How many times `enqueue` re-mints when a freshly minted id already exists
/// (only possible when two processes share a node id).
pub(crate) const MINT_ATTEMPTS: usize = 8;

/// A connection to one EchoMQ deployment. Cheap to clone; all clones share one
/// multiplexed connection, so concurrent calls pipeline automatically.
#[derive(Clone)]
pub struct Client {
    pub(crate) transport: Arc<Transport>,
    /// The node id given at connect (the option, else `EMQ_NODE_ID`);
    /// `None` mints with the process's default, redrawn in a forked child.
    pub(crate) node_id: Option<u16>,
    /// The wire version this handle speaks: the connect option, except on
    /// the probe handle `upgrade_protocol` builds to try the next version.
    pub(crate) wire: WireVersion,
    pub(crate) events: Arc<Publisher>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("node_id", &self.node_id())
            .field("wire", &self.wire)
            .finish_non_exhaustive()
    }
}

pub(crate) fn check_positive(name: &str, value: u64) -> Result<()> {
    if value == 0 {
        return Err(Error::invalid_argument(format!(
            "{name} must be greater than zero"
        )));
    }
    Ok(())
}

impl Client {
    /// Connect to `redis://`, `rediss://`, `redis+unix://`, or a cluster's
    /// `redis+cluster://` / `rediss+cluster://` seed nodes, and fence before
    /// anything else is sent.
    pub async fn connect(url: &str, options: ConnectOptions) -> Result<Client> {
        let node_id = match options.node_id {
            Some(n) => Some(id::check_node_id(n)?),
            None => id::env_node_id()?,
        };
        options.validate()?;
        crate::runtime::check_env()?;
        let publish = options.publish_events;
        let wire = options.wire_version;
        let transport = Transport::connect(url, options).await?;
        let events = Arc::new(Publisher::new(transport.clone(), publish));
        Ok(Client {
            transport,
            node_id,
            wire,
            events,
        })
    }

    /// Connect without naming a URL: `EMQ_URL` when set, else
    /// `redis://127.0.0.1:6379/` ([`crate::defaults::url`]).
    pub async fn connect_default(options: ConnectOptions) -> Result<Client> {
        Client::connect(&crate::defaults::url(), options).await
    }

    pub(crate) fn transport(&self) -> &Transport {
        &self.transport
    }

    pub(crate) fn transport_arc(&self) -> Arc<Transport> {
        self.transport.clone()
    }

    /// This client on another transport (a thread's direct connection,
    /// [`crate::direct`]); the event publisher stays this client's.
    pub(crate) fn with_transport(&self, transport: Arc<Transport>) -> Client {
        Client {
            transport,
            ..self.clone()
        }
    }

    /// Queue events for `keys`' queue, published once the batch is sent;
    /// `None` when this client does not publish.
    pub(crate) fn events(&self, keys: &QueueKeys) -> Option<Batch<'_>> {
        self.events.batch(&keys.base)
    }

    /// Publish one event right away (when this client publishes).
    pub(crate) fn publish(
        &self,
        keys: &QueueKeys,
        event: &str,
        job: &str,
        fields: &[(&str, &str)],
    ) {
        if let Some(mut batch) = self.events(keys) {
            batch.add(event, job, fields);
            batch.send();
        }
    }

    /// The node id this client mints with: the one given at connect, else
    /// the process's default (see [`id::default_node_id`]).
    pub fn node_id(&self) -> u16 {
        self.node_id.unwrap_or_else(id::default_node_id)
    }

    /// The wire version this client speaks (and fenced).
    pub fn wire_version(&self) -> WireVersion {
        self.wire
    }

    /// Refuse, before any I/O, a verb that needs a newer wire version.
    pub(crate) fn require(&self, needed: WireVersion, verb: &str) -> Result<()> {
        self.wire.require(needed, verb)
    }

    /// The options this client was connected with.
    pub fn options(&self) -> &ConnectOptions {
        self.transport.options()
    }

    /// Fields of `{emq}:bundle` that another runtime recorded with different SHAs.
    /// [`ErrorKind::Closed`] once the client is closed, like every other call.
    pub fn bundle_mismatches(&self) -> Result<Vec<BundleMismatch>> {
        self.check_open()?;
        Ok(self.transport.bundle_mismatches())
    }

    /// Has [`Client::close`] been called (on this client or a clone)?
    pub fn is_closed(&self) -> bool {
        self.transport.is_closed()
    }

    /// `Err(Closed)` once the client is closed, for callers that must refuse
    /// to start work on it.
    pub fn check_open(&self) -> Result<()> {
        if self.is_closed() {
            return Err(Error::new(ErrorKind::Closed, "client is closed"));
        }
        Ok(())
    }

    /// Is this a `redis+cluster://` client?
    pub fn is_cluster(&self) -> bool {
        self.transport.is_cluster()
    }

    /// How many times this client has run the version fence: once at
    /// connect, then again after each cluster topology event.
    #[doc(hidden)]
    pub fn fence_count(&self) -> u64 {
        self.transport.fence_count()
    }

    /// Close the connection; later calls fail with [`ErrorKind::Closed`].
    /// Never waits: queue events from calls that answered before it are
    /// still published, on the connection that was open, for at most
    /// [`CLOSE_FLUSH`](crate::CLOSE_FLUSH); await
    /// [`Client::closed`] before the process exits so they are not lost.
    pub fn close(&self) {
        // Handed over before the transport refuses calls, so the publisher
        // never finds it closed without the connection to finish on.
        self.events.close(self.transport.last_connection());
        self.transport.close();
    }

    /// Ready once [`Client::close`] (on this client or a clone) has finished:
    /// the events queued before it are published, or `CLOSE_FLUSH` passed.
    /// Waits for a close that has not happened yet.
    pub async fn closed(&self) {
        self.transport.closed().await;
        self.events.closed().await;
    }

    /// After [`Client::close`]: are queue events still being flushed?
    /// (`false` when there is nothing to wait for, so a blocking caller
    /// need not enter the runtime at all: a forked child closing a client it
    /// inherited must not.)
    pub(crate) fn flushing(&self) -> bool {
        self.events.flushing()
    }

    /// [`Client::close`] now, and [`Client::closed`] as a future that owns
    /// what it needs, for a caller that awaits it elsewhere (a binding's
    /// Promise or awaitable): calls made after this returns already fail.
    pub fn close_and_wait(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.close();
        let this = self.clone();
        async move { this.closed().await }
    }

    /// The script a verb sends: at wire 2.1.0 its `checked` form, which proves
    /// every key's type before its first write (a key of another type is
    /// refused with nothing written; decision W.1), else the 2.0.0 `plain`
    /// one, whose bytes never change.
    pub(crate) fn checked(
        &self,
        plain: &'static scripts::Script,
        checked: &'static scripts::Script,
    ) -> &'static scripts::Script {
        if self.wire >= WireVersion::V2_1_0 {
            checked
        } else {
            plain
        }
    }

    /// The script a verb sends at wire 2.2.0: its `routed` form, which puts a
    /// job back where its row says it waits (a prioritized job into
    /// `emq:{q}:prio`; decision P.2), else `earlier` (the 2.1.0 or 2.0.0 one
    /// [`Client::checked`] picks). The earlier bodies never change.
    pub(crate) fn routed(
        &self,
        earlier: &'static scripts::Script,
        routed: &'static scripts::Script,
    ) -> &'static scripts::Script {
        if self.speaks_priority() {
            routed
        } else {
            earlier
        }
    }

    /// Does this client speak echomq:2.2.0's priorities (the key
    /// `emq:{q}:prio`, the row field `priority`)?
    pub(crate) fn speaks_priority(&self) -> bool {
        self.wire >= WireVersion::V2_2_0
    }

    /// Does this client send wake hints (and may a worker of it park on the
    /// wake list)? The key is an echomq:2.1.0 registration.
    pub(crate) fn speaks_wake(&self) -> bool {
        self.wire >= WireVersion::V2_1_0
    }

    /// The wake hint (docs/PROTOCOL-DECISIONS.md 16.1): one token on
    /// `emq:{q}:wake`, the list trimmed to [`WAKE_TOKENS`], sent after a write
    /// that made a job claimable, so a worker parked in `BLPOP` claims at once.
    /// Empty when this client speaks no 2.1.0.
    pub(crate) fn wake_hint(&self, keys: &QueueKeys) -> Vec<redis::Cmd> {
        if !self.speaks_wake() {
            return Vec::new();
        }
        let mut push = redis::cmd("LPUSH");
        push.arg(&keys.wake).arg("1");
        let mut trim = redis::cmd("LTRIM");
        trim.arg(&keys.wake).arg(0).arg(WAKE_TOKENS - 1);
        vec![push, trim]
    }

    /// Send the wake hint on its own round trip (after writes that are not
    /// one script call). A failure is only logged: a lost hint delays a
    /// pickup until the worker's fallback, it loses nothing.
    pub(crate) async fn send_wake_hint(&self, keys: &QueueKeys) {
        let hint = self.wake_hint(keys);
        if hint.is_empty() {
            return;
        }
        let mut pipe = redis::pipe();
        for cmd in hint {
            pipe.add_command(cmd).ignore();
        }
        if let Err(e) = self.transport.pipeline(&pipe).await {
            log::debug!("echomq: wake hint on {} not sent: {e}", keys.wake);
        }
    }

    pub(crate) fn check_payload(&self, payload: &[u8]) -> Result<()> {
        let max = self.transport.options().max_payload;
        if payload.len() > max {
            return Err(Error::invalid_argument(format!(
                "payload of {} bytes exceeds the {max}-byte maximum",
                payload.len()
            )));
        }
        Ok(())
    }

    /// A completed chunk's verdicts: with `wait_replicas`, each `Ok` becomes
    /// `NotDurable` when the replicas did not confirm the chunk in time.
    pub(crate) async fn confirmed(
        &self,
        keys: &QueueKeys,
        ids: &[BrandedId],
        verdicts: Vec<Result<()>>,
    ) -> Result<Vec<Result<()>>> {
        let shortfall = self.batch_shortfall(&keys.active).await?;
        let wanted = self.transport.options().wait_replicas;
        Ok(ids
            .iter()
            .zip(verdicts)
            .map(|(id, verdict)| match (verdict, shortfall) {
                (Ok(()), Some(acked)) => {
                    Err(Error::not_durable(id.as_str(), "completed", acked, wanted))
                }
                (verdict, _) => verdict,
            })
            .collect())
    }

    /// `WAIT` after a batch written to the master owning `key`; `Some(acked)`
    /// when fewer replicas than `wait_replicas` acknowledged it.
    pub(crate) async fn batch_shortfall(&self, key: &str) -> Result<Option<u64>> {
        let wanted = self.transport.options().wait_replicas;
        if wanted == 0 {
            return Ok(None);
        }
        let acked = self.transport.wait_on(key).await?;
        Ok((acked < u64::from(wanted)).then_some(acked))
    }

    // ---- claim and settle ----------------------------------------------

    /// Claim the oldest pending job, leased for `lease_ms`.
    pub async fn claim(&self, queue: &str, lease_ms: u64) -> Result<Option<Job>> {
        Ok(self
            .claim_many(queue, 1, lease_ms)
            .await?
            .into_iter()
            .next())
    }

    /// Claim up to `max` jobs in one call, all with one lease deadline. At
    /// wire 2.1.0 the claim honours the queue's concurrency ceiling and rate
    /// limit: a refused claim is [`ErrorKind::RateLimited`] with the wait.
    pub async fn claim_many(&self, queue: &str, max: u64, lease_ms: u64) -> Result<Vec<Job>> {
        if self.wire >= WireVersion::V2_1_0 {
            return self.claim_guarded(queue, max, lease_ms, 0).await;
        }
        let keys = QueueKeys::new(queue)?;
        check_positive("lease_ms", lease_ms)?;
        check_positive("max", max)?;
        let answer = self
            .transport
            .script(
                &scripts::CLAIM,
                &[&keys.pending, &keys.active, &keys.meta],
                &[
                    keys.base.as_bytes(),
                    lease_ms.to_string().as_bytes(),
                    max.to_string().as_bytes(),
                ],
            )
            .await?;
        let jobs = replies::claimed(answer)?;
        self.publish_active(&keys, &jobs);
        Ok(jobs)
    }

    /// `active` for each job a claim handed out (either claim script).
    pub(crate) fn publish_active(&self, keys: &QueueKeys, jobs: &[Job]) {
        if let Some(mut events) = self.events(keys) {
            for job in jobs {
                events.add(
                    "active",
                    job.id.as_str(),
                    &[("token", &job.token.to_string())],
                );
            }
            events.send();
        }
    }

    fn complete_call(keys: &QueueKeys, id: &BrandedId, token: u64) -> (Vec<String>, Vec<Vec<u8>>) {
        (
            vec![
                keys.active.clone(),
                keys.job(id),
                keys.pending.clone(),
                keys.completed.clone(),
            ],
            vec![
                id.as_str().as_bytes().to_vec(),
                token.to_string().into_bytes(),
            ],
        )
    }

    /// Settle a held job as done: its row and every set entry are deleted
    /// (at wire 2.1.0 its log too, in the same script).
    pub async fn complete(&self, queue: &str, id: &str, token: u64) -> Result<()> {
        let keys = QueueKeys::new(queue)?;
        let id = BrandedId::parse(id)?;
        let (mut k, mut a) = Self::complete_call(&keys, &id, token);
        let script = if self.wire_version() >= WireVersion::V2_1_0 {
            k.push(keys.job_logs(&id));
            k.push(keys.job_result(&id));
            a.push(b"0".to_vec());
            a.push(Vec::new());
            &scripts::COMPLETE_RESULT
        } else {
            &scripts::COMPLETE
        };
        let k: Vec<&str> = k.iter().map(String::as_str).collect();
        let a: Vec<&[u8]> = a.iter().map(Vec::as_slice).collect();
        let wanted = self.transport.options().wait_replicas;
        let acked = if wanted == 0 {
            let answer = self.transport.script(script, &k, &a).await;
            replies::completed(&id, answer)?;
            None
        } else {
            let (answer, acked) = self
                .transport
                .script_then_wait(script, &k, &a, &[])
                .await
                .map_err(|e| e.about(&id))?;
            replies::completed(&id, Ok(answer))?;
            Some(acked)
        };
        // The completion ran on the master either way: its event goes out.
        self.publish(
            &keys,
            "completed",
            id.as_str(),
            &[("token", &token.to_string())],
        );
        if let Some(acked) = acked.filter(|&acked| acked < u64::from(wanted)) {
            return Err(Error::not_durable(id.as_str(), "completed", acked, wanted));
        }
        Ok(())
    }

    /// Complete many held jobs in one script call per [`SETTLE_BATCH`] jobs; each token is
    /// still checked, and each job gets its own verdict, in input order.
    pub async fn complete_many(
        &self,
        queue: &str,
        jobs: &[(&str, u64)],
    ) -> Result<Vec<Result<()>>> {
        if self.wire_version() >= WireVersion::V2_1_0 {
            // The 2.1.0 script: the same checks and answers, and each job's
            // log deleted with its row.
            let none: Vec<(&str, u64, &[u8])> =
                jobs.iter().map(|(id, t)| (*id, *t, &[][..])).collect();
            return self.complete_many_kept(queue, &none, 0).await;
        }
        let keys = QueueKeys::new(queue)?;
        let ids: Vec<BrandedId> = jobs
            .iter()
            .map(|(id, _)| BrandedId::parse(id))
            .collect::<Result<_>>()?;
        let mut out = Vec::with_capacity(ids.len());
        let mut events = self.events(&keys);
        for (chunk_ids, chunk) in ids.chunks(SETTLE_BATCH).zip(jobs.chunks(SETTLE_BATCH)) {
            let mut args: Vec<Vec<u8>> = Vec::with_capacity(1 + 2 * chunk.len());
            args.push(keys.base.as_bytes().to_vec());
            for (id, (_, token)) in chunk_ids.iter().zip(chunk) {
                args.push(id.as_str().as_bytes().to_vec());
                args.push(token.to_string().into_bytes());
            }
            let arg_refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            let answer = self
                .transport
                .script(
                    &scripts::COMPLETE_MANY,
                    &[&keys.active, &keys.pending, &keys.completed],
                    &arg_refs,
                )
                .await?;
            let verdicts = replies::completed_many(chunk_ids, answer)?;
            if let Some(events) = events.as_mut() {
                for ((id, (_, token)), verdict) in chunk_ids.iter().zip(chunk).zip(&verdicts) {
                    if verdict.is_ok() {
                        events.add("completed", id.as_str(), &[("token", &token.to_string())]);
                    }
                }
            }
            out.extend(self.confirmed(&keys, chunk_ids, verdicts).await?);
        }
        if let Some(events) = events {
            events.send();
        }
        Ok(out)
    }

    /// Settle a held job as failed: dead at `max_attempts`, else scheduled
    /// `delay_ms` from the server's now. `error` becomes `last_error`.
    pub async fn retry(
        &self,
        queue: &str,
        id: &str,
        token: u64,
        delay_ms: u64,
        max_attempts: u64,
        error: &str,
    ) -> Result<RetryOutcome> {
        let keys = QueueKeys::new(queue)?;
        let id = BrandedId::parse(id)?;
        check_positive("max_attempts", max_attempts)?;
        let row = keys.job(&id);
        let answer = self
            .transport
            .script(
                self.checked(&scripts::RETRY, &scripts::RETRY_CHECKED),
                &[
                    &keys.active,
                    &row,
                    &keys.pending,
                    &keys.schedule,
                    &keys.dead,
                    &keys.failed,
                ],
                &[
                    id.as_str().as_bytes(),
                    token.to_string().as_bytes(),
                    delay_ms.to_string().as_bytes(),
                    max_attempts.to_string().as_bytes(),
                    error.as_bytes(),
                ],
            )
            .await
            .map_err(|e| e.about(&id))?;
        let outcome = replies::retried(answer)?;
        let attempts = token.to_string();
        match outcome {
            RetryOutcome::Dead => self.publish(
                &keys,
                "dead",
                id.as_str(),
                &[("attempts", &attempts), ("error", error)],
            ),
            RetryOutcome::Scheduled => self.publish(
                &keys,
                "retried",
                id.as_str(),
                &[
                    ("attempts", &attempts),
                    ("error", error),
                    ("delay_ms", &delay_ms.to_string()),
                ],
            ),
        }
        Ok(outcome)
    }

    /// [`Client::retry`] with its options named: `delay_ms` (0),
    /// `max_attempts` (the worker's default, 5) and `error` (empty).
    pub async fn retry_with(
        &self,
        queue: &str,
        id: &str,
        token: u64,
        options: &RetryOptions,
    ) -> Result<RetryOutcome> {
        self.retry(
            queue,
            id,
            token,
            options.delay_ms,
            options.max_attempts,
            &options.error,
        )
        .await
    }

    fn extend_call(
        keys: &QueueKeys,
        id: &BrandedId,
        token: u64,
        lease: &str,
    ) -> (Vec<String>, Vec<Vec<u8>>) {
        (
            vec![keys.active.clone(), keys.job(id)],
            vec![
                id.as_str().as_bytes().to_vec(),
                token.to_string().into_bytes(),
                lease.as_bytes().to_vec(),
            ],
        )
    }

    /// Renew a held job's lease to server-now + `lease_ms`.
    pub async fn extend(&self, queue: &str, id: &str, token: u64, lease_ms: u64) -> Result<()> {
        self.extend_many(queue, &[(id, token)], lease_ms)
            .await?
            .remove(0)
    }

    /// Renew many leases in one round trip (the worker's heartbeat).
    pub async fn extend_many(
        &self,
        queue: &str,
        jobs: &[(&str, u64)],
        lease_ms: u64,
    ) -> Result<Vec<Result<()>>> {
        let keys = QueueKeys::new(queue)?;
        check_positive("lease_ms", lease_ms)?;
        let ids: Vec<BrandedId> = jobs
            .iter()
            .map(|(id, _)| BrandedId::parse(id))
            .collect::<Result<_>>()?;
        let lease = lease_ms.to_string();
        let calls: Vec<_> = ids
            .iter()
            .zip(jobs)
            .map(|(id, (_, t))| Self::extend_call(&keys, id, *t, &lease))
            .collect();
        let answers = self.transport.script_many(&scripts::EXTEND, &calls).await?;
        Ok(ids
            .iter()
            .zip(answers)
            .map(|(id, a)| replies::extended(id, a))
            .collect())
    }

    /// Hand held jobs back to pending now, unrun, in one round trip: a
    /// stopping worker's prefetched jobs and the handlers that outlived its
    /// grace period. Attempts are kept, so the tokens stay monotonic; a job
    /// no longer held with that token answers a stale error.
    ///
    /// The worker's own verb for now: not yet in the bindings or `docs/API.md`.
    #[doc(hidden)]
    pub async fn release_many(&self, queue: &str, jobs: &[(&str, u64)]) -> Result<Vec<Result<()>>> {
        let keys = QueueKeys::new(queue)?;
        let ids: Vec<BrandedId> = jobs
            .iter()
            .map(|(id, _)| BrandedId::parse(id))
            .collect::<Result<_>>()?;
        let calls: Vec<_> = ids
            .iter()
            .zip(jobs)
            .map(|(id, (_, token))| {
                let mut k = vec![keys.active.clone(), keys.job(id), keys.pending.clone()];
                if self.speaks_priority() {
                    k.push(keys.prio.clone());
                }
                (
                    k,
                    vec![
                        id.as_str().as_bytes().to_vec(),
                        token.to_string().into_bytes(),
                    ],
                )
            })
            .collect();
        let answers = self
            .transport
            .script_many(
                self.routed(
                    self.checked(&scripts::RELEASE, &scripts::RELEASE_CHECKED),
                    &scripts::RELEASE_ROUTED,
                ),
                &calls,
            )
            .await?;
        let released: Vec<Result<()>> = ids
            .iter()
            .zip(answers)
            .map(|(id, a)| replies::released(a).map_err(|e| e.about(id)))
            .collect();
        if released.iter().any(|r| r.is_ok()) {
            self.send_wake_hint(&keys).await;
        }
        Ok(released)
    }

    // ---- pumps ---------------------------------------------------------

    /// Move up to `limit` due scheduled jobs to pending.
    pub async fn promote(&self, queue: &str, limit: u64) -> Result<u64> {
        let script = self.routed(
            self.checked(&scripts::PROMOTE, &scripts::PROMOTE_CHECKED),
            &scripts::PROMOTE_ROUTED,
        );
        self.pump(queue, limit, script, |k| &k.schedule).await
    }

    /// Move up to `limit` jobs whose lease lapsed back to pending.
    pub async fn reap(&self, queue: &str, limit: u64) -> Result<u64> {
        let script = self.routed(
            self.checked(&scripts::REAP, &scripts::REAP_CHECKED),
            &scripts::REAP_ROUTED,
        );
        self.pump(queue, limit, script, |k| &k.active).await
    }

    /// Run a server-clock pump script that moves due members of `from` to pending.
    async fn pump(
        &self,
        queue: &str,
        limit: u64,
        script: &scripts::Script,
        from: fn(&QueueKeys) -> &String,
    ) -> Result<u64> {
        let keys = QueueKeys::new(queue)?;
        check_positive("limit", limit)?;
        let mut k = vec![from(&keys).as_str(), &keys.pending];
        if self.speaks_priority() {
            k.push(&keys.prio);
        }
        let answer = self
            .transport
            .script(
                script,
                &k,
                &[keys.base.as_bytes(), limit.to_string().as_bytes()],
            )
            .await?;
        let moved = replies::moved(answer)?;
        if moved > 0 {
            self.send_wake_hint(&keys).await;
        }
        Ok(moved)
    }

    /// When the worker's pumps next have work on `queue` (one read-only
    /// script; the worker's own, not in the bindings).
    pub(crate) async fn next_due(&self, queue: &str) -> Result<NextDue> {
        let keys = QueueKeys::new(queue)?;
        let answer = self
            .transport
            .script(
                &scripts::NEXT_DUE,
                &[&keys.schedule, &keys.active, &keys.repeat],
                &[],
            )
            .await?;
        let (schedule, lease, repeat): (i64, i64, i64) = redis::from_redis_value(answer)?;
        let ms = |v: i64| u64::try_from(v).ok();
        Ok(NextDue {
            schedule_ms: ms(schedule),
            lease_ms: ms(lease),
            repeat_ms: ms(repeat),
        })
    }

    // ---- inspection and administration -----------------------------------

    /// Sizes of the four sets and the two counters, read in one round trip.
    /// At wire 2.2.0 `pending` counts every job waiting to be claimed: the
    /// members of `pending` and of `prio` (decision P.4).
    pub async fn counts(&self, queue: &str) -> Result<Counts> {
        let keys = QueueKeys::new(queue)?;
        let mut pipe = redis::pipe();
        for key in [&keys.pending, &keys.active, &keys.schedule, &keys.dead] {
            pipe.cmd("ZCARD").arg(key);
        }
        pipe.cmd("HGET").arg(&keys.completed).arg("count");
        pipe.cmd("HGET").arg(&keys.failed).arg("count");
        if self.speaks_priority() {
            pipe.cmd("ZCARD").arg(&keys.prio);
        }
        let mut answers = self.transport.pipeline(&pipe).await?;
        let prio = if self.speaks_priority() && answers.len() == 7 {
            let last = answers.pop().unwrap_or(Value::Nil);
            redis::from_redis_value::<u64>(last)?
        } else {
            0
        };
        let mut counts = replies::counts(answers)?;
        counts.pending += prio;
        Ok(counts)
    }

    /// The stored row of a job, or `None` when there is none.
    pub async fn job(&self, queue: &str, id: &str) -> Result<Option<JobInfo>> {
        let keys = QueueKeys::new(queue)?;
        let id = BrandedId::parse(id)?;
        let row: Value = self
            .transport
            .query(redis::cmd("HGETALL").arg(keys.job(&id)))
            .await?;
        replies::job_row(&id, row)
    }

    /// Whether the job's row exists (in any state), without reading it: a
    /// producer checking a receipt. A malformed id is *invalid id*.
    pub async fn exists(&self, queue: &str, id: &str) -> Result<bool> {
        let keys = QueueKeys::new(queue)?;
        let id = BrandedId::parse(id)?;
        let found: u64 = self
            .transport
            .query(redis::cmd("EXISTS").arg(keys.job(&id)))
            .await?;
        Ok(found == 1)
    }

    /// Ids in one set, oldest or newest first, optionally inside a time range:
    /// mint time for pending/dead (by lex), run-at or deadline for
    /// schedule/active (by score).
    pub async fn browse(
        &self,
        queue: &str,
        set: BrowseSet,
        newest_first: bool,
        limit: u64,
        range: Option<TimeRange>,
    ) -> Result<Vec<BrandedId>> {
        let keys = QueueKeys::new(queue)?;
        check_positive("limit", limit)?;
        if let Some(r) = range {
            if r.from_ms > r.to_ms {
                return Err(Error::invalid_argument("range from_ms is after to_ms"));
            }
        }
        let mut cmd;
        match set {
            BrowseSet::Prio => {
                self.require(WireVersion::V2_2_0, "browse prio")?;
                if range.is_some() {
                    return Err(prio_range());
                }
                cmd = redis::cmd(if newest_first { "ZREVRANGE" } else { "ZRANGE" });
                cmd.arg(&keys.prio).arg(0).arg(limit - 1);
                return replies::browsed(self.transport.query(&cmd).await?);
            }
            BrowseSet::Pending | BrowseSet::Dead => {
                let key = if set == BrowseSet::Pending {
                    &keys.pending
                } else {
                    &keys.dead
                };
                let (lo, hi) = match range {
                    Some(r) => (
                        format!("[{}", id::lex_bound(r.from_ms)),
                        format!("({}", id::lex_bound(r.to_ms)),
                    ),
                    None => ("-".to_string(), "+".to_string()),
                };
                if newest_first {
                    cmd = redis::cmd("ZREVRANGEBYLEX");
                    cmd.arg(key).arg(hi).arg(lo);
                } else {
                    cmd = redis::cmd("ZRANGEBYLEX");
                    cmd.arg(key).arg(lo).arg(hi);
                }
            }
            BrowseSet::Schedule | BrowseSet::Active => {
                let key = if set == BrowseSet::Schedule {
                    &keys.schedule
                } else {
                    &keys.active
                };
                let (lo, hi) = match range {
                    Some(r) => (r.from_ms.to_string(), format!("({}", r.to_ms)),
                    None => ("-inf".to_string(), "+inf".to_string()),
                };
                if newest_first {
                    cmd = redis::cmd("ZREVRANGEBYSCORE");
                    cmd.arg(key).arg(hi).arg(lo);
                } else {
                    cmd = redis::cmd("ZRANGEBYSCORE");
                    cmd.arg(key).arg(lo).arg(hi);
                }
            }
        }
        cmd.arg("LIMIT").arg(0).arg(limit);
        replies::browsed(self.transport.query(&cmd).await?)
    }

    /// [`Client::browse`] with its options named: `newest_first` (false),
    /// `limit` (100) and `range` (none).
    pub async fn browse_with(
        &self,
        queue: &str,
        set: BrowseSet,
        options: &BrowseOptions,
    ) -> Result<Vec<BrandedId>> {
        self.browse(
            queue,
            set,
            options.newest_first,
            options.limit,
            options.range,
        )
        .await
    }

    /// Stop claims on a queue (pending is left intact).
    pub async fn pause(&self, queue: &str) -> Result<()> {
        let keys = QueueKeys::new(queue)?;
        let _: i64 = self
            .transport
            .query(redis::cmd("HSET").arg(&keys.meta).arg("paused").arg("1"))
            .await?;
        self.publish(&keys, "paused", "", &[]);
        Ok(())
    }

    /// Let claims resume.
    pub async fn resume(&self, queue: &str) -> Result<()> {
        let keys = QueueKeys::new(queue)?;
        let _: i64 = self
            .transport
            .query(redis::cmd("HDEL").arg(&keys.meta).arg("paused"))
            .await?;
        // Claims dropped the wake tokens while paused; parked workers wake now.
        self.send_wake_hint(&keys).await;
        self.publish(&keys, "resumed", "", &[]);
        Ok(())
    }

    /// Is the queue paused?
    pub async fn is_paused(&self, queue: &str) -> Result<bool> {
        let keys = QueueKeys::new(queue)?;
        self.transport
            .query(redis::cmd("HEXISTS").arg(&keys.meta).arg("paused"))
            .await
    }

    /// Return a dead job to pending, last_error cleared. At wire 2.1.0 it
    /// starts afresh (`attempts` and `stalled` reset: the 2.1.0 claim caps
    /// attempts, so a job that used them up would die again unrun); a 2.0.0
    /// client keeps them, as its claim has no cap.
    pub async fn requeue_dead(&self, queue: &str, id: &str) -> Result<()> {
        let keys = QueueKeys::new(queue)?;
        let id = BrandedId::parse(id)?;
        let row = keys.job(&id);
        let mut k = vec![keys.dead.as_str(), &row, &keys.pending];
        let script = if self.speaks_priority() {
            k.push(&keys.prio);
            &scripts::REQUEUE_FRESH_ROUTED
        } else if self.wire_version() >= WireVersion::V2_1_0 {
            &scripts::REQUEUE_FRESH
        } else {
            &scripts::REQUEUE_DEAD
        };
        let answer = self
            .transport
            .script(script, &k, &[id.as_str().as_bytes()])
            .await?;
        replies::requeued(&id, answer)?;
        // After the reply: a job that was not dead moved nowhere, no token.
        self.send_wake_hint(&keys).await;
        self.publish(&keys, "requeued", id.as_str(), &[]);
        Ok(())
    }

    /// Delete a job that is not active, from its row and every set (at wire
    /// 2.1.0 with its log and kept result, in the same script).
    pub async fn remove(&self, queue: &str, id: &str) -> Result<()> {
        let keys = QueueKeys::new(queue)?;
        let id = BrandedId::parse(id)?;
        let row = keys.job(&id);
        let (logs, result) = (keys.job_logs(&id), keys.job_result(&id));
        let mut k = vec![
            row.as_str(),
            &keys.pending,
            &keys.schedule,
            &keys.dead,
            &keys.active,
        ];
        let script = if self.speaks_priority() {
            k.extend([logs.as_str(), result.as_str(), &keys.prio]);
            &scripts::REMOVE_ROUTED
        } else if self.wire_version() >= WireVersion::V2_1_0 {
            k.extend([logs.as_str(), result.as_str()]);
            &scripts::REMOVE_CASCADE
        } else {
            &scripts::REMOVE
        };
        let answer = self
            .transport
            .script(script, &k, &[id.as_str().as_bytes()])
            .await?;
        replies::removed(&id, answer)?;
        self.publish(&keys, "removed", id.as_str(), &[]);
        Ok(())
    }
}

/// A time range on `prio`: its members are ordered by priority, not by mint
/// time, so neither lex nor score ranges select a time (decision P.4).
pub(crate) fn prio_range() -> Error {
    Error::invalid_argument(
        "prio is ordered by priority: browse it without a range (the range of pending is mint time)",
    )
}
