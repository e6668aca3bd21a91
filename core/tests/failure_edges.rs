//! Failure edges users hit (issue #39 §1, §3, §4), against a real server:
//! a server that is gone fails a call within the connect timeout, typed,
//! not after the response timeout; `stop()` ends a run whatever the server
//! does (gone, or up but frozen); a worker the version fence refuses after
//! an upgrade stops with the typed fence error instead of retrying forever.
//!
//! The durations asserted are generous bounds (a behaviour test, not a
//! benchmark); the measured figures are printed (`--nocapture`).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{kill_all_but_me, Server};
use echomq::{Client, ConnectOptions, ErrorKind, WireVersion, Worker, WorkerOptions};
use redis::Commands;

const Q: &str = "edges";

/// Well under the default response timeout (30 s), well over the default
/// connect timeout (5 s) plus a loaded machine's noise.
const GONE_BOUND: Duration = Duration::from_secs(15);

async fn connect(server: &Server, options: ConnectOptions) -> Client {
    Client::connect(&server.url(), options).await.unwrap()
}

/// Wait (bounded) until `done` holds.
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not reached in 30 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The server's process id (to freeze it with SIGSTOP).
fn server_pid(server: &Server) -> u32 {
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut server.raw())
        .unwrap();
    info.lines()
        .find_map(|l| l.trim().strip_prefix("process_id:"))
        .and_then(|p| p.parse().ok())
        .expect("INFO shows process_id")
}

fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} {pid}");
}

#[tokio::test]
async fn a_server_that_is_gone_fails_a_call_within_the_connect_timeout() {
    let mut server = Server::start();
    // The defaults: connect timeout 5 s, response timeout 30 s.
    let client = connect(&server, ConnectOptions::default()).await;
    client.enqueue(Q, b"x", Default::default()).await.unwrap();
    server.stop();

    // The first call may be the one that finds the socket gone after
    // sending (a connection error); the next one cannot be sent at all.
    let mut kinds = Vec::new();
    for call in 0..3 {
        let started = Instant::now();
        let err = client.counts(Q).await.unwrap_err();
        let took = started.elapsed();
        println!(
            "call {call} with the server gone: {:?} after {took:?}",
            err.kind()
        );
        assert!(
            took < GONE_BOUND,
            "call {call} took {took:?}: a server that is gone must not cost the response timeout"
        );
        kinds.push(err.kind());
    }
    assert!(
        matches!(kinds[0], ErrorKind::Connection | ErrorKind::Unavailable),
        "{kinds:?}"
    );
    assert_eq!(kinds[1..], [ErrorKind::Unavailable; 2], "typed, retryable");

    // A server back within the connect timeout is reconnected to: the
    // unreachable mark does not outlive the next successful connect.
    server.restart();
    let id = client.enqueue(Q, b"y", Default::default()).await.unwrap();
    let pending: Vec<String> = server
        .raw()
        .zrange(format!("emq:{{{Q}}}:pending"), 0, -1)
        .unwrap();
    assert!(pending.contains(&id.id.to_string()), "{pending:?}");
}

#[tokio::test]
async fn a_blocking_client_fails_fast_too() {
    let mut server = Server::start();
    let url = server.url();
    let client = tokio::task::spawn_blocking(move || {
        echomq::blocking::Client::connect(&url, ConnectOptions::default()).unwrap()
    })
    .await
    .unwrap();
    server.stop();
    let took = tokio::task::spawn_blocking(move || {
        // Twice: the first call of a thread takes the shared connection,
        // later ones the thread's own (both are transports).
        let mut took = Vec::new();
        for _ in 0..3 {
            let started = Instant::now();
            let err = client.enqueue(Q, b"x", Default::default()).unwrap_err();
            assert!(
                matches!(err.kind(), ErrorKind::Connection | ErrorKind::Unavailable),
                "{err}"
            );
            took.push(started.elapsed());
        }
        took
    })
    .await
    .unwrap();
    println!("blocking enqueues with the server gone took {took:?}");
    assert!(took.iter().all(|t| *t < GONE_BOUND), "{took:?}");
}

/// A worker whose handler holds its job until released, and how many ran.
fn holding_worker(client: &Client, options: WorkerOptions) -> (Worker, Arc<AtomicUsize>) {
    let started = Arc::new(AtomicUsize::new(0));
    let seen = started.clone();
    let worker = Worker::new(client.clone(), Q, options, move |_job| {
        seen.fetch_add(1, Ordering::SeqCst);
        async move {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(())
        }
    })
    .unwrap();
    (worker, started)
}

fn short_grace() -> WorkerOptions {
    WorkerOptions {
        concurrency: 1,
        prefetch: Some(2),
        shutdown_grace_ms: 1_000,
        lease_ms: 30_000,
        idle_max_ms: 50,
        pump_interval_ms: 50,
        ..WorkerOptions::default()
    }
}

