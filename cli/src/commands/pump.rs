//! `emq pump`: the worker's pumps for deployments whose workers run none —
//! promote due scheduled jobs, reap lapsed leases, apply dead-set retention —
//! on an interval, until SIGTERM or Ctrl-C.

use std::time::Duration;

use clap::Args;
use echomq::{Client, DeadBound};

use super::{check_queues, Ctx};
use crate::fail::{Fail, EXIT_OK};
use crate::time;

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

async fn round(client: &Client, queue: &str, retention: DeadBound) -> echomq::Result<[u64; 3]> {
    let promoted = drain_pump(|| client.promote(queue, PUMP_LIMIT)).await?;
    let reaped = drain_pump(|| client.reap(queue, PUMP_LIMIT)).await?;
    let trimmed = client.trim_dead(queue, retention, Some(PUMP_LIMIT)).await?;
    Ok([promoted, reaped, trimmed])
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
    loop {
        tokio::select! {
            _ = &mut stop => break,
            _ = tick.tick() => {}
        }
        for q in &a.queues {
            // A failed round is reported and retried next tick, as the
            // worker's pump does; the pump outlives a server restart.
            match round(&client, q, retention).await {
                Ok([0, 0, 0]) => {}
                Ok([p, r, t]) => eprintln!("{q}: promoted {p}, reaped {r}, dead trimmed {t}"),
                Err(e) => eprintln!("emq pump: {q}: {}", e.message()),
            }
        }
    }
    eprintln!("emq pump: stopped");
    Ok(EXIT_OK)
}
