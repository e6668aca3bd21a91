//! Decoders of the server's replies: one pure function per reply shape, a
//! `redis::Value` in and a typed answer or a typed [`Error`] out. The verbs in
//! `client.rs` call them; `fuzz/fuzz_targets/replies.rs` feeds them hostile
//! bytes, which is why they are public (hidden from the docs: not API).
//!
//! A reply the scripts never give is a typed `Protocol` error that shows the
//! reply (docs/PROTOCOL-DECISIONS.md 11.3), never a guess: a claim reply cut short, or a batch with fewer
//! verdicts than jobs, would otherwise hide jobs the server already moved.

use std::collections::HashMap;

use redis::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::id::BrandedId;
use crate::types::{
    Counts, Fire, FireOutcome, Job, JobInfo, JobState, Reaped, Repeat, RetryOutcome, Upserted,
};

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
        ErrorKind::Protocol,
        format!("unexpected {what} reply: {shown}"),
    )
}

fn unexpected_word(what: &str, word: &str) -> Error {
    let shown: String = word.chars().take(SHOWN_CHARS).collect();
    Error::new(
        ErrorKind::Protocol,
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

/// A count or token. Decoded as the server's signed integer first: redis-rs
/// reads `:-1` as `u64` by wrapping it to 18446744073709551615.
fn count(what: &str, reply: Value) -> Result<u64> {
    let n: i64 = decode(what, reply)?;
    u64::try_from(n).map_err(|_| unexpected(what, &Value::Int(n)))
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
/// is a `Protocol` error rather than the caller's `InvalidId`.
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

/// `claim`: a flat array of `id, payload, token` triples. The token is the
/// row's `attempts` after the claim's `HINCRBY` (PROTOCOL §5.2), so it is
/// also the attempt number.
pub fn claimed(reply: Value) -> Result<Vec<Job>> {
    let flat = items("claim", reply)?;
    if flat.len() % 3 != 0 {
        return Err(unexpected("claim", &Value::Array(flat)));
    }
    let mut jobs = Vec::with_capacity(flat.len() / 3);
    let mut it = flat.into_iter();
    while let (Some(id), Some(payload), Some(token)) = (it.next(), it.next(), it.next()) {
        let token = count("claim", token)?;
        jobs.push(Job {
            id: server_id("claim", id)?,
            payload: bytes("claim", payload)?,
            token,
            attempts: token,
        });
    }
    Ok(jobs)
}

fn gone(id: &BrandedId) -> Error {
    Error::new(ErrorKind::Gone, format!("job {id} is gone")).about(id)
}

/// `complete`: `ok`, or `gone` when the row no longer exists.
pub fn completed(id: &BrandedId, reply: Result<Value>) -> Result<()> {
    let reply = reply.map_err(|e| e.about(id))?;
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
            ErrorKind::Protocol,
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
                Err(Error::from_wire_class(class, detail)
                    .unwrap_or_else(|| {
                        Error::new(ErrorKind::Protocol, format!("unexpected verdict {text:?}"))
                    })
                    .about(id))
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
    let reply = reply.map_err(|e| e.about(id))?;
    match text("extend", reply)?.as_str() {
        "ok" => Ok(()),
        "lost" => Err(Error::new(
            ErrorKind::LeaseLost,
            format!("lease lost: job {id} is no longer active"),
        )
        .about(id)),
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
        "notdead" => {
            Err(Error::new(ErrorKind::NotDead, format!("job {id} is not in dead")).about(id))
        }
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
        )
        .about(id)),
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
        *slot = match reply {
            Value::Nil => 0,
            reply => count("counts", reply)?,
        };
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
                ErrorKind::Protocol,
                format!("job row {id} holds attempts {a:?}, not a count"),
            )
        })?,
    };
    Ok(Some(JobInfo {
        id: *id,
        // A state another runtime wrote (say `awaiting_children`) is a
        // typed unknown state, not an error: the rest of the row is readable.
        state: JobState::parse(&text("state").unwrap_or_default()),
        attempts,
        payload: fields.get("payload").cloned().unwrap_or_default(),
        last_error: text("last_error"),
        progress: text("progress"),
    }))
}

