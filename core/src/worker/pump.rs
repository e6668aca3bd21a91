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
//!
//! An idle worker's look the park stands in for (39.12): while the last
//! `next_due` found the schedule, active and repeat sets all empty (the
//! worker holding nothing, no dead-set retention to run), the plan is
//! *quiet* and a polling park names those sets in its `BLPOP` (wake.rs,
//! [`Names::Quiet`](super::wake::Names::Quiet)). A pass that falls due on the
//! idle ceiling then skips `next_due` when such a park, sent after the last
//! look, timed out ([`PumpPlan::vouch`]): that park saw all three absent,
//! which is all `next_due` would have answered. One that finds a member
//! ends at once (`WRONGTYPE`) and sends the pumps to look now
//! ([`PumpPlan::stir`]), so something written without a hint is looked at
//! within a park (about a second) instead of the idle ceiling. Why: without
//! keyspace events the park polls once a second (the pickup bound of
//! 39.12), and `next_due` every `wake_fallback_ms` on top made an idle
//! worker send 1.2 commands a second; the park carries the same question,
//! so the idle worker sends one.

use std::sync::atomic::{AtomicBool, Ordering};
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
    /// The last look found the schedule, active and repeat sets empty (and
    /// the pumps have nothing else to run while idle): a polling park may
    /// name those sets and stand in for the next look.
    quiet: AtomicBool,
    /// When the latest park that named those sets and timed out was sent:
    /// the server found them absent at that instant or after.
    vouched: Mutex<Option<Instant>>,
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

    /// Whether a polling park should name the schedule, active and repeat
    /// sets (the last look found them empty).
    pub(crate) fn quiet(&self) -> bool {
        self.quiet.load(Ordering::Acquire)
    }

    /// A park sent at `sent` that named the schedule, active and repeat sets
    /// timed out: they were absent when it reached the server (at `sent` or
    /// after).
    pub(crate) fn vouch(&self, sent: Instant) {
        let mut vouched = self.vouched.lock().unwrap_or_else(|p| p.into_inner());
        if vouched.map_or(true, |v| sent > v) {
            *vouched = Some(sent);
        }
    }

    /// A park that named those sets answered `WRONGTYPE`: one of them (or
    /// pending) holds members now. Parks stop naming them, and the pumps
    /// look at once.
    pub(crate) fn stir(&self) {
        self.quiet.store(false, Ordering::Release);
        self.due_by(Instant::now());
    }

    /// A park vouched for the sets after `since` (the pumps' last look):
    /// the instant it was sent.
    fn vouched_after(&self, since: Instant) -> Option<Instant> {
        let vouched = *self.vouched.lock().unwrap_or_else(|p| p.into_inner());
        vouched.filter(|&v| v > since)
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
    // Nothing but promote, reap and repeats to run while idle: with
    // dead-set retention every pass also trims, and so still runs.
    let retention = opts.dead_max_age_ms.is_some() || opts.dead_max_len.is_some();
    let mut next = Instant::now();
    // When the sets were last known (a `next_due` sent, or a park's vouch).
    let mut looked = Instant::now();
    loop {
        // Brought forward by something the worker learnt: always a real look.
        let mut asked = false;
        loop {
            if let Some(at) = shared.plan.take() {
                asked = true;
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
        if planned && !asked && shared.plan.quiet() {
            if let Some(vouched) = shared.plan.vouched_after(looked) {
                // A park after the last look found the sets absent: the
                // look it stands in for is done (see the module's header).
                looked = vouched;
                next = Instant::now() + idle;
                continue;
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
        looked = Instant::now();
        let due = match shared.client.next_due(&shared.queue).await {
            Ok(due) => due,
            // The client was closed under the worker: the claim loop ends
            // and says so once; the pumps have nothing left to do.
            Err(e) if e.kind() == ErrorKind::Closed => return,
            Err(e) => {
                shared.plan.quiet.store(false, Ordering::Release);
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
        let empty = due.schedule_ms.is_none() && due.lease_ms.is_none() && due.repeat_ms.is_none();
        shared
            .plan
            .quiet
            .store(empty && !busy && !retention, Ordering::Release);
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
