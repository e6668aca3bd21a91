//! The worker: the core's `echomq::Worker` with a batch handler that calls the
//! JS function through a ThreadsafeFunction with up to `handlerBatch` jobs
//! (one crossing to the JS thread per batch) and awaits the Promise it returns.
//!
//! `index.js` runs the user's handler for each job of the batch concurrently
//! and resolves to one verdict per job, never rejecting: `null` (success) or
//! `{message, fatal}` (failure; `fatal` for an `UnrecoverableError`). The ThreadsafeFunction is *weak* (it never keeps the
//! process alive by itself; a pending `run()` Promise does) and is released as
//! soon as the worker has drained, or on `close()` of a worker never run — so
//! none outlives its environment (napi-rs #1514 / #1515).

use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;

use echomq::{Backoff, HandlerError, Job, Output, Worker, WorkerOptions, WorkerStats};

use crate::client::NativeClient;
use crate::convert::{num, promise, uint};
use crate::error::to_js;

/// The job a handler receives.
#[napi(object)]
pub struct HandlerJob {
    pub id: String,
    pub payload: Buffer,
    pub token: f64,
    /// Which attempt this claim is (1 on the first claim).
    pub attempts: f64,
}

/// What the wrapped handler's Promise resolves to for one job: `null`
/// (done), `{result}` (done, with the value to keep: `keepResultMs`), or
/// `{message, fatal}` (failed).
#[napi(object)]
pub struct HandlerVerdict {
    pub message: Option<String>,
    pub fatal: Option<bool>,
    pub result: Option<Buffer>,
}

type Verdicts = Promise<Vec<Option<HandlerVerdict>>>;
type Handler = ThreadsafeFunction<Vec<HandlerJob>, Verdicts, Vec<HandlerJob>, Status, false, true>;
type Slot = Arc<Mutex<Option<Arc<Handler>>>>;

/// Worker options, camelCase (all optional; core defaults otherwise).
#[napi(object)]
pub struct WorkerOptionsJs {
    pub concurrency: Option<f64>,
    pub lease_ms: Option<f64>,
    pub max_attempts: Option<f64>,
    /// `fixed`, `exponential` or `jitter`.
    pub backoff: Option<String>,
    pub backoff_base_ms: Option<f64>,
    pub backoff_cap_ms: Option<f64>,
    pub pump_interval_ms: Option<f64>,
    pub idle_max_ms: Option<f64>,
    pub shutdown_grace_ms: Option<f64>,
    /// Jobs claimed ahead of free slots; default: adaptive, at most `concurrency`.
    pub prefetch: Option<f64>,
    /// Jobs handed to the JS handler per crossing (run concurrently). Default 1.
    pub handler_batch: Option<f64>,
    /// Dead-set retention: delete dead jobs minted longer ago. Default: keep.
    pub dead_max_age_ms: Option<f64>,
    /// Dead-set retention: keep at most this many dead jobs. Default: keep all.
    pub dead_max_len: Option<f64>,
    /// Stalls a job survives before it is dead-lettered `stalled`. Default 2.
    pub max_stalls: Option<f64>,
    /// Keep each handler's return value as the job's result this long (2.1.0). Default 0.
    pub keep_result_ms: Option<f64>,
    /// How long an idle worker stays parked on the wake list before it
    /// looks anyway (jobs written without a hint). Default 5000.
    pub wake_fallback_ms: Option<f64>,
}

#[napi(object)]
pub struct WorkerStatsJs {
    pub claimed: f64,
    pub completed: f64,
    pub retried: f64,
    pub dead: f64,
    pub lease_lost: f64,
    pub in_flight: f64,
    pub claim_failures: f64,
    pub heartbeat_failures: f64,
    pub settle_failures: f64,
    pub released: f64,
}

impl From<WorkerStats> for WorkerStatsJs {
    fn from(s: WorkerStats) -> Self {
        WorkerStatsJs {
            claimed: num(s.claimed),
            completed: num(s.completed),
            retried: num(s.retried),
            dead: num(s.dead),
            lease_lost: num(s.lease_lost),
            in_flight: num(s.in_flight),
            claim_failures: num(s.claim_failures),
            heartbeat_failures: num(s.heartbeat_failures),
            settle_failures: num(s.settle_failures),
            released: num(s.released),
        }
    }
}

