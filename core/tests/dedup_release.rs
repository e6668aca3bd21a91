//! Issue #39 item 5: a dedup key goes with its job. Every script that
//! deletes a job's row at 2.1.0 deletes the key the job took while the key
//! still names it (decision 39.5), so a queue deduplicating jobs whose dedup
//! ids are never used again does not grow. Wire state is asserted (the key,
//! `SCAN` counts, `DBSIZE`, `INFO memory`) as well as answers.

mod common;

use common::Server;
use echomq::{Client, ConnectOptions, EnqueueOptions, WorkerOptions};
use futures_util::{stream, StreamExt};
use redis::Commands;

const Q: &str = "dd";

async fn connect(server: &Server) -> Client {
    Client::connect(&server.url(), ConnectOptions::default())
        .await
        .unwrap()
}

fn dedup(did: &str) -> EnqueueOptions {
    EnqueueOptions {
        dedup_id: Some(did.into()),
        ..EnqueueOptions::default()
    }
}

fn key(did: &str) -> String {
    format!("emq:{{{Q}}}:de:{did}")
}

fn exists(raw: &mut redis::Connection, key: &str) -> bool {
    raw.exists(key).unwrap()
}

/// How many `de:` keys the queue has (a full `SCAN`, as an operator would).
fn dedup_keys(raw: &mut redis::Connection) -> usize {
    let keys: Vec<redis::RedisResult<String>> = raw
        .scan_match(format!("emq:{{{Q}}}:de:*"))
        .unwrap()
        .collect();
    keys.len()
}

fn info_field(raw: &mut redis::Connection, section: &str, field: &str) -> u64 {
    let info: String = redis::cmd("INFO").arg(section).query(raw).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in INFO {section}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn every_path_that_deletes_a_job_deletes_its_dedup_key() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let take = |did: &'static str| {
        let client = client.clone();
        async move {
            let e = client.enqueue(Q, did, dedup(did).clone()).await.unwrap();
            assert!(!e.duplicate);
            e.id.to_string()
        }
    };

    // complete (the single verb, `complete_result`)
    let id = take("single").await;
    assert!(exists(&mut raw, &key("single")));
    let row: Option<String> = raw.hget(format!("emq:{{{Q}}}:job:{id}"), "did").unwrap();
    assert_eq!(row.as_deref(), Some("single"), "the row names its dedup id");
    let job = client.claim(Q, 60_000).await.unwrap().unwrap();
    client.complete(Q, &id, job.token).await.unwrap();
    assert!(!exists(&mut raw, &key("single")), "complete");

    // complete_many (the worker's settler, with and without kept results)
    let a = take("many-a").await;
    let b = take("many-b").await;
    let jobs = client.claim_many(Q, 2, 60_000).await.unwrap();
    let settle: Vec<(&str, u64)> = jobs.iter().map(|j| (j.id.as_str(), j.token)).collect();
    for verdict in client.complete_many(Q, &settle).await.unwrap() {
        verdict.unwrap();
    }
    assert!(!exists(&mut raw, &key("many-a")) && !exists(&mut raw, &key("many-b")));
    let kept = take("kept").await;
    let job = client.claim(Q, 60_000).await.unwrap().unwrap();
    client
        .complete_many_kept(Q, &[(kept.as_str(), job.token, b"v")], 60_000)
        .await
        .unwrap()
        .remove(0)
        .unwrap();
    assert!(
        !exists(&mut raw, &key("kept")),
        "complete with a kept result"
    );
    assert_eq!(client.result(Q, &kept).await.unwrap().unwrap(), b"v");

    // remove, drain (pending and scheduled)
    let r = take("removed").await;
    client.remove(Q, &r).await.unwrap();
    assert!(!exists(&mut raw, &key("removed")), "remove");
    take("drained").await;
    assert_eq!(client.drain(Q, true, None).await.unwrap(), 1);
    assert!(!exists(&mut raw, &key("drained")), "drain");

    // dead: the key is released (the next enqueue takes it over) and goes
    // with the row when the dead job is purged ...
    let d = take("dead").await;
    let job = client.claim(Q, 60_000).await.unwrap().unwrap();
    client.retry(Q, &d, job.token, 0, 1, "boom").await.unwrap();
    assert!(exists(&mut raw, &key("dead")), "kept with the dead row");
    assert_eq!(client.purge_dead(Q, None, None).await.unwrap(), 1);
    assert!(!exists(&mut raw, &key("dead")), "purge_dead");
    // ... but a key a later job took over is that job's: purging the dead
    // job leaves it.
    let old = take("reused").await;
    let job = client.claim(Q, 60_000).await.unwrap().unwrap();
    client
        .retry(Q, &old, job.token, 0, 1, "boom")
        .await
        .unwrap();
    let new = take("reused").await;
    assert_eq!(client.purge_dead(Q, None, None).await.unwrap(), 1);
    let holder: String = raw.get(key("reused")).unwrap();
    assert_eq!(holder, new);
    let again = client
        .enqueue(Q, "x", dedup("reused").clone())
        .await
        .unwrap();
    assert!(again.duplicate, "the live job still holds its dedup id");
    let _ = (a, b);
    client.remove(Q, &new).await.unwrap();
    assert_eq!(dedup_keys(&mut raw), 0);
}

