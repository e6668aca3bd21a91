"""The wheel's check (scripts/test-dist.sh): enqueue, claim, complete on $EMQ_URL
from a venv that has only the installed wheel; prints the package's version."""

import importlib.metadata
import os

import echomq

client = echomq.connect(os.environ["EMQ_URL"])
enqueued = client.enqueue("dist-py", b"from the wheel")
job = client.claim("dist-py", 10_000)
assert job is not None and job.id == enqueued.id and job.payload == b"from the wheel", job
client.complete("dist-py", job.id, job.token)
counts = client.counts("dist-py")
assert (counts.pending, counts.active, counts.completed) == (0, 0, 1), counts
assert echomq.__version__ == importlib.metadata.version("echomq")
print(f"module={echomq.__version__} dist={importlib.metadata.version('echomq')}")
