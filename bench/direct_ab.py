"""bench/direct_ab.py — one-in-flight enqueue from Python with direct calls on and off
(issue #16 §3, decision 16.8), alternating fresh processes against one server so the VM's
drift hits both sides alike. Each process connects, enqueues --n jobs of 100 bytes one at a
time and prints its rate. Usage: python3 bench/direct_ab.py [--n 10000] [--pairs 8]"""
import argparse, os, shutil, socket, statistics, subprocess, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--n", type=int, default=10_000)
ap.add_argument("--pairs", type=int, default=8)
args = ap.parse_args()

CHILD = """
import sys, time, echomq
c = echomq.connect(sys.argv[1])
p = b"x" * 100
for _ in range(200):
    c.enqueue("ab", p)
t = time.perf_counter()
for _ in range(int(sys.argv[2])):
    c.enqueue("ab", p)
print(int(sys.argv[2]) / (time.perf_counter() - t))
"""


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


port = free_port()
srv = subprocess.Popen([shutil.which("redis-server"), "--port", str(port), "--bind", "127.0.0.1",
                        "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
time.sleep(0.5)
url = f"redis://127.0.0.1:{port}/"
rates = {"direct (default)": [], "shared connection (EMQ_DIRECT_CALLS=0)": []}
try:
    for _ in range(args.pairs):
        for name, flag in (("direct (default)", "1"), ("shared connection (EMQ_DIRECT_CALLS=0)", "0")):
            subprocess.run([shutil.which("redis-cli"), "-p", str(port), "FLUSHALL"], stdout=subprocess.DEVNULL)
            out = subprocess.run([sys.executable, "-c", CHILD, url, str(args.n)], capture_output=True,
                                 text=True, env={**os.environ, "EMQ_DIRECT_CALLS": flag}, check=True)
            rates[name].append(float(out.stdout))
    print(f"Python, one enqueue in flight, N = {args.n}, {args.pairs} alternating pairs\n")
    print("| path | enqueues/s (median) | min–max |")
    print("|---|---:|---|")
    for name, xs in rates.items():
        print(f"| {name} | {statistics.median(xs):,.0f} | {min(xs):,.0f}–{max(xs):,.0f} |")
    on, off = (statistics.median(x) for x in rates.values())
    print(f"\ndirect ÷ shared: {on / off:.2f}")
finally:
    srv.terminate(); srv.wait()
