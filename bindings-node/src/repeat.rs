//! Repeatable jobs (wire 2.1.0) on the native client: `upsertRepeat`,
//! `removeRepeat`, `listRepeats`, `fireRepeats`. Every check (exactly one of
//! everyMs / cron, the pattern, the zone, the name) is the core's.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use echomq::{Repeat, RepeatOptions};

use crate::client::NativeClient;
use crate::convert::{num, payload, promise, uint, uint_or};

/// `upsertRepeat` options, camelCase; exactly one of `everyMs` and `cron`.
#[napi(object)]
pub struct RepeatOptionsJs {
    pub every_ms: Option<f64>,
    pub cron: Option<String>,
    pub tz: Option<String>,
    pub start_at: Option<f64>,
    pub end_at: Option<f64>,
    pub limit: Option<f64>,
}

/// A repeatable job as stored.
#[napi(object)]
pub struct RepeatJs {
    pub name: String,
    pub every_ms: Option<f64>,
    pub cron: Option<String>,
    pub tz: Option<String>,
    pub payload: Buffer,
    pub next_run_ms: f64,
    pub start_at: Option<f64>,
    pub end_at: Option<f64>,
    pub limit: Option<f64>,
    pub count: f64,
    pub last_run_ms: Option<f64>,
    pub last_id: Option<String>,
}

impl From<Repeat> for RepeatJs {
    fn from(r: Repeat) -> Self {
        RepeatJs {
            name: r.name,
            every_ms: r.every_ms.map(num),
            cron: r.cron,
            tz: r.tz,
            payload: r.payload.into(),
            next_run_ms: num(r.next_run_ms),
            start_at: r.start_at.map(num),
            end_at: r.end_at.map(num),
            limit: r.limit.map(num),
            count: num(r.count),
            last_run_ms: r.last_run_ms.map(num),
            last_id: r.last_id.map(|id| id.to_string()),
        }
    }
}

fn opt(env: &Env, name: &str, value: Option<f64>) -> Result<Option<u64>> {
    value.map(|v| uint(env, name, v)).transpose()
}

#[napi]
impl NativeClient {
    #[napi]
    pub fn upsert_repeat<'env>(
        &self,
        env: &'env Env,
        queue: String,
        name: String,
        #[napi(ts_arg_type = "Buffer | Uint8Array | string")] payload_value: Unknown<'_>,
        options: RepeatOptionsJs,
    ) -> Result<PromiseRaw<'env, RepeatJs>> {
        let (c, p) = (self.inner.clone(), payload(env, payload_value)?);
        let options = RepeatOptions {
            every_ms: opt(env, "everyMs", options.every_ms)?,
            cron: options.cron,
            tz: options.tz,
            start_at: opt(env, "startAt", options.start_at)?,
            end_at: opt(env, "endAt", options.end_at)?,
            limit: opt(env, "limit", options.limit)?,
        };
        promise(
            env,
            async move { c.upsert_repeat(&queue, &name, p, &options).await },
            |_, r| Ok(RepeatJs::from(r)),
        )
    }

    /// Take a repeat off the schedule and delete it; `false` when there was none.
    #[napi]
    pub fn remove_repeat<'env>(
        &self,
        env: &'env Env,
        queue: String,
        name: String,
    ) -> Result<PromiseRaw<'env, bool>> {
        let c = self.inner.clone();
        promise(
            env,
            async move { c.remove_repeat(&queue, &name).await },
            |_, removed| Ok(removed),
        )
    }

    #[napi]
    pub fn list_repeats<'env>(
        &self,
        env: &'env Env,
        queue: String,
    ) -> Result<PromiseRaw<'env, Vec<RepeatJs>>> {
        let c = self.inner.clone();
        promise(
            env,
            async move { c.list_repeats(&queue).await },
            |_, all| Ok(all.into_iter().map(RepeatJs::from).collect::<Vec<_>>()),
        )
    }

    /// The repeat pump: fire due repeats (one job per slot); how many jobs. `limit` default 1000.
    #[napi]
    pub fn fire_repeats<'env>(
        &self,
        env: &'env Env,
        queue: String,
        limit: Option<f64>,
    ) -> Result<PromiseRaw<'env, f64>> {
        let c = self.inner.clone();
        let limit = uint_or(env, "limit", limit, echomq::defaults::PUMP_LIMIT)?;
        promise(
            env,
            async move { c.fire_repeats(&queue, limit).await },
            |_, n| Ok(num(n)),
        )
    }
}
