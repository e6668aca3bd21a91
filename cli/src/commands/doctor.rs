//! `emq doctor`: one PASS/WARN/FAIL line per check of a deployment, exit
//! 0 (all pass), 1 (a warning) or 2 (a failure). The facts come from the
//! core's read-only probe (no fence, so a fenced-off deployment can still be
//! examined) and, when this emq knows the version the deployment is fenced
//! at, from the queues' own verbs spoken at that version.

use std::time::Duration;

use clap::Args;
use echomq::probe::{probe, ServerProbe};
use echomq::{BrowseSet, ConnectOptions, TimeRange, WireVersion};
use serde_json::json;

use super::Ctx;
use crate::fail::Fail;
use crate::{out, time};

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// How long to watch the dead sets for growth.
    #[arg(long, default_value = "1s", value_parser = time::parse_duration)]
    pub sample: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Status {
    Pass,
    Warn,
    Fail,
}

impl Status {
    fn word(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }
}

struct Check {
    name: &'static str,
    status: Status,
    detail: String,
}

fn check(name: &'static str, status: Status, detail: impl Into<String>) -> Check {
    Check {
        name,
        status,
        detail: detail.into(),
    }
}

/// How far past its lease deadline an active job must be before the doctor
/// says no one reaps it (a worker's pump runs every second by default).
const REAP_GRACE_MS: u64 = 10_000;
/// A round trip slower than this is worth a warning.
const SLOW_ROUND_TRIP: Duration = Duration::from_millis(50);
/// A clock offset larger than this skews ages, `--since` and retention.
const CLOCK_SKEW_MS: i64 = 1_000;

/// The fence line: the version the deployment is fenced at, against this
/// emq's newest (older: WARN, run `emq upgrade`) and against `--wire` when
/// one was given; a value this emq does not know is a FAIL.
fn fence_check(record: Option<&str>, wire: WireVersion, wire_given: bool) -> Check {
    let newest = WireVersion::NEWEST;
    let Some(found) = record else {
        return check(
            "fence",
            Status::Pass,
            format!("{{emq}}:version not set yet; the first client records the version it speaks ({wire} for this emq)"),
        );
    };
    let Ok(fenced) = WireVersion::parse(found) else {
        return check(
            "fence",
            Status::Fail,
            format!(
                "{{emq}}:version is {found:?}, which this emq does not speak (it knows {}): every runtime \
                 must speak the deployment's version — use clients that speak {found}",
                WireVersion::ALL.map(WireVersion::as_str).join(" and ")
            ),
        );
    };
    // Told to speak another version than the record: the other commands
    // would be refused by the fence.
    let wire_note = if wire_given && wire != fenced {
        format!("; this emq was told to speak {wire} (--wire / EMQ_WIRE), which the fence refuses: use --wire {fenced}")
    } else {
        String::new()
    };
    if fenced < newest {
        let meanwhile = if wire_given && wire == fenced {
            String::new()
        } else {
            format!(" (until then, run emq with --wire {fenced})")
        };
        check(
            "fence",
            Status::Warn,
            format!(
                "fenced at {fenced}, older than this emq's newest {newest}: once every runtime speaks \
                 {newest}, run emq upgrade{meanwhile}{wire_note}"
            ),
        )
    } else if wire_note.is_empty() {
        check(
            "fence",
            Status::Pass,
            format!("fenced at {fenced} (this emq's newest)"),
        )
    } else {
        check(
            "fence",
            Status::Warn,
            format!("fenced at {fenced}{wire_note}"),
        )
    }
}

fn server_checks(p: &ServerProbe, wire: WireVersion, wire_given: bool) -> Vec<Check> {
    let mut checks = Vec::new();
    let name = if p.server == "valkey" {
        "Valkey"
    } else {
        "Redis"
    };
    checks.push(check(
        "server",
        Status::Pass,
        format!("{name} {}", p.server_version),
    ));
    checks.push(fence_check(p.version_record.as_deref(), wire, wire_given));
    checks.push(if p.bundle_mismatches.is_empty() {
        check(
            "bundle",
            Status::Pass,
            "{emq}:bundle matches this build's scripts",
        )
    } else {
        let fields: Vec<&str> = p.bundle_mismatches.iter().map(|m| m.field.as_str()).collect();
        check(
            "bundle",
            Status::Warn,
            format!(
                "another runtime recorded different script bytes for {}: run one EchoMQ release everywhere",
                fields.join(", ")
            ),
        )
    });
    checks.push(match p.maxmemory_policy.as_deref() {
        Some("noeviction") => check("maxmemory-policy", Status::Pass, "noeviction"),
        Some(other) => check(
            "maxmemory-policy",
            Status::Fail,
            format!("{other} can silently evict jobs: set maxmemory-policy noeviction"),
        ),
        None => check(
            "maxmemory-policy",
            Status::Warn,
            "not reported by the server",
        ),
    });
    checks.push(match (p.aof_enabled, p.rdb_enabled) {
        (true, _) => check("persistence", Status::Pass, "AOF on"),
        (false, Some(true)) => check(
            "persistence",
            Status::Pass,
            "RDB snapshots (jobs since the last snapshot are lost on a crash; AOF loses less)",
        ),
        (false, Some(false)) => check(
            "persistence",
            Status::Warn,
            "no AOF and no RDB: a restart loses every job",
        ),
        (false, None) => check(
            "persistence",
            Status::Warn,
            "no AOF, and RDB unknown (CONFIG refused)",
        ),
    });
    checks.push(check(
        "cluster",
        Status::Pass,
        if p.cluster_enabled {
            "cluster mode enabled"
        } else {
            "standalone (cluster mode off)"
        },
    ));
    let rtt_ms = p.round_trip.as_secs_f64() * 1000.0;
    checks.push(check(
        "latency",
        if p.round_trip > SLOW_ROUND_TRIP {
            Status::Warn
        } else {
            Status::Pass
        },
        format!("round trip {rtt_ms:.2} ms"),
    ));
    checks.push(check(
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
    ));
    checks
}

