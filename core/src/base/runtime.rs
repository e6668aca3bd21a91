//! The one tokio runtime per process that the blocking facade and every
//! binding run on. Created lazily; after fork() the child builds a fresh one
//! and leaks the inherited one (its threads do not exist in the child).
//!
//! Finding it takes no lock: every shared-path call asks for it, so a lock
//! held by one of the parent's threads at the instant of a `fork()` would be
//! held for ever in the child, and the child's first call would hang. Only
//! building one (once per process) locks, and the child's build does not wait
//! on a lock the parent held either.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwapOption;

use tokio::runtime::Runtime;

use crate::error::{Error, Result};

struct Owned {
    pid: u32,
    runtime: Arc<Runtime>,
}

/// The runtime and the process it belongs to (a forked child's copy names
/// the parent). Never dropped once replaced: see [`runtime`].
static RUNTIME: ArcSwapOption<Owned> = ArcSwapOption::const_empty();

/// The process one of whose threads is building the runtime, 0 when none:
/// a child that finds its parent's pid here takes it over (that thread does
/// not exist in the child and will never finish).
static BUILDER: AtomicU32 = AtomicU32::new(0);

thread_local! {
    /// Set while this thread is inside a direct call, and for good on the
    /// caller thread ([`crate::direct`], [`crate::caller`]).
    static DIRECT_CALL: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is inside a direct call: a task started now must go
/// to the process runtime, not to the thread's, which stops with the call.
pub(crate) fn direct_call_active() -> bool {
    DIRECT_CALL.with(Cell::get)
}

/// Mark this thread as inside a direct call, or not ([`crate::direct`]).
pub(crate) fn set_direct_call_active(active: bool) {
    DIRECT_CALL.with(|a| a.set(active));
}

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
    loop {
        if let Some(runtime) = current(pid) {
            return runtime;
        }
        let builder = BUILDER.load(Ordering::Acquire);
        if builder == pid
            || BUILDER
                .compare_exchange(builder, pid, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
        {
            std::thread::yield_now(); // another thread of this process builds it
            continue;
        }
        let _release = Release;
        // Built by another thread between the first look and taking over.
        if let Some(runtime) = current(pid) {
            return runtime;
        }
        let runtime = build();
        let inherited = RUNTIME.swap(Some(Arc::new(Owned {
            pid,
            runtime: runtime.clone(),
        })));
        // The parent's runtime: its threads do not exist here, and dropping
        // it would wait for them.
        std::mem::forget(inherited);
        return runtime;
    }
}

/// This process's runtime, if it has one yet.
fn current(pid: u32) -> Option<Arc<Runtime>> {
    let owned = RUNTIME.load();
    Option::as_ref(&owned)
        .filter(|o| o.pid == pid)
        .map(|o| o.runtime.clone())
}

/// Frees [`BUILDER`] when the build ends, a panicking one included.
struct Release;

impl Drop for Release {
    fn drop(&mut self) {
        BUILDER.store(0, Ordering::Release);
    }
}
