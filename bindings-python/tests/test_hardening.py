"""Issue #11 from Python: defaults come from the core, option ranges and
closed clients answer typed errors, panics inside the core reject instead of
hanging, passwords never appear in errors, forked processes mint distinct ids,
and a batch cut by a dropped connection says which items were written."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from typing import Any, List

import pytest

import echomq
from conftest import wait_until

pytestmark = pytest.mark.filterwarnings("ignore:.*multi-threaded.*fork:DeprecationWarning")

# The documented defaults, names and ranges of every option are checked
# against the core's options schema in test_option_schema.py.


def test_omitted_worker_options_take_the_cores_defaults(client: echomq.Client, queue: str) -> None:
    worker = echomq.Worker(client, queue, lambda job: None)
    assert "claimed=0" in repr(worker)


@pytest.mark.parametrize(
    "option,value",
    [
        ("concurrency", 2**63),
        ("concurrency", 2**64),
        ("concurrency", -1),
        ("lease_ms", 2**70),
        ("idle_max_ms", 2**64 - 1),
        ("prefetch", 2**40),
        ("handler_batch", 0),
        ("max_attempts", 2**63),
    ],
)
def test_out_of_range_worker_options_are_invalid_arguments(
    client: echomq.Client, queue: str, option: str, value: int
) -> None:
    with pytest.raises(echomq.InvalidArgumentError, match=option):
        echomq.Worker(client, queue, lambda job: None, **{option: value})


def test_a_closed_client_ends_the_worker_with_closed(redis_url: str, queue: str) -> None:
    c = echomq.connect(redis_url)
    w = echomq.Worker(c, queue, lambda job: None, idle_max_ms=20, handle_signals=False)
    threading.Timer(0.2, c.close).start()
    with pytest.raises(echomq.ClosedError):
        w.run()
    # Closed before run: the run ends at once, the same way.
    with pytest.raises(echomq.ClosedError):
        w.run()
    with pytest.raises(echomq.ClosedError):
        c.bundle_mismatches()


def test_a_panic_inside_the_core_loop_ends_run_with_internal_error(
    client: echomq.Client, queue: str
) -> None:
    w = echomq.Worker(client, queue, lambda job: None, handle_signals=False)
    w._native._panic_next_run_for_tests()
    with pytest.raises(echomq.InternalError, match="panicked"):
        w.run()


def test_a_panicking_core_future_rejects_the_asyncio_future() -> None:
    async def main() -> None:
        with pytest.raises(echomq.InternalError, match="panicked"):
            await asyncio.wait_for(echomq._native._panic_in_core_for_tests(), 10)

    asyncio.run(main())


def test_worker_stats_count_failures(own_server, queue: str) -> None:  # type: ignore[no-untyped-def]
    """Real failures, as in core/tests/lifecycle.rs: the server goes away under
    a worker holding a job, so heartbeats fail, then the job's settlement and
    the claims for the freed slot fail too; every claim is accounted for."""
    url, proc = own_server
    client = echomq.connect(url, connect_timeout_ms=500, response_timeout_ms=500)
    client.enqueue(queue, "held")
    gate = threading.Event()
    worker = echomq.Worker(client, queue, lambda job: gate.wait(120), concurrency=1, prefetch=0,
                           lease_ms=300, idle_max_ms=20, shutdown_grace_ms=0, handle_signals=False)
    assert (worker.stats().claim_failures, worker.stats().released) == (0, 0)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        wait_until(lambda: worker.stats().claimed == 1, 60)
        proc.kill()
        proc.wait()
        wait_until(lambda: worker.stats().heartbeat_failures > 0, 60)
        gate.set()  # the handler ends while the server is gone
        wait_until(lambda: worker.stats().claim_failures > 0 and worker.stats().settle_failures > 0, 60)
    finally:
        gate.set()
        worker.stop()
        thread.join(120)
    assert not thread.is_alive()
    s = worker.stats()
    assert s.claimed == s.completed + s.retried + s.dead + s.lease_lost + s.settle_failures + s.released, s
    assert s.in_flight == 0


@pytest.mark.parametrize(
    "url",
    [
        "redis://user:secret@127.0.0.1:notaport/",
        "redis://user:secret@127.0.0.1:6379/notadb",
        "http://user:secret@127.0.0.1/",
        "redis+unix://user:secret@/x.sock",
    ],
)
def test_connect_errors_never_show_the_password(url: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("DEBUG"):
        with pytest.raises(echomq.EchoMQError) as caught:
            echomq.connect(url)
        with pytest.raises(echomq.EchoMQError) as caught_async:
            asyncio.run(echomq.connect_async(url))
    for e in (caught.value, caught_async.value):
        for shown in (str(e), repr(e), e.message, str(e.args)):
            assert "secret" not in shown, shown
        assert isinstance(e, echomq.InvalidArgumentError)
    assert "secret" not in caplog.text


def test_probed_edges(redis_url: str) -> None:
    with pytest.raises(echomq.InvalidArgumentError):
        echomq.connect(redis_url, client_name="has space")
    for bad in (-2, 1024, 70000):
        with pytest.raises(echomq.InvalidArgumentError, match="0..=1023"):
            echomq.mint_job_id(bad)
        with pytest.raises(echomq.InvalidArgumentError, match="0..=1023"):
            echomq.connect(redis_url, node_id=bad)


def _child_enqueues(redis_url: str, queue: str, n: int, w: int) -> None:  # pragma: no cover - child
    code = 0
    try:
        c = echomq.connect(redis_url)  # created after the fork, as docs/PYTHON.md says
        ids: List[str] = []
        for _ in range(n // 100):
            for r in c.enqueue_many(queue, [b"x"] * 100):
                if isinstance(r, BaseException):
                    raise r
                ids.append(r.id)
        os.write(w, ("\n".join(ids) + "\n").encode())
    except BaseException as e:
        os.write(w, f"ERROR {e!r}\n".encode())
        code = 1
    os._exit(code)


def test_forked_children_mint_distinct_ids(redis_url: str, queue: str, raw: Any) -> None:
    echomq.mint_job_id()  # the parent drew its node id before forking
    children, pipes = [], []
    n = 2_000
    for _ in range(4):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            os.close(r)
            _child_enqueues(redis_url, queue, n, w)
        os.close(w)
        children.append(pid)
        pipes.append(r)
    parent = echomq.connect(redis_url)
    mine = [e.id for e in parent.enqueue_many(queue, [b"p"] * n) if isinstance(e, echomq.Enqueued)]
    outputs = []
    for pid, r in zip(children, pipes):
        with os.fdopen(r, "rb") as f:
            outputs.append(f.read().decode())
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0, outputs[-1][-500:]
    ids = mine + [line for out in outputs for line in out.split()]
    assert len(ids) == 5 * n
    assert len(set(ids)) == len(ids), "duplicate ids across forked processes"
    assert parent.counts(queue).pending == 5 * n
    nodes = {echomq.parse_id(i).snowflake >> 12 & 1023 for i in ids}
    assert len(nodes) >= 2


def test_emq_node_id_set_in_a_forked_child_is_honoured(redis_url: str, queue: str) -> None:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        os.close(r)
        os.environ["EMQ_NODE_ID"] = "321"
        try:
            c = echomq.connect(redis_url)
            os.write(w, f"{c.node_id} {c.enqueue(queue, b'x').id}".encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        out = f.read().decode()
    os.waitpid(pid, 0)
    node, job_id = out.split()
    assert node == "321"
    assert echomq.parse_id(job_id).snowflake >> 12 & 1023 == 321


def test_a_cut_batch_raises_partial_batch_with_per_item_states(
    redis_url: str, raw: Any
) -> None:
    payloads = [b"x" * 2000] * 20_000
    for attempt in range(5):
        queue = f"cut{attempt}-{time.monotonic_ns()}"
        c = echomq.connect(redis_url, client_name="pyvictim")
        before = raw.dbsize()

        def kill() -> None:
            while raw.dbsize() <= before + 100:
                time.sleep(0.001)
            for info in raw.client_list():
                if info.get("name") == "pyvictim":
                    raw.client_kill_filter(_id=info["id"])

        killer = threading.Thread(target=kill)
        killer.start()
        try:
            c.enqueue_many(queue, payloads)
            killer.join()
            continue
        except echomq.PartialBatchError as e:
            killer.join()
            items = e.items
        assert len(items) == len(payloads)
        states = {s for _, s in items}
        assert "written" in states and states <= {"written", "not_written", "unknown"}
        for item_id, state in items:
            if state != "written":
                c.enqueue(queue, b"x" * 2000, id=item_id)
        assert c.counts(queue).pending == len(payloads)
        return
    pytest.fail("no batch was cut in five attempts")
