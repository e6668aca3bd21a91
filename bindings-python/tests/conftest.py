"""Fixtures: one real redis-server (or $EMQ_TEST_SERVER) per test session on a free port (never a
mock), a raw connection (redis-py) to assert wire state, and a fresh queue
name per test."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from typing import Iterator, Tuple

import pytest
import redis

import echomq


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_own_server(server: str) -> "tuple[subprocess.Popen[bytes], str]":
    """Start redis-server on a free port and wait until *our* child answers.
    The port is only free when we looked: if a sibling's server took it, ours
    exits (or the PING would answer from theirs, which INFO's process_id
    tells apart), and we try another port."""
    for _ in range(20):
        port = _free_port()
        proc = subprocess.Popen(
            [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/"
        deadline = time.monotonic() + 10
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                info = redis.Redis.from_url(url).info("server")
            except redis.ConnectionError:
                time.sleep(0.05)
                continue
            if info.get("process_id") == proc.pid:
                return proc, url
            break  # another process answers on this port
        proc.kill()
        proc.wait()
    raise RuntimeError("redis-server did not start on a free port in 20 tries")


def _stop(proc: "subprocess.Popen[bytes]") -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def _server_binary() -> str:
    """$EMQ_TEST_SERVER (e.g. scripts/test.sh's valkey-server), else redis-server:
    the same choice as the Rust harness (core/tests/common/flavour.rs)."""
    server = os.environ.get("EMQ_TEST_SERVER", "").strip() or shutil.which("redis-server")
    assert server, "redis-server is required (scripts/test-python.sh installs it)"
    return server


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    given = os.environ.get("EMQ_TEST_REDIS_URL")
    if given:
        yield given
        return
    proc, url = _start_own_server(_server_binary())
    try:
        yield url
    finally:
        _stop(proc)


@pytest.fixture
def own_server() -> "Iterator[Tuple[str, subprocess.Popen[bytes]]]":
    """A redis-server of this test's own (to stop under a running worker)."""
    proc, url = _start_own_server(_server_binary())
    try:
        yield url, proc
    finally:
        _stop(proc)


@pytest.fixture
def raw(redis_url: str) -> Iterator["redis.Redis[bytes]"]:
    conn = redis.Redis.from_url(redis_url)
    yield conn
    conn.close()


@pytest.fixture(scope="session")
def client(redis_url: str) -> Iterator[echomq.Client]:
    c = echomq.connect(redis_url, client_name="pytest")
    yield c
    c.close()


@pytest.fixture
def queue() -> str:
    return "t-" + uuid.uuid4().hex[:12]


class Keys:
    """The wire names of one queue (PROTOCOL.md §2), spelled out independently."""

    def __init__(self, q: str) -> None:
        self.pending = f"emq:{{{q}}}:pending"
        self.active = f"emq:{{{q}}}:active"
        self.schedule = f"emq:{{{q}}}:schedule"
        self.dead = f"emq:{{{q}}}:dead"
        self.meta = f"emq:{{{q}}}:meta"
        self.completed = f"emq:{{{q}}}:metrics:completed"
        self.failed = f"emq:{{{q}}}:metrics:failed"
        self.q = q

    def job(self, id: str) -> str:
        return f"emq:{{{self.q}}}:job:{id}"


@pytest.fixture
def keys(queue: str) -> Keys:
    return Keys(queue)


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.02) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(interval)


def wait_lease_lapsed(raw: "redis.Redis[bytes]", active_key: str, id: str) -> None:
    """Wait until the server's clock passes job `id`'s lease deadline (its
    score in `active`): a state the server shows, not a guessed sleep."""
    deadline = raw.zscore(active_key, id)
    assert deadline is not None, f"{id} is not in {active_key}"

    def lapsed() -> bool:
        s, us = raw.time()
        return s * 1000 + us // 1000 > deadline

    wait_until(lapsed)
