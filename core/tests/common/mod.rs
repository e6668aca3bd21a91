//! A throwaway `redis-server` per test, on a free port, killed on drop.
#![allow(dead_code)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Server {
    pub port: u16,
    child: Option<Child>,
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
    pub fn start() -> Server {
        let port = free_port();
        let mut server = Server { port, child: None };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let child = Command::new("redis-server")
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
            .expect("redis-server must be installed (apt-get install redis-server)");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(mut c) = self.raw_client().get_connection() {
                if redis::cmd("PING").query::<String>(&mut c).is_ok() {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server on port {} did not start", self.port);
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
