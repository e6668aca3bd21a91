//! Entering the interpreter from the core's threads (tokio workers, the
//! blocking pool), and returning to it from a call that detached, safely
//! across interpreter shutdown.
//!
//! A thread that tries to take the GIL while CPython finalizes is ended with
//! `pthread_exit`, and that forced unwind through Rust frames aborts the
//! process (or crashes it). So an `atexit` hook (registered at import) raises
//! a flag and waits, detached, for threads already inside Python to leave;
//! after that no core thread enters Python again (their answers are dropped:
//! nobody is left to receive them).
//!
//! The same holds for a Python thread that detached for a call (a worker's
//! `run()` in a daemon thread, an enqueue waiting on a server that is gone):
//! when the call returns after the exit hook ran, taking the GIL back could
//! meet the finalizing interpreter. Only daemon threads can still be inside a
//! call then (the interpreter joins the others before the hook runs), and
//! nothing waits for them, so [`Detach::detach_or_park`] parks such a thread,
//! detached, until the process ends (what CPython 3.14 does itself).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use pyo3::prelude::*;

static SHUTTING_DOWN: AtomicBool = AtomicBool::new(false);
/// The thread that ran the exit hook (set with `SHUTTING_DOWN`).
static EXIT_THREAD: OnceLock<ThreadId> = OnceLock::new();
static INSIDE: AtomicUsize = AtomicUsize::new(0);

/// How long the exit hook waits for threads inside Python (a handler still
/// running at exit) before letting finalization proceed.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// Run `f` attached to the interpreter, unless it is shutting down (`None`).
/// For threads the interpreter did not start.
pub fn attach<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> Option<R> {
    INSIDE.fetch_add(1, Ordering::SeqCst);
    let out = if SHUTTING_DOWN.load(Ordering::SeqCst) {
        None
    } else {
        Some(Python::attach(f))
    };
    INSIDE.fetch_sub(1, Ordering::SeqCst);
    out
}

/// `Python::detach` that never takes the GIL back once the interpreter is
/// exiting (see the module docs).
pub trait Detach {
    /// Run `f` detached from the interpreter, then re-attach; if the exit
    /// hook ran meanwhile, park this thread instead, for good.
    fn detach_or_park<T: Send, F: Send + FnOnce() -> T>(self, f: F) -> T;
}

impl Detach for Python<'_> {
    fn detach_or_park<T: Send, F: Send + FnOnce() -> T>(self, f: F) -> T {
        self.detach(|| {
            let out = f();
            // The thread running the exit hooks (the main thread) may call
            // in from a later hook: the interpreter is not finalizing yet.
            let exiting = EXIT_THREAD
                .get()
                .is_some_and(|t| *t != std::thread::current().id());
            if exiting {
                park_until_exit();
            }
            out
        })
    }
}

/// Never return: the process is exiting, and this thread must not touch
/// the interpreter again.
fn park_until_exit() -> ! {
    loop {
        std::thread::park();
    }
}

/// The `atexit` hook.
#[pyfunction]
pub fn _at_exit(py: Python<'_>) {
    let _ = EXIT_THREAD.set(std::thread::current().id());
    SHUTTING_DOWN.store(true, Ordering::SeqCst);
    py.detach(|| {
        // Runs left in daemon threads drain (handing their jobs back) before
        // the process ends; their handlers no longer enter Python.
        crate::worker::finish_runs_at_exit();
        let deadline = Instant::now() + EXIT_WAIT;
        while INSIDE.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}

/// `os.register_at_fork(after_in_child=...)`: only the forking thread exists
/// in the child, so nobody is inside Python from a core thread.
#[pyfunction]
pub fn _after_fork_in_child() {
    INSIDE.store(0, Ordering::SeqCst);
}
