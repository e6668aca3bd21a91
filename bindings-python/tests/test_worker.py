"""echomq.Worker: the core's worker loop with Python handlers."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator, List

import pytest

import echomq
from conftest import wait_until

FAST: dict = dict(backoff="fixed", backoff_base_ms=10, pump_interval_ms=50, idle_max_ms=20)


class Running:
    """A worker running on a background thread, stopped and joined on exit."""

    def __init__(self, worker: echomq.Worker) -> None:
        self.worker = worker
        self.error: List[BaseException] = []
        self.thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        try:
            self.worker.run()
        except BaseException as e:  # pragma: no cover - reported in stop()
            self.error.append(e)

    def __enter__(self) -> "Running":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.worker.stop()
        self.thread.join(30)
        assert not self.thread.is_alive(), "worker did not stop"
        assert not self.error, self.error

    def __exit__(self, *exc: Any) -> None:
        if self.thread.is_alive():
            self.stop()


def test_every_job_is_processed_exactly_once(client, raw, queue, keys):
    n = 300
    ids = {a.id for a in client.enqueue_many(queue, [f"job {i}" for i in range(n)])}  # type: ignore[union-attr]
    seen: List[str] = []
    payloads: List[bytes] = []

    def handler(job: echomq.Job) -> None:
        seen.append(job.id)
        payloads.append(job.payload)

    w = echomq.Worker(client, queue, handler, concurrency=8, **FAST)
    with Running(w) as r:
        wait_until(lambda: client.counts(queue).completed == n)
        r.stop()
    assert len(seen) == n and set(seen) == ids
    assert sorted(payloads) == sorted(f"job {i}".encode() for i in range(n))
    s = w.stats()
    assert (s.claimed, s.completed, s.retried, s.dead, s.in_flight) == (n, n, 0, 0, 0)
    assert raw.zcard(keys.pending) == 0 and raw.zcard(keys.active) == 0
    assert "WorkerStats(claimed=300" in repr(s)


def test_a_failing_handler_is_retried_then_dead_with_its_message(client, raw, queue, keys):
    e = client.enqueue(queue, b"doomed")
    tokens: List[int] = []

    def handler(job: echomq.Job) -> None:
        tokens.append(job.token)
        raise ValueError("card declined")

    w = echomq.Worker(client, queue, handler, max_attempts=3, **FAST)
    with Running(w) as r:
        wait_until(lambda: client.counts(queue).dead == 1)
        r.stop()
    assert tokens == [1, 2, 3]
    info = client.job(queue, e.id)
    assert info is not None
    assert (info.state, info.attempts, info.last_error) == ("dead", 3, "card declined")
    assert raw.hget(keys.job(e.id), "last_error") == b"card declined"
    assert raw.zscore(keys.dead, e.id) == 0.0
    s = w.stats()
    assert (s.retried, s.dead, s.completed) == (2, 1, 0)


def test_unrecoverable_goes_straight_to_dead_and_empty_messages_use_repr(client, queue):
    fatal = client.enqueue(queue, b"fatal")
    empty = client.enqueue(queue, b"empty")

    def handler(job: echomq.Job) -> None:
        if job.payload == b"fatal":
            raise echomq.Unrecoverable("no such user")
        raise RuntimeError()

    w = echomq.Worker(client, queue, handler, max_attempts=2, **FAST)
    with Running(w) as r:
        wait_until(lambda: client.counts(queue).dead == 2)
        r.stop()
    f = client.job(queue, fatal.id)
    assert f is not None and (f.attempts, f.last_error) == (1, "no such user")
    m = client.job(queue, empty.id)
    assert m is not None and (m.attempts, m.last_error) == (2, "RuntimeError()")


def test_a_handler_three_times_longer_than_the_lease_keeps_its_job(client, raw, queue, keys):
    e = client.enqueue(queue, b"slow")
    tokens: List[int] = []
    attempts_midway: List[bytes] = []

    def handler(job: echomq.Job) -> None:
        tokens.append(job.token)
        time.sleep(0.9)
        attempts_midway.append(raw.hget(keys.job(job.id), "attempts"))
        time.sleep(0.9)

    w = echomq.Worker(client, queue, handler, lease_ms=600, concurrency=2,
                      backoff="fixed", backoff_base_ms=10, pump_interval_ms=100)
    with Running(w) as r:
        wait_until(lambda: client.counts(queue).completed == 1, timeout=15)
        r.stop()
    assert tokens == [1]
    assert attempts_midway == [b"1"]
    assert not raw.exists(keys.job(e.id))
    s = w.stats()
    assert (s.completed, s.lease_lost, s.retried) == (1, 0, 0)


def test_graceful_stop_leaves_nothing_active(client, raw, queue, keys):
    n = 20
    client.enqueue_many(queue, [str(i) for i in range(n)])
    started = threading.Event()
    release = threading.Event()

    def handler(job: echomq.Job) -> None:
        started.set()
        # Held until stop() was asked: exactly the jobs running at that
        # moment (at most `concurrency`) complete, with no timing window.
        assert release.wait(30)

    w = echomq.Worker(client, queue, handler, concurrency=4, **FAST)
    with Running(w) as r:
        assert started.wait(10)
        w.stop()
        release.set()
        r.stop()
    c = client.counts(queue)
    assert c.active == 0 and raw.zcard(keys.active) == 0
    assert c.completed + c.pending == n
    assert 0 < c.completed < n
    assert w.stats().in_flight == 0
    assert w.stats().completed == c.completed


def test_async_handler_under_blocking_run(client, queue):
    n = 60
    client.enqueue_many(queue, [str(i) for i in range(n)])
    seen: List[str] = []
    loops: set = set()

    async def handler(job: echomq.Job) -> None:
        loops.add(id(asyncio.get_running_loop()))
        await asyncio.sleep(0.01)
        if job.payload == b"7" and job.token == 1:
            raise ValueError("first try fails")
        seen.append(job.id)

    w = echomq.Worker(client, queue, handler, concurrency=8, **FAST)
    with Running(w) as r:
        wait_until(lambda: client.counts(queue).completed == n)
        r.stop()
    assert len(seen) == n == len(set(seen))
    assert len(loops) == 1
    assert w.stats().retried == 1


def test_run_async_with_async_client_and_handler(redis_url, queue):
    n = 40

    async def main() -> None:
        ac = await echomq.connect_async(redis_url)
        await ac.enqueue_many(queue, [str(i) for i in range(n)])
        main_loop = asyncio.get_running_loop()
        seen: List[str] = []

        async def handler(job: echomq.Job) -> None:
            assert asyncio.get_running_loop() is main_loop
            await ac.enqueue(queue + ".receipts", job.id)
            seen.append(job.id)

        w = echomq.Worker(ac, queue, handler, concurrency=8, **FAST)
        task = asyncio.ensure_future(w.run_async())
        while (await ac.counts(queue)).completed < n:
            await asyncio.sleep(0.02)
        w.stop()
        await asyncio.wait_for(task, 15)
        assert len(set(seen)) == n
        assert (await ac.counts(queue + ".receipts")).pending == n
        ac.close()

    asyncio.run(asyncio.wait_for(main(), 60))


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """SIGINT raising KeyboardInterrupt, as in an interactive process. A
    background job of a non-interactive shell (a CI runner's `cmd &`, a
    script's `nohup`) starts with SIGINT ignored and Python keeps it so: the
    os.kill below would then be dropped and run() would never be asked to
    stop."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def test_sigint_stops_drains_and_reraises(client, queue, python_sigint):
    client.enqueue_many(queue, [str(i) for i in range(10)])
    started = threading.Event()

    def handler(job: echomq.Job) -> None:
        started.set()
        time.sleep(0.3)

    w = echomq.Worker(client, queue, handler, concurrency=2, **FAST)

    def interrupt() -> None:
        started.wait(10)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt).start()
    with pytest.raises(KeyboardInterrupt):
        w.run()
    assert w.stats().in_flight == 0
    c = client.counts(queue)
    assert c.active == 0 and c.completed >= 2 and c.completed + c.pending == 10


