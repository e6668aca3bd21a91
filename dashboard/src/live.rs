//! The live view: one task samples every shown queue each `refresh` period
//! (counts, paused, the oldest pending job) and publishes a snapshot that
//! the overview endpoint answers and the event stream pushes. The samples
//! of the last minutes are kept to draw throughput and failure rate.
//!
//! This periodic sampling is the path issue #19 requires as the fallback of
//! the `emq:{q}:events` subscriber (pub/sub is at-most-once); the events
//! path, once the core has a subscriber, only needs to call
//! [`Sampler::sample_now`] when an event arrives.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use echomq::{BrowseSet, Client, Counts};
use serde::Serialize;
use tokio::sync::{watch, Notify};

/// How far back the throughput chart reaches.
pub const HISTORY: Duration = Duration::from_secs(10 * 60);
/// The chart's bucket width.
pub const BUCKET: Duration = Duration::from_secs(10);

/// What the overview shows; pushed whole on every change.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Snapshot {
    pub now_ms: u64,
    pub server: String,
    pub protocol: &'static str,
    pub read_only: bool,
    pub refresh_ms: u64,
    pub bucket_ms: u64,
    /// `{emq}:bundle` fields another runtime wrote with different script SHAs.
    pub bundle_mismatches: Vec<Mismatch>,
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

/// Samples the queues and publishes [`Snapshot`]s.
pub struct Sampler {
    client: Client,
    queues: Vec<String>,
    base: Snapshot,
    history: Mutex<HashMap<String, VecDeque<Sample>>>,
    tx: watch::Sender<Arc<Snapshot>>,
    wake: Notify,
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
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
        })
    }

    pub fn subscribe(&self) -> watch::Receiver<Arc<Snapshot>> {
        self.tx.subscribe()
    }

    pub fn latest(&self) -> Arc<Snapshot> {
        self.tx.borrow().clone()
    }

    /// Ask for a fresh sample now (after an action, or an event).
    pub fn sample_now(&self) {
        self.wake.notify_one();
    }

    /// Sample every `refresh` (or sooner when woken) until the process ends.
    pub async fn run(self: Arc<Self>, refresh: Duration) {
        loop {
            let snapshot = self.sample().await;
            self.tx.send_replace(Arc::new(snapshot));
            tokio::select! {
                _ = tokio::time::sleep(refresh) => {}
                _ = self.wake.notified() => {}
            }
        }
    }

    async fn sample(&self) -> Snapshot {
        let now = now_ms();
        let reads =
            futures_util::future::join_all(self.queues.iter().map(|q| read_queue(&self.client, q)))
                .await;
        let mut history = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        let queues = self
            .queues
            .iter()
            .zip(reads)
            .map(|(name, read)| {
                let samples = history.entry(name.clone()).or_default();
                match read {
                    Ok(reading) => {
                        record(samples, now, &reading.counts);
                        view(name, &reading, samples, now, None)
                    }
                    Err(e) => view(name, &Reading::default(), samples, now, Some(e.to_string())),
                }
            })
            .collect();
        Snapshot {
            now_ms: now,
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
            queues,
            ..self.base.clone()
        }
    }
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
    fn a_counter_that_goes_back_is_no_progress() {
        let samples: VecDeque<Sample> = [s(0, 50, 5), s(1000, 0, 0)].into();
        assert_eq!(per_minute(&samples, 1000), (0.0, 0.0));
    }
}
