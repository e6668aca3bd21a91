//! The cluster transport against a real loopback cluster (issue #15 §1, §3):
//! every verb on queues that live on three different masters, the fence on
//! the master owning slot 9051, scripts healed on every master, durable
//! writes, the worker on three queues over one client, the typed errors for a
//! URL of the wrong kind, a live slot migration under load, and idle workers
//! parked on their queues' masters, woken by hints (issue #16).
//! The failover drill is its own binary (`tests/drill.rs`).

mod cluster_support;
mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cluster_support::{queue_slot, Cluster};
use echomq::{BrowseSet, Client, ConnectOptions, ErrorKind, RetryOutcome, Worker, WorkerOptions};
use redis::Commands;

const FENCE_SLOT: u16 = 9051;

/// Timeouts short enough that a bug fails the test instead of hanging it.
fn quick() -> ConnectOptions {
    ConnectOptions {
        response_timeout: Some(Duration::from_secs(10)),
        ..ConnectOptions::default()
    }
}

async fn connect(url: &str, options: ConnectOptions) -> Client {
    Client::connect(url, options).await.unwrap()
}

fn keys_in_slot(conn: &mut redis::Connection, slot: u16) -> u64 {
    redis::cmd("CLUSTER")
        .arg("COUNTKEYSINSLOT")
        .arg(slot)
        .query(conn)
        .unwrap()
}

