//! Repeatable jobs (echomq:2.1.0): a named schedule — every N ms, or a cron
//! pattern in an IANA time zone — that enqueues a job at each slot.
//!
//! The layout is the reference's: the ZSET `emq:{q}:repeat` of names scored
//! by their next slot (unix ms, **server** clock) and the HASH
//! `emq:{q}:repeat:<name>` holding `every_ms` and `template` (the payload),
//! extended with `cron`, `tz`, `start_at`, `end_at`, `limit` and the fire
//! bookkeeping `count`, `last_slot`, `last_id`, `tag`
//! (docs/PROTOCOL-DECISIONS.md 13.16–13.20).
//!
//! Firing is one script per batch (`repeat_fire`): the due check on the
//! server's clock, the enqueue under an id derived from the queue, the name
//! and the slot ([`repeat_job_id`]), and the advance of the schedule are
//! atomic, so two pumps racing, or a pump that died mid-fire, never make two
//! jobs for one slot. The host computes only the candidate next slot (cron
//! needs the time zone database), from the server's `TIME`. Missed slots are
//! skipped, not replayed: a repeat overdue by several slots (no pump ran)
//! fires once, for the slot it waited for, then resumes at the first slot
//! after the server's now.

use std::str::FromStr;

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;

use crate::client::{check_positive, Client};
use crate::error::{Error, Result};
use crate::id::{BrandedId, EPOCH_MS, JOB_NAMESPACE};
use crate::keys::{self, QueueKeys};
use crate::replies;
use crate::scripts;
use crate::wire::WireVersion;

pub use crate::types::{Fire, FireOutcome, Repeat, Upserted};

/// The longest interval `every_ms` accepts: 366 days (use cron beyond).
pub const MAX_EVERY_MS: u64 = 366 * 24 * 3_600_000;
/// The time zone a cron pattern is read in when none is given.
pub const DEFAULT_TZ: &str = "UTC";
/// A slot's time must fit the id's 41-bit timestamp (until 2093).
const MAX_SLOT_MS: u64 = EPOCH_MS + (1 << 41) - 1;
/// How many repeats `list_repeats` answers at most.
const LIST_LIMIT: u64 = 100_000;

/// The schedule of [`Client::upsert_repeat`]: exactly one of `every_ms` and
/// `cron`; the rest optional. Times are unix ms.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepeatOptions {
    /// Fire every this many ms (1 ms ..= 366 days). Slots stay on the grid
    /// `start_at + k * every_ms` (or the upsert's server time + `every_ms`
    /// when there is no `start_at`): a late fire does not make the
    /// schedule drift.
    pub every_ms: Option<u64>,
    /// A cron pattern: 5 fields (`minute hour day-of-month month
    /// day-of-week`), or 6 with seconds first; `L`, `W`, `#` and `@daily`
    /// style nicknames as the `croner` crate reads them.
    pub cron: Option<String>,
    /// The IANA time zone the cron pattern is read in (default `UTC`);
    /// only with `cron`. DST: a slot in a skipped hour fires after the gap,
    /// a fixed-time slot in a repeated hour fires once.
    pub tz: Option<String>,
    /// No slot before this time (default: from the upsert on).
    pub start_at: Option<u64>,
    /// No slot after this time; the repeat ends (is removed) after its last.
    pub end_at: Option<u64>,
    /// Fire at most this many jobs; the repeat ends after the last.
    pub limit: Option<u64>,
}

/// A parsed, checked schedule.
#[derive(Debug, Clone)]
enum Schedule {
    Every(u64),
    Cron { cron: Box<Cron>, tz: Tz },
}

fn parse_cron(pattern: &str) -> Result<Cron> {
    Cron::from_str(pattern)
        .map_err(|e| Error::invalid_argument(format!("invalid cron pattern {pattern:?}: {e}")))
}

