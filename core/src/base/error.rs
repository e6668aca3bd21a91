//! One error type for every runtime. Bindings map [`ErrorKind`] to their own
//! exception classes, error codes or status numbers; they never parse messages.

use std::fmt;

/// The stable kind of an [`Error`]. The numeric value is the C ABI status code
/// and must never be reused for another meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorKind {
    /// `EMQKIND`: the enqueue script refused the id's namespace.
    Kind = 1,
    /// `EMQSTALE`: the fencing token no longer matches, or the job is no longer held.
    Stale = 2,
    /// The job's row does not exist (completed, removed, or never enqueued).
    Gone = 3,
    /// `extend` on a job that is no longer in active (a reaper took it back).
    LeaseLost = 4,
    /// `requeue_dead` on a job that is not in the dead set.
    NotDead = 5,
    /// `{emq}:version` holds another protocol version; carries the value found.
    VersionFence = 6,
    /// Not a valid 14-byte branded id.
    InvalidId = 7,
    /// A queue name outside `[A-Za-z0-9._-]{1,128}`, or `emq`.
    InvalidQueue = 8,
    /// A bad argument caught before the wire (zero lease, oversized payload, ...).
    InvalidArgument = 9,
    /// The connection could not be made or was lost.
    Connection = 10,
    /// The server did not answer in time.
    Timeout = 11,
    /// An `EMQ*` class word this version does not know.
    Protocol = 12,
    /// Any other error reply from the server.
    Server = 13,
    /// `remove` on a job that is currently active.
    JobActive = 14,
    /// Another runtime deployed different script bytes under the same names
    /// (an error only with the `strict_bundle` option).
    BundleMismatch = 15,
    /// The client (or worker) was closed.
    Closed = 16,
    /// The verb needs a newer wire version than the client was told to speak
    /// (answered before any network I/O).
    Unsupported = 17,
    /// `EMQRATE`: the queue's global concurrency or rate limit refused the
    /// claim; carries how long to wait ([`Error::retry_after_ms`]).
    RateLimited = 18,
    /// A transient server state (`LOADING`, `BUSY`, `TRYAGAIN`, `CLUSTERDOWN`,
    /// `MASTERDOWN`, `READONLY`, no reachable node) outlasted the retries
    /// inside the response timeout. The request did not run; retrying is safe.
    Unavailable = 20,
    /// The write happened on the master but fewer replicas than
    /// `wait_replicas` acknowledged it within `wait_timeout_ms`: it may be
    /// lost if that master fails now. Carries the job id.
    NotDurable = 21,
    /// A batch call lost its connection part way: the error carries, per
    /// item, whether it was written, not written, or is unknown
    /// ([`Error::batch_items`]), so a retry with the same ids is exact.
    PartialBatch = 22,
    /// A bug inside EchoMQ (a panic) caught before it could cross into the
    /// caller's language; the operation did not finish.
    Internal = 23,
    /// The job a caller waited on went dead (`wait_for_result`); carries its
    /// `last_error` ([`Error::last_error`]).
    JobDead = 24,
}

impl ErrorKind {
    /// Every kind, in code order (bindings use it to build their tables).
    pub const ALL: [ErrorKind; 23] = [
        ErrorKind::Kind,
        ErrorKind::Stale,
        ErrorKind::Gone,
        ErrorKind::LeaseLost,
        ErrorKind::NotDead,
        ErrorKind::VersionFence,
        ErrorKind::InvalidId,
        ErrorKind::InvalidQueue,
        ErrorKind::InvalidArgument,
        ErrorKind::Connection,
        ErrorKind::Timeout,
        ErrorKind::Protocol,
        ErrorKind::Server,
        ErrorKind::JobActive,
        ErrorKind::BundleMismatch,
        ErrorKind::Closed,
        ErrorKind::Unsupported,
        ErrorKind::RateLimited,
        ErrorKind::Unavailable,
        ErrorKind::NotDurable,
        ErrorKind::PartialBatch,
        ErrorKind::Internal,
        ErrorKind::JobDead,
    ];

