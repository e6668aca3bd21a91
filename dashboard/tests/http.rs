//! The dashboard over real HTTP (plain HTTP/1.0 on a TCP socket, no browser)
//! against a real redis-server: the token's scheme and the throttle of wrong
//! tokens per client address. The page itself is tested in `tests/browser`.

#[path = "../../core/tests/common/mod.rs"]
mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::Server;
use echomq_dashboard::{bind, DashboardOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpSocket;
use tokio::sync::oneshot;

const Q: &str = "orders";
const TOKEN: &str = "s3cret";

/// A dashboard serving `Q` with `TOKEN`, stopped when dropped.
struct Dashboard {
    addr: SocketAddr,
    client: echomq::Client,
    _stop: oneshot::Sender<()>,
    _server: Server,
}

async fn start(login_backoff: Option<Duration>) -> Dashboard {
    let server = Server::start();
    let client = echomq::Client::connect(&server.url(), Default::default())
        .await
        .unwrap();
    client.enqueue(Q, b"x", Default::default()).await.unwrap();
    let mut options = DashboardOptions::new(vec![Q.into()]);
    options.listen = "127.0.0.1:0".parse().unwrap();
    options.token = Some(TOKEN.into());
    if let Some(b) = login_backoff {
        options.login_backoff = b;
    }
    let bound = bind(client.clone(), options).await.unwrap();
    let addr = bound.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(bound.run_until(async {
        let _ = stopped.await;
    }));
    Dashboard {
        addr,
        client,
        _stop: stop,
        _server: server,
    }
}

/// One answer: status, headers (names lower-cased) and body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn retry_after(&self) -> Option<u64> {
        self.header("retry-after").map(|v| v.parse().unwrap())
    }
}

/// Send one HTTP/1.0 request from the local address `from` (any port).
async fn send(
    d: &Dashboard,
    from: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let mut stream = socket.connect(d.addr).await.unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.0\r\nHost: {}\r\nContent-Length: {}\r\n",
        d.addr,
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines.next().unwrap()[9..12].parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_string(),
    }
}

async fn overview(d: &Dashboard, from: &str, authorization: &str) -> Answer {
    send(
        d,
        from,
        "GET",
        "/api/overview",
        &[("Authorization", authorization)],
        "",
    )
    .await
}

async fn login(d: &Dashboard, from: &str, token: &str) -> Answer {
    send(
        d,
        from,
        "POST",
        "/login",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        &format!("token={token}"),
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_bearer_scheme_is_case_insensitive() {
    let d = start(None).await;
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let a = overview(&d, "127.0.0.1", &format!("{scheme} {TOKEN}")).await;
        assert_eq!(a.status, 200, "{scheme}: {}", a.body);
    }
    // An action under a lower-case scheme reaches the wire.
    let a = send(
        &d,
        "127.0.0.1",
        "POST",
        &format!("/api/queues/{Q}/pause"),
        &[
            ("Authorization", &format!("bearer {TOKEN}")),
            ("X-EMQ-Dashboard", "1"),
        ],
        "",
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert!(d.client.is_paused(Q).await.unwrap());
    // Other schemes and wrong tokens are still refused.
    for refused in [format!("Basic {TOKEN}"), "bearer nope".into(), TOKEN.into()] {
        let a = overview(&d, "127.0.0.1", &refused).await;
        assert_eq!(a.status, 401, "{refused}");
        assert!(a.body.contains("unauthorized"), "{}", a.body);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_tokens_are_throttled_per_address() {
    // A minute per failure: nothing below can outrun it on a loaded host.
    let d = start(Some(Duration::from_secs(60))).await;
    // Three free failures (header and form alike), then a delay.
    for _ in 0..3 {
        let a = overview(&d, "127.0.0.1", "Bearer wrong").await;
        assert_eq!((a.status, a.retry_after()), (401, None));
    }
    let a = login(&d, "127.0.0.1", "wrong").await;
    assert_eq!(a.status, 401);
    assert_eq!(a.retry_after(), Some(60));
    // While it waits, even the right token is not checked.
    let a = overview(&d, "127.0.0.1", &format!("Bearer {TOKEN}")).await;
    assert_eq!(a.status, 429, "{}", a.body);
    assert!(a.body.contains("throttled"), "{}", a.body);
    assert!((1..=60).contains(&a.retry_after().unwrap()));
    let a = login(&d, "127.0.0.1", TOKEN).await;
    assert_eq!(a.status, 429);
    assert!(a.body.contains("Too many wrong tokens"), "{}", a.body);
    assert!(a.header("set-cookie").is_none());
    // Another address is not throttled; its session works from anywhere.
    let a = login(&d, "127.0.0.2", TOKEN).await;
    assert_eq!(a.status, 303, "{}", a.body);
    let cookie = a
        .header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let a = send(
        &d,
        "127.0.0.1",
        "GET",
        "/api/overview",
        &[("Cookie", &cookie)],
        "",
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_right_token_resets_the_count() {
    let d = start(Some(Duration::from_secs(1))).await;
    for _ in 0..3 {
        assert_eq!(login(&d, "127.0.0.1", "wrong").await.retry_after(), None);
    }
    let a = login(&d, "127.0.0.1", "wrong").await;
    assert_eq!((a.status, a.retry_after()), (401, Some(1)));
    // Once the second is over (polled: a loaded host may take longer), the
    // right token is admitted…
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let a = overview(&d, "127.0.0.1", &format!("Bearer {TOKEN}")).await;
        if a.status == 200 {
            break;
        }
        assert_eq!(a.status, 429, "{}", a.body);
        assert!(Instant::now() < deadline, "still throttled after 60 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // …and the count starts again: three free failures, not a doubled delay.
    for _ in 0..3 {
        let a = overview(&d, "127.0.0.1", "Bearer wrong").await;
        assert_eq!((a.status, a.retry_after()), (401, None));
    }
    let a = overview(&d, "127.0.0.1", "Bearer wrong").await;
    assert_eq!((a.status, a.retry_after()), (401, Some(1)));
}
