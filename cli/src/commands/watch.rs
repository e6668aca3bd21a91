//! `emq watch`: a live view of depths, throughput, failure rate and the
//! oldest pending job's age, refreshed every interval. On a terminal it draws
//! on the alternate screen (crossterm) and quits on `q`, Esc or Ctrl-C,
//! restoring the terminal even on an error; elsewhere it prints one plain
//! frame per refresh, so it can be piped or tested; with `--json`, one
//! compact JSON object per refresh (never the screen).

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use clap::Args;
use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::{cursor, execute, terminal};
use echomq::{BrowseSet, Client, Counts};
use serde_json::{json, Value};

use super::view::{counts_json, rate, snapshots};
use super::{check_queues, Ctx};
use crate::fail::{Fail, EXIT_OK};
use crate::{out, time};

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Queues to watch (default: every queue, re-discovered each refresh).
    pub queues: Vec<String>,
    #[arg(long, default_value = "1s", value_parser = time::parse_duration)]
    pub interval: Duration,
    /// Stop after this many refreshes (default: until q or Ctrl-C).
    #[arg(long)]
    pub count: Option<u64>,
}

/// Leaves raw mode and the alternate screen when dropped.
struct Screen;

impl Screen {
    fn enter() -> std::io::Result<Screen> {
        terminal::enable_raw_mode()?;
        let screen = Screen;
        execute!(
            std::io::stdout(),
            terminal::EnterAlternateScreen,
            cursor::Hide
        )?;
        Ok(screen)
    }

    fn draw(&self, frame: &str) -> std::io::Result<()> {
        let mut stdout = std::io::stdout();
        execute!(
            stdout,
            cursor::MoveTo(0, 0),
            terminal::Clear(terminal::ClearType::All)
        )?;
        stdout.write_all(frame.replace('\n', "\r\n").as_bytes())?;
        stdout.flush()
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = execute!(
            std::io::stdout(),
            cursor::Show,
            terminal::LeaveAlternateScreen
        );
        let _ = terminal::disable_raw_mode();
    }
}

/// Wait up to `limit` for a quitting key; answers whether one came.
fn quit_pressed(limit: Duration) -> std::io::Result<bool> {
    let until = Instant::now() + limit;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if !event::poll(left)? {
            return Ok(false);
        }
        if let Event::Key(k) = event::read()? {
            if k.kind != KeyEventKind::Press {
                continue;
            }
            let ctrl_c =
                k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL);
            if ctrl_c || matches!(k.code, KeyCode::Char('q') | KeyCode::Esc) {
                return Ok(true);
            }
        }
    }
}

/// One queue's line of a refresh: counts, rates over the last interval
/// (`None` on the first refresh) and the oldest pending job's age.
struct Line {
    snap: super::view::Snapshot,
    /// Completed and failed jobs per second since the previous refresh.
    rates: Option<(f64, f64)>,
    oldest_pending_ms: Option<u64>,
}

/// One refresh: the server's clock and a line per queue.
struct Frame {
    at_ms: u64,
    lines: Vec<Line>,
}

async fn read_frame(
    client: &Client,
    named: &[String],
    previous: &mut Option<(Instant, BTreeMap<String, Counts>)>,
) -> Result<Frame, Fail> {
    let queues = if named.is_empty() {
        client.queues().await?
    } else {
        named.to_vec()
    };
    let taken = Instant::now();
    let snaps = snapshots(client, &queues).await?;
    let now = client.server_now_ms().await?;
    let mut lines = Vec::with_capacity(snaps.len());
    for snap in snaps {
        let oldest_pending_ms = client
            .browse(&snap.queue, BrowseSet::Pending, false, 1, None)
            .await?
            .first()
            .map(|id| now.saturating_sub(id.minted_at_ms()));
        let rates = previous
            .as_ref()
            .and_then(|(at, m)| Some((*at, m.get(&snap.queue)?)))
            .map(|(at, b)| {
                (
                    rate(b.completed, snap.counts.completed, taken - at),
                    rate(b.failed, snap.counts.failed, taken - at),
                )
            });
        lines.push(Line {
            snap,
            rates,
            oldest_pending_ms,
        });
    }
    *previous = Some((
        taken,
        lines
            .iter()
            .map(|l| (l.snap.queue.clone(), l.snap.counts))
            .collect(),
    ));
    Ok(Frame { at_ms: now, lines })
}

