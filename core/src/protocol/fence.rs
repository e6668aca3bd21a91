//! The version fence and the bundle record (PROTOCOL.md §6). Both run on a
//! fresh connection before it is handed to any caller, and again on a
//! cluster connection after a node's connection ended. In a cluster both
//! keys hash to slot 9051, so both run on the master that owns it.

use redis::aio::ConnectionLike;
use redis::AsyncCommands;

use crate::error::{Error, Result};
use crate::keys::{BUNDLE_KEY, VERSION_KEY};
use crate::scripts;
use crate::wire::WireVersion;

/// GET the version; claim it with SET NX on a fresh keyspace and read it back;
/// refuse any other value with the typed fence error. Sends nothing else.
/// A fresh keyspace is fenced at the version this client speaks; an existing
/// record is never moved here (that is [`crate::Client::upgrade_protocol`]).
pub(crate) async fn fence<C: ConnectionLike + Send + Sync>(
    conn: &mut C,
    speaks: WireVersion,
) -> Result<()> {
    let version = speaks.as_str();
    let found: Option<String> = conn.get(VERSION_KEY).await?;
    let found = match found {
        Some(v) => v,
        None => {
            let _: Option<String> = redis::cmd("SET")
                .arg(VERSION_KEY)
                .arg(version)
                .arg("NX")
                .query_async(conn)
                .await?;
            let again: Option<String> = conn.get(VERSION_KEY).await?;
            again.unwrap_or_default()
        }
    };
    if found == version {
        Ok(())
    } else {
        Err(Error::version_fence(&found, speaks.as_str()))
    }
}

/// One field of `{emq}:bundle` that holds another runtime's SHA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleMismatch {
    /// Script name (or `bundle` for the whole-bundle hash).
    pub field: String,
    /// The SHA this client would have written.
    pub ours: String,
    /// The SHA already recorded.
    pub theirs: String,
}

/// Record the bundle of the version we speak with HSETNX and report every
/// field that already holds a different SHA. Also loads those scripts so
/// pipelines rarely meet NOSCRIPT.
pub(crate) async fn record_bundle<C: ConnectionLike + Send + Sync>(
    conn: &mut C,
    speaks: WireVersion,
) -> Result<Vec<BundleMismatch>> {
    let ours = scripts::for_version(speaks);
    let mut fields: Vec<(&str, &str)> = ours.iter().map(|s| (s.name, s.sha1())).collect();
    fields.push(("bundle", scripts::bundle_sha1_for(speaks)));

    let mut pipe = redis::pipe();
    for (name, sha) in &fields {
        pipe.cmd("HSETNX")
            .arg(BUNDLE_KEY)
            .arg(*name)
            .arg(*sha)
            .ignore();
    }
    pipe.cmd("HMGET").arg(BUNDLE_KEY);
    for (name, _) in &fields {
        pipe.arg(*name);
    }
    for script in &ours {
        pipe.cmd("SCRIPT").arg("LOAD").arg(script.source);
    }
    let mut answers: Vec<redis::Value> = pipe.query_async(conn).await?;
    let loaded = answers.split_off(1);
    let recorded: Vec<Option<String>> = redis::from_redis_value(answers.remove(0))?;

    for (script, sha) in ours.iter().zip(loaded) {
        let sha: String = redis::from_redis_value(sha)?;
        script.check_loaded(&sha)?;
    }
    Ok(fields
        .iter()
        .zip(recorded)
        .filter_map(|((name, ours), theirs)| match theirs {
            Some(theirs) if theirs != *ours => Some(BundleMismatch {
                field: name.to_string(),
                ours: ours.to_string(),
                theirs,
            }),
            _ => None,
        })
        .collect())
}
