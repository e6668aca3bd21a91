//! Read-only facts about a deployment, for health checks (`emq doctor`).
//!
//! The probe opens its own plain connection and does NOT fence: a deployment
//! whose `{emq}:version` holds another value must still be describable, so
//! the probe reads the record instead of claiming it, and writes nothing.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::aio::MultiplexedConnection;

use crate::error::{Error, ErrorKind, Result};
use crate::fence::BundleMismatch;
use crate::keys::{BUNDLE_KEY, VERSION_KEY};
use crate::options::ConnectOptions;
use crate::scripts;
use crate::server_info::ServerInfo;

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
    /// `cluster_enabled` from `INFO cluster`.
    pub cluster_enabled: bool,
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

/// Connect without fencing and collect the facts of [`ServerProbe`].
pub async fn probe(url: &str, options: &ConnectOptions) -> Result<ServerProbe> {
    let client = redis::Client::open(url)
        .map_err(|e| Error::invalid_argument(format!("invalid server url: {e}")))?;
    let mut conn = tokio::time::timeout(
        options.connect_timeout,
        client.get_multiplexed_async_connection(),
    )
    .await
    .map_err(|_| {
        Error::new(
            ErrorKind::Timeout,
            format!(
                "connect did not finish within {:?}",
                options.connect_timeout
            ),
        )
    })?
    .map_err(|e| Error::new(ErrorKind::Connection, format!("cannot connect: {e}")))?;

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
    let rdb_enabled = redis::cmd("CONFIG")
        .arg("GET")
        .arg("save")
        .query_async::<Vec<String>>(&mut conn)
        .await
        .ok()
        .map(|pair| pair.get(1).is_some_and(|v| !v.trim().is_empty()));

    let version_record: Option<String> = redis::cmd("GET")
        .arg(VERSION_KEY)
        .query_async(&mut conn)
        .await?;
    let recorded: HashMap<String, String> = redis::cmd("HGETALL")
        .arg(BUNDLE_KEY)
        .query_async(&mut conn)
        .await?;

    Ok(ServerProbe {
        server,
        server_version,
        maxmemory_policy: info.get("maxmemory_policy").cloned(),
        aof_enabled: info.get("aof_enabled").is_some_and(|v| v == "1"),
        rdb_enabled,
        cluster_enabled: info.get("cluster_enabled").is_some_and(|v| v == "1"),
        round_trip,
        clock_offset_ms,
        version_record,
        bundle_mismatches: bundle_mismatches(&recorded),
    })
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

/// The recorded bundle fields that differ from this build's SHAs.
fn bundle_mismatches(recorded: &HashMap<String, String>) -> Vec<BundleMismatch> {
    let ours = scripts::all()
        .into_iter()
        .map(|s| (s.name, s.sha1()))
        .chain([("bundle", scripts::bundle_sha1())]);
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
