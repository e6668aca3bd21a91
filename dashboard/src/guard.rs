//! Everything between a request and a handler that is about safety: the
//! token (a bearer header, or the session cookie the login page sets), the
//! cross-site checks on state-changing requests, read-only mode, and the
//! response headers that keep the page from running anything it did not ship.

use axum::body::Body;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::server::AppState;
use crate::throttle::retry_after_secs;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "emq_dashboard";
/// The header every state-changing request of the page carries. A cross-site
/// page cannot add it without a CORS preflight, which this server never grants.
pub const ACTION_HEADER: &str = "x-emq-dashboard";

/// The token and the one session secret a login hands out.
pub struct Auth {
    token: String,
    session: String,
}

impl Auth {
    pub fn new(token: String) -> Result<Auth, getrandom::Error> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)?;
        let session = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Auth { token, session })
    }

    pub fn token_matches(&self, given: &str) -> bool {
        given.as_bytes().ct_eq(self.token.as_bytes()).into()
    }

    fn session_matches(&self, given: &str) -> bool {
        given.as_bytes().ct_eq(self.session.as_bytes()).into()
    }

    /// The `Set-Cookie` value for a successful login. `SameSite=Strict` keeps
    /// the browser from sending it with any cross-site request.
    pub fn session_cookie(&self) -> String {
        format!(
            "{SESSION_COOKIE}={}; Path=/; HttpOnly; SameSite=Strict",
            self.session
        )
    }

    /// The session cookie is this server's (no token is checked here).
    fn session_in(&self, headers: &HeaderMap) -> bool {
        cookie(headers, SESSION_COOKIE).is_some_and(|s| self.session_matches(s))
    }

    #[cfg(test)]
    fn admits(&self, headers: &HeaderMap) -> bool {
        match bearer(headers) {
            Some(token) => self.token_matches(token),
            None => self.session_in(headers),
        }
    }
}

/// The token of an `Authorization: Bearer <token>` header. The scheme is
/// case-insensitive (RFC 9110 §11.1: `bearer`, `BEARER` are the same scheme);
/// any other scheme is no bearer token.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once([' ', '\t'])?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// Is this request from a page this server served? Browsers send `Origin`
/// on every POST and `Sec-Fetch-Site` on every request; when present they
/// must say same-origin. (Scripts using the API send neither.)
pub fn same_origin(headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        if site != "same-origin" && site != "none" {
            return false;
        }
    }
    match headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        None => true,
        Some(origin) => {
            let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
            let bare = origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://"));
            matches!((bare, host), (Some(o), Some(h)) if o == h)
        }
    }
}

/// Does the `Host` header name this machine (`localhost`, or a loopback IP)?
/// A page on another site that re-points its own name at 127.0.0.1 (DNS
/// rebinding) sends its own name here, and is refused.
fn names_loopback(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

pub fn json_error(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = serde_json::json!({ "error": { "kind": kind, "message": message } });
    (status, axum::Json(body)).into_response()
}

/// The address a request came from (`None` for a router served without
/// connect info: such requests share one throttle entry).
pub fn client_ip(request: &Request) -> std::net::IpAddr {
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(std::net::Ipv4Addr::UNSPECIFIED.into(), |c| c.0.ip())
}

/// `429 Too Many Requests` with `Retry-After`, for an address that must wait.
pub fn throttled(wait: Duration) -> Response {
    let secs = retry_after_secs(wait);
    let mut response = json_error(
        StatusCode::TOO_MANY_REQUESTS,
        "throttled",
        &format!("too many wrong tokens from this address: try again in {secs} s"),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    response
}

/// Add `Retry-After` to a refusal when the failure imposed a delay.
pub fn with_delay(mut response: Response, delay: Option<Duration>) -> Response {
    if let Some(d) = delay {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs(d)));
    }
    response
}

/// `None` when the request may pass; else the refusal. A bearer token is
/// an attempt: throttled per address, counted when wrong, resetting the
/// count when right. A session cookie is not (its secret is 256 random bits,
/// and a stale one after a restart must not lock a browser out).
fn check_credentials(
    state: &AppState,
    auth: &Auth,
    request: &Request,
    path: &str,
) -> Option<Response> {
    let ip = client_ip(request);
    let unauthorized = || {
        if path.starts_with("/api/") {
            json_error(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "a token is required: Authorization: Bearer <token>",
            )
        } else {
            crate::server::login_page(StatusCode::UNAUTHORIZED, false)
        }
    };
    match bearer(request.headers()) {
        Some(token) => {
            let now = Instant::now();
            if let Some(wait) = state.throttle.wait(ip, now) {
                return Some(throttled(wait));
            }
            if auth.token_matches(token) {
                state.throttle.succeeded(ip);
                None
            } else {
                Some(with_delay(unauthorized(), state.throttle.failed(ip, now)))
            }
        }
        None if auth.session_in(request.headers()) => None,
        None => Some(unauthorized()),
    }
}

