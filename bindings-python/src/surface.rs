//! The Python surface, declared once. Each verb is one row of the table at
//! the bottom: its Python parameters and signature, the conversion of its
//! arguments (`prep`, run with the GIL before any I/O), the call on the
//! core's client, and the conversion of its answer (`into`). The macro
//! derives from each `queue` row four methods:
//!
//! - `echomq.Client.verb(queue, ...)`: blocking, the GIL released for the I/O;
//! - `echomq.AsyncClient.verb(queue, ...)`: a coroutine (started on its first
//!   `await`) on the core's runtime, handed back to the running loop;
//! - `echomq.Queue.verb(...)` and `echomq.AsyncQueue.verb(...)`: the same on a
//!   queue handle, the name taken from the handle;
//!
//! and from each `client` row the first two. A verb added here is a verb of
//! the four classes. Its `py` clause is its typing (Python parameters after
//! `queue`, and the return type): `python/echomq/_native.pyi`'s verbs are
//! rendered from those clauses and the doc lines (regenerate with
//! `EMQ_BLESS=1 pytest tests/test_stub.py`; the test fails when they drift).
//!
//! `direct` runs an enqueue the low-latency way: the blocking client's own
//! path (its caller's thread) and the core's caller thread for asyncio
//! (decision 16.11). `wait` runs the call on the core's process runtime.
//! `into plain f` converts the answer with `f(py, value)`; `into held f` may
//! also name the client (`&echomq::Client`) and the queue (`&str`) the call
//! used (a claimed `Job` keeps them for `update_progress` and `log`).

use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use pyo3::IntoPyObjectExt;

use crate::aio::{coroutine, future_into_py, future_into_py_direct, NativeAsyncClient};
use crate::args::{opt, Count, Ms, Priority, UnixMs};
use crate::client::{browse_args, enqueue_options, retry_options, Client};
use crate::errors::err;
use crate::interp::Detach;
use crate::types::{as_refs, id_tokens, Counts, Enqueued, Job, JobInfo};

/// `echomq.Queue`'s native half: a blocking client and a checked queue name.
#[pyclass(frozen, subclass, module = "echomq._native")]
pub struct NativeQueue {
    client: Py<Client>,
    name: String,
}

/// `echomq.AsyncQueue`'s native half: an asyncio client and a checked name.
#[pyclass(frozen, subclass, module = "echomq._native")]
pub struct NativeAsyncQueue {
    client: Py<NativeAsyncClient>,
    name: String,
}

macro_rules! handle_common {
    ($ty:ident, $client:ty) => {
        #[pymethods]
        impl $ty {
            #[new]
            fn new(client: Py<$client>, name: String) -> PyResult<Self> {
                crate::queue::check_queue(&name)?;
                Ok($ty { client, name })
            }

            /// The queue's name.
            #[getter]
            fn name(&self) -> &str {
                &self.name
            }

            /// The client this handle uses.
            #[getter]
            fn client(&self, py: Python<'_>) -> Py<$client> {
                self.client.clone_ref(py)
            }

            fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
                let class = slf.get_type().name()?;
                let name = PyString::new(slf.py(), &slf.get().name).repr()?;
                Ok(format!("<echomq.{class} {name}>"))
            }

            fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> bool {
                other.get_type().is(&slf.get_type())
                    && other.cast::<Self>().is_ok_and(|o| {
                        o.get().client.is(&slf.get().client) && o.get().name == slf.get().name
                    })
            }

            fn __hash__(&self) -> u64 {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                (self.client.as_ptr() as usize, &self.name).hash(&mut h);
                h.finish()
            }
        }
    };
}

handle_common!(NativeQueue, Client);
handle_common!(NativeAsyncQueue, NativeAsyncClient);

