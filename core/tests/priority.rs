//! Priorities (echomq:2.2.0, issue #34 item 3) against a real server: a job
//! with a priority waits in `emq:{q}:prio` (scored `-priority`), the claim
//! serves it before pending, every path that puts a job back routes it there
//! again, and a job without one behaves exactly as at 2.1.0. A 2.1.0 client
//! against a 2.1.0 deployment is unchanged, and `emq upgrade`'s probe for
//! 2.2.0 passes.

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::Server;
use echomq::{
    BrowseSet, Client, ConnectOptions, EnqueueOptions, ErrorKind, TimeRange, WireVersion,
    MAX_PRIORITY,
};
use redis::Commands;

const Q: &str = "prio";
const PRIO: &str = "emq:{prio}:prio";
const PENDING: &str = "emq:{prio}:pending";

async fn speaking(server: &Server, wire: WireVersion) -> Client {
    let options = ConnectOptions {
        wire_version: wire,
        ..ConnectOptions::default()
    };
    Client::connect(&server.url(), options).await.unwrap()
}

async fn connect(server: &Server) -> Client {
    speaking(server, WireVersion::V2_2_0).await
}

fn row(raw: &mut redis::Connection, id: &str) -> HashMap<String, String> {
    raw.hgetall(format!("emq:{{{Q}}}:job:{id}")).unwrap()
}

fn prio_score(raw: &mut redis::Connection, id: &str) -> Option<f64> {
    raw.zscore(PRIO, id).unwrap()
}

/// Poll `step` (bounded) until it answers true.
async fn until<F, Fut>(what: &str, mut step: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(5);
    while !step().await {
        assert!(Instant::now() < deadline, "{what}: not within 5 s");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[tokio::test]
async fn a_thousand_jobs_are_claimed_priority_first_and_fifo_within_one() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    // Three priorities and none, in a shuffled order (a fixed LCG).
    let levels = [None, Some(1), Some(500), Some(MAX_PRIORITY)];
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut plan: Vec<Option<u32>> = (0..1000)
        .map(|_| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            levels[(seed >> 33) as usize % levels.len()]
        })
        .collect();
    // A few `Some(0)`: no priority, as `None`.
    plan[3] = Some(0);
    plan[700] = Some(0);
    // Half in batches (per-item options), half one at a time.
    let mut enqueued: Vec<(String, Option<u32>)> = Vec::new();
    for chunk in plan[..500].chunks(100) {
        let items: Vec<(&[u8], EnqueueOptions)> = chunk
            .iter()
            .map(|p| {
                let options = EnqueueOptions {
                    priority: *p,
                    ..EnqueueOptions::default()
                };
                (&b"job"[..], options)
            })
            .collect();
        for (answer, p) in client
            .enqueue_many(Q, &items)
            .await
            .unwrap()
            .into_iter()
            .zip(chunk)
        {
            enqueued.push((answer.unwrap().id.to_string(), *p));
        }
    }
    for p in &plan[500..] {
        let mut options = EnqueueOptions::default();
        if let Some(p) = p {
            options = options.priority(*p);
        }
        let id = client.enqueue(Q, b"job", options).await.unwrap().id;
        enqueued.push((id.to_string(), *p));
    }
    let level = |p: &Option<u32>| p.unwrap_or(0);
    // On the wire: prioritized ids in prio scored -p with the row field;
    // the others in pending at 0 with no `priority` field.
    let prioritized = enqueued.iter().filter(|(_, p)| level(p) > 0).count();
    assert_eq!(raw.zcard::<_, usize>(PRIO).unwrap(), prioritized);
    assert_eq!(raw.zcard::<_, usize>(PENDING).unwrap(), 1000 - prioritized);
    for (id, p) in enqueued.iter().take(50) {
        let fields = row(&mut raw, id);
        match level(p) {
            0 => {
                assert!(!fields.contains_key("priority"), "{id}: {fields:?}");
                assert_eq!(
                    raw.zscore::<_, _, Option<f64>>(PENDING, id).unwrap(),
                    Some(0.0)
                );
            }
            p => {
                assert_eq!(fields["priority"], p.to_string());
                assert_eq!(prio_score(&mut raw, id), Some(-f64::from(p)));
            }
        }
    }
    // counts: pending counts both waiting sets (decision P.4).
    assert_eq!(client.counts(Q).await.unwrap().pending, 1000);
    // Claim order: highest priority first, mint (= enqueue) order within one.
    let mut want = enqueued.clone();
    want.sort_by_key(|(id, p)| (std::cmp::Reverse(level(p)), id.clone()));
    let mut got = Vec::new();
    while got.len() < 1000 {
        let jobs = client.claim_many(Q, 37, 60_000).await.unwrap();
        assert!(!jobs.is_empty(), "claimed {} of 1000", got.len());
        got.extend(jobs.into_iter().map(|j| j.id.to_string()));
    }
    let want: Vec<String> = want.into_iter().map(|(id, _)| id).collect();
    assert_eq!(got, want);
    // Mint order equals enqueue order within one process: the FIFO check
    // above is a real one.
    let plain: Vec<&String> = enqueued
        .iter()
        .filter(|(_, p)| level(p) == 0)
        .map(|(id, _)| id)
        .collect();
    assert!(plain.windows(2).all(|w| w[0] < w[1]));
    assert!(client.claim_many(Q, 10, 60_000).await.unwrap().is_empty());
    assert!(!raw.exists::<_, bool>(PRIO).unwrap());
    assert!(!raw.exists::<_, bool>("emq:{prio}:wake").unwrap());
}

