"""Failure edges (issue #39 §1, §3, §4). A script that ends while a worker
thread (or a blocked call) is still inside the library exits cleanly, never
with a crash: a run
in a daemon thread, `stop()`, and the script ends, with the server up or
killed just before; and `stop()` ends `run()` within its grace period even
when the server is gone. Each case runs in fresh subprocesses, repeatedly,
to catch a race at interpreter exit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
import uuid

import pytest
import redis

import echomq

from conftest import _start_own_server, _stop

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = 10


def _script(url: str, mode: str, server_pid: int) -> "subprocess.CompletedProcess[str]":
    queue = "exit-" + uuid.uuid4().hex[:8]
    return subprocess.run(
        [sys.executable, os.path.join(HERE, "exit_proc.py"), url, queue, mode, str(server_pid)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _check(done: "subprocess.CompletedProcess[str]", what: str) -> None:
    assert done.returncode == 0, (
        f"{what}: exit status {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    )
    assert "exiting" in done.stdout, f"{what}: {done.stdout}"


@pytest.mark.parametrize("mode", ["join", "no-join"])
def test_a_script_ending_with_a_stopped_worker_exits_cleanly(redis_url: str, mode: str) -> None:
    for run in range(RUNS):
        started = time.monotonic()
        done = _script(redis_url, mode, 0)
        _check(done, f"server up, {mode}, run {run}")
        if mode == "join":
            assert "returned=True" in done.stdout, done.stdout
        print(f"server up, {mode}, run {run}: {time.monotonic() - started:.2f} s")


@pytest.mark.parametrize("mode", ["join", "no-join", "blocked-call"])
def test_a_script_ending_after_the_server_was_killed_exits_cleanly(mode: str) -> None:
    server = shutil.which("redis-server")
    assert server
    for run in range(RUNS):
        proc, url = _start_own_server(server)
        try:
            started = time.monotonic()
            done = _script(url, mode, proc.pid)
            took = time.monotonic() - started
        finally:
            _stop(proc)
        _check(done, f"server killed, {mode}, run {run}")
        if mode == "join":
            # stop() ended run() within join(15), the server gone.
            assert "returned=True" in done.stdout, done.stdout
        print(f"server killed, {mode}, run {run}: {took:.2f} s")


def test_a_server_that_is_gone_fails_a_call_within_the_connect_timeout(own_server) -> None:  # type: ignore[no-untyped-def]
    """Issue #39 §3: with the defaults (connect timeout 5 s, response
    timeout 30 s), a call against a server that is gone answers the typed
    UnavailableError (the first may be a ConnectionError: it learns the
    socket is gone after sending) well before the response timeout."""
    url, proc = own_server
    c = echomq.connect(url)
    c.enqueue("gone", b"x")
    proc.kill()
    proc.wait()
    errors = []
    for call in range(3):
        started = time.monotonic()
        with pytest.raises((echomq.UnavailableError, echomq.ConnectionError)) as caught:
            c.counts("gone")
        took = time.monotonic() - started
        print(f"call {call} with the server gone: {type(caught.value).__name__} after {took:.3f} s")
        assert took < 15, f"call {call} took {took:.1f} s"
        errors.append(caught.value)
    assert isinstance(errors[-1], echomq.UnavailableError), errors
    c.close()


def test_a_fenced_out_worker_run_raises_the_fence_error(own_server) -> None:  # type: ignore[no-untyped-def]
    """Issue #39 §4: after the record moves on (what `emq upgrade --yes`
    ends with) and a reconnect, a worker still speaking the old wire ends
    its run() with VersionFenceError instead of retrying forever."""
    url, _ = own_server
    raw = redis.Redis.from_url(url)
    old = echomq.connect(url, wire_version="echomq:2.0.0")
    worker = echomq.Worker(old, "fenced", lambda job: None, idle_max_ms=50)
    outcome: list = []

    def run() -> None:
        try:
            worker.run()
            outcome.append(None)
        except echomq.EchoMQError as e:
            outcome.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while raw.get("{emq}:version") != b"echomq:2.0.0":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    raw.set("{emq}:version", "echomq:2.1.0")
    raw.client_kill_filter(_type="normal", skipme=True)
    thread.join(30)
    assert not thread.is_alive(), "run() ended"
    assert len(outcome) == 1 and isinstance(outcome[0], echomq.VersionFenceError), outcome
    assert worker.stats().claim_failures <= 3, worker.stats()
    with pytest.raises(echomq.VersionFenceError):
        old.enqueue("fenced", b"late")
    old.close()
    raw.close()
