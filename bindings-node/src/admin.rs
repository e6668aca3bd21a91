//! The operator verbs (`queues`, `drain`, `purgeDead`, `requeueAllDead`).
//! (The `emq` command is its own executable, shipped beside the addon:
//! `bin/emq.js` starts it; docs/INSTALL.md.)

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::client::NativeClient;
use crate::convert::{num, promise, uint};

/// `undefined`/`null` = no limit; otherwise a positive integer.
fn limit_arg(env: &Env, value: Option<f64>) -> Result<Option<u64>> {
    value.map(|v| uint(env, "limit", v)).transpose()
}

#[napi]
impl NativeClient {
    /// Every queue of the deployment (SCAN over the key grammar), sorted.
    #[napi]
    pub fn queues<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, Vec<String>>> {
        let c = self.inner.clone();
        promise(env, async move { c.queues().await }, |_, names| Ok(names))
    }

    /// Delete waiting jobs (pending; scheduled too when asked), oldest first; active jobs survive.
    #[napi]
    pub fn drain<'env>(
        &self,
        env: &'env Env,
        queue: String,
        include_scheduled: Option<bool>,
        limit: Option<f64>,
    ) -> Result<PromiseRaw<'env, f64>> {
        let c = self.inner.clone();
        let max = limit_arg(env, limit)?;
        let scheduled = include_scheduled.unwrap_or(false);
        promise(
            env,
            async move { c.drain(&queue, scheduled, max).await },
            |_, n| Ok(num(n)),
        )
    }

    /// Delete dead jobs (rows and logs), oldest first; only those older than `olderThanMs` when given.
    #[napi]
    pub fn purge_dead<'env>(
        &self,
        env: &'env Env,
        queue: String,
        older_than_ms: Option<f64>,
        limit: Option<f64>,
    ) -> Result<PromiseRaw<'env, f64>> {
        let c = self.inner.clone();
        let older = older_than_ms
            .map(|v| uint(env, "olderThanMs", v))
            .transpose()?;
        let max = limit_arg(env, limit)?;
        promise(
            env,
            async move { c.purge_dead(&queue, older, max).await },
            |_, n| Ok(num(n)),
        )
    }

    /// Put dead jobs back to pending, oldest first, as `requeueDead` does.
    #[napi]
    pub fn requeue_all_dead<'env>(
        &self,
        env: &'env Env,
        queue: String,
        limit: Option<f64>,
    ) -> Result<PromiseRaw<'env, f64>> {
        let c = self.inner.clone();
        let max = limit_arg(env, limit)?;
        promise(
            env,
            async move { c.requeue_all_dead(&queue, max).await },
            |_, n| Ok(num(n)),
        )
    }
}
