"""A script for test_exit.py that ends the way issue #39 §1 describes: a
worker runs in a daemon thread (or a thread sits in a call), the server may
have been killed just before, `stop()`, and the script ends. It prints what
it saw; the test asserts its exit status and output."""

import os
import signal
import sys
import threading
import time

import echomq

url, queue, mode, server_pid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
kill_server = server_pid > 0
client = echomq.connect(url)
for _ in range(4):
    client.enqueue(queue, b"job")
started = threading.Event()


def handler(job: echomq.Job) -> None:
    started.set()
    time.sleep(0.05)


if mode == "blocked-call":
    # A thread looping on calls against a server that is gone, when the
    # script ends.
    os.kill(server_pid, signal.SIGKILL)

    def calls() -> None:
        while True:
            try:
                client.counts(queue)
            except echomq.EchoMQError:
                pass

    threading.Thread(target=calls, daemon=True).start()
    time.sleep(0.2)
    print("exiting", flush=True)
    sys.exit(0)

worker = echomq.Worker(client, queue, handler, concurrency=2, shutdown_grace_ms=2000)
returned = threading.Event()


def run() -> None:
    worker.run()
    returned.set()


thread = threading.Thread(target=run, daemon=True)
thread.start()
assert started.wait(20), "the worker ran a job"
if kill_server:
    os.kill(server_pid, signal.SIGKILL)
worker.stop()
if mode == "join":
    thread.join(15)
    print(f"returned={returned.is_set()}", flush=True)
print("exiting", flush=True)
