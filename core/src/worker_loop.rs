//! The body of [`crate::worker::Worker::run`]: the claim loop, the heartbeat,
//! the pumps, settlement and the graceful drain.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::error::{Error, ErrorKind, Result};
use crate::id::BrandedId;
use crate::types::{Job, RetryOutcome};
use crate::worker::{panic_message, HandlerError, WorkerShared};

/// Jobs whose handlers are running: id → token. The heartbeat extends them all
/// in one round trip; settlement removes them.
type InFlight = Arc<Mutex<HashMap<BrandedId, u64>>>;

/// A job whose handler succeeded, waiting for the settler. `held` is false
/// when the heartbeat already found its lease lost (and counted it).
struct Settlement {
    id: BrandedId,
    token: u64,
    held: bool,
}

/// Jobs one `complete_many` call settles at most.
const SETTLE_BATCH: usize = 500;

const PUMP_LIMIT: u64 = 1_000;

pub(crate) async fn run(shared: Arc<WorkerShared>) -> Result<()> {
    if shared.running.swap(true, Ordering::SeqCst) {
        return Err(Error::invalid_argument("this worker is already running"));
    }
    let opts = shared.options.clone();
    log::info!(
        "echomq worker: started queue={} concurrency={} lease_ms={}",
        shared.queue,
        opts.concurrency,
        opts.lease_ms
    );
    let in_flight: InFlight = Arc::default();
    let heartbeat = tokio::spawn(heartbeat(shared.clone(), in_flight.clone()));
    let pumps = tokio::spawn(pumps(shared.clone()));
    let (settle_tx, settle_rx) = mpsc::channel::<Settlement>(opts.concurrency.max(1) * 2);
    let settler = tokio::spawn(settler(shared.clone(), settle_rx));
    let mut tasks: JoinSet<()> = JoinSet::new();
    let idle_max = Duration::from_millis(opts.idle_max_ms);
    let mut idle = Duration::from_millis(1);

    while !shared.stopping.load(Ordering::SeqCst) {
        while tasks.try_join_next().is_some() {}
        let free = opts.concurrency.saturating_sub(tasks.len());
        if free == 0 {
            // Back-pressure: claim nothing until a handler finishes.
            let _ = tokio::time::timeout(idle_max, tasks.join_next()).await;
            continue;
        }
        match shared
            .client
            .claim_many(&shared.queue, free as u64, opts.lease_ms)
            .await
        {
            Ok(jobs) if !jobs.is_empty() => {
                idle = Duration::from_millis(1);
                shared
                    .counters
                    .claimed
                    .fetch_add(jobs.len() as u64, Ordering::Relaxed);
                shared
                    .counters
                    .in_flight
                    .fetch_add(jobs.len() as u64, Ordering::Relaxed);
                for job in jobs {
                    lock(&in_flight).insert(job.id, job.token);
                    tasks.spawn(process(
                        shared.clone(),
                        in_flight.clone(),
                        settle_tx.clone(),
                        job,
                    ));
                }
            }
            Ok(_) => {
                // Empty (or paused) queue: adaptive back-off, never a hot spin.
                tokio::time::sleep(idle).await;
                idle = (idle * 2).min(idle_max);
            }
            Err(e) => {
                log::warn!("echomq worker: claim on {} failed: {e}", shared.queue);
                tokio::time::sleep(idle_max.max(Duration::from_millis(100))).await;
            }
        }
    }

    log::info!(
        "echomq worker: stopping queue={} in_flight={}",
        shared.queue,
        tasks.len()
    );
    pumps.abort();
    let grace = Duration::from_millis(opts.shutdown_grace_ms);
    let drained =
        tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
        release_unfinished(&shared, &in_flight).await;
    }
    heartbeat.abort();
    drop(settle_tx);
    let _ = settler.await;
    shared.running.store(false, Ordering::SeqCst);
    log::info!(
        "echomq worker: stopped queue={} stats={:?}",
        shared.queue,
        crate::worker::Worker::stats_of(&shared)
    );
    Ok(())
}

fn lock(in_flight: &InFlight) -> std::sync::MutexGuard<'_, HashMap<BrandedId, u64>> {
    in_flight.lock().unwrap_or_else(|p| p.into_inner())
}

