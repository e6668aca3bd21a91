//! The closed key grammar (PROTOCOL.md §2): build, parse, classify.
//!
//! ```text
//! key        := per-queue | reserve
//! per-queue  := "emq:{" q "}:" suffix
//! reserve    := "{emq}:" ( "version" | "locks" | "bundle" | "migration:" q )
//! suffix     := type | "job:" jid | "metrics:completed" | "metrics:failed"
//!             | "de:" did                      (echomq:2.1.0)
//!             | "repeat" | "repeat:" name      (echomq:2.1.0)
//! did        := [A-Za-z0-9._-]{1,255}
//! name       := [A-Za-z0-9._-]{1,255}          (a repeatable job's name)
//! ```
//!
//! Classification is per wire version: [`classify`] parses the newest
//! grammar, [`classify_as`] a given version's (under 2.0.0 the 2.1.0 key
//! types are unclassified).

use std::fmt;

use crate::error::{Error, ErrorKind, Result};
use crate::id::BrandedId;
use crate::wire::WireVersion;

/// The deployment's wire version (e.g. `echomq:2.0.0`): the fence every client checks.
pub const VERSION_KEY: &str = "{emq}:version";
/// Reserved by name at this version, unused.
pub const LOCKS_KEY: &str = "{emq}:locks";
/// The script bundle record: each script's SHA1 as the runtimes recorded it (PROTOCOL.md §6).
pub const BUNDLE_KEY: &str = "{emq}:bundle";
const MIGRATION_PREFIX: &str = "{emq}:migration:";
const MAX_QUEUE_LEN: usize = 128;
const MAX_DEDUP_ID_LEN: usize = 255;

/// The per-queue structures: five at 2.0.0, plus `limiter`, `repeat` and
/// `wake` at 2.1.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyType {
    /// The LIST of job ids waiting to be claimed.
    Pending,
    /// The ZSET of claimed job ids by lease deadline.
    Active,
    /// The ZSET of delayed and retrying job ids by run-at time.
    Schedule,
    /// The ZSET of dead-lettered job ids.
    Dead,
    /// The queue's settings HASH (e.g. `paused`).
    Meta,
    /// echomq:2.1.0: the rate limit's window counter (a STRING with a PTTL).
    Limiter,
    /// echomq:2.1.0: the repeatable jobs' schedule (a ZSET of names by next slot).
    Repeat,
    /// echomq:2.1.0: wake tokens (a LIST of `1`, at most 64) that idle
    /// workers block on; the reference runtime's layout.
    Wake,
    /// echomq:2.2.0: prioritized job ids waiting to be claimed (a ZSET scored
    /// `-priority`, so rank order is higher priority first, then mint order).
    Prio,
}

impl KeyType {
    /// Every key type, in grammar order.
    pub const ALL: [KeyType; 9] = [
        KeyType::Pending,
        KeyType::Active,
        KeyType::Schedule,
        KeyType::Dead,
        KeyType::Meta,
        KeyType::Limiter,
        KeyType::Repeat,
        KeyType::Wake,
        KeyType::Prio,
    ];

    /// The wire version that registered this key type.
    pub fn since(self) -> WireVersion {
        match self {
            KeyType::Limiter | KeyType::Repeat | KeyType::Wake => WireVersion::V2_1_0,
            KeyType::Prio => WireVersion::V2_2_0,
            _ => WireVersion::V2_0_0,
        }
    }

    /// The key type's name, the last segment of its key.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyType::Pending => "pending",
            KeyType::Active => "active",
            KeyType::Schedule => "schedule",
            KeyType::Dead => "dead",
            KeyType::Meta => "meta",
            KeyType::Limiter => "limiter",
            KeyType::Repeat => "repeat",
            KeyType::Wake => "wake",
            KeyType::Prio => "prio",
        }
    }

    /// The key type named `text`, if any.
    pub fn parse(text: &str) -> Option<KeyType> {
        KeyType::ALL.into_iter().find(|t| t.as_str() == text)
    }

    /// [`KeyType::parse`] with the one invalid-argument error every binding
    /// answers for an unknown name.
    pub fn parse_arg(text: &str) -> Result<KeyType> {
        KeyType::parse(text).ok_or_else(|| {
            let names: Vec<&str> = KeyType::ALL.iter().map(|t| t.as_str()).collect();
            crate::error::Error::invalid_argument(format!(
                "unknown key type {text:?}: expected one of {}",
                names.join(", ")
            ))
        })
    }
}

