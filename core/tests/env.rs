//! Environment variables read at connect (issue #11). One test in its own
//! binary: it sets process-wide variables other tests would see.

mod common;

use common::Server;
use echomq::{Client, ConnectOptions, ErrorKind};

#[tokio::test(flavor = "multi_thread")]
async fn emq_node_id_and_runtime_threads_are_read_at_connect_and_checked() {
    let server = Server::start();
    let url = server.url();
    let connect = || Client::connect(&url, ConnectOptions::default());
    for bad in ["abc", "1024", "-1", "7x"] {
        std::env::set_var("EMQ_NODE_ID", bad);
        let err = connect().await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{bad}: {err}");
        assert!(err.message().contains("0..=1023"), "{}", err.message());
    }
    // Read at connect, not once per process: a later value is honoured.
    std::env::set_var("EMQ_NODE_ID", "77");
    assert_eq!(connect().await.unwrap().node_id(), 77);
    std::env::set_var("EMQ_NODE_ID", "78");
    let client = connect().await.unwrap();
    assert_eq!(client.node_id(), 78);
    assert_eq!(client.enqueue("env", "x").await.unwrap().id.node_id(), 78);
    std::env::remove_var("EMQ_NODE_ID");
    for bad in ["0", "many", "99999"] {
        std::env::set_var("EMQ_RUNTIME_THREADS", bad);
        let err = connect().await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{bad}: {err}");
        assert!(err.message().contains("EMQ_RUNTIME_THREADS"));
    }
    std::env::remove_var("EMQ_RUNTIME_THREADS");
    connect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn connect_without_a_url_reads_emq_url_else_the_local_default() {
    // Its own test, but the only one here touching EMQ_URL.
    let server = Server::start();
    std::env::set_var("EMQ_URL", server.url());
    assert_eq!(echomq::defaults::url(), server.url());
    let client = Client::connect_default(ConnectOptions::default())
        .await
        .unwrap();
    client.enqueue("env-url", "x").await.unwrap();
    let mut raw = server.raw();
    let n: u64 = redis::cmd("ZCARD")
        .arg("emq:{env-url}:pending")
        .query(&mut raw)
        .unwrap();
    assert_eq!(n, 1, "the job went to the server EMQ_URL names");
    let pending = tokio::task::spawn_blocking(|| {
        let blocking =
            echomq::blocking::Client::connect_default(ConnectOptions::default()).unwrap();
        blocking.counts("env-url").unwrap().pending
    });
    assert_eq!(pending.await.unwrap(), 1);
    // Unset or empty: the documented local default.
    for unset in [None, Some("")] {
        match unset {
            None => std::env::remove_var("EMQ_URL"),
            Some(v) => std::env::set_var("EMQ_URL", v),
        }
        assert_eq!(echomq::defaults::url(), "redis://127.0.0.1:6379/");
    }
    std::env::remove_var("EMQ_URL");
}