#[tokio::test]
async fn a_job_keeps_its_priority_through_retry_reap_release_stall_and_requeue() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let plain = client
        .enqueue(Q, b"plain", EnqueueOptions::default())
        .await
        .unwrap()
        .id;
    let id = client
        .enqueue(Q, b"seven", EnqueueOptions::default().priority(7))
        .await
        .unwrap()
        .id;
    let id = id.as_str();
    let first = |jobs: Vec<echomq::Job>| jobs.into_iter().next().expect("a job");

    // retry -> schedule -> promote: back into prio, ahead of the plain job.
    let job = first(client.claim_many(Q, 1, 60_000).await.unwrap());
    assert_eq!(job.id.as_str(), id);
    client
        .retry(Q, id, job.token, 0, 10, "again")
        .await
        .unwrap();
    assert_eq!(row(&mut raw, id)["state"], "scheduled");
    until("promote", || async {
        client.promote(Q, 10).await.unwrap() == 1
    })
    .await;
    assert_eq!(prio_score(&mut raw, id), Some(-7.0));
    assert_eq!(row(&mut raw, id)["state"], "pending");

    // release: back into prio.
    let job = first(client.claim_many(Q, 1, 60_000).await.unwrap());
    assert_eq!((job.id.as_str(), job.token), (id, 2));
    let released = client.release_many(Q, &[(id, job.token)]).await.unwrap();
    assert!(released[0].is_ok());
    assert_eq!(prio_score(&mut raw, id), Some(-7.0));

    // reap (a lapsed lease): back into prio.
    let job = first(client.claim_many(Q, 1, 1).await.unwrap());
    assert_eq!(job.id.as_str(), id);
    until("reap", || async { client.reap(Q, 10).await.unwrap() == 1 }).await;
    assert_eq!(prio_score(&mut raw, id), Some(-7.0));

    // reap_stalled below its cap: back into prio.
    let job = first(client.claim_many(Q, 1, 1).await.unwrap());
    assert_eq!(job.id.as_str(), id);
    until("reap_stalled", || async {
        !client
            .reap_stalled(Q, 10, 5)
            .await
            .unwrap()
            .recovered
            .is_empty()
    })
    .await;
    assert_eq!(prio_score(&mut raw, id), Some(-7.0));
    assert_eq!(row(&mut raw, id)["stalled"], "1");

    // dead, then requeued (one, then all): back into prio, attempts reset.
    let job = first(client.claim_many(Q, 1, 60_000).await.unwrap());
    assert_eq!(job.id.as_str(), id);
    let token = job.token;
    client.retry(Q, id, token, 0, token, "fatal").await.unwrap();
    assert_eq!(row(&mut raw, id)["state"], "dead");
    assert_eq!(prio_score(&mut raw, id), None);
    client.requeue_dead(Q, id).await.unwrap();
    assert_eq!(prio_score(&mut raw, id), Some(-7.0));
    assert_eq!(row(&mut raw, id)["attempts"], "0");
    let job = first(client.claim_many(Q, 1, 60_000).await.unwrap());
    client
        .retry(Q, id, job.token, 0, job.token, "fatal")
        .await
        .unwrap();
    assert_eq!(client.requeue_all_dead(Q, None).await.unwrap(), 1);
    assert_eq!(prio_score(&mut raw, id), Some(-7.0));

    // Through all of it the plain job stayed in pending, behind it.
    assert_eq!(
        raw.zscore::<_, _, Option<f64>>(PENDING, plain.as_str())
            .unwrap(),
        Some(0.0)
    );
    let order: Vec<String> = client
        .claim_many(Q, 2, 60_000)
        .await
        .unwrap()
        .into_iter()
        .map(|j| j.id.to_string())
        .collect();
    assert_eq!(order, [id.to_string(), plain.to_string()]);
}

