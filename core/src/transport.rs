//! The one seam between the client and the server connection.
//!
//! It owns a multiplexed connection (concurrent callers pipeline on it),
//! reconnects lazily after a loss and fences every new connection before it
//! carries anything else. A request in flight when the connection drops fails
//! with a connection error and is never replayed. A Redis Cluster transport
//! would implement the same three calls (`query`, `pipeline`, `script`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::fence::{self, BundleMismatch};
use crate::options::ConnectOptions;
use crate::scripts::Script;

#[derive(Clone)]
struct Live {
    conn: MultiplexedConnection,
    generation: u64,
    /// Set by the connection's driver when the socket ends, so the next call
    /// reconnects instead of failing on a connection already known dead.
    dead: Arc<AtomicBool>,
    /// The process that opened the socket. A forked child must not write to
    /// its parent's socket; it leaks the handle and reconnects.
    pid: u32,
}

pub(crate) struct Transport {
    client: redis::Client,
    options: ConnectOptions,
    live: RwLock<Option<Live>>,
    reconnect: tokio::sync::Mutex<()>,
    generation: AtomicU64,
    closed: AtomicBool,
    mismatches: Mutex<Vec<BundleMismatch>>,
}

impl Transport {
    /// Open, fence and record the bundle; fail on the first error.
    pub async fn connect(url: &str, options: ConnectOptions) -> Result<Arc<Self>> {
        let info = redis::IntoConnectionInfo::into_connection_info(url).map_err(|e| {
            let shown = crate::redact::redact_url(url);
            let why = crate::redact::scrub(&e.to_string(), url);
            Error::invalid_argument(format!("invalid server url {shown:?}: {why}"))
        })?;
        // RESP3, so the driver can tell us the moment the socket ends.
        let settings = info
            .redis_settings()
            .clone()
            .set_protocol(redis::ProtocolVersion::RESP3);
        let info = info.set_redis_settings(settings);
        let client = redis::Client::open(info).map_err(Error::from)?;
        let transport = Arc::new(Transport {
            client,
            options,
            live: RwLock::new(None),
            reconnect: tokio::sync::Mutex::new(()),
            generation: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            mismatches: Mutex::new(Vec::new()),
        });
        transport.current().await?;
        Ok(transport)
    }

    pub fn options(&self) -> &ConnectOptions {
        &self.options
    }

    /// The server's address and credentials, for connections of another
    /// kind (the event subscriber's).
    pub fn redis_client(&self) -> redis::Client {
        self.client.clone()
    }

