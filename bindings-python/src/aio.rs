//! The asyncio side: every verb spawns the core future on the core's tokio
//! runtime (the enqueue verbs: on the core's caller thread, decision 16.11)
//! and returns an `asyncio.Future` of the running loop; on completion the
//! result is handed back with `loop.call_soon_threadsafe`. No thread per
//! call, no extra crates. `echomq/_aio.py` wraps these into coroutines.
//!
//! Completions never take the GIL on a runtime thread: those threads also
//! run worker heartbeats, and a busy interpreter must not delay a heartbeat
//! past a lease. A runtime thread only queues the outcome; one hand-off
//! thread per process attaches and passes it to the loop. A panic inside a
//! core future is caught and rejects the future with `InternalError`.

use std::future::Future;
use std::sync::mpsc;
use std::sync::Mutex;

use pyo3::prelude::*;

use crate::interp::Detach;

use crate::args::{self, Count, Ms, UnixMs};
use pyo3::sync::PyOnceLock;
use pyo3::types::PyList;

use crate::client::{browse_args, enqueue_options, enqueue_verdicts, retry_options, verdicts};
use crate::errors::exception;
use crate::types::*;

static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static RESOLVE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Run `fut` on the core runtime; the returned asyncio future (of the loop
/// running now) gets `convert(value)` or the typed exception.
pub fn future_into_py<'py, F, T, C>(
    py: Python<'py>,
    fut: F,
    convert: C,
) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = echomq::Result<T>> + Send + 'static,
    T: Send + 'static,
    C: for<'a> FnOnce(Python<'a>, T) -> PyResult<Bound<'a, PyAny>> + Send + 'static,
{
    let (settle, py_future) = pending(py, convert)?;
    echomq::runtime::runtime().spawn(async move {
        settle(echomq::runtime::caught(fut).await);
    });
    Ok(py_future)
}

/// As [`future_into_py`], for a one-in-flight verb (an enqueue): the core's
/// caller thread runs it on a connection of its own, awake while calls keep
/// coming (`echomq::caller`, decision 16.11).
pub fn future_into_py_direct<'py, F, Fut, T, C>(
    py: Python<'py>,
    client: &echomq::Client,
    call: F,
    convert: C,
) -> PyResult<Bound<'py, PyAny>>
where
    F: FnOnce(echomq::Client) -> Fut + Send + 'static,
    Fut: Future<Output = echomq::Result<T>> + Send + 'static,
    T: Send + 'static,
    C: for<'a> FnOnce(Python<'a>, T) -> PyResult<Bound<'a, PyAny>> + Send + 'static,
{
    let (settle, py_future) = pending(py, convert)?;
    echomq::caller::spawn(client, call, settle);
    Ok(py_future)
}

/// A future of the running loop and what settles it from any thread (via
/// the hand-off thread: the settling thread never waits for the GIL).
fn pending<'py, T, C>(
    py: Python<'py>,
    convert: C,
) -> PyResult<(
    impl FnOnce(echomq::Result<T>) + Send + 'static,
    Bound<'py, PyAny>,
)>
where
    T: Send + 'static,
    C: for<'a> FnOnce(Python<'a>, T) -> PyResult<Bound<'a, PyAny>> + Send + 'static,
{
    let event_loop = GET_RUNNING_LOOP
        .import(py, "asyncio", "get_running_loop")?
        .call0()?;
    let py_future = event_loop.call_method0("create_future")?;
    let (event_loop, target) = (event_loop.unbind(), py_future.clone().unbind());
    let settle = move |outcome: echomq::Result<T>| {
        hand_off(Box::new(move |py| {
            let (ok, value) = match outcome {
                Ok(v) => match convert(py, v) {
                    Ok(v) => (true, v),
                    Err(e) => (false, e.into_value(py).into_bound(py).into_any()),
                },
                Err(e) => (false, exception(py, &e)),
            };
            let handed = RESOLVE
                .import(py, "echomq._aio", "_resolve")
                .and_then(|resolve| {
                    event_loop.bind(py).call_method1(
                        "call_soon_threadsafe",
                        (resolve, target.bind(py), ok, value),
                    )
                });
            // A closed loop cannot take the answer; nobody is waiting for it.
            drop(handed);
        }));
    };
    Ok((settle, py_future))
}

/// Work that needs the interpreter, queued by a runtime thread.
type Completion = Box<dyn for<'py> FnOnce(Python<'py>) + Send>;

