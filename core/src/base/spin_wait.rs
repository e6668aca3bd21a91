//! Spin, then park: how a direct call waits for its answer (issue #16 §3,
//! decision 16.10).
//!
//! A direct call ([`crate::direct`]) writes its request and, with nothing
//! else to run, its current-thread runtime parks the thread in `epoll_wait`
//! until the reply arrives. On a virtual machine waking a parked thread
//! costs tens of microseconds, a large part of a loopback round trip. So for
//! a short while the waiting call polls the socket instead (a zero-timeout
//! `epoll_wait` per scheduler yield) and only parks when that time is up.
//!
//! The budget adapts, as the worker's prefetch window does: it is a little
//! more than this connection's typical call, and nothing at all once calls
//! typically take longer than [`CAP`] (a server across a network, where a
//! wake-up is small against the round trip and spinning would only burn the
//! caller's CPU). So a caller spends at most [`CAP`] of CPU per call, and
//! only where that buys a faster answer. `EMQ_SPIN_US` overrides the budget
//! (`0` turns spinning off), for measurements.

use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The longest a call spins, and the typical call time above which it does
/// not spin at all.
pub(crate) const CAP: Duration = Duration::from_micros(200);

/// Not measured yet: the first call parks, and its time starts the average.
const UNMEASURED: u32 = u32::MAX;

/// One connection's running average of its calls' durations, in µs.
pub(crate) struct SpinBudget {
    typical_us: AtomicU32,
}

impl SpinBudget {
    pub(crate) fn new() -> Self {
        SpinBudget {
            typical_us: AtomicU32::new(UNMEASURED),
        }
    }

    /// How long the next call may spin before it parks.
    pub(crate) fn budget(&self) -> Duration {
        if let Some(fixed) = overridden() {
            return fixed;
        }
        let typical = self.typical_us.load(Ordering::Relaxed);
        if typical == UNMEASURED || u128::from(typical) > CAP.as_micros() {
            return Duration::ZERO;
        }
        // Half as much again as a typical call covers most of the spread
        // of a loopback round trip without spinning through a slow one.
        Duration::from_micros(u64::from(typical) * 3 / 2).min(CAP)
    }

    /// Fold one call's duration into the average (weight 1/8).
    pub(crate) fn observe(&self, took: Duration) {
        let took = u32::try_from(took.as_micros()).unwrap_or(UNMEASURED - 1);
        let typical = self.typical_us.load(Ordering::Relaxed);
        let next = if typical == UNMEASURED {
            took
        } else {
            let (t, n) = (u64::from(typical), u64::from(took));
            u32::try_from((t * 7 + n) / 8).unwrap_or(UNMEASURED - 1)
        };
        self.typical_us.store(next, Ordering::Relaxed);
    }
}

/// `EMQ_SPIN_US`, read once: a fixed budget in µs instead of the adaptive one.
fn overridden() -> Option<Duration> {
    static FIXED: OnceLock<Option<Duration>> = OnceLock::new();
    *FIXED.get_or_init(|| {
        let raw = std::env::var("EMQ_SPIN_US").ok()?;
        match raw.trim().parse::<u64>() {
            Ok(us) => Some(Duration::from_micros(us)),
            Err(_) => {
                log::warn!("echomq: EMQ_SPIN_US={raw:?} is not a number of µs; ignored");
                None
            }
        }
    })
}

/// Drive `call` on a current-thread runtime, polling its sockets instead of
/// parking until `budget` has passed.
///
/// Each `yield_now` defers this task, which makes the current-thread
/// scheduler poll its I/O driver with a zero timeout instead of blocking;
/// once the budget is spent the spinner waits forever and the runtime parks
/// as it always did.
pub(crate) async fn spin_then_park<F: Future>(call: F, budget: Duration) -> F::Output {
    if budget.is_zero() {
        return call.await;
    }
    let deadline = Instant::now() + budget;
    let spinner = async move {
        while Instant::now() < deadline {
            tokio::task::yield_now().await;
        }
        std::future::pending::<()>().await
    };
    tokio::select! {
        biased;
        answer = call => answer,
        () = spinner => unreachable!("the spinner never finishes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_call_parks_and_a_slow_server_is_never_spun_for() {
        let b = SpinBudget::new();
        assert_eq!(b.budget(), Duration::ZERO);
        b.observe(Duration::from_micros(80));
        assert_eq!(b.budget(), Duration::from_micros(120));
        for _ in 0..40 {
            b.observe(Duration::from_millis(1));
        }
        assert_eq!(b.budget(), Duration::ZERO);
    }

    #[test]
    fn the_budget_never_passes_the_cap() {
        let b = SpinBudget::new();
        b.observe(CAP);
        assert_eq!(b.budget(), CAP);
    }

    #[test]
    fn a_spinning_call_still_answers_after_the_budget() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let late = async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            7
        };
        let got = rt.block_on(spin_then_park(late, Duration::from_micros(100)));
        assert_eq!(got, 7);
    }
}
