//! Global concurrency and rate limits (echomq:2.1.0), enforced inside the
//! claim script (`claim_guarded`), not advised before it: the reference's
//! check-then-claim overshoots under concurrency. The layout is the
//! reference's: `meta.concurrency`, `meta.max` (+ our `meta.duration`, the
//! window in ms) and the counter `emq:{q}:limiter` with a PTTL.

use crate::client::{check_positive, Client};
use crate::error::Result;
use crate::id::BrandedId;
use crate::keys::QueueKeys;
use crate::replies;
use crate::scripts;
use crate::transport::{did_not_run, evalsha};
use crate::types::Job;
use crate::wire::WireVersion;

/// The keys and args of one guarded claim.
struct GuardedCall {
    /// `claim_guarded`'s seven keys, and `prio` last at wire 2.2.0.
    keys: Vec<String>,
    args: [Vec<u8>; 4],
    script: &'static scripts::Script,
}

impl GuardedCall {
    fn keys(&self) -> Vec<&str> {
        self.keys.iter().map(String::as_str).collect()
    }

    fn args(&self) -> Vec<&[u8]> {
        self.args.iter().map(Vec::as_slice).collect()
    }
}

impl Client {
    /// The claim of wire 2.1.0: `claim_many` behind the queue's concurrency
    /// ceiling and rate limit (a refused claim is [`crate::ErrorKind::RateLimited`]
    /// carrying the wait), and with `max_attempts` > 0 the attempts cap: a
    /// popped job whose attempts already reached it is dead-lettered
    /// (`last_error` = `max attempts exceeded`) instead of handed out.
    pub(crate) async fn claim_guarded(
        &self,
        queue: &str,
        max: u64,
        lease_ms: u64,
        max_attempts: u64,
    ) -> Result<Vec<Job>> {
        let (keys, call) = self.guarded_call(queue, max, lease_ms, max_attempts)?;
        let answer = self
            .transport
            .script(call.script, &call.keys(), &call.args())
            .await?;
        self.claimed_from(&keys, answer)
    }

    /// The guarded claim as one `EVALSHA`, for an idle worker to queue behind
    /// its `BLPOP` on the wake list (docs/PROTOCOL-DECISIONS.md 16.9): the
    /// server runs it the moment the `BLPOP` answers. Take its answer with
    /// [`Client::claim_guarded_answer`].
    pub(crate) fn claim_guarded_cmd(
        &self,
        queue: &str,
        max: u64,
        lease_ms: u64,
        max_attempts: u64,
    ) -> Result<redis::Cmd> {
        let (_, call) = self.guarded_call(queue, max, lease_ms, max_attempts)?;
        Ok(evalsha(call.script, &call.keys(), &call.args()))
    }

    /// The jobs of a claim from [`Client::claim_guarded_cmd`]. One the server
    /// did not run (NOSCRIPT after a script flush, MOVED after a failover)
    /// is sent again as [`Client::claim_guarded`].
    pub(crate) async fn claim_guarded_answer(
        &self,
        queue: &str,
        answer: redis::RedisResult<redis::Value>,
        max: u64,
        lease_ms: u64,
        max_attempts: u64,
    ) -> Result<Vec<Job>> {
        match answer {
            Err(e) if did_not_run(&e) => {
                self.claim_guarded(queue, max, lease_ms, max_attempts).await
            }
            Err(e) => Err(e.into()),
            Ok(answer) => self.claimed_from(&QueueKeys::new(queue)?, answer),
        }
    }

    /// Check a guarded claim's arguments and lay out its keys and args.
    fn guarded_call(
        &self,
        queue: &str,
        max: u64,
        lease_ms: u64,
        max_attempts: u64,
    ) -> Result<(QueueKeys, GuardedCall)> {
        self.require(WireVersion::V2_1_0, "the guarded claim")?;
        let keys = QueueKeys::new(queue)?;
        check_positive("lease_ms", lease_ms)?;
        check_positive("max", max)?;
        let mut call_keys = vec![
            keys.pending.clone(),
            keys.active.clone(),
            keys.meta.clone(),
            keys.dead.clone(),
            keys.failed.clone(),
            keys.limiter.clone(),
            keys.wake.clone(),
        ];
        // At 2.2.0 the claim serves prio (highest priority first) before
        // pending; a queue without prioritized jobs is claimed as at 2.1.0.
        if self.speaks_priority() {
            call_keys.push(keys.prio.clone());
        }
        let call = GuardedCall {
            keys: call_keys,
            script: self.routed(&scripts::CLAIM_GUARDED, &scripts::CLAIM_PRIORITY),
            args: [
                keys.base.clone().into_bytes(),
                lease_ms.to_string().into_bytes(),
                max.to_string().into_bytes(),
                max_attempts.to_string().into_bytes(),
            ],
        };
        Ok((keys, call))
    }

