"""bench/direct_ab.py — one-in-flight enqueue three ways (issue #16 §3), from Python's blocking
client, Python's asyncio client or Node: the default (a blocking call drives its own
connection and spins briefly before parking, decisions 16.8 and 16.10; an asyncio or Node call
takes the core's caller thread, decision 16.11), the same without spinning (`EMQ_SPIN_US=0`),
and the shared connection (`EMQ_DIRECT_CALLS=0`). Fresh processes alternate against one server
so the VM's drift hits every side alike. Each process connects, enqueues --n jobs of 100 bytes
one at a time and prints its rate and the CPU (user + system, every thread) it spent per call.
Run it with the interpreter of a venv that has echomq installed (scripts/python-env.sh);
Node loads bindings-node/ (scripts/node-build.sh).
Usage: .venv/bin/python bench/direct_ab.py [--runtime python|asyncio|node] [--n 10000] [--pairs 8]"""
import argparse, os, shutil, socket, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ap = argparse.ArgumentParser()
ap.add_argument("--runtime", choices=("python", "asyncio", "node"), default="python")
ap.add_argument("--n", type=int, default=10_000)
ap.add_argument("--pairs", type=int, default=8)
args = ap.parse_args()

PY_CPU = """
import resource, sys, time, echomq
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
p, n = b"x" * 100, int(sys.argv[2])
"""
CHILDREN = {
    "python": [sys.executable, "-c", PY_CPU + """
c = echomq.connect(sys.argv[1])
for _ in range(200):
    c.enqueue("ab", p)
c0, t = cpu(), time.perf_counter()
for _ in range(n):
    c.enqueue("ab", p)
wall, used = time.perf_counter() - t, cpu() - c0
print(n / wall, used / n * 1e6)
"""],
    "asyncio": [sys.executable, "-c", PY_CPU + """
import asyncio
async def main():
    c = await echomq.connect_async(sys.argv[1])
    for _ in range(200):
        await c.enqueue("ab", p)
    c0, t = cpu(), time.perf_counter()
    for _ in range(n):
        await c.enqueue("ab", p)
    wall, used = time.perf_counter() - t, cpu() - c0
    print(n / wall, used / n * 1e6)
asyncio.run(main())
"""],
    "node": [shutil.which("node") or "node", "-e", """
const emq = require(process.env.EMQ_NODE_ADDON);
const [url, n] = [process.argv[1], +process.argv[2]];
(async () => {
  const c = await emq.connect(url); const p = Buffer.alloc(100, 120);
  for (let i = 0; i < 200; i++) await c.enqueue('ab', p);
  const u0 = process.cpuUsage(); const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await c.enqueue('ab', p);
  const wall = Number(process.hrtime.bigint() - t) / 1e9; const u = process.cpuUsage(u0);
  console.log(n / wall, (u.user + u.system) / n);
  c.close(); process.exit(0);
})();
"""],
}
DEFAULT = {"python": "direct, spin then park (default)",
           "asyncio": "caller thread (default)", "node": "caller thread (default)"}[args.runtime]
VARIANTS = {
    DEFAULT: {},
    "the same, park at once (EMQ_SPIN_US=0)": {"EMQ_SPIN_US": "0"},
    "shared connection (EMQ_DIRECT_CALLS=0)": {"EMQ_DIRECT_CALLS": "0"},
}


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


port = free_port()
srv = subprocess.Popen([shutil.which("redis-server"), "--port", str(port), "--bind", "127.0.0.1",
                        "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
time.sleep(0.5)
url = f"redis://127.0.0.1:{port}/"
child = CHILDREN[args.runtime]
base_env = {**os.environ, "EMQ_NODE_ADDON": os.path.join(ROOT, "bindings-node")}
rates = {name: [] for name in VARIANTS}
cpus = {name: [] for name in VARIANTS}
try:
    for _ in range(args.pairs):
        for name, env in VARIANTS.items():
            subprocess.run([shutil.which("redis-cli"), "-p", str(port), "FLUSHALL"], stdout=subprocess.DEVNULL)
            out = subprocess.run(child + [url, str(args.n)], capture_output=True,
                                 text=True, env={**base_env, **env}, check=True)
            rate, cpu = out.stdout.split()
            rates[name].append(float(rate))
            cpus[name].append(float(cpu))
    print(f"{args.runtime}, one enqueue in flight, N = {args.n}, {args.pairs} alternating rounds\n")
    print("| path | enqueues/s (median) | min–max | client CPU µs / call (median) |")
    print("|---|---:|---|---:|")
    for name, xs in rates.items():
        print(f"| {name} | {statistics.median(xs):,.0f} | {min(xs):,.0f}–{max(xs):,.0f} "
              f"| {statistics.median(cpus[name]):.1f} |")
    spin, park, shared = (statistics.median(x) for x in rates.values())
    print(f"\ndefault ÷ park at once: {spin / park:.2f}; park at once ÷ shared: {park / shared:.2f}; "
          f"default ÷ shared: {spin / shared:.2f}")
finally:
    srv.terminate(); srv.wait()
