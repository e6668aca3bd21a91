//! `emq`, the operator's command: arguments (clap), then one function per
//! command that calls the core's verbs and presents their answers. Nothing
//! here speaks the protocol; every read and write is a verb of `echomq`.
//!
//! [`run`] is the whole program: the `emq` binary, the Python console script
//! and the npm `bin` all call it with their argv and exit with its answer.

use std::ffi::OsString;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use echomq::WireVersion;

mod commands;
mod fail;
mod out;
mod time;

pub use fail::{Fail, EXIT_DEPLOYMENT, EXIT_INPUT, EXIT_OK};

/// The default server when neither `--url` nor `EMQ_URL` is given.
pub const DEFAULT_URL: &str = "redis://127.0.0.1:6379/";

#[derive(Debug, Parser)]
#[command(
    name = "emq",
    about = "Operate an EchoMQ deployment: queues, jobs, dead sets, pumps, health checks."
)]
pub struct Cli {
    /// Server URL (redis://, rediss://, redis+unix://).
    #[arg(long, global = true, env = "EMQ_URL", default_value = DEFAULT_URL, hide_env_values = true)]
    pub url: String,
    /// Print machine-readable JSON instead of tables (shapes in docs/CLI.md).
    #[arg(long, global = true)]
    pub json: bool,
    /// The wire version to speak: echomq:2.0.0 for a deployment still fenced
    /// at 2.0.0 (default: the newest, echomq:2.1.0).
    #[arg(long, global = true, env = "EMQ_WIRE", value_name = "VERSION", value_parser = parse_wire)]
    pub wire: Option<WireVersion>,
    #[command(subcommand)]
    pub command: Command,
}

/// One variant per command; each maps to one function in `commands/`.
/// (A command that needs another crate, like `dashboard`, is one more
/// variant and one more match arm.)
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Every queue of the deployment, with depths and the paused flag.
    Queues,
    /// Counts per state and completed/failed totals; rates with --watch.
    Stats(commands::view::StatsArgs),
    /// A live view refreshing every second; q or Ctrl-C quits.
    Watch(commands::watch::WatchArgs),
    /// List a queue's jobs in one state.
    Jobs(commands::view::JobsArgs),
    /// One job: its whole row, the set holding it, and its payload.
    Job(commands::view::JobArgs),
    /// List a queue's dead jobs (`jobs --state dead`).
    Dead(commands::view::DeadArgs),
    /// Put dead jobs back to pending.
    Requeue(commands::change::RequeueArgs),
    /// Delete jobs that are not active.
    Remove(commands::change::RemoveArgs),
    /// Delete dead jobs, oldest first.
    PurgeDead(commands::change::PurgeDeadArgs),
    /// Stop claims on a queue.
    Pause(commands::change::QueueArg),
    /// Let claims resume.
    Resume(commands::change::QueueArg),
    /// Delete waiting jobs (active jobs survive).
    Drain(commands::change::DrainArgs),
    /// Enqueue one job (for tests and manual fixes).
    Enqueue(commands::change::EnqueueArgs),
    /// Run promote and reap (and dead-set retention) until SIGTERM or Ctrl-C.
    Pump(commands::pump::PumpArgs),
    /// Check a deployment: PASS/WARN/FAIL per line; exit 0, 1 or 2.
    Doctor(commands::doctor::DoctorArgs),
    /// Serve the Prometheus text of the queues on /metrics.
    Metrics(commands::serve::MetricsArgs),
    /// Serve the web dashboard (docs/DASHBOARD.md).
    Dashboard(commands::serve::DashboardArgs),
    /// Move the deployment's {emq}:version forward (PROTOCOL.md §8).
    Upgrade(commands::upgrade::UpgradeArgs),
}

/// `echomq:2.0.0` / `2.0.0` as the core parses it (a usage error otherwise).
pub(crate) fn parse_wire(text: &str) -> Result<WireVersion, String> {
    WireVersion::parse(text).map_err(|e| e.message().to_string())
}

/// The text of `emq --version`: the package and the wire version.
pub fn version_text() -> String {
    format!(
        "{} (wire {})",
        env!("CARGO_PKG_VERSION"),
        echomq::PROTOCOL_VERSION
    )
}

/// Run `emq` with these arguments (the first is the program name) and answer
/// the process exit code. Errors are printed as one line on stderr.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let matches = Cli::command()
        .version(version_text())
        .try_get_matches_from(args);
    let cli = match matches.and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(cli) => cli,
        Err(e) => return fail::usage(e),
    };
    let url = cli.url.clone();
    let speaks = cli.wire.unwrap_or(WireVersion::NEWEST);
    match echomq::runtime::runtime().block_on(commands::dispatch(cli)) {
        Ok(code) => code,
        Err(fail) => fail.report(&url, speaks),
    }
}