/// This process's hand-off thread (rebuilt in a forked child, where the
/// parent's thread does not exist).
static HANDOFF: Mutex<Option<(u32, mpsc::Sender<Completion>)>> = Mutex::new(None);

/// Queue `done` for the hand-off thread, which attaches to the interpreter
/// and runs it; the calling (runtime) thread never waits for the GIL.
fn hand_off(done: Completion) {
    let pid = std::process::id();
    let mut slot = HANDOFF.lock().unwrap_or_else(|p| p.into_inner());
    let sender = match slot.as_ref() {
        Some((owner, sender)) if *owner == pid => sender.clone(),
        _ => {
            let (sender, receiver) = mpsc::channel::<Completion>();
            let spawned = std::thread::Builder::new()
                .name("echomq-py-handoff".into())
                .spawn(move || {
                    for done in receiver {
                        crate::interp::attach(done);
                    }
                });
            if spawned.is_err() {
                // No thread to hand off to: attach here rather than never settle.
                drop(slot);
                crate::interp::attach(done);
                return;
            }
            *slot = Some((pid, sender.clone()));
            sender
        }
    };
    drop(slot);
    // The receiver lives as long as the process; a send cannot fail.
    let _ = sender.send(done);
}

/// Test-only: an awaitable whose core future panics, to prove the asyncio
/// future is rejected with `InternalError` rather than left pending.
#[pyfunction]
pub fn _panic_in_core_for_tests(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    future_into_py(
        py,
        async {
            panic!("injected by _panic_in_core_for_tests");
            #[allow(unreachable_code)]
            Ok(())
        },
        none,
    )
}

fn none(py: Python<'_>, _: ()) -> PyResult<Bound<'_, PyAny>> {
    Ok(py.None().into_bound(py))
}

fn enqueued(py: Python<'_>, e: echomq::Enqueued) -> PyResult<Bound<'_, PyAny>> {
    Ok(Bound::new(py, Enqueued::from(e))?.into_any())
}

fn count(py: Python<'_>, n: u64) -> PyResult<Bound<'_, PyAny>> {
    Ok(n.into_pyobject(py)?.into_any())
}

fn flag(py: Python<'_>, b: bool) -> PyResult<Bound<'_, PyAny>> {
    Ok(pyo3::types::PyBool::new(py, b).to_owned().into_any())
}

#[pyfunction]
#[pyo3(signature = (url=None, *, node_id=None, client_name=None, connect_timeout_ms=None,
    response_timeout_ms=None, max_payload=None, strict_bundle=false, publish_events=true,
    wire_version=None, wait_replicas=None, wait_timeout_ms=None))]
#[allow(clippy::too_many_arguments)]
pub fn connect_async<'py>(
    py: Python<'py>,
    url: Option<String>,
    node_id: Option<Bound<'py, PyAny>>,
    client_name: Option<String>,
    connect_timeout_ms: Option<Bound<'py, PyAny>>,
    response_timeout_ms: Option<Bound<'py, PyAny>>,
    max_payload: Option<Bound<'py, PyAny>>,
    strict_bundle: bool,
    publish_events: bool,
    wire_version: Option<String>,
    wait_replicas: Option<Bound<'py, PyAny>>,
    wait_timeout_ms: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
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
    let url = url.unwrap_or_else(echomq::defaults::url);
    future_into_py(
        py,
        async move { echomq::Client::connect(&url, options).await },
        |py, inner| Ok(Bound::new(py, NativeAsyncClient { inner })?.into_any()),
    )
}

/// The asyncio client's native half (use `echomq.AsyncClient`).
#[pyclass(frozen, module = "echomq._native")]
pub struct NativeAsyncClient {
    pub inner: echomq::Client,
}

#[pymethods]
impl NativeAsyncClient {
    #[getter]
    fn node_id(&self) -> u16 {
        self.inner.node_id()
    }

    /// Blocking, as the sync client's (GIL released): for a caller outside
    /// a coroutine. Coroutines await `aclose`.
    fn close(&self, py: Python<'_>) {
        let blocking = echomq::blocking::Client::from_async(self.inner.clone());
        py.detach_or_park(|| blocking.close());
    }

