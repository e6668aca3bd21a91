//! Settling what handlers answered: successes go to a batching settler (one
//! `complete_many` per batch, every token checked), failures are retried or
//! dead-lettered, and jobs a stopping worker still holds are handed back.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::mpsc;

use super::state::Shared as WorkerShared;
use super::{HandlerError, Output, WorkerEvent};
use crate::defaults::SETTLE_BATCH;
use crate::error::{Error, ErrorKind, Result};
use crate::id::BrandedId;
use crate::types::{Job, RetryOutcome};

/// Jobs this worker holds (running or prefetched): id → token. The heartbeat
/// extends them all in one round trip; settlement removes them.
pub(crate) type Held = Arc<Mutex<HashMap<BrandedId, u64>>>;

pub(crate) fn lock(held: &Held) -> MutexGuard<'_, HashMap<BrandedId, u64>> {
    held.lock().unwrap_or_else(|p| p.into_inner())
}

/// A job whose handler succeeded, waiting for the settler. `held` is false
/// when the heartbeat already found its lease lost (and counted it).
pub(crate) struct Settlement {
    id: BrandedId,
    token: u64,
    held: bool,
    /// How long its handler ran (for the `completed` event and the metrics).
    ran: Duration,
    /// The handler's value, kept as the job's result with `keep_result_ms`.
    result: Option<Vec<u8>>,
}

