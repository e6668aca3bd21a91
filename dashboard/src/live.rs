//! The live view: one task samples every shown queue (counts, paused, the
//! oldest pending job) and publishes a snapshot that the overview endpoint
//! answers and the event stream pushes. The samples of the last minutes are
//! kept to draw throughput and failure rate.
//!
//! Two things make it sample. The queues' `emq:{q}:events` channel (one
//! subscription for all shown queues): each burst of events re-reads just
//! the queues they name, at most once per [`EVENT_GAP`], so a job a worker
//! completed leaves the page within moments. And the periodic refresh of
//! every queue, which issue #19 requires as the fallback because pub/sub is
//! at-most-once (a subscriber reconnecting, or a publisher with events off,
//! loses messages; the next refresh still shows the truth).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use echomq::{BrowseSet, Client, Counts, QueueEvent, Subscription, LISTENER_RECHECK};
use serde::Serialize;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

use crate::health::Health;

/// How far back the throughput chart reaches.
pub const HISTORY: Duration = Duration::from_secs(10 * 60);
/// The chart's bucket width.
pub const BUCKET: Duration = Duration::from_secs(10);
/// At most one event-driven sample per this long: a busy queue publishes
/// thousands of events a second, and the page needs only the latest state.
pub const EVENT_GAP: Duration = Duration::from_millis(200);
/// Pause between attempts to subscribe when the first one failed.
const RESUBSCRIBE: Duration = Duration::from_secs(5);
/// After subscribing, the queues are read again once every publisher has
/// asked the server whether anyone listens: until then a publisher that had
/// just found the channel empty drops its events ([`LISTENER_RECHECK`]).
/// The margin covers that publisher's round trip.
const AFTER_SUBSCRIBING: Duration = LISTENER_RECHECK.saturating_add(Duration::from_millis(50));

/// Why a snapshot was taken; the page re-reads its job list for any reason
/// but `event`, and for `event` only when its queue's `events` count moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Trigger {
    /// The periodic sample of every queue (and the first one).
    #[default]
    Refresh,
    /// Queue events arrived; only the queues they name were re-read.
    Event,
    /// An operator action through this dashboard.
    Action,
    /// The events subscription (re)attached, and again once publishers that
    /// had found nobody listening publish again: every queue re-read, since
    /// events from before then may be lost.
    Subscribed,
    /// A new health verdict; the queues were not re-read.
    Health,
}

impl Trigger {
    /// When two wakes meet before the sampler runs, the one that reads more
    /// wins: a health verdict must not turn a pending event re-read into
    /// none (the snapshot carries the latest health either way).
    fn reads(self) -> u8 {
        match self {
            Trigger::Health => 0,
            Trigger::Event => 1,
            Trigger::Refresh | Trigger::Action | Trigger::Subscribed => 2,
        }
    }

    /// The reason to keep when `why` wakes a sampler already woken for
    /// `pending` (if anything).
    fn merge(pending: Option<Trigger>, why: Trigger) -> Trigger {
        match pending {
            Some(p) if p.reads() >= why.reads() => p,
            _ => why,
        }
    }
}

/// What the overview shows; pushed whole on every change.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Snapshot {
    pub now_ms: u64,
    pub server: String,
    pub protocol: &'static str,
    pub read_only: bool,
    pub refresh_ms: u64,
    pub bucket_ms: u64,
    /// Why this snapshot was taken.
    pub trigger: Trigger,
    /// Whether the `emq:{q}:events` subscription is attached (else only
    /// the periodic refresh moves the page).
    pub live_events: bool,
    /// `{emq}:bundle` fields another runtime wrote with different script
    /// SHAs, as this dashboard's client saw them when it connected.
    pub bundle_mismatches: Vec<Mismatch>,
    /// The deployment's checks (see `health.rs`).
    pub health: Health,
    pub queues: Vec<QueueView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Mismatch {
    pub field: String,
    pub ours: String,
    pub theirs: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct QueueView {
    pub name: String,
    pub pending: u64,
    pub active: u64,
    pub scheduled: u64,
    pub dead: u64,
    pub completed: u64,
    pub failed: u64,
    pub paused: bool,
    /// Mint time of the oldest pending job (its age is `now_ms - this`).
    pub oldest_pending_ms: Option<u64>,
    /// Jobs completed / dead-lettered per minute over the last minute.
    pub completed_per_min: f64,
    pub failed_per_min: f64,
    /// Per bucket (oldest first, `bucket_ms` wide): completed and failed.
    pub series: Vec<[u64; 2]>,
    /// Events received for this queue since the dashboard started.
    pub events: u64,
    /// Set when this queue could not be read at the last sample.
    pub error: Option<String>,
}

/// One reading of a queue's counters.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at_ms: u64,
    completed: u64,
    failed: u64,
}

