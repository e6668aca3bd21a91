//! The deployment probe through a connected client (`Client::probe`, what the
//! dashboard's health panel reads) and the checks judged from it, against a
//! real server: the same facts as the URL probe `emq doctor` uses.

mod common;

use common::Server;
use echomq::health::{server_checks, Status};
use echomq::probe::probe;
use echomq::{Client, ConnectOptions};

#[tokio::test(flavor = "multi_thread")]
async fn the_client_probe_reads_the_same_facts_as_the_url_probe() {
    let server = Server::start();
    let client = Client::connect(&server.url(), ConnectOptions::default())
        .await
        .unwrap();
    let through_client = client.probe().await.unwrap();
    let by_url = probe(&server.url(), &ConnectOptions::default())
        .await
        .unwrap();
    // The test server runs with `--save ""` and `--appendonly no`; the
    // client's connection speaks RESP3, the URL probe's RESP2, and both
    // must read CONFIG GET's answer.
    for p in [&through_client, &by_url] {
        assert_eq!(p.rdb_enabled, Some(false));
        assert!(!p.aof_enabled);
        assert_eq!(p.version_record.as_deref(), Some(echomq::PROTOCOL_VERSION));
        assert!(p.bundle_mismatches.is_empty());
        assert_eq!(p.maxmemory_policy.as_deref(), Some("noeviction"));
    }
    assert_eq!(through_client.server, by_url.server);

    let checks = server_checks(&through_client);
    let status = |name: &str| checks.iter().find(|c| c.name == name).unwrap().status;
    assert_eq!(status("fence"), Status::Pass);
    assert_eq!(status("maxmemory-policy"), Status::Pass);
    assert_eq!(status("persistence"), Status::Warn);

    // An eviction policy set at run time shows in the next probe.
    let mut raw = server.raw();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("allkeys-lru")
        .query(&mut raw)
        .unwrap();
    let checks = server_checks(&client.probe().await.unwrap());
    let eviction = checks
        .iter()
        .find(|c| c.name == "maxmemory-policy")
        .unwrap();
    assert_eq!(eviction.status, Status::Fail);
    assert!(
        eviction.detail.contains("allkeys-lru"),
        "{}",
        eviction.detail
    );
}
