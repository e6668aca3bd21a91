//! This process's worker series: per queue, handler calls that ended,
//! failed and were retried, and how long handlers ran. Each worker feeds its
//! own from its events; [`Client::metrics_text`](crate::Client::metrics_text)
//! ([`crate::metrics`]) renders them with the server's numbers.

use std::sync::OnceLock;
use std::time::Duration;

use prometheus::{HistogramOpts, HistogramVec, IntCounter, IntCounterVec, Opts};

use super::WorkerEvent;

/// This process's worker series, one family each, labelled by queue.
pub(crate) struct Families {
    pub(crate) processed: IntCounterVec,
    pub(crate) failed: IntCounterVec,
    pub(crate) retried: IntCounterVec,
    pub(crate) duration: HistogramVec,
}

pub(crate) fn families() -> &'static Families {
    static FAMILIES: OnceLock<Families> = OnceLock::new();
    FAMILIES.get_or_init(|| {
        let counter = |name: &str, help: &str| {
            IntCounterVec::new(Opts::new(name, help), &["queue"]).expect("valid counter")
        };
        Families {
            processed: counter(
                "echomq_worker_processed_total",
                "Jobs whose handler ended, in this process's workers.",
            ),
            failed: counter(
                "echomq_worker_failed_total",
                "Jobs whose handler failed, in this process's workers.",
            ),
            retried: counter(
                "echomq_worker_retried_total",
                "Failed jobs scheduled for another attempt, in this process's workers.",
            ),
            duration: HistogramVec::new(
                HistogramOpts::new(
                    "echomq_worker_handler_duration_seconds",
                    "How long handlers ran, in this process's workers.",
                )
                .buckets(vec![
                    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
                    60.0,
                ]),
                &["queue"],
            )
            .expect("valid histogram"),
        }
    })
}

/// One worker's series, resolved once so an event costs a few atomic adds.
pub(crate) struct WorkerMetrics {
    processed: IntCounter,
    failed: IntCounter,
    retried: IntCounter,
    duration: prometheus::Histogram,
}

impl WorkerMetrics {
    pub(crate) fn for_queue(queue: &str) -> WorkerMetrics {
        let f = families();
        WorkerMetrics {
            processed: f.processed.with_label_values(&[queue]),
            failed: f.failed.with_label_values(&[queue]),
            retried: f.retried.with_label_values(&[queue]),
            duration: f.duration.with_label_values(&[queue]),
        }
    }

    pub(crate) fn observe(&self, event: &WorkerEvent) {
        let handled = |duration: &Duration| {
            self.processed.inc();
            self.duration.observe(duration.as_secs_f64());
        };
        match event {
            WorkerEvent::Completed { duration, .. } => handled(duration),
            WorkerEvent::Failed {
                duration,
                retry_in_ms,
                ..
            } => {
                handled(duration);
                self.failed.inc();
                if retry_in_ms.is_some() {
                    self.retried.inc();
                }
            }
            _ => {}
        }
    }
}
