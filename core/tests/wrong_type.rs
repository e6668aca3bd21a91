//! Nothing half-written (issue #39, docs/PROTOCOL-DECISIONS.md W.1): a Lua
//! script that fails a command keeps the writes it made before it, so every
//! script a client speaking 2.1.0 sends proves the type of each key it writes
//! before its first write. Per verb: someone else's key of another type is
//! planted where the script writes, the verb answers the server's own kind
//! of refusal (`Server`, not retryable, a `WRONGTYPE` reply), and the whole
//! keyspace is byte for byte what it was (no job row, no set member, no
//! counter moved).

mod common;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::{Duration, Instant};

use common::Server;
use echomq::{
    Client, ConnectOptions, EnqueueOptions, Error, ErrorKind, RepeatOptions, WireVersion,
};
use redis::Commands;

const Q: &str = "wt";
const PENDING: &str = "emq:{wt}:pending";
const ACTIVE: &str = "emq:{wt}:active";
const SCHEDULE: &str = "emq:{wt}:schedule";
const DEAD: &str = "emq:{wt}:dead";
const COMPLETED: &str = "emq:{wt}:metrics:completed";
const WAKE: &str = "emq:{wt}:wake";

async fn connect(server: &Server) -> Client {
    Client::connect(&server.url(), ConnectOptions::default())
        .await
        .unwrap()
}

fn row(id: &str) -> String {
    format!("emq:{{{Q}}}:job:{id}")
}

/// Every key but `except`: its type, its `DUMP` (the value's bytes) and
/// whether it has a TTL.
type Keyspace = BTreeMap<String, (String, Vec<u8>, bool)>;

fn keyspace(raw: &mut redis::Connection, except: &[&str]) -> Keyspace {
    let keys: Vec<String> = raw.keys("*").unwrap();
    keys.into_iter()
        .filter(|k| !except.contains(&k.as_str()))
        .map(|k| {
            let kind: String = redis::cmd("TYPE").arg(&k).query(raw).unwrap();
            let dump: Vec<u8> = redis::cmd("DUMP").arg(&k).query(raw).unwrap();
            let ttl: i64 = raw.pttl(&k).unwrap();
            (k, (kind, dump, ttl >= 0))
        })
        .collect()
}

/// Someone else's string where the queue keeps `key`.
fn plant(raw: &mut redis::Connection, key: &str) {
    let _: () = raw.set(key, "not ours").unwrap();
}

/// The refusal a key of another type gets: the server's own kind.
fn assert_wrong_type(err: &Error) {
    assert_eq!(err.kind(), ErrorKind::Server, "{err}");
    assert!(!err.is_retryable(), "{err}");
    assert!(err.message().contains("WRONGTYPE"), "{err}");
}

/// `result` was refused as a key of another type, and the keyspace (but
/// `except`) is what it was before: nothing was written.
fn refused_whole<T: Debug>(
    result: echomq::Result<T>,
    raw: &mut redis::Connection,
    before: &Keyspace,
    except: &[&str],
) {
    let err = result.expect_err("a key of another type is refused");
    assert_wrong_type(&err);
    assert_unchanged(before, &keyspace(raw, except));
}

/// Fails naming every key the call created, changed or deleted.
fn assert_unchanged(before: &Keyspace, after: &Keyspace) {
    let written: std::collections::BTreeSet<&String> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert!(written.is_empty(), "the refused call wrote {written:?}");
}

/// A batch verb whose items were each refused (or the whole call).
fn refused_items<T: Debug>(
    result: echomq::Result<Vec<echomq::Result<T>>>,
    raw: &mut redis::Connection,
    before: &Keyspace,
) {
    match result {
        Ok(items) => {
            assert!(!items.is_empty());
            for item in items {
                assert_wrong_type(&item.expect_err("each item is refused"));
            }
        }
        Err(err) => assert_wrong_type(&err),
    }
    assert_unchanged(before, &keyspace(raw, &[]));
}

fn server_ms(raw: &mut redis::Connection) -> u64 {
    let (s, us): (u64, u64) = redis::cmd("TIME").query(raw).unwrap();
    s * 1000 + us / 1000
}

