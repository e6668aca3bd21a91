"""Issue #33: one enqueue verb with options, on the four classes (Client,
AsyncClient, Queue, AsyncQueue), and one batch verb with per-item options.
Every case asserts the wire state with a raw redis client."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterator, List, Tuple

import pytest

import echomq

KINDS = ["Client", "AsyncClient", "Queue", "AsyncQueue"]


class Target:
    """One of the four classes, called the same way: `enqueue(payload, **options)`
    and `enqueue_many(items)`, coroutines run to completion on one loop."""

    def __init__(self, kind: str, client: echomq.Client, aclient: echomq.AsyncClient,
                 loop: asyncio.AbstractEventLoop, queue: str) -> None:
        self.kind, self.loop, self.queue = kind, loop, queue
        self.obj: Any = {
            "Client": client,
            "AsyncClient": aclient,
            "Queue": client.queue(queue),
            "AsyncQueue": aclient.queue(queue),
        }[kind]

    def _run(self, verb: str, *args: Any, **kwargs: Any) -> Any:
        fn: Callable[..., Any] = getattr(self.obj, verb)
        if self.kind in ("Client", "AsyncClient"):
            args = (self.queue, *args)
        out = fn(*args, **kwargs)
        if self.kind.startswith("Async"):
            assert asyncio.iscoroutine(out), f"{self.kind}.{verb} answers {type(out)}"
            out = self.loop.run_until_complete(out)
        return out

    def enqueue(self, payload: Any, **options: Any) -> echomq.Enqueued:
        out = self._run("enqueue", payload, **options)
        assert isinstance(out, echomq.Enqueued)
        return out

    def enqueue_many(self, items: Any) -> List[Any]:
        return list(self._run("enqueue_many", items))

    def exists(self, id: str) -> bool:
        out = self._run("exists", id)
        assert isinstance(out, bool)
        return out


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    lp = asyncio.new_event_loop()
    yield lp
    lp.close()


@pytest.fixture(scope="module")
def aclient(redis_url: str, loop: asyncio.AbstractEventLoop) -> Iterator[echomq.AsyncClient]:
    c = loop.run_until_complete(echomq.connect_async(redis_url, client_name="pytest-async"))
    yield c
    loop.run_until_complete(c.aclose())


@pytest.fixture(params=KINDS)
def target(request: Any, client: echomq.Client, aclient: echomq.AsyncClient,
           loop: asyncio.AbstractEventLoop, queue: str) -> Target:
    return Target(request.param, client, aclient, loop, queue)


def server_ms(raw: Any) -> int:
    seconds, micros = raw.time()
    return int(seconds) * 1000 + int(micros) // 1000


def nothing_written(raw: Any, queue: str) -> bool:
    return raw.keys(f"emq:{{{queue}}}:*") == []


# ---- one option at a time, on each class ------------------------------------------


def test_no_options_enqueues_now_under_a_minted_id(target, raw, keys):
    e = target.enqueue(b"now")
    assert e.id.startswith("JOB") and e.duplicate is False
    assert raw.hgetall(keys.job(e.id)) == {b"state": b"pending", b"attempts": b"0",
                                          b"payload": b"now"}
    assert raw.zscore(keys.pending, e.id) == 0.0


def test_id_chooses_the_id_and_a_second_is_a_duplicate(target, raw, keys):
    id = echomq.mint_job_id()
    first = target.enqueue(b"first", id=id)
    assert (first.id, first.duplicate) == (id, False)
    assert raw.hget(keys.job(id), "payload") == b"first"
    again = target.enqueue(b"second", id=id)
    assert (again.id, again.duplicate) == (id, True)
    assert raw.hget(keys.job(id), "payload") == b"first", "a duplicate leaves the row untouched"
    assert raw.zcard(keys.pending) == 1


def test_delay_ms_schedules_at_server_now_plus_the_delay(target, raw, keys):
    before = server_ms(raw)
    e = target.enqueue(b"later", delay_ms=60_000)
    after = server_ms(raw)
    score = raw.zscore(keys.schedule, e.id)
    assert score is not None and before + 60_000 <= score <= after + 60_000
    assert raw.hget(keys.job(e.id), "state") == b"scheduled"
    assert not raw.exists(keys.pending)
    d = target.enqueue(b"td", delay_ms=timedelta(minutes=2))
    assert raw.zscore(keys.schedule, d.id) >= before + 120_000


def test_run_at_ms_schedules_at_that_time(target, raw, keys):
    at = server_ms(raw) + 3_600_000
    e = target.enqueue(b"at", run_at_ms=at)
    assert raw.zscore(keys.schedule, e.id) == at
    assert raw.hget(keys.job(e.id), "state") == b"scheduled"
    when = datetime(2100, 1, 1, tzinfo=timezone.utc)
    d = target.enqueue(b"dt", run_at_ms=when)
    assert raw.zscore(keys.schedule, d.id) == 4_102_444_800_000


def test_dedup_id_and_ttl(target, raw, keys, queue):
    a = target.enqueue(b"a", dedup_id="order-1")
    assert a.duplicate is False
    dedup_key = f"emq:{{{queue}}}:de:order-1"
    assert raw.get(dedup_key) == a.id.encode()
    assert raw.pttl(dedup_key) == -1, "no TTL: held while the job lives"
    assert raw.hget(keys.job(a.id), "did") == b"order-1"
    b = target.enqueue(b"b", dedup_id="order-1")
    assert (b.id, b.duplicate) == (a.id, True)
    assert raw.hget(keys.job(a.id), "payload") == b"a"
    t = target.enqueue(b"t", dedup_id="throttle", dedup_ttl_ms=60_000)
    ttl = raw.pttl(f"emq:{{{queue}}}:de:throttle")
    assert t.duplicate is False and 0 < ttl <= 60_000
    assert raw.zcard(keys.pending) == 2


# ---- refusals: InvalidArgumentError, nothing written ---------------------------------

REFUSED = [
    pytest.param({"run_at_ms": 1, "delay_ms": 1}, id="run_at_ms+delay_ms"),
    pytest.param({"dedup_id": "d", "id": echomq.mint_job_id()}, id="dedup_id+id"),
    pytest.param({"dedup_id": "d", "delay_ms": 5}, id="dedup_id+delay_ms"),
    pytest.param({"dedup_id": "d", "run_at_ms": 5}, id="dedup_id+run_at_ms"),
    pytest.param({"dedup_ttl_ms": 5}, id="dedup_ttl_ms-alone"),
    pytest.param({"dedup_id": "d", "dedup_ttl_ms": 0}, id="dedup_ttl_ms=0"),
    pytest.param({"dedup_id": "bad id!"}, id="bad-dedup-id"),
    pytest.param({"delay_ms": -1}, id="negative-delay"),
]


@pytest.mark.parametrize("options", REFUSED)
def test_refusals_write_nothing(target, raw, queue, options):
    with pytest.raises(echomq.InvalidArgumentError):
        target.enqueue(b"x", **options)
    assert nothing_written(raw, queue)


def test_a_bad_chosen_id_is_refused(target, raw, queue):
    with pytest.raises(echomq.InvalidIdError):
        target.enqueue(b"x", id="not an id")
    with pytest.raises(echomq.KindError):
        target.enqueue(b"x", id="ORD0NgWEfAEJfs")
    assert nothing_written(raw, queue)


def test_an_unknown_keyword_is_a_type_error(target, raw, queue):
    with pytest.raises(TypeError):
        target.enqueue(b"x", delay=5)
    assert nothing_written(raw, queue)


# ---- one batch, per-item options ---------------------------------------------------------


def test_a_batch_with_mixed_per_item_options(target, raw, keys, queue):
    chosen = echomq.mint_job_id()
    existing = target.enqueue(b"already here", id=echomq.mint_job_id())
    before = server_ms(raw)
    items: List[echomq.EnqueueItem] = [
        b"plain",
        (b"delayed", {"delay_ms": 60_000}),
        (b"chosen", {"id": chosen}),
        (b"duplicate", {"id": existing.id}),
        ("deduped", {"dedup_id": "batch-1", "dedup_ttl_ms": 60_000}),
        (b"plain too", {}),
    ]
    answers = target.enqueue_many(items)
    after = server_ms(raw)
    assert len(answers) == 6 and all(isinstance(a, echomq.Enqueued) for a in answers)
    plain, delayed, mine, dup, deduped, plain2 = answers
    assert [a.duplicate for a in answers] == [False, False, False, True, False, False]
    assert (mine.id, dup.id) == (chosen, existing.id)
    # wire state, item by item
    assert raw.zscore(keys.pending, plain.id) == 0.0
    assert raw.hget(keys.job(plain.id), "payload") == b"plain"
    score = raw.zscore(keys.schedule, delayed.id)
    assert score is not None and before + 60_000 <= score <= after + 60_000
    assert raw.hget(keys.job(delayed.id), "state") == b"scheduled"
    assert raw.hget(keys.job(chosen), "payload") == b"chosen"
    assert raw.hget(keys.job(existing.id), "payload") == b"already here"
    assert raw.get(f"emq:{{{queue}}}:de:batch-1") == deduped.id.encode()
    assert raw.hget(keys.job(deduped.id), "did") == b"batch-1"
    assert raw.hget(keys.job(plain2.id), "payload") == b"plain too"
    assert raw.zcard(keys.pending) == 5  # existing, plain, chosen, deduped, plain too
    assert raw.zcard(keys.schedule) == 1
    # the same dedup id again in a later batch answers the holder
    again = target.enqueue_many([(b"again", {"dedup_id": "batch-1"})])
    assert (again[0].id, again[0].duplicate) == (deduped.id, True)


@pytest.mark.parametrize(
    "bad,error,index",
    [
        pytest.param((b"x", {"run_at_ms": 1, "delay_ms": 1}), echomq.InvalidArgumentError, 1,
                     id="both-times"),
        pytest.param((b"x", {"delay_ms": -1}), echomq.InvalidArgumentError, 1, id="negative"),
        pytest.param((b"x", {"delay": 5}), TypeError, 1, id="unknown-key"),
        pytest.param((b"x", {"delay_ms": "soon"}), TypeError, 1, id="bad-value-type"),
        pytest.param((b"x", [("delay_ms", 5)]), TypeError, 1, id="options-not-a-dict"),
        pytest.param((b"x",), TypeError, 1, id="one-tuple"),
        pytest.param(12, TypeError, 1, id="not-a-payload"),
    ],
)
def test_a_bad_item_refuses_the_whole_batch(target, raw, queue, bad, error, index):
    with pytest.raises(error) as info:
        target.enqueue_many([b"fine", bad, (b"fine too", {"delay_ms": 5})])
    assert str(info.value).startswith(f"item {index}: ") or f"item {index}: " in str(info.value)
    assert nothing_written(raw, queue)


def test_plain_payload_lists_still_work(target, raw, keys):
    answers = target.enqueue_many([b"a", "b", bytearray(b"c"), memoryview(b"d")])
    assert [raw.hget(keys.job(a.id), "payload") for a in answers] == [b"a", b"b", b"c", b"d"]


def test_a_single_payload_is_not_a_batch(target):
    with pytest.raises(TypeError):
        target.enqueue_many(b"not a list")


def test_exists_answers_whether_the_row_is_there(target, raw, keys):  # type: ignore[no-untyped-def]
    """exists(queue, id): the verb CONTRIBUTING's recipe adds, on all four classes."""
    e = target.enqueue(b"x")
    assert raw.exists(keys.job(e.id)) == 1
    assert target.exists(e.id) is True
    raw.delete(keys.job(e.id))
    assert target.exists(e.id) is False
    with pytest.raises(echomq.InvalidIdError):
        target.exists("not an id")


