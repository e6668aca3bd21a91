//! The native half of `echomq.Worker`. The core runs the claim loop, the
//! heartbeat, settlement and the pumps; this file only calls the Python
//! handler (on tokio's blocking pool, attached to the interpreter only while
//! Python code runs, once per batch of up to `handler_batch` jobs) and turns
//! its exception into a `HandlerError`.

use std::time::Duration;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use echomq::{Backoff, HandlerError, Verdict, WorkerOptions};

use crate::aio::{future_into_py, NativeAsyncClient};
use crate::client::Client;
use crate::defaults::{count_or, uint_or};
use crate::errors::{err, is_unrecoverable};
use crate::types::{Job, WorkerStats};

/// How often a blocking `run()` wakes to run Python signal handlers.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// The handler's failure text: `str(exc)`, or `repr(exc)` when that is empty.
fn failure(py: Python<'_>, e: PyErr) -> HandlerError {
    let value = e.value(py);
    let text = value
        .str()
        .map(|s| s.to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| value.repr().map(|r| r.to_string()).ok())
        .unwrap_or_else(|| "handler raised".to_string());
    if is_unrecoverable(py, &e) {
        HandlerError::fatal(text)
    } else {
        HandlerError::retry(text)
    }
}

/// One batch, attached once. A per-job handler is called for each job in
/// turn; a batch handler (`batched`: the Python layer's async bridge) takes
/// the list and answers `None` or the exception for each job, in order.
fn call_batch(handler: &Py<PyAny>, batched: bool, jobs: &[echomq::Job]) -> Vec<Verdict> {
    let ran = crate::interp::attach(|py| {
        if !batched {
            return jobs
                .iter()
                .map(|job| {
                    handler
                        .call1(py, (Job::new(py, job),))
                        .map(drop)
                        .map_err(|e| failure(py, e))
                })
                .collect();
        }
        let list: Vec<Job> = jobs.iter().map(|job| Job::new(py, job)).collect();
        let answers = handler
            .call1(py, (list,))
            .and_then(|answers| answers.extract::<Vec<Py<PyAny>>>(py));
        match answers {
            Ok(answers) => answers
                .into_iter()
                .map(|answer| {
                    let answer = answer.into_bound(py);
                    if answer.is_none() {
                        Ok(())
                    } else {
                        Err(failure(py, PyErr::from_value(answer)))
                    }
                })
                .collect(),
            Err(e) => vec![Err(failure(py, e)); jobs.len()],
        }
    });
    ran.unwrap_or_else(|| {
        vec![Err(HandlerError::retry("the Python interpreter is exiting")); jobs.len()]
    })
}

fn core_client(client: &Bound<'_, PyAny>) -> PyResult<echomq::Client> {
    if let Ok(c) = client.cast::<Client>() {
        return Ok(c.get().inner.as_async().clone());
    }
    if let Ok(c) = client.cast::<NativeAsyncClient>() {
        return Ok(c.get().inner.clone());
    }
    if let Ok(native) = client.getattr("_native") {
        return core_client(&native);
    }
    Err(PyTypeError::new_err(
        "client must be an echomq.Client or echomq.AsyncClient",
    ))
}

#[pyclass(frozen, module = "echomq._native")]
pub struct NativeWorker {
    pub(crate) worker: echomq::Worker,
}

