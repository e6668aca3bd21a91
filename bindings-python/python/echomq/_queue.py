"""Queue handles: ``client.queue("emails")`` answers one of these, so the
queue's verbs do not repeat its name. A handle is the client plus the (checked)
name; its verbs come from the same declaration as the clients'
(``src/surface.rs``), so there is nothing here to keep in step with the core
(its Rust twin is ``echomq::Queue``). This module adds the one method that is
Python's own, ``worker``.

The client-level verbs (``queues``, ``metrics_text``, ``close``, ...) stay on
the client; ``handle.client`` reaches it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Tuple, TypedDict, Union, cast

from . import _native

if TYPE_CHECKING:
    from ._aio import AsyncClient
    from ._worker import Handler, Worker

__all__ = ["Queue", "AsyncQueue", "Duration", "Time", "EnqueueOptions", "EnqueueItem"]

Payload = Union[bytes, str, bytearray, memoryview]
Duration = Union[int, timedelta]
"""Milliseconds as an ``int``, or a ``datetime.timedelta``."""
Time = Union[int, datetime]
"""Unix milliseconds as an ``int``, or a ``datetime.datetime`` (naive = local time)."""


class EnqueueOptions(TypedDict, total=False):
    """One ``enqueue_many`` item's options: ``enqueue``'s keywords, as a dict
    (``{"delay_ms": 5000}``); a key left out (or ``None``) is not given."""

    id: str
    run_at_ms: Time
    delay_ms: Duration
    dedup_id: str
    dedup_ttl_ms: Duration
    priority: int


EnqueueItem = Union[Payload, Tuple[Payload, EnqueueOptions]]
"""One ``enqueue_many`` item: a payload, or ``(payload, options)``."""


class Queue(_native.NativeQueue):
    """One queue of a blocking ``echomq.Client``."""

    __slots__ = ()

    def worker(self, handler: "Handler", **options: Any) -> "Worker":
        """``echomq.Worker(client, name, handler, **options)``."""
        from ._worker import Worker

        return Worker(self.client, self.name, handler, **options)


class AsyncQueue(_native.NativeAsyncQueue):
    """One queue of an ``echomq.AsyncClient``; every verb answers a coroutine."""

    __slots__ = ()

    @property
    def client(self) -> "AsyncClient":
        return cast("AsyncClient", super().client)

    def worker(self, handler: "Handler", **options: Any) -> "Worker":
        """``echomq.Worker(client, name, handler, **options)`` (run it with
        ``await worker.run_async()``)."""
        from ._worker import Worker

        return Worker(self.client, self.name, handler, **options)
