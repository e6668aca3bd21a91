//! The test harness starts the server it was asked for: Debian's `redis-server`
//! by default, Valkey when `EMQ_TEST_SERVER` names a `valkey-server` (the core
//! suites run against both; see docs/SERVERS.md).

mod common;

use common::{flavour, Server};

#[test]
fn the_harness_starts_the_server_it_was_asked_for() {
    let server = Server::start();
    let (name, version) = server.identity();
    println!("core suites run against {name} {version}");
    let expected = if flavour::wants_valkey() {
        "valkey"
    } else {
        "redis"
    };
    assert_eq!(
        name,
        expected,
        "EMQ_TEST_SERVER={}",
        flavour::server_binary()
    );
    assert!(!version.is_empty());
}

#[test]
fn identify_reads_both_info_shapes() {
    let redis = "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n";
    assert_eq!(
        flavour::identify(redis),
        ("redis".to_string(), "7.0.15".to_string())
    );
    let valkey =
        "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.1.8\r\n";
    assert_eq!(
        flavour::identify(valkey),
        ("valkey".to_string(), "8.1.8".to_string())
    );
}
