//! The one declaration of every connect and worker option: name, type,
//! default, range and a one-line doc (issue #33).
//!
//! Everything else is derived from this table or checked against it: the
//! core's range checks ([`OptionSpec::check`], used by
//! `WorkerOptions::validate` and `ConnectOptions::validate`), Python's and
//! Node's `defaults()`, Node's allow-list of option names, and — by the
//! bindings' schema tests — the Python signatures, `index.d.ts` and the option
//! tables of the guides. Defaults are not written here: each one names its
//! constant in [`crate::defaults`].
//!
//! Names are snake_case, as in Rust, Python and C; Node's name is derived by
//! one rule ([`camel_case`]: `lease_ms` → `leaseMs`).

use crate::defaults as d;
use crate::error::{Error, Result};

/// Which options struct an option belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionGroup {
    /// [`crate::ConnectOptions`]: `connect(url, options)`.
    Connect,
    /// [`crate::worker::WorkerOptions`]: `Worker(client, queue, handler, options)`.
    Worker,
}

impl OptionGroup {
    /// `connect` or `worker`.
    pub fn as_str(self) -> &'static str {
        match self {
            OptionGroup::Connect => "connect",
            OptionGroup::Worker => "worker",
        }
    }
}

/// What an option's value is, independent of any language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionType {
    /// A non-negative integer (a count, an id).
    Int,
    /// A duration in milliseconds (Python also takes a `timedelta`).
    Ms,
    /// A size in bytes.
    Bytes,
    /// true / false.
    Bool,
    /// Free text.
    Text,
    /// One of these names.
    OneOf(&'static [&'static str]),
}

impl OptionType {
    /// `int`, `ms`, `bytes`, `bool`, `string` or `enum`.
    pub fn as_str(self) -> &'static str {
        match self {
            OptionType::Int => "int",
            OptionType::Ms => "ms",
            OptionType::Bytes => "bytes",
            OptionType::Bool => "bool",
            OptionType::Text => "string",
            OptionType::OneOf(_) => "enum",
        }
    }

    /// Whether the value is a number (so a range may apply).
    pub fn is_numeric(self) -> bool {
        matches!(self, OptionType::Int | OptionType::Ms | OptionType::Bytes)
    }
}

/// An option's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionDefault {
    /// A number.
    Int(u64),
    /// A flag.
    Bool(bool),
    /// A name or text.
    Text(&'static str),
    /// Not set (Python `None`, Node `null`); the doc says what that means.
    Unset,
}

/// One option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionSpec {
    /// snake_case name (Rust field, Python keyword, C struct field).
    pub name: &'static str,
    /// Connect or worker.
    pub group: OptionGroup,
    /// Its type.
    pub kind: OptionType,
    /// Its default (from [`crate::defaults`]).
    pub default: OptionDefault,
    /// Smallest value the core accepts, where it checks one.
    pub min: Option<u64>,
    /// Largest value the core accepts, where it checks one.
    pub max: Option<u64>,
    /// One line for the docs and the bindings.
    pub doc: &'static str,
}

impl OptionSpec {
    /// Node's name: [`camel_case`] of [`OptionSpec::name`].
    pub fn js_name(&self) -> String {
        camel_case(self.name)
    }

    /// Refuse `value` outside this option's range with an invalid-argument
    /// error naming the option. An option without a range accepts anything.
    pub fn check(&self, value: u64) -> Result<()> {
        let min = self.min.unwrap_or(0);
        let max = self.max.unwrap_or(u64::MAX);
        if value < min || value > max {
            let range = match self.max {
                Some(max) => format!("{min}..={max}"),
                None => format!("{min}.."),
            };
            return Err(Error::invalid_argument(format!(
                "{} is {value}, outside {range}",
                self.name
            )));
        }
        Ok(())
    }
}