    /// The stable string code (Node's `err.code`, log lines, docs).
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::Kind => "EMQKIND",
            ErrorKind::Stale => "EMQSTALE",
            ErrorKind::Gone => "EMQ_GONE",
            ErrorKind::LeaseLost => "EMQ_LEASE_LOST",
            ErrorKind::NotDead => "EMQ_NOT_DEAD",
            ErrorKind::VersionFence => "EMQ_VERSION_FENCE",
            ErrorKind::InvalidId => "EMQ_INVALID_ID",
            ErrorKind::InvalidQueue => "EMQ_INVALID_QUEUE",
            ErrorKind::InvalidArgument => "EMQ_INVALID_ARGUMENT",
            ErrorKind::Connection => "EMQ_CONNECTION",
            ErrorKind::Timeout => "EMQ_TIMEOUT",
            ErrorKind::Protocol => "EMQ_PROTOCOL",
            ErrorKind::Server => "EMQ_SERVER",
            ErrorKind::JobActive => "EMQ_JOB_ACTIVE",
            ErrorKind::BundleMismatch => "EMQ_BUNDLE_MISMATCH",
            ErrorKind::Closed => "EMQ_CLOSED",
            ErrorKind::Unsupported => "EMQ_UNSUPPORTED",
            ErrorKind::RateLimited => "EMQRATE",
            ErrorKind::Unavailable => "EMQ_UNAVAILABLE",
            ErrorKind::NotDurable => "EMQ_NOT_DURABLE",
            ErrorKind::PartialBatch => "EMQ_PARTIAL_BATCH",
            ErrorKind::Internal => "EMQ_INTERNAL",
            ErrorKind::JobDead => "EMQ_JOB_DEAD",
        }
    }

    /// The C status number.
    pub fn status(self) -> i32 {
        self as i32
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A fact an error carries beside its kind and message. Which kinds carry
/// which facts is declared once, in [`ErrorKind::facts`]; every binding
/// derives its attributes, properties and accessors from that table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fact {
    /// The id of the job the error is about ([`Error::job_id`]).
    JobId,
    /// The value found in `{emq}:version` ([`Error::found`]).
    Found,
    /// The unknown `EMQ*` class word the server sent ([`Error::class_word`]).
    Word,
    /// A dead job's `last_error`; may be absent ([`Error::last_error`]).
    LastError,
    /// How long to wait before claiming again, ms ([`Error::retry_after_ms`]).
    RetryAfterMs,
    /// A partial batch's per-item verdicts ([`Error::batch_items`]).
    Items,
}

impl Fact {
    /// Every fact, in declaration order.
    pub const ALL: [Fact; 6] = [
        Fact::JobId,
        Fact::Found,
        Fact::Word,
        Fact::LastError,
        Fact::RetryAfterMs,
        Fact::Items,
    ];

    /// The `snake_case` name: Python's attribute, C's accessor suffix
    /// (`emq_error_<name>`).
    pub fn name(self) -> &'static str {
        match self {
            Fact::JobId => "job_id",
            Fact::Found => "found",
            Fact::Word => "word",
            Fact::LastError => "last_error",
            Fact::RetryAfterMs => "retry_after_ms",
            Fact::Items => "items",
        }
    }

    /// The `camelCase` name: Node's property.
    pub fn camel_name(self) -> &'static str {
        match self {
            Fact::JobId => "jobId",
            Fact::Found => "found",
            Fact::Word => "word",
            Fact::LastError => "lastError",
            Fact::RetryAfterMs => "retryAfterMs",
            Fact::Items => "items",
        }
    }
}

/// The value of one fact of one error (see [`Error::fact`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactValue<'a> {
    /// A text fact (job id, found, word, last error).
    Text(&'a str),
    /// A number fact (retry after, ms).
    Number(u64),
    /// A partial batch's items.
    Items(&'a [BatchItem]),
}

impl ErrorKind {
    /// The facts an error of this kind carries: the one table the bindings
    /// derive from. A declared fact may still be absent in one error (a dead
    /// job with no `last_error` recorded); an undeclared one never appears.
    pub const fn facts(self) -> &'static [Fact] {
        match self {
            // About one job the caller named: which one.
            ErrorKind::Stale
            | ErrorKind::Gone
            | ErrorKind::LeaseLost
            | ErrorKind::NotDead
            | ErrorKind::JobActive
            | ErrorKind::NotDurable => &[Fact::JobId],
            ErrorKind::JobDead => &[Fact::JobId, Fact::LastError],
            ErrorKind::VersionFence => &[Fact::Found],
            ErrorKind::Protocol => &[Fact::Word],
            ErrorKind::RateLimited => &[Fact::RetryAfterMs],
            ErrorKind::PartialBatch => &[Fact::Items],
            ErrorKind::Kind
            | ErrorKind::InvalidId
            | ErrorKind::InvalidQueue
            | ErrorKind::InvalidArgument
            | ErrorKind::Connection
            | ErrorKind::Timeout
            | ErrorKind::Server
            | ErrorKind::BundleMismatch
            | ErrorKind::Closed
            | ErrorKind::Unsupported
            | ErrorKind::Unavailable
            | ErrorKind::Internal => &[],
        }
    }

    /// Does this kind declare `fact`?
    pub fn carries(self, fact: Fact) -> bool {
        self.facts().contains(&fact)
    }
}

