//! Read-only facts about a deployment, for health checks (`emq doctor`, the
//! dashboard's health panel; [`crate::health`] judges them).
//!
//! The probe opens its own plain connection and does NOT fence: a deployment
//! whose `{emq}:version` holds another value must still be describable, so
//! the probe reads the record instead of claiming it, and writes nothing.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::aio::MultiplexedConnection;

use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::fence::BundleMismatch;
use crate::keys::{BUNDLE_KEY, VERSION_KEY};
use crate::options::ConnectOptions;
use crate::scripts;
use crate::server_info::ServerInfo;
use crate::wire::WireVersion;

/// What a deployment's server and its `{emq}:` reserve look like.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerProbe {
    /// `redis` or `valkey` (from `INFO server`).
    pub server: String,
    /// The server's version string.
    pub server_version: String,
    /// `maxmemory_policy` from `INFO memory`.
    pub maxmemory_policy: Option<String>,
    /// `aof_enabled` from `INFO persistence`.
    pub aof_enabled: bool,
    /// RDB snapshots configured (`CONFIG GET save` non-empty); `None` when
    /// the server refuses `CONFIG` (managed services often do).
    pub rdb_enabled: Option<bool>,
    /// `notify-keyspace-events` (`CONFIG GET`): whether idle workers can hear
    /// a job written without a wake hint at once; `None` when `CONFIG` is
    /// refused.
    pub keyspace_events: Option<String>,
    /// `cluster_enabled` from `INFO cluster`.
    pub cluster_enabled: bool,
    /// The URL asked for the cluster transport (`redis+cluster://`, ...).
    pub cluster_url: bool,
    /// Cluster mode: `cluster_state` from `CLUSTER INFO` (`ok` or `fail`).
    pub cluster_state: Option<String>,
    /// Cluster mode: how many masters serve slots (`CLUSTER SLOTS`).
    pub cluster_masters: Option<usize>,
    /// One `PING` round trip.
    pub round_trip: Duration,
    /// Server clock minus this host's clock, in ms (server `TIME` against the
    /// midpoint of the round trip that fetched it).
    pub clock_offset_ms: i64,
    /// The value of `{emq}:version`, if any.
    pub version_record: Option<String>,
    /// `{emq}:bundle` fields recorded with other SHAs than this build's.
    pub bundle_mismatches: Vec<BundleMismatch>,
}

impl Client {
    /// The [`ServerProbe`] of the deployment this client talks to, read on a
    /// short-lived connection of its own (so a slow probe never queues behind
    /// the client's verbs, and nothing is fenced or written).
    pub async fn probe(&self) -> Result<ServerProbe> {
        probe(self.transport().url(), self.options()).await
    }
}

