//! The router, the embedded page, the login form, and the listener.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use futures_util::Stream;
use serde::Deserialize;
use tokio::sync::watch;

use crate::guard::{self, Auth};
use crate::live::{Sampler, Snapshot, BUCKET};
use crate::throttle::{retry_after_secs, LoginThrottle};
use crate::{api, health, DashboardError, DashboardOptions};

const INDEX_HTML: &str = include_str!("../assets/index.html");
const LOGIN_HTML: &str = include_str!("../assets/login.html");
const APP_JS: &str = include_str!("../assets/app.js");
const APP_CSS: &str = include_str!("../assets/app.css");

#[derive(Clone)]
pub struct AppState {
    pub client: echomq::Client,
    pub queues: Arc<Vec<String>>,
    pub read_only: bool,
    pub auth: Option<Arc<Auth>>,
    /// Loopback without a token: only requests naming a loopback host are
    /// served (a DNS-rebound hostname could otherwise read the page).
    pub loopback_only: bool,
    pub sampler: Arc<Sampler>,
    /// Wrong tokens per client address (login form and bearer header).
    pub throttle: Arc<LoginThrottle>,
    /// Turns true when shutdown begins, so open event streams end and the
    /// graceful shutdown does not wait on them forever.
    pub stopping: watch::Receiver<bool>,
}

/// A dashboard bound to its address, not yet serving.
pub struct Bound {
    listener: tokio::net::TcpListener,
    router: Router,
    sampler: Arc<Sampler>,
    /// The shown queues' events, subscribed before serving (`None` when that
    /// failed: the sampler keeps trying, and the refresh carries the page).
    events: Option<echomq::Subscription>,
    refresh: Duration,
    stop: watch::Sender<bool>,
}

impl Bound {
    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serve until `shutdown` completes, then finish open requests.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), DashboardError> {
        let tasks = [
            tokio::spawn(self.sampler.clone().run(self.refresh)),
            tokio::spawn(self.sampler.clone().follow_events(self.events)),
            tokio::spawn(health::watch(self.sampler.clone())),
        ];
        let stop = self.stop;
        let shutdown = async move {
            shutdown.await;
            stop.send_replace(true);
        };
        // Connect info: the client address the login throttle counts by.
        let app = self
            .router
            .into_make_service_with_connect_info::<SocketAddr>();
        let served = axum::serve(self.listener, app)
            .with_graceful_shutdown(shutdown)
            .await;
        for task in tasks {
            task.abort();
        }
        served.map_err(DashboardError::Io)
    }
}

/// Check the options, then bind (nothing is served until [`Bound::run_until`]).
pub async fn bind(
    client: echomq::Client,
    options: DashboardOptions,
) -> Result<Bound, DashboardError> {
    options.check()?;
    let auth = match options.token.clone() {
        Some(t) => Some(Arc::new(Auth::new(t).map_err(|e| {
            DashboardError::Options(format!("no randomness for a session secret: {e}"))
        })?)),
        None => None,
    };
    let base = Snapshot {
        server: options.server_label.clone(),
        protocol: echomq::PROTOCOL_VERSION,
        read_only: options.read_only,
        refresh_ms: options.refresh.as_millis() as u64,
        bucket_ms: BUCKET.as_millis() as u64,
        ..Snapshot::default()
    };
    // Subscribed before the first request is served, so every event from
    // then on reaches the page (at-most-once: barring a dropped connection).
    let events = client.subscribe_many(&options.queues).await.ok();
    let sampler = Sampler::new(client.clone(), options.queues.clone(), base);
    let (stop, stopping) = watch::channel(false);
    let state = AppState {
        client,
        queues: Arc::new(options.queues.clone()),
        read_only: options.read_only,
        loopback_only: auth.is_none() && options.listen.ip().is_loopback(),
        auth,
        sampler: sampler.clone(),
        throttle: Arc::new(LoginThrottle::new(options.login_backoff)),
        stopping,
    };
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(DashboardError::Io)?;
    Ok(Bound {
        listener,
        router: router(state),
        sampler,
        events,
        refresh: options.refresh,
        stop,
    })
}

