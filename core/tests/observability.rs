//! Observability against a real redis-server (issue #12, the Rust side):
//! queue events on `emq:{q}:events`, the subscriber and `wait_for`, worker
//! events, and the Prometheus text.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::Server;
use echomq::{
    Backoff, BrandedId, Client, ConnectOptions, HandlerError, QueueEvent, Settled, Subscription,
    Worker, WorkerEvent, WorkerOptions,
};
use redis::Commands;

const Q: &str = "obs";

async fn connect(server: &Server) -> Client {
    Client::connect(&server.url(), ConnectOptions::default())
        .await
        .unwrap()
}

/// The next event, within a bound that only keeps a broken build from hanging.
async fn next(sub: &mut Subscription) -> QueueEvent {
    tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .expect("an event within 10 s")
        .expect("subscription open")
}

/// Nothing more arrives within a short while (after the verbs answered).
async fn quiet(sub: &mut Subscription) {
    let more = tokio::time::timeout(Duration::from_millis(300), sub.next()).await;
    assert!(more.is_err(), "unexpected event {more:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn each_transition_publishes_one_json_message_and_refusals_publish_none() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut sub = client.subscribe(Q).await.unwrap();

    let id = echomq::id::mint_job_id().to_string();
    client
        .enqueue(Q, b"x", echomq::EnqueueOptions::default().id(&id))
        .await
        .unwrap();
    let added = next(&mut sub).await;
    assert_eq!(
        (added.event.as_str(), added.job.as_str()),
        ("added", id.as_str())
    );
    assert_eq!(added.queue, Q);
    // A duplicate created nothing: no `added`.
    assert!(
        client
            .enqueue(Q, b"x", echomq::EnqueueOptions::default().id(&id))
            .await
            .unwrap()
            .duplicate
    );

    let job = client.claim(Q, 5_000).await.unwrap().unwrap();
    let active = next(&mut sub).await;
    assert_eq!(active.event, "active");
    assert_eq!(active.field("token"), Some("1"));

    client.retry(Q, &id, 1, 0, 5, "boom").await.unwrap();
    let retried = next(&mut sub).await;
    assert_eq!(retried.event, "retried");
    assert_eq!(retried.field("error"), Some("boom"));
    assert_eq!(retried.field("attempts"), Some("1"));
    assert_eq!(retried.field("delay_ms"), Some("0"));

    client.promote(Q, 10).await.unwrap();
    let again = client.claim(Q, 5_000).await.unwrap().unwrap();
    assert_eq!(next(&mut sub).await.event, "active");
    // The first holder's token is stale now: refused, and no `completed`.
    assert!(client.complete(Q, &id, job.token).await.is_err());
    let refused = client.complete_many(Q, &[(&id, job.token)]).await.unwrap();
    assert!(refused[0].is_err());
    quiet(&mut sub).await;
    client.complete(Q, &id, again.token).await.unwrap();
    let completed = next(&mut sub).await;
    assert_eq!(
        (completed.event.as_str(), completed.field("token")),
        ("completed", Some("2"))
    );

    // Dead-lettering, requeue, remove, pause, resume.
    let dead_id = client
        .enqueue(Q, b"d", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    assert_eq!(next(&mut sub).await.event, "added");
    let held = client.claim(Q, 5_000).await.unwrap().unwrap();
    next(&mut sub).await;
    client
        .retry(Q, &dead_id, held.token, 0, 1, "fatal")
        .await
        .unwrap();
    let dead = next(&mut sub).await;
    assert_eq!(
        (dead.event.as_str(), dead.job.as_str()),
        ("dead", dead_id.as_str())
    );
    assert_eq!(dead.field("error"), Some("fatal"));
    client.requeue_dead(Q, &dead_id).await.unwrap();
    assert_eq!(next(&mut sub).await.event, "requeued");
    client.remove(Q, &dead_id).await.unwrap();
    assert_eq!(next(&mut sub).await.event, "removed");
    assert!(client.remove(Q, &dead_id).await.is_err());
    client.pause(Q).await.unwrap();
    let paused = next(&mut sub).await;
    assert_eq!((paused.event.as_str(), paused.job.as_str()), ("paused", ""));
    client.resume(Q).await.unwrap();
    assert_eq!(next(&mut sub).await.event, "resumed");
    quiet(&mut sub).await;

    // The wire: a plain SUBSCRIBE sees the same JSON of strings.
    let mut raw = server.raw();
    let mut pubsub = raw.as_pubsub();
    pubsub.subscribe("emq:{obs}:events").unwrap();
    pubsub
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let scheduled = client
        .enqueue(Q, b"s", echomq::EnqueueOptions::default().delay_ms(60_000))
        .await
        .unwrap()
        .id;
    let message = pubsub.get_message().unwrap();
    let json: serde_json::Value = serde_json::from_slice(message.get_payload_bytes()).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"event": "added", "job": scheduled.as_str(), "delay_ms": "60000"})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_with_events_off_publishes_nothing() {
    let server = Server::start();
    let watcher = connect(&server).await;
    let mut sub = watcher.subscribe(Q).await.unwrap();
    let options = ConnectOptions {
        publish_events: false,
        ..ConnectOptions::default()
    };
    let quiet_client = Client::connect(&server.url(), options).await.unwrap();
    quiet_client
        .enqueue(Q, b"x", Default::default())
        .await
        .unwrap();
    let job = quiet_client.claim(Q, 5_000).await.unwrap().unwrap();
    quiet_client
        .complete(Q, job.id.as_str(), job.token)
        .await
        .unwrap();
    // Closing publishes whatever was queued before it; then a loud client's
    // write is the positive control: its `added` must be the first event the
    // subscriber sees (a broken subscription, or a quiet client that talked,
    // fails here without any timing window).
    quiet_client.close_and_wait().await;
    let loud = watcher
        .enqueue(Q, b"loud", Default::default())
        .await
        .unwrap()
        .id;
    let first = next(&mut sub).await;
    assert_eq!(
        (first.event.as_str(), first.job.as_str()),
        ("added", loud.as_str())
    );
}

/// Count `added` events until `quiet` passes with none.
async fn count_added(sub: &mut Subscription) -> usize {
    let mut added = 0;
    while let Ok(Some(event)) = tokio::time::timeout(Duration::from_millis(500), sub.next()).await {
        added += usize::from(event.event == "added");
    }
    added
}

#[tokio::test(flavor = "multi_thread")]
async fn close_publishes_the_events_queued_before_it() {
    let server = Server::start();
    let watcher = connect(&server).await;
    let mut sub = watcher.subscribe(Q).await.unwrap();
    // Many verbs answered at once, then close at once: their events are
    // still queued for the publisher when close runs.
    let producer = connect(&server).await;
    let batches: Vec<Vec<(Vec<u8>, echomq::EnqueueOptions)>> = (0..40)
        .map(|_| vec![(b"x".to_vec(), Default::default()); 50])
        .collect();
    let calls = batches.iter().map(|b| producer.enqueue_many(Q, b));
    for answer in futures_util::future::join_all(calls).await {
        assert_eq!(answer.unwrap().len(), 50);
    }
    producer.close();
    assert_eq!(
        producer
            .enqueue(Q, b"late", Default::default())
            .await
            .unwrap_err()
            .kind(),
        echomq::ErrorKind::Closed
    );
    tokio::time::timeout(Duration::from_secs(10), producer.closed())
        .await
        .expect("closed() within CLOSE_FLUSH");
    assert_eq!(count_added(&mut sub).await, 2_000);
    // The blocking client's close waits by itself.
    let url = server.url();
    tokio::task::spawn_blocking(move || {
        let producer = echomq::blocking::Client::connect(&url, ConnectOptions::default()).unwrap();
        for _ in 0..40 {
            producer
                .enqueue_many(
                    Q,
                    &echomq::EnqueueOptions::defaults_for(&vec![b"x".to_vec(); 50]),
                )
                .unwrap();
        }
        producer.close();
    })
    .await
    .unwrap();
    assert_eq!(count_added(&mut sub).await, 2_000);
    // On a runtime's thread (a callback) the blocking close cannot wait; it
    // still closes, and still publishes in the background.
    let inside = connect(&server).await;
    inside.enqueue(Q, b"x", Default::default()).await.unwrap();
    echomq::blocking::Client::from_async(inside.clone()).close();
    assert!(inside.is_closed());
    assert_eq!(count_added(&mut sub).await, 1);
    // The publisher's connection is gone with the client's: only the
    // watcher's two remain.
    let mut admin = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let list: String = redis::cmd("CLIENT").arg("LIST").query(&mut admin).unwrap();
    assert_eq!(list.lines().count(), 3, "{list}");
}

/// The events of one job, in the order heard.
fn heard(events: &[QueueEvent], id: &str) -> Vec<String> {
    let of = events.iter().filter(|e| e.job == id);
    of.map(|e| e.event.clone()).collect()
}

/// Cross-runtime (issue #12's Done-when): a Rust subscriber and `wait_for`
/// follow jobs a Python worker, in another process, processed.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs EMQ_TEST_PYTHON, a python with echomq installed (scripts/test-python.sh runs it)"]
async fn a_rust_subscriber_follows_jobs_a_python_worker_processes() {
    let python = std::env::var("EMQ_TEST_PYTHON").expect("set EMQ_TEST_PYTHON");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/cross/python_worker.py"
    );
    let server = Server::start();
    let client = connect(&server).await;
    let mut sub = client.subscribe(Q).await.unwrap();
    let ok = client
        .enqueue(Q, b"ok", Default::default())
        .await
        .unwrap()
        .id;
    let bad = client
        .enqueue(Q, b"fail", Default::default())
        .await
        .unwrap()
        .id;
    // Killed when dropped, so a failed assertion leaves no worker behind.
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let worker = std::process::Command::new(python)
        .args([script, &server.url(), Q])
        .stdout(std::process::Stdio::null())
        .spawn()
        .map(Killed)
        .unwrap();
    let settled = client
        .wait_for(Q, ok.as_str(), Duration::from_secs(30))
        .await;
    let mut events = Vec::new();
    // The two jobs settle in either order.
    let last = |events: &[QueueEvent], id: &BrandedId| heard(events, id.as_str()).pop();
    while last(&events, &ok).as_deref() != Some("completed")
        || last(&events, &bad).as_deref() != Some("dead")
    {
        events.push(next(&mut sub).await);
    }
    drop(worker);
    assert_eq!(settled.unwrap(), Settled::Completed);
    assert_eq!(
        heard(&events, ok.as_str()),
        ["added", "active", "completed"]
    );
    assert_eq!(heard(&events, bad.as_str()), ["added", "active", "dead"]);
    let dead = events
        .iter()
        .find(|e| e.job == bad.as_str() && e.event == "dead");
    let error = dead.unwrap().field("error").unwrap();
    assert!(error.contains("python says no"), "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_subscriber_resubscribes_after_the_server_restarts() {
    let mut server = Server::start();
    let client = connect(&server).await;
    let mut sub = client.subscribe(Q).await.unwrap();
    client
        .enqueue(Q, b"before", Default::default())
        .await
        .unwrap();
    assert_eq!(next(&mut sub).await.event, "added");
    server.restart();
    // Publish until the re-subscribed connection hears one (messages sent
    // before it re-subscribed are lost: at-most-once).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        assert!(Instant::now() < deadline, "never re-subscribed");
        let _ = client.enqueue(Q, b"after", Default::default()).await;
        if let Ok(Some(event)) = tokio::time::timeout(Duration::from_millis(200), sub.next()).await
        {
            assert_eq!(event.event, "added");
            break;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn wait_for_answers_completed_and_dead_settled_by_another_client() {
    let server = Server::start();
    let waiter = connect(&server).await;
    let other = connect(&server).await;

    let id = waiter
        .enqueue(Q, b"w", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    let wait = {
        let (waiter, id) = (waiter.clone(), id.clone());
        tokio::spawn(async move { waiter.wait_for(Q, &id, Duration::from_secs(10)).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let job = other.claim(Q, 5_000).await.unwrap().unwrap();
    other.complete(Q, &id, job.token).await.unwrap();
    assert_eq!(wait.await.unwrap().unwrap(), Settled::Completed);
    // Already settled before waiting: the row read answers.
    assert_eq!(
        waiter
            .wait_for(Q, &id, Duration::from_secs(1))
            .await
            .unwrap(),
        Settled::Completed
    );

    let dead = waiter
        .enqueue(Q, b"d", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    let job = other.claim(Q, 5_000).await.unwrap().unwrap();
    other.retry(Q, &dead, job.token, 0, 1, "no").await.unwrap();
    assert_eq!(
        waiter
            .wait_for(Q, &dead, Duration::from_secs(1))
            .await
            .unwrap(),
        Settled::Dead {
            error: Some("no".into())
        }
    );

    // Still pending at the deadline: a timeout error.
    let pending = waiter
        .enqueue(Q, b"p", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    let e = waiter
        .wait_for(Q, &pending, Duration::from_millis(300))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), echomq::ErrorKind::Timeout);
}

fn fast() -> WorkerOptions {
    WorkerOptions {
        concurrency: 4,
        lease_ms: 600,
        max_attempts: 2,
        backoff: Backoff::Fixed,
        backoff_base_ms: 10,
        backoff_cap_ms: 10,
        pump_interval_ms: 20,
        idle_max_ms: 20,
        ..WorkerOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn worker_events_for_complete_retry_dead_and_lease_lost() {
    let server = Server::start();
    let client = connect(&server).await;
    let ok = client
        .enqueue(Q, b"ok", Default::default())
        .await
        .unwrap()
        .id;
    let flaky = client
        .enqueue(Q, b"flaky", Default::default())
        .await
        .unwrap()
        .id;
    let doomed = client
        .enqueue(Q, b"doomed", Default::default())
        .await
        .unwrap()
        .id;
    let lost = client
        .enqueue(Q, b"lost", Default::default())
        .await
        .unwrap()
        .id;
    let url = server.url();
    let worker = Worker::new(client.clone(), Q, fast(), move |job| {
        let url = url.clone();
        async move {
            match job.payload.as_slice() {
                b"flaky" if job.token == 1 => Err(HandlerError::retry("try again")),
                b"doomed" => Err(HandlerError::fatal("never")),
                b"lost" => {
                    // Someone else took the job: its token moved on.
                    let mut raw = redis::Client::open(url).unwrap().get_connection().unwrap();
                    let row = format!("emq:{{obs}}:job:{}", job.id);
                    let _: i64 = raw.hincr(row, "attempts", 1).unwrap();
                    Ok(())
                }
                _ => Ok(()),
            }
        }
    })
    .unwrap();
    let events: Arc<Mutex<Vec<WorkerEvent>>> = Arc::default();
    let sink = events.clone();
    worker
        .on_event(move |e| sink.lock().unwrap().push(e.clone()))
        .unwrap();
    assert!(worker.on_event(|_| {}).is_err(), "one listener per worker");
    let run = {
        let w = worker.clone();
        tokio::spawn(async move { w.run().await })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while worker.stats().completed < 2 || worker.stats().dead < 1 || worker.stats().lease_lost < 1 {
        assert!(Instant::now() < deadline, "stats {:?}", worker.stats());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    worker.stop();
    run.await.unwrap().unwrap();

    let events = events.lock().unwrap().clone();
    let has = |want: &dyn Fn(&WorkerEvent) -> bool| events.iter().any(want);
    assert!(has(
        &|e| matches!(e, WorkerEvent::Active { id, token: 1 } if *id == ok)
    ));
    assert!(has(
        &|e| matches!(e, WorkerEvent::Completed { id, token: 1, .. } if *id == ok)
    ));
    assert!(has(
        &|e| matches!(e, WorkerEvent::Failed { id, token: 1, error, retry_in_ms: Some(10), .. }
        if *id == flaky && error == "try again")
    ));
    assert!(has(
        &|e| matches!(e, WorkerEvent::Completed { id, token: 2, .. } if *id == flaky)
    ));
    assert!(has(
        &|e| matches!(e, WorkerEvent::Failed { id, retry_in_ms: None, .. } if *id == doomed)
    ));
    assert!(has(
        &|e| matches!(e, WorkerEvent::Dead { id, error, .. } if *id == doomed && error == "never")
    ));
    assert!(has(
        &|e| matches!(e, WorkerEvent::LeaseLost { id, token: 1 } if *id == lost)
    ));
    assert!(has(&|e| matches!(e, WorkerEvent::Drained)));
    assert!(matches!(events.last(), Some(WorkerEvent::Closed)));
    assert!(!has(
        &|e| matches!(e, WorkerEvent::Completed { id, .. } if *id == lost)
    ));
}

/// `on_events` hands over the named events only: a binding's listener for
/// `failed` never sees the `active`/`completed` of every job.
#[tokio::test(flavor = "multi_thread")]
async fn on_events_delivers_only_the_named_events() {
    let server = Server::start();
    let client = connect(&server).await;
    client.enqueue(Q, b"ok", Default::default()).await.unwrap();
    let doomed = client
        .enqueue(Q, b"doomed", Default::default())
        .await
        .unwrap()
        .id;
    let worker = Worker::new(client.clone(), Q, fast(), |job| async move {
        match job.payload.as_slice() {
            b"doomed" => Err(HandlerError::fatal("never")),
            _ => Ok(()),
        }
    })
    .unwrap();

    let unknown = worker
        .on_events(["completed", "finished"], |_| {})
        .unwrap_err();
    assert_eq!(unknown.kind(), echomq::ErrorKind::InvalidArgument);
    assert!(unknown.to_string().contains("\"finished\""), "{unknown}");

    let events: Arc<Mutex<Vec<WorkerEvent>>> = Arc::default();
    let sink = events.clone();
    worker
        .on_events(["failed", "dead", "closed"], move |e| {
            sink.lock().unwrap().push(e.clone())
        })
        .unwrap();
    assert!(
        worker.on_events(["active"], |_| {}).is_err(),
        "one listener per worker"
    );
    let run = {
        let w = worker.clone();
        tokio::spawn(async move { w.run().await })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while worker.stats().completed < 1 || worker.stats().dead < 1 {
        assert!(Instant::now() < deadline, "stats {:?}", worker.stats());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    worker.stop();
    run.await.unwrap().unwrap();

    let names: Vec<&str> = events
        .lock()
        .unwrap()
        .iter()
        .map(WorkerEvent::name)
        .collect();
    assert_eq!(
        names,
        ["failed", "dead", "closed"],
        "{:?}",
        events.lock().unwrap()
    );
    let events = events.lock().unwrap().clone();
    assert!(
        matches!(&events[0], WorkerEvent::Failed { id, retry_in_ms: None, .. } if *id == doomed)
    );
    assert!(matches!(&events[1], WorkerEvent::Dead { id, .. } if *id == doomed));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reap_pump_reports_stalled_jobs_and_claim_failures_are_error_events() {
    let mut server = Server::start();
    // A server that is gone is retried within the response timeout (issue
    // #15) before a claim fails: keep it short so the error event comes soon.
    let options = ConnectOptions {
        response_timeout: Some(Duration::from_millis(500)),
        ..ConnectOptions::default()
    };
    let client = Client::connect(&server.url(), options).await.unwrap();
    let abandoned = client
        .enqueue(Q, b"abandoned", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    // A crashed holder: claimed with a short lease, never settled.
    client.claim(Q, 50).await.unwrap().unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    client.pause(Q).await.unwrap(); // so the worker does not run it
    let mut sub = client.subscribe(Q).await.unwrap();
    let worker = Worker::new(client.clone(), Q, fast(), |_| async { Ok(()) }).unwrap();
    let events: Arc<Mutex<Vec<WorkerEvent>>> = Arc::default();
    let sink = events.clone();
    worker
        .on_event(move |e| sink.lock().unwrap().push(e.clone()))
        .unwrap();
    let run = {
        let w = worker.clone();
        tokio::spawn(async move { w.run().await })
    };
    let seen = |want: fn(&WorkerEvent) -> bool| events.lock().unwrap().iter().any(want);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !seen(|e| matches!(e, WorkerEvent::Stalled { count: 1 })) {
        assert!(Instant::now() < deadline, "no stalled event");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The worker's (stall-capped, 2.1.0) reap published the job's `stalled`.
    // (`paused` may still be on its way: publishing never waits for a verb.)
    let stalled = loop {
        let e = next(&mut sub).await;
        if e.event != "paused" {
            break e;
        }
    };
    assert_eq!(
        (stalled.event.as_str(), stalled.job.as_str()),
        ("stalled", abandoned.as_str())
    );
    drop(sub);
    server.stop();
    while !seen(|e| matches!(e, WorkerEvent::Error { .. })) {
        assert!(Instant::now() < deadline, "no error event");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    worker.stop();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_stall_capped_reap_publishes_stalled_then_dead_at_the_cap() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut sub = client.subscribe(Q).await.unwrap();
    let id = client
        .enqueue(Q, b"poison", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    assert_eq!(next(&mut sub).await.event, "added");
    // Its holder dies twice (claimed with a short lease, never settled); a
    // cap of 2 forgives the first stall.
    for round in 1..=2 {
        client.claim(Q, 20).await.unwrap().unwrap();
        assert_eq!(next(&mut sub).await.event, "active");
        tokio::time::sleep(Duration::from_millis(60)).await;
        let reaped = client.reap_stalled(Q, 10, 2).await.unwrap();
        assert_eq!(reaped.len(), 1);
        let event = next(&mut sub).await;
        assert_eq!(event.job, id);
        if round == 1 {
            assert_eq!(event.event, "stalled");
            assert!(event.fields.is_empty(), "{event:?}");
        } else {
            assert_eq!(event.event, "dead");
            assert_eq!(event.field("error"), Some("stalled"));
        }
    }
    let state: String = server
        .raw()
        .hget(format!("emq:{{{Q}}}:job:{id}"), "state")
        .unwrap();
    assert_eq!(state, "dead");
    // Nothing lapsed: the reap publishes nothing.
    assert!(client.reap_stalled(Q, 10, 2).await.unwrap().is_empty());
    quiet(&mut sub).await;
}

/// The value of the sample `name{queue="metered"...}` in Prometheus text.
fn sample(text: &str, name: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{name}{{")) && l.contains("queue=\"metered\""))
        .unwrap_or_else(|| panic!("no {name} in\n{text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_text_matches_counts_and_counts_this_process_workers() {
    // Its own queue: the worker series are process-wide, and other tests run workers on Q.
    const Q: &str = "metered";
    let server = Server::start();
    let client = connect(&server).await;
    for p in ["ok", "ok", "bad", "later"] {
        client.enqueue(Q, p, Default::default()).await.unwrap();
    }
    client
        .enqueue(Q, b"s", echomq::EnqueueOptions::default().delay_ms(60_000))
        .await
        .unwrap();
    let worker = Worker::new(client.clone(), Q, fast(), |job| async move {
        match job.payload.as_slice() {
            b"bad" => Err(HandlerError::fatal("bad")),
            _ => Ok(()),
        }
    })
    .unwrap();
    let run = {
        let w = worker.clone();
        tokio::spawn(async move { w.run().await })
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while worker.stats().completed < 3 || worker.stats().dead < 1 {
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    worker.stop();
    run.await.unwrap().unwrap();
    client
        .enqueue(Q, b"waiting", Default::default())
        .await
        .unwrap();

    let text = client.metrics_text(&[Q, "other"]).await.unwrap();
    let counts = client.counts(Q).await.unwrap();
    assert_eq!(sample(&text, "echomq_pending_jobs"), counts.pending as f64);
    assert_eq!(sample(&text, "echomq_active_jobs"), counts.active as f64);
    assert_eq!(
        sample(&text, "echomq_scheduled_jobs"),
        counts.scheduled as f64
    );
    assert_eq!(sample(&text, "echomq_dead_jobs"), counts.dead as f64);
    assert_eq!(
        sample(&text, "echomq_completed_total"),
        counts.completed as f64
    );
    assert_eq!(sample(&text, "echomq_failed_total"), counts.failed as f64);
    assert_eq!((counts.pending, counts.scheduled, counts.dead), (1, 1, 1));
    assert_eq!(sample(&text, "echomq_worker_processed_total"), 4.0);
    assert_eq!(sample(&text, "echomq_worker_failed_total"), 1.0);
    assert_eq!(sample(&text, "echomq_worker_retried_total"), 0.0);
    assert_eq!(
        sample(&text, "echomq_worker_handler_duration_seconds_count"),
        4.0
    );
    assert!(text.contains("# TYPE echomq_worker_handler_duration_seconds histogram"));
    assert!(text.contains("echomq_pending_jobs{queue=\"other\"} 0"));
    assert!(client.metrics_text(&["bad queue"]).await.is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn one_subscription_follows_several_queues_on_one_connection() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut sub = client.subscribe_many(&["many-a", "many-b"]).await.unwrap();
    assert_eq!(sub.queues(), ["many-a", "many-b"]);
    // One pub/sub connection holds both channels.
    let mut raw = server.raw();
    let numsub: Vec<redis::Value> = redis::cmd("PUBSUB")
        .arg("NUMSUB")
        .arg("emq:{many-a}:events")
        .arg("emq:{many-b}:events")
        .query(&mut raw)
        .unwrap();
    assert_eq!(
        numsub,
        [
            redis::Value::BulkString(b"emq:{many-a}:events".to_vec()),
            redis::Value::Int(1),
            redis::Value::BulkString(b"emq:{many-b}:events".to_vec()),
            redis::Value::Int(1),
        ]
    );
    let a = client
        .enqueue("many-a", b"x", Default::default())
        .await
        .unwrap()
        .id;
    let b = client
        .enqueue("many-b", b"y", Default::default())
        .await
        .unwrap()
        .id;
    client
        .enqueue("not-followed", b"z", Default::default())
        .await
        .unwrap();
    let first = next(&mut sub).await;
    let second = next(&mut sub).await;
    assert_eq!(
        (first.queue.as_str(), first.job.as_str()),
        ("many-a", a.as_str())
    );
    assert_eq!(
        (second.queue.as_str(), second.job.as_str()),
        ("many-b", b.as_str())
    );
    quiet(&mut sub).await;

    let none: &[&str] = &[];
    assert_eq!(
        client.subscribe_many(none).await.unwrap_err().kind(),
        echomq::ErrorKind::InvalidArgument
    );
    assert_eq!(
        client
            .subscribe_many(&["ok", "bad queue"])
            .await
            .unwrap_err()
            .kind(),
        echomq::ErrorKind::InvalidQueue
    );
}