#[tokio::test]
async fn delayed_and_deduplicated_jobs_with_a_priority_wait_in_prio() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let now = client.server_now_ms().await.unwrap();
    let later = client
        .enqueue(
            Q,
            b"later",
            EnqueueOptions::default().priority(3).delay_ms(1),
        )
        .await
        .unwrap()
        .id;
    let at = client
        .enqueue(
            Q,
            b"at",
            EnqueueOptions::default().priority(4).run_at_ms(now),
        )
        .await
        .unwrap()
        .id;
    // Scheduled first, with the field; the promote routes them into prio.
    assert_eq!(row(&mut raw, later.as_str())["state"], "scheduled");
    assert_eq!(row(&mut raw, later.as_str())["priority"], "3");
    assert_eq!(prio_score(&mut raw, later.as_str()), None);
    let mut moved = 0;
    let deadline = Instant::now() + Duration::from_secs(5);
    while moved < 2 {
        assert!(Instant::now() < deadline, "promote: not within 5 s");
        moved += client.promote(Q, 10).await.unwrap();
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(prio_score(&mut raw, later.as_str()), Some(-3.0));
    assert_eq!(prio_score(&mut raw, at.as_str()), Some(-4.0));
    assert_eq!(raw.zcard::<_, u64>(PENDING).unwrap(), 0);

    // A dedup id with a priority: one job, in prio, with both fields.
    let dedup = EnqueueOptions::default().dedup_id("once").priority(9);
    let first = client.enqueue(Q, b"d", dedup.clone()).await.unwrap();
    let again = client.enqueue(Q, b"d", dedup.clone()).await.unwrap();
    assert!(!first.duplicate && again.duplicate && again.id == first.id);
    assert_eq!(prio_score(&mut raw, first.id.as_str()), Some(-9.0));
    let fields = row(&mut raw, first.id.as_str());
    assert_eq!(
        (fields["did"].as_str(), fields["priority"].as_str()),
        ("once", "9")
    );
    // The same through enqueue_many's per-item options.
    let items = vec![
        (
            &b"x"[..],
            EnqueueOptions::default().dedup_id("batch").priority(2),
        ),
        (
            &b"y"[..],
            EnqueueOptions::default().priority(2).delay_ms(60_000),
        ),
        (&b"z"[..], EnqueueOptions::default()),
    ];
    let answers: Vec<_> = client
        .enqueue_many(Q, &items)
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.unwrap().id.to_string())
        .collect();
    assert_eq!(prio_score(&mut raw, &answers[0]), Some(-2.0));
    assert_eq!(row(&mut raw, &answers[1])["priority"], "2");
    assert_eq!(row(&mut raw, &answers[1])["state"], "scheduled");
    assert!(!row(&mut raw, &answers[2]).contains_key("priority"));
    let order: Vec<String> = client
        .claim_many(Q, 10, 60_000)
        .await
        .unwrap()
        .into_iter()
        .map(|j| j.id.to_string())
        .collect();
    assert_eq!(
        order,
        [
            first.id.to_string(),
            at.to_string(),
            later.to_string(),
            answers[0].clone(),
            answers[2].clone()
        ]
    );
    // The dedup key is released by the job's completion, as at 2.1.0.
    let token = 1;
    client.complete(Q, first.id.as_str(), token).await.unwrap();
    assert!(!raw.exists::<_, bool>("emq:{prio}:de:once").unwrap());
}