fn router(state: AppState) -> Router {
    let gated = Router::new()
        .route("/", get(|| async { Html(INDEX_HTML) }))
        .route(
            "/app.js",
            get(|| asset("text/javascript; charset=utf-8", APP_JS)),
        )
        .route("/api/overview", get(api::overview))
        .route("/api/events", get(events))
        .route("/api/queues/{queue}/jobs", get(api::list_jobs))
        .route("/api/queues/{queue}/jobs/{id}", get(api::job))
        .route(
            "/api/queues/{queue}/jobs/{id}/payload",
            get(api::raw_payload),
        )
        .route("/api/queues/{queue}/pause", post(api::pause))
        .route("/api/queues/{queue}/resume", post(api::resume))
        .route(
            "/api/queues/{queue}/dead/requeue",
            post(api::requeue_all_dead),
        )
        .route("/api/queues/{queue}/dead/purge", post(api::purge_dead))
        .route("/api/queues/{queue}/drain", post(api::drain))
        .route("/api/queues/{queue}/jobs/{id}/requeue", post(api::requeue))
        .route("/api/queues/{queue}/jobs/{id}/remove", post(api::remove))
        .route("/logout", post(logout))
        .fallback(|| async {
            guard::json_error(StatusCode::NOT_FOUND, "not_found", "no such page")
        })
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::gate,
        ));
    Router::new()
        .route(
            "/login",
            get(|| async { login_page(StatusCode::OK, false) }).post(login),
        )
        .route(
            "/app.css",
            get(|| asset("text/css; charset=utf-8", APP_CSS)),
        )
        .merge(gated)
        .layer(axum::middleware::from_fn(guard::harden))
        .with_state(state)
}

async fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

/// The login form; `failed` adds the "wrong token" line.
pub fn login_page(status: StatusCode, failed: bool) -> Response {
    let note = if failed {
        r#"<p class="login-error" role="alert">That token is not right.</p>"#
    } else {
        ""
    };
    login_page_noting(status, note)
}

fn login_page_noting(status: StatusCode, note: &str) -> Response {
    (status, Html(LOGIN_HTML.replace("<!--NOTE-->", note))).into_response()
}

/// The login form of an address that must wait: 429 and `Retry-After`.
fn throttled_login(wait: Duration) -> Response {
    let secs = retry_after_secs(wait);
    let note = format!(
        r#"<p class="login-error" role="alert">Too many wrong tokens: try again in {secs} s.</p>"#
    );
    let mut response = login_page_noting(StatusCode::TOO_MANY_REQUESTS, &note);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, secs.into());
    response
}

#[derive(Deserialize)]
struct LoginForm {
    token: String,
}

async fn login(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    let Some(auth) = &state.auth else {
        return Redirect::to("/").into_response();
    };
    if !guard::same_origin(&headers) {
        return guard::json_error(
            StatusCode::FORBIDDEN,
            "cross_site",
            "login from another site",
        );
    }
    let now = Instant::now();
    if let Some(wait) = state.throttle.wait(peer.ip(), now) {
        return throttled_login(wait);
    }
    if !auth.token_matches(form.token.trim()) {
        let delay = state.throttle.failed(peer.ip(), now);
        return guard::with_delay(login_page(StatusCode::UNAUTHORIZED, true), delay);
    }
    state.throttle.succeeded(peer.ip());
    (
        [(header::SET_COOKIE, auth.session_cookie())],
        Redirect::to("/"),
    )
        .into_response()
}

async fn logout() -> Response {
    let expired = format!(
        "{}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict",
        guard::SESSION_COOKIE
    );
    (
        [(header::SET_COOKIE, expired)],
        axum::Json(serde_json::json!({"logged_out": true})),
    )
        .into_response()
}

/// Server-sent events: the overview snapshot, pushed each time it changes.
async fn events(
    State(state): State<AppState>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = state.sampler.subscribe();
    let stopping = state.stopping.clone();
    let stream = futures_util::stream::unfold(
        (rx, stopping, true),
        |(mut rx, mut stopping, first)| async move {
            if !first {
                tokio::select! {
                    changed = rx.changed() => changed.ok()?,
                    _ = stopping.wait_for(|s| *s) => return None,
                }
            }
            let snapshot = rx.borrow_and_update().clone();
            let event = Event::default()
                .event("overview")
                .json_data(&*snapshot)
                .unwrap_or_else(|_| Event::default().comment("unserialisable snapshot"));
            Some((Ok(event), (rx, stopping, false)))
        },
    );
    Sse::new(stream).keep_alive(KeepAlive::default())
}
