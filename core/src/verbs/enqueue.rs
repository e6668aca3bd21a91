//! The one enqueue verb, single and batched: [`Client::enqueue`] and
//! [`Client::enqueue_many`]. Every option (a time, a chosen id, a dedup id)
//! goes through [`EnqueueOptions`], so a new option is one field and one
//! branch here, not a new verb in every runtime.

use crate::client::{Client, Hint, MINT_ATTEMPTS};
use crate::error::{BatchItem, Error, ErrorKind, Result, WriteState};
use crate::id::{self, BrandedId};
use crate::keys::{self, QueueKeys};
use crate::replies;
use crate::scripts;
use crate::types::Enqueued;
use crate::verb_options::{EnqueueOptions, When};
use crate::wire::WireVersion;

/// One enqueue, checked before anything is sent: which script writes it,
/// under which id, and whether that id was minted here.
#[derive(Debug, Clone)]
struct Planned {
    id: BrandedId,
    minted: bool,
    write: Write,
    /// For [`Write::Dedup`]: the dedup key and its TTL in ms (`0`: none).
    dedup: Option<(String, String)>,
    /// echomq:2.2.0: the job's priority (1..=MAX_PRIORITY), when it has one.
    priority: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Write {
    /// `enqueue`: pending now.
    Now,
    /// `schedule`: at an absolute instant or after a delay.
    Later(When),
    /// `enqueue_dedup`: pending now, at most one live job per dedup id.
    Dedup,
}

impl Client {
    /// Check `options` (and the queue's name and the payload's size) and mint
    /// the id when the caller chose none. Nothing is sent.
    fn plan(&self, queue: &str, options: &EnqueueOptions, payload: &[u8]) -> Result<Planned> {
        let when = options.when()?;
        options.check_dedup()?;
        let dedup = match options.dedup_id.as_deref() {
            Some(dedup_id) => {
                self.require(WireVersion::V2_1_0, "enqueue with dedup_id")?;
                let ttl = options.dedup_ttl_ms.unwrap_or(0).to_string();
                Some((keys::dedup_key(queue, dedup_id)?, ttl))
            }
            None => None,
        };
        let priority = options.checked_priority()?;
        if priority.is_some() {
            self.require(WireVersion::V2_2_0, "enqueue with priority")?;
        }
        self.check_payload(payload)?;
        let (id, minted) = match options.id.as_deref() {
            Some(id) => (BrandedId::parse(id)?, false),
            None => (id::mint_job_id_with(self.node_id())?, true),
        };
        let write = match (options.dedup_id.is_some(), when) {
            (true, _) => Write::Dedup,
            (false, When::Now) => Write::Now,
            (false, later) => Write::Later(later),
        };
        Ok(Planned {
            id,
            minted,
            write,
            dedup,
            priority,
        })
    }

    /// Enqueue one job as `options` say: now or later (`run_at_ms` /
    /// `delay_ms`, not both), under a minted or a caller-chosen `id`, or
    /// deduplicated by a `dedup_id` (echomq:2.1.0). `EnqueueOptions::default()`
    /// enqueues now under a freshly minted id. A caller-chosen id whose row
    /// exists answers `duplicate: true` and leaves the row untouched (the
    /// producer's receipt); a dedup id held by a live job answers that job's
    /// id with `duplicate: true`.
    pub async fn enqueue(
        &self,
        queue: &str,
        payload: impl AsRef<[u8]>,
        options: EnqueueOptions,
    ) -> Result<Enqueued> {
        let payload = payload.as_ref();
        let keys = QueueKeys::new(queue)?;
        let planned = self.plan(queue, &options, payload)?;
        if let Some(dedup_id) = options.dedup_id.as_deref() {
            return self
                .enqueue_dedup(queue, payload, dedup_id, &options, planned.priority)
                .await;
        }
        if !planned.minted {
            return self
                .write_one(&keys, &planned, payload, Hint::IfWritten)
                .await;
        }
        let mut planned = planned;
        for _ in 0..MINT_ATTEMPTS {
            let answer = self
                .write_one(&keys, &planned, payload, Hint::Pipelined)
                .await?;
            if !answer.duplicate {
                return Ok(answer);
            }
            if self.replayed(&keys, &planned.id, payload).await? {
                // Our own first attempt created it; its event was not sent.
                self.publish_added(&keys, &planned);
                return Ok(Enqueued {
                    id: planned.id,
                    duplicate: false,
                });
            }
            planned.id = id::mint_job_id_with(self.node_id())?;
        }
        Err(Error::new(
            ErrorKind::Server,
            "every freshly minted id already existed; is EMQ_NODE_ID shared?",
        ))
    }

