//! Operator verbs: discover queues, look at one job from every side, and the
//! bulk changes an operator makes (drain, purge the dead set, requeue every
//! dead job). Bulk verbs work in bounded batches — one script call touches at
//! most [`BATCH`] jobs — so a large queue never blocks the server for long.

use std::collections::{BTreeMap, BTreeSet};

use redis::Value;

use crate::client::{check_positive, Client};
use crate::error::Result;
use crate::id::{self, BrandedId};
use crate::keys::{self, KeyClass, QueueKeys};
use crate::scripts::{self, Script};
use crate::types::BrowseSet;
use crate::wire::WireVersion;

/// Jobs one script call of a bulk verb touches at most.
pub const BATCH: u64 = 500;

/// Keys one `SCAN` step asks for.
const SCAN_COUNT: u64 = 1000;

/// A job seen from every side: its whole row and every set that holds its id.
#[derive(Debug, Clone, PartialEq)]
pub struct JobView {
    /// The job's id.
    pub id: BrandedId,
    /// Every field of `emq:{q}:job:<id>`, by name (empty when there is no row).
    pub row: BTreeMap<String, Vec<u8>>,
    /// The sets holding the id, with the member's score (run-at for
    /// `schedule`, lease deadline for `active`, 0 for `pending` and `dead`).
    /// One entry for a consistent job; none or several point at debris.
    pub sets: Vec<(BrowseSet, f64)>,
}

/// Which bound selects the dead jobs [`Client::purge_dead`] deletes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeadBound {
    /// Delete dead jobs minted more than this long before the server's now.
    pub older_than_ms: Option<u64>,
    /// Delete the oldest dead jobs while the set holds more than this many.
    pub max_len: Option<u64>,
}

impl Client {
    /// Every queue of the deployment, sorted: the names found by `SCAN` over
    /// the key grammar (any set, `meta` or counter key; an empty queue that
    /// only has a `meta` key counts). Job rows are skipped server-side.
    pub async fn queues(&self) -> Result<Vec<String>> {
        let mut found = BTreeSet::new();
        // `[^j]` leaves out `job:` rows; ids and queue names hold no `}`.
        // On a cluster every master is walked (14.6).
        let keys = self
            .transport
            .scan_keys("emq:{*}:[^j]*", SCAN_COUNT)
            .await?;
        for key in keys {
            match keys::classify_bytes(&key) {
                KeyClass::Queue { queue, .. } | KeyClass::Metric { queue, .. } => {
                    found.insert(queue);
                }
                _ => {}
            }
        }
        Ok(found.into_iter().collect())
    }

    /// A job's whole row and the sets holding its id, in one round trip;
    /// `None` when neither a row nor a set member exists.
    pub async fn inspect(&self, queue: &str, id: &str) -> Result<Option<JobView>> {
        let keys = QueueKeys::new(queue)?;
        let id = BrandedId::parse(id)?;
        let sets = [
            (BrowseSet::Pending, &keys.pending),
            (BrowseSet::Active, &keys.active),
            (BrowseSet::Schedule, &keys.schedule),
            (BrowseSet::Dead, &keys.dead),
        ];
        let mut pipe = redis::pipe();
        pipe.cmd("HGETALL").arg(keys.job(&id));
        for (_, key) in &sets {
            pipe.cmd("ZSCORE").arg(*key).arg(id.as_str());
        }
        let mut answers = self.transport.pipeline(&pipe).await?.into_iter();
        let row: BTreeMap<String, Vec<u8>> =
            redis::from_redis_value(answers.next().unwrap_or(Value::Nil))?;
        let mut held = Vec::new();
        for ((set, _), score) in sets.iter().zip(answers) {
            if let Some(score) = redis::from_redis_value::<Option<f64>>(score)? {
                held.push((*set, score));
            }
        }
        if row.is_empty() && held.is_empty() {
            return Ok(None);
        }
        Ok(Some(JobView {
            id,
            row,
            sets: held,
        }))
    }

    /// Delete up to `limit` (all when `None`) waiting jobs, oldest first:
    /// pending, then — with `include_scheduled` — scheduled. Active jobs
    /// survive. Answers how many jobs were deleted (rows and logs).
    pub async fn drain(
        &self,
        queue: &str,
        include_scheduled: bool,
        limit: Option<u64>,
    ) -> Result<u64> {
        let keys = QueueKeys::new(queue)?;
        let mut left = checked_limit(limit)?;
        let mut deleted = 0;
        // At 2.2.0 prioritized jobs wait in prio: drained first, in the
        // order a claim takes them (drain_cascade walks any waiting set).
        let mut sets = Vec::new();
        if self.speaks_priority() {
            sets.push((&keys.prio, "pending"));
        }
        sets.push((&keys.pending, "pending"));
        if include_scheduled {
            sets.push((&keys.schedule, "scheduled"));
        }
        // At 2.1.0 the jobs' dedup keys go with their rows.
        let script = if self.wire_version() >= WireVersion::V2_1_0 {
            &scripts::DRAIN_CASCADE
        } else {
            &scripts::DRAIN
        };
        for (set, state) in sets {
            deleted += self
                .batched(script, &[set], &keys, &[state.as_bytes()], &mut left)
                .await?;
        }
        Ok(deleted)
    }

