//! A loopback cluster (3 masters + 3 replicas) started by `scripts/cluster.sh`
//! (server binary from `EMQ_SERVER_BIN`, else `EMQ_TEST_SERVER`, else
//! `redis-server`), stopped on
//! drop, plus what the cluster tests ask of it: who owns a slot, a raw
//! connection to one node, SIGKILL and restart of a node.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use redis::Value;

pub struct Cluster {
    pub dir: PathBuf,
    pub url: String,
    pub ports: Vec<u16>,
}

fn script() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/cluster.sh").to_string()
}

/// One slot range and the node ports serving it, master first.
#[derive(Debug, Clone)]
pub struct Shard {
    pub start: u16,
    pub end: u16,
    pub master: u16,
    pub replicas: Vec<u16>,
}

impl Cluster {
    pub fn start() -> Cluster {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "emq-cluster-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        // The script's own EMQ_SERVER_BIN wins; else the binary the rest of
        // the integration suite runs on (EMQ_TEST_SERVER, e.g. valkey-server).
        let mut start = Command::new("bash");
        start.arg(script()).arg("start").arg(&dir);
        if std::env::var_os("EMQ_SERVER_BIN").is_none() {
            if let Some(server) = std::env::var_os("EMQ_TEST_SERVER") {
                start.env("EMQ_SERVER_BIN", server);
            }
        }
        let out = start.output().expect("bash scripts/cluster.sh");
        assert!(
            out.status.success(),
            "cluster.sh start failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .last()
            .unwrap()
            .to_string();
        let ports = std::fs::read_to_string(dir.join("ports"))
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        Cluster { dir, url, ports }
    }

    pub fn raw(&self, port: u16) -> redis::Connection {
        redis::Client::open(format!("redis://127.0.0.1:{port}/"))
            .unwrap()
            .get_connection_with_timeout(Duration::from_secs(2))
            .unwrap()
    }

    /// The shards as some live node sees them.
    pub fn shards(&self) -> Vec<Shard> {
        for &port in &self.ports {
            let Ok(client) = redis::Client::open(format!("redis://127.0.0.1:{port}/")) else {
                continue;
            };
            let Ok(mut conn) = client.get_connection_with_timeout(Duration::from_millis(500))
            else {
                continue;
            };
            let Ok(rows) = redis::cmd("CLUSTER")
                .arg("SLOTS")
                .query::<Vec<Vec<Value>>>(&mut conn)
            else {
                continue;
            };
            return rows
                .into_iter()
                .map(|row| {
                    let int = |v: &Value| redis::from_redis_value::<i64>(v.clone()).unwrap();
                    let node_port = |v: &Value| {
                        let parts: Vec<Value> = redis::from_redis_value(v.clone()).unwrap();
                        int(&parts[1]) as u16
                    };
                    Shard {
                        start: int(&row[0]) as u16,
                        end: int(&row[1]) as u16,
                        master: node_port(&row[2]),
                        replicas: row[3..].iter().map(node_port).collect(),
                    }
                })
                .collect();
        }
        panic!("no node answered CLUSTER SLOTS");
    }

    pub fn shard_of(&self, slot: u16) -> Shard {
        self.shards()
            .into_iter()
            .find(|s| s.start <= slot && slot <= s.end)
            .expect("every slot is served")
    }

    /// A replica serving `slot` (waits until the cluster lists one).
    pub fn replica_of(&self, slot: u16) -> u16 {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(&port) = self.shard_of(slot).replicas.first() {
                return port;
            }
            assert!(
                Instant::now() < deadline,
                "no replica listed for slot {slot}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn master_of(&self, slot: u16) -> u16 {
        self.shard_of(slot).master
    }

    pub fn masters(&self) -> Vec<u16> {
        let mut m: Vec<u16> = self.shards().iter().map(|s| s.master).collect();
        m.sort();
        m.dedup();
        m
    }

    /// A queue name whose slot lives on master `port`.
    pub fn queue_on(&self, port: u16, prefix: &str) -> String {
        (0..10_000)
            .map(|i| format!("{prefix}{i}"))
            .find(|q| self.master_of(queue_slot(q)) == port)
            .expect("some name hashes to every master")
    }

    pub fn node_id(&self, port: u16) -> String {
        redis::cmd("CLUSTER")
            .arg("MYID")
            .query(&mut self.raw(port))
            .unwrap()
    }

    pub fn kill9(&self, port: u16) {
        let pid = std::fs::read_to_string(self.dir.join(format!("{port}.pid"))).unwrap();
        let status = Command::new("kill")
            .args(["-9", pid.trim()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    pub fn restart(&self, port: u16) {
        let status = Command::new("bash")
            .arg(script())
            .arg("restart-node")
            .arg(&self.dir)
            .arg(port.to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Wait until `slot` is served by a master other than `old`.
    pub fn await_failover(&self, slot: u16, old: u16) -> u16 {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let now = self.master_of(slot);
            if now != old {
                return now;
            }
            assert!(
                Instant::now() < deadline,
                "no replica took over slot {slot}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.dir)
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn queue_slot(queue: &str) -> u16 {
    echomq::slot::slot(format!("emq:{{{queue}}}:pending").as_bytes())
}
