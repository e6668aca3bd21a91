//! The two kinds of server connection behind the transport: one multiplexed
//! connection to a standalone server, or redis-rs's async cluster client
//! (which routes by slot, follows MOVED/ASK and reconnects by itself).
//!
//! `redis+cluster://[user:pass@]host:port[,host:port…]/` (and `rediss+cluster://`)
//! selects the cluster; every other URL is handed to redis-rs as it is.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::cluster::{ClusterClient, ClusterClientBuilder};
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use redis::{Cmd, Pipeline, RedisFuture, Value};

use crate::error::{Error, ErrorKind, Result};

/// A live connection of either kind; both pipeline concurrent callers.
#[derive(Clone)]
pub(crate) enum Conn {
    Single(MultiplexedConnection),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Single(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}

impl Conn {
    /// Run `cmd` on the cluster node at `host:port` (standalone: the one
    /// server, whatever `node` says). For per-node commands such as `SCAN`.
    pub async fn on_node(
        &mut self,
        node: Option<(&str, u16)>,
        cmd: &Cmd,
    ) -> redis::RedisResult<Value> {
        match (self, node) {
            (Conn::Cluster(c), Some((host, port))) => {
                let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                    host: host.to_string(),
                    port,
                });
                c.route_command(cmd.clone(), route).await
            }
            (conn, _) => cmd.query_async(conn).await,
        }
    }

    /// Run a keyless command on the master that owns `key`'s slot (standalone:
    /// the one server). Used for `SCRIPT LOAD` where a script must run.
    pub async fn on_master_of(&mut self, key: &str, cmd: &Cmd) -> redis::RedisResult<Value> {
        match self {
            Conn::Single(c) => cmd.query_async(c).await,
            Conn::Cluster(c) => {
                let slot = crate::slot::slot(key.as_bytes());
                let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(
                    Route::new(slot, SlotAddr::Master),
                ));
                c.route_command(cmd.clone(), route).await
            }
        }
    }
}

/// What a URL asks for: a standalone server, or a cluster's seed nodes.
/// One per client, never moved after connect: the size difference is moot.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Target {
    Single(redis::Client),
    Cluster {
        client: ClusterClient,
        /// One client per seed node, for the event subscriber when the
        /// queue's master cannot be resolved.
        seeds: Vec<redis::Client>,
        /// `(scheme, userinfo, path)` of the URL, to address any node the
        /// cluster names (`redis://user:pass@` + `host:port` + `/`).
        template: (String, String, String),
    },
}

const CLUSTER_SCHEMES: [(&str, &str); 2] = [
    ("redis+cluster://", "redis://"),
    ("rediss+cluster://", "rediss://"),
];

/// The node URLs of a cluster URL (user info and path copied to each), or
/// `None` when `url` is not a cluster URL.
pub(crate) fn cluster_nodes(url: &str) -> Option<Result<Vec<String>>> {
    let (scheme, userinfo, hosts, path) = split_cluster_url(url)?;
    let nodes: Vec<String> = hosts
        .split(',')
        .filter(|h| !h.is_empty())
        .map(|host| format!("{scheme}{userinfo}{host}{path}"))
        .collect();
    if nodes.is_empty() {
        return Some(Err(Error::invalid_argument(
            "a cluster url needs at least one host:port",
        )));
    }
    Some(Ok(nodes))
}

/// `(node scheme, userinfo with its '@', host list, path)` of a cluster URL.
fn split_cluster_url(url: &str) -> Option<(&'static str, &str, &str, &str)> {
    let (scheme, rest) = CLUSTER_SCHEMES
        .iter()
        .find_map(|(cluster, node)| url.strip_prefix(cluster).map(|rest| (*node, rest)))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, "/"),
    };
    let (userinfo, hosts) = match authority.rfind('@') {
        Some(i) => (&authority[..=i], &authority[i + 1..]),
        None => ("", authority),
    };
    Some((scheme, userinfo, hosts, path))
}

/// One master of a cluster and the slot ranges it serves (`CLUSTER SLOTS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Master {
    pub host: String,
    pub port: u16,
    pub slots: Vec<(u16, u16)>,
}

