"""Prometheus metrics for EchoMQ queues.

``client.metrics_text(queues)`` renders the Prometheus text exposition in the
core (the same text every runtime and the ``emq`` CLI serve). For an
application that already exports with ``prometheus_client`` (an optional
dependency, never required by ``echomq``), register a collector::

    from prometheus_client import REGISTRY
    from echomq.metrics import EchoMQCollector

    REGISTRY.register(EchoMQCollector(client, ["emails", "orders"]))

Each scrape reads the queues' numbers from the server (one round trip per
queue) and this process's worker series.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, List, Protocol

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

__all__ = ["EchoMQCollector"]


class _RendersMetrics(Protocol):
    def metrics_text(self, queues: List[str]) -> str: ...


class EchoMQCollector:
    """A ``prometheus_client`` collector over a blocking ``echomq.Client``."""

    def __init__(self, client: _RendersMetrics, queues: Iterable[str]) -> None:
        # Imported here so echomq never needs prometheus_client.
        from prometheus_client.parser import text_string_to_metric_families

        self._parse = text_string_to_metric_families
        self._client = client
        self._queues = list(queues)

    def collect(self) -> Iterator["Metric"]:
        yield from self._parse(self._client.metrics_text(self._queues))