/// Settle one job from its handler's verdict; `ran` is how long the handler took.
pub(crate) async fn settle(
    shared: &WorkerShared,
    held_jobs: &Held,
    settler: &mpsc::Sender<Settlement>,
    id: BrandedId,
    token: u64,
    verdict: Output,
    ran: Duration,
) {
    // Stop heartbeating it before settling (the lease has at least two thirds
    // left), so a heartbeat racing the settlement cannot mistake a completed
    // job for a lost lease.
    let held = lock(held_jobs).remove(&id).is_some();
    let failure = match unkeepable(shared, verdict) {
        // The settler batches it with others; the slot is already free, so
        // the next claim shares a round trip with this settlement instead of
        // waiting for it. The bounded channel still applies back-pressure.
        Ok(result) => {
            let settlement = Settlement {
                id,
                token,
                held,
                ran,
                result,
            };
            if let Err(mpsc::error::SendError(lost)) = settler.send(settlement).await {
                let closed = Error::new(ErrorKind::Closed, "settler stopped");
                record(shared, &lost, Err(closed));
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
    let delay = opts.backoff_ms(token);
    let retried = shared
        .client
        .retry(
            &shared.queue,
            id.as_str(),
            token,
            delay,
            max,
            &failure.message,
        )
        .await
        .map(|verdict| {
            let (counter, retry_in_ms) = match verdict {
                RetryOutcome::Dead => (&shared.counters.dead, None),
                RetryOutcome::Scheduled => (&shared.counters.retried, Some(delay)),
            };
            // The pumps plan by what is due: this retry is due after its
            // backoff, and a dead job is due for the retention trim.
            let now = tokio::time::Instant::now();
            let beat = Duration::from_millis(opts.pump_interval_ms);
            match retry_in_ms {
                Some(ms) => shared.plan.due_by(now + Duration::from_millis(ms)),
                None if opts.dead_max_age_ms.is_some() || opts.dead_max_len.is_some() => {
                    shared.plan.due_by(now + beat)
                }
                None => {}
            }
            counter.fetch_add(1, Ordering::Relaxed);
            let error = failure.message;
            shared.emit(WorkerEvent::Failed {
                id,
                token,
                error: error.clone(),
                retry_in_ms,
                duration: ran,
            });
            if retry_in_ms.is_none() {
                shared.emit(WorkerEvent::Dead { id, token, error });
            }
        });
    let settlement = Settlement {
        id,
        token,
        held,
        ran,
        result: None,
    };
    record(shared, &settlement, retried.map(|()| false));
}

/// A value the worker must keep (`keep_result_ms` > 0) but that exceeds
/// `max_payload` can never be settled: `complete_many_kept` refuses it (and,
/// refused there, it would take its whole batch with it into a stall). Fail
/// this attempt at once with the real reason instead, so the retry policy
/// applies and the attempt is counted (issue #39 item 2).
fn unkeepable(shared: &WorkerShared, verdict: Output) -> Output {
    let max = shared.client.transport().options().max_payload;
    match verdict {
        Ok(Some(result)) if shared.options.keep_result_ms > 0 && result.len() > max => {
            Err(HandlerError::retry(format!(
                "result too large to keep: {} bytes exceed max_payload ({max} bytes)",
                result.len()
            )))
        }
        other => other,
    }
}

/// Account for a settled job: `Ok(true)` completed, `Ok(false)` retried or
/// dead-lettered (already counted), or the settlement's error.
fn record(shared: &WorkerShared, s: &Settlement, settled: Result<bool>) {
    let (id, token) = (s.id, s.token);
    match settled {
        Ok(true) => {
            shared.counters.completed.fetch_add(1, Ordering::Relaxed);
            shared.emit(WorkerEvent::Completed {
                id,
                token,
                duration: s.ran,
            });
        }
        Ok(false) => {}
        Err(e) => match e.kind() {
            ErrorKind::Stale | ErrorKind::Gone | ErrorKind::LeaseLost => {
                // Not held: the heartbeat already found it lost and said so.
                if s.held {
                    shared.counters.lease_lost.fetch_add(1, Ordering::Relaxed);
                    shared.emit(WorkerEvent::LeaseLost { id, token });
                }
                log::warn!("echomq worker: lease lost on {id} (token {token}): {e}");
            }
            // The job stays active; its lease lapses and the reaper hands it out
            // again (at-least-once), so nothing is lost.
            _ => {
                shared
                    .counters
                    .settle_failures
                    .fetch_add(1, Ordering::Relaxed);
                log::error!("echomq worker: could not settle {id}: {e}");
                shared.emit_error(&e);
            }
        },
    }
    shared.counters.in_flight.fetch_sub(1, Ordering::Relaxed);
}

/// Completes finished jobs in batches: whatever has queued up while the last
/// call was on the wire goes out in the next `complete_many` (one script call,
/// every token still checked), so settlement costs one round trip per batch.
pub(crate) async fn settler(shared: Arc<WorkerShared>, mut rx: mpsc::Receiver<Settlement>) {
    let mut batch: Vec<Settlement> = Vec::with_capacity(SETTLE_BATCH);
    while rx.recv_many(&mut batch, SETTLE_BATCH).await > 0 {
        let jobs: Vec<(String, u64)> = batch.iter().map(|s| (s.id.to_string(), s.token)).collect();
        let keep = shared.options.keep_result_ms;
        let completed = if keep > 0 {
            let kept: Vec<(&str, u64, &[u8])> = jobs
                .iter()
                .zip(&batch)
                .map(|((id, t), s)| (id.as_str(), *t, s.result.as_deref().unwrap_or_default()))
                .collect();
            shared
                .client
                .complete_many_kept(&shared.queue, &kept, keep)
                .await
        } else {
            let refs: Vec<(&str, u64)> = jobs.iter().map(|(id, t)| (id.as_str(), *t)).collect();
            shared.client.complete_many(&shared.queue, &refs).await
        };
        match completed {
            Ok(verdicts) => {
                for (s, verdict) in batch.drain(..).zip(verdicts) {
                    record(&shared, &s, verdict.map(|()| true));
                }
            }
            Err(e) => {
                for s in batch.drain(..) {
                    record(&shared, &s, Err(e.clone()));
                }
            }
        }
    }
}

/// Hand jobs this worker holds back to pending now, unrun, in one round trip
/// (the `release` script; attempts kept) rather than leaving them active
/// until their leases lapse: prefetched jobs at `stop()`, and handlers still
/// running after the grace period. A job whose lease was already lost is
/// not ours to release.
pub(crate) async fn release(shared: &WorkerShared, held_jobs: &Held, jobs: Vec<(BrandedId, u64)>) {
    let n = jobs.len() as u64;
    let ours: Vec<(String, u64)> = {
        let mut map = lock(held_jobs);
        jobs.into_iter()
            .filter(|(id, _)| map.remove(id).is_some())
            .map(|(id, token)| (id.to_string(), token))
            .collect()
    };
    let refs: Vec<(&str, u64)> = ours.iter().map(|(id, t)| (id.as_str(), *t)).collect();
    let counters = &shared.counters;
    // A job not released stays active; its lease lapses and the reaper hands
    // it out, so it counts as a settlement that failed.
    match shared.client.release_many(&shared.queue, &refs).await {
        Ok(verdicts) => {
            for ((id, _), verdict) in ours.iter().zip(verdicts) {
                match verdict {
                    Ok(()) => counters.released.fetch_add(1, Ordering::Relaxed),
                    Err(e) => {
                        log::warn!("echomq worker: could not release {id}: {e}");
                        counters.settle_failures.fetch_add(1, Ordering::Relaxed)
                    }
                };
            }
        }
        Err(e) => {
            log::warn!("echomq worker: could not release {} jobs: {e}", ours.len());
            let failed = ours.len() as u64;
            counters
                .settle_failures
                .fetch_add(failed, Ordering::Relaxed);
        }
    }
    counters.in_flight.fetch_sub(n, Ordering::Relaxed);
}

/// The (id, token) of each job, for [`release`].
pub(crate) fn ids(jobs: impl IntoIterator<Item = Job>) -> Vec<(BrandedId, u64)> {
    jobs.into_iter().map(|j| (j.id, j.token)).collect()
}