    /// Close at once; the awaitable is done once the queue events of calls
    /// that answered before it are published (at most 1 s).
    fn aclose<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let closed = self.inner.close_and_wait();
        future_into_py(
            py,
            async move {
                closed.await;
                Ok(())
            },
            |py, ()| Ok(py.None().into_bound(py)),
        )
    }

    fn bundle_mismatches(&self) -> PyResult<Vec<BundleMismatch>> {
        let found = self.inner.bundle_mismatches().map_err(crate::errors::err)?;
        Ok(found.into_iter().map(Into::into).collect())
    }

    #[pyo3(signature = (queue, payload, *, id=None, run_at_ms=None, delay_ms=None,
        dedup_id=None, dedup_ttl_ms=None))]
    #[allow(clippy::too_many_arguments)]
    fn enqueue<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        payload: &Bound<'py, PyAny>,
        id: Option<String>,
        run_at_ms: Option<UnixMs>,
        delay_ms: Option<Ms>,
        dedup_id: Option<String>,
        dedup_ttl_ms: Option<Ms>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = enqueue_options(id, run_at_ms, delay_ms, dedup_id, dedup_ttl_ms);
        let payload = crate::types::payload(payload)?;
        future_into_py_direct(
            py,
            &self.inner,
            move |c| async move { c.enqueue_with(&queue, payload, &options).await },
            enqueued,
        )
    }

    fn enqueue_with_id<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        id: String,
        payload: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let payload = crate::types::payload(payload)?;
        future_into_py_direct(
            py,
            &self.inner,
            move |c| async move { c.enqueue_with_id(&queue, &id, payload).await },
            enqueued,
        )
    }

    fn enqueue_at<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        payload: &Bound<'py, PyAny>,
        run_at_ms: UnixMs,
    ) -> PyResult<Bound<'py, PyAny>> {
        let run_at_ms = run_at_ms.0;
        let payload = crate::types::payload(payload)?;
        future_into_py_direct(
            py,
            &self.inner,
            move |c| async move { c.enqueue_at(&queue, payload, run_at_ms).await },
            enqueued,
        )
    }

    fn enqueue_in<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        payload: &Bound<'py, PyAny>,
        delay_ms: Ms,
    ) -> PyResult<Bound<'py, PyAny>> {
        let delay_ms = delay_ms.0;
        let payload = crate::types::payload(payload)?;
        future_into_py_direct(
            py,
            &self.inner,
            move |c| async move { c.enqueue_in(&queue, payload, delay_ms).await },
            enqueued,
        )
    }

    fn enqueue_many<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        payloads: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let payloads = crate::types::payloads(payloads)?;
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.enqueue_many(&queue, &payloads).await },
            |py, answers| Ok(enqueue_verdicts(py, answers)?.into_any()),
        )
    }

    fn claim<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        lease_ms: Ms,
    ) -> PyResult<Bound<'py, PyAny>> {
        let lease_ms = lease_ms.0;
        let c = self.inner.clone();
        let (held, q) = (c.clone(), queue.clone());
        future_into_py(
            py,
            async move { c.claim(&queue, lease_ms).await },
            move |py, job| match job {
                Some(j) => Ok(Bound::new(py, Job::held(py, &j, &held, &q))?.into_any()),
                None => Ok(py.None().into_bound(py)),
            },
        )
    }

    fn claim_many<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        max: Count,
        lease_ms: Ms,
    ) -> PyResult<Bound<'py, PyAny>> {
        let max = max.0;
        let lease_ms = lease_ms.0;
        let c = self.inner.clone();
        let (held, q) = (c.clone(), queue.clone());
        future_into_py(
            py,
            async move { c.claim_many(&queue, max, lease_ms).await },
            move |py, jobs| {
                let items = jobs
                    .iter()
                    .map(|j| Bound::new(py, Job::held(py, j, &held, &q)))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok(PyList::new(py, items)?.into_any())
            },
        )
    }

    fn complete<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        id: String,
        token: Count,
    ) -> PyResult<Bound<'py, PyAny>> {
        let token = token.0;
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.complete(&queue, &id, token).await },
            none,
        )
    }

    fn complete_many<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        jobs: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let jobs = id_tokens(jobs)?;
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.complete_many(&queue, &as_refs(&jobs)).await },
            |py, answers| Ok(verdicts(py, answers)?.into_any()),
        )
    }

    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (queue, id, token, delay_ms=None, max_attempts=None, error=None))]
    #[allow(clippy::too_many_arguments)]
    fn retry<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        id: String,
        token: Count,
        delay_ms: Option<Ms>,
        max_attempts: Option<Count>,
        error: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = retry_options(delay_ms, max_attempts, error);
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.retry_with(&queue, &id, token.0, &options).await },
            |py, outcome| Ok(pyo3::types::PyString::new(py, outcome.as_str()).into_any()),
        )
    }

    fn extend<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        id: String,
        token: Count,
        lease_ms: Ms,
    ) -> PyResult<Bound<'py, PyAny>> {
        let token = token.0;
        let lease_ms = lease_ms.0;
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.extend(&queue, &id, token, lease_ms).await },
            none,
        )
    }

    fn extend_many<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        jobs: &Bound<'py, PyAny>,
        lease_ms: Ms,
    ) -> PyResult<Bound<'py, PyAny>> {
        let lease_ms = lease_ms.0;
        let jobs = id_tokens(jobs)?;
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.extend_many(&queue, &as_refs(&jobs), lease_ms).await },
            |py, answers| Ok(verdicts(py, answers)?.into_any()),
        )
    }

    #[pyo3(signature = (queue, limit=None))]
    fn promote<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        limit: Option<Count>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limit = args::opt(limit);
        let c = self.inner.clone();
        future_into_py(
            py,
            async move {
                c.promote(&queue, limit.unwrap_or(echomq::defaults::PUMP_LIMIT))
                    .await
            },
            count,
        )
    }

    #[pyo3(signature = (queue, limit=None))]
    fn reap<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        limit: Option<Count>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limit = args::opt(limit);
        let c = self.inner.clone();
        future_into_py(
            py,
            async move {
                c.reap(&queue, limit.unwrap_or(echomq::defaults::PUMP_LIMIT))
                    .await
            },
            count,
        )
    }

    fn counts<'py>(&self, py: Python<'py>, queue: String) -> PyResult<Bound<'py, PyAny>> {
        let c = self.inner.clone();
        future_into_py(py, async move { c.counts(&queue).await }, |py, counts| {
            Ok(Bound::new(py, Counts::from(counts))?.into_any())
        })
    }

    fn job<'py>(&self, py: Python<'py>, queue: String, id: String) -> PyResult<Bound<'py, PyAny>> {
        let c = self.inner.clone();
        future_into_py(
            py,
            async move { c.job(&queue, &id).await },
            |py, row| match row {
                Some(r) => Ok(Bound::new(py, JobInfo::new(py, r))?.into_any()),
                None => Ok(py.None().into_bound(py)),
            },
        )
    }

    #[pyo3(signature = (queue, set, newest_first=false, limit=None, range=None))]
    fn browse<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        set: String,
        newest_first: bool,
        limit: Option<Count>,
        range: Option<(UnixMs, UnixMs)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limit = args::opt(limit);
        let range = range.map(|(a, b): (UnixMs, UnixMs)| (a.0, b.0));
        let (set, range) = browse_args(&set, range)?;
        let c = self.inner.clone();
        future_into_py(
            py,
            async move {
                c.browse(
                    &queue,
                    set,
                    newest_first,
                    limit.unwrap_or(echomq::defaults::BROWSE_LIMIT),
                    range,
                )
                .await
            },
            |py, ids| Ok(PyList::new(py, ids.iter().map(|i| i.as_str()))?.into_any()),
        )
    }

    fn pause<'py>(&self, py: Python<'py>, queue: String) -> PyResult<Bound<'py, PyAny>> {
        let c = self.inner.clone();
        future_into_py(py, async move { c.pause(&queue).await }, none)
    }

    fn resume<'py>(&self, py: Python<'py>, queue: String) -> PyResult<Bound<'py, PyAny>> {
        let c = self.inner.clone();
        future_into_py(py, async move { c.resume(&queue).await }, none)
    }

    fn is_paused<'py>(&self, py: Python<'py>, queue: String) -> PyResult<Bound<'py, PyAny>> {
        let c = self.inner.clone();
        future_into_py(py, async move { c.is_paused(&queue).await }, flag)
    }

    fn requeue_dead<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        id: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let c = self.inner.clone();
        future_into_py(py, async move { c.requeue_dead(&queue, &id).await }, none)
    }

    fn remove<'py>(
        &self,
        py: Python<'py>,
        queue: String,
        id: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let c = self.inner.clone();
        future_into_py(py, async move { c.remove(&queue, &id).await }, none)
    }
}
