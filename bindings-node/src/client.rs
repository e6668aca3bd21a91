//! The client: `connect` and every verb of docs/API.md, each returning a Promise.

use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use echomq::{BrowseSet, Client, ConnectOptions, Counts, Enqueued, Job, JobInfo, TimeRange};

use crate::convert::{num, promise, uint, uint_or};
use crate::error::to_js;

/// Connect options, camelCase (all optional).
#[napi(object)]
pub struct ConnectOptionsJs {
    pub node_id: Option<f64>,
    pub client_name: Option<String>,
    pub connect_timeout_ms: Option<f64>,
    pub response_timeout_ms: Option<f64>,
    pub max_payload: Option<f64>,
    pub strict_bundle: Option<bool>,
    /// Publish queue events on `emq:{q}:events` (default true).
    pub publish_events: Option<bool>,
    /// `echomq:2.1.0` (default) or `echomq:2.0.0`.
    pub wire_version: Option<String>,
    pub wait_replicas: Option<f64>,
    pub wait_timeout_ms: Option<f64>,
}

#[napi(object)]
pub struct EnqueuedJs {
    pub id: String,
    pub duplicate: bool,
}

impl From<Enqueued> for EnqueuedJs {
    fn from(e: Enqueued) -> Self {
        EnqueuedJs {
            id: e.id.to_string(),
            duplicate: e.duplicate,
        }
    }
}

// `Job`, `Counts`, `BundleMismatch` (and `Reaped`): the answers of plain
// verbs, declared in native.d.ts under the names index.d.ts re-exports.

/// A claimed job.
#[napi(object, js_name = "Job")]
pub struct JobJs {
    pub id: String,
    pub payload: Buffer,
    /// The fencing token: pass it back to settle.
    pub token: f64,
    /// Which attempt this claim is (1 on the first claim).
    pub attempts: f64,
}

impl From<Job> for JobJs {
    fn from(j: Job) -> Self {
        JobJs {
            id: j.id.to_string(),
            payload: j.payload.into(),
            token: num(j.token),
            attempts: num(j.attempts),
        }
    }
}

/// `retry`'s options: `{delayMs?, maxAttempts?, error?}` (core defaults).
#[napi(object)]
pub struct RetryOptionsJs {
    pub delay_ms: Option<f64>,
    pub max_attempts: Option<f64>,
    pub error: Option<String>,
}

/// `{id, token}`: what `completeMany` / `extendMany` take (a claimed job fits).
#[napi(object)]
pub struct JobRef {
    pub id: String,
    pub token: f64,
}

/// A queue's job counts by state, and its totals.
#[napi(object, js_name = "Counts")]
pub struct CountsJs {
    pub pending: f64,
    pub active: f64,
    pub scheduled: f64,
    pub dead: f64,
    /// Jobs completed since the queue began.
    pub completed: f64,
    /// Jobs dead-lettered since the queue began.
    pub failed: f64,
}

impl From<Counts> for CountsJs {
    fn from(c: Counts) -> Self {
        CountsJs {
            pending: num(c.pending),
            active: num(c.active),
            scheduled: num(c.scheduled),
            dead: num(c.dead),
            completed: num(c.completed),
            failed: num(c.failed),
        }
    }
}

#[napi(object)]
pub struct JobInfoJs {
    pub id: String,
    /// `pending`, `active`, `scheduled`, `dead`, or `unknown` (another
    /// runtime's state; the word is `rawState`).
    pub state: String,
    pub raw_state: String,
    pub attempts: f64,
    pub payload: Buffer,
    pub last_error: Option<String>,
    /// The last progress written (2.1.0), as JSON text (`index.js` parses it).
    pub progress: Option<String>,
}

impl From<JobInfo> for JobInfoJs {
    fn from(j: JobInfo) -> Self {
        JobInfoJs {
            id: j.id.to_string(),
            state: j.state.as_str().to_string(),
            raw_state: j.state.raw().to_string(),
            attempts: num(j.attempts),
            payload: j.payload.into(),
            last_error: j.last_error,
            progress: j.progress,
        }
    }
}

/// `[fromMs, toMs)` for `browse`.
#[napi(object)]
pub struct TimeRangeJs {
    pub from_ms: f64,
    pub to_ms: f64,
}