/// The two per-queue counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Jobs completed.
    Completed,
    /// Jobs dead-lettered.
    Failed,
}

impl Metric {
    /// The counter's name, the last segment of its key.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Completed => "completed",
            Metric::Failed => "failed",
        }
    }
}

/// The members of the `{emq}:` reserve at this protocol version.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ReserveKey {
    /// `{emq}:version`
    Version,
    /// `{emq}:locks`
    Locks,
    /// `{emq}:bundle`
    Bundle,
    /// `{emq}:migration:<q>`: reserved by name, unused.
    Migration(String),
}

/// What a key string is, by parse.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeyClass {
    /// `emq:{q}:<type>`
    Queue {
        /// The queue's name.
        queue: String,
        /// The structure.
        key_type: KeyType,
    },
    /// `emq:{q}:job:<id>`
    Job {
        /// The queue's name.
        queue: String,
        /// The job's id.
        id: BrandedId,
    },
    /// `emq:{q}:metrics:<completed|failed>`
    Metric {
        /// The queue's name.
        queue: String,
        /// The counter.
        metric: Metric,
    },
    /// `emq:{q}:de:<dedup id>` (echomq:2.1.0): the id of the job holding a
    /// deduplication id.
    Dedup {
        /// The queue's name.
        queue: String,
        /// The deduplication id.
        dedup_id: String,
    },
    /// `emq:{q}:repeat:<name>` (echomq:2.1.0): a repeatable job's record.
    RepeatRecord {
        /// The queue's name.
        queue: String,
        /// The repeat's name.
        name: String,
    },
    /// `emq:{q}:job:<id>:logs` (echomq:2.1.0): a job's log, a LIST.
    JobLogs {
        /// The queue's name.
        queue: String,
        /// The job's id.
        id: BrandedId,
    },
    /// `emq:{q}:job:<id>:result` (echomq:2.1.0): a job's kept result.
    JobResult {
        /// The queue's name.
        queue: String,
        /// The job's id.
        id: BrandedId,
    },
    /// `{emq}:<member>`
    Reserve(ReserveKey),
    /// Anything the grammar does not produce.
    Unclassified,
}

impl fmt::Display for KeyClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyClass::Queue { queue, key_type } => write!(f, "queue {queue} {}", key_type.as_str()),
            KeyClass::Job { queue, id } => write!(f, "job {queue} {id}"),
            KeyClass::Metric { queue, metric } => write!(f, "metric {queue} {}", metric.as_str()),
            KeyClass::Dedup { queue, dedup_id } => write!(f, "dedup {queue} {dedup_id}"),
            KeyClass::RepeatRecord { queue, name } => write!(f, "repeat {queue} {name}"),
            KeyClass::JobLogs { queue, id } => write!(f, "job logs {queue} {id}"),
            KeyClass::JobResult { queue, id } => write!(f, "job result {queue} {id}"),
            KeyClass::Reserve(r) => write!(f, "reserve {r:?}"),
            KeyClass::Unclassified => f.write_str("unclassified"),
        }
    }
}

/// A classified key as flat fields: the one shape every binding exposes
/// (`classify` in Python, Node and C), so no binding re-derives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyFields {
    /// `queue`, `job`, `metric`, `dedup`, `repeat`, `reserve` or `unclassified`.
    pub class: &'static str,
    /// The queue of a per-queue key, and of `{emq}:migration:<q>`.
    pub queue: Option<String>,
    /// The suffix after `emq:{q}:` of a queue or metric key: `pending`, ...,
    /// `metrics:completed`, `metrics:failed`; `de` for a dedup key, `repeat`
    /// for a repeat record.
    pub key_type: Option<String>,
    /// The id of a job key.
    pub id: Option<String>,
    /// The suffix after `{emq}:` of a reserve key: `version`, `locks`,
    /// `bundle`, `migration:<q>`; the dedup id of a dedup key; the name of a
    /// repeat record.
    pub member: Option<String>,
}

