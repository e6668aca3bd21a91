//! A deployment's health, judged from its [`ServerProbe`]: one PASS / WARN /
//! FAIL verdict per check, with a sentence saying what to do. `emq doctor`
//! prints these lines and the dashboard's health panel shows them, so both
//! judge the same facts the same way (and any runtime can call it).

use std::time::Duration;

use crate::probe::ServerProbe;
use crate::repeat::Repeat;
use crate::wire::WireVersion;

// What an idle worker listens for is the worker's to say (worker/wake.rs);
// the `keyspace-events` check judges a server by it.
pub use crate::worker::wake::keyspace_events_cover_pending;

/// How bad a check's finding is; ordered, so the worst of a list is its `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    /// Nothing to do.
    Pass,
    /// Works, but worth a look.
    Warn,
    /// Broken: fix before relying on it.
    Fail,
}

impl Status {
    /// `PASS`, `WARN` or `FAIL`.
    pub fn word(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }
}

/// One check's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// `server`, `fence`, `bundle`, `maxmemory-policy`, `persistence`,
    /// `keyspace-events`, `cluster`, `latency`, `clock` (callers add their own, e.g. `leases`).
    pub name: &'static str,
    /// The verdict.
    pub status: Status,
    /// What was found and, when it is not a pass, what to do about it.
    pub detail: String,
}

impl Check {
    /// A check's verdict with what was found.
    pub fn new(name: &'static str, status: Status, detail: impl Into<String>) -> Check {
        Check {
            name,
            status,
            detail: detail.into(),
        }
    }
}

/// The worst status of `checks` (`Pass` for none).
pub fn worst(checks: &[Check]) -> Status {
    checks
        .iter()
        .map(|c| c.status)
        .max()
        .unwrap_or(Status::Pass)
}

/// A round trip slower than this is worth a warning.
pub const SLOW_ROUND_TRIP: Duration = Duration::from_millis(50);
/// A clock offset larger than this skews ages, time filters and retention.
pub const CLOCK_SKEW_MS: i64 = 1_000;

/// The checks that need only the probe: the server, the protocol fence, the
/// script bundle, the eviction policy, persistence, cluster mode, latency
/// and clock skew, in that order.
/// A URL of the wrong kind (standalone at a cluster node, or cluster at a
/// standalone server) answers only the server and the cluster check: the
/// fence keys cannot be read through it.
pub fn server_checks(p: &ServerProbe) -> Vec<Check> {
    server_checks_speaking(p, WireVersion::NEWEST, false)
}

/// [`server_checks`] for a client told to speak `wire` (`wire_given`: by
/// the operator, e.g. `emq --wire`), so the fence line can say when that
/// choice is refused by the deployment's record.
pub fn server_checks_speaking(p: &ServerProbe, wire: WireVersion, wire_given: bool) -> Vec<Check> {
    let server = Check::new("server", Status::Pass, server_label(p));
    if url_mismatch(p) {
        return vec![server, cluster(p)];
    }
    vec![
        server,
        fence(p.version_record.as_deref(), wire, wire_given),
        bundle(p),
        eviction(p),
        persistence(p),
        keyspace_events(p.keyspace_events.as_deref()),
        cluster(p),
        latency(p),
        clock(p),
    ]
}

/// The URL's kind (standalone or cluster) is not the server's.
pub fn url_mismatch(p: &ServerProbe) -> bool {
    p.cluster_url != p.cluster_enabled
}

fn cluster(p: &ServerProbe) -> Check {
    match (p.cluster_url, p.cluster_enabled) {
        (false, false) => Check::new("cluster", Status::Pass, "standalone (cluster mode off)"),
        (false, true) => Check::new(
            "cluster",
            Status::Fail,
            "the server is a cluster node but the url is a standalone one: use \
             redis+cluster://host:port[,host:port…]/ (rediss+cluster:// for TLS)",
        ),
        (true, false) => Check::new(
            "cluster",
            Status::Fail,
            "the url asks for a cluster but the server runs standalone (cluster mode off): \
             use redis://host:port/ (rediss:// for TLS)",
        ),
        (true, true) => {
            let state = p.cluster_state.as_deref().unwrap_or("unknown");
            let masters = p.cluster_masters.unwrap_or(0);
            Check::new(
                "cluster",
                if state == "ok" {
                    Status::Pass
                } else {
                    Status::Fail
                },
                format!("cluster mode: {masters} master(s), cluster_state {state}"),
            )
        }
    }
}

