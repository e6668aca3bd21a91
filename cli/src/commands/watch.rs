//! `emq watch`: a live view of depths, throughput, failure rate and the
//! oldest pending job's age, refreshed every interval. On a terminal it draws
//! on the alternate screen (crossterm) and quits on `q`, Esc or Ctrl-C,
//! restoring the terminal even on an error; elsewhere it prints one plain
//! frame per refresh, so it can be piped or tested.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use clap::Args;
use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::{cursor, execute, terminal};
use echomq::{BrowseSet, Client, Counts};

use super::view::{rate, snapshots};
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

async fn frame(
    client: &Client,
    ctx_url: &str,
    named: &[String],
    previous: &mut Option<(Instant, BTreeMap<String, Counts>)>,
) -> Result<String, Fail> {
    let queues = if named.is_empty() {
        client.queues().await?
    } else {
        named.to_vec()
    };
    let taken = Instant::now();
    let snaps = snapshots(client, &queues).await?;
    let now = client.server_now_ms().await?;
    let mut rows = Vec::with_capacity(snaps.len());
    for s in &snaps {
        let oldest = client
            .browse(&s.queue, BrowseSet::Pending, false, 1, None)
            .await?
            .first()
            .map(|id| time::short(now.saturating_sub(id.minted_at_ms())))
            .unwrap_or_else(|| "-".into());
        let before = previous
            .as_ref()
            .and_then(|(at, m)| Some((*at, m.get(&s.queue)?)));
        let (done, failed, fail_pct) = match before {
            Some((at, b)) => {
                let d = rate(b.completed, s.counts.completed, taken - at);
                let f = rate(b.failed, s.counts.failed, taken - at);
                let pct = if d + f > 0.0 {
                    format!("{:.1}%", 100.0 * f / (d + f))
                } else {
                    "-".into()
                };
                (format!("{d:.1}"), format!("{f:.1}"), pct)
            }
            None => ("-".into(), "-".into(), "-".into()),
        };
        let c = &s.counts;
        rows.push(vec![
            s.queue.clone() + if s.paused { " (paused)" } else { "" },
            c.pending.to_string(),
            c.active.to_string(),
            c.scheduled.to_string(),
            c.dead.to_string(),
            done,
            failed,
            fail_pct,
            oldest,
        ]);
    }
    *previous = Some((
        taken,
        snaps.into_iter().map(|s| (s.queue, s.counts)).collect(),
    ));
    let title = format!(
        "emq watch — {} — {} (q quits)\n\n",
        crate::fail::redact_url(ctx_url),
        time::rfc3339(now)
    );
    Ok(title
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
        ))
}

pub async fn watch(ctx: &Ctx, a: WatchArgs) -> Result<i32, Fail> {
    check_queues(&a.queues)?;
    if a.interval.is_zero() {
        return Err(Fail::input("--interval must be greater than zero"));
    }
    let client = ctx.connect().await?;
    let mut previous = None;
    let mut round = 0u64;
    let on_terminal = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    let screen = if on_terminal {
        Some(Screen::enter()?)
    } else {
        None
    };
    loop {
        let text = frame(&client, &ctx.url, &a.queues, &mut previous).await?;
        match &screen {
            Some(s) => s.draw(&text)?,
            None => {
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
