//! The body of [`crate::worker::Worker::run`]: the claim loop, the heartbeat,
//! the pumps and the graceful drain. Settlement is in `settle.rs`.
//!
//! The loop keeps up to `concurrency` jobs running and up to `prefetch` more
//! claimed and waiting, with at most one claim on the wire. The claim for the
//! next jobs therefore overlaps the handlers of the current ones instead of
//! alternating with them (claim → run → claim), and claims come back in
//! larger batches.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use tokio::sync::{mpsc, Notify};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use super::settle::{ids, lock, release, settle, settler, Held, Settlement};
use super::state::{panic_text, Dispatch, Shared as WorkerShared};
use super::{HandlerError, Verdict};
use crate::error::{Error, Result};
use crate::id::BrandedId;
use crate::types::Job;

const PUMP_LIMIT: u64 = 1_000;

/// Everything a handler task needs to settle what it ran.
#[derive(Clone)]
struct Settle {
    shared: Arc<WorkerShared>,
    held: Held,
    settler: mpsc::Sender<Settlement>,
    /// Jobs whose handlers are running; a task frees its jobs' slots on drop.
    busy: Arc<AtomicUsize>,
    /// Wakes the loop when slots free up (a stored permit, so none is missed).
    freed: Arc<Notify>,
}

/// Frees a task's slots however the task ends (finished, panicked, aborted).
struct Slots {
    n: usize,
    busy: Arc<AtomicUsize>,
    freed: Arc<Notify>,
}

impl Drop for Slots {
    fn drop(&mut self) {
        self.busy.fetch_sub(self.n, Ordering::AcqRel);
        self.freed.notify_one();
    }
}

pub(crate) async fn run(shared: Arc<WorkerShared>) -> Result<()> {
    if shared.running.swap(true, Ordering::SeqCst) {
        return Err(Error::invalid_argument("this worker is already running"));
    }
    let opts = shared.options.clone();
    log::info!(
        "echomq worker: started queue={} concurrency={} prefetch={} lease_ms={}",
        shared.queue,
        opts.concurrency,
        opts.prefetch_jobs(),
        opts.lease_ms
    );
    let held: Held = Arc::default();
    let heartbeat = tokio::spawn(heartbeat(shared.clone(), held.clone()));
    let pumps = tokio::spawn(pumps(shared.clone()));
    let (settle_tx, settle_rx) = mpsc::channel::<Settlement>(opts.concurrency.max(1) * 2);
    let settler = tokio::spawn(settler(shared.clone(), settle_rx));
    let ctx = Settle {
        shared: shared.clone(),
        held: held.clone(),
        settler: settle_tx,
        busy: Arc::default(),
        freed: Arc::default(),
    };
    let capacity = opts.concurrency + opts.prefetch_jobs();
    let idle_max = Duration::from_millis(opts.idle_max_ms);
    let mut idle = Duration::from_millis(1);
    let mut buffer: VecDeque<Job> = VecDeque::new();
    let mut tasks: JoinSet<()> = JoinSet::new();
    let mut claiming: Option<JoinHandle<Result<Vec<Job>>>> = None;
    let mut next_claim = Instant::now();

    loop {
        while tasks.try_join_next().is_some() {}
        // Checked first: once stopping, prefetched jobs are handed back, not started.
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        start_handlers(&ctx, &mut tasks, &mut buffer);
        let busy = ctx.busy.load(Ordering::Acquire);
        let room = capacity.saturating_sub(busy + buffer.len());
        // Claim when slots would otherwise sit idle, or once half the window
        // is free: not for every single slot that frees up, which would
        // turn a busy worker's claims into many one-job round trips.
        let starving = buffer.is_empty() && busy < opts.concurrency;
        let worth_it = room > 0 && (starving || room >= capacity.div_ceil(2));
        if claiming.is_none() && worth_it && Instant::now() >= next_claim {
            let (client, queue, lease) =
                (shared.client.clone(), shared.queue.clone(), opts.lease_ms);
            claiming = Some(tokio::spawn(async move {
                client.claim_many(&queue, room as u64, lease).await
            }));
        }
        // Wake for whichever comes first: slots freeing up, the claim
        // answering, the idle back-off ending, or (at the latest) idle_max,
        // so a stop() is noticed promptly.
        let wake = if claiming.is_none() && worth_it {
            next_claim
        } else {
            Instant::now() + idle_max
        };
        tokio::select! {
            _ = ctx.freed.notified() => {}
            claimed = answer(&mut claiming) => {
                claiming = None;
                match claimed {
                    Ok(jobs) if !jobs.is_empty() => {
                        idle = Duration::from_millis(1);
                        next_claim = Instant::now();
                        take(&shared, &held, &mut buffer, jobs);
                    }
                    Ok(_) => {
                        // Empty (or paused) queue: adaptive back-off, never a hot spin.
                        next_claim = Instant::now() + idle;
                        idle = (idle * 2).min(idle_max);
                    }
                    Err(e) => {
                        log::warn!("echomq worker: claim on {} failed: {e}", shared.queue);
                        next_claim = Instant::now() + idle_max.max(Duration::from_millis(100));
                    }
                }
            }
            _ = tokio::time::sleep_until(wake) => {}
        }
    }

    log::info!(
        "echomq worker: stopping queue={} running={} prefetched={}",
        shared.queue,
        ctx.busy.load(Ordering::Acquire),
        buffer.len()
    );
    pumps.abort();
    // A claim already on the wire may still hand us jobs: take them, then
    // give back every job no handler has started.
    if let Some(claim) = claiming.take() {
        if let Ok(Ok(jobs)) = claim.await {
            take(&shared, &held, &mut buffer, jobs);
        }
    }
    release(&shared, &held, ids(buffer.drain(..))).await;
    let grace = Duration::from_millis(opts.shutdown_grace_ms);
    let drained =
        tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
        let unfinished: Vec<(BrandedId, u64)> =
            lock(&held).iter().map(|(id, t)| (*id, *t)).collect();
        release(&shared, &held, unfinished).await;
    }
    heartbeat.abort();
    drop(ctx);
    let _ = settler.await;
    shared.running.store(false, Ordering::SeqCst);
    log::info!(
        "echomq worker: stopped queue={} stats={:?}",
        shared.queue,
        crate::worker::Worker::stats_of(&shared)
    );
    Ok(())
}