fn parse_tz(tz: &str) -> Result<Tz> {
    Tz::from_str(tz).map_err(|_| {
        Error::invalid_argument(format!(
            "unknown time zone {tz:?}: expected an IANA name such as UTC or Europe/Berlin"
        ))
    })
}

fn utc(ms: u64) -> DateTime<Utc> {
    // Every ms this module handles is below MAX_SLOT_MS, well inside chrono's range.
    Utc.timestamp_millis_opt(ms as i64)
        .single()
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

impl Schedule {
    fn from_fields(every_ms: Option<u64>, cron: Option<&str>, tz: Option<&str>) -> Result<Self> {
        match (every_ms, cron) {
            (Some(_), Some(_)) => Err(Error::invalid_argument("give every_ms or cron, not both")),
            (None, None) => Err(Error::invalid_argument("give every_ms or cron")),
            (Some(every), None) => {
                if tz.is_some() {
                    return Err(Error::invalid_argument(
                        "tz applies to cron only (every_ms is a plain interval)",
                    ));
                }
                if every == 0 || every > MAX_EVERY_MS {
                    return Err(Error::invalid_argument(format!(
                        "every_ms must be 1 ..= {MAX_EVERY_MS} (366 days; use cron beyond)"
                    )));
                }
                Ok(Schedule::Every(every))
            }
            (None, Some(pattern)) => Ok(Schedule::Cron {
                cron: Box::new(parse_cron(pattern)?),
                tz: parse_tz(tz.unwrap_or(DEFAULT_TZ))?,
            }),
        }
    }

    /// The first cron slot at `from` (when `inclusive`) or after it.
    /// A cron's slots are whole seconds and croner matches the second of an
    /// instant, ignoring its milliseconds: so search from the first whole
    /// second at (or after) `from`, never from the second it falls in, which
    /// would answer a slot up to a second before `from` (issue #39 item 6).
    fn cron_slot(cron: &Cron, tz: Tz, from: u64, inclusive: bool) -> Option<u64> {
        let second = if inclusive {
            from.div_ceil(1_000) * 1_000
        } else {
            (from / 1_000 + 1) * 1_000
        };
        let at = utc(second).with_timezone(&tz);
        let next = cron.find_next_occurrence(&at, true).ok()?;
        u64::try_from(next.timestamp_millis())
            .ok()
            .filter(|ms| *ms <= MAX_SLOT_MS)
    }

    /// The first slot of a fresh schedule upserted at server time `now`.
    fn first_slot(&self, now: u64, start_at: Option<u64>) -> Option<u64> {
        let slot = match (self, start_at) {
            (Schedule::Every(every), None) => now.checked_add(*every)?,
            (Schedule::Every(_), Some(start)) if start >= now => start,
            // On the start's grid: the first start + k * every at or after now.
            (Schedule::Every(every), Some(start)) => start + (now - start).div_ceil(*every) * every,
            (Schedule::Cron { cron, tz }, Some(start)) if start > now => {
                Schedule::cron_slot(cron, *tz, start, true)?
            }
            (Schedule::Cron { cron, tz }, _) => Schedule::cron_slot(cron, *tz, now, false)?,
        };
        (slot <= MAX_SLOT_MS).then_some(slot)
    }

    /// The slot after `slot` once it fired at server time `now`: the first
    /// slot after both — the missed ones in between are skipped.
    fn next_slot(&self, slot: u64, now: u64) -> Option<u64> {
        let from = slot.max(now);
        let next = match self {
            // On the slot's grid, strictly after `from`.
            Schedule::Every(every) => slot + ((from - slot) / every + 1) * every,
            Schedule::Cron { cron, tz } => Schedule::cron_slot(cron, *tz, from, false)?,
        };
        (next <= MAX_SLOT_MS).then_some(next)
    }
}

/// The checked form of [`RepeatOptions`].
struct Plan {
    schedule: Schedule,
    tz: Option<String>,
}

impl RepeatOptions {
    fn plan(&self) -> Result<Plan> {
        let schedule =
            Schedule::from_fields(self.every_ms, self.cron.as_deref(), self.tz.as_deref())?;
        if self.limit == Some(0) {
            return Err(Error::invalid_argument(
                "limit must be greater than zero (omit it for no limit)",
            ));
        }
        for (name, at) in [("start_at", self.start_at), ("end_at", self.end_at)] {
            if at.is_some_and(|ms| !(EPOCH_MS..=MAX_SLOT_MS).contains(&ms)) {
                return Err(Error::invalid_argument(format!(
                    "{name} must be a unix ms time between 2024-01-01 and 2093 (an id's time range)"
                )));
            }
        }
        if let (Some(start), Some(end)) = (self.start_at, self.end_at) {
            if end < start {
                return Err(Error::invalid_argument("end_at is before start_at"));
            }
        }
        let tz = match schedule {
            Schedule::Cron { .. } => Some(self.tz.clone().unwrap_or_else(|| DEFAULT_TZ.into())),
            Schedule::Every(_) => None,
        };
        Ok(Plan { schedule, tz })
    }
}

/// The low 22 bits of every id a repeat fires under: from SHA-1 of the queue
/// and the name, with bit 11 (the top bit of the snowflake's sequence) set,
/// which minted ids reach only in a burst of 2048 ids in one millisecond.
fn tag(queue: &str, name: &str) -> u64 {
    let digest = sha1_smol::Sha1::from(format!("{queue}\n{name}"))
        .digest()
        .bytes();
    let h = u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]) as u64;
    (h & 0x3F_FFFF) | 0x800
}