fn server_label(p: &ServerProbe) -> String {
    let name = if p.server == "valkey" {
        "Valkey"
    } else {
        "Redis"
    };
    format!("{name} {}", p.server_version)
}

/// The fence line: the version the deployment is fenced at, against this
/// client's newest (older: WARN, run `emq upgrade`) and against `wire` when
/// the operator chose it; a value this client does not know is a FAIL.
fn fence(record: Option<&str>, wire: WireVersion, wire_given: bool) -> Check {
    let newest = WireVersion::NEWEST;
    let Some(found) = record else {
        return Check::new(
            "fence",
            Status::Pass,
            format!(
                "{{emq}}:version not set yet; the first client records the version it speaks \
                 ({wire} for this one)"
            ),
        );
    };
    let Ok(fenced) = WireVersion::parse(found) else {
        return Check::new(
            "fence",
            Status::Fail,
            format!(
                "{{emq}}:version is {found:?}, which this client does not speak (it knows {}): \
                 every runtime must speak the deployment's version — use clients that speak {found}",
                WireVersion::ALL.map(WireVersion::as_str).join(" and ")
            ),
        );
    };
    // Told to speak another version than the record: every verb would be
    // refused by the fence.
    let wire_note = if wire_given && wire != fenced {
        format!(
            "; this client was told to speak {wire} (--wire / EMQ_WIRE), which the fence \
             refuses: use --wire {fenced}"
        )
    } else {
        String::new()
    };
    if fenced < newest {
        let meanwhile = if wire_given && wire == fenced {
            String::new()
        } else {
            format!(" (until then, run emq with --wire {fenced})")
        };
        Check::new(
            "fence",
            Status::Warn,
            format!(
                "fenced at {fenced}, older than this client's newest {newest}: once every runtime \
                 speaks {newest}, run emq upgrade{meanwhile}{wire_note}"
            ),
        )
    } else if wire_note.is_empty() {
        Check::new(
            "fence",
            Status::Pass,
            format!("fenced at {fenced} (this client's newest)"),
        )
    } else {
        Check::new(
            "fence",
            Status::Warn,
            format!("fenced at {fenced}{wire_note}"),
        )
    }
}

fn bundle(p: &ServerProbe) -> Check {
    if p.bundle_mismatches.is_empty() {
        return Check::new(
            "bundle",
            Status::Pass,
            "{emq}:bundle matches this build's scripts",
        );
    }
    let fields: Vec<&str> = p
        .bundle_mismatches
        .iter()
        .map(|m| m.field.as_str())
        .collect();
    Check::new(
        "bundle",
        Status::Warn,
        format!(
            "another runtime recorded different script bytes for {}: run one EchoMQ release everywhere",
            fields.join(", ")
        ),
    )
}

fn eviction(p: &ServerProbe) -> Check {
    match p.maxmemory_policy.as_deref() {
        Some("noeviction") => Check::new("maxmemory-policy", Status::Pass, "noeviction"),
        Some(other) => Check::new(
            "maxmemory-policy",
            Status::Fail,
            format!("{other} can silently evict jobs: set maxmemory-policy noeviction"),
        ),
        None => Check::new(
            "maxmemory-policy",
            Status::Warn,
            "not reported by the server",
        ),
    }
}

fn persistence(p: &ServerProbe) -> Check {
    match (p.aof_enabled, p.rdb_enabled) {
        (true, _) => Check::new("persistence", Status::Pass, "AOF on"),
        (false, Some(true)) => Check::new(
            "persistence",
            Status::Pass,
            "RDB snapshots (jobs since the last snapshot are lost on a crash; AOF loses less)",
        ),
        (false, Some(false)) => Check::new(
            "persistence",
            Status::Warn,
            "no AOF and no RDB: a restart loses every job",
        ),
        (false, None) => Check::new(
            "persistence",
            Status::Warn,
            "no AOF, and RDB unknown (CONFIG refused)",
        ),
    }
}

fn latency(p: &ServerProbe) -> Check {
    let rtt_ms = p.round_trip.as_secs_f64() * 1000.0;
    Check::new(
        "latency",
        if p.round_trip > SLOW_ROUND_TRIP {
            Status::Warn
        } else {
            Status::Pass
        },
        format!("round trip {rtt_ms:.2} ms"),
    )
}

fn clock(p: &ServerProbe) -> Check {
    Check::new(
        "clock",
        if p.clock_offset_ms.abs() > CLOCK_SKEW_MS {
            Status::Warn
        } else {
            Status::Pass
        },
        format!(
            "server clock is {} ms {} this host's",
            p.clock_offset_ms.abs(),
            if p.clock_offset_ms >= 0 {
                "ahead of"
            } else {
                "behind"
            }
        ),
    )
}

