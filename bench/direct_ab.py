"""bench/direct_ab.py — one-in-flight enqueue from Python three ways (issue #16 §3): direct
calls with their spin-then-park wait (the default, decision 16.10), direct calls that park at
once (`EMQ_SPIN_US=0`, decision 16.8 alone) and the shared connection (`EMQ_DIRECT_CALLS=0`),
alternating fresh processes against one server so the VM's drift hits every side alike. Each
process connects, enqueues --n jobs of 100 bytes one at a time and prints its rate and the
CPU (user + system, every thread) it spent per call.
Usage: python3 bench/direct_ab.py [--n 10000] [--pairs 8]"""
import argparse, os, shutil, socket, statistics, subprocess, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--n", type=int, default=10_000)
ap.add_argument("--pairs", type=int, default=8)
args = ap.parse_args()

CHILD = """
import resource, sys, time, echomq
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
c = echomq.connect(sys.argv[1])
p = b"x" * 100
n = int(sys.argv[2])
for _ in range(200):
    c.enqueue("ab", p)
c0, t = cpu(), time.perf_counter()
for _ in range(n):
    c.enqueue("ab", p)
wall, used = time.perf_counter() - t, cpu() - c0
print(n / wall, used / n * 1e6)
"""
VARIANTS = {
    "direct, spin then park (default)": {},
    "direct, park at once (EMQ_SPIN_US=0)": {"EMQ_SPIN_US": "0"},
    "shared connection (EMQ_DIRECT_CALLS=0)": {"EMQ_DIRECT_CALLS": "0"},
}


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


port = free_port()
srv = subprocess.Popen([shutil.which("redis-server"), "--port", str(port), "--bind", "127.0.0.1",
                        "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
time.sleep(0.5)
url = f"redis://127.0.0.1:{port}/"
rates = {name: [] for name in VARIANTS}
cpus = {name: [] for name in VARIANTS}
try:
    for _ in range(args.pairs):
        for name, env in VARIANTS.items():
            subprocess.run([shutil.which("redis-cli"), "-p", str(port), "FLUSHALL"], stdout=subprocess.DEVNULL)
            out = subprocess.run([sys.executable, "-c", CHILD, url, str(args.n)], capture_output=True,
                                 text=True, env={**os.environ, **env}, check=True)
            rate, cpu = out.stdout.split()
            rates[name].append(float(rate))
            cpus[name].append(float(cpu))
    print(f"Python, one enqueue in flight, N = {args.n}, {args.pairs} alternating rounds\n")
    print("| path | enqueues/s (median) | min–max | client CPU µs / call (median) |")
    print("|---|---:|---|---:|")
    for name, xs in rates.items():
        print(f"| {name} | {statistics.median(xs):,.0f} | {min(xs):,.0f}–{max(xs):,.0f} "
              f"| {statistics.median(cpus[name]):.1f} |")
    spin, park, shared = (statistics.median(x) for x in rates.values())
    print(f"\nspin ÷ park: {spin / park:.2f}; park ÷ shared: {park / shared:.2f}")
finally:
    srv.terminate(); srv.wait()
