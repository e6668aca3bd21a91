//! The idle worker's wake listener (echomq:2.1.0, docs/PROTOCOL-DECISIONS.md 16.x).
//!
//! An idle worker parks in `BLPOP emq:{q}:wake <fallback>` on a connection of
//! its own (a blocked connection carries nothing else, so it cannot share the
//! client's multiplexed one). Our producers push a token after every write that
//! makes a job claimable, and the claim script keeps the list honest (emptied
//! when pending is, one token while a backlog remains), so a token means "claim
//! now". Producers that send none are picked up when the BLPOP times out.
//!
//! The claim goes out with the `BLPOP`, queued behind it on the same
//! connection (16.9): the server runs it the moment the `BLPOP` answers, woken
//! or timed out, so a pickup costs no round trip between the two. Stopping
//! ends the `BLPOP` early with `CLIENT UNBLOCK` ([`Wake::unblock`]); the claim
//! then runs and answers, and the worker hands its jobs back.

use std::sync::{Arc, Mutex as SyncMutex};
use std::time::Duration;

use redis::Value;
use tokio::sync::Mutex;

use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::transport::BlockingConn;

/// Where the open wake connection sits on the server: its `CLIENT ID`, and
/// on a cluster the master it is connected to.
type BlockedOn = Option<(u64, Option<(String, u16)>)>;

/// One worker run's wake listener; cheap to clone (the tasks share it).
#[derive(Clone)]
pub(crate) struct Wake {
    client: Client,
    key: String,
    conn: Arc<Mutex<Option<BlockingConn>>>,
    /// The open connection's `CLIENT ID` and (cluster) node, readable while
    /// `conn` is locked by a park.
    blocked_on: Arc<SyncMutex<BlockedOn>>,
}

/// How a park ended: `woken` by a token (false: timed out or unblocked),
/// and the answer of the command queued behind the `BLPOP`, if one was.
pub(crate) struct Woke {
    pub(crate) woken: bool,
    pub(crate) then: Option<redis::RedisResult<Value>>,
    /// The `BLPOP` itself was refused (a wrong-typed wake key, say; the
    /// connection is dropped). What was queued behind it still ran, so its
    /// answer is in `then` all the same.
    pub(crate) failed: Option<Error>,
}

impl Wake {
    pub(crate) fn new(client: Client, key: String) -> Wake {
        Wake {
            client,
            key,
            conn: Arc::default(),
            blocked_on: Arc::default(),
        }
    }

    /// Wait up to `timeout` for a token, then run `then` (the claim) on the
    /// same connection without a round trip in between. A failed connection
    /// is dropped and reopened on the next call.
    /// Closing the client ends the wait at once with `Closed`, dropping the
    /// connection (the server then discards the queued command unless it
    /// already ran).
    pub(crate) async fn wait(&self, timeout: Duration, then: Option<redis::Cmd>) -> Result<Woke> {
        let transport = self.client.transport();
        let mut slot = self.conn.lock().await;
        if transport.is_closed() {
            slot.take();
            self.blocked_on().take();
            return Err(Error::new(ErrorKind::Closed, "client is closed"));
        }
        if slot.is_none() {
            let conn = self.client.transport().open_blocking(&self.key).await?;
            *self.blocked_on() = Some((conn.id, conn.node.clone()));
            *slot = Some(conn);
        }
        let conn = slot.as_mut().expect("opened above");
        // BLPOP takes seconds (a float since Redis 6); the socket gets a margin on top.
        let secs = format!("{:.3}", timeout.as_secs_f64().max(0.001));
        let mut blpop = redis::cmd("BLPOP");
        blpop.arg(&self.key).arg(secs);
        let cmds: Vec<redis::Cmd> = std::iter::once(blpop).chain(then).collect();
        let margin = self.client.options().connect_timeout;
        // The connection is dropped after any failure: a fresh one parks next.
        let drop_conn = |slot: &mut Option<BlockingConn>| {
            slot.take();
            self.blocked_on().take();
        };
        let failed = |slot: &mut Option<BlockingConn>, e: Error| {
            drop_conn(slot);
            Err(e)
        };
        let answered = tokio::select! {
            answered = tokio::time::timeout(timeout + margin, conn.pipeline(cmds)) => answered,
            () = transport.closed() => {
                return failed(&mut slot, Error::new(ErrorKind::Closed, "client is closed"));
            }
        };
        match answered {
            Ok(Ok(answers)) => {
                let mut answers = answers.into_iter();
                let (woken, refused) = match answers.next() {
                    Some(Ok(Value::Nil)) => (false, None),
                    Some(Ok(_)) => (true, None),
                    // MOVED after a failover, say: a fresh connection finds the owner.
                    Some(Err(e)) => {
                        drop_conn(&mut slot);
                        (false, Some(e.into()))
                    }
                    None => {
                        return failed(
                            &mut slot,
                            Error::new(ErrorKind::Protocol, "BLPOP gave no answer"),
                        )
                    }
                };
                Ok(Woke {
                    woken,
                    then: answers.next(),
                    failed: refused,
                })
            }
            Ok(Err(e)) => failed(&mut slot, e),
            Err(_) => failed(
                &mut slot,
                Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "BLPOP on {} did not answer within {:?}",
                        self.key,
                        timeout + margin
                    ),
                ),
            ),
        }
    }

    /// End a park's `BLPOP` now, as a timeout (what is queued behind it then
    /// runs and answers). False if no connection is open, or none was
    /// blocked (the park has not reached the server yet, or has answered).
    pub(crate) async fn unblock(&self) -> Result<bool> {
        let Some((id, node)) = self.blocked_on().clone() else {
            return Ok(false);
        };
        self.client.transport().unblock(id, node.as_ref()).await
    }

    fn blocked_on(&self) -> std::sync::MutexGuard<'_, BlockedOn> {
        self.blocked_on.lock().unwrap_or_else(|p| p.into_inner())
    }
}
