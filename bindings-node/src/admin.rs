//! The operator verbs (`queues`, `drain`, `purgeDead`, `requeueAllDead`).
//! (The `emq` command is its own executable, shipped beside the addon:
//! `bin/emq.js` starts it; docs/INSTALL.md.)

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::client::NativeClient;
use crate::convert::{num, promise, uint};

/// `undefined`/`null` = no limit; otherwise a positive integer.
fn limit(env: &Env, value: Option<f64>) -> Result<Option<u64>> {
    value.map(|v| uint(env, "limit", v)).transpose()
}

#[napi]
impl NativeClient {
    #[napi]
    pub fn queues<'env>(&self, env: &'env Env) -> Result<Object<'env>> {
        let c = self.inner.clone();
        promise(env, async move { c.queues().await }, |_, names| Ok(names))
    }

    #[napi]
    pub fn drain<'env>(
        &self,
        env: &'env Env,
        queue: String,
        include_scheduled: Option<bool>,
        max: Option<f64>,
    ) -> Result<Object<'env>> {
        let c = self.inner.clone();
        let max = limit(env, max)?;
        let scheduled = include_scheduled.unwrap_or(false);
        promise(
            env,
            async move { c.drain(&queue, scheduled, max).await },
            |_, n| Ok(num(n)),
        )
    }

    #[napi]
    pub fn purge_dead<'env>(
        &self,
        env: &'env Env,
        queue: String,
        older_than_ms: Option<f64>,
        max: Option<f64>,
    ) -> Result<Object<'env>> {
        let c = self.inner.clone();
        let older = older_than_ms
            .map(|v| uint(env, "olderThanMs", v))
            .transpose()?;
        let max = limit(env, max)?;
        promise(
            env,
            async move { c.purge_dead(&queue, older, max).await },
            |_, n| Ok(num(n)),
        )
    }

    #[napi]
    pub fn requeue_all_dead<'env>(
        &self,
        env: &'env Env,
        queue: String,
        max: Option<f64>,
    ) -> Result<Object<'env>> {
        let c = self.inner.clone();
        let max = limit(env, max)?;
        promise(
            env,
            async move { c.requeue_all_dead(&queue, max).await },
            |_, n| Ok(num(n)),
        )
    }
}
