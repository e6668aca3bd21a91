"""EchoMQ's exception classes, one per core error kind.

The native module picks the class by the error's stable code; never match on
messages. Every class carries ``.code`` (the ErrorKind code string).

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

    def __init__(self, message: str = "", code: Optional[str] = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (self.message,), self.__dict__)


class KindError(EchoMQError):
    """``EMQKIND``: the enqueue script refused the id's namespace."""

    code = "EMQKIND"


class StaleTokenError(EchoMQError):
    """``EMQSTALE``: the fencing token no longer matches (the job was re-claimed)."""

    code = "EMQSTALE"


class JobGoneError(EchoMQError):
    """The job's row does not exist (completed, removed, or never enqueued)."""

    code = "EMQ_GONE"


class LeaseLostError(EchoMQError):
    """``extend`` on a job that is no longer active (a reaper took it back)."""

    code = "EMQ_LEASE_LOST"


class NotDeadError(EchoMQError):
    """``requeue_dead`` on a job that is not in the dead set."""

    code = "EMQ_NOT_DEAD"


class VersionFenceError(EchoMQError):
    """``{emq}:version`` holds another protocol version; ``.found`` is that value."""

    code = "EMQ_VERSION_FENCE"

    def __init__(self, message: str = "", code: Optional[str] = None, found: str = "") -> None:
        super().__init__(message, code)
        self.found = found


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

    def __init__(self, message: str = "", code: Optional[str] = None, word: str = "") -> None:
        super().__init__(message, code)
        self.word = word


class ServerError(EchoMQError):
    """Any other error reply from the server."""

    code = "EMQ_SERVER"


class JobActiveError(EchoMQError):
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

    def __init__(
        self, message: str = "", code: Optional[str] = None, retry_after_ms: int = 0
    ) -> None:
        super().__init__(message, code)
        self.retry_after_ms = retry_after_ms


class UnavailableError(EchoMQError):
    """A transient server state (loading, busy, failover, slot migration)
    outlasted the retries inside the response timeout. The request did not
    run; sending it again is safe."""

    code = "EMQ_UNAVAILABLE"


class NotDurableError(EchoMQError):
    """The write happened on the master but fewer than ``wait_replicas``
    replicas acknowledged it in time; a failover now may lose it. ``.id`` is
    the job's id (re-enqueue with that id to be sure: it is idempotent)."""

    code = "EMQ_NOT_DURABLE"

    def __init__(self, message: str = "", code: Optional[str] = None, id: str = "") -> None:  # noqa: A002
        super().__init__(message, code)
        self.id = id


class PartialBatchError(EchoMQError):
    """A batch (``enqueue_many``) lost its connection part way. ``.items`` is
    one ``(id, state)`` per payload, in order, with state ``"written"``,
    ``"not_written"`` or ``"unknown"``: resend every item not written with
    ``enqueue_with_id(queue, id, payload)`` (exact: a written one answers
    ``duplicate``)."""

    code = "EMQ_PARTIAL_BATCH"

    def __init__(
        self,
        message: str = "",
        code: Optional[str] = None,
        items: Optional[List[Tuple[str, str]]] = None,
    ) -> None:
        super().__init__(message, code)
        self.items: List[Tuple[str, str]] = list(items or [])


class InternalError(EchoMQError):
    """A bug inside EchoMQ (a panic) caught before it reached Python; the
    operation did not finish."""

    code = "EMQ_INTERNAL"


class JobDeadError(EchoMQError):
    """The job ``wait_for_result`` waited on went dead; ``.last_error`` is
    its ``last_error`` (``None`` if none was recorded)."""

    code = "EMQ_JOB_DEAD"

    def __init__(
        self, message: str = "", code: Optional[str] = None, last_error: Optional[str] = None
    ) -> None:
        super().__init__(message, code)
        self.last_error = last_error


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


def _from_native(
    code: str,
    message: str,
    detail: Optional[str],
    items: Optional[List[Tuple[str, str]]] = None,
) -> EchoMQError:
    """Called by the native module: the exception instance for a core error."""
    cls = _BY_CODE.get(code, EchoMQError)
    if cls is PartialBatchError:
        return PartialBatchError(message, items=items)
    if cls is VersionFenceError:
        return VersionFenceError(message, found=detail or "")
    if cls is ProtocolError:
        return ProtocolError(message, word=detail or "")
    if cls is RateLimitedError:
        return RateLimitedError(message, retry_after_ms=int(detail or 0))
    if cls is JobDeadError:
        return JobDeadError(message, last_error=detail)
    if cls is NotDurableError:
        return NotDurableError(message, id=detail or "")
    if cls is EchoMQError:
        return EchoMQError(message, code)
    return cls(message)
