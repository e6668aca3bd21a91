"""Issue #13 §2 and §4 from Python, the core's scenario: progress (holder
only, the ``progress`` event, shown by ``job``), logs (capped, read in ranges,
deleted with the job), kept results (``keep_result_ms``, ``result``,
``wait_for_result`` with its typed errors), sync and asyncio; wire state is
read with redis-py."""

from __future__ import annotations

import asyncio
import threading
from typing import Iterator

import pytest

import echomq


def _one(sub: echomq.Subscription, id: str, name: str) -> echomq.QueueEvent:
    for _ in range(50):
        event = sub.next(timeout_ms=10_000)
        assert event is not None, f"no {name} event"
        if event.job == id and event.event == name:
            return event
    raise AssertionError(f"no {name} event for {id}")


def test_progress_is_written_by_the_holder_only_and_published(client, raw, queue, keys) -> None:  # type: ignore[no-untyped-def]
    id = client.enqueue(queue, b"p").id
    with client.subscribe(queue) as sub:
        with pytest.raises(echomq.StaleTokenError):
            client.update_progress(queue, id, 0, 10)
        job = client.claim(queue, 30_000)
        assert job is not None and job.id == id
        job.update_progress({"done": 3, "of": 10})
        assert raw.hget(keys.job(id), "progress") == b'{"done":3,"of":10}'
        event = _one(sub, id, "progress")
        assert event.fields["progress"] == '{"done":3,"of":10}'
        client.update_progress(queue, id, job.token, 42)
        info = client.job(queue, id)
        assert info is not None and info.progress == 42
        with pytest.raises(echomq.StaleTokenError):
            client.update_progress(queue, id, job.token + 1, 50)
        with pytest.raises(TypeError):
            client.update_progress(queue, id, job.token, object())
        client.complete(queue, id, job.token)
        with pytest.raises(echomq.JobGoneError):
            job.update_progress(100)


def test_logs_are_capped_ranged_and_deleted_with_the_job(client, raw, queue, keys) -> None:  # type: ignore[no-untyped-def]
    id = client.enqueue(queue, b"l").id
    for n in range(1, 6):
        assert client.log(queue, id, f"line {n}", max_lines=3) == min(n, 3)
    assert raw.lrange(keys.job(id) + ":logs", 0, -1) == [b"line 3", b"line 4", b"line 5"]
    assert client.logs(queue, id) == ["line 3", "line 4", "line 5"]
    assert client.logs(queue, id, -1, -1) == ["line 5"]
    with pytest.raises(echomq.InvalidArgumentError):
        client.log(queue, id, "x", max_lines=0)
    job = client.claim(queue, 30_000)
    assert job is not None
    assert job.log("from the handle") == 4  # the default cap (1000), not the last call's 3
    client.complete(queue, id, job.token)
    assert raw.exists(keys.job(id) + ":logs") == 0
    with pytest.raises(echomq.JobGoneError):
        client.log(queue, id, "late")
    # remove deletes the log too
    other = client.enqueue(queue, b"r").id
    client.log(queue, other, "x")
    client.remove(queue, other)
    assert raw.exists(keys.job(other) + ":logs") == 0


def _worker(client: echomq.Client, queue: str, **options: object) -> Iterator[echomq.Worker]:
    def handler(job: echomq.Job) -> object:
        job.log("working")
        job.update_progress(50)
        if job.payload == b"fail":
            raise ValueError("it broke")
        if job.payload == b"json":
            return {"ok": True}
        if job.payload == b"nothing":
            return None
        return "done:" + job.payload.decode()

    worker = echomq.Worker(client, queue, handler, max_attempts=1, idle_max_ms=20,
                           handle_signals=False, **options)  # type: ignore[arg-type]
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        yield worker
    finally:
        worker.stop()
        thread.join(30)


def test_a_worker_keeps_results_and_wait_for_result_answers(client, raw, queue, keys) -> None:  # type: ignore[no-untyped-def]
    ok = client.enqueue(queue, b"a").id
    js = client.enqueue(queue, b"json").id
    empty = client.enqueue(queue, b"nothing").id
    dead = client.enqueue(queue, b"fail").id
    for _ in _worker(client, queue, keep_result_ms=60_000):
        assert client.wait_for_result(queue, ok, 20_000) == b"done:a"
        assert client.wait_for_result(queue, js, 20_000) == b'{"ok":true}'
        assert client.wait_for_result(queue, empty, 20_000) == b""
        with pytest.raises(echomq.JobDeadError) as failed:
            client.wait_for_result(queue, dead, 20_000)
        assert failed.value.last_error == "it broke"
    assert raw.exists(keys.job(ok)) == 0
    assert raw.get(keys.job(ok) + ":result") == b"done:a"
    assert 50_000 <= raw.pttl(keys.job(ok) + ":result") <= 60_000
    assert 50_000 <= raw.pttl(keys.job(ok) + ":logs") <= 60_000
    assert client.logs(queue, ok) == ["working"]
    assert client.result(queue, ok) == b"done:a"
    info = client.job(queue, dead)
    assert info is not None and (info.state, info.progress) == ("dead", 50)
    assert client.result(queue, dead) is None
    with pytest.raises(echomq.JobGoneError):
        client.wait_for_result(queue, echomq.mint_job_id(), 5_000)


def test_without_keep_result_ms_nothing_is_kept(client, raw, queue, keys) -> None:  # type: ignore[no-untyped-def]
    id = client.enqueue(queue, b"a").id
    client.log(queue, id, "one")
    for _ in _worker(client, queue):
        assert client.wait_for(queue, id, 20_000).state == "completed"
    assert raw.exists(keys.job(id) + ":logs", keys.job(id) + ":result") == 0
    assert client.result(queue, id) is None
    pending = client.enqueue(queue + "-idle", b"p").id
    with pytest.raises(echomq.TimeoutError):
        client.wait_for_result(queue + "-idle", pending, 300)


def test_asyncio_progress_logs_and_results(redis_url, raw, queue, keys) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        client = await echomq.connect_async(redis_url)

        async def handler(job: echomq.Job) -> object:
            await client.log(queue, job.id, "async line")
            await client.update_progress(queue, job.id, job.token, {"pct": 100})
            return b"async:" + job.payload

        id = (await client.enqueue(queue, b"x")).id
        waiting = asyncio.ensure_future(client.wait_for_result(queue, id, 20_000))
        worker = echomq.Worker(client, queue, handler, keep_result_ms=30_000, idle_max_ms=20,
                               handle_signals=False)
        task = asyncio.ensure_future(worker.run_async())
        assert await waiting == b"async:x"
        worker.stop()
        await task
        assert await client.result(queue, id) == b"async:x"
        assert await client.logs(queue, id) == ["async line"]
        client.close()

    asyncio.run(main())
