#!/usr/bin/env python3
"""The cluster row of the benchmark (issue #15), small enough to run alone.

    python3 bench/cluster.py [--n 5000] [--server redis-server]

Starts a loopback 3-master + 3-replica cluster (scripts/cluster.sh) and a
standalone redis-server, and measures with the Rust driver (bench/echomq-rust):

- durable enqueue cost: enqueue one at a time (one in flight) on the cluster
  with `wait_replicas` 0 and 1;
- the cluster row: three drivers at once, one queue per master, bulk enqueue
  then process (concurrency 50 each); the same workload with one driver on the
  standalone server for comparison;
- server CPU per job (enqueue + claim + complete) from `INFO cpu` of every
  master around the cluster row, and the paper estimate of throughput per
  master it implies (one master is one core: 1 / CPU seconds per job).

This machine has 2 cores for 6 servers and 3 drivers, so the cluster row
cannot show scaling; the paper estimate is the honest per-master figure.
Writes bench/results/cluster-<date>.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
DRIVER = TARGET / "release" / "echomq-bench"


def crc16(data: bytes) -> int:
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def queue_slot(queue: str) -> int:
    return crc16(queue.encode()) % 16384


def cli(port: int, *args: str) -> str:
    return subprocess.run(
        ["redis-cli", "-p", str(port), *args], check=True, capture_output=True, text=True
    ).stdout


def masters(port: int) -> List[Tuple[int, int, int]]:
    """(start, end, master port) per slot range, from CLUSTER SHARDS' flat cousin."""
    out = []
    for line in cli(port, "cluster", "nodes").splitlines():
        f = line.split()
        if "master" in f[2] and len(f) > 8:
            p = int(f[1].split(":")[1].split("@")[0])
            for rng in f[8:]:
                a, _, b = rng.partition("-")
                out.append((int(a), int(b or a), p))
    return out


def queue_on(ranges: List[Tuple[int, int, int]], port: int, prefix: str) -> str:
    for i in range(100_000):
        q = f"{prefix}{i}"
        s = queue_slot(q)
        if any(a <= s <= b and p == port for a, b, p in ranges):
            return q
    raise SystemExit("no queue name for master")


def cpu_seconds(port: int) -> float:
    info = dict(
        line.split(":", 1) for line in cli(port, "info", "cpu").splitlines() if ":" in line
    )
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def drive(workload: str, url: str, queue: str, n: int, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [str(DRIVER), workload, "--url", url, "--queue", queue, "--n", str(n), *extra],
        stdout=subprocess.PIPE,
        text=True,
    )


def result(p: subprocess.Popen) -> Dict:
    out, _ = p.communicate()
    if p.returncode != 0:
        raise SystemExit(f"driver failed: {out}")
    return json.loads(out.strip().splitlines()[-1])


def together(workload: str, url: str, queues: List[str], n: int, *extra: str) -> float:
    """Run one driver per queue at once; aggregate jobs/s over the slowest."""
    runs = [drive(workload, url, q, n, *extra) for q in queues]
    answers = [result(p) for p in runs]
    return sum(a["jobs"] for a in answers) / max(a["seconds"] for a in answers)


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000, help="jobs per driver")
    ap.add_argument("--server", default=os.environ.get("EMQ_SERVER_BIN", "redis-server"))
    args = ap.parse_args()
    if not DRIVER.exists():
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "echomq-bench"], check=True, cwd=ROOT)

    work = Path(tempfile.mkdtemp(prefix="emq-bench-cluster-"))
    env = dict(os.environ, EMQ_SERVER_BIN=args.server)
    url = subprocess.run(
        ["bash", str(ROOT / "scripts/cluster.sh"), "start", str(work)],
        check=True, capture_output=True, text=True, env=env,
    ).stdout.strip().splitlines()[-1]
    port = free_port()
    standalone = subprocess.Popen(
        [args.server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        seed = int(url.split("//")[1].split(":")[1].split(",")[0])
        ranges = masters(seed)
        ports = sorted({p for _, _, p in ranges})
        queues = [queue_on(ranges, p, f"bench{i}-") for i, p in enumerate(ports)]
        n = args.n
        rows = []

        # Durable enqueue cost, one in flight.
        plain = result(drive("enqueue-single", url, queues[0], n))
        durable = result(drive("enqueue-single", url, "d" + queues[0], n, "--wait-replicas", "1"))
        us = lambda r: 1e6 * r["seconds"] / r["jobs"]  # noqa: E731
        rows.append(("enqueue one at a time, cluster", f"{n / plain['seconds']:,.0f} jobs/s", f"{us(plain):.0f} µs/job"))
        rows.append(("… with wait_replicas=1 (durable)", f"{n / durable['seconds']:,.0f} jobs/s", f"{us(durable):.0f} µs/job"))

        # The cluster row: one driver per master, then the same on one server.
        before = {p: cpu_seconds(p) for p in ports}
        enq = together("enqueue-bulk", url, queues, n)
        proc = together("process", url, queues, n, "--concurrency", "50")
        used = sum(cpu_seconds(p) - before[p] for p in ports)
        jobs = n * len(queues)
        per_job = used / jobs
        surl = f"redis://127.0.0.1:{port}/"
        s_before = cpu_seconds(port)
        s_enq = together("enqueue-bulk", surl, ["bench"], jobs)
        s_proc = together("process", surl, ["bench"], jobs, "--concurrency", "50")
        s_per_job = (cpu_seconds(port) - s_before) / jobs
        rows.append((f"bulk enqueue, 3 masters × {n}", f"{enq:,.0f} jobs/s", ""))
        rows.append((f"process (conc. 50), 3 masters × {n}", f"{proc:,.0f} jobs/s", ""))
        rows.append((f"bulk enqueue, standalone, {jobs}", f"{s_enq:,.0f} jobs/s", ""))
        rows.append((f"process (conc. 50), standalone, {jobs}", f"{s_proc:,.0f} jobs/s", ""))
        rows.append(("server CPU per job (enqueue+claim+complete), cluster master", f"{per_job * 1e6:.1f} µs", ""))
        rows.append(("server CPU per job, standalone", f"{s_per_job * 1e6:.1f} µs", ""))
        rows.append(("paper estimate per master (1 core ÷ CPU per job)", f"{1 / per_job:,.0f} jobs/s", f"× 3 masters = {3 / per_job:,.0f} jobs/s"))

        version = subprocess.run([args.server, "--version"], capture_output=True, text=True).stdout.strip()
        lines = [
            f"# Cluster row — {datetime.date.today()}",
            "",
            f"- Server: {version}; 3 masters + 3 replicas on 127.0.0.1 (scripts/cluster.sh); "
            f"{os.cpu_count()} cores shared by 6 servers and the drivers, so this cannot show scaling.",
            f"- Driver: bench/echomq-rust, N = {n} jobs of 100 bytes per driver, one round.",
            "",
            "| figure | value | |",
            "|---|---|---|",
            *[f"| {a} | {b} | {c} |" for a, b, c in rows],
            "",
        ]
        text = "\n".join(lines)
        print(text)
        out = ROOT / "bench" / "results" / f"cluster-{datetime.date.today()}.md"
        out.write_text(text)
        print(f"written {out.relative_to(ROOT)}", file=sys.stderr)
    finally:
        standalone.terminate()
        standalone.wait()
        subprocess.run(["bash", str(ROOT / "scripts/cluster.sh"), "stop", str(work)], check=False)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
