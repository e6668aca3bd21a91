//! The JSON endpoints (docs/DASHBOARD.md): what the page reads and what
//! scripts may use. Every answer comes from the core's verbs; every list is
//! one server-side page.

use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use echomq::{BrowseSet, ErrorKind, TimeRange};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::guard::json_error;
use crate::payload;
use crate::server::AppState;

/// Page size when the request names none.
pub const DEFAULT_LIMIT: u64 = 50;
/// The largest page a list answers: each listed job's row (payload
/// included) is read to show its attempts, error and preview.
pub const MAX_LIMIT: u64 = 200;

/// A core error as an HTTP answer: bad input 400, a job in the wrong state
/// 409, a server that cannot be reached 503.
pub struct ApiError {
    status: StatusCode,
    kind: &'static str,
    message: String,
}

impl From<echomq::Error> for ApiError {
    fn from(e: echomq::Error) -> Self {
        let status = match e.kind() {
            ErrorKind::InvalidId | ErrorKind::InvalidQueue | ErrorKind::InvalidArgument => {
                StatusCode::BAD_REQUEST
            }
            ErrorKind::Gone | ErrorKind::NotDead | ErrorKind::JobActive | ErrorKind::Stale => {
                StatusCode::CONFLICT
            }
            ErrorKind::Connection | ErrorKind::Timeout | ErrorKind::Closed => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError {
            status,
            kind: e.code(),
            message: e.message().to_string(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        json_error(self.status, self.kind, &self.message)
    }
}

type ApiResult<T> = Result<T, ApiError>;

/// Only the queues the dashboard was started with are served.
fn shown(state: &AppState, queue: &str) -> ApiResult<()> {
    if state.queues.iter().any(|q| q == queue) {
        Ok(())
    } else {
        Err(ApiError {
            status: StatusCode::NOT_FOUND,
            kind: "unknown_queue",
            message: format!("queue {queue:?} is not shown by this dashboard"),
        })
    }
}

fn not_found(message: String) -> ApiError {
    ApiError {
        status: StatusCode::NOT_FOUND,
        kind: "not_found",
        message,
    }
}

pub async fn overview(State(state): State<AppState>) -> Response {
    Json(&*state.sampler.latest()).into_response()
}

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    /// pending (default), active, scheduled or dead.
    state: Option<String>,
    /// newest (default) or oldest.
    order: Option<String>,
    offset: Option<u64>,
    limit: Option<u64>,
    /// Mint time (pending, dead) or run-at / deadline (scheduled, active), unix ms.
    from_ms: Option<u64>,
    to_ms: Option<u64>,
}

#[derive(Debug, Serialize)]
struct ListedJob {
    id: String,
    minted_at_ms: u64,
    /// Run-at (scheduled) or lease deadline (active), unix ms.
    due_ms: Option<u64>,
    attempts: Option<u64>,
    last_error: Option<String>,
    preview: Option<String>,
}

pub async fn list_jobs(
    State(state): State<AppState>,
    Path(queue): Path<String>,
    Query(q): Query<ListQuery>,
) -> ApiResult<Response> {
    shown(&state, &queue)?;
    let set = BrowseSet::parse(q.state.as_deref().unwrap_or("pending"))?;
    let newest_first = match q.order.as_deref().unwrap_or("newest") {
        "newest" => true,
        "oldest" => false,
        other => {
            return Err(echomq::Error::new(
                ErrorKind::InvalidArgument,
                format!("order {other:?}: expected newest or oldest"),
            )
            .into())
        }
    };
    let range = match (q.from_ms, q.to_ms) {
        (None, None) => None,
        (from, to) => Some(TimeRange {
            from_ms: from.unwrap_or(0),
            to_ms: to.unwrap_or(u64::MAX >> 23),
        }),
    };
    let offset = q.offset.unwrap_or(0);
    let limit = q.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(echomq::Error::new(
            ErrorKind::InvalidArgument,
            format!("limit must be between 1 and {MAX_LIMIT}"),
        )
        .into());
    }
    let page = state
        .client
        .browse_page(&queue, set, newest_first, offset, limit, range)
        .await?;
    // The rows of one page, fetched together over the multiplexed connection.
    let rows = futures_util::future::join_all(
        page.entries
            .iter()
            .map(|e| state.client.job(&queue, e.id.as_str())),
    )
    .await;
    let jobs: Vec<ListedJob> = page
        .entries
        .iter()
        .zip(rows)
        .map(|(entry, row)| {
            let row = row.ok().flatten();
            ListedJob {
                id: entry.id.to_string(),
                minted_at_ms: entry.id.minted_at_ms(),
                due_ms: entry.score_ms,
                attempts: row.as_ref().map(|r| r.attempts),
                last_error: row.as_ref().and_then(|r| r.last_error.clone()),
                preview: row.as_ref().map(|r| payload::preview(&r.payload, 120)),
            }
        })
        .collect();
    Ok(Json(json!({
        "queue": queue,
        "state": set.as_str(),
        "order": if newest_first { "newest" } else { "oldest" },
        "offset": offset,
        "limit": limit,
        "total": page.total,
        "jobs": jobs,
    }))
    .into_response())
}

pub async fn job(
    State(state): State<AppState>,
    Path((queue, id)): Path<(String, String)>,
) -> ApiResult<Response> {
    shown(&state, &queue)?;
    let (row, due, extras) = tokio::join!(
        state.client.job(&queue, &id),
        state.client.job_due_ms(&queue, &id),
        job_extras(&state, &queue, &id)
    );
    let (logs, result) = extras?;
    let Some(row) = row? else {
        // A completed job's row is gone; with `keep_result_ms` its result
        // (and log) are still there for that long.
        if let Some(result) = result {
            return Ok(Json(json!({
                "queue": queue,
                "id": id,
                "state": "completed",
                "minted_at_ms": echomq::BrandedId::parse(&id).ok().map(|b| b.minted_at_ms()),
                "logs": logs,
                "result": payload::render(&result),
            }))
            .into_response());
        }
        return Err(not_found(format!(
            "job {id} is not in {queue} (completed or removed)"
        )));
    };
    let progress = row
        .progress
        .as_deref()
        .map(|text| serde_json::from_str::<serde_json::Value>(text).unwrap_or(json!(text)));
    Ok(Json(json!({
        "queue": queue,
        "id": row.id.to_string(),
        "state": row.state.as_str(),
        "attempts": row.attempts,
        "last_error": row.last_error,
        "minted_at_ms": row.id.minted_at_ms(),
        "due_ms": due?,
        "payload": payload::render(&row.payload),
        "progress": progress,
        "logs": logs,
        "result": result.as_deref().map(payload::render),
    }))
    .into_response())
}

/// Lines a job page shows of a job's log: the newest ones.
pub const SHOWN_LOG_LINES: i64 = 200;

/// The newest lines of the job's log and its kept result (wire 2.1.0); a
/// client speaking 2.0.0 has neither, so both read as absent.
async fn job_extras(
    state: &AppState,
    queue: &str,
    id: &str,
) -> echomq::Result<(Vec<String>, Option<Vec<u8>>)> {
    let (logs, result) = tokio::join!(
        state.client.logs(queue, id, -SHOWN_LOG_LINES, -1),
        state.client.result(queue, id)
    );
    let unsupported = |e: &echomq::Error| e.kind() == ErrorKind::Unsupported;
    let logs = match logs {
        Err(e) if unsupported(&e) => Vec::new(),
        other => other?,
    };
    let result = match result {
        Err(e) if unsupported(&e) => None,
        other => other?,
    };
    Ok((logs, result))
}

/// The payload's raw bytes, as a download (never rendered by the browser).
pub async fn raw_payload(
    State(state): State<AppState>,
    Path((queue, id)): Path<(String, String)>,
) -> ApiResult<Response> {
    shown(&state, &queue)?;
    let row = state.client.job(&queue, &id).await?;
    let row = row.ok_or_else(|| not_found(format!("job {id} is not in {queue}")))?;
    let disposition = format!("attachment; filename=\"{queue}-{}.bin\"", row.id);
    Ok((
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        row.payload,
    )
        .into_response())
}

// ---- actions (POST; absent in read-only mode) ---------------------------

fn changed(state: &AppState, body: serde_json::Value) -> Response {
    state.sampler.sample_now();
    Json(body).into_response()
}

pub async fn pause(state: State<AppState>, queue: Path<String>) -> ApiResult<Response> {
    set_paused(state, queue, true).await
}

pub async fn resume(state: State<AppState>, queue: Path<String>) -> ApiResult<Response> {
    set_paused(state, queue, false).await
}

/// Pause or resume, answering whether that changed anything.
async fn set_paused(
    State(state): State<AppState>,
    Path(queue): Path<String>,
    paused: bool,
) -> ApiResult<Response> {
    shown(&state, &queue)?;
    let was = state.client.is_paused(&queue).await?;
    if paused {
        state.client.pause(&queue).await?;
    } else {
        state.client.resume(&queue).await?;
    }
    Ok(changed(
        &state,
        json!({ "queue": queue, "paused": paused, "changed": was != paused }),
    ))
}

pub async fn requeue(
    State(state): State<AppState>,
    Path((queue, id)): Path<(String, String)>,
) -> ApiResult<Response> {
    shown(&state, &queue)?;
    state.client.requeue_dead(&queue, &id).await?;
    Ok(changed(
        &state,
        json!({ "queue": queue, "requeued": [id], "state": "pending" }),
    ))
}

pub async fn remove(
    State(state): State<AppState>,
    Path((queue, id)): Path<(String, String)>,
) -> ApiResult<Response> {
    shown(&state, &queue)?;
    state.client.remove(&queue, &id).await?;
    Ok(changed(&state, json!({ "queue": queue, "removed": [id] })))
}

/// Requeue every dead job, oldest first (the core's `requeue_all_dead`:
/// bounded batches, so a large dead set never blocks the server for long).
pub async fn requeue_all_dead(
    State(state): State<AppState>,
    Path(queue): Path<String>,
) -> ApiResult<Response> {
    shown(&state, &queue)?;
    let requeued = state.client.requeue_all_dead(&queue, None).await?;
    Ok(changed(
        &state,
        json!({ "queue": queue, "requeued_count": requeued }),
    ))
}

#[derive(Debug, Deserialize)]
pub struct PurgeQuery {
    /// Only dead jobs minted longer ago than this (`30m`, `7d`, `1h 30m`);
    /// absent or empty: every dead job.
    older_than: Option<String>,
}

/// Delete dead jobs (rows and payloads) by the core's `purge_dead`,
/// answering how many went.
pub async fn purge_dead(
    State(state): State<AppState>,
    Path(queue): Path<String>,
    Query(q): Query<PurgeQuery>,
) -> ApiResult<Response> {
    shown(&state, &queue)?;
    let older_than_ms = match q.older_than.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(text) => Some(parse_age(text)?),
    };
    let deleted = state.client.purge_dead(&queue, older_than_ms, None).await?;
    Ok(changed(
        &state,
        json!({ "queue": queue, "deleted": deleted, "older_than_ms": older_than_ms }),
    ))
}

