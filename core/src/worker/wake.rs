//! The idle worker's wake listener (echomq:2.1.0, docs/PROTOCOL-DECISIONS.md 16.x).
//!
//! An idle worker parks in `BLPOP emq:{q}:wake <fallback>` on a connection of
//! its own (a blocked connection carries nothing else, so it cannot share the
//! client's multiplexed one). Our producers push a token after every write that
//! makes a job claimable, and the claim script keeps the list honest (emptied
//! when pending is, one token while a backlog remains), so a token means "claim
//! now". Producers that send none are picked up when the BLPOP times out.

use std::sync::Arc;
use std::time::Duration;

use redis::Value;
use tokio::sync::Mutex;

use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::transport::BlockingConn;

/// One worker run's wake listener; cheap to clone (the tasks share it).
#[derive(Clone)]
pub(crate) struct Wake {
    client: Client,
    key: String,
    conn: Arc<Mutex<Option<BlockingConn>>>,
}

impl Wake {
    pub(crate) fn new(client: Client, key: String) -> Wake {
        Wake {
            client,
            key,
            conn: Arc::default(),
        }
    }

    /// Wait up to `timeout` for a token: `Ok(true)` woken, `Ok(false)` timed
    /// out. A failed connection is dropped and reopened on the next call.
    pub(crate) async fn wait(&self, timeout: Duration) -> Result<bool> {
        let mut slot = self.conn.lock().await;
        if slot.is_none() {
            *slot = Some(self.client.transport().open_blocking(&self.key).await?);
        }
        let conn = slot.as_mut().expect("opened above");
        // BLPOP takes seconds (a float since Redis 6); the socket gets a margin on top.
        let secs = format!("{:.3}", timeout.as_secs_f64().max(0.001));
        let mut cmd = redis::cmd("BLPOP");
        cmd.arg(&self.key).arg(secs);
        let margin = self.client.options().connect_timeout;
        match tokio::time::timeout(timeout + margin, conn.query(&cmd)).await {
            Ok(Ok(Value::Nil)) => Ok(false),
            Ok(Ok(_)) => Ok(true),
            Ok(Err(e)) => {
                slot.take();
                Err(e)
            }
            Err(_) => {
                slot.take();
                Err(Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "BLPOP on {} did not answer within {:?}",
                        self.key,
                        timeout + margin
                    ),
                ))
            }
        }
    }
}
