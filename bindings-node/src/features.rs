//! Job features of wire 2.1.0 on the native client: `enqueue` with a dedup id,
//! `reapStalled` (the stall cap), and the queue limits (`setConcurrency`,
//! `setRateLimit`, a handler's `rateLimit`). A separate `#[napi] impl` block, so the
//! client file keeps only the 2.0.0 verbs.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use echomq::{EnqueueOptions, Reaped};

use crate::client::{EnqueuedJs, NativeClient};
use crate::convert::{payload, promise, promise_direct, uint};

/// `enqueue` options, camelCase (all optional): `{id, runAtMs, delayMs}`
/// (2.0.0) or `{dedupId, dedupTtlMs}` (2.1.0).
#[napi(object)]
pub struct EnqueueOptionsJs {
    /// A caller-chosen id: an existing row answers `duplicate: true`.
    pub id: Option<String>,
    /// Run at this unix-ms instant.
    pub run_at_ms: Option<f64>,
    /// Run this many ms after the server's now (not with `runAtMs`).
    pub delay_ms: Option<f64>,
    /// At most one live job per dedup id: a second enqueue answers
    /// `duplicate` with the first job's id. `[A-Za-z0-9._-]{1,255}`.
    pub dedup_id: Option<String>,
    /// Release the dedup id after this long even if its job still lives.
    pub dedup_ttl_ms: Option<f64>,
}

/// What one stall-capped reap did.
#[napi(object)]
pub struct ReapedJs {
    /// Ids returned to pending.
    pub recovered: Vec<String>,
    /// Ids dead-lettered with `lastError` `stalled`.
    pub dead: Vec<String>,
}

impl From<Reaped> for ReapedJs {
    fn from(r: Reaped) -> Self {
        let text = |ids: Vec<echomq::BrandedId>| ids.iter().map(|i| i.to_string()).collect();
        ReapedJs {
            recovered: text(r.recovered),
            dead: text(r.dead),
        }
    }
}

#[napi]
impl NativeClient {
    #[napi]
    pub fn enqueue_with<'env>(
        &self,
        env: &'env Env,
        queue: String,
        payload_value: Unknown<'_>,
        options: EnqueueOptionsJs,
    ) -> Result<Object<'env>> {
        let p = payload(env, payload_value)?;
        let ms = |name: &str, v: Option<f64>| v.map(|ms| uint(env, name, ms)).transpose();
        let options = EnqueueOptions {
            id: options.id,
            run_at_ms: ms("runAtMs", options.run_at_ms)?,
            delay_ms: ms("delayMs", options.delay_ms)?,
            dedup_id: options.dedup_id,
            dedup_ttl_ms: ms("dedupTtlMs", options.dedup_ttl_ms)?,
        };
        promise_direct(
            env,
            &self.inner,
            move |c| async move { c.enqueue_with(&queue, p, &options).await },
            |_, e| Ok(EnqueuedJs::from(e)),
        )
    }

    #[napi]
    pub fn reap_stalled<'env>(
        &self,
        env: &'env Env,
        queue: String,
        limit: f64,
        max_stalls: f64,
    ) -> Result<Object<'env>> {
        let c = self.inner.clone();
        let (limit, max_stalls) = (
            uint(env, "limit", limit)?,
            uint(env, "maxStalls", max_stalls)?,
        );
        promise(
            env,
            async move { c.reap_stalled(&queue, limit, max_stalls).await },
            |_, r| Ok(ReapedJs::from(r)),
        )
    }

    #[napi]
    pub fn set_concurrency<'env>(
        &self,
        env: &'env Env,
        queue: String,
        n: f64,
    ) -> Result<Object<'env>> {
        let (c, n) = (self.inner.clone(), uint(env, "n", n)?);
        promise(
            env,
            async move { c.set_concurrency(&queue, n).await },
            |_, ()| Ok(()),
        )
    }

    #[napi]
    pub fn set_rate_limit<'env>(
        &self,
        env: &'env Env,
        queue: String,
        max: f64,
        per_ms: f64,
    ) -> Result<Object<'env>> {
        let c = self.inner.clone();
        let (max, per_ms) = (uint(env, "max", max)?, uint(env, "perMs", per_ms)?);
        promise(
            env,
            async move { c.set_rate_limit(&queue, max, per_ms).await },
            |_, ()| Ok(()),
        )
    }

    #[napi]
    pub fn rate_limit<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
        token: f64,
        ms: f64,
    ) -> Result<Object<'env>> {
        let c = self.inner.clone();
        let (token, ms) = (uint(env, "token", token)?, uint(env, "ms", ms)?);
        promise(
            env,
            async move { c.rate_limit(&queue, &id, token, ms).await },
            |_, ()| Ok(()),
        )
    }
}
