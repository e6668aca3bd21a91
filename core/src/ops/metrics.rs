//! Prometheus text exposition for a set of queues, rendered once here for
//! every runtime (`metrics_text` / `metricsText`, the CLI's HTTP endpoint).
//!
//! Per queue, read from the server in one round trip each (`counts`):
//! - gauges `echomq_pending_jobs`, `echomq_active_jobs`, `echomq_scheduled_jobs`,
//!   `echomq_dead_jobs`;
//! - counters `echomq_completed_total` and `echomq_failed_total`, from
//!   `metrics:completed` / `metrics:failed` (every runtime's jobs);
//!
//! and for the workers of this process (since it started):
//! - counters `echomq_worker_processed_total` (handler calls that ended),
//!   `echomq_worker_failed_total` (of those, failures), `echomq_worker_retried_total`
//!   (failures scheduled for another attempt);
//! - histogram `echomq_worker_handler_duration_seconds`.
//!
//! Every series carries a `queue` label.

use prometheus::{Encoder, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};

use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::keys;
use crate::worker::series::families;

fn render_error(e: prometheus::Error) -> Error {
    Error::new(ErrorKind::InvalidArgument, format!("metrics: {e}"))
}

impl Client {
    /// Prometheus text exposition (format 0.0.4) for `queues`: the server's
    /// numbers for each (one `counts` round trip per queue) and this process's
    /// worker series for them. Every queue name is checked before any I/O.
    pub async fn metrics_text(&self, queues: &[&str]) -> Result<String> {
        for q in queues {
            keys::validate_queue(q)?;
        }
        let counts =
            futures_util::future::try_join_all(queues.iter().map(|q| self.counts(q))).await?;
        let registry = Registry::new();
        let gauge = |name: &str, help: &str| -> Result<IntGaugeVec> {
            let g = IntGaugeVec::new(Opts::new(name, help), &["queue"]).map_err(render_error)?;
            registry
                .register(Box::new(g.clone()))
                .map_err(render_error)?;
            Ok(g)
        };
        let counter = |name: &str, help: &str| -> Result<IntCounterVec> {
            let c = IntCounterVec::new(Opts::new(name, help), &["queue"]).map_err(render_error)?;
            registry
                .register(Box::new(c.clone()))
                .map_err(render_error)?;
            Ok(c)
        };
        let pending = gauge("echomq_pending_jobs", "Jobs waiting to be claimed.")?;
        let active = gauge("echomq_active_jobs", "Jobs claimed and leased.")?;
        let scheduled = gauge(
            "echomq_scheduled_jobs",
            "Jobs waiting for their run-at time.",
        )?;
        let dead = gauge("echomq_dead_jobs", "Jobs in the dead set.")?;
        let completed = counter(
            "echomq_completed_total",
            "Jobs completed, by every runtime (metrics:completed).",
        )?;
        let failed = counter(
            "echomq_failed_total",
            "Jobs dead-lettered, by every runtime (metrics:failed).",
        )?;
        for (queue, c) in queues.iter().zip(&counts) {
            let q = [*queue];
            pending.with_label_values(&q).set(c.pending as i64);
            active.with_label_values(&q).set(c.active as i64);
            scheduled.with_label_values(&q).set(c.scheduled as i64);
            dead.with_label_values(&q).set(c.dead as i64);
            completed.with_label_values(&q).inc_by(c.completed);
            failed.with_label_values(&q).inc_by(c.failed);
        }
        // This process's worker series, for the queues asked about only.
        let f = families();
        let ours = |family: &IntCounterVec, name: &str, help: &str| -> Result<()> {
            let out = counter(name, help)?;
            for q in queues {
                if let Ok(c) = family.get_metric_with_label_values(&[q]) {
                    out.with_label_values(&[q]).inc_by(c.get());
                }
            }
            Ok(())
        };
        ours(
            &f.processed,
            "echomq_worker_processed_total",
            "Jobs whose handler ended, in this process's workers.",
        )?;
        ours(
            &f.failed,
            "echomq_worker_failed_total",
            "Jobs whose handler failed, in this process's workers.",
        )?;
        ours(
            &f.retried,
            "echomq_worker_retried_total",
            "Failed jobs scheduled for another attempt, in this process's workers.",
        )?;
        let mut families = registry.gather();
        let durations: Vec<_> = f
            .duration
            .collect_filtered(queues)
            .into_iter()
            .filter(|m| !m.get_metric().is_empty())
            .collect();
        families.extend(durations);
        let mut out = Vec::new();
        TextEncoder::new()
            .encode(&families, &mut out)
            .map_err(render_error)?;
        String::from_utf8(out).map_err(|e| Error::new(ErrorKind::Protocol, e.to_string()))
    }
}

/// The histogram family keeping only the series of the given queues.
trait CollectFiltered {
    fn collect_filtered(&self, queues: &[&str]) -> Vec<prometheus::proto::MetricFamily>;
}

impl CollectFiltered for HistogramVec {
    fn collect_filtered(&self, queues: &[&str]) -> Vec<prometheus::proto::MetricFamily> {
        use prometheus::core::Collector;
        self.collect()
            .into_iter()
            .map(|mut family| {
                let kept: Vec<_> = family
                    .take_metric()
                    .into_iter()
                    .filter(|m| {
                        m.get_label()
                            .iter()
                            .any(|l| l.get_name() == "queue" && queues.contains(&l.get_value()))
                    })
                    .collect();
                family.set_metric(kept);
                family
            })
            .collect()
    }
}