/// Any value Python knows how to take.
fn obj<'py, T: IntoPyObject<'py>>(py: Python<'py>, value: T) -> PyResult<Bound<'py, PyAny>> {
    value.into_bound_py_any(py)
}

fn none(py: Python<'_>, _: ()) -> PyResult<Bound<'_, PyAny>> {
    Ok(py.None().into_bound(py))
}

fn enqueued(py: Python<'_>, e: echomq::Enqueued) -> PyResult<Bound<'_, PyAny>> {
    obj(py, Enqueued::from(e))
}

/// One verdict per item: an `Enqueued`, or the exception instance.
fn enqueue_verdicts(
    py: Python<'_>,
    answers: Vec<echomq::Result<echomq::Enqueued>>,
) -> PyResult<Bound<'_, PyAny>> {
    let items = answers
        .into_iter()
        .map(|a| match a {
            Ok(e) => obj(py, Enqueued::from(e)),
            Err(e) => Ok(crate::errors::exception(py, &e)),
        })
        .collect::<PyResult<Vec<_>>>()?;
    obj(py, PyList::new(py, items)?)
}

/// One verdict per job: `None`, or the exception instance.
fn verdicts(py: Python<'_>, answers: Vec<echomq::Result<()>>) -> PyResult<Bound<'_, PyAny>> {
    obj(py, crate::client::verdicts(py, answers)?)
}

fn bytes_or_none(py: Python<'_>, value: Option<Vec<u8>>) -> PyResult<Bound<'_, PyAny>> {
    match value {
        Some(v) => obj(py, PyBytes::new(py, &v)),
        None => none(py, ()),
    }
}

/// Pins a converter to the shape `future_into_py` takes (a closure bound
/// by `let` would not be inferred as one for every `'py`).
fn conv_fn<T, F>(f: F) -> F
where
    F: for<'py> FnOnce(Python<'py>, T) -> PyResult<Bound<'py, PyAny>>,
{
    f
}

/// The blocking form of a row: `$client` is the `blocking::Client`.
macro_rules! sync_call {
    ($how:ident $kind:ident, $client:expr, $qname:expr, $py:ident, $c:ident, $queue:ident,
     $call:expr, $conv:expr) => {{
        let blocking: &echomq::blocking::Client = $client;
        #[allow(unused_variables)]
        let $queue: &str = $qname;
        let value = sync_call!(@run $how, blocking, $py, $c, $call).map_err(err)?;
        sync_call!(@conv $kind, blocking.as_async(), $queue, $py, $c, value, $conv)
    }};
    // The blocking client's own path (for an enqueue: the caller's thread).
    (@run direct, $blocking:ident, $py:ident, $c:ident, $call:expr) => {{
        let $c = $blocking;
        $py.detach_or_park(|| $call)
    }};
    // Not `async move`: the arguments (payloads backed by Python objects)
    // must be dropped after the GIL is back, never on a detached thread,
    // where pyo3 defers the decref under a lock a fork() can inherit held.
    (@run wait, $blocking:ident, $py:ident, $c:ident, $call:expr) => {{
        let $c = $blocking.as_async();
        $py.detach_or_park(|| echomq::runtime::runtime().block_on(async { $call.await }))
    }};
    (@conv plain, $async:expr, $queue:ident, $py:ident, $c:ident, $value:ident, $conv:expr) => {
        ($conv)($py, $value)
    };
    (@conv held, $async:expr, $queue:ident, $py:ident, $c:ident, $value:ident, $conv:expr) => {{
        let $c: &echomq::Client = $async;
        ($conv)($py, $value)
    }};
}

/// The asyncio form of a row: a coroutine that starts the call when first
/// awaited. `$client` is an owned `echomq::Client`, `$qname` an owned name
/// (the call sees it as a `&str`, as the blocking form does).
macro_rules! async_call {
    ($how:ident $kind:ident, $client:expr, $qname:expr, $py:ident, $c:ident, $queue:ident,
     $call:expr, $conv:expr) => {{
        let client: echomq::Client = $client;
        #[allow(unused_variables)]
        let $queue: String = $qname;
        coroutine($py, move |$py| {
            let conv = async_call!(@conv $kind, client, $queue, $c, $conv);
            async_call!(@run $how, client, $queue, $py, $c, $call, conv)
        })
    }};
    (@run direct, $client:ident, $queue:ident, $py:ident, $c:ident, $call:expr, $conv:ident) => {
        future_into_py_direct(
            $py,
            &$client,
            move |$c| async move {
                #[allow(unused_variables)]
                let $queue: &str = &$queue;
                $call.await
            },
            $conv,
        )
    };
    (@run wait, $client:ident, $queue:ident, $py:ident, $c:ident, $call:expr, $conv:ident) => {{
        let $c = $client;
        future_into_py(
            $py,
            async move {
                #[allow(unused_variables)]
                let $queue: &str = &$queue;
                $call.await
            },
            $conv,
        )
    }};
    // `plain`: the converter needs nothing of the call's.
    (@conv plain, $client:ident, $queue:ident, $c:ident, $conv:expr) => {
        conv_fn(move |py, value| ($conv)(py, value))
    };
    // `held`: the converter sees its own copies of the client and the name.
    (@conv held, $client:ident, $queue:ident, $c:ident, $conv:expr) => {{
        let (held_client, held_queue) = ($client.clone(), $queue.clone());
        conv_fn(move |py, value| {
            let ($c, $queue): (&echomq::Client, &str) = (&held_client, &held_queue);
            ($conv)(py, value)
        })
    }};
}

macro_rules! surface {
    (
        |$py:ident, $c:ident, $queue:ident|
        queue {
            $(
                $(#[doc = $qdoc:literal])*
                $qhow:ident fn $q:ident ( $( $qa:ident : $qt:ty ),* $(,)? )
                    sig ( $($qsig:tt)* )
                    py $qpy:literal -> $qret:literal
                    $( prep { $($qprep:tt)* } )?
                    call $qcall:expr ;
                    into $qkind:ident $qconv:expr ;
            )*
        }
        client {
            $(
                $(#[doc = $cdoc:literal])*
                $chow:ident fn $cl:ident ( $( $ca:ident : $ct:ty ),* $(,)? )
                    sig ( $($csig:tt)* )
                    py $cpy:literal -> $cret:literal
                    $( prep { $($cprep:tt)* } )?
                    call $ccall:expr ;
                    into $ckind:ident $cconv:expr ;
            )*
        }
    ) => {
        /// The verbs that take a queue (on both clients and both handles).
        pub const QUEUE_VERBS: &[&str] = &[$(stringify!($q)),*];
        /// The verbs of the clients only.
        pub const CLIENT_VERBS: &[&str] = &[$(stringify!($cl)),*];
        /// Each verb's typing for `_native.pyi`: its name, whether it takes a
        /// queue, its Python parameters (after `queue`), its return type and
        /// its doc lines. tests/test_stub.py renders the stub's verbs from it.
        pub const STUB_ROWS: &[StubRow] = &[
            $( (stringify!($q), true, $qpy, $qret, &[$($qdoc),*]), )*
            $( (stringify!($cl), false, $cpy, $cret, &[$($cdoc),*]), )*
        ];

        #[pymethods]
        impl Client {
            $(
                $(#[doc = $qdoc])*
                #[pyo3(signature = (queue, $($qsig)*))]
                #[allow(clippy::too_many_arguments)]
                fn $q<'py>(&self, $py: Python<'py>, queue: String, $($qa: $qt),*)
                    -> PyResult<Bound<'py, PyAny>> {
                    $($($qprep)*)?
                    sync_call!($qhow $qkind, &self.inner, queue.as_str(), $py, $c, $queue,
                        $qcall, $qconv)
                }
            )*
            $(
                $(#[doc = $cdoc])*
                #[pyo3(signature = ($($csig)*))]
                #[allow(clippy::too_many_arguments)]
                fn $cl<'py>(&self, $py: Python<'py>, $($ca: $ct),*)
                    -> PyResult<Bound<'py, PyAny>> {
                    $($($cprep)*)?
                    sync_call!($chow $ckind, &self.inner, "", $py, $c, $queue, $ccall, $cconv)
                }
            )*
        }

        #[pymethods]
        impl NativeAsyncClient {
            $(
                $(#[doc = $qdoc])*
                #[pyo3(signature = (queue, $($qsig)*))]
                #[allow(clippy::too_many_arguments)]
                fn $q<'py>(&self, $py: Python<'py>, queue: String, $($qa: $qt),*)
                    -> PyResult<Bound<'py, PyAny>> {
                    $($($qprep)*)?
                    async_call!($qhow $qkind, self.inner.clone(), queue, $py, $c, $queue,
                        $qcall, $qconv)
                }
            )*
            $(
                $(#[doc = $cdoc])*
                #[pyo3(signature = ($($csig)*))]
                #[allow(clippy::too_many_arguments)]
                fn $cl<'py>(&self, $py: Python<'py>, $($ca: $ct),*)
                    -> PyResult<Bound<'py, PyAny>> {
                    $($($cprep)*)?
                    async_call!($chow $ckind, self.inner.clone(), String::new(), $py, $c, $queue,
                        $ccall, $cconv)
                }
            )*
        }

        #[pymethods]
        impl NativeQueue {
            $(
                $(#[doc = $qdoc])*
                #[pyo3(signature = ($($qsig)*))]
                #[allow(clippy::too_many_arguments)]
                fn $q<'py>(&self, $py: Python<'py>, $($qa: $qt),*)
                    -> PyResult<Bound<'py, PyAny>> {
                    $($($qprep)*)?
                    sync_call!($qhow $qkind, &self.client.get().inner, self.name.as_str(), $py,
                        $c, $queue, $qcall, $qconv)
                }
            )*
        }

        #[pymethods]
        impl NativeAsyncQueue {
            $(
                $(#[doc = $qdoc])*
                #[pyo3(signature = ($($qsig)*))]
                #[allow(clippy::too_many_arguments)]
                fn $q<'py>(&self, $py: Python<'py>, $($qa: $qt),*)
                    -> PyResult<Bound<'py, PyAny>> {
                    $($($qprep)*)?
                    async_call!($qhow $qkind, self.client.get().inner.clone(), self.name.clone(),
                        $py, $c, $queue, $qcall, $qconv)
                }
            )*
        }
    };
}