impl KeyClass {
    /// The queue, id and type this key carries, flattened for bindings.
    pub fn fields(&self) -> KeyFields {
        match self {
            KeyClass::Queue { queue, key_type } => KeyFields {
                class: "queue",
                queue: Some(queue.clone()),
                key_type: Some(key_type.as_str().to_string()),
                ..KeyFields::default()
            },
            KeyClass::Job { queue, id } => KeyFields {
                class: "job",
                queue: Some(queue.clone()),
                id: Some(id.to_string()),
                ..KeyFields::default()
            },
            KeyClass::Metric { queue, metric } => KeyFields {
                class: "metric",
                queue: Some(queue.clone()),
                key_type: Some(format!("metrics:{}", metric.as_str())),
                ..KeyFields::default()
            },
            KeyClass::JobLogs { queue, id } | KeyClass::JobResult { queue, id } => KeyFields {
                class: if matches!(self, KeyClass::JobLogs { .. }) {
                    "job_logs"
                } else {
                    "job_result"
                },
                queue: Some(queue.clone()),
                key_type: Some(
                    if matches!(self, KeyClass::JobLogs { .. }) {
                        "logs"
                    } else {
                        "result"
                    }
                    .to_string(),
                ),
                id: Some(id.to_string()),
                ..KeyFields::default()
            },
            KeyClass::Dedup { queue, dedup_id } => KeyFields {
                class: "dedup",
                queue: Some(queue.clone()),
                key_type: Some("de".to_string()),
                member: Some(dedup_id.clone()),
                ..KeyFields::default()
            },
            KeyClass::RepeatRecord { queue, name } => KeyFields {
                class: "repeat",
                queue: Some(queue.clone()),
                key_type: Some("repeat".to_string()),
                member: Some(name.clone()),
                ..KeyFields::default()
            },
            KeyClass::Reserve(member) => {
                let (text, queue) = match member {
                    ReserveKey::Version => ("version".to_string(), None),
                    ReserveKey::Locks => ("locks".to_string(), None),
                    ReserveKey::Bundle => ("bundle".to_string(), None),
                    ReserveKey::Migration(q) => (format!("migration:{q}"), Some(q.clone())),
                };
                KeyFields {
                    class: "reserve",
                    queue,
                    member: Some(text),
                    ..KeyFields::default()
                }
            }
            KeyClass::Unclassified => KeyFields {
                class: "unclassified",
                ..KeyFields::default()
            },
        }
    }
}

fn queue_name_ok(q: &[u8]) -> bool {
    !q.is_empty()
        && q.len() <= MAX_QUEUE_LEN
        && q != b"emq"
        && q.iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Refuse a queue name outside `[A-Za-z0-9._-]{1,128}` or equal to `emq`.
pub fn validate_queue(queue: &str) -> Result<()> {
    if queue_name_ok(queue.as_bytes()) {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::InvalidQueue,
            format!("invalid queue name {queue:?}: must match [A-Za-z0-9._-]{{1,128}} and not be \"emq\""),
        ))
    }
}

fn dedup_id_ok(did: &[u8]) -> bool {
    !did.is_empty()
        && did.len() <= MAX_DEDUP_ID_LEN
        && did
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Refuse a dedup id outside `[A-Za-z0-9._-]{1,255}` (the reference's charset).
pub fn validate_dedup_id(dedup_id: &str) -> Result<()> {
    if dedup_id_ok(dedup_id.as_bytes()) {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!(
            "invalid dedup id {dedup_id:?}: must match [A-Za-z0-9._-]{{1,255}}"
        )))
    }
}

/// `emq:{q}:de:<dedup id>` (echomq:2.1.0).
pub fn dedup_key(queue: &str, dedup_id: &str) -> Result<String> {
    validate_dedup_id(dedup_id)?;
    Ok(format!("{}de:{dedup_id}", queue_base(queue)?))
}

