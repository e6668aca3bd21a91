//! The two commands that serve HTTP: `emq metrics` (Prometheus text on
//! `/metrics`, rendered by the core's `metrics_text`) and `emq dashboard`
//! (the web UI of the `echomq-dashboard` crate). Both run until SIGTERM or
//! Ctrl-C and finish open requests before exiting.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use clap::Args;
use echomq::Client;
use echomq_dashboard::{bind, shutdown_signal, DashboardError, DashboardOptions};

use super::{check_queues, Ctx};
use crate::fail::{Fail, EXIT_OK};
use crate::out;
use serde_json::json;

/// The content type of Prometheus text exposition 0.0.4.
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// Address to serve `/metrics` on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:9464")]
    pub listen: SocketAddr,
    /// The queues to export; every queue of the deployment when none is
    /// named (listed again on each scrape, so new queues appear).
    pub queues: Vec<String>,
}

struct Exporter {
    client: Client,
    named: Vec<String>,
}

pub async fn metrics(ctx: &Ctx, args: MetricsArgs) -> Result<i32, Fail> {
    check_queues(&args.queues)?;
    let client = ctx.connect().await?;
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    announce(
        ctx,
        "emq metrics: serving",
        &format!("http://{}/metrics", listener.local_addr()?),
    );
    let exporter = Arc::new(Exporter {
        client,
        named: args.queues,
    });
    let app = Router::new()
        .route("/metrics", get(scrape))
        .with_state(exporter);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    Ok(EXIT_OK)
}

/// The one line a serving command prints, once it listens: `what URL`, or
/// with `--json` `{"url": URL}` (the port chosen for `--listen …:0`, for a
/// script to read). What is served does not change with `--json`: `/metrics`
/// stays Prometheus text, and the dashboard's API is JSON anyway.
fn announce(ctx: &Ctx, what: &str, url: &str) {
    if ctx.json {
        out::json_line(&json!({ "url": url }));
    } else {
        println!("{what} {url}");
        let _ = std::io::Write::flush(&mut std::io::stdout());
    }
}

/// One scrape: a failed read answers 503 with the reason, so Prometheus
/// marks the target down instead of recording zeros.
async fn scrape(State(exporter): State<Arc<Exporter>>) -> Response {
    let queues = if exporter.named.is_empty() {
        match exporter.client.queues().await {
            Ok(all) => all,
            Err(e) => return unavailable(e),
        }
    } else {
        exporter.named.clone()
    };
    let names: Vec<&str> = queues.iter().map(String::as_str).collect();
    match exporter.client.metrics_text(&names).await {
        Ok(text) => ([(header::CONTENT_TYPE, PROMETHEUS_TEXT)], text).into_response(),
        Err(e) => unavailable(e),
    }
}

fn unavailable(e: echomq::Error) -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        format!("emq metrics: {e}\n"),
    )
        .into_response()
}

#[derive(Debug, Args)]
pub struct DashboardArgs {
    /// Address to listen on (port 0 picks a free one). Anything but loopback
    /// needs --token or --read-only.
    #[arg(long, default_value = echomq_dashboard::options::DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// Show no actions and refuse every change.
    #[arg(long)]
    pub read_only: bool,
    /// Require this token (Authorization: Bearer, or the login page).
    #[arg(long, env = "EMQ_DASHBOARD_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Sampling period of the live view, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    pub refresh_ms: u64,
    /// The queues to show; every queue of the deployment when none is named.
    pub queues: Vec<String>,
}

pub async fn dashboard(ctx: &Ctx, args: DashboardArgs) -> Result<i32, Fail> {
    check_queues(&args.queues)?;
    let client = ctx.connect().await?;
    let queues = ctx.queues_or_all(&client, &args.queues).await?;
    if queues.is_empty() {
        return Err(Fail::input(
            "the deployment has no queues yet: name the queues to show",
        ));
    }
    let mut options = DashboardOptions::new(queues);
    options.listen = args.listen;
    options.read_only = args.read_only;
    options.token = args.token;
    options.refresh = Duration::from_millis(args.refresh_ms);
    options.server_label = echomq::redact::redact_url(&ctx.url);
    options.check().map_err(dashboard_fail)?;
    let bound = bind(client, options).await.map_err(dashboard_fail)?;
    announce(
        ctx,
        "EchoMQ dashboard on",
        &format!("http://{}/", bound.local_addr()?),
    );
    bound
        .run_until(shutdown_signal())
        .await
        .map_err(dashboard_fail)?;
    Ok(EXIT_OK)
}

fn dashboard_fail(e: DashboardError) -> Fail {
    Fail::input(e.to_string())
}