#[tokio::test]
async fn browsing_pending_is_unchanged_and_prio_is_browsed_in_claim_order() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut ids = Vec::new();
    let mut plain = Vec::new();
    for i in 0..12u32 {
        let p = [0, 2, 5][i as usize % 3];
        let id = client
            .enqueue(Q, b"b", EnqueueOptions::default().priority(p))
            .await
            .unwrap()
            .id;
        ids.push((id, p));
        if p == 0 {
            plain.push(id);
        }
    }
    // Pending: only the unprioritized ids, mint order both ways, and by time.
    let oldest = client
        .browse(Q, BrowseSet::Pending, false, 100, None)
        .await
        .unwrap();
    assert_eq!(oldest, plain);
    let newest = client
        .browse(Q, BrowseSet::Pending, true, 100, None)
        .await
        .unwrap();
    assert_eq!(newest, plain.iter().rev().copied().collect::<Vec<_>>());
    let from = plain[1].minted_at_ms();
    let to = plain[3].minted_at_ms() + 1;
    let ranged = client
        .browse(
            Q,
            BrowseSet::Pending,
            false,
            100,
            Some(TimeRange {
                from_ms: from,
                to_ms: to,
            }),
        )
        .await
        .unwrap();
    assert!(ranged.contains(&plain[1]) && ranged.contains(&plain[3]));
    assert!(ranged.iter().all(|id| plain.contains(id)));
    // prio: claim order, and reversed.
    let mut want: Vec<_> = ids.iter().filter(|(_, p)| *p > 0).collect();
    want.sort_by_key(|(id, p)| (std::cmp::Reverse(*p), *id));
    let want: Vec<_> = want.into_iter().map(|(id, _)| *id).collect();
    assert_eq!(
        client
            .browse(Q, BrowseSet::Prio, false, 100, None)
            .await
            .unwrap(),
        want
    );
    let back = client
        .browse(Q, BrowseSet::Prio, true, 3, None)
        .await
        .unwrap();
    assert_eq!(back, want.iter().rev().take(3).copied().collect::<Vec<_>>());
    let page = client
        .browse_page(Q, BrowseSet::Prio, false, 2, 3, None)
        .await
        .unwrap();
    assert_eq!(page.total, want.len() as u64);
    let paged: Vec<_> = page.entries.iter().map(|e| e.id).collect();
    assert_eq!(paged, want[2..5]);
    assert!(page.entries.iter().all(|e| e.score_ms.is_none()));
    // A time range on prio is refused before the wire.
    let range = Some(TimeRange {
        from_ms: 0,
        to_ms: u64::MAX / 2,
    });
    let refused = client
        .browse(Q, BrowseSet::Prio, false, 10, range)
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::InvalidArgument);
    let refused = client
        .browse_page(Q, BrowseSet::Prio, false, 0, 10, range)
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::InvalidArgument);
    assert_eq!(BrowseSet::parse("prio").unwrap(), BrowseSet::Prio);
}