/// Refuse a repeatable job's name outside `[A-Za-z0-9._-]{1,255}` (the
/// dedup id's charset: no `:`, so `repeat:<name>` parses back unambiguously).
pub fn validate_repeat_name(name: &str) -> Result<()> {
    if dedup_id_ok(name.as_bytes()) {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!(
            "invalid repeat name {name:?}: must match [A-Za-z0-9._-]{{1,255}}"
        )))
    }
}

/// `emq:{q}:repeat:<name>` (echomq:2.1.0): a repeatable job's record.
pub fn repeat_record_key(queue: &str, name: &str) -> Result<String> {
    validate_repeat_name(name)?;
    Ok(format!("{}repeat:{name}", queue_base(queue)?))
}

/// Is `queue` a legal queue name?
pub fn is_valid_queue(queue: &str) -> bool {
    queue_name_ok(queue.as_bytes())
}

/// `emq:{q}:` — the base every key of the queue starts with.
pub fn queue_base(queue: &str) -> Result<String> {
    validate_queue(queue)?;
    Ok(format!("emq:{{{queue}}}:"))
}

/// `emq:{q}:<type>`
pub fn queue_key(queue: &str, key_type: KeyType) -> Result<String> {
    Ok(queue_base(queue)? + key_type.as_str())
}

/// `emq:{q}:job:<id>`; the id must be a valid branded id (any namespace).
pub fn job_key(queue: &str, id: &str) -> Result<String> {
    let id = BrandedId::parse(id)?;
    Ok(format!("{}job:{id}", queue_base(queue)?))
}

/// `emq:{q}:job:<id>:logs` (echomq:2.1.0): a job's log.
pub fn job_logs_key(queue: &str, id: &str) -> Result<String> {
    Ok(job_key(queue, id)? + ":logs")
}

/// `emq:{q}:job:<id>:result` (echomq:2.1.0): a job's kept result.
pub fn job_result_key(queue: &str, id: &str) -> Result<String> {
    Ok(job_key(queue, id)? + ":result")
}

/// `emq:{q}:metrics:<completed|failed>`
pub fn metric_key(queue: &str, metric: Metric) -> Result<String> {
    Ok(format!("{}metrics:{}", queue_base(queue)?, metric.as_str()))
}

/// A reserve member's key.
pub fn reserve_key(member: &ReserveKey) -> Result<String> {
    Ok(match member {
        ReserveKey::Version => VERSION_KEY.to_string(),
        ReserveKey::Locks => LOCKS_KEY.to_string(),
        ReserveKey::Bundle => BUNDLE_KEY.to_string(),
        ReserveKey::Migration(q) => {
            validate_queue(q)?;
            format!("{MIGRATION_PREFIX}{q}")
        }
    })
}

/// Classify any byte string by the newest grammar. Never panics; never
/// allocates for unclassified input beyond what the answer holds.
pub fn classify_bytes(key: &[u8]) -> KeyClass {
    classify_bytes_as(key, WireVersion::LATEST)
}

/// Classify a key string by one wire version's grammar.
pub fn classify_as(key: &str, version: WireVersion) -> KeyClass {
    classify_bytes_as(key.as_bytes(), version)
}

/// Classify any byte string by one wire version's grammar.
pub fn classify_bytes_as(key: &[u8], version: WireVersion) -> KeyClass {
    if let Some(rest) = key.strip_prefix(b"emq:{") {
        return classify_per_queue(rest, version).unwrap_or(KeyClass::Unclassified);
    }
    if let Some(rest) = key.strip_prefix(b"{emq}:") {
        return match rest {
            b"version" => KeyClass::Reserve(ReserveKey::Version),
            b"locks" => KeyClass::Reserve(ReserveKey::Locks),
            b"bundle" => KeyClass::Reserve(ReserveKey::Bundle),
            _ => match rest.strip_prefix(b"migration:") {
                Some(q) if queue_name_ok(q) => KeyClass::Reserve(ReserveKey::Migration(ascii(q))),
                _ => KeyClass::Unclassified,
            },
        };
    }
    KeyClass::Unclassified
}

/// Classify a key string.
pub fn classify(key: &str) -> KeyClass {
    classify_bytes(key.as_bytes())
}

