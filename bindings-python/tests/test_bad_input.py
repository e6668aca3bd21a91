"""Bad input raises the right exception before anything is written."""

from __future__ import annotations

import pytest

import echomq

BAD_QUEUES = ["", "has space", "emq", "x" * 129, "brace{", "é", "a:b"]
BAD_IDS = ["", "JOB", "JOB0000000000", "JOB000000000000", "job00000000000", "JOB0000000000-"]


@pytest.fixture
def empty(raw):  # type: ignore[no-untyped-def]
    raw.execute_command("SELECT", 6)
    raw.flushdb()
    yield raw
    raw.flushdb()


@pytest.fixture
def c6(redis_url):  # type: ignore[no-untyped-def]
    c = echomq.connect(redis_url + "6", max_payload=1024)
    yield c
    c.close()


def keyspace(raw) -> set:  # type: ignore[no-untyped-def]
    return {k for k in raw.keys("*") if not k.startswith(b"{emq}:")}


@pytest.mark.parametrize("bad", BAD_QUEUES)
def test_invalid_queue_names(c6, empty, bad):
    calls = [
        lambda: c6.enqueue(bad, b"x"),
        lambda: c6.enqueue(bad, b"x", id=echomq.mint_job_id()),
        lambda: c6.enqueue(bad, b"x", run_at_ms=1),
        lambda: c6.enqueue(bad, b"x", delay_ms=1),
        lambda: c6.enqueue_many(bad, [b"x"]),
        lambda: c6.claim(bad, 1000),
        lambda: c6.claim_many(bad, 2, 1000),
        lambda: c6.complete(bad, echomq.mint_job_id(), 1),
        lambda: c6.retry(bad, echomq.mint_job_id(), 1, 0, 1, "e"),
        lambda: c6.extend(bad, echomq.mint_job_id(), 1, 1000),
        lambda: c6.promote(bad),
        lambda: c6.reap(bad),
        lambda: c6.counts(bad),
        lambda: c6.job(bad, echomq.mint_job_id()),
        lambda: c6.browse(bad, "pending"),
        lambda: c6.pause(bad),
        lambda: c6.resume(bad),
        lambda: c6.is_paused(bad),
        lambda: c6.requeue_dead(bad, echomq.mint_job_id()),
        lambda: c6.remove(bad, echomq.mint_job_id()),
    ]
    for call in calls:
        with pytest.raises(echomq.InvalidQueueError) as info:
            call()
        assert info.value.code == "EMQ_INVALID_QUEUE"
    assert not echomq.is_valid_queue(bad)
    assert keyspace(empty) == set()


@pytest.mark.parametrize("bad", BAD_IDS)
def test_invalid_ids(c6, empty, bad):
    for call in [
        lambda: c6.enqueue("q", b"x", id=bad),
        lambda: c6.complete("q", bad, 1),
        lambda: c6.complete_many("q", [(echomq.mint_job_id(), 1), (bad, 1)]),
        lambda: c6.retry("q", bad, 1, 0, 1, "e"),
        lambda: c6.extend("q", bad, 1, 1000),
        lambda: c6.extend_many("q", [(bad, 1)], 1000),
        lambda: c6.job("q", bad),
        lambda: c6.requeue_dead("q", bad),
        lambda: c6.remove("q", bad),
        lambda: echomq.parse_id(bad),
        lambda: echomq.job_key("q", bad),
    ]:
        with pytest.raises(echomq.InvalidIdError):
            call()
    assert keyspace(empty) == set()


@pytest.mark.parametrize("payload", [42, 4.2, None, ["a"], {"a": 1}, object()])
def test_wrong_payload_types_raise_type_error(c6, empty, payload):
    with pytest.raises(TypeError):
        c6.enqueue("q", payload)
    with pytest.raises(TypeError):
        c6.enqueue("q", payload, id=echomq.mint_job_id())
    with pytest.raises(TypeError):
        c6.enqueue("q", payload, delay_ms=10)
    with pytest.raises(TypeError):
        # A valid payload first: still nothing is sent.
        c6.enqueue_many("q", [b"fine", payload])
    assert keyspace(empty) == set()


def test_wrong_argument_types(c6, empty):
    with pytest.raises(TypeError):
        c6.enqueue(5, b"x")
    with pytest.raises(TypeError):
        c6.complete("q", 5, 1)
    with pytest.raises(TypeError):
        c6.claim("q", "1000")
    with pytest.raises(TypeError):
        c6.enqueue_many("q", b"not a list")
    with pytest.raises(TypeError):
        c6.complete_many("q", [("JOB0000000000a",)])
    # A negative count or duration is a bad argument of ours (issue #17),
    # not the builtin OverflowError a caller catching EchoMQError misses.
    with pytest.raises(echomq.InvalidArgumentError):
        c6.claim("q", -1)
    assert keyspace(empty) == set()


def test_invalid_arguments(c6, empty):
    with pytest.raises(echomq.InvalidArgumentError) as big:
        c6.enqueue("q", b"x" * 1025)
    assert isinstance(big.value, ValueError)
    with pytest.raises(echomq.InvalidArgumentError):
        c6.enqueue_many("q", [b"ok", b"x" * 1025])
    with pytest.raises(echomq.InvalidArgumentError):
        c6.claim("q", 0)
    with pytest.raises(echomq.InvalidArgumentError):
        c6.claim_many("q", 0, 1000)
    with pytest.raises(echomq.InvalidArgumentError):
        c6.retry("q", echomq.mint_job_id(), 1, 0, 0, "e")
    with pytest.raises(echomq.InvalidArgumentError):
        c6.browse("q", "pending", range=(10, 5))
    with pytest.raises(echomq.InvalidArgumentError):
        c6.promote("q", 0)
    with pytest.raises(echomq.InvalidArgumentError):
        echomq.Worker(c6, "q", lambda job: None, concurrency=0)
    with pytest.raises(echomq.InvalidArgumentError):
        echomq.Worker(c6, "q", lambda job: None, backoff="sometimes")  # type: ignore[arg-type]
    with pytest.raises(echomq.InvalidQueueError):
        echomq.Worker(c6, "bad queue", lambda job: None)
    with pytest.raises(TypeError):
        echomq.Worker(c6, "q", "not callable")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        echomq.Worker(object(), "q", lambda job: None)  # type: ignore[arg-type]
    assert keyspace(empty) == set()