/// A duration in humantime's words, in milliseconds.
fn parse_age(text: &str) -> ApiResult<u64> {
    humantime::parse_duration(text)
        .map(|d| d.as_millis() as u64)
        .map_err(|e| {
            echomq::Error::new(
                ErrorKind::InvalidArgument,
                format!("older_than {text:?}: {e} (expected e.g. 90s, 30m, 12h, 7d)"),
            )
            .into()
        })
}

#[derive(Debug, Deserialize)]
pub struct DrainQuery {
    /// Delete scheduled jobs too (default false).
    include_scheduled: Option<bool>,
}

/// Delete the waiting jobs — pending, and scheduled when asked — by the
/// core's `drain`; active jobs are left to finish. Answers how many went.
pub async fn drain(
    State(state): State<AppState>,
    Path(queue): Path<String>,
    Query(q): Query<DrainQuery>,
) -> ApiResult<Response> {
    shown(&state, &queue)?;
    let include_scheduled = q.include_scheduled.unwrap_or(false);
    let deleted = state.client.drain(&queue, include_scheduled, None).await?;
    Ok(changed(
        &state,
        json!({ "queue": queue, "deleted": deleted, "include_scheduled": include_scheduled }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_are_humantime_durations() {
        assert_eq!(parse_age("90s").ok(), Some(90_000));
        assert_eq!(parse_age("7d").ok(), Some(7 * 86_400_000));
        assert_eq!(parse_age("1h 30m").ok(), Some(5_400_000));
        let e = parse_age("soon").expect_err("refused");
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        assert_eq!(e.kind, "EMQ_INVALID_ARGUMENT");
    }
}