fn ascii(b: &[u8]) -> String {
    // Callers pass only bytes already checked to be ASCII.
    String::from_utf8_lossy(b).into_owned()
}

fn classify_per_queue(rest: &[u8], version: WireVersion) -> Option<KeyClass> {
    // The queue charset has no '}', so the first '}' closes the hashtag.
    let close = rest.iter().position(|&b| b == b'}')?;
    let (q, tail) = (&rest[..close], &rest[close + 1..]);
    if !queue_name_ok(q) {
        return None;
    }
    let suffix = tail.strip_prefix(b":")?;
    let queue = ascii(q);
    if let Some(rest) = suffix.strip_prefix(b"job:") {
        // A job's own keys (2.1.0): `<id>:logs`, `<id>:result`; ids are 14 bytes.
        let (id, part) = match rest.get(14..) {
            Some(part) if !part.is_empty() => (&rest[..14], Some(part)),
            _ => (rest, None),
        };
        let id = BrandedId::parse_bytes(id).ok()?;
        return match part {
            None => Some(KeyClass::Job { queue, id }),
            Some(b":logs") if version >= WireVersion::V2_1_0 => {
                Some(KeyClass::JobLogs { queue, id })
            }
            Some(b":result") if version >= WireVersion::V2_1_0 => {
                Some(KeyClass::JobResult { queue, id })
            }
            Some(_) => None,
        };
    }
    if version >= WireVersion::V2_1_0 {
        if let Some(did) = suffix.strip_prefix(b"de:") {
            return dedup_id_ok(did).then(|| KeyClass::Dedup {
                queue,
                dedup_id: ascii(did),
            });
        }
        if let Some(name) = suffix.strip_prefix(b"repeat:") {
            return dedup_id_ok(name).then(|| KeyClass::RepeatRecord {
                queue,
                name: ascii(name),
            });
        }
    }
    let suffix = std::str::from_utf8(suffix).ok()?;
    if let Some(key_type) = KeyType::parse(suffix).filter(|t| t.since() <= version) {
        return Some(KeyClass::Queue { queue, key_type });
    }
    let metric = match suffix {
        "metrics:completed" => Metric::Completed,
        "metrics:failed" => Metric::Failed,
        _ => return None,
    };
    Some(KeyClass::Metric { queue, metric })
}

/// Every key of one queue, built once per call site.
#[derive(Debug, Clone)]
pub(crate) struct QueueKeys {
    pub base: String,
    pub pending: String,
    pub active: String,
    pub schedule: String,
    pub dead: String,
    pub meta: String,
    pub completed: String,
    pub failed: String,
    /// `emq:{q}:wake` (echomq:2.1.0): wake tokens idle workers block on.
    pub wake: String,
    /// `emq:{q}:limiter` (echomq:2.1.0): the rate limit's window counter.
    pub limiter: String,
    /// `emq:{q}:repeat` (echomq:2.1.0): the repeatable jobs' schedule.
    pub repeat: String,
    /// `emq:{q}:prio` (echomq:2.2.0): prioritized jobs waiting to be claimed.
    pub prio: String,
}

impl QueueKeys {
    pub fn new(queue: &str) -> Result<Self> {
        let base = queue_base(queue)?;
        Ok(QueueKeys {
            pending: format!("{base}pending"),
            active: format!("{base}active"),
            schedule: format!("{base}schedule"),
            dead: format!("{base}dead"),
            meta: format!("{base}meta"),
            completed: format!("{base}metrics:completed"),
            failed: format!("{base}metrics:failed"),
            wake: format!("{base}wake"),
            limiter: format!("{base}limiter"),
            repeat: format!("{base}repeat"),
            prio: format!("{base}prio"),
            base,
        })
    }

    pub fn job(&self, id: &BrandedId) -> String {
        format!("{}job:{id}", self.base)
    }

    /// `emq:{q}:job:<id>:logs` (echomq:2.1.0): the job's log, a LIST.
    pub fn job_logs(&self, id: &BrandedId) -> String {
        format!("{}job:{id}:logs", self.base)
    }

