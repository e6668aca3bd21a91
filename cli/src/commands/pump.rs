//! `emq pump`: the worker's pumps for deployments whose workers run none —
//! promote due scheduled jobs, reap lapsed leases (with the stall cap, as the
//! worker's reap does), fire due repeatable jobs, apply dead-set retention —
//! on an interval, until SIGTERM or Ctrl-C. Progress lines go to stderr;
//! with `--json`, one compact JSON object per tick goes to stdout instead.

use std::cell::Cell;
use std::time::Duration;

use clap::Args;
use echomq::{Client, DeadBound, WireVersion};
use serde_json::{json, Value};

use super::{check_queues, Ctx};
use crate::fail::{Fail, EXIT_OK};
use crate::{out, time};

/// Jobs one pump call moves at most (as the worker's pump).
const PUMP_LIMIT: u64 = 1_000;

#[derive(Debug, Args)]
pub struct PumpArgs {
    /// The queues to pump.
    #[arg(required = true)]
    pub queues: Vec<String>,
    /// Time between rounds.
    #[arg(long, default_value = "1s", value_parser = time::parse_duration)]
    pub interval: Duration,
    /// Delete dead jobs minted longer ago than this (e.g. 30d).
    #[arg(long, value_parser = time::parse_duration)]
    pub dead_max_age: Option<Duration>,
    /// Keep at most this many dead jobs per queue (the oldest go first).
    #[arg(long)]
    pub dead_max_len: Option<u64>,
    /// Stalls (lapsed leases) a job survives before the reap dead-letters it
    /// with last_error "stalled" (the worker option max_stalls).
    #[arg(long, default_value_t = echomq::defaults::MAX_STALLS)]
    pub max_stalls: u64,
}

/// What one round moved on one queue.
#[derive(Debug, Default, PartialEq, Eq)]
struct Moved {
    promoted: u64,
    /// Lapsed leases handled: back to pending or, at the stall cap, dead.
    reaped: u64,
    /// Of `reaped`, the jobs the stall cap dead-lettered.
    stall_dead: u64,
    /// Jobs the due repeatable jobs enqueued (wire 2.1.0).
    repeats: u64,
    trimmed: u64,
}

/// Call a pump verb until it moves less than a full batch; answer the sum.
async fn drain_pump<F, Fut>(mut step: F) -> echomq::Result<u64>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = echomq::Result<u64>>,
{
    let mut total = 0;
    loop {
        let n = step().await?;
        total += n;
        if n < PUMP_LIMIT {
            return Ok(total);
        }
    }
}

async fn round(
    client: &Client,
    queue: &str,
    retention: DeadBound,
    max_stalls: u64,
) -> echomq::Result<Moved> {
    let promoted = drain_pump(|| client.promote(queue, PUMP_LIMIT)).await?;
    let stall_dead = Cell::new(0);
    // The stall-capped reap needs wire 2.1.0 (the default); a client told to
    // speak 2.0.0 reaps as 2.0.0 does, without a cap.
    let reaped = if client.wire_version() >= WireVersion::V2_1_0 {
        let dead = &stall_dead;
        drain_pump(|| async move {
            let r = client.reap_stalled(queue, PUMP_LIMIT, max_stalls).await?;
            dead.set(dead.get() + r.dead.len() as u64);
            Ok(r.len() as u64)
        })
        .await?
    } else {
        drain_pump(|| client.reap(queue, PUMP_LIMIT)).await?
    };
    // Repeats are 2.1.0 registrations: a 2.0.0 client has none to fire.
    let repeats = if client.wire_version() >= WireVersion::V2_1_0 {
        drain_pump(|| client.fire_repeats(queue, PUMP_LIMIT)).await?
    } else {
        0
    };
    let trimmed = client.trim_dead(queue, retention, Some(PUMP_LIMIT)).await?;
    Ok(Moved {
        promoted,
        reaped,
        stall_dead: stall_dead.get(),
        repeats,
        trimmed,
    })
}

/// A queue's part of a `--json` tick: what moved, or the error.
fn moved_json(queue: &str, moved: &echomq::Result<Moved>) -> Value {
    match moved {
        Ok(m) => json!({
            "queue": queue, "promoted": m.promoted, "reaped": m.reaped,
            "stall_dead": m.stall_dead, "repeats_fired": m.repeats, "dead_trimmed": m.trimmed,
        }),
        Err(e) => json!({
            "queue": queue,
            "error": {"kind": e.kind().code(), "message": e.message()},
        }),
    }
}

#[cfg(unix)]
async fn terminated() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            term.recv().await;
        }
        Err(_) => std::future::pending::<()>().await,
    }
}

#[cfg(not(unix))]
async fn terminated() {
    std::future::pending::<()>().await
}

pub async fn pump(ctx: &Ctx, a: PumpArgs) -> Result<i32, Fail> {
    check_queues(&a.queues)?;
    if a.interval.is_zero() {
        return Err(Fail::input("--interval must be greater than zero"));
    }
    if a.max_stalls == 0 {
        return Err(Fail::input("--max-stalls must be greater than zero"));
    }
    let client = ctx.connect().await?;
    let retention = DeadBound {
        older_than_ms: a.dead_max_age.map(|d| d.as_millis() as u64),
        max_len: a.dead_max_len,
    };
    eprintln!(
        "emq pump: {} every {}; SIGTERM or Ctrl-C stops",
        a.queues.join(", "),
        humantime::format_duration(a.interval)
    );
    let stop = async {
        tokio::select! {
            _ = terminated() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    };
    tokio::pin!(stop);
    let mut tick = tokio::time::interval(a.interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    'ticks: loop {
        tokio::select! {
            _ = &mut stop => break,
            _ = tick.tick() => {}
        }
        let mut tick_json = Vec::with_capacity(a.queues.len());
        for q in &a.queues {
            // A failed round is reported and retried next tick, as the
            // worker's pump does; the pump outlives a server restart.
            // A stop ends a round in flight too: with the server gone, a
            // round can wait out response timeouts call after call. Each
            // script is atomic on the server, so an abandoned reply loses
            // nothing the next pump would not redo.
            let moved = tokio::select! {
                _ = &mut stop => break 'ticks,
                moved = round(&client, q, retention, a.max_stalls) => moved,
            };
            if ctx.json {
                tick_json.push(moved_json(q, &moved));
                continue;
            }
            match moved {
                Ok(m) if m == Moved::default() => {}
                Ok(m) => {
                    let stalled = match m.stall_dead {
                        0 => String::new(),
                        n => format!(" ({n} at the stall cap went dead)"),
                    };
                    eprintln!(
                        "{q}: promoted {}, reaped {}{stalled}, dead trimmed {}, repeats fired {}",
                        m.promoted, m.reaped, m.trimmed, m.repeats
                    );
                }
                Err(e) => eprintln!("emq pump: {q}: {}", e.message()),
            }
        }
        if ctx.json {
            // One object per tick, quiet ticks included: a reader can tell
            // a pump that runs and finds nothing from one that stopped.
            out::json_line(&json!({"at_ms": time::now_ms(), "queues": tick_json}));
        }
    }
    eprintln!("emq pump: stopped");
    Ok(EXIT_OK)
}
