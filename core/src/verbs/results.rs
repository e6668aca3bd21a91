//! Results (echomq:2.1.0): with the worker option `keep_result_ms`, a
//! handler's return value is stored at `emq:{q}:job:<id>:result` (a STRING
//! with that TTL) by the same script that completes the job
//! (`complete_result.lua`, `complete_many_result.lua`), and the job's log
//! gets the same TTL. `result` reads it; `wait_for_result` waits for it on the
//! queue's events (what RQ's `job.result` and Celery's `AsyncResult.get` do).

use std::time::Duration;

use crate::client::Client;
use crate::defaults::SETTLE_BATCH;
use crate::error::{Error, ErrorKind, Result};
use crate::id::BrandedId;
use crate::keys::QueueKeys;
use crate::replies;
use crate::scripts;
use crate::wire::WireVersion;

impl Client {
    /// The value a worker kept for job `id` (see `keep_result_ms`), or `None`
    /// when none is kept: the job has not completed, completed without
    /// `keep_result_ms`, or its result expired. A handler that returned
    /// nothing keeps an empty value.
    pub async fn result(&self, queue: &str, id: &str) -> Result<Option<Vec<u8>>> {
        self.require(WireVersion::V2_1_0, "result")?;
        let keys = QueueKeys::new(queue)?;
        let id = BrandedId::parse(id)?;
        self.transport
            .query(redis::cmd("GET").arg(keys.job_result(&id)))
            .await
    }

    /// Wait up to `timeout` for job `id`'s kept result. It subscribes to the
    /// queue's events first and reads the job second (so a job completing in
    /// between is not missed), then wakes on the job's events. Answers the
    /// result; a job that went dead is a *job dead* error carrying its
    /// `last_error` ([`Error::last_error`]); a job with neither a row nor a
    /// kept result (completed without `keep_result_ms`, removed, expired,
    /// never enqueued) is *gone*; the deadline passing is a *timeout*.
    pub async fn wait_for_result(
        &self,
        queue: &str,
        id: &str,
        timeout: Duration,
    ) -> Result<Vec<u8>> {
        self.require(WireVersion::V2_1_0, "wait_for_result")?;
        let keys = QueueKeys::new(queue)?;
        let id = BrandedId::parse(id)?;
        let (row, result) = (keys.job(&id), keys.job_result(&id));
        let this = self.clone();
        self.wait_until(queue, id.as_str(), timeout, move |event| {
            let (this, row, result) = (this.clone(), row.clone(), result.clone());
            async move {
                if event.as_ref().map(|e| e.event.as_str()) == Some("removed") {
                    return Err(Error::new(
                        ErrorKind::Gone,
                        format!("job {id} was removed while waiting for its result"),
                    )
                    .about(&id));
                }
                // The row first, then the result, in one round trip: a
                // completion landing between the two reads shows as a row
                // still held and a result already there, never as neither.
                let mut pipe = redis::pipe();
                pipe.cmd("HMGET").arg(&row).arg("state").arg("last_error");
                pipe.cmd("GET").arg(&result);
                let answers = this.transport.pipeline(&pipe).await?;
                replies::result_wait(&id, answers)
            }
        })
        .await
    }

    /// Complete held jobs as `complete_many` does, keeping each one's value
    /// for `keep_result_ms` (0: delete it with the row, as `complete_many`
    /// does at 2.1.0). The worker's own verb (`keep_result_ms`): not in the
    /// bindings.
    #[doc(hidden)]
    pub async fn complete_many_kept(
        &self,
        queue: &str,
        jobs: &[(&str, u64, &[u8])],
        keep_result_ms: u64,
    ) -> Result<Vec<Result<()>>> {
        self.require(WireVersion::V2_1_0, "complete_many_kept")?;
        let keys = QueueKeys::new(queue)?;
        let ids: Vec<BrandedId> = jobs
            .iter()
            .map(|(id, _, _)| BrandedId::parse(id))
            .collect::<Result<_>>()?;
        for (_, _, value) in jobs {
            self.check_payload(value)?;
        }
        let keep = keep_result_ms.to_string();
        let mut out = Vec::with_capacity(ids.len());
        let mut events = self.events(&keys);
        for (chunk_ids, chunk) in ids.chunks(SETTLE_BATCH).zip(jobs.chunks(SETTLE_BATCH)) {
            let mut args: Vec<&[u8]> = Vec::with_capacity(2 + 3 * chunk.len());
            let tokens: Vec<String> = chunk.iter().map(|(_, t, _)| t.to_string()).collect();
            args.push(keys.base.as_bytes());
            args.push(keep.as_bytes());
            for ((id, token), (_, _, value)) in chunk_ids.iter().zip(&tokens).zip(chunk) {
                args.push(id.as_str().as_bytes());
                args.push(token.as_bytes());
                args.push(if keep_result_ms > 0 { value } else { b"" });
            }
            let answer = self
                .transport
                .script(
                    &scripts::COMPLETE_MANY_RESULT,
                    &[&keys.active, &keys.pending, &keys.completed],
                    &args,
                )
                .await?;
            let verdicts = replies::completed_many(chunk_ids, answer)?;
            if let Some(events) = events.as_mut() {
                for ((id, token), verdict) in chunk_ids.iter().zip(&tokens).zip(&verdicts) {
                    if verdict.is_ok() {
                        events.add("completed", id.as_str(), &[("token", token)]);
                    }
                }
            }
            // As `complete_many`: with `wait_replicas`, a chunk the
            // replicas did not confirm answers `NotDurable` per job.
            out.extend(self.confirmed(&keys, chunk_ids, verdicts).await?);
        }
        if let Some(events) = events {
            events.send();
        }
        Ok(out)
    }
}
