//! Which server answers: Redis or Valkey, and its version, read from the text
//! of `INFO server`. Valkey keeps a `redis_version` field frozen at 7.2.4 for
//! clients that gate features on it, so `valkey_version` is read first
//! (docs/PROTOCOL-DECISIONS.md 15v.2). For reports (`emq doctor`, test output);
//! the client itself never branches on the server.

use std::fmt;

/// A server's name (`redis`, `valkey`, or what its `server_name` says) and version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    /// The server's name: `redis`, `valkey`, ...
    pub name: String,
    /// The server's version, as it reports it.
    pub version: String,
}

impl ServerInfo {
    /// Read the name and version out of an `INFO` (or `INFO server`) reply.
    pub fn parse(info: &str) -> ServerInfo {
        let field = |name: &str| {
            info.lines()
                .find_map(|l| l.trim().strip_prefix(name)?.strip_prefix(':'))
                .map(str::to_string)
        };
        match field("valkey_version") {
            Some(version) => ServerInfo {
                name: "valkey".to_string(),
                version,
            },
            None => ServerInfo {
                name: field("server_name").unwrap_or_else(|| "redis".to_string()),
                version: field("redis_version").unwrap_or_default(),
            },
        }
    }
}

impl fmt::Display for ServerInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_servers() {
        let redis = "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n";
        assert_eq!(ServerInfo::parse(redis).to_string(), "redis 7.0.15");
        let valkey =
            "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.1.8\r\n";
        assert_eq!(ServerInfo::parse(valkey).to_string(), "valkey 8.1.8");
        assert_eq!(ServerInfo::parse("").to_string(), "redis ");
    }
}