# ---- priority (wire 2.2.0, issue #34) ---------------------------------------------

# The first client on a keyspace fences it at the wire it speaks, and this
# session's other tests speak the default 2.1.0 on db 0: the 2.2.0 clients use
# a database of their own.
PRIO_DB = 11
MAX_PRIORITY = 1_000_000


@pytest.fixture(scope="module")
def raw22(redis_url: str) -> Iterator[Any]:
    import redis

    conn = redis.Redis.from_url(redis_url + str(PRIO_DB))
    conn.flushdb()
    yield conn
    conn.flushdb()
    conn.close()


@pytest.fixture(scope="module")
def client22(redis_url: str, raw22: Any) -> Iterator[echomq.Client]:
    c = echomq.connect(redis_url + str(PRIO_DB), wire_version="echomq:2.2.0")
    yield c
    c.close()


@pytest.fixture(scope="module")
def aclient22(redis_url: str, raw22: Any,
              loop: asyncio.AbstractEventLoop) -> Iterator[echomq.AsyncClient]:
    c = loop.run_until_complete(
        echomq.connect_async(redis_url + str(PRIO_DB), wire_version="echomq:2.2.0"))
    yield c
    loop.run_until_complete(c.aclose())


@pytest.fixture(params=KINDS)
def target22(request: Any, client22: echomq.Client, aclient22: echomq.AsyncClient,
             loop: asyncio.AbstractEventLoop, queue: str) -> Target:
    return Target(request.param, client22, aclient22, loop, queue)


