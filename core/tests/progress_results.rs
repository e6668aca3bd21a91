//! Issue #13 §2 and §4 against a real server: progress (the row field
//! `progress`, holder only, the `progress` event), logs (the capped LIST
//! `emq:{q}:job:<id>:logs`, deleted with the job on every path that deletes
//! its row), and results (`keep_result_ms`, `emq:{q}:job:<id>:result`,
//! `result`, `wait_for_result`); and that a client speaking 2.0.0 refuses
//! these verbs before any I/O.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::Server;
use echomq::{
    Client, ConnectOptions, ErrorKind, HandlerError, JobState, Subscription, WireVersion, Worker,
    WorkerOptions,
};
use redis::Commands;

const Q: &str = "jf";

async fn connect(server: &Server) -> Client {
    Client::connect(&server.url(), ConnectOptions::default())
        .await
        .unwrap()
}

fn row(server: &Server, id: &str) -> HashMap<String, String> {
    server
        .raw()
        .hgetall(format!("emq:{{{Q}}}:job:{id}"))
        .unwrap()
}

fn log_key(id: &str) -> String {
    format!("emq:{{{Q}}}:job:{id}:logs")
}

fn result_key(id: &str) -> String {
    format!("emq:{{{Q}}}:job:{id}:result")
}

fn exists(server: &Server, key: &str) -> bool {
    server.raw().exists(key).unwrap()
}

