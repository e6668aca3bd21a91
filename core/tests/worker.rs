//! The worker runtime against a real redis-server (issue #6, the Rust side).

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::Server;
use echomq::{Backoff, Client, ConnectOptions, HandlerError, Worker, WorkerOptions};
use redis::Commands;

const Q: &str = "work";

async fn connect(server: &Server) -> Client {
    Client::connect(&server.url(), ConnectOptions::default())
        .await
        .unwrap()
}

fn fast() -> WorkerOptions {
    WorkerOptions {
        concurrency: 8,
        lease_ms: 5_000,
        backoff: Backoff::Fixed,
        backoff_base_ms: 10,
        backoff_cap_ms: 10,
        pump_interval_ms: 20,
        idle_max_ms: 20,
        shutdown_grace_ms: 5_000,
        ..WorkerOptions::default()
    }
}

/// Wait (bounded) until `done` holds; the bound only keeps a broken build from hanging.
async fn until(mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "condition not reached in 30 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Run the worker on its own task; await the handle after `stop()`.
fn start(worker: &Worker) -> tokio::task::JoinHandle<echomq::Result<()>> {
    let w = worker.clone();
    tokio::spawn(async move { w.run().await })
}

/// A worker whose handler records the token of every job it runs (then works
/// for `work`), and that record.
fn token_recording_worker(
    client: &Client,
    queue: &str,
    options: WorkerOptions,
    work: Duration,
) -> (Worker, Arc<Mutex<Vec<u64>>>) {
    let tokens: Arc<Mutex<Vec<u64>>> = Arc::default();
    let record = tokens.clone();
    let worker = Worker::new(client.clone(), queue, options, move |job| {
        let record = record.clone();
        async move {
            record.lock().unwrap().push(job.token);
            tokio::time::sleep(work).await;
            Ok(())
        }
    })
    .unwrap();
    (worker, tokens)
}

/// Enqueue 40 jobs, run a concurrency-5 worker whose handlers take 150 ms,
/// stop it once 5 are claimed, and answer its stats after the drain.
async fn stop_while_busy(client: &Client, prefetch: Option<usize>) -> echomq::WorkerStats {
    let payloads: Vec<String> = (0..40).map(|i| i.to_string()).collect();
    client
        .enqueue_many(Q, &echomq::EnqueueOptions::defaults_for(&payloads))
        .await
        .unwrap();
    let options = WorkerOptions {
        concurrency: 5,
        prefetch,
        ..fast()
    };
    let worker = Worker::new(client.clone(), Q, options, |_job| async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        Ok(())
    })
    .unwrap();
    let running = start(&worker);
    until(|| worker.stats().claimed >= 5).await;
    worker.stop();
    running.await.unwrap().unwrap();
    worker.stats()
}