/// `update_progress` (2.1.0): `ok` (refusals arrive as wire errors).
pub fn progressed(reply: Value) -> Result<()> {
    match text("update_progress", reply)?.as_str() {
        "ok" => Ok(()),
        other => Err(unexpected_word("update_progress", other)),
    }
}

/// `add_log` (2.1.0): the log's length, or `gone` when the job has no row.
pub fn logged(id: &BrandedId, reply: Value) -> Result<u64> {
    match reply {
        Value::Int(_) => count("add_log", reply),
        other => match text("add_log", other)?.as_str() {
            "gone" => Err(gone(id)),
            word => Err(unexpected_word("add_log", word)),
        },
    }
}

/// `logs` (2.1.0): the LRANGE of a job's log. Lines are text; bytes another
/// writer left that are not UTF-8 are shown with replacement characters.
pub fn log_lines(reply: Value) -> Result<Vec<String>> {
    items("logs", reply)?
        .into_iter()
        .map(|line| Ok(String::from_utf8_lossy(&bytes("logs", line)?).into_owned()))
        .collect()
}

/// One look of `wait_for_result` (2.1.0): the pipeline's `HMGET row state
/// last_error` and `GET result`. `Some(value)` when the result is kept;
/// `None` while the job lives and is not dead (keep waiting); a dead job is a
/// [`ErrorKind::JobDead`] error with its `last_error`; no row and no result
/// is *gone*.
pub fn result_wait(id: &BrandedId, replies: Vec<Value>) -> Result<Option<Vec<u8>>> {
    let [row, result]: [Value; 2] = replies
        .try_into()
        .map_err(|r| unexpected("wait_for_result", &Value::Array(r)))?;
    if let Value::BulkString(value) = result {
        return Ok(Some(value));
    }
    if result != Value::Nil {
        return Err(unexpected("wait_for_result", &result));
    }
    let (state, last_error): (Option<String>, Option<String>) = decode("wait_for_result", row)?;
    match state.as_deref() {
        None => Err(Error::new(
            ErrorKind::Gone,
            format!(
                "job {id} has no row and no kept result (completed without keep_result_ms, \
                 expired, removed or never enqueued)"
            ),
        )
        .about(id)),
        Some("dead") => Err(Error::job_dead(id, last_error)),
        Some(_) => Ok(None),
    }
}

/// `browse`: a list of ids.
pub fn browsed(reply: Value) -> Result<Vec<BrandedId>> {
    items("browse", reply)?
        .into_iter()
        .map(|id| server_id("browse", id))
        .collect()
}

/// `reap_stalled` (2.1.0): two arrays of ids, those returned to pending and
/// those dead-lettered.
pub fn reaped(reply: Value) -> Result<Reaped> {
    let halves = items("reap_stalled", reply)?;
    let [recovered, dead]: [Value; 2] = halves
        .try_into()
        .map_err(|halves| unexpected("reap_stalled", &Value::Array(halves)))?;
    let ids = |list: Value| -> Result<Vec<BrandedId>> {
        items("reap_stalled", list)?
            .into_iter()
            .map(|id| server_id("reap_stalled", id))
            .collect()
    };
    Ok(Reaped {
        recovered: ids(recovered)?,
        dead: ids(dead)?,
    })
}

/// `enqueue` with a dedup id (2.1.0): `[created, id of the job holding the
/// dedup id]`, created 1 (the new job holds it) or 0 (a live job holds it, or
/// the freshly minted id already had a row).
pub fn deduped(reply: Value) -> Result<(bool, BrandedId)> {
    let pair = items("enqueue_dedup", reply)?;
    let [created, holder]: [Value; 2] = pair
        .try_into()
        .map_err(|pair| unexpected("enqueue_dedup", &Value::Array(pair)))?;
    let created = match count("enqueue_dedup", created)? {
        1 => true,
        0 => false,
        n => return Err(unexpected("enqueue_dedup", &Value::Int(n as i64))),
    };
    Ok((created, server_id("enqueue_dedup", holder)?))
}

/// The handler's `rate_limit` (2.1.0): `ok` (refusals arrive as wire errors).
pub fn rate_limited(reply: Value) -> Result<()> {
    match text("rate_limit", reply)?.as_str() {
        "ok" => Ok(()),
        other => Err(unexpected_word("rate_limit", other)),
    }
}

