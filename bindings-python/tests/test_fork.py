"""After os.fork(), a client inherited by the child works (it reconnects,
as docs/PYTHON.md promises); it never hangs and never corrupts the parent's
connection."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from typing import Callable

import pytest

import echomq
from conftest import wait_until

# Python 3.12+ warns on every fork of a multi-threaded process; forking one is
# exactly what these tests exercise.
pytestmark = pytest.mark.filterwarnings("ignore:.*multi-threaded.*fork:DeprecationWarning")


def in_child(fn: Callable[[], str], timeout: float = 20.0) -> str:
    """Run fn in a forked child; its outcome comes back over a pipe. A child
    that does not finish in time is killed and the test fails."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        os.close(r)
        code = 0
        try:
            out = "ok " + fn()
        except echomq.EchoMQError as e:
            out = f"emq {type(e).__name__}: {e}"
        except BaseException as e:
            out = f"err {type(e).__name__}: {e}"
            code = 1
        os.write(w, out.encode())
        os._exit(code)
    os.close(w)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(r)
            raise AssertionError("the forked child hung")
        time.sleep(0.01)
    with os.fdopen(r, "rb") as f:
        out = f.read().decode()
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, out
    return out


def open_thread_connection(c: echomq.Client, raw, name: str, queue: str) -> None:
    """Decision 16.12: this thread's own connection opens in the background
    from its second call. Enqueue (on a side queue) until the server shows
    it beside the shared one; the call after takes it up."""
    for _ in range(500):
        c.enqueue(queue + "-warm", b"warm")
        if sum(1 for cl in raw.client_list() if cl.get("name") == name) == 2:
            c.enqueue(queue + "-warm", b"warm")
            return
        time.sleep(0.005)
    raise AssertionError("the thread's own connection never opened")


def test_child_reconnects_and_parent_keeps_working(redis_url, raw, queue, keys):
    c = echomq.connect(redis_url)
    first = c.enqueue(queue, b"parent before fork")

    def child() -> str:
        e = c.enqueue(queue, b"from child")
        n = c.counts(queue).pending
        return f"{e.id} {n}"

    out = in_child(child)
    assert out.startswith("ok "), out
    child_id, pending = out[3:].split()
    assert pending == "2"
    assert raw.hget(keys.job(child_id), "payload") == b"from child"
    # The parent's connection is intact.
    after = c.enqueue(queue, b"parent after fork")
    assert c.counts(queue).pending == 3
    job = c.claim(queue, 10_000)
    assert job is not None and job.id == first.id
    c.complete(queue, job.id, job.token)
    assert c.job(queue, after.id) is not None
    c.close()