fn set_len(raw: &mut redis::Connection, set: &str) -> u64 {
    raw.zcard(format!("emq:{{{Q}}}:{set}")).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_job_is_processed_exactly_once() {
    let server = Server::start();
    let client = connect(&server).await;
    let n = 300;
    let payloads: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    for v in client
        .enqueue_many(Q, &echomq::EnqueueOptions::defaults_for(&payloads))
        .await
        .unwrap()
    {
        v.unwrap();
    }
    let seen: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
    let record = seen.clone();
    let worker = Worker::new(client.clone(), Q, fast(), move |job| {
        let record = record.clone();
        async move {
            *record
                .lock()
                .unwrap()
                .entry(String::from_utf8(job.payload).unwrap())
                .or_default() += 1;
            Ok(())
        }
    })
    .unwrap();
    let running = start(&worker);
    until(|| worker.stats().completed == n).await;
    worker.stop();
    running.await.unwrap().unwrap();

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), n as usize);
    assert!(seen.values().all(|&c| c == 1));
    let mut raw = server.raw();
    for set in ["pending", "active", "schedule", "dead"] {
        assert_eq!(set_len(&mut raw, set), 0, "{set}");
    }
    let rows: Vec<String> = redis::cmd("KEYS")
        .arg(format!("emq:{{{Q}}}:job:*"))
        .query(&mut raw)
        .unwrap();
    assert!(rows.is_empty());
    let stats = worker.stats();
    assert_eq!(
        (
            stats.claimed,
            stats.completed,
            stats.in_flight,
            stats.lease_lost
        ),
        (n, n, 0, 0)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_handler_is_retried_then_dead_lettered_with_its_message() {
    let server = Server::start();
    let client = connect(&server).await;
    let e = client
        .enqueue(Q, "doomed", Default::default())
        .await
        .unwrap();
    let options = WorkerOptions {
        max_attempts: 3,
        ..fast()
    };
    let worker = Worker::new(client.clone(), Q, options, |job| async move {
        Err::<(), _>(HandlerError::retry(format!("attempt {} failed", job.token)))
    })
    .unwrap();
    let running = start(&worker);
    until(|| worker.stats().dead == 1).await;
    worker.stop();
    running.await.unwrap().unwrap();

    let mut raw = server.raw();
    let row: HashMap<String, String> = raw.hgetall(format!("emq:{{{Q}}}:job:{}", e.id)).unwrap();
    assert_eq!(row["state"], "dead");
    assert_eq!(row["attempts"], "3");
    assert_eq!(row["last_error"], "attempt 3 failed");
    assert_eq!(set_len(&mut raw, "dead"), 1);
    assert_eq!(worker.stats().retried, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn fatal_errors_and_panics_are_failures_not_crashes() {
    let server = Server::start();
    let client = connect(&server).await;
    let fatal = client
        .enqueue(Q, "fatal", Default::default())
        .await
        .unwrap();
    let panics = client
        .enqueue(Q, "panic", Default::default())
        .await
        .unwrap();
    let ok = client.enqueue(Q, "ok", Default::default()).await.unwrap();
    let options = WorkerOptions {
        max_attempts: 2,
        ..fast()
    };
    let worker = Worker::new(client.clone(), Q, options, |job| async move {
        match job.payload.as_slice() {
            b"fatal" => Err(HandlerError::fatal("no such customer")),
            b"panic" => panic!("handler blew up"),
            _ => Ok(()),
        }
    })
    .unwrap();
    let running = start(&worker);
    until(|| worker.stats().dead == 2 && worker.stats().completed == 1).await;
    worker.stop();
    running.await.unwrap().unwrap();

    let info = client.job(Q, fatal.id.as_str()).await.unwrap().unwrap();
    assert_eq!(
        (info.attempts, info.last_error.as_deref()),
        (1, Some("no such customer"))
    );
    let info = client.job(Q, panics.id.as_str()).await.unwrap().unwrap();
    assert_eq!(info.attempts, 2);
    assert!(info.last_error.unwrap().contains("handler blew up"));
    assert!(client.job(Q, ok.id.as_str()).await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn heartbeats_keep_a_long_handler_from_being_reaped() {
    let server = Server::start();
    let client = connect(&server).await;
    let e = client.enqueue(Q, "slow", Default::default()).await.unwrap();
    // The handler runs three times the lease; the pumps reap every 20 ms.
    let options = WorkerOptions {
        lease_ms: 300,
        ..fast()
    };
    let (worker, tokens) = token_recording_worker(&client, Q, options, Duration::from_millis(900));
    let running = start(&worker);
    until(|| worker.stats().completed == 1).await;
    worker.stop();
    running.await.unwrap().unwrap();
    assert_eq!(
        *tokens.lock().unwrap(),
        vec![1],
        "ran once, with its original token"
    );
    assert_eq!(worker.stats().lease_lost, 0);
    assert!(client.job(Q, e.id.as_str()).await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crashed_holders_job_is_recovered_by_the_reaper() {
    let server = Server::start();
    let client = connect(&server).await;
    let e = client
        .enqueue(Q, "orphan", Default::default())
        .await
        .unwrap();
    // A "worker" claims it and dies without settling.
    let orphan = client.claim(Q, 200).await.unwrap().unwrap();
    assert_eq!(orphan.token, 1);
    let (worker, tokens) = token_recording_worker(&client, Q, fast(), Duration::ZERO);
    let running = start(&worker);
    until(|| worker.stats().completed == 1).await;
    worker.stop();
    running.await.unwrap().unwrap();
    assert_eq!(*tokens.lock().unwrap(), vec![2]);
    assert!(client.job(Q, e.id.as_str()).await.unwrap().is_none());
    // The crashed holder's late settlement is refused.
    assert!(client.complete(Q, e.id.as_str(), 1).await.is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn graceful_stop_settles_in_flight_jobs_and_leaves_nothing_active() {
    let server = Server::start();
    let client = connect(&server).await;
    let stats = stop_while_busy(&client, None).await;
    assert_eq!(stats.in_flight, 0);
    // Running handlers finished and completed; prefetched jobs (claimed, never
    // started) went straight back to pending, unrun.
    assert!(stats.completed >= 5, "{stats:?}");
    let released = stats.claimed - stats.completed;
    assert!(
        released <= 5,
        "at most `prefetch` (= concurrency) waiting: {stats:?}"
    );
    let mut raw = server.raw();
    assert_eq!(set_len(&mut raw, "active"), 0);
    assert_eq!(set_len(&mut raw, "schedule"), 0);
    assert_eq!(set_len(&mut raw, "pending"), 40 - stats.completed);
    // A released job was claimed once (attempts kept, so the next token is 2)
    // and carries no error.
    let pending = client
        .browse(Q, echomq::BrowseSet::Pending, false, 40, None)
        .await
        .unwrap();
    let attempts: Vec<u64> = {
        let mut out = Vec::new();
        for id in &pending {
            let info = client.job(Q, id.as_str()).await.unwrap().unwrap();
            assert_eq!(info.last_error, None);
            out.push(info.attempts);
        }
        out
    };
    assert_eq!(
        attempts.iter().filter(|&&a| a == 1).count() as u64,
        released
    );
    assert_eq!(
        attempts.iter().filter(|&&a| a == 0).count() as u64,
        40 - stats.claimed
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_prefetch_a_stop_leaves_only_unclaimed_jobs_pending() {
    let server = Server::start();
    let client = connect(&server).await;
    let stats = stop_while_busy(&client, Some(0)).await;
    assert_eq!(stats.completed, stats.claimed, "{stats:?}");
    let mut raw = server.raw();
    assert_eq!(set_len(&mut raw, "active"), 0);
    assert_eq!(set_len(&mut raw, "schedule"), 0);
    assert_eq!(set_len(&mut raw, "pending"), 40 - stats.completed);
}

#[tokio::test(flavor = "multi_thread")]
async fn handlers_past_the_grace_period_are_released_to_pending() {
    let server = Server::start();
    let client = connect(&server).await;
    let e = client
        .enqueue(Q, "stuck", Default::default())
        .await
        .unwrap();
    let options = WorkerOptions {
        shutdown_grace_ms: 100,
        ..fast()
    };
    let worker = Worker::new(client.clone(), Q, options, |_job| async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(())
    })
    .unwrap();
    let running = start(&worker);
    until(|| worker.stats().claimed == 1).await;
    worker.stop();
    running.await.unwrap().unwrap();
    let mut raw = server.raw();
    assert_eq!(set_len(&mut raw, "active"), 0);
    assert_eq!(set_len(&mut raw, "pending"), 1);
    let info = client.job(Q, e.id.as_str()).await.unwrap().unwrap();
    assert_eq!(info.state, echomq::JobState::Pending);
    assert_eq!(info.attempts, 1);
    // Attempts kept: the next claim mints token 2, so the abandoned holder's
    // token 1 is stale from then on.
    assert_eq!(client.claim(Q, 1000).await.unwrap().unwrap().token, 2);
}

#[test]
fn blocking_handlers_run_on_the_blocking_pool() {
    let server = Server::start();
    let client =
        echomq::blocking::Client::connect(&server.url(), ConnectOptions::default()).unwrap();
    for i in 0..50 {
        client
            .enqueue(Q, format!("{i}"), Default::default())
            .unwrap();
    }
    let worker = Worker::new_blocking(client.as_async().clone(), Q, fast(), |job| {
        std::thread::sleep(Duration::from_millis(2));
        if job.payload == b"13" && job.token == 1 {
            return Err(HandlerError::retry("unlucky"));
        }
        Ok(())
    })
    .unwrap();
    let handle = worker.spawn();
    let deadline = Instant::now() + Duration::from_secs(30);
    while worker.stats().completed < 50 {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(10));
    }
    handle.stop();
    handle.join().unwrap();
    let stats = worker.stats();
    assert_eq!((stats.completed, stats.retried), (50, 1));
    assert_eq!(client.counts(Q).unwrap().completed, 50);
}

#[test]
fn bad_worker_options_are_refused() {
    let server = Server::start();
    let client =
        echomq::blocking::Client::connect(&server.url(), ConnectOptions::default()).unwrap();
    let bad = WorkerOptions {
        concurrency: 0,
        ..WorkerOptions::default()
    };
    let err = Worker::new_blocking(client.as_async().clone(), Q, bad, |_| Ok(())).unwrap_err();
    assert_eq!(err.kind(), echomq::ErrorKind::InvalidArgument);
    let err = Worker::new_blocking(
        client.as_async().clone(),
        "emq",
        WorkerOptions::default(),
        |_| Ok(()),
    )
    .unwrap_err();
    assert_eq!(err.kind(), echomq::ErrorKind::InvalidQueue);
}

#[test]
fn backoff_policies() {
    let o = WorkerOptions {
        backoff_base_ms: 100,
        backoff_cap_ms: 1_000,
        ..WorkerOptions::default()
    };
    assert_eq!(
        [1, 2, 3, 4, 5, 60].map(|a| o.backoff_ms(a)),
        [100, 200, 400, 800, 1_000, 1_000]
    );
    let fixed = WorkerOptions {
        backoff: Backoff::Fixed,
        ..o.clone()
    };
    assert_eq!(fixed.backoff_ms(7), 100);
    let jitter = WorkerOptions {
        backoff: Backoff::FullJitter,
        ..o
    };
    assert!((0..100).all(|_| jitter.backoff_ms(3) <= 400));
}

/// Not a test on its own: `a_sigkilled_worker_process_loses_nothing` re-runs
/// this binary with only this function (`--ignored`) and `EMQ_CHILD_WORKER_URL`
/// set, to get a real worker process (whose handler never returns) that it can
/// SIGKILL. Ignored so that a plain run does not count it as a passing test.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "started by a_sigkilled_worker_process_loses_nothing"]
async fn child_worker_process() {
    let Ok(url) = std::env::var("EMQ_CHILD_WORKER_URL") else {
        return;
    };
    let client = Client::connect(&url, ConnectOptions::default())
        .await
        .unwrap();
    let options = WorkerOptions {
        lease_ms: 1_000,
        ..fast()
    };
    let worker = Worker::new(client, "kill", options, |_job| async move {
        tokio::time::sleep(Duration::from_secs(600)).await;
        Ok(())
    })
    .unwrap();
    worker.run().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sigkilled_worker_process_loses_nothing() {
    let server = Server::start();
    let client = connect(&server).await;
    let e = client
        .enqueue("kill", "orphan", Default::default())
        .await
        .unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_worker_process",
            "--ignored",
            "--test-threads",
            "1",
        ])
        .env("EMQ_CHILD_WORKER_URL", server.url())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut raw = server.raw();
    until(|| raw.zcard::<_, u64>("emq:{kill}:active").unwrap() == 1).await;
    child.kill().unwrap(); // SIGKILL: no drain, no settlement
    child.wait().unwrap();

    let (worker, tokens) = token_recording_worker(&client, "kill", fast(), Duration::ZERO);
    let running = start(&worker);
    until(|| worker.stats().completed == 1).await;
    worker.stop();
    running.await.unwrap().unwrap();
    assert_eq!(
        *tokens.lock().unwrap(),
        vec![2],
        "a new life after the lease lapsed"
    );
    assert!(client.job("kill", e.id.as_str()).await.unwrap().is_none());
    assert_eq!(raw.zcard::<_, u64>("emq:{kill}:active").unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn batch_handlers_get_bounded_batches_and_answer_per_job() {
    let server = Server::start();
    let client = connect(&server).await;
    let payloads: Vec<String> = (0..100).map(|i| i.to_string()).collect();
    client
        .enqueue_many(Q, &echomq::EnqueueOptions::defaults_for(&payloads))
        .await
        .unwrap();
    let options = WorkerOptions {
        concurrency: 16,
        handler_batch: 8,
        max_attempts: 1,
        ..fast()
    };
    let sizes: Arc<Mutex<Vec<usize>>> = Arc::default();
    let seen = sizes.clone();
    let worker = Worker::new_blocking_batch(client.clone(), Q, options, move |jobs| {
        seen.lock().unwrap().push(jobs.len());
        let mut verdicts: Vec<echomq::Verdict> = jobs
            .iter()
            .map(|job| match job.payload.as_slice() {
                b"7" => Err(HandlerError::retry("seven fails alone")),
                _ => Ok(()),
            })
            .collect();
        // The batch holding "42" answers one verdict short: its last job,
        // left without a verdict, fails.
        if jobs.iter().any(|j| j.payload == b"42") {
            verdicts.pop();
        }
        verdicts
    })
    .unwrap();
    let running = start(&worker);
    until(|| worker.stats().completed + worker.stats().dead == 100).await;
    worker.stop();
    running.await.unwrap().unwrap();

    let sizes = sizes.lock().unwrap().clone();
    assert!(sizes.iter().all(|&n| (1..=8).contains(&n)), "{sizes:?}");
    assert!(sizes.iter().any(|&n| n > 1), "jobs were batched: {sizes:?}");
    assert_eq!(
        sizes.iter().sum::<usize>(),
        100,
        "each job handed over once"
    );
    let stats = worker.stats();
    assert_eq!((stats.completed, stats.dead), (98, 2), "{stats:?}");
    let mut raw = server.raw();
    assert_eq!(set_len(&mut raw, "dead"), 2);
    assert_eq!(set_len(&mut raw, "active"), 0);
    assert_eq!(set_len(&mut raw, "pending"), 0);
    let dead = client
        .browse(Q, echomq::BrowseSet::Dead, false, 10, None)
        .await
        .unwrap();
    let mut errors: Vec<String> = Vec::new();
    for id in dead {
        let info = client.job(Q, id.as_str()).await.unwrap().unwrap();
        errors.push(info.last_error.unwrap_or_default());
    }
    errors.sort();
    assert_eq!(errors[0], "seven fails alone");
    assert!(errors[1].contains("answered"), "{errors:?}");
}
