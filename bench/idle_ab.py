"""bench/idle_ab.py — idle pickup (issue #16 §1) of two builds of the Rust driver,
alternating fresh processes on one throwaway server, so the VM's drift between hours (which
moves every pickup figure, BullMQ's too) hits both sides alike: the before/after of a change
to the park, measured on one host in one sitting.

`--before` is a driver command from a checkout of the commit before the change, built there
(for example a clone at <rev> after `bash bench/build.sh`: `/tmp/before/target/release/
echomq-bench`, or `node /tmp/before/bench/drivers/echomq_node.js`, which loads that
checkout's addon); `--after` is this checkout's (default: the Rust driver,
`target/release/echomq-bench`). Each run is the driver's `idle` workload: concurrency 4,
idle for --idle-seconds, then --n jobs one every ~200 ms. Usage: python3 bench/idle_ab.py
--before CMD [--after CMD] [--pairs 3] [--n 50] [--idle-seconds 5]."""
from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import QUEUE, ROOT, TARGET, Redis  # noqa: E402


def one(driver: str, url: str, n: int, idle_seconds: float) -> dict:
    cmd = [*shlex.split(driver), "idle", "--url", url, "--queue", QUEUE, "--n", str(n), "--concurrency", "4",
           "--idle-seconds", str(idle_seconds)]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"{driver} idle failed: {out.stderr.strip()[-400:]}")
    return json.loads(lines[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="a driver command from the commit before")
    ap.add_argument("--after", default=str(TARGET / "release" / "echomq-bench"))
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--idle-seconds", type=float, default=5.0)
    args = ap.parse_args()
    sides = (("before", args.before), ("after", args.after))
    r = Redis()
    got: dict[str, list[tuple[float, float]]] = {}
    try:
        for k in range(args.pairs):
            # Alternate which side goes first, so neither always runs on a warmer VM.
            for side, driver in (sides if k % 2 == 0 else sides[::-1]):
                r.flush()
                res = one(driver, r.url, args.n, args.idle_seconds)
                got.setdefault(side, []).append((res["p50_ms"], res["p99_ms"]))
                print(f"pair {k + 1}: {side}: p50 {res['p50_ms']:.3f} ms, p99 {res['p99_ms']:.3f} ms",
                      file=sys.stderr)
    finally:
        r.stop()
    print(f"| side | runs | p50 ms (median of runs) | p99 ms (median of runs) |")
    print("|---|---:|---:|---:|")
    for side, _ in sides:
        runs = got[side]
        p50 = statistics.median(x for x, _ in runs)
        p99 = statistics.median(y for _, y in runs)
        print(f"| {side} | {len(runs)} | {p50:.2f} | {p99:.2f} |")
    before = statistics.median(x for x, _ in got["before"])
    after = statistics.median(x for x, _ in got["after"])
    print(f"\nafter ÷ before, p50: {after / before:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