    /// One `enqueue` or `schedule` call for a planned job; `duplicate` when
    /// its row already exists.
    async fn write_one(
        &self,
        keys: &QueueKeys,
        planned: &Planned,
        payload: &[u8],
        hint: Hint,
    ) -> Result<Enqueued> {
        let id = &planned.id;
        let (script, keys_of, args) = self.script_call(keys, planned, payload);
        let key_refs: Vec<&str> = keys_of.iter().map(String::as_str).collect();
        let arg_refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        // The hint wakes a parked worker: for a scheduled job its pumps then
        // look at the schedule and plan for the job's run-at.
        let answer = self
            .write(
                script,
                &key_refs,
                &arg_refs,
                id,
                what(planned.write),
                &self.pipelined_hint(keys, hint),
            )
            .await?;
        let created = replies::created(answer)?;
        if created {
            self.hint_written(keys, hint).await;
            self.publish_added(keys, planned);
        }
        Ok(Enqueued {
            id: *id,
            duplicate: !created,
        })
    }

    /// The `added` event of a job this call wrote, with its time if scheduled.
    fn publish_added(&self, keys: &QueueKeys, planned: &Planned) {
        match added_field(planned.write) {
            Some((field, ms)) => self.publish(keys, "added", planned.id.as_str(), &[(field, &ms)]),
            None => self.publish(keys, "added", planned.id.as_str(), &[]),
        }
    }

    /// The commands to pipeline after a write's script: the hint when
    /// [`Hint::Pipelined`], nothing when it waits for the reply.
    pub(crate) fn pipelined_hint(&self, keys: &QueueKeys, hint: Hint) -> Vec<redis::Cmd> {
        match hint {
            Hint::Pipelined => self.wake_hint(keys),
            Hint::IfWritten => Vec::new(),
        }
    }

    /// A write answered "written": send the hint now if it was not pipelined.
    pub(crate) async fn hint_written(&self, keys: &QueueKeys, hint: Hint) {
        if hint == Hint::IfWritten {
            self.send_wake_hint(keys).await;
        }
    }

    /// A freshly minted id "already existed": is it our own write, replayed
    /// by the cluster client after a node connection dropped mid-request?
    /// (Else two processes share a node id, and the caller re-mints.)
    async fn replayed(&self, keys: &QueueKeys, id: &BrandedId, payload: &[u8]) -> Result<bool> {
        if !self.transport.is_cluster() {
            return Ok(false);
        }
        let stored: Option<Vec<u8>> = self
            .transport
            .query(redis::cmd("HGET").arg(keys.job(id)).arg("payload"))
            .await?;
        Ok(stored.as_deref() == Some(payload))
    }

    /// Run a write script, then `then` (the wake hint) in the same round
    /// trip. With `wait_replicas`, `WAIT` follows them there too, and a
    /// shortfall answers [`ErrorKind::NotDurable`] (after the script's own
    /// refusal, which takes precedence).
    async fn write(
        &self,
        script: &scripts::Script,
        keys: &[&str],
        args: &[&[u8]],
        id: &BrandedId,
        what: &str,
        then: &[redis::Cmd],
    ) -> Result<redis::Value> {
        let wanted = self.transport.options().wait_replicas;
        if wanted == 0 {
            return self.transport.script_then(script, keys, args, then).await;
        }
        let (reply, acked) = self
            .transport
            .script_then_wait(script, keys, args, then)
            .await?;
        if acked < u64::from(wanted) {
            return Err(Error::not_durable(id.as_str(), what, acked, wanted));
        }
        Ok(reply)
    }

