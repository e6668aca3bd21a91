"""EchoMQ's exception classes, one per core error kind.

The native module picks the class by the error's stable code; never match on
messages. Every class carries ``.code`` (the ErrorKind code string) and, as
attributes, the facts its kind declares in the core (``.facts`` names them:
``job_id``, ``found``, ``word``, ``last_error``, ``retry_after_ms``,
``items``), each set from the native error's own value.

``ConnectionError`` and ``TimeoutError`` share their names with builtins on
purpose and also subclass them, so ``except TimeoutError:`` (the builtin)
catches EchoMQ's timeout and ``except ConnectionError:`` its connection
failures, as it does for ``socket`` or ``asyncio``. They are importable as
``echomq.ConnectionError`` / ``echomq.TimeoutError`` but left out of
``__all__``: ``from echomq import *`` does not rebind the builtins.
"""

from __future__ import annotations

import builtins
from typing import Any, Dict, List, Optional, Tuple, Type

__all__ = [
    "EchoMQError",
    "KindError",
    "StaleTokenError",
    "JobGoneError",
    "LeaseLostError",
    "NotDeadError",
    "VersionFenceError",
    "InvalidIdError",
    "InvalidQueueError",
    "InvalidArgumentError",
    "ProtocolError",
    "ServerError",
    "JobActiveError",
    "BundleMismatchError",
    "ClosedError",
    "UnsupportedError",
    "RateLimitedError",
    "UnavailableError",
    "NotDurableError",
    "PartialBatchError",
    "InternalError",
    "JobDeadError",
    "UnrecoverableError",
    "Unrecoverable",
]


class EchoMQError(Exception):
    """The base of every error the client raises."""

    code: str = "EMQ"
    #: The attribute names of the facts this class carries, as the core's
    #: ``ErrorKind::facts`` declares them (checked by the test suite).
    facts: Tuple[str, ...] = ()

    def __init__(self, message: str = "", code: Optional[str] = None, **facts: Any) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        unknown = set(facts) - set(self.facts)
        if unknown:
            raise TypeError(f"{type(self).__name__} carries no {', '.join(sorted(unknown))}")
        for name, value in facts.items():
            setattr(self, name, value)

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (self.message,), self.__dict__)


class _JobError(EchoMQError):
    """An error about one job; ``.job_id`` is its id (``None`` only if the
    core could not tell)."""

    facts: Tuple[str, ...] = ("job_id",)
    job_id: Optional[str] = None


class KindError(EchoMQError):
    """``EMQKIND``: the enqueue script refused the id's namespace."""

    code = "EMQKIND"


class StaleTokenError(_JobError):
    """``EMQSTALE``: the fencing token no longer matches (the job was re-claimed)."""

    code = "EMQSTALE"


class JobGoneError(_JobError):
    """The job's row does not exist (completed, removed, or never enqueued)."""

    code = "EMQ_GONE"


class LeaseLostError(_JobError):
    """``extend`` on a job that is no longer active (a reaper took it back)."""

    code = "EMQ_LEASE_LOST"


class NotDeadError(_JobError):
    """``requeue_dead`` on a job that is not in the dead set."""

    code = "EMQ_NOT_DEAD"


class VersionFenceError(EchoMQError):
    """``{emq}:version`` holds another protocol version; ``.found`` is that value."""

    code = "EMQ_VERSION_FENCE"
    facts = ("found",)
    found: str = ""


class InvalidIdError(EchoMQError):
    """Not a valid 14-byte branded id."""

    code = "EMQ_INVALID_ID"


class InvalidQueueError(EchoMQError):
    """A queue name outside ``[A-Za-z0-9._-]{1,128}``, or ``emq``."""

    code = "EMQ_INVALID_QUEUE"


class InvalidArgumentError(EchoMQError, ValueError):
    """A bad argument caught before the wire (zero lease, oversized payload, ...)."""

    code = "EMQ_INVALID_ARGUMENT"


class ConnectionError(EchoMQError, builtins.ConnectionError):  # noqa: A001
    """The connection could not be made or was lost (also a builtin ConnectionError)."""

    code = "EMQ_CONNECTION"


