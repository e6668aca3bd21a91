//! The body of [`crate::worker::Worker::run`]: the claim loop, the heartbeat,
//! the pumps and the graceful drain. Settlement is in `settle.rs`.
//!
//! The loop keeps up to `concurrency` jobs running and up to `prefetch` more
//! claimed and waiting (by default an adaptive window, see `adapt.rs`), with
//! at most one claim on the wire. The claim for the
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

use super::adapt::Adaptive;
use super::pump;
use super::settle::{ids, lock, release, settle, settler, Held, Settlement};
use super::state::{panic_text, Dispatch, Shared as WorkerShared};
use super::wake::{Names, Wake};
use super::{HandlerError, Output, WorkerEvent};
use crate::error::{Error, ErrorKind, Result};
use crate::id::BrandedId;
use crate::types::Job;

/// How long the drain's last round trips (handing back what handlers left
/// past the grace period, flushing settlements) may take after the grace
/// period has run out: a bound for a server that is up but does not answer.
const LAST_WORDS: Duration = Duration::from_secs(1);

/// `deadline`, or [`LAST_WORDS`] from now if that is later.
fn at_least_last_words(deadline: Instant) -> Instant {
    deadline.max(Instant::now() + LAST_WORDS)
}

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
    /// Handler and claim times, for the adaptive prefetch window.
    adaptive: Arc<Adaptive>,
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

/// The body of `Worker::run`, in three steps: [`Run::start`] spawns the
/// heartbeat, pumps and settler; [`Run::claim_loop`] claims and starts
/// handlers until `stop()` (or a closed client); [`Run::drain`] hands back
/// what no handler started, gives running handlers the grace period and
/// flushes the settler.
pub(crate) async fn run(shared: Arc<WorkerShared>) -> Result<()> {
    let _running = Running::claim(&shared)?;
    if shared.panic_next_run.swap(false, Ordering::SeqCst) {
        panic!("injected by Worker::panic_next_run_for_tests");
    }
    let opts = &shared.options;
    log::info!(
        "echomq worker: started queue={} concurrency={} prefetch={} lease_ms={}",
        shared.queue,
        opts.concurrency,
        opts.prefetch_jobs(),
        opts.lease_ms
    );
    let mut run = Run::start(shared.clone());
    let outcome = run.claim_loop().await;
    run.drain().await;
    log::info!(
        "echomq worker: stopped queue={} stats={:?}",
        shared.queue,
        crate::worker::Worker::stats_of(&shared)
    );
    shared.emit(WorkerEvent::Closed);
    outcome
}

/// The worker's running flag, cleared however the run ends: returned,
/// panicked, or dropped by its caller.
struct Running(Arc<WorkerShared>);

impl Running {
    fn claim(shared: &Arc<WorkerShared>) -> Result<Running> {
        if shared.running.swap(true, Ordering::SeqCst) {
            return Err(Error::invalid_argument("this worker is already running"));
        }
        Ok(Running(shared.clone()))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running.store(false, Ordering::SeqCst);
    }
}

/// A background task that ends when its owner is dropped.
struct Owned(JoinHandle<()>);

