//! Progress, logs and kept results (echomq:2.1.0). `index.js` turns a
//! progress value into its JSON text (and back, in `job()`); here the text,
//! lines and result bytes only cross over.

use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::client::NativeClient;
use crate::convert::{num, promise, uint};
use crate::error::invalid_argument;

/// A JS number that must be an integer (LRANGE indexes may be negative).
fn index(env: &Env, name: &str, value: f64) -> Result<i64> {
    if value.is_finite() && value.fract() == 0.0 && value.abs() <= 9_007_199_254_740_991.0 {
        Ok(value as i64)
    } else {
        Err(invalid_argument(
            env,
            format!("{name} must be an integer, got {value}"),
        ))
    }
}

#[napi]
impl NativeClient {
    /// The holder records job `id`'s progress: `progress` is JSON text.
    #[napi]
    pub fn update_progress<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
        token: f64,
        progress: String,
    ) -> Result<PromiseRaw<'env, ()>> {
        let token = uint(env, "token", token)?;
        let c = self.inner.clone();
        promise(
            env,
            async move { c.update_progress(&queue, &id, token, &progress).await },
            |_, ()| Ok(()),
        )
    }

    /// Append `line` to job `id`'s log, keeping the newest `maxLines` (default 1000); resolves to its length.
    #[napi]
    pub fn log<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
        line: String,
        max_lines: Option<f64>,
    ) -> Result<PromiseRaw<'env, f64>> {
        let max_lines = max_lines.map(|m| uint(env, "maxLines", m)).transpose()?;
        let c = self.inner.clone();
        promise(
            env,
            async move { c.log(&queue, &id, &line, max_lines).await },
            |_, n| Ok(num(n)),
        )
    }

    /// Lines `start..=end` of job `id`'s log (LRANGE indexes; default all).
    #[napi]
    pub fn logs<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
        start: Option<f64>,
        end: Option<f64>,
    ) -> Result<PromiseRaw<'env, Vec<String>>> {
        let start = index(env, "start", start.unwrap_or(0.0))?;
        let end = index(env, "end", end.unwrap_or(-1.0))?;
        let c = self.inner.clone();
        promise(
            env,
            async move { c.logs(&queue, &id, start, end).await },
            |_, lines| Ok(lines),
        )
    }

    /// The kept result of job `id` (a Buffer), or null.
    #[napi]
    pub fn result<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
    ) -> Result<PromiseRaw<'env, Option<Buffer>>> {
        let c = self.inner.clone();
        promise(
            env,
            async move { c.result(&queue, &id).await },
            |_, value| Ok(value.map(Buffer::from)),
        )
    }

    /// The kept result once job `id` completes; rejects `EMQ_JOB_DEAD` (`lastError`), `EMQ_GONE`, `EMQ_TIMEOUT`.
    #[napi]
    pub fn wait_for_result<'env>(
        &self,
        env: &'env Env,
        queue: String,
        id: String,
        timeout_ms: f64,
    ) -> Result<PromiseRaw<'env, Buffer>> {
        let timeout = Duration::from_millis(uint(env, "timeoutMs", timeout_ms)?);
        let c = self.inner.clone();
        promise(
            env,
            async move { c.wait_for_result(&queue, &id, timeout).await },
            |_, value| Ok(Buffer::from(value)),
        )
    }
}
