//! Entering the interpreter from the core's threads (tokio workers, the
//! blocking pool) safely across interpreter shutdown.
//!
//! A thread that tries to take the GIL while CPython finalizes is ended with
//! `pthread_exit`, and that forced unwind through Rust frames aborts the
//! process. So an `atexit` hook (registered at import) raises a flag and
//! waits, detached, for threads already inside Python to leave; after that
//! no core thread enters Python again (their answers are dropped: nobody is
//! left to receive them).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

static SHUTTING_DOWN: AtomicBool = AtomicBool::new(false);
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

/// The `atexit` hook.
#[pyfunction]
pub fn _at_exit(py: Python<'_>) {
    SHUTTING_DOWN.store(true, Ordering::SeqCst);
    py.detach(|| {
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