#[tokio::test]
async fn remove_and_drain_clean_prio() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let gone = client
        .enqueue(Q, b"r", EnqueueOptions::default().priority(8))
        .await
        .unwrap()
        .id;
    client.remove(Q, gone.as_str()).await.unwrap();
    assert_eq!(prio_score(&mut raw, gone.as_str()), None);
    assert!(row(&mut raw, gone.as_str()).is_empty());
    // Re-enqueued under the same id without a priority: one delivery, from pending.
    client
        .enqueue(Q, b"r", EnqueueOptions::default().id(gone.as_str()))
        .await
        .unwrap();
    let held = client.claim_many(Q, 10, 60_000).await.unwrap();
    assert_eq!(held.len(), 1);
    client
        .complete(Q, gone.as_str(), held[0].token)
        .await
        .unwrap();

    for i in 0..30u32 {
        client
            .enqueue(Q, b"d", EnqueueOptions::default().priority(i % 3))
            .await
            .unwrap();
    }
    assert_eq!(client.counts(Q).await.unwrap().pending, 30);
    // A limit takes prio first (claim order), then pending.
    assert_eq!(client.drain(Q, false, Some(15)).await.unwrap(), 15);
    assert_eq!(raw.zcard::<_, u64>(PRIO).unwrap(), 5);
    assert_eq!(raw.zcard::<_, u64>(PENDING).unwrap(), 10);
    assert_eq!(client.drain(Q, false, None).await.unwrap(), 15);
    assert!(!raw.exists::<_, bool>(PRIO).unwrap());
    assert!(!raw.exists::<_, bool>(PENDING).unwrap());
    let rows: Vec<String> = raw.keys("emq:{prio}:job:*").unwrap();
    assert!(rows.is_empty(), "{rows:?}");
}

#[tokio::test]
async fn bad_priorities_are_refused_with_nothing_written() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let before: u64 = redis::cmd("DBSIZE").query(&mut raw).unwrap();
    let too_high = EnqueueOptions::default().priority(MAX_PRIORITY + 1);
    let e = client.enqueue(Q, b"x", too_high.clone()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = client
        .enqueue(Q, b"x", too_high.clone().delay_ms(10))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = client
        .enqueue(
            Q,
            b"x",
            EnqueueOptions::default().dedup_id("d").priority(u32::MAX),
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // One bad item refuses the whole batch.
    let items = vec![
        (&b"ok"[..], EnqueueOptions::default().priority(1)),
        (&b"bad"[..], too_high),
    ];
    let e = client.enqueue_many(Q, &items).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("item 1"), "{e}");
    let after: u64 = redis::cmd("DBSIZE").query(&mut raw).unwrap();
    assert_eq!(before, after);
    // The edges are accepted: MAX_PRIORITY, and 0 = none.
    let top = client
        .enqueue(Q, b"top", EnqueueOptions::default().priority(MAX_PRIORITY))
        .await
        .unwrap()
        .id;
    assert_eq!(prio_score(&mut raw, top.as_str()), Some(-1_000_000.0));
}

#[tokio::test]
async fn a_2_1_0_client_against_a_2_1_0_deployment_is_unchanged() {
    let server = Server::start();
    let client = speaking(&server, WireVersion::V2_1_0).await;
    let mut raw = server.raw();
    assert_eq!(
        raw.get::<_, String>("{emq}:version").unwrap(),
        "echomq:2.1.0"
    );
    // The bundle record holds the 41 2.1.0 scripts and no 2.2.0 one.
    let bundle: HashMap<String, String> = raw.hgetall("{emq}:bundle").unwrap();
    assert_eq!(bundle.len(), 41 + 1);
    assert!(!bundle.contains_key("claim_priority"));
    assert_eq!(
        bundle["bundle"],
        echomq::scripts::bundle_sha1_for(WireVersion::V2_1_0)
    );
    // Priorities are refused before any I/O; browse prio too.
    let before: u64 = redis::cmd("DBSIZE").query(&mut raw).unwrap();
    let e = client
        .enqueue(Q, b"x", EnqueueOptions::default().priority(5))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    let e = client
        .browse(Q, BrowseSet::Prio, false, 10, None)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert_eq!(before, redis::cmd("DBSIZE").query::<u64>(&mut raw).unwrap());
    // Priority 0 is no priority: accepted at 2.1.0 and written as before.
    let a = client
        .enqueue(Q, b"a", EnqueueOptions::default().priority(0))
        .await
        .unwrap()
        .id;
    let b = client
        .enqueue(Q, b"b", EnqueueOptions::default())
        .await
        .unwrap()
        .id;
    assert!(!row(&mut raw, a.as_str()).contains_key("priority"));
    let jobs = client.claim_many(Q, 5, 60_000).await.unwrap();
    assert_eq!(jobs.iter().map(|j| j.id).collect::<Vec<_>>(), [a, b]);
    assert!(!raw.exists::<_, bool>(PRIO).unwrap());
    // The claim it sent is claim_guarded's (in the script cache), never claim_priority.
    let sha = echomq::scripts::CLAIM_PRIORITY.sha1();
    let cached: Vec<bool> = redis::cmd("SCRIPT")
        .arg("EXISTS")
        .arg(sha)
        .query(&mut raw)
        .unwrap();
    assert_eq!(cached, [false]);
    // A 2.2.0 client is fenced off a 2.1.0 deployment until it is upgraded.
    let options = ConnectOptions {
        wire_version: WireVersion::V2_2_0,
        ..ConnectOptions::default()
    };
    let fenced = Client::connect(&server.url(), options).await.unwrap_err();
    assert_eq!(fenced.kind(), ErrorKind::VersionFence);
}

