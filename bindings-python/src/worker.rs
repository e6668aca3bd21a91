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
    worker: echomq::Worker,
}

#[pymethods]
impl NativeWorker {
    #[new]
    #[pyo3(signature = (client, queue, handler, *, concurrency=10, lease_ms=30000,
        max_attempts=5, backoff="exponential", backoff_base_ms=1000, backoff_cap_ms=60000,
        pump_interval_ms=1000, idle_max_ms=50, shutdown_grace_ms=10000, prefetch=None,
        handler_batch=1, batched=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        client: &Bound<'_, PyAny>,
        queue: String,
        handler: Py<PyAny>,
        concurrency: usize,
        lease_ms: u64,
        max_attempts: u64,
        backoff: &str,
        backoff_base_ms: u64,
        backoff_cap_ms: u64,
        pump_interval_ms: u64,
        idle_max_ms: u64,
        shutdown_grace_ms: u64,
        prefetch: Option<usize>,
        handler_batch: usize,
        batched: bool,
    ) -> PyResult<Self> {
        if !handler.bind(client.py()).is_callable() {
            return Err(PyTypeError::new_err("handler must be callable"));
        }
        let options = WorkerOptions {
            concurrency,
            lease_ms,
            max_attempts,
            backoff: Backoff::parse(backoff).map_err(err)?,
            backoff_base_ms,
            backoff_cap_ms,
            pump_interval_ms,
            idle_max_ms,
            shutdown_grace_ms,
            prefetch,
            handler_batch,
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