class TimeoutError(EchoMQError, builtins.TimeoutError):  # noqa: A001
    """The server did not answer in time (also a builtin TimeoutError)."""

    code = "EMQ_TIMEOUT"


class ProtocolError(EchoMQError):
    """An ``EMQ*`` class word this version does not know; ``.word`` is that word."""

    code = "EMQ_PROTOCOL"
    facts = ("word",)
    word: str = ""


class ServerError(EchoMQError):
    """Any other error reply from the server."""

    code = "EMQ_SERVER"


class JobActiveError(_JobError):
    """``remove`` on a job that is currently active."""

    code = "EMQ_JOB_ACTIVE"


class BundleMismatchError(EchoMQError):
    """Another runtime deployed different script bytes (with ``strict_bundle``)."""

    code = "EMQ_BUNDLE_MISMATCH"


class ClosedError(EchoMQError):
    """The client (or worker) was closed."""

    code = "EMQ_CLOSED"


class UnsupportedError(EchoMQError):
    """The verb needs a newer wire version than the client was told to speak
    (``wire_version``); raised before any network I/O."""

    code = "EMQ_UNSUPPORTED"


class RateLimitedError(EchoMQError):
    """``EMQRATE``: the queue's global concurrency or rate limit refused the
    claim; ``.retry_after_ms`` is how long to wait (0 = until a slot frees)."""

    code = "EMQRATE"
    facts = ("retry_after_ms",)
    retry_after_ms: int = 0


class UnavailableError(EchoMQError):
    """A transient server state (loading, busy, failover, slot migration)
    outlasted the retries inside the response timeout. The request did not
    run; sending it again is safe."""

    code = "EMQ_UNAVAILABLE"


class NotDurableError(_JobError):
    """The write happened on the master but fewer than ``wait_replicas``
    replicas acknowledged it in time; a failover now may lose it. ``.job_id``
    (alias ``.id``) is the job's id (re-enqueue with that id to be sure: it
    is idempotent)."""

    code = "EMQ_NOT_DURABLE"

    @property
    def id(self) -> Optional[str]:
        """The former name of ``.job_id``, kept as an alias."""
        return self.job_id


class PartialBatchError(EchoMQError):
    """A batch (``enqueue_many``) lost its connection part way. ``.items`` is
    one ``(id, state)`` per payload, in order, with state ``"written"``,
    ``"not_written"`` or ``"unknown"``: resend every item not written with
    ``enqueue(queue, payload, id=id)`` (exact: a written one answers
    ``duplicate``)."""

    code = "EMQ_PARTIAL_BATCH"
    facts = ("items",)
    items: List[Tuple[str, str]] = []


class InternalError(EchoMQError):
    """A bug inside EchoMQ (a panic) caught before it reached Python; the
    operation did not finish."""

    code = "EMQ_INTERNAL"


class JobDeadError(_JobError):
    """The job ``wait_for_result`` waited on went dead; ``.last_error`` is
    its ``last_error`` (``None`` if none was recorded)."""

    code = "EMQ_JOB_DEAD"
    facts = ("job_id", "last_error")
    last_error: Optional[str] = None


class UnrecoverableError(Exception):
    """Raise from a worker handler to send the job straight to dead (no
    retries). The same name as Node's ``UnrecoverableError``."""


Unrecoverable = UnrecoverableError
"""The former name of :class:`UnrecoverableError`, kept as an alias."""


_BY_CODE: Dict[str, Type[EchoMQError]] = {
    cls.code: cls
    for cls in (
        KindError,
        StaleTokenError,
        JobGoneError,
        LeaseLostError,
        NotDeadError,
        VersionFenceError,
        InvalidIdError,
        InvalidQueueError,
        InvalidArgumentError,
        ConnectionError,
        TimeoutError,
        ProtocolError,
        ServerError,
        JobActiveError,
        BundleMismatchError,
        ClosedError,
        UnsupportedError,
        RateLimitedError,
        UnavailableError,
        NotDurableError,
        PartialBatchError,
        InternalError,
        JobDeadError,
    )
}


def _from_native(code: str, message: str, facts: Dict[str, Any]) -> EchoMQError:
    """Called by the native module: the exception instance for a core error,
    its facts set as attributes (no per-kind decoding here)."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return EchoMQError(message, code)
    return cls(message, **facts)