    /// Enqueue many jobs in one round trip per kind of write (now, later,
    /// deduplicated), each with its own [`EnqueueOptions`]. Every item is
    /// checked before anything is sent (a bad one refuses the batch and
    /// writes nothing); the answer has one verdict per item, in input order.
    ///
    /// Ids are chosen or minted before sending. If the connection is lost
    /// part way, the error is [`ErrorKind::PartialBatch`] and
    /// [`Error::batch_items`] tells, per item and in input order, its id and
    /// whether it was written, so resending the rest with those ids as
    /// `EnqueueOptions::id` is exact (no duplicates, nothing lost).
    pub async fn enqueue_many<P: AsRef<[u8]>>(
        &self,
        queue: &str,
        items: &[(P, EnqueueOptions)],
    ) -> Result<Vec<Result<Enqueued>>> {
        let keys = QueueKeys::new(queue)?;
        let mut planned = Vec::with_capacity(items.len());
        for (i, (payload, options)) in items.iter().enumerate() {
            let plan = self
                .plan(queue, options, payload.as_ref())
                .map_err(|e| Error::new(e.kind(), format!("item {i}: {}", e.message())))?;
            planned.push(plan);
        }
        let mut answers: Vec<Option<Result<(bool, BrandedId)>>> = vec![None; items.len()];
        // One pipeline per script: now, later, deduplicated, each with and
        // without a priority.
        let mut calls_of: Vec<(&'static scripts::Script, Vec<usize>, Vec<Call>)> = Vec::new();
        for (i, plan) in planned.iter().enumerate() {
            let (script, keys_of, args) = self.script_call(&keys, plan, items[i].0.as_ref());
            match calls_of.iter_mut().find(|(s, _, _)| s.name == script.name) {
                Some((_, group, calls)) => {
                    group.push(i);
                    calls.push((keys_of, args));
                }
                None => calls_of.push((script, vec![i], vec![(keys_of, args)])),
            }
        }
        for (script, group, calls) in calls_of {
            let write = planned[group[0]].write;
            let replies = match self.transport.script_many(script, &calls).await {
                Ok(replies) => replies,
                Err(e) if matches!(e.kind(), ErrorKind::Connection | ErrorKind::Timeout) => {
                    let ids: Vec<BrandedId> = planned.iter().map(|p| p.id).collect();
                    return Err(self.batch_verdicts(&keys, &ids, &e).await);
                }
                Err(e) => return Err(e),
            };
            for (&i, reply) in group.iter().zip(replies) {
                let own = planned[i].id;
                answers[i] = Some(reply.and_then(|reply| match write {
                    Write::Dedup => replies::deduped(reply),
                    _ => replies::created(reply).map(|created| (created, own)),
                }));
            }
        }
        // One hint for the whole batch, and only if it wrote a job: the woken
        // worker's claim keeps a token in the list while a backlog remains,
        // so others join in. (A re-minted item below hints on its own.)
        if answers.iter().any(|a| matches!(a, Some(Ok((true, _))))) {
            self.send_wake_hint(&keys).await;
        }
        let shortfall = self.batch_shortfall(&keys.pending).await?;
        let wanted = self.transport.options().wait_replicas;
        let mut out = Vec::with_capacity(items.len());
        let mut events = self.events(&keys);
        for (i, answer) in answers.into_iter().enumerate() {
            let plan = &planned[i];
            let answer = answer.unwrap_or_else(|| Err(Error::new(ErrorKind::Server, "no reply")));
            out.push(match answer {
                Ok((true, _)) => {
                    if let Some(events) = events.as_mut() {
                        match added_field(plan.write) {
                            Some((field, ms)) => {
                                events.add("added", plan.id.as_str(), &[(field, &ms)])
                            }
                            None => events.add("added", plan.id.as_str(), &[]),
                        }
                    }
                    match shortfall {
                        Some(acked) => Err(Error::not_durable(
                            plan.id.as_str(),
                            what(plan.write),
                            acked,
                            wanted,
                        )),
                        None => Ok(Enqueued {
                            id: plan.id,
                            duplicate: false,
                        }),
                    }
                }
                // A minted id that already exists is a node-id collision (or
                // a cluster replay, which the single path tells apart): again
                // through it, with a fresh id.
                Ok((false, holder)) if plan.minted && holder == plan.id => {
                    let (payload, options) = &items[i];
                    self.enqueue(queue, payload.as_ref(), options.clone()).await
                }
                // A chosen id that exists, or a dedup id held by a live job.
                Ok((false, holder)) => Ok(Enqueued {
                    id: holder,
                    duplicate: true,
                }),
                Err(e) => Err(e),
            });
        }
        if let Some(events) = events {
            events.send();
        }
        Ok(out)
    }

    /// After a batch lost its transport: which of its (pre-chosen) ids were
    /// written, read back on a fresh connection. A row that exists was
    /// written. A missing row was not, when the connection is known gone;
    /// after a timeout the server may still run it, so it is unknown. If
    /// the read fails too, every item is unknown.
    async fn batch_verdicts(&self, keys: &QueueKeys, ids: &[BrandedId], cause: &Error) -> Error {
        let missing = if cause.kind() == ErrorKind::Connection {
            WriteState::NotWritten
        } else {
            WriteState::Unknown
        };
        let mut pipe = redis::pipe();
        for id in ids {
            pipe.cmd("EXISTS").arg(keys.job(id));
        }
        let states: Vec<WriteState> = match self.transport.pipeline(&pipe).await {
            Ok(found) if found.len() == ids.len() => found
                .into_iter()
                .map(|v| match redis::from_redis_value::<u64>(v) {
                    Ok(1) => WriteState::Written,
                    Ok(_) => missing,
                    Err(_) => WriteState::Unknown,
                })
                .collect(),
            _ => vec![WriteState::Unknown; ids.len()],
        };
        let items = ids
            .iter()
            .zip(states)
            .map(|(id, state)| BatchItem { id: *id, state })
            .collect();
        Error::partial_batch(cause, items)
    }
}

/// One script call's keys and arguments.
type Call = (Vec<String>, Vec<Vec<u8>>);

impl Client {
    /// The script, keys and arguments that write one planned job.
    fn script_call(
        &self,
        keys: &QueueKeys,
        planned: &Planned,
        payload: &[u8],
    ) -> (&'static scripts::Script, Vec<String>, Vec<Vec<u8>>) {
        let id = planned.id.as_str().as_bytes().to_vec();
        let row = keys.job(&planned.id);
        if let (Write::Dedup, Some((dedup_key, ttl))) = (planned.write, &planned.dedup) {
            let mut args = vec![
                id,
                payload.to_vec(),
                keys.base.as_bytes().to_vec(),
                ttl.as_bytes().to_vec(),
            ];
            return match planned.priority {
                Some(p) => {
                    args.push(p.to_string().into_bytes());
                    (
                        &scripts::ENQUEUE_DEDUP_PRIORITY,
                        vec![row, keys.prio.clone(), dedup_key.clone()],
                        args,
                    )
                }
                None => (
                    &scripts::ENQUEUE_DEDUP,
                    vec![row, keys.pending.clone(), dedup_key.clone()],
                    args,
                ),
            };
        }
        if let Some(p) = planned.priority {
            let p = p.to_string().into_bytes();
            return match planned.write {
                Write::Now | Write::Dedup => (
                    &scripts::ENQUEUE_PRIORITY,
                    vec![row, keys.prio.clone()],
                    vec![id, payload.to_vec(), p],
                ),
                Write::Later(when) => {
                    let (mode, ms) = mode_of(when);
                    (
                        &scripts::SCHEDULE_PRIORITY,
                        vec![row, keys.schedule.clone()],
                        vec![
                            id,
                            payload.to_vec(),
                            mode.as_bytes().to_vec(),
                            ms.to_string().into_bytes(),
                            p,
                        ],
                    )
                }
            };
        }
        match planned.write {
            Write::Now | Write::Dedup => (
                self.checked(&scripts::ENQUEUE, &scripts::ENQUEUE_CHECKED),
                vec![row, keys.pending.clone()],
                vec![id, payload.to_vec()],
            ),
            Write::Later(when) => {
                let (mode, ms) = mode_of(when);
                (
                    self.checked(&scripts::SCHEDULE, &scripts::SCHEDULE_CHECKED),
                    vec![row, keys.schedule.clone()],
                    vec![
                        id,
                        payload.to_vec(),
                        mode.as_bytes().to_vec(),
                        ms.to_string().into_bytes(),
                    ],
                )
            }
        }
    }
}

/// The `schedule` script's mode (`at` / `in`) and its ms.
fn mode_of(when: When) -> (&'static str, u64) {
    match when {
        When::At(ms) => ("at", ms),
        When::In(ms) => ("in", ms),
        When::Now => ("in", 0),
    }
}

/// The verb a durability shortfall names.
fn what(write: Write) -> &'static str {
    match write {
        Write::Later(_) => "scheduled",
        Write::Now | Write::Dedup => "enqueued",
    }
}

/// The time field of a scheduled job's `added` event.
fn added_field(write: Write) -> Option<(&'static str, String)> {
    match write {
        Write::Later(When::At(ms)) => Some(("run_at_ms", ms.to_string())),
        Write::Later(When::In(ms)) => Some(("delay_ms", ms.to_string())),
        _ => None,
    }
}
