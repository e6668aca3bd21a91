//! The values the client hands back. Plain data; every binding mirrors them.

use std::fmt;

use crate::error::{Error, ErrorKind, Result};
use crate::id::BrandedId;

/// The answer to an enqueue: the id (the receipt) and whether the row already existed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enqueued {
    pub id: BrandedId,
    pub duplicate: bool,
}

/// A claimed job: the id, its payload bytes, and the fencing token that must
/// accompany its settlement.
#[derive(Clone, PartialEq, Eq)]
pub struct Job {
    pub id: BrandedId,
    pub payload: Vec<u8>,
    pub token: u64,
}

impl fmt::Debug for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Job")
            .field("id", &self.id.as_str())
            .field("token", &self.token)
            .field("payload_len", &self.payload.len())
            .finish()
    }
}

/// Where a failed job went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryOutcome {
    /// Back in `schedule`, to run again after the delay.
    Scheduled,
    /// At max attempts: in the `dead` set with its `last_error`.
    Dead,
}

impl RetryOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            RetryOutcome::Scheduled => "scheduled",
            RetryOutcome::Dead => "dead",
        }
    }
}

/// Sizes of a queue's four sets and its two counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub pending: u64,
    pub active: u64,
    pub scheduled: u64,
    pub dead: u64,
    /// `metrics:completed` count (jobs completed since the queue began).
    pub completed: u64,
    /// `metrics:failed` count (jobs dead-lettered since the queue began).
    pub failed: u64,
}

/// The `state` field of a job row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Pending,
    Active,
    Scheduled,
    Dead,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Pending => "pending",
            JobState::Active => "active",
            JobState::Scheduled => "scheduled",
            JobState::Dead => "dead",
        }
    }

    pub fn parse(text: &str) -> Result<JobState> {
        Ok(match text {
            "pending" => JobState::Pending,
            "active" => JobState::Active,
            "scheduled" => JobState::Scheduled,
            "dead" => JobState::Dead,
            other => {
                return Err(Error::new(
                    ErrorKind::Server,
                    format!("job row holds unknown state {other:?}"),
                ))
            }
        })
    }
}

/// A job row as stored.
#[derive(Clone, PartialEq, Eq)]
pub struct JobInfo {
    pub id: BrandedId,
    pub state: JobState,
    pub attempts: u64,
    pub payload: Vec<u8>,
    pub last_error: Option<String>,
    /// The row field `progress` (echomq:2.1.0): the last value the holder
    /// wrote with `update_progress`, as its JSON text.
    pub progress: Option<String>,
}

impl fmt::Debug for JobInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobInfo")
            .field("id", &self.id.as_str())
            .field("state", &self.state)
            .field("attempts", &self.attempts)
            .field("payload_len", &self.payload.len())
            .field("last_error", &self.last_error)
            .field("progress", &self.progress)
            .finish()
    }
}

/// The sets `browse` can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrowseSet {
    /// Lex order = mint order; the range filters by mint time.
    Pending,
    /// Lex order = mint order; the range filters by mint time.
    Dead,
    /// Score = run-at (unix ms); the range filters by run-at.
    Schedule,
    /// Score = lease deadline (unix ms); the range filters by deadline.
    Active,
}

impl BrowseSet {
    pub fn parse(text: &str) -> Result<BrowseSet> {
        Ok(match text {
            "pending" => BrowseSet::Pending,
            "dead" => BrowseSet::Dead,
            "schedule" | "scheduled" => BrowseSet::Schedule,
            "active" => BrowseSet::Active,
            other => {
                return Err(Error::invalid_argument(format!(
                    "cannot browse {other:?}: expected pending, dead, schedule or active"
                )))
            }
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            BrowseSet::Pending => "pending",
            BrowseSet::Dead => "dead",
            BrowseSet::Schedule => "schedule",
            BrowseSet::Active => "active",
        }
    }
}

/// A half-open range of unix milliseconds, `[from_ms, to_ms)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    pub from_ms: u64,
    pub to_ms: u64,
}
