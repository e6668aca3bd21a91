//! The overview's health panel: the deployment's checks from `emq doctor`
//! (the core's probe judged by `echomq::health::server_checks` — fence,
//! bundle, eviction policy, persistence, cluster, latency, clock), re-read
//! every [`HEALTH_EVERY`] on a short-lived connection of its own.

use std::sync::Arc;
use std::time::Duration;

use echomq::health::{self, server_checks};
use serde::Serialize;

use crate::live::{now_ms, Sampler, Trigger};

/// How often the deployment is probed. A probe opens one connection and
/// makes about ten round trips, so it runs far less often than sampling.
pub const HEALTH_EVERY: Duration = Duration::from_secs(15);
/// A probe that has not answered by then counts as failed.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The latest verdict, as the overview shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Health {
    /// When the probe behind these checks answered (unix ms); 0 before the first.
    pub checked_at_ms: u64,
    /// The worst check: `PASS`, `WARN` or `FAIL`; `UNKNOWN` until the first
    /// probe answered, or when the last one failed (see `error`).
    pub status: &'static str,
    /// One line per check, as `emq doctor --json` has them.
    pub checks: Vec<HealthCheck>,
    /// Why the last probe failed, if it did (the checks are then the last good ones).
    pub error: Option<String>,
}

impl Default for Health {
    fn default() -> Self {
        Health {
            checked_at_ms: 0,
            status: "UNKNOWN",
            checks: Vec::new(),
            error: None,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct HealthCheck {
    pub check: &'static str,
    pub status: &'static str,
    pub detail: String,
}

/// Probe now and every [`HEALTH_EVERY`], handing each verdict to the sampler.
pub async fn watch(sampler: Arc<Sampler>) {
    loop {
        let reading = tokio::time::timeout(PROBE_TIMEOUT, sampler.client().probe()).await;
        let previous = sampler.health();
        let next = match reading {
            Ok(Ok(probe)) => {
                let checks = server_checks(&probe);
                Health {
                    checked_at_ms: now_ms(),
                    status: health::worst(&checks).word(),
                    checks: checks
                        .into_iter()
                        .map(|c| HealthCheck {
                            check: c.name,
                            status: c.status.word(),
                            detail: c.detail,
                        })
                        .collect(),
                    error: None,
                }
            }
            Ok(Err(e)) => failed(previous, e.to_string()),
            Err(_) => failed(
                previous,
                format!("the health probe did not answer within {PROBE_TIMEOUT:?}"),
            ),
        };
        sampler.set_health(next);
        sampler.wake(Trigger::Health);
        tokio::time::sleep(HEALTH_EVERY).await;
    }
}

/// A failed probe keeps the last checks for context but says it is unknown now.
fn failed(previous: Health, error: String) -> Health {
    Health {
        status: "UNKNOWN",
        error: Some(error),
        ..previous
    }
}
