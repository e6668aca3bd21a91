//! Repeatable jobs (issue #13 §6, wire 2.1.0) against a real server: the
//! record and the schedule as written, firing on the server clock under ids
//! derived from the name and the slot, missed slots skipped, the three
//! double-fire guards, two pumps racing for 20 slots, the worker's pump, bad
//! input refused with nothing written, and 2.0.0 refusing the verbs before
//! any I/O. Every test asserts wire state as well as answers.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::Server;
use echomq::{
    repeat_job_id, Client, ConnectOptions, ErrorKind, RepeatOptions, WireVersion, Worker,
    WorkerOptions,
};
use redis::Commands;

const Q: &str = "repeats";
const SCHEDULE: &str = "emq:{repeats}:repeat";

async fn connect_as(server: &Server, wire: WireVersion) -> Client {
    let options = ConnectOptions {
        wire_version: wire,
        ..ConnectOptions::default()
    };
    Client::connect(&server.url(), options).await.unwrap()
}

async fn connect(server: &Server) -> Client {
    connect_as(server, WireVersion::NEWEST).await
}

fn record(raw: &mut redis::Connection, name: &str) -> HashMap<String, String> {
    raw.hgetall(format!("emq:{{{Q}}}:repeat:{name}")).unwrap()
}

fn slot_of(raw: &mut redis::Connection, name: &str) -> Option<u64> {
    let score: Option<f64> = raw.zscore(SCHEDULE, name).unwrap();
    score.map(|s| s as u64)
}

fn pending(raw: &mut redis::Connection) -> Vec<String> {
    raw.zrange(format!("emq:{{{Q}}}:pending"), 0, -1).unwrap()
}

fn server_ms(raw: &mut redis::Connection) -> u64 {
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query(raw).unwrap();
    secs * 1000 + micros / 1000
}

fn every(ms: u64) -> RepeatOptions {
    RepeatOptions {
        every_ms: Some(ms),
        ..RepeatOptions::default()
    }
}

/// Wait (bounded) until `done` holds; the bound only keeps a broken build from hanging.
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "not reached in 30 s: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn upsert_writes_the_record_and_the_schedule_on_the_server_clock() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();

    let before = server_ms(&mut raw);
    let r = client
        .upsert_repeat(Q, "tick", b"payload-1", &every(60_000))
        .await
        .unwrap();
    let after = server_ms(&mut raw);
    assert_eq!(r.name, "tick");
    assert_eq!(
        (r.every_ms, r.cron.as_deref(), r.count),
        (Some(60_000), None, 0)
    );
    assert!(
        (before + 60_000..=after + 60_000).contains(&r.next_run_ms),
        "{r:?}"
    );
    assert_eq!(slot_of(&mut raw, "tick"), Some(r.next_run_ms));
    let rec = record(&mut raw, "tick");
    assert_eq!(rec["every_ms"], "60000");
    assert_eq!(rec["template"], "payload-1");
    assert_eq!(rec["count"], "0");
    assert!(rec.contains_key("tag"));
    assert!(
        !rec.contains_key("cron") && !rec.contains_key("limit"),
        "{rec:?}"
    );

    // The same spec again keeps the slot (a service upserting at every start
    // does not push its schedule back) and replaces only the payload.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let again = client
        .upsert_repeat(Q, "tick", b"payload-2", &every(60_000))
        .await
        .unwrap();
    assert_eq!(again.next_run_ms, r.next_run_ms);
    assert_eq!(again.payload, b"payload-2");
    assert_eq!(record(&mut raw, "tick")["template"], "payload-2");

    // A changed spec is rescheduled from now.
    let changed = client
        .upsert_repeat(Q, "tick", b"payload-2", &every(120_000))
        .await
        .unwrap();
    assert!(changed.next_run_ms > r.next_run_ms);
    assert_eq!(slot_of(&mut raw, "tick"), Some(changed.next_run_ms));
    assert_eq!(record(&mut raw, "tick")["every_ms"], "120000");

    // Cron in a zone: the slot is a whole five minutes, after now.
    let cron = RepeatOptions {
        cron: Some("*/5 * * * *".into()),
        tz: Some("Europe/Berlin".into()),
        limit: Some(3),
        ..RepeatOptions::default()
    };
    let c = client
        .upsert_repeat(Q, "report", b"{}", &cron)
        .await
        .unwrap();
    assert_eq!(c.next_run_ms % 300_000, 0);
    assert!(c.next_run_ms > after && c.next_run_ms <= server_ms(&mut raw) + 300_000);
    let rec = record(&mut raw, "report");
    assert_eq!(
        (rec["cron"].as_str(), rec["tz"].as_str()),
        ("*/5 * * * *", "Europe/Berlin")
    );
    assert_eq!(rec["limit"], "3");
    assert!(!rec.contains_key("every_ms"));
    // Cron without a zone is read in UTC.
    let utc = RepeatOptions {
        cron: Some("0 9 * * 1-5".into()),
        ..RepeatOptions::default()
    };
    let u = client.upsert_repeat(Q, "nine", b"", &utc).await.unwrap();
    assert_eq!(u.tz.as_deref(), Some("UTC"));
    assert_eq!(u.next_run_ms % 3_600_000, 9 * 3_600_000 % 3_600_000);

    let listed = client.list_repeats(Q).await.unwrap();
    let names: Vec<&str> = listed.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(listed.len(), 3, "{names:?}");
    // Soonest first.
    assert!(listed
        .windows(2)
        .all(|w| w[0].next_run_ms <= w[1].next_run_ms));

    assert!(client.remove_repeat(Q, "tick").await.unwrap());
    assert!(!client.remove_repeat(Q, "tick").await.unwrap());
    assert!(record(&mut raw, "tick").is_empty());
    assert_eq!(slot_of(&mut raw, "tick"), None);
    assert_eq!(client.list_repeats(Q).await.unwrap().len(), 2);
}

