"""Issue #17's Python shapes: queue handles, keyword options, datetime and
timedelta arguments, ``job.attempts``, ``connect()`` without a URL, unknown
row states, negative integers, context managers and the exception names."""

from __future__ import annotations

import asyncio
import builtins
import threading
import time
from datetime import datetime, timedelta, timezone

import pytest

import echomq

from conftest import wait_until


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(asyncio.wait_for(coro, 60))


def test_a_queue_handle_carries_the_name(client, raw, queue, keys):
    with pytest.raises(echomq.InvalidQueueError):
        client.queue("no spaces")
    q = client.queue(queue)
    assert isinstance(q, echomq.Queue) and q.name == queue and q.client is client
    sent = q.enqueue(b"hello")
    assert raw.zscore(keys.pending, sent.id) is not None
    q.enqueue_many([b"a", b"b"])
    assert q.counts().pending == 3 == client.counts(queue).pending
    q.pause()
    assert q.is_paused() and q.claim(1000) is None
    q.resume()
    job = q.claim(timedelta(seconds=30))
    assert job is not None and job.id == sent.id
    assert (job.token, job.attempts) == (1, 1)
    # retry takes keywords; omitted ones are the core's defaults.
    assert q.retry(job.id, job.token, error="smtp down") == "scheduled"
    assert raw.hget(keys.job(job.id), "last_error") == b"smtp down"
    assert q.promote() == 1
    again = q.claim_many(3, 30_000)
    assert {j.id: j.attempts for j in again}[sent.id] == 2
    assert len(q.browse("active", limit=2)) == 2
    assert q.complete_many(again) == [None, None, None]
    c = q.counts()
    assert (c.pending, c.active, c.completed) == (0, 0, 3)


def test_enqueue_keywords_schedule_by_time_delay_and_id(client, raw, queue, keys):
    q = client.queue(queue)
    at = datetime(2100, 1, 1, tzinfo=timezone.utc)
    e = q.enqueue(b"x", run_at_ms=at)
    assert raw.zscore(keys.schedule, e.id) == at.timestamp() * 1000
    before = time.time() * 1000
    d = q.enqueue(b"y", delay_ms=timedelta(minutes=5))
    score = raw.zscore(keys.schedule, d.id)
    assert score is not None and before + 290_000 < score < before + 310_000
    mine = echomq.mint_job_id()
    first = q.enqueue(b"z", id=mine, delay_ms=60_000)
    assert (first.id, first.duplicate) == (mine, False)
    assert q.enqueue(b"other", id=mine).duplicate
    assert raw.hget(keys.job(mine), "payload") == b"z"
    with pytest.raises(echomq.InvalidArgumentError):
        q.enqueue(b"w", run_at_ms=1, delay_ms=1)
    assert raw.zcard(keys.schedule) == 3 and raw.zcard(keys.pending) == 0
    # The client's form takes the same keywords.
    assert not client.enqueue(queue, b"v", delay_ms=timedelta(seconds=1)).duplicate


def test_negative_integers_are_invalid_arguments_not_overflow(client, queue):
    for call in (
        lambda: client.claim(queue, -1),
        lambda: client.claim_many(queue, -2, 1000),
        lambda: client.enqueue(queue, b"x", delay_ms=-5),
        lambda: client.enqueue(queue, b"x", delay_ms=timedelta(seconds=-1)),
        lambda: client.promote(queue, -1),
        lambda: client.drain(queue, limit=-1),
        lambda: client.queue(queue).purge_dead(older_than_ms=-1),
        lambda: echomq.Worker(client, queue, lambda job: None, lease_ms=-1),
    ):
        with pytest.raises(echomq.InvalidArgumentError) as caught:
            call()
        assert isinstance(caught.value, echomq.EchoMQError)
    with pytest.raises(TypeError):
        client.claim(queue, "1000")