/// The masters named by a `CLUSTER SLOTS` reply, each once, in reply order.
pub(crate) fn masters_of(reply: &Value) -> Result<Vec<Master>> {
    let bad = || Error::new(ErrorKind::Protocol, "unexpected CLUSTER SLOTS reply");
    let Value::Array(ranges) = reply else {
        return Err(bad());
    };
    let mut masters: Vec<Master> = Vec::new();
    for range in ranges {
        let Value::Array(parts) = range else {
            return Err(bad());
        };
        let (Some(start), Some(end), Some(Value::Array(node))) =
            (parts.first(), parts.get(1), parts.get(2))
        else {
            return Err(bad());
        };
        let start: u16 = redis::from_redis_value(start.clone()).map_err(|_| bad())?;
        let end: u16 = redis::from_redis_value(end.clone()).map_err(|_| bad())?;
        let (Some(host), Some(port)) = (node.first(), node.get(1)) else {
            return Err(bad());
        };
        let host: String = redis::from_redis_value(host.clone()).map_err(|_| bad())?;
        let port: u16 = redis::from_redis_value(port.clone()).map_err(|_| bad())?;
        match masters
            .iter_mut()
            .find(|m| m.host == host && m.port == port)
        {
            Some(m) => m.slots.push((start, end)),
            None => masters.push(Master {
                host,
                port,
                slots: vec![(start, end)],
            }),
        }
    }
    Ok(masters)
}

impl Target {
    /// Parse the URL. `on_disconnect` is raised whenever a cluster node's
    /// connection ends (failover, restart): the transport re-fences then.
    pub fn parse(
        url: &str,
        connect_timeout: Duration,
        on_disconnect: Arc<AtomicBool>,
    ) -> Result<Target> {
        let invalid = |e: redis::RedisError| {
            let shown = crate::redact::redact_url(url);
            let why = crate::redact::scrub(&e.to_string(), url);
            Error::invalid_argument(format!("invalid server url {shown:?}: {why}"))
        };
        let Some(nodes) = cluster_nodes(url) else {
            let info = redis::IntoConnectionInfo::into_connection_info(url).map_err(invalid)?;
            // RESP3, so the driver can tell us the moment the socket ends.
            let settings = info
                .redis_settings()
                .clone()
                .set_protocol(redis::ProtocolVersion::RESP3);
            let info = info.set_redis_settings(settings);
            return Ok(Target::Single(redis::Client::open(info).map_err(invalid)?));
        };
        let on_push = move |info: redis::PushInfo| -> std::result::Result<(), ()> {
            if info.kind == redis::PushKind::Disconnection {
                on_disconnect.store(true, Ordering::Release);
            }
            Ok(())
        };
        let nodes = nodes?;
        let (scheme, userinfo, _, path) = split_cluster_url(url).expect("a cluster url");
        let template = (scheme.to_string(), userinfo.to_string(), path.to_string());
        let seeds = nodes
            .iter()
            .map(|node| redis::Client::open(node.as_str()).map_err(invalid))
            .collect::<Result<Vec<_>>>()?;
        let client = ClusterClientBuilder::new(nodes)
            .use_protocol(redis::ProtocolVersion::RESP3)
            .push_sender(on_push)
            .connection_timeout(connect_timeout)
            // Short inner retries for MOVED/ASK/TRYAGAIN/failover; the
            // transport retries again with its own backoff up to the
            // response timeout.
            .retries(6)
            .min_retry_wait(10)
            .max_retry_wait(250)
            .build()
            .map_err(invalid)?;
        Ok(Target::Cluster {
            client,
            seeds,
            template,
        })
    }

    pub fn is_cluster(&self) -> bool {
        matches!(self, Target::Cluster { .. })
    }

    /// The seed clients (cluster) or the one server's client.
    pub fn seed_clients(&self) -> Vec<redis::Client> {
        match self {
            Target::Single(client) => vec![client.clone()],
            Target::Cluster { seeds, .. } => seeds.clone(),
        }
    }

