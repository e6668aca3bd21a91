//! A throwaway `redis-server` (or `valkey-server`, see [`flavour`]) per test,
//! on a free port, killed on drop.
#![allow(dead_code)]

pub mod flavour;

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Server {
    pub port: u16,
    child: Option<Child>,
}

/// End every client connection of the server except `raw`'s own.
pub fn kill_all_but_me(raw: &mut redis::Connection) {
    let _: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("normal")
        .arg("SKIPME")
        .arg("yes")
        .query(raw)
        .unwrap();
}

/// Connections the server shows under the client name `name`.
pub fn connections_named(raw: &mut redis::Connection, name: &str) -> usize {
    let list: String = redis::cmd("CLIENT").arg("LIST").query(raw).unwrap();
    let name = format!("name={name} ");
    list.lines().filter(|l| l.contains(&name)).count()
}

/// Wait (up to 5 s) until the server shows `n` connections named `name`;
/// fails with the number it shows.
pub fn wait_for_connections_named(raw: &mut redis::Connection, name: &str, n: usize) {
    let mut shown = connections_named(raw, name);
    for _ in 0..250 {
        if shown == n {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        shown = connections_named(raw, name);
    }
    assert_eq!(shown, n, "connections named {name}");
}

/// Write a future major into the fence key and end every other connection,
/// then wait until the server shows none named `name` left (the state the
/// next call meets: its connection is gone, so it must reconnect, re-fence
/// and be refused).
pub fn raise_the_fence_and_end_connections(raw: &mut redis::Connection, name: &str) {
    let _: () = redis::cmd("SET")
        .arg("{emq}:version")
        .arg("echomq:9.0.0")
        .query(raw)
        .unwrap();
    kill_all_but_me(raw);
    wait_for_connections_named(raw, name, 0);
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Server {
    /// Start on a free port. The port is only free when we looked, so a
    /// sibling test may take it first: then our server exits (or a PING
    /// answers from a server that is not our child) and we try another port.
    pub fn start() -> Server {
        for _ in 0..20 {
            let mut server = Server {
                port: free_port(),
                child: None,
            };
            if server.try_spawn() {
                return server;
            }
        }
        panic!(
            "could not start {} on a free port in 20 tries",
            flavour::server_binary()
        );
    }

    fn spawn(&mut self) {
        assert!(
            self.try_spawn(),
            "{} on port {} did not start",
            flavour::server_binary(),
            self.port
        );
    }

    /// Start our child and wait until it answers; false when it exits (the
    /// port was taken) or the answering server is not our child.
    fn try_spawn(&mut self) -> bool {
        let child = Command::new(flavour::server_binary())
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", flavour::server_binary()));
        let pid = child.id();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(Ok(Some(_exited))) = self.child.as_mut().map(|c| c.try_wait()) {
                self.child = None;
                return false;
            }
            if let Ok(mut c) = self.raw_client().get_connection() {
                if let Ok(info) = redis::cmd("INFO").arg("server").query::<String>(&mut c) {
                    let ours = format!("process_id:{pid}");
                    if info.lines().any(|l| l.trim() == ours) {
                        return true;
                    }
                    self.stop();
                    return false;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.stop();
        false
    }

    /// Name and version as the running server reports them.
    pub fn identity(&self) -> echomq::server_info::ServerInfo {
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query(&mut self.raw())
            .unwrap();
        echomq::server_info::ServerInfo::parse(&info)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    pub fn raw_client(&self) -> redis::Client {
        redis::Client::open(self.url()).unwrap()
    }

    /// A plain connection for asserting wire state.
    pub fn raw(&self) -> redis::Connection {
        self.raw_client().get_connection().unwrap()
    }

    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kill and start again on the same port (empty keyspace: no persistence).
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}
