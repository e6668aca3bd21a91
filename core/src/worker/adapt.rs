//! The adaptive prefetch window, the default when `prefetch` is `None`.
//!
//! Prefetching pays only while handlers are short compared with a claim round
//! trip: then slots free faster than the next claim can answer, and jobs
//! claimed ahead keep them busy. With slow handlers a prefetched job just sits
//! claimed while another worker could run it (Celery's prefetch multiplier
//! problem). So the window is the number of jobs this worker's slots finish
//! during one claim round trip — `concurrency × claim / slot time`, rounded
//! down, at most `concurrency` — and zero until both have been measured. A
//! worker with 50 ms handlers and a sub-millisecond claim prefetches nothing;
//! a no-op handler gets the full window after its first batch.

use std::sync::Mutex;
use std::time::Duration;

/// How much a new measurement moves the running estimate.
const WEIGHT: f64 = 0.2;

#[derive(Default)]
pub(crate) struct Adaptive {
    estimates: Mutex<Estimates>,
}

#[derive(Default, Clone, Copy)]
struct Estimates {
    /// A claim's round trip, µs.
    claim_us: Option<f64>,
    /// How long one handler call keeps its slots (a batch's whole run), µs.
    slot_us: Option<f64>,
}

fn blend(old: Option<f64>, sample: Duration) -> Option<f64> {
    let x = sample.as_secs_f64() * 1e6;
    Some(old.map_or(x, |old| old + WEIGHT * (x - old)))
}

impl Adaptive {
    fn with<T>(&self, f: impl FnOnce(&mut Estimates) -> T) -> T {
        f(&mut self.estimates.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub(crate) fn claim_took(&self, took: Duration) {
        self.with(|e| e.claim_us = blend(e.claim_us, took));
    }

    pub(crate) fn handler_took(&self, took: Duration) {
        self.with(|e| e.slot_us = blend(e.slot_us, took));
    }

    /// Jobs to claim ahead of free slots for a worker of `concurrency` slots.
    pub(crate) fn window(&self, concurrency: usize) -> usize {
        let e = self.with(|e| *e);
        match (e.claim_us, e.slot_us) {
            (Some(claim), Some(slot)) => {
                let finished = concurrency as f64 * claim / slot.max(1.0);
                (finished.floor() as usize).min(concurrency)
            }
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_follows_handler_time_against_the_claim() {
        let a = Adaptive::default();
        assert_eq!(a.window(4), 0, "nothing measured: no prefetch");
        a.claim_took(Duration::from_micros(300));
        a.handler_took(Duration::from_millis(50));
        assert_eq!(a.window(4), 0, "slow handlers: none");
        let fast = Adaptive::default();
        fast.claim_took(Duration::from_micros(300));
        fast.handler_took(Duration::from_micros(5));
        assert_eq!(fast.window(50), 50, "no-op handlers: the full window");
        let mid = Adaptive::default();
        mid.claim_took(Duration::from_millis(1));
        mid.handler_took(Duration::from_millis(10));
        assert_eq!(mid.window(50), 5);
    }
}
