//! EchoMQ's web dashboard: an overview of queues, paged job lists, a job
//! page, and operator actions, served by one process over the core's verbs
//! (no second implementation of the protocol). The page's HTML, CSS and
//! JavaScript are compiled into the binary; its JSON endpoints are
//! documented in `docs/DASHBOARD.md` and are an API for scripts too.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = echomq::Client::connect("redis://127.0.0.1/", Default::default()).await?;
//! let options = echomq_dashboard::DashboardOptions::new(vec!["orders".into()]);
//! echomq_dashboard::serve(client, options).await?;
//! # Ok(()) }
//! ```
//!
//! Modules: [`options`] (what it is told, the safety rules), `guard` (token,
//! cross-site checks, read-only, headers), `api` (the JSON endpoints),
//! `live` (sampling and queue events for the live view and the chart),
//! `health` (the overview's health panel, from the doctor's checks),
//! `payload` (how a payload is shown), `server` (router, embedded page,
//! listener), `throttle` (wrong tokens per client address).

mod api;
mod guard;
mod health;
mod live;
pub mod options;
mod payload;
mod server;
mod throttle;

pub use options::DashboardOptions;
pub use server::{bind, Bound};

/// Why the dashboard could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    /// The options break a rule (e.g. a public address without a token).
    #[error("{0}")]
    Options(String),
    /// Binding or serving failed.
    #[error("dashboard listener: {0}")]
    Io(#[from] std::io::Error),
}

/// Serve until Ctrl-C or SIGTERM, then finish open requests.
pub async fn serve(
    client: echomq::Client,
    options: DashboardOptions,
) -> Result<(), DashboardError> {
    bind(client, options)
        .await?
        .run_until(shutdown_signal())
        .await
}

/// Resolves on Ctrl-C, or SIGTERM on Unix.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