/// A slot as the server shows a ZSET score: an integral number of ms.
fn slot(what: &str, reply: Value) -> Result<u64> {
    let shown = reply.clone();
    let text = text(what, reply)?;
    text.parse::<u64>()
        .ok()
        .or_else(|| {
            let f: f64 = text.parse().ok()?;
            (f.fract() == 0.0 && (0.0..9.0e15).contains(&f)).then_some(f as u64)
        })
        .ok_or_else(|| unexpected(what, &shown))
}

/// One repeat as `repeat_read` and `repeat_upsert` show it: `[name, slot,
/// [field, value, ...]]` (the record's HGETALL; empty when it has none).
/// Fields this client does not know are ignored.
fn repeat_entry(what: &str, reply: Value) -> Result<Repeat> {
    let [name, at, record]: [Value; 3] = items(what, reply)?
        .try_into()
        .map_err(|e| unexpected(what, &Value::Array(e)))?;
    let mut repeat = Repeat {
        name: text(what, name)?,
        next_run_ms: slot(what, at)?,
        ..Repeat::default()
    };
    let flat = items(what, record)?;
    if flat.len() % 2 != 0 {
        return Err(unexpected(what, &Value::Array(flat)));
    }
    let mut it = flat.into_iter();
    while let (Some(field), Some(value)) = (it.next(), it.next()) {
        let number = |v: Value| -> Result<Option<u64>> { Ok(Some(count(what, int_text(v))?)) };
        match text(what, field)?.as_str() {
            "template" => repeat.payload = bytes(what, value)?,
            "every_ms" => repeat.every_ms = number(value)?,
            "cron" => repeat.cron = Some(text(what, value)?),
            "tz" => repeat.tz = Some(text(what, value)?),
            "start_at" => repeat.start_at = number(value)?,
            "end_at" => repeat.end_at = number(value)?,
            "limit" => repeat.limit = number(value)?,
            "count" => repeat.count = count(what, int_text(value))?,
            "last_slot" => repeat.last_run_ms = Some(slot(what, value)?),
            "last_id" => repeat.last_id = Some(server_id(what, value)?),
            _ => {}
        }
    }
    Ok(repeat)
}

/// A decimal field value read as the integer it spells.
fn int_text(v: Value) -> Value {
    match v {
        Value::BulkString(b) => match std::str::from_utf8(&b)
            .ok()
            .and_then(|t| t.parse::<i64>().ok())
        {
            Some(n) => Value::Int(n),
            None => Value::BulkString(b),
        },
        other => other,
    }
}

/// `repeat_read` (2.1.0): `[server now ms, entry, ...]`.
pub fn repeats(reply: Value) -> Result<(u64, Vec<Repeat>)> {
    let mut all = items("repeat_read", reply)?.into_iter();
    let now = count("repeat_read", all.next().unwrap_or(Value::Nil))?;
    let entries = all
        .map(|entry| repeat_entry("repeat_read", entry))
        .collect::<Result<_>>()?;
    Ok((now, entries))
}

/// `repeat_upsert` (2.1.0): `[created|updated|kept, slot, record]` or
/// `[collides, other name]`.
pub fn repeat_upserted(reply: Value) -> Result<Upserted> {
    let mut parts = items("repeat_upsert", reply)?;
    if parts.len() == 2 {
        let other = parts.pop().unwrap_or(Value::Nil);
        let word = text("repeat_upsert", parts.pop().unwrap_or(Value::Nil))?;
        return match word.as_str() {
            "collides" => Ok(Upserted::Collides(text("repeat_upsert", other)?)),
            _ => Err(unexpected_word("repeat_upsert", &word)),
        };
    }
    let [word, at, record]: [Value; 3] = parts
        .try_into()
        .map_err(|p| unexpected("repeat_upsert", &Value::Array(p)))?;
    let word = text("repeat_upsert", word)?;
    let kept = match word.as_str() {
        "kept" => true,
        "created" | "updated" => false,
        other => return Err(unexpected_word("repeat_upsert", other)),
    };
    // The record carries no name: the entry shape with a placeholder, then the caller's.
    let repeat = repeat_entry(
        "repeat_upsert",
        Value::Array(vec![Value::BulkString(Vec::new()), at, record]),
    )?;
    Ok(Upserted::Scheduled { repeat, kept })
}