/// Run one handler (catching panics) and settle its job.
async fn process(
    shared: Arc<WorkerShared>,
    in_flight: InFlight,
    settle: mpsc::Sender<Settlement>,
    job: Job,
) {
    let (id, token) = (job.id, job.token);
    // A handler may panic while building its future or while running it;
    // both are failures of this job, never of the worker.
    let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (shared.handler)(job)));
    let outcome = match started {
        Ok(future) => match tokio::spawn(future).await {
            Ok(outcome) => outcome,
            Err(e) => Err(HandlerError::retry(panic_message(e))),
        },
        Err(_) => Err(HandlerError::retry("handler panicked")),
    };
    // Stop heartbeating it before settling (the lease has at least two thirds
    // left), so a heartbeat racing the settlement cannot mistake a completed
    // job for a lost lease. `held` is false when the heartbeat already found
    // the lease lost (and counted it).
    let held = lock(&in_flight).remove(&id).is_some();
    let failure = match outcome {
        // Hand it to the settler and free the slot at once: the next claim
        // then shares a round trip with this settlement instead of waiting
        // for it. The bounded channel still applies back-pressure.
        Ok(()) => {
            if let Err(mpsc::error::SendError(lost)) =
                settle.send(Settlement { id, token, held }).await
            {
                let closed = Error::new(ErrorKind::Closed, "settler stopped");
                record(&shared, lost.id, lost.token, lost.held, Err(closed));
            }
            return;
        }
        Err(failure) => failure,
    };
    let opts = &shared.options;
    let max = if failure.fatal {
        token
    } else {
        opts.max_attempts
    };
    let retried = shared
        .client
        .retry(
            &shared.queue,
            id.as_str(),
            token,
            opts.backoff_ms(token),
            max,
            &failure.message,
        )
        .await
        .map(|verdict| {
            let counter = match verdict {
                RetryOutcome::Dead => &shared.counters.dead,
                RetryOutcome::Scheduled => &shared.counters.retried,
            };
            counter.fetch_add(1, Ordering::Relaxed);
        });
    record(&shared, id, token, held, retried.map(|()| false));
}

/// Account for a settled job: `Ok(true)` completed, `Ok(false)` retried or
/// dead-lettered (already counted), or the settlement's error.
fn record(shared: &WorkerShared, id: BrandedId, token: u64, held: bool, settled: Result<bool>) {
    match settled {
        Ok(true) => {
            shared.counters.completed.fetch_add(1, Ordering::Relaxed);
        }
        Ok(false) => {}
        Err(e) => match e.kind() {
            ErrorKind::Stale | ErrorKind::Gone | ErrorKind::LeaseLost => {
                if held {
                    shared.counters.lease_lost.fetch_add(1, Ordering::Relaxed);
                }
                log::warn!("echomq worker: lease lost on {id} (token {token}): {e}");
            }
            // The job stays active; its lease lapses and the reaper hands it out
            // again (at-least-once), so nothing is lost.
            _ => log::error!("echomq worker: could not settle {id}: {e}"),
        },
    }
    shared.counters.in_flight.fetch_sub(1, Ordering::Relaxed);
}
/// Completes finished jobs in batches: whatever has queued up while the last
/// call was on the wire goes out in the next `complete_many` (one script call,
/// every token still checked), so settlement costs one round trip per batch.
async fn settler(shared: Arc<WorkerShared>, mut rx: mpsc::Receiver<Settlement>) {
    let mut batch: Vec<Settlement> = Vec::with_capacity(SETTLE_BATCH);
    while rx.recv_many(&mut batch, SETTLE_BATCH).await > 0 {
        let jobs: Vec<(String, u64)> = batch.iter().map(|s| (s.id.to_string(), s.token)).collect();
        let refs: Vec<(&str, u64)> = jobs.iter().map(|(id, t)| (id.as_str(), *t)).collect();
        match shared.client.complete_many(&shared.queue, &refs).await {
            Ok(verdicts) => {
                for (s, verdict) in batch.drain(..).zip(verdicts) {
                    record(&shared, s.id, s.token, s.held, verdict.map(|()| true));
                }
            }
            Err(e) => {
                for s in batch.drain(..) {
                    record(&shared, s.id, s.token, s.held, Err(e.clone()));
                }
            }
        }
    }
}

/// Every `lease / 3`, extend every running job's lease in one round trip.
async fn heartbeat(shared: Arc<WorkerShared>, in_flight: InFlight) {
    let lease = shared.options.lease_ms;
    let mut tick = tokio::time::interval(Duration::from_millis((lease / 3).max(1)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let held: Vec<(String, u64)> = lock(&in_flight)
            .iter()
            .map(|(id, t)| (id.to_string(), *t))
            .collect();
        if held.is_empty() {
            continue;
        }
        let refs: Vec<(&str, u64)> = held.iter().map(|(id, t)| (id.as_str(), *t)).collect();
        match shared.client.extend_many(&shared.queue, &refs, lease).await {
            Ok(verdicts) => {
                for ((id, token), verdict) in held.iter().zip(verdicts) {
                    if let Err(e) = verdict {
                        log::warn!("echomq worker: lease lost on {id} (token {token}): {e}");
                        if let Ok(id) = BrandedId::parse(id) {
                            if lock(&in_flight).remove(&id).is_some() {
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

/// Handlers still running after the grace period: hand their jobs back to the
/// queue now (delay 0, never dead-lettered for this), rather than leaving them
/// in active until their leases lapse.
async fn release_unfinished(shared: &WorkerShared, in_flight: &InFlight) {
    let left: Vec<(BrandedId, u64)> = lock(in_flight).drain().collect();
    for (id, token) in left {
        let released = shared
            .client
            .retry(
                &shared.queue,
                id.as_str(),
                token,
                0,
                u64::MAX,
                "worker stopped before the handler finished",
            )
            .await;
        if let Err(e) = released {
            log::warn!("echomq worker: could not release {id}: {e}");
        }
        shared.counters.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}
