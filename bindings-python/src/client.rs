//! `echomq.Client`: the blocking client. Its verbs come from the table of
//! `surface.rs`; each releases the GIL for its network I/O, so Python
//! threads sharing one client run in parallel.

use pyo3::prelude::*;

use crate::interp::Detach;

use crate::args::{self, Count, Ms, Priority, UnixMs};
use pyo3::types::PyList;

use echomq::{blocking, BrowseSet, TimeRange};

use crate::errors::{err, exception};
use crate::types::*;

/// A blocking connection to one EchoMQ deployment (thread-safe; share it).
#[pyclass(frozen, module = "echomq")]
pub struct Client {
    pub inner: blocking::Client,
}

/// Shared by both clients: turn a per-job verdict list into Python values
/// (`None` for success, an exception instance for a failure).
pub fn verdicts<'py>(
    py: Python<'py>,
    answers: Vec<echomq::Result<()>>,
) -> PyResult<Bound<'py, PyList>> {
    PyList::new(
        py,
        answers.into_iter().map(|a| match a {
            Ok(()) => py.None().into_bound(py),
            Err(e) => exception(py, &e),
        }),
    )
}

pub fn browse_args(
    set: &str,
    range: Option<(u64, u64)>,
) -> PyResult<(BrowseSet, Option<TimeRange>)> {
    Ok((
        BrowseSet::parse(set).map_err(err)?,
        range.map(|(from_ms, to_ms)| TimeRange { from_ms, to_ms }),
    ))
}

/// The enqueue keywords as the core's options.
pub fn enqueue_options(
    id: Option<String>,
    run_at_ms: Option<UnixMs>,
    delay_ms: Option<Ms>,
    dedup_id: Option<String>,
    dedup_ttl_ms: Option<Ms>,
    priority: Option<Priority>,
) -> echomq::EnqueueOptions {
    echomq::EnqueueOptions {
        id,
        run_at_ms: args::opt(run_at_ms),
        delay_ms: args::opt(delay_ms),
        dedup_id,
        dedup_ttl_ms: args::opt(dedup_ttl_ms),
        priority: priority.map(|p| p.0),
    }
}

/// The retry keywords as the core's options; `None` takes its default.
pub fn retry_options(
    delay_ms: Option<Ms>,
    max_attempts: Option<Count>,
    error: Option<String>,
) -> echomq::RetryOptions {
    let d = echomq::RetryOptions::default();
    echomq::RetryOptions {
        delay_ms: delay_ms.map_or(d.delay_ms, |m| m.0),
        max_attempts: max_attempts.map_or(d.max_attempts, |m| m.0),
        error: error.unwrap_or(d.error),
    }
}

#[pyfunction]
#[pyo3(signature = (url=None, *, node_id=None, client_name=None, connect_timeout_ms=None,
    response_timeout_ms=None, max_payload=None, strict_bundle=false, publish_events=true,
    wire_version=None, wait_replicas=None, wait_timeout_ms=None))]
#[allow(clippy::too_many_arguments)]
pub fn connect(
    py: Python<'_>,
    url: Option<String>,
    node_id: Option<Bound<'_, PyAny>>,
    client_name: Option<String>,
    connect_timeout_ms: Option<Bound<'_, PyAny>>,
    response_timeout_ms: Option<Bound<'_, PyAny>>,
    max_payload: Option<Bound<'_, PyAny>>,
    strict_bundle: bool,
    publish_events: bool,
    wire_version: Option<String>,
    wait_replicas: Option<Bound<'_, PyAny>>,
    wait_timeout_ms: Option<Bound<'_, PyAny>>,
) -> PyResult<Client> {
    let options = connect_options(
        node_id.as_ref(),
        client_name,
        connect_timeout_ms.as_ref(),
        response_timeout_ms.as_ref(),
        max_payload.as_ref(),
        strict_bundle,
        publish_events,
        wire_version.as_deref(),
        (wait_replicas.as_ref(), wait_timeout_ms.as_ref()),
    )?;
    // No URL: `EMQ_URL`, else the local default (the core's rule).
    let url = url.unwrap_or_else(echomq::defaults::url);
    let inner = py
        .detach_or_park(|| blocking::Client::connect(&url, options))
        .map_err(err)?;
    Ok(Client { inner })
}

#[pymethods]
impl Client {
    #[getter]
    fn node_id(&self) -> u16 {
        self.inner.node_id()
    }

    fn __repr__(&self) -> String {
        format!("<echomq.Client node_id={}>", self.inner.node_id())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) {
        self.close(py);
    }

    /// Waits (GIL released: the publisher may log) until the queue events
    /// of calls that answered before it are published, at most 1 s.
    fn close(&self, py: Python<'_>) {
        py.detach_or_park(|| self.inner.close());
    }

    /// A handle on one queue: `echomq.Queue` (the name checked now, no I/O).
    fn queue(slf: &Bound<'_, Self>, name: String) -> PyResult<Py<PyAny>> {
        crate::queue::handle(slf.as_any(), name)
    }

    fn bundle_mismatches(&self) -> PyResult<Vec<BundleMismatch>> {
        let found = self.inner.bundle_mismatches().map_err(err)?;
        Ok(found.into_iter().map(Into::into).collect())
    }
}
