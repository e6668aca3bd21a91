//! Read-only commands: `queues`, `stats`, `jobs`, `dead`, `job`.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use echomq::{BrowseSet, Client, Counts, JobView, TimeRange};
use serde_json::{json, Value};

use super::{check_ids, check_queues, Ctx};
use crate::fail::{Fail, EXIT_OK};
use crate::out;
use crate::time;

/// One queue's counts, read at one moment.
pub struct Snapshot {
    pub queue: String,
    pub counts: Counts,
    pub paused: bool,
}

pub async fn snapshots(client: &Client, queues: &[String]) -> Result<Vec<Snapshot>, Fail> {
    let mut out = Vec::with_capacity(queues.len());
    for q in queues {
        out.push(Snapshot {
            queue: q.clone(),
            counts: client.counts(q).await?,
            paused: client.is_paused(q).await?,
        });
    }
    Ok(out)
}

pub fn counts_json(s: &Snapshot) -> Value {
    let c = &s.counts;
    json!({
        "queue": s.queue, "pending": c.pending, "active": c.active,
        "scheduled": c.scheduled, "dead": c.dead, "completed": c.completed,
        "failed": c.failed, "paused": s.paused,
    })
}

fn counts_cells(s: &Snapshot) -> Vec<String> {
    let c = &s.counts;
    vec![
        s.queue.clone(),
        c.pending.to_string(),
        c.active.to_string(),
        c.scheduled.to_string(),
        c.dead.to_string(),
        c.completed.to_string(),
        c.failed.to_string(),
    ]
}

const COUNT_HEADER: [&str; 7] = [
    "QUEUE",
    "PENDING",
    "ACTIVE",
    "SCHEDULED",
    "DEAD",
    "COMPLETED",
    "FAILED",
];

pub async fn queues(ctx: &Ctx) -> Result<i32, Fail> {
    let client = ctx.connect().await?;
    let names = client.queues().await?;
    let snaps = snapshots(&client, &names).await?;
    if ctx.json {
        out::json(&Value::Array(snaps.iter().map(counts_json).collect()));
        return Ok(EXIT_OK);
    }
    if snaps.is_empty() {
        println!("no queues");
        return Ok(EXIT_OK);
    }
    let mut header = COUNT_HEADER.to_vec();
    header.push("PAUSED");
    let rows: Vec<Vec<String>> = snaps
        .iter()
        .map(|s| {
            let mut cells = counts_cells(s);
            cells.push(if s.paused { "yes" } else { "no" }.to_string());
            cells
        })
        .collect();
    out::table(&header, &rows);
    Ok(EXIT_OK)
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Queues to show (default: every queue).
    pub queues: Vec<String>,
    /// Refresh every interval and show completed/failed per second.
    #[arg(long)]
    pub watch: bool,
    /// Refresh interval with --watch.
    #[arg(long, default_value = "1s", value_parser = time::parse_duration)]
    pub interval: Duration,
    /// Stop after this many refreshes (default: until Ctrl-C).
    #[arg(long)]
    pub count: Option<u64>,
}

/// Jobs per second between two readings of a counter.
pub fn rate(before: u64, after: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs <= 0.0 {
        return 0.0;
    }
    after.saturating_sub(before) as f64 / secs
}

pub async fn stats(ctx: &Ctx, a: StatsArgs) -> Result<i32, Fail> {
    check_queues(&a.queues)?;
    let client = ctx.connect().await?;
    let names = ctx.queues_or_all(&client, &a.queues).await?;
    let rounds = if a.watch { a.count } else { Some(1) };
    let mut previous: Option<(Instant, BTreeMap<String, Counts>)> = None;
    let mut round = 0;
    loop {
        let taken = Instant::now();
        let snaps = snapshots(&client, &names).await?;
        let rates = |s: &Snapshot| -> Option<(f64, f64)> {
            let (at, counts) = previous.as_ref()?;
            let before = counts.get(&s.queue)?;
            let elapsed = taken - *at;
            Some((
                rate(before.completed, s.counts.completed, elapsed),
                rate(before.failed, s.counts.failed, elapsed),
            ))
        };
        if ctx.json {
            let items: Vec<Value> = snaps
                .iter()
                .map(|s| {
                    let mut v = counts_json(s);
                    let r = rates(s);
                    v["completed_per_s"] = json!(r.map(|r| r.0));
                    v["failed_per_s"] = json!(r.map(|r| r.1));
                    v
                })
                .collect();
            if a.watch {
                out::json_line(&json!({"at_ms": time::now_ms(), "queues": items}));
            } else {
                out::json(&Value::Array(items));
            }
        } else {
            let mut header = COUNT_HEADER.to_vec();
            if a.watch {
                header.extend(["DONE/S", "FAILED/S"]);
            }
            let rows: Vec<Vec<String>> = snaps
                .iter()
                .map(|s| {
                    let mut cells = counts_cells(s);
                    if a.watch {
                        let (done, failed) = rates(s)
                            .map(|(d, f)| (format!("{d:.1}"), format!("{f:.1}")))
                            .unwrap_or_else(|| ("-".into(), "-".into()));
                        cells.extend([done, failed]);
                    }
                    cells
                })
                .collect();
            if a.watch && round > 0 {
                println!();
            }
            out::table(&header, &rows);
            let _ = std::io::stdout().flush();
        }
        round += 1;
        if rounds.is_some_and(|n| round >= n) {
            return Ok(EXIT_OK);
        }
        previous = Some((
            taken,
            snaps.into_iter().map(|s| (s.queue, s.counts)).collect(),
        ));
        tokio::select! {
            _ = tokio::time::sleep(a.interval) => {}
            _ = tokio::signal::ctrl_c() => return Ok(EXIT_OK),
        }
    }
}