/// Connect without fencing and collect the facts of [`ServerProbe`]. A
/// cluster URL is probed on its first seed that answers (server facts are
/// that node's), with `{emq}:version` and `{emq}:bundle` read from the
/// master owning their slot; a standalone URL at a cluster node and a
/// cluster URL at a standalone server are reported, not refused, so the
/// doctor can name the fix.
pub async fn probe(url: &str, options: &ConnectOptions) -> Result<ServerProbe> {
    let invalid = |e: redis::RedisError| {
        let shown = crate::redact::redact_url(url);
        let why = crate::redact::scrub(&e.to_string(), url);
        Error::invalid_argument(format!("invalid server url {shown:?}: {why}"))
    };
    let nodes = match crate::conn::cluster_nodes(url) {
        Some(nodes) => Some(nodes?),
        None => None,
    };
    let seeds = nodes.clone().unwrap_or_else(|| vec![url.to_string()]);
    let mut conn = None;
    let mut last = Error::new(ErrorKind::Connection, "cannot connect: no server address");
    for seed in &seeds {
        let client = redis::Client::open(seed.as_str()).map_err(invalid)?;
        match connect(&client, options.connect_timeout).await {
            Ok(c) => {
                conn = Some(c);
                break;
            }
            Err(e) => last = e,
        }
    }
    let Some(mut conn) = conn else {
        return Err(last);
    };

    let started = Instant::now();
    let _: String = redis::cmd("PING").query_async(&mut conn).await?;
    let round_trip = started.elapsed();

    let before = unix_ms_f64();
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query_async(&mut conn).await?;
    let after = unix_ms_f64();
    let server_ms = secs as f64 * 1000.0 + micros as f64 / 1000.0;
    let clock_offset_ms = (server_ms - (before + after) / 2.0).round() as i64;

    let server_text: String = redis::cmd("INFO")
        .arg("server")
        .query_async(&mut conn)
        .await?;
    let ServerInfo {
        name: server,
        version: server_version,
    } = ServerInfo::parse(&server_text);
    let info = info_fields(&mut conn).await?;
    // A map, not a pair list: RESP3 connections (the client's) answer
    // `CONFIG GET` with a map, RESP2 ones with a flat array; both read as one.
    let rdb_enabled = redis::cmd("CONFIG")
        .arg("GET")
        .arg("save")
        .query_async::<HashMap<String, String>>(&mut conn)
        .await
        .ok()
        .map(|found| found.get("save").is_some_and(|v| !v.trim().is_empty()));
    let keyspace_events = redis::cmd("CONFIG")
        .arg("GET")
        .arg("notify-keyspace-events")
        .query_async::<HashMap<String, String>>(&mut conn)
        .await
        .ok()
        .and_then(|mut found| found.remove("notify-keyspace-events"));

    let cluster_enabled = info.get("cluster_enabled").is_some_and(|v| v == "1");
    let (mut cluster_state, mut cluster_masters) = (None, None);
    if cluster_enabled {
        let text: String = redis::cmd("CLUSTER")
            .arg("INFO")
            .query_async(&mut conn)
            .await?;
        cluster_state = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("cluster_state:"))
            .map(str::to_string);
        let slots: redis::Value = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query_async(&mut conn)
            .await?;
        cluster_masters = Some(crate::conn::masters_of(&slots)?.len());
    }

    let read_version = redis::cmd("GET").arg(VERSION_KEY).clone();
    let read_bundle = redis::cmd("HGETALL").arg(BUNDLE_KEY).clone();
    let (version_record, recorded): (Option<String>, HashMap<String, String>) =
        match (&nodes, cluster_enabled) {
            // The fence keys live on slot 9051's master: let the cluster client route.
            (Some(nodes), true) => {
                let cluster = redis::cluster::ClusterClientBuilder::new(nodes.clone())
                    .connection_timeout(options.connect_timeout)
                    .build()
                    .map_err(invalid)?;
                let mut routed = cluster.get_async_connection().await.map_err(|e| {
                    Error::new(
                        ErrorKind::Connection,
                        format!("cannot connect to the cluster: {e}"),
                    )
                })?;
                (
                    read_version.query_async(&mut routed).await?,
                    read_bundle.query_async(&mut routed).await?,
                )
            }
            // A standalone URL at a cluster node: this node may not own
            // slot 9051 (MOVED); the doctor reports the URL instead.
            (None, true) => (None, HashMap::new()),
            _ => (
                read_version.query_async(&mut conn).await?,
                read_bundle.query_async(&mut conn).await?,
            ),
        };

    let bundle_mismatches = bundle_mismatches(&recorded, version_record.as_deref());
    Ok(ServerProbe {
        server,
        server_version,
        maxmemory_policy: info.get("maxmemory_policy").cloned(),
        aof_enabled: info.get("aof_enabled").is_some_and(|v| v == "1"),
        rdb_enabled,
        keyspace_events,
        cluster_enabled,
        cluster_url: nodes.is_some(),
        cluster_state,
        cluster_masters,
        round_trip,
        clock_offset_ms,
        version_record,
        bundle_mismatches,
    })
}

async fn connect(client: &redis::Client, limit: Duration) -> Result<MultiplexedConnection> {
    tokio::time::timeout(limit, client.get_multiplexed_async_connection())
        .await
        .map_err(|_| {
            Error::new(
                ErrorKind::Timeout,
                format!("connect did not finish within {limit:?}"),
            )
        })?
        .map_err(|e| Error::new(ErrorKind::Connection, format!("cannot connect: {e}")))
}

/// `INFO memory persistence cluster` as `name → value`.
async fn info_fields(conn: &mut MultiplexedConnection) -> Result<HashMap<String, String>> {
    let mut fields = HashMap::new();
    // One section per call: servers before 7.0 take a single section name.
    for section in ["memory", "persistence", "cluster"] {
        let text: String = redis::cmd("INFO").arg(section).query_async(conn).await?;
        for line in text.lines() {
            if let Some((name, value)) = line.trim().split_once(':') {
                fields.insert(name.to_string(), value.to_string());
            }
        }
    }
    Ok(fields)
}

/// The recorded bundle fields that differ from this build's SHAs, compared
/// with the bundle of the version the deployment is fenced at (a 2.0.0
/// deployment records the 2.0.0 set and hash, which is no mismatch); an
/// unknown or absent record is compared with the newest bundle.
fn bundle_mismatches(
    recorded: &HashMap<String, String>,
    version_record: Option<&str>,
) -> Vec<BundleMismatch> {
    let version = version_record
        .and_then(|v| WireVersion::parse(v).ok())
        .unwrap_or(WireVersion::NEWEST);
    let ours = scripts::for_version(version)
        .into_iter()
        .map(|s| (s.name, s.sha1()))
        .chain([("bundle", scripts::bundle_sha1_for(version))]);
    ours.filter_map(|(name, ours)| match recorded.get(name) {
        Some(theirs) if theirs != ours => Some(BundleMismatch {
            field: name.to_string(),
            ours: ours.to_string(),
            theirs: theirs.clone(),
        }),
        _ => None,
    })
    .collect()
}

fn unix_ms_f64() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}
