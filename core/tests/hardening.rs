//! Input and wire edges found by probing (issue #11): passwords in echoed
//! URLs, a batch cut by a dropped connection, strict decoding, client names,
//! connect timeouts, calls after close.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::Server;
use echomq::{Client, ConnectOptions, ErrorKind, WriteState};
use redis::Commands;

const Q: &str = "hard";

async fn connect(server: &Server) -> Client {
    Client::connect(&server.url(), ConnectOptions::default())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn connect_errors_never_repeat_the_password() {
    let urls = [
        "redis://user:secret@127.0.0.1:notaport/",
        "redis://user:secret@127.0.0.1:6379/notadb",
        "http://user:secret@127.0.0.1/",
        "redis+unix://user:secret@/x.sock",
        "redis+unix:///nowhere/x.sock?pass=secret",
    ];
    for url in urls {
        let err = Client::connect(url, ConnectOptions::default())
            .await
            .expect_err(url);
        let shown = format!("{err} {err:?} {}", err.message());
        assert!(!shown.contains("secret"), "{url}: {shown}");
    }
    assert_eq!(
        echomq::redact::redact_url("redis://u:secret@h:1/"),
        "redis://u:***@h:1/"
    );
}

/// Kill the connection named `victim` once the server holds more than `rows` keys.
fn kill_victim_after(url: String, rows: u64) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut admin = redis::Client::open(url).unwrap().get_connection().unwrap();
        loop {
            let n: u64 = redis::cmd("DBSIZE").query(&mut admin).unwrap();
            if n > rows {
                let list: String = redis::cmd("CLIENT").arg("LIST").query(&mut admin).unwrap();
                for line in list.lines().filter(|l| l.contains(" name=victim ")) {
                    let id = line.split(' ').find_map(|f| f.strip_prefix("id=")).unwrap();
                    let _: redis::RedisResult<()> = redis::cmd("CLIENT")
                        .arg("KILL")
                        .arg("ID")
                        .arg(id)
                        .query(&mut admin);
                }
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_cut_by_a_dropped_connection_says_which_items_were_written() {
    let server = Server::start();
    let mut raw = server.raw();
    // Big enough that the kill lands part way; retried if a batch wins the race.
    let payloads: Vec<Vec<u8>> = (0..20_000).map(|_| vec![b'x'; 2_000]).collect();
    for attempt in 0..5 {
        let queue = format!("{Q}{attempt}");
        let client = Client::connect(
            &server.url(),
            ConnectOptions {
                client_name: Some("victim".into()),
                ..ConnectOptions::default()
            },
        )
        .await
        .unwrap();
        let before: u64 = redis::cmd("DBSIZE").query(&mut raw).unwrap();
        let killer = kill_victim_after(server.url(), before + 100);
        let outcome = client
            .enqueue_many(&queue, &echomq::EnqueueOptions::defaults_for(&payloads))
            .await;
        killer.join().unwrap();
        let err = match outcome {
            Ok(_) => continue,
            Err(e) => e,
        };
        assert_eq!(err.kind(), ErrorKind::PartialBatch, "{err}");
        let items = err.batch_items().expect("per-item verdicts");
        assert_eq!(items.len(), payloads.len());
        let ids: HashSet<_> = items.iter().map(|i| i.id).collect();
        assert_eq!(ids.len(), payloads.len(), "every item has its own id");
        let row = |id: &echomq::BrandedId| echomq::keys::job_key(&queue, id.as_str()).unwrap();
        let mut written = 0;
        for item in items {
            let exists: bool = raw.exists(row(&item.id)).unwrap();
            match item.state {
                WriteState::Written => {
                    assert!(exists, "{} said written", item.id);
                    written += 1;
                }
                WriteState::NotWritten => assert!(!exists, "{} said not written", item.id),
                WriteState::Unknown => {}
            }
        }
        assert!(written > 0 && written < payloads.len(), "{written}");
        // The documented recovery: resend the rest under their ids. Exact.
        for (item, payload) in items.iter().zip(&payloads) {
            if item.state != WriteState::Written {
                let again = client
                    .enqueue(
                        &queue,
                        payload,
                        echomq::EnqueueOptions::default().id(item.id.as_str()),
                    )
                    .await
                    .unwrap();
                if item.state == WriteState::NotWritten {
                    assert!(!again.duplicate, "{} said not written", item.id);
                }
            }
        }
        let pending_key = echomq::keys::queue_key(&queue, echomq::keys::KeyType::Pending).unwrap();
        let pending: u64 = raw.zcard(pending_key).unwrap();
        assert_eq!(
            pending,
            payloads.len() as u64,
            "nothing lost, nothing doubled"
        );
        return;
    }
    panic!("no batch was cut in five attempts");
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_rows_and_replies_are_protocol_errors() {
    let server = Server::start();
    let client = connect(&server).await;
    let e = client.enqueue(Q, "x", Default::default()).await.unwrap();
    let mut raw = server.raw();
    let row = echomq::keys::job_key(Q, e.id.as_str()).unwrap();
    let _: () = raw.hset(row, "attempts", "two").unwrap();
    let err = client.job(Q, e.id.as_str()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_of_the_wrong_type_is_a_server_error() {
    let server = Server::start();
    let client = connect(&server).await;
    let mut raw = server.raw();
    // Someone else's string where the queue's pending ZSET lives: the
    // server's own WRONGTYPE refusal, answered as Server. The 2.1.0 enqueue
    // writes pending first, so nothing is written: no job row is left
    // behind (decision W.1; every verb in core/tests/wrong_type.rs).
    let _: () = raw.set("emq:{wrongtype}:pending", "not a zset").unwrap();
    let err = client
        .enqueue("wrongtype", "x", Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Server, "{err}");
    assert!(!err.is_retryable());
    let kept: String = raw.get("emq:{wrongtype}:pending").unwrap();
    assert_eq!(kept, "not a zset");
    let rows: Vec<String> = raw.keys("emq:{wrongtype}:job:*").unwrap();
    assert!(rows.is_empty(), "orphaned rows: {rows:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn strict_bundle_refuses_a_foreign_bundle_at_connect() {
    let server = Server::start();
    let mut raw = server.raw();
    // Another runtime recorded different scripts under the same version.
    let _: () = raw.hset("{emq}:bundle", "bundle", "0000").unwrap();
    let strict = ConnectOptions {
        strict_bundle: true,
        ..ConnectOptions::default()
    };
    let err = Client::connect(&server.url(), strict).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::BundleMismatch, "{err}");
    // Without the option the same server is only a warning.
    let lenient = connect(&server).await;
    assert_eq!(lenient.bundle_mismatches().unwrap().len(), 1);
    let kept: String = raw.hget("{emq}:bundle", "bundle").unwrap();
    assert_eq!(kept, "0000", "the recorded bundle is never overwritten");
}

#[tokio::test(flavor = "multi_thread")]
async fn probed_edges_answer_typed_errors() {
    let server = Server::start();
    // A client name the server would refuse is refused before the wire.
    for name in ["has space", "new\nline", ""] {
        let err = Client::connect(
            &server.url(),
            ConnectOptions {
                client_name: Some(name.into()),
                ..ConnectOptions::default()
            },
        )
        .await
        .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{name:?}: {err}");
    }
    // bundle_mismatches after close answers closed, like every other call.
    let client = connect(&server).await;
    assert!(client.bundle_mismatches().unwrap().is_empty());
    client.close();
    assert_eq!(
        client.bundle_mismatches().unwrap_err().kind(),
        ErrorKind::Closed
    );
    // A connect that runs out of time is a timeout: a listener that never
    // answers the handshake.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("redis://{}/", silent.local_addr().unwrap());
    let err = Client::connect(
        &url,
        ConnectOptions {
            connect_timeout: Duration::from_millis(300),
            ..ConnectOptions::default()
        },
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    // Every kind has a distinct, stable code; ours are 22 and 23.
    assert_eq!(ErrorKind::PartialBatch.status(), 22);
    assert_eq!(ErrorKind::Internal.status(), 23);
}