async fn queue_checks(ctx: &Ctx, wire: WireVersion, sample: Duration) -> Result<Vec<Check>, Fail> {
    let client = ctx.connect_speaking(wire).await?;
    let queues = client.queues().await?;
    if queues.is_empty() {
        return Ok(vec![check("queues", Status::Pass, "no queues yet")]);
    }
    let now = client.server_now_ms().await?;
    let mut checks = vec![check(
        "queues",
        Status::Pass,
        format!("{} queue(s)", queues.len()),
    )];
    let overdue_until = TimeRange {
        from_ms: 0,
        to_ms: now.saturating_sub(REAP_GRACE_MS),
    };
    let mut stuck = Vec::new();
    let mut dead_before = Vec::new();
    for q in &queues {
        let overdue = client
            .browse(q, BrowseSet::Active, false, 1000, Some(overdue_until))
            .await?;
        if !overdue.is_empty() {
            stuck.push(format!("{q} ({})", overdue.len()));
        }
        dead_before.push(client.counts(q).await?.dead);
    }
    checks.push(if stuck.is_empty() {
        check("leases", Status::Pass, "no job is active past its lease")
    } else {
        check(
            "leases",
            Status::Warn,
            format!(
                "jobs active past their lease by more than {}s in {}: no worker or pump is reaping — run workers or `emq pump`",
                REAP_GRACE_MS / 1000,
                stuck.join(", ")
            ),
        )
    });
    tokio::time::sleep(sample).await;
    let mut growing = Vec::new();
    for (q, before) in queues.iter().zip(dead_before) {
        let after = client.counts(q).await?.dead;
        if after > before {
            growing.push(format!("{q} (+{})", after - before));
        }
    }
    checks.push(if growing.is_empty() {
        check(
            "dead sets",
            Status::Pass,
            format!("no dead set grew in {}", humantime::format_duration(sample)),
        )
    } else {
        check(
            "dead sets",
            Status::Warn,
            format!(
                "growing in {}: {} — see `emq dead QUEUE`",
                humantime::format_duration(sample),
                growing.join(", ")
            ),
        )
    });
    Ok(checks)
}

pub async fn doctor(ctx: &Ctx, a: DoctorArgs) -> Result<i32, Fail> {
    let options = ConnectOptions::default();
    let facts = probe(&ctx.url, &options).await?;
    let mut checks = server_checks(&facts, ctx.wire, ctx.wire_given);
    // The queue checks speak the version the deployment is fenced at (when
    // this emq knows it), so a deployment not yet upgraded is examined too.
    let record = facts.version_record.as_deref();
    match record.map(WireVersion::parse) {
        None => checks.extend(queue_checks(ctx, ctx.wire, a.sample).await?),
        Some(Ok(fenced)) => checks.extend(queue_checks(ctx, fenced, a.sample).await?),
        Some(Err(_)) => {}
    }
    let worst = checks
        .iter()
        .map(|c| c.status)
        .max()
        .unwrap_or(Status::Pass);
    if ctx.json {
        let list: Vec<_> = checks
            .iter()
            .map(|c| json!({"check": c.name, "status": c.status.word(), "detail": c.detail}))
            .collect();
        out::json(&json!({
            "server": facts.server, "server_version": facts.server_version,
            "status": worst.word(), "checks": list,
        }));
    } else {
        for c in &checks {
            println!("{}  {:<16}  {}", c.status.word(), c.name, c.detail);
        }
    }
    Ok(match worst {
        Status::Pass => 0,
        Status::Warn => 1,
        Status::Fail => 2,
    })
}