/// What the reference runtime's repeat pump would do wrong to this record of
/// ours, if anything (docs/PROTOCOL-DECISIONS.md 13r.10): it requires
/// `every_ms` and deletes a record without it, and it reads neither `limit`
/// nor `end_at`.
fn reference_mishandles(r: &Repeat) -> Option<&'static str> {
    if r.every_ms.is_none() {
        Some("cron: it deletes the record")
    } else if r.limit.is_some() {
        Some("limit: it fires past it")
    } else if r.end_at.is_some() {
        Some("end_at: it fires past it")
    } else {
        None
    }
}

/// The slot an interval repeat waits for is off the grid of the slot it
/// last fired: EchoMQ's fire always advances on the grid (`last_slot + k ×
/// every_ms`), and a changed spec resets `count`; the reference's pump sets
/// its host's now + `every_ms` and leaves `count` and `last_slot` alone.
fn advanced_by_another_pump(r: &Repeat) -> bool {
    match (r.every_ms, r.last_run_ms) {
        (Some(every), Some(last)) if every > 0 && r.count > 0 => {
            r.next_run_ms <= last || (r.next_run_ms - last) % every != 0
        }
        _ => false,
    }
}

/// The `repeats` check of `emq doctor`: the queues' repeatable jobs (each
/// queue's [`Client::list_repeats`](crate::Client::list_repeats)) judged for
/// a deployment shared with the reference runtime, whose repeat pump deletes
/// cron-only records, ignores `limit` and `end_at`, and fires a slot ours
/// fired again (13r.10). WARN when a record shows the reference's pump ran
/// on it; otherwise PASS, naming the records only EchoMQ's pump may run.
pub fn repeats_check(queues: &[(String, Vec<Repeat>)]) -> Check {
    let named = |q: &str, r: &Repeat| format!("{q}/{}", r.name);
    let total: usize = queues.iter().map(|(_, rs)| rs.len()).sum();
    if total == 0 {
        return Check::new("repeats", Status::Pass, "no repeatable jobs");
    }
    let mut advanced = Vec::new();
    let mut at_risk = Vec::new();
    for (q, repeats) in queues {
        for r in repeats {
            if advanced_by_another_pump(r) {
                advanced.push(named(q, r));
            }
            if let Some(why) = reference_mishandles(r) {
                at_risk.push(format!("{} ({why})", named(q, r)));
            }
        }
    }
    if !advanced.is_empty() {
        let risk = if at_risk.is_empty() {
            String::new()
        } else {
            format!("; it also mishandles {}", at_risk.join(", "))
        };
        return Check::new(
            "repeats",
            Status::Warn,
            format!(
                "another pump advanced {} off its grid: the reference runtime's repeat pump runs \
                 next to EchoMQ's, and a slot can fire twice{risk} — let only one runtime pump \
                 repeats (docs/PROTOCOL-DECISIONS.md 13r.10)",
                advanced.join(", ")
            ),
        );
    }
    let mut detail = format!("{total} repeatable job(s)");
    if !at_risk.is_empty() {
        detail.push_str(&format!(
            "; only EchoMQ's pump may run {}: never run the reference runtime's repeat pump on \
             these queues",
            at_risk.join(", ")
        ));
    }
    Check::new("repeats", Status::Pass, detail)
}