def test_sigterm_stops_drains_and_returns(client, queue):
    client.enqueue_many(queue, [str(i) for i in range(10)])
    started = threading.Event()

    def handler(job: echomq.Job) -> None:
        started.set()
        time.sleep(0.3)

    w = echomq.Worker(client, queue, handler, concurrency=2, **FAST)
    before = signal.getsignal(signal.SIGTERM)

    def terminate() -> None:
        started.wait(10)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=terminate).start()
    w.run()
    assert signal.getsignal(signal.SIGTERM) == before
    c = client.counts(queue)
    assert c.active == 0 and c.completed >= 2 and c.completed + c.pending == 10


@pytest.fixture
def proc_killer() -> Iterator[List[subprocess.Popen]]:
    procs: List[subprocess.Popen] = []
    yield procs
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_a_sigkilled_worker_process_job_is_recovered(client, raw, queue, keys, redis_url, proc_killer):
    e = client.enqueue(queue, b"survive me")
    script = Path(__file__).with_name("worker_proc.py")
    p = subprocess.Popen([sys.executable, str(script), redis_url, queue, "800"],
                         stdout=subprocess.PIPE, text=True)
    proc_killer.append(p)
    assert p.stdout is not None
    deadline = time.monotonic() + 20
    line = ""
    while not line.startswith("started"):
        ready, _, _ = select.select([p.stdout], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, "the worker process never started the job"
        line = p.stdout.readline()
        assert line, "the worker process exited"
    assert line.split() == ["started", e.id, "1"]
    p.send_signal(signal.SIGKILL)
    p.wait(10)
    assert raw.zscore(keys.active, e.id) is not None  # held by the dead process

    tokens: List[int] = []

    def handler(job: echomq.Job) -> None:
        tokens.append(job.token)

    w = echomq.Worker(client, queue, handler, lease_ms=800, **FAST)
    with Running(w) as r:
        wait_until(lambda: client.counts(queue).completed == 1, timeout=15)
        r.stop()
    assert tokens == [2]
    assert not raw.exists(keys.job(e.id))
    assert raw.zcard(keys.active) == 0


def test_handler_batch_sync_runs_each_job_and_fails_only_the_raiser(client, raw, queue, keys):
    n = 64
    client.enqueue_many(queue, [str(i) for i in range(n)])
    threads: List[int] = []
    seen: List[bytes] = []

    def handler(job: echomq.Job) -> None:
        threads.append(threading.get_ident())
        if job.payload == b"7":
            raise echomq.Unrecoverable("seven fails alone")
        seen.append(job.payload)

    w = echomq.Worker(client, queue, handler, concurrency=16, handler_batch=8, **FAST)
    with Running(w) as r:
        wait_until(lambda: client.counts(queue).completed == n - 1)
        r.stop()
    assert sorted(seen) == sorted(str(i).encode() for i in range(n) if i != 7)
    assert w.stats().dead == 1 and w.stats().completed == n - 1
    # Batches share a blocking thread: far fewer thread switches than jobs.
    switches = sum(1 for a, b in zip(threads, threads[1:]) if a != b)
    assert switches < n // 2, switches
    assert raw.zcard(keys.active) == 0 and raw.zcard(keys.pending) == 0
    assert raw.zcard(keys.dead) == 1
    (dead_id,) = client.browse(queue, "dead")
    assert client.job(queue, dead_id).last_error == "seven fails alone"  # type: ignore[union-attr]


def test_handler_batch_async_runs_a_batch_concurrently(client, queue):
    n = 8
    client.enqueue_many(queue, [str(i) for i in range(n)])
    running = 0
    peak = 0

    async def handler(job: echomq.Job) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.2)
        running -= 1
        if job.payload == b"3" and job.token == 1:
            raise ValueError("three fails once")

    w = echomq.Worker(client, queue, handler, concurrency=4, handler_batch=4, **FAST)
    with Running(w) as r:
        wait_until(lambda: client.counts(queue).completed == n)
        r.stop()
    assert peak == 4
    assert w.stats().retried == 1


def test_prefetch_and_handler_batch_are_validated(client, queue):
    with pytest.raises(echomq.InvalidArgumentError):
        echomq.Worker(client, queue, lambda job: None, handler_batch=0)
    with pytest.raises(echomq.InvalidArgumentError, match="prefetch"):
        echomq.Worker(client, queue, lambda job: None, prefetch=-1)
    w = echomq.Worker(client, queue, lambda job: None, prefetch=0)
    assert w.queue == queue