    pub fn bundle_mismatches(&self) -> Vec<BundleMismatch> {
        self.mismatches.lock().expect("mismatch lock").clone()
    }

    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.live.write().expect("live lock").take();
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// The live connection, opening (and fencing) a new one when there is none.
    async fn current(&self) -> Result<Live> {
        if self.is_closed() {
            return Err(Error::new(ErrorKind::Closed, "client is closed"));
        }
        let pid = std::process::id();
        if let Some(live) = self.live.read().expect("live lock").as_ref() {
            if live.pid == pid && !live.dead.load(Ordering::Acquire) {
                return Ok(live.clone());
            }
        }
        let _one_at_a_time = self.reconnect.lock().await;
        {
            let mut slot = self.live.write().expect("live lock");
            match slot.take() {
                Some(live) if live.pid == pid && !live.dead.load(Ordering::Acquire) => {
                    *slot = Some(live.clone());
                    return Ok(live);
                }
                // Inherited across fork(): its driver task and socket belong to
                // the parent. Leak it rather than close or write to it.
                Some(live) if live.pid != pid => std::mem::forget(live),
                _ => {}
            }
        }
        let dead = Arc::new(AtomicBool::new(false));
        let conn = tokio::time::timeout(self.options.connect_timeout, self.open(dead.clone()))
            .await
            .map_err(|_| {
                Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "connect did not finish within {:?}",
                        self.options.connect_timeout
                    ),
                )
            })??;
        let live = Live {
            conn,
            generation: self.generation.fetch_add(1, Ordering::SeqCst) + 1,
            dead,
            pid,
        };
        if self.is_closed() {
            return Err(Error::new(ErrorKind::Closed, "client is closed"));
        }
        *self.live.write().expect("live lock") = Some(live.clone());
        Ok(live)
    }

    async fn open(&self, dead: Arc<AtomicBool>) -> Result<MultiplexedConnection> {
        let on_push = move |info: redis::PushInfo| -> std::result::Result<(), ()> {
            if info.kind == redis::PushKind::Disconnection {
                dead.store(true, Ordering::Release);
            }
            Ok(())
        };
        let config = AsyncConnectionConfig::new()
            .set_push_sender(on_push)
            .set_connection_timeout(Some(self.options.connect_timeout))
            .set_response_timeout(None);
        let mut conn = self
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| {
                // A connect attempt that ran out of time is a timeout, not a refusal.
                let kind = if e.is_timeout() {
                    ErrorKind::Timeout
                } else {
                    ErrorKind::Connection
                };
                Error::new(kind, format!("cannot connect: {e}"))
            })?;
        if let Some(name) = &self.options.client_name {
            let _: () = redis::cmd("CLIENT")
                .arg("SETNAME")
                .arg(name)
                .query_async(&mut conn)
                .await?;
        }
        let speaks = self.options.wire_version;
        // Part of the handshake: lets `CLIENT LIST` tell which wire version
        // each connection speaks (the upgrade verb lists the older ones).
        // Servers before Redis 7.2 do not know SETINFO; that is not an error.
        let _: redis::RedisResult<()> = redis::cmd("CLIENT")
            .arg("SETINFO")
            .arg("LIB-NAME")
            .arg(crate::upgrade::LIB_NAME)
            .query_async(&mut conn)
            .await;
        let _: redis::RedisResult<()> = redis::cmd("CLIENT")
            .arg("SETINFO")
            .arg("LIB-VER")
            .arg(speaks.as_str())
            .query_async(&mut conn)
            .await;
        fence::fence(&mut conn, speaks).await?;
        let mismatches = fence::record_bundle(&mut conn, speaks).await?;
        if !mismatches.is_empty() {
            let text = mismatches
                .iter()
                .map(|m| format!("{}: ours {} theirs {}", m.field, m.ours, m.theirs))
                .collect::<Vec<_>>()
                .join("; ");
            if self.options.strict_bundle {
                return Err(Error::new(
                    ErrorKind::BundleMismatch,
                    format!("script bundle mismatch: {text}"),
                ));
            }
            // Logged after the lock is released: a logger may wait for another
            // thread (Python's GIL) that waits for this lock.
            let first = {
                let mut seen = self.mismatches.lock().expect("mismatch lock");
                let first = seen.is_empty();
                *seen = mismatches;
                first
            };
            if first {
                log::warn!("echomq: script bundle mismatch in {{emq}}:bundle: {text}");
            }
        }
        Ok(conn)
    }

    /// Forget a connection that failed, unless a newer one already replaced it.
    fn invalidate(&self, generation: u64) {
        let mut slot = self.live.write().expect("live lock");
        if slot.as_ref().is_some_and(|l| l.generation == generation) {
            slot.take();
        }
    }

    /// Apply the response timeout. The outer error is the timeout; the inner
    /// result is the server's (kept raw so NOSCRIPT can be recognised).
    async fn timed<T>(
        &self,
        fut: impl std::future::Future<Output = redis::RedisResult<T>>,
    ) -> Result<redis::RedisResult<T>> {
        match self.options.response_timeout {
            Some(limit) => tokio::time::timeout(limit, fut)
                .await
                .map_err(|_| Error::new(ErrorKind::Timeout, format!("no answer within {limit:?}"))),
            None => Ok(fut.await),
        }
    }

    fn settle<T>(&self, live: &Live, answer: Result<redis::RedisResult<T>>) -> Result<T> {
        let answer = answer.and_then(|a| a.map_err(Error::from));
        if let Err(e) = &answer {
            if e.kind() == ErrorKind::Connection {
                self.invalidate(live.generation);
            }
        }
        answer
    }

    /// Run one command.
    pub async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T> {
        let live = self.current().await?;
        let mut conn = live.conn.clone();
        let answer = self.timed(cmd.query_async::<T>(&mut conn)).await;
        self.settle(&live, answer)
    }

    /// Run a pipeline; with `per_item`, server errors come back per command.
    pub async fn pipeline(&self, pipe: &redis::Pipeline) -> Result<Vec<Value>> {
        let live = self.current().await?;
        let mut conn = live.conn.clone();
        let answer = self.timed(pipe.query_async::<Vec<Value>>(&mut conn)).await;
        self.settle(&live, answer)
    }

    /// EVALSHA, healing NOSCRIPT by loading the source and retrying once.
    pub async fn script(&self, script: &Script, keys: &[&str], args: &[&[u8]]) -> Result<Value> {
        let cmd = evalsha(script, keys, args);
        let live = self.current().await?;
        let mut conn = live.conn.clone();
        let answer = self.timed(cmd.query_async::<Value>(&mut conn)).await;
        match answer {
            Ok(Err(e)) if is_noscript(&e) => {
                self.load(script).await?;
                let answer = self.timed(cmd.query_async::<Value>(&mut conn)).await;
                self.settle(&live, answer)
            }
            other => self.settle(&live, other),
        }
    }

    /// Run many invocations of one script in one round trip, with a verdict per
    /// item. Items refused with NOSCRIPT did not run; they are re-sent once
    /// after loading the script.
    pub async fn script_many(
        &self,
        script: &Script,
        calls: &[(Vec<String>, Vec<Vec<u8>>)],
    ) -> Result<Vec<Result<Value>>> {
        if calls.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        for (keys, args) in calls {
            pipe.add_command(evalsha_owned(script, keys, args));
        }
        let answers = self.pipeline_results(&pipe).await?;
        let mut out: Vec<Result<Value>> = Vec::with_capacity(answers.len());
        let mut missing = Vec::new();
        for (i, a) in answers.into_iter().enumerate() {
            if matches!(&a, Err(e) if is_noscript(e)) {
                missing.push(i);
            }
            out.push(a.map_err(Error::from));
        }
        if !missing.is_empty() {
            self.load(script).await?;
            let mut pipe = redis::pipe();
            pipe.ignore_errors();
            for &i in &missing {
                let (keys, args) = &calls[i];
                pipe.add_command(evalsha_owned(script, keys, args));
            }
            let again = self.pipeline_results(&pipe).await?;
            for (i, a) in missing.into_iter().zip(again) {
                out[i] = a.map_err(Error::from);
            }
        }
        Ok(out)
    }

    async fn pipeline_results(
        &self,
        pipe: &redis::Pipeline,
    ) -> Result<Vec<redis::RedisResult<Value>>> {
        let live = self.current().await?;
        let mut conn = live.conn.clone();
        let answer = self
            .timed(pipe.query_async::<Vec<redis::RedisResult<Value>>>(&mut conn))
            .await;
        self.settle(&live, answer)
    }

    async fn load(&self, script: &Script) -> Result<()> {
        let sha: String = self
            .query(redis::cmd("SCRIPT").arg("LOAD").arg(script.source))
            .await?;
        script.check_loaded(&sha)?;
        Ok(())
    }
}

fn is_noscript(e: &redis::RedisError) -> bool {
    e.code() == Some("NOSCRIPT")
}

fn evalsha(script: &Script, keys: &[&str], args: &[&[u8]]) -> redis::Cmd {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(script.sha1()).arg(keys.len());
    for k in keys {
        cmd.arg(*k);
    }
    for a in args {
        cmd.arg(*a);
    }
    cmd
}

fn evalsha_owned(script: &Script, keys: &[String], args: &[Vec<u8>]) -> redis::Cmd {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(script.sha1()).arg(keys.len()).arg(keys).arg(args);
    cmd
}
