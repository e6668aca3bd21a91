"""Observability from Python (issue #12): core logs in ``logging``, worker
events, queue events (iterator and async iterator), ``wait_for`` across
processes, and metrics parsed with ``prometheus_client``."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import threading
import time
from typing import List, Tuple

import pytest
import redis

import echomq

FAST = dict(lease_ms=2000, max_attempts=2, backoff="fixed", backoff_base_ms=10,
            backoff_cap_ms=10, pump_interval_ms=20, idle_max_ms=20)


def test_a_core_warning_reaches_logging(own_server, caplog) -> None:  # type: ignore[no-untyped-def]
    url, proc = own_server
    # A gone server is retried within the response timeout (issue #15) before
    # a claim fails: keep it short so the warning comes soon.
    client = echomq.connect(url, connect_timeout_ms=300, response_timeout_ms=500)
    caplog.set_level(logging.WARNING, logger="echomq")
    worker = echomq.Worker(client, "logs", lambda job: None, idle_max_ms=20)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        time.sleep(0.2)
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 20
        while not any("claim on logs failed" in r.getMessage() for r in caplog.records):
            assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records]
            time.sleep(0.05)
    finally:
        worker.stop()
        thread.join(30)
    record = next(r for r in caplog.records if "claim on logs failed" in r.getMessage())
    assert record.levelno == logging.WARNING
    assert record.name.startswith("echomq.worker")


class Recorder:
    def __init__(self) -> None:
        self.events: List[echomq.WorkerEvent] = []
        self.threads: set[str] = set()

    def _keep(self, event: echomq.WorkerEvent) -> None:
        self.events.append(event)
        self.threads.add(threading.current_thread().name)

    on_active = on_completed = on_failed = on_dead = on_lease_lost = _keep
    on_drained = on_closed = _keep

    def on_error(self, event: echomq.WorkerEvent) -> None:
        raise RuntimeError("a listener bug is logged, not fatal")


def _lifecycle_handler(raw: "redis.Redis[bytes]", queue: str):  # type: ignore[no-untyped-def]
    def handler(job: echomq.Job) -> None:
        if job.payload == b"flaky" and job.token == 1:
            raise ValueError("try again")
        if job.payload == b"doomed":
            raise echomq.Unrecoverable("never")
        if job.payload == b"lost":
            raw.hincrby(f"emq:{{{queue}}}:job:{job.id}", "attempts", 1)
    return handler


def _check_lifecycle(events: List[echomq.WorkerEvent], ids: dict) -> None:  # type: ignore[type-arg]
    def find(name: str, id: str, **want: object) -> echomq.WorkerEvent:
        for e in events:
            if e.name == name and e.id == id and all(getattr(e, k) == v for k, v in want.items()):
                return e
        raise AssertionError(f"no {name} {want} for {id} in {events}")

    assert find("active", ids["ok"], token=1)
    done = find("completed", ids["ok"], token=1)
    assert done.duration_ms is not None and done.duration_ms >= 0
    assert find("failed", ids["flaky"], token=1, error="try again", retry_in_ms=10)
    assert find("completed", ids["flaky"], token=2)
    assert find("failed", ids["doomed"], retry_in_ms=None, error="never")
    assert find("dead", ids["doomed"], error="never")
    assert find("lease_lost", ids["lost"], token=1)
    assert not [e for e in events if e.name == "completed" and e.id == ids["lost"]]
    assert [e for e in events if e.name == "drained"]
    assert events[-1].name == "closed"


def _enqueue_lifecycle(client: echomq.Client, queue: str) -> dict:  # type: ignore[type-arg]
    return {p: client.enqueue(queue, p).id for p in ("ok", "flaky", "doomed", "lost")}


def _until(done, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 30
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_worker_events_sync(client, raw, queue, caplog) -> None:  # type: ignore[no-untyped-def]
    ids = _enqueue_lifecycle(client, queue)
    rec = Recorder()
    worker = echomq.Worker(client, queue, _lifecycle_handler(raw, queue), events=rec, **FAST)
    thread = threading.Thread(target=worker.run)
    thread.start()
    s = worker.stats
    _until(lambda: s().completed >= 2 and s().dead >= 1 and s().lease_lost >= 1, "settled")
    worker.stop()
    thread.join(30)
    _until(lambda: rec.events and rec.events[-1].name == "closed", "closed event")
    _check_lifecycle(rec.events, ids)
    assert len(rec.threads) == 1 and threading.current_thread().name not in rec.threads


def test_worker_events_asyncio_run_on_the_loop(redis_url, raw, queue) -> None:  # type: ignore[no-untyped-def]
    async def main() -> Tuple[List[echomq.WorkerEvent], set[int]]:
        client = await echomq.connect_async(redis_url)
        ids = {p: (await client.enqueue(queue, p)).id for p in ("ok", "flaky", "doomed", "lost")}
        seen: List[echomq.WorkerEvent] = []
        threads: set[int] = set()

        def keep(e: echomq.WorkerEvent) -> None:
            seen.append(e)
            threads.add(threading.get_ident())

        listeners = {name: keep for name in echomq.WORKER_EVENTS}
        worker = echomq.Worker(client, queue, _lifecycle_handler(raw, queue),
                               events=listeners, **FAST)
        task = asyncio.ensure_future(worker.run_async())
        while not (worker.stats().completed >= 2 and worker.stats().dead >= 1
                   and worker.stats().lease_lost >= 1):
            await asyncio.sleep(0.01)
        worker.stop()
        await task
        while not (seen and seen[-1].name == "closed"):
            await asyncio.sleep(0.01)
        _check_lifecycle(seen, ids)
        return seen, threads

    _, threads = asyncio.run(main())
    assert threads == {threading.get_ident()}, "listeners run on the loop's thread"


def test_events_nobody_listens_to_never_reach_python(client, raw, queue) -> None:  # type: ignore[no-untyped-def]
    # Only `failed` and `dead` are listened to: the `active`/`completed` of
    # every job stay in the core (no GIL taken for them), so a listener for
    # failures costs nothing per success.
    crossed: List[str] = []

    class Counting(echomq.Worker):
        def _dispatch(self, events: List[echomq.WorkerEvent]) -> None:
            crossed.extend(event.name for event in events)
            super()._dispatch(events)

    failures: List[echomq.WorkerEvent] = []
    ids = _enqueue_lifecycle(client, queue)
    worker = Counting(client, queue, _lifecycle_handler(raw, queue),
                      events={"failed": failures.append, "dead": failures.append}, **FAST)
    thread = threading.Thread(target=worker.run)
    thread.start()
    s = worker.stats
    _until(lambda: s().completed >= 2 and s().dead >= 1, "settled")
    _until(lambda: len(crossed) >= 3, "the failed, failed and dead events")
    worker.stop()
    thread.join(30)
    assert sorted(crossed) == ["dead", "failed", "failed"], crossed
    assert [e.id for e in failures if e.name == "dead"] == [ids["doomed"]]


def test_unknown_event_names_are_refused(client, queue) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError):
        echomq.Worker(client, queue, lambda job: None, events={"finished": print})
    with pytest.raises(TypeError):
        echomq.Worker(client, queue, lambda job: None, events={"completed": 3})


def test_subscription_iterates_queue_events(client, queue) -> None:  # type: ignore[no-untyped-def]
    with client.subscribe(queue) as sub:
        id = client.enqueue(queue, b"x").id
        job = client.claim(queue, 5000)
        assert job is not None
        client.complete(queue, job.id, job.token)
        got = [next(sub) for _ in range(3)]
        assert [(e.event, e.job) for e in got] == [("added", id), ("active", id), ("completed", id)]
        assert got[1].fields == {"token": "1"} and got[0].queue == queue
        assert sub.next(timeout_ms=100) is None
    assert sub.next(timeout_ms=100) is None  # closed
    with pytest.raises(StopIteration):
        next(sub)


def test_async_subscription_and_wait_for(redis_url, queue) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        client = await echomq.connect_async(redis_url)
        sub = await client.subscribe(queue)
        id = (await client.enqueue(queue, b"a")).id
        waiting = asyncio.ensure_future(client.wait_for(queue, id, 10000))
        job = await client.claim(queue, 5000)
        assert job is not None
        await client.retry(queue, id, job.token, 0, 1, "boom")
        names = []
        async for event in sub:
            names.append(event.event)
            if event.event == "dead":
                assert event.fields["error"] == "boom"
                sub.close()
        assert names == ["added", "active", "dead"]
        settled = await waiting
        assert (settled.state, settled.error) == ("dead", "boom")
        with pytest.raises(echomq.TimeoutError):
            await client.wait_for(queue, (await client.enqueue(queue, b"p")).id, 200)

    asyncio.run(main())


WORKER = """
import sys, echomq
url, queue = sys.argv[1], sys.argv[2]
client = echomq.connect(url)
worker = echomq.Worker(client, queue, lambda job: None, idle_max_ms=20)
print("ready", flush=True)
worker.run()
"""


def test_wait_for_a_job_another_process_completes(redis_url, client, queue) -> None:  # type: ignore[no-untyped-def]
    id = client.enqueue(queue, b"elsewhere").id
    proc = subprocess.Popen([sys.executable, "-c", WORKER, redis_url, queue],
                            stdout=subprocess.PIPE, text=True)
    try:
        settled = client.wait_for(queue, id, 30000)
        assert settled.state == "completed" and settled.error is None
    finally:
        proc.terminate()
        proc.wait(30)


PRODUCER = """
import asyncio, sys, echomq
url, queue, how = sys.argv[1], sys.argv[2], sys.argv[3]
batch = [b"x"] * 50
if how == "sync":
    with echomq.connect(url) as client:
        for _ in range(40):
            client.enqueue_many(queue, batch)
    # the process exits at once: close() has waited for the events
