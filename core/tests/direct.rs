//! Direct calls (issue #16 §3, decision 16.8): a blocking enqueue runs on
//! the caller's thread, on that thread's own connection, which is fenced,
//! reconnects by itself and answers the same typed errors as the shared one.
//! Speed is a benchmark figure (bench/), never asserted here.

mod common;

use common::{
    connections_named, kill_all_but_me, raise_the_fence_and_end_connections,
    wait_for_connections_named, Server,
};
use echomq::{blocking, ConnectOptions, ErrorKind};
use redis::Commands;

const Q: &str = "direct";
const PENDING: &str = "emq:{direct}:pending";
const WARM: &str = "direct-warm";

fn connect(server: &Server) -> blocking::Client {
    let options = ConnectOptions {
        client_name: Some("emq-direct-test".into()),
        ..ConnectOptions::default()
    };
    blocking::Client::connect(&server.url(), options).unwrap()
}

/// Connections the server shows under the test's client name.
fn named(raw: &mut redis::Connection) -> usize {
    connections_named(raw, "emq-direct-test")
}

/// Wait (up to 5 s) until the server shows `n` of them.
fn wait_for_connections(raw: &mut redis::Connection, n: usize) {
    wait_for_connections_named(raw, "emq-direct-test", n);
}

/// How many connections the server has accepted since it started.
fn connections_received(raw: &mut redis::Connection) -> u64 {
    let info: String = redis::cmd("INFO").arg("stats").query(raw).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("total_connections_received:"))
        .expect("INFO stats names total_connections_received")
        .trim()
        .parse()
        .unwrap()
}

