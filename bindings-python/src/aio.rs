//! The asyncio side: every verb (declared in `surface.rs`) answers a
//! coroutine; its first step spawns the core future on the core's tokio
//! runtime (enqueue: on the core's caller thread, decision 16.11) and awaits
//! an `asyncio.Future` of the running loop; on completion the result is
//! handed back with `loop.call_soon_threadsafe`. No thread per call, no
//! extra crates.
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

use pyo3::sync::PyOnceLock;

use crate::errors::exception;
use crate::types::*;

static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static RESOLVE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static LAZY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// What starts an asyncio verb: called once, on the coroutine's first step.
type StartFn = Box<dyn for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>> + Send>;

/// The callable a verb's coroutine awaits (`echomq._aio._lazy`): the call
/// starts when the coroutine first runs, as an `async def` verb's would.
#[pyclass(frozen, name = "_Start", module = "echomq._native")]
pub struct Start(Mutex<Option<StartFn>>);

#[pymethods]
impl Start {
    fn __call__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let start = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        match start {
            Some(start) => start(py),
            None => Err(pyo3::exceptions::PyRuntimeError::new_err(
                "an echomq call is started once",
            )),
        }
    }
}

/// A coroutine (of `echomq._aio._lazy`) that runs `start` when first
/// awaited and answers what the future it returns settles with. The
/// arguments were converted before: a bad one raises at the call.
pub fn coroutine<'py, F>(py: Python<'py>, start: F) -> PyResult<Bound<'py, PyAny>>
where
    F: for<'a> FnOnce(Python<'a>) -> PyResult<Bound<'a, PyAny>> + Send + 'static,
{
    let start = Start(Mutex::new(Some(Box::new(start))));
    LAZY.import(py, "echomq._aio", "_lazy")?.call1((start,))
}

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

/// The asyncio client's native half (use `echomq.AsyncClient`, its Python
/// subclass). Its verbs come from the table of `surface.rs`.
#[pyclass(frozen, subclass, module = "echomq._native")]
pub struct NativeAsyncClient {
    pub inner: echomq::Client,
}

#[pymethods]
impl NativeAsyncClient {
    /// `AsyncClient(native)`: the subclass around what `connect_async` answered.
    #[new]
    fn new(native: &Bound<'_, NativeAsyncClient>) -> Self {
        NativeAsyncClient {
            inner: native.get().inner.clone(),
        }
    }

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
    /// that answered before it are published (at most 1 s). `AsyncClient.aclose`
    /// awaits it.
    fn _aclose<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // No running loop: raise before closing anything.
        GET_RUNNING_LOOP
            .import(py, "asyncio", "get_running_loop")?
            .call0()?;
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
}
