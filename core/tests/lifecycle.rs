//! The worker's lifecycle at its edges (issue #11): a dropped `run()`, a
//! closed client, `stop()` during a long wait, out-of-range options, a panic
//! in the spawned task, and the failure counters.

mod common;

use std::time::Duration;

use common::Server;
use echomq::{Client, ConnectOptions, ErrorKind, Worker, WorkerOptions};

const Q: &str = "life";

async fn connect(server: &Server) -> Client {
    Client::connect(&server.url(), ConnectOptions::default())
        .await
        .unwrap()
}

/// A worker whose handler never finishes: its jobs stay held until the run ends.
fn stuck_worker(client: &Client, options: WorkerOptions) -> Worker {
    Worker::new(client.clone(), Q, options, |_job| async {
        std::future::pending::<()>().await;
        Ok(())
    })
    .unwrap()
}

/// Poll (bounded) until `done` answers true; the bound only keeps a broken
/// build from hanging.
async fn until<F, Fut>(what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !done().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not reached in 20 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_run_stops_heartbeating_and_its_jobs_come_back() {
    let server = Server::start();
    let client = connect(&server).await;
    client
        .enqueue_many(Q, &echomq::EnqueueOptions::defaults_for(&["a", "b", "c"]))
        .await
        .unwrap();
    let worker = stuck_worker(
        &client,
        WorkerOptions {
            concurrency: 3,
            prefetch: Some(0),
            lease_ms: 600,
            shutdown_grace_ms: 0,
            ..WorkerOptions::default()
        },
    );
    // Cancel the run the way `select!` or `timeout` does: drop its future.
    let probe = worker.clone();
    let mut run = Box::pin(worker.run());
    tokio::select! {
        _ = &mut run => panic!("the run ended on its own"),
        _ = until("three jobs claimed", || async { probe.stats().claimed == 3 }) => {}
    }
    drop(run);
    // The held jobs come back to pending: released on drop or, at worst,
    // reaped once the leases lapse; never renewed for ever.
    until("the dropped run's jobs back in pending", || async {
        let _ = client.reap(Q, 100).await;
        let counts = client.counts(Q).await.unwrap();
        counts.pending == 3 && counts.active == 0
    })
    .await;
    // And the worker can run again.
    let again = worker.clone();
    let handle = tokio::spawn(async move { again.run().await });
    until("claimed again", || async { worker.stats().claimed == 6 }).await;
    worker.stop();
    let ended = tokio::time::timeout(Duration::from_secs(20), handle).await;
    ended.expect("second run stops").unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn closing_the_client_ends_a_running_worker_with_closed() {
    let server = Server::start();
    let client = connect(&server).await;
    let worker = Worker::new(
        client.clone(),
        Q,
        WorkerOptions {
            idle_max_ms: 20,
            ..WorkerOptions::default()
        },
        |_job| async { Ok(()) },
    )
    .unwrap();
    let w = worker.clone();
    let running = tokio::spawn(async move { w.run().await });
    client.enqueue(Q, "x", Default::default()).await.unwrap();
    until("one job done", || async { worker.stats().completed == 1 }).await;
    client.close();
    let ended = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("a closed client ends the run")
        .unwrap();
    assert_eq!(ended.unwrap_err().kind(), ErrorKind::Closed);
    // A worker over an already closed client ends at once, the same way.
    let ended = tokio::time::timeout(Duration::from_secs(10), worker.run())
        .await
        .expect("a closed client ends the run");
    assert_eq!(ended.unwrap_err().kind(), ErrorKind::Closed);
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_is_noticed_during_a_long_wait() {
    let server = Server::start();
    let client = connect(&server).await;
    client
        .enqueue(Q, "forever", Default::default())
        .await
        .unwrap();
    // Every slot busy, so the loop sleeps up to idle_max (a minute) between looks.
    let worker = stuck_worker(
        &client,
        WorkerOptions {
            concurrency: 1,
            prefetch: Some(0),
            idle_max_ms: 60_000,
            shutdown_grace_ms: 0,
            ..WorkerOptions::default()
        },
    );
    let w = worker.clone();
    let running = tokio::spawn(async move { w.run().await });
    until("claimed", || async { worker.stats().claimed == 1 }).await;
    worker.stop();
    // Far below idle_max: the loop waits on the stop signal itself.
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("stop() is noticed without waiting out idle_max")
        .unwrap()
        .unwrap();
    assert_eq!(client.counts(Q).await.unwrap().pending, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn out_of_range_options_are_refused_before_anything_runs() {
    let server = Server::start();
    let client = connect(&server).await;
    let huge = 1usize << 62;
    let cases: Vec<(&str, WorkerOptions)> = vec![
        (
            "concurrency",
            WorkerOptions {
                concurrency: huge,
                ..WorkerOptions::default()
            },
        ),
        (
            "prefetch",
            WorkerOptions {
                prefetch: Some(huge),
                ..WorkerOptions::default()
            },
        ),
        (
            "handler_batch",
            WorkerOptions {
                handler_batch: huge,
                ..WorkerOptions::default()
            },
        ),
        (
            "lease_ms",
            WorkerOptions {
                lease_ms: u64::MAX,
                ..WorkerOptions::default()
            },
        ),
        (
            "idle_max_ms",
            WorkerOptions {
                idle_max_ms: u64::MAX,
                ..WorkerOptions::default()
            },
        ),
        (
            "pump_interval_ms",
            WorkerOptions {
                pump_interval_ms: u64::MAX,
                ..WorkerOptions::default()
            },
        ),
        (
            "shutdown_grace_ms",
            WorkerOptions {
                shutdown_grace_ms: u64::MAX,
                ..WorkerOptions::default()
            },
        ),
        (
            "backoff_cap_ms",
            WorkerOptions {
                backoff_cap_ms: u64::MAX,
                ..WorkerOptions::default()
            },
        ),
        (
            "max_attempts",
            WorkerOptions {
                max_attempts: u64::MAX,
                ..WorkerOptions::default()
            },
        ),
        (
            "max_stalls",
            WorkerOptions {
                max_stalls: u64::MAX,
                ..WorkerOptions::default()
            },
        ),
    ];
    for (name, options) in cases {
        let err = Worker::new(client.clone(), Q, options, |_job| async { Ok(()) }).expect_err(name);
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{name}");
        assert!(err.message().contains(name), "{name}: {}", err.message());
    }
}

#[test]
fn a_panic_inside_the_spawned_run_answers_join_with_a_typed_error() {
    let server = Server::start();
    let client =
        echomq::blocking::Client::connect(&server.url(), ConnectOptions::default()).unwrap();
    let worker = Worker::new_blocking(
        client.as_async().clone(),
        Q,
        WorkerOptions::default(),
        |_| Ok(()),
    )
    .unwrap();
    worker.panic_next_run_for_tests();
    let handle = worker.spawn();
    let outcome = handle
        .join_timeout(Duration::from_secs(20))
        .expect("join answers instead of waiting for ever");
    let err = outcome.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Internal);
    assert!(err.message().contains("panicked"), "{}", err.message());
    // The running flag was cleared: the worker runs again.
    let handle = worker.spawn();
    handle.stop();
    handle.join().unwrap();
    // run_blocking answers the same way.
    worker.panic_next_run_for_tests();
    let err = worker.run_blocking().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Internal);
}

#[tokio::test(flavor = "multi_thread")]
async fn claim_heartbeat_and_settle_failures_are_counted() {
    let mut server = Server::start();
    let client = Client::connect(
        &server.url(),
        ConnectOptions {
            response_timeout: Some(Duration::from_millis(500)),
            connect_timeout: Duration::from_millis(500),
            ..ConnectOptions::default()
        },
    )
    .await
    .unwrap();
    client.enqueue(Q, "held", Default::default()).await.unwrap();
    let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
    let open = gate.clone();
    let worker = Worker::new(
        client.clone(),
        Q,
        WorkerOptions {
            concurrency: 1,
            prefetch: Some(0),
            lease_ms: 300,
            idle_max_ms: 20,
            shutdown_grace_ms: 0,
            ..WorkerOptions::default()
        },
        move |_job| {
            let open = open.clone();
            async move {
                let _ = open.acquire().await;
                Ok(())
            }
        },
    )
    .unwrap();
    let w = worker.clone();
    let running = tokio::spawn(async move { w.run().await });
    until("claimed", || async { worker.stats().claimed == 1 }).await;
    server.stop();
    until("a heartbeat failed", || async {
        worker.stats().heartbeat_failures > 0
    })
    .await;
    // The handler finishes while the server is gone: its completion fails,
    // and so do the claims for the freed slot.
    gate.add_permits(1);
    until("claim and settle failures counted", || async {
        let s = worker.stats();
        s.claim_failures > 0 && s.settle_failures > 0
    })
    .await;
    worker.stop();
    tokio::time::timeout(Duration::from_secs(20), running)
        .await
        .expect("the run ends")
        .unwrap()
        .unwrap();
    let s = worker.stats();
    assert_eq!(
        s.claimed,
        s.completed + s.retried + s.dead + s.lease_lost + s.settle_failures + s.released,
        "{s:?}"
    );
    assert_eq!(s.in_flight, 0);
}
