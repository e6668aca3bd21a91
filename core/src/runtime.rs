//! The one tokio runtime per process that the blocking facade and every
//! binding run on. Created lazily; after fork() the child builds a fresh one
//! and leaks the inherited one (its threads do not exist in the child).

use std::sync::{Arc, Mutex};

use tokio::runtime::Runtime;

use crate::error::{Error, Result};

struct Owned {
    pid: u32,
    runtime: Arc<Runtime>,
}

static RUNTIME: Mutex<Option<Owned>> = Mutex::new(None);

/// The runtime's worker threads when `EMQ_RUNTIME_THREADS` is unset.
pub const DEFAULT_THREADS: usize = 2;
/// The most worker threads `EMQ_RUNTIME_THREADS` may ask for.
pub const MAX_THREADS: usize = 1024;

/// `EMQ_RUNTIME_THREADS` as set now: `None` when unset or empty, an
/// invalid-argument error unless it is an integer in 1..=1024.
pub fn env_threads() -> Result<Option<usize>> {
    let Ok(text) = std::env::var("EMQ_RUNTIME_THREADS") else {
        return Ok(None);
    };
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    match text.parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(Some(n)),
        _ => Err(Error::invalid_argument(format!(
            "EMQ_RUNTIME_THREADS {text:?} is not a thread count in 1..={MAX_THREADS}"
        ))),
    }
}

/// Refuse a malformed `EMQ_RUNTIME_THREADS` at connect, with a clear error,
/// rather than silently running on the default.
pub(crate) fn check_env() -> Result<()> {
    env_threads().map(drop)
}

fn build() -> Arc<Runtime> {
    // A malformed value is refused at connect; here it falls back to the default.
    let threads = env_threads().ok().flatten().unwrap_or(DEFAULT_THREADS);
    Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("echomq-rt")
            .enable_all()
            .build()
            .expect("cannot start the echomq tokio runtime"),
    )
}

/// `fut`, with a panic inside it answered as an [`ErrorKind::Internal`]
/// error instead of unwinding: the async bridges (Node, Python asyncio) run
/// every call through it so a Promise or future always settles.
///
/// [`ErrorKind::Internal`]: crate::ErrorKind::Internal
pub async fn caught<T>(fut: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    use futures_util::FutureExt;
    std::panic::AssertUnwindSafe(fut)
        .catch_unwind()
        .await
        .unwrap_or_else(|p| Err(Error::internal_panic("the call", &*p)))
}

/// The process's runtime (worker threads: `EMQ_RUNTIME_THREADS`, default 2).
pub fn runtime() -> Arc<Runtime> {
    let pid = std::process::id();
    let mut slot = RUNTIME.lock().unwrap_or_else(|p| p.into_inner());
    match slot.as_ref() {
        Some(owned) if owned.pid == pid => owned.runtime.clone(),
        _ => {
            if let Some(inherited) = slot.take() {
                std::mem::forget(inherited);
            }
            let runtime = build();
            *slot = Some(Owned {
                pid,
                runtime: runtime.clone(),
            });
            runtime
        }
    }
}