def test_priority_is_claimed_highest_first_and_waits_in_prio(target22, client22, raw22, keys, queue):
    assert raw22.get("{emq}:version") == b"echomq:2.2.0"
    low = target22.enqueue(b"low", priority=1)
    high = target22.enqueue(b"high", priority=MAX_PRIORITY)
    none = target22.enqueue(b"none")
    zero = target22.enqueue(b"zero", priority=0)  # 0 is no priority
    # wire state: the prioritized jobs in prio scored -priority, with the row field
    prio = f"emq:{{{queue}}}:prio"
    assert raw22.zrange(prio, 0, -1, withscores=True) == [
        (high.id.encode(), -float(MAX_PRIORITY)), (low.id.encode(), -1.0)]
    assert raw22.hget(keys.job(high.id), "priority") == b"1000000"
    assert raw22.hget(keys.job(low.id), "priority") == b"1"
    assert raw22.zrange(keys.pending, 0, -1, withscores=True) == [
        (none.id.encode(), 0.0), (zero.id.encode(), 0.0)]
    assert not raw22.hexists(keys.job(none.id), "priority")
    assert not raw22.hexists(keys.job(zero.id), "priority")
    # the claims: highest first, then lower, then the jobs without, in mint order
    order = [client22.claim(queue, 30_000) for _ in range(4)]
    assert [j.id for j in order if j] == [high.id, low.id, none.id, zero.id]
    assert client22.claim(queue, 30_000) is None