/// `lease_ms` → `leaseMs`: each `_` dropped and the letter after it upper-cased.
pub fn camel_case(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

const fn opt(
    group: OptionGroup,
    name: &'static str,
    kind: OptionType,
    default: OptionDefault,
    range: (Option<u64>, Option<u64>),
    doc: &'static str,
) -> OptionSpec {
    OptionSpec {
        name,
        group,
        kind,
        default,
        min: range.0,
        max: range.1,
        doc,
    }
}

use OptionDefault::{Bool, Int, Text, Unset};
use OptionGroup::{Connect, Worker};
use OptionType::{Bytes, Ms, OneOf, Text as Str};

const NO_RANGE: (Option<u64>, Option<u64>) = (None, None);
const SLOTS: (Option<u64>, Option<u64>) = (Some(1), Some(d::MAX_WORKER_SLOTS as u64));
const POSITIVE_MS: (Option<u64>, Option<u64>) = (Some(1), Some(d::MAX_DURATION_MS));
const ANY_MS: (Option<u64>, Option<u64>) = (Some(0), Some(d::MAX_DURATION_MS));
const ATTEMPTS: (Option<u64>, Option<u64>) = (Some(1), Some(d::MAX_ATTEMPTS_LIMIT));

/// The names [`crate::worker::Backoff::parse`] documents (it also takes `full_jitter`).
pub const BACKOFF_NAMES: &[&str] = &["exponential", "fixed", "jitter"];

/// Every connect and worker option, connect first, each group in the order
/// of its struct.
#[rustfmt::skip]
pub const OPTIONS: &[OptionSpec] = &[
    opt(Connect, "node_id", OptionType::Int, Unset, (Some(0), Some(crate::id::MAX_NODE_ID as u64)),
        "node id mixed into minted ids; unset: EMQ_NODE_ID, else random per process"),
    opt(Connect, "client_name", Str, Unset, NO_RANGE,
        "CLIENT SETNAME for every connection (printable ASCII, no spaces); unset: none"),
    opt(Connect, "connect_timeout_ms", Ms, Int(d::CONNECT_TIMEOUT_MS), (Some(1), None),
        "how long one connection attempt (TCP, TLS, handshake, fence) may take, and how long refused reconnects are retried before a call answers unavailable"),
    opt(Connect, "response_timeout_ms", Ms, Int(d::RESPONSE_TIMEOUT_MS), NO_RANGE,
        "how long one command may wait for its answer; 0 = no limit"),
    opt(Connect, "max_payload", Bytes, Int(d::MAX_PAYLOAD as u64), NO_RANGE,
        "largest payload accepted before the wire (16 MiB)"),
    opt(Connect, "strict_bundle", OptionType::Bool, Bool(d::STRICT_BUNDLE), NO_RANGE,
        "make a script-bundle mismatch a connect error instead of a logged condition"),
    opt(Connect, "publish_events", OptionType::Bool, Bool(d::PUBLISH_EVENTS), NO_RANGE,
        "publish queue events on emq:{q}:events after each transition"),
    opt(Connect, "wire_version", OneOf(&["echomq:2.1.0", "echomq:2.0.0"]),
        Text(crate::PROTOCOL_VERSION), NO_RANGE,
        "the wire version to speak and fence; 2.0.0 shares an older deployment"),
    opt(Connect, "wait_replicas", OptionType::Int, Int(d::WAIT_REPLICAS), NO_RANGE,
        "durable writes: WAIT for this many replicas after every enqueue and complete"),
    opt(Connect, "wait_timeout_ms", Ms, Int(d::WAIT_TIMEOUT_MS), NO_RANGE,
        "how long one WAIT may block"),
    opt(Worker, "concurrency", OptionType::Int, Int(d::CONCURRENCY as u64), SLOTS,
        "handlers running at once"),
    opt(Worker, "lease_ms", Ms, Int(d::LEASE_MS), POSITIVE_MS,
        "lease per claim, renewed every lease_ms / 3"),
    opt(Worker, "max_attempts", OptionType::Int, Int(d::MAX_ATTEMPTS), ATTEMPTS,
        "attempts before a job is dead-lettered"),
    opt(Worker, "backoff", OneOf(BACKOFF_NAMES), Text(d::BACKOFF), NO_RANGE,
        "how retry delays grow: exponential, fixed or jitter (full jitter)"),
    opt(Worker, "backoff_base_ms", Ms, Int(d::BACKOFF_BASE_MS), ANY_MS,
        "first retry delay"),
    opt(Worker, "backoff_cap_ms", Ms, Int(d::BACKOFF_CAP_MS), ANY_MS,
        "longest retry delay (not below backoff_base_ms)"),
    opt(Worker, "pump_interval_ms", Ms, Int(d::PUMP_INTERVAL_MS), POSITIVE_MS,
        "the promote/reap pumps' beat while the worker holds jobs"),
    opt(Worker, "idle_max_ms", Ms, Int(d::IDLE_MAX_MS), POSITIVE_MS,
        "short poll's ceiling after a claim failure, at a concurrency ceiling, and on wire 2.0.0"),
    opt(Worker, "wake_fallback_ms", Ms, Int(d::WAKE_FALLBACK_MS), POSITIVE_MS,
        "how long an idle worker stays parked on the wake list before it looks anyway"),
    opt(Worker, "shutdown_grace_ms", Ms, Int(d::SHUTDOWN_GRACE_MS), ANY_MS,
        "how long in-flight handlers may run after stop"),
    opt(Worker, "prefetch", OptionType::Int, Unset, (Some(0), Some(d::MAX_WORKER_SLOTS as u64)),
        "jobs claimed ahead of free slots; unset: adaptive, at most concurrency"),
    opt(Worker, "handler_batch", OptionType::Int, Int(d::HANDLER_BATCH as u64), SLOTS,
        "jobs handed to one handler call (one crossing into the language)"),
    opt(Worker, "dead_max_age_ms", Ms, Unset, NO_RANGE,
        "dead-set retention: delete dead jobs minted longer ago; unset: keep"),
    opt(Worker, "dead_max_len", OptionType::Int, Unset, NO_RANGE,
        "dead-set retention: keep at most this many dead jobs; unset: keep all"),
    opt(Worker, "max_stalls", OptionType::Int, Int(d::MAX_STALLS), ATTEMPTS,
        "stalls (lapsed leases) a job survives before it is dead-lettered stalled"),
    opt(Worker, "keep_result_ms", Ms, Int(d::KEEP_RESULT_MS), ANY_MS,
        "keep each handler's return value as the job's result this long; 0 = not at all"),
];

/// Defaults of verb arguments that are not options but that `defaults()`
/// also answers: `browse`'s page and `promote`'s / `reap`'s batch.
pub const VERB_DEFAULTS: &[(&str, u64)] = &[
    ("browse_limit", d::BROWSE_LIMIT),
    ("pump_limit", d::PUMP_LIMIT),
];

/// The options of one group, in declaration order.
pub fn options(group: OptionGroup) -> impl Iterator<Item = &'static OptionSpec> {
    OPTIONS.iter().filter(move |o| o.group == group)
}

