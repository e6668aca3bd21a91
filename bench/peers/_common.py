"""Shared plumbing for the Python peer drivers (see bench/DRIVERS.md).

Argument parsing, payload construction, the JSON result line, percentile
maths and a watchdog that bounds every run. Nothing here is specific to a
queue library.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time

WORKLOADS = ("enqueue-single", "enqueue-bulk", "prefill", "process", "latency")
CHUNK = 1000  # bulk-path chunk size, fixed by DRIVERS.md

# A run that makes no progress for this long is abandoned (exit 1).
STALL_SECONDS = float(os.environ.get("BENCH_STALL_SECONDS", "120"))
# Hard cap for any single run, whatever progress it makes.
HARD_SECONDS = float(os.environ.get("BENCH_HARD_SECONDS", "600"))


def parse_args(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and not argv[0].startswith("-") and argv[0] not in WORKLOADS:
        # A figure these peers have no driver for (issue #16's idle pickup is
        # EchoMQ's and BullMQ-Node's): answer DRIVERS.md's `unsupported` line
        # and exit 0, so the table says "skipped" rather than argparse's
        # exit 2 being counted as a failed run.
        emit_unsupported(argv[0], f"this driver runs only {', '.join(WORKLOADS)}")
        sys.exit(0)
    p = argparse.ArgumentParser()
    p.add_argument("workload", choices=WORKLOADS)
    p.add_argument("--url", default="redis://127.0.0.1:6379/")
    p.add_argument("--queue", default="bench")
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--rate", type=float, default=1000.0)
    p.add_argument("--payload-size", type=int, default=100)
    return p.parse_args(argv)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def now_ns() -> int:
    """Wall-clock nanoseconds (what the payload's "t" carries)."""
    return time.time_ns()


def payload(i: int, size: int, t: int | None = None) -> dict:
    """{"i": i, "t": t, "pad": "xxx…"} whose compact JSON is `size` bytes
    (or as short as possible when `size` is smaller than the skeleton)."""
    d = {"i": i, "t": now_ns() if t is None else t, "pad": ""}
    base = len(json.dumps(d, separators=(",", ":")))
    d["pad"] = "x" * max(0, size - base)
    return d


def percentile(sorted_vals, q: float):
    """Nearest-rank percentile of an ascending list, q in [0, 100]."""
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, int(round(q / 100.0 * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[k]


def emit(workload, jobs, seconds, version, note="", p50=None, p99=None, **extra):
    rec = {
        "workload": workload,
        "jobs": jobs,
        "seconds": round(seconds, 6) if seconds is not None else None,
        "p50_ms": round(p50, 3) if p50 is not None else None,
        "p99_ms": round(p99, 3) if p99 is not None else None,
        "version": version,
        "note": note,
    }
    rec.update(extra)
    sys.stdout.write(json.dumps(rec) + "\n")
    sys.stdout.flush()


def emit_unsupported(workload, why, version=None):
    rec = {"workload": workload, "unsupported": why}
    if version:
        rec["version"] = version
    sys.stdout.write(json.dumps(rec) + "\n")
    sys.stdout.flush()


class Watchdog:
    """Kills the process (exit 1) if `tick()` is not called for STALL_SECONDS
    or the run exceeds HARD_SECONDS. Runs in a daemon thread so it also
    fires when the event loop or a blocking Redis call is stuck."""

    def __init__(self, what: str):
        self.what = what
        self.start = time.monotonic()
        self.last = self.start
        t = threading.Thread(target=self._run, daemon=True)
        t.start()

    def tick(self):
        self.last = time.monotonic()

    def _run(self):
        while True:
            time.sleep(1.0)
            now = time.monotonic()
            if now - self.last > STALL_SECONDS or now - self.start > HARD_SECONDS:
                log(f"watchdog: {self.what} made no progress for {now - self.last:.0f}s "
                    f"(total {now - self.start:.0f}s); giving up")
                sys.stderr.flush()
                os._exit(1)