/// The next event about `id`, within a bound that only keeps a broken build
/// from hanging.
async fn next_for(sub: &mut Subscription, id: &str) -> echomq::QueueEvent {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), sub.next())
            .await
            .expect("an event within 10 s")
            .expect("subscription open");
        if event.job == id {
            return event;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn only_the_holder_writes_progress_and_it_is_published_after_the_write() {
    let server = Server::start();
    let client = connect(&server).await;
    // Subscribed first, so the enqueue's `added` always arrives (subscribing
    // after it would race with its delivery).
    let mut sub = client.subscribe(Q).await.unwrap();
    let id = client
        .enqueue(Q, b"p", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    assert_eq!(next_for(&mut sub, &id).await.event, "added");

    // Not held yet (pending): refused, nothing written, nothing published.
    let refused = client.update_progress(Q, &id, 0, "10").await.unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Stale);
    assert!(!row(&server, &id).contains_key("progress"));

    let job = client.claim(Q, 30_000).await.unwrap().unwrap();
    assert_eq!(next_for(&mut sub, &id).await.event, "active");
    client
        .update_progress(Q, &id, job.token, r#"{"done":3,"of":10}"#)
        .await
        .unwrap();
    assert_eq!(row(&server, &id)["progress"], r#"{"done":3,"of":10}"#);
    let event = next_for(&mut sub, &id).await;
    assert_eq!(event.event, "progress");
    assert_eq!(event.field("progress"), Some(r#"{"done":3,"of":10}"#));
    client
        .update_progress(Q, &id, job.token, "42")
        .await
        .unwrap();
    let info = client.job(Q, &id).await.unwrap().unwrap();
    assert_eq!(info.progress.as_deref(), Some("42"));
    assert_eq!(next_for(&mut sub, &id).await.field("progress"), Some("42"));

    // A stale token, or a value that is not one JSON value: refused.
    let stale = client.update_progress(Q, &id, job.token + 1, "50").await;
    assert_eq!(stale.unwrap_err().kind(), ErrorKind::Stale);
    for bad in ["", "4 2", "{"] {
        let e = client.update_progress(Q, &id, job.token, bad).await;
        assert_eq!(e.unwrap_err().kind(), ErrorKind::InvalidArgument, "{bad:?}");
    }
    assert_eq!(row(&server, &id)["progress"], "42");

    // Reaped and re-claimed: the old holder is stale, the new one writes.
    let _: () = server
        .raw()
        .zadd(format!("emq:{{{Q}}}:active"), &id, 0)
        .unwrap();
    assert_eq!(client.reap(Q, 10).await.unwrap(), 1);
    let again = client.claim(Q, 30_000).await.unwrap().unwrap();
    let old = client.update_progress(Q, &id, job.token, "99").await;
    assert_eq!(old.unwrap_err().kind(), ErrorKind::Stale);
    client
        .update_progress(Q, &id, again.token, "100")
        .await
        .unwrap();
    // A completed job is gone.
    client.complete(Q, &id, again.token).await.unwrap();
    let gone = client.update_progress(Q, &id, again.token, "1").await;
    assert_eq!(gone.unwrap_err().kind(), ErrorKind::Gone);
}

#[tokio::test(flavor = "multi_thread")]
async fn logs_are_capped_read_in_ranges_and_refused_once_the_job_is_gone() {
    let server = Server::start();
    let client = connect(&server).await;
    let id = client
        .enqueue(Q, b"l", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    for n in 1..=5 {
        let len = client
            .log(Q, &id, &format!("line {n}"), Some(3))
            .await
            .unwrap();
        assert_eq!(len, n.min(3));
    }
    let stored: Vec<String> = server.raw().lrange(log_key(&id), 0, -1).unwrap();
    assert_eq!(stored, ["line 3", "line 4", "line 5"]);
    assert_eq!(client.logs(Q, &id, 0, -1).await.unwrap(), stored);
    assert_eq!(client.logs(Q, &id, -1, -1).await.unwrap(), ["line 5"]);
    assert_eq!(client.logs(Q, &id, 0, 0).await.unwrap(), ["line 3"]);
    // The default cap is 1 000 lines.
    for n in 0..1_005 {
        client.log(Q, &id, &n.to_string(), None).await.unwrap();
    }
    let len: u64 = server.raw().llen(log_key(&id)).unwrap();
    assert_eq!(len, echomq::defaults::LOG_MAX_LINES);
    assert_eq!(client.logs(Q, &id, 0, 0).await.unwrap(), ["5"]);
    let zero = client.log(Q, &id, "x", Some(0)).await.unwrap_err();
    assert_eq!(zero.kind(), ErrorKind::InvalidArgument);
    // Never logged: an empty list.
    let other = client
        .enqueue(Q, b"o", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    assert!(client.logs(Q, &other, 0, -1).await.unwrap().is_empty());

    // Completed: the log is deleted with the row, and a late line is refused
    // (it would never be deleted).
    let job = client.claim(Q, 30_000).await.unwrap().unwrap();
    assert_eq!(job.id.as_str(), id);
    client.complete(Q, &id, job.token).await.unwrap();
    assert!(!exists(&server, &log_key(&id)));
    let late = client.log(Q, &id, "late", None).await.unwrap_err();
    assert_eq!(late.kind(), ErrorKind::Gone);
    assert!(!exists(&server, &log_key(&id)));
}

/// Issue #39 item 9: a line is capped like a payload. At the cap it is
/// written whole; one byte over is *invalid argument* and nothing is written
/// (the log keeps its length, no key for a job that never logged).
#[tokio::test(flavor = "multi_thread")]
async fn a_log_line_over_the_cap_is_refused_and_writes_nothing() {
    let server = Server::start();
    let client = connect(&server).await;
    let cap = echomq::defaults::MAX_LOG_LINE_BYTES;
    assert!(
        cap < echomq::defaults::MAX_PAYLOAD,
        "below the payload ceiling"
    );
    let id = client
        .enqueue(Q, b"l", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    let over = "x".repeat(cap + 1);
    let err = client.log(Q, &id, &over, None).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(
        !exists(&server, &log_key(&id)),
        "a refused line wrote a log"
    );
    let at = "y".repeat(cap);
    assert_eq!(client.log(Q, &id, &at, None).await.unwrap(), 1);
    let mib = "z".repeat(1024 * 1024);
    let err = client.log(Q, &id, &mib, None).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    let stored: Vec<String> = server.raw().lrange(log_key(&id), 0, -1).unwrap();
    assert_eq!(stored, [at]);
    // A smaller max_payload caps a line too.
    let small = Client::connect(
        &server.url(),
        ConnectOptions {
            max_payload: 100,
            ..ConnectOptions::default()
        },
    )
    .await
    .unwrap();
    let err = small.log(Q, &id, &"w".repeat(101), None).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(small.log(Q, &id, &"w".repeat(100), None).await.unwrap(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_path_that_deletes_a_row_deletes_its_log() {
    let server = Server::start();
    let client = connect(&server).await;
    let logged = |id: String| {
        let client = client.clone();
        async move {
            client.log(Q, &id, "hello", None).await.unwrap();
            id
        }
    };
    // complete_many
    let a = logged(
        client
            .enqueue(Q, b"a", Default::default())
            .await
            .unwrap()
            .id
            .to_string(),
    )
    .await;
    let b = logged(
        client
            .enqueue(Q, b"b", Default::default())
            .await
            .unwrap()
            .id
            .to_string(),
    )
    .await;
    let held = client.claim_many(Q, 2, 30_000).await.unwrap();
    let refs: Vec<(&str, u64)> = held.iter().map(|j| (j.id.as_str(), j.token)).collect();
    for verdict in client.complete_many(Q, &refs).await.unwrap() {
        verdict.unwrap();
    }
    for id in [&a, &b] {
        assert!(
            !exists(&server, &log_key(id)),
            "complete_many kept {id}'s log"
        );
    }
    // remove (also deletes a kept result, should one exist)
    let r = logged(
        client
            .enqueue(Q, b"r", Default::default())
            .await
            .unwrap()
            .id
            .to_string(),
    )
    .await;
    let _: () = server.raw().set(result_key(&r), "old").unwrap();
    client.remove(Q, &r).await.unwrap();
    assert!(!exists(&server, &log_key(&r)) && !exists(&server, &result_key(&r)));
    // drain (pending and scheduled)
    let d = logged(
        client
            .enqueue(Q, b"d", Default::default())
            .await
            .unwrap()
            .id
            .to_string(),
    )
    .await;
    let s = logged(
        client
            .enqueue(Q, b"s", echomq::EnqueueOptions::default().delay_ms(60_000))
            .await
            .unwrap()
            .id
            .to_string(),
    )
    .await;
    assert_eq!(client.drain(Q, true, None).await.unwrap(), 2);
    assert!(!exists(&server, &log_key(&d)) && !exists(&server, &log_key(&s)));
    // purge_dead
    let x = logged(
        client
            .enqueue(Q, b"x", Default::default())
            .await
            .unwrap()
            .id
            .to_string(),
    )
    .await;
    let job = client.claim(Q, 30_000).await.unwrap().unwrap();
    client.retry(Q, &x, job.token, 0, 1, "boom").await.unwrap();
    // A dead job keeps its log (it still has a row) until it is purged.
    assert!(exists(&server, &log_key(&x)));
    assert_eq!(client.purge_dead(Q, None, None).await.unwrap(), 1);
    assert!(!exists(&server, &log_key(&x)));
    // Nothing of the queue's jobs is left behind.
    let left: Vec<String> = server.raw().keys(format!("emq:{{{Q}}}:job:*")).unwrap();
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_keeps_results_with_their_ttl_and_wait_for_result_answers_them() {
    let server = Server::start();
    let client = connect(&server).await;
    let options = WorkerOptions {
        keep_result_ms: 60_000,
        max_attempts: 1,
        ..WorkerOptions::default()
    };
    let handler_client = client.clone();
    let worker = Worker::new_returning(client.clone(), Q, options, move |job| {
        let client = handler_client.clone();
        async move {
            let id = job.id.to_string();
            client.log(Q, &id, "working", None).await?;
            client.update_progress(Q, &id, job.token, "50").await?;
            match job.payload.as_slice() {
                b"fail" => Err(HandlerError::retry("it broke")),
                b"nothing" => Ok(None),
                other => Ok(Some([b"done:".as_slice(), other].concat())),
            }
        }
    })
    .unwrap();
    let ok = client
        .enqueue(Q, b"a", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    let empty = client
        .enqueue(Q, b"nothing", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    let dead = client
        .enqueue(Q, b"fail", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    // Waiting starts before the worker runs: the wait is woken by events.
    let waiter = {
        let (client, ok) = (client.clone(), ok.clone());
        tokio::spawn(async move {
            client
                .wait_for_result(Q, &ok, Duration::from_secs(20))
                .await
        })
    };
    let handle = worker.spawn();
    assert_eq!(waiter.await.unwrap().unwrap(), b"done:a");
    let value = client
        .wait_for_result(Q, &empty, Duration::from_secs(20))
        .await
        .unwrap();
    assert!(value.is_empty());
    let failed = client
        .wait_for_result(Q, &dead, Duration::from_secs(20))
        .await
        .unwrap_err();
    assert_eq!(failed.kind(), ErrorKind::JobDead);
    assert_eq!(failed.last_error(), Some("it broke"));
    handle.stop();
    handle.join().unwrap();

    // Wire state: the row is gone; the result and the log share the TTL.
    assert!(row(&server, &ok).is_empty());
    let stored: Vec<u8> = server.raw().get(result_key(&ok)).unwrap();
    assert_eq!(stored, b"done:a");
    let result_ttl: i64 = server.raw().pttl(result_key(&ok)).unwrap();
    let log_ttl: i64 = server.raw().pttl(log_key(&ok)).unwrap();
    assert!((50_000..=60_000).contains(&result_ttl), "{result_ttl}");
    assert!((50_000..=60_000).contains(&log_ttl), "{log_ttl}");
    assert_eq!(client.logs(Q, &ok, 0, -1).await.unwrap(), ["working"]);
    assert_eq!(client.result(Q, &ok).await.unwrap().unwrap(), b"done:a");
    // The queue handle's verbs are the client's, without the name.
    let q = client.queue(Q).unwrap();
    assert_eq!(q.logs(&ok, 0, -1).await.unwrap(), ["working"]);
    assert_eq!(q.result(&ok).await.unwrap().unwrap(), b"done:a");
    let kept = q
        .wait_for_result(&ok, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(kept, b"done:a");
    // The dead job keeps its row (with its progress) and its log; no result.
    let dead_row = row(&server, &dead);
    assert_eq!(
        (dead_row["state"].as_str(), dead_row["progress"].as_str()),
        ("dead", "50")
    );
    assert!(client.result(Q, &dead).await.unwrap().is_none());
    assert!(exists(&server, &log_key(&dead)));
    // An id with neither a row nor a result is gone at once.
    let unknown = echomq::id::mint_job_id().to_string();
    let gone = client
        .wait_for_result(Q, &unknown, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert_eq!(gone.kind(), ErrorKind::Gone);
}

/// Issue #39 item 2: a kept result over `max_payload` can never be settled.
/// The attempt fails at once with that reason and the retry policy applies
/// (here: dead after 2 attempts, counted), instead of the job sitting active
/// for a lease, running again and dying as `stalled`. A job settled beside
/// it completes as usual.
#[tokio::test(flavor = "multi_thread")]
async fn a_result_over_max_payload_fails_the_attempt_with_its_reason() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let server = Server::start();
    let client = connect(&server).await;
    let options = WorkerOptions {
        keep_result_ms: 60_000,
        max_attempts: 2,
        backoff_base_ms: 10,
        pump_interval_ms: 100,
        // A settlement refused as transient would leave the job active for
        // this long: far past the bound below.
        lease_ms: 120_000,
        concurrency: 2,
        ..WorkerOptions::default()
    };
    let big_runs = Arc::new(AtomicU64::new(0));
    let runs = big_runs.clone();
    let worker = Worker::new_returning(client.clone(), Q, options, move |job| {
        let runs = runs.clone();
        async move {
            if job.payload == b"big" {
                runs.fetch_add(1, Ordering::SeqCst);
                return Ok(Some(vec![b'r'; echomq::defaults::MAX_PAYLOAD + 1]));
            }
            Ok(Some(b"small".to_vec()))
        }
    })
    .unwrap();
    let big = client
        .enqueue(Q, b"big", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    let ok = client
        .enqueue(Q, b"ok", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    let handle = worker.spawn();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while row(&server, &big).get("state").map(String::as_str) != Some("dead") {
        assert!(
            std::time::Instant::now() < deadline,
            "not dead within 30 s: {:?}",
            row(&server, &big)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let value = client
        .wait_for_result(Q, &ok, Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!(value, b"small");
    handle.stop();
    handle.join().unwrap();

    let dead = row(&server, &big);
    assert_eq!(dead["attempts"], "2", "{dead:?}");
    assert!(
        dead["last_error"].starts_with("result too large"),
        "{dead:?}"
    );
    assert!(!dead.contains_key("stalled"), "{dead:?}");
    assert!(!exists(&server, &result_key(&big)));
    assert_eq!(big_runs.load(Ordering::SeqCst), 2, "one run per attempt");
    let stats = worker.stats();
    assert_eq!(
        (
            stats.completed,
            stats.retried,
            stats.dead,
            stats.settle_failures,
            stats.lease_lost,
            stats.in_flight
        ),
        (1, 1, 1, 0, 0, 0),
        "{stats:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_keep_result_ms_completion_deletes_everything_and_waiting_times_out() {
    let server = Server::start();
    let client = connect(&server).await;
    let worker = Worker::new_returning(client.clone(), Q, WorkerOptions::default(), |_job| async {
        Ok(Some(b"dropped".to_vec()))
    })
    .unwrap();
    let id = client
        .enqueue(Q, b"a", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    client.log(Q, &id, "one", None).await.unwrap();
    let handle = worker.spawn();
    let settled = client
        .wait_for(Q, &id, Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!(settled, echomq::Settled::Completed);
    handle.stop();
    handle.join().unwrap();
    assert!(!exists(&server, &log_key(&id)) && !exists(&server, &result_key(&id)));
    assert!(client.result(Q, &id).await.unwrap().is_none());

    // A job that stays pending: the wait times out.
    let pending = client
        .enqueue("idle", b"p", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    let timeout = client
        .wait_for_result("idle", &pending, Duration::from_millis(300))
        .await
        .unwrap_err();
    assert_eq!(timeout.kind(), ErrorKind::Timeout);
    let info = client.job("idle", &pending).await.unwrap().unwrap();
    assert_eq!((info.state, info.progress), (JobState::Pending, None));
}

#[tokio::test(flavor = "multi_thread")]
async fn speaking_2_0_0_the_new_verbs_answer_unsupported_before_any_io() {
    let server = Server::start();
    let _: () = server.raw().set("{emq}:version", "echomq:2.0.0").unwrap();
    let old = Client::connect(
        &server.url(),
        ConnectOptions {
            wire_version: WireVersion::V2_0_0,
            ..ConnectOptions::default()
        },
    )
    .await
    .unwrap();
    let id = old
        .enqueue(Q, b"x", Default::default())
        .await
        .unwrap()
        .id
        .to_string();
    // Closing first proves no I/O happens: a verb that reached the wire
    // would answer *closed*.
    old.close();
    let t = Duration::from_millis(100);
    let answers = [
        old.update_progress(Q, &id, 1, "1").await.map(drop),
        old.log(Q, &id, "x", None).await.map(drop),
        old.logs(Q, &id, 0, -1).await.map(drop),
        old.result(Q, &id).await.map(drop),
        old.wait_for_result(Q, &id, t).await.map(drop),
    ];
    for answer in answers {
        assert_eq!(answer.unwrap_err().kind(), ErrorKind::Unsupported);
    }
    let keep = WorkerOptions {
        keep_result_ms: 1_000,
        ..WorkerOptions::default()
    };
    let refused = Worker::new(old.clone(), Q, keep, |_| async { Ok(()) }).unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Unsupported);

    // And the 2.0.0 scripts keep their behaviour: complete leaves a stray
    // log alone (2.0.0 has no logs), the 2.1.0 variant is not recorded.
    let old = Client::connect(
        &server.url(),
        ConnectOptions {
            wire_version: WireVersion::V2_0_0,
            ..ConnectOptions::default()
        },
    )
    .await
    .unwrap();
    let _: () = server.raw().rpush(log_key(&id), "stray").unwrap();
    let job = old.claim(Q, 30_000).await.unwrap().unwrap();
    old.complete(Q, &id, job.token).await.unwrap();
    assert!(exists(&server, &log_key(&id)));
    let recorded: Option<String> = server
        .raw()
        .hget("{emq}:bundle", "complete_result")
        .unwrap();
    assert!(recorded.is_none());
}

/// Issue #33: job-specific errors name their job, whether the script's reply
/// says so (`wait_for_result` on a dead or removed job) or a wire refusal does
/// not (`EMQSTALE job gone` from `update_progress` after a remove).
#[tokio::test(flavor = "multi_thread")]
async fn job_errors_carry_the_job_id_even_from_a_wire_refusal() {
    let server = Server::start();
    let client = connect(&server).await;
    let a = client.enqueue(Q, "a", Default::default()).await.unwrap().id;
    let b = client.enqueue(Q, "b", Default::default()).await.unwrap().id;
    let job = client.claim(Q, 60_000).await.unwrap().unwrap();
    assert_eq!(job.id, a);
    client
        .retry(Q, a.as_str(), job.token, 0, 1, "boom")
        .await
        .unwrap();
    assert_eq!(row(&server, a.as_str())["state"], "dead");
    let dead = client
        .wait_for_result(Q, a.as_str(), Duration::from_secs(20))
        .await
        .unwrap_err();
    assert_eq!(dead.kind(), ErrorKind::JobDead);
    assert_eq!(
        (dead.job_id(), dead.last_error()),
        (Some(a.as_str()), Some("boom"))
    );
    client.remove(Q, b.as_str()).await.unwrap();
    assert!(row(&server, b.as_str()).is_empty());
    let refused = client
        .update_progress(Q, b.as_str(), 1, "1")
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Gone);
    assert_eq!(refused.job_id(), Some(b.as_str()));
    let stale = client
        .update_progress(Q, a.as_str(), 99, "1")
        .await
        .unwrap_err();
    assert_eq!(
        (stale.kind(), stale.job_id()),
        (ErrorKind::Stale, Some(a.as_str()))
    );
}