/// An EchoMQ error: a kind, a human message, and the facts its kind declares
/// ([`ErrorKind::facts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    /// Boxed: most errors carry none, and `Result<T>` stays small.
    facts: Option<Box<Facts>>,
}

/// The facts of one error; only those its kind declares are ever set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Facts {
    job_id: Option<String>,
    found: Option<String>,
    word: Option<String>,
    last_error: Option<String>,
    retry_after_ms: Option<u64>,
    items: Option<std::sync::Arc<Vec<BatchItem>>>,
}

/// Whether one item of a batch cut short reached the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WriteState {
    /// The row exists: the item was written (do not send it again).
    Written,
    /// The row does not exist and the connection that carried it is gone:
    /// send it again (with the same id).
    NotWritten,
    /// Could not be told (the check failed, or the server may still run
    /// it): send it again with the same id (`EnqueueOptions::id`), which answers
    /// `duplicate` if it had been written.
    Unknown,
}

impl WriteState {
    /// The stable lower-case name every binding uses.
    pub fn as_str(self) -> &'static str {
        match self {
            WriteState::Written => "written",
            WriteState::NotWritten => "not_written",
            WriteState::Unknown => "unknown",
        }
    }
}

/// One item of a batch that failed part way: its pre-minted id and state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BatchItem {
    /// The id minted for the item.
    pub id: crate::branded::BrandedId,
    /// Whether the item was written.
    pub state: WriteState,
}

impl Error {
    /// An error of this kind with this message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            facts: None,
        }
    }

    /// Set one fact; the kind must declare it (a bug otherwise: checked in
    /// debug builds and tests, ignored in release so no fact goes astray).
    fn set(mut self, fact: Fact, fill: impl FnOnce(&mut Facts)) -> Self {
        debug_assert!(
            self.kind.carries(fact),
            "{:?} does not declare {fact:?}",
            self.kind
        );
        if self.kind.carries(fact) {
            fill(self.facts.get_or_insert_with(Default::default));
        }
        self
    }

    fn facts(&self) -> Option<&Facts> {
        self.facts.as_deref()
    }

    /// The id of the job this error is about, when its kind declares one
    /// and none is set yet (verbs that name one job call it on the way out,
    /// so a wire refusal like `EMQSTALE job gone` still says which job).
    pub(crate) fn about(self, id: &crate::branded::BrandedId) -> Self {
        if !self.kind.carries(Fact::JobId) || self.job_id().is_some() {
            return self;
        }
        self.set(Fact::JobId, |f| f.job_id = Some(id.as_str().to_string()))
    }

    /// One fact's value; `None` when the kind does not declare it or this
    /// error does not hold it. Bindings walk `self.kind().facts()` with it.
    pub fn fact(&self, fact: Fact) -> Option<FactValue<'_>> {
        match fact {
            Fact::JobId => self.job_id().map(FactValue::Text),
            Fact::Found => self.found().map(FactValue::Text),
            Fact::Word => self.class_word().map(FactValue::Text),
            Fact::LastError => self.last_error().map(FactValue::Text),
            Fact::RetryAfterMs => self.retry_after_ms().map(FactValue::Number),
            Fact::Items => self.batch_items().map(FactValue::Items),
        }
    }

    /// A [`ErrorKind::PartialBatch`] error carrying every item's verdict.
    pub(crate) fn partial_batch(cause: &Error, items: Vec<BatchItem>) -> Self {
        let written = items
            .iter()
            .filter(|i| i.state == WriteState::Written)
            .count();
        Error::new(
            ErrorKind::PartialBatch,
            format!(
                "batch cut short after {written} of {} items were written ({cause}); \
                 resend the others with enqueue and their ids as the id option",
                items.len()
            ),
        )
        .set(Fact::Items, |f| f.items = Some(std::sync::Arc::new(items)))
    }

    /// For a partial batch: each item's id and write state, in input order.
    pub fn batch_items(&self) -> Option<&[BatchItem]> {
        self.facts()?.items.as_deref().map(Vec::as_slice)
    }

    /// What went wrong, as a matchable kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The kind's stable code (the same string in every binding).
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// The human-readable message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// For a version fence: the value found in `{emq}:version`.
    pub fn found(&self) -> Option<&str> {
        self.facts()?.found.as_deref()
    }

    /// For a rate-limited claim: how long to wait before claiming again, in
    /// ms (0 = at the concurrency ceiling: retry when a slot frees).
    pub fn retry_after_ms(&self) -> Option<u64> {
        self.facts()?.retry_after_ms
    }

    /// For an unknown protocol class: the `EMQ*` word the server sent.
    pub fn class_word(&self) -> Option<&str> {
        self.facts()?.word.as_deref()
    }

    /// The id of the job the error is about: the job that was stale, gone,
    /// no longer leased, not dead, active, not durable, or went dead (the
    /// kinds that declare [`Fact::JobId`]).
    pub fn job_id(&self) -> Option<&str> {
        self.facts()?.job_id.as_deref()
    }

    /// For a job that went dead (`wait_for_result`): its `last_error`.
    pub fn last_error(&self) -> Option<&str> {
        self.facts()?.last_error.as_deref()
    }

    /// Is this error a transient state, so the same call may simply be sent
    /// again? (Only [`ErrorKind::Unavailable`]: the request did not run.)
    pub fn is_retryable(&self) -> bool {
        matches!(self.kind, ErrorKind::Unavailable)
    }

    /// [`ErrorKind::JobDead`] for job `id`, carrying its `last_error`.
    pub(crate) fn job_dead(id: &crate::branded::BrandedId, last_error: Option<String>) -> Self {
        let shown = last_error.as_deref().unwrap_or("no error recorded");
        Error::new(ErrorKind::JobDead, format!("job {id} went dead: {shown}"))
            .about(id)
            .set(Fact::LastError, |f| f.last_error = last_error)
    }

    pub(crate) fn invalid_argument(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    /// `what` happened to job `id` on the master, but only `acked` replicas
    /// (of `wanted`) confirmed it within the `WAIT` timeout.
    pub(crate) fn not_durable(id: &str, what: &str, acked: u64, wanted: u32) -> Self {
        Error::new(
            ErrorKind::NotDurable,
            format!(
                "job {id} was {what} on the master but only {acked} of {wanted} replicas \
                 acknowledged it in time; a failover now may lose it (the {what} write \
                 itself happened)"
            ),
        )
        .set(Fact::JobId, |f| f.job_id = Some(id.to_string()))
    }

    /// `speaks`: the wire version the client speaks, as
    /// [`WireVersion::as_str`](crate::WireVersion::as_str) spells it.
    pub(crate) fn version_fence(found: &str, speaks: &str) -> Self {
        Error::new(
            ErrorKind::VersionFence,
            format!(
                "version fence: {{emq}}:version holds {found:?}, this client speaks {speaks:?}"
            ),
        )
        .set(Fact::Found, |f| f.found = Some(found.to_string()))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.code(), self.message)
    }
}

