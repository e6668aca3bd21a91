//! The values the client hands back. Plain data; every binding mirrors them.

use std::fmt;

use crate::error::{Error, Result};
use crate::id::BrandedId;

/// The answer to an enqueue: the id (the receipt) and whether the row already existed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enqueued {
    /// The job's id (the existing job's when `duplicate`).
    pub id: BrandedId,
    /// `true` when the enqueue matched an existing job and wrote nothing.
    pub duplicate: bool,
}

/// A claimed job: the id, its payload bytes, and the fencing token that must
/// accompany its settlement.
#[derive(Clone, PartialEq, Eq)]
pub struct Job {
    /// The job's id.
    pub id: BrandedId,
    /// The bytes the producer enqueued.
    pub payload: Vec<u8>,
    /// The lease token; settle and extend calls must present it.
    pub token: u64,
    /// Which attempt this claim is: 1 on the first claim, 2 after one retry
    /// or lapsed lease, ... (the row's `attempts` once claimed; under
    /// echomq:2.x the token is minted from the same counter, so the two are
    /// equal at claim time, but only `token` settles and only `attempts`
    /// means "how many tries").
    pub attempts: u64,
}

impl fmt::Debug for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Job")
            .field("id", &self.id.as_str())
            .field("token", &self.token)
            .field("attempts", &self.attempts)
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
    /// The outcome's wire name.
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
    /// Jobs waiting to be claimed.
    pub pending: u64,
    /// Jobs claimed under a live or lapsed lease.
    pub active: u64,
    /// Jobs waiting for their run-at time (delayed or retrying).
    pub scheduled: u64,
    /// Jobs dead-lettered.
    pub dead: u64,
    /// `metrics:completed` count (jobs completed since the queue began).
    pub completed: u64,
    /// `metrics:failed` count (jobs dead-lettered since the queue began).
    pub failed: u64,
}

/// The `state` field of a job row.
///
/// [`JobState::Unknown`] is a state this client does not know, written by
/// another runtime sharing the deployment (the reference runtime's flow
/// parents are `awaiting_children`, say): the row is still readable, the
/// word kept as written. Not `Copy`, for that word.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum JobState {
    /// Waiting to be claimed.
    Pending,
    /// Claimed under a lease.
    Active,
    /// Waiting for its run-at time.
    Scheduled,
    /// Dead-lettered.
    Dead,
    /// A state word this client does not know (kept as stored; empty when
    /// the row has no `state` field).
    Unknown(String),
}

impl JobState {
    /// The state's name: `pending`, `active`, `scheduled`, `dead`, or
    /// `unknown` for a word this client does not know (see [`JobState::raw`]).
    pub fn as_str(&self) -> &'static str {
        match self {
            JobState::Pending => "pending",
            JobState::Active => "active",
            JobState::Scheduled => "scheduled",
            JobState::Dead => "dead",
            JobState::Unknown(_) => "unknown",
        }
    }

    /// The `state` field as stored (the word itself for an unknown state).
    pub fn raw(&self) -> &str {
        match self {
            JobState::Unknown(word) => word,
            known => known.as_str(),
        }
    }

    /// Is this one of the four states of echomq:2.0.0?
    pub fn is_known(&self) -> bool {
        !matches!(self, JobState::Unknown(_))
    }

    /// The state a row's `state` field names; a word this client does not
    /// know is [`JobState::Unknown`], never an error.
    pub fn parse(text: &str) -> JobState {
        match text {
            "pending" => JobState::Pending,
            "active" => JobState::Active,
            "scheduled" => JobState::Scheduled,
            "dead" => JobState::Dead,
            other => JobState::Unknown(other.to_string()),
        }
    }
}

/// The field as stored (`awaiting_children` for that unknown state).
impl fmt::Display for JobState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.raw())
    }
}

/// A job row as stored.
#[derive(Clone, PartialEq, Eq)]
pub struct JobInfo {
    /// The job's id.
    pub id: BrandedId,
    /// The set that holds it.
    pub state: JobState,
    /// Attempts started so far.
    pub attempts: u64,
    /// The bytes the producer enqueued.
    pub payload: Vec<u8>,
    /// The last failure's message, if any.
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
    /// Parse a set's wire name; an unknown name is an invalid-argument error.
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

    /// The set's wire name.
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
    /// Range start, unix ms, inclusive.
    pub from_ms: u64,
    /// Range end, unix ms, inclusive.
    pub to_ms: u64,
}