/// Every verb on one queue, asserting the wire state on the queue's master.
async fn every_verb(client: &Client, cluster: &Cluster, queue: &str) {
    let master = cluster.master_of(queue_slot(queue));
    let mut raw = cluster.raw(master);
    let row = |id: &str| format!("emq:{{{queue}}}:job:{id}");

    let a = client
        .enqueue(queue, b"a", Default::default())
        .await
        .unwrap();
    assert!(!a.duplicate);
    let payload: Vec<u8> = raw.hget(row(a.id.as_str()), "payload").unwrap();
    assert_eq!(payload, b"a", "the row lives on the queue's master");
    let custom = client
        .enqueue(
            queue,
            b"b",
            echomq::EnqueueOptions::default().id("JOB0NgWEfAEJfs"),
        )
        .await
        .unwrap();
    assert!(!custom.duplicate);
    let again = client
        .enqueue(
            queue,
            b"b",
            echomq::EnqueueOptions::default().id("JOB0NgWEfAEJfs"),
        )
        .await
        .unwrap();
    assert!(again.duplicate);
    let many = client
        .enqueue_many(queue, &echomq::EnqueueOptions::defaults_for(&[b"c", b"d"]))
        .await
        .unwrap();
    assert!(many.iter().all(Result::is_ok));
    let later = client
        .enqueue(
            queue,
            b"later",
            echomq::EnqueueOptions::default().delay_ms(60_000),
        )
        .await
        .unwrap();
    let at = client
        .enqueue(queue, b"at", echomq::EnqueueOptions::default().run_at_ms(1))
        .await
        .unwrap();
    assert_eq!(client.promote(queue, 10).await.unwrap(), 1, "the due one");
    let counts = client.counts(queue).await.unwrap();
    assert_eq!((counts.pending, counts.scheduled), (5, 1));
    let info = client.job(queue, at.id.as_str()).await.unwrap().unwrap();
    assert_eq!(info.payload, b"at");
    let pending = client
        .browse(queue, BrowseSet::Pending, false, 10, None)
        .await
        .unwrap();
    assert_eq!(pending.len(), 5);

    client.pause(queue).await.unwrap();
    assert!(client.is_paused(queue).await.unwrap());
    assert!(client.claim(queue, 5_000).await.unwrap().is_none());
    client.resume(queue).await.unwrap();

    let one = client.claim(queue, 5_000).await.unwrap().unwrap();
    client
        .extend(queue, one.id.as_str(), one.token, 10_000)
        .await
        .unwrap();
    client
        .complete(queue, one.id.as_str(), one.token)
        .await
        .unwrap();
    assert!(!raw.exists::<_, bool>(row(one.id.as_str())).unwrap());
    let two = client.claim_many(queue, 2, 5_000).await.unwrap();
    let done: Vec<(&str, u64)> = two.iter().map(|j| (j.id.as_str(), j.token)).collect();
    assert!(client
        .complete_many(queue, &done)
        .await
        .unwrap()
        .iter()
        .all(Result::is_ok));
    let failing = client.claim(queue, 5_000).await.unwrap().unwrap();
    let outcome = client
        .retry(queue, failing.id.as_str(), failing.token, 0, 1, "boom")
        .await
        .unwrap();
    assert_eq!(outcome, RetryOutcome::Dead);
    client
        .requeue_dead(queue, failing.id.as_str())
        .await
        .unwrap();
    let short = client.claim(queue, 1).await.unwrap().unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(client.reap(queue, 10).await.unwrap(), 1);
    let err = client
        .remove(queue, later.id.as_str())
        .await
        .and(client.remove(queue, short.id.as_str()).await);
    assert!(err.is_ok(), "{err:?}");
    let counts = client.counts(queue).await.unwrap();
    assert_eq!(
        (counts.completed, counts.dead, counts.scheduled),
        (3, 0, 0),
        "{counts:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_verb_on_three_masters_with_the_fence_on_slot_9051() {
    let cluster = Cluster::start();
    let client = connect(&cluster.url, quick()).await;
    assert!(client.is_cluster());

    // The fence and the bundle record live on the master owning slot 9051, and
    // nowhere else.
    let fence_master = cluster.master_of(FENCE_SLOT);
    for master in cluster.masters() {
        let n = keys_in_slot(&mut cluster.raw(master), FENCE_SLOT);
        if master == fence_master {
            assert_eq!(n, 2, "{{emq}}:version and {{emq}}:bundle");
            let version: String = cluster.raw(master).get("{emq}:version").unwrap();
            assert_eq!(version, echomq::PROTOCOL_VERSION);
        } else {
            assert_eq!(n, 0);
        }
    }

    let masters = cluster.masters();
    assert_eq!(masters.len(), 3);
    for (i, &master) in masters.iter().enumerate() {
        let queue = cluster.queue_on(master, &format!("verbs{i}-"));
        every_verb(&client, &cluster, &queue).await;
        // The scripts were loaded on this master by the first EVALSHA's heal
        // (a client speaking 2.1.0 enqueues with `enqueue_checked`).
        let sha = echomq::scripts::ENQUEUE_CHECKED.sha1();
        let loaded: Vec<bool> = redis::cmd("SCRIPT")
            .arg("EXISTS")
            .arg(sha)
            .query(&mut cluster.raw(master))
            .unwrap();
        assert_eq!(loaded, [true]);
    }

    // Queue discovery walks every master (a SCAN sees one node's keys).
    let queues = client.queues().await.unwrap();
    for (i, &master) in masters.iter().enumerate() {
        let queue = cluster.queue_on(master, &format!("verbs{i}-"));
        assert!(queues.contains(&queue), "{queue} missing from {queues:?}");
    }

    // Events reach a subscriber of a queue on every master: it listens on the
    // queue's master, where the publish script counts its subscribers.
    for (i, &master) in masters.iter().enumerate() {
        let queue = cluster.queue_on(master, &format!("events{i}-"));
        let mut events = client.subscribe(&queue).await.unwrap();
        let job = client
            .enqueue(&queue, b"e", Default::default())
            .await
            .unwrap();
        let event = tokio::time::timeout(Duration::from_secs(5), events.next())
            .await
            .expect("an event within 5 s")
            .unwrap();
        assert_eq!(
            (event.event.as_str(), event.job.as_str()),
            ("added", job.id.as_str())
        );
    }

    // A master that lost its scripts heals by itself.
    let queue = cluster.queue_on(masters[0], "flushed-");
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query(&mut cluster.raw(masters[0]))
        .unwrap();
    client
        .enqueue(&queue, b"x", Default::default())
        .await
        .unwrap();
    assert_eq!(client.counts(&queue).await.unwrap().pending, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_urls_are_refused_and_durable_writes_wait_for_a_replica() {
    let cluster = Cluster::start();
    let node = format!("redis://127.0.0.1:{}/", cluster.ports[0]);
    let err = Client::connect(&node, ConnectOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(err.message().contains("redis+cluster://"), "{err}");

    let server = common::Server::start();
    let url = format!("redis+cluster://127.0.0.1:{}/", server.port);
    let err = Client::connect(&url, ConnectOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(err.message().contains("redis://"), "{err}");

    // Durable writes on this cluster: one replica per master acknowledges.
    let durable = ConnectOptions {
        wait_replicas: 1,
        wait_timeout_ms: 2_000,
        ..ConnectOptions::default()
    };
    let client = connect(&cluster.url, durable).await;
    let queue = cluster.queue_on(cluster.masters()[1], "durable-");
    let job = client
        .enqueue(&queue, b"kept", Default::default())
        .await
        .unwrap();
    let mut replica = cluster.raw(cluster.replica_of(queue_slot(&queue)));
    let _: () = redis::cmd("READONLY").query(&mut replica).unwrap();
    let row = format!("emq:{{{queue}}}:job:{}", job.id);
    let payload: Vec<u8> = replica.hget(&row, "payload").unwrap();
    assert_eq!(
        payload, b"kept",
        "the replica holds the row when enqueue answers"
    );
    let claimed = client.claim(&queue, 5_000).await.unwrap().unwrap();
    client
        .complete(&queue, claimed.id.as_str(), claimed.token)
        .await
        .unwrap();
    assert!(!replica.exists::<_, bool>(&row).unwrap());

    // Two replicas asked for, one exists: NotDurable, carrying the id; the
    // write itself happened on the master.
    let greedy = ConnectOptions {
        wait_replicas: 2,
        wait_timeout_ms: 50,
        ..ConnectOptions::default()
    };
    let client = connect(&cluster.url, greedy).await;
    let err = client
        .enqueue(&queue, b"short", Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotDurable, "{err}");
    let id = err.job_id().unwrap().to_string();
    let info = client.job(&queue, &id).await.unwrap().unwrap();
    assert_eq!(info.payload, b"short");
    let verdicts = client
        .enqueue_many(
            &queue,
            &echomq::EnqueueOptions::defaults_for(&[b"m1", b"m2"]),
        )
        .await
        .unwrap();
    assert!(verdicts
        .iter()
        .all(|v| v.as_ref().unwrap_err().kind() == ErrorKind::NotDurable));
    let held = client.claim(&queue, 5_000).await.unwrap().unwrap();
    let err = client
        .complete(&queue, held.id.as_str(), held.token)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotDurable, "{err}");
    let after = client.job(&queue, held.id.as_str()).await;
    assert!(
        matches!(after, Ok(None)),
        "completed on the master: {after:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_serves_workers_on_three_masters_and_a_live_slot_migration() {
    let cluster = Cluster::start();
    let client = connect(&cluster.url, ConnectOptions::default()).await;
    let options = WorkerOptions {
        concurrency: 4,
        lease_ms: 5_000,
        pump_interval_ms: 50,
        idle_max_ms: 20,
        ..WorkerOptions::default()
    };
    let seen: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let mut queues = Vec::new();
    let mut workers = Vec::new();
    for (i, master) in cluster.masters().into_iter().enumerate() {
        let queue = cluster.queue_on(master, &format!("work{i}-"));
        let record = seen.clone();
        let worker = Worker::new(client.clone(), &queue, options.clone(), move |job| {
            let record = record.clone();
            async move {
                record.lock().unwrap().push(job.payload);
                Ok(())
            }
        })
        .unwrap();
        workers.push((
            worker.clone(),
            tokio::spawn(async move { worker.run().await }),
        ));
        queues.push(queue);
    }
    let mut expected = HashSet::new();
    for (q, queue) in queues.iter().enumerate() {
        let payloads: Vec<Vec<u8>> = (0..30).map(|i| format!("{q}-{i}").into_bytes()).collect();
        expected.extend(payloads.iter().cloned());
        assert!(client
            .enqueue_many(queue, &echomq::EnqueueOptions::defaults_for(&payloads))
            .await
            .unwrap()
            .iter()
            .all(Result::is_ok));
    }
    until(|| seen.lock().unwrap().len() >= expected.len()).await;
    let got: HashSet<Vec<u8>> = seen.lock().unwrap().iter().cloned().collect();
    assert_eq!(got, expected);
    for queue in &queues {
        let counts = client.counts(queue).await.unwrap();
        assert_eq!(
            (counts.pending, counts.active, counts.completed),
            (0, 0, 30)
        );
    }

    // Resharding: move the first queue's slot to another master while a
    // producer and its worker run on it. Scripts meet TRYAGAIN/ASK during the
    // move; the client retries; nothing is lost or stuck.
    let queue = queues[0].clone();
    let slot = queue_slot(&queue);
    let from = cluster.master_of(slot);
    let to = cluster.masters().into_iter().find(|&m| m != from).unwrap();
    seen.lock().unwrap().clear();
    // Rows that stay put (scheduled an hour out) make the move take a while,
    // so the producer and the worker meet the migrating slot.
    for i in 0..100 {
        client
            .enqueue(
                &queue,
                format!("later-{i}"),
                echomq::EnqueueOptions::default().delay_ms(3_600_000),
            )
            .await
            .unwrap();
    }
    let producing = Arc::new(AtomicBool::new(true));
    let producer = {
        let (client, queue, producing) = (client.clone(), queue.clone(), producing.clone());
        tokio::spawn(async move {
            let mut acked = Vec::new();
            let mut n = 0u64;
            while producing.load(Ordering::Relaxed) {
                let payload = format!("moving-{n}").into_bytes();
                n += 1;
                if client
                    .enqueue(&queue, &payload, Default::default())
                    .await
                    .is_ok()
                {
                    acked.push(payload);
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            acked
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let moved = tokio::task::spawn_blocking({
        let (from_id, to_id) = (cluster.node_id(from), cluster.node_id(to));
        let mut source = cluster.raw(from);
        let mut target = cluster.raw(to);
        move || migrate_slot(&mut source, &mut target, to, slot, &from_id, &to_id)
    })
    .await
    .unwrap();
    // Tell the other nodes too, then let the producer run on the new owner.
    let to_id = cluster.node_id(to);
    for master in cluster.masters() {
        let _: redis::RedisResult<()> = redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg("NODE")
            .arg(&to_id)
            .query(&mut cluster.raw(master));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    producing.store(false, Ordering::Relaxed);
    let acked = producer.await.unwrap();
    assert!(moved > 100, "the migration moved the rows of a live queue");
    assert!(acked.len() > 50, "the producer kept going: {}", acked.len());
    until(|| {
        let got: HashSet<Vec<u8>> = seen.lock().unwrap().iter().cloned().collect();
        acked.iter().all(|p| got.contains(p))
    })
    .await;
    assert_eq!(cluster.master_of(slot), to);
    assert_eq!(keys_in_slot(&mut cluster.raw(from), slot), 0);
    // A handler has seen every payload; the last completions may still be
    // on their way (a settle that met the migration is retried): wait for
    // them, bounded, rather than reading the counts at once.
    let deadline = Instant::now() + Duration::from_secs(30);
    let counts = loop {
        let counts = client.counts(&queue).await.unwrap();
        if (counts.pending, counts.active) == (0, 0) || Instant::now() > deadline {
            break counts;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!((counts.pending, counts.active), (0, 0), "nothing stuck");
    assert_eq!(counts.scheduled, 100, "nothing lost");
    println!(
        "resharding: moved {moved} keys of slot {slot} from :{from} to :{to}; \
         {} jobs enqueued during the move, all processed",
        acked.len()
    );
    for (worker, task) in workers {
        worker.stop();
        task.await.unwrap().unwrap();
    }
}

/// Move `slot` from source to target a few keys at a time (so the live
/// producer meets the migrating state), answering how many keys moved.
fn migrate_slot(
    source: &mut redis::Connection,
    target: &mut redis::Connection,
    target_port: u16,
    slot: u16,
    source_id: &str,
    target_id: &str,
) -> usize {
    let setslot = |conn: &mut redis::Connection, how: &str, id: &str| {
        let _: () = redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg(how)
            .arg(id)
            .query(conn)
            .unwrap();
    };
    setslot(target, "IMPORTING", source_id);
    setslot(source, "MIGRATING", target_id);
    let mut moved = 0;
    loop {
        let keys: Vec<String> = redis::cmd("CLUSTER")
            .arg("GETKEYSINSLOT")
            .arg(slot)
            .arg(2)
            .query(source)
            .unwrap();
        if keys.is_empty() {
            break;
        }
        let _: () = redis::cmd("MIGRATE")
            .arg("127.0.0.1")
            .arg(target_port)
            .arg("")
            .arg(0)
            .arg(5_000)
            .arg("KEYS")
            .arg(&keys)
            .query(source)
            .unwrap();
        moved += keys.len();
        std::thread::sleep(Duration::from_millis(20));
    }
    setslot(target, "NODE", target_id);
    setslot(source, "NODE", target_id);
    moved
}

/// `blocked_clients` in one node's `INFO clients`.
/// Set `notify-keyspace-events` on the master at `port`, as an operator would.
fn keyspace_events(cluster: &Cluster, port: u16, flags: &str) {
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("notify-keyspace-events")
        .arg(flags)
        .query(&mut cluster.raw(port))
        .unwrap();
}

/// A client on the master at `port` is blocked in `BLPOP` with a command
/// queued behind it (the parked worker's claim, 16.9).
fn parked_with_a_claim(cluster: &Cluster, port: u16) -> bool {
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query(&mut cluster.raw(port))
        .unwrap();
    list.lines().any(|l| {
        l.contains("cmd=blpop")
            && l.split(' ').any(|f| f == "flags=b")
            && l.split(' ')
                .any(|f| f.starts_with("qbuf=") && f != "qbuf=0")
    })
}

fn blocked_on(cluster: &Cluster, port: u16) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("clients")
        .query(&mut cluster.raw(port))
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("blocked_clients:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_workers_park_on_their_queues_master_and_a_hint_wakes_them() {
    let cluster = Cluster::start();
    let client = connect(&cluster.url, quick()).await;
    let durable = connect(
        &cluster.url,
        ConnectOptions {
            wait_replicas: 1,
            wait_timeout_ms: 5_000,
            ..quick()
        },
    )
    .await;
    // A fallback of a minute: within the test only a hint wakes a worker.
    let options = WorkerOptions {
        concurrency: 2,
        wake_fallback_ms: 60_000,
        ..WorkerOptions::default()
    };
    let seen: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let masters = cluster.masters();
    // Keyspace events on each master: parks then last the fallback and
    // carry their claim (39.12), which the stop below relies on.
    for &master in &masters {
        keyspace_events(&cluster, master, "Kz");
    }
    let mut queues = Vec::new();
    let mut workers = Vec::new();
    for (i, &master) in masters.iter().enumerate() {
        let queue = cluster.queue_on(master, &format!("wake{i}-"));
        let record = seen.clone();
        let worker = Worker::new(client.clone(), &queue, options.clone(), move |job| {
            let record = record.clone();
            async move {
                record.lock().unwrap().push(job.payload);
                Ok(())
            }
        })
        .unwrap();
        workers.push((
            worker.clone(),
            tokio::spawn(async move { worker.run().await }),
        ));
        queues.push(queue);
    }
    // Each worker parks on the master owning its queue's slot (the wake key
    // has the queue's hash tag), so every master has one blocked client.
    until(|| masters.iter().all(|&m| blocked_on(&cluster, m) == 1)).await;
    for queue in &queues {
        let wake = format!("emq:{{{queue}}}:wake");
        assert_eq!(echomq::slot::slot(wake.as_bytes()), queue_slot(queue));
    }

    // A hint after each kind of write wakes the parked worker at once:
    // enqueue, a durable enqueue (hint, then WAIT, in one round trip), a
    // batch, and a scheduled job (the woken worker's pumps promote it).
    let started = Instant::now();
    let mut expected = HashSet::new();
    for (i, queue) in queues.iter().enumerate() {
        let one = format!("one-{i}").into_bytes();
        let kept = format!("durable-{i}").into_bytes();
        let batch: Vec<Vec<u8>> = (0..3)
            .map(|j| format!("batch-{i}-{j}").into_bytes())
            .collect();
        let later = format!("later-{i}").into_bytes();
        client
            .enqueue(queue, &one, Default::default())
            .await
            .unwrap();
        durable
            .enqueue(queue, &kept, Default::default())
            .await
            .unwrap();
        assert!(client
            .enqueue_many(queue, &echomq::EnqueueOptions::defaults_for(&batch))
            .await
            .unwrap()
            .iter()
            .all(Result::is_ok));
        client
            .enqueue(
                queue,
                &later,
                echomq::EnqueueOptions::default().delay_ms(200),
            )
            .await
            .unwrap();
        expected.extend([one, kept, later]);
        expected.extend(batch);
    }
    until(|| seen.lock().unwrap().len() >= expected.len()).await;
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "picked up by hints, not by the one-minute fallback: {:?}",
        started.elapsed()
    );
    let got: HashSet<Vec<u8>> = seen.lock().unwrap().iter().cloned().collect();
    assert_eq!(got, expected);
    // Idle again: parked again, each on its own master.
    until(|| masters.iter().all(|&m| blocked_on(&cluster, m) == 1)).await;
    until(|| masters.iter().all(|&m| parked_with_a_claim(&cluster, m))).await;
    // Events off again (the parks stay long): only the stop may end them.
    for &master in &masters {
        keyspace_events(&cluster, master, "");
    }

    // A job written with no hint just before the stop: the claim queued
    // behind each parked BLPOP runs when the stop unblocks it (CLIENT
    // UNBLOCK on the worker's own master) and its job is handed back.
    let mut unhinted = Vec::new();
    for (queue, &master) in queues.iter().zip(&masters) {
        let id = echomq::id::mint_job_id();
        let created: i64 = redis::cmd("EVAL")
            .arg(include_str!("../lua/enqueue.lua"))
            .arg(2)
            .arg(format!("emq:{{{queue}}}:job:{id}"))
            .arg(format!("emq:{{{queue}}}:pending"))
            .arg(id.as_str())
            .arg("at the stop")
            .query(&mut cluster.raw(master))
            .unwrap();
        assert_eq!(created, 1);
        unhinted.push(id.to_string());
    }
    let stopping = Instant::now();
    for (worker, run) in &mut workers {
        let released = worker.stats().released;
        worker.stop();
        run.await.unwrap().unwrap();
        assert_eq!(
            worker.stats().released,
            released + 1,
            "{:?}",
            worker.stats()
        );
    }
    assert!(
        stopping.elapsed() < Duration::from_secs(30),
        "{:?}",
        stopping.elapsed()
    );
    for ((queue, &master), id) in queues.iter().zip(&masters).zip(&unhinted) {
        let mut raw = cluster.raw(master);
        let active: u64 = redis::cmd("ZCARD")
            .arg(format!("emq:{{{queue}}}:active"))
            .query(&mut raw)
            .unwrap();
        assert_eq!(active, 0, "{queue}: a job was left leased");
        let pending: Option<f64> = redis::cmd("ZSCORE")
            .arg(format!("emq:{{{queue}}}:pending"))
            .arg(id)
            .query(&mut raw)
            .unwrap();
        assert!(pending.is_some(), "{queue}: {id} is not back in pending");
    }
    // Stopped workers leave nothing blocked.
    until(|| masters.iter().all(|&m| blocked_on(&cluster, m) == 0)).await;
}

async fn until(mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "condition not reached in 60 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
