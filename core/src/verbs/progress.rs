//! Progress and logs (echomq:2.1.0), the reference's layout with its defects
//! fixed: the row field `progress` (written only by the job's holder, then a
//! `progress` queue event) and the LIST `emq:{q}:job:<id>:logs` (capped, and
//! deleted with its job: see `complete_result.lua`, `remove_cascade.lua`;
//! drain and purge_dead already delete it).

use crate::client::Client;
use crate::defaults;
use crate::error::{Error, Result};
use crate::id::BrandedId;
use crate::keys::QueueKeys;
use crate::replies;
use crate::scripts;
use crate::wire::WireVersion;

/// Refuse what is not one small JSON value before the wire.
fn check_progress(progress: &str) -> Result<()> {
    if progress.len() > defaults::MAX_PROGRESS_BYTES {
        return Err(Error::invalid_argument(format!(
            "progress of {} bytes exceeds the {}-byte maximum",
            progress.len(),
            defaults::MAX_PROGRESS_BYTES
        )));
    }
    serde_json::from_str::<serde_json::Value>(progress)
        .map(drop)
        .map_err(|e| Error::invalid_argument(format!("progress is not one JSON value: {e}")))
}

/// Refuse a log line above [`defaults::MAX_LOG_LINE_BYTES`] (or the
/// client's `max_payload`, if smaller) before the wire: kept up to
/// `max_lines` times per job, an unbounded line is unbounded memory.
fn check_line(line: &str, max_payload: usize) -> Result<()> {
    let max = defaults::MAX_LOG_LINE_BYTES.min(max_payload);
    if line.len() > max {
        return Err(Error::invalid_argument(format!(
            "log line of {} bytes exceeds the {max}-byte maximum",
            line.len()
        )));
    }
    Ok(())
}

impl Client {
    /// Record how far a held job got: `progress` is one JSON value as text (a
    /// number such as `42`, or a small object), at most
    /// [`defaults::MAX_PROGRESS_BYTES`]. Only the holder may write it: a token
    /// that no longer matches, or a job no longer active, is *stale* (a job
    /// without a row is *gone*). The row field `progress` keeps the last write
    /// ([`Client::job`] shows it), and a `progress` queue event follows.
    pub async fn update_progress(
        &self,
        queue: &str,
        id: &str,
        token: u64,
        progress: &str,
    ) -> Result<()> {
        self.require(WireVersion::V2_1_0, "update_progress")?;
        let keys = QueueKeys::new(queue)?;
        let id = BrandedId::parse(id)?;
        check_progress(progress)?;
        let row = keys.job(&id);
        let answer = self
            .transport
            .script(
                &scripts::UPDATE_PROGRESS,
                &[&row],
                &[token.to_string().as_bytes(), progress.as_bytes()],
            )
            .await
            .map_err(|e| e.about(&id))?;
        replies::progressed(answer)?;
        self.publish(&keys, "progress", id.as_str(), &[("progress", progress)]);
        Ok(())
    }

    /// Append `line` (at most [`defaults::MAX_LOG_LINE_BYTES`], 64 KiB) to
    /// the job's log, keeping the newest `max_lines` lines
    /// (`None`: [`defaults::LOG_MAX_LINES`], 1 000). Any caller may log while
    /// the job has a row; without one the answer is *gone* (a log written then
    /// would outlive its job). Answers the log's length.
    pub async fn log(
        &self,
        queue: &str,
        id: &str,
        line: &str,
        max_lines: Option<u64>,
    ) -> Result<u64> {
        self.require(WireVersion::V2_1_0, "log")?;
        let keys = QueueKeys::new(queue)?;
        let id = BrandedId::parse(id)?;
        let max_lines = max_lines.unwrap_or(defaults::LOG_MAX_LINES);
        if max_lines == 0 || max_lines > defaults::LOG_MAX_LINES_LIMIT {
            return Err(Error::invalid_argument(format!(
                "max_lines is {max_lines}, outside 1..={}",
                defaults::LOG_MAX_LINES_LIMIT
            )));
        }
        check_line(line, self.transport.options().max_payload)?;
        let (row, logs) = (keys.job(&id), keys.job_logs(&id));
        let answer = self
            .transport
            .script(
                &scripts::ADD_LOG,
                &[&row, &logs],
                &[line.as_bytes(), max_lines.to_string().as_bytes()],
            )
            .await?;
        replies::logged(&id, answer)
    }

    /// Lines `start..=end` of the job's log, oldest first (indexes as LRANGE:
    /// `0, -1` is the whole log, `-10, -1` the newest ten), in one round trip.
    /// A job without a log (none written, or deleted with its job) answers an
    /// empty list.
    pub async fn logs(&self, queue: &str, id: &str, start: i64, end: i64) -> Result<Vec<String>> {
        self.require(WireVersion::V2_1_0, "logs")?;
        let keys = QueueKeys::new(queue)?;
        let id = BrandedId::parse(id)?;
        let lines = self
            .transport
            .query(
                redis::cmd("LRANGE")
                    .arg(keys.job_logs(&id))
                    .arg(start)
                    .arg(end),
            )
            .await?;
        replies::log_lines(lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_is_one_small_json_value() {
        for ok in [
            "42",
            "0.5",
            "\"half\"",
            "{\"done\":3,\"of\":10}",
            "[1,2]",
            "null",
        ] {
            assert!(check_progress(ok).is_ok(), "{ok}");
        }
        for bad in ["", "4 2", "{", "nope", "1 2"] {
            assert!(check_progress(bad).is_err(), "{bad}");
        }
        let big = format!("\"{}\"", "x".repeat(defaults::MAX_PROGRESS_BYTES));
        assert!(check_progress(&big).is_err());
    }
}