/// The outcome of the claim on the wire; never ready when there is none.
async fn answer(claiming: &mut Option<JoinHandle<Result<Vec<Job>>>>) -> Result<Vec<Job>> {
    match claiming {
        Some(handle) => match handle.await {
            Ok(claimed) => claimed,
            Err(e) => Err(Error::new(
                crate::error::ErrorKind::Closed,
                format!("claim task ended: {e}"),
            )),
        },
        None => std::future::pending().await,
    }
}

/// Record freshly claimed jobs as held (so the heartbeat extends them) and
/// queue them for free slots.
fn take(shared: &WorkerShared, held: &Held, buffer: &mut VecDeque<Job>, jobs: Vec<Job>) {
    let n = jobs.len() as u64;
    shared.counters.claimed.fetch_add(n, Ordering::Relaxed);
    shared.counters.in_flight.fetch_add(n, Ordering::Relaxed);
    let mut map = lock(held);
    for job in &jobs {
        map.insert(job.id, job.token);
    }
    drop(map);
    buffer.extend(jobs);
}

/// Start handlers on free slots: one task per job for per-job handlers, one
/// per batch of up to `handler_batch` jobs for batch handlers.
fn start_handlers(ctx: &Settle, tasks: &mut JoinSet<()>, buffer: &mut VecDeque<Job>) {
    let opts = &ctx.shared.options;
    loop {
        let free = opts
            .concurrency
            .saturating_sub(ctx.busy.load(Ordering::Acquire));
        if free == 0 || buffer.is_empty() {
            return;
        }
        let n = match &ctx.shared.dispatch {
            Dispatch::PerJob(_) => 1,
            Dispatch::Batch(_) => free.min(opts.handler_batch).min(buffer.len()),
        };
        let jobs: Vec<Job> = buffer.drain(..n).collect();
        ctx.busy.fetch_add(n, Ordering::AcqRel);
        let slots = Slots {
            n,
            busy: ctx.busy.clone(),
            freed: ctx.freed.clone(),
        };
        tasks.spawn(run_handler(ctx.clone(), jobs, slots));
    }
}

