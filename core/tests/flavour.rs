//! The test harness starts the server it was asked for: Debian's `redis-server`
//! by default, Valkey when `EMQ_TEST_SERVER` names a `valkey-server` (the core
//! suites run against both; see docs/SERVERS.md).

mod common;

use common::{flavour, Server};

#[test]
fn the_harness_starts_the_server_it_was_asked_for() {
    let server = Server::start();
    let found = server.identity();
    println!("core suites run against {found}");
    let expected = if flavour::wants_valkey() {
        "valkey"
    } else {
        "redis"
    };
    assert_eq!(
        found.name,
        expected,
        "EMQ_TEST_SERVER={}",
        flavour::server_binary()
    );
    assert!(!found.version.is_empty());
}
