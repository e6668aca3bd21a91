"""The asyncio client: coroutines on the running loop, network work on the
core's runtime."""

from __future__ import annotations

import asyncio
import inspect
import threading

import pytest
from conftest import wait_until

import echomq


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(asyncio.wait_for(coro, 60))


def test_happy_path(redis_url, raw, queue, keys):
    async def main() -> None:
        async with await echomq.connect_async(redis_url) as c:
            assert isinstance(c, echomq.AsyncClient)
            coro = c.enqueue(queue, b"hello")
            assert inspect.iscoroutine(coro)
            e = await coro
            assert raw.hgetall(keys.job(e.id)) == {
                b"state": b"pending", b"attempts": b"0", b"payload": b"hello"}
            dup = await c.enqueue(queue, b"other", id=e.id)
            assert dup.duplicate and dup.id == e.id
            job = await c.claim(queue, 10_000)
            assert job is not None and (job.id, job.payload, job.token) == (e.id, b"hello", 1)
            with pytest.raises(echomq.StaleTokenError):
                await c.complete(queue, job.id, 5)
            await c.extend(queue, job.id, job.token, 20_000)
            assert await c.retry(queue, job.id, job.token, 0, 5, "boom") == "scheduled"
            assert await c.promote(queue) == 1
            job2 = await c.claim(queue, 10_000)
            assert job2 is not None and job2.token == 2
            assert await c.complete_many(queue, [job2]) == [None]
            assert not raw.exists(keys.job(e.id))
            counts = await c.counts(queue)
            assert counts.completed == 1 and counts.pending == 0
            assert await c.job(queue, e.id) is None
            with pytest.raises(echomq.JobGoneError):
                await c.complete(queue, e.id, 2)
            many = await c.enqueue_many(queue, [b"a", b"b"])
            assert all(isinstance(m, echomq.Enqueued) for m in many)
            assert len(await c.browse(queue, "pending")) == 2
            await c.pause(queue)
            assert await c.is_paused(queue)
            assert await c.claim(queue, 1000) is None
            await c.resume(queue)
            jobs = await c.claim_many(queue, 5, 50)
            assert len(jobs) == 2
            assert await c.extend_many(queue, jobs, 10_000) == [None, None]
            await asyncio.sleep(0)
            at = await c.enqueue(queue, b"x", run_at_ms=1)
            later = await c.enqueue(queue, b"y", delay_ms=60_000)
            assert await c.promote(queue, 10) == 1
            await c.remove(queue, later.id)
            assert await c.job(queue, at.id) is not None
            dead_job = await c.claim(queue, 1000)
            assert dead_job is not None
            assert await c.retry(queue, dead_job.id, dead_job.token, 0, 1, "x") == "dead"
            await c.requeue_dead(queue, dead_job.id)
            with pytest.raises(echomq.NotDeadError):
                await c.requeue_dead(queue, dead_job.id)
            assert await c.reap(queue) == 0
            assert c.bundle_mismatches() == []
        with pytest.raises(echomq.ClosedError):
            await c.counts(queue)

    run(main())


def test_a_thousand_concurrent_enqueues_lose_nothing(redis_url, raw, queue, keys):
    async def main() -> None:
        c = await echomq.connect_async(redis_url)
        results = await asyncio.gather(*(c.enqueue(queue, f"job {i}") for i in range(1000)))
        ids = [r.id for r in results]
        assert len(set(ids)) == 1000
        assert raw.zcard(keys.pending) == 1000
        assert {m.decode() for m in raw.zrange(keys.pending, 0, -1)} == set(ids)
        payloads = {raw.hget(keys.job(i), "payload") for i in ids}
        assert payloads == {f"job {i}".encode() for i in range(1000)}
        c.close()

    run(main())


def test_the_loop_stays_responsive_and_runs_on_its_own_thread(redis_url, queue):
    async def main() -> None:
        c = await echomq.connect_async(redis_url)
        loop_thread = threading.get_ident()
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.001)

        t = asyncio.ensure_future(ticker())
        for _ in range(200):
            await c.enqueue(queue, b"x")
        t.cancel()
        assert ticks > 10
        assert threading.get_ident() == loop_thread
        c.close()

    run(main())


