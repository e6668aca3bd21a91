//! Decoders of the server's replies: one pure function per reply shape, a
//! `redis::Value` in and a typed answer or a typed [`Error`] out. The verbs in
//! `client.rs` call them; `fuzz/fuzz_targets/replies.rs` feeds them hostile
//! bytes, which is why they are public (hidden from the docs: not API).
//!
//! A reply the scripts never give is a typed `Server` error that shows the
//! reply, never a guess: a claim reply cut short, or a batch with fewer
//! verdicts than jobs, would otherwise hide jobs the server already moved.

use std::collections::HashMap;

use redis::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::id::BrandedId;
use crate::types::{Counts, Job, JobInfo, JobState, RetryOutcome};

/// How much of an unexpected reply an error message shows.
const SHOWN_CHARS: usize = 120;

/// A raw reply as a command's caller sees it: a top-level error reply becomes
/// the typed error (the `EMQ*` wire classes included), anything else passes.
pub fn from_wire(reply: Value) -> Result<Value> {
    reply.extract_error().map_err(Error::from)
}

fn unexpected(what: &str, reply: &Value) -> Error {
    let shown: String = format!("{reply:?}").chars().take(SHOWN_CHARS).collect();
    Error::new(
        ErrorKind::Server,
        format!("unexpected {what} reply: {shown}"),
    )
}

fn unexpected_word(what: &str, word: &str) -> Error {
    let shown: String = word.chars().take(SHOWN_CHARS).collect();
    Error::new(
        ErrorKind::Server,
        format!("unexpected {what} reply {shown:?}"),
    )
}

/// Decode by reference, so a refused reply can still be shown in the error.
fn decode<T: redis::FromRedisValue>(what: &str, reply: Value) -> Result<T> {
    redis::from_redis_value_ref(&reply).map_err(|_| unexpected(what, &reply))
}

fn text(what: &str, reply: Value) -> Result<String> {
    decode(what, reply)
}

fn count(what: &str, reply: Value) -> Result<u64> {
    decode(what, reply)
}

/// An array's items, moved out rather than copied (claim replies carry payloads).
fn items(what: &str, reply: Value) -> Result<Vec<Value>> {
    match reply {
        Value::Array(items) => Ok(items),
        other => decode(what, other),
    }
}

/// A byte string, moved out rather than copied.
fn bytes(what: &str, reply: Value) -> Result<Vec<u8>> {
    match reply {
        Value::BulkString(b) => Ok(b),
        other => decode(what, other),
    }
}

/// An id the server handed back; a malformed one is the server's fault, so it
/// is a `Server` error rather than the caller's `InvalidId`.
fn server_id(what: &str, reply: Value) -> Result<BrandedId> {
    let raw = bytes(what, reply)?;
    BrandedId::parse_bytes(&raw).map_err(|_| unexpected(what, &Value::BulkString(raw)))
}

/// `enqueue` and `schedule`: 1 = the row was created, 0 = the id already existed.
pub fn created(reply: Value) -> Result<bool> {
    match count("enqueue", reply)? {
        1 => Ok(true),
        0 => Ok(false),
        n => Err(unexpected("enqueue", &Value::Int(n as i64))),
    }
}

/// `claim`: a flat array of `id, payload, token` triples.
pub fn claimed(reply: Value) -> Result<Vec<Job>> {
    let flat = items("claim", reply)?;
    if flat.len() % 3 != 0 {
        return Err(unexpected("claim", &Value::Array(flat)));
    }
    let mut jobs = Vec::with_capacity(flat.len() / 3);
    let mut it = flat.into_iter();
    while let (Some(id), Some(payload), Some(token)) = (it.next(), it.next(), it.next()) {
        jobs.push(Job {
            id: server_id("claim", id)?,
            payload: bytes("claim", payload)?,
            token: count("claim", token)?,
        });
    }
    Ok(jobs)
}

fn gone(id: &BrandedId) -> Error {
    Error::new(ErrorKind::Gone, format!("job {id} is gone"))
}

/// `complete`: `ok`, or `gone` when the row no longer exists.
pub fn completed(id: &BrandedId, reply: Result<Value>) -> Result<()> {
    let reply = reply?;
    match text("complete", reply)?.as_str() {
        "ok" => Ok(()),
        "gone" => Err(gone(id)),
        other => Err(unexpected_word("complete", other)),
    }
}

