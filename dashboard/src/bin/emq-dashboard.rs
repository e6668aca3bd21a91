//! `emq-dashboard`: the dashboard as its own program, with the flags that
//! `emq dashboard` takes. Prints the URL it serves on its first line.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use echomq::redact::redact_url;
use echomq_dashboard::{bind, shutdown_signal, DashboardOptions};

/// Serve EchoMQ's web dashboard.
#[derive(Debug, Parser)]
#[command(name = "emq-dashboard", version)]
struct Args {
    /// The Redis/Valkey deployment.
    #[arg(long, env = "EMQ_URL", default_value = "redis://127.0.0.1:6379/")]
    url: String,
    /// Address to listen on (port 0 picks a free one). Anything but loopback
    /// needs --token or --read-only.
    #[arg(long, default_value = echomq_dashboard::options::DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// Show no actions and refuse every change.
    #[arg(long)]
    read_only: bool,
    /// Require this token (Authorization: Bearer, or the login page).
    #[arg(long, env = "EMQ_DASHBOARD_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Sampling period of the live view, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    refresh_ms: u64,
    /// The queues to show.
    #[arg(required = true)]
    queues: Vec<String>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let mut options = DashboardOptions::new(args.queues);
    options.listen = args.listen;
    options.read_only = args.read_only;
    options.token = args.token;
    options.refresh = Duration::from_millis(args.refresh_ms);
    options.server_label = redact_url(&args.url);
    if let Err(e) = options.check() {
        eprintln!("emq-dashboard: {e}");
        return ExitCode::from(2);
    }
    let client = match echomq::Client::connect(&args.url, Default::default()).await {
        Ok(c) => c,
        Err(e) => {
            eprintln!(
                "emq-dashboard: cannot connect to {}: {e}",
                redact_url(&args.url)
            );
            return ExitCode::from(1);
        }
    };
    let bound = match bind(client, options).await {
        Ok(b) => b,
        Err(e) => {
            eprintln!("emq-dashboard: {e}");
            return ExitCode::from(1);
        }
    };
    match bound.local_addr() {
        Ok(addr) => println!("EchoMQ dashboard on http://{addr}/"),
        Err(e) => eprintln!("emq-dashboard: {e}"),
    }
    match bound.run_until(shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("emq-dashboard: {e}");
            ExitCode::from(1)
        }
    }
}