    /// The jobs in a guarded claim's reply, published `active`.
    fn claimed_from(&self, keys: &QueueKeys, answer: redis::Value) -> Result<Vec<Job>> {
        let jobs = replies::claimed(answer)?;
        // Jobs this claim dead-lettered at the attempts cap are not in the
        // answer (it keeps `claim`'s shape), so they publish no `dead`.
        self.publish_active(keys, &jobs);
        Ok(jobs)
    }

    /// The worker's claim: `claim_many`, plus at wire 2.1.0 the attempts cap
    /// (`max_attempts`). Not in the bindings: it is the worker's own verb.
    #[doc(hidden)]
    pub async fn claim_capped(
        &self,
        queue: &str,
        max: u64,
        lease_ms: u64,
        max_attempts: u64,
    ) -> Result<Vec<Job>> {
        self.require(WireVersion::V2_1_0, "claim_capped")?;
        check_positive("max_attempts", max_attempts)?;
        self.claim_guarded(queue, max, lease_ms, max_attempts).await
    }

    /// At most `n` jobs of the queue in `active` at once, across every worker
    /// (prefetched jobs count: they are leased). `0` removes the ceiling.
    pub async fn set_concurrency(&self, queue: &str, n: u64) -> Result<()> {
        self.require(WireVersion::V2_1_0, "set_concurrency")?;
        let keys = QueueKeys::new(queue)?;
        let cmd = if n == 0 {
            let mut c = redis::cmd("HDEL");
            c.arg(&keys.meta).arg("concurrency");
            c
        } else {
            let mut c = redis::cmd("HSET");
            c.arg(&keys.meta).arg("concurrency").arg(n);
            c
        };
        let _: i64 = self.transport.query(&cmd).await?;
        Ok(())
    }

    /// At most `max` claims per `per_ms` window on the queue (a fixed window
    /// that starts at its first claim). `max` 0 removes the limit.
    pub async fn set_rate_limit(&self, queue: &str, max: u64, per_ms: u64) -> Result<()> {
        self.require(WireVersion::V2_1_0, "set_rate_limit")?;
        let keys = QueueKeys::new(queue)?;
        let cmd = if max == 0 {
            let mut c = redis::cmd("HDEL");
            c.arg(&keys.meta).arg("max").arg("duration");
            c
        } else {
            check_positive("per_ms", per_ms)?;
            let mut c = redis::cmd("HSET");
            c.arg(&keys.meta)
                .arg("max")
                .arg(max)
                .arg("duration")
                .arg(per_ms);
            c
        };
        let _: i64 = self.transport.query(&cmd).await?;
        Ok(())
    }

    /// A handler's "rate limited for a while" (say after an HTTP 429): claims
    /// on the queue pause for `ms`, and the held job waits the pause out in
    /// schedule without counting an attempt. Token-fenced; afterwards the
    /// holder must not settle the job (a worker's late settlement is refused
    /// as stale and logged).
    pub async fn rate_limit(&self, queue: &str, id: &str, token: u64, ms: u64) -> Result<()> {
        self.require(WireVersion::V2_1_0, "rate_limit")?;
        let keys = QueueKeys::new(queue)?;
        let id = BrandedId::parse(id)?;
        check_positive("ms", ms)?;
        let row = keys.job(&id);
        let answer = self
            .transport
            .script(
                &scripts::RATE_LIMIT,
                &[&keys.active, &row, &keys.schedule, &keys.meta],
                &[
                    id.as_str().as_bytes(),
                    token.to_string().as_bytes(),
                    ms.to_string().as_bytes(),
                ],
            )
            .await
            .map_err(|e| e.about(&id))?;
        replies::rate_limited(answer)
    }
}