/// The states `jobs --state` accepts (the names rows carry).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum State {
    Pending,
    Active,
    Scheduled,
    Dead,
}

impl State {
    fn set(self) -> BrowseSet {
        match self {
            State::Pending => BrowseSet::Pending,
            State::Active => BrowseSet::Active,
            State::Scheduled => BrowseSet::Schedule,
            State::Dead => BrowseSet::Dead,
        }
    }
}

#[derive(Debug, Args)]
pub struct JobsArgs {
    pub queue: String,
    #[arg(long, value_enum, default_value = "pending")]
    pub state: State,
    /// At most this many jobs.
    #[arg(long, default_value_t = 20)]
    pub limit: u64,
    /// Newest first (default: oldest first).
    #[arg(long)]
    pub newest: bool,
    /// From this time on: mint time for pending/dead, run-at for scheduled,
    /// lease deadline for active. Unix ms, RFC 3339, or an age such as 10m.
    #[arg(long, value_parser = time::parse_instant)]
    pub since: Option<u64>,
    /// Before this time (same forms as --since).
    #[arg(long, value_parser = time::parse_instant)]
    pub until: Option<u64>,
}

#[derive(Debug, Args)]
pub struct DeadArgs {
    pub queue: String,
    #[arg(long, default_value_t = 20)]
    pub limit: u64,
    #[arg(long)]
    pub newest: bool,
}

pub async fn dead(ctx: &Ctx, a: DeadArgs) -> Result<i32, Fail> {
    let args = JobsArgs {
        queue: a.queue,
        state: State::Dead,
        limit: a.limit,
        newest: a.newest,
        since: None,
        until: None,
    };
    jobs(ctx, args).await
}

fn text_field(view: &JobView, name: &str) -> Option<String> {
    view.row
        .get(name)
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

fn score_in(view: &JobView, set: BrowseSet) -> Option<u64> {
    view.sets
        .iter()
        .find(|(s, _)| *s == set)
        .map(|(_, score)| *score as u64)
}

pub async fn jobs(ctx: &Ctx, a: JobsArgs) -> Result<i32, Fail> {
    check_queues(std::slice::from_ref(&a.queue))?;
    if a.limit == 0 {
        return Err(Fail::input("--limit must be greater than zero"));
    }
    let range = match (a.since, a.until) {
        (None, None) => None,
        (since, until) => Some(TimeRange {
            from_ms: since.unwrap_or(0),
            to_ms: until.unwrap_or(u64::MAX),
        }),
    };
    let client = ctx.connect().await?;
    let set = a.state.set();
    let ids = client
        .browse(&a.queue, set, a.newest, a.limit, range)
        .await?;
    let now = client.server_now_ms().await?;
    let mut items = Vec::with_capacity(ids.len());
    for id in &ids {
        // A job can settle between the listing and this read; skip it then.
        if let Some(view) = client.inspect(&a.queue, id.as_str()).await? {
            items.push(view);
        }
    }
    if ctx.json {
        let list: Vec<Value> = items
            .iter()
            .map(|v| {
                let minted = v.id.minted_at_ms();
                json!({
                    "id": v.id.as_str(),
                    "state": text_field(v, "state"),
                    "attempts": text_field(v, "attempts").and_then(|a| a.parse::<u64>().ok()),
                    "minted_at_ms": minted,
                    "age_ms": now.saturating_sub(minted),
                    "run_at_ms": score_in(v, BrowseSet::Schedule),
                    "lease_deadline_ms": score_in(v, BrowseSet::Active),
                    "last_error": text_field(v, "last_error"),
                })
            })
            .collect();
        out::json(&Value::Array(list));
        return Ok(EXIT_OK);
    }
    if items.is_empty() {
        println!("no {} jobs in {}", set.as_str(), a.queue);
        return Ok(EXIT_OK);
    }
    let rows: Vec<Vec<String>> = items
        .iter()
        .map(|v| {
            let when = score_in(v, BrowseSet::Schedule)
                .map(|t| format!("runs {}", time::relative(t, now)))
                .or_else(|| {
                    score_in(v, BrowseSet::Active)
                        .map(|t| format!("lease ends {}", time::relative(t, now)))
                })
                .unwrap_or_else(|| "-".into());
            vec![
                v.id.to_string(),
                text_field(v, "state").unwrap_or_else(|| "?".into()),
                text_field(v, "attempts").unwrap_or_else(|| "0".into()),
                time::short(now.saturating_sub(v.id.minted_at_ms())),
                when,
                out::truncate(&text_field(v, "last_error").unwrap_or_default(), 60),
            ]
        })
        .collect();
    out::table(
        &["ID", "STATE", "ATTEMPTS", "AGE", "WHEN", "LAST ERROR"],
        &rows,
    );
    Ok(EXIT_OK)
}

/// How `emq job` shows the payload.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PayloadMode {
    /// Printable characters, the rest escaped, cut at 1 KiB.
    Preview,
    /// Exactly the stored bytes on stdout, nothing else.
    Raw,
    /// The bytes as UTF-8 text (invalid sequences replaced).
    Text,
    /// Parsed and pretty-printed as JSON (an error if it is not JSON).
    Json,
}

