"""A worker process for test_worker.py: its handler announces each job and
then hangs, so the test can SIGKILL it mid-job."""

import sys
import time

import echomq

url, queue, lease_ms = sys.argv[1], sys.argv[2], int(sys.argv[3])
max_stalls = int(sys.argv[4]) if len(sys.argv) > 4 else 2
client = echomq.connect(url)


def handler(job: echomq.Job) -> None:
    print(f"started {job.id} {job.token}", flush=True)
    time.sleep(3600)


worker = echomq.Worker(client, queue, handler, concurrency=1, lease_ms=lease_ms,
                       pump_interval_ms=100, prefetch=0, max_stalls=max_stalls)
print("ready", flush=True)
worker.run()