/// Issue #39 item 6: a cron repeat's first slot is never before a
/// `start_at` with a sub-second part (it rounded down by up to a second).
/// The slots are computed and read from the wire, not waited for.
#[tokio::test(flavor = "multi_thread")]
async fn a_cron_start_at_with_a_sub_second_part_gets_no_earlier_slot() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    // An hour ahead, on a whole minute, plus half a second.
    let minute = (server_ms(&mut raw) / 60_000 + 60) * 60_000;
    let start = minute + 500;
    for (name, pattern, first) in [
        ("seconds", "* * * * * *", minute + 1_000),
        ("minutes", "* * * * *", minute + 60_000),
    ] {
        let options = RepeatOptions {
            cron: Some(pattern.into()),
            start_at: Some(start),
            ..RepeatOptions::default()
        };
        let r = client.upsert_repeat(Q, name, b"c", &options).await.unwrap();
        assert_eq!(r.next_run_ms, first, "{name}: {r:?}");
        assert_eq!(slot_of(&mut raw, name), Some(first), "{name}");
        assert!(first >= start);
        assert_eq!(record(&mut raw, name)["start_at"], start.to_string());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_due_slot_fires_one_job_under_its_derived_id_and_the_schedule_advances() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let start = server_ms(&mut raw) + 60_000;
    let options = RepeatOptions {
        start_at: Some(start),
        ..every(60_000)
    };
    let r = client
        .upsert_repeat(Q, "due", b"work", &options)
        .await
        .unwrap();
    assert_eq!(r.next_run_ms, start);
    // Not due yet by the server clock (a minute away: no window to lose).
    assert_eq!(client.fire_repeats(Q, 100).await.unwrap(), 0);
    // Make a slot due by moving it into the past, rather than sleeping.
    let now = server_ms(&mut raw) - 1_000;
    let _: () = raw.zadd(SCHEDULE, "due", now).unwrap();
    let mut events = client.subscribe(Q).await.unwrap();
    assert_eq!(client.fire_repeats(Q, 100).await.unwrap(), 1);

    let id = repeat_job_id(Q, "due", now).unwrap();
    // The fire is published as an 'added' event naming its repeat.
    let added = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (added.event.as_str(), added.job.as_str()),
        ("added", id.as_str())
    );
    assert_eq!(added.field("repeat"), Some("due"));
    assert_eq!(id.minted_at_ms(), now);
    assert_eq!(pending(&mut raw), vec![id.to_string()]);
    let row: HashMap<String, String> = raw.hgetall(format!("emq:{{{Q}}}:job:{id}")).unwrap();
    let expected: HashMap<String, String> =
        [("state", "pending"), ("attempts", "0"), ("payload", "work")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    assert_eq!(row, expected, "a plain 2.0.0 row of three fields");
    let rec = record(&mut raw, "due");
    assert_eq!(rec["count"], "1");
    assert_eq!(rec["last_slot"], now.to_string());
    assert_eq!(rec["last_id"], id.to_string());
    assert_eq!(slot_of(&mut raw, "due"), Some(now + 60_000));
    // Not due again yet.
    assert_eq!(client.fire_repeats(Q, 100).await.unwrap(), 0);
    assert_eq!(pending(&mut raw).len(), 1);
    let listed = client.list_repeats(Q).await.unwrap();
    assert_eq!((listed[0].count, listed[0].last_id), (1, Some(id)));
    assert_eq!(listed[0].last_run_ms, Some(now));
}