/// The failure share of the jobs settled over the last interval, if any were.
fn fail_ratio(rates: Option<(f64, f64)>) -> Option<f64> {
    rates.and_then(|(d, f)| (d + f > 0.0).then(|| f / (d + f)))
}

fn frame_text(frame: &Frame, ctx_url: &str) -> String {
    let rows: Vec<Vec<String>> = frame
        .lines
        .iter()
        .map(|l| {
            let s = &l.snap;
            let c = &s.counts;
            let (done, failed) = match l.rates {
                Some((d, f)) => (format!("{d:.1}"), format!("{f:.1}")),
                None => ("-".into(), "-".into()),
            };
            vec![
                s.queue.clone() + if s.paused { " (paused)" } else { "" },
                c.pending.to_string(),
                c.active.to_string(),
                c.scheduled.to_string(),
                c.dead.to_string(),
                done,
                failed,
                fail_ratio(l.rates).map_or("-".into(), |r| format!("{:.1}%", 100.0 * r)),
                l.oldest_pending_ms.map_or("-".into(), time::short),
            ]
        })
        .collect();
    let title = format!(
        "emq watch — {} — {} (q quits)\n\n",
        crate::fail::redact_url(ctx_url),
        time::rfc3339(frame.at_ms)
    );
    title
        + &out::table_text(
            &[
                "QUEUE",
                "PENDING",
                "ACTIVE",
                "SCHEDULED",
                "DEAD",
                "DONE/S",
                "FAILED/S",
                "FAIL%",
                "OLDEST",
            ],
            &rows,
        )
}

/// `--json`: one compact object per refresh (the `stats --watch` shape plus
/// the failure ratio and the oldest pending job's age).
fn frame_json(frame: &Frame) -> Value {
    let queues: Vec<Value> = frame
        .lines
        .iter()
        .map(|l| {
            let mut v = counts_json(&l.snap);
            v["completed_per_s"] = json!(l.rates.map(|r| r.0));
            v["failed_per_s"] = json!(l.rates.map(|r| r.1));
            v["fail_ratio"] = json!(fail_ratio(l.rates));
            v["oldest_pending_age_ms"] = json!(l.oldest_pending_ms);
            v
        })
        .collect();
    json!({"at_ms": frame.at_ms, "queues": queues})
}

pub async fn watch(ctx: &Ctx, a: WatchArgs) -> Result<i32, Fail> {
    check_queues(&a.queues)?;
    if a.interval.is_zero() {
        return Err(Fail::input("--interval must be greater than zero"));
    }
    let client = ctx.connect().await?;
    let mut previous = None;
    let mut round = 0u64;
    // --json never draws: a stream of objects is for programs, not screens.
    let on_terminal =
        !ctx.json && std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    let screen = if on_terminal {
        Some(Screen::enter()?)
    } else {
        None
    };
    loop {
        let frame = read_frame(&client, &a.queues, &mut previous).await?;
        match &screen {
            _ if ctx.json => out::json_line(&frame_json(&frame)),
            Some(s) => s.draw(&frame_text(&frame, &ctx.url))?,
            None => {
                let text = frame_text(&frame, &ctx.url);
                if round > 0 {
                    println!();
                }
                print!("{text}");
                std::io::stdout().flush()?;
            }
        }
        round += 1;
        if a.count.is_some_and(|n| round >= n) {
            break;
        }
        if screen.is_some() {
            if quit_pressed(a.interval)? {
                break;
            }
        } else {
            tokio::select! {
                _ = tokio::time::sleep(a.interval) => {}
                _ = tokio::signal::ctrl_c() => break,
            }
        }
    }
    drop(screen);
    Ok(EXIT_OK)
}