def test_priority_per_batch_item(target22, client22, raw22, queue):
    plain, five, nine = target22.enqueue_many(
        [b"plain", (b"five", {"priority": 5}), (b"nine", {"priority": 9, "delay_ms": None})])
    prio = f"emq:{{{queue}}}:prio"
    assert raw22.zrange(prio, 0, -1, withscores=True) == [
        (nine.id.encode(), -9.0), (five.id.encode(), -5.0)]
    claimed = [client22.claim(queue, 30_000) for _ in range(3)]
    assert [j.id for j in claimed if j] == [nine.id, five.id, plain.id]


@pytest.mark.parametrize("priority", [MAX_PRIORITY + 1, 2**32, -1], ids=["max+1", "2**32", "negative"])
def test_an_out_of_range_priority_is_refused_and_writes_nothing(target22, raw22, queue, priority):
    with pytest.raises(echomq.InvalidArgumentError):
        target22.enqueue(b"x", priority=priority)
    with pytest.raises(echomq.InvalidArgumentError) as info:
        target22.enqueue_many([b"fine", (b"x", {"priority": priority})])
    assert "item 1: " in str(info.value)
    assert raw22.keys(f"emq:{{{queue}}}:*") == []


def test_a_priority_that_is_not_an_int_is_a_type_error(target22, raw22, queue):
    with pytest.raises(TypeError, match="a priority must be an int"):
        target22.enqueue(b"x", priority="high")
    assert raw22.keys(f"emq:{{{queue}}}:*") == []


def test_priority_on_a_2_1_0_client_is_unsupported_and_writes_nothing(target, raw, queue):
    with pytest.raises(echomq.UnsupportedError):
        target.enqueue(b"x", priority=5)
    with pytest.raises(echomq.UnsupportedError):
        target.enqueue_many([b"fine", (b"x", {"priority": 5})])
    assert nothing_written(raw, queue)
