"""bench/events_cost.py — what queue events cost a c=50 worker (issue #12): the same build
processing N jobs with `publish_events` on and off, interleaved, plus a third variant with a
subscriber attached (so every event is really published). Besides client-side throughput
(noisy on a shared 2-core VM) it reports the steadier server-side figures from
`INFO commandstats` over the process phase: script calls per job and script time per job.
Usage: python3 bench/events_cost.py [--n 20000] [--rounds 5]"""
import argparse, shutil, socket, statistics, subprocess, threading, time
import redis
import echomq

ap = argparse.ArgumentParser()
ap.add_argument("--n", type=int, default=20_000)
ap.add_argument("--rounds", type=int, default=5)
args = ap.parse_args()


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


port = free_port()
srv = subprocess.Popen([shutil.which("redis-server"), "--port", str(port), "--bind", "127.0.0.1",
                        "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
url = f"redis://127.0.0.1:{port}/"
raw = redis.Redis(port=port)
for _ in range(100):
    try:
        raw.ping(); break
    except redis.ConnectionError:
        time.sleep(0.05)
N = args.n
payloads = [b"x" * 100] * N
rows = {}
try:
    for rnd in range(1, args.rounds + 1):
        for variant in ("events off", "events on, nobody listening", "events on, one subscriber"):
            raw.flushall()
            c = echomq.connect(url, publish_events=variant != "events off")
            for i in range(0, N, 1000):
                c.enqueue_many("bench", payloads[i:i + 1000])
            heard = 0
            sub = None
            if variant.endswith("subscriber"):
                sub = raw.pubsub()
                sub.subscribe("emq:{bench}:events")
            w = echomq.Worker(c, "bench", lambda job: None, concurrency=50, handler_batch=50,
                              idle_max_ms=5, handle_signals=False)
            th = threading.Thread(target=w.run)
            raw.config_resetstat()
            t = time.perf_counter()
            th.start()
            while c.counts("bench").completed < N:
                time.sleep(0.002)
            proc = N / (time.perf_counter() - t)
            stats = raw.info("commandstats")
            w.stop(); th.join()
            scripts = [v for k, v in stats.items() if k in ("cmdstat_evalsha", "cmdstat_eval")]
            calls = sum(v["calls"] for v in scripts) / N
            usec = sum(v["usec"] for v in scripts) / N
            if sub is not None:
                while sub.get_message(timeout=0.01):
                    heard += 1
                sub.close()
            c.close()
            rows.setdefault(variant, []).append((proc, calls, usec))
            print(f"round {rnd} {variant}: process {proc:,.0f}/s, {calls:.3f} script calls/job, "
                  f"{usec:.2f} us script time/job" + (f", {heard} messages heard" if sub else ""), flush=True)
finally:
    srv.terminate()

print()
print("| variant | process /s (median) | script calls / job | server script µs / job |")
print("|---|---:|---:|---:|")
for variant, r in rows.items():
    print(f"| {variant} | {statistics.median(x[0] for x in r):,.0f} | "
          f"{statistics.median(x[1] for x in r):.3f} | {statistics.median(x[2] for x in r):.2f} |")
