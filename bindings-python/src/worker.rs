//! The native half of `echomq.Worker`. The core runs the claim loop, the
//! heartbeat, settlement and the pumps; this file only calls the Python
//! handler (on tokio's blocking pool, attached to the interpreter only while
//! Python code runs, once per batch of up to `handler_batch` jobs) and turns
//! its exception into a `HandlerError`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::interp::Detach;

use echomq::{Backoff, HandlerError, Output, WorkerHandle, WorkerOptions};

use crate::aio::{future_into_py, NativeAsyncClient};
use crate::client::Client;
use crate::defaults::{count_or, ms_or, uint_or};
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

/// What the handler returned, as the job's result to keep (only converted
/// when the worker keeps results): `None` keeps nothing (an empty value);
/// `bytes`, `bytearray`, `memoryview` and `str` (UTF-8) are kept as they are;
/// anything else as its JSON text. A value that cannot be converted fails the
/// job (its `TypeError` text becomes `last_error`).
fn returned(py: Python<'_>, keep: bool, value: &Bound<'_, PyAny>) -> Output {
    if !keep || value.is_none() {
        return Ok(None);
    }
    let bytes = match crate::types::payload(value) {
        Ok(payload) => payload.as_ref().to_vec(),
        Err(_) => crate::progress::progress_json(value)
            .map_err(|e| failure(py, e))?
            .into_bytes(),
    };
    Ok(Some(bytes))
}

/// Everything a batch call needs besides the jobs.
struct Call {
    handler: Py<PyAny>,
    /// The Python layer's async bridge: takes the list, answers per job.
    batched: bool,
    /// The worker keeps results (`keep_result_ms` > 0).
    keep: bool,
    client: echomq::Client,
    queue: String,
}

