//! One module per group of commands; `dispatch` maps a parsed command line
//! to its function. Each function answers the exit code or a [`Fail`].

use std::sync::Mutex;
use std::time::Duration;

use echomq::{Client, ConnectOptions, WireVersion};

use crate::fail::Fail;
use crate::{Cli, Command};

pub mod change;
pub mod doctor;
pub mod pump;
pub mod serve;
pub mod upgrade;
pub mod view;
pub mod watch;

/// What every command receives: the URL, the output mode and the wire
/// version to speak.
pub struct Ctx {
    pub url: String,
    pub json: bool,
    /// `--wire` / `EMQ_WIRE`, else the newest.
    pub wire: WireVersion,
    /// Whether `--wire` / `EMQ_WIRE` was given (the doctor says when it
    /// differs from the deployment's record).
    pub wire_given: bool,
    /// Every client connected for the command, closed when it ends.
    opened: Mutex<Vec<Client>>,
}

impl Ctx {
    /// Connect (and fence) speaking `--wire`, as the client named `emq`, so
    /// `CLIENT LIST` shows which connections are operators.
    pub async fn connect(&self) -> Result<Client, Fail> {
        self.connect_speaking(self.wire).await
    }

    /// Connect (and fence) speaking `wire` (the doctor and the upgrade pick
    /// the version themselves).
    pub async fn connect_speaking(&self, wire: WireVersion) -> Result<Client, Fail> {
        let client = Client::connect(&self.url, self.options(wire)).await?;
        let mut opened = self.opened.lock().unwrap_or_else(|p| p.into_inner());
        opened.push(client.clone());
        Ok(client)
    }

    /// Close every client the command connected and wait until the queue
    /// events its changes caused (`paused`, `added`, ...) are published:
    /// the process exits right after, which would drop them.
    async fn close_all(&self) {
        let opened = std::mem::take(&mut *self.opened.lock().unwrap_or_else(|p| p.into_inner()));
        let closing: Vec<_> = opened.iter().map(Client::close_and_wait).collect();
        for closed in closing {
            closed.await;
        }
    }

    pub fn options(&self, wire: WireVersion) -> ConnectOptions {
        ConnectOptions {
            client_name: Some("emq".to_string()),
            connect_timeout: Duration::from_secs(5),
            wire_version: wire,
            ..ConnectOptions::default()
        }
    }

    /// The named queues (checked before any I/O), or every queue when none.
    pub async fn queues_or_all(
        &self,
        client: &Client,
        named: &[String],
    ) -> Result<Vec<String>, Fail> {
        if named.is_empty() {
            Ok(client.queues().await?)
        } else {
            Ok(named.to_vec())
        }
    }
}

/// Refuse a malformed queue name before connecting.
pub fn check_queues(queues: &[String]) -> Result<(), Fail> {
    for q in queues {
        echomq::keys::validate_queue(q)?;
    }
    Ok(())
}

/// Refuse a malformed id before connecting.
pub fn check_ids(ids: &[String]) -> Result<(), Fail> {
    for id in ids {
        echomq::BrandedId::parse(id)?;
    }
    Ok(())
}

pub async fn dispatch(cli: Cli) -> Result<i32, Fail> {
    let ctx = Ctx {
        url: cli.url,
        json: cli.json,
        wire: cli.wire.unwrap_or(WireVersion::NEWEST),
        wire_given: cli.wire.is_some(),
        opened: Mutex::new(Vec::new()),
    };
    let code = match cli.command {
        Command::Queues => view::queues(&ctx).await,
        Command::Stats(a) => view::stats(&ctx, a).await,
        Command::Watch(a) => watch::watch(&ctx, a).await,
        Command::Jobs(a) => view::jobs(&ctx, a).await,
        Command::Job(a) => view::job(&ctx, a).await,
        Command::Dead(a) => view::dead(&ctx, a).await,
        Command::Requeue(a) => change::requeue(&ctx, a).await,
        Command::Remove(a) => change::remove(&ctx, a).await,
        Command::PurgeDead(a) => change::purge_dead(&ctx, a).await,
        Command::Pause(a) => change::pause(&ctx, a, true).await,
        Command::Resume(a) => change::pause(&ctx, a, false).await,
        Command::Drain(a) => change::drain(&ctx, a).await,
        Command::Enqueue(a) => change::enqueue(&ctx, a).await,
        Command::Pump(a) => pump::pump(&ctx, a).await,
        Command::Doctor(a) => doctor::doctor(&ctx, a).await,
        Command::Metrics(a) => serve::metrics(&ctx, a).await,
        Command::Dashboard(a) => serve::dashboard(&ctx, a).await,
        Command::Upgrade(a) => upgrade::upgrade(&ctx, a).await,
    };
    ctx.close_all().await;
    code
}