#[tokio::test]
async fn the_2_2_0_upgrade_runs_its_probe_and_moves_the_record() {
    let server = Server::start();
    let old = speaking(&server, WireVersion::V2_1_0).await;
    let mut raw = server.raw();
    let waiting = old
        .enqueue(Q, b"kept", EnqueueOptions::default())
        .await
        .unwrap()
        .id;
    let probes = old.run_probes(WireVersion::V2_2_0).await.unwrap();
    assert_eq!(probes.len(), 10, "{probes:?}");
    assert!(
        probes[9].starts_with("key prio, row field priority"),
        "{probes:?}"
    );
    let report = old
        .upgrade_protocol(WireVersion::V2_1_0, WireVersion::V2_2_0, false)
        .await
        .unwrap();
    assert!(report.upgraded);
    assert_eq!(report.probes.len(), 10);
    assert_eq!(
        raw.get::<_, String>("{emq}:version").unwrap(),
        "echomq:2.2.0"
    );
    let bundle: HashMap<String, String> = raw.hgetall("{emq}:bundle").unwrap();
    assert_eq!(
        bundle["claim_priority"],
        echomq::scripts::CLAIM_PRIORITY.sha1()
    );
    assert_eq!(
        bundle["bundle"],
        echomq::scripts::bundle_sha1_for(WireVersion::V2_2_0)
    );
    // No scratch keys left; the waiting job untouched and claimed after a
    // prioritized one by a 2.2.0 client.
    let scratch: Vec<String> = raw.keys("emq:{emq-probe-*").unwrap();
    assert!(scratch.is_empty(), "{scratch:?}");
    let client = connect(&server).await;
    let urgent = client
        .enqueue(Q, b"urgent", EnqueueOptions::default().priority(1))
        .await
        .unwrap()
        .id;
    let order: Vec<_> = client
        .claim_many(Q, 5, 60_000)
        .await
        .unwrap()
        .into_iter()
        .map(|j| j.id)
        .collect();
    assert_eq!(order, [urgent, waiting]);
}

#[tokio::test]
async fn the_plain_claim_never_sees_prioritized_jobs_and_loses_none() {
    // The reference runtime claims with the 2.0.0 `claim` script on pending
    // only: at a 2.2.0 deployment it hands out unprioritized jobs in mint
    // order and leaves prioritized ones where they wait (decision P.3).
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let plain = client
        .enqueue(Q, b"p", EnqueueOptions::default())
        .await
        .unwrap()
        .id;
    let urgent = client
        .enqueue(Q, b"u", EnqueueOptions::default().priority(3))
        .await
        .unwrap()
        .id;
    let claimed: Vec<redis::Value> = redis::cmd("EVAL")
        .arg(echomq::scripts::CLAIM.source)
        .arg(3)
        .arg(PENDING)
        .arg("emq:{prio}:active")
        .arg("emq:{prio}:meta")
        .arg("emq:{prio}:")
        .arg(60_000)
        .arg(10)
        .query(&mut raw)
        .unwrap();
    assert_eq!(claimed.len(), 3);
    assert_eq!(claimed[0], redis::Value::BulkString(plain.as_str().into()));
    assert_eq!(prio_score(&mut raw, urgent.as_str()), Some(-3.0));
    let held = client.claim_many(Q, 10, 60_000).await.unwrap();
    assert_eq!(held.iter().map(|j| j.id).collect::<Vec<_>>(), [urgent]);
}
