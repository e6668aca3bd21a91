"""bench/prefetch_ab.py — the no-op worker at c=50 with the adaptive prefetch window (the
default since issue #16 §2) against the fixed window it replaced (prefetch = concurrency),
alternating fresh driver processes on one throwaway server so the VM's drift hits both
sides alike. The issue asks that c=50 no-op throughput not drop; this is that before/after.

Each run: FLUSHALL, prefill --n jobs with the driver's `prefill`, then `process` at
concurrency 50 (the drivers' own settings: Python hands whole claims to the handler). The
fixed side sets EMQ_BENCH_PREFETCH=50, which the Rust and Python drivers pass as
`prefetch`. Usage: python3 bench/prefetch_ab.py [--n 20000] [--pairs 5] [--only rust,python]
(build first: bash bench/build.sh)."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import QUEUE, ROOT, Redis, systems  # noqa: E402

SIDES = (("adaptive (default)", None), ("fixed, prefetch = 50 (before #16)", "50"))


def one(cmd: list[str], url: str, workload: str, n: int, prefetch: str | None) -> dict:
    env = dict(os.environ)
    env.pop("EMQ_BENCH_PREFETCH", None)
    if prefetch:
        env["EMQ_BENCH_PREFETCH"] = prefetch
    out = subprocess.run([*cmd, workload, "--url", url, "--queue", QUEUE, "--n", str(n), "--concurrency", "50"],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"{' '.join(cmd)} {workload} failed: {out.stderr.strip()[-400:]}")
    return json.loads(lines[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--only", default="rust,python")
    args = ap.parse_args()
    wanted = {f"echomq-{x}" for x in args.only.split(",")}
    chosen = [s for s in systems() if s.name in wanted and not s.missing]
    r = Redis()
    rates: dict[tuple[str, str], list[float]] = {}
    try:
        for k in range(args.pairs):
            for s in chosen:
                # Alternate which side goes first, so neither always runs on a warmer VM.
                for side, prefetch in (SIDES if k % 2 == 0 else SIDES[::-1]):
                    r.flush()
                    one(s.cmd, r.url, "prefill", args.n, None)
                    res = one(s.cmd, r.url, "process", args.n, prefetch)
                    rate = res["jobs"] / res["seconds"]
                    rates.setdefault((s.name, side), []).append(rate)
                    print(f"pair {k + 1}: {s.name} {side}: {rate:,.0f} jobs/s", file=sys.stderr)
        version = r.version()
    finally:
        r.stop()
    print(f"process c=50, no-op handler, N = {args.n}, {args.pairs} alternating pairs, redis-server {version}")
    print()
    print("| system | prefetch | jobs/s (median) | min–max | adaptive ÷ fixed |")
    print("|---|---|---:|---|---:|")
    for s in chosen:
        a, f = rates[(s.name, SIDES[0][0])], rates[(s.name, SIDES[1][0])]
        for side, xs in ((SIDES[0][0], a), (SIDES[1][0], f)):
            ratio = f"{statistics.median(a) / statistics.median(f):.2f}" if side == SIDES[0][0] else ""
            print(f"| {s.name} | {side} | {statistics.median(xs):,.0f} | {min(xs):,.0f}–{max(xs):,.0f} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