/// The worker's path (claim, handler, `complete_many` from its settler)
/// leaves no key behind either.
#[tokio::test(flavor = "multi_thread")]
async fn a_worker_completing_deduplicated_jobs_leaves_no_dedup_key() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    for i in 0..50 {
        client
            .enqueue(Q, "w", dedup(&format!("w-{i}")).clone())
            .await
            .unwrap();
    }
    assert_eq!(dedup_keys(&mut raw), 50);
    let worker = echomq::Worker::new(client.clone(), Q, WorkerOptions::default(), |_job| async {
        Ok(())
    })
    .unwrap();
    let handle = worker.spawn();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while worker.stats().completed < 50 {
        assert!(std::time::Instant::now() < deadline, "{:?}", worker.stats());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    handle.stop();
    handle.join().unwrap();
    assert_eq!(dedup_keys(&mut raw), 0);
}

/// The memory test: 100 000 jobs, each with a dedup id never used again,
/// enqueued and completed in ten rounds. Before, every round left 10 000
/// `de:` keys (~136 B each, ~13 MB in all). Now the key count stays 0, the
/// keyspace stays at the queue's few keys, and used memory stays flat
/// (generous bound: a quarter of what the leak would add).
#[tokio::test(flavor = "multi_thread")]
async fn memory_stays_flat_across_100_000_deduplicated_jobs_completed() {
    const ROUNDS: usize = 10;
    const PER_ROUND: usize = 10_000;
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let mut after_first = None;
    for round in 0..ROUNDS {
        let created: Vec<bool> = stream::iter(0..PER_ROUND)
            .map(|i| {
                let client = client.clone();
                async move {
                    let did = format!("order-{round}-{i}");
                    !client
                        .enqueue(Q, b"p", dedup(&did).clone())
                        .await
                        .unwrap()
                        .duplicate
                }
            })
            .buffer_unordered(256)
            .collect()
            .await;
        assert!(created.iter().all(|c| *c));
        let mut done = 0;
        while done < PER_ROUND {
            let jobs = client.claim_many(Q, 1_000, 60_000).await.unwrap();
            assert!(!jobs.is_empty(), "round {round}: {done} done");
            let settle: Vec<(&str, u64)> = jobs.iter().map(|j| (j.id.as_str(), j.token)).collect();
            for verdict in client.complete_many(Q, &settle).await.unwrap() {
                verdict.unwrap();
            }
            done += jobs.len();
        }
        assert_eq!(dedup_keys(&mut raw), 0, "round {round}");
        let dbsize: u64 = redis::cmd("DBSIZE").query(&mut raw).unwrap();
        assert!(dbsize <= 16, "round {round}: {dbsize} keys");
        if round == 0 {
            after_first = Some(info_field(&mut raw, "memory", "used_memory"));
        }
    }
    let first = after_first.unwrap();
    let last = info_field(&mut raw, "memory", "used_memory");
    let leak = (ROUNDS - 1) * PER_ROUND * 136;
    eprintln!(
        "used_memory after round 1: {first} B, after round {ROUNDS}: {last} B (a leak would add ~{leak} B)"
    );
    assert!(
        last < first + leak as u64 / 4,
        "used memory grew from {first} to {last} bytes"
    );
}
