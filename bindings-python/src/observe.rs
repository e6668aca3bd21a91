//! Observability for Python: core log records into `logging` (pyo3-log),
//! worker events to a Python dispatcher, queue event subscriptions (blocking
//! and asyncio), `wait_for` and `metrics_text`. Conversion only; the logic is
//! the core's.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use log::{Log, Metadata, Record};
use pyo3::prelude::*;

use crate::interp::Detach;

use crate::args::{self, Ms};
use pyo3::types::PyDict;

use echomq::{QueueEvent as CoreQueueEvent, Settled as CoreSettled, WorkerEvent as CoreEvent};

use crate::aio::future_into_py;
use crate::errors::err;

// ---- logs ------------------------------------------------------------------

/// pyo3-log's logger behind the exit guard of `interp.rs`: a core thread that
/// logs while the interpreter finalizes drops the record instead of taking
/// the GIL (which would end the thread and abort the process).
struct GuardedLogger(pyo3_log::Logger);

impl Log for GuardedLogger {
    fn enabled(&self, metadata: &Metadata) -> bool {
        self.0.enabled(metadata)
    }

    fn log(&self, record: &Record) {
        crate::interp::attach(|_py| self.0.log(record));
    }

    fn flush(&self) {}
}

/// Send the core's `log` records to `logging`, loggers named after the
/// target (`echomq.worker.run`, ...). Levels are not cached, so
/// `logging.getLogger("echomq").setLevel(...)` applies at once; records below
/// DEBUG (Rust's trace) are not forwarded.
pub fn install_logging(py: Python<'_>) -> PyResult<()> {
    let logger =
        pyo3_log::Logger::new(py, pyo3_log::Caching::Loggers)?.filter(log::LevelFilter::Debug);
    if log::set_boxed_logger(Box::new(GuardedLogger(logger))).is_ok() {
        log::set_max_level(log::LevelFilter::Debug);
    }
    Ok(())
}

// ---- worker events ------------------------------------------------------------

/// One worker event, as Python's `echomq.WorkerEvent`.
#[pyclass(frozen, get_all, module = "echomq")]
pub struct WorkerEvent {
    /// `active`, `completed`, `failed`, `dead`, `lease_lost`, `stalled`,
    /// `error`, `drained` or `closed`.
    pub name: &'static str,
    pub id: Option<String>,
    pub token: Option<u64>,
    pub error: Option<String>,
    /// `failed`: milliseconds until the next attempt; `None` when it went dead.
    pub retry_in_ms: Option<u64>,
    /// `completed` / `failed`: how long the handler ran, in milliseconds.
    pub duration_ms: Option<f64>,
    /// `stalled`: how many jobs the reap pump returned to pending.
    pub count: Option<u64>,
    /// `error`: the error's code (`EMQ_CONNECTION`, ...).
    pub code: Option<&'static str>,
}

#[pymethods]
impl WorkerEvent {
    fn __repr__(&self) -> String {
        let mut parts = vec![format!("name='{}'", self.name)];
        if let Some(id) = &self.id {
            parts.push(format!("id='{id}'"));
        }
        if let Some(e) = &self.error {
            parts.push(format!("error={e:?}"));
        }
        format!("WorkerEvent({})", parts.join(", "))
    }
}

impl From<&CoreEvent> for WorkerEvent {
    fn from(e: &CoreEvent) -> Self {
        WorkerEvent {
            name: e.name(),
            id: e.job().map(|(id, _)| id.to_string()),
            token: e.job().map(|(_, token)| token),
            error: e.error().map(str::to_string),
            retry_in_ms: e.retry_in_ms(),
            duration_ms: e.duration_ms(),
            count: e.count(),
            code: e.error_kind().map(|k| k.code()),
        }
    }
}

/// Route a worker's events named in `names` to `dispatch(events)`, called on
/// a thread of its own with a list of whatever has queued up (the worker's
/// tasks only queue the event, never wait for Python): one interpreter entry
/// and one Python call per burst, not per event. The other events never reach
/// that thread or the interpreter. The thread ends when the worker is dropped.
pub fn forward_worker_events(
    worker: &echomq::Worker,
    names: Vec<String>,
    dispatch: Py<PyAny>,
) -> PyResult<()> {
    let (tx, rx) = mpsc::channel::<CoreEvent>();
    worker
        .on_events(names, move |e| drop(tx.send(e.clone())))
        .map_err(err)?;
    std::thread::Builder::new()
        .name("echomq-events".into())
        .spawn(move || {
            while let Ok(first) = rx.recv() {
                let mut events = vec![first];
                events.extend(rx.try_iter());
                let delivered = crate::interp::attach(|py| {
                    let batch = events.iter().map(WorkerEvent::from);
                    let called = pyo3::types::PyList::new(py, batch)
                        .and_then(|list| dispatch.call1(py, (list,)));
                    if let Err(e) = called {
                        // `_dispatch` logs listener errors itself; this is a bug there.
                        e.print(py);
                    }
                });
                if delivered.is_none() {
                    return; // the interpreter is exiting
                }
            }
        })
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    Ok(())
}

// ---- queue events --------------------------------------------------------------

