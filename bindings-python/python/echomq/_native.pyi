# Type stubs for the compiled module echomq._native (pyo3). Public names are
# re-exported by echomq/__init__.py; keep this file in step with src/*.rs.

import asyncio
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any, Callable, Dict, Iterable, List, Literal, Optional, Tuple, Type, Union, final

from ._errors import EchoMQError
from ._queue import EnqueueItem, Queue

_Duration = Union[int, timedelta]
_Time = Union[int, datetime]

_Payload = Union[bytes, str, bytearray, memoryview]
_IdToken = Union["Job", Tuple[str, int]]
_BrowseSet = Literal["pending", "dead", "schedule", "scheduled", "active"]
_Outcome = Literal["scheduled", "dead"]

PROTOCOL_VERSION: str
WORKER_EVENTS: Tuple[str, ...]
DEFAULT_MAX_PAYLOAD: int
__version__: str

@final
class Enqueued:
    """The answer to an enqueue: the id (the receipt) and whether it already existed."""
    @property
    def id(self) -> str: ...
    @property
    def duplicate(self) -> bool: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Job:
    """A claimed job: settle it with ``id`` and ``token``."""
    @property
    def id(self) -> str: ...
    @property
    def payload(self) -> bytes: ...
    @property
    def token(self) -> int: ...
    @property
    def attempts(self) -> int:
        """Which attempt this claim is (1 on the first claim)."""
    def __eq__(self, other: object) -> bool: ...
    def update_progress(self, value: object) -> None:
        """As its holder: record this job's progress (any JSON-able value)."""
    def log(self, line: str, max_lines: Optional[int] = None) -> int:
        """Append a line to this job's log; answers the log's length."""

@final
class Reaped:
    """What one stall-capped reap did (ids, in lease-deadline order)."""

    @property
    def recovered(self) -> List[str]: ...
    @property
    def dead(self) -> List[str]: ...

@final
class Repeat:
    """A repeatable job as stored (wire 2.1.0): its schedule (``every_ms``, or
    ``cron`` read in ``tz``), the payload each fired job carries, the slot it
    waits for (unix ms, server clock) and what it fired."""

    @property
    def name(self) -> str: ...
    @property
    def every_ms(self) -> Optional[int]: ...
    @property
    def cron(self) -> Optional[str]: ...
    @property
    def tz(self) -> Optional[str]: ...
    @property
    def payload(self) -> bytes: ...
    @property
    def next_run_ms(self) -> int: ...
    @property
    def start_at(self) -> Optional[int]: ...
    @property
    def end_at(self) -> Optional[int]: ...
    @property
    def limit(self) -> Optional[int]: ...
    @property
    def count(self) -> int: ...
    @property
    def last_run_ms(self) -> Optional[int]: ...
    @property
    def last_id(self) -> Optional[str]: ...

