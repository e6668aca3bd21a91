//! `browse_page` and `job_due_ms` against a real redis-server: pages at any
//! depth, both orders, ranges, totals and scores agree with the wire.

mod common;

use common::Server;
use echomq::{BrowseSet, Client, ConnectOptions, ErrorKind, TimeRange};
use redis::Commands;

const Q: &str = "pages";

async fn connect(server: &Server) -> Client {
    Client::connect(&server.url(), ConnectOptions::default())
        .await
        .unwrap()
}

fn ids(page: &echomq::BrowsePage) -> Vec<String> {
    page.entries.iter().map(|e| e.id.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn pending_pages_walk_the_set_in_both_orders_without_gaps() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut minted = Vec::new();
    for i in 0..25 {
        minted.push(
            client
                .enqueue(Q, format!("p{i}"), Default::default())
                .await
                .unwrap()
                .id
                .to_string(),
        );
    }
    let mut walked = Vec::new();
    for page_no in 0..3 {
        let page = client
            .browse_page(Q, BrowseSet::Pending, false, page_no * 10, 10, None)
            .await
            .unwrap();
        assert_eq!(page.total, 25);
        assert!(page.entries.iter().all(|e| e.score_ms.is_none()));
        walked.extend(ids(&page));
    }
    assert_eq!(walked, minted);

    let newest = client
        .browse_page(Q, BrowseSet::Pending, true, 20, 10, None)
        .await
        .unwrap();
    let expected: Vec<String> = minted[..5].iter().rev().cloned().collect();
    assert_eq!(ids(&newest), expected);

    // A range by mint time counts and pages inside the range only.
    let first = &minted[0];
    let from = echomq::BrandedId::parse(first).unwrap().minted_at_ms();
    let all = client
        .browse_page(
            Q,
            BrowseSet::Pending,
            false,
            1,
            5,
            Some(TimeRange {
                from_ms: from,
                to_ms: u64::MAX >> 23,
            }),
        )
        .await
        .unwrap();
    assert_eq!(all.total, 25);
    assert_eq!(ids(&all), minted[1..6].to_vec());
}

#[tokio::test(flavor = "multi_thread")]
async fn scheduled_members_carry_their_run_at() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    let base = 4_000_000_000_000u64;
    let mut scheduled = Vec::new();
    for i in 0..6 {
        let at = base + i * 1000;
        scheduled.push((
            client
                .enqueue(Q, "s", echomq::EnqueueOptions::default().run_at_ms(at))
                .await
                .unwrap()
                .id,
            at,
        ));
    }
    let page = client
        .browse_page(Q, BrowseSet::Schedule, true, 0, 2, None)
        .await
        .unwrap();
    assert_eq!(page.total, 6);
    assert_eq!(page.entries.len(), 2);
    assert_eq!(page.entries[0].id, scheduled[5].0);
    assert_eq!(page.entries[0].score_ms, Some(scheduled[5].1));
    let wire: f64 = raw
        .zscore(format!("emq:{{{Q}}}:schedule"), scheduled[4].0.as_str())
        .unwrap();
    assert_eq!(page.entries[1].score_ms, Some(wire as u64));

    let ranged = client
        .browse_page(
            Q,
            BrowseSet::Schedule,
            false,
            0,
            10,
            Some(TimeRange {
                from_ms: base + 1000,
                to_ms: base + 3000,
            }),
        )
        .await
        .unwrap();
    assert_eq!(ranged.total, 2);
    let got: Vec<_> = ranged.entries.iter().map(|e| e.id).collect();
    assert_eq!(got, vec![scheduled[1].0, scheduled[2].0]);

    let due = client.job_due_ms(Q, scheduled[3].0.as_str()).await.unwrap();
    assert_eq!(due, Some(scheduled[3].1));
    let pending = client.enqueue(Q, "p", Default::default()).await.unwrap().id;
    assert_eq!(client.job_due_ms(Q, pending.as_str()).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_pages_are_refused_before_the_wire() {
    let server = Server::start();
    let client = connect(&server).await;
    for limit in [0, echomq::MAX_PAGE + 1] {
        let err = client
            .browse_page(Q, BrowseSet::Dead, true, 0, limit, None)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    }
    let err = client
        .browse_page("bad queue", BrowseSet::Dead, true, 0, 10, None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidQueue);
}

#[test]
fn the_blocking_facade_pages_too() {
    let server = Server::start();
    let client =
        echomq::blocking::Client::connect(&server.url(), ConnectOptions::default()).unwrap();
    let at = client
        .enqueue(
            Q,
            "s",
            echomq::EnqueueOptions::default().run_at_ms(4_000_000_000_000),
        )
        .unwrap()
        .id;
    let page = client
        .browse_page(Q, BrowseSet::Schedule, false, 0, 10, None)
        .unwrap();
    assert_eq!(page.total, 1);
    assert_eq!(page.entries[0].id, at);
    assert_eq!(
        client.job_due_ms(Q, at.as_str()).unwrap(),
        Some(4_000_000_000_000)
    );
}
