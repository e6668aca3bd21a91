//! `connect` without a URL (issue #17). Its own binary: it sets EMQ_URL, and
//! env.rs sets EMQ_NODE_ID / EMQ_RUNTIME_THREADS to bad values that every
//! connect in the same process would read.

mod common;

use common::Server;
use echomq::{Client, ConnectOptions};

#[tokio::test(flavor = "multi_thread")]
async fn connect_without_a_url_reads_emq_url_else_the_local_default() {
    let server = Server::start();
    std::env::set_var("EMQ_URL", server.url());
    assert_eq!(echomq::defaults::url(), server.url());
    let client = Client::connect_default(ConnectOptions::default())
        .await
        .unwrap();
    client
        .enqueue("env-url", "x", Default::default())
        .await
        .unwrap();
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
