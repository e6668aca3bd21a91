//! Transient server states on a standalone server (issue #15 §1): a `BUSY`
//! server is retried inside the response timeout, then answered as the typed,
//! retryable `Unavailable`; a server restarting within the connect timeout
//! is reconnected to without a new client.

mod common;

use std::time::{Duration, Instant};

use common::Server;
use echomq::{Client, ConnectOptions, ErrorKind};

fn options(response_ms: u64) -> ConnectOptions {
    ConnectOptions {
        response_timeout: Some(Duration::from_millis(response_ms)),
        connect_timeout: Duration::from_millis(500),
        ..ConnectOptions::default()
    }
}

/// Run a read-only script that spins for `ms` on its own connection, so
/// every other client meets `BUSY` until it ends; returns once it does.
fn spin(server: &Server, ms: u64) -> std::thread::JoinHandle<()> {
    let mut raw = server.raw();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("busy-reply-threshold")
        .arg(20)
        .query(&mut raw)
        .unwrap();
    let spinner = std::thread::spawn(move || {
        let script = format!(
            "local t = redis.call('TIME') local s = t[1] * 1000 + t[2] / 1000 \
             while true do t = redis.call('TIME') \
             if t[1] * 1000 + t[2] / 1000 - s > {ms} then break end end return 1"
        );
        let _: i64 = redis::cmd("EVAL")
            .arg(script)
            .arg(0)
            .query(&mut raw)
            .unwrap();
    });
    // Running once another connection meets BUSY (polled: under load the
    // script may take a while to reach the server).
    let mut probe = server.raw();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match redis::cmd("PING").query::<String>(&mut probe) {
            Err(e) if e.code() == Some("BUSY") => break,
            _ => assert!(Instant::now() < deadline, "the script never ran"),
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    spinner
}

#[tokio::test]
async fn busy_is_retried_then_answered_as_unavailable() {
    let server = Server::start();
    let client = Client::connect(&server.url(), options(300)).await.unwrap();

    // Busier than the response timeout: the typed, retryable kind.
    let spinner = spin(&server, 1_500);
    let started = Instant::now();
    let err = client.counts("q").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    assert!(err.is_retryable());
    assert!(
        err.message().contains("BUSY"),
        "the server's own word: {err}"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "it was retried"
    );
    spinner.join().unwrap();

    // Busy for less than the response timeout: the caller never notices.
    let patient = Client::connect(&server.url(), options(5_000))
        .await
        .unwrap();
    let spinner = spin(&server, 400);
    patient
        .enqueue("q", b"x", Default::default())
        .await
        .unwrap();
    spinner.join().unwrap();
    assert_eq!(patient.counts("q").await.unwrap().pending, 1);
}

#[tokio::test]
async fn a_restarting_server_is_waited_for_within_the_connect_timeout() {
    let mut server = Server::start();
    // A refused reconnect is retried while the server has been unreachable
    // for less than the connect timeout (issue #39 §3): give the restart that.
    let client = Client::connect(
        &server.url(),
        ConnectOptions {
            connect_timeout: Duration::from_secs(5),
            ..options(5_000)
        },
    )
    .await
    .unwrap();
    let short = Client::connect(&server.url(), options(300)).await.unwrap();
    client.enqueue("q", b"x", Default::default()).await.unwrap();
    short.counts("q").await.unwrap();
    server.stop();

    // The first call after the drop may be the one that learns the socket is
    // gone (a connection error: it may have been sent). After that nothing
    // can be sent: reconnects are retried, then answered as Unavailable.
    let first = short.counts("q").await.unwrap_err();
    assert!(
        matches!(first.kind(), ErrorKind::Connection | ErrorKind::Unavailable),
        "{first}"
    );
    let err = short.counts("q").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");

    // Back within the connect timeout: the same client waits and re-fences.
    let restart = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        server.restart();
        server
    });
    let mut answer = client.enqueue("q", b"y", Default::default()).await;
    if matches!(&answer, Err(e) if e.kind() == ErrorKind::Connection) {
        answer = client.enqueue("q", b"y", Default::default()).await;
    }
    answer.unwrap();
    let server = restart.join().unwrap();
    let version: String = redis::cmd("GET")
        .arg("{emq}:version")
        .query(&mut server.raw())
        .unwrap();
    assert_eq!(
        version,
        echomq::PROTOCOL_VERSION,
        "re-fenced after the restart"
    );
}
