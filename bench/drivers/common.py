"""Shared by the Python drivers: the DRIVERS.md command line, payloads, output."""

from __future__ import annotations

import argparse
import json
import sys
import time


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--url", default="redis://127.0.0.1:6379/")
    ap.add_argument("--queue", default="bench")
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--concurrency", type=int, default=50)
    ap.add_argument("--rate", type=float, default=2_000)
    ap.add_argument("--payload-size", type=int, default=100)
    ap.add_argument("--events", choices=("on", "off"), default="on")
    ap.add_argument("--listeners", choices=("on", "off"), default="off")
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    # Jobs per handler call in the process workload; 0 (default) = the concurrency.
    ap.add_argument("--handler-batch", type=int, default=0)
    return ap.parse_args()


def payload(i: int, size: int) -> bytes:
    head = '{"i":%d,"t":%d,"pad":"' % (i, time.time_ns())
    return (head + "x" * max(size - len(head) - 2, 0) + '"}').encode()


def enqueued_at_ns(p: bytes) -> int:
    try:
        return int(p.split(b'"t":', 1)[1].split(b",", 1)[0])
    except (IndexError, ValueError):
        return 0


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(int(len(values) * p), len(values) - 1)]


def report(workload: str, jobs: int, seconds: float, version: str, p50=None, p99=None, note: str = "") -> None:
    print(json.dumps({"workload": workload, "jobs": jobs, "seconds": seconds, "p50_ms": p50,
                      "p99_ms": p99, "version": version, "note": note}))
    sys.stdout.flush()


def wait_until(done, limit: float = 240.0) -> None:
    deadline = time.monotonic() + limit
    while not done():
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        time.sleep(0.0005)
