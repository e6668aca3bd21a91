//! Deduplication (echomq:2.1.0): `enqueue` with a dedup id creates at most one
//! live job per dedup id. The key `emq:{q}:de:<dedup id>` (the reference's
//! layout) holds the id of the job that took it; it is released when that job
//! completes, is removed or goes dead, or when its TTL lapses (throttle mode).

use crate::client::{Client, MINT_ATTEMPTS};
use crate::error::{Error, ErrorKind, Result};
use crate::id;
use crate::keys::{self, QueueKeys};
use crate::replies;
use crate::scripts;
use crate::types::Enqueued;
use crate::wire::WireVersion;

/// Options for [`Client::enqueue_with`]; `Default` is a plain enqueue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnqueueOptions {
    /// A second enqueue with the same dedup id, while the job holding it is
    /// pending, scheduled or active, answers `duplicate` with that job's id.
    /// `[A-Za-z0-9._-]{1,255}`.
    pub dedup_id: Option<String>,
    /// Release the dedup id after this long even if its job still lives
    /// (throttle mode). `None`: held until the job completes, is removed or
    /// goes dead.
    pub dedup_ttl_ms: Option<u64>,
}

impl EnqueueOptions {
    fn check(&self) -> Result<()> {
        if let Some(did) = &self.dedup_id {
            keys::validate_dedup_id(did)?;
        }
        match (self.dedup_ttl_ms, &self.dedup_id) {
            (Some(0), _) => Err(Error::invalid_argument(
                "dedup_ttl_ms must be greater than zero (omit it for no TTL)",
            )),
            (Some(_), None) => Err(Error::invalid_argument("dedup_ttl_ms needs a dedup_id")),
            _ => Ok(()),
        }
    }
}

impl Client {
    /// Enqueue with a freshly minted `JOB` id and options. With a `dedup_id`
    /// the answer is `{id of the job holding it, duplicate: true}` while that
    /// job lives; two producers racing with one dedup id create one job.
    pub async fn enqueue_with(
        &self,
        queue: &str,
        payload: impl AsRef<[u8]>,
        options: &EnqueueOptions,
    ) -> Result<Enqueued> {
        let Some(dedup_id) = options.dedup_id.as_deref() else {
            options.check()?;
            return self.enqueue(queue, payload).await;
        };
        self.require(WireVersion::V2_1_0, "enqueue with dedup_id")?;
        let payload = payload.as_ref();
        let keys = QueueKeys::new(queue)?;
        options.check()?;
        self.check_payload(payload)?;
        let dedup_key = keys::dedup_key(queue, dedup_id)?;
        let ttl = options.dedup_ttl_ms.unwrap_or(0).to_string();
        for _ in 0..MINT_ATTEMPTS {
            let id = id::mint_job_id_with(self.node_id())?;
            let row = keys.job(&id);
            let answer = self
                .transport
                .script(
                    &scripts::ENQUEUE_DEDUP,
                    &[&row, &keys.pending, &dedup_key],
                    &[
                        id.as_str().as_bytes(),
                        payload,
                        keys.base.as_bytes(),
                        ttl.as_bytes(),
                    ],
                )
                .await?;
            match replies::deduped(answer)? {
                (true, _) => {
                    self.publish(&keys, "added", id.as_str(), &[]);
                    return Ok(Enqueued {
                        id,
                        duplicate: false,
                    });
                }
                // The freshly minted id already had a row: a node-id collision, re-mint.
                (false, holder) if holder == id => continue,
                (false, holder) => {
                    return Ok(Enqueued {
                        id: holder,
                        duplicate: true,
                    })
                }
            }
        }
        Err(Error::new(
            ErrorKind::Server,
            "every freshly minted id already existed; is EMQ_NODE_ID shared?",
        ))
    }
}

impl crate::blocking::Client {
    /// See [`Client::enqueue_with`].
    pub fn enqueue_with(
        &self,
        queue: &str,
        payload: impl AsRef<[u8]>,
        options: &EnqueueOptions,
    ) -> Result<Enqueued> {
        crate::runtime::runtime().block_on(self.as_async().enqueue_with(queue, payload, options))
    }
}
