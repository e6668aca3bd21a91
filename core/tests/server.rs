//! The protocol scenarios of issue #2, each against its own real redis-server,
//! asserting wire state with raw commands as well as the client's answers.

mod common;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use common::{kill_all_but_me, Server};
use echomq::{BrowseSet, Client, ConnectOptions, ErrorKind, RetryOutcome, TimeRange};
use redis::Commands;

const Q: &str = "orders";

async fn connect(server: &Server) -> Client {
    Client::connect(&server.url(), ConnectOptions::default())
        .await
        .unwrap()
}

fn row(raw: &mut redis::Connection, id: &str) -> HashMap<String, Vec<u8>> {
    raw.hgetall(format!("emq:{{{Q}}}:job:{id}")).unwrap()
}

fn members(raw: &mut redis::Connection, set: &str) -> Vec<String> {
    raw.zrange(format!("emq:{{{Q}}}:{set}"), 0, -1).unwrap()
}

fn score(raw: &mut redis::Connection, set: &str, id: &str) -> Option<f64> {
    raw.zscore(format!("emq:{{{Q}}}:{set}"), id).unwrap()
}

fn server_ms(raw: &mut redis::Connection) -> u64 {
    let (s, us): (u64, u64) = redis::cmd("TIME").query(raw).unwrap();
    s * 1000 + us / 1000
}

#[tokio::test(flavor = "multi_thread")]
async fn s01_enqueue_writes_exactly_three_fields_and_a_score_zero_member() {
    let server = Server::start();
    let client = connect(&server).await;
    let e = client
        .enqueue(Q, b"hello\x00\xff", Default::default())
        .await
        .unwrap();
    assert!(!e.duplicate);
    let mut raw = server.raw();
    let r = row(&mut raw, e.id.as_str());
    assert_eq!(r.len(), 3);
    assert_eq!(r["state"], b"pending");
    assert_eq!(r["attempts"], b"0");
    assert_eq!(r["payload"], b"hello\x00\xff");
    assert_eq!(members(&mut raw, "pending"), vec![e.id.to_string()]);
    assert_eq!(score(&mut raw, "pending", e.id.as_str()), Some(0.0));
}

