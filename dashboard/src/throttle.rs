//! Failed token attempts, counted per client address: after a few free
//! failures each one makes that address wait, twice as long as the one
//! before, up to a cap; a right token resets the count. Guessing a token
//! through the login form or an `Authorization` header then costs minutes
//! per try instead of one round trip.
//!
//! A small map rather than a rate-limiting crate: `governor`'s keyed limiter
//! meters a steady rate and has no notion of "reset on success" or of a delay
//! that doubles, and its keyed store grows with every address unless swept.
//! This map is bounded: entries idle past [`FORGET_AFTER`] are dropped when it
//! is full, and when every entry is recent, new addresses share one overflow
//! entry (so flooding it from many addresses throttles the flood, and evicts
//! no one's count).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failures an address may make before any delay (a mistyped token or two).
pub const FREE_FAILURES: u32 = 3;
/// The longest delay one failure imposes.
pub const MAX_DELAY: Duration = Duration::from_secs(300);
/// An address with no failure for this long is forgotten (when room is needed).
pub const FORGET_AFTER: Duration = Duration::from_secs(900);
/// Addresses tracked at most (plus the shared overflow entry).
pub const MAX_TRACKED: usize = 4096;

/// Who an attempt is counted against: an IPv4 address, an IPv6 /64 (one
/// host usually holds a whole /64), or the shared overflow entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Client {
    Address(IpAddr),
    Overflow,
}

fn client_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        },
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    failures: u32,
    last_failure: Instant,
    locked_until: Instant,
}

/// The failed attempts of every client address (see the module doc).
pub struct LoginThrottle {
    /// The delay of the first failure past [`FREE_FAILURES`].
    base: Duration,
    capacity: usize,
    entries: Mutex<HashMap<Client, Entry>>,
}

impl LoginThrottle {
    pub fn new(base: Duration) -> LoginThrottle {
        LoginThrottle::with_capacity(base, MAX_TRACKED)
    }

    fn with_capacity(base: Duration, capacity: usize) -> LoginThrottle {
        LoginThrottle {
            base,
            capacity,
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<Client, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The entry `ip` is counted under right now: its own, or, when it has
    /// none and the map is full, the shared overflow entry.
    fn client(&self, map: &HashMap<Client, Entry>, ip: IpAddr) -> Client {
        let own = Client::Address(client_of(ip));
        if map.contains_key(&own) || map.len() < self.capacity {
            own
        } else {
            Client::Overflow
        }
    }

    /// How long `ip` must still wait before an attempt is checked, if at all.
    pub fn wait(&self, ip: IpAddr, now: Instant) -> Option<Duration> {
        let map = self.entries();
        let entry = map.get(&self.client(&map, ip))?;
        let left = entry.locked_until.saturating_duration_since(now);
        (!left.is_zero()).then_some(left)
    }

    /// Count a failed attempt of `ip`; answers the delay it imposes (`None`
    /// while the address is within its free failures).
    pub fn failed(&self, ip: IpAddr, now: Instant) -> Option<Duration> {
        let mut map = self.entries();
        if map.len() >= self.capacity && !map.contains_key(&Client::Address(client_of(ip))) {
            map.retain(|_, e| now.saturating_duration_since(e.last_failure) < FORGET_AFTER);
        }
        let client = self.client(&map, ip);
        let entry = map.entry(client).or_insert(Entry {
            failures: 0,
            last_failure: now,
            locked_until: now,
        });
        entry.failures = entry.failures.saturating_add(1);
        entry.last_failure = now;
        let delay = self.delay(entry.failures);
        if let Some(d) = delay {
            entry.locked_until = now + d;
        }
        delay
    }

    /// A right token from `ip`: its count starts again.
    pub fn succeeded(&self, ip: IpAddr) {
        self.entries().remove(&Client::Address(client_of(ip)));
    }

    /// The delay after the `failures`-th failure: none for the free ones,
    /// then base, 2 × base, 4 × base … up to [`MAX_DELAY`] (or base, if larger).
    fn delay(&self, failures: u32) -> Option<Duration> {
        let past = failures.checked_sub(FREE_FAILURES + 1)?;
        let cap = MAX_DELAY.max(self.base);
        let doubled = self.base.saturating_mul(1u32 << past.min(20));
        Some(doubled.min(cap))
    }
}

/// Whole seconds for a `Retry-After` header: rounded up, at least 1.
pub fn retry_after_secs(wait: Duration) -> u64 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    secs.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn delays_double_past_the_free_failures_up_to_the_cap() {
        let t = LoginThrottle::new(SECOND);
        let now = Instant::now();
        let a = ip("10.0.0.1");
        for _ in 0..FREE_FAILURES {
            assert_eq!(t.failed(a, now), None);
            assert_eq!(t.wait(a, now), None);
        }
        let delays: Vec<_> = (0..12).map(|_| t.failed(a, now).unwrap()).collect();
        assert_eq!(&delays[..4], &[SECOND, 2 * SECOND, 4 * SECOND, 8 * SECOND]);
        assert_eq!(delays[11], MAX_DELAY);
        assert_eq!(t.wait(a, now), Some(MAX_DELAY));
        assert_eq!(t.wait(a, now + MAX_DELAY), None);
        // Another address is not affected; success resets.
        assert_eq!(t.wait(ip("10.0.0.2"), now), None);
        t.succeeded(a);
        assert_eq!(t.wait(a, now), None);
        assert_eq!(t.failed(a, now), None);
    }

    #[test]
    fn an_ipv6_host_is_counted_by_its_64() {
        let t = LoginThrottle::new(SECOND);
        let now = Instant::now();
        for i in 0..=FREE_FAILURES {
            t.failed(ip(&format!("2001:db8::{i}")), now);
        }
        assert!(t.wait(ip("2001:db8::ffff"), now).is_some());
        assert!(t.wait(ip("2001:db8:0:1::1"), now).is_none());
        // A v4-mapped address is its v4 address.
        for _ in 0..=FREE_FAILURES {
            t.failed(ip("::ffff:10.0.0.9"), now);
        }
        assert!(t.wait(ip("10.0.0.9"), now).is_some());
    }

    #[test]
    fn the_map_is_bounded_and_a_flood_shares_one_entry() {
        let t = LoginThrottle::with_capacity(SECOND, 8);
        let now = Instant::now();
        for i in 0..100u32 {
            t.failed(IpAddr::V4(i.into()), now);
        }
        assert_eq!(t.entries().len(), 9, "8 addresses and the overflow");
        // The overflow entry took 92 failures: new addresses wait.
        assert!(t.wait(ip("192.0.2.1"), now).is_some());
        // Idle entries are forgotten when room is needed.
        let later = now + FORGET_AFTER;
        assert_eq!(t.failed(ip("192.0.2.7"), later), None);
        assert_eq!(t.entries().len(), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(1)), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(2001)), 3);
    }
}
