//! The operator verbs (issue #14, and #13 §5 dead-set retention) against a
//! real redis-server, asserting wire state as well as the answers.

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::Server;
use echomq::{
    BrowseSet, Client, ConnectOptions, DeadBound, ErrorKind, HandlerError, Worker, WorkerOptions,
};
use redis::Commands;

const Q: &str = "ops";

async fn connect(server: &Server) -> Client {
    Client::connect(&server.url(), ConnectOptions::default())
        .await
        .unwrap()
}

fn key(suffix: &str) -> String {
    format!("emq:{{{Q}}}:{suffix}")
}

fn members(raw: &mut redis::Connection, set: &str) -> Vec<String> {
    raw.zrange(key(set), 0, -1).unwrap()
}

fn exists(raw: &mut redis::Connection, k: &str) -> bool {
    raw.exists(k).unwrap()
}

/// An id minted `ago_ms` before now (zero node and sequence bits), so tests
/// can place dead jobs at known ages.
fn id_minted_ago(ago_ms: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    echomq::id::lex_bound(now - ago_ms)
}

/// Enqueue under each id, then claim each and fail it into the dead set.
async fn make_dead(client: &Client, ids: &[String]) {
    for id in ids {
        client
            .enqueue(Q, b"p", echomq::EnqueueOptions::default().id(id))
            .await
            .unwrap();
    }
    for _ in ids {
        let job = client.claim(Q, 10_000).await.unwrap().unwrap();
        let outcome = client
            .retry(Q, job.id.as_str(), job.token, 0, 1, "boom")
            .await
            .unwrap();
        assert_eq!(outcome, echomq::RetryOutcome::Dead);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn queues_lists_every_queue_by_its_keys_including_empty_paused_ones() {
    let server = Server::start();
    let client = connect(&server).await;
    client
        .enqueue("b-queue", b"x", Default::default())
        .await
        .unwrap();
    client
        .enqueue(
            "a.queue",
            b"x",
            echomq::EnqueueOptions::default().delay_ms(60_000),
        )
        .await
        .unwrap();
    client.pause("empty_1").await.unwrap();
    let mut raw = server.raw();
    // Not of the grammar, or a bare row: neither names a queue.
    let _: () = raw.set("emq:{nope}", "1").unwrap();
    let _: () = raw.set("bull:other:wait", "1").unwrap();
    let _: () = raw
        .hset("emq:{rowonly}:job:JOB0NgWEfAEJfs", "state", "pending")
        .unwrap();
    assert_eq!(
        client.queues().await.unwrap(),
        vec!["a.queue", "b-queue", "empty_1"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn queues_walks_every_scan_step() {
    let server = Server::start();
    let client = connect(&server).await;
    let names: Vec<String> = (0..1500).map(|i| format!("q{i:04}")).collect();
    let mut raw = server.raw();
    let mut pipe = redis::pipe();
    for n in &names {
        pipe.hset(format!("emq:{{{n}}}:meta"), "paused", "1")
            .ignore();
    }
    let _: () = pipe.query(&mut raw).unwrap();
    assert_eq!(client.queues().await.unwrap(), names);
}

#[tokio::test(flavor = "multi_thread")]
async fn inspect_answers_the_row_and_the_sets_holding_the_id() {
    let server = Server::start();
    let client = connect(&server).await;
    let e = client
        .enqueue(
            Q,
            b"later",
            echomq::EnqueueOptions::default().run_at_ms(4_000_000_000_000),
        )
        .await
        .unwrap();
    let view = client.inspect(Q, e.id.as_str()).await.unwrap().unwrap();
    assert_eq!(view.row["state"], b"scheduled");
    assert_eq!(view.row["payload"], b"later");
    assert_eq!(view.sets, vec![(BrowseSet::Schedule, 4_000_000_000_000.0)]);
    let missing = echomq::id::mint_job_id();
    assert!(client.inspect(Q, missing.as_str()).await.unwrap().is_none());
    assert_eq!(
        client.inspect(Q, "nope").await.unwrap_err().kind(),
        ErrorKind::InvalidId
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn drain_deletes_waiting_jobs_and_their_logs_but_not_active_ones() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let held = client
        .enqueue(Q, b"held", Default::default())
        .await
        .unwrap()
        .id;
    let job = client.claim(Q, 60_000).await.unwrap().unwrap();
    assert_eq!(job.id, held);
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(
            client
                .enqueue(Q, b"p", Default::default())
                .await
                .unwrap()
                .id
                .to_string(),
        );
    }
    let later = client
        .enqueue(
            Q,
            b"later",
            echomq::EnqueueOptions::default().delay_ms(60_000),
        )
        .await
        .unwrap()
        .id;
    let logs = key(&format!("job:{}:logs", ids[0]));
    let _: () = raw.rpush(&logs, "a line").unwrap();

    assert_eq!(client.drain(Q, false, None).await.unwrap(), 5);
    assert!(members(&mut raw, "pending").is_empty());
    for id in &ids {
        assert!(!exists(&mut raw, &key(&format!("job:{id}"))));
    }
    assert!(!exists(&mut raw, &logs));
    assert_eq!(members(&mut raw, "active"), vec![held.to_string()]);
    assert!(exists(&mut raw, &key(&format!("job:{held}"))));
    assert_eq!(members(&mut raw, "schedule"), vec![later.to_string()]);

    assert_eq!(client.drain(Q, true, None).await.unwrap(), 1);
    assert!(members(&mut raw, "schedule").is_empty());
    assert!(!exists(&mut raw, &key(&format!("job:{later}"))));
    // The held job still settles.
    client.complete(Q, held.as_str(), job.token).await.unwrap();
    assert_eq!(
        client.drain(Q, false, Some(0)).await.unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn drain_works_in_batches_and_honours_the_limit() {
    let server = Server::start();
    let client = connect(&server).await;
    let payloads: Vec<Vec<u8>> = (0..1_203).map(|i| format!("{i}").into_bytes()).collect();
    for v in client
        .enqueue_many(Q, &echomq::EnqueueOptions::defaults_for(&payloads))
        .await
        .unwrap()
    {
        v.unwrap();
    }
    assert_eq!(client.drain(Q, false, Some(700)).await.unwrap(), 700);
    assert_eq!(client.counts(Q).await.unwrap().pending, 503);
    // The oldest went first: what is left are the newest 503.
    let left = client
        .browse(Q, BrowseSet::Pending, false, 1, None)
        .await
        .unwrap();
    let row = client.job(Q, left[0].as_str()).await.unwrap().unwrap();
    assert_eq!(row.payload, b"700");
    assert_eq!(client.drain(Q, false, None).await.unwrap(), 503);
    let mut raw = server.raw();
    let rows: Vec<String> = raw.keys(key("job:*")).unwrap();
    assert!(rows.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn purge_dead_deletes_the_oldest_first_by_mint_time() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let ids = vec![
        id_minted_ago(3 * 3_600_000),
        id_minted_ago(2 * 3_600_000),
        id_minted_ago(60_000),
    ];
    make_dead(&client, &ids).await;
    for id in &ids {
        let _: () = raw.rpush(key(&format!("job:{id}:logs")), "x").unwrap();
    }
    assert_eq!(
        client.purge_dead(Q, Some(3_600_000), None).await.unwrap(),
        2
    );
    assert_eq!(members(&mut raw, "dead"), vec![ids[2].clone()]);
    for id in &ids[..2] {
        assert!(!exists(&mut raw, &key(&format!("job:{id}"))));
        assert!(!exists(&mut raw, &key(&format!("job:{id}:logs"))));
    }
    assert!(exists(&mut raw, &key(&format!("job:{}:logs", ids[2]))));
    // Nothing is older than a day; no bound purges everything (up to the limit).
    assert_eq!(
        client.purge_dead(Q, Some(86_400_000), None).await.unwrap(),
        0
    );
    assert_eq!(client.purge_dead(Q, None, Some(5)).await.unwrap(), 1);
    assert!(members(&mut raw, "dead").is_empty());
    assert_eq!(client.counts(Q).await.unwrap().failed, 3, "counters kept");
}

#[tokio::test(flavor = "multi_thread")]
async fn trim_dead_keeps_the_newest_max_len() {
    let server = Server::start();
    let client = connect(&server).await;
    let ids: Vec<String> = (1..=5).map(|h| id_minted_ago(h * 60_000)).collect();
    make_dead(&client, &ids).await;
    let bound = DeadBound {
        older_than_ms: None,
        max_len: Some(2),
    };
    assert_eq!(client.trim_dead(Q, bound, None).await.unwrap(), 3);
    let mut raw = server.raw();
    // ids[0] is the newest (1 minute old), ids[1] the next.
    let mut left = members(&mut raw, "dead");
    left.sort();
    let mut want = vec![ids[1].clone(), ids[0].clone()];
    want.sort();
    assert_eq!(left, want);
    assert_eq!(
        client
            .trim_dead(Q, DeadBound::default(), None)
            .await
            .unwrap(),
        0
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn requeue_all_dead_moves_every_dead_job_back_to_pending() {
    let server = Server::start();
    let client = connect(&server).await;
    let ids: Vec<String> = (1..=3).map(|m| id_minted_ago(m * 1_000)).collect();
    make_dead(&client, &ids).await;
    let mut raw = server.raw();
    // As a stall-dead job carries it (13.7): the requeue resets it.
    let _: () = raw
        .hset(key(&format!("job:{}", ids[0])), "stalled", "2")
        .unwrap();
    assert_eq!(client.requeue_all_dead(Q, None).await.unwrap(), 3);
    assert!(members(&mut raw, "dead").is_empty());
    assert_eq!(members(&mut raw, "pending").len(), 3);
    for id in &ids {
        let row: HashMap<String, String> = raw.hgetall(key(&format!("job:{id}"))).unwrap();
        assert_eq!(row["state"], "pending");
        assert_eq!(row["attempts"], "0");
        assert!(!row.contains_key("last_error"));
        assert!(!row.contains_key("stalled"));
    }
    assert_eq!(client.requeue_all_dead(Q, None).await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_worker_pump_applies_dead_max_len() {
    let server = Server::start();
    let client = connect(&server).await;
    for i in 0..6 {
        client
            .enqueue(Q, format!("{i}"), Default::default())
            .await
            .unwrap();
    }
    let options = WorkerOptions {
        max_attempts: 1,
        pump_interval_ms: 20,
        idle_max_ms: 10,
        dead_max_len: Some(2),
        ..WorkerOptions::default()
    };
    let worker = Worker::new(client.clone(), Q, options, |_| async {
        Err(HandlerError::retry("no"))
    })
    .unwrap();
    let w = worker.clone();
    let run = tokio::spawn(async move { w.run().await });
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let c = client.counts(Q).await.unwrap();
        if c.failed == 6 && c.dead == 2 {
            break;
        }
        assert!(Instant::now() < deadline, "dead set not trimmed: {c:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    worker.stop();
    run.await.unwrap().unwrap();
}

/// A job that died by using up its attempts and is requeued runs again: the
/// requeue resets `attempts` and `stalled`, so the 2.1.0 claim's attempts cap
/// does not dead-letter it straight back (nor count it as failed twice).
#[tokio::test(flavor = "multi_thread")]
async fn a_requeued_job_that_used_up_its_attempts_runs_again() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let server = Server::start();
    let client = connect(&server).await;
    let e = client.enqueue(Q, b"p", Default::default()).await.unwrap();
    let runs = Arc::new(AtomicU64::new(0));
    let seen = runs.clone();
    let options = WorkerOptions {
        max_attempts: 2,
        idle_max_ms: 10,
        ..WorkerOptions::default()
    };
    // Fails twice (both attempts of the first life), then succeeds.
    let worker = Worker::new(client.clone(), Q, options, move |_| {
        let n = seen.fetch_add(1, Ordering::SeqCst);
        async move {
            if n < 2 {
                Err(HandlerError::retry("not yet"))
            } else {
                Ok(())
            }
        }
    })
    .unwrap();
    let w = worker.clone();
    let run = tokio::spawn(async move { w.run().await });
    let mut raw = server.raw();
    let failed_count = |raw: &mut redis::Connection| -> u64 {
        raw.hget(key("metrics:failed"), "count").unwrap_or(0)
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while members(&mut raw, "dead").is_empty() {
        assert!(Instant::now() < deadline, "the job never died");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_eq!(failed_count(&mut raw), 1);

    // (The row's reset fields are asserted without a worker in
    // `requeue_all_dead_moves_every_dead_job_back_to_pending`: here the
    // idle worker may run and complete the job before a read.)
    client.requeue_dead(Q, e.id.as_str()).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while runs.load(Ordering::SeqCst) < 3 {
        assert!(
            Instant::now() < deadline,
            "the requeued job never ran again (dead: {:?}, row {:?})",
            members(&mut raw, "dead"),
            raw.hgetall::<_, HashMap<String, String>>(key(&format!("job:{}", e.id)))
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while exists(&mut raw, &key(&format!("job:{}", e.id))) {
        assert!(Instant::now() < deadline, "the rerun never completed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(members(&mut raw, "dead").is_empty());
    assert_eq!(
        failed_count(&mut raw),
        1,
        "the requeued job was not failed again"
    );
    worker.stop();
    run.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_worker_pump_applies_dead_max_age_ms() {
    let server = Server::start();
    let client = connect(&server).await;
    // Two dead jobs minted two and three hours ago, one fresh: a one-hour
    // bound trims exactly the old two (by mint time, not by count).
    let old = vec![id_minted_ago(3 * 3_600_000), id_minted_ago(2 * 3_600_000)];
    make_dead(&client, &old).await;
    let fresh = client
        .enqueue(Q, b"fresh", Default::default())
        .await
        .unwrap()
        .id;
    let options = WorkerOptions {
        max_attempts: 1,
        pump_interval_ms: 20,
        idle_max_ms: 10,
        dead_max_age_ms: Some(3_600_000),
        ..WorkerOptions::default()
    };
    let worker = Worker::new(client.clone(), Q, options, |_| async {
        Err(HandlerError::retry("no"))
    })
    .unwrap();
    let w = worker.clone();
    let run = tokio::spawn(async move { w.run().await });
    let mut raw = server.raw();
    let deadline = Instant::now() + Duration::from_secs(60);
    while members(&mut raw, "dead") != [fresh.to_string()] {
        assert!(
            Instant::now() < deadline,
            "dead set not trimmed by age: {:?}",
            members(&mut raw, "dead")
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    worker.stop();
    run.await.unwrap().unwrap();
    for id in &old {
        assert!(!exists(&mut raw, &key(&format!("job:{id}"))), "{id}");
    }
    assert!(exists(&mut raw, &key(&format!("job:{fresh}"))));
}