/// Run the handler over `jobs` (catching panics: a panic fails its jobs,
/// never the worker) and settle each job from its verdict.
async fn run_handler(ctx: Settle, jobs: Vec<Job>, slots: Slots) {
    let keys: Vec<(BrandedId, u64)> = jobs.iter().map(|j| (j.id, j.token)).collect();
    let verdicts: Vec<Verdict> = match &ctx.shared.dispatch {
        Dispatch::PerJob(handler) => {
            let job = jobs.into_iter().next().expect("one job per task");
            vec![guarded(|| handler(job)).await.and_then(|verdict| verdict)]
        }
        Dispatch::Batch(handler) => {
            let n = jobs.len();
            match guarded(|| handler(jobs)).await {
                Ok(mut verdicts) => {
                    if verdicts.len() != n {
                        let missing = HandlerError::retry(format!(
                            "the batch handler answered {} verdicts for {n} jobs",
                            verdicts.len()
                        ));
                        verdicts.resize(n, Err(missing));
                    }
                    verdicts
                }
                Err(panicked) => vec![Err(panicked); n],
            }
        }
    };
    // Free the slots before settling: the next claim shares a round trip with
    // this settlement instead of waiting for it.
    drop(slots);
    let settles = keys
        .into_iter()
        .zip(verdicts)
        .map(|((id, token), verdict)| {
            settle(&ctx.shared, &ctx.held, &ctx.settler, id, token, verdict)
        });
    futures_util::future::join_all(settles).await;
}

/// Build and await a handler's future; a panic in either is an `Err`.
async fn guarded<T, Fut>(make: impl FnOnce() -> Fut) -> std::result::Result<T, HandlerError>
where
    Fut: Future<Output = T>,
{
    let future = std::panic::catch_unwind(std::panic::AssertUnwindSafe(make))
        .map_err(|p| HandlerError::retry(panic_text(&*p)))?;
    std::panic::AssertUnwindSafe(future)
        .catch_unwind()
        .await
        .map_err(|p| HandlerError::retry(panic_text(&*p)))
}

/// Every `lease / 3`, extend every held job's lease in one round trip.
async fn heartbeat(shared: Arc<WorkerShared>, held: Held) {
    let lease = shared.options.lease_ms;
    let mut tick = tokio::time::interval(Duration::from_millis((lease / 3).max(1)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let jobs: Vec<(String, u64)> = lock(&held)
            .iter()
            .map(|(id, t)| (id.to_string(), *t))
            .collect();
        if jobs.is_empty() {
            continue;
        }
        let refs: Vec<(&str, u64)> = jobs.iter().map(|(id, t)| (id.as_str(), *t)).collect();
        match shared.client.extend_many(&shared.queue, &refs, lease).await {
            Ok(verdicts) => {
                for ((id, token), verdict) in jobs.iter().zip(verdicts) {
                    if let Err(e) = verdict {
                        log::warn!("echomq worker: lease lost on {id} (token {token}): {e}");
                        if let Ok(id) = BrandedId::parse(id) {
                            if lock(&held).remove(&id).is_some() {
                                shared.counters.lease_lost.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                }
            }
            Err(e) => log::warn!("echomq worker: heartbeat on {} failed: {e}", shared.queue),
        }
    }
}

/// Promote due scheduled jobs and reap lapsed leases, forever.
async fn pumps(shared: Arc<WorkerShared>) {
    let mut tick = tokio::time::interval(Duration::from_millis(shared.options.pump_interval_ms));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        for pump in [Pump::Promote, Pump::Reap] {
            // Keep going while a pump moves a full batch.
            loop {
                let moved = match pump {
                    Pump::Promote => shared.client.promote(&shared.queue, PUMP_LIMIT).await,
                    Pump::Reap => shared.client.reap(&shared.queue, PUMP_LIMIT).await,
                };
                match moved {
                    Ok(n) if n >= PUMP_LIMIT => continue,
                    Ok(_) => break,
                    Err(e) => {
                        log::warn!("echomq worker: {pump:?} on {} failed: {e}", shared.queue);
                        break;
                    }
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Pump {
    Promote,
    Reap,
}