    /// A client for one node the cluster named, with the URL's credentials.
    pub fn node_client(&self, host: &str, port: u16) -> Option<redis::Client> {
        let Target::Cluster {
            template: (scheme, userinfo, path),
            ..
        } = self
        else {
            return None;
        };
        let host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.to_string()
        };
        redis::Client::open(format!("{scheme}{userinfo}{host}:{port}{path}")).ok()
    }

    /// Open a connection. `dead` is raised when a standalone socket ends.
    pub async fn open(&self, connect_timeout: Duration, dead: Arc<AtomicBool>) -> Result<Conn> {
        match self {
            Target::Single(client) => {
                let on_push = move |info: redis::PushInfo| -> std::result::Result<(), ()> {
                    if info.kind == redis::PushKind::Disconnection {
                        dead.store(true, Ordering::Release);
                    }
                    Ok(())
                };
                let config = redis::AsyncConnectionConfig::new().set_push_sender(on_push);
                let mut conn = open_multiplexed(client, config, connect_timeout).await?;
                refuse_cluster_node(&mut conn).await?;
                Ok(Conn::Single(conn))
            }
            Target::Cluster { client, .. } => {
                let conn = client.get_async_connection().await.map_err(|e| {
                    if e.to_string().contains("cluster support disabled") {
                        Error::invalid_argument(
                            "the server is not a cluster node (cluster support disabled): \
                             use a redis:// or rediss:// url for a standalone server",
                        )
                    } else {
                        Error::new(
                            ErrorKind::Connection,
                            format!("cannot connect to the cluster: {e}"),
                        )
                    }
                })?;
                Ok(Conn::Cluster(conn))
            }
        }
    }
}

/// A connection of its own to one cluster node (a `client` from
/// [`Target::node_client`]), without a response timeout: for a command that
/// blocks on a key the node owns (the idle worker's `BLPOP`).
pub(crate) async fn open_node(
    client: &redis::Client,
    connect_timeout: Duration,
) -> Result<MultiplexedConnection> {
    open_multiplexed(client, redis::AsyncConnectionConfig::new(), connect_timeout).await
}

/// A multiplexed connection with no response timeout (the transport bounds
/// each call itself).
async fn open_multiplexed(
    client: &redis::Client,
    config: redis::AsyncConnectionConfig,
    connect_timeout: Duration,
) -> Result<MultiplexedConnection> {
    let config = config
        .set_connection_timeout(Some(connect_timeout))
        .set_response_timeout(None);
    client
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .map_err(|e| {
            // A connect attempt that ran out of time is a timeout, not a refusal.
            let kind = if e.is_timeout() {
                ErrorKind::Timeout
            } else {
                ErrorKind::Connection
            };
            Error::new(kind, format!("cannot connect: {e}"))
        })
}

/// A standalone url pointed at a cluster node would work until the first key
/// of another slot answers MOVED; refuse it at connect with the fix.
async fn refuse_cluster_node(conn: &mut MultiplexedConnection) -> Result<()> {
    let info: String = redis::cmd("INFO").arg("cluster").query_async(conn).await?;
    if info.lines().any(|l| l.trim() == "cluster_enabled:1") {
        return Err(Error::invalid_argument(
            "the server is a Redis Cluster node: use a redis+cluster:// (or \
             rediss+cluster://) url so keys are routed to the master owning their slot",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_slots_name_each_master_once() {
        let node = |host: &str, port: i64| {
            Value::Array(vec![
                Value::BulkString(host.as_bytes().to_vec()),
                Value::Int(port),
                Value::BulkString(b"id".to_vec()),
            ])
        };
        let range = |a: i64, b: i64, host: &str, port: i64| {
            Value::Array(vec![
                Value::Int(a),
                Value::Int(b),
                node(host, port),
                node("r", 1),
            ])
        };
        let reply = Value::Array(vec![
            range(0, 5460, "127.0.0.1", 7000),
            range(5461, 10922, "127.0.0.1", 7001),
            range(10923, 16383, "127.0.0.1", 7000),
        ]);
        let masters = masters_of(&reply).unwrap();
        assert_eq!(masters.len(), 2);
        assert_eq!(masters[0].port, 7000);
        assert_eq!(masters[0].slots, [(0, 5460), (10923, 16383)]);
        assert_eq!(masters[1].slots, [(5461, 10922)]);
        assert!(masters_of(&Value::Int(1)).is_err());
    }

    #[test]
    fn cluster_urls_become_node_urls() {
        let nodes = cluster_nodes("redis+cluster://u:p@h1:7000,h2:7001/")
            .unwrap()
            .unwrap();
        assert_eq!(nodes, ["redis://u:p@h1:7000/", "redis://u:p@h2:7001/"]);
        let nodes = cluster_nodes("rediss+cluster://h1:7000").unwrap().unwrap();
        assert_eq!(nodes, ["rediss://h1:7000/"]);
        assert!(cluster_nodes("redis://h1:7000/").is_none());
        let err = cluster_nodes("redis+cluster:///").unwrap().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    }
}
