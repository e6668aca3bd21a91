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
use crate::verb_options::EnqueueOptions;
use crate::wire::WireVersion;

impl EnqueueOptions {
    /// The dedup options' own rules (the rest are [`EnqueueOptions::when`]'s).
    pub(crate) fn check_dedup(&self) -> Result<()> {
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
    /// [`Client::enqueue`] with a `dedup_id`: a freshly minted `JOB` id,
    /// and the answer is `{id of the job holding it, duplicate: true}` while
    /// that job lives; two producers racing with one dedup id create one job.
    pub(crate) async fn enqueue_dedup(
        &self,
        queue: &str,
        payload: &[u8],
        dedup_id: &str,
        options: &EnqueueOptions,
        priority: Option<u32>,
    ) -> Result<Enqueued> {
        self.require(WireVersion::V2_1_0, "enqueue with dedup_id")?;
        let keys = QueueKeys::new(queue)?;
        options.check_dedup()?;
        self.check_payload(payload)?;
        let dedup_key = keys::dedup_key(queue, dedup_id)?;
        let ttl = options.dedup_ttl_ms.unwrap_or(0).to_string();
        for _ in 0..MINT_ATTEMPTS {
            let id = id::mint_job_id_with(self.node_id())?;
            let row = keys.job(&id);
            let mut args = vec![
                id.as_str().as_bytes(),
                payload,
                keys.base.as_bytes(),
                ttl.as_bytes(),
            ];
            let p = priority.map(|p| p.to_string());
            // A prioritized job waits in prio (echomq:2.2.0).
            let (script, set) = match &p {
                Some(p) => {
                    args.push(p.as_bytes());
                    (&scripts::ENQUEUE_DEDUP_PRIORITY, &keys.prio)
                }
                None => (&scripts::ENQUEUE_DEDUP, &keys.pending),
            };
            let answer = self
                .transport
                .script(script, &[&row, set, &dedup_key], &args)
                .await?;
            match replies::deduped(answer)? {
                (true, _) => {
                    // The hint after the reply: a duplicate (the common answer
                    // of a deduplicating producer) wrote nothing to wake for.
                    self.send_wake_hint(&keys).await;
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
