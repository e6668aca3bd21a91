#!/usr/bin/env python3
"""The benchmark orchestrator: every system, every workload, interleaved rounds.

Starts its own redis-server (no persistence) on a free port, runs each figure
ROUNDS times interleaved (round 1 of every system, then round 2, ...), FLUSHALLs
before each timed region, verifies the jobs in Redis after each run, and writes
bench/results/<date>.md (+ a PNG chart). Drivers follow bench/DRIVERS.md.

    python3 bench/run.py              # the full run (~15 min on 2 cores)
    python3 bench/run.py --smoke      # N=200, one round: keeps the harness from rotting
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
# The Rust driver's cargo profile dir: release for figures; the smoke run of the
# test command sets `debug` (bench/build.sh builds what this names).
PROFILE = os.environ.get("EMQ_BENCH_PROFILE", "release")
ENQUEUE_SHA = "a5980be13628669477e64a5afad5370194ea6f1c"
QUEUE = "bench"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the server


class Redis:
    """A throwaway redis-server and a tiny client over redis-cli."""

    def __init__(self) -> None:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if self.cli("PING") == "PONG":
                break
            time.sleep(0.05)
        else:
            raise SystemExit("redis-server did not start")
        self.url = f"redis://127.0.0.1:{self.port}/"

    def cli(self, *args: str) -> str:
        out = subprocess.run(["redis-cli", "-p", str(self.port), *args],
                             capture_output=True, text=True)
        return out.stdout.strip()

    def int(self, *args: str) -> int:
        text = self.cli(*args)
        try:
            return int(text)
        except ValueError:
            return 0

    def used_memory(self) -> int:
        for line in self.cli("INFO", "memory").splitlines():
            if line.startswith("used_memory:"):
                return int(line.split(":")[1])
        return 0

    def version(self) -> str:
        for line in self.cli("INFO", "server").splitlines():
            if line.startswith("redis_version:"):
                return line.split(":")[1]
        return "?"

    def flush(self) -> None:
        self.cli("FLUSHALL")
        self.cli("SCRIPT", "FLUSH")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


# ---------------------------------------------------------------- the systems


@dataclass
class System:
    name: str
    cmd: list[str]
    kind: str  # key layout, for verification
    missing: str | None = None

    def waiting(self, r: Redis) -> int:
        if self.kind == "echomq":
            return r.int("ZCARD", f"emq:{{{QUEUE}}}:pending") + r.int("ZCARD", f"emq:{{{QUEUE}}}:schedule")
        if self.kind == "bullmq":
            return r.int("LLEN", f"bull:{QUEUE}:wait") + r.int("ZCARD", f"bull:{QUEUE}:prioritized")
        if self.kind == "rq":
            return r.int("LLEN", f"rq:queue:{QUEUE}")
        return -1  # layout unknown: not verified

    def active(self, r: Redis) -> int:
        if self.kind == "echomq":
            return r.int("ZCARD", f"emq:{{{QUEUE}}}:active")
        if self.kind == "bullmq":
            return r.int("LLEN", f"bull:{QUEUE}:active")
        if self.kind == "rq":
            return r.int("ZCARD", f"rq:wip:{QUEUE}")
        return -1


def python_for(venv: Path) -> str:
    py = venv / "bin" / "python"
    return str(py) if py.exists() else sys.executable


def systems() -> list[System]:
    # scripts/python-env.sh's venv: $EMQ_SHARED_VENV under scripts/test.sh, else .venv.
    ours_py = python_for(Path(os.environ.get("EMQ_SHARED_VENV") or ROOT / ".venv"))
    peers_py = python_for(ROOT / "bench" / "peers" / ".venv")
    found = [
        System("echomq-rust", [str(TARGET / PROFILE / "echomq-bench")], "echomq"),
        System("echomq-python", [ours_py, str(ROOT / "bench/drivers/echomq_py.py")], "echomq"),
        System("echomq-node", ["node", str(ROOT / "bench/drivers/echomq_node.js")], "echomq"),
        System("echomq-c", [str(ROOT / "bench/build/echomq_c_bench")], "echomq"),
        System("bullmq-node", ["node", str(ROOT / "bench/peers/bullmq_node.js")], "bullmq"),
        System("bullmq-python", [peers_py, str(ROOT / "bench/peers/bullmq_py.py")], "bullmq"),
        System("rq", [peers_py, str(ROOT / "bench/peers/rq_py.py")], "rq"),
        System("chasquimq", [peers_py, str(ROOT / "bench/peers/chasquimq_py.py")], "other"),
    ]
    for s in found:
        script = Path(s.cmd[-1])
        if not script.exists():
            s.missing = f"driver {script.relative_to(ROOT)} not built or not present"
    return found


# ---------------------------------------------------------------- running


@dataclass
class Result:
    system: str
    workload: str
    jobs: int = 0
    seconds: float = 0.0
    p50: float | None = None
    p99: float | None = None
    version: str = ""
    note: str = ""
    ok: bool = True
    unsupported: bool = False
    extra: dict = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.jobs / self.seconds if self.seconds > 0 else 0.0


def drive(system: System, r: Redis, workload: str, n: int, timeout: float, **opts) -> dict:
    cmd = [*system.cmd, workload, "--url", r.url, "--queue", QUEUE, "--n", str(n)]
    for k, v in opts.items():
        cmd += [f"--{k.replace('_', '-')}", str(v)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = [l for l in out.stdout.strip().splitlines() if l.strip().startswith("{")]
    if out.returncode != 0 or not lines:
        tail = (out.stderr or out.stdout).strip().splitlines()[-3:]
        return {"error": f"exit {out.returncode}: {' | '.join(tail)}"}
    return json.loads(lines[-1])


# The process figures that measure observability's cost (EchoMQ drivers only): the
# extra driver flags of each.
EVENT_FIGURES = {
    "process c=50 events off": {"events": "off"},
    "process c=50 listeners": {"listeners": "on"},
    # Issue #16: the bindings' default handler_batch (1) beside the batched figure above,
    # so the table never shows only the flattering configuration (Rust has no batch knob).
    "process c=50 handler_batch=1": {"handler_batch": "1"},
    # Issue #12 in the default configuration too: publishing's cost at handler_batch 1.
    "process c=50 handler_batch=1 events off": {"handler_batch": "1", "events": "off"},
}


def timed_run(system: System, r: Redis, workload: str, n: int, concurrency: int, rate: int,
              timeout: float) -> Result:
    res = Result(system.name, workload)
    r.flush()
    if workload.startswith("process"):
        pre = drive(system, r, "prefill", n, timeout)
        if "error" in pre or "unsupported" in pre:
            res.ok, res.unsupported = False, "unsupported" in pre
            res.note = f"prefill: {pre.get('error') or pre.get('unsupported')}"
            return res
        n = int(pre.get("jobs", n))
        waiting = system.waiting(r)
        if waiting not in (-1, n):
            res.note = f"prefill left {waiting} waiting, expected {n}; "
        answer = drive(system, r, "process", n, timeout, concurrency=concurrency, **EVENT_FIGURES.get(workload, {}))
    elif workload == "latency":
        answer = drive(system, r, "latency", n, timeout, rate=rate)
    else:
        answer = drive(system, r, workload, n, timeout)
    if "error" in answer:
        res.ok, res.note = False, answer["error"]
        return res
    if "unsupported" in answer:
        res.ok, res.unsupported, res.note = False, True, f"unsupported: {answer['unsupported']}"
        return res
    res.jobs = int(answer.get("jobs", 0))
    res.seconds = float(answer.get("seconds") or 0.0)
    res.p50, res.p99 = answer.get("p50_ms"), answer.get("p99_ms")
    res.version = answer.get("version", "")
    res.note += answer.get("note") or ""
    # Verify what is in Redis now.
    waiting, active = system.waiting(r), system.active(r)
    if workload.startswith("enqueue") and waiting not in (-1, res.jobs):
        res.ok, res.note = False, res.note + f" verify: {waiting} waiting, expected {res.jobs}"
    if workload.startswith("process") and waiting not in (-1,) and (active > 0 or waiting > n - res.jobs):
        res.ok, res.note = False, res.note + f" verify: {waiting} waiting / {active} active left"
    if waiting == -1:
        res.note += " (layout not verified)"
    return res


# Commands a client sends itself (a script's inner calls show in commandstats too, so the
# idle figure counts these top-level ones; "all" includes what the scripts ran).
SENT_COMMANDS = ("evalsha", "evalsha_ro", "eval", "eval_ro", "fcall", "blpop", "brpop", "blmove",
                 "bzpopmin", "bzpopmax", "xreadgroup", "ping")


def commandstats(r: Redis) -> dict[str, int]:
    out = {}
    for line in r.cli("INFO", "commandstats").splitlines():
        if line.startswith("cmdstat_") and ":calls=" in line:
            name, rest = line[len("cmdstat_"):].split(":", 1)
            out[name] = int(rest.split("calls=", 1)[1].split(",", 1)[0])
    return out


def idle_run(system: System, r: Redis, n: int, idle_seconds: float, timeout: float) -> Result:
    """Idle pickup (issue #16): the driver starts a worker with its defaults (concurrency 4),
    prints `idle-start` on stderr and sits idle for `idle_seconds` while we count the
    server's commands; then it enqueues one job every ~200 ms and reports enqueue -> start."""
    res = Result(system.name, "idle pickup")
    r.flush()
    r.cli("CONFIG", "RESETSTAT")
    cmd = [*system.cmd, "idle", "--url", r.url, "--queue", QUEUE, "--n", str(n),
           "--concurrency", "4", "--idle-seconds", str(idle_seconds)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    started = time.time()
    idling = False
    for line in proc.stderr:
        idling = "idle-start" in line
        if idling or time.time() - started > 60:
            break
    before = after = {}
    t0 = t1 = time.time()
    if idling:  # stderr ended without it: the driver exited (e.g. `unsupported`), no idle window
        time.sleep(0.5)
        before, t0 = commandstats(r), time.time()
        time.sleep(max(idle_seconds - 1.0, 1.0))
        after, t1 = commandstats(r), time.time()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        res.ok, res.note = False, "timed out"
        return res
    lines = [l for l in out.strip().splitlines() if l.strip().startswith("{")]
    if proc.returncode != 0 or not lines:
        res.ok, res.note = False, f"exit {proc.returncode}: {err.strip()[-200:]}"
        return res
    answer = json.loads(lines[-1])
    if "unsupported" in answer:
        res.ok, res.unsupported, res.note = False, True, f"unsupported: {answer['unsupported']}"
        return res
    if not idling:
        res.ok, res.note = False, "the driver never said idle-start: no idle window was counted"
        return res
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in after if after.get(k, 0) != before.get(k, 0)}
    delta.pop("info", None)
    span = t1 - t0
    res.jobs = int(answer.get("jobs", 0))
    res.seconds = float(answer.get("seconds") or 0.0)
    res.p50, res.p99 = answer.get("p50_ms"), answer.get("p99_ms")
    res.version = answer.get("version", "")
    res.extra = {"sent_per_s": sum(v for k, v in delta.items() if k in SENT_COMMANDS) / span,
                 "all_per_s": sum(delta.values()) / span, "by_command": delta, "window_s": round(span, 1)}
    return res


def slow_run(system: System, r: Redis, n: int, timeout: float) -> Result:
    """The slow-handler row (issue #16): prefill n jobs, then the driver's `slow` workload
    (two workers x 4 slots, 50 ms handlers); its note says the most jobs one worker held
    and the makespan against the ideal split."""
    res = Result(system.name, "slow handlers")
    r.flush()
    pre = drive(system, r, "prefill", n, timeout)
    answer = pre if "error" in pre or "unsupported" in pre else drive(system, r, "slow", n, timeout)
    if "error" in answer or "unsupported" in answer:
        res.ok, res.unsupported = False, "unsupported" in answer
        res.note = str(answer.get("error") or answer.get("unsupported"))
        return res
    res.jobs, res.seconds = int(answer.get("jobs", 0)), float(answer.get("seconds") or 0.0)
    res.version, res.note = answer.get("version", ""), answer.get("note") or ""
    if system.waiting(r) not in (-1, 0) or system.active(r) > 0:
        res.ok, res.note = False, res.note + " verify: jobs left waiting or active"
    return res


def ceiling(r: Redis, pipeline: int, n: int) -> Result:
    """redis-benchmark running EVALSHA of our own enqueue script with random ids."""
    res = Result("server ceiling", f"evalsha -P {pipeline}")
    r.flush()
    sha = r.cli("SCRIPT", "LOAD", (ROOT / "core/lua/enqueue.lua").read_text())
    if sha != ENQUEUE_SHA:
        res.ok, res.note = False, f"SCRIPT LOAD answered {sha}"
        return res
    out = subprocess.run(
        ["redis-benchmark", "-p", str(r.port), "-c", "50", "-n", str(n), "-P", str(pipeline),
         "-r", "100000000000", "--csv", "EVALSHA", ENQUEUE_SHA, "2",
         f"emq:{{{QUEUE}}}:job:JOB__rand_int__", f"emq:{{{QUEUE}}}:pending", "JOB__rand_int__",
         "x" * 100],
        capture_output=True, text=True, timeout=300)
    for line in out.stdout.splitlines():
        cells = [c.strip('"') for c in line.split(",")]
        if len(cells) > 1 and cells[0].startswith("EVALSHA"):
            rps = float(cells[1])
            res.jobs, res.seconds = n, n / rps
            res.version = f"redis-benchmark / redis {r.version()}"
            return res
    res.ok, res.note = False, f"no CSV line: {out.stderr.strip()[-200:]}"
    return res


def memory_run(system: System, r: Redis, n: int, process: bool, timeout: float) -> Result:
    name = "memory held after processing" if process else "memory per pending job"
    res = Result(system.name, name)
    r.flush()
    r.cli("MEMORY", "PURGE")
    before = r.used_memory()
    pre = drive(system, r, "prefill", n, timeout)
    if "error" in pre or "unsupported" in pre:
        res.ok, res.unsupported = False, "unsupported" in pre
        res.note = str(pre.get("error") or pre.get("unsupported"))
        return res
    jobs = int(pre.get("jobs", n))
    if process:
        done = drive(system, r, "process", jobs, timeout, concurrency=50)
        if "error" in done or "unsupported" in done:
            res.ok, res.note = False, str(done.get("error") or done.get("unsupported"))
            return res
        jobs = int(done.get("jobs", jobs))
        time.sleep(0.5)
    else:
        res.extra["breakdown"] = breakdown(r)
    after = r.used_memory()
    res.jobs = jobs
    res.extra["bytes_total"] = after - before
    res.extra["bytes_per_job"] = (after - before) / jobs if jobs else 0
    res.version = pre.get("version", "")
    return res


def breakdown(r: Redis) -> dict[str, int]:
    """MEMORY USAGE summed per key shape (ids folded to *), sampling rows."""
    keys = [k for k in r.cli("--scan").splitlines() if k]
    shapes: dict[str, list[str]] = {}
    for k in keys:
        shape = k
        for sep in (":job:", ":"):
            head, _, tail = k.rpartition(sep)
            if head and (len(tail) >= 10 or tail.isdigit()):
                shape = f"{head}{sep}*"
                break
        shapes.setdefault(shape, []).append(k)
    out: dict[str, int] = {}
    for shape, members in shapes.items():
        sample = members[:200]
        sizes = [int(r.cli("MEMORY", "USAGE", k, "SAMPLES", "0") or 0) for k in sample]
        out[f"{shape} ×{len(members)}"] = int(sum(sizes) / len(sample) * len(members))
    return out


# ---------------------------------------------------------------- report


def fmt_rate(x: float) -> str:
    return f"{x:,.0f}"


def summarize(results: list[Result]) -> dict[tuple[str, str], dict]:
    grouped: dict[tuple[str, str], list[Result]] = {}
    for res in results:
        grouped.setdefault((res.workload, res.system), []).append(res)
    out = {}
    for key, runs in grouped.items():
        good = [x for x in runs if x.ok]
        rates = [x.rate for x in good]
        out[key] = {
            "median": statistics.median(rates) if rates else None,
            # Every round's rate in round order (None where it failed), for paired ratios.
            "rounds": [x.rate if x.ok else None for x in runs],
            "min": min(rates) if rates else None,
            "max": max(rates) if rates else None,
            "p50": statistics.median([x.p50 for x in good if x.p50 is not None]) if any(x.p50 is not None for x in good) else None,
            "p99": statistics.median([x.p99 for x in good if x.p99 is not None]) if any(x.p99 is not None for x in good) else None,
            "jobs": good[0].jobs if good else 0,
            "runs": f"{len(good)}/{len(runs)}",
            "note": "; ".join(sorted({x.note.strip() for x in runs if x.note.strip()})),
            "version": good[0].version if good else "",
            "extra": good[0].extra if good else {},
        }
    return out


def render(results: list[Result], args, r_version: str, versions: dict[str, str], elapsed: float) -> str:
    s = summarize(results)
    workloads = list(dict.fromkeys(x.workload for x in results))
    lines = [
        f"# EchoMQ benchmarks — {dt.date.today().isoformat()}",
        "",
        f"- Host: {platform.node()}, {os.cpu_count()} cores, {platform.platform()}; "
        f"redis-server {r_version} (no persistence), same host as the clients.",
        f"- Rounds: {args.rounds}, interleaved (round 1 of every system, then round 2, ...); "
        f"FLUSHALL before each timed region; medians with min–max; N = {args.n} unless a row says otherwise.",
        f"- Wall time of the whole run: {elapsed / 60:.1f} min.",
        "- Caveat: 2 cores shared by redis-server, the client under test and the OS. Figures within "
        "~10–15 % of each other are noise; compare ratios inside one run, not across runs.",
        "",
        "## Versions",
        "",
    ]
    lines += [f"- {k}: {v}" for k, v in sorted(versions.items())]
    for w in workloads:
        lines += ["", f"## {w}", ""]
        if w.startswith("memory"):
            lines += ["| system | jobs | bytes per job | total | note |", "|---|---:|---:|---:|---|"]
        elif w == "latency":
            lines += ["| system | jobs | p50 ms | p99 ms | runs | note |", "|---|---:|---:|---:|---|---|"]
        elif w == "idle pickup":
            lines += ["| system | jobs | p50 ms | p99 ms | idle commands/s sent | incl. script-internal | note |",
                      "|---|---:|---:|---:|---:|---:|---|"]
        else:
            lines += ["| system | jobs | jobs/s (median) | min–max | runs | note |", "|---|---:|---:|---|---|---|"]
        for (ww, system), v in s.items():
            if ww != w:
                continue
            if w.startswith("memory"):
                e = v["extra"]
                lines.append(f"| {system} | {v['jobs']} | {e.get('bytes_per_job', 0):,.0f} | "
                             f"{e.get('bytes_total', 0):,} | {v['note']} |")
                for shape, size in (e.get("breakdown") or {}).items():
                    lines.append(f"|   ↳ `{shape}` | | {size / max(v['jobs'], 1):,.0f} | {size:,} | |")
            elif w == "idle pickup":
                e = v["extra"] or {}
                p50 = f"{v['p50']:.2f}" if v["p50"] is not None else "—"
                p99 = f"{v['p99']:.2f}" if v["p99"] is not None else "—"
                lines.append(f"| {system} | {v['jobs']} | {p50} | {p99} | {e.get('sent_per_s', 0):.2f} | "
                             f"{e.get('all_per_s', 0):.2f} | {v['note']} |")
            elif w == "latency":
                p50 = f"{v['p50']:.2f}" if v["p50"] is not None else "—"
                p99 = f"{v['p99']:.2f}" if v["p99"] is not None else "—"
                lines.append(f"| {system} | {v['jobs']} | {p50} | {p99} | {v['runs']} | {v['note']} |")
            else:
                med = fmt_rate(v["median"]) if v["median"] is not None else "—"
                rng = f"{fmt_rate(v['min'])}–{fmt_rate(v['max'])}" if v["min"] is not None else "—"
                lines.append(f"| {system} | {v['jobs']} | {med} | {rng} | {v['runs']} | {v['note']} |")
    lines += ["", "## Targets (ratios inside this run)", ""] + targets(s)
    return "\n".join(lines) + "\n"


def targets(s) -> list[str]:
    def med(w, system):
        v = s.get((w, system))
        return v["median"] if v and v["median"] else None

    def mem(w, system):
        v = s.get((w, system))
        return v["extra"].get("bytes_per_job") if v and v["extra"] else None

    def paired(a, b, system):
        """The median of round-by-round ratios a ÷ b: two figures run next to each other
        in every round, so host drift between rounds (±30 % on a shared VM) cancels out of
        each ratio instead of entering a ratio of medians."""
        x, y = s.get((a, system)), s.get((b, system))
        if not x or not y:
            return None
        ratios = [p / q for p, q in zip(x.get("rounds", []), y.get("rounds", [])) if p and q]
        return statistics.median(ratios) if ratios else None

    rows = ["| target | measured | met |", "|---|---|---|"]

    def check(label, value, goal):
        if value is None:
            rows.append(f"| {label} | n/a | — |")
        else:
            rows.append(f"| {label} | {value:.2f} | {'yes' if value >= goal else 'NO'} |")

    ceil16 = med("evalsha -P 16", "server ceiling")
    bull = {w: med(w, "bullmq-node") for w in ("enqueue-single", "process c=1", "process c=50")}
    for lang, goal in (("rust", 0.9), ("python", 0.8), ("node", 0.8)):
        v = med("enqueue-bulk", f"echomq-{lang}")
        check(f"enqueue bulk {lang} ≥ {goal} × ceiling (-P 16)", v / ceil16 if v and ceil16 else None, goal)
    for lang in ("rust", "python", "node", "c"):
        v = med("enqueue-single", f"echomq-{lang}")
        check(f"enqueue single {lang} ≥ 1.5 × BullMQ", v / bull["enqueue-single"] if v and bull["enqueue-single"] else None, 1.5)
    rust1 = med("enqueue-single", "echomq-rust")
    for lang in ("python", "node"):
        v = med("enqueue-single", f"echomq-{lang}")
        check(f"enqueue single {lang} ≥ 0.9 × Rust", v / rust1 if v and rust1 else None, 0.9)
    for lang, goal in (("rust", 0.8), ("python", 0.5), ("node", 0.5), ("c", 0.5)):
        v = med("process c=50", f"echomq-{lang}")
        check(f"process c=50 {lang} ≥ {goal} × ceiling", v / ceil16 if v and ceil16 else None, goal)
    for lang in ("rust", "python", "node", "c"):
        v = med("process c=1", f"echomq-{lang}")
        check(f"process c=1 {lang} ≥ 1.5 × BullMQ", v / bull["process c=1"] if v and bull["process c=1"] else None, 1.5)
    for lang in ("rust", "python", "node", "c"):
        # Observability's cost: the median of per-round ratios (see paired()).
        system = f"echomq-{lang}"
        check(f"process c=50 {lang}: events on ≥ 0.95 × off (per-round median)",
              paired("process c=50", "process c=50 events off", system), 0.95)
        check(f"process c=50 {lang}: with listeners ≥ 0.95 × without (per-round median)",
              paired("process c=50 listeners", "process c=50", system), 0.95)
        if lang != "rust":  # a Rust handler is a future per job: no batch knob
            check(f"process c=50 handler_batch=1 {lang}: events on ≥ 0.95 × off (per-round median)",
                  paired("process c=50 handler_batch=1", "process c=50 handler_batch=1 events off", system),
                  0.95)
    ours, theirs = mem("memory per pending job", "echomq-rust"), mem("memory per pending job", "bullmq-node")
    check("memory per pending job: BullMQ ÷ EchoMQ ≥ 1", theirs / ours if ours and theirs else None, 1.0)
    ours, theirs = mem("memory held after processing", "echomq-rust"), mem("memory held after processing", "bullmq-node")
    check("memory held after processing: BullMQ ÷ EchoMQ ≥ 20", theirs / max(ours, 1) if ours is not None and theirs else None, 20.0)
    return rows


def chart(results: list[Result], path: Path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib not available: no chart")
        return False
    s = summarize(results)
    workloads = [w for w in dict.fromkeys(x.workload for x in results)
                 if not w.startswith("memory") and w != "latency" and not w.startswith("evalsha")]
    systems_ = [x for x in dict.fromkeys(x.system for x in results) if x != "server ceiling"]
    fig, ax = plt.subplots(figsize=(12, 5))
    width = 0.8 / max(len(systems_), 1)
    for i, system in enumerate(systems_):
        vals = [(s.get((w, system)) or {}).get("median") or 0 for w in workloads]
        ax.bar([j + i * width for j in range(len(workloads))], vals, width, label=system)
    ceil = (s.get(("evalsha -P 16", "server ceiling")) or {}).get("median")
    if ceil:
        ax.axhline(ceil, color="black", linestyle="--", linewidth=1, label="server ceiling (-P 16)")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(workloads))])
    ax.set_xticklabels(workloads)
    ax.set_ylabel("jobs / s (median)")
    ax.set_title("EchoMQ vs peers — throughput per workload (same host, 2 cores)")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def rerender(path: Path) -> int:
    """Rebuild <date>.md and <date>.png from the raw runs a full run saved."""
    raw = json.loads(path.read_text())
    results = [Result(**x) for x in raw["results"]]
    args = argparse.Namespace(**raw["args"])
    report = render(results, args, raw["redis"], raw["versions"], raw["elapsed"])
    png = path.with_suffix(".png")
    if chart(results, png):
        report += f"\n![throughput per system and workload]({png.name})\n"
    path.with_suffix(".md").write_text(report)
    print(report)
    return 0