    /// Delete up to `limit` (all when `None`) dead jobs — rows and logs —
    /// oldest first by id mint time; with `older_than_ms`, only those minted
    /// longer ago than that before the server's now. Answers how many.
    pub async fn purge_dead(
        &self,
        queue: &str,
        older_than_ms: Option<u64>,
        limit: Option<u64>,
    ) -> Result<u64> {
        // Without an age, every dead job qualifies: keep none.
        let bound = DeadBound {
            older_than_ms,
            max_len: older_than_ms.is_none().then_some(0),
        };
        self.trim_dead(queue, bound, limit).await
    }

    /// The dead-set retention the worker's and `emq pump`'s options apply:
    /// delete the oldest dead jobs that are too old or beyond the length
    /// kept. With neither bound set it deletes nothing.
    pub async fn trim_dead(
        &self,
        queue: &str,
        bound: DeadBound,
        limit: Option<u64>,
    ) -> Result<u64> {
        let keys = QueueKeys::new(queue)?;
        let mut left = checked_limit(limit)?;
        if bound.older_than_ms.is_none() && bound.max_len.is_none() {
            return Ok(0);
        }
        let lex = match bound.older_than_ms {
            Some(age) => format!(
                "({}",
                id::lex_bound(self.server_now_ms().await?.saturating_sub(age))
            ),
            None => "-".to_string(),
        };
        let keep = bound.max_len.map_or("-1".to_string(), |n| n.to_string());
        let script = if self.wire_version() >= WireVersion::V2_1_0 {
            &scripts::PURGE_DEAD_CASCADE
        } else {
            &scripts::PURGE_DEAD
        };
        self.batched(
            script,
            &[&keys.dead],
            &keys,
            &[lex.as_bytes(), keep.as_bytes()],
            &mut left,
        )
        .await
    }

    /// Return up to `limit` (all when `None`) dead jobs to pending, oldest
    /// first, each as [`Client::requeue_dead`] does. Answers how many moved.
    pub async fn requeue_all_dead(&self, queue: &str, limit: Option<u64>) -> Result<u64> {
        let keys = QueueKeys::new(queue)?;
        let mut left = checked_limit(limit)?;
        let mut k = vec![&keys.dead, &keys.pending];
        let script = if self.speaks_priority() {
            k.push(&keys.prio);
            &scripts::REQUEUE_FRESH_MANY_ROUTED
        } else if self.wire_version() >= crate::WireVersion::V2_1_0 {
            &scripts::REQUEUE_FRESH_MANY
        } else {
            &scripts::REQUEUE_DEAD_MANY
        };
        let moved = self.batched(script, &k, &keys, &[], &mut left).await?;
        if moved > 0 {
            self.send_wake_hint(&keys).await;
        }
        Ok(moved)
    }

    /// The server's clock (`TIME`) in unix milliseconds.
    pub async fn server_now_ms(&self) -> Result<u64> {
        let (secs, micros): (u64, u64) = self.transport.query(&redis::cmd("TIME")).await?;
        Ok(secs * 1000 + micros / 1000)
    }

    /// Call a bulk script (`ARGV` = queue base, batch size, `rest`) until
    /// `left` is spent or a call takes fewer members than asked (the set is
    /// exhausted). Each call answers `{members taken, jobs changed}`; the
    /// changes are summed.
    async fn batched(
        &self,
        script: &Script,
        set_keys: &[&String],
        keys: &QueueKeys,
        rest: &[&[u8]],
        left: &mut u64,
    ) -> Result<u64> {
        let set_keys: Vec<&str> = set_keys.iter().map(|k| k.as_str()).collect();
        let mut changed = 0;
        while *left > 0 {
            let batch = (*left).min(BATCH);
            let batch_text = batch.to_string();
            let mut args: Vec<&[u8]> = vec![keys.base.as_bytes(), batch_text.as_bytes()];
            args.extend_from_slice(rest);
            let answer = self.transport.script(script, &set_keys, &args).await?;
            let (taken, n): (u64, u64) = redis::from_redis_value(answer)?;
            changed += n;
            *left -= taken.min(*left);
            if taken < batch {
                break;
            }
        }
        Ok(changed)
    }
}

/// `None` means no limit; `Some(0)` is refused like every other zero limit.
fn checked_limit(limit: Option<u64>) -> Result<u64> {
    match limit {
        Some(n) => {
            check_positive("limit", n)?;
            Ok(n)
        }
        None => Ok(u64::MAX),
    }
}
