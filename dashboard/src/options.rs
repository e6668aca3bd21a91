//! What the dashboard is told at start, and the safety rules checked before
//! it binds: loopback unless a token guards it (or it is read-only), no empty
//! token, only valid queue names.

use std::net::SocketAddr;
use std::time::Duration;

use crate::DashboardError;

/// The default listen address: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9470";
/// How often counts are sampled for the live view and the throughput chart.
pub const DEFAULT_REFRESH: Duration = Duration::from_secs(1);
/// The first delay a wrong token imposes past the free failures.
pub const DEFAULT_LOGIN_BACKOFF: Duration = Duration::from_secs(1);

/// How to run the dashboard. Build it with [`DashboardOptions::new`] and
/// adjust the fields; [`crate::bind`] checks them.
#[derive(Clone)]
pub struct DashboardOptions {
    /// Where to listen. Default `127.0.0.1:9470`; port 0 picks a free port.
    pub listen: SocketAddr,
    /// Show no actions and refuse every state-changing request.
    pub read_only: bool,
    /// When set, every page and endpoint needs `Authorization: Bearer <token>`
    /// or a session from the login page.
    pub token: Option<String>,
    /// The queues to show. Until the core can list queues, this list is the
    /// dashboard's whole view; it must name at least one.
    pub queues: Vec<String>,
    /// The server as shown on the page: pass `echomq::redact::redact_url`
    /// of the Redis URL, never the URL itself.
    pub server_label: String,
    /// Sampling period of the live view.
    pub refresh: Duration,
    /// Wrong tokens (login form or bearer header) are throttled per client
    /// address: after 3 free failures each one makes the address wait this
    /// long, doubling with every further failure, up to 5 minutes; a right
    /// token resets the count. Default 1 s; zero is refused.
    pub login_backoff: Duration,
}

impl std::fmt::Debug for DashboardOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DashboardOptions")
            .field("listen", &self.listen)
            .field("read_only", &self.read_only)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("queues", &self.queues)
            .field("server_label", &self.server_label)
            .field("refresh", &self.refresh)
            .field("login_backoff", &self.login_backoff)
            .finish()
    }
}

impl DashboardOptions {
    /// Loopback on the default port, read-write, no token, these queues.
    pub fn new(queues: Vec<String>) -> Self {
        DashboardOptions {
            listen: DEFAULT_LISTEN.parse().expect("a valid default address"),
            read_only: false,
            token: None,
            queues,
            server_label: String::new(),
            refresh: DEFAULT_REFRESH,
            login_backoff: DEFAULT_LOGIN_BACKOFF,
        }
    }

    /// The rules of issue #19, checked before anything listens.
    pub fn check(&self) -> Result<(), DashboardError> {
        if let Some(token) = &self.token {
            if token.trim().is_empty() {
                return Err(DashboardError::Options(
                    "the token must not be empty".into(),
                ));
            }
        }
        if !self.listen.ip().is_loopback() && self.token.is_none() && !self.read_only {
            return Err(DashboardError::Options(format!(
                "refusing to listen on {} without a token: anyone who can reach it could \
                 change the queues; pass --token (or EMQ_DASHBOARD_TOKEN), or --read-only",
                self.listen
            )));
        }
        if self.queues.is_empty() {
            return Err(DashboardError::Options(
                "name at least one queue to show".into(),
            ));
        }
        for q in &self.queues {
            if !echomq::keys::is_valid_queue(q) {
                return Err(DashboardError::Options(format!(
                    "{q:?} is not a valid queue name ([A-Za-z0-9._-]{{1,128}}, not `emq`)"
                )));
            }
        }
        if self.refresh.is_zero() {
            return Err(DashboardError::Options("refresh must be above zero".into()));
        }
        if self.login_backoff.is_zero() {
            return Err(DashboardError::Options(
                "login_backoff must be above zero".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_address_needs_a_token_unless_read_only() {
        let mut o = DashboardOptions::new(vec!["q".into()]);
        o.listen = "0.0.0.0:9470".parse().unwrap();
        assert!(o.check().is_err());
        o.read_only = true;
        assert!(o.check().is_ok());
        o.read_only = false;
        o.token = Some("s3cret".into());
        assert!(o.check().is_ok());
        o.token = Some("  ".into());
        assert!(o.check().is_err());
    }

    #[test]
    fn queues_are_checked() {
        assert!(DashboardOptions::new(vec![]).check().is_err());
        assert!(DashboardOptions::new(vec!["bad name".into()])
            .check()
            .is_err());
        assert!(DashboardOptions::new(vec!["orders".into()]).check().is_ok());
    }
}
