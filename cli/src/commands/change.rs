//! Commands that change a queue: `requeue`, `remove`, `purge-dead`, `pause`,
//! `resume`, `drain`, `enqueue`. Destructive ones confirm first (see
//! `out::confirm`), bulk ones run in the core's bounded batches behind a
//! progress bar, and every one says what it changed.

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use echomq::{Client, ADMIN_BATCH};
use serde_json::json;

use super::{check_ids, check_queues, Ctx};
use crate::fail::{Fail, EXIT_INPUT, EXIT_OK};
use crate::out;
use crate::time;

#[derive(Debug, Args)]
pub struct QueueArg {
    pub queue: String,
}

#[derive(Debug, Args)]
pub struct RequeueArgs {
    pub queue: String,
    /// Dead job ids to put back to pending.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub ids: Vec<String>,
    /// Every dead job of the queue, oldest first, in batches.
    #[arg(long)]
    pub all: bool,
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct RemoveArgs {
    pub queue: String,
    #[arg(required = true)]
    pub ids: Vec<String>,
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct PurgeDeadArgs {
    pub queue: String,
    /// Only dead jobs minted longer ago than this (e.g. 7d); default: all.
    #[arg(long, value_parser = time::parse_duration)]
    pub older_than: Option<Duration>,
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct DrainArgs {
    pub queue: String,
    /// Delete scheduled jobs too.
    #[arg(long)]
    pub include_scheduled: bool,
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct EnqueueArgs {
    pub queue: String,
    /// The payload; `-` reads stdin.
    #[arg(conflicts_with = "file")]
    pub payload: Option<String>,
    /// Read the payload from a file.
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// Run at this time (unix ms or RFC 3339).
    #[arg(long, conflicts_with_all = ["delay", "id"], value_parser = parse_future_instant)]
    pub at: Option<u64>,
    /// Run after this delay (server clock), e.g. 30s.
    #[arg(long = "in", conflicts_with = "id", value_parser = time::parse_duration)]
    pub delay: Option<Duration>,
    /// Enqueue under this id (idempotent: a second enqueue answers duplicate).
    #[arg(long)]
    pub id: Option<String>,
}

fn parse_future_instant(text: &str) -> Result<u64, String> {
    // A bare duration means "ago" for --since; for --at it would be a
    // mistake, so only absolute forms are accepted here.
    if humantime::parse_duration(text).is_ok() && text.parse::<u64>().is_err() {
        return Err(
            "--at takes an absolute time (unix ms or RFC 3339); use --in for a delay".into(),
        );
    }
    time::parse_instant(text)
}

/// Run a bulk verb in batches of the core's size until it answers short,
/// with a progress bar over `total`; answers the sum.
async fn in_batches<F, Fut>(total: u64, what: &str, mut step: F) -> Result<u64, Fail>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = echomq::Result<u64>>,
{
    let bar = out::progress(total, what);
    let mut done = 0;
    loop {
        let n = step().await?;
        done += n;
        bar.inc(n);
        if n < ADMIN_BATCH {
            break;
        }
    }
    bar.finish_and_clear();
    Ok(done)
}

fn said(ctx: &Ctx, human: String, value: serde_json::Value) {
    if ctx.json {
        out::json(&value);
    } else {
        println!("{human}");
    }
}

pub async fn requeue(ctx: &Ctx, a: RequeueArgs) -> Result<i32, Fail> {
    check_queues(std::slice::from_ref(&a.queue))?;
    check_ids(&a.ids)?;
    let client = ctx.connect().await?;
    if a.all {
        let dead = client.counts(&a.queue).await?.dead;
        out::confirm(
            &format!("Requeue all {dead} dead jobs of {}?", a.queue),
            a.yes,
        )?;
        let q = &a.queue;
        let n = in_batches(dead, "requeueing", || {
            client.requeue_all_dead(q, Some(ADMIN_BATCH))
        })
        .await?;
        said(
            ctx,
            format!("requeued {n} dead jobs of {q}"),
            json!({"queue": q, "requeued": n}),
        );
        return Ok(EXIT_OK);
    }
    each_id(
        ctx,
        &client,
        &a.queue,
        &a.ids,
        "requeued",
        |c, q, id| async move {
            match c.requeue_dead(&q, &id).await {
                // The script answers "not dead" for a missing job too; say which.
                Err(e) if e.kind() == echomq::ErrorKind::NotDead => match c.inspect(&q, &id).await?
                {
                    None => Err(echomq::Error::new(echomq::ErrorKind::Gone, "no such job")),
                    Some(_) => Err(e),
                },
                other => other,
            }
        },
    )
    .await
}

/// Apply a per-id verb to each id; report each, and fail (exit 1) at the end
/// if any id was refused — the others are still done.
async fn each_id<F, Fut>(
    ctx: &Ctx,
    client: &Client,
    queue: &str,
    ids: &[String],
    verb: &str,
    act: F,
) -> Result<i32, Fail>
where
    F: Fn(Client, String, String) -> Fut,
    Fut: std::future::Future<Output = echomq::Result<()>>,
{
    let mut done = Vec::new();
    let mut refused = Vec::new();
    for id in ids {
        match act(client.clone(), queue.to_string(), id.clone()).await {
            Ok(()) => {
                if !ctx.json {
                    println!("{verb} {id}");
                }
                done.push(id.clone());
            }
            Err(e) if e.kind() == echomq::ErrorKind::Gone => {
                refused.push((id.clone(), "no such job".to_string()))
            }
            Err(e) if is_refusal(&e) => refused.push((id.clone(), e.message().to_string())),
            Err(e) => return Err(e.into()),
        }
    }
    if ctx.json {
        let refused_json: Vec<_> = refused
            .iter()
            .map(|(id, why)| json!({"id": id, "error": why}))
            .collect();
        out::json(&json!({"queue": queue, verb: done, "refused": refused_json}));
    }
    for (id, why) in &refused {
        eprintln!("emq: {id}: {why}");
    }
    Ok(if refused.is_empty() {
        EXIT_OK
    } else {
        EXIT_INPUT
    })
}

/// A per-job refusal (the job's state), as opposed to a deployment failure.
fn is_refusal(e: &echomq::Error) -> bool {
    use echomq::ErrorKind as K;
    matches!(e.kind(), K::NotDead | K::JobActive | K::Gone)
}

pub async fn remove(ctx: &Ctx, a: RemoveArgs) -> Result<i32, Fail> {
    check_queues(std::slice::from_ref(&a.queue))?;
    check_ids(&a.ids)?;
    let client = ctx.connect().await?;
    out::confirm(
        &format!("Remove {} job(s) from {}?", a.ids.len(), a.queue),
        a.yes,
    )?;
    each_id(
        ctx,
        &client,
        &a.queue,
        &a.ids,
        "removed",
        |c, q, id| async move { c.remove(&q, &id).await },
    )
    .await
}

pub async fn purge_dead(ctx: &Ctx, a: PurgeDeadArgs) -> Result<i32, Fail> {
    check_queues(std::slice::from_ref(&a.queue))?;
    let client = ctx.connect().await?;
    let dead = client.counts(&a.queue).await?.dead;
    let older = a.older_than.map(|d| d.as_millis() as u64);
    let scope = match a.older_than {
        Some(d) => format!(
            "dead jobs older than {} (of {dead})",
            humantime::format_duration(d)
        ),
        None => format!("all {dead} dead jobs"),
    };
    out::confirm(&format!("Delete {scope} of {}?", a.queue), a.yes)?;
    let q = &a.queue;
    let n = in_batches(dead, "purging", || {
        client.purge_dead(q, older, Some(ADMIN_BATCH))
    })
    .await?;
    said(
        ctx,
        format!("deleted {n} dead jobs of {q}"),
        json!({"queue": q, "deleted": n}),
    );
    Ok(EXIT_OK)
}

pub async fn pause(ctx: &Ctx, a: QueueArg, pause: bool) -> Result<i32, Fail> {
    check_queues(std::slice::from_ref(&a.queue))?;
    let client = ctx.connect().await?;
    if pause {
        client.pause(&a.queue).await?;
    } else {
        client.resume(&a.queue).await?;
    }
    let word = if pause { "paused" } else { "resumed" };
    said(
        ctx,
        format!("{word} {}", a.queue),
        json!({"queue": a.queue, "paused": pause}),
    );
    Ok(EXIT_OK)
}

pub async fn drain(ctx: &Ctx, a: DrainArgs) -> Result<i32, Fail> {
    check_queues(std::slice::from_ref(&a.queue))?;
    let client = ctx.connect().await?;
    let counts = client.counts(&a.queue).await?;
    let mut total = counts.pending;
    let mut scope = format!("{} pending", counts.pending);
    if a.include_scheduled {
        total += counts.scheduled;
        scope.push_str(&format!(" and {} scheduled", counts.scheduled));
    }
    out::confirm(
        &format!(
            "Delete {scope} jobs of {}? ({} active jobs are kept)",
            a.queue, counts.active
        ),
        a.yes,
    )?;
    let q = &a.queue;
    let n = in_batches(total, "draining", || {
        client.drain(q, a.include_scheduled, Some(ADMIN_BATCH))
    })
    .await?;
    said(
        ctx,
        format!("deleted {n} waiting jobs of {q}"),
        json!({"queue": q, "deleted": n}),
    );
    Ok(EXIT_OK)
}

pub async fn enqueue(ctx: &Ctx, a: EnqueueArgs) -> Result<i32, Fail> {
    check_queues(std::slice::from_ref(&a.queue))?;
    if let Some(id) = &a.id {
        check_ids(std::slice::from_ref(id))?;
    }
    let payload: Vec<u8> = match (&a.payload, &a.file) {
        (Some(p), _) if p == "-" => {
            let mut buf = Vec::new();
            std::io::stdin().read_to_end(&mut buf)?;
            buf
        }
        (Some(p), _) => p.clone().into_bytes(),
        (None, Some(path)) => std::fs::read(path)
            .map_err(|e| Fail::input(format!("cannot read {}: {e}", path.display())))?,
        (None, None) => {
            return Err(Fail::input(
                "give a payload, --file FILE, or - to read stdin",
            ))
        }
    };
    let client = ctx.connect().await?;
    let (answer, run_at) = match (a.at, a.delay, &a.id) {
        (Some(at), _, _) => (
            client
                .enqueue(
                    &a.queue,
                    &payload,
                    echomq::EnqueueOptions::default().run_at_ms(at),
                )
                .await?,
            Some(at),
        ),
        (_, Some(d), _) => {
            let ms = d.as_millis() as u64;
            (
                client
                    .enqueue(
                        &a.queue,
                        &payload,
                        echomq::EnqueueOptions::default().delay_ms(ms),
                    )
                    .await?,
                None,
            )
        }
        (_, _, Some(id)) => (
            client
                .enqueue(&a.queue, &payload, echomq::EnqueueOptions::default().id(id))
                .await?,
            None,
        ),
        _ => (
            client
                .enqueue(&a.queue, &payload, Default::default())
                .await?,
            None,
        ),
    };
    let state = if a.at.is_some() || a.delay.is_some() {
        "scheduled"
    } else {
        "pending"
    };
    let human = if answer.duplicate {
        format!(
            "{} (duplicate: already enqueued, left untouched)",
            answer.id
        )
    } else {
        answer.id.to_string()
    };
    said(
        ctx,
        human,
        json!({"queue": a.queue, "id": answer.id.as_str(), "duplicate": answer.duplicate,
               "state": state, "run_at_ms": run_at}),
    );
    Ok(EXIT_OK)
}
