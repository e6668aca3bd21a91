//! `Client.queue(name)`: the name is checked by the core here, and the
//! handle itself is `echomq._queue.Queue`, a Python class that passes the
//! name to the client's verbs (no logic of its own; the core's Rust handle
//! is `echomq::Queue`).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::errors::err;

static QUEUE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Refuse a name outside the key grammar with `InvalidQueueError` (the
/// core's check and message), before any I/O.
#[pyfunction]
pub fn check_queue(name: &str) -> PyResult<()> {
    echomq::keys::validate_queue(name).map_err(err)
}

/// `echomq.Queue(client, name)` for the blocking client.
pub fn handle(client: &Bound<'_, PyAny>, name: String) -> PyResult<Py<PyAny>> {
    check_queue(&name)?;
    let class = QUEUE.import(client.py(), "echomq._queue", "Queue")?;
    Ok(class.call1((client, name))?.unbind())
}