/// `repeat_fire` (2.1.0): one `[outcome, id or '', next slot or '']` per
/// repeat sent, in order; `sent` of them.
pub fn repeats_fired(reply: Value, sent: usize) -> Result<Vec<Fire>> {
    let verdicts = items("repeat_fire", reply)?;
    if verdicts.len() != sent {
        return Err(unexpected("repeat_fire", &Value::Array(verdicts)));
    }
    verdicts
        .into_iter()
        .map(|verdict| {
            let [word, id, next]: [Value; 3] = items("repeat_fire", verdict)?
                .try_into()
                .map_err(|v| unexpected("repeat_fire", &Value::Array(v)))?;
            let outcome = match text("repeat_fire", word)?.as_str() {
                "fired" => FireOutcome::Fired,
                "duplicate" => FireOutcome::Duplicate,
                "moved" => FireOutcome::Moved,
                "early" => FireOutcome::Early,
                "gone" => FireOutcome::Gone,
                "ended" => FireOutcome::Ended,
                other => return Err(unexpected_word("repeat_fire", other)),
            };
            let id = match bytes("repeat_fire", id)? {
                raw if raw.is_empty() => None,
                raw => Some(server_id("repeat_fire", Value::BulkString(raw))?),
            };
            if matches!(outcome, FireOutcome::Fired | FireOutcome::Duplicate) != id.is_some() {
                return Err(unexpected_word(
                    "repeat_fire",
                    "an id that does not fit the outcome",
                ));
            }
            let next = match bytes("repeat_fire", next)? {
                raw if raw.is_empty() => None,
                raw => Some(slot("repeat_fire", Value::BulkString(raw))?),
            };
            Ok(Fire { outcome, id, next })
        })
        .collect()
}

/// `repeat_remove` (2.1.0): 1 removed, 0 there was none.
pub fn repeat_removed(reply: Value) -> Result<bool> {
    match count("repeat_remove", reply)? {
        1 => Ok(true),
        0 => Ok(false),
        n => Err(unexpected("repeat_remove", &Value::Int(n as i64))),
    }
}

