//! The promote/reap/repeat pumps, scheduled by what is due (echomq:2.1.0).
//!
//! A fixed beat of three pump scripts a second is most of an idle worker's
//! traffic. Instead, each pass asks `next_due` (one read-only script) how
//! long until the first scheduled job is due, the first lease lapses and the
//! first repeat slot comes, runs promote, reap or the repeat pump only when
//! one of them is due, and sleeps until the soonest of the three — at most
//! `pump_interval_ms` while the worker holds jobs (so a busy worker keeps
//! today's cadence for producers that send no hint), at most
//! `wake_fallback_ms` while it is idle. Things this worker learns of bring
//! the next pass forward ([`PumpPlan::due_by`]): a retry's backoff, a wake
//! token that found nothing to claim (a scheduled job's or a new repeat's
//! hint), the first claim after an idle spell. A client speaking 2.0.0 has no
//! `next_due` and keeps the fixed beat.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::settle::{lock, Held};
use super::state::Shared as WorkerShared;
use super::WorkerEvent;
use crate::admin::DeadBound;
use crate::defaults::PUMP_LIMIT;
use crate::error::{ErrorKind, Result};

/// When the pumps should next look, as the worker's other tasks learn it.
#[derive(Default)]
pub(crate) struct PumpPlan {
    soonest: Mutex<Option<Instant>>,
    changed: Notify,
}

impl PumpPlan {
    /// Run a pass no later than `at`.
    pub(crate) fn due_by(&self, at: Instant) {
        let mut soonest = self.soonest.lock().unwrap_or_else(|p| p.into_inner());
        if soonest.map_or(true, |s| at < s) {
            *soonest = Some(at);
            drop(soonest);
            self.changed.notify_one();
        }
    }

    fn take(&self) -> Option<Instant> {
        self.soonest
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
}

#[derive(Debug, Clone, Copy)]
enum Pump {
    Promote,
    Reap,
}

/// Promote due scheduled jobs, reap lapsed leases and fire due repeatable
/// jobs, forever.
pub(crate) async fn pumps(shared: Arc<WorkerShared>, held: Held) {
    let opts = &shared.options;
    let beat = Duration::from_millis(opts.pump_interval_ms);
    let idle = Duration::from_millis(opts.wake_fallback_ms).max(beat);
    let planned = shared.client.wire_version() >= crate::WireVersion::V2_1_0;
    let mut next = Instant::now();
    loop {
        loop {
            if let Some(at) = shared.plan.take() {
                next = next.min(at);
            }
            if Instant::now() >= next {
                break;
            }
            tokio::select! {
                _ = tokio::time::sleep_until(next) => {}
                _ = shared.plan.changed.notified() => {}
            }
        }
        if !planned {
            run(&shared, Pump::Promote).await;
            run(&shared, Pump::Reap).await;
            repeats(&shared).await;
            trim(&shared).await;
            next = Instant::now() + beat;
            continue;
        }
        let due = match shared.client.next_due(&shared.queue).await {
            Ok(due) => due,
            // The client was closed under the worker: the claim loop ends
            // and says so once; the pumps have nothing left to do.
            Err(e) if e.kind() == ErrorKind::Closed => return,
            Err(e) => {
                log::warn!("echomq worker: next_due on {} failed: {e}", shared.queue);
                shared.emit_error(&e);
                next = Instant::now() + beat;
                continue;
            }
        };
        let mut ran = false;
        if due.schedule_ms == Some(0) {
            run(&shared, Pump::Promote).await;
            ran = true;
        }
        if due.lease_ms == Some(0) {
            run(&shared, Pump::Reap).await;
            ran = true;
        }
        if due.repeat_ms == Some(0) {
            repeats(&shared).await;
            ran = true;
        }
        trim(&shared).await;
        let busy = ran || !lock(&held).is_empty();
        let ceiling = if busy { beat } else { idle };
        let soonest = [due.schedule_ms, due.lease_ms, due.repeat_ms]
            .into_iter()
            .flatten()
            .filter(|&ms| ms > 0)
            .min();
        let wait = match soonest {
            _ if ran => beat,
            Some(ms) => Duration::from_millis(ms).min(ceiling),
            None => ceiling,
        };
        next = Instant::now() + wait;
    }
}

/// One pump, again while it moves a full batch.
async fn run(shared: &WorkerShared, pump: Pump) {
    loop {
        let moved: Result<u64> = match pump {
            Pump::Promote => shared.client.promote(&shared.queue, PUMP_LIMIT).await,
            Pump::Reap => reap_for_worker(shared).await,
        };
        if let (Pump::Reap, Ok(count @ 1..)) = (pump, &moved) {
            shared.emit(WorkerEvent::Stalled { count: *count });
        }
        match moved {
            Ok(n) if n >= PUMP_LIMIT => continue,
            Ok(_) => break,
            Err(e) => {
                log::warn!("echomq worker: {pump:?} on {} failed: {e}", shared.queue);
                shared.emit_error(&e);
                break;
            }
        }
    }
}

/// Repeatable jobs (wire 2.1.0): one job per due slot, however many pumps
/// race. A client speaking 2.0.0 has none and sends nothing.
async fn repeats(shared: &WorkerShared) {
    if let Err(e) = crate::repeat::pump(&shared.client, &shared.queue, PUMP_LIMIT).await {
        log::warn!("echomq worker: repeats on {} failed: {e}", shared.queue);
        shared.emit_error(&e);
    }
}

/// Dead-set retention, bounded per pass so a huge backlog is trimmed over
/// several passes. With no bound set it sends nothing.
async fn trim(shared: &WorkerShared) {
    let retention = DeadBound {
        older_than_ms: shared.options.dead_max_age_ms,
        max_len: shared.options.dead_max_len,
    };
    if let Err(e) = shared
        .client
        .trim_dead(&shared.queue, retention, Some(PUMP_LIMIT))
        .await
    {
        log::warn!(
            "echomq worker: dead-set trim on {} failed: {e}",
            shared.queue
        );
    }
}

/// The worker's reap: at wire 2.1.0 the stall-capped reap (`max_stalls`).
async fn reap_for_worker(shared: &WorkerShared) -> Result<u64> {
    let client = &shared.client;
    if client.wire_version() >= crate::WireVersion::V2_1_0 {
        let reaped = client
            .reap_stalled(&shared.queue, PUMP_LIMIT, shared.options.max_stalls)
            .await?;
        for id in &reaped.dead {
            log::warn!(
                "echomq worker: {id} on {} stalled {} times; dead-lettered",
                shared.queue,
                shared.options.max_stalls
            );
        }
        Ok(reaped.len() as u64)
    } else {
        client.reap(&shared.queue, PUMP_LIMIT).await
    }
}