/// `complete_many`: one verdict per job, in input order: `ok`, `gone`, or a
/// wire refusal `<CLASS> <detail>`.
pub fn completed_many(ids: &[BrandedId], reply: Value) -> Result<Vec<Result<()>>> {
    let verdicts: Vec<String> = decode("complete_many", reply)?;
    if verdicts.len() != ids.len() {
        return Err(Error::new(
            ErrorKind::Server,
            format!(
                "complete_many answered {} verdicts for {} jobs",
                verdicts.len(),
                ids.len()
            ),
        ));
    }
    Ok(ids
        .iter()
        .zip(verdicts)
        .map(|(id, verdict)| match verdict.as_str() {
            "ok" => Ok(()),
            "gone" => Err(gone(id)),
            text => {
                let (class, detail) = text.split_once(' ').unwrap_or((text, ""));
                Err(Error::from_wire_class(class, detail).unwrap_or_else(|| {
                    Error::new(ErrorKind::Server, format!("unexpected verdict {text:?}"))
                }))
            }
        })
        .collect())
}

/// `retry`: `dead` or `scheduled`.
pub fn retried(reply: Value) -> Result<RetryOutcome> {
    match text("retry", reply)?.as_str() {
        "dead" => Ok(RetryOutcome::Dead),
        "scheduled" => Ok(RetryOutcome::Scheduled),
        other => Err(unexpected_word("retry", other)),
    }
}

/// `extend`: `ok`, `lost` (no longer active) or `gone`.
pub fn extended(id: &BrandedId, reply: Result<Value>) -> Result<()> {
    let reply = reply?;
    match text("extend", reply)?.as_str() {
        "ok" => Ok(()),
        "lost" => Err(Error::new(
            ErrorKind::LeaseLost,
            format!("lease lost: job {id} is no longer active"),
        )),
        "gone" => Err(gone(id)),
        other => Err(unexpected_word("extend", other)),
    }
}

/// `release`: 1 (refusals arrive as wire errors).
pub fn released(reply: Result<Value>) -> Result<()> {
    let reply = reply?;
    match count("release", reply)? {
        1 => Ok(()),
        n => Err(unexpected("release", &Value::Int(n as i64))),
    }
}

/// `promote` and `reap`: how many jobs moved.
pub fn moved(reply: Value) -> Result<u64> {
    count("pump", reply)
}

/// `requeue_dead`: `ok`, or `notdead`.
pub fn requeued(id: &BrandedId, reply: Value) -> Result<()> {
    match text("requeue_dead", reply)?.as_str() {
        "ok" => Ok(()),
        "notdead" => Err(Error::new(
            ErrorKind::NotDead,
            format!("job {id} is not in dead"),
        )),
        other => Err(unexpected_word("requeue_dead", other)),
    }
}

/// `remove`: `ok`, `active` (settle it first) or `gone`.
pub fn removed(id: &BrandedId, reply: Value) -> Result<()> {
    match text("remove", reply)?.as_str() {
        "ok" => Ok(()),
        "active" => Err(Error::new(
            ErrorKind::JobActive,
            format!("job {id} is active; settle it first"),
        )),
        "gone" => Err(gone(id)),
        other => Err(unexpected_word("remove", other)),
    }
}

/// `counts`: the pipeline's six answers (four ZCARDs, two HGETs that may be nil).
pub fn counts(replies: Vec<Value>) -> Result<Counts> {
    let mut n = [0u64; 6];
    if replies.len() != n.len() {
        return Err(unexpected("counts", &Value::Array(replies)));
    }
    for (slot, reply) in n.iter_mut().zip(replies) {
        *slot = decode::<Option<u64>>("counts", reply)?.unwrap_or(0);
    }
    let [pending, active, scheduled, dead, completed, failed] = n;
    Ok(Counts {
        pending,
        active,
        scheduled,
        dead,
        completed,
        failed,
    })
}

/// `job`: the row's HGETALL; empty means there is no row.
pub fn job_row(id: &BrandedId, reply: Value) -> Result<Option<JobInfo>> {
    let fields: HashMap<String, Vec<u8>> = decode("job row", reply)?;
    if fields.is_empty() {
        return Ok(None);
    }
    let text = |name: &str| {
        fields
            .get(name)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    };
    let attempts = match text("attempts") {
        None => 0,
        Some(a) => a.parse().map_err(|_| {
            Error::new(
                ErrorKind::Server,
                format!("job row {id} holds attempts {a:?}, not a count"),
            )
        })?,
    };
    Ok(Some(JobInfo {
        id: *id,
        state: JobState::parse(&text("state").unwrap_or_default())?,
        attempts,
        payload: fields.get("payload").cloned().unwrap_or_default(),
        last_error: text("last_error"),
    }))
}

/// `browse`: a list of ids.
pub fn browsed(reply: Value) -> Result<Vec<BrandedId>> {
    items("browse", reply)?
        .into_iter()
        .map(|id| server_id("browse", id))
        .collect()
}
