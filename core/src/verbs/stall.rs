//! The stall cap (echomq:2.1.0): a job whose handler kills its worker is
//! reaped back at most `max_stalls - 1` times, then dead-lettered with
//! `last_error` = `stalled`; and a claim never hands out a job whose attempts
//! already reached the worker's `max_attempts` (the guarded claim, `limits.rs`).

use crate::client::{check_positive, Client};
use crate::error::Result;
use crate::keys::QueueKeys;
use crate::replies;
use crate::scripts;
use crate::types::Reaped;
use crate::wire::WireVersion;

impl Client {
    /// Reap up to `limit` lapsed leases, counting a stall on each: at
    /// `max_stalls` stalls a job goes to dead (`last_error` = `stalled`,
    /// `metrics:failed` + 1), the others back to pending. One script, atomic.
    pub async fn reap_stalled(&self, queue: &str, limit: u64, max_stalls: u64) -> Result<Reaped> {
        self.require(WireVersion::V2_1_0, "reap_stalled")?;
        let keys = QueueKeys::new(queue)?;
        check_positive("limit", limit)?;
        check_positive("max_stalls", max_stalls)?;
        let mut k = vec![
            keys.active.as_str(),
            &keys.pending,
            &keys.dead,
            &keys.failed,
        ];
        if self.speaks_priority() {
            k.push(&keys.prio);
        }
        let answer = self
            .transport
            .script(
                self.routed(&scripts::REAP_STALLED, &scripts::REAP_STALLED_ROUTED),
                &k,
                &[
                    keys.base.as_bytes(),
                    limit.to_string().as_bytes(),
                    max_stalls.to_string().as_bytes(),
                ],
            )
            .await?;
        let reaped = replies::reaped(answer)?;
        self.publish_reaped(&keys, &reaped);
        if !reaped.recovered.is_empty() {
            self.send_wake_hint(&keys).await;
        }
        Ok(reaped)
    }

    /// The queue events of a reap, once its answer proves them
    /// (PROTOCOL-DECISIONS 12.6): `stalled` for each job returned to pending,
    /// `dead` with `error` = `stalled` for each one the cap dead-lettered.
    /// The worker's reap pump and `emq pump` both reap through here.
    fn publish_reaped(&self, keys: &QueueKeys, reaped: &Reaped) {
        let Some(mut events) = self.events(keys) else {
            return;
        };
        for id in &reaped.recovered {
            events.add("stalled", id.as_str(), &[]);
        }
        for id in &reaped.dead {
            events.add("dead", id.as_str(), &[("error", "stalled")]);
        }
        events.send();
    }
}
