//! The one enqueue verb, single and batched (the core's `enqueue.rs`):
//! `enqueue(queue, payload, options)` and `enqueueMany(queue, items)`, an item
//! being a payload or `{payload, ...options}`. Every option is a field of
//! [`EnqueueOptionsJs`], mapped onto the core's `EnqueueOptions`; the core
//! checks the combinations (InvalidArgument, nothing sent).

use napi::bindgen_prelude::*;
use napi::JsValue;
use napi_derive::napi;

use echomq::EnqueueOptions;

use crate::client::{EnqueuedJs, NativeClient};
use crate::convert::{payload, promise, promise_direct, uint};
use crate::error::{invalid_argument, to_js};

/// `enqueue` options, camelCase (all optional): `{id, runAtMs, delayMs}`
/// (not both times) or `{dedupId, dedupTtlMs}` (wire 2.1.0; not with the others);
/// `priority` (wire 2.2.0) with any of them.
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
    /// Wire 2.2.0: `1..=1000000`, higher claimed first, before every job
    /// without one; mint order within one priority. `0`: none.
    pub priority: Option<f64>,
}

/// The core's options; `at` prefixes the names in messages (`item 3: `).
fn options(env: &Env, at: &str, o: Option<EnqueueOptionsJs>) -> Result<EnqueueOptions> {
    let Some(o) = o else {
        return Ok(EnqueueOptions::default());
    };
    let ms = |name: &str, v: Option<f64>| {
        v.map(|ms| uint(env, &format!("{at}{name}"), ms))
            .transpose()
    };
    Ok(EnqueueOptions {
        id: o.id,
        run_at_ms: ms("runAtMs", o.run_at_ms)?,
        delay_ms: ms("delayMs", o.delay_ms)?,
        dedup_id: o.dedup_id,
        dedup_ttl_ms: ms("dedupTtlMs", o.dedup_ttl_ms)?,
        priority: o
            .priority
            .map(|p| priority(env, &format!("{at}priority"), p))
            .transpose()?,
    })
}

/// A priority as the core's `u32`: a non-negative integer (else
/// InvalidArgument, as every number); the core checks `1..=MAX_PRIORITY`,
/// this only refuses what a `u32` cannot hold, with the core's words.
fn priority(env: &Env, name: &str, value: f64) -> Result<u32> {
    let p = uint(env, name, value)?;
    u32::try_from(p).map_err(|_| {
        invalid_argument(
            env,
            format!(
                "{name} {p} is out of range: 1..={} (0 or none: no priority)",
                echomq::MAX_PRIORITY
            ),
        )
    })
}

/// One batch item: a payload (Buffer, Uint8Array, string) with the default
/// options, or `{payload, ...options}`.
fn item(env: &Env, i: usize, value: Unknown<'_>) -> Result<(Vec<u8>, EnqueueOptions)> {
    let at = format!("item {i}: ");
    let bad = || {
        invalid_argument(
            env,
            format!(
                "{at}an item is a payload (Buffer, Uint8Array, string) or {{payload, ...options}}"
            ),
        )
    };
    if value.get_type()? != ValueType::Object || value.is_typedarray()? {
        return payload(env, value)
            .map(|p| (p, EnqueueOptions::default()))
            .map_err(|_| bad());
    }
    let object = Object::from_unknown(value)?;
    let p: Unknown<'_> = object.get_named_property("payload")?;
    let p = payload(env, p).map_err(|_| bad())?;
    // The options are the item's other fields (`payload` is not one of them).
    let o = EnqueueOptionsJs::from_unknown(value)?;
    Ok((p, options(env, &at, Some(o))?))
}

#[napi]
impl NativeClient {
    /// `enqueue(queue, payload, options)`: now under a minted id by default.
    #[napi]
    pub fn enqueue<'env>(
        &self,
        env: &'env Env,
        queue: String,
        #[napi(ts_arg_type = "Buffer | Uint8Array | string")] payload_value: Unknown<'_>,
        options_value: Option<EnqueueOptionsJs>,
    ) -> Result<PromiseRaw<'env, EnqueuedJs>> {
        let p = payload(env, payload_value)?;
        let options = options(env, "", options_value)?;
        promise_direct(
            env,
            &self.inner,
            move |c| async move { c.enqueue(&queue, p, options).await },
            |_, e| Ok(EnqueuedJs::from(e)),
        )
    }

    /// One verdict per item, input order: an `Enqueued` or an error object.
    /// A bad item refuses the whole batch before anything is sent.
    #[napi]
    pub fn enqueue_many<'env>(
        &self,
        env: &'env Env,
        queue: String,
        #[napi(
            ts_arg_type = "Array<Buffer | Uint8Array | string | ({ payload: Buffer | Uint8Array | string } & EnqueueOptionsJs)>"
        )]
        items: Vec<Unknown<'_>>,
    ) -> Result<PromiseRaw<'env, Vec<Either<EnqueuedJs, Error>>>> {
        let c = self.inner.clone();
        let items = items
            .into_iter()
            .enumerate()
            .map(|(i, v)| item(env, i, v))
            .collect::<Result<Vec<_>>>()?;
        promise(
            env,
            async move { c.enqueue_many(&queue, &items).await },
            |env, all| {
                Ok(all
                    .into_iter()
                    .map(|v| match v {
                        Ok(e) => Either::A(EnqueuedJs::from(e)),
                        Err(e) => Either::B(to_js(env, &e)),
                    })
                    .collect::<Vec<_>>())
            },
        )
    }
}