def test_errors_and_bad_input_are_typed(redis_url, raw, queue, keys):
    async def main() -> None:
        c = await echomq.connect_async(redis_url)
        with pytest.raises(echomq.InvalidQueueError):
            await c.enqueue("no spaces", b"x")
        with pytest.raises(TypeError):
            await c.enqueue(queue, 42)  # type: ignore[arg-type]
        with pytest.raises(echomq.InvalidIdError):
            await c.complete(queue, "JOB123", 1)
        with pytest.raises(echomq.KindError):
            await c.enqueue(queue, b"x", id="ORD0NgWEfAEJfs")
        assert raw.exists(keys.pending) == 0
        c.close()

    run(main())


def test_cancelled_awaiter_does_not_break_the_client(redis_url, queue):
    async def main() -> None:
        c = await echomq.connect_async(redis_url)
        tasks = [asyncio.ensure_future(c.enqueue(queue, b"x")) for _ in range(50)]
        for t in tasks[::2]:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert (await c.counts(queue)).pending >= 25
        c.close()

    run(main())


def test_connect_async_refused_is_typed():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()

    async def main() -> None:
        with pytest.raises(echomq.ConnectionError):
            await echomq.connect_async(f"redis://127.0.0.1:{port}/", connect_timeout_ms=2000)

    run(main())


def test_native_verbs_need_a_running_loop(redis_url):
    async def make() -> echomq.AsyncClient:
        return await echomq.connect_async(redis_url)

    c = asyncio.run(make())
    with pytest.raises(RuntimeError):
        c._aclose()  # a loop future: only inside a running loop (and still open)
    # A verb answers a coroutine, which starts the call when first awaited:
    # one made outside the loop works inside one.
    coro = c.counts("q")
    assert asyncio.iscoroutine(coro)
    assert asyncio.run(coro).pending == 0
    # create_task takes it (it wants a coroutine, not any awaitable).
    async def tasked() -> int:
        return (await asyncio.create_task(c.counts("q"))).pending
    assert asyncio.run(tasked()) == 0


EXIT_SCRIPT = """
import asyncio, sys, echomq
async def main():
    c = await echomq.connect_async(sys.argv[1])
    await asyncio.gather(*(c.enqueue(sys.argv[2], b"x") for _ in range(300)))
    # Fire-and-forget work still in flight when the interpreter exits.
    for _ in range(50):
        asyncio.ensure_future(c.counts(sys.argv[2]))
asyncio.run(main())
"""


def test_exiting_right_after_async_work_is_clean(redis_url, queue):
    # Regression: a core thread handing an answer back while CPython finalizes
    # used to be ended by pthread_exit mid-Rust-frame (SIGABRT at exit).
    import subprocess
    import sys

    for _ in range(12):
        p = subprocess.run([sys.executable, "-c", EXIT_SCRIPT, redis_url, queue],
                           capture_output=True, timeout=60)
        assert p.returncode == 0, p.stderr.decode()[-2000:]


def test_enqueues_run_on_a_connection_of_the_caller_thread_closed_with_the_client(
        redis_url, raw, queue, keys):
    """Decision 16.11: asyncio's enqueue verbs run on the core's caller
    thread, on a connection of its own per client, opened in the background
    by the first enqueue, fenced like every connection, closed with the
    client."""
    name = f"emq-caller-{queue}"

    def shown() -> int:
        return sum(1 for c in raw.client_list() if c.get("name") == name)

    async def main() -> None:
        c = await echomq.connect_async(redis_url, client_name=name)
        assert shown() == 1, "connect opens the shared connection only"
        await c.enqueue(queue, b"first")
        await asyncio.to_thread(wait_until, lambda: shown() == 2)
        ids = [(await c.enqueue(queue, b"one-%d" % i)).id for i in range(100)]
        delayed = await c.enqueue(queue, b"later", delay_ms=60_000)
        assert shown() == 2, "one-at-a-time calls reuse the caller thread's"
        assert raw.zcard(keys.pending) == 101
        assert raw.zscore(keys.schedule, delayed.id) is not None
        assert raw.hget(keys.job(ids[99]), "payload") == b"one-99"
        c.close()
        with pytest.raises(echomq.ClosedError):
            await c.enqueue(queue, b"closed")
        await asyncio.to_thread(wait_until, lambda: shown() == 0)

    run(main())
