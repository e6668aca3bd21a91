"""Issue #13 from Python, the same scenarios as core/tests/job_features.rs:
wire 2.0.0 vs 2.1.0, the stall cap (a worker process SIGKILLed three times on
one job), and deduplication (50 concurrent producers, one job)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import List

import pytest

import echomq

from conftest import wait_lease_lapsed, wait_until


def test_wire_2_0_0_refuses_2_1_0_verbs_before_any_io(redis_url, raw):
    raw.execute_command("SELECT", 5)
    raw.flushdb()
    try:
        old = echomq.connect(redis_url + "5", wire_version="echomq:2.0.0")
        assert raw.get("{emq}:version") == b"echomq:2.0.0"
        with pytest.raises(echomq.UnsupportedError) as e:
            old.reap_stalled("q", 10, 2)
        assert e.value.code == "EMQ_UNSUPPORTED"
        with pytest.raises(echomq.UnsupportedError):
            old.enqueue("q", b"x", dedup_id="d")
        assert raw.exists("emq:{q}:pending") == 0
        old.enqueue("q", b"plain")  # 2.0.0 verbs still work
        # A 2.1.0 client is refused by the 2.0.0 record, which is not moved.
        with pytest.raises(echomq.VersionFenceError) as fence:
            echomq.connect(redis_url + "5")
        assert fence.value.found == "echomq:2.0.0"
        with pytest.raises(echomq.InvalidArgumentError):
            echomq.connect(redis_url + "5", wire_version="echomq:7.0.0")

        async def refused_async() -> None:
            c = await echomq.connect_async(redis_url + "5", wire_version="2.0.0")
            with pytest.raises(echomq.UnsupportedError):
                await c.reap_stalled("q", 10, 2)
            c.close()

        asyncio.run(refused_async())
        old.close()
    finally:
        raw.flushdb()


def test_reap_stalled_dead_letters_at_the_cap(client, raw, queue, keys, redis_url):
    e = client.enqueue(queue, b"poison")
    first = client.claim(queue, 1)
    wait_lease_lapsed(raw, keys.active, e.id)
    r = client.reap_stalled(queue, 100, 2)
    assert (r.recovered, r.dead) == ([e.id], [])
    assert raw.hget(keys.job(e.id), "stalled") == b"1"
    client.claim(queue, 1)
    wait_lease_lapsed(raw, keys.active, e.id)
    r = client.reap_stalled(queue, 100, 2)
    assert (r.recovered, r.dead) == ([], [e.id])
    row = raw.hgetall(keys.job(e.id))
    assert row[b"state"] == b"dead" and row[b"last_error"] == b"stalled"
    assert raw.zrange(keys.dead, 0, -1) == [e.id.encode()]
    with pytest.raises(echomq.StaleTokenError):
        client.complete(queue, e.id, first.token)

    async def via_async() -> None:
        c = await echomq.connect_async(redis_url)
        assert (await c.reap_stalled(queue, 10, 2)).dead == []
        c.close()

    asyncio.run(via_async())


def test_poison_job_killing_its_worker_three_times_ends_dead_stalled(client, raw, queue, keys, redis_url):
    e = client.enqueue(queue, b"kills its worker")
    script = Path(__file__).with_name("worker_proc.py")
    procs: List[subprocess.Popen] = []

    def spawn() -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, str(script), redis_url, queue, "300", "3"],
                             stdout=subprocess.DEVNULL)
        procs.append(p)
        return p

    try:
        for attempt in (1, 2, 3):
            p = spawn()
            wait_until(lambda: raw.hmget(keys.job(e.id), "state", "attempts")
                       == [b"active", str(attempt).encode()], timeout=30)
            p.kill()  # SIGKILL: no settle, no release
            p.wait(10)
        spawn()  # its reap pump counts the third stall
        wait_until(lambda: raw.hget(keys.job(e.id), "state") == b"dead", timeout=30)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    row = raw.hgetall(keys.job(e.id))
    assert row[b"last_error"] == b"stalled" and row[b"stalled"] == b"3"
    assert raw.zrange(keys.dead, 0, -1) == [e.id.encode()]
    assert raw.zcard(keys.pending) == 0 and raw.zcard(keys.active) == 0


def test_fifty_concurrent_producers_with_one_dedup_id_create_one_job(redis_url, raw, queue, keys):
    producers = [echomq.connect(redis_url) for _ in range(50)]
    answers: List[echomq.Enqueued] = []
    gate = threading.Barrier(50)

    def produce(c: echomq.Client, i: int) -> None:
        gate.wait()
        answers.append(c.enqueue(queue, f"from {i}", dedup_id="order-42"))

    threads = [threading.Thread(target=produce, args=(c, i)) for i, c in enumerate(producers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    created = [a for a in answers if not a.duplicate]
    assert len(answers) == 50 and len(created) == 1
    assert {a.id for a in answers} == {created[0].id}
    assert raw.zrange(keys.pending, 0, -1) == [created[0].id.encode()]
    assert raw.get(f"emq:{{{queue}}}:de:order-42") == created[0].id.encode()
    for c in producers:
        c.close()


def test_dedup_release_and_ttl(client, raw, queue, keys, redis_url):
    a = client.enqueue(queue, b"a", dedup_id="d")
    assert client.enqueue(queue, b"b", dedup_id="d").id == a.id
    job = client.claim(queue, 60_000)
    client.complete(queue, job.id, job.token)
    b = client.enqueue(queue, b"c", dedup_id="d")
    assert not b.duplicate and b.id != a.id
    t = client.enqueue(queue, b"t", dedup_id="throttle", dedup_ttl_ms=100)
    assert 0 < raw.pttl(f"emq:{{{queue}}}:de:throttle") <= 100
    # The throttle window ends when the server expires the dedup key.
    wait_until(lambda: not raw.exists(f"emq:{{{queue}}}:de:throttle"))
    assert client.enqueue(queue, b"t", dedup_id="throttle", dedup_ttl_ms=100).id != t.id
    with pytest.raises(echomq.InvalidArgumentError):
        client.enqueue(queue, b"x", dedup_id="a b")
    with pytest.raises(echomq.InvalidArgumentError):
        client.enqueue(queue, b"x", dedup_ttl_ms=10)

    async def via_async() -> None:
        c = await echomq.connect_async(redis_url)
        again = await c.enqueue(queue, b"y", dedup_id="d")
        assert again.duplicate and again.id == b.id
        c.close()

    asyncio.run(via_async())


def test_limits_are_enforced_inside_the_claim(client, raw, queue, keys, redis_url):
    for i in range(5):
        client.enqueue(queue, str(i))
    client.set_concurrency(queue, 2)
    assert raw.hget(keys.meta, "concurrency") == b"2"
    held = client.claim_many(queue, 5, 60_000)
    assert len(held) == 2
    with pytest.raises(echomq.RateLimitedError) as e:
        client.claim(queue, 60_000)
    assert e.value.code == "EMQRATE" and e.value.retry_after_ms == 0
    client.set_concurrency(queue, 0)
    client.set_rate_limit(queue, 2, 60_000)
    assert len(client.claim_many(queue, 5, 60_000)) == 2
    assert raw.get(f"emq:{{{queue}}}:limiter") == b"2"
    with pytest.raises(echomq.RateLimitedError) as e:
        client.claim(queue, 60_000)
    assert 50_000 < e.value.retry_after_ms <= 60_000
    client.set_rate_limit(queue, 0, 0)
    # The handler's own limit: parked without counting an attempt, claims paused.
    job = held[0]
    client.rate_limit(queue, job.id, job.token, 300)
    assert raw.hmget(keys.job(job.id), "state", "attempts") == [b"scheduled", b"0"]
    with pytest.raises(echomq.RateLimitedError):
        client.claim(queue, 60_000)
    with pytest.raises(echomq.StaleTokenError):
        client.complete(queue, job.id, job.token)

    async def via_async() -> None:
        c = await echomq.connect_async(redis_url)
        await c.set_concurrency(queue, 1)
        with pytest.raises(echomq.RateLimitedError):
            await c.claim(queue, 1000)
        await c.set_rate_limit(queue, 0, 0)
        c.close()

    asyncio.run(via_async())


def test_a_rate_limit_holds_for_a_worker(client, raw, queue):
    client.set_rate_limit(queue, 20, 500)
    client.enqueue_many(queue, [str(i) for i in range(200)])
    worker = echomq.Worker(client, queue, lambda job: None, concurrency=20, idle_max_ms=10,
                           handle_signals=False)
    started = time.monotonic()
    t = threading.Thread(target=worker.run)
    t.start()
    try:
        # The window's counter never passes the limit while three windows'
        # worth is claimed (however long a loaded host takes for it).
        while worker.stats().claimed < 60:
            assert int(raw.get(f"emq:{{{queue}}}:limiter") or 0) <= 20
            assert time.monotonic() < started + 120, worker.stats()
            time.sleep(0.01)
        claimed = worker.stats().claimed
        elapsed = time.monotonic() - started
    finally:
        worker.stop()
        t.join(30)
    # A window starts at a claim and lasts 0.5 s: at most elapsed / 0.5 + 1
    # of them began (an upper bound from the measured time, not a speed claim).
    windows = int(elapsed / 0.5) + 1
    assert claimed <= 20 * windows, (claimed, elapsed)