#[tokio::test(flavor = "multi_thread")]
async fn missed_slots_are_skipped_not_replayed() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    client
        .upsert_repeat(Q, "late", b"x", &every(100))
        .await
        .unwrap();
    // As if no pump ran for 50 slots: the repeat waits for a slot 5 s ago.
    let now = server_ms(&mut raw);
    let overdue = now - 5_000;
    let _: () = raw.zadd(SCHEDULE, "late", overdue).unwrap();
    assert_eq!(client.fire_repeats(Q, 100).await.unwrap(), 1);
    assert_eq!(client.fire_repeats(Q, 100).await.unwrap(), 0);
    // One job, for the slot it waited for; the next slot is on its grid after now.
    let jobs = pending(&mut raw);
    assert_eq!(
        jobs,
        vec![repeat_job_id(Q, "late", overdue).unwrap().to_string()]
    );
    let next = slot_of(&mut raw, "late").unwrap();
    assert!(
        next > now && next <= server_ms(&mut raw) + 100,
        "{next} vs {now}"
    );
    assert_eq!((next - overdue) % 100, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slot_fired_before_never_fires_again() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let now = server_ms(&mut raw) + 20;
    let options = RepeatOptions {
        start_at: Some(now),
        ..every(60_000)
    };
    client
        .upsert_repeat(Q, "once", b"x", &options)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(client.fire_repeats(Q, 100).await.unwrap(), 1);

    // The schedule put back on the fired slot (a replayed pump, a clock that
    // stepped back): last_slot refuses it, and the schedule advances again.
    let _: () = raw.zadd(SCHEDULE, "once", now).unwrap();
    assert_eq!(client.fire_repeats(Q, 100).await.unwrap(), 0);
    assert_eq!(slot_of(&mut raw, "once"), Some(now + 60_000));

    // Removed and created again under the same name, back on the fired slot:
    // the derived id's row exists, so enqueue's existence check refuses it.
    assert!(client.remove_repeat(Q, "once").await.unwrap());
    client
        .upsert_repeat(Q, "once", b"x", &options)
        .await
        .unwrap();
    let _: () = raw.zadd(SCHEDULE, "once", now).unwrap();
    assert_eq!(client.fire_repeats(Q, 100).await.unwrap(), 0);
    assert_eq!(pending(&mut raw).len(), 1);
    assert_eq!(record(&mut raw, "once")["count"], "0");

    // A schedule entry without a record is dropped, never fired.
    let _: () = raw.zadd(SCHEDULE, "orphan", now).unwrap();
    assert_eq!(client.fire_repeats(Q, 100).await.unwrap(), 0);
    assert_eq!(slot_of(&mut raw, "orphan"), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn limit_and_end_at_end_the_repeat() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let now = server_ms(&mut raw);
    let limited = RepeatOptions {
        start_at: Some(now - 1_000),
        limit: Some(2),
        ..every(1)
    };
    client
        .upsert_repeat(Q, "two", b"x", &limited)
        .await
        .unwrap();
    let mut fired = 0;
    for _ in 0..200 {
        fired += client.fire_repeats(Q, 100).await.unwrap();
        if slot_of(&mut raw, "two").is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(fired, 2);
    assert!(
        record(&mut raw, "two").is_empty(),
        "removed after its last job"
    );
    assert_eq!(pending(&mut raw).len(), 2);

    // end_at: the slot at end_at fires, the one after would not, so it ends.
    let now = server_ms(&mut raw) + 20;
    let ending = RepeatOptions {
        start_at: Some(now),
        end_at: Some(now + 50),
        ..every(100)
    };
    client
        .upsert_repeat(Q, "ends", b"x", &ending)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(client.fire_repeats(Q, 100).await.unwrap(), 1);
    assert_eq!(slot_of(&mut raw, "ends"), None);
    assert!(record(&mut raw, "ends").is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn two_pumps_racing_on_one_repeat_for_20_slots_make_exactly_one_job_per_slot() {
    let server = Server::start();
    let setup = connect(&server).await;
    let mut raw = server.raw();
    let start = server_ms(&mut raw) + 100;
    let options = RepeatOptions {
        start_at: Some(start),
        limit: Some(20),
        ..every(50)
    };
    setup
        .upsert_repeat(Q, "race", b"r", &options)
        .await
        .unwrap();

    // Two pumps, each on its own connection, firing as fast as they can.
    let done = Arc::new(AtomicBool::new(false));
    let fired_by = Arc::new(Mutex::new(Vec::new()));
    let mut pumps = Vec::new();
    for _ in 0..2 {
        let client = connect(&server).await;
        let (done, fired_by) = (done.clone(), fired_by.clone());
        pumps.push(tokio::spawn(async move {
            let mut fired = 0;
            let deadline = Instant::now() + Duration::from_secs(30);
            while !done.load(Ordering::Relaxed) && Instant::now() < deadline {
                fired += client.fire_repeats(Q, 10).await.unwrap();
                tokio::task::yield_now().await;
            }
            fired_by.lock().unwrap().push(fired);
        }));
    }
    until("the repeat fired its 20 jobs and ended", || {
        slot_of(&mut raw, "race").is_none()
    })
    .await;
    done.store(true, Ordering::Relaxed);
    for pump in pumps {
        pump.await.unwrap();
    }

    let fired: u64 = fired_by.lock().unwrap().iter().sum();
    let jobs = pending(&mut raw);
    assert_eq!(
        (fired, jobs.len()),
        (20, 20),
        "{:?}",
        fired_by.lock().unwrap()
    );
    // One job per slot: 20 distinct slots on the grid, each under its derived id.
    let slots: BTreeSet<u64> = jobs
        .iter()
        .map(|id| echomq::BrandedId::parse(id).unwrap().minted_at_ms())
        .collect();
    assert_eq!(slots.len(), 20);
    for slot in &slots {
        assert_eq!((slot - start) % 50, 0, "off the grid: {slot}");
        let id = repeat_job_id(Q, "race", *slot).unwrap().to_string();
        assert!(jobs.contains(&id), "{id} for slot {slot}");
    }
    assert!(record(&mut raw, "race").is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_workers_pump_fires_repeats_into_its_handler() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let now = server_ms(&mut raw) + 20;
    let options = RepeatOptions {
        start_at: Some(now),
        limit: Some(3),
        ..every(30)
    };
    client
        .upsert_repeat(Q, "worked", b"from-a-repeat", &options)
        .await
        .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let handled = seen.clone();
    let worker = Worker::new(
        client.clone(),
        Q,
        WorkerOptions {
            pump_interval_ms: 20,
            idle_max_ms: 10,
            ..WorkerOptions::default()
        },
        move |job| {
            handled.lock().unwrap().push((job.id, job.payload));
            async { Ok(()) }
        },
    )
    .unwrap();
    let handle = worker.spawn();
    until("the worker ran the repeat's 3 jobs", || {
        seen.lock().unwrap().len() == 3
    })
    .await;
    handle.stop();
    handle.join().unwrap();
    let seen = seen.lock().unwrap();
    assert!(seen.iter().all(|(_, p)| p == b"from-a-repeat"));
    assert_eq!(seen[0].0, repeat_job_id(Q, "worked", now).unwrap());
    assert_eq!(slot_of(&mut raw, "worked"), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_an_invalid_argument_and_writes_nothing() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let cron = |pattern: &str, tz: Option<&str>| RepeatOptions {
        cron: Some(pattern.into()),
        tz: tz.map(Into::into),
        ..RepeatOptions::default()
    };
    let now = server_ms(&mut raw);
    let cases: Vec<(&str, RepeatOptions)> = vec![
        ("ok", cron("not a cron", None)),
        ("ok", cron("*/5 * * * *", Some("Mars/Olympus"))),
        ("ok", cron("0 0 30 2 *", None)), // February 30th never comes
        (
            "ok",
            RepeatOptions {
                cron: Some("*/5 * * * *".into()),
                ..every(1_000)
            },
        ),
        ("ok", RepeatOptions::default()),
        ("ok", every(0)),
        (
            "ok",
            RepeatOptions {
                end_at: Some(now - 1),
                ..every(1_000)
            },
        ),
        ("bad name", every(1_000)),
        ("", every(1_000)),
        ("a:b", every(1_000)),
    ];
    for (name, options) in cases {
        let err = client
            .upsert_repeat(Q, name, b"x", &options)
            .await
            .unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::InvalidArgument,
            "{name:?} {options:?}: {err}"
        );
    }
    let big = vec![0u8; client.options().max_payload + 1];
    let err = client
        .upsert_repeat(Q, "ok", big, &every(1_000))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    let err = client
        .upsert_repeat("emq", "ok", b"x", &every(1_000))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidQueue);
    assert_eq!(
        client.fire_repeats(Q, 0).await.unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let keys: Vec<String> = raw.keys("emq:*").unwrap();
    assert!(keys.is_empty(), "nothing written: {keys:?}");

    // Two names whose derived ids would coincide: the second is refused.
    let slot = now;
    let mut by_id = HashMap::new();
    let (first, second) = (0..100_000)
        .find_map(|i| {
            let name = format!("n{i}");
            let id = repeat_job_id(Q, &name, slot).unwrap();
            by_id.insert(id, name.clone()).map(|other| (other, name))
        })
        .expect("a tag collision among 100000 names");
    client
        .upsert_repeat(Q, &first, b"x", &every(1_000))
        .await
        .unwrap();
    let err = client
        .upsert_repeat(Q, &second, b"x", &every(1_000))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(record(&mut raw, &second).is_empty());
    assert_eq!(slot_of(&mut raw, &second), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn speaking_2_0_0_the_repeat_verbs_are_unsupported_before_any_io() {
    let server = Server::start();
    let old = connect_as(&server, WireVersion::V2_0_0).await;
    let mut raw = server.raw();
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query(&mut raw)
        .unwrap();
    let refusals = [
        old.upsert_repeat(Q, "r", b"x", &every(1_000))
            .await
            .unwrap_err(),
        old.remove_repeat(Q, "r").await.unwrap_err(),
        old.list_repeats(Q).await.unwrap_err(),
        old.fire_repeats(Q, 10).await.unwrap_err(),
    ];
    for e in refusals {
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    }
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut raw)
        .unwrap();
    assert!(!stats.contains("cmdstat_evalsha"), "{stats}");
    assert!(!stats.contains("cmdstat_time"), "{stats}");
    // The 2.0.0 grammar does not know the repeat keys.
    for key in ["emq:{q}:repeat", "emq:{q}:repeat:r"] {
        assert_eq!(
            echomq::keys::classify_as(key, WireVersion::V2_0_0),
            echomq::keys::KeyClass::Unclassified
        );
    }
}
