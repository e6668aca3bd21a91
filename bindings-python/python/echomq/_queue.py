"""Queue handles: ``client.queue("emails")`` answers one of these, so the
queue's verbs do not repeat its name. A handle is the client plus the (checked)
name; every method is the client's verb of the same name, so there is nothing
here to keep in step with the core (its Rust twin is ``echomq::Queue``).

The client-level verbs (``queues``, ``metrics_text``, ``close``, ...) stay on
the client; ``handle.client`` reaches it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Iterable, List, Literal, Optional, Tuple, Union, cast

from . import _native
from ._errors import EchoMQError
from ._native import Counts, Enqueued, Job, JobInfo, Reaped, Settled, Subscription

if TYPE_CHECKING:
    from ._aio import AsyncClient
    from ._native import Client
    from ._worker import Handler, Worker

__all__ = ["Queue", "AsyncQueue", "Duration", "Time"]

Payload = Union[bytes, str, bytearray, memoryview]
IdToken = Union[Job, Tuple[str, int]]
BrowseSet = Literal["pending", "dead", "schedule", "scheduled", "active"]
Duration = Union[int, timedelta]
"""Milliseconds as an ``int``, or a ``datetime.timedelta``."""
Time = Union[int, datetime]
"""Unix milliseconds as an ``int``, or a ``datetime.datetime`` (naive = local time)."""


class _Handle:
    __slots__ = ("_client", "_name")

    def __init__(self, client: Any, name: str) -> None:
        _native.check_queue(name)  # InvalidQueueError now, not at the first verb
        self._client = client
        self._name = name

    @property
    def name(self) -> str:
        """The queue's name."""
        return self._name

    def __repr__(self) -> str:
        return f"<echomq.{type(self).__name__} {self._name!r}>"

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and isinstance(other, _Handle)
            and other._client is self._client
            and other._name == self._name
        )

    def __hash__(self) -> int:
        return hash((id(self._client), self._name))