/// The id of the job `name` fires for `slot_ms`: a `JOB` id whose time part
/// is the slot and whose node and sequence bits are the name's tag. Every
/// pump derives the same id for the same slot, so a second fire of a slot
/// collides on the enqueue's existence check.
pub fn repeat_job_id(queue: &str, name: &str, slot_ms: u64) -> Result<BrandedId> {
    keys::validate_queue(queue)?;
    keys::validate_repeat_name(name)?;
    if !(EPOCH_MS..=MAX_SLOT_MS).contains(&slot_ms) {
        return Err(Error::invalid_argument(format!(
            "slot {slot_ms} is outside an id's time range (2024-01-01 .. 2093)"
        )));
    }
    BrandedId::new(JOB_NAMESPACE, (slot_ms - EPOCH_MS) << 22 | tag(queue, name))
}

fn opt(n: Option<u64>) -> String {
    n.map(|n| n.to_string()).unwrap_or_default()
}

impl Client {
    /// The server's clock in unix ms (`TIME`): every slot is computed from it.
    async fn server_ms(&self) -> Result<u64> {
        let (secs, micros): (u64, u64) = self.transport.query(&redis::cmd("TIME")).await?;
        Ok(secs * 1000 + micros / 1000)
    }

    /// Create or update the repeatable job `name` of `queue`: from its first
    /// slot on, each slot enqueues a job carrying `payload`. Upserting the
    /// same spec again (say at every service start) keeps the slot it waits
    /// for and its count, and only replaces the payload; a changed spec is
    /// rescheduled from now. Answers the stored repeat.
    pub async fn upsert_repeat(
        &self,
        queue: &str,
        name: &str,
        payload: impl AsRef<[u8]>,
        options: &RepeatOptions,
    ) -> Result<Repeat> {
        self.require(WireVersion::V2_1_0, "upsert_repeat")?;
        let payload = payload.as_ref();
        let keys = QueueKeys::new(queue)?;
        let record = keys::repeat_record_key(queue, name)?;
        let plan = options.plan()?;
        self.check_payload(payload)?;
        let now = self.server_ms().await?;
        let first = plan
            .schedule
            .first_slot(now, options.start_at)
            .filter(|slot| options.end_at.map_or(true, |end| *slot <= end))
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "repeat {name:?} has no slot to fire (before end_at, or before 2093)"
                ))
            })?;
        let tag = tag(queue, name).to_string();
        let (first, limit) = (first.to_string(), opt(options.limit));
        let (every, start, end) = (
            opt(options.every_ms),
            opt(options.start_at),
            opt(options.end_at),
        );
        let args: [&[u8]; 11] = [
            keys.base.as_bytes(),
            name.as_bytes(),
            tag.as_bytes(),
            first.as_bytes(),
            payload,
            every.as_bytes(),
            options.cron.as_deref().unwrap_or("").as_bytes(),
            plan.tz.as_deref().unwrap_or("").as_bytes(),
            start.as_bytes(),
            end.as_bytes(),
            limit.as_bytes(),
        ];
        let answer = self
            .transport
            .script(&scripts::REPEAT_UPSERT, &[&keys.repeat, &record], &args)
            .await?;
        match replies::repeat_upserted(answer)? {
            Upserted::Scheduled { mut repeat, .. } => {
                // The hint wakes a parked worker, whose pumps then read the
                // repeat schedule (`next_due`) and plan for this repeat's
                // first slot; sent after the reply, so a refused upsert
                // leaves no token.
                self.send_wake_hint(&keys).await;
                repeat.name = name.to_string();
                Ok(repeat)
            }
            Upserted::Collides(other) => Err(Error::invalid_argument(format!(
                "repeat name {name:?} derives the same job ids as repeat {other:?} of {queue}; choose another name"
            ))),
        }
    }

    /// Take the repeatable job `name` off the schedule and delete it; jobs it
    /// already fired stay. `false` when there was none.
    pub async fn remove_repeat(&self, queue: &str, name: &str) -> Result<bool> {
        self.require(WireVersion::V2_1_0, "remove_repeat")?;
        let keys = QueueKeys::new(queue)?;
        let record = keys::repeat_record_key(queue, name)?;
        let answer = self
            .transport
            .script(
                &scripts::REPEAT_REMOVE,
                &[&keys.repeat, &record],
                &[name.as_bytes()],
            )
            .await?;
        replies::repeat_removed(answer)
    }

    /// Every repeatable job of `queue`, soonest slot first.
    pub async fn list_repeats(&self, queue: &str) -> Result<Vec<Repeat>> {
        self.require(WireVersion::V2_1_0, "list_repeats")?;
        let (_, repeats) = self.read_repeats(queue, "all", LIST_LIMIT).await?;
        // A schedule entry without a record is dropped by the next fire.
        Ok(repeats.into_iter().filter(is_record).collect())
    }

    async fn read_repeats(
        &self,
        queue: &str,
        mode: &str,
        limit: u64,
    ) -> Result<(u64, Vec<Repeat>)> {
        let keys = QueueKeys::new(queue)?;
        let answer = self
            .transport
            .script(
                &scripts::REPEAT_READ,
                &[&keys.repeat],
                &[
                    keys.base.as_bytes(),
                    mode.as_bytes(),
                    limit.to_string().as_bytes(),
                ],
            )
            .await?;
        replies::repeats(answer)
    }

    /// The pump of repeatable jobs: fire up to `limit` repeats of `queue`
    /// whose slot is due by the server clock, one job per slot whichever
    /// pumps race (see the module docs). Answers how many jobs were enqueued.
    /// The worker's pump calls it every `pump_interval_ms`; so does `emq pump`.
    pub async fn fire_repeats(&self, queue: &str, limit: u64) -> Result<u64> {
        self.require(WireVersion::V2_1_0, "fire_repeats")?;
        check_positive("limit", limit)?;
        let keys = QueueKeys::new(queue)?;
        let (now, due) = self.read_repeats(queue, "due", limit).await?;
        let mut args: Vec<Vec<u8>> = vec![keys.base.clone().into_bytes()];
        for repeat in &due {
            let next = if is_record(repeat) {
                match Schedule::from_fields(
                    repeat.every_ms,
                    repeat.cron.as_deref(),
                    repeat.tz.as_deref(),
                ) {
                    Ok(schedule) => schedule.next_slot(repeat.next_run_ms, now),
                    Err(e) => {
                        // Not ours to end: another runtime's record, or one edited by hand.
                        log::warn!(
                            "echomq: repeat {} of {queue} is not firable: {e}",
                            repeat.name
                        );
                        continue;
                    }
                }
            } else {
                None
            };
            let id = match repeat_job_id(queue, &repeat.name, repeat.next_run_ms) {
                Ok(id) => id,
                Err(e) => {
                    log::warn!(
                        "echomq: repeat {} of {queue} is not firable: {e}",
                        repeat.name
                    );
                    continue;
                }
            };
            args.push(repeat.name.clone().into_bytes());
            args.push(repeat.next_run_ms.to_string().into_bytes());
            args.push(id.as_str().into());
            args.push(opt(next).into_bytes());
        }
        if args.len() == 1 {
            return Ok(0);
        }
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let answer = self
            .transport
            .script(&scripts::REPEAT_FIRE, &[&keys.repeat, &keys.pending], &refs)
            .await?;
        let fires = replies::repeats_fired(answer, (refs.len() - 1) / 4)?;
        // The names sent, in order: each verdict answers one of them.
        let names = args[1..]
            .chunks(4)
            .map(|group| String::from_utf8_lossy(&group[0]));
        let mut events = self.events(&keys);
        let mut fired = 0;
        for (fire, name) in fires.iter().zip(names) {
            if let (FireOutcome::Fired, Some(id)) = (fire.outcome, fire.id) {
                fired += 1;
                if let Some(batch) = events.as_mut() {
                    batch.add("added", id.as_str(), &[("repeat", &name)]);
                }
            }
        }
        if let Some(batch) = events {
            batch.send();
        }
        if fired > 0 {
            self.send_wake_hint(&keys).await;
        }
        Ok(fired)
    }
}