@final
class Counts:
    @property
    def pending(self) -> int: ...
    @property
    def active(self) -> int: ...
    @property
    def scheduled(self) -> int: ...
    @property
    def dead(self) -> int: ...
    @property
    def completed(self) -> int: ...
    @property
    def failed(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class JobInfo:
    """A job row as stored."""
    @property
    def id(self) -> str: ...
    @property
    def state(self) -> Literal["pending", "active", "scheduled", "dead", "unknown"]:
        """``unknown``: a state another runtime wrote (the word is ``raw_state``)."""
    @property
    def raw_state(self) -> str:
        """The row's ``state`` field as stored."""
    @property
    def attempts(self) -> int: ...
    @property
    def payload(self) -> bytes: ...
    @property
    def last_error(self) -> Optional[str]: ...
    @property
    def progress(self) -> object:
        """The last progress the holder wrote (a JSON value), or ``None``."""

@final
class BundleMismatch:
    @property
    def field(self) -> str: ...
    @property
    def ours(self) -> str: ...
    @property
    def theirs(self) -> str: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class WorkerStats:
    @property
    def claimed(self) -> int: ...
    @property
    def completed(self) -> int: ...
    @property
    def retried(self) -> int: ...
    @property
    def dead(self) -> int: ...
    @property
    def lease_lost(self) -> int: ...
    @property
    def in_flight(self) -> int: ...
    @property
    def claim_failures(self) -> int: ...
    @property
    def heartbeat_failures(self) -> int: ...
    @property
    def settle_failures(self) -> int: ...
    @property
    def released(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class ParsedId:
    @property
    def namespace(self) -> str: ...
    @property
    def snowflake(self) -> int: ...
    @property
    def minted_at_ms(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class KeyClass:
    @property
    def class_(self) -> Literal["queue", "job", "metric", "reserve", "unclassified"]: ...
    @property
    def queue(self) -> Optional[str]: ...
    @property
    def key_type(self) -> Optional[str]: ...
    @property
    def id(self) -> Optional[str]: ...
    @property
    def member(self) -> Optional[str]: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Client:
    """A blocking client. Thread-safe: share one; every call releases the GIL."""
    @property
    def node_id(self) -> int: ...
    def __enter__(self) -> Client: ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None: ...
    def close(self) -> None: ...
    def queue(self, name: str) -> Queue: ...
    def bundle_mismatches(self) -> List[BundleMismatch]: ...
    # ---- the verbs: rendered from src/surface.rs (tests/test_stub.py) ----
    def enqueue(
        self,
        queue: str,
        payload: _Payload,
        *,
        id: Optional[str] = None,
        run_at_ms: Optional[_Time] = None,
        delay_ms: Optional[_Duration] = None,
        dedup_id: Optional[str] = None,
        dedup_ttl_ms: Optional[_Duration] = None,
        priority: Optional[int] = None,
    ) -> Enqueued:
        """Enqueue now, or later (``run_at_ms`` or ``delay_ms``, not both), under a
        minted id or the given ``id``; or deduplicated by ``dedup_id`` for
        ``dedup_ttl_ms`` (not with the others). ``priority`` (wire 2.2.0,
        ``1..=1000000``, higher claimed first; ``0``/``None``: none) combines
        with any of them."""
    def enqueue_many(
        self,
        queue: str,
        items: Iterable[EnqueueItem],
    ) -> List[Union[Enqueued, EchoMQError]]:
        """Enqueue a batch in one pipeline: each item a payload or ``(payload,
        {enqueue's keywords})``; every item is checked before anything is
        sent; one verdict per item, in input order."""
    def claim(self, queue: str, lease_ms: _Duration) -> Optional[Job]: ...
    def claim_many(self, queue: str, max: int, lease_ms: _Duration) -> List[Job]: ...
    def complete(self, queue: str, id: str, token: int) -> None: ...
    def complete_many(
        self,
        queue: str,
        jobs: Iterable[_IdToken],
    ) -> List[Optional[EchoMQError]]: ...
    def retry(
        self,
        queue: str,
        id: str,
        token: int,
        delay_ms: Optional[_Duration] = None,
        max_attempts: Optional[int] = None,
        error: Optional[str] = None,
    ) -> _Outcome:
        """Settle a failed attempt; omitted options take the core's defaults
        (``delay_ms`` 0, ``max_attempts`` 5, ``error`` empty)."""
    def extend(self, queue: str, id: str, token: int, lease_ms: _Duration) -> None: ...
    def extend_many(
        self,
        queue: str,
        jobs: Iterable[_IdToken],
        lease_ms: _Duration,
    ) -> List[Optional[EchoMQError]]: ...
    def rate_limit(self, queue: str, id: str, token: int, ms: _Duration) -> None: ...
    def update_progress(self, queue: str, id: str, token: int, value: object) -> None:
        """The holder records how far job ``id`` got (any JSON-able value)."""
    def log(self, queue: str, id: str, line: str, max_lines: Optional[int] = None) -> int:
        """Append a line to job ``id``'s log (the newest ``max_lines`` are
        kept); answers the log's length."""
    def promote(self, queue: str, limit: Optional[int] = None) -> int: ...
    def reap(self, queue: str, limit: Optional[int] = None) -> int: ...
    def reap_stalled(self, queue: str, limit: int, max_stalls: int) -> Reaped: ...
    def fire_repeats(self, queue: str, limit: Optional[int] = None) -> int: ...
    def counts(self, queue: str) -> Counts: ...
    def job(self, queue: str, id: str) -> Optional[JobInfo]: ...
    def exists(self, queue: str, id: str) -> bool:
        """Whether job ``id``'s row exists (in any state)."""
    def browse(
        self,
        queue: str,
        set: _BrowseSet,
        newest_first: bool = False,
        limit: Optional[int] = None,
        range: Optional[Tuple[_Time, _Time]] = None,
    ) -> List[str]: ...
    def logs(self, queue: str, id: str, start: int = 0, end: int = -1) -> List[str]:
        """Lines ``start..=end`` of job ``id``'s log (LRANGE indexes)."""
    def result(self, queue: str, id: str) -> Optional[bytes]:
        """The result a worker kept for job ``id`` (``keep_result_ms``), or ``None``."""
    def wait_for(self, queue: str, id: str, timeout_ms: _Duration) -> Settled:
        """Wait for job ``id`` to complete or go dead (``TimeoutError`` after ``timeout_ms``)."""
    def wait_for_result(self, queue: str, id: str, timeout_ms: _Duration) -> bytes:
        """Wait for job ``id``'s kept result: ``JobDeadError`` if it went dead,
        ``JobGoneError`` if it has no row and no result, ``TimeoutError``."""
    def is_paused(self, queue: str) -> bool: ...
    def list_repeats(self, queue: str) -> List[Repeat]: ...
    def subscribe(self, queue: str) -> Subscription:
        """Subscribe to ``emq:{q}:events`` on a connection of its own."""
    def pause(self, queue: str) -> None: ...
    def resume(self, queue: str) -> None: ...
    def set_concurrency(self, queue: str, n: int) -> None: ...
    def set_rate_limit(self, queue: str, max: int, per_ms: _Duration) -> None: ...
    def requeue_dead(self, queue: str, id: str) -> None: ...
    def requeue_all_dead(self, queue: str, limit: Optional[int] = None) -> int: ...
    def remove(self, queue: str, id: str) -> None: ...
    def drain(
        self,
        queue: str,
        include_scheduled: bool = False,
        limit: Optional[int] = None,
    ) -> int: ...
    def purge_dead(
        self,
        queue: str,
        older_than_ms: Optional[_Duration] = None,
        limit: Optional[int] = None,
    ) -> int: ...
    def upsert_repeat(
        self,
        queue: str,
        name: str,
        *,
        every_ms: Optional[_Duration] = None,
        cron: Optional[str] = None,
        tz: Optional[str] = None,
        payload: Optional[_Payload] = None,
        start_at: Optional[_Time] = None,
        end_at: Optional[_Time] = None,
        limit: Optional[int] = None,
    ) -> Repeat:
        """Create or update the repeatable job ``name`` (exactly one of
        ``every_ms`` and ``cron``; the checks are the core's)."""
    def remove_repeat(self, queue: str, name: str) -> bool: ...
    def queues(self) -> List[str]: ...
    def metrics_text(self, queues: List[str]) -> str:
        """Prometheus text exposition for ``queues``."""
    # ---- end of the rendered verbs ----

def connect(
    url: Optional[str] = None,
    *,
    node_id: Optional[int] = None,
    client_name: Optional[str] = None,
    connect_timeout_ms: Optional[_Duration] = None,
    response_timeout_ms: Optional[_Duration] = None,
    max_payload: Optional[int] = None,
    strict_bundle: bool = False,
    publish_events: bool = True,
    wire_version: Optional[str] = None,
    wait_replicas: int = 0,
    wait_timeout_ms: int = 1000,
) -> Client:
    """Connect (and fence) a blocking client. No ``url``: ``EMQ_URL`` when
    set, else ``redis://127.0.0.1:6379/``."""

def connect_async(
    url: Optional[str] = None,
    *,
    node_id: Optional[int] = None,
    client_name: Optional[str] = None,
    connect_timeout_ms: Optional[_Duration] = None,
    response_timeout_ms: Optional[_Duration] = None,
    max_payload: Optional[int] = None,
    strict_bundle: bool = False,
    publish_events: bool = True,
    wire_version: Optional[str] = None,
    wait_replicas: int = 0,
    wait_timeout_ms: int = 1000,
) -> asyncio.Future[NativeAsyncClient]: ...

class NativeAsyncClient:
    """The native half of ``echomq.AsyncClient`` (its subclass): every verb
    answers a coroutine, which starts the call when first awaited."""
    def __init__(self, native: NativeAsyncClient) -> None: ...
    @property
    def node_id(self) -> int: ...
    def close(self) -> None:
        """Blocking (GIL released), for a caller outside a coroutine."""
    def _aclose(self) -> asyncio.Future[None]: ...
    def bundle_mismatches(self) -> List[BundleMismatch]: ...
    # ---- the verbs: rendered from src/surface.rs (tests/test_stub.py) ----
    async def enqueue(
        self,
        queue: str,
        payload: _Payload,
        *,
        id: Optional[str] = None,
        run_at_ms: Optional[_Time] = None,
        delay_ms: Optional[_Duration] = None,
        dedup_id: Optional[str] = None,
        dedup_ttl_ms: Optional[_Duration] = None,
        priority: Optional[int] = None,
    ) -> Enqueued:
        """Enqueue now, or later (``run_at_ms`` or ``delay_ms``, not both), under a
        minted id or the given ``id``; or deduplicated by ``dedup_id`` for
        ``dedup_ttl_ms`` (not with the others). ``priority`` (wire 2.2.0,
        ``1..=1000000``, higher claimed first; ``0``/``None``: none) combines
        with any of them."""
    async def enqueue_many(
        self,
        queue: str,
        items: Iterable[EnqueueItem],
    ) -> List[Union[Enqueued, EchoMQError]]:
        """Enqueue a batch in one pipeline: each item a payload or ``(payload,
        {enqueue's keywords})``; every item is checked before anything is
        sent; one verdict per item, in input order."""
    async def claim(self, queue: str, lease_ms: _Duration) -> Optional[Job]: ...
    async def claim_many(self, queue: str, max: int, lease_ms: _Duration) -> List[Job]: ...
    async def complete(self, queue: str, id: str, token: int) -> None: ...
    async def complete_many(
        self,
        queue: str,
        jobs: Iterable[_IdToken],
    ) -> List[Optional[EchoMQError]]: ...
    async def retry(
        self,
        queue: str,
        id: str,
        token: int,
        delay_ms: Optional[_Duration] = None,
        max_attempts: Optional[int] = None,
        error: Optional[str] = None,
    ) -> _Outcome:
        """Settle a failed attempt; omitted options take the core's defaults
        (``delay_ms`` 0, ``max_attempts`` 5, ``error`` empty)."""
    async def extend(self, queue: str, id: str, token: int, lease_ms: _Duration) -> None: ...
    async def extend_many(
        self,
        queue: str,
        jobs: Iterable[_IdToken],
        lease_ms: _Duration,
    ) -> List[Optional[EchoMQError]]: ...
    async def rate_limit(self, queue: str, id: str, token: int, ms: _Duration) -> None: ...
    async def update_progress(self, queue: str, id: str, token: int, value: object) -> None:
        """The holder records how far job ``id`` got (any JSON-able value)."""
    async def log(self, queue: str, id: str, line: str, max_lines: Optional[int] = None) -> int:
        """Append a line to job ``id``'s log (the newest ``max_lines`` are
        kept); answers the log's length."""
    async def promote(self, queue: str, limit: Optional[int] = None) -> int: ...
    async def reap(self, queue: str, limit: Optional[int] = None) -> int: ...
    async def reap_stalled(self, queue: str, limit: int, max_stalls: int) -> Reaped: ...
    async def fire_repeats(self, queue: str, limit: Optional[int] = None) -> int: ...
    async def counts(self, queue: str) -> Counts: ...
    async def job(self, queue: str, id: str) -> Optional[JobInfo]: ...
    async def exists(self, queue: str, id: str) -> bool:
        """Whether job ``id``'s row exists (in any state)."""
    async def browse(
        self,
        queue: str,
        set: _BrowseSet,
        newest_first: bool = False,
        limit: Optional[int] = None,
        range: Optional[Tuple[_Time, _Time]] = None,
    ) -> List[str]: ...
    async def logs(self, queue: str, id: str, start: int = 0, end: int = -1) -> List[str]:
        """Lines ``start..=end`` of job ``id``'s log (LRANGE indexes)."""
    async def result(self, queue: str, id: str) -> Optional[bytes]:
        """The result a worker kept for job ``id`` (``keep_result_ms``), or ``None``."""
    async def wait_for(self, queue: str, id: str, timeout_ms: _Duration) -> Settled:
        """Wait for job ``id`` to complete or go dead (``TimeoutError`` after ``timeout_ms``)."""
    async def wait_for_result(self, queue: str, id: str, timeout_ms: _Duration) -> bytes:
        """Wait for job ``id``'s kept result: ``JobDeadError`` if it went dead,
        ``JobGoneError`` if it has no row and no result, ``TimeoutError``."""
    async def is_paused(self, queue: str) -> bool: ...
    async def list_repeats(self, queue: str) -> List[Repeat]: ...
    async def subscribe(self, queue: str) -> Subscription:
        """Subscribe to ``emq:{q}:events`` on a connection of its own."""
    async def pause(self, queue: str) -> None: ...
    async def resume(self, queue: str) -> None: ...
    async def set_concurrency(self, queue: str, n: int) -> None: ...
    async def set_rate_limit(self, queue: str, max: int, per_ms: _Duration) -> None: ...
    async def requeue_dead(self, queue: str, id: str) -> None: ...
    async def requeue_all_dead(self, queue: str, limit: Optional[int] = None) -> int: ...
    async def remove(self, queue: str, id: str) -> None: ...
    async def drain(
        self,
        queue: str,
        include_scheduled: bool = False,
        limit: Optional[int] = None,
    ) -> int: ...
    async def purge_dead(
        self,
        queue: str,
        older_than_ms: Optional[_Duration] = None,
        limit: Optional[int] = None,
    ) -> int: ...
    async def upsert_repeat(
        self,
        queue: str,
        name: str,
        *,
        every_ms: Optional[_Duration] = None,
        cron: Optional[str] = None,
        tz: Optional[str] = None,
        payload: Optional[_Payload] = None,
        start_at: Optional[_Time] = None,
        end_at: Optional[_Time] = None,
        limit: Optional[int] = None,
    ) -> Repeat:
        """Create or update the repeatable job ``name`` (exactly one of
        ``every_ms`` and ``cron``; the checks are the core's)."""
    async def remove_repeat(self, queue: str, name: str) -> bool: ...
    async def queues(self) -> List[str]: ...
    async def metrics_text(self, queues: List[str]) -> str:
        """Prometheus text exposition for ``queues``."""
    # ---- end of the rendered verbs ----

class NativeQueue:
    """The native half of ``echomq.Queue``: a blocking client and a checked
    queue name (``InvalidQueueError`` at construction)."""
    def __init__(self, client: Client, name: str) -> None: ...
    @property
    def name(self) -> str:
        """The queue's name."""
    @property
    def client(self) -> Client: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
    # ---- the verbs: rendered from src/surface.rs (tests/test_stub.py) ----
    def enqueue(
        self,
        payload: _Payload,
        *,
        id: Optional[str] = None,
        run_at_ms: Optional[_Time] = None,
        delay_ms: Optional[_Duration] = None,
        dedup_id: Optional[str] = None,
        dedup_ttl_ms: Optional[_Duration] = None,
        priority: Optional[int] = None,
    ) -> Enqueued:
        """Enqueue now, or later (``run_at_ms`` or ``delay_ms``, not both), under a
        minted id or the given ``id``; or deduplicated by ``dedup_id`` for
        ``dedup_ttl_ms`` (not with the others). ``priority`` (wire 2.2.0,
        ``1..=1000000``, higher claimed first; ``0``/``None``: none) combines
        with any of them."""
    def enqueue_many(self, items: Iterable[EnqueueItem]) -> List[Union[Enqueued, EchoMQError]]:
        """Enqueue a batch in one pipeline: each item a payload or ``(payload,
        {enqueue's keywords})``; every item is checked before anything is
        sent; one verdict per item, in input order."""
    def claim(self, lease_ms: _Duration) -> Optional[Job]: ...
    def claim_many(self, max: int, lease_ms: _Duration) -> List[Job]: ...
    def complete(self, id: str, token: int) -> None: ...
    def complete_many(self, jobs: Iterable[_IdToken]) -> List[Optional[EchoMQError]]: ...
    def retry(
        self,
        id: str,
        token: int,
        delay_ms: Optional[_Duration] = None,
        max_attempts: Optional[int] = None,
        error: Optional[str] = None,
    ) -> _Outcome:
        """Settle a failed attempt; omitted options take the core's defaults
        (``delay_ms`` 0, ``max_attempts`` 5, ``error`` empty)."""
    def extend(self, id: str, token: int, lease_ms: _Duration) -> None: ...
    def extend_many(
        self,
        jobs: Iterable[_IdToken],
        lease_ms: _Duration,
    ) -> List[Optional[EchoMQError]]: ...
    def rate_limit(self, id: str, token: int, ms: _Duration) -> None: ...
    def update_progress(self, id: str, token: int, value: object) -> None:
        """The holder records how far job ``id`` got (any JSON-able value)."""
    def log(self, id: str, line: str, max_lines: Optional[int] = None) -> int:
        """Append a line to job ``id``'s log (the newest ``max_lines`` are
        kept); answers the log's length."""
    def promote(self, limit: Optional[int] = None) -> int: ...
    def reap(self, limit: Optional[int] = None) -> int: ...
    def reap_stalled(self, limit: int, max_stalls: int) -> Reaped: ...
    def fire_repeats(self, limit: Optional[int] = None) -> int: ...
    def counts(self) -> Counts: ...
    def job(self, id: str) -> Optional[JobInfo]: ...
    def exists(self, id: str) -> bool:
        """Whether job ``id``'s row exists (in any state)."""
    def browse(
        self,
        set: _BrowseSet,
        newest_first: bool = False,
        limit: Optional[int] = None,
        range: Optional[Tuple[_Time, _Time]] = None,
    ) -> List[str]: ...
    def logs(self, id: str, start: int = 0, end: int = -1) -> List[str]:
        """Lines ``start..=end`` of job ``id``'s log (LRANGE indexes)."""
    def result(self, id: str) -> Optional[bytes]:
        """The result a worker kept for job ``id`` (``keep_result_ms``), or ``None``."""
    def wait_for(self, id: str, timeout_ms: _Duration) -> Settled:
        """Wait for job ``id`` to complete or go dead (``TimeoutError`` after ``timeout_ms``)."""
    def wait_for_result(self, id: str, timeout_ms: _Duration) -> bytes:
        """Wait for job ``id``'s kept result: ``JobDeadError`` if it went dead,
        ``JobGoneError`` if it has no row and no result, ``TimeoutError``."""
    def is_paused(self) -> bool: ...
    def list_repeats(self) -> List[Repeat]: ...
    def subscribe(self) -> Subscription:
        """Subscribe to ``emq:{q}:events`` on a connection of its own."""
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def set_concurrency(self, n: int) -> None: ...
    def set_rate_limit(self, max: int, per_ms: _Duration) -> None: ...
    def requeue_dead(self, id: str) -> None: ...
    def requeue_all_dead(self, limit: Optional[int] = None) -> int: ...
    def remove(self, id: str) -> None: ...
    def drain(self, include_scheduled: bool = False, limit: Optional[int] = None) -> int: ...
    def purge_dead(
        self,
        older_than_ms: Optional[_Duration] = None,
        limit: Optional[int] = None,
    ) -> int: ...
    def upsert_repeat(
        self,
        name: str,
        *,
        every_ms: Optional[_Duration] = None,
        cron: Optional[str] = None,
        tz: Optional[str] = None,
        payload: Optional[_Payload] = None,
        start_at: Optional[_Time] = None,
        end_at: Optional[_Time] = None,
        limit: Optional[int] = None,
    ) -> Repeat:
        """Create or update the repeatable job ``name`` (exactly one of
        ``every_ms`` and ``cron``; the checks are the core's)."""
    def remove_repeat(self, name: str) -> bool: ...
    # ---- end of the rendered verbs ----

class NativeAsyncQueue:
    """The native half of ``echomq.AsyncQueue``: every verb answers a coroutine."""
    def __init__(self, client: NativeAsyncClient, name: str) -> None: ...
    @property
    def name(self) -> str:
        """The queue's name."""
    @property
    def client(self) -> NativeAsyncClient: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
    # ---- the verbs: rendered from src/surface.rs (tests/test_stub.py) ----
    async def enqueue(
        self,
        payload: _Payload,
        *,
        id: Optional[str] = None,
        run_at_ms: Optional[_Time] = None,
        delay_ms: Optional[_Duration] = None,
        dedup_id: Optional[str] = None,
        dedup_ttl_ms: Optional[_Duration] = None,
        priority: Optional[int] = None,
    ) -> Enqueued:
        """Enqueue now, or later (``run_at_ms`` or ``delay_ms``, not both), under a
        minted id or the given ``id``; or deduplicated by ``dedup_id`` for
        ``dedup_ttl_ms`` (not with the others). ``priority`` (wire 2.2.0,
        ``1..=1000000``, higher claimed first; ``0``/``None``: none) combines
        with any of them."""
    async def enqueue_many(
        self,
        items: Iterable[EnqueueItem],
    ) -> List[Union[Enqueued, EchoMQError]]:
        """Enqueue a batch in one pipeline: each item a payload or ``(payload,
        {enqueue's keywords})``; every item is checked before anything is
        sent; one verdict per item, in input order."""
    async def claim(self, lease_ms: _Duration) -> Optional[Job]: ...
    async def claim_many(self, max: int, lease_ms: _Duration) -> List[Job]: ...
    async def complete(self, id: str, token: int) -> None: ...
    async def complete_many(self, jobs: Iterable[_IdToken]) -> List[Optional[EchoMQError]]: ...
    async def retry(
        self,
        id: str,
        token: int,
        delay_ms: Optional[_Duration] = None,
        max_attempts: Optional[int] = None,
        error: Optional[str] = None,
    ) -> _Outcome:
        """Settle a failed attempt; omitted options take the core's defaults
        (``delay_ms`` 0, ``max_attempts`` 5, ``error`` empty)."""
    async def extend(self, id: str, token: int, lease_ms: _Duration) -> None: ...
    async def extend_many(
        self,
        jobs: Iterable[_IdToken],
        lease_ms: _Duration,
    ) -> List[Optional[EchoMQError]]: ...
    async def rate_limit(self, id: str, token: int, ms: _Duration) -> None: ...
    async def update_progress(self, id: str, token: int, value: object) -> None:
        """The holder records how far job ``id`` got (any JSON-able value)."""
    async def log(self, id: str, line: str, max_lines: Optional[int] = None) -> int:
        """Append a line to job ``id``'s log (the newest ``max_lines`` are
        kept); answers the log's length."""
    async def promote(self, limit: Optional[int] = None) -> int: ...
    async def reap(self, limit: Optional[int] = None) -> int: ...
    async def reap_stalled(self, limit: int, max_stalls: int) -> Reaped: ...
    async def fire_repeats(self, limit: Optional[int] = None) -> int: ...
    async def counts(self) -> Counts: ...
    async def job(self, id: str) -> Optional[JobInfo]: ...
    async def exists(self, id: str) -> bool:
        """Whether job ``id``'s row exists (in any state)."""
    async def browse(
        self,
        set: _BrowseSet,
        newest_first: bool = False,
        limit: Optional[int] = None,
        range: Optional[Tuple[_Time, _Time]] = None,
    ) -> List[str]: ...
    async def logs(self, id: str, start: int = 0, end: int = -1) -> List[str]:
        """Lines ``start..=end`` of job ``id``'s log (LRANGE indexes)."""
    async def result(self, id: str) -> Optional[bytes]:
        """The result a worker kept for job ``id`` (``keep_result_ms``), or ``None``."""
    async def wait_for(self, id: str, timeout_ms: _Duration) -> Settled:
        """Wait for job ``id`` to complete or go dead (``TimeoutError`` after ``timeout_ms``)."""
    async def wait_for_result(self, id: str, timeout_ms: _Duration) -> bytes:
        """Wait for job ``id``'s kept result: ``JobDeadError`` if it went dead,
        ``JobGoneError`` if it has no row and no result, ``TimeoutError``."""
    async def is_paused(self) -> bool: ...
    async def list_repeats(self) -> List[Repeat]: ...
    async def subscribe(self) -> Subscription:
        """Subscribe to ``emq:{q}:events`` on a connection of its own."""
    async def pause(self) -> None: ...
    async def resume(self) -> None: ...
    async def set_concurrency(self, n: int) -> None: ...
    async def set_rate_limit(self, max: int, per_ms: _Duration) -> None: ...
    async def requeue_dead(self, id: str) -> None: ...
    async def requeue_all_dead(self, limit: Optional[int] = None) -> int: ...
    async def remove(self, id: str) -> None: ...
    async def drain(self, include_scheduled: bool = False, limit: Optional[int] = None) -> int: ...
    async def purge_dead(
        self,
        older_than_ms: Optional[_Duration] = None,
        limit: Optional[int] = None,
    ) -> int: ...
    async def upsert_repeat(
        self,
        name: str,
        *,
        every_ms: Optional[_Duration] = None,
        cron: Optional[str] = None,
        tz: Optional[str] = None,
        payload: Optional[_Payload] = None,
        start_at: Optional[_Time] = None,
        end_at: Optional[_Time] = None,
        limit: Optional[int] = None,
    ) -> Repeat:
        """Create or update the repeatable job ``name`` (exactly one of
        ``every_ms`` and ``cron``; the checks are the core's)."""
    async def remove_repeat(self, name: str) -> bool: ...
    # ---- end of the rendered verbs ----

@final
class _Start:
    """What a verb's coroutine (``echomq._aio._lazy``) calls on its first step."""
    def __call__(self) -> asyncio.Future[Any]: ...

@final
class NativeWorker:
    def __init__(
        self,
        client: Union[Client, NativeAsyncClient],
        queue: str,
        handler: Callable[..., object],
        *,
        concurrency: Optional[int] = None,
        lease_ms: Optional[_Duration] = None,
        max_attempts: Optional[int] = None,
        backoff: Optional[str] = None,
        backoff_base_ms: Optional[_Duration] = None,
        backoff_cap_ms: Optional[_Duration] = None,
        pump_interval_ms: Optional[_Duration] = None,
        idle_max_ms: Optional[_Duration] = None,
        shutdown_grace_ms: Optional[_Duration] = None,
        prefetch: Optional[int] = None,
        handler_batch: Optional[int] = None,
        dead_max_age_ms: Optional[_Duration] = None,
        dead_max_len: Optional[int] = None,
        max_stalls: Optional[int] = None,
        keep_result_ms: Optional[_Duration] = None,
        wake_fallback_ms: Optional[_Duration] = None,
        batched: bool = False,
    ) -> None: ...
    @property
    def queue(self) -> str: ...
    def run(self) -> None: ...
    def run_async(self) -> asyncio.Future[None]: ...
    def _panic_next_run_for_tests(self) -> None: ...
    def stop(self) -> None: ...
    def is_stopping(self) -> bool: ...
    def stats(self) -> WorkerStats: ...
    def forward_events(
        self, names: List[str], dispatch: Callable[[List[WorkerEvent]], None]
    ) -> None: ...

@final
class WorkerEvent:
    """One worker event; the fields that do not fit the event are None."""
    @property
    def name(self) -> str: ...
    @property
    def id(self) -> Optional[str]: ...
    @property
    def token(self) -> Optional[int]: ...
    @property
    def error(self) -> Optional[str]: ...
    @property
    def retry_in_ms(self) -> Optional[int]: ...
    @property
    def duration_ms(self) -> Optional[float]: ...
    @property
    def count(self) -> Optional[int]: ...
    @property
    def code(self) -> Optional[str]: ...

@final
class QueueEvent:
    """One message of ``emq:{q}:events``."""
    @property
    def queue(self) -> str: ...
    @property
    def event(self) -> str: ...
    @property
    def job(self) -> str: ...
    @property
    def fields(self) -> Dict[str, str]: ...

@final
class Settled:
    """How a waited-on job ended: ``state`` is ``completed`` or ``dead``."""
    @property
    def state(self) -> Literal["completed", "dead"]: ...
    @property
    def error(self) -> Optional[str]: ...

@final
class Subscription:
    """A live subscription to a queue's events (its own connection)."""
    def next(self, timeout_ms: Optional[_Duration] = None) -> Optional[QueueEvent]: ...
    def next_async(self) -> asyncio.Future[Optional[QueueEvent]]: ...
    def __iter__(self) -> Subscription: ...
    def __next__(self) -> QueueEvent: ...
    def __aiter__(self) -> Subscription: ...
    def __anext__(self) -> asyncio.Future[QueueEvent]: ...
    def __enter__(self) -> Subscription: ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None: ...
    def close(self) -> None: ...

def mint_job_id(node_id: Optional[int] = None) -> str: ...
def parse_id(text: str) -> ParsedId: ...
def is_valid_id(text: object) -> bool: ...
def encode_id(namespace: str, snowflake: int) -> str: ...
def lex_bound(unix_ms: _Time) -> str: ...
def is_valid_queue(name: object) -> bool: ...
def queue_key(
    queue: str, type: Literal["pending", "active", "schedule", "dead", "meta"]
) -> str: ...
def job_key(queue: str, id: str) -> str: ...
def classify(key: Union[str, bytes]) -> KeyClass: ...
def slot(key: Union[str, bytes]) -> int: ...
def protocol_version() -> str: ...
def check_queue(name: str) -> None:
    """``InvalidQueueError`` for a name outside the key grammar."""

def error_kinds() -> List[Tuple[str, int, List[str]]]:
    """The core's error table: ``(code, status, facts)`` per kind, in code
    order; ``facts`` names the attributes that kind's exception carries."""

def error_facts() -> List[str]:
    """Every fact name an error may carry, in the core's order."""

def defaults() -> Dict[str, Union[int, bool, str, None]]:
    """The core's defaults for every option (omitted keywords take these)."""

def option_schema() -> List[Dict[str, Any]]:
    """The core's options schema: ``{name, group, type, values, default, min,
    max, doc}`` per connect and worker option."""

def surface_verbs() -> Tuple[List[str], List[str]]:
    """The verb table of src/surface.rs: ``(queue verbs, client verbs)``."""

def surface_stub_rows() -> List[Tuple[str, bool, str, str, List[str]]]:
    """Each verb's typing in src/surface.rs: ``(name, takes a queue, parameters,
    return type, doc lines)``; tests/test_stub.py renders this stub's verbs."""

def _panic_in_core_for_tests() -> asyncio.Future[None]: ...

