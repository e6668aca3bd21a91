"""``echomq.Worker``: the core's worker with a Python handler.

A plain function runs on the core's blocking threads, attached to the
interpreter only while Python code runs. An ``async def`` handler runs on an
asyncio loop: the caller's loop under ``await worker.run_async()``, or —
under the blocking ``run()`` — a private loop on a thread of the worker's
own, created for the run and closed after it. That private loop is not the
caller's: objects bound to another loop (an ``aiohttp`` session made
elsewhere, an ``asyncio.Lock`` of the main loop) must not be used from such a
handler; create them inside it, or use ``run_async()`` on your loop.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import signal
import threading
import weakref
from types import FrameType, TracebackType
from typing import Awaitable, Callable, List, Literal, Optional, Sequence, Type, Union

from . import _native
from ._aio import AsyncClient
from ._errors import EchoMQError
from ._native import WORKER_EVENTS, Client, Job, WorkerEvent, WorkerStats
from ._queue import Duration

__all__ = ["Worker", "Handler", "WORKER_EVENTS"]

# WORKER_EVENTS (the core's list of names): ``events=`` objects define
# ``on_<name>(event)`` for those they want (``on_completed``, ``on_failed``, ...).

_log = logging.getLogger("echomq.worker")

Handler = Callable[[Job], object]
"""A function (or ``async def``) taking the claimed ``Job``. Returning means
success (with ``keep_result_ms``, the returned value is kept as the job's
result: ``bytes``/``str`` as they are, other values as JSON); raising means
failure (retried with ``str(exc)`` as ``last_error``); raising
``echomq.UnrecoverableError`` sends the job straight to dead."""


def _is_async(handler: object) -> bool:
    if inspect.iscoroutinefunction(handler):
        return True
    call = getattr(handler, "__call__", None)  # noqa: B004
    return call is not None and inspect.iscoroutinefunction(call)


class Worker:
    """Runs one queue: claims in batches up to ``concurrency``, runs ``handler``
    per job, heartbeats leases, settles, and runs the promote/reap pumps.

    Omitted options take the core's defaults (``echomq.defaults()``); the
    core refuses an out-of-range option with ``InvalidArgumentError``.
    ``*_ms`` options take an ``int`` of milliseconds or a ``timedelta``.

    A context manager: ``with Worker(...) as worker: worker.run()`` and
    ``async with Worker(...) as worker: await worker.run_async()``; leaving
    the block stops the worker (the async form also waits for its drain)."""

    def __init__(
        self,
        client: Union[Client, AsyncClient],
        queue: str,
        handler: Handler,
        *,
        concurrency: Optional[int] = None,
        lease_ms: Optional[Duration] = None,
        max_attempts: Optional[int] = None,
        backoff: Optional[Literal["exponential", "fixed", "jitter"]] = None,
        backoff_base_ms: Optional[Duration] = None,
        backoff_cap_ms: Optional[Duration] = None,
        pump_interval_ms: Optional[Duration] = None,
        idle_max_ms: Optional[Duration] = None,
        shutdown_grace_ms: Optional[Duration] = None,
        prefetch: Optional[int] = None,
        handler_batch: Optional[int] = None,
        dead_max_age_ms: Optional[Duration] = None,
        dead_max_len: Optional[int] = None,
        max_stalls: Optional[int] = None,
        keep_result_ms: Optional[Duration] = None,
        wake_fallback_ms: Optional[Duration] = None,
        handle_signals: bool = True,
        events: Optional[object] = None,
    ) -> None:
        if not callable(handler):
            raise TypeError("handler must be callable")
        listeners = _listeners(events)
        self._handler = handler
        self._async = _is_async(handler)
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._handle_signals = handle_signals
        self._native = _native.NativeWorker(
            client,
            queue,
            self._call_async_batch if self._async else handler,
            concurrency=concurrency,
            lease_ms=lease_ms,
            max_attempts=max_attempts,
            backoff=backoff,
            backoff_base_ms=backoff_base_ms,
            backoff_cap_ms=backoff_cap_ms,
            pump_interval_ms=pump_interval_ms,
            idle_max_ms=idle_max_ms,
            shutdown_grace_ms=shutdown_grace_ms,
            prefetch=prefetch,
            handler_batch=handler_batch,
            dead_max_age_ms=dead_max_age_ms,
            dead_max_len=dead_max_len,
            max_stalls=max_stalls,
            keep_result_ms=keep_result_ms,
            wake_fallback_ms=wake_fallback_ms,
            batched=self._async,
        )
        self._listeners = listeners
        self._events_loop: Optional[asyncio.AbstractEventLoop] = None
        self._running: "Optional[asyncio.Future[None]]" = None
        if listeners:
            # A weak reference: the event thread must not keep this worker alive.
            dispatch = weakref.WeakMethod(self._dispatch)

            def forward(events: List[WorkerEvent]) -> None:
                method = dispatch()
                if method is not None:
                    method(events)

            # Only the events listened to leave the core: the others never
            # take the GIL (a listener for `failed` costs nothing per success).
            self._native.forward_events(list(listeners), forward)

    def __repr__(self) -> str:
        return f"<echomq.Worker queue={self.queue!r} {self.stats()!r}>"

    def __enter__(self) -> "Worker":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        # A run() in this thread has returned by now; one in another thread
        # drains after this (stop() never blocks).
        self.stop()

    async def __aenter__(self) -> "Worker":
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.stop()
        running = self._running
        if running is not None and not running.done():
            # A run_async() still going (as a task): wait for its drain.
            await asyncio.shield(running)

    @property
    def queue(self) -> str:
        return self._native.queue

    def _dispatch(self, events: List[WorkerEvent]) -> None:
        # On the worker's event thread, with the events that queued up since
        # the last call. Under ``run_async`` the listeners run on that loop
        # (like everything else there: one wake-up for the lot); otherwise
        # right here.
        loop = self._events_loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._deliver, events)
                return
            except RuntimeError:  # the loop closed meanwhile
                pass
        self._deliver(events)

    def _deliver(self, events: List[WorkerEvent]) -> None:
        listeners = self._listeners
        for event in events:
            listener = listeners.get(event.name)
            if listener is None:
                continue
            try:
                listener(event)
            except Exception:  # a listener's bug must not stop the worker
                _log.exception("echomq worker: the %s listener raised", event.name)

    def _call_async_batch(self, jobs: List[Job]) -> List[object]:
        # On a core blocking thread: run the batch's coroutines together on
        # the loop and wait (the wait releases the GIL); answer ``(value,)``
        # or the exception for each job, in order.
        loop = self._loop
        if loop is None or loop.is_closed():
            raise EchoMQError("the async handler's event loop is not running")
        coros = [self._handler(job) for job in jobs]
        future = asyncio.run_coroutine_threadsafe(_gather(coros), loop)
        return future.result()

    def run(self) -> None:
        """Run until ``stop()`` (or SIGTERM), then drain gracefully. Ctrl-C
        (KeyboardInterrupt) also stops and drains, then re-raises."""
        own_loop: Optional[asyncio.AbstractEventLoop] = None
        thread: Optional[threading.Thread] = None
        if self._async:
            own_loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=own_loop.run_forever, name="echomq-worker-loop", daemon=True
            )
            thread.start()
            self._loop = own_loop
        restore = self._install_sigterm()
        try:
            self._native.run()
        finally:
            restore()
            if own_loop is not None and thread is not None:
                own_loop.call_soon_threadsafe(own_loop.stop)
                thread.join()
                own_loop.close()
                self._loop = None

    async def run_async(self) -> None:
        """``run`` as a coroutine; an ``async def`` handler runs on this loop.
        Cancelling the awaiting task stops the worker (it drains in the background)."""
        if self._async:
            self._loop = asyncio.get_running_loop()
        self._events_loop = asyncio.get_running_loop()
        self._running = self._native.run_async()
        try:
            await self._running
        except asyncio.CancelledError:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop claiming; in-flight jobs finish within ``shutdown_grace_ms``.
        Non-blocking; callable from any thread or a signal handler."""
        self._native.stop()

    def is_stopping(self) -> bool:
        return self._native.is_stopping()

    def stats(self) -> WorkerStats:
        """``claimed, completed, retried, dead, lease_lost, in_flight``."""
        return self._native.stats()

    def _install_sigterm(self) -> Callable[[], None]:
        if not self._handle_signals or threading.current_thread() is not threading.main_thread():
            return lambda: None
        previous = signal.getsignal(signal.SIGTERM)
        if previous not in (signal.SIG_DFL, None):
            return lambda: None  # the application handles SIGTERM itself

        def on_sigterm(signum: int, frame: Optional[FrameType]) -> None:
            self.stop()

        signal.signal(signal.SIGTERM, on_sigterm)

        def restore() -> None:
            signal.signal(signal.SIGTERM, previous)

        return restore


def _listeners(events: Optional[object]) -> "dict[str, Callable[[WorkerEvent], object]]":
    """The ``on_<name>`` callables of an ``events=`` object (a mapping of
    names to callables is accepted too)."""
    if events is None:
        return {}
    found: "dict[str, Callable[[WorkerEvent], object]]" = {}
    for name in WORKER_EVENTS:
        if isinstance(events, dict):
            listener = events.get(name)
        else:
            listener = getattr(events, "on_" + name, None)
        if listener is not None:
            if not callable(listener):
                raise TypeError(f"the {name} listener must be callable")
            found[name] = listener
    if isinstance(events, dict):
        unknown = set(events) - set(WORKER_EVENTS)
        if unknown:
            raise ValueError(f"unknown worker events {sorted(unknown)}; known: {WORKER_EVENTS}")
    return found


async def _gather(coros: Sequence[object]) -> List[object]:
    async def one(coro: object) -> object:
        try:
            assert inspect.isawaitable(coro)
            return (await coro,)
        except BaseException as e:  # the job's failure, reported per job
            return e

    return list(await asyncio.gather(*(one(c) for c in coros)))