def test_job_shows_an_unknown_state_typed(client, raw, queue, keys):
    id = echomq.mint_job_id()
    raw.hset(keys.job(id), mapping={"state": "awaiting_children", "attempts": "0", "payload": "p"})
    row = client.queue(queue).job(id)
    assert row is not None
    assert (row.state, row.raw_state, row.payload) == ("unknown", "awaiting_children", b"p")
    known = client.queue(queue).enqueue(b"k")
    row = client.job(queue, known.id)
    assert row is not None and (row.state, row.raw_state) == ("pending", "pending")


def test_connect_without_a_url_reads_emq_url(redis_url, monkeypatch, queue, raw, keys):
    monkeypatch.setenv("EMQ_URL", redis_url)
    with echomq.connect() as c:
        c.queue(queue).enqueue(b"x")
    assert raw.zcard(keys.pending) == 1

    async def main() -> None:
        async with await echomq.connect_async() as ac:
            assert (await ac.queue(queue).counts()).pending == 1

    run(main())


def test_async_client_aclose_and_async_queue(redis_url, queue, keys, raw):
    async def main() -> None:
        ac = await echomq.connect_async(redis_url)
        q = ac.queue(queue)
        assert isinstance(q, echomq.AsyncQueue) and q.client is ac
        e = await q.enqueue(b"a", delay_ms=timedelta(hours=1))
        assert (await q.counts()).scheduled == 1
        assert await q.browse("schedule") == [e.id]
        assert await q.drain(include_scheduled=True) == 1
        await ac.aclose()
        with pytest.raises(echomq.ClosedError):
            await q.counts()

    run(main())


def test_worker_is_a_context_manager(client, queue):
    done = threading.Event()

    def handler(job: echomq.Job) -> None:
        done.set()

    client.queue(queue).enqueue(b"x")
    with client.queue(queue).worker(
        handler,
        idle_max_ms=timedelta(milliseconds=10),
        wake_fallback_ms=timedelta(seconds=2),
    ) as w:
        t = threading.Thread(target=w.run)
        t.start()
        assert done.wait(10)
    t.join(10)  # leaving the block stopped it
    assert not t.is_alive() and w.is_stopping()


def test_async_worker_context_waits_for_the_drain(redis_url, queue):
    async def main() -> None:
        async with await echomq.connect_async(redis_url) as ac:
            q = ac.queue(queue)
            seen: list = []

            async def handler(job: echomq.Job) -> None:
                seen.append(job.attempts)

            await q.enqueue(b"x")
            async with q.worker(handler) as w:
                task = asyncio.create_task(w.run_async())
                while not seen:
                    await asyncio.sleep(0.01)
            # Leaving the block stopped the worker and waited for its drain.
            assert w.is_stopping()
            await asyncio.wait_for(task, 10)
            assert w.stats().completed == 1 and seen == [1]

    run(main())


def test_timeout_and_connection_errors_are_also_the_builtins():
    assert issubclass(echomq.TimeoutError, builtins.TimeoutError)
    assert issubclass(echomq.ConnectionError, builtins.ConnectionError)
    try:
        raise echomq.TimeoutError("slow")
    except TimeoutError as e:  # the builtin name catches ours
        assert isinstance(e, echomq.EchoMQError)
    # A star import does not rebind the builtins.
    namespace: dict = {}
    exec("from echomq import *", namespace)
    assert "TimeoutError" not in namespace and "ConnectionError" not in namespace
    assert namespace["UnrecoverableError"] is echomq.Unrecoverable


def test_unrecoverable_error_is_one_name_with_the_old_alias(client, queue, raw, keys):
    def handler(job: echomq.Job) -> None:
        raise echomq.UnrecoverableError("bad input")

    q = client.queue(queue)
    q.enqueue(b"x")
    w = q.worker(handler, idle_max_ms=10, handle_signals=False)
    t = threading.Thread(target=w.run)
    t.start()
    wait_until(lambda: raw.zcard(keys.dead) == 1)
    w.stop()
    t.join(10)
    assert w.stats().dead == 1