/// One batch, attached once. A per-job handler is called for each job in
/// turn; a batch handler (`batched`: the Python layer's async bridge) takes
/// the list and answers, for each job in order, a 1-tuple `(value,)` (or
/// `None`) for success or the exception.
fn call_batch(call: &Call, jobs: &[echomq::Job]) -> Vec<Output> {
    let ran = crate::interp::attach(|py| {
        let job = |job: &echomq::Job| Job::held(py, job, &call.client, &call.queue);
        if !call.batched {
            return jobs
                .iter()
                .map(|j| match call.handler.call1(py, (job(j),)) {
                    Ok(value) => returned(py, call.keep, value.bind(py)),
                    Err(e) => Err(failure(py, e)),
                })
                .collect();
        }
        let list: Vec<Job> = jobs.iter().map(job).collect();
        let answers = call
            .handler
            .call1(py, (list,))
            .and_then(|answers| answers.extract::<Vec<Py<PyAny>>>(py));
        match answers {
            Ok(answers) => answers
                .into_iter()
                .map(|answer| {
                    let answer = answer.into_bound(py);
                    if answer.is_none() {
                        Ok(None)
                    } else if let Ok(one) = answer.cast::<pyo3::types::PyTuple>() {
                        returned(py, call.keep, &one.get_item(0)?)
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
        keep_result_ms=None, wake_fallback_ms=None,
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
        keep_result_ms: Option<Bound<'_, PyAny>>,
        wake_fallback_ms: Option<Bound<'_, PyAny>>,
        batched: bool,
    ) -> PyResult<Self> {
        if !handler.bind(client.py()).is_callable() {
            return Err(PyTypeError::new_err("handler must be callable"));
        }
        let d = WorkerOptions::default();
        let options = WorkerOptions {
            concurrency: count_or("concurrency", concurrency.as_ref(), d.concurrency)?,
            lease_ms: ms_or("lease_ms", lease_ms.as_ref(), d.lease_ms)?,
            max_attempts: uint_or("max_attempts", max_attempts.as_ref(), d.max_attempts)?,
            backoff: match backoff {
                Some(name) => Backoff::parse(name).map_err(err)?,
                None => d.backoff,
            },
            backoff_base_ms: ms_or(
                "backoff_base_ms",
                backoff_base_ms.as_ref(),
                d.backoff_base_ms,
            )?,
            backoff_cap_ms: ms_or("backoff_cap_ms", backoff_cap_ms.as_ref(), d.backoff_cap_ms)?,
            pump_interval_ms: ms_or(
                "pump_interval_ms",
                pump_interval_ms.as_ref(),
                d.pump_interval_ms,
            )?,
            idle_max_ms: ms_or("idle_max_ms", idle_max_ms.as_ref(), d.idle_max_ms)?,
            shutdown_grace_ms: ms_or(
                "shutdown_grace_ms",
                shutdown_grace_ms.as_ref(),
                d.shutdown_grace_ms,
            )?,
            prefetch: match prefetch.as_ref().filter(|p| !p.is_none()) {
                Some(p) => Some(count_or("prefetch", Some(p), 0)?),
                None => None,
            },
            handler_batch: count_or("handler_batch", handler_batch.as_ref(), d.handler_batch)?,
            dead_max_age_ms: match dead_max_age_ms.as_ref().filter(|v| !v.is_none()) {
                Some(v) => Some(ms_or("dead_max_age_ms", Some(v), 0)?),
                None => None,
            },
            dead_max_len: optional_uint("dead_max_len", dead_max_len.as_ref())?,
            max_stalls: uint_or("max_stalls", max_stalls.as_ref(), d.max_stalls)?,
            keep_result_ms: ms_or("keep_result_ms", keep_result_ms.as_ref(), d.keep_result_ms)?,
            wake_fallback_ms: ms_or(
                "wake_fallback_ms",
                wake_fallback_ms.as_ref(),
                d.wake_fallback_ms,
            )?,
        };
        let core = core_client(client)?;
        let call = Call {
            handler,
            batched,
            keep: options.keep_result_ms > 0,
            client: core.clone(),
            queue: queue.clone(),
        };
        let worker = echomq::Worker::new_blocking_batch_returning(
            core,
            &queue,
            options,
            move |jobs: &[echomq::Job]| call_batch(&call, jobs),
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
        let handle = Running::register(self.worker.spawn());
        loop {
            if let Some(outcome) = py.detach_or_park(|| handle.join_timeout(SIGNAL_POLL)) {
                return outcome.map_err(err);
            }
            if let Err(interrupted) = py.check_signals() {
                handle.stop();
                loop {
                    if py
                        .detach_or_park(|| handle.join_timeout(SIGNAL_POLL))
                        .is_some()
                    {
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

/// The runs of blocking `run()` calls in progress, for the exit hook: a run
/// left in a daemon thread when the script ends is stopped and its drain
/// waited for (bounded), so it hands its jobs back instead of being cut off
/// mid-drain by the process exit.
static RUNNING: Mutex<Vec<Arc<WorkerHandle>>> = Mutex::new(Vec::new());

/// A registered run; unregistered however `run()` returns.
struct Running(Arc<WorkerHandle>);

impl Running {
    fn register(handle: WorkerHandle) -> Running {
        let handle = Arc::new(handle);
        lock_running().push(handle.clone());
        Running(handle)
    }
}

impl std::ops::Deref for Running {
    type Target = WorkerHandle;
    fn deref(&self) -> &WorkerHandle {
        &self.0
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        lock_running().retain(|h| !Arc::ptr_eq(h, &self.0));
    }
}

fn lock_running() -> std::sync::MutexGuard<'static, Vec<Arc<WorkerHandle>>> {
    RUNNING.lock().unwrap_or_else(|p| p.into_inner())
}

/// At exit (detached): stop every run still in progress and wait for each
/// drain, at most its grace period plus the drain's last round trips.
pub(crate) fn finish_runs_at_exit() {
    let runs: Vec<Arc<WorkerHandle>> = lock_running().clone();
    for run in &runs {
        run.stop();
    }
    for run in &runs {
        let grace = Duration::from_millis(run.worker().options().shutdown_grace_ms);
        run.wait_finished(grace + EXIT_DRAIN_MARGIN);
    }
}

/// What the exit hook waits for a drain beyond its grace period.
const EXIT_DRAIN_MARGIN: Duration = Duration::from_secs(3);

/// `None` stays `None` (no bound); anything else is a checked unsigned integer.
fn optional_uint(name: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    match value.filter(|v| !v.is_none()) {
        Some(v) => Ok(Some(uint_or(name, Some(v), 0)?)),
        None => Ok(None),
    }
}
