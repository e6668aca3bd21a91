"""The asyncio client. Each verb answers a coroutine; its network work runs on
the core's tokio runtime (no thread per call) and the answer is handed back to
the running loop with ``call_soon_threadsafe``. The verbs come from the same
declaration as the blocking client's (``src/surface.rs``); this module adds
what is Python's own: the async context manager, ``aclose`` and ``queue``."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Awaitable, Callable, Optional, Type, TypeVar

from . import _native
from ._queue import AsyncQueue, Duration

__all__ = ["AsyncClient", "connect_async"]

T = TypeVar("T")


def _resolve(fut: "asyncio.Future[object]", ok: bool, value: object) -> None:
    """Runs on the loop's thread: settle ``fut`` unless its awaiter gave up."""
    if fut.cancelled():
        return
    if ok:
        fut.set_result(value)
    else:
        assert isinstance(value, BaseException)
        fut.set_exception(value)


async def _lazy(start: Callable[[], Awaitable[T]]) -> T:
    """The coroutine every asyncio verb answers: the call starts on its first
    step (as an ``async def`` verb's would), in the loop that runs it."""
    return await start()


class AsyncClient(_native.NativeAsyncClient):
    """An asyncio connection to one EchoMQ deployment. Share one per process;
    concurrent coroutines pipeline on its one connection."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<echomq.AsyncClient node_id={self.node_id}>"

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close (the asyncio convention: ``await client.aclose()``): later
        calls raise ``ClosedError`` at once; this returns once the queue events
        of calls that answered before it are published (at most one second),
        without blocking the event loop."""
        await self._aclose()

    def queue(self, name: str) -> AsyncQueue:
        """A handle on one queue (``InvalidQueueError`` now for a bad name)."""
        return AsyncQueue(self, name)


async def connect_async(
    url: Optional[str] = None,
    *,
    node_id: Optional[int] = None,
    client_name: Optional[str] = None,
    connect_timeout_ms: Optional[Duration] = None,
    response_timeout_ms: Optional[Duration] = None,
    max_payload: Optional[int] = None,
    strict_bundle: bool = False,
    publish_events: bool = True,
    wire_version: Optional[str] = None,
    wait_replicas: int = 0,
    wait_timeout_ms: int = 1000,
) -> AsyncClient:
    """Connect (and fence) without blocking the running loop. With no
    ``url``: ``EMQ_URL`` when set, else ``redis://127.0.0.1:6379/``. Omitted
    options take the core's defaults (``echomq.defaults()``)."""
    native = await _native.connect_async(
        url,
        node_id=node_id,
        client_name=client_name,
        connect_timeout_ms=connect_timeout_ms,
        response_timeout_ms=response_timeout_ms,
        max_payload=max_payload,
        strict_bundle=strict_bundle,
        publish_events=publish_events,
        wire_version=wire_version,
        wait_replicas=wait_replicas,
        wait_timeout_ms=wait_timeout_ms,
    )
    return AsyncClient(native)
