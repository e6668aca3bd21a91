#!/usr/bin/env python3
"""bench/hintless_pickup.py — idle pickup of a job written WITHOUT a wake hint (issue #39
item 12): another runtime's enqueue, a raw `EVALSHA` of the enqueue script, `redis-cli`.

An idle Python worker (default configuration, concurrency 4) sits parked; a producer then
writes N jobs, one every ~200 ms, and each job's handler reports how long after its write it
started. Three rows, each on a fresh throwaway redis-server:

  hint               our client's enqueue (wake hint on `emq:{q}:wake`): the reference row
  hintless           raw EVALSHA of the enqueue script, keyspace events off (Redis' default)
  hintless + events  the same with `notify-keyspace-events Kz` (idle workers subscribe)

Beside the latencies: the commands per second the idle worker sent over an idle window
(MONITOR's lines from clients; commands a script runs inside the server are not sent) — the
budget is 1.

    python3 bench/hintless_pickup.py --python .venv/bin/python [--n 50] [--idle-seconds 8]

`--python` must import echomq (scripts/python-env.sh) and redis (pip install redis).
"""
from __future__ import annotations

import argparse
import datetime as dt
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import ENQUEUE_SHA, QUEUE, ROOT, Redis  # noqa: E402

# The worker: prints one line per job, "<ms from the write to the handler's start>".
WORKER = textwrap.dedent(
    """
    import sys, time, echomq
    client = echomq.connect(sys.argv[1])
    def handle(job):
        sent_ns = int(job.payload.decode())
        # One write per line: four handler threads print at once.
        sys.stdout.write(f"{(time.time_ns() - sent_ns) / 1e6:.3f}\\n")
        sys.stdout.flush()
    print("ready", flush=True)
    echomq.Worker(client, sys.argv[2], handle, concurrency=4).run()
    """
)

# The producer: N jobs one every ~200 ms, the write's wall-clock instant as the payload.
PRODUCER = textwrap.dedent(
    """
    import sys, time, echomq, redis
    url, queue, n, mode, sha, lua = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
    client = echomq.connect(url)
    raw = redis.Redis.from_url(url)
    if not raw.script_exists(sha)[0]:
        raw.script_load(open(lua).read())
    for _ in range(n):
        payload = str(time.time_ns()).encode()
        if mode == "hint":
            client.enqueue(queue, payload)
        else:
            job = echomq.mint_job_id()
            raw.evalsha(sha, 2, f"emq:{{{queue}}}:job:{job}", f"emq:{{{queue}}}:pending", job, payload)
        time.sleep(0.2)
    """
)


def idle_commands(r: Redis, seconds: float) -> float:
    """Commands a second the clients sent over `seconds` (MONITOR's lines, less
    the commands scripts ran inside the server, which MONITOR tags `lua`)."""
    mon = subprocess.Popen(["redis-cli", "-p", str(r.port), "MONITOR"], stdout=subprocess.PIPE,
                           text=True)
    time.sleep(seconds)
    mon.terminate()
    out, _ = mon.communicate(timeout=30)
    sent = [l for l in out.splitlines() if l[:1].isdigit() and "[0 lua]" not in l]
    return len(sent) / seconds


def one(python: str, mode: str, events: bool, n: int, idle_seconds: float) -> dict:
    r = Redis()
    try:
        if events:
            r.cli("CONFIG", "SET", "notify-keyspace-events", "Kz")
        worker = subprocess.Popen([python, "-c", WORKER, r.url, QUEUE], stdout=subprocess.PIPE,
                                  text=True, cwd=ROOT)
        try:
            assert worker.stdout is not None
            if worker.stdout.readline().strip() != "ready":
                raise SystemExit("the worker did not start")
            time.sleep(2.0)  # let it park (a benchmark's settle time, not a test's wait)
            idle_rate = idle_commands(r, idle_seconds)
            subprocess.run([python, "-c", PRODUCER, r.url, QUEUE, str(n), mode, ENQUEUE_SHA,
                            str(ROOT / "core" / "lua" / "enqueue.lua")], check=True, cwd=ROOT,
                           timeout=n * 0.2 + 120)
            latencies = []
            deadline = time.monotonic() + 60
            while len(latencies) < n and time.monotonic() < deadline:
                line = worker.stdout.readline()
                if not line:
                    break
                latencies.append(float(line))
        finally:
            worker.terminate()
            worker.wait(timeout=30)
        if len(latencies) < n:
            raise SystemExit(f"{mode}: only {len(latencies)} of {n} jobs ran")
        latencies.sort()
        return {
            "p50": statistics.median(latencies),
            "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
            "max": latencies[-1],
            "idle_rate": idle_rate,
        }
    finally:
        r.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default=sys.executable, help="a python that imports echomq and redis")
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--idle-seconds", type=float, default=8.0)
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds of the three rows")
    args = ap.parse_args()
    rows = (("hint", "hint", False), ("hintless", "hintless", False), ("hintless + events", "hintless", True))
    got: dict[str, list[dict]] = {}
    for k in range(args.rounds):
        for name, mode, events in rows:
            res = one(args.python, mode, events, args.n, args.idle_seconds)
            got.setdefault(name, []).append(res)
            print(f"round {k + 1}: {name}: p50 {res['p50']:.2f} ms, p99 {res['p99']:.2f} ms, "
                  f"idle {res['idle_rate']:.2f} commands/s", file=sys.stderr)
    lines = [
        f"# Hintless idle pickup, {dt.date.today().isoformat()}",
        "",
        f"Python worker, default configuration (concurrency 4), {args.n} jobs one every ~200 ms after "
        f"an idle window of {args.idle_seconds:g} s; {args.rounds} interleaved rounds, each on a fresh "
        "redis-server; medians of the rounds. `bench/hintless_pickup.py`.",
        "",
        "| producer | p50 ms | p99 ms | max ms | idle worker, commands/s |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, _, _ in rows:
        rs = got[name]
        med = lambda key: statistics.median(r[key] for r in rs)  # noqa: E731
        lines.append(f"| {name} | {med('p50'):.2f} | {med('p99'):.2f} | {med('max'):.2f} | {med('idle_rate'):.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    out = ROOT / "bench" / "results" / f"{dt.date.today().isoformat()}-hintless-pickup.md"
    out.write_text(text)
    print(f"wrote {out.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