surface! {
    |py, c, queue|
    queue {
        // ---- produce ----
        /// Enqueue now, or later (``run_at_ms`` or ``delay_ms``, not both), under a
        /// minted id or the given ``id``; or deduplicated by ``dedup_id`` for
        /// ``dedup_ttl_ms`` (not with the others). ``priority`` (wire 2.2.0,
        /// ``1..=1000000``, higher claimed first; ``0``/``None``: none) combines
        /// with any of them.
        direct fn enqueue(
            payload: Bound<'py, PyAny>,
            id: Option<String>,
            run_at_ms: Option<UnixMs>,
            delay_ms: Option<Ms>,
            dedup_id: Option<String>,
            dedup_ttl_ms: Option<Ms>,
            priority: Option<Priority>,
        )
            sig (payload, *, id=None, run_at_ms=None, delay_ms=None, dedup_id=None,
                dedup_ttl_ms=None, priority=None)
            py "payload: _Payload, *, id: Optional[str] = None, \
                run_at_ms: Optional[_Time] = None, delay_ms: Optional[_Duration] = None, \
                dedup_id: Optional[str] = None, dedup_ttl_ms: Optional[_Duration] = None, \
                priority: Optional[int] = None" -> "Enqueued"
            prep {
                let payload = crate::types::payload(&payload)?;
                let options =
                    enqueue_options(id, run_at_ms, delay_ms, dedup_id, dedup_ttl_ms, priority);
            }
            call c.enqueue(queue, &payload, options);
            into plain enqueued;
        /// Enqueue a batch in one pipeline: each item a payload or ``(payload,
        /// {enqueue's keywords})``; every item is checked before anything is
        /// sent; one verdict per item, in input order.
        wait fn enqueue_many(items: Bound<'py, PyAny>)
            sig (items)
            py "items: Iterable[EnqueueItem]" -> "List[Union[Enqueued, EchoMQError]]"
            prep { let items = crate::types::enqueue_items(&items)?; }
            call c.enqueue_many(queue, &items);
            into plain enqueue_verdicts;

        // ---- claim and settle ----
        wait fn claim(lease_ms: Ms)
            sig (lease_ms)
            py "lease_ms: _Duration" -> "Optional[Job]"
            call c.claim(queue, lease_ms.0);
            into held |py, job: Option<echomq::Job>| match job {
                Some(j) => obj(py, Job::held(py, &j, c, queue)),
                None => none(py, ()),
            };
        wait fn claim_many(max: Count, lease_ms: Ms)
            sig (max, lease_ms)
            py "max: int, lease_ms: _Duration" -> "List[Job]"
            call c.claim_many(queue, max.0, lease_ms.0);
            into held |py, jobs: Vec<echomq::Job>| {
                let held = jobs
                    .iter()
                    .map(|j| Bound::new(py, Job::held(py, j, c, queue)))
                    .collect::<PyResult<Vec<_>>>()?;
                obj(py, PyList::new(py, held)?)
            };
        wait fn complete(id: String, token: Count)
            sig (id, token)
            py "id: str, token: int" -> "None"
            call c.complete(queue, &id, token.0);
            into plain none;
        wait fn complete_many(jobs: Bound<'py, PyAny>)
            sig (jobs)
            py "jobs: Iterable[_IdToken]" -> "List[Optional[EchoMQError]]"
            prep { let jobs = id_tokens(&jobs)?; }
            call c.complete_many(queue, &as_refs(&jobs));
            into plain verdicts;
        /// Settle a failed attempt; omitted options take the core's defaults
        /// (``delay_ms`` 0, ``max_attempts`` 5, ``error`` empty).
        wait fn retry(
            id: String,
            token: Count,
            delay_ms: Option<Ms>,
            max_attempts: Option<Count>,
            error: Option<String>,
        )
            sig (id, token, delay_ms=None, max_attempts=None, error=None)
            py "id: str, token: int, delay_ms: Optional[_Duration] = None, \
                max_attempts: Optional[int] = None, error: Optional[str] = None" -> "_Outcome"
            prep { let options = retry_options(delay_ms, max_attempts, error); }
            call c.retry_with(queue, &id, token.0, &options);
            into plain |py, outcome: echomq::RetryOutcome| obj(py, outcome.as_str());
        wait fn extend(id: String, token: Count, lease_ms: Ms)
            sig (id, token, lease_ms)
            py "id: str, token: int, lease_ms: _Duration" -> "None"
            call c.extend(queue, &id, token.0, lease_ms.0);
            into plain none;
        wait fn extend_many(jobs: Bound<'py, PyAny>, lease_ms: Ms)
            sig (jobs, lease_ms)
            py "jobs: Iterable[_IdToken], lease_ms: _Duration" -> "List[Optional[EchoMQError]]"
            prep { let jobs = id_tokens(&jobs)?; }
            call c.extend_many(queue, &as_refs(&jobs), lease_ms.0);
            into plain verdicts;
        wait fn rate_limit(id: String, token: Count, ms: Ms)
            sig (id, token, ms)
            py "id: str, token: int, ms: _Duration" -> "None"
            call c.rate_limit(queue, &id, token.0, ms.0);
            into plain none;
        /// The holder records how far job ``id`` got (any JSON-able value).
        wait fn update_progress(id: String, token: Count, value: Bound<'py, PyAny>)
            sig (id, token, value)
            py "id: str, token: int, value: object" -> "None"
            prep { let json = crate::progress::progress_json(&value)?; }
            call c.update_progress(queue, &id, token.0, &json);
            into plain none;
        /// Append a line to job ``id``'s log (the newest ``max_lines`` are
        /// kept); answers the log's length.
        wait fn log(id: String, line: String, max_lines: Option<Count>)
            sig (id, line, max_lines=None)
            py "id: str, line: str, max_lines: Optional[int] = None" -> "int"
            call c.log(queue, &id, &line, opt(max_lines));
            into plain obj;

        // ---- pumps ----
        wait fn promote(limit: Option<Count>)
            sig (limit=None)
            py "limit: Optional[int] = None" -> "int"
            call c.promote(queue, opt(limit).unwrap_or(echomq::defaults::PUMP_LIMIT));
            into plain obj;
        wait fn reap(limit: Option<Count>)
            sig (limit=None)
            py "limit: Optional[int] = None" -> "int"
            call c.reap(queue, opt(limit).unwrap_or(echomq::defaults::PUMP_LIMIT));
            into plain obj;
        wait fn reap_stalled(limit: Count, max_stalls: Count)
            sig (limit, max_stalls)
            py "limit: int, max_stalls: int" -> "Reaped"
            call c.reap_stalled(queue, limit.0, max_stalls.0);
            into plain |py, r| obj(py, crate::stall::Reaped::from(r));
        wait fn fire_repeats(limit: Option<Count>)
            sig (limit=None)
            py "limit: Optional[int] = None" -> "int"
            call c.fire_repeats(queue, opt(limit).unwrap_or(echomq::defaults::PUMP_LIMIT));
            into plain obj;

        // ---- inspect ----
        wait fn counts()
            sig ()
            py "" -> "Counts"
            call c.counts(queue);
            into plain |py, n| obj(py, Counts::from(n));
        wait fn job(id: String)
            sig (id)
            py "id: str" -> "Optional[JobInfo]"
            call c.job(queue, &id);
            into plain |py, row: Option<echomq::JobInfo>| match row {
                Some(r) => obj(py, JobInfo::new(py, r)),
                None => none(py, ()),
            };
        /// Whether job ``id``'s row exists (in any state).
        wait fn exists(id: String)
            sig (id)
            py "id: str" -> "bool"
            call c.exists(queue, &id);
            into plain obj;
        wait fn browse(
            set: String,
            newest_first: bool,
            limit: Option<Count>,
            range: Option<(UnixMs, UnixMs)>,
        )
            sig (set, newest_first=false, limit=None, range=None)
            py "set: _BrowseSet, newest_first: bool = False, limit: Optional[int] = None, \
                range: Optional[Tuple[_Time, _Time]] = None" -> "List[str]"
            prep { let (set, range) = browse_args(&set, range.map(|(a, b)| (a.0, b.0)))?; }
            call c.browse(
                queue,
                set,
                newest_first,
                opt(limit).unwrap_or(echomq::defaults::BROWSE_LIMIT),
                range,
            );
            into plain |py, ids: Vec<echomq::BrandedId>| {
                obj(py, PyList::new(py, ids.iter().map(|i| i.as_str()))?)
            };
        /// Lines ``start..=end`` of job ``id``'s log (LRANGE indexes).
        wait fn logs(id: String, start: i64, end: i64)
            sig (id, start=0, end=-1)
            py "id: str, start: int = 0, end: int = -1" -> "List[str]"
            call c.logs(queue, &id, start, end);
            into plain obj;
        /// The result a worker kept for job ``id`` (``keep_result_ms``), or ``None``.
        wait fn result(id: String)
            sig (id)
            py "id: str" -> "Optional[bytes]"
            call c.result(queue, &id);
            into plain bytes_or_none;
        /// Wait for job ``id`` to complete or go dead (``TimeoutError`` after ``timeout_ms``).
        wait fn wait_for(id: String, timeout_ms: Ms)
            sig (id, timeout_ms)
            py "id: str, timeout_ms: _Duration" -> "Settled"
            call c.wait_for(queue, &id, Duration::from_millis(timeout_ms.0));
            into plain |py, s| obj(py, crate::observe::Settled::from(s));
        /// Wait for job ``id``'s kept result: ``JobDeadError`` if it went dead,
        /// ``JobGoneError`` if it has no row and no result, ``TimeoutError``.
        wait fn wait_for_result(id: String, timeout_ms: Ms)
            sig (id, timeout_ms)
            py "id: str, timeout_ms: _Duration" -> "bytes"
            call c.wait_for_result(queue, &id, Duration::from_millis(timeout_ms.0));
            into plain |py, v: Vec<u8>| obj(py, PyBytes::new(py, &v));
        wait fn is_paused()
            sig ()
            py "" -> "bool"
            call c.is_paused(queue);
            into plain obj;
        wait fn list_repeats()
            sig ()
            py "" -> "List[Repeat]"
            call c.list_repeats(queue);
            into plain crate::repeat::repeat_list;
        /// Subscribe to ``emq:{q}:events`` on a connection of its own.
        wait fn subscribe()
            sig ()
            py "" -> "Subscription"
            call c.subscribe(queue);
            into plain crate::observe::native_subscription;

        // ---- operate ----
        wait fn pause()
            sig ()
            py "" -> "None"
            call c.pause(queue);
            into plain none;
        wait fn resume()
            sig ()
            py "" -> "None"
            call c.resume(queue);
            into plain none;
        wait fn set_concurrency(n: Count)
            sig (n)
            py "n: int" -> "None"
            call c.set_concurrency(queue, n.0);
            into plain none;
        wait fn set_rate_limit(max: Count, per_ms: Ms)
            sig (max, per_ms)
            py "max: int, per_ms: _Duration" -> "None"
            call c.set_rate_limit(queue, max.0, per_ms.0);
            into plain none;
        wait fn requeue_dead(id: String)
            sig (id)
            py "id: str" -> "None"
            call c.requeue_dead(queue, &id);
            into plain none;
        wait fn requeue_all_dead(limit: Option<Count>)
            sig (limit=None)
            py "limit: Optional[int] = None" -> "int"
            call c.requeue_all_dead(queue, opt(limit));
            into plain obj;
        wait fn remove(id: String)
            sig (id)
            py "id: str" -> "None"
            call c.remove(queue, &id);
            into plain none;
        wait fn drain(include_scheduled: bool, limit: Option<Count>)
            sig (include_scheduled=false, limit=None)
            py "include_scheduled: bool = False, limit: Optional[int] = None" -> "int"
            call c.drain(queue, include_scheduled, opt(limit));
            into plain obj;
        wait fn purge_dead(older_than_ms: Option<Ms>, limit: Option<Count>)
            sig (older_than_ms=None, limit=None)
            py "older_than_ms: Optional[_Duration] = None, limit: Optional[int] = None" -> "int"
            call c.purge_dead(queue, opt(older_than_ms), opt(limit));
            into plain obj;
        /// Create or update the repeatable job ``name`` (exactly one of
        /// ``every_ms`` and ``cron``; the checks are the core's).
        wait fn upsert_repeat(
            name: String,
            every_ms: Option<Ms>,
            cron: Option<String>,
            tz: Option<String>,
            payload: Option<Bound<'py, PyAny>>,
            start_at: Option<UnixMs>,
            end_at: Option<UnixMs>,
            limit: Option<Count>,
        )
            sig (name, *, every_ms=None, cron=None, tz=None, payload=None, start_at=None,
                end_at=None, limit=None)
            py "name: str, *, every_ms: Optional[_Duration] = None, \
                cron: Optional[str] = None, tz: Optional[str] = None, \
                payload: Optional[_Payload] = None, start_at: Optional[_Time] = None, \
                end_at: Optional[_Time] = None, limit: Optional[int] = None" -> "Repeat"
            prep {
                let payload = match &payload {
                    Some(p) => crate::types::payload(p)?.as_ref().to_vec(),
                    None => Vec::new(),
                };
                let options = echomq::RepeatOptions {
                    every_ms: opt(every_ms),
                    cron,
                    tz,
                    start_at: opt(start_at),
                    end_at: opt(end_at),
                    limit: opt(limit),
                };
            }
            call c.upsert_repeat(queue, &name, &payload, &options);
            into plain |py, r| obj(py, crate::repeat::Repeat::new(py, r));
        wait fn remove_repeat(name: String)
            sig (name)
            py "name: str" -> "bool"
            call c.remove_repeat(queue, &name);
            into plain obj;
    }
    client {
        wait fn queues()
            sig ()
            py "" -> "List[str]"
            call c.queues();
            into plain |py, names: Vec<String>| obj(py, PyList::new(py, names)?);
        /// Prometheus text exposition for ``queues``.
        wait fn metrics_text(queues: Vec<String>)
            sig (queues)
            py "queues: List[str]" -> "str"
            call c.metrics_text(&queues.iter().map(String::as_str).collect::<Vec<_>>());
            into plain |py, text: String| obj(py, PyString::new(py, &text));
    }
}

/// A verb's typing: `(name, takes a queue, parameters, return type, doc lines)`.
type StubRow = (
    &'static str,
    bool,
    &'static str,
    &'static str,
    &'static [&'static str],
);

/// The verbs' typings, in table order, for tests/test_stub.py (which renders
/// the verbs of `_native.pyi`'s four classes from them).
#[pyfunction]
pub fn surface_stub_rows() -> Vec<StubRow> {
    STUB_ROWS.to_vec()
}

/// The verb tables, for the parity test: `(queue verbs, client verbs)`.
#[pyfunction]
pub fn surface_verbs() -> (Vec<&'static str>, Vec<&'static str>) {
    (QUEUE_VERBS.to_vec(), CLIENT_VERBS.to_vec())
}
