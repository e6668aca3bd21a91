//! Connection options, with the defaults every binding documents.

use std::time::Duration;

/// The default payload ceiling: 16 MiB.
pub const DEFAULT_MAX_PAYLOAD: usize = 16 * 1024 * 1024;

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
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            node_id: None,
            client_name: None,
            connect_timeout: Duration::from_secs(5),
            response_timeout: Some(Duration::from_secs(30)),
            max_payload: DEFAULT_MAX_PAYLOAD,
            strict_bundle: false,
        }
    }
}