class Queue(_Handle):
    """One queue of a blocking ``echomq.Client``."""

    __slots__ = ()

    def __init__(self, client: "Client", name: str) -> None:
        super().__init__(client, name)

    @property
    def client(self) -> "Client":
        return cast("Client", self._client)

    def enqueue(
        self,
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
        return self.client.enqueue(
            self._name,
            payload,
            id=id,
            run_at_ms=run_at_ms,
            delay_ms=delay_ms,
            dedup_id=dedup_id,
            dedup_ttl_ms=dedup_ttl_ms,
        )

    def enqueue_many(self, payloads: Iterable[Payload]) -> List[Union[Enqueued, EchoMQError]]:
        return self.client.enqueue_many(self._name, payloads)

    def claim(self, lease_ms: Duration) -> Optional[Job]:
        return self.client.claim(self._name, lease_ms)

    def claim_many(self, max: int, lease_ms: Duration) -> List[Job]:
        return self.client.claim_many(self._name, max, lease_ms)

    def complete(self, id: str, token: int) -> None:
        self.client.complete(self._name, id, token)

    def complete_many(self, jobs: Iterable[IdToken]) -> List[Optional[EchoMQError]]:
        return self.client.complete_many(self._name, jobs)

    def retry(
        self,
        id: str,
        token: int,
        *,
        delay_ms: Optional[Duration] = None,
        max_attempts: Optional[int] = None,
        error: Optional[str] = None,
    ) -> Literal["scheduled", "dead"]:
        return self.client.retry(
            self._name, id, token, delay_ms=delay_ms, max_attempts=max_attempts, error=error
        )

    def extend(self, id: str, token: int, lease_ms: Duration) -> None:
        self.client.extend(self._name, id, token, lease_ms)

    def extend_many(
        self, jobs: Iterable[IdToken], lease_ms: Duration
    ) -> List[Optional[EchoMQError]]:
        return self.client.extend_many(self._name, jobs, lease_ms)

    def promote(self, limit: Optional[int] = None) -> int:
        return self.client.promote(self._name, limit)

    def reap(self, limit: Optional[int] = None) -> int:
        return self.client.reap(self._name, limit)

    def reap_stalled(self, limit: int, max_stalls: int) -> Reaped:
        return self.client.reap_stalled(self._name, limit, max_stalls)

    def set_concurrency(self, n: int) -> None:
        self.client.set_concurrency(self._name, n)

    def set_rate_limit(self, max: int, per_ms: Duration) -> None:
        self.client.set_rate_limit(self._name, max, per_ms)

    def rate_limit(self, id: str, token: int, ms: Duration) -> None:
        self.client.rate_limit(self._name, id, token, ms)

    def counts(self) -> Counts:
        return self.client.counts(self._name)

    def job(self, id: str) -> Optional[JobInfo]:
        return self.client.job(self._name, id)

    def browse(
        self,
        set: BrowseSet,
        *,
        newest_first: bool = False,
        limit: Optional[int] = None,
        range: Optional[Tuple[Time, Time]] = None,
    ) -> List[str]:
        return self.client.browse(
            self._name, set, newest_first=newest_first, limit=limit, range=range
        )

    def pause(self) -> None:
        self.client.pause(self._name)

    def resume(self) -> None:
        self.client.resume(self._name)

    def is_paused(self) -> bool:
        return self.client.is_paused(self._name)

    def requeue_dead(self, id: str) -> None:
        self.client.requeue_dead(self._name, id)

    def remove(self, id: str) -> None:
        self.client.remove(self._name, id)

    def drain(self, include_scheduled: bool = False, limit: Optional[int] = None) -> int:
        return self.client.drain(self._name, include_scheduled, limit)

    def purge_dead(
        self, older_than_ms: Optional[Duration] = None, limit: Optional[int] = None
    ) -> int:
        return self.client.purge_dead(self._name, older_than_ms, limit)

    def requeue_all_dead(self, limit: Optional[int] = None) -> int:
        return self.client.requeue_all_dead(self._name, limit)

    def subscribe(self) -> Subscription:
        return self.client.subscribe(self._name)

    def wait_for(self, id: str, timeout_ms: Duration) -> Settled:
        return self.client.wait_for(self._name, id, timeout_ms)

    def logs(self, id: str, start: int = 0, end: int = -1) -> List[str]:
        return self.client.logs(self._name, id, start, end)

    def result(self, id: str) -> Optional[bytes]:
        return self.client.result(self._name, id)

    def wait_for_result(self, id: str, timeout_ms: Duration) -> bytes:
        return self.client.wait_for_result(self._name, id, timeout_ms)

    def worker(self, handler: "Handler", **options: Any) -> "Worker":
        """``echomq.Worker(client, name, handler, **options)``."""
        from ._worker import Worker

        return Worker(self.client, self._name, handler, **options)


class AsyncQueue(_Handle):
    """One queue of an ``echomq.AsyncClient``; every verb is a coroutine."""

    __slots__ = ()

    def __init__(self, client: "AsyncClient", name: str) -> None:
        super().__init__(client, name)

    @property
    def client(self) -> "AsyncClient":
        return cast("AsyncClient", self._client)

    async def enqueue(
        self,
        payload: Payload,
        *,
        id: Optional[str] = None,
        run_at_ms: Optional[Time] = None,
        delay_ms: Optional[Duration] = None,
        dedup_id: Optional[str] = None,
        dedup_ttl_ms: Optional[Duration] = None,
    ) -> Enqueued:
        return await self.client.enqueue(
            self._name,
            payload,
            id=id,
            run_at_ms=run_at_ms,
            delay_ms=delay_ms,
            dedup_id=dedup_id,
            dedup_ttl_ms=dedup_ttl_ms,
        )

    async def enqueue_many(
        self, payloads: Iterable[Payload]
    ) -> List[Union[Enqueued, EchoMQError]]:
        return await self.client.enqueue_many(self._name, payloads)

    async def claim(self, lease_ms: Duration) -> Optional[Job]:
        return await self.client.claim(self._name, lease_ms)

    async def claim_many(self, max: int, lease_ms: Duration) -> List[Job]:
        return await self.client.claim_many(self._name, max, lease_ms)

    async def complete(self, id: str, token: int) -> None:
        await self.client.complete(self._name, id, token)

    async def complete_many(self, jobs: Iterable[IdToken]) -> List[Optional[EchoMQError]]:
        return await self.client.complete_many(self._name, jobs)

    async def retry(
        self,
        id: str,
        token: int,
        *,
        delay_ms: Optional[Duration] = None,
        max_attempts: Optional[int] = None,
        error: Optional[str] = None,
    ) -> Literal["scheduled", "dead"]:
        return await self.client.retry(
            self._name, id, token, delay_ms=delay_ms, max_attempts=max_attempts, error=error
        )

    async def extend(self, id: str, token: int, lease_ms: Duration) -> None:
        await self.client.extend(self._name, id, token, lease_ms)

    async def extend_many(
        self, jobs: Iterable[IdToken], lease_ms: Duration
    ) -> List[Optional[EchoMQError]]:
        return await self.client.extend_many(self._name, jobs, lease_ms)

    async def promote(self, limit: Optional[int] = None) -> int:
        return await self.client.promote(self._name, limit)

    async def reap(self, limit: Optional[int] = None) -> int:
        return await self.client.reap(self._name, limit)

    async def reap_stalled(self, limit: int, max_stalls: int) -> Reaped:
        return await self.client.reap_stalled(self._name, limit, max_stalls)

    async def set_concurrency(self, n: int) -> None:
        await self.client.set_concurrency(self._name, n)

    async def set_rate_limit(self, max: int, per_ms: Duration) -> None:
        await self.client.set_rate_limit(self._name, max, per_ms)

    async def rate_limit(self, id: str, token: int, ms: Duration) -> None:
        await self.client.rate_limit(self._name, id, token, ms)

    async def counts(self) -> Counts:
        return await self.client.counts(self._name)

    async def job(self, id: str) -> Optional[JobInfo]:
        return await self.client.job(self._name, id)

    async def browse(
        self,
        set: BrowseSet,
        *,
        newest_first: bool = False,
        limit: Optional[int] = None,
        range: Optional[Tuple[Time, Time]] = None,
    ) -> List[str]:
        return await self.client.browse(
            self._name, set, newest_first=newest_first, limit=limit, range=range
        )

    async def pause(self) -> None:
        await self.client.pause(self._name)

    async def resume(self) -> None:
        await self.client.resume(self._name)

    async def is_paused(self) -> bool:
        return await self.client.is_paused(self._name)

    async def requeue_dead(self, id: str) -> None:
        await self.client.requeue_dead(self._name, id)

    async def remove(self, id: str) -> None:
        await self.client.remove(self._name, id)

    async def drain(self, include_scheduled: bool = False, limit: Optional[int] = None) -> int:
        return await self.client.drain(self._name, include_scheduled, limit)

    async def purge_dead(
        self, older_than_ms: Optional[Duration] = None, limit: Optional[int] = None
    ) -> int:
        return await self.client.purge_dead(self._name, older_than_ms, limit)

    async def requeue_all_dead(self, limit: Optional[int] = None) -> int:
        return await self.client.requeue_all_dead(self._name, limit)

    async def subscribe(self) -> Subscription:
        return await self.client.subscribe(self._name)

    async def wait_for(self, id: str, timeout_ms: Duration) -> Settled:
        return await self.client.wait_for(self._name, id, timeout_ms)

    async def logs(self, id: str, start: int = 0, end: int = -1) -> List[str]:
        return await self.client.logs(self._name, id, start, end)

    async def result(self, id: str) -> Optional[bytes]:
        return await self.client.result(self._name, id)

    async def wait_for_result(self, id: str, timeout_ms: Duration) -> bytes:
        return await self.client.wait_for_result(self._name, id, timeout_ms)

    def worker(self, handler: "Handler", **options: Any) -> "Worker":
        """``echomq.Worker(client, name, handler, **options)`` (run it with
        ``await worker.run_async()``)."""
        from ._worker import Worker

        return Worker(self.client, self._name, handler, **options)