def test_fork_while_parent_threads_are_busy(redis_url, queue):
    c = echomq.connect(redis_url)
    stop = threading.Event()
    sent = [0]

    def busy() -> None:
        while not stop.is_set():
            c.enqueue(queue, b"busy")
            sent[0] += 1

    threads = [threading.Thread(target=busy) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for _ in range(5):
            out = in_child(lambda: str(c.counts(queue).pending))
            assert out.startswith("ok "), out
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert c.counts(queue).pending == sent[0]
    c.close()


def test_async_client_in_a_forked_child(redis_url, queue):
    async def make() -> echomq.AsyncClient:
        return await echomq.connect_async(redis_url)

    ac = asyncio.run(make())
    asyncio.run(ac.enqueue(queue, b"parent"))

    def child() -> str:
        e = asyncio.run(ac.enqueue(queue, b"child"))
        return e.id

    out = in_child(child)
    assert out.startswith("ok "), out
    assert asyncio.run(ac.counts(queue)).pending == 2
    ac.close()


def test_async_enqueues_in_a_forked_child_take_a_caller_thread_of_its_own(redis_url, raw, queue):
    """Decision 16.11: the parent's caller thread (and its connection) does
    not exist in the child, which starts its own; the parent's keeps
    serving after the child has gone."""
    async def parent_enqueues(n: int) -> None:
        for i in range(n):
            await ac.enqueue(queue, b"parent %d" % i)

    async def make() -> echomq.AsyncClient:
        return await echomq.connect_async(redis_url, client_name="fork-caller")

    ac = asyncio.run(make())
    asyncio.run(parent_enqueues(1))
    # The caller thread's connection opens in the background: until the
    # server shows it beside the shared one.
    wait_until(lambda: sum(1 for cl in raw.client_list() if cl.get("name") == "fork-caller") == 2, 30)
    asyncio.run(parent_enqueues(5))

    def child() -> str:
        async def three() -> int:
            return len([await ac.enqueue(queue, b"child") for _ in range(3)])
        return str(asyncio.run(three()))

    out = in_child(child)
    assert out == "ok 3", out
    asyncio.run(parent_enqueues(2))
    assert asyncio.run(ac.counts(queue)).pending == 11
    ac.close()


def test_client_made_in_child_after_parent_used_runtime(redis_url, queue):
    c = echomq.connect(redis_url)
    c.counts(queue)

    def child() -> str:
        c2 = echomq.connect(redis_url)
        e = c2.enqueue(queue, b"fresh")
        c2.close()
        return e.id

    out = in_child(child)
    assert out.startswith("ok "), out
    assert c.counts(queue).pending == 1
    c.close()


def test_a_child_closing_the_inherited_client_leaves_the_parents_own_connection_alone(redis_url, raw, queue):
    # The parent's enqueue runs on its thread's own connection (decision 16.8),
    # whose epoll descriptor the child shares: closing the client in the child
    # must not deregister the parent's socket (the parent's next enqueue would hang).
    c = echomq.connect(redis_url, response_timeout_ms=5_000, client_name="fork-own")
    open_thread_connection(c, raw, "fork-own", queue)
    c.enqueue(queue, b"parent before fork")

    def child() -> str:
        c.close()
        return "closed"

    assert in_child(child) == "ok closed"
    c.enqueue(queue, b"parent after the child closed")
    assert c.counts(queue).pending == 2
    c.close()


def test_children_close_inherited_clients_while_the_parents_runtime_is_busy(redis_url, raw, queue):
    # Closing (or dropping) a client in a forked child must not touch the
    # parent's runtime: dropping the inherited connection would abort its
    # driver task there, taking scheduler locks a parent's thread may have
    # held at fork(), and the child would hang (seen once in CI). So forks
    # happen while a worker and a producer keep the parent's runtime busy.
    busy = echomq.connect(redis_url)
    worker = echomq.Worker(busy, queue, lambda job: None, concurrency=8)
    running = threading.Thread(target=worker.run, daemon=True)
    running.start()
    stop = threading.Event()

    def produce() -> None:
        while not stop.is_set():
            busy.enqueue_many(queue, [b"load"] * 20)

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    try:
        for i in range(30):
            c = echomq.connect(redis_url, response_timeout_ms=5_000, client_name=f"fork-busy-{i}")
            open_thread_connection(c, raw, f"fork-busy-{i}", queue)
            c.enqueue(queue, b"before fork")

            def child() -> str:
                c.close()
                return "closed"

            assert in_child(child, timeout=10.0) == "ok closed"
            c.enqueue(queue, b"after the child closed")
            c.close()
    finally:
        stop.set()
        producer.join(10)
        worker.stop()
        running.join(10)
    assert not running.is_alive()
    busy.close()


def test_children_call_on_inherited_clients_while_the_parents_threads_are_mid_call(redis_url, queue):
    # A child's first call on an inherited client reconnects. Nothing on that
    # path may wait on a lock one of the parent's threads held at fork():
    # the process runtime and the live connection are found without locks,
    # and the reconnect lock is the child's own. So the forks happen while
    # two threads keep calling on the very client the children inherit.
    c = echomq.connect(redis_url, response_timeout_ms=5_000)
    stop = threading.Event()

    def call() -> None:
        while not stop.is_set():
            c.enqueue_many(queue, [b"load"] * 5)
            c.counts(queue)

    callers = [threading.Thread(target=call, daemon=True) for _ in range(2)]
    for t in callers:
        t.start()
    try:
        for _ in range(30):
            def child() -> str:
                return c.enqueue(queue + "-child", b"from the child").id

            out = in_child(child, timeout=10.0)
            assert out.startswith("ok "), out
    finally:
        stop.set()
        for t in callers:
            t.join(10)
    assert c.counts(queue + "-child").pending == 30
    c.close()