    /// `emq:{q}:job:<id>:result` (echomq:2.1.0): the kept result, a STRING
    /// with a TTL.
    pub fn job_result(&self, id: &BrandedId) -> String {
        format!("{}job:{id}:result", self.base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_key_budget_is_17_bytes() {
        let key = job_key("orders", "ORD0NgWEfAEJfs").unwrap();
        assert_eq!(key, "emq:{orders}:job:ORD0NgWEfAEJfs");
        assert_eq!("emq:{orders}:job:".len(), 17);
        assert_eq!(key.len(), 17 + 14);
    }

    #[test]
    fn refusals() {
        assert_eq!(
            validate_queue("emq").unwrap_err().kind(),
            ErrorKind::InvalidQueue
        );
        assert_eq!(
            validate_queue("").unwrap_err().kind(),
            ErrorKind::InvalidQueue
        );
        assert_eq!(
            validate_queue("a b").unwrap_err().kind(),
            ErrorKind::InvalidQueue
        );
        assert_eq!(
            validate_queue("a}b").unwrap_err().kind(),
            ErrorKind::InvalidQueue
        );
        assert!(validate_queue(&"x".repeat(128)).is_ok());
        assert!(validate_queue(&"x".repeat(129)).is_err());
        assert_eq!(
            job_key("orders", "ORD0NgWEfAEJf").unwrap_err().kind(),
            ErrorKind::InvalidId
        );
    }

    #[test]
    fn fields_shape() {
        let f = classify("emq:{orders}:metrics:failed").fields();
        assert_eq!(
            (f.class, f.key_type.as_deref()),
            ("metric", Some("metrics:failed"))
        );
        let f = classify("{emq}:migration:orders").fields();
        assert_eq!(
            (f.class, f.member.as_deref(), f.queue.as_deref()),
            ("reserve", Some("migration:orders"), Some("orders"))
        );
        assert_eq!(classify("nope").fields().class, "unclassified");
    }

    #[test]
    fn the_2_1_0_grammar_parses_dedup_keys_and_2_0_0_does_not() {
        let key = dedup_key("orders", "order-42").unwrap();
        assert_eq!(key, "emq:{orders}:de:order-42");
        let parsed = classify(&key);
        assert_eq!(
            parsed,
            KeyClass::Dedup {
                queue: "orders".into(),
                dedup_id: "order-42".into()
            }
        );
        let f = parsed.fields();
        assert_eq!(
            (f.class, f.key_type.as_deref(), f.member.as_deref()),
            ("dedup", Some("de"), Some("order-42"))
        );
        assert_eq!(
            classify_as(&key, WireVersion::V2_0_0),
            KeyClass::Unclassified
        );
        assert_eq!(classify("emq:{orders}:de:"), KeyClass::Unclassified);
        assert_eq!(
            classify("emq:{orders}:limiter"),
            KeyClass::Queue {
                queue: "orders".into(),
                key_type: KeyType::Limiter
            }
        );
        assert_eq!(
            classify_as("emq:{orders}:limiter", WireVersion::V2_0_0),
            KeyClass::Unclassified
        );
        assert_eq!(classify("emq:{orders}:de:a b"), KeyClass::Unclassified);
        assert!(dedup_key("orders", &"x".repeat(256)).is_err());
        assert!(dedup_key("orders", &"x".repeat(255)).is_ok());
    }

    #[test]
    fn the_2_1_0_grammar_parses_a_jobs_log_and_result_keys_and_2_0_0_does_not() {
        let logs = "emq:{orders}:job:JOB0NgWEfAEJfs:logs";
        let result = "emq:{orders}:job:JOB0NgWEfAEJfs:result";
        let f = classify(logs).fields();
        assert_eq!(
            (
                f.class,
                f.queue.as_deref(),
                f.key_type.as_deref(),
                f.id.as_deref()
            ),
            (
                "job_logs",
                Some("orders"),
                Some("logs"),
                Some("JOB0NgWEfAEJfs")
            )
        );
        assert!(matches!(classify(result), KeyClass::JobResult { .. }));
        assert_eq!(classify(result).fields().class, "job_result");
        for key in [logs, result] {
            assert_eq!(
                classify_as(key, WireVersion::V2_0_0),
                KeyClass::Unclassified
            );
        }
        for bad in [
            "emq:{orders}:job:JOB0NgWEfAEJfs:other",
            "emq:{orders}:job:JOB0NgWEfAEJfs:",
            "emq:{orders}:job:JOB0NgWEfAEJ:logs",
        ] {
            assert_eq!(classify(bad), KeyClass::Unclassified, "{bad}");
        }
        let keys = QueueKeys::new("orders").unwrap();
        let id = BrandedId::parse("JOB0NgWEfAEJfs").unwrap();
        assert_eq!(
            (keys.job_logs(&id), keys.job_result(&id)),
            (logs.into(), result.into())
        );
    }

    #[test]
    fn the_2_1_0_grammar_parses_the_wake_key_and_2_0_0_does_not() {
        let key = queue_key("orders", KeyType::Wake).unwrap();
        assert_eq!(key, "emq:{orders}:wake");
        assert_eq!(QueueKeys::new("orders").unwrap().wake, key);
        assert_eq!(
            classify(&key),
            KeyClass::Queue {
                queue: "orders".into(),
                key_type: KeyType::Wake
            }
        );
        assert_eq!(
            classify_as(&key, WireVersion::V2_0_0),
            KeyClass::Unclassified
        );
        assert_eq!(KeyType::parse("wake"), Some(KeyType::Wake));
        assert_eq!(KeyType::Wake.since(), WireVersion::V2_1_0);
        assert_eq!(classify("emq:{orders}:wake:x"), KeyClass::Unclassified);
    }

    #[test]
    fn the_2_1_0_grammar_parses_repeat_keys_and_2_0_0_does_not() {
        let record = repeat_record_key("orders", "nightly.report").unwrap();
        assert_eq!(record, "emq:{orders}:repeat:nightly.report");
        let parsed = classify(&record);
        assert_eq!(
            parsed,
            KeyClass::RepeatRecord {
                queue: "orders".into(),
                name: "nightly.report".into()
            }
        );
        let f = parsed.fields();
        assert_eq!(
            (f.class, f.key_type.as_deref(), f.member.as_deref()),
            ("repeat", Some("repeat"), Some("nightly.report"))
        );
        assert_eq!(
            classify("emq:{orders}:repeat"),
            KeyClass::Queue {
                queue: "orders".into(),
                key_type: KeyType::Repeat
            }
        );
        for key in ["emq:{orders}:repeat", record.as_str()] {
            assert_eq!(
                classify_as(key, WireVersion::V2_0_0),
                KeyClass::Unclassified
            );
        }
        assert_eq!(classify("emq:{orders}:repeat:"), KeyClass::Unclassified);
        assert_eq!(classify("emq:{orders}:repeat:a:b"), KeyClass::Unclassified);
        assert!(repeat_record_key("orders", "a b").is_err());
        assert!(repeat_record_key("orders", &"x".repeat(256)).is_err());
        assert!(repeat_record_key("emq", "x").is_err());
    }

    #[test]
    fn classification() {
        assert_eq!(
            classify("emq:{orders}:pending"),
            KeyClass::Queue {
                queue: "orders".into(),
                key_type: KeyType::Pending
            }
        );
        assert!(matches!(
            classify("emq:{orders}:job:ORD0NgWEfAEJfs"),
            KeyClass::Job { .. }
        ));
        assert_eq!(
            classify("{emq}:version"),
            KeyClass::Reserve(ReserveKey::Version)
        );
        assert_eq!(
            classify("{emq}:migration:orders"),
            KeyClass::Reserve(ReserveKey::Migration("orders".into()))
        );
        assert!(matches!(
            classify("emq:{orders}:metrics:failed"),
            KeyClass::Metric { .. }
        ));
        for bad in [
            "emq:{emq}:pending",
            "emq:{orders}:job:USRzzzzzzzzzzz",
            "{emq}:other",
            "emq:{}:pending",
            "emq:{orders}pending",
            "bull:x",
        ] {
            assert_eq!(classify(bad), KeyClass::Unclassified, "{bad}");
        }
    }
}
