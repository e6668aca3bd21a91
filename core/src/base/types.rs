//! The values the client hands back. Plain data; every binding mirrors them.

use std::fmt;

use crate::error::{Error, Result};
use crate::id::BrandedId;
use crate::wire::WireVersion;

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
    /// echomq:2.2.0: prioritized jobs waiting to be claimed, in claim order
    /// (score = `-priority`: highest priority first, then mint order).
    /// Browsed by rank only: a time range is refused (decision P.4).
    Prio,
}

impl BrowseSet {
    /// Parse a set's wire name; an unknown name is an invalid-argument error.
    pub fn parse(text: &str) -> Result<BrowseSet> {
        Ok(match text {
            "pending" => BrowseSet::Pending,
            "dead" => BrowseSet::Dead,
            "schedule" | "scheduled" => BrowseSet::Schedule,
            "active" => BrowseSet::Active,
            "prio" => BrowseSet::Prio,
            other => {
                return Err(Error::invalid_argument(format!(
                    "cannot browse {other:?}: expected pending, dead, schedule, active or prio"
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
            BrowseSet::Prio => "prio",
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

// What the repeat and stall verbs answer (verbs/repeat.rs, verbs/stall.rs),
// defined here so the reply decoders (protocol/replies.rs) can build them.
// `echomq::repeat` re-exports its own.

/// A repeatable job as stored: its spec, what it fires, and where it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Repeat {
    /// The repeat's name; fired job ids derive from it and the slot.
    pub name: String,
    /// The interval, ms, when it repeats on an interval.
    pub every_ms: Option<u64>,
    /// The cron pattern, when it repeats on a schedule.
    pub cron: Option<String>,
    /// The cron pattern's time zone (set whenever `cron` is).
    pub tz: Option<String>,
    /// The payload every fired job carries (the record's `template`).
    pub payload: Vec<u8>,
    /// The slot it waits for: unix ms by the server clock.
    pub next_run_ms: u64,
    /// No slot before this, unix ms.
    pub start_at: Option<u64>,
    /// No slot after this, unix ms.
    pub end_at: Option<u64>,
    /// Fire at most this many jobs.
    pub limit: Option<u64>,
    /// Jobs fired since the spec last changed.
    pub count: u64,
    /// The slot of the last fire, and the id of the job it enqueued.
    pub last_run_ms: Option<u64>,
    /// The id of the job the last fire enqueued.
    pub last_id: Option<BrandedId>,
}

/// What one repeat's fire did (the `repeat_fire` script's verdict).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FireOutcome {
    /// A job was enqueued for the slot.
    Fired,
    /// The slot had been fired before; nothing enqueued, the schedule advanced.
    Duplicate,
    /// The repeat no longer waits for that slot (another pump fired it, or it
    /// was upserted since); nothing changed.
    Moved,
    /// Not due yet by the server clock; nothing changed.
    Early,
    /// No record: the schedule entry was dropped.
    Gone,
    /// The slot lay past `end_at` or the limit was reached: removed unfired.
    Ended,
}

/// One verdict of `repeat_fire`.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fire {
    pub outcome: FireOutcome,
    /// The job's id when fired or a duplicate.
    pub id: Option<BrandedId>,
    /// The next slot; `None` when the repeat ended (or, for moved / early,
    /// its current slot if any).
    pub next: Option<u64>,
}

/// What `repeat_upsert` answered.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Upserted {
    /// Scheduled; `kept` when the spec was unchanged and the slot kept.
    Scheduled { repeat: Repeat, kept: bool },
    /// The name's id tag is taken by this other repeat of the queue.
    Collides(String),
}

/// What one stall-capped reap did: the ids it returned to pending and the
/// ids it dead-lettered (in lease-deadline order), so callers can publish
/// `stalled` / `dead` events for exactly these jobs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reaped {
    /// Jobs returned to pending.
    pub recovered: Vec<BrandedId>,
    /// Jobs dead-lettered for stalling too often.
    pub dead: Vec<BrandedId>,
}

impl Reaped {
    /// How many lapsed leases this reap handled.
    pub fn len(&self) -> usize {
        self.recovered.len() + self.dead.len()
    }

    /// `true` when the reap touched no job.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

// What the protocol upgrade answers (ops/upgrade.rs), defined here with the
// other values the client hands back, so the verbs layer (a blocking form of
// the verb) can name it too.

/// What [`Client::upgrade_protocol`](crate::Client::upgrade_protocol) found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpgradeReport {
    /// The version the record held.
    pub from: WireVersion,
    /// The version asked for.
    pub to: WireVersion,
    /// The probes that ran and passed, by registration.
    pub probes: Vec<String>,
    /// `CLIENT LIST` lines (`id addr name lib-ver`) of connections of this
    /// client that speak a version older than `to`; they keep working until
    /// they reconnect, when the fence refuses them.
    pub older_clients: Vec<String>,
    /// False when the server's `CLIENT LIST` does not show library info
    /// (servers before Redis 7.2 / Valkey 7.2), so older clients cannot be told.
    pub clients_known: bool,
    /// True when the record was moved (false for a dry run, a declined
    /// confirmation, or when it already held `to`).
    pub upgraded: bool,
    /// True when the record already held `to`: nothing was checked or moved.
    pub already_current: bool,
    /// The scratch queue the probes ran on (deleted afterwards), if they ran.
    pub scratch_queue: Option<String>,
}

/// One finished step of [`Client::upgrade_protocol_with`](crate::Client::upgrade_protocol_with), in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpgradeStep<'a> {
    /// The record holds `from`, as expected.
    RecordChecked {
        /// The version the record held.
        found: &'a str,
    },
    /// One probe passed on the scratch queue.
    ProbePassed {
        /// The registration the probe checked.
        probe: &'a str,
    },
    /// The scratch queue's keys were deleted (`keys` = how many existed).
    ScratchDeleted {
        /// The scratch queue's name.
        queue: &'a str,
        /// How many of its keys existed and were deleted.
        keys: u64,
    },
    /// `CLIENT LIST` was read: the other connections of this client that
    /// speak a version older than `to` (`known` false: the server cannot tell).
    ClientsListed {
        /// The `CLIENT LIST` lines of those connections.
        older: &'a [String],
        /// False when the server does not show library info.
        known: bool,
    },
    /// The record now holds `to`.
    RecordSet,
}
