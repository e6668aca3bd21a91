//! Presentation helpers: aligned tables, JSON, confirmations and progress.

use std::io::{IsTerminal, Write};

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

use crate::fail::Fail;

/// Print rows under a header, each column as wide as its widest cell.
pub fn table(header: &[&str], rows: &[Vec<String>]) {
    print!("{}", table_text(header, rows));
}

pub fn table_text(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| -> String {
        let mut text = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == cells.len() {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<w$}  ", w = *w));
            }
        }
        text.trim_end().to_string() + "\n"
    };
    let mut text = line(header.to_vec());
    for row in rows {
        text.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    text
}

/// Pretty JSON on stdout.
pub fn json(value: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".into())
    );
}

/// One compact JSON line on stdout (for streams such as `stats --watch`).
pub fn json_line(value: &Value) {
    println!("{value}");
    let _ = std::io::stdout().flush();
}

/// `text` cut to `max` characters, with `…` when cut; newlines flattened.
pub fn truncate(text: &str, max: usize) -> String {
    let flat = text.replace(['\n', '\r', '\t'], " ");
    if flat.chars().count() <= max {
        flat
    } else {
        flat.chars().take(max.saturating_sub(1)).collect::<String>() + "…"
    }
}

/// Can `confirm` ask (stdin and stderr both a terminal)?
pub fn on_terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Ask before a destructive change: `--yes` skips the question; on a
/// terminal the user answers y/N; anywhere else the command refuses.
pub fn confirm(question: &str, yes: bool) -> Result<(), Fail> {
    if yes {
        return Ok(());
    }
    if !on_terminal() {
        return Err(Fail::input(format!(
            "{question} — refusing without --yes (not on a terminal)"
        )));
    }
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(Fail::input("aborted; nothing changed")),
    }
}

/// A progress bar on stderr for `total` jobs; invisible when stderr is not a
/// terminal (indicatif draws nothing there).
pub fn progress(total: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({per_sec}, {eta} left)")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align() {
        let text = table_text(
            &["QUEUE", "PENDING"],
            &[
                vec!["orders".into(), "3".into()],
                vec!["a".into(), "12".into()],
            ],
        );
        assert_eq!(text, "QUEUE   PENDING\norders  3\na       12\n");
        assert_eq!(truncate("abcdef", 4), "abc…");
    }
}