/// A field of the script bundle where this client and the server differ.
#[napi(object, js_name = "BundleMismatch")]
pub struct BundleMismatchJs {
    pub field: String,
    pub ours: String,
    pub theirs: String,
}

fn connect_options(env: &Env, o: Option<ConnectOptionsJs>) -> Result<ConnectOptions> {
    let mut out = ConnectOptions::default();
    let Some(o) = o else { return Ok(out) };
    if let Some(n) = o.node_id {
        out.node_id = Some(crate::helpers::check_node_id(env, n)?);
    }
    out.client_name = o.client_name;
    if let Some(ms) = o.connect_timeout_ms {
        out.connect_timeout = Duration::from_millis(uint(env, "connectTimeoutMs", ms)?);
    }
    if let Some(ms) = o.response_timeout_ms {
        out.response_timeout =
            echomq::defaults::timeout_from_ms(uint(env, "responseTimeoutMs", ms)?);
    }
    if let Some(n) = o.max_payload {
        out.max_payload = uint(env, "maxPayload", n)? as usize;
    }
    if let Some(strict) = o.strict_bundle {
        out.strict_bundle = strict;
    }
    if let Some(publish) = o.publish_events {
        out.publish_events = publish;
    }
    if let Some(v) = o.wire_version {
        out.wire_version = echomq::WireVersion::parse(&v).map_err(|e| to_js(env, &e))?;
    }
    if let Some(n) = o.wait_replicas {
        out.wait_replicas = u32::try_from(uint(env, "waitReplicas", n)?)
            .map_err(|_| crate::error::invalid_argument(env, "waitReplicas is too large"))?;
    }
    if let Some(ms) = o.wait_timeout_ms {
        out.wait_timeout_ms = uint(env, "waitTimeoutMs", ms)?;
    }
    Ok(out)
}

/// `connect(url, options)` → a Promise of a connected, fenced client. No
/// URL: `EMQ_URL`, else `redis://127.0.0.1:6379/` (the core's rule).
#[napi]
pub fn connect<'env>(
    env: &'env Env,
    url: Option<String>,
    options: Option<ConnectOptionsJs>,
) -> Result<PromiseRaw<'env, NativeClient>> {
    let options = connect_options(env, options)?;
    let url = url.unwrap_or_else(echomq::defaults::url);
    promise(
        env,
        async move { Client::connect(&url, options).await },
        |_, inner| Ok(NativeClient { inner }),
    )
}

/// The native client; `index.js` wraps it as `Client`.
#[napi]
pub struct NativeClient {
    pub(crate) inner: Client,
}

fn refs(env: &Env, jobs: Vec<JobRef>) -> Result<Vec<(String, u64)>> {
    jobs.into_iter()
        .map(|j| Ok((j.id, uint(env, "token", j.token)?)))
        .collect()
}

fn as_refs(jobs: &[(String, u64)]) -> Vec<(&str, u64)> {
    jobs.iter().map(|(id, t)| (id.as_str(), *t)).collect()
}

/// One verdict per input: `null` for success, else the coded error object.
fn verdicts(env: &Env, all: Vec<echomq::Result<()>>) -> Vec<Option<Error>> {
    all.into_iter()
        .map(|v| v.err().map(|e| to_js(env, &e)))
        .collect()
}

#[napi]
impl NativeClient {
    #[napi]
    pub fn node_id(&self) -> u32 {
        self.inner.node_id() as u32
    }

