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
    assert_eq!(
        client
            .enqueue("env", "x", Default::default())
            .await
            .unwrap()
            .id
            .node_id(),
        78
    );
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