/// The `keyspace-events` check, from the value of `CONFIG GET
/// notify-keyspace-events` (`None`: the server refused `CONFIG`). Always a
/// PASS that says which way idle workers hear a job written without a wake
/// hint, and how to make it faster: without notifications an idle worker
/// still picks such a job up within about a second, polling, which is no
/// fault of the deployment (Redis ships with them off); with them, within
/// milliseconds. EchoMQ never changes the server's configuration.
pub fn keyspace_events(flags: Option<&str>) -> Check {
    const NAME: &str = "keyspace-events";
    match flags {
        Some(f) if keyspace_events_cover_pending(f) => Check::new(
            NAME,
            Status::Pass,
            format!("notify-keyspace-events '{f}': idle workers hear hintless enqueues at once"),
        ),
        Some(f) => Check::new(
            NAME,
            Status::Pass,
            format!(
                "notify-keyspace-events '{f}' lacks K and z: a job from a producer that sends no \
                 wake hint (another runtime, redis-cli) waits up to ~1 s for an idle worker; \
                 to hear it at once: CONFIG SET notify-keyspace-events Kz (add the letters to \
                 what is set; persist it in the server's config)"
            ),
        ),
        None => Check::new(
            NAME,
            Status::Pass,
            "CONFIG refused, notify-keyspace-events unknown: idle workers poll for jobs \
             written without a wake hint (~1 s); if the service lets you, enable Kz",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BundleMismatch;

    fn healthy() -> ServerProbe {
        ServerProbe {
            server: "redis".into(),
            server_version: "7.0.15".into(),
            maxmemory_policy: Some("noeviction".into()),
            aof_enabled: true,
            rdb_enabled: Some(false),
            keyspace_events: Some(String::new()),
            cluster_enabled: false,
            cluster_url: false,
            cluster_state: None,
            cluster_masters: None,
            round_trip: Duration::from_micros(300),
            clock_offset_ms: 2,
            version_record: Some(crate::PROTOCOL_VERSION.into()),
            bundle_mismatches: vec![],
        }
    }

    fn status_of(checks: &[Check], name: &str) -> Status {
        checks
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no {name} check"))
            .status
    }

    #[test]
    fn a_healthy_deployment_passes_every_check() {
        let checks = server_checks(&healthy());
        let names: Vec<_> = checks.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "server",
                "fence",
                "bundle",
                "maxmemory-policy",
                "persistence",
                "keyspace-events",
                "cluster",
                "latency",
                "clock"
            ]
        );
        assert_eq!(worst(&checks), Status::Pass);
        assert_eq!(checks[0].detail, "Redis 7.0.15");
    }

    #[test]
    fn each_finding_has_its_verdict() {
        let mut p = healthy();
        p.maxmemory_policy = Some("allkeys-lru".into());
        p.version_record = Some("echomq:9.0.0".into());
        p.bundle_mismatches = vec![BundleMismatch {
            field: "enqueue".into(),
            ours: "a".into(),
            theirs: "b".into(),
        }];
        p.aof_enabled = false;
        p.round_trip = Duration::from_millis(80);
        p.clock_offset_ms = -5_000;
        let checks = server_checks(&p);
        assert_eq!(status_of(&checks, "maxmemory-policy"), Status::Fail);
        assert_eq!(status_of(&checks, "fence"), Status::Fail);
        assert_eq!(status_of(&checks, "bundle"), Status::Warn);
        assert_eq!(status_of(&checks, "persistence"), Status::Warn);
        assert_eq!(status_of(&checks, "latency"), Status::Warn);
        assert_eq!(status_of(&checks, "clock"), Status::Warn);
        assert_eq!(worst(&checks), Status::Fail);
        p.rdb_enabled = Some(true);
        assert_eq!(status_of(&server_checks(&p), "persistence"), Status::Pass);
        p.rdb_enabled = None;
        assert_eq!(status_of(&server_checks(&p), "persistence"), Status::Warn);
        p.maxmemory_policy = None;
        assert_eq!(
            status_of(&server_checks(&p), "maxmemory-policy"),
            Status::Warn
        );
        assert_eq!(worst(&[]), Status::Pass);
    }

    #[test]
    fn repeats_advanced_off_their_grid_are_a_sighting_of_another_pump() {
        let ours = Repeat {
            name: "tick".into(),
            every_ms: Some(1000),
            next_run_ms: 10_000,
            count: 3,
            last_run_ms: Some(7_000),
            ..Repeat::default()
        };
        let nightly = Repeat {
            name: "nightly".into(),
            cron: Some("0 3 * * *".into()),
            tz: Some("UTC".into()),
            next_run_ms: 50_000,
            ..Repeat::default()
        };
        let check = |rs: Vec<Repeat>| repeats_check(&[("q".into(), rs)]);
        assert_eq!(repeats_check(&[]).status, Status::Pass);
        let c = check(vec![ours.clone(), nightly.clone()]);
        assert_eq!(c.status, Status::Pass, "{}", c.detail);
        assert!(c.detail.contains("q/nightly (cron"), "{}", c.detail);
        assert!(!c.detail.contains("q/tick"), "{}", c.detail);
        // Never fired by us (count 0): nothing to compare with.
        let fresh = Repeat {
            count: 0,
            next_run_ms: 10_007,
            ..ours.clone()
        };
        assert_eq!(check(vec![fresh]).status, Status::Pass);
        let moved = Repeat {
            next_run_ms: 10_007,
            ..ours
        };
        let c = check(vec![moved, nightly]);
        assert_eq!(c.status, Status::Warn);
        assert!(
            c.detail.contains("advanced q/tick") && c.detail.contains("q/nightly"),
            "{}",
            c.detail
        );
    }
}
