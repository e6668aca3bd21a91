"""The asyncio client. Each verb is a coroutine; the network work runs on the
core's tokio runtime (no thread per call) and its answer is handed back to the
running loop with ``call_soon_threadsafe``."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Iterable, List, Literal, Optional, Tuple, Type, Union

from . import _native
from ._errors import EchoMQError
from ._native import (
    BundleMismatch,
    Counts,
    Enqueued,
    Job,
    JobInfo,
    Reaped,
    Repeat,
    Settled,
    Subscription,
)
from ._queue import AsyncQueue, Duration, Time

Payload = Union[bytes, str, bytearray, memoryview]
IdToken = Union[Job, Tuple[str, int]]

__all__ = ["AsyncClient", "connect_async"]


def _resolve(fut: "asyncio.Future[object]", ok: bool, value: object) -> None:
    """Runs on the loop's thread: settle ``fut`` unless its awaiter gave up."""
    if fut.cancelled():
        return
    if ok:
        fut.set_result(value)
    else:
        assert isinstance(value, BaseException)
        fut.set_exception(value)


class AsyncClient:
    """An asyncio connection to one EchoMQ deployment. Share one per process;
    concurrent coroutines pipeline on its one connection."""

    __slots__ = ("_native",)

    def __init__(self, native: _native.NativeAsyncClient) -> None:
        self._native = native

    def __repr__(self) -> str:
        return f"<echomq.AsyncClient node_id={self._native.node_id}>"

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
        await self._native.aclose()

    def queue(self, name: str) -> AsyncQueue:
        """A handle on one queue (``InvalidQueueError`` now for a bad name)."""
        return AsyncQueue(self, name)

    @property
    def node_id(self) -> int:
        return self._native.node_id

    def close(self) -> None:
        """Close the connection; later calls raise ``ClosedError``. Blocks (at
        most one second, usually one round trip) until the queue events of
        calls that answered before it are published; in a coroutine prefer
        ``await aclose()``, which waits without blocking the event loop."""
        self._native.close()

    def bundle_mismatches(self) -> List[BundleMismatch]:
        return self._native.bundle_mismatches()

    async def enqueue(
        self,
        queue: str,
        payload: Payload,
        *,
        id: Optional[str] = None,
        run_at_ms: Optional[Time] = None,
        delay_ms: Optional[Duration] = None,
        dedup_id: Optional[str] = None,
        dedup_ttl_ms: Optional[Duration] = None,
    ) -> Enqueued:
        """Enqueue now, or later (``run_at_ms`` or ``delay_ms``, not both),
        under a minted id or the given ``id``; or deduplicated by
        ``dedup_id`` (echomq:2.1.0)."""
        return await self._native.enqueue(
            queue,
            payload,
            id=id,
            run_at_ms=run_at_ms,
            delay_ms=delay_ms,
            dedup_id=dedup_id,
            dedup_ttl_ms=dedup_ttl_ms,
        )

    async def reap_stalled(self, queue: str, limit: int, max_stalls: int) -> Reaped:
        return await self._native.reap_stalled(queue, limit, max_stalls)

    async def upsert_repeat(
        self,
        queue: str,
        name: str,
        *,
        every_ms: Optional[Duration] = None,
        cron: Optional[str] = None,
        tz: Optional[str] = None,
        payload: Optional[Payload] = None,
        start_at: Optional[Time] = None,
        end_at: Optional[Time] = None,
        limit: Optional[int] = None,
    ) -> Repeat:
        return await self._native.upsert_repeat(
            queue,
            name,
            every_ms=every_ms,
            cron=cron,
            tz=tz,
            payload=payload,
            start_at=start_at,
            end_at=end_at,
            limit=limit,
        )

    async def remove_repeat(self, queue: str, name: str) -> bool:
        return await self._native.remove_repeat(queue, name)

    async def list_repeats(self, queue: str) -> List[Repeat]:
        return await self._native.list_repeats(queue)

    async def fire_repeats(self, queue: str, limit: Optional[int] = None) -> int:
        return await self._native.fire_repeats(queue, limit)

    async def set_concurrency(self, queue: str, n: int) -> None:
        await self._native.set_concurrency(queue, n)

    async def set_rate_limit(self, queue: str, max: int, per_ms: Duration) -> None:
        await self._native.set_rate_limit(queue, max, per_ms)

    async def rate_limit(self, queue: str, id: str, token: int, ms: Duration) -> None:
        await self._native.rate_limit(queue, id, token, ms)

    async def enqueue_with_id(self, queue: str, id: str, payload: Payload) -> Enqueued:
        return await self._native.enqueue_with_id(queue, id, payload)

    async def enqueue_at(self, queue: str, payload: Payload, run_at_ms: Time) -> Enqueued:
        return await self._native.enqueue_at(queue, payload, run_at_ms)

    async def enqueue_in(self, queue: str, payload: Payload, delay_ms: Duration) -> Enqueued:
        return await self._native.enqueue_in(queue, payload, delay_ms)

    async def enqueue_many(
        self, queue: str, payloads: Iterable[Payload]
    ) -> List[Union[Enqueued, EchoMQError]]:
        return await self._native.enqueue_many(queue, payloads)

    async def claim(self, queue: str, lease_ms: Duration) -> Optional[Job]:
        return await self._native.claim(queue, lease_ms)

    async def claim_many(self, queue: str, max: int, lease_ms: Duration) -> List[Job]:
        return await self._native.claim_many(queue, max, lease_ms)

    async def complete(self, queue: str, id: str, token: int) -> None:
        await self._native.complete(queue, id, token)

    async def complete_many(
        self, queue: str, jobs: Iterable[IdToken]
    ) -> List[Optional[EchoMQError]]:
        return await self._native.complete_many(queue, jobs)

    async def retry(
        self,
        queue: str,
        id: str,
        token: int,
        delay_ms: Optional[Duration] = None,
        max_attempts: Optional[int] = None,
        error: Optional[str] = None,
    ) -> Literal["scheduled", "dead"]:
        """Settle a failed attempt; omitted options take the core's defaults
        (``delay_ms`` 0, ``max_attempts`` 5, ``error`` empty)."""
        return await self._native.retry(queue, id, token, delay_ms, max_attempts, error)

    async def extend(self, queue: str, id: str, token: int, lease_ms: Duration) -> None:
        await self._native.extend(queue, id, token, lease_ms)

    async def extend_many(
        self, queue: str, jobs: Iterable[IdToken], lease_ms: Duration
    ) -> List[Optional[EchoMQError]]:
        return await self._native.extend_many(queue, jobs, lease_ms)

    async def promote(self, queue: str, limit: Optional[int] = None) -> int:
        return await self._native.promote(queue, limit)

    async def reap(self, queue: str, limit: Optional[int] = None) -> int:
        return await self._native.reap(queue, limit)

    async def counts(self, queue: str) -> Counts:
        return await self._native.counts(queue)

    async def job(self, queue: str, id: str) -> Optional[JobInfo]:
        return await self._native.job(queue, id)

    async def browse(
        self,
        queue: str,
        set: Literal["pending", "dead", "schedule", "scheduled", "active"],
        newest_first: bool = False,
        limit: Optional[int] = None,
        range: Optional[Tuple[Time, Time]] = None,
    ) -> List[str]:
        return await self._native.browse(queue, set, newest_first, limit, range)

    async def pause(self, queue: str) -> None:
        await self._native.pause(queue)

    async def resume(self, queue: str) -> None:
        await self._native.resume(queue)

    async def is_paused(self, queue: str) -> bool:
        return await self._native.is_paused(queue)

    async def requeue_dead(self, queue: str, id: str) -> None:
        await self._native.requeue_dead(queue, id)

    async def remove(self, queue: str, id: str) -> None:
        await self._native.remove(queue, id)

    async def subscribe(self, queue: str) -> Subscription:
        """Subscribe to ``emq:{q}:events`` on a connection of its own; read it
        with ``async for event in sub`` (or ``await sub.next_async()``)."""
        return await self._native.subscribe(queue)

    async def wait_for(self, queue: str, id: str, timeout_ms: Duration) -> Settled:
        """Wait for job ``id`` to complete or go dead (``TimeoutError`` after
        ``timeout_ms``)."""
        return await self._native.wait_for(queue, id, timeout_ms)

    async def update_progress(self, queue: str, id: str, token: int, value: object) -> None:
        """The holder records how far job ``id`` got (any JSON-able value)."""
        await self._native.update_progress(queue, id, token, value)

    async def log(
        self, queue: str, id: str, line: str, max_lines: Optional[int] = None
    ) -> int:
        """Append a line to job ``id``'s log; answers the log's length."""
        return await self._native.log(queue, id, line, max_lines)

    async def logs(self, queue: str, id: str, start: int = 0, end: int = -1) -> List[str]:
        """Lines ``start..=end`` of job ``id``'s log (LRANGE indexes)."""
        return await self._native.logs(queue, id, start, end)

    async def result(self, queue: str, id: str) -> Optional[bytes]:
        """The result a worker kept for job ``id`` (``keep_result_ms``), or ``None``."""
        return await self._native.result(queue, id)

    async def wait_for_result(self, queue: str, id: str, timeout_ms: Duration) -> bytes:
        """Wait for job ``id``'s kept result: ``JobDeadError`` if it went dead,
        ``JobGoneError`` if it has no row and no result, ``TimeoutError``."""
        return await self._native.wait_for_result(queue, id, timeout_ms)

    async def metrics_text(self, queues: Iterable[str]) -> str:
        """Prometheus text exposition for ``queues``."""
        return await self._native.metrics_text(list(queues))

    async def queues(self) -> List[str]:
        return await self._native.queues()

    async def drain(
        self, queue: str, include_scheduled: bool = False, limit: Optional[int] = None
    ) -> int:
        return await self._native.drain(queue, include_scheduled, limit)

    async def purge_dead(
        self, queue: str, older_than_ms: Optional[Duration] = None, limit: Optional[int] = None
    ) -> int:
        return await self._native.purge_dead(queue, older_than_ms, limit)

    async def requeue_all_dead(self, queue: str, limit: Optional[int] = None) -> int:
        return await self._native.requeue_all_dead(queue, limit)


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


