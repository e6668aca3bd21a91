"""bench/events_cost.py — what queue events cost a c=50 worker (issue #12): the same build
processing N jobs with `publish_events` on and off, interleaved, plus a third variant with a
subscriber attached (so every event is really published). Besides client-side throughput
(noisy on a shared 2-core VM) it reports the steadier server-side figures from
`INFO commandstats` over the process phase: script calls per job and script time per job,
and the server's whole CPU time per job from `INFO cpu` (which includes the `PUBLISH`es'
delivery to the subscriber, not only script time). Beside it, the CPU per job of the two
other processes sharing this host's cores: the worker's (this process, every thread) and
the subscriber's, so a drop in throughput can be told apart into the server's delivery
(what one message per transition costs wherever the subscriber runs) and the client-side
work that competes for the same two cores here.

The subscriber is a separate process, subscribed before the jobs are enqueued (so no client
has seen the channel unheard, decision 12.10, and every event of every job is delivered)
and reading as the messages come, as a dashboard would; it counts what it read.
Usage: python3 bench/events_cost.py [--n 20000] [--rounds 5] [--handler-batch 50]
(`--handler-batch 1` is the bindings' default; 50 is the tuned, server-bound configuration.)"""
import argparse, shutil, socket, statistics, subprocess, sys, threading, time
import redis
import echomq

ap = argparse.ArgumentParser()
ap.add_argument("--n", type=int, default=20_000)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--handler-batch", type=int, default=50)
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


def server_cpu():
    info = raw.info("cpu")
    return info["used_cpu_sys"] + info["used_cpu_user"]


# The subscriber: its own process reading the raw socket in large chunks and counting the
# messages, so that on this 2-core host it takes almost no CPU from the server and the
# worker (a `redis-cli SUBSCRIBE` printing every message costs ~1 µs a message, a third
# busy process here, and measures the subscriber rather than the publishing).
SUBSCRIBER = r"""
import signal, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
ch = sys.argv[2].encode()
s.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$%d\r\n%s\r\n" % (len(ch), ch))
heard, tail = 0, b""  # the last 7 bytes read: too short to hold a whole '{"event"'
signal.signal(signal.SIGTERM, lambda *_: (print(heard, flush=True), sys.exit(0)))
while True:
    data = tail + s.recv(1 << 20)
    heard += data.count(b'{"event"')
    tail = data[-7:]
"""


def subscribe():
    """The counting subscriber, once the server reports it subscribed."""
    proc = subprocess.Popen([sys.executable, "-c", SUBSCRIBER, str(port), "emq:{bench}:events"],
                            stdout=subprocess.PIPE, text=True)
    for _ in range(200):
        if raw.pubsub_numsub("emq:{bench}:events")[0][1] == 1:
            break
        time.sleep(0.01)
    return proc


def run_seconds(proc):
    """A single-threaded process's CPU time so far, in seconds (the scheduler's own
    nanosecond count, not clock ticks); 0 without a process."""
    if proc is None:
        return 0.0
    with open(f"/proc/{proc.pid}/schedstat") as f:
        return int(f.read().split()[0]) / 1e9


def unsubscribe(proc):
    """Stops the subscriber once the server has sent it everything; the messages it read."""
    for _ in range(100):  # the server's output buffer for it drains
        client = [c for c in raw.client_list() if c.get("sub") == "1"]
        if not client or int(client[0].get("tot-mem", 0)) < 64 * 1024 and int(client[0]["omem"]) == 0:
            break
        time.sleep(0.05)
    time.sleep(0.2)
    proc.terminate()
    out, _ = proc.communicate()
    return int(out.strip() or 0)
payloads = [b"x" * 100] * N
rows = {}
try:
    for rnd in range(1, args.rounds + 1):
        for variant in ("events off", "events on, nobody listening", "events on, one subscriber"):
            raw.flushall()
            c = echomq.connect(url, publish_events=variant != "events off")
            heard = 0
            sub = None
            if variant.endswith("subscriber"):
                sub = subscribe()
            for i in range(0, N, 1000):
                c.enqueue_many("bench", payloads[i:i + 1000])
            w = echomq.Worker(c, "bench", lambda job: None, concurrency=50,
                              handler_batch=args.handler_batch, idle_max_ms=5, handle_signals=False)
            th = threading.Thread(target=w.run)
            raw.config_resetstat()
            cpu0 = server_cpu()
            worker0, sub0 = time.process_time(), run_seconds(sub)
            t = time.perf_counter()
            th.start()
            while c.counts("bench").completed < N:
                time.sleep(0.002)
            proc = N / (time.perf_counter() - t)
            stats = raw.info("commandstats")
            cpu = (server_cpu() - cpu0) * 1e6 / N
            worker_cpu = (time.process_time() - worker0) * 1e6 / N
            sub_cpu = (run_seconds(sub) - sub0) * 1e6 / N
            w.stop(); th.join()
            scripts = [v for k, v in stats.items() if k in ("cmdstat_evalsha", "cmdstat_eval")]
            calls = sum(v["calls"] for v in scripts) / N
            usec = sum(v["usec"] for v in scripts) / N
            if sub is not None:
                heard = unsubscribe(sub)
            c.close()
            rows.setdefault(variant, []).append((proc, calls, usec, cpu, worker_cpu, sub_cpu))
            print(f"round {rnd} {variant}: process {proc:,.0f}/s, {calls:.3f} script calls/job, "
                  f"{usec:.2f} us script time/job, {cpu:.2f} us server CPU/job, "
                  f"{worker_cpu:.2f} us worker CPU/job"
                  + (f", {sub_cpu:.2f} us subscriber CPU/job, {heard} messages heard" if sub else ""),
                  flush=True)
finally:
    srv.terminate()

print()
print(f"handler_batch {args.handler_batch}, N = {N}, {args.rounds} rounds")
print()
print("| variant | process /s (median) | ÷ events off | script calls / job | server script µs / job "
      "| server CPU µs / job | worker CPU µs / job | subscriber CPU µs / job |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
off = statistics.median(x[0] for x in rows["events off"])
for variant, r in rows.items():
    proc = statistics.median(x[0] for x in r)
    print(f"| {variant} | {proc:,.0f} | {proc / off:.2f} × | {statistics.median(x[1] for x in r):.3f} | "
          f"{statistics.median(x[2] for x in r):.2f} | {statistics.median(x[3] for x in r):.2f} | "
          f"{statistics.median(x[4] for x in r):.2f} | {statistics.median(x[5] for x in r):.2f} |")
print()
print("Per-round ratios to the same round's events off (the median of those is steadier than")
print("a ratio of medians when the host drifts between rounds):")
for variant, r in rows.items():
    ratios = [x[0] / o[0] for x, o in zip(r, rows["events off"])]
    print(f"- {variant}: " + ", ".join(f"{q:.2f}" for q in ratios)
          + f" (median {statistics.median(ratios):.2f})")