/// Regression tests for the replies the decoders once guessed at (found while
/// writing the fuzz targets' invariants; docs/PROTOCOL-DECISIONS.md 15.4), and
/// the shapes the fuzz seeds start from.
#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "JOB0NgWEfAEJfs";

    fn id() -> BrandedId {
        BrandedId::parse(ID).unwrap()
    }

    fn wire(resp: &str) -> Value {
        redis::parse_redis_value(resp.as_bytes()).unwrap()
    }

    fn kind<T: std::fmt::Debug>(r: Result<T>) -> ErrorKind {
        r.unwrap_err().kind()
    }

    #[test]
    fn claim_triples_decode_and_a_cut_reply_is_refused() {
        let one = format!("*3\r\n$14\r\n{ID}\r\n$5\r\nhello\r\n:3\r\n");
        let jobs = claimed(wire(&one)).unwrap();
        assert_eq!(jobs.len(), 1);
        assert_eq!(
            (jobs[0].id, &jobs[0].payload[..], jobs[0].token),
            (id(), &b"hello"[..], 3)
        );
        assert!(claimed(wire("*0\r\n")).unwrap().is_empty());
        // Two of three fields: the job was claimed on the server; dropping it
        // silently would hide it until the reaper. Now a typed error.
        let cut = format!("*2\r\n$14\r\n{ID}\r\n$5\r\nhello\r\n");
        assert_eq!(kind(claimed(wire(&cut))), ErrorKind::Protocol);
        // A malformed id from the server is a protocol error, not InvalidId.
        let bad = "*3\r\n$3\r\nJOB\r\n$0\r\n\r\n:1\r\n";
        assert_eq!(kind(claimed(wire(bad))), ErrorKind::Protocol);
        assert_eq!(kind(claimed(wire(":1\r\n"))), ErrorKind::Protocol);
    }

    #[test]
    fn batch_verdicts_must_match_the_jobs_one_for_one() {
        let ids = [id(), id(), id()];
        let reply = wire("*3\r\n+ok\r\n+gone\r\n$26\r\nEMQSTALE complete not held\r\n");
        let verdicts = completed_many(&ids, reply).unwrap();
        assert!(verdicts[0].is_ok());
        assert_eq!(verdicts[1].as_ref().unwrap_err().kind(), ErrorKind::Gone);
        assert_eq!(verdicts[2].as_ref().unwrap_err().kind(), ErrorKind::Stale);
        // Fewer verdicts than jobs used to answer a shorter list.
        let short = wire("*2\r\n+ok\r\n+ok\r\n");
        assert_eq!(kind(completed_many(&ids, short)), ErrorKind::Protocol);
        let odd = completed_many(&ids[..1], wire("*1\r\n+maybe\r\n")).unwrap();
        assert_eq!(odd[0].as_ref().unwrap_err().kind(), ErrorKind::Protocol);
        let future = completed_many(&ids[..1], wire("*1\r\n+EMQNEW x\r\n")).unwrap();
        assert_eq!(future[0].as_ref().unwrap_err().class_word(), Some("EMQNEW"));
    }

    #[test]
    fn unknown_words_are_refused_not_guessed() {
        assert_eq!(retried(wire("+dead\r\n")).unwrap(), RetryOutcome::Dead);
        assert_eq!(
            retried(wire("+scheduled\r\n")).unwrap(),
            RetryOutcome::Scheduled
        );
        // Once read as `scheduled`, and `gone` for the settle verbs.
        assert_eq!(kind(retried(wire("+queued\r\n"))), ErrorKind::Protocol);
        assert_eq!(
            kind(completed(&id(), Ok(wire("+done\r\n")))),
            ErrorKind::Protocol
        );
        assert_eq!(
            kind(completed(&id(), Ok(wire("+gone\r\n")))),
            ErrorKind::Gone
        );
        assert_eq!(
            kind(extended(&id(), Ok(wire("+lost\r\n")))),
            ErrorKind::LeaseLost
        );
        assert_eq!(
            kind(extended(&id(), Ok(wire("+later\r\n")))),
            ErrorKind::Protocol
        );
        assert_eq!(
            kind(requeued(&id(), wire("+notdead\r\n"))),
            ErrorKind::NotDead
        );
        assert_eq!(
            kind(requeued(&id(), wire("+nope\r\n"))),
            ErrorKind::Protocol
        );
        assert_eq!(
            kind(removed(&id(), wire("+active\r\n"))),
            ErrorKind::JobActive
        );
        assert_eq!(kind(removed(&id(), wire(":1\r\n"))), ErrorKind::Protocol);
        assert!(released(Ok(wire(":1\r\n"))).is_ok());
        assert_eq!(
            kind(released(Ok(wire("+whatever\r\n")))),
            ErrorKind::Protocol
        );
        assert!(created(wire(":1\r\n")).unwrap());
        assert!(!created(wire(":0\r\n")).unwrap());
        assert_eq!(kind(created(wire(":2\r\n"))), ErrorKind::Protocol);
        // redis-rs wraps a negative integer into a huge u64: refused instead.
        assert_eq!(kind(moved(wire(":-1\r\n"))), ErrorKind::Protocol);
        let negative_token = format!("*3\r\n$14\r\n{ID}\r\n$0\r\n\r\n:-1\r\n");
        assert_eq!(kind(claimed(wire(&negative_token))), ErrorKind::Protocol);
    }

    #[test]
    fn error_replies_keep_their_wire_class() {
        let stale = from_wire(wire("-EMQSTALE complete token mismatch\r\n"));
        assert_eq!(kind(completed(&id(), stale)), ErrorKind::Stale);
        let gone = from_wire(wire("-EMQSTALE job gone\r\n"));
        assert_eq!(kind(released(gone)), ErrorKind::Gone);
        assert_eq!(kind(from_wire(wire("-ERR nope\r\n"))), ErrorKind::Server);
        assert!(from_wire(wire("+ok\r\n")).is_ok());
    }

    #[test]
    fn counts_need_all_six_answers() {
        let six = wire("*6\r\n:1\r\n:2\r\n:3\r\n:4\r\n$1\r\n5\r\n_\r\n");
        let Value::Array(items) = six else { panic!() };
        let c = counts(items.clone()).unwrap();
        assert_eq!((c.pending, c.dead, c.completed, c.failed), (1, 4, 5, 0));
        // Indexed by position once: a short answer panicked.
        assert_eq!(kind(counts(items[..5].to_vec())), ErrorKind::Protocol);
    }

    #[test]
    fn job_rows_refuse_a_garbled_attempts_field() {
        let row = wire("%3\r\n$5\r\nstate\r\n$4\r\ndead\r\n$8\r\nattempts\r\n$1\r\n2\r\n$10\r\nlast_error\r\n$4\r\nboom\r\n");
        let info = job_row(&id(), row).unwrap().unwrap();
        assert_eq!((info.state, info.attempts), (JobState::Dead, 2));
        assert_eq!(info.last_error.as_deref(), Some("boom"));
        assert!(job_row(&id(), wire("*0\r\n")).unwrap().is_none());
        // Read as 0 attempts once.
        let garbled = wire("*4\r\n$5\r\nstate\r\n$4\r\ndead\r\n$8\r\nattempts\r\n$2\r\nxx\r\n");
        assert_eq!(kind(job_row(&id(), garbled)), ErrorKind::Protocol);
    }

    #[test]
    fn progress_log_and_result_replies_decode_and_refuse_other_shapes() {
        assert!(progressed(wire("+ok\r\n")).is_ok());
        assert_eq!(kind(progressed(wire("+later\r\n"))), ErrorKind::Protocol);
        assert_eq!(logged(&id(), wire(":3\r\n")).unwrap(), 3);
        assert_eq!(kind(logged(&id(), wire("+gone\r\n"))), ErrorKind::Gone);
        assert_eq!(kind(logged(&id(), wire(":-1\r\n"))), ErrorKind::Protocol);
        let raw = redis::parse_redis_value(b"*2\r\n$1\r\na\r\n$2\r\n\xff!\r\n").unwrap();
        let lines = log_lines(raw).unwrap();
        assert_eq!(lines, ["a", "\u{fffd}!"]);
        let held = vec![wire("*2\r\n$6\r\nactive\r\n$-1\r\n"), wire("$-1\r\n")];
        assert_eq!(result_wait(&id(), held).unwrap(), None);
        let kept = vec![wire("*2\r\n$-1\r\n$-1\r\n"), wire("$2\r\nok\r\n")];
        assert_eq!(result_wait(&id(), kept).unwrap(), Some(b"ok".to_vec()));
        let dead = vec![wire("*2\r\n$4\r\ndead\r\n$4\r\nboom\r\n"), wire("$-1\r\n")];
        let e = result_wait(&id(), dead).unwrap_err();
        assert_eq!(
            (e.kind(), e.last_error()),
            (ErrorKind::JobDead, Some("boom"))
        );
        let gone = vec![wire("*2\r\n$-1\r\n$-1\r\n"), wire("$-1\r\n")];
        assert_eq!(kind(result_wait(&id(), gone)), ErrorKind::Gone);
        assert_eq!(kind(result_wait(&id(), vec![])), ErrorKind::Protocol);
    }

    #[test]
    fn a_state_this_client_does_not_know_is_a_typed_unknown_state() {
        let row =
            wire("%2\r\n$5\r\nstate\r\n$17\r\nawaiting_children\r\n$8\r\nattempts\r\n$1\r\n0\r\n");
        let info = job_row(&id(), row).unwrap().unwrap();
        assert_eq!(info.state, JobState::Unknown("awaiting_children".into()));
        assert_eq!(
            (info.state.as_str(), info.state.raw()),
            ("unknown", "awaiting_children")
        );
        assert!(!info.state.is_known() && JobState::Dead.is_known());
    }

    #[test]
    fn a_claimed_job_carries_its_attempt_number() {
        let reply = format!("*3\r\n$14\r\n{ID}\r\n$1\r\nx\r\n:3\r\n");
        let jobs = claimed(wire(&reply)).unwrap();
        assert_eq!((jobs[0].token, jobs[0].attempts), (3, 3));
    }

    #[test]
    fn reaped_and_deduped_replies_decode_and_refuse_other_shapes() {
        let both = format!("*2\r\n*1\r\n$14\r\n{ID}\r\n*0\r\n");
        let r = reaped(wire(&both)).unwrap();
        assert_eq!((r.recovered, r.dead), (vec![id()], vec![]));
        assert_eq!(kind(reaped(wire("*1\r\n*0\r\n"))), ErrorKind::Protocol);
        let bad_id = "*2\r\n*1\r\n$2\r\nno\r\n*0\r\n";
        assert_eq!(kind(reaped(wire(bad_id))), ErrorKind::Protocol);
        let dup = format!("*2\r\n:0\r\n$14\r\n{ID}\r\n");
        assert_eq!(deduped(wire(&dup)).unwrap(), (false, id()));
        let odd = format!("*2\r\n:7\r\n$14\r\n{ID}\r\n");
        assert_eq!(kind(deduped(wire(&odd))), ErrorKind::Protocol);
        assert_eq!(kind(deduped(wire(":1\r\n"))), ErrorKind::Protocol);
        assert!(rate_limited(wire("+ok\r\n")).is_ok());
        assert_eq!(kind(rate_limited(wire("+later\r\n"))), ErrorKind::Protocol);
    }

    #[test]
    fn repeat_replies_decode_and_refuse_other_shapes() {
        let entry = format!(
            "*3\r\n$7\r\nnightly\r\n$13\r\n1780512970164\r\n*8\r\n$8\r\nevery_ms\r\n$4\r\n1000\r\n$8\r\ntemplate\r\n$2\r\nhi\r\n$5\r\ncount\r\n$1\r\n3\r\n$7\r\nlast_id\r\n$14\r\n{ID}\r\n"
        );
        let (now, all) = repeats(wire(&format!("*2\r\n:1780512970200\r\n{entry}"))).unwrap();
        assert_eq!(now, 1_780_512_970_200);
        let r = &all[0];
        assert_eq!(
            (r.name.as_str(), r.next_run_ms, r.every_ms),
            ("nightly", 1_780_512_970_164, Some(1000))
        );
        assert_eq!(
            (r.payload.as_slice(), r.count, r.last_id),
            (&b"hi"[..], 3, Some(id()))
        );
        let bad_slot = "*2\r\n:1\r\n*3\r\n$1\r\nn\r\n$3\r\n1.5\r\n*0\r\n";
        assert_eq!(kind(repeats(wire(bad_slot))), ErrorKind::Protocol);
        let odd_record = "*2\r\n:1\r\n*3\r\n$1\r\nn\r\n$1\r\n5\r\n*1\r\n$1\r\nx\r\n";
        assert_eq!(kind(repeats(wire(odd_record))), ErrorKind::Protocol);
        let collides = "*2\r\n$8\r\ncollides\r\n$5\r\nother\r\n";
        assert_eq!(
            repeat_upserted(wire(collides)).unwrap(),
            Upserted::Collides("other".into())
        );
        assert_eq!(
            kind(repeat_upserted(wire("*2\r\n$2\r\nno\r\n$1\r\nx\r\n"))),
            ErrorKind::Protocol
        );
        let fired = format!("*1\r\n*3\r\n$5\r\nfired\r\n$14\r\n{ID}\r\n$13\r\n1780512971164\r\n");
        let f = repeats_fired(wire(&fired), 1).unwrap();
        assert_eq!(
            (f[0].outcome, f[0].id, f[0].next),
            (FireOutcome::Fired, Some(id()), Some(1_780_512_971_164))
        );
        assert_eq!(kind(repeats_fired(wire(&fired), 2)), ErrorKind::Protocol);
        let no_id = "*1\r\n*3\r\n$5\r\nfired\r\n$0\r\n\r\n$0\r\n\r\n";
        assert_eq!(kind(repeats_fired(wire(no_id), 1)), ErrorKind::Protocol);
        let moved = "*1\r\n*3\r\n$5\r\nmoved\r\n$0\r\n\r\n$0\r\n\r\n";
        assert_eq!(
            repeats_fired(wire(moved), 1).unwrap()[0].outcome,
            FireOutcome::Moved
        );
        assert!(repeat_removed(wire(":1\r\n")).unwrap());
        assert_eq!(kind(repeat_removed(wire(":2\r\n"))), ErrorKind::Protocol);
    }

    #[test]
    fn browse_ids_come_from_the_server() {
        let two = format!("*2\r\n$14\r\n{ID}\r\n$14\r\n{ID}\r\n");
        assert_eq!(browsed(wire(&two)).unwrap(), vec![id(), id()]);
        assert_eq!(
            kind(browsed(wire("*1\r\n$2\r\nno\r\n"))),
            ErrorKind::Protocol
        );
    }
}