/// Wait (up to 5 s) until the lease of every job in active has lapsed by the
/// server's clock.
fn wait_lapsed(raw: &mut redis::Connection) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let last: Vec<(String, f64)> = raw.zrevrange_withscores(ACTIVE, 0, 0).unwrap();
        let lapsed = last
            .first()
            .is_some_and(|(_, score)| (server_ms(raw) as f64) > *score);
        if lapsed {
            return;
        }
        assert!(Instant::now() < deadline, "leases never lapsed: {last:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

async fn enqueue(client: &Client, payload: &str) -> String {
    client
        .enqueue(Q, payload, EnqueueOptions::default())
        .await
        .unwrap()
        .id
        .to_string()
}

/// A job that is dead (claimed once, failed at max attempts 1).
async fn dead_job(client: &Client) -> String {
    let id = enqueue(client, "doomed").await;
    let job = client.claim(Q, 30_000).await.unwrap().unwrap();
    assert_eq!(job.id.as_str(), id);
    client.retry(Q, &id, job.token, 0, 1, "boom").await.unwrap();
    id
}

/// A set member whose row is someone else's string (an id minted after
/// every job of the test, so it sorts last).
fn foreign_member(raw: &mut redis::Connection, set: &str) -> String {
    let id = echomq::id::mint_job_id().to_string();
    let _: () = raw.zadd(set, &id, 0).unwrap();
    plant(raw, &row(&id));
    id
}

#[tokio::test(flavor = "multi_thread")]
async fn enqueue_writes_no_row_beside_a_pending_key_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    plant(&mut raw, PENDING);
    let before = keyspace(&mut raw, &[WAKE]);
    // A minted id: the wake hint rides in the same round trip after the
    // script (decision 39.14), so only the wake list may have changed.
    let minted = client.enqueue(Q, "x", EnqueueOptions::default()).await;
    refused_whole(minted, &mut raw, &before, &[WAKE]);
    // A chosen id: no hint before the reply, nothing at all is written.
    let before = keyspace(&mut raw, &[]);
    let chosen = echomq::id::mint_job_id().to_string();
    let result = client
        .enqueue(Q, "x", EnqueueOptions::default().id(chosen.clone()))
        .await;
    refused_whole(result, &mut raw, &before, &[]);
    assert!(!raw.exists::<_, bool>(row(&chosen)).unwrap());
    let kept: String = raw.get(PENDING).unwrap();
    assert_eq!(kept, "not ours");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_scheduled_enqueue_writes_no_row_beside_a_schedule_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    plant(&mut raw, SCHEDULE);
    let before = keyspace(&mut raw, &[WAKE]);
    let delayed = EnqueueOptions {
        delay_ms: Some(60_000),
        ..EnqueueOptions::default()
    };
    let result = client.enqueue(Q, "later", delayed).await;
    refused_whole(result, &mut raw, &before, &[WAKE]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dedup_enqueue_writes_neither_row_nor_dedup_key() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    plant(&mut raw, PENDING);
    let before = keyspace(&mut raw, &[]);
    let deduped = EnqueueOptions {
        dedup_id: Some("once".into()),
        ..EnqueueOptions::default()
    };
    let result = client.enqueue(Q, "x", deduped).await;
    refused_whole(result, &mut raw, &before, &[]);
    assert!(!raw.exists::<_, bool>("emq:{wt}:de:once").unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_enqueue_writes_no_rows() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    plant(&mut raw, PENDING);
    let before = keyspace(&mut raw, &[]);
    let items = vec![
        ("a", EnqueueOptions::default()),
        ("b", EnqueueOptions::default()),
    ];
    let result = client.enqueue_many(Q, &items).await;
    refused_items(result, &mut raw, &before);
}

#[tokio::test(flavor = "multi_thread")]
async fn claim_takes_nothing_from_pending_when_active_is_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    enqueue(&client, "a").await;
    enqueue(&client, "b").await;
    plant(&mut raw, ACTIVE);
    let before = keyspace(&mut raw, &[]);
    let result = client.claim_many(Q, 10, 30_000).await;
    refused_whole(result, &mut raw, &before, &[]);
    let left: u64 = raw.zcard(PENDING).unwrap();
    assert_eq!(left, 2, "both jobs still wait, their attempts untouched");
}

#[tokio::test(flavor = "multi_thread")]
async fn claim_takes_nothing_when_a_popped_row_is_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let first = enqueue(&client, "a").await;
    foreign_member(&mut raw, PENDING);
    let before = keyspace(&mut raw, &[]);
    // The claim reads every row it would hand out before it writes: the
    // first job is not claimed, then lost with the second's refusal.
    let result = client.claim_many(Q, 10, 30_000).await;
    refused_whole(result, &mut raw, &before, &[]);
    let attempts: String = raw.hget(row(&first), "attempts").unwrap();
    assert_eq!(attempts, "0");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_claims_attempts_cap_dead_letters_nothing_into_a_dead_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let id = enqueue(&client, "spent").await;
    // It already used its attempts: the capped claim would dead-letter it.
    let _: () = raw.hset(row(&id), "attempts", "3").unwrap();
    plant(&mut raw, DEAD);
    let before = keyspace(&mut raw, &[]);
    let result = client.claim_capped(Q, 10, 30_000, 3).await;
    refused_whole(result, &mut raw, &before, &[]);
}