/// The gate every route but the login page and its stylesheet passes.
pub async fn gate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    if state.loopback_only && !names_loopback(request.headers()) {
        return json_error(
            StatusCode::FORBIDDEN,
            "host",
            "this dashboard answers only to localhost or a loopback address; \
             give it a --token to serve other names",
        );
    }
    if let Some(auth) = &state.auth {
        if let Some(refused) = check_credentials(&state, auth, &request, &path) {
            return refused;
        }
    }
    if request.method() == Method::POST {
        if state.read_only {
            return json_error(
                StatusCode::FORBIDDEN,
                "read_only",
                "this dashboard is read-only",
            );
        }
        let headers = request.headers();
        if !same_origin(headers) || !headers.contains_key(ACTION_HEADER) {
            return json_error(
                StatusCode::FORBIDDEN,
                "cross_site",
                "state-changing requests need the X-EMQ-Dashboard header and a same-origin page",
            );
        }
    }
    next.run(request).await
}

/// Headers on every answer: the page runs only its own script and style,
/// cannot be framed, and no answer is content-sniffed or cached. (The
/// referrer policy is `same-origin`, not `no-referrer`: the latter makes
/// browsers send `Origin: null` on form posts, which the login check refuses.)
pub async fn harden(request: Request<Body>, next: Next) -> Response {
    let mut response = next.run(request).await;
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
             connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn bearer_or_session_admits_nothing_else_does() {
        let auth = Auth::new("s3cret".into()).unwrap();
        assert!(auth.admits(&headers(&[("authorization", "Bearer s3cret")])));
        assert!(!auth.admits(&headers(&[("authorization", "Bearer nope")])));
        for scheme in ["bearer", "BEARER", "bEaReR"] {
            let value = HeaderValue::from_str(&format!("{scheme}  s3cret")).unwrap();
            let mut h = HeaderMap::new();
            h.insert("authorization", value);
            assert!(auth.admits(&h), "{scheme}");
        }
        assert!(!auth.admits(&headers(&[("authorization", "Basic s3cret")])));
        assert!(!auth.admits(&headers(&[("authorization", "Bearers3cret")])));
        assert!(!auth.admits(&headers(&[("cookie", "emq_dashboard=s3cret")])));
        let cookie = format!("a=b; {SESSION_COOKIE}={}", auth.session);
        let mut h = HeaderMap::new();
        h.insert("cookie", HeaderValue::from_str(&cookie).unwrap());
        assert!(auth.admits(&h));
        assert!(!auth.admits(&HeaderMap::new()));
    }

    #[test]
    fn loopback_hosts_only() {
        for ok in [
            "127.0.0.1:9470",
            "localhost:1",
            "LOCALHOST",
            "[::1]:9470",
            "127.1.2.3",
        ] {
            let mut h = HeaderMap::new();
            h.insert("host", HeaderValue::from_static(ok));
            assert!(names_loopback(&h), "{ok}");
        }
        for bad in [
            "evil.example:9470",
            "10.0.0.1:9470",
            "localhost.evil.example",
        ] {
            let mut h = HeaderMap::new();
            h.insert("host", HeaderValue::from_static(bad));
            assert!(!names_loopback(&h), "{bad}");
        }
        assert!(!names_loopback(&HeaderMap::new()));
    }

    #[test]
    fn cross_site_requests_are_told_apart() {
        assert!(same_origin(&headers(&[])));
        assert!(same_origin(&headers(&[
            ("host", "127.0.0.1:9470"),
            ("origin", "http://127.0.0.1:9470"),
            ("sec-fetch-site", "same-origin"),
        ])));
        assert!(!same_origin(&headers(&[
            ("host", "127.0.0.1:9470"),
            ("origin", "http://evil.example"),
        ])));
        assert!(!same_origin(&headers(&[("sec-fetch-site", "cross-site")])));
    }
}