    #[napi]
    pub fn claim<'env>(
        &self,
        env: &'env Env,
        queue: String,
        lease_ms: f64,
    ) -> Result<PromiseRaw<'env, Option<JobJs>>> {
        let c = self.inner.clone();
        let lease = uint(env, "leaseMs", lease_ms)?;
        promise(env, async move { c.claim(&queue, lease).await }, |_, j| {
            Ok(j.map(JobJs::from))
        })
    }

    #[napi]
    pub fn claim_many<'env>(
        &self,
        env: &'env Env,
        queue: String,
        max: f64,
        lease_ms: f64,
    ) -> Result<PromiseRaw<'env, Vec<JobJs>>> {
        let c = self.inner.clone();
        let (max, lease) = (uint(env, "max", max)?, uint(env, "leaseMs", lease_ms)?);
        promise(
            env,
            async move { c.claim_many(&queue, max, lease).await },
            |_, jobs| Ok(jobs.into_iter().map(JobJs::from).collect::<Vec<_>>()),
        )
    }

    #[napi]
    pub fn complete<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
        token: f64,
    ) -> Result<PromiseRaw<'env, ()>> {
        let c = self.inner.clone();
        let token = uint(env, "token", token)?;
        promise(
            env,
            async move { c.complete(&queue, &id, token).await },
            |_, ()| Ok(()),
        )
    }

    #[napi]
    pub fn complete_many<'env>(
        &self,
        env: &'env Env,
        queue: String,
        jobs: Vec<JobRef>,
    ) -> Result<PromiseRaw<'env, Vec<Option<Error>>>> {
        let c = self.inner.clone();
        let jobs = refs(env, jobs)?;
        promise(
            env,
            async move { c.complete_many(&queue, &as_refs(&jobs)).await },
            |env, all| Ok(verdicts(env, all)),
        )
    }

    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn retry<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
        token: f64,
        delay_ms: f64,
        max_attempts: f64,
        error: String,
    ) -> Result<PromiseRaw<'env, &'static str>> {
        let c = self.inner.clone();
        let token = uint(env, "token", token)?;
        let delay = uint(env, "delayMs", delay_ms)?;
        let max = uint(env, "maxAttempts", max_attempts)?;
        promise(
            env,
            async move { c.retry(&queue, &id, token, delay, max, &error).await },
            |_, outcome| Ok(outcome.as_str()),
        )
    }

    /// `retry(queue, id, token, {delayMs, maxAttempts, error})`.
    #[napi]
    pub fn retry_with<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
        token: f64,
        options: Option<RetryOptionsJs>,
    ) -> Result<PromiseRaw<'env, &'static str>> {
        let c = self.inner.clone();
        let token = uint(env, "token", token)?;
        let d = echomq::RetryOptions::default();
        let options = match options {
            None => d,
            Some(o) => echomq::RetryOptions {
                delay_ms: uint_or(env, "delayMs", o.delay_ms, d.delay_ms)?,
                max_attempts: uint_or(env, "maxAttempts", o.max_attempts, d.max_attempts)?,
                error: o.error.unwrap_or(d.error),
            },
        };
        promise(
            env,
            async move { c.retry_with(&queue, &id, token, &options).await },
            |_, outcome| Ok(outcome.as_str()),
        )
    }

    #[napi]
    pub fn extend<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
        token: f64,
        lease_ms: f64,
    ) -> Result<PromiseRaw<'env, ()>> {
        let c = self.inner.clone();
        let (token, lease) = (uint(env, "token", token)?, uint(env, "leaseMs", lease_ms)?);
        promise(
            env,
            async move { c.extend(&queue, &id, token, lease).await },
            |_, ()| Ok(()),
        )
    }

    #[napi]
    pub fn extend_many<'env>(
        &self,
        env: &'env Env,
        queue: String,
        jobs: Vec<JobRef>,
        lease_ms: f64,
    ) -> Result<PromiseRaw<'env, Vec<Option<Error>>>> {
        let c = self.inner.clone();
        let jobs = refs(env, jobs)?;
        let lease = uint(env, "leaseMs", lease_ms)?;
        promise(
            env,
            async move { c.extend_many(&queue, &as_refs(&jobs), lease).await },
            |env, all| Ok(verdicts(env, all)),
        )
    }

    /// Due scheduled jobs → pending; how many moved. `limit` default 1000.
    #[napi]
    pub fn promote<'env>(
        &self,
        env: &'env Env,
        queue: String,
        limit: Option<f64>,
    ) -> Result<PromiseRaw<'env, f64>> {
        let c = self.inner.clone();
        let limit = uint_or(env, "limit", limit, echomq::defaults::PUMP_LIMIT)?;
        promise(
            env,
            async move { c.promote(&queue, limit).await },
            |_, n| Ok(num(n)),
        )
    }

    /// Lapsed leases → pending; how many moved. `limit` default 1000.
    #[napi]
    pub fn reap<'env>(
        &self,
        env: &'env Env,
        queue: String,
        limit: Option<f64>,
    ) -> Result<PromiseRaw<'env, f64>> {
        let c = self.inner.clone();
        let limit = uint_or(env, "limit", limit, echomq::defaults::PUMP_LIMIT)?;
        promise(env, async move { c.reap(&queue, limit).await }, |_, n| {
            Ok(num(n))
        })
    }

    #[napi]
    pub fn counts<'env>(
        &self,
        env: &'env Env,
        queue: String,
    ) -> Result<PromiseRaw<'env, CountsJs>> {
        let c = self.inner.clone();
        promise(env, async move { c.counts(&queue).await }, |_, n| {
            Ok(CountsJs::from(n))
        })
    }

    #[napi]
    pub fn job<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
    ) -> Result<PromiseRaw<'env, Option<JobInfoJs>>> {
        let c = self.inner.clone();
        promise(env, async move { c.job(&queue, &id).await }, |_, j| {
            Ok(j.map(JobInfoJs::from))
        })
    }

    #[napi]
    pub fn browse<'env>(
        &self,
        env: &'env Env,
        queue: String,
        set: String,
        newest_first: bool,
        limit: Option<f64>,
        range: Option<TimeRangeJs>,
    ) -> Result<PromiseRaw<'env, Vec<String>>> {
        let c = self.inner.clone();
        let set = BrowseSet::parse(&set).map_err(|e| to_js(env, &e))?;
        let limit = uint_or(env, "limit", limit, echomq::defaults::BROWSE_LIMIT)?;
        let range = match range {
            Some(r) => Some(TimeRange {
                from_ms: uint(env, "range.fromMs", r.from_ms)?,
                to_ms: uint(env, "range.toMs", r.to_ms)?,
            }),
            None => None,
        };
        promise(
            env,
            async move { c.browse(&queue, set, newest_first, limit, range).await },
            |_, ids| Ok(ids.iter().map(|i| i.to_string()).collect::<Vec<_>>()),
        )
    }

    #[napi]
    pub fn pause<'env>(&self, env: &'env Env, queue: String) -> Result<PromiseRaw<'env, ()>> {
        let c = self.inner.clone();
        promise(env, async move { c.pause(&queue).await }, |_, ()| Ok(()))
    }

    #[napi]
    pub fn resume<'env>(&self, env: &'env Env, queue: String) -> Result<PromiseRaw<'env, ()>> {
        let c = self.inner.clone();
        promise(env, async move { c.resume(&queue).await }, |_, ()| Ok(()))
    }

    /// Whether the job's row exists (in any state).
    #[napi]
    pub fn exists<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
    ) -> Result<PromiseRaw<'env, bool>> {
        let c = self.inner.clone();
        promise(env, async move { c.exists(&queue, &id).await }, |_, b| {
            Ok(b)
        })
    }

    #[napi]
    pub fn is_paused<'env>(&self, env: &'env Env, queue: String) -> Result<PromiseRaw<'env, bool>> {
        let c = self.inner.clone();
        promise(env, async move { c.is_paused(&queue).await }, |_, b| Ok(b))
    }

    #[napi]
    pub fn requeue_dead<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
    ) -> Result<PromiseRaw<'env, ()>> {
        let c = self.inner.clone();
        promise(
            env,
            async move { c.requeue_dead(&queue, &id).await },
            |_, ()| Ok(()),
        )
    }

    #[napi]
    pub fn remove<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
    ) -> Result<PromiseRaw<'env, ()>> {
        let c = self.inner.clone();
        promise(env, async move { c.remove(&queue, &id).await }, |_, ()| {
            Ok(())
        })
    }

    /// The script-bundle fields where this client and the server differ
    /// (recorded by the fence at connect). Rejects with `EMQ_CLOSED` once the
    /// client is closed.
    // Synchronous in the core and here; `index.js` forwards it as a Promise.
    #[napi]
    pub fn bundle_mismatches(&self, env: Env) -> Result<Vec<BundleMismatchJs>> {
        let found = self
            .inner
            .bundle_mismatches()
            .map_err(|e| to_js(&env, &e))?;
        Ok(found
            .into_iter()
            .map(|m| BundleMismatchJs {
                field: m.field,
                ours: m.ours,
                theirs: m.theirs,
            })
            .collect())
    }

    /// Later calls reject with `EMQ_CLOSED` at once; resolves once the queue events of calls
    /// that answered before it are published (at most 1 s, the core's `CLOSE_FLUSH`), keeping
    /// the process alive until then.
    #[napi]
    pub fn close<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let closed = self.inner.close_and_wait();
        promise(
            env,
            async move {
                closed.await;
                Ok(())
            },
            |_, ()| Ok(()),
        )
    }
}