#[derive(Debug, Args)]
pub struct JobArgs {
    pub queue: String,
    pub id: String,
    #[arg(long, value_enum, default_value = "preview")]
    pub payload: PayloadMode,
}

const PREVIEW_BYTES: usize = 1024;

/// Printable ASCII as is, everything else escaped (`\n`, `\xff`).
fn preview(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(PREVIEW_BYTES)];
    let mut text: String = cut.escape_ascii().to_string();
    if bytes.len() > PREVIEW_BYTES {
        text.push_str(&format!(" … ({} more bytes)", bytes.len() - PREVIEW_BYTES));
    }
    text
}

pub async fn job(ctx: &Ctx, a: JobArgs) -> Result<i32, Fail> {
    check_queues(std::slice::from_ref(&a.queue))?;
    check_ids(std::slice::from_ref(&a.id))?;
    let client = ctx.connect().await?;
    let view = client
        .inspect(&a.queue, &a.id)
        .await?
        .ok_or_else(|| Fail::no_such_job(&a.queue, &a.id))?;
    let payload = view.row.get("payload").cloned().unwrap_or_default();
    let parsed_json = match a.payload {
        PayloadMode::Json => Some(
            serde_json::from_slice::<Value>(&payload)
                .map_err(|e| Fail::input(format!("the payload of {} is not JSON: {e}", a.id)))?,
        ),
        _ => None,
    };
    if let PayloadMode::Raw = a.payload {
        std::io::stdout().write_all(&payload)?;
        return Ok(EXIT_OK);
    }
    let found: Vec<&str> = view.sets.iter().map(|(s, _)| s.as_str()).collect();
    let minted = view.id.minted_at_ms();
    let now = client.server_now_ms().await?;
    if ctx.json {
        let fields: BTreeMap<&String, String> = view
            .row
            .iter()
            .filter(|(k, _)| k.as_str() != "payload")
            .map(|(k, v)| (k, String::from_utf8_lossy(v).into_owned()))
            .collect();
        let sets: Vec<Value> = view
            .sets
            .iter()
            .map(|(s, score)| json!({"set": s.as_str(), "score": *score as u64}))
            .collect();
        let payload_value = match parsed_json {
            Some(v) => v,
            None => match std::str::from_utf8(&payload) {
                Ok(text) => json!(text),
                Err(_) => Value::Null,
            },
        };
        out::json(&json!({
            "queue": a.queue,
            "id": view.id.as_str(),
            "state": text_field(&view, "state"),
            "found_in": sets,
            "minted_at_ms": minted,
            "fields": fields,
            "payload": payload_value,
            "payload_bytes": payload.len(),
            "payload_is_utf8": std::str::from_utf8(&payload).is_ok(),
        }));
        return Ok(EXIT_OK);
    }
    let mut lines: Vec<(String, String)> = vec![
        ("id".into(), view.id.to_string()),
        ("queue".into(), a.queue.clone()),
        (
            "state".into(),
            text_field(&view, "state").unwrap_or_else(|| "(no row)".into()),
        ),
        (
            "found in".into(),
            if found.is_empty() {
                "no set (debris)".into()
            } else {
                found.join(", ")
            },
        ),
        (
            "minted".into(),
            format!(
                "{} ({})",
                time::rfc3339(minted),
                time::relative(minted, now)
            ),
        ),
    ];
    if let Some(t) = score_in(&view, BrowseSet::Schedule) {
        lines.push((
            "run at".into(),
            format!("{} ({})", time::rfc3339(t), time::relative(t, now)),
        ));
    }
    if let Some(t) = score_in(&view, BrowseSet::Active) {
        lines.push((
            "lease ends".into(),
            format!("{} ({})", time::rfc3339(t), time::relative(t, now)),
        ));
    }
    for (name, value) in &view.row {
        if !matches!(name.as_str(), "state" | "payload") {
            lines.push((name.clone(), String::from_utf8_lossy(value).into_owned()));
        }
    }
    lines.push(("payload".into(), format!("{} bytes", payload.len())));
    let width = lines.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in &lines {
        println!("{k:<width$}  {v}");
    }
    println!();
    match (a.payload, parsed_json) {
        (PayloadMode::Json, Some(v)) => out::json(&v),
        (PayloadMode::Text, _) => println!("{}", String::from_utf8_lossy(&payload)),
        _ => println!("{}", preview(&payload)),
    }
    Ok(EXIT_OK)
}