fn worker_options(env: &Env, o: Option<WorkerOptionsJs>) -> Result<WorkerOptions> {
    let mut out = WorkerOptions::default();
    let Some(o) = o else { return Ok(out) };
    let set = |target: &mut u64, name: &str, v: Option<f64>| -> Result<()> {
        if let Some(v) = v {
            *target = uint(env, name, v)?;
        }
        Ok(())
    };
    let mut concurrency = out.concurrency as u64;
    set(&mut concurrency, "concurrency", o.concurrency)?;
    out.concurrency = concurrency as usize;
    set(&mut out.lease_ms, "leaseMs", o.lease_ms)?;
    set(&mut out.max_attempts, "maxAttempts", o.max_attempts)?;
    set(&mut out.backoff_base_ms, "backoffBaseMs", o.backoff_base_ms)?;
    set(&mut out.backoff_cap_ms, "backoffCapMs", o.backoff_cap_ms)?;
    set(
        &mut out.pump_interval_ms,
        "pumpIntervalMs",
        o.pump_interval_ms,
    )?;
    set(&mut out.idle_max_ms, "idleMaxMs", o.idle_max_ms)?;
    set(&mut out.keep_result_ms, "keepResultMs", o.keep_result_ms)?;
    set(
        &mut out.shutdown_grace_ms,
        "shutdownGraceMs",
        o.shutdown_grace_ms,
    )?;
    if let Some(p) = o.prefetch {
        out.prefetch = Some(uint(env, "prefetch", p)? as usize);
    }
    let mut batch = out.handler_batch as u64;
    set(&mut batch, "handlerBatch", o.handler_batch)?;
    out.handler_batch = batch as usize;
    if let Some(v) = o.dead_max_age_ms {
        out.dead_max_age_ms = Some(uint(env, "deadMaxAgeMs", v)?);
    }
    if let Some(v) = o.dead_max_len {
        out.dead_max_len = Some(uint(env, "deadMaxLen", v)?);
    }
    set(&mut out.max_stalls, "maxStalls", o.max_stalls)?;
    set(
        &mut out.wake_fallback_ms,
        "wakeFallbackMs",
        o.wake_fallback_ms,
    )?;
    if let Some(b) = o.backoff {
        out.backoff = Backoff::parse(&b).map_err(|e| to_js(env, &e))?;
    }
    Ok(out)
}

/// Call the JS handler for a batch of jobs and wait for their verdicts.
async fn call(slot: Slot, jobs: Vec<Job>) -> Vec<Output> {
    let n = jobs.len();
    let fail_all = |message: String| vec![Err(HandlerError::retry(message)); n];
    let Some(handler) = slot.lock().unwrap_or_else(|p| p.into_inner()).clone() else {
        return fail_all("worker closed before the handler ran".to_string());
    };
    let jobs: Vec<HandlerJob> = jobs
        .into_iter()
        .map(|job| HandlerJob {
            id: job.id.to_string(),
            payload: job.payload.into(),
            token: num(job.token),
            attempts: num(job.attempts),
        })
        .collect();
    let verdicts = match handler.call_async_catch(jobs).await {
        Ok(verdicts) => verdicts,
        Err(e) => return fail_all(format!("handler could not be called: {}", e.reason)),
    };
    drop(handler);
    match verdicts.await {
        Ok(verdicts) => verdicts
            .into_iter()
            .map(|verdict| match verdict {
                None => Ok(None),
                Some(HandlerVerdict {
                    message: Some(message),
                    fatal,
                    ..
                }) => Err(if fatal == Some(true) {
                    HandlerError::fatal(message)
                } else {
                    HandlerError::retry(message)
                }),
                Some(v) => Ok(v.result.map(|b| b.to_vec())),
            })
            .collect(),
        Err(e) => fail_all(e.reason.clone()),
    }
}

/// The native worker; `index.js` wraps it as `Worker`.
#[napi]
pub struct NativeWorker {
    pub(crate) inner: Worker,
    handler: Slot,
}

#[napi]
impl NativeClient {
    /// A worker over `queue` whose handler is `dispatch(jobs)` (see `index.js`).
    #[napi]
    pub fn worker(
        &self,
        env: &Env,
        queue: String,
        #[napi(ts_arg_type = "(jobs: Array<HandlerJob>) => Promise<Array<HandlerVerdict | null>>")]
        dispatch: Function<'_, Vec<HandlerJob>, Verdicts>,
        options: Option<WorkerOptionsJs>,
    ) -> Result<NativeWorker> {
        let options = worker_options(env, options)?;
        let tsfn: Handler = dispatch
            .build_threadsafe_function::<Vec<HandlerJob>>()
            .callee_handled::<false>()
            .weak::<true>()
            .build()?;
        let handler: Slot = Arc::new(Mutex::new(Some(Arc::new(tsfn))));
        let slot = handler.clone();
        let inner = Worker::new_batch_returning(self.inner.clone(), &queue, options, move |jobs| {
            call(slot.clone(), jobs)
        })
        .map_err(|e| to_js(env, &e))?;
        Ok(NativeWorker { inner, handler })
    }
}

fn release(slot: &Slot) {
    slot.lock().unwrap_or_else(|p| p.into_inner()).take();
}

#[napi]
impl NativeWorker {
    /// Run until `stop()`, drain, release the handler; resolves then.
    #[napi]
    pub fn run<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let (worker, slot) = (self.inner.clone(), self.handler.clone());
        promise(
            env,
            async move {
                let outcome = worker.run().await;
                release(&slot);
                outcome
            },
            |_, ()| Ok(()),
        )
    }

    /// Stop claiming; in-flight jobs get the grace period. Idempotent.
    #[napi]
    pub fn stop(&self) {
        self.inner.stop();
    }

    /// Release the handler now (for a worker that was never run).
    #[napi]
    pub fn release(&self) {
        release(&self.handler);
    }

    #[napi]
    pub fn stats(&self) -> WorkerStatsJs {
        self.inner.stats().into()
    }
}
