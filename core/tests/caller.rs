//! The caller thread (issue #16 §3, decision 16.11): a call handed over by
//! a caller that must not block (Node's JS thread) runs on a connection of
//! the caller thread's own, fenced and closed like every connection, and
//! answers the same typed errors. Speed is a benchmark figure (bench/).

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::{
    connections_named, kill_all_but_me, raise_the_fence_and_end_connections,
    wait_for_connections_named, Server,
};
use echomq::{runtime::runtime, Client, ConnectOptions, Enqueued, ErrorKind, Result};
use redis::Commands;

const Q: &str = "caller";
const PENDING: &str = "emq:{caller}:pending";
const NAME: &str = "emq-caller-test";

fn connect(server: &Server) -> Client {
    connect_with(server, ConnectOptions::default())
}

fn connect_with(server: &Server, options: ConnectOptions) -> Client {
    let options = ConnectOptions {
        client_name: Some(NAME.into()),
        ..options
    };
    runtime()
        .block_on(Client::connect(&server.url(), options))
        .unwrap()
}

/// Hand one enqueue to the caller thread and wait for its answer here.
fn enqueue(client: &Client, payload: &'static [u8]) -> Result<Enqueued> {
    let (tx, rx) = mpsc::channel();
    echomq::caller::spawn(
        client,
        move |c| async move { c.enqueue(Q, payload, Default::default()).await },
        move |answer| tx.send(answer).unwrap(),
    );
    rx.recv_timeout(Duration::from_secs(10)).unwrap()
}

/// Connections the server shows under the test's client name.
fn named(raw: &mut redis::Connection) -> usize {
    connections_named(raw, NAME)
}

#[test]
fn calls_handed_over_run_on_one_connection_of_the_caller_threads_and_all_land() {
    let server = Server::start();
    let mut raw = server.raw();
    let client = connect(&server);
    assert_eq!(
        named(&mut raw),
        1,
        "connect opens the shared connection only"
    );
    // The first call takes the shared path and opens the caller thread's
    // connection in the background.
    enqueue(&client, b"first").unwrap();
    wait_for_connections(&mut raw, 2);

    // Fifty at once: pipelined on the caller thread's connection.
    let (tx, rx) = mpsc::channel();
    for i in 0..50u32 {
        let tx = tx.clone();
        echomq::caller::spawn(
            &client,
            move |c| async move { c.enqueue(Q, i.to_string(), Default::default()).await },
            move |answer| tx.send((i, answer)).unwrap(),
        );
    }
    let mut answers: Vec<(u32, Enqueued)> = (0..50)
        .map(|_| {
            let (i, a) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
            (i, a.unwrap())
        })
        .collect();
    answers.sort_by_key(|(i, _)| *i);
    assert_eq!(
        named(&mut raw),
        2,
        "one more connection, the caller thread's"
    );
    let n: u64 = raw.zcard(PENDING).unwrap();
    assert_eq!(n, 51);
    for (i, job) in &answers {
        let payload: String = raw
            .hget(format!("emq:{{caller}}:job:{}", job.id), "payload")
            .unwrap();
        assert_eq!(payload, i.to_string());
    }
    // A second client gets a connection of its own on the same thread.
    let other = connect(&server);
    enqueue(&other, b"other").unwrap();
    wait_for_connections(&mut raw, 4);
}

/// A client whose caller-thread connection is open: its first enqueue
/// (one job, on the shared path) started opening it.
fn opened(server: &Server, raw: &mut redis::Connection) -> Client {
    let client = connect(server);
    enqueue(&client, b"opens the connection").unwrap();
    wait_for_connections(raw, 2);
    client
}

/// Wait (up to 5 s) until the server shows `n` connections under the
/// test's name.
fn wait_for_connections(raw: &mut redis::Connection, n: usize) {
    wait_for_connections_named(raw, NAME, n);
}

#[test]
fn a_connection_the_server_ended_is_reopened_and_fenced_again() {
    let server = Server::start();
    let mut raw = server.raw();
    let client = opened(&server, &mut raw);
    kill_all_but_me(&mut raw);
    wait_for_connections(&mut raw, 0); // the server closed them
    enqueue(&client, b"after").unwrap();
    let n: u64 = raw.zcard(PENDING).unwrap();
    assert_eq!(n, 2);

    raise_the_fence_and_end_connections(&mut raw, NAME);
    let e = enqueue(&client, b"refused").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::VersionFence, "{e}");
    let n: u64 = raw.zcard(PENDING).unwrap();
    assert_eq!(n, 2, "nothing written past the fence");
}

#[test]
fn closing_the_client_closes_its_caller_thread_connection() {
    let server = Server::start();
    let mut raw = server.raw();
    let client = opened(&server, &mut raw);
    enqueue(&client, b"on the caller thread's").unwrap();
    client.close();
    let e = enqueue(&client, b"closed").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
    wait_for_connections(&mut raw, 0);
    let n: u64 = raw.zcard(PENDING).unwrap();
    assert_eq!(n, 2);
}

#[test]
fn a_panicking_call_answers_internal_and_the_thread_serves_on() {
    let server = Server::start();
    let mut raw = server.raw();
    let client = opened(&server, &mut raw);
    let (tx, rx) = mpsc::channel();
    echomq::caller::spawn(
        &client,
        |_c| async move {
            if true {
                panic!("a bug in a call");
            }
            Ok(())
        },
        move |answer: Result<()>| tx.send(answer).unwrap(),
    );
    let e = rx
        .recv_timeout(Duration::from_secs(10))
        .unwrap()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Internal, "{e}");
    enqueue(&client, b"still served").unwrap();
    let n: u64 = raw.zcard(PENDING).unwrap();
    assert_eq!(n, 2);
}

#[test]
fn with_the_server_down_calls_answer_typed_errors_and_recover_after_a_restart() {
    let mut server = Server::start();
    // Short timeouts, so the server's absence is answered, not waited out.
    let short = || ConnectOptions {
        response_timeout: Some(Duration::from_millis(300)),
        connect_timeout: Duration::from_millis(500),
        ..ConnectOptions::default()
    };
    let opened = connect_with(&server, short());
    enqueue(&opened, b"up").unwrap();
    wait_for_connections(&mut server.raw(), 2); // its caller-thread connection is open
    let unopened = connect_with(&server, short());
    server.stop();
    for client in [&opened, &unopened] {
        for _ in 0..3 {
            let e = enqueue(client, b"down").unwrap_err();
            assert!(
                matches!(e.kind(), ErrorKind::Connection | ErrorKind::Unavailable),
                "{e}"
            );
        }
    }
    server.restart();
    let mut raw = server.raw();
    for client in [&opened, &unopened] {
        let mut answer = enqueue(client, b"back");
        for _ in 0..50 {
            if answer.is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
            answer = enqueue(client, b"back");
        }
        answer.unwrap();
    }
    let n: u64 = raw.zcard(PENDING).unwrap();
    assert_eq!(n, 2, "the server restarted empty: only the two after it");
}