#[tokio::test(flavor = "multi_thread")]
async fn s02_duplicate_enqueue_leaves_the_row_untouched() {
    let server = Server::start();
    let client = connect(&server).await;
    let id = echomq::id::mint_job_id();
    assert!(
        !client
            .enqueue(
                Q,
                "first",
                echomq::EnqueueOptions::default().id(id.as_str())
            )
            .await
            .unwrap()
            .duplicate
    );
    assert!(
        client
            .enqueue(
                Q,
                "second",
                echomq::EnqueueOptions::default().id(id.as_str())
            )
            .await
            .unwrap()
            .duplicate
    );
    let mut raw = server.raw();
    assert_eq!(row(&mut raw, id.as_str())["payload"], b"first");
    assert_eq!(members(&mut raw, "pending").len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn s03_foreign_namespace_is_refused_emqkind_and_nothing_is_written() {
    let server = Server::start();
    let client = connect(&server).await;
    let err = client
        .enqueue(
            Q,
            "x",
            echomq::EnqueueOptions::default().id("ORD0NgWEfAEJfs"),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Kind);
    let mut raw = server.raw();
    assert!(row(&mut raw, "ORD0NgWEfAEJfs").is_empty());
    let exists: bool = raw.exists(format!("emq:{{{Q}}}:pending")).unwrap();
    assert!(!exists);
}

#[tokio::test(flavor = "multi_thread")]
async fn s04_browse_newest_first_and_by_mint_time() {
    let server = Server::start();
    let client = connect(&server).await;
    let payloads: Vec<String> = (0..1000).map(|i| format!("p{i}")).collect();
    let mut ids = Vec::new();
    for chunk in payloads.chunks(250) {
        for verdict in client
            .enqueue_many(Q, &echomq::EnqueueOptions::defaults_for(chunk))
            .await
            .unwrap()
        {
            ids.push(verdict.unwrap().id);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let newest = client
        .browse(Q, BrowseSet::Pending, true, 1000, None)
        .await
        .unwrap();
    let mut expected = ids.clone();
    expected.sort();
    expected.reverse();
    assert_eq!(newest, expected);
    let oldest = client
        .browse(Q, BrowseSet::Pending, false, 10, None)
        .await
        .unwrap();
    assert_eq!(oldest[0], *ids.iter().min().unwrap());

    // A mint-time window: exactly the ids minted inside [from, to).
    let from = ids[300].minted_at_ms();
    let to = ids[700].minted_at_ms();
    let inside: HashSet<_> = ids
        .iter()
        .filter(|id| id.minted_at_ms() >= from && id.minted_at_ms() < to)
        .cloned()
        .collect();
    let got = client
        .browse(
            Q,
            BrowseSet::Pending,
            false,
            10_000,
            Some(TimeRange {
                from_ms: from,
                to_ms: to,
            }),
        )
        .await
        .unwrap();
    assert_eq!(got.len(), inside.len());
    assert_eq!(got.into_iter().collect::<HashSet<_>>(), inside);
}

#[tokio::test(flavor = "multi_thread")]
async fn s05_claim_mints_token_one_and_leases_on_the_server_clock() {
    let server = Server::start();
    let client = connect(&server).await;
    let e = client.enqueue(Q, "job", Default::default()).await.unwrap();
    let mut raw = server.raw();
    let before = server_ms(&mut raw);
    let job = client.claim(Q, 10_000).await.unwrap().unwrap();
    let after = server_ms(&mut raw);
    assert_eq!(job.id, e.id);
    assert_eq!(job.token, 1);
    assert_eq!(job.payload, b"job");
    let r = row(&mut raw, e.id.as_str());
    assert_eq!(r["state"], b"active");
    assert_eq!(r["attempts"], b"1");
    assert!(members(&mut raw, "pending").is_empty());
    let deadline = score(&mut raw, "active", e.id.as_str()).unwrap() as u64;
    assert!(
        deadline >= before + 10_000 && deadline <= after + 10_000,
        "{before} {deadline} {after}"
    );
    assert!(client.claim(Q, 10_000).await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn s06_stale_complete_is_refused_and_the_right_token_retires_the_row() {
    let server = Server::start();
    let client = connect(&server).await;
    let e = client.enqueue(Q, "job", Default::default()).await.unwrap();
    let job = client.claim(Q, 10_000).await.unwrap().unwrap();
    let err = client.complete(Q, job.id.as_str(), 7).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Stale);
    let mut raw = server.raw();
    assert_eq!(row(&mut raw, e.id.as_str())["state"], b"active");
    assert!(score(&mut raw, "active", e.id.as_str()).is_some());

    client
        .complete(Q, job.id.as_str(), job.token)
        .await
        .unwrap();
    assert!(row(&mut raw, e.id.as_str()).is_empty());
    for set in ["pending", "active", "schedule", "dead"] {
        assert!(members(&mut raw, set).is_empty(), "{set}");
    }
    let done: u64 = raw
        .hget(format!("emq:{{{Q}}}:metrics:completed"), "count")
        .unwrap();
    assert_eq!(done, 1);
    let again = client
        .complete(Q, job.id.as_str(), job.token)
        .await
        .unwrap_err();
    assert_eq!(again.kind(), ErrorKind::Gone);
}

#[tokio::test(flavor = "multi_thread")]
async fn s07_retry_promote_claim_mints_token_two() {
    let server = Server::start();
    let client = connect(&server).await;
    let e = client.enqueue(Q, "job", Default::default()).await.unwrap();
    let job = client.claim(Q, 10_000).await.unwrap().unwrap();
    let outcome = client
        .retry(Q, job.id.as_str(), job.token, 60_000, 5, "boom")
        .await
        .unwrap();
    assert_eq!(outcome, RetryOutcome::Scheduled);
    let mut raw = server.raw();
    let r = row(&mut raw, e.id.as_str());
    assert_eq!(r["state"], b"scheduled");
    assert_eq!(r["last_error"], b"boom");
    assert!(members(&mut raw, "active").is_empty());
    assert_eq!(members(&mut raw, "schedule"), vec![e.id.to_string()]);
    // Not yet due (a minute away: no timing window to lose).
    assert_eq!(client.promote(Q, 100).await.unwrap(), 0);
    // Make it due by moving its run-at into the past, rather than sleeping.
    let _: u64 = redis::cmd("ZADD")
        .arg(format!("emq:{{{Q}}}:schedule"))
        .arg("XX")
        .arg(0)
        .arg(e.id.as_str())
        .query(&mut raw)
        .unwrap();
    assert_eq!(client.promote(Q, 100).await.unwrap(), 1);
    assert_eq!(row(&mut raw, e.id.as_str())["state"], b"pending");
    assert_eq!(members(&mut raw, "pending"), vec![e.id.to_string()]);
    let again = client.claim(Q, 10_000).await.unwrap().unwrap();
    assert_eq!(again.token, 2);
    // The first life's token is now stale.
    assert_eq!(
        client
            .complete(Q, e.id.as_str(), 1)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::Stale
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s08_dead_letter_then_requeue() {
    let server = Server::start();
    let client = connect(&server).await;
    let e = client.enqueue(Q, "job", Default::default()).await.unwrap();
    let job = client.claim(Q, 10_000).await.unwrap().unwrap();
    let outcome = client
        .retry(Q, job.id.as_str(), job.token, 0, 1, "fatal: no such user")
        .await
        .unwrap();
    assert_eq!(outcome, RetryOutcome::Dead);
    let mut raw = server.raw();
    let r = row(&mut raw, e.id.as_str());
    assert_eq!(r["state"], b"dead");
    assert_eq!(r["last_error"], b"fatal: no such user");
    assert_eq!(score(&mut raw, "dead", e.id.as_str()), Some(0.0));
    assert_eq!(
        client
            .browse(Q, BrowseSet::Dead, true, 10, None)
            .await
            .unwrap(),
        vec![e.id]
    );
    let failed: u64 = raw
        .hget(format!("emq:{{{Q}}}:metrics:failed"), "count")
        .unwrap();
    assert_eq!(failed, 1);
    let info = client.job(Q, e.id.as_str()).await.unwrap().unwrap();
    assert_eq!(info.last_error.as_deref(), Some("fatal: no such user"));

    client.requeue_dead(Q, e.id.as_str()).await.unwrap();
    let r = row(&mut raw, e.id.as_str());
    assert_eq!(r["state"], b"pending");
    // A requeued job starts afresh: the 2.1.0 claim caps attempts.
    assert_eq!(r["attempts"], b"0");
    assert!(!r.contains_key("last_error"));
    assert!(members(&mut raw, "dead").is_empty());
    assert_eq!(members(&mut raw, "pending"), vec![e.id.to_string()]);
    assert_eq!(
        client
            .requeue_dead(Q, e.id.as_str())
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::NotDead
    );
    assert_eq!(client.claim(Q, 1000).await.unwrap().unwrap().token, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn s09_reap_makes_the_old_holder_stale_and_extend_answers_lease_lost() {
    let server = Server::start();
    let client = connect(&server).await;
    let e = client.enqueue(Q, "job", Default::default()).await.unwrap();
    let job = client.claim(Q, 30).await.unwrap().unwrap();
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(client.reap(Q, 100).await.unwrap(), 1);
    let mut raw = server.raw();
    let r = row(&mut raw, e.id.as_str());
    assert_eq!(r["state"], b"pending");
    assert_eq!(r["attempts"], b"1");
    assert_eq!(members(&mut raw, "pending"), vec![e.id.to_string()]);
    // Extending a reaped job: lease lost, and it is not put back into active.
    let lost = client
        .extend(Q, job.id.as_str(), job.token, 10_000)
        .await
        .unwrap_err();
    assert_eq!(lost.kind(), ErrorKind::LeaseLost);
    assert!(members(&mut raw, "active").is_empty());
    // A new owner claims with token 2; the zombie's complete is stale.
    let second = client.claim(Q, 10_000).await.unwrap().unwrap();
    assert_eq!(second.token, 2);
    let stale = client
        .complete(Q, job.id.as_str(), job.token)
        .await
        .unwrap_err();
    assert_eq!(stale.kind(), ErrorKind::Stale);
    assert_eq!(row(&mut raw, e.id.as_str())["state"], b"active");
    client
        .extend(Q, second.id.as_str(), second.token, 20_000)
        .await
        .unwrap();
    client
        .complete(Q, second.id.as_str(), second.token)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn s10_fence_claims_a_fresh_keyspace_and_refuses_another_version() {
    let server = Server::start();
    let mut raw = server.raw();
    {
        let _client = connect(&server).await;
        let v: String = raw.get("{emq}:version").unwrap();
        assert_eq!(v, echomq::PROTOCOL_VERSION);
        let bundle: HashMap<String, String> = raw.hgetall("{emq}:bundle").unwrap();
        assert_eq!(
            bundle["enqueue"],
            "a5980be13628669477e64a5afad5370194ea6f1c"
        );
        assert_eq!(bundle["bundle"], echomq::scripts::bundle_sha1());
    }
    let _: () = raw.set("{emq}:version", "echomq:3.0.0").unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query(&mut raw)
        .unwrap();
    let err = Client::connect(&server.url(), ConnectOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::VersionFence);
    assert_eq!(err.found(), Some("echomq:3.0.0"));
    // Only the fence's GET reached the server from the refused client (plus the
    // handshake's HELLO/CLIENT); nothing else, and the value is not overwritten.
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut raw)
        .unwrap();
    for forbidden in [
        "cmdstat_set:",
        "cmdstat_hsetnx",
        "cmdstat_evalsha",
        "cmdstat_script",
        "cmdstat_hmget",
    ] {
        assert!(!info.contains(forbidden), "{forbidden} was sent: {info}");
    }
    assert!(info.contains("cmdstat_get:calls=1"), "{info}");
    let v: String = raw.get("{emq}:version").unwrap();
    assert_eq!(v, "echomq:3.0.0");
}

/// Retry a read until the client answers (bounded): after a server restart
/// the first call may meet the dead socket.
async fn until_answered(client: &Client) {
    for _ in 0..500 {
        match client.counts(Q).await {
            Ok(_) => return,
            Err(e) if e.kind() == ErrorKind::Connection => {
                tokio::time::sleep(Duration::from_millis(10)).await
            }
            Err(e) => panic!("unexpected {e}"),
        }
    }
    panic!("the client did not reconnect");
}

#[tokio::test(flavor = "multi_thread")]
async fn s11_restart_refences_and_a_planted_mismatch_is_refused() {
    let mut server = Server::start();
    let client = connect(&server).await;
    client
        .enqueue(Q, "before", Default::default())
        .await
        .unwrap();
    server.restart();
    // A call may still meet the dead socket (a connection error, never
    // replayed) before the driver notices; a read retried until it answers
    // proves the client reconnected, without betting on a sleep.
    until_answered(&client).await;
    // The reconnection re-fenced the empty keyspace; the write succeeds.
    client
        .enqueue(Q, "after", Default::default())
        .await
        .unwrap();
    let mut raw = server.raw();
    let v: String = raw.get("{emq}:version").unwrap();
    assert_eq!(v, echomq::PROTOCOL_VERSION);
    assert_eq!(members(&mut raw, "pending").len(), 1);

    server.restart();
    let mut raw = server.raw();
    let _: () = raw.set("{emq}:version", "echomq:1.3.0").unwrap();
    // Read back: the plant is on the server, not merely sent.
    let planted: String = raw.get("{emq}:version").unwrap();
    assert_eq!(planted, "echomq:1.3.0");
    // The reconnect is lazy, but the caller is not the client's only user of
    // the connection: "after" published its `added` event in the background
    // (queue_events.rs, publish_loop -> Transport::script), and a publish
    // that met the restart retries its reconnect within the response timeout,
    // so it can reconnect, and fence the empty keyspace, before the plant
    // above. The enqueue below would then ride that fenced connection past
    // the plant: the CI run that once saw it succeed (a cold fresh clone,
    // slow enough for the publish to land after the kill). Ending every
    // connection but ours after the plant makes the next reconnect the one
    // that fences; what was connected is kept for the message.
    let before: String = redis::cmd("CLIENT").arg("LIST").query(&mut raw).unwrap();
    kill_all_but_me(&mut raw);
    // Until the old socket is noticed dead, a call fails with a connection
    // error; the first reconnect fences and refuses.
    let err = loop {
        let err = match client.enqueue(Q, "refused", Default::default()).await {
            Err(err) => err,
            Ok(e) => panic!(
                "enqueued {e:?} past a planted echomq:1.3.0; server now holds {:?}; \
                 connected before the first call:\n{before}",
                raw.get::<_, Option<String>>("{emq}:version")
            ),
        };
        if err.kind() != ErrorKind::Connection {
            break err;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(err.kind(), ErrorKind::VersionFence);
    assert_eq!(err.found(), Some("echomq:1.3.0"));
    assert!(members(&mut raw, "pending").is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn s12_script_flush_is_healed() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let _: () = redis::cmd("SCRIPT").arg("FLUSH").query(&mut raw).unwrap();
    client.enqueue(Q, "one", Default::default()).await.unwrap();
    let _: () = redis::cmd("SCRIPT").arg("FLUSH").query(&mut raw).unwrap();
    let many = client
        .enqueue_many(Q, &echomq::EnqueueOptions::defaults_for(&["a", "b", "c"]))
        .await
        .unwrap();
    assert!(many.iter().all(|v| v.is_ok()));
    assert_eq!(members(&mut raw, "pending").len(), 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn s13_paused_queue_claims_nothing() {
    let server = Server::start();
    let client = connect(&server).await;
    let e = client.enqueue(Q, "job", Default::default()).await.unwrap();
    client.pause(Q).await.unwrap();
    assert!(client.is_paused(Q).await.unwrap());
    assert!(client.claim(Q, 1000).await.unwrap().is_none());
    let mut raw = server.raw();
    assert_eq!(members(&mut raw, "pending"), vec![e.id.to_string()]);
    assert_eq!(row(&mut raw, e.id.as_str())["attempts"], b"0");
    client.resume(Q).await.unwrap();
    assert_eq!(client.claim(Q, 1000).await.unwrap().unwrap().id, e.id);
}

#[tokio::test(flavor = "multi_thread")]
async fn s14_sixteen_tasks_enqueue_ten_thousand_through_one_client() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut tasks = Vec::new();
    for t in 0..16 {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for i in 0..625 {
                ids.push(
                    client
                        .enqueue(Q, format!("{t}:{i}"), Default::default())
                        .await
                        .unwrap()
                        .id,
                );
            }
            ids
        }));
    }
    let mut all = HashSet::new();
    for task in tasks {
        for id in task.await.unwrap() {
            assert!(all.insert(id), "id repeated");
        }
    }
    assert_eq!(all.len(), 10_000);
    let mut raw = server.raw();
    let pending: u64 = raw.zcard(format!("emq:{{{Q}}}:pending")).unwrap();
    assert_eq!(pending, 10_000);
    let rows: Vec<String> = redis::cmd("KEYS")
        .arg(format!("emq:{{{Q}}}:job:*"))
        .query(&mut raw)
        .unwrap();
    assert_eq!(rows.len(), 10_000);
    assert_eq!(client.counts(Q).await.unwrap().pending, 10_000);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_never_reaches_the_wire() {
    let server = Server::start();
    let options = ConnectOptions {
        max_payload: 8,
        ..Default::default()
    };
    let client = Client::connect(&server.url(), options).await.unwrap();
    let mut raw = server.raw();
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query(&mut raw)
        .unwrap();
    assert_eq!(
        client
            .enqueue("emq", "x", Default::default())
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidQueue
    );
    assert_eq!(
        client
            .enqueue("a b", "x", Default::default())
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidQueue
    );
    assert_eq!(
        client
            .enqueue(Q, "123456789", Default::default())
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        client
            .enqueue_many(
                Q,
                &echomq::EnqueueOptions::defaults_for(&["ok", "123456789"])
            )
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        client
            .enqueue(Q, "x", echomq::EnqueueOptions::default().id("JOB123"))
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidId
    );
    assert_eq!(
        client.claim(Q, 0).await.unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        client.complete(Q, "nope", 1).await.unwrap_err().kind(),
        ErrorKind::InvalidId
    );
    let r = client
        .retry(Q, "JOB00000000001", 1, 0, 0, "e")
        .await
        .unwrap_err();
    assert_eq!(r.kind(), ErrorKind::InvalidArgument);
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut raw)
        .unwrap();
    assert!(!info.contains("evalsha"), "{info}");
    let keys: Vec<String> = redis::cmd("KEYS").arg("emq:*").query(&mut raw).unwrap();
    assert!(keys.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn remove_and_schedule() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let later = client
        .enqueue(
            Q,
            "later",
            echomq::EnqueueOptions::default().delay_ms(60_000),
        )
        .await
        .unwrap();
    let r = row(&mut raw, later.id.as_str());
    assert_eq!(r["state"], b"scheduled");
    assert_eq!(r.len(), 3);
    let at = server_ms(&mut raw) + 1_000_000;
    let fixed = client
        .enqueue(Q, "fixed", echomq::EnqueueOptions::default().run_at_ms(at))
        .await
        .unwrap();
    assert_eq!(
        score(&mut raw, "schedule", fixed.id.as_str()),
        Some(at as f64)
    );
    client.remove(Q, later.id.as_str()).await.unwrap();
    assert!(row(&mut raw, later.id.as_str()).is_empty());
    assert_eq!(members(&mut raw, "schedule"), vec![fixed.id.to_string()]);
    let now = client.enqueue(Q, "now", Default::default()).await.unwrap();
    let job = client.claim(Q, 10_000).await.unwrap().unwrap();
    assert_eq!(job.id, now.id);
    assert_eq!(
        client.remove(Q, now.id.as_str()).await.unwrap_err().kind(),
        ErrorKind::JobActive
    );
    assert_eq!(
        client
            .remove(Q, later.id.as_str())
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::Gone
    );
    let c = client.counts(Q).await.unwrap();
    assert_eq!((c.pending, c.active, c.scheduled, c.dead), (0, 1, 1, 0));
    // A settled-then-scheduled job cannot be completed by its old holder.
    client
        .retry(Q, job.id.as_str(), job.token, 60_000, 5, "later")
        .await
        .unwrap();
    assert_eq!(
        client
            .complete(Q, job.id.as_str(), job.token)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::Stale
    );
    assert_eq!(row(&mut raw, job.id.as_str())["state"], b"scheduled");
}

#[test]
fn blocking_facade_round_trip() {
    let server = Server::start();
    let client =
        echomq::blocking::Client::connect(&server.url(), ConnectOptions::default()).unwrap();
    let e = client.enqueue(Q, "sync", Default::default()).unwrap();
    let job = client.claim(Q, 1000).unwrap().unwrap();
    assert_eq!(job.id, e.id);
    client.complete(Q, job.id.as_str(), job.token).unwrap();
    assert_eq!(client.counts(Q).unwrap().completed, 1);
    client.close();
    assert_eq!(client.counts(Q).unwrap_err().kind(), ErrorKind::Closed);
}

#[tokio::test(flavor = "multi_thread")]
async fn complete_many_checks_every_token_and_settles_the_rest() {
    let server = Server::start();
    let client = connect(&server).await;
    client
        .enqueue_many(Q, &echomq::EnqueueOptions::defaults_for(&["a", "b", "c"]))
        .await
        .unwrap();
    let jobs = client.claim_many(Q, 3, 10_000).await.unwrap();
    assert_eq!(jobs.len(), 3);
    let gone = echomq::id::mint_job_id();
    let batch = [
        (jobs[0].id.as_str(), jobs[0].token),
        (jobs[1].id.as_str(), 99),
        (gone.as_str(), 1),
        (jobs[2].id.as_str(), jobs[2].token),
    ];
    let verdicts = client.complete_many(Q, &batch).await.unwrap();
    assert!(verdicts[0].is_ok());
    assert_eq!(verdicts[1].as_ref().unwrap_err().kind(), ErrorKind::Stale);
    assert_eq!(verdicts[2].as_ref().unwrap_err().kind(), ErrorKind::Gone);
    assert!(verdicts[3].is_ok());
    let mut raw = server.raw();
    assert_eq!(members(&mut raw, "active"), vec![jobs[1].id.to_string()]);
    assert!(row(&mut raw, jobs[0].id.as_str()).is_empty());
    assert_eq!(row(&mut raw, jobs[1].id.as_str())["state"], b"active");
    let done: u64 = raw
        .hget(format!("emq:{{{Q}}}:metrics:completed"), "count")
        .unwrap();
    assert_eq!(done, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn empty_batches_answer_empty() {
    let server = Server::start();
    let client = connect(&server).await;
    let none: [&str; 0] = [];
    assert!(client
        .enqueue_many(Q, &echomq::EnqueueOptions::defaults_for(&none))
        .await
        .unwrap()
        .is_empty());
    assert!(client.complete_many(Q, &[]).await.unwrap().is_empty());
    assert!(client.extend_many(Q, &[], 1000).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn unix_socket_urls_connect_and_fence() {
    let dir = std::env::temp_dir().join(format!("emq-unix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("redis.sock");
    let mut child = std::process::Command::new(common::flavour::server_binary())
        .args([
            "--port",
            "0",
            "--save",
            "",
            "--appendonly",
            "no",
            "--unixsocket",
        ])
        .arg(&sock)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("redis+unix://{}", sock.display());
    let mut client = None;
    for _ in 0..200 {
        match Client::connect(&url, ConnectOptions::default()).await {
            Ok(c) => {
                client = Some(c);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(25)).await,
        }
    }
    let client = client.expect("connect over the unix socket");
    let e = client
        .enqueue(Q, "over a socket", Default::default())
        .await
        .unwrap();
    let job = client.claim(Q, 1000).await.unwrap().unwrap();
    assert_eq!(job.id, e.id);
    let mut raw = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let version: String = raw.get("{emq}:version").unwrap();
    assert_eq!(version, echomq::PROTOCOL_VERSION);
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn release_hands_held_jobs_back_to_pending_with_attempts_kept() {
    let server = Server::start();
    let client = connect(&server).await;
    client
        .enqueue_many(Q, &echomq::EnqueueOptions::defaults_for(&["a", "b"]))
        .await
        .unwrap();
    let jobs = client.claim_many(Q, 2, 30_000).await.unwrap();
    let (a, b) = (&jobs[0], &jobs[1]);
    let verdicts = client
        .release_many(Q, &[(a.id.as_str(), 1), (b.id.as_str(), 7)])
        .await
        .unwrap();
    assert!(verdicts[0].is_ok());
    assert_eq!(verdicts[1].as_ref().unwrap_err().kind(), ErrorKind::Stale);
    let mut raw = server.raw();
    assert_eq!(members(&mut raw, "pending"), vec![a.id.to_string()]);
    assert_eq!(members(&mut raw, "active"), vec![b.id.to_string()]);
    let released = row(&mut raw, a.id.as_str());
    assert_eq!(released["state"], b"pending");
    assert_eq!(released["attempts"], b"1");
    assert!(!released.contains_key("last_error"));
    // Not held any more: a second release is stale and changes nothing.
    let again = client.release_many(Q, &[(a.id.as_str(), 1)]).await.unwrap();
    assert_eq!(again[0].as_ref().unwrap_err().kind(), ErrorKind::Stale);
    assert_eq!(members(&mut raw, "pending"), vec![a.id.to_string()]);
    assert_eq!(client.claim(Q, 1000).await.unwrap().unwrap().token, 2);
}