impl std::error::Error for Error {}

/// The crate's result: [`Error`] unless said otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `"panicked: <message>"` for a caught panic's payload: the one helper every
/// runtime (the worker, the C ABI, the async bridges) uses to word a panic.
pub fn panicked(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        format!("panicked: {s}")
    } else if let Some(s) = payload.downcast_ref::<String>() {
        format!("panicked: {s}")
    } else {
        "panicked".to_string()
    }
}

impl Error {
    /// The typed error for a panic caught at a boundary (`what` says where).
    pub fn internal_panic(what: &str, payload: &(dyn std::any::Any + Send)) -> Error {
        Error::new(ErrorKind::Internal, format!("{what} {}", panicked(payload)))
    }
}

/// Map a redis-rs error to ours. Script refusals arrive as error replies whose
/// first word is the wire class (`EMQKIND`, `EMQSTALE`, or an unknown `EMQ*`).
impl Error {
    /// The typed error for a wire refusal `<CLASS> <detail>` (PROTOCOL.md §6):
    /// `EMQKIND`, `EMQSTALE`, or an unknown `EMQ*` word. `None` for anything else.
    pub fn from_wire_class(class: &str, detail: &str) -> Option<Error> {
        Some(match class {
            "EMQKIND" => Error::new(ErrorKind::Kind, format!("EMQKIND {detail}")),
            "EMQSTALE" if detail == "job gone" => Error::new(ErrorKind::Gone, "EMQSTALE job gone"),
            "EMQSTALE" => Error::new(ErrorKind::Stale, format!("EMQSTALE {detail}")),
            // `EMQRATE <wait ms> <why>` (echomq:2.1.0).
            "EMQRATE" => {
                let wait = detail.split(' ').next().unwrap_or("0");
                let wait = wait.parse::<u64>().unwrap_or(0);
                Error::new(ErrorKind::RateLimited, format!("EMQRATE {detail}"))
                    .set(Fact::RetryAfterMs, |f| f.retry_after_ms = Some(wait))
            }
            word if word.starts_with("EMQ") => Error::new(
                ErrorKind::Protocol,
                format!("unknown protocol class {word}: {detail}"),
            )
            .set(Fact::Word, |f| f.word = Some(word.to_string())),
            _ => return None,
        })
    }
}

