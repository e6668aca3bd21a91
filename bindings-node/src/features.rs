//! Job features of wire 2.1.0 on the native client: `reapStalled` (the stall
//! cap), and the queue limits (`setConcurrency`, `setRateLimit`, a handler's
//! `rateLimit`). A separate `#[napi] impl` block, so the
//! client file keeps only the 2.0.0 verbs.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use echomq::Reaped;

use crate::client::NativeClient;
use crate::convert::{promise, uint};

/// What one stall-capped reap did.
#[napi(object, js_name = "Reaped")]
pub struct ReapedJs {
    /// Ids returned to pending.
    pub recovered: Vec<String>,
    /// Ids dead-lettered with `lastError` `'stalled'`.
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
    /// Lapsed leases: back to pending, or dead (`stalled`) at `maxStalls` stalls.
    #[napi]
    pub fn reap_stalled<'env>(
        &self,
        env: &'env Env,
        queue: String,
        limit: f64,
        max_stalls: f64,
    ) -> Result<PromiseRaw<'env, ReapedJs>> {
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

    /// At most `n` jobs active across every worker (0 removes the ceiling).
    #[napi]
    pub fn set_concurrency<'env>(
        &self,
        env: &'env Env,
        queue: String,
        n: f64,
    ) -> Result<PromiseRaw<'env, ()>> {
        let (c, n) = (self.inner.clone(), uint(env, "n", n)?);
        promise(
            env,
            async move { c.set_concurrency(&queue, n).await },
            |_, ()| Ok(()),
        )
    }

    /// At most `max` claims per `perMs` window (0 removes the limit).
    #[napi]
    pub fn set_rate_limit<'env>(
        &self,
        env: &'env Env,
        queue: String,
        max: f64,
        per_ms: f64,
    ) -> Result<PromiseRaw<'env, ()>> {
        let c = self.inner.clone();
        let (max, per_ms) = (uint(env, "max", max)?, uint(env, "perMs", per_ms)?);
        promise(
            env,
            async move { c.set_rate_limit(&queue, max, per_ms).await },
            |_, ()| Ok(()),
        )
    }

    /// From a handler (say after HTTP 429): park the job, pause claims for `ms`.
    #[napi]
    pub fn rate_limit<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
        token: f64,
        ms: f64,
    ) -> Result<PromiseRaw<'env, ()>> {
        let c = self.inner.clone();
        let (token, ms) = (uint(env, "token", token)?, uint(env, "ms", ms)?);
        promise(
            env,
            async move { c.rate_limit(&queue, &id, token, ms).await },
            |_, ()| Ok(()),
        )
    }
}