#[tokio::test(flavor = "multi_thread")]
async fn complete_keeps_the_job_when_a_counter_is_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let id = enqueue(&client, "a").await;
    let job = client.claim(Q, 30_000).await.unwrap().unwrap();
    plant(&mut raw, COMPLETED);
    let before = keyspace(&mut raw, &[]);
    let result = client.complete(Q, &id, job.token).await;
    refused_whole(result, &mut raw, &before, &[]);
    let state: String = raw.hget(row(&id), "state").unwrap();
    assert_eq!(state, "active", "still held, still in active");
}

#[tokio::test(flavor = "multi_thread")]
async fn complete_many_keeps_every_job_when_a_counter_is_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    enqueue(&client, "a").await;
    enqueue(&client, "b").await;
    let jobs = client.claim_many(Q, 2, 30_000).await.unwrap();
    assert_eq!(jobs.len(), 2);
    plant(&mut raw, COMPLETED);
    let before = keyspace(&mut raw, &[]);
    let held: Vec<(&str, u64)> = jobs.iter().map(|j| (j.id.as_str(), j.token)).collect();
    let result = client.complete_many(Q, &held).await;
    refused_items(result, &mut raw, &before);
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_keeps_the_job_held_when_schedule_or_dead_is_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let id = enqueue(&client, "a").await;
    let job = client.claim(Q, 30_000).await.unwrap().unwrap();
    // Scheduled again: the schedule is the key it writes.
    plant(&mut raw, SCHEDULE);
    let before = keyspace(&mut raw, &[]);
    let result = client.retry(Q, &id, job.token, 1_000, 5, "again").await;
    refused_whole(result, &mut raw, &before, &[]);
    // Dead-lettered: the dead set is.
    let _: () = raw.del(SCHEDULE).unwrap();
    plant(&mut raw, DEAD);
    let before = keyspace(&mut raw, &[]);
    let result = client.retry(Q, &id, job.token, 1_000, 1, "dead").await;
    refused_whole(result, &mut raw, &before, &[]);
    let held: (String, Option<String>) = redis::cmd("HMGET")
        .arg(row(&id))
        .arg("state")
        .arg("last_error")
        .query(&mut raw)
        .unwrap();
    assert_eq!(held, ("active".to_string(), None));
}

#[tokio::test(flavor = "multi_thread")]
async fn release_keeps_the_job_held_when_pending_is_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    enqueue(&client, "a").await;
    let job = client.claim(Q, 30_000).await.unwrap().unwrap();
    plant(&mut raw, PENDING);
    let before = keyspace(&mut raw, &[]);
    let result = client
        .release_many(Q, &[(job.id.as_str(), job.token)])
        .await;
    refused_items(result, &mut raw, &before);
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limit_keeps_the_job_held_when_schedule_is_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let id = enqueue(&client, "a").await;
    let job = client.claim(Q, 30_000).await.unwrap().unwrap();
    plant(&mut raw, SCHEDULE);
    let before = keyspace(&mut raw, &[]);
    let result = client.rate_limit(Q, &id, job.token, 1_000).await;
    refused_whole(result, &mut raw, &before, &[]);
}

#[tokio::test(flavor = "multi_thread")]
async fn promote_moves_nothing_when_pending_or_a_row_is_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let due = EnqueueOptions {
        run_at_ms: Some(1),
        ..EnqueueOptions::default()
    };
    client.enqueue(Q, "due", due).await.unwrap();
    plant(&mut raw, PENDING);
    let before = keyspace(&mut raw, &[]);
    refused_whole(client.promote(Q, 100).await, &mut raw, &before, &[]);
    // A due member whose row is someone else's string, after a good job.
    let _: () = raw.del(PENDING).unwrap();
    let foreign = foreign_member(&mut raw, SCHEDULE);
    let _: () = raw.zadd(SCHEDULE, &foreign, 2).unwrap();
    let before = keyspace(&mut raw, &[]);
    refused_whole(client.promote(Q, 100).await, &mut raw, &before, &[]);
}

#[tokio::test(flavor = "multi_thread")]
async fn reap_returns_nothing_when_pending_is_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    enqueue(&client, "a").await;
    client.claim(Q, 1).await.unwrap().unwrap();
    wait_lapsed(&mut raw);
    plant(&mut raw, PENDING);
    let before = keyspace(&mut raw, &[]);
    refused_whole(client.reap(Q, 100).await, &mut raw, &before, &[]);
    refused_whole(client.reap_stalled(Q, 100, 5).await, &mut raw, &before, &[]);
    // At the stall cap the dead set is written instead.
    let _: () = raw.del(PENDING).unwrap();
    plant(&mut raw, DEAD);
    let before = keyspace(&mut raw, &[]);
    refused_whole(client.reap_stalled(Q, 100, 1).await, &mut raw, &before, &[]);
}

