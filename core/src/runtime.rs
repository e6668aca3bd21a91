//! The one tokio runtime per process that the blocking facade and every
//! binding run on. Created lazily; after fork() the child builds a fresh one
//! and leaks the inherited one (its threads do not exist in the child).

use std::sync::{Arc, Mutex};

use tokio::runtime::Runtime;

struct Owned {
    pid: u32,
    runtime: Arc<Runtime>,
}

static RUNTIME: Mutex<Option<Owned>> = Mutex::new(None);

fn build() -> Arc<Runtime> {
    let threads = std::env::var("EMQ_RUNTIME_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(2);
    Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("echomq-rt")
            .enable_all()
            .build()
            .expect("cannot start the echomq tokio runtime"),
    )
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
