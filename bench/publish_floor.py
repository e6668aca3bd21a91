"""bench/publish_floor.py — what one queue-event message costs the server when somebody
listens (issue #12's ≤ 5 % target): the floor under any client design that keeps one message
per transition. It publishes N messages of the size of a `completed` event to
`emq:{bench}:events`, with one subscriber attached, three ways, interleaved:

- `lua`: our `publish` script (core/lua/publish.lua), B messages per call, as the client does;
- `pipe`: B plain `PUBLISH` commands per pipeline (no script);
- `lua, nobody listening`: the script's early answer (PUBSUB NUMSUB is 0).

and reads the server's own CPU (`INFO cpu`, user + sys) per message, which includes parsing,
the PUBLISH and writing the message to the subscriber's socket. Raw RESP over one socket, so
the client's speed does not matter. Usage: python3 bench/publish_floor.py [--n 200000] [--batch 500]"""
import argparse, re, shutil, socket, statistics, subprocess, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ap = argparse.ArgumentParser()
ap.add_argument("--n", type=int, default=200_000)
ap.add_argument("--batch", type=int, default=500)
ap.add_argument("--rounds", type=int, default=5)
args = ap.parse_args()


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def enc(*parts):
    out = [b"*%d\r\n" % len(parts)]
    for x in parts:
        x = x if isinstance(x, bytes) else str(x).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(x), x))
    return b"".join(out)


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.f = self.sock.makefile("rb")

    def read(self):
        line = self.f.readline()
        kind = line[:1]
        if kind in b"+-:":
            if kind == b"-":
                raise RuntimeError(line)
            return line[1:].strip()
        if kind == b"$":
            n = int(line[1:])
            return None if n < 0 else self.f.read(n + 2)[:-2]
        return [self.read() for _ in range(int(line[1:]))]

    def cmd(self, *parts):
        self.sock.sendall(enc(*parts)); return self.read()


def server_cpu(c):
    info = c.cmd("INFO", "cpu").decode()
    return sum(float(re.search(rf"used_cpu_{k}:([\d.]+)", info).group(1)) for k in ("user", "sys"))


port = free_port()
srv = subprocess.Popen([shutil.which("redis-server"), "--port", str(port), "--bind", "127.0.0.1",
                        "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
for _ in range(100):
    try:
        c = Conn(port); c.cmd("PING"); break
    except OSError:
        time.sleep(0.05)
sub = None
try:
    sha = c.cmd("SCRIPT", "LOAD", (ROOT / "core/lua/publish.lua").read_text())
    channel = b"emq:{bench}:events"
    message = b'{"event":"completed","job":"01J9Z8Q7ABCDEFGHJKMNPQRSTV","attempts":"1","duration_ms":"3"}'
    B, N = args.batch, args.n - args.n % args.batch

    def run(variant):
        before = server_cpu(c)
        for _ in range(0, N, B):
            if variant == "pipe":
                c.sock.sendall(enc("PUBLISH", channel, message) * B)
                for _ in range(B):
                    c.read()
            else:
                c.cmd("EVALSHA", sha, 1, "emq:{bench}:meta", channel, *([message] * B))
        return (server_cpu(c) - before) * 1e6 / N

    sub = subprocess.Popen([shutil.which("redis-cli"), "-p", str(port), "SUBSCRIBE", channel],
                           stdout=subprocess.DEVNULL)
    while int(c.cmd("PUBSUB", "NUMSUB", channel)[1]) == 0:
        time.sleep(0.01)
    rows = {v: [] for v in ("lua", "pipe", "lua, nobody listening")}
    for rnd in range(args.rounds):
        for v in ("lua", "pipe"):
            rows[v].append(run(v))
    sub.terminate(); sub.wait()
    while int(c.cmd("PUBSUB", "NUMSUB", channel)[1]) != 0:
        time.sleep(0.01)
    for rnd in range(args.rounds):
        rows["lua, nobody listening"].append(run("lua"))
    print(f"N = {N} messages of {len(message)} bytes, {B} per call, {args.rounds} rounds\n")
    print("| variant | server CPU µs / message (median) | min–max |")
    print("|---|---:|---|")
    for v, xs in rows.items():
        print(f"| {v} | {statistics.median(xs):.2f} | {min(xs):.2f}–{max(xs):.2f} |")
finally:
    if sub is not None and sub.poll() is None:
        sub.terminate()
    srv.terminate(); srv.wait()