/// One message of `emq:{q}:events`, as Python's `echomq.QueueEvent`.
#[pyclass(frozen, get_all, module = "echomq")]
pub struct QueueEvent {
    pub queue: String,
    /// `added`, `active`, `completed`, `retried`, `dead`, `removed`, ...
    pub event: String,
    /// The job id; `""` for queue-wide events (`paused`, `resumed`).
    pub job: String,
    /// Every other field (`token`, `attempts`, `error`, `delay_ms`, ...): str → str.
    pub fields: Py<PyDict>,
}

#[pymethods]
impl QueueEvent {
    fn __repr__(&self, py: Python<'_>) -> String {
        let fields = self
            .fields
            .bind(py)
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_default();
        format!(
            "QueueEvent(queue='{}', event='{}', job='{}', fields={fields})",
            self.queue, self.event, self.job
        )
    }
}

fn queue_event(py: Python<'_>, e: CoreQueueEvent) -> PyResult<Bound<'_, PyAny>> {
    let fields = PyDict::new(py);
    for (k, v) in e.fields {
        fields.set_item(k, v)?;
    }
    let event = QueueEvent {
        queue: e.queue,
        event: e.event,
        job: e.job,
        fields: fields.unbind(),
    };
    Ok(Bound::new(py, event)?.into_any())
}

fn maybe_event(py: Python<'_>, e: Option<CoreQueueEvent>) -> PyResult<Bound<'_, PyAny>> {
    match e {
        Some(e) => queue_event(py, e),
        None => Ok(py.None().into_bound(py)),
    }
}

type Shared = Arc<tokio::sync::Mutex<echomq::Subscription>>;

/// `echomq.Subscription`: a live subscription to a queue's events, on its own
/// connection (re-subscribing after a drop). Iterate it (`for event in sub`,
/// blocking) or `async for event in sub`; `close()` ends both.
#[pyclass(frozen, module = "echomq")]
pub struct Subscription {
    inner: Shared,
    closer: echomq::SubscriptionCloser,
}

/// How often a blocking `next()` wakes to run Python signal handlers.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

#[pymethods]
impl Subscription {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let event = self.next(py, None)?;
        if event.is_none(py) {
            return Err(pyo3::exceptions::PyStopIteration::new_err(()));
        }
        Ok(event)
    }

    fn __aiter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __anext__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        future_into_py(
            py,
            async move { Ok(inner.lock().await.next().await) },
            |py, event| match event {
                Some(e) => queue_event(py, e),
                None => Err(pyo3::exceptions::PyStopAsyncIteration::new_err(())),
            },
        )
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) {
        self.close();
    }

    /// The next event, waiting up to `timeout_ms` (`None`: until one comes);
    /// `None` on timeout or once closed. Detached while it waits; Ctrl-C
    /// interrupts it.
    #[pyo3(signature = (timeout_ms=None))]
    fn next(&self, py: Python<'_>, timeout_ms: Option<Ms>) -> PyResult<Py<PyAny>> {
        let timeout_ms = args::opt(timeout_ms);
        let deadline = timeout_ms.map(|ms| std::time::Instant::now() + Duration::from_millis(ms));
        loop {
            let now = std::time::Instant::now();
            let wait = match deadline {
                Some(d) if d <= now => return Ok(py.None()),
                Some(d) => (d - now).min(SIGNAL_POLL),
                None => SIGNAL_POLL,
            };
            let inner = self.inner.clone();
            let got = py.detach_or_park(|| {
                echomq::runtime::runtime().block_on(async move {
                    let mut sub = inner.lock().await;
                    tokio::time::timeout(wait, sub.next()).await
                })
            });
            match got {
                Ok(event) => return Ok(maybe_event(py, event)?.unbind()),
                Err(_) => py.check_signals()?,
            }
        }
    }

    /// The next event as an awaitable of the running loop (`None` once closed).
    fn next_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = self.inner.clone();
        future_into_py(
            py,
            async move { Ok(inner.lock().await.next().await) },
            maybe_event,
        )
    }

    /// Unsubscribe; waiting and later `next` calls answer `None`.
    fn close(&self) {
        self.closer.close();
    }
}

pub fn native_subscription(
    py: Python<'_>,
    sub: echomq::Subscription,
) -> PyResult<Bound<'_, PyAny>> {
    let native = Subscription {
        closer: sub.closer(),
        inner: Arc::new(tokio::sync::Mutex::new(sub)),
    };
    Ok(Bound::new(py, native)?.into_any())
}

/// How a job `wait_for` waited on ended: `state` is `completed` or `dead`.
#[pyclass(frozen, get_all, eq, module = "echomq")]
#[derive(PartialEq, Eq)]
pub struct Settled {
    pub state: &'static str,
    /// The job's `last_error` when it went dead.
    pub error: Option<String>,
}

#[pymethods]
impl Settled {
    fn __repr__(&self) -> String {
        format!("Settled(state='{}', error={:?})", self.state, self.error)
    }
}

impl From<CoreSettled> for Settled {
    fn from(s: CoreSettled) -> Self {
        match s {
            CoreSettled::Completed => Settled {
                state: "completed",
                error: None,
            },
            CoreSettled::Dead { error } => Settled {
                state: "dead",
                error,
            },
        }
    }
}

#[pymethods]
impl crate::worker::NativeWorker {
    /// Send this worker's events named in `names` to `dispatch(events)`, a
    /// list per burst (see `_worker.py`); an unknown name is a `ValueError`.
    fn forward_events(&self, names: Vec<String>, dispatch: Py<PyAny>) -> PyResult<()> {
        forward_worker_events(&self.worker, names, dispatch)
    }
}