impl Owned {
    fn spawn(task: impl Future<Output = ()> + Send + 'static) -> Owned {
        Owned(tokio::spawn(task))
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One run in progress; it owns every task it started. Dropped before
/// [`Run::drain`] finished (the caller dropped the run's future), it aborts
/// them and hands the jobs it holds back to pending, so a cancelled run is
/// never left renewing leases nobody works on.
struct Run {
    shared: Arc<WorkerShared>,
    /// `None` once drained: dropping it closes the settler's channel.
    ctx: Option<Settle>,
    held: Held,
    heartbeat: Owned,
    pumps: Owned,
    /// The wake listener's keyspace-event watch (39.12), if it has one.
    _watch: Option<Owned>,
    settler: Option<JoinHandle<()>>,
    /// Handler tasks (a `JoinSet` aborts what it still holds when dropped).
    tasks: JoinSet<()>,
    /// The claim on the wire, if any (at most one).
    claiming: Option<JoinHandle<Result<Vec<Job>>>>,
    /// The wake listener (wire 2.1.0), `None` for a client speaking 2.0.0.
    wake: Option<Wake>,
    /// Parked: the `BLPOP` on the wake list with the claim queued behind
    /// it (see [`Parked`]). No other claim goes out while it waits.
    parking: Option<JoinHandle<Result<Parked>>>,
    /// The last park ended with a token (so an empty claim after it was a
    /// hint for something else: a scheduled job, or a stale token).
    woken: bool,
    /// The next park leaves the pending set out: a woken park's claim found
    /// nothing although pending may hold jobs (a paused queue), and a park
    /// that answers at once would spin.
    plain_park: bool,
    /// Claimed jobs waiting for a free slot.
    buffer: VecDeque<Job>,
    idle: Duration,
    /// Jobs were claimed since the queue was last seen empty (for `drained`).
    worked: bool,
    next_claim: Instant,
    drained: bool,
}

impl Run {
    /// Spawn the heartbeat, the pumps and the settler.
    fn start(shared: Arc<WorkerShared>) -> Run {
        let held: Held = Arc::default();
        let heartbeat = Owned::spawn(heartbeat(shared.clone(), held.clone()));
        let pumps = Owned::spawn(pump::pumps(shared.clone(), held.clone()));
        let wake = shared.client.speaks_wake().then(|| {
            let keys = crate::keys::QueueKeys::new(&shared.queue).expect("a checked queue name");
            Wake::new(shared.client.clone(), keys)
        });
        let _watch = wake.clone().map(|w| Owned::spawn(w.watch()));
        let capacity = shared.options.concurrency * 2;
        let (settle_tx, settle_rx) = mpsc::channel::<Settlement>(capacity);
        let settler = tokio::spawn(settler(shared.clone(), settle_rx));
        let ctx = Settle {
            shared: shared.clone(),
            held: held.clone(),
            settler: settle_tx,
            busy: Arc::default(),
            freed: Arc::default(),
            adaptive: Arc::default(),
        };
        Run {
            shared,
            ctx: Some(ctx),
            held,
            heartbeat,
            pumps,
            _watch,
            settler: Some(settler),
            tasks: JoinSet::new(),
            claiming: None,
            wake,
            parking: None,
            woken: false,
            plain_park: false,
            buffer: VecDeque::new(),
            idle: Duration::from_millis(1),
            worked: false,
            next_claim: Instant::now(),
            drained: false,
        }
    }

    fn ctx(&self) -> &Settle {
        self.ctx.as_ref().expect("the context lives until drained")
    }

    fn busy(&self) -> usize {
        self.ctx().busy.load(Ordering::Acquire)
    }

    /// Claim and start handlers until `stop()`; a closed client or a
    /// version-fence refusal ends the loop with its error.
    async fn claim_loop(&mut self) -> Result<()> {
        loop {
            while self.tasks.try_join_next().is_some() {}
            if let Some(e) = self.shared.fatal.get() {
                return Err(e.clone());
            }
            // Checked first: once stopping, prefetched jobs are handed back, not started.
            if self.shared.stopping.load(Ordering::SeqCst) {
                return Ok(());
            }
            let ctx = self.ctx.as_ref().expect("the context lives until drained");
            start_handlers(ctx, &mut self.tasks, &mut self.buffer);
            let room = self.claim_room();
            let parked = self.parking.is_some();
            if room > 0 && self.claiming.is_none() && !parked && Instant::now() >= self.next_claim {
                self.start_claim(room);
            }
            self.wait(room > 0).await?;
        }
    }

    /// How many jobs to claim now: none unless slots would otherwise sit
    /// idle or half the window is free. Not for every single slot that
    /// frees up, which would turn a busy worker's claims into many one-job
    /// round trips.
    fn claim_room(&self) -> usize {
        let opts = &self.shared.options;
        let capacity = opts.concurrency + self.prefetch_window();
        let busy = self.busy();
        let room = capacity.saturating_sub(busy + self.buffer.len());
        let starving = self.buffer.is_empty() && busy < opts.concurrency;
        if room > 0 && (starving || room >= capacity.div_ceil(2)) {
            room
        } else {
            0
        }
    }

    /// Jobs to hold claimed ahead of free slots now: an explicit `prefetch`,
    /// else the adaptive window.
    fn prefetch_window(&self) -> usize {
        let opts = &self.shared.options;
        match opts.prefetch {
            Some(n) => n,
            None => self.ctx().adaptive.window(opts.concurrency),
        }
    }

    /// Put one claim for up to `room` jobs on the wire.
    fn start_claim(&mut self, room: usize) {
        let shared = self.shared.clone();
        let adaptive = self.ctx().adaptive.clone();
        self.claiming = Some(tokio::spawn(async move {
            claim_timed(&shared, &adaptive, room).await
        }));
    }

    /// Wait for whichever comes first: slots freeing up, the claim
    /// answering, the park ending, `stop()`, or the next claim falling due
    /// (at the latest `idle_max`; parked, the park's own timeout).
    async fn wait(&mut self, want_claim: bool) -> Result<()> {
        let opts = &self.shared.options;
        let idle_max = Duration::from_millis(opts.idle_max_ms);
        let wake = if self.parking.is_some() {
            Instant::now() + Duration::from_millis(opts.wake_fallback_ms) + idle_max
        } else if self.claiming.is_none() && want_claim {
            self.next_claim
        } else {
            Instant::now() + idle_max
        };
        let freed = self.ctx().freed.clone();
        let shared = self.shared.clone();
        tokio::select! {
            _ = freed.notified() => Ok(()),
            _ = shared.stop_signal.notified() => Ok(()),
            claimed = answer(&mut self.claiming) => {
                self.claiming = None;
                self.on_claimed(claimed)
            }
            parked = answer(&mut self.parking) => {
                self.parking = None;
                self.on_parked(parked)
            }
            _ = tokio::time::sleep_until(wake) => Ok(()),
        }
    }

    /// Park on the wake list, the claim for the room free now queued
    /// behind the `BLPOP` (the server runs it when a token arrives or
    /// `wake_fallback_ms` passes, for producers that sent no hint). Slots
    /// only free up while parked; the loop claims the rest.
    ///
    /// Where keyspace events are heard the park lasts `wake_fallback_ms` (an
    /// event ends it); elsewhere at most [`POLL`](super::wake::POLL), with no
    /// claim queued: a park that times out is sent again, and it answers at
    /// once if pending filled meanwhile (39.12), so an idle worker sends one
    /// command per park. While the pumps' last look found nothing to do, a
    /// polling park also names the sets they look at, and its timeout
    /// stands in for their next look (pump.rs), so that one command is all
    /// an idle worker sends.
    fn park(&mut self, wake: Wake) {
        let fallback = Duration::from_millis(self.shared.options.wake_fallback_ms);
        let heard = wake.watched() || fallback <= super::wake::POLL;
        let timeout = if heard { fallback } else { super::wake::POLL };
        let room = self.claim_room() as u64;
        let names = if room == 0 || std::mem::take(&mut self.plain_park) {
            Names::WakeOnly
        } else if !heard && self.shared.plan.quiet() {
            Names::Quiet
        } else {
            Names::Pending
        };
        let shared = self.shared.clone();
        self.parking = Some(tokio::spawn(async move {
            let (client, queue, opts) = (&shared.client, &shared.queue, &shared.options);
            let (lease, cap) = (opts.lease_ms, opts.max_attempts);
            let queued =
                (room > 0 && heard).then(|| client.claim_guarded_cmd(queue, room, lease, cap));
            let claim = match queued {
                Some(Err(e)) => {
                    return Ok(Parked {
                        woken: false,
                        claimed: Some(Err(e)),
                        failed: None,
                        poll: false,
                        quiet_since: None,
                    })
                }
                Some(Ok(cmd)) => Some(cmd),
                None => None,
            };
            let poll = room > 0 && !heard;
            let sent = Instant::now();
            let woke = wake.wait(timeout, claim, names).await?;
            let claimed = match woke.then {
                Some(answer) => Some(
                    client
                        .claim_guarded_answer(queue, answer, room, lease, cap)
                        .await,
                ),
                None => None,
            };
            let quiet = names == Names::Quiet && woke.failed.is_none();
            if quiet && woke.occupied {
                // Pending or a set the pumps read holds members: they look now.
                shared.plan.stir();
            }
            Ok(Parked {
                woken: woke.woken,
                claimed,
                failed: woke.failed,
                poll,
                quiet_since: (quiet && !woke.woken).then_some(sent),
            })
        }));
    }

    /// The park ended: take the claim queued behind it, or claim now.
    /// A failed park (the wake connection could not open or dropped) falls
    /// back to the short poll once, and the next empty claim parks again
    /// on a fresh connection.
    fn on_parked(&mut self, parked: Result<Parked>) -> Result<()> {
        match parked {
            Ok(Parked {
                woken,
                claimed,
                failed: None,
                poll,
                quiet_since,
            }) => {
                if let Some(sent) = quiet_since {
                    // It found the pumps' sets absent: their next look is done.
                    self.shared.plan.vouch(sent);
                }
                if poll && !woken {
                    // A polling park timed out: nothing to claim, park again.
                    if let Some(wake) = self.wake.clone() {
                        self.park(wake);
                        return Ok(());
                    }
                }
                self.woken = woken;
                self.next_claim = Instant::now();
                if let Some(claimed) = claimed {
                    return self.on_claimed(claimed);
                }
            }
            Ok(Parked {
                failed: Some(e), ..
            }) if ends_the_run(&e) => {
                self.shared.fail(&e);
                return Err(e);
            }
            Ok(Parked {
                claimed,
                failed: Some(e),
                ..
            }) => {
                self.park_failed(&e);
                // The claim queued behind the refused BLPOP still ran: run
                // what it took, or count and report its own failure (an
                // empty one must not park again at once).
                match claimed {
                    Some(Ok(jobs)) if jobs.is_empty() => {}
                    Some(claimed) => return self.on_claimed(claimed),
                    None => {}
                }
            }
            Err(e) if e.kind() == ErrorKind::Closed => {
                log::warn!("echomq worker: {} ends: {e}", self.shared.queue);
                return Err(e);
            }
            Err(e) if ends_the_run(&e) => {
                self.shared.fail(&e);
                return Err(e);
            }
            Err(e) => self.park_failed(&e),
        }
        Ok(())
    }

    /// Report a failed park and poll once after a back-off; the next empty
    /// claim parks again on a fresh connection.
    fn park_failed(&mut self, e: &Error) {
        self.woken = false;
        log::warn!(
            "echomq worker: wake list of {} failed: {e}",
            self.shared.queue
        );
        self.shared.emit_error(e);
        let idle_max = Duration::from_millis(self.shared.options.idle_max_ms);
        self.next_claim = Instant::now() + idle_max.max(Duration::from_millis(100));
    }

    /// Take a claim's answer: jobs reset the idle back-off, an empty answer
    /// grows it (never a hot spin), the queue's concurrency ceiling or rate
    /// limit waits what the server answered, a failure is counted and
    /// retried after a pause, and a closed client ends the run.
    fn on_claimed(&mut self, claimed: Result<Vec<Job>>) -> Result<()> {
        let idle_max = Duration::from_millis(self.shared.options.idle_max_ms);
        match claimed {
            Ok(jobs) if !jobs.is_empty() => {
                if !std::mem::replace(&mut self.worked, true) {
                    // Busy again: the pumps go back to their beat.
                    let beat = Duration::from_millis(self.shared.options.pump_interval_ms);
                    self.shared.plan.due_by(Instant::now() + beat);
                }
                self.woken = false;
                self.idle = Duration::from_millis(1);
                self.next_claim = Instant::now();
                take(&self.shared, &self.held, &mut self.buffer, jobs);
            }
            Ok(_) => {
                if std::mem::take(&mut self.worked) {
                    self.shared.emit(WorkerEvent::Drained);
                }
                if std::mem::take(&mut self.woken) {
                    // A token with nothing to claim: most likely a scheduled
                    // job's hint, so let the pumps look at the schedule now.
                    self.shared.plan.due_by(Instant::now());
                    // Or a paused queue's backlog answering the park: the
                    // next one leaves pending out.
                    self.plain_park = true;
                }
                match self.wake.clone() {
                    Some(wake) => self.park(wake),
                    None => {
                        self.next_claim = Instant::now() + self.idle;
                        self.idle = (self.idle * 2).min(idle_max);
                    }
                }
            }
            // Not a failure: wait what the server answered (0 = until a
            // slot frees, i.e. the idle back-off).
            Err(e) if e.kind() == ErrorKind::RateLimited => {
                let wait = Duration::from_millis(e.retry_after_ms().unwrap_or(0));
                self.next_claim = Instant::now() + wait.max(self.idle);
                self.idle = (self.idle * 2).min(idle_max);
            }
            Err(e) if e.kind() == ErrorKind::Closed => {
                log::warn!("echomq worker: {} ends: {e}", self.shared.queue);
                return Err(e);
            }
            Err(e) if ends_the_run(&e) => {
                self.shared.fail(&e);
                return Err(e);
            }
            Err(e) => {
                let counters = &self.shared.counters;
                counters.claim_failures.fetch_add(1, Ordering::Relaxed);
                log::warn!("echomq worker: claim on {} failed: {e}", self.shared.queue);
                self.shared.emit_error(&e);
                self.next_claim = Instant::now() + idle_max.max(Duration::from_millis(100));
            }
        }
        Ok(())
    }

    /// After the loop: stop the pumps, take the jobs of a claim still on the
    /// wire, hand back every job no handler started, give running handlers
    /// the grace period (releasing those that outlive it), then stop the
    /// heartbeat and let the settler flush.
    ///
    /// Bounded whatever the server does (gone, hung, fencing us out): every
    /// step shares the grace period, and each round trip gets what is left
    /// of it, at least [`LAST_WORDS`] (so a grace of 0 still hands back what
    /// it can). A step that runs out of time is abandoned: the jobs it
    /// would have handed back keep their leases until they lapse, when the
    /// reaper hands them out again (nothing is lost).
    async fn drain(&mut self) {
        log::info!(
            "echomq worker: stopping queue={} running={} prefetched={}",
            self.shared.queue,
            self.busy(),
            self.buffer.len()
        );
        let grace = Duration::from_millis(self.shared.options.shutdown_grace_ms);
        let deadline = Instant::now() + grace;
        self.pumps.0.abort();
        if let Some(park) = self.parking.take() {
            self.end_park(park, at_least_last_words(deadline)).await;
        }
        if let Some(mut claim) = self.claiming.take() {
            match tokio::time::timeout_at(at_least_last_words(deadline), &mut claim).await {
                Ok(Ok(Ok(jobs))) => take(&self.shared, &self.held, &mut self.buffer, jobs),
                Ok(_) => {}
                Err(_) => claim.abort(),
            }
        }
        let unstarted = ids(self.buffer.drain(..));
        let by = at_least_last_words(deadline);
        self.bounded("hand back prefetched jobs", by, async {
            release(&self.shared, &self.held, unstarted).await
        })
        .await;
        self.finish_handlers(deadline).await;
        self.heartbeat.0.abort();
        self.ctx = None;
        let last = at_least_last_words(deadline);
        if let Some(mut settler) = self.settler.take() {
            if tokio::time::timeout_at(last, &mut settler).await.is_err() {
                log::warn!(
                    "echomq worker: settling on {} did not finish in time; the leases \
                     of what it held will lapse",
                    self.shared.queue
                );
                settler.abort();
            }
        }
        self.drained = true;
    }

    /// Run one step of the drain until `deadline`, abandoning it after.
    async fn bounded(&self, what: &str, deadline: Instant, step: impl Future<Output = ()>) {
        if tokio::time::timeout_at(deadline, step).await.is_err() {
            log::warn!(
                "echomq worker: could not {what} on {} in time; their leases will lapse",
                self.shared.queue
            );
        }
    }

    /// Stop a park. Its claim is queued behind the `BLPOP`, so end the
    /// `BLPOP` (`CLIENT UNBLOCK`, repeated while the park has not reached
    /// the server yet) and take the claim's jobs to hand back. If the
    /// server cannot be told, or the park does not answer within the
    /// connect timeout, drop the connection: a claim that ran in that
    /// instant is left to its lease (the reaper hands it back).
    async fn end_park(&mut self, mut park: JoinHandle<Result<Parked>>, by: Instant) {
        let Some(wake) = self.wake.clone() else {
            park.abort();
            return;
        };
        let deadline = by.min(Instant::now() + self.shared.client.options().connect_timeout);
        loop {
            let told = match tokio::time::timeout_at(deadline, wake.unblock()).await {
                Ok(told) => told,
                Err(_) => Err(Error::new(
                    ErrorKind::Timeout,
                    "the server did not answer CLIENT UNBLOCK in time",
                )),
            };
            match tokio::time::timeout(Duration::from_millis(20), &mut park).await {
                Ok(ended) => {
                    if let Ok(Ok(Parked {
                        claimed: Some(Ok(jobs)),
                        ..
                    })) = ended
                    {
                        take(&self.shared, &self.held, &mut self.buffer, jobs);
                    }
                    return;
                }
                Err(_) if told.is_ok() && Instant::now() < deadline => continue,
                Err(_) => {
                    match told {
                        // A closed client is the caller's own doing: nothing to report.
                        Err(e) if e.kind() != ErrorKind::Closed => log::warn!(
                            "echomq worker: could not end the park on {}: {e}",
                            self.shared.queue
                        ),
                        _ => {}
                    }
                    park.abort();
                    return;
                }
            }
        }
    }

    /// Wait until `deadline` (the end of the grace period) for running
    /// handlers; abort the rest and hand their jobs back.
    async fn finish_handlers(&mut self, deadline: Instant) {
        let tasks = &mut self.tasks;
        let drained = tokio::time::timeout_at(deadline, async {
            while tasks.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            self.tasks.abort_all();
            while self.tasks.join_next().await.is_some() {}
            let unfinished: Vec<(BrandedId, u64)> =
                lock(&self.held).iter().map(|(id, t)| (*id, *t)).collect();
            let last = at_least_last_words(deadline);
            self.bounded("hand back unfinished jobs", last, async {
                release(&self.shared, &self.held, unfinished).await
            })
            .await;
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if self.drained {
            return;
        }
        // Cancelled: the heartbeat and pumps stop with their `Owned`
        // handles, the handlers with the JoinSet. A claim on the wire is
        // abandoned (its jobs' leases lapse and the reaper takes them back).
        if let Some(claim) = self.claiming.take() {
            claim.abort();
        }
        if let Some(park) = self.parking.take() {
            park.abort();
        }
        self.tasks.abort_all();
        let held: Vec<(BrandedId, u64)> =
            lock(&self.held).iter().map(|(id, t)| (*id, *t)).collect();
        log::warn!(
            "echomq worker: run on {} dropped; handing back {} jobs",
            self.shared.queue,
            held.len()
        );
        if held.is_empty() {
            return;
        }
        // Without a runtime to release them on, the leases simply lapse.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let (shared, jobs) = (self.shared.clone(), self.held.clone());
            handle.spawn(async move { release(&shared, &jobs, held).await });
        }
    }
}

/// How a park ended: `woken` by a token (false: timed out or unblocked),
/// and the claim queued behind it, `None` if none was (no room).
struct Parked {
    woken: bool,
    claimed: Option<Result<Vec<Job>>>,
    /// The `BLPOP` was refused; `claimed` is still what ran behind it.
    failed: Option<Error>,
    /// A polling park (no claim queued behind it, 39.12).
    poll: bool,
    /// A park that named the pumps' sets ([`Names::Quiet`]) and timed out
    /// (or was unblocked): when it was sent. The server found them all
    /// absent when the `BLPOP` reached it, at this instant or after.
    quiet_since: Option<Instant>,
}

/// One claim for up to `room` jobs, its round trip recorded for the
/// adaptive prefetch window.
async fn claim_timed(shared: &WorkerShared, adaptive: &Adaptive, room: usize) -> Result<Vec<Job>> {
    let opts = &shared.options;
    let sent = Instant::now();
    let claimed = claim_for_worker(
        &shared.client,
        &shared.queue,
        room as u64,
        opts.lease_ms,
        opts.max_attempts,
    )
    .await;
    if claimed.is_ok() {
        adaptive.claim_took(sent.elapsed());
    }
    claimed
}

/// The outcome of the claim (or park) on the wire; never ready when there is none.
async fn answer<T>(claiming: &mut Option<JoinHandle<Result<T>>>) -> Result<T> {
    match claiming {
        Some(handle) => match handle.await {
            Ok(claimed) => claimed,
            Err(e) => Err(Error::new(
                ErrorKind::Internal,
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
    for &(id, token) in &keys {
        ctx.shared.emit(WorkerEvent::Active { id, token });
    }
    let started = Instant::now();
    let verdicts: Vec<Output> = match &ctx.shared.dispatch {
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
    let ran = started.elapsed();
    ctx.adaptive.handler_took(ran);
    // Free the slots before settling: the next claim shares a round trip with
    // this settlement instead of waiting for it.
    drop(slots);
    let settles = keys
        .into_iter()
        .zip(verdicts)
        .map(|((id, token), verdict)| {
            settle(
                &ctx.shared,
                &ctx.held,
                &ctx.settler,
                id,
                token,
                verdict,
                ran,
            )
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
                for ((id, _), verdict) in jobs.iter().zip(verdicts) {
                    if let Err(e) = verdict {
                        if let Ok(id) = BrandedId::parse(id) {
                            // Released before emitting: listeners never run under the lock.
                            let removed = lock(&held).remove(&id);
                            // Not held any more: the handler finished meanwhile and
                            // the settler took the job; its settlement reports what
                            // happened (a completion crossing this heartbeat is no loss).
                            if let Some(token) = removed {
                                log::warn!(
                                    "echomq worker: lease lost on {id} (token {token}): {e}"
                                );
                                shared.counters.lease_lost.fetch_add(1, Ordering::Relaxed);
                                shared.emit(WorkerEvent::LeaseLost { id, token });
                            }
                        }
                    }
                }
            }
            // A busy worker claims nothing for a while: its heartbeat may
            // be the first to meet the fence.
            Err(e) if ends_the_run(&e) => {
                shared.fail(&e);
                return;
            }
            Err(e) => {
                let counters = &shared.counters;
                counters.heartbeat_failures.fetch_add(1, Ordering::Relaxed);
                log::warn!("echomq worker: heartbeat on {} failed: {e}", shared.queue);
                shared.emit_error(&e);
            }
        }
    }
}

/// An error no retry of the worker's own can cure, so its run ends with it:
/// the version fence refusing the wire this worker speaks (after an
/// upgrade, on its next reconnect). Retrying would only be refused again,
/// forever; the operator must redeploy the worker at the new wire.
fn ends_the_run(e: &Error) -> bool {
    e.kind() == ErrorKind::VersionFence
}

/// The worker's claim: at wire 2.1.0 the capped claim, which dead-letters a
/// job whose attempts already reached `max_attempts` instead of running it.
async fn claim_for_worker(
    client: &crate::Client,
    queue: &str,
    room: u64,
    lease: u64,
    max_attempts: u64,
) -> Result<Vec<Job>> {
    if client.wire_version() >= crate::WireVersion::V2_1_0 {
        client.claim_capped(queue, room, lease, max_attempts).await
    } else {
        client.claim_many(queue, room, lease).await
    }
}