#[pymethods]
impl NativeWorker {
    #[new]
    /// Every option is `None` by default and then takes the core's default
    /// (`echomq.defaults()`); the core checks each option's range.
    #[pyo3(signature = (client, queue, handler, *, concurrency=None, lease_ms=None,
        max_attempts=None, backoff=None, backoff_base_ms=None, backoff_cap_ms=None,
        pump_interval_ms=None, idle_max_ms=None, shutdown_grace_ms=None, prefetch=None,
        handler_batch=None, dead_max_age_ms=None, dead_max_len=None, max_stalls=None,
        batched=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        client: &Bound<'_, PyAny>,
        queue: String,
        handler: Py<PyAny>,
        concurrency: Option<Bound<'_, PyAny>>,
        lease_ms: Option<Bound<'_, PyAny>>,
        max_attempts: Option<Bound<'_, PyAny>>,
        backoff: Option<&str>,
        backoff_base_ms: Option<Bound<'_, PyAny>>,
        backoff_cap_ms: Option<Bound<'_, PyAny>>,
        pump_interval_ms: Option<Bound<'_, PyAny>>,
        idle_max_ms: Option<Bound<'_, PyAny>>,
        shutdown_grace_ms: Option<Bound<'_, PyAny>>,
        prefetch: Option<Bound<'_, PyAny>>,
        handler_batch: Option<Bound<'_, PyAny>>,
        dead_max_age_ms: Option<Bound<'_, PyAny>>,
        dead_max_len: Option<Bound<'_, PyAny>>,
        max_stalls: Option<Bound<'_, PyAny>>,
        batched: bool,
    ) -> PyResult<Self> {
        if !handler.bind(client.py()).is_callable() {
            return Err(PyTypeError::new_err("handler must be callable"));
        }
        let d = WorkerOptions::default();
        let options = WorkerOptions {
            concurrency: count_or("concurrency", concurrency.as_ref(), d.concurrency)?,
            lease_ms: uint_or("lease_ms", lease_ms.as_ref(), d.lease_ms)?,
            max_attempts: uint_or("max_attempts", max_attempts.as_ref(), d.max_attempts)?,
            backoff: match backoff {
                Some(name) => Backoff::parse(name).map_err(err)?,
                None => d.backoff,
            },
            backoff_base_ms: uint_or(
                "backoff_base_ms",
                backoff_base_ms.as_ref(),
                d.backoff_base_ms,
            )?,
            backoff_cap_ms: uint_or("backoff_cap_ms", backoff_cap_ms.as_ref(), d.backoff_cap_ms)?,
            pump_interval_ms: uint_or(
                "pump_interval_ms",
                pump_interval_ms.as_ref(),
                d.pump_interval_ms,
            )?,
            idle_max_ms: uint_or("idle_max_ms", idle_max_ms.as_ref(), d.idle_max_ms)?,
            shutdown_grace_ms: uint_or(
                "shutdown_grace_ms",
                shutdown_grace_ms.as_ref(),
                d.shutdown_grace_ms,
            )?,
            prefetch: match prefetch.as_ref().filter(|p| !p.is_none()) {
                Some(p) => Some(count_or("prefetch", Some(p), 0)?),
                None => None,
            },
            handler_batch: count_or("handler_batch", handler_batch.as_ref(), d.handler_batch)?,
            dead_max_age_ms: optional_uint("dead_max_age_ms", dead_max_age_ms.as_ref())?,
            dead_max_len: optional_uint("dead_max_len", dead_max_len.as_ref())?,
            max_stalls: uint_or("max_stalls", max_stalls.as_ref(), d.max_stalls)?,
        };
        let worker = echomq::Worker::new_blocking_batch(
            core_client(client)?,
            &queue,
            options,
            move |jobs: &[echomq::Job]| call_batch(&handler, batched, jobs),
        )
        .map_err(err)?;
        Ok(NativeWorker { worker })
    }

    #[getter]
    fn queue(&self) -> &str {
        self.worker.queue()
    }

    /// Run until `stop()`, then drain. Detached from the interpreter while it
    /// waits; wakes every 100 ms to run Python signal handlers. A signal
    /// handler that raises (Ctrl-C's KeyboardInterrupt) stops the worker, the
    /// drain completes, and the exception is re-raised.
    fn run(&self, py: Python<'_>) -> PyResult<()> {
        let handle = self.worker.spawn();
        loop {
            if let Some(outcome) = py.detach(|| handle.join_timeout(SIGNAL_POLL)) {
                return outcome.map_err(err);
            }
            if let Err(interrupted) = py.check_signals() {
                handle.stop();
                loop {
                    if py.detach(|| handle.join_timeout(SIGNAL_POLL)).is_some() {
                        return Err(interrupted);
                    }
                    // A second interrupt abandons the drain.
                    py.check_signals()?;
                }
            }
        }
    }

    /// `run` as an awaitable of the running asyncio loop.
    fn run_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let worker = self.worker.clone();
        future_into_py(py, async move { worker.run().await }, |py, ()| {
            Ok(py.None().into_bound(py))
        })
    }

    /// Test-only: the next run panics inside the core loop.
    fn _panic_next_run_for_tests(&self) {
        self.worker.panic_next_run_for_tests();
    }

    /// Stop claiming; in-flight jobs finish within the grace period.
    /// Non-blocking; safe from any thread or a signal handler.
    fn stop(&self) {
        self.worker.stop();
    }

    fn is_stopping(&self) -> bool {
        self.worker.is_stopping()
    }

    fn stats(&self) -> WorkerStats {
        self.worker.stats().into()
    }
}

/// `None` stays `None` (no bound); anything else is a checked unsigned integer.
fn optional_uint(name: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    match value.filter(|v| !v.is_none()) {
        Some(v) => Ok(Some(uint_or(name, Some(v), 0)?)),
        None => Ok(None),
    }
}