impl From<redis::RedisError> for Error {
    fn from(err: redis::RedisError) -> Self {
        if let Some(code) = err.code() {
            if let Some(typed) = Error::from_wire_class(code, err.detail().unwrap_or("")) {
                return typed;
            }
        }
        if err.is_timeout() {
            return Error::new(ErrorKind::Timeout, err.to_string());
        }
        if let Some(code) = transient_code(&err) {
            return Error::new(
                ErrorKind::Unavailable,
                format!("server answered {code}: {}", err.detail().unwrap_or("")),
            );
        }
        if err.is_io_error()
            || err.is_connection_dropped()
            || err.is_connection_refusal()
            || err.is_unrecoverable_error()
        {
            return Error::new(ErrorKind::Connection, err.to_string());
        }
        Error::new(ErrorKind::Server, err.to_string())
    }
}

/// The server's own word when `err` is a reply that means "not now, the
/// request did not run": worth retrying after a short pause.
pub(crate) fn transient_code(err: &redis::RedisError) -> Option<&'static str> {
    const TRANSIENT: [&str; 8] = [
        "LOADING",
        "BUSY",
        "TRYAGAIN",
        "CLUSTERDOWN",
        "MASTERDOWN",
        "READONLY",
        "MOVED",
        "ASK",
    ];
    let transient = |code: &str| TRANSIENT.iter().copied().find(|t| *t == code);
    if let Some(code) = err.code() {
        return transient(code);
    }
    // A pipeline's failure: transient when every refused command was.
    let refused = err.clone().into_server_errors()?;
    let mut found = None;
    for (_, e) in refused.iter() {
        found = Some(transient(e.code())?);
    }
    found
}

impl From<redis::ParsingError> for Error {
    fn from(err: redis::ParsingError) -> Self {
        Error::new(
            ErrorKind::Protocol,
            format!("unexpected reply shape: {err}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fact_an_error_holds_is_one_its_kind_declares() {
        let job = crate::id::mint_job_id();
        let id = || job;
        let wire = |class, detail| Error::from_wire_class(class, detail).unwrap();
        let made = [
            wire("EMQRATE", "1234 rate limited"),
            wire("EMQSTALE", "job gone").about(&id()),
            wire("EMQSTALE", "token mismatch").about(&id()),
            wire("EMQNEW", "x"),
            wire("EMQKIND", "bad").about(&id()),
            Error::job_dead(&id(), Some("boom".into())),
            Error::not_durable(id().as_str(), "enqueued", 0, 1),
            Error::version_fence("9.9.9", crate::WireVersion::V2_1_0.as_str()),
            Error::partial_batch(
                &Error::new(ErrorKind::Connection, "cut"),
                vec![BatchItem {
                    id: id(),
                    state: WriteState::Unknown,
                }],
            ),
        ];
        for e in &made {
            for fact in Fact::ALL {
                let held = e.fact(fact).is_some();
                assert_eq!(
                    held,
                    e.kind().carries(fact),
                    "{:?} holds {fact:?}: {held}",
                    e.kind()
                );
            }
        }
        assert_eq!(made[0].retry_after_ms(), Some(1234));
        assert_eq!(made[1].kind(), ErrorKind::Gone);
        assert_eq!(made[1].job_id(), Some(id().as_str()));
        assert_eq!(made[5].job_id(), Some(id().as_str()));
        assert_eq!(made[5].last_error(), Some("boom"));
        // A job id set first is kept: `about` fills a gap, never overwrites.
        let other = crate::id::mint_job_id();
        assert_eq!(made[5].clone().about(&other).job_id(), Some(id().as_str()));
    }

    #[test]
    fn every_kind_declares_its_facts_once_and_names_are_unique() {
        for kind in ErrorKind::ALL {
            let facts = kind.facts();
            for (i, f) in facts.iter().enumerate() {
                assert!(!facts[i + 1..].contains(f), "{kind:?} lists {f:?} twice");
            }
        }
        let names: std::collections::HashSet<_> = Fact::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(names.len(), Fact::ALL.len());
    }
}
