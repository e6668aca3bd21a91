//! Issue #17's shapes on a live server: the queue handle, the option
//! structs, `Job::attempts` and a row in a state this client does not know.

mod common;

use common::Server;
use echomq::{
    BrowseOptions, BrowseSet, Client, ConnectOptions, EnqueueOptions, ErrorKind, JobState,
    RetryOptions, RetryOutcome,
};

async fn connect(server: &Server) -> Client {
    Client::connect(&server.url(), ConnectOptions::default())
        .await
        .unwrap()
}

fn zscore(server: &Server, key: &str, member: &str) -> Option<f64> {
    redis::cmd("ZSCORE")
        .arg(key)
        .arg(member)
        .query(&mut server.raw())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_queue_handle_runs_the_per_queue_verbs_without_the_name() {
    let server = Server::start();
    let client = connect(&server).await;
    assert_eq!(
        client.queue("bad name").unwrap_err().kind(),
        ErrorKind::InvalidQueue
    );
    let emails = client.queue("emails").unwrap();
    assert_eq!(emails.name(), "emails");
    let sent = emails.enqueue("hello", Default::default()).await.unwrap();
    emails
        .enqueue_many(&echomq::EnqueueOptions::defaults_for(&["a", "b"]))
        .await
        .unwrap();
    assert_eq!(emails.counts().await.unwrap().pending, 3);
    assert_eq!(client.counts("emails").await.unwrap().pending, 3);

    emails.pause().await.unwrap();
    assert!(emails.is_paused().await.unwrap());
    assert!(emails.claim(1000).await.unwrap().is_none());
    emails.resume().await.unwrap();

    let job = emails.claim(30_000).await.unwrap().unwrap();
    assert_eq!(job.id, sent.id);
    assert_eq!((job.token, job.attempts), (1, 1));
    let outcome = emails
        .retry(
            job.id.as_str(),
            job.token,
            &RetryOptions {
                error: "smtp down".into(),
                ..RetryOptions::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(outcome, RetryOutcome::Scheduled);
    let row = emails.job(job.id.as_str()).await.unwrap().unwrap();
    assert_eq!(row.last_error.as_deref(), Some("smtp down"));
    assert_eq!(emails.promote(10).await.unwrap(), 1);
    // The second claim of the same job is its second attempt.
    let mut again = emails.claim_many(3, 30_000).await.unwrap();
    again.sort_by_key(|j| j.id);
    let second = again.iter().find(|j| j.id == sent.id).unwrap();
    assert_eq!(second.attempts, 2);

    let ids = emails
        .browse(
            BrowseSet::Active,
            &BrowseOptions {
                limit: 2,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(ids.len(), 2);
    for j in &again {
        emails.complete(j.id.as_str(), j.token).await.unwrap();
    }
    let c = emails.counts().await.unwrap();
    assert_eq!((c.pending, c.active, c.completed), (0, 0, 3));

    // The blocking handle is the same verbs, blocking.
    let handle = tokio::task::spawn_blocking({
        let url = server.url();
        move || {
            let client =
                echomq::blocking::Client::connect(&url, ConnectOptions::default()).unwrap();
            let q = client.queue("emails").unwrap();
            q.enqueue(
                "later",
                EnqueueOptions {
                    delay_ms: Some(60_000),
                    ..Default::default()
                },
            )
            .unwrap();
            (q.counts().unwrap().scheduled, q.drain(true, None).unwrap())
        }
    });
    assert_eq!(handle.await.unwrap(), (1, 1));
}

#[tokio::test(flavor = "multi_thread")]
async fn enqueue_options_cover_now_later_and_a_chosen_id() {
    let server = Server::start();
    let client = connect(&server).await;
    let q = client.queue("opts").unwrap();

    // A chosen id with a delay: scheduled under that id; again = duplicate.
    let id = echomq::id::mint_job_id().to_string();
    let with = EnqueueOptions {
        id: Some(id.clone()),
        delay_ms: Some(60_000),
        ..Default::default()
    };
    let first = q.enqueue("x", with.clone()).await.unwrap();
    assert_eq!((first.id.as_str(), first.duplicate), (id.as_str(), false));
    assert!(q.enqueue("y", with.clone()).await.unwrap().duplicate);
    assert!(zscore(&server, "emq:{opts}:schedule", &id).is_some());
    let row = q.job(&id).await.unwrap().unwrap();
    assert_eq!(
        (row.state, row.payload),
        (JobState::Scheduled, b"x".to_vec())
    );

    // An absolute time, minted id.
    let at = q
        .enqueue(
            "z",
            EnqueueOptions {
                run_at_ms: Some(4_102_444_800_000),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        zscore(&server, "emq:{opts}:schedule", at.id.as_str()),
        Some(4_102_444_800_000.0)
    );

    // Both times: refused before the wire, nothing written.
    let both = EnqueueOptions {
        run_at_ms: Some(1),
        delay_ms: Some(1),
        ..Default::default()
    };
    let err = q.enqueue("w", both.clone()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    let c = q.counts().await.unwrap();
    assert_eq!((c.pending, c.scheduled), (0, 2));

    // A chosen id now.
    let now_id = echomq::id::mint_job_id().to_string();
    let now = EnqueueOptions {
        id: Some(now_id.clone()),
        ..Default::default()
    };
    assert!(!q.enqueue("n", now.clone()).await.unwrap().duplicate);
    assert_eq!(q.counts().await.unwrap().pending, 1);
    assert_eq!(
        client
            .browse_with("opts", BrowseSet::Pending, &BrowseOptions::default())
            .await
            .unwrap()[0]
            .as_str(),
        now_id
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_carries_each_items_own_options() {
    let server = Server::start();
    let client = connect(&server).await;
    let taken = echomq::id::mint_job_id().to_string();
    client
        .enqueue("mix", "first", EnqueueOptions::default().id(taken.clone()))
        .await
        .unwrap();
    let chosen = echomq::id::mint_job_id().to_string();
    let items = vec![
        ("plain", EnqueueOptions::default()),
        ("later", EnqueueOptions::default().delay_ms(60_000)),
        ("at", EnqueueOptions::default().run_at_ms(4_102_444_800_000)),
        ("chosen", EnqueueOptions::default().id(chosen.clone())),
        ("again", EnqueueOptions::default().id(taken.clone())),
        ("dedup-1", EnqueueOptions::default().dedup_id("d1")),
        ("dedup-2", EnqueueOptions::default().dedup_id("d1")),
    ];
    let out: Vec<_> = client
        .enqueue_many("mix", &items)
        .await
        .unwrap()
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let dup: Vec<bool> = out.iter().map(|e| e.duplicate).collect();
    assert_eq!(dup, [false, false, false, false, true, false, true]);
    assert_eq!(out[3].id.as_str(), chosen);
    assert_eq!(out[4].id.as_str(), taken);
    // The second dedup item answers the first's job.
    assert_eq!(out[6].id, out[5].id);
    // The wire: pending holds plain, chosen, the earlier row and one dedup
    // job; the schedule holds the two timed ones, at their times.
    let c = client.counts("mix").await.unwrap();
    assert_eq!((c.pending, c.scheduled), (4, 2));
    assert_eq!(
        zscore(&server, "emq:{mix}:schedule", out[2].id.as_str()),
        Some(4_102_444_800_000.0)
    );
    assert!(zscore(&server, "emq:{mix}:schedule", out[1].id.as_str()).is_some());
    let holder: String = redis::cmd("GET")
        .arg("emq:{mix}:de:d1")
        .query(&mut server.raw())
        .unwrap();
    assert_eq!(holder, out[5].id.as_str());
    let again = client.job("mix", &taken).await.unwrap().unwrap();
    assert_eq!(again.payload, b"first".to_vec(), "a duplicate is untouched");

    // One bad item refuses the batch before anything is sent.
    let bad = vec![
        ("ok", EnqueueOptions::default()),
        ("bad", EnqueueOptions::default().delay_ms(1).run_at_ms(1)),
    ];
    let err = client.enqueue_many("mix", &bad).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.message().starts_with("item 1: "), "{}", err.message());
    let after = client.counts("mix").await.unwrap();
    assert_eq!((after.pending, after.scheduled), (4, 2), "nothing written");
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_options_default_to_the_workers_max_attempts() {
    let server = Server::start();
    let client = connect(&server).await;
    let q = client.queue("retry-opts").unwrap();
    q.enqueue("x", Default::default()).await.unwrap();
    // Attempts 1..=4 are scheduled again; the fifth (the default max) is dead.
    for attempt in 1..=5 {
        q.promote(10).await.unwrap();
        let job = q.claim(30_000).await.unwrap().unwrap();
        assert_eq!(job.attempts, attempt);
        let outcome = q
            .retry(job.id.as_str(), job.token, &RetryOptions::default())
            .await
            .unwrap();
        let want = if attempt < 5 {
            RetryOutcome::Scheduled
        } else {
            RetryOutcome::Dead
        };
        assert_eq!(outcome, want, "attempt {attempt}");
    }
    assert_eq!(q.counts().await.unwrap().dead, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_row_in_a_state_another_runtime_wrote_reads_as_unknown() {
    let server = Server::start();
    let client = connect(&server).await;
    let id = echomq::id::mint_job_id().to_string();
    // What the reference runtime writes for a flow parent.
    let _: () = redis::cmd("HSET")
        .arg(format!("emq:{{flows}}:job:{id}"))
        .arg("state")
        .arg("awaiting_children")
        .arg("attempts")
        .arg("0")
        .arg("payload")
        .arg("parent")
        .query(&mut server.raw())
        .unwrap();
    let row = client.job("flows", &id).await.unwrap().unwrap();
    assert_eq!(row.state, JobState::Unknown("awaiting_children".into()));
    assert_eq!(row.state.as_str(), "unknown");
    assert_eq!(row.state.to_string(), "awaiting_children");
    assert_eq!(row.payload, b"parent".to_vec());
}

#[tokio::test(flavor = "multi_thread")]
async fn exists_answers_whether_the_row_is_there() {
    let server = Server::start();
    let client = connect(&server).await;
    let q = client.queue("ex").unwrap();
    let e = q.enqueue("x", EnqueueOptions::default()).await.unwrap();
    assert!(q.exists(e.id.as_str()).await.unwrap());
    let _: () = redis::cmd("DEL")
        .arg(format!("emq:{{ex}}:job:{}", e.id))
        .query(&mut server.raw())
        .unwrap();
    assert!(!client.exists("ex", e.id.as_str()).await.unwrap());
    assert_eq!(
        client.exists("ex", "not an id").await.unwrap_err().kind(),
        ErrorKind::InvalidId
    );
}