/// `stop()` ends the run within the grace period (plus the last round
/// trips' allowance) whether the server has gone away or hangs.
#[tokio::test]
async fn stop_ends_a_run_whatever_the_server_does() {
    for frozen in [false, true] {
        let mut server = Server::start();
        let client = connect(&server, ConnectOptions::default()).await;
        for _ in 0..3 {
            client.enqueue(Q, b"job", Default::default()).await.unwrap();
        }
        let (worker, started) = holding_worker(&client, short_grace());
        let w = worker.clone();
        let run = tokio::spawn(async move { w.run().await });
        until("a handler holds a job", || {
            started.load(Ordering::SeqCst) == 1
        })
        .await;
        let pid = server_pid(&server);
        if frozen {
            signal(pid, "-STOP"); // up, but answers nothing
        } else {
            server.stop();
        }
        let stopped = Instant::now();
        worker.stop();
        let ended = tokio::time::timeout(Duration::from_secs(60), run).await;
        let took = stopped.elapsed();
        println!("frozen={frozen}: run ended {took:?} after stop()");
        let outcome = ended.expect("run() ended").unwrap();
        assert!(outcome.is_ok(), "{outcome:?}");
        assert!(
            took < Duration::from_secs(8),
            "frozen={frozen}: stop() took {took:?} with a grace of 1 s"
        );
        if frozen {
            signal(pid, "-CONT");
        }
    }
}

/// With the server up, the drain's bound changes nothing: prefetched and
/// unfinished jobs are handed back to pending.
#[tokio::test]
async fn stop_with_the_server_up_still_hands_jobs_back() {
    let server = Server::start();
    let client = connect(&server, ConnectOptions::default()).await;
    for _ in 0..3 {
        client.enqueue(Q, b"job", Default::default()).await.unwrap();
    }
    let (worker, started) = holding_worker(&client, short_grace());
    let w = worker.clone();
    let run = tokio::spawn(async move { w.run().await });
    until("a handler holds a job", || {
        started.load(Ordering::SeqCst) == 1
    })
    .await;
    until("the prefetch is claimed", || worker.stats().claimed == 3).await;
    worker.stop();
    run.await.unwrap().unwrap();
    let mut raw = server.raw();
    let active: usize = raw.zcard(format!("emq:{{{Q}}}:active")).unwrap();
    let pending: usize = raw.zcard(format!("emq:{{{Q}}}:pending")).unwrap();
    assert_eq!((active, pending), (0, 3));
    assert_eq!(worker.stats().released, 3, "{:?}", worker.stats());
}

/// How many `EVALSHA`s the server has run (the idle worker's claims).
fn evalsha_calls(raw: &mut redis::Connection) -> u64 {
    let stats: String = redis::cmd("INFO").arg("commandstats").query(raw).unwrap();
    stats
        .lines()
        .find_map(|l| l.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

async fn connect_as(server: &Server, wire: WireVersion) -> Client {
    connect(
        server,
        ConnectOptions {
            wire_version: wire,
            ..ConnectOptions::default()
        },
    )
    .await
}

/// After an upgrade, a worker still speaking the old wire is refused by the
/// fence on its next reconnect: its run ends with the typed fence error
/// (idle: met by the claim; busy: met by the heartbeat), instead of retrying
/// ten times a second forever. A producer's refusal stays the typed error.
#[tokio::test]
async fn a_fenced_out_worker_stops_with_the_fence_error() {
    for busy in [false, true] {
        let server = Server::start();
        let old = connect_as(&server, WireVersion::V2_0_0).await;
        let options = WorkerOptions {
            lease_ms: 1_500, // a heartbeat every 500 ms
            ..short_grace()
        };
        let (worker, started) = holding_worker(&old, options);
        let w = worker.clone();
        let run = tokio::spawn(async move { w.run().await });
        if busy {
            old.enqueue(Q, b"job", Default::default()).await.unwrap();
            until("a handler holds a job", || {
                started.load(Ordering::SeqCst) == 1
            })
            .await;
        } else {
            // Idle: its empty claims go out on the old wire.
            let mut raw = server.raw();
            until("the idle worker claims", || evalsha_calls(&mut raw) >= 3).await;
        }

        let upgrader = connect_as(&server, WireVersion::V2_0_0).await;
        let report = upgrader
            .upgrade_protocol(WireVersion::V2_0_0, WireVersion::V2_1_0, false)
            .await
            .unwrap();
        assert!(report.upgraded, "{report:?}");
        // Old connections keep working until they reconnect: make them.
        kill_all_but_me(&mut server.raw());

        let ended = tokio::time::timeout(Duration::from_secs(30), run).await;
        let outcome = ended.expect("a fenced-out run ends").unwrap();
        let err = outcome.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::VersionFence, "busy={busy}: {err}");
        assert_eq!(err.found(), Some("echomq:2.1.0"), "the value found");
        assert!(worker.is_stopping());
        let stats = worker.stats();
        println!("busy={busy}: fenced out, {stats:?}");
        assert!(
            stats.claim_failures <= 3,
            "refused once, not retried: {stats:?}"
        );

        // A producer's refusal stays typed, call after call.
        for _ in 0..2 {
            let e = old
                .enqueue(Q, b"late", Default::default())
                .await
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::VersionFence, "{e}");
        }
        let version: String = server.raw().get("{emq}:version").unwrap();
        assert_eq!(version, "echomq:2.1.0");
    }
}
