"""EchoMQ: a Redis/Valkey job queue. Python API over the one Rust core.

    import echomq
    client = echomq.connect()          # EMQ_URL, else redis://127.0.0.1:6379/
    emails = client.queue("emails")
    emails.enqueue(b"hello")

See docs/PYTHON.md for the asyncio client, the worker and the error classes.

Core log records go to the standard ``logging`` module under the logger
``echomq`` (children such as ``echomq.worker.run``): a warning shows on stderr
like any other, and ``logging.getLogger("echomq").setLevel(...)`` controls them.
"""

from __future__ import annotations

from ._errors import (
    BundleMismatchError,
    ClosedError,
    ConnectionError,
    EchoMQError,
    InternalError,
    InvalidArgumentError,
    InvalidIdError,
    InvalidQueueError,
    JobActiveError,
    JobGoneError,
    KindError,
    LeaseLostError,
    NotDeadError,
    PartialBatchError,
    NotDurableError,
    ProtocolError,
    RateLimitedError,
    ServerError,
    StaleTokenError,
    TimeoutError,
    UnavailableError,
    Unrecoverable,
    UnrecoverableError,
    UnsupportedError,
    VersionFenceError,
)
from ._native import (
    DEFAULT_MAX_PAYLOAD,
    PROTOCOL_VERSION,
    BundleMismatch,
    Client,
    Counts,
    Enqueued,
    Job,
    JobInfo,
    KeyClass,
    ParsedId,
    QueueEvent,
    Reaped,
    Repeat,
    Settled,
    Subscription,
    WorkerEvent,
    WorkerStats,
    __version__,
    classify,
    connect,
    defaults,
    encode_id,
    is_valid_id,
    is_valid_queue,
    job_key,
    lex_bound,
    mint_job_id,
    parse_id,
    protocol_version,
    queue_key,
    slot,
)
from ._queue import AsyncQueue, Duration, Queue, Time
from ._aio import AsyncClient, connect_async
from ._worker import WORKER_EVENTS, Handler, Worker

# ConnectionError and TimeoutError are left out on purpose: they also
# subclass the builtins of those names, and a star import must not rebind
# them (use echomq.ConnectionError / echomq.TimeoutError, or the builtins).
__all__ = [
    "AsyncClient",
    "AsyncQueue",
    "Duration",
    "Queue",
    "Time",
    "BundleMismatch",
    "BundleMismatchError",
    "Client",
    "ClosedError",
    "NotDurableError",
    "UnavailableError",
    "Counts",
    "DEFAULT_MAX_PAYLOAD",
    "EchoMQError",
    "InternalError",
    "PartialBatchError",
    "defaults",
    "Enqueued",
    "Handler",
    "InvalidArgumentError",
    "InvalidIdError",
    "InvalidQueueError",
    "Job",
    "JobActiveError",
    "JobGoneError",
    "JobInfo",
    "KeyClass",
    "KindError",
    "LeaseLostError",
    "NotDeadError",
    "PROTOCOL_VERSION",
    "ParsedId",
    "ProtocolError",
    "QueueEvent",
    "RateLimitedError",
    "Reaped",
    "Repeat",
    "ServerError",
    "Settled",
    "Subscription",
    "StaleTokenError",
    "Unrecoverable",
    "UnrecoverableError",
    "UnsupportedError",
    "VersionFenceError",
    "WORKER_EVENTS",
    "Worker",
    "WorkerEvent",
    "WorkerStats",
    "__version__",
    "classify",
    "connect",
    "connect_async",
    "encode_id",
    "is_valid_id",
    "is_valid_queue",
    "job_key",
    "lex_bound",
    "mint_job_id",
    "parse_id",
    "protocol_version",
    "queue_key",
    "slot",
]