fn is_record(repeat: &Repeat) -> bool {
    repeat.every_ms.is_some() || repeat.cron.is_some()
}

/// The worker's (and `emq pump`'s) repeat pump: fire what is due, in full
/// batches while there are more. A client speaking 2.0.0 has no repeats.
pub(crate) async fn pump(client: &Client, queue: &str, limit: u64) -> Result<u64> {
    if client.wire_version() < WireVersion::V2_1_0 {
        return Ok(0);
    }
    client.fire_repeats(queue, limit).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    /// 2026-03-29 00:30:00 UTC: the night Europe/Berlin springs forward
    /// (02:00 CET -> 03:00 CEST, i.e. 01:00 UTC).
    const BERLIN_DST_NIGHT: u64 = 1_774_744_200_000;

    fn ms(text: &str) -> u64 {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .timestamp_millis() as u64
    }

    fn cron(pattern: &str, tz: &str) -> Schedule {
        Schedule::from_fields(None, Some(pattern), Some(tz)).unwrap()
    }

    #[test]
    fn intervals_stay_on_their_grid_and_skip_missed_slots() {
        let every = Schedule::Every(1_000);
        let now = ms("2026-06-01T12:00:00.250Z");
        assert_eq!(every.first_slot(now, None), Some(now + 1_000));
        assert_eq!(every.first_slot(now, Some(now + 5)), Some(now + 5));
        // A start in the past: the first grid point at or after now.
        assert_eq!(every.first_slot(now, Some(now - 2_500)), Some(now + 500));
        assert_eq!(every.first_slot(now, Some(now - 2_000)), Some(now));
        // Fired on time: the next grid point.
        assert_eq!(every.next_slot(now, now), Some(now + 1_000));
        assert_eq!(every.next_slot(now, now + 999), Some(now + 1_000));
        // Fired 3.5 slots late: the slots in between are skipped, the grid kept.
        assert_eq!(every.next_slot(now, now + 3_500), Some(now + 4_000));
        assert_eq!(every.next_slot(now, now + 4_000), Some(now + 5_000));
    }

    #[test]
    fn cron_slots_in_utc_and_in_a_zone() {
        let five = cron("*/5 * * * *", "UTC");
        let now = ms("2026-06-01T12:03:10.500Z");
        assert_eq!(five.first_slot(now, None), Some(ms("2026-06-01T12:05:00Z")));
        let slot = ms("2026-06-01T12:05:00Z");
        assert_eq!(five.next_slot(slot, slot), Some(ms("2026-06-01T12:10:00Z")));
        // Missed slots are skipped: fired at 12:27 the next is 12:30.
        let late = ms("2026-06-01T12:27:00Z");
        assert_eq!(five.next_slot(slot, late), Some(ms("2026-06-01T12:30:00Z")));
        // 09:00 on weekdays in New York (EDT, UTC-4 in June): 13:00 UTC.
        let nine = cron("0 9 * * 1-5", "America/New_York");
        let friday = ms("2026-06-05T14:00:00Z");
        assert_eq!(
            nine.first_slot(friday, None),
            Some(ms("2026-06-08T13:00:00Z"))
        );
        // ... and UTC-5 in January.
        let jan = ms("2026-01-05T15:00:00Z");
        assert_eq!(nine.first_slot(jan, None), Some(ms("2026-01-06T14:00:00Z")));
        // Seconds first with 6 fields.
        let secs = cron("*/10 * * * * *", "UTC");
        let at = ms("2026-06-01T12:00:03.100Z");
        assert_eq!(secs.first_slot(at, None), Some(ms("2026-06-01T12:00:10Z")));
        // A start in the future counts inclusively.
        let start = ms("2026-07-01T00:00:00Z");
        assert_eq!(five.first_slot(now, Some(start)), Some(start));
    }

    /// Issue #39 item 6: a start with a sub-second part never gets a slot
    /// before it (croner matches whole seconds, so an inclusive search from
    /// 12:00:00.500 used to answer 12:00:00.000).
    #[test]
    fn a_cron_start_with_a_sub_second_part_gets_no_slot_before_it() {
        let now = ms("2026-06-01T11:00:00Z");
        let every_second = cron("* * * * * *", "UTC");
        let start = ms("2026-06-01T12:00:00.500Z");
        assert_eq!(
            every_second.first_slot(now, Some(start)),
            Some(ms("2026-06-01T12:00:01Z"))
        );
        let every_minute = cron("* * * * *", "UTC");
        assert_eq!(
            every_minute.first_slot(now, Some(start)),
            Some(ms("2026-06-01T12:01:00Z"))
        );
        // A whole-second start is still its own slot, and a start 1 ms
        // past a slot waits for the next.
        let whole = ms("2026-06-01T12:00:00Z");
        assert_eq!(every_minute.first_slot(now, Some(whole)), Some(whole));
        assert_eq!(
            every_minute.first_slot(now, Some(whole + 1)),
            Some(ms("2026-06-01T12:01:00Z"))
        );
        // Every sub-second offset: the slot is at or after the start.
        for offset in [1, 250, 999, 1_001, 59_999] {
            for schedule in [&every_second, &every_minute] {
                let slot = schedule.first_slot(now, Some(whole + offset)).unwrap();
                assert!(slot >= whole + offset, "{offset}: {slot}");
                assert_eq!(slot % 1_000, 0, "on the cron's whole seconds");
            }
        }
        // Firing from a sub-second instant never answers a slot at or before it.
        let slot = every_second.next_slot(whole, whole + 1_500).unwrap();
        assert_eq!(slot, whole + 2_000);
    }

    #[test]
    fn cron_across_a_dst_gap_fires_after_it() {
        // 02:30 local does not exist in Berlin on 2026-03-29.
        let half_past_two = cron("30 2 * * *", "Europe/Berlin");
        let slot = half_past_two.first_slot(BERLIN_DST_NIGHT, None).unwrap();
        let local = utc(slot).with_timezone(&chrono_tz::Europe::Berlin);
        assert_eq!(local.date_naive().to_string(), "2026-03-29");
        assert_eq!(
            slot,
            ms("2026-03-29T01:00:00Z"),
            "03:00 CEST, right after the gap: {local}"
        );
        // The next day it is 02:30 CEST again (00:30 UTC).
        let next = half_past_two.next_slot(slot, slot).unwrap();
        assert_eq!(next, ms("2026-03-30T00:30:00Z"));
    }

    #[test]
    fn bad_schedules_are_invalid_arguments() {
        let kind = |o: RepeatOptions| o.plan().err().map(|e| e.kind());
        let bad = Some(ErrorKind::InvalidArgument);
        let every = |ms| RepeatOptions {
            every_ms: Some(ms),
            ..RepeatOptions::default()
        };
        let cron = |p: &str, tz: Option<&str>| RepeatOptions {
            cron: Some(p.into()),
            tz: tz.map(Into::into),
            ..RepeatOptions::default()
        };
        assert_eq!(kind(RepeatOptions::default()), bad);
        assert_eq!(
            kind(RepeatOptions {
                cron: Some("* * * * *".into()),
                ..every(1_000)
            }),
            bad
        );
        assert_eq!(kind(every(0)), bad);
        assert_eq!(kind(every(MAX_EVERY_MS + 1)), bad);
        assert_eq!(kind(every(MAX_EVERY_MS)), None);
        assert_eq!(
            kind(RepeatOptions {
                tz: Some("UTC".into()),
                ..every(1_000)
            }),
            bad
        );
        assert_eq!(kind(cron("*/5 * * * *", None)), None);
        assert_eq!(kind(cron("61 * * * *", None)), bad);
        assert_eq!(kind(cron("every minute", None)), bad);
        assert_eq!(kind(cron("*/5 * * * *", Some("Mars/Olympus"))), bad);
        assert_eq!(kind(cron("*/5 * * * *", Some("Europe/Berlin"))), None);
        assert_eq!(
            kind(RepeatOptions {
                limit: Some(0),
                ..every(1_000)
            }),
            bad
        );
        assert_eq!(
            kind(RepeatOptions {
                start_at: Some(EPOCH_MS + 10),
                end_at: Some(EPOCH_MS + 5),
                ..every(1_000)
            }),
            bad
        );
        assert_eq!(
            kind(RepeatOptions {
                start_at: Some(5),
                ..every(1_000)
            }),
            bad
        );
    }

    #[test]
    fn the_derived_id_carries_the_slot_and_the_names_tag() {
        let slot = ms("2026-06-03T18:56:10.164Z");
        let id = repeat_job_id("orders", "nightly", slot).unwrap();
        assert_eq!(id.namespace(), "JOB");
        assert_eq!(id.minted_at_ms(), slot);
        assert_eq!(id, repeat_job_id("orders", "nightly", slot).unwrap());
        assert_ne!(id, repeat_job_id("orders", "hourly", slot).unwrap());
        assert_ne!(id, repeat_job_id("fills", "nightly", slot).unwrap());
        assert_ne!(id, repeat_job_id("orders", "nightly", slot + 1).unwrap());
        assert_eq!(id.snowflake() & 0x800, 0x800);
        assert!(repeat_job_id("orders", "bad name", slot).is_err());
        assert!(repeat_job_id("orders", "nightly", EPOCH_MS - 1).is_err());
        assert!(repeat_job_id("orders", "nightly", MAX_SLOT_MS).is_ok());
        assert!(repeat_job_id("orders", "nightly", MAX_SLOT_MS + 1).is_err());
    }
}
