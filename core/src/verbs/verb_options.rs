//! Option structs for the verbs whose argument lists grew long: enqueue
//! variants, retry and browse. Each has a `Default` that takes the core's
//! defaults, so a caller names only what it changes; the bindings map
//! keyword arguments (Python) and option objects (Node) onto them.

use crate::defaults;
use crate::error::{Error, Result};
use crate::types::TimeRange;

/// How [`crate::Client::enqueue`] (and each item of
/// [`crate::Client::enqueue_many`]) writes a job. The default enqueues now
/// under a freshly minted id. Build one with the chained setters:
/// `EnqueueOptions::default().delay_ms(500).id(receipt)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnqueueOptions {
    /// A caller-chosen id (the producer's receipt): a row that already holds
    /// it answers `duplicate: true` and is left untouched. Default: minted.
    pub id: Option<String>,
    /// Run at this absolute unix-ms instant (the caller's clock).
    pub run_at_ms: Option<u64>,
    /// Run this many ms after the server's now.
    pub delay_ms: Option<u64>,
    /// echomq:2.1.0: a second enqueue with the same dedup id, while the job
    /// holding it is pending, scheduled or active, answers `duplicate` with
    /// that job's id. `[A-Za-z0-9._-]{1,255}`. Enqueues now, under a minted
    /// id (not with `id`, `run_at_ms` or `delay_ms`).
    pub dedup_id: Option<String>,
    /// Release the dedup id after this long even if its job still lives
    /// (throttle mode). `None`: held until the job completes, is removed or
    /// goes dead.
    pub dedup_ttl_ms: Option<u64>,
    /// echomq:2.2.0: claimed before every job of a lower priority and every
    /// job without one; FIFO (mint order) within one priority. `1..=`
    /// [`MAX_PRIORITY`], higher first; `None` or `Some(0)`: no priority (the
    /// job waits in pending exactly as at 2.1.0). Works with a time
    /// (scheduled first, then promoted into `prio`) and with `dedup_id`.
    pub priority: Option<u32>,
}

/// The highest priority a job may have (echomq:2.2.0); `1` is the lowest
/// and a job without one is claimed after every prioritized job.
pub const MAX_PRIORITY: u32 = 1_000_000;

/// When a job written by [`EnqueueOptions`] may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum When {
    Now,
    At(u64),
    In(u64),
}

impl EnqueueOptions {
    /// Under this caller-chosen id (see [`EnqueueOptions::id`](#structfield.id)).
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// At this absolute unix-ms instant.
    pub fn run_at_ms(mut self, at: u64) -> Self {
        self.run_at_ms = Some(at);
        self
    }

    /// This many ms after the server's now.
    pub fn delay_ms(mut self, delay: u64) -> Self {
        self.delay_ms = Some(delay);
        self
    }

    /// Deduplicated by this id (echomq:2.1.0).
    pub fn dedup_id(mut self, dedup_id: impl Into<String>) -> Self {
        self.dedup_id = Some(dedup_id.into());
        self
    }

    /// Release the dedup id after this many ms (throttle mode).
    pub fn dedup_ttl_ms(mut self, ttl: u64) -> Self {
        self.dedup_ttl_ms = Some(ttl);
        self
    }

    /// With this priority (echomq:2.2.0; `1..=`[`MAX_PRIORITY`], higher is
    /// claimed first, `0` is none).
    pub fn priority(mut self, priority: u32) -> Self {
        self.priority = Some(priority);
        self
    }

    /// The priority to write, if any: `None` and `Some(0)` are none; above
    /// [`MAX_PRIORITY`] is refused before the wire.
    pub(crate) fn checked_priority(&self) -> Result<Option<u32>> {
        match self.priority {
            None | Some(0) => Ok(None),
            Some(p) if p > MAX_PRIORITY => Err(Error::invalid_argument(format!(
                "priority {p} is out of range: 1..={MAX_PRIORITY} (0 or none: no priority)"
            ))),
            Some(p) => Ok(Some(p)),
        }
    }

    /// The items of a batch of plain payloads for
    /// [`crate::Client::enqueue_many`]: each with the default options.
    pub fn defaults_for<P: AsRef<[u8]>>(payloads: &[P]) -> Vec<(&P, EnqueueOptions)> {
        payloads
            .iter()
            .map(|p| (p, EnqueueOptions::default()))
            .collect()
    }

    /// `run_at_ms` and `delay_ms` together are ambiguous: refused before the
    /// wire; so is a dedup id beside a chosen id or a time (the dedup script
    /// enqueues now, under a minted id).
    pub(crate) fn when(&self) -> Result<When> {
        if self.dedup_id.is_some()
            && (self.id.is_some() || self.run_at_ms.is_some() || self.delay_ms.is_some())
        {
            return Err(Error::invalid_argument(
                "dedup_id enqueues now under a minted id: not with id, run_at_ms or delay_ms",
            ));
        }
        match (self.run_at_ms, self.delay_ms) {
            (Some(_), Some(_)) => Err(Error::invalid_argument(
                "give run_at_ms or delay_ms, not both",
            )),
            (Some(at), None) => Ok(When::At(at)),
            (None, Some(delay)) => Ok(When::In(delay)),
            (None, None) => Ok(When::Now),
        }
    }
}

/// How [`crate::Client::retry_with`] settles a failed attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryOptions {
    /// Run again this many ms after the server's now. Default 0.
    pub delay_ms: u64,
    /// Dead-letter once the job's attempts reach this. Default
    /// [`defaults::MAX_ATTEMPTS`] (the worker's default).
    pub max_attempts: u64,
    /// The failure text, stored as `last_error`. Default empty.
    pub error: String,
}

impl Default for RetryOptions {
    fn default() -> Self {
        RetryOptions {
            delay_ms: 0,
            max_attempts: defaults::MAX_ATTEMPTS,
            error: String::new(),
        }
    }
}

/// Which ids [`crate::Client::browse_with`] answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrowseOptions {
    /// Newest first instead of oldest first. Default false.
    pub newest_first: bool,
    /// At most this many ids. Default [`defaults::BROWSE_LIMIT`].
    pub limit: u64,
    /// Only ids inside `[from_ms, to_ms)` (mint time for pending / dead,
    /// run-at or deadline for schedule / active). Default: all.
    pub range: Option<TimeRange>,
}

impl Default for BrowseOptions {
    fn default() -> Self {
        BrowseOptions {
            newest_first: false,
            limit: defaults::BROWSE_LIMIT,
            range: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_cores() {
        assert_eq!(RetryOptions::default().max_attempts, defaults::MAX_ATTEMPTS);
        assert_eq!(BrowseOptions::default().limit, defaults::BROWSE_LIMIT);
        assert_eq!(EnqueueOptions::default().when().unwrap(), When::Now);
    }

    #[test]
    fn at_and_delay_together_are_refused() {
        let both = EnqueueOptions {
            run_at_ms: Some(1),
            delay_ms: Some(1),
            ..Default::default()
        };
        assert_eq!(
            both.when().unwrap_err().kind(),
            crate::ErrorKind::InvalidArgument
        );
    }
}
