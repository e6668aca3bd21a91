"""bench/wire_before_after.py — interleaved before/after of plain enqueue and processing: the same build speaking
echomq:2.0.0 (main's scripts: claim, reap) and echomq:2.1.0 (claim_guarded, reap_stalled).
3 rounds x 2 wire versions; N=20000; FLUSHALL before each run; one redis-server."""
import shutil, socket, subprocess, sys, threading, time
import redis
import echomq

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
N = 20000
payloads = [b"x" * 100] * N
try:
    for rnd in (1, 2, 3):
        for wire in ("echomq:2.0.0", "echomq:2.1.0"):
            raw.flushall()
            c = echomq.connect(url, wire_version=wire)
            t = time.perf_counter()
            for i in range(0, N, 1000):
                c.enqueue_many("bench", payloads[i:i + 1000])
            bulk = N / (time.perf_counter() - t)
            w = echomq.Worker(c, "bench", lambda job: None, concurrency=50, handler_batch=50,
                              idle_max_ms=5, handle_signals=False)
            th = threading.Thread(target=w.run)
            raw.config_resetstat()
            t = time.perf_counter()
            th.start()
            while c.counts("bench").completed < N:
                time.sleep(0.002)
            proc = N / (time.perf_counter() - t)
            w.stop(); th.join()
            stats = raw.info("commandstats")
            server_us = sum(v["usec"] for k, v in stats.items() if k in ("cmdstat_evalsha", "cmdstat_eval")) / N
            raw.flushall()
            c.close()
            c = echomq.connect(url, wire_version=wire)
            t = time.perf_counter()
            for i in range(2000):
                c.enqueue("bench", b"x" * 100)
            single = 2000 / (time.perf_counter() - t)
            c.close()
            print(f"round {rnd} {wire}: enqueue_many {bulk:,.0f}/s  process {proc:,.0f}/s (server script time {server_us:.1f} us/job)  enqueue one-in-flight {single:,.0f}/s", flush=True)
finally:
    srv.terminate()