# ---------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="N=200, one round, no report files")
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--memory-n", type=int, default=100_000)
    ap.add_argument("--latency-n", type=int, default=10_000)
    ap.add_argument("--rate", type=int, default=2_000)
    ap.add_argument("--idle-seconds", type=float, default=30.0, help="the idle pickup figure's idle window")
    ap.add_argument("--idle-n", type=int, default=50, help="pickups (one every ~200 ms) after the idle window")
    ap.add_argument("--only", default="", help="comma-separated system names")
    ap.add_argument("--figures", default="", help="comma-separated figure names (skips the memory runs)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--render", help="re-render the report and chart from a saved <date>.json")
    args = ap.parse_args()
    if args.render:
        return rerender(Path(args.render))
    if args.smoke:
        args.n, args.rounds, args.memory_n, args.latency_n, args.rate = 200, 1, 200, 200, 500
        args.idle_seconds, args.idle_n = 3.0, 5
    timeout = 60 if args.smoke else 240

    for tool in ("redis-server", "redis-cli", "redis-benchmark"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is missing (apt-get install redis-server redis-tools)")
    chosen = [s for s in systems() if not args.only or s.name in args.only.split(",")]
    runnable = [s for s in chosen if not s.missing]
    for s in chosen:
        if s.missing:
            log(f"skipping {s.name}: {s.missing}")
    r = Redis()
    started = time.time()
    results: list[Result] = []
    figures = [("enqueue-single", 1), ("enqueue-bulk", 1), ("process c=1", 1), ("process c=50", 50),
               # EchoMQ only: the cost of queue events (publishing off) and of worker event listeners.
               ("process c=50 events off", 50), ("process c=50 listeners", 50),
               ("process c=50 handler_batch=1", 50), ("process c=50 handler_batch=1 events off", 50),
               ("latency", 50),
               # Issue #16: the idle worker's pickup latency and its commands per second.
               ("idle pickup", 4),
               # Issue #16: two workers x 4 slots, 50 ms handlers, 160 jobs (Rust driver; the
               # prefetch window is the core's, the same in every runtime).
               ("slow handlers", 4)]
    if args.figures:
        figures = [f for f in figures if f[0] in args.figures.split(",")]
    total = args.rounds * (len(figures) * len(runnable) + 2) + 2 * len(runnable)
    done = 0
    try:
        for rnd in range(1, args.rounds + 1):
            for pipeline in (1, 16):
                done += 1
                log(f"[{done}/{total}] round {rnd}: server ceiling -P {pipeline}")
                results.append(ceiling(r, pipeline, max(args.n * 10, 2_000)))
            for workload, conc in figures:
                for s in runnable:
                    if workload in EVENT_FIGURES and s.kind != "echomq":
                        continue
                    if workload.startswith("process c=50 handler_batch=1") and s.name == "echomq-rust":
                        continue  # a Rust handler is a future per job: no batch knob
                    if workload == "slow handlers" and s.name != "echomq-rust":
                        continue
                    done += 1
                    n = args.latency_n if workload == "latency" else args.n
                    log(f"[{done}/{total}] round {rnd}: {s.name} {workload}")
                    if workload == "idle pickup":
                        res = idle_run(s, r, args.idle_n, args.idle_seconds, timeout)
                        results.append(res)
                        log(f"    p50 {res.p50} ms, p99 {res.p99} ms, {res.extra.get('sent_per_s', 0):.2f} cmd/s"
                            if res.ok else f"    {'skipped' if res.unsupported else 'FAILED'}: {res.note[:160]}")
                        continue
                    if workload == "slow handlers":
                        res = slow_run(s, r, 160, timeout)
                        results.append(res)
                        log(f"    {res.note}" if res.ok else f"    FAILED: {res.note[:160]}")
                        continue
                    res = timed_run(s, r, workload, n, conc, args.rate, timeout)
                    res.workload = workload
                    results.append(res)
                    if not res.ok:
                        log(f"    {'skipped' if res.unsupported else 'FAILED'}: {res.note[:160]}")
                    elif workload == "latency":
                        log(f"    p50 {res.p50} ms, p99 {res.p99} ms")
                    else:
                        log(f"    {res.jobs} jobs in {res.seconds:.2f} s = {res.rate:,.0f}/s")
        for process in (False, True) if not args.figures else ():
            for s in runnable:
                done += 1
                log(f"[{done}/{total}] {s.name} {'memory after processing' if process else 'memory per pending job'}")
                res = memory_run(s, r, args.memory_n, process, timeout * 2)
                results.append(res)
                if not res.ok:
                    log(f"    {'skipped' if res.unsupported else 'FAILED'}: {res.note[:160]}")
                else:
                    log(f"    {res.extra['bytes_per_job']:,.0f} bytes per job")
        versions = {"redis-server": r.version()}
        for res in results:
            if res.version:
                versions[res.system] = res.version
        for s in chosen:
            if s.missing:
                versions[s.name] = f"not run: {s.missing}"
        r_version = r.version()
        report = render(results, args, r_version, versions, time.time() - started)
    finally:
        r.stop()
    print(report)
    failed = [x for x in results if not x.ok and not x.unsupported]
    if not args.smoke:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        stamp = dt.date.today().isoformat()
        md = out / f"{stamp}.md"
        png = out / f"{stamp}.png"
        if chart(results, png):
            report += f"\n![throughput per system and workload]({png.name})\n"
        md.write_text(report)
        raw = {"args": vars(args), "versions": versions, "elapsed": time.time() - started,
               "redis": r_version, "results": [asdict(x) for x in results]}
        (out / f"{stamp}.json").write_text(json.dumps(raw, indent=1))
        log(f"wrote {md} (+ .json with every run, + .png)")
    if failed:
        log(f"{len(failed)} run(s) failed: " + "; ".join(f"{x.system} {x.workload}: {x.note}" for x in failed))
    # Smoke: every runnable EchoMQ driver must have passed every figure.
    if args.smoke:
        mine = [x for x in results if x.system.startswith("echomq") or x.system == "server ceiling"]
        bad = [x for x in mine if not x.ok]
        print(f"bench smoke: {len(mine) - len(bad)} passed, {len(bad)} failed")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
