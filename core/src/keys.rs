//! The closed key grammar (PROTOCOL.md §2): build, parse, classify.
//!
//! ```text
//! key        := per-queue | reserve
//! per-queue  := "emq:{" q "}:" suffix
//! reserve    := "{emq}:" ( "version" | "locks" | "bundle" | "migration:" q )
//! suffix     := type | "job:" jid | "metrics:completed" | "metrics:failed"
//! ```

use std::fmt;

use crate::error::{Error, ErrorKind, Result};
use crate::id::BrandedId;

pub const VERSION_KEY: &str = "{emq}:version";
pub const LOCKS_KEY: &str = "{emq}:locks";
pub const BUNDLE_KEY: &str = "{emq}:bundle";
const MIGRATION_PREFIX: &str = "{emq}:migration:";
const MAX_QUEUE_LEN: usize = 128;

/// The five per-queue structures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyType {
    Pending,
    Active,
    Schedule,
    Dead,
    Meta,
}

impl KeyType {
    pub const ALL: [KeyType; 5] = [
        KeyType::Pending,
        KeyType::Active,
        KeyType::Schedule,
        KeyType::Dead,
        KeyType::Meta,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            KeyType::Pending => "pending",
            KeyType::Active => "active",
            KeyType::Schedule => "schedule",
            KeyType::Dead => "dead",
            KeyType::Meta => "meta",
        }
    }

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
    Completed,
    Failed,
}

impl Metric {
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
    Version,
    Locks,
    Bundle,
    Migration(String),
}

/// What a key string is, by parse.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeyClass {
    /// `emq:{q}:<type>`
    Queue { queue: String, key_type: KeyType },
    /// `emq:{q}:job:<id>`
    Job { queue: String, id: BrandedId },
    /// `emq:{q}:metrics:<completed|failed>`
    Metric { queue: String, metric: Metric },
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
            KeyClass::Reserve(r) => write!(f, "reserve {r:?}"),
            KeyClass::Unclassified => f.write_str("unclassified"),
        }
    }
}

/// A classified key as flat fields: the one shape every binding exposes
/// (`classify` in Python, Node and C), so no binding re-derives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyFields {
    /// `queue`, `job`, `metric`, `reserve` or `unclassified`.
    pub class: &'static str,
    /// The queue of a per-queue key, and of `{emq}:migration:<q>`.
    pub queue: Option<String>,
    /// The suffix after `emq:{q}:` of a queue or metric key: `pending`, ...,
    /// `metrics:completed`, `metrics:failed`.
    pub key_type: Option<String>,
    /// The id of a job key.
    pub id: Option<String>,
    /// The suffix after `{emq}:` of a reserve key: `version`, `locks`,
    /// `bundle`, `migration:<q>`.
    pub member: Option<String>,
}

impl KeyClass {
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

/// Classify any byte string. Never panics; never allocates for unclassified input
/// beyond what the answer holds.
pub fn classify_bytes(key: &[u8]) -> KeyClass {
    if let Some(rest) = key.strip_prefix(b"emq:{") {
        return classify_per_queue(rest).unwrap_or(KeyClass::Unclassified);
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

fn classify_per_queue(rest: &[u8]) -> Option<KeyClass> {
    // The queue charset has no '}', so the first '}' closes the hashtag.
    let close = rest.iter().position(|&b| b == b'}')?;
    let (q, tail) = (&rest[..close], &rest[close + 1..]);
    if !queue_name_ok(q) {
        return None;
    }
    let suffix = tail.strip_prefix(b":")?;
    let queue = ascii(q);
    if let Some(id) = suffix.strip_prefix(b"job:") {
        let id = BrandedId::parse_bytes(id).ok()?;
        return Some(KeyClass::Job { queue, id });
    }
    let suffix = std::str::from_utf8(suffix).ok()?;
    if let Some(key_type) = KeyType::parse(suffix) {
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
            base,
        })
    }

    pub fn job(&self, id: &BrandedId) -> String {
        format!("{}job:{id}", self.base)
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