/// What the events told since the last sample. One lock for both, so a
/// snapshot's per-queue event count never includes an event whose queue it
/// did not re-read: the page skips an event snapshot whose count did not
/// move, so a count published early would hide the re-read that follows.
#[derive(Default)]
struct Noted {
    /// Queues named by events since the last sample that re-read them.
    dirty: HashSet<String>,
    /// Events received per queue since the dashboard started.
    counts: HashMap<String, u64>,
}

/// Samples the queues and publishes [`Snapshot`]s.
pub struct Sampler {
    client: Client,
    queues: Vec<String>,
    base: Snapshot,
    history: Mutex<HashMap<String, VecDeque<Sample>>>,
    tx: watch::Sender<Arc<Snapshot>>,
    wake: Notify,
    /// Why the sampler was woken early (merged by [`Trigger::reads`]).
    reason: Mutex<Option<Trigger>>,
    noted: Mutex<Noted>,
    live_events: AtomicBool,
    health: Mutex<Health>,
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Sampler {
    pub fn new(client: Client, queues: Vec<String>, base: Snapshot) -> Arc<Sampler> {
        let (tx, _) = watch::channel(Arc::new(base.clone()));
        Arc::new(Sampler {
            client,
            queues,
            base,
            history: Default::default(),
            tx,
            wake: Notify::new(),
            reason: Mutex::new(None),
            noted: Default::default(),
            live_events: AtomicBool::new(false),
            health: Default::default(),
        })
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn subscribe(&self) -> watch::Receiver<Arc<Snapshot>> {
        self.tx.subscribe()
    }

    pub fn latest(&self) -> Arc<Snapshot> {
        self.tx.borrow().clone()
    }

    pub fn health(&self) -> Health {
        lock(&self.health).clone()
    }

    pub fn set_health(&self, health: Health) {
        *lock(&self.health) = health;
    }

    /// Ask for a fresh sample now, after an action.
    pub fn sample_now(&self) {
        self.wake(Trigger::Action);
    }

    /// Ask for a sample sooner than the refresh, saying why.
    pub fn wake(&self, why: Trigger) {
        {
            let mut reason = lock(&self.reason);
            *reason = Some(Trigger::merge(*reason, why));
        }
        self.wake.notify_one();
    }

    /// Sample every `refresh` (or sooner when woken) until the process ends.
    /// The periodic deadline does not move when events wake the sampler, so
    /// a queue that never publishes is still re-read on time.
    pub async fn run(self: Arc<Self>, refresh: Duration) {
        let mut trigger = Trigger::Refresh;
        let mut next_refresh = Instant::now();
        loop {
            if trigger == Trigger::Refresh {
                next_refresh = Instant::now() + refresh;
            }
            let snapshot = self.sample(trigger).await;
            self.tx.send_replace(Arc::new(snapshot));
            trigger = tokio::select! {
                _ = tokio::time::sleep_until(next_refresh) => Trigger::Refresh,
                _ = self.wake.notified() => lock(&self.reason).take().unwrap_or(Trigger::Action),
            };
        }
    }

    /// Follow the shown queues' events, waking the sampler for each burst.
    /// `first` is the subscription made before the dashboard started
    /// serving; without it (it failed) this keeps trying.
    pub async fn follow_events(self: Arc<Self>, mut first: Option<Subscription>) {
        loop {
            let mut events = match first.take() {
                Some(events) => events,
                None => match self.client.subscribe_many(&self.queues).await {
                    Ok(events) => events,
                    Err(_) => {
                        tokio::time::sleep(RESUBSCRIBE).await;
                        continue;
                    }
                },
            };
            self.live_events.store(true, Ordering::Relaxed);
            self.wake(Trigger::Subscribed);
            let sampler = self.clone();
            tokio::spawn(async move {
                tokio::time::sleep(AFTER_SUBSCRIBING).await;
                sampler.wake(Trigger::Subscribed);
            });
            while let Some(event) = events.next().await {
                self.note(&event);
                while let Some(more) = events.try_next() {
                    self.note(&more);
                }
                self.wake(Trigger::Event);
                tokio::time::sleep(EVENT_GAP).await;
            }
            self.live_events.store(false, Ordering::Relaxed);
        }
    }

    fn note(&self, event: &QueueEvent) {
        let mut noted = lock(&self.noted);
        noted.dirty.insert(event.queue.clone());
        *noted.counts.entry(event.queue.clone()).or_default() += 1;
    }

    /// One snapshot. `Event` re-reads only the queues events named, `Health`
    /// none (the views, event counts included, are the latest ones: the
    /// events since stay noted for the next re-read); anything else every
    /// queue.
    async fn sample(&self, trigger: Trigger) -> Snapshot {
        let latest = self.latest();
        let (dirty, events) = if trigger == Trigger::Health {
            Default::default()
        } else {
            let mut noted = lock(&self.noted);
            (std::mem::take(&mut noted.dirty), noted.counts.clone())
        };
        let reuse = |name: &str| -> Option<QueueView> {
            let re_read = match trigger {
                Trigger::Event => dirty.contains(name),
                Trigger::Health => false,
                Trigger::Refresh | Trigger::Action | Trigger::Subscribed => true,
            };
            if re_read {
                return None;
            }
            latest.queues.iter().find(|v| v.name == name).cloned()
        };
        let now = now_ms();
        let reads = futures_util::future::join_all(self.queues.iter().map(|q| async {
            match reuse(q) {
                Some(view) => Read::Kept(view),
                None => Read::Fresh(read_queue(&self.client, q).await),
            }
        }))
        .await;
        let mut history = lock(&self.history);
        let queues = self
            .queues
            .iter()
            .zip(reads)
            .map(|(name, read)| {
                let samples = history.entry(name.clone()).or_default();
                let mut shown = match read {
                    // A kept view keeps its event count too (see `Noted`).
                    Read::Kept(view) => return view,
                    Read::Fresh(Ok(reading)) => {
                        record(samples, now, &reading.counts);
                        view(name, &reading, samples, now, None)
                    }
                    Read::Fresh(Err(e)) => {
                        view(name, &Reading::default(), samples, now, Some(e.to_string()))
                    }
                };
                shown.events = events.get(name).copied().unwrap_or(0);
                shown
            })
            .collect();
        Snapshot {
            now_ms: now,
            trigger,
            live_events: self.live_events.load(Ordering::Relaxed),
            bundle_mismatches: self
                .client
                .bundle_mismatches()
                // Only a closed client has none to report; the queues say why.
                .unwrap_or_default()
                .into_iter()
                .map(|m| Mismatch {
                    field: m.field,
                    ours: m.ours,
                    theirs: m.theirs,
                })
                .collect(),
            health: self.health(),
            queues,
            ..self.base.clone()
        }
    }
}

/// A queue in one sample: its latest view kept, or read afresh.
enum Read {
    Kept(QueueView),
    Fresh(echomq::Result<Reading>),
}

/// What one sample reads of a queue.
#[derive(Debug, Default)]
struct Reading {
    counts: Counts,
    paused: bool,
    oldest_pending_ms: Option<u64>,
}

/// One queue's reading: three round trips, run together.
async fn read_queue(client: &Client, q: &str) -> echomq::Result<Reading> {
    let (counts, paused, oldest) = tokio::join!(
        client.counts(q),
        client.is_paused(q),
        client.browse(q, BrowseSet::Pending, false, 1, None)
    );
    Ok(Reading {
        counts: counts?,
        paused: paused?,
        oldest_pending_ms: oldest?.first().map(|id| id.minted_at_ms()),
    })
}

/// Keep this reading's counters, and forget those older than the chart.
fn record(samples: &mut VecDeque<Sample>, now: u64, counts: &Counts) {
    samples.push_back(Sample {
        at_ms: now,
        completed: counts.completed,
        failed: counts.failed,
    });
    let keep_ms = (HISTORY + BUCKET).as_millis() as u64;
    while samples
        .front()
        .is_some_and(|s| now.saturating_sub(s.at_ms) > keep_ms)
    {
        samples.pop_front();
    }
}

fn view(
    name: &str,
    reading: &Reading,
    samples: &VecDeque<Sample>,
    now: u64,
    error: Option<String>,
) -> QueueView {
    let c = &reading.counts;
    let (completed_per_min, failed_per_min) = per_minute(samples, now);
    QueueView {
        name: name.to_string(),
        pending: c.pending,
        active: c.active,
        scheduled: c.scheduled,
        dead: c.dead,
        completed: c.completed,
        failed: c.failed,
        paused: reading.paused,
        oldest_pending_ms: reading.oldest_pending_ms,
        completed_per_min,
        failed_per_min,
        series: series(samples, now),
        events: 0,
        error,
    }
}

/// Counter increase between two samples (a counter that went back, e.g. a
/// flushed database, counts as no progress rather than a negative rate).
fn delta(a: &Sample, b: &Sample) -> [u64; 2] {
    [
        b.completed.saturating_sub(a.completed),
        b.failed.saturating_sub(a.failed),
    ]
}

/// Rates over the last minute (or over what has been sampled so far).
fn per_minute(samples: &VecDeque<Sample>, now: u64) -> (f64, f64) {
    let Some(last) = samples.back() else {
        return (0.0, 0.0);
    };
    let first = samples
        .iter()
        .find(|s| now.saturating_sub(s.at_ms) <= 60_000)
        .unwrap_or(last);
    let span_ms = last.at_ms.saturating_sub(first.at_ms);
    if span_ms == 0 {
        return (0.0, 0.0);
    }
    let [c, f] = delta(first, last);
    let per_min = 60_000.0 / span_ms as f64;
    (c as f64 * per_min, f as f64 * per_min)
}

/// Completed and failed per bucket over [`HISTORY`], oldest bucket first.
fn series(samples: &VecDeque<Sample>, now: u64) -> Vec<[u64; 2]> {
    let bucket = BUCKET.as_millis() as u64;
    let n = (HISTORY.as_millis() as u64 / bucket) as usize;
    let start = now.saturating_sub(n as u64 * bucket);
    let mut out = vec![[0u64; 2]; n];
    for (a, b) in samples.iter().zip(samples.iter().skip(1)) {
        if b.at_ms < start {
            continue;
        }
        let i = (((b.at_ms - start) / bucket) as usize).min(n - 1);
        let [c, f] = delta(a, b);
        out[i][0] += c;
        out[i][1] += f;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(at_ms: u64, completed: u64, failed: u64) -> Sample {
        Sample {
            at_ms,
            completed,
            failed,
        }
    }

    #[test]
    fn rates_and_buckets_come_from_counter_deltas() {
        let now = 1_000_000;
        let samples: VecDeque<Sample> = [
            s(now - 30_000, 100, 1),
            s(now - 15_000, 130, 1),
            s(now, 160, 4),
        ]
        .into();
        let (c, f) = per_minute(&samples, now);
        assert_eq!((c, f), (120.0, 6.0));
        let series = series(&samples, now);
        assert_eq!(series.len(), 60);
        assert_eq!(series.iter().map(|b| b[0]).sum::<u64>(), 60);
        assert_eq!(series.last().unwrap(), &[30, 3]);
    }

    #[test]
    fn a_health_verdict_never_cancels_a_pending_re_read() {
        use Trigger::*;
        // Before, a health verdict landing between queue events and their
        // sample made that sample re-read nothing, and the page waited for
        // the next refresh.
        assert_eq!(Trigger::merge(Some(Event), Health), Event);
        assert_eq!(Trigger::merge(Some(Health), Event), Event);
        assert_eq!(Trigger::merge(Some(Event), Refresh), Refresh);
        assert_eq!(Trigger::merge(Some(Action), Event), Action);
        assert_eq!(Trigger::merge(None, Health), Health);
    }

    #[test]
    fn a_counter_that_goes_back_is_no_progress() {
        let samples: VecDeque<Sample> = [s(0, 50, 5), s(1000, 0, 0)].into();
        assert_eq!(per_minute(&samples, 1000), (0.0, 0.0));
    }
}