/// Calls (on a side queue) until this thread holds one more direct
/// connection than `before`: it opens in the background from a thread's
/// second call (decision 16.12), and is taken up by the call after.
fn until_direct(client: &blocking::Client, before: usize) {
    for _ in 0..1000 {
        client.enqueue(WARM, b"warm", Default::default()).unwrap();
        if echomq::direct::thread_connections() > before {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    panic!("the thread's direct connection never opened");
}

#[test]
fn each_enqueuing_thread_drives_its_own_connection() {
    let server = Server::start();
    let mut raw = server.raw();
    let client = connect(&server);
    assert_eq!(
        named(&mut raw),
        1,
        "connect opens the shared connection only"
    );

    let first = client.enqueue(Q, b"main", Default::default()).unwrap();
    assert_eq!(echomq::direct::thread_connections(), 0);
    assert_eq!(named(&mut raw), 1, "a first call opens nothing");
    until_direct(&client, 0);
    assert_eq!(named(&mut raw), 2);
    // The same thread reuses it; the queue handle shares it too.
    client.enqueue(Q, b"again", Default::default()).unwrap();
    client
        .queue(Q)
        .unwrap()
        .enqueue(b"handle", Default::default())
        .unwrap();
    assert_eq!(named(&mut raw), 2);

    let other = client.clone();
    std::thread::spawn(move || {
        other.enqueue(Q, b"thread", Default::default()).unwrap();
        until_direct(&other, 0);
        assert_eq!(echomq::direct::thread_connections(), 1);
    })
    .join()
    .unwrap();
    // The thread ended: its connection went with it.
    wait_for_connections(&mut raw, 2);

    // A thread that calls once and ends never opens one. The server counts
    // every connection it accepted: after a control thread that does open
    // one (and is seen to), exactly one more was accepted, not two.
    let accepted_before = connections_received(&mut raw);
    let once = client.clone();
    std::thread::spawn(move || once.enqueue(Q, b"once", Default::default()).unwrap())
        .join()
        .unwrap();
    let control = client.clone();
    std::thread::spawn(move || until_direct(&control, 0))
        .join()
        .unwrap();
    wait_for_connections(&mut raw, 2);
    assert_eq!(connections_received(&mut raw), accepted_before + 1);

    let ids: Vec<String> = raw.zrange(PENDING, 0, -1).unwrap();
    assert_eq!(ids.len(), 5, "{ids:?}");
    let payload: Vec<u8> = raw
        .hget(format!("emq:{{direct}}:job:{}", first.id), "payload")
        .unwrap();
    assert_eq!(payload, b"main");
    // The direct connection was labelled like every connection.
    let list: String = redis::cmd("CLIENT").arg("LIST").query(&mut raw).unwrap();
    if list.contains("lib-name=") {
        let labelled = list
            .lines()
            .filter(|l| l.contains("name=emq-direct-test ") && l.contains("lib-name=echomq "))
            .count();
        assert_eq!(labelled, 2, "{list}");
    }
}

#[test]
fn a_connection_the_server_ended_between_calls_is_reopened_before_sending() {
    let server = Server::start();
    let mut raw = server.raw();
    let client = connect(&server);
    until_direct(&client, 0);
    client.enqueue(Q, b"before", Default::default()).unwrap();
    kill_all_but_me(&mut raw);
    // The server closed them; no error: the end was seen before the
    // request went out.
    wait_for_connections(&mut raw, 0);
    client.enqueue(Q, b"after", Default::default()).unwrap();
    let n: u64 = raw.zcard(PENDING).unwrap();
    assert_eq!(n, 2);
}

#[test]
fn a_reopened_connection_is_fenced_again() {
    let server = Server::start();
    let mut raw = server.raw();
    let client = connect(&server);
    until_direct(&client, 0);
    client.enqueue(Q, b"fenced", Default::default()).unwrap();
    raise_the_fence_and_end_connections(&mut raw, "emq-direct-test");
    let e = client
        .enqueue(Q, b"refused", Default::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::VersionFence, "{e}");
    let n: u64 = raw.zcard(PENDING).unwrap();
    assert_eq!(n, 1, "nothing written past the fence");
}

#[test]
fn a_reply_slower_than_the_spin_is_waited_for_and_written_once() {
    // Decision 16.10: a direct call spins briefly, then parks. Calls on
    // loopback are fast enough to earn a budget; a server paused far past
    // it must still answer the call (parked, not abandoned), exactly once.
    let server = Server::start();
    let mut raw = server.raw();
    let client = connect(&server);
    until_direct(&client, 0);
    for _ in 0..20 {
        client.enqueue(Q, b"warm", Default::default()).unwrap();
    }
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(80)
        .arg("ALL")
        .query(&mut raw)
        .unwrap();
    let late = client.enqueue(Q, b"late", Default::default()).unwrap();
    assert!(!late.duplicate);
    let n: u64 = raw.zcard(PENDING).unwrap();
    assert_eq!(n, 21);
    let payload: Vec<u8> = raw
        .hget(format!("emq:{{direct}}:job:{}", late.id), "payload")
        .unwrap();
    assert_eq!(payload, b"late");
}

#[test]
fn a_closed_client_refuses_before_any_io() {
    let server = Server::start();
    let mut raw = server.raw();
    let client = connect(&server);
    until_direct(&client, 0);
    client.enqueue(Q, b"open", Default::default()).unwrap();
    client.close();
    let e = client
        .enqueue(Q, b"closed", Default::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
    let n: u64 = raw.zcard(PENDING).unwrap();
    assert_eq!(n, 1);
}

#[test]
fn a_duplicate_id_is_answered_as_on_the_shared_connection() {
    let server = Server::start();
    let mut raw = server.raw();
    let client = connect(&server);
    until_direct(&client, 0);
    let job = client.enqueue(Q, b"x", Default::default()).unwrap();
    let again = client
        .enqueue(
            Q,
            b"x",
            echomq::EnqueueOptions::default().id(job.id.as_str()),
        )
        .unwrap();
    assert_eq!(again.id, job.id);
    assert!(again.duplicate, "a duplicate stays a duplicate: {again:?}");
    let n: u64 = raw.zcard(PENDING).unwrap();
    assert_eq!(n, 1);
}

#[test]
fn closing_or_dropping_the_client_closes_the_threads_connections() {
    let server = Server::start();
    let mut raw = server.raw();
    let closed = connect(&server);
    closed.enqueue(Q, b"a", Default::default()).unwrap();
    until_direct(&closed, 0);
    let dropped = connect(&server);
    dropped.enqueue(Q, b"b", Default::default()).unwrap();
    until_direct(&dropped, 1);
    let elsewhere = dropped.clone();
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let (opened, ready) = std::sync::mpsc::channel::<()>();
    let other = std::thread::spawn(move || {
        elsewhere.enqueue(Q, b"c", Default::default()).unwrap();
        until_direct(&elsewhere, 0);
        drop(elsewhere);
        opened.send(()).unwrap();
        wait.recv().unwrap(); // stay alive while the main thread drops its handle
        echomq::direct::thread_connections()
    });
    ready.recv().unwrap(); // the other thread's connection is open
    assert_eq!(
        named(&mut raw),
        5,
        "two shared connections and three direct ones"
    );
    assert_eq!(echomq::direct::thread_connections(), 2);

    closed.close();
    assert_eq!(echomq::direct::thread_connections(), 1);
    // The last handle's drop closes the shared connection once its event
    // publisher has let go (a task on the runtime), and with it the rest.
    drop(dropped);
    // Every connection closed, the other thread's too, while it still lives.
    let mut left = named(&mut raw);
    for _ in 0..100 {
        if left == 0 && echomq::direct::thread_connections() == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        left = named(&mut raw);
    }
    assert_eq!(left, 0, "connections left open after close and drop");
    go.send(()).unwrap();
    assert_eq!(other.join().unwrap(), 0);
}

#[test]
fn a_connection_opened_in_the_background_closes_with_the_client_before_any_call_takes_it() {
    let server = Server::start();
    let mut raw = server.raw();
    let client = connect(&server);
    client.enqueue(Q, b"first", Default::default()).unwrap();
    client
        .enqueue(Q, b"second: starts the open", Default::default())
        .unwrap();
    // The second call opens the thread's connection.
    wait_for_connections(&mut raw, 2);
    assert_eq!(
        echomq::direct::thread_connections(),
        0,
        "no call took it yet"
    );
    client.close();
    wait_for_connections(&mut raw, 0); // closed with the client
    let e = client
        .enqueue(Q, b"closed", Default::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
    assert_eq!(echomq::direct::thread_connections(), 0);
    let n: u64 = raw.zcard(PENDING).unwrap();
    assert_eq!(n, 2);
}

#[test]
fn while_the_thread_connection_cannot_open_calls_take_the_shared_path() {
    // Room for the shared connection only: the thread's connect is refused
    // (max clients), its calls still land through the shared one, and once
    // there is room again a later attempt opens it.
    let server = Server::start();
    let mut raw = server.raw();
    let client = connect(&server);
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxclients")
        .arg(2)
        .query(&mut raw)
        .unwrap();
    for i in 0..20 {
        client
            .enqueue(Q, format!("{i}").as_bytes(), Default::default())
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(echomq::direct::thread_connections(), 0);
    assert_eq!(named(&mut raw), 1);
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxclients")
        .arg(100)
        .query(&mut raw)
        .unwrap();
    // The next attempt comes a second after the failed one.
    until_direct(&client, 0);
    assert_eq!(named(&mut raw), 2);
    let n: u64 = raw.zcard(PENDING).unwrap();
    assert_eq!(n, 20);
}
