//! `emq doctor`: one PASS/WARN/FAIL line per check of a deployment, exit
//! 0 (all pass), 1 (a warning) or 2 (a failure). The facts come from the
//! core's read-only probe (no fence, so a fenced-off deployment can still be
//! examined), judged by the core's `health::server_checks_speaking` (the
//! same checks the dashboard's health panel shows), and, when this emq knows
//! the version the deployment is fenced at, from the queues' own verbs spoken
//! at that version (the lease and dead-set checks below).

use std::time::{Duration, Instant};

use clap::Args;
use echomq::health::{self, server_checks_speaking, Check, Status};
use echomq::probe::probe;
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

/// How far past its lease deadline an active job must be before the doctor
/// says no one reaps it (a worker's pump runs every second by default).
const REAP_GRACE_MS: u64 = 10_000;

/// How often the dead sets are read during the sample (it ends at the first
/// growth seen).
const SAMPLE_POLL: Duration = Duration::from_millis(250);

async fn queue_checks(ctx: &Ctx, wire: WireVersion, sample: Duration) -> Result<Vec<Check>, Fail> {
    let client = ctx.connect_speaking(wire).await?;
    let queues = client.queues().await?;
    if queues.is_empty() {
        return Ok(vec![Check::new("queues", Status::Pass, "no queues yet")]);
    }
    let now = client.server_now_ms().await?;
    let mut checks = vec![Check::new(
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
        Check::new("leases", Status::Pass, "no job is active past its lease")
    } else {
        Check::new(
            "leases",
            Status::Warn,
            format!(
                "jobs active past their lease by more than {}s in {}: no worker or pump is reaping — run workers or `emq pump`",
                REAP_GRACE_MS / 1000,
                stuck.join(", ")
            ),
        )
    });
    // Repeats are 2.1.0 registrations: a deployment fenced at 2.0.0 has none.
    if wire >= WireVersion::V2_1_0 {
        let mut repeats = Vec::with_capacity(queues.len());
        for q in &queues {
            repeats.push((q.clone(), client.list_repeats(q).await?));
        }
        checks.push(health::repeats_check(&repeats));
    }
    // Said once the first reading is taken, so whoever waits on the doctor
    // (an operator, a test) knows from when a dead-letter counts.
    eprintln!(
        "emq doctor: watching {} dead set(s) for {}",
        queues.len(),
        humantime::format_duration(sample)
    );
    let until = Instant::now() + sample;
    let growing = loop {
        let left = until.saturating_duration_since(Instant::now());
        tokio::time::sleep(left.min(SAMPLE_POLL)).await;
        let mut growing = Vec::new();
        for (q, before) in queues.iter().zip(&dead_before) {
            let after = client.counts(q).await?.dead;
            if after > *before {
                growing.push(format!("{q} (+{})", after - before));
            }
        }
        // Growth seen is the finding: no need to wait out the window.
        if !growing.is_empty() || Instant::now() >= until {
            break growing;
        }
    };
    checks.push(if growing.is_empty() {
        Check::new(
            "dead sets",
            Status::Pass,
            format!("no dead set grew in {}", humantime::format_duration(sample)),
        )
    } else {
        Check::new(
            "dead sets",
            Status::Warn,
            format!(
                "growing within {}: {} — see `emq dead QUEUE`",
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
    let mut checks = server_checks_speaking(&facts, ctx.wire, ctx.wire_given);
    // The queue checks speak the version the deployment is fenced at (when
    // this emq knows it), so a deployment not yet upgraded is examined too.
    if !health::url_mismatch(&facts) {
        match facts.version_record.as_deref().map(WireVersion::parse) {
            None => checks.extend(queue_checks(ctx, ctx.wire, a.sample).await?),
            Some(Ok(fenced)) => checks.extend(queue_checks(ctx, fenced, a.sample).await?),
            Some(Err(_)) => {}
        }
    }
    let worst = health::worst(&checks);
    if ctx.json {
        let list: Vec<_> = checks
            .iter()
            .map(|c| json!({"check": c.name, "status": c.status.word(), "detail": c.detail}))
            .collect();
        out::json(&json!({
            "server": facts.server, "server_version": facts.server_version,
            "cluster": facts.cluster_enabled,
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
