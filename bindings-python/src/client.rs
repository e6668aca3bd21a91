//! `echomq.Client`: the blocking client. Every verb releases the GIL for its
//! network I/O, so Python threads sharing one client run in parallel.

use pyo3::prelude::*;

use crate::interp::Detach;

use crate::args::{self, Count, Ms, UnixMs};
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

pub fn enqueue_verdicts<'py>(
    py: Python<'py>,
    answers: Vec<echomq::Result<echomq::Enqueued>>,
) -> PyResult<Bound<'py, PyList>> {
    let items: Vec<Bound<'py, PyAny>> = answers
        .into_iter()
        .map(|a| match a {
            Ok(e) => Ok(Bound::new(py, Enqueued::from(e))?.into_any()),
            Err(e) => Ok(exception(py, &e)),
        })
        .collect::<PyResult<_>>()?;
    PyList::new(py, items)
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
) -> echomq::EnqueueOptions {
    echomq::EnqueueOptions {
        id,
        run_at_ms: args::opt(run_at_ms),
        delay_ms: args::opt(delay_ms),
        dedup_id,
        dedup_ttl_ms: args::opt(dedup_ttl_ms),
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

    /// Enqueue now, or later with `run_at_ms` (int unix ms or datetime) or
    /// `delay_ms` (int ms or timedelta); under a chosen `id` when given.
    #[pyo3(signature = (queue, payload, *, id=None, run_at_ms=None, delay_ms=None,
        dedup_id=None, dedup_ttl_ms=None))]
    #[allow(clippy::too_many_arguments)]
    fn enqueue(
        &self,
        py: Python<'_>,
        queue: String,
        payload: &Bound<'_, PyAny>,
        id: Option<String>,
        run_at_ms: Option<UnixMs>,
        delay_ms: Option<Ms>,
        dedup_id: Option<String>,
        dedup_ttl_ms: Option<Ms>,
    ) -> PyResult<Enqueued> {
        let options = enqueue_options(id, run_at_ms, delay_ms, dedup_id, dedup_ttl_ms);
        let payload = crate::types::payload(payload)?;
        let c = &self.inner;
        Ok(py
            .detach_or_park(|| c.enqueue_with(&queue, &payload, &options))
            .map_err(err)?
            .into())
    }

    fn enqueue_with_id(
        &self,
        py: Python<'_>,
        queue: String,
        id: String,
        payload: &Bound<'_, PyAny>,
    ) -> PyResult<Enqueued> {
        let payload = crate::types::payload(payload)?;
        let c = &self.inner;
        Ok(py
            .detach_or_park(|| c.enqueue_with_id(&queue, &id, &payload))
            .map_err(err)?
            .into())
    }

    fn enqueue_at(
        &self,
        py: Python<'_>,
        queue: String,
        payload: &Bound<'_, PyAny>,
        run_at_ms: UnixMs,
    ) -> PyResult<Enqueued> {
        let run_at_ms = run_at_ms.0;
        let payload = crate::types::payload(payload)?;
        let c = &self.inner;
        Ok(py
            .detach_or_park(|| c.enqueue_at(&queue, &payload, run_at_ms))
            .map_err(err)?
            .into())
    }

    fn enqueue_in(
        &self,
        py: Python<'_>,
        queue: String,
        payload: &Bound<'_, PyAny>,
        delay_ms: Ms,
    ) -> PyResult<Enqueued> {
        let delay_ms = delay_ms.0;
        let payload = crate::types::payload(payload)?;
        let c = &self.inner;
        Ok(py
            .detach_or_park(|| c.enqueue_in(&queue, &payload, delay_ms))
            .map_err(err)?
            .into())
    }

    fn enqueue_many<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        payloads: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let payloads = crate::types::payloads(payloads)?;
        let c = &self.inner;
        let answers = py
            .detach_or_park(|| c.enqueue_many(&queue, &payloads))
            .map_err(err)?;
        enqueue_verdicts(py, answers)
    }

    fn claim(&self, py: Python<'_>, queue: String, lease_ms: Ms) -> PyResult<Option<Job>> {
        let lease_ms = lease_ms.0;
        let c = &self.inner;
        let job = py
            .detach_or_park(|| c.claim(&queue, lease_ms))
            .map_err(err)?;
        Ok(job.map(|j| Job::held(py, &j, c.as_async(), &queue)))
    }

    fn claim_many(
        &self,
        py: Python<'_>,
        queue: String,
        max: Count,
        lease_ms: Ms,
    ) -> PyResult<Vec<Job>> {
        let max = max.0;
        let lease_ms = lease_ms.0;
        let c = &self.inner;
        let jobs = py
            .detach_or_park(|| c.claim_many(&queue, max, lease_ms))
            .map_err(err)?;
        Ok(jobs
            .iter()
            .map(|j| Job::held(py, j, c.as_async(), &queue))
            .collect())
    }

    fn complete(&self, py: Python<'_>, queue: String, id: String, token: Count) -> PyResult<()> {
        let token = token.0;
        let c = &self.inner;
        py.detach_or_park(|| c.complete(&queue, &id, token))
            .map_err(err)
    }

    fn complete_many<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        jobs: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let jobs = id_tokens(jobs)?;
        let c = &self.inner;
        let answers = py
            .detach_or_park(|| c.complete_many(&queue, &as_refs(&jobs)))
            .map_err(err)?;
        verdicts(py, answers)
    }

    /// Settle a failed attempt; omitted options take the core's defaults
    /// (`delay_ms` 0, `max_attempts` 5, `error` empty).
    #[pyo3(signature = (queue, id, token, delay_ms=None, max_attempts=None, error=None))]
    #[allow(clippy::too_many_arguments)]
    fn retry(
        &self,
        py: Python<'_>,
        queue: String,
        id: String,
        token: Count,
        delay_ms: Option<Ms>,
        max_attempts: Option<Count>,
        error: Option<String>,
    ) -> PyResult<&'static str> {
        let options = retry_options(delay_ms, max_attempts, error);
        let c = &self.inner;
        let outcome = py
            .detach_or_park(|| c.retry_with(&queue, &id, token.0, &options))
            .map_err(err)?;
        Ok(outcome.as_str())
    }

    fn extend(
        &self,
        py: Python<'_>,
        queue: String,
        id: String,
        token: Count,
        lease_ms: Ms,
    ) -> PyResult<()> {
        let token = token.0;
        let lease_ms = lease_ms.0;
        let c = &self.inner;
        py.detach_or_park(|| c.extend(&queue, &id, token, lease_ms))
            .map_err(err)
    }

    fn extend_many<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        jobs: &Bound<'py, PyAny>,
        lease_ms: Ms,
    ) -> PyResult<Bound<'py, PyList>> {
        let lease_ms = lease_ms.0;
        let jobs = id_tokens(jobs)?;
        let c = &self.inner;
        let answers = py
            .detach_or_park(|| c.extend_many(&queue, &as_refs(&jobs), lease_ms))
            .map_err(err)?;
        verdicts(py, answers)
    }

    #[pyo3(signature = (queue, limit=None))]
    fn promote(&self, py: Python<'_>, queue: String, limit: Option<Count>) -> PyResult<u64> {
        let limit = args::opt(limit);
        let c = &self.inner;
        py.detach_or_park(|| c.promote(&queue, limit.unwrap_or(echomq::defaults::PUMP_LIMIT)))
            .map_err(err)
    }

    #[pyo3(signature = (queue, limit=None))]
    fn reap(&self, py: Python<'_>, queue: String, limit: Option<Count>) -> PyResult<u64> {
        let limit = args::opt(limit);
        let c = &self.inner;
        py.detach_or_park(|| c.reap(&queue, limit.unwrap_or(echomq::defaults::PUMP_LIMIT)))
            .map_err(err)
    }

    fn counts(&self, py: Python<'_>, queue: String) -> PyResult<Counts> {
        let c = &self.inner;
        Ok(py.detach_or_park(|| c.counts(&queue)).map_err(err)?.into())
    }

    fn job(&self, py: Python<'_>, queue: String, id: String) -> PyResult<Option<JobInfo>> {
        let c = &self.inner;
        let row = py.detach_or_park(|| c.job(&queue, &id)).map_err(err)?;
        Ok(row.map(|r| JobInfo::new(py, r)))
    }

    #[pyo3(signature = (queue, set, newest_first=false, limit=None, range=None))]
    fn browse(
        &self,
        py: Python<'_>,
        queue: String,
        set: String,
        newest_first: bool,
        limit: Option<Count>,
        range: Option<(UnixMs, UnixMs)>,
    ) -> PyResult<Vec<String>> {
        let limit = args::opt(limit);
        let range = range.map(|(a, b): (UnixMs, UnixMs)| (a.0, b.0));
        let (set, range) = browse_args(&set, range)?;
        let c = &self.inner;
        let ids = py
            .detach_or_park(|| {
                c.browse(
                    &queue,
                    set,
                    newest_first,
                    limit.unwrap_or(echomq::defaults::BROWSE_LIMIT),
                    range,
                )
            })
            .map_err(err)?;
        Ok(ids.iter().map(|i| i.to_string()).collect())
    }

    fn pause(&self, py: Python<'_>, queue: String) -> PyResult<()> {
        let c = &self.inner;
        py.detach_or_park(|| c.pause(&queue)).map_err(err)
    }

    fn resume(&self, py: Python<'_>, queue: String) -> PyResult<()> {
        let c = &self.inner;
        py.detach_or_park(|| c.resume(&queue)).map_err(err)
    }

    fn is_paused(&self, py: Python<'_>, queue: String) -> PyResult<bool> {
        let c = &self.inner;
        py.detach_or_park(|| c.is_paused(&queue)).map_err(err)
    }

    fn requeue_dead(&self, py: Python<'_>, queue: String, id: String) -> PyResult<()> {
        let c = &self.inner;
        py.detach_or_park(|| c.requeue_dead(&queue, &id))
            .map_err(err)
    }

    fn remove(&self, py: Python<'_>, queue: String, id: String) -> PyResult<()> {
        let c = &self.inner;
        py.detach_or_park(|| c.remove(&queue, &id)).map_err(err)
    }
}
