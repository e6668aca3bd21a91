"""Threads sharing one blocking client run in parallel (the GIL is released
during network I/O) and lose nothing."""

from __future__ import annotations

import threading
import time

import echomq


def test_eight_threads_enqueue_ten_thousand(client, raw, queue, keys):
    per_thread = 1250
    ids: list = [None] * 8
    errors: list = []
    barrier = threading.Barrier(8)

    def produce(n: int) -> None:
        try:
            barrier.wait()
            ids[n] = [client.enqueue(queue, f"{n}:{i}").id for i in range(per_thread)]
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=produce, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    flat = [i for chunk in ids for i in chunk]
    assert len(flat) == 10_000
    assert len(set(flat)) == 10_000
    assert raw.zcard(keys.pending) == 10_000
    assert {m.decode() for m in raw.zrange(keys.pending, 0, -1)} == set(flat)
    assert client.counts(queue).pending == 10_000


def test_a_blocking_call_does_not_hold_the_gil():
    # A server that accepts the TCP connection but never answers: connect
    # blocks in native code until connect_timeout_ms. A pure-Python thread
    # must keep running meanwhile (it could not if the GIL were held).
    import socket

    import pytest

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port = silent.getsockname()[1]
    stop = threading.Event()
    spins = 0

    def spin() -> None:
        nonlocal spins
        while not stop.is_set():
            spins += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        time.sleep(0.05)
        before = spins
        start = time.monotonic()
        with pytest.raises((echomq.TimeoutError, echomq.ConnectionError)):
            echomq.connect(f"redis://127.0.0.1:{port}/", connect_timeout_ms=600)
        elapsed = time.monotonic() - start
        during = spins - before
    finally:
        stop.set()
        t.join()
        silent.close()
    assert elapsed >= 0.5
    assert during > 1000, during
