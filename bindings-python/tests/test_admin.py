"""The operator verbs (queues, drain, purge_dead, requeue_all_dead) on both
clients, the dead-set retention worker options, and the ``emq`` console
script, against a real redis-server, asserting wire state."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import echomq


def kill_all(client: echomq.Client, queue: str, n: int) -> None:
    for _ in range(n):
        job = client.claim(queue, 10_000)
        assert job is not None
        assert client.retry(queue, job.id, job.token, 0, 1, "boom") == "dead"


def test_queues_and_drain(client, raw, queue, keys):
    ids = [client.enqueue(queue, f"p{i}").id for i in range(3)]
    client.enqueue(queue, b"later", delay_ms=60_000)
    client.pause(queue + "-empty")
    names = client.queues()
    assert queue in names and queue + "-empty" in names and names == sorted(names)
    assert client.drain(queue, limit=2) == 2
    assert raw.zrange(keys.pending, 0, -1) == [ids[2].encode()]
    assert not raw.exists(f"emq:{{{queue}}}:job:{ids[0]}")
    assert client.drain(queue, include_scheduled=True) == 2
    assert raw.zcard(keys.schedule) == 0
    with pytest.raises(echomq.InvalidArgumentError):
        client.drain(queue, limit=0)
    with pytest.raises(echomq.InvalidQueueError):
        client.drain("bad queue")


def test_requeue_all_dead_and_purge_dead(client, raw, queue, keys):
    for i in range(2):
        client.enqueue(queue, f"d{i}")
    kill_all(client, queue, 2)
    assert client.requeue_all_dead(queue) == 2
    assert raw.zcard(keys.pending) == 2 and raw.zcard(keys.dead) == 0
    kill_all(client, queue, 2)
    assert client.purge_dead(queue, older_than_ms=86_400_000) == 0
    assert client.purge_dead(queue, limit=1) == 1
    assert client.purge_dead(queue) == 1
    assert raw.zcard(keys.dead) == 0
    assert client.counts(queue).failed == 4


def test_the_async_client_has_the_same_verbs(redis_url, raw, queue, keys):
    async def main() -> None:
        c = await echomq.connect_async(redis_url)
        await c.enqueue(queue, b"x")
        assert queue in await c.queues()
        assert await c.drain(queue) == 1
        await c.enqueue(queue, b"y")
        job = await c.claim(queue, 10_000)
        assert job is not None
        await c.retry(queue, job.id, job.token, 0, 1, "no")
        assert await c.requeue_all_dead(queue, limit=5) == 1
        job = await c.claim(queue, 10_000)
        assert job is not None
        await c.retry(queue, job.id, job.token, 0, 1, "no")
        assert await c.purge_dead(queue, None, None) == 1
        c.close()

    asyncio.run(main())
    assert raw.zcard(keys.dead) == 0


def test_the_worker_applies_dead_max_len(client, queue):
    for i in range(4):
        client.enqueue(queue, f"w{i}")

    def handler(job: echomq.Job) -> None:
        raise echomq.Unrecoverable("no")

    worker = echomq.Worker(client, queue, handler, pump_interval_ms=20, dead_max_len=1,
                           dead_max_age_ms=86_400_000, handle_signals=False)
    t = threading.Thread(target=worker.run)
    t.start()
    deadline = time.monotonic() + 20
    try:
        while True:
            c = client.counts(queue)
            if c.failed == 4 and c.dead == 1:
                break
            assert time.monotonic() < deadline, c
            time.sleep(0.02)
    finally:
        worker.stop()
        t.join(10)


def emq_script() -> str:
    """The console script installed next to this interpreter."""
    path = Path(sys.executable).parent / "emq"
    found = str(path) if path.exists() else shutil.which("emq")
    assert found, "the console script emq is not installed"
    return found


def test_the_console_script_is_the_emq_command(redis_url, client, queue):
    out = subprocess.run([emq_script(), "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    assert out.stdout.strip() == f"emq {echomq.__version__} (wire {echomq.PROTOCOL_VERSION})"
    client.enqueue(queue, b"one")
    env = {**os.environ, "EMQ_URL": redis_url}
    out = subprocess.run([emq_script(), "--json", "stats", queue], capture_output=True,
                         text=True, timeout=30, env=env)
    assert out.returncode == 0, out.stderr
    assert '"pending": 1' in out.stdout
    out = subprocess.run([emq_script(), "job", queue, "nope"], capture_output=True, text=True,
                         timeout=30, env=env)
    assert out.returncode == 1
    assert out.stderr.startswith("emq: invalid branded id")