/// The option `name` of `group`. The core calls it with its own literal
/// names (the unit tests cover each), so a missing one is a bug here.
pub fn spec(group: OptionGroup, name: &str) -> &'static OptionSpec {
    options(group)
        .find(|o| o.name == name)
        .unwrap_or_else(|| panic!("option_schema has no {} option {name}", group.as_str()))
}

/// What `defaults()` answers in every binding: each option's default (by
/// snake_case name), then [`VERB_DEFAULTS`].
pub fn defaults() -> impl Iterator<Item = (&'static str, OptionDefault)> {
    OPTIONS
        .iter()
        .map(|o| (o.name, o.default))
        .chain(VERB_DEFAULTS.iter().map(|&(n, v)| (n, Int(v))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::WorkerOptions;
    use crate::ConnectOptions;

    #[test]
    fn camel_case_is_one_rule() {
        assert_eq!(camel_case("lease_ms"), "leaseMs");
        assert_eq!(camel_case("wake_fallback_ms"), "wakeFallbackMs");
        assert_eq!(camel_case("concurrency"), "concurrency");
    }

    #[test]
    fn names_are_unique_snake_case_and_ranges_only_on_numbers() {
        let mut seen = std::collections::HashSet::new();
        for o in OPTIONS {
            assert!(seen.insert(o.name), "{} twice", o.name);
            assert!(o.name.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
            if o.min.is_some() || o.max.is_some() {
                assert!(o.kind.is_numeric(), "{} has a range", o.name);
            }
            if let (Some(min), Some(max)) = (o.min, o.max) {
                assert!(min <= max, "{}", o.name);
            }
            assert!(!o.doc.is_empty() && !o.doc.contains('\n') && !o.doc.contains('|'));
        }
    }

    #[test]
    fn the_structs_default_to_the_schema() {
        let w = WorkerOptions::default();
        for (name, value) in w.numeric_values() {
            let want = match spec(OptionGroup::Worker, name).default {
                Int(v) => Some(v),
                Unset => None,
                other => panic!("{name}: {other:?}"),
            };
            assert_eq!(value, want, "{name}");
        }
        assert_eq!(
            spec(OptionGroup::Worker, "backoff").default,
            Text(d::BACKOFF)
        );
        let c = ConnectOptions::default();
        let int = |name| spec(OptionGroup::Connect, name).default;
        assert_eq!(
            int("connect_timeout_ms"),
            Int(c.connect_timeout.as_millis() as u64)
        );
        assert_eq!(int("max_payload"), Int(c.max_payload as u64));
        assert_eq!(int("wait_replicas"), Int(u64::from(c.wait_replicas)));
        assert_eq!(int("wait_timeout_ms"), Int(c.wait_timeout_ms));
        assert_eq!(int("strict_bundle"), Bool(c.strict_bundle));
        assert_eq!(int("publish_events"), Bool(c.publish_events));
        assert_eq!(int("wire_version"), Text(c.wire_version.as_str()));
        let response = c.response_timeout.map_or(0, |t| t.as_millis() as u64);
        assert_eq!(int("response_timeout_ms"), Int(response));
    }

    /// Every numeric worker option is one `validate` checks (a schema row the
    /// struct does not know, or a field the schema lacks, fails here), and
    /// `validate` refuses each one's range edges.
    #[test]
    fn validate_checks_every_worker_range_from_the_schema() {
        let listed: Vec<_> = WorkerOptions::default()
            .numeric_values()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        let numeric: Vec<_> = options(OptionGroup::Worker)
            .filter(|o| o.kind.is_numeric())
            .map(|o| o.name)
            .collect();
        assert_eq!(listed, numeric);
        for o in options(OptionGroup::Worker).filter(|o| o.max.is_some()) {
            let max = o.max.unwrap();
            let mut w = WorkerOptions::default();
            w.set_for_tests(o.name, max + 1);
            let e = w.validate().expect_err(o.name);
            assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{}", o.name);
            if let Some(min) = o.min.filter(|&m| m > 0) {
                let mut w = WorkerOptions::default();
                w.set_for_tests(o.name, min - 1);
                assert!(w.validate().is_err(), "{} below {min}", o.name);
            }
        }
    }

    #[test]
    fn connect_validate_uses_the_schema_range() {
        let c = ConnectOptions {
            connect_timeout: std::time::Duration::ZERO,
            ..ConnectOptions::default()
        };
        let e = c.validate().unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
        assert!(ConnectOptions::default().validate().is_ok());
    }
}