else:
    async def main():
        client = await echomq.connect_async(url)
        await asyncio.gather(*(client.enqueue_many(queue, batch) for _ in range(40)))
        if how == "aclose":
            await client.aclose()
        else:
            client.close()
    asyncio.run(main())
"""


@pytest.mark.parametrize("how", ["sync", "aclose", "close-in-asyncio"])
def test_a_producer_that_closes_and_exits_publishes_every_added(  # type: ignore[no-untyped-def]
        redis_url, client, queue, how) -> None:
    with client.subscribe(queue) as sub:
        subprocess.run([sys.executable, "-c", PRODUCER, redis_url, queue, how],
                       check=True, timeout=60)
        added = 0
        while (event := sub.next(timeout_ms=1000)) is not None:
            added += event.event == "added"
    assert added == 2000


def test_publish_events_off(redis_url, client, queue) -> None:  # type: ignore[no-untyped-def]
    quiet = echomq.connect(redis_url, publish_events=False)
    with client.subscribe(queue) as sub:
        quiet.enqueue(queue, b"q")
        assert sub.next(timeout_ms=300) is None
        client.enqueue(queue, b"loud")
        assert sub.next(timeout_ms=5000) is not None


def test_metrics_parse_and_equal_counts(client, queue) -> None:  # type: ignore[no-untyped-def]
    from prometheus_client import CollectorRegistry
    from prometheus_client.parser import text_string_to_metric_families

    from echomq.metrics import EchoMQCollector

    for p in ("a", "b", "bad"):
        client.enqueue(queue, p)
    client.enqueue(queue, b"later", delay_ms=60000)

    def handler(job: echomq.Job) -> None:
        if job.payload == b"bad":
            raise echomq.Unrecoverable("bad")

    worker = echomq.Worker(client, queue, handler, **FAST)
    thread = threading.Thread(target=worker.run)
    thread.start()
    _until(lambda: worker.stats().completed >= 2 and worker.stats().dead >= 1, "processed")
    worker.stop()
    thread.join(30)
    client.enqueue(queue, b"waiting")

    samples = {}
    for family in text_string_to_metric_families(client.metrics_text([queue])):
        for s in family.samples:
            if s.labels.get("queue") == queue and "le" not in s.labels:
                samples[s.name] = s.value
    counts = client.counts(queue)
    assert samples["echomq_pending_jobs"] == counts.pending == 1
    assert samples["echomq_active_jobs"] == counts.active
    assert samples["echomq_scheduled_jobs"] == counts.scheduled == 1
    assert samples["echomq_dead_jobs"] == counts.dead == 1
    assert samples["echomq_completed_total"] == counts.completed == 2
    assert samples["echomq_failed_total"] == counts.failed == 1
    assert samples["echomq_worker_processed_total"] == 3
    assert samples["echomq_worker_failed_total"] == 1
    assert samples["echomq_worker_handler_duration_seconds_count"] == 3

    registry = CollectorRegistry()
    registry.register(EchoMQCollector(client, [queue]))
    assert registry.get_sample_value("echomq_pending_jobs", {"queue": queue}) == 1
    with pytest.raises(echomq.InvalidQueueError):
        client.metrics_text(["bad queue"])