#[tokio::test(flavor = "multi_thread")]
async fn remove_unlinks_nothing_when_a_set_is_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let id = enqueue(&client, "a").await;
    // remove unlinks from pending, schedule and dead in turn.
    plant(&mut raw, DEAD);
    let before = keyspace(&mut raw, &[]);
    refused_whole(client.remove(Q, &id).await, &mut raw, &before, &[]);
    let waiting: Option<f64> = raw.zscore(PENDING, &id).unwrap();
    assert_eq!(waiting, Some(0.0), "still in pending, with its row");
}

#[tokio::test(flavor = "multi_thread")]
async fn drain_deletes_nothing_when_a_row_is_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    enqueue(&client, "a").await;
    foreign_member(&mut raw, PENDING);
    let before = keyspace(&mut raw, &[]);
    refused_whole(client.drain(Q, false, None).await, &mut raw, &before, &[]);
}

#[tokio::test(flavor = "multi_thread")]
async fn purge_dead_deletes_nothing_when_a_row_is_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    dead_job(&client).await;
    foreign_member(&mut raw, DEAD);
    let before = keyspace(&mut raw, &[]);
    refused_whole(
        client.purge_dead(Q, None, None).await,
        &mut raw,
        &before,
        &[],
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn requeue_moves_nothing_when_pending_or_the_row_is_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let id = dead_job(&client).await;
    plant(&mut raw, PENDING);
    let before = keyspace(&mut raw, &[]);
    refused_whole(client.requeue_dead(Q, &id).await, &mut raw, &before, &[]);
    refused_whole(
        client.requeue_all_dead(Q, None).await,
        &mut raw,
        &before,
        &[],
    );
    // A dead member whose row is someone else's string.
    let _: () = raw.del(PENDING).unwrap();
    let foreign = foreign_member(&mut raw, DEAD);
    let before = keyspace(&mut raw, &[]);
    refused_whole(
        client.requeue_dead(Q, &foreign).await,
        &mut raw,
        &before,
        &[],
    );
    refused_whole(
        client.requeue_all_dead(Q, None).await,
        &mut raw,
        &before,
        &[],
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repeat_fires_nothing_into_a_pending_of_another_type() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let options = RepeatOptions {
        every_ms: Some(60_000),
        ..RepeatOptions::default()
    };
    client
        .upsert_repeat(Q, "tick", b"work", &options)
        .await
        .unwrap();
    // Due now: its slot moved into the past, rather than waited for.
    let slot = server_ms(&mut raw) - 1_000;
    let _: () = raw.zadd("emq:{wt}:repeat", "tick", slot).unwrap();
    plant(&mut raw, PENDING);
    let before = keyspace(&mut raw, &[]);
    refused_whole(client.fire_repeats(Q, 100).await, &mut raw, &before, &[]);
}

#[tokio::test(flavor = "multi_thread")]
async fn upgrade_leaves_the_version_when_the_bundle_record_is_of_another_type() {
    let server = Server::start();
    let old = Client::connect(
        &server.url(),
        ConnectOptions {
            wire_version: WireVersion::V2_0_0,
            ..ConnectOptions::default()
        },
    )
    .await
    .unwrap();
    let mut raw = server.raw();
    plant(&mut raw, "{emq}:bundle");
    let err = old
        .upgrade_protocol(WireVersion::V2_0_0, WireVersion::V2_1_0, false)
        .await
        .expect_err("a bundle record of another type is refused");
    assert_wrong_type(&err);
    let version: String = raw.get("{emq}:version").unwrap();
    assert_eq!(version, "echomq:2.0.0", "the version did not move");
    let kept: String = raw.get("{emq}:bundle").unwrap();
    assert_eq!(kept, "not ours");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_speaking_2_0_0_sends_the_2_0_0_bytes_which_still_half_write() {
    // The 2.0.0 scripts keep their bytes (decision 13.3; enqueue's SHA1 is
    // the seed contract's): a 2.0.0 client's enqueue still leaves its row
    // behind. This pins which scripts each version sends.
    let server = Server::start();
    let old = Client::connect(
        &server.url(),
        ConnectOptions {
            wire_version: WireVersion::V2_0_0,
            ..ConnectOptions::default()
        },
    )
    .await
    .unwrap();
    let mut raw = server.raw();
    plant(&mut raw, PENDING);
    let chosen = echomq::id::mint_job_id().to_string();
    let err = old
        .enqueue(Q, "x", EnqueueOptions::default().id(chosen.clone()))
        .await
        .unwrap_err();
    assert_wrong_type(&err);
    assert!(raw.exists::<_, bool>(row(&chosen)).unwrap());
}
