"""The cross-runtime demo's Python pieces: producer.py feeding two worker.py
processes, stopped with SIGTERM and SIGINT."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "examples" / "polyglot"
LINE = re.compile(r"^python worker: processed=(\d+) retried=(\d+) dead=(\d+)$")


@pytest.fixture
def demo_db(redis_url, raw):  # type: ignore[no-untyped-def]
    raw.execute_command("SELECT", 7)
    raw.flushdb()
    yield redis_url + "7", raw
    raw.flushdb()


def test_producer_and_two_workers(demo_db):
    url, raw = demo_db
    env = dict(os.environ, EMQ_URL=url)
    n = 400
    out = subprocess.run([sys.executable, str(DEMO / "producer.py"), str(n)], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == f"python producer: enqueued {n} orders"
    assert raw.zcard("emq:{orders}:pending") == n

    workers = [subprocess.Popen([sys.executable, str(DEMO / "worker.py")], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(2)]
    try:
        deadline = time.monotonic() + 60
        while raw.zcard("emq:{orders.receipts}:pending") < n:
            assert time.monotonic() < deadline, "receipts did not arrive"
            time.sleep(0.05)
        time.sleep(0.3)
        workers[0].send_signal(signal.SIGTERM)
        workers[1].send_signal(signal.SIGINT)
        outputs = [w.communicate(timeout=30) for w in workers]
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
    totals = [0, 0, 0]
    for w, (stdout, stderr) in zip(workers, outputs):
        assert w.returncode == 0, stderr
        lines = stdout.splitlines()
        assert len(lines) == 1, stdout
        m = LINE.match(lines[0])
        assert m, lines[0]
        totals = [t + int(v) for t, v in zip(totals, m.groups())]
    failing = sum(1 for i in range(n) if i % 20 == 7)
    assert totals == [n, failing, 0]
    receipts = {}
    for id in raw.zrange("emq:{orders.receipts}:pending", 0, -1):
        order, runtime, token = raw.hget(b"emq:{orders.receipts}:job:" + id, "payload").split()
        receipts[int(order)] = (runtime, int(token))
    assert sorted(receipts) == list(range(n))
    for order, (runtime, token) in receipts.items():
        assert runtime == b"python"
        assert token == (2 if order % 20 == 7 else 1)
    for key in ("pending", "active", "schedule", "dead"):
        assert raw.zcard(f"emq:{{orders}}:{key}") == 0
