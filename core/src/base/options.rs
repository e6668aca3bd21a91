//! Connection options, with the defaults every binding documents.

use std::time::Duration;

use crate::defaults;
use crate::error::{Error, Result};
use crate::option_schema::{self, OptionGroup};
use crate::wire::WireVersion;

/// The default payload ceiling: 16 MiB (kept for callers of the old name).
pub const DEFAULT_MAX_PAYLOAD: usize = defaults::MAX_PAYLOAD;

/// Options for [`crate::Client::connect`].
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Node id mixed into minted ids (0..=1023). Default: `EMQ_NODE_ID`, else
    /// a per-process random value (see [`crate::id::default_node_id`]).
    pub node_id: Option<u16>,
    /// `CLIENT SETNAME` for every connection this client opens.
    pub client_name: Option<String>,
    /// How long one connection attempt (TCP + TLS + handshake + fence) may take. Default 5 s.
    pub connect_timeout: Duration,
    /// How long one command may wait for its answer. Default 30 s; `None` waits forever.
    pub response_timeout: Option<Duration>,
    /// Largest payload accepted before the wire. Default 16 MiB.
    pub max_payload: usize,
    /// Make a script-bundle mismatch a connect error instead of a logged condition.
    pub strict_bundle: bool,
    /// Publish queue events on `emq:{q}:events` after each transition this
    /// client's verbs make. Default true; false for a client that must not
    /// spend the `PUBLISH`es (nobody follows the queue).
    pub publish_events: bool,
    /// The wire version to speak (and fence). Default: the newest,
    /// `echomq:2.1.0`. Speak `echomq:2.0.0` to share a deployment still
    /// recorded at 2.0.0; the 2.1.0 verbs then answer `Unsupported`.
    pub wire_version: WireVersion,
    /// Durable writes: after every enqueue verb and `complete`, `WAIT` until
    /// this many replicas hold the write, else answer
    /// [`crate::ErrorKind::NotDurable`]. Default 0 (no `WAIT`).
    pub wait_replicas: u32,
    /// How long one `WAIT` may block. Default 1000 ms.
    pub wait_timeout_ms: u64,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            node_id: None,
            client_name: None,
            connect_timeout: Duration::from_millis(defaults::CONNECT_TIMEOUT_MS),
            response_timeout: defaults::timeout_from_ms(defaults::RESPONSE_TIMEOUT_MS),
            max_payload: defaults::MAX_PAYLOAD,
            strict_bundle: defaults::STRICT_BUNDLE,
            publish_events: defaults::PUBLISH_EVENTS,
            wire_version: WireVersion::NEWEST,
            wait_replicas: defaults::WAIT_REPLICAS as u32,
            wait_timeout_ms: defaults::WAIT_TIMEOUT_MS,
        }
    }
}

impl ConnectOptions {
    /// Refuse what the server would refuse later, before the wire: a
    /// `client_name` the server rejects (spaces, newlines, non-printable
    /// characters), an empty one, and a connect timeout outside its range
    /// (the option schema's).
    pub fn validate(&self) -> Result<()> {
        if let Some(name) = &self.client_name {
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_graphic()) {
                return Err(Error::invalid_argument(format!(
                    "client_name {name:?} must be non-empty printable ASCII without spaces"
                )));
            }
        }
        // A sub-millisecond timeout is not zero: it counts as 1 ms.
        let t = self.connect_timeout;
        let connect_ms = u64::try_from(t.as_millis())
            .unwrap_or(u64::MAX)
            .max(u64::from(!t.is_zero()));
        option_schema::spec(OptionGroup::Connect, "connect_timeout_ms").check(connect_ms)?;
        Ok(())
    }
}
