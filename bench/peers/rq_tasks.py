"""Job functions for the RQ driver (rq_py.py). RQ enqueues a *reference* to
a function ("rq_tasks.noop"), so they must live in an importable module.

`record` is the latency handler: it measures start - enqueued (the payload's
"t", wall-clock ns) and hands the value to the worker process's sink, which
rq_py.py installs in each worker process before it starts working.
"""

import time

_sink = None  # set by rq_py.py in each worker process: a callable(float_ms)


def noop(payload):
    return None


def record(payload):
    lat_ms = (time.time_ns() - payload["t"]) / 1e6
    if _sink is not None:
        _sink(lat_ms)
    return None
