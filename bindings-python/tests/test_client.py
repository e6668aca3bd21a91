"""The core scenarios through the blocking client, asserted on the wire."""

from __future__ import annotations

import builtins

import pytest

import echomq
from conftest import Keys, wait_lease_lapsed


def row(raw, key):  # type: ignore[no-untyped-def]
    return {k.decode(): v for k, v in raw.hgetall(key).items()}


def test_enqueue_writes_three_fields_and_a_score_zero_member(client, raw, queue, keys):
    e = client.enqueue(queue, b"hello\x00\xff")
    assert isinstance(e, echomq.Enqueued)
    assert e.duplicate is False
    assert e.id.startswith("JOB") and len(e.id) == 14
    assert echomq.is_valid_id(e.id)
    assert row(raw, keys.job(e.id)) == {
        "state": b"pending",
        "attempts": b"0",
        "payload": b"hello\x00\xff",
    }
    assert raw.zrange(keys.pending, 0, -1, withscores=True) == [(e.id.encode(), 0.0)]
    assert repr(e) == f"Enqueued(id='{e.id}', duplicate=False)"


def test_payload_types_round_trip_as_bytes(client, queue):
    sent = [b"raw\x00", "héllo ✓", bytearray(b"ba"), memoryview(b"mv")]
    ids = [client.enqueue(queue, p).id for p in sent]
    got = {}
    for _ in sent:
        job = client.claim(queue, 10_000)
        assert job is not None
        assert isinstance(job.payload, bytes)
        got[job.id] = job.payload
    assert [got[i] for i in ids] == [b"raw\x00", "héllo ✓".encode(), b"ba", b"mv"]


def test_duplicate_enqueue_leaves_the_row_untouched(client, raw, queue, keys):
    id = echomq.mint_job_id()
    assert client.enqueue(queue, "first", id=id).duplicate is False
    again = client.enqueue(queue, "second", id=id)
    assert again.duplicate is True and again.id == id
    assert raw.hget(keys.job(id), "payload") == b"first"
    assert raw.zcard(keys.pending) == 1


def test_foreign_namespace_is_refused_with_kind_error(client, raw, queue, keys):
    with pytest.raises(echomq.KindError) as info:
        client.enqueue(queue, b"x", id="ORD0NgWEfAEJfs")
    assert info.value.code == "EMQKIND"
    assert isinstance(info.value, echomq.EchoMQError)
    assert not raw.exists(keys.job("ORD0NgWEfAEJfs"))
    assert not raw.exists(keys.pending)


def test_claim_and_complete(client, raw, queue, keys):
    e = client.enqueue(queue, b"job")
    before = int(raw.time()[0]) * 1000
    job = client.claim(queue, 10_000)
    assert isinstance(job, echomq.Job)
    assert (job.id, job.payload, job.token) == (e.id, b"job", 1)
    assert repr(job) == f"Job(id='{e.id}', token=1, attempts=1, payload=b'job')"
    r = row(raw, keys.job(e.id))
    assert r["state"] == b"active" and r["attempts"] == b"1"
    deadline = raw.zscore(keys.active, e.id)
    assert deadline is not None and before + 9_000 <= deadline <= before + 12_000
    assert raw.zcard(keys.pending) == 0
    assert client.claim(queue, 10_000) is None

    assert client.complete(queue, job.id, job.token) is None
    assert raw.exists(keys.job(e.id)) == 0
    for k in (keys.pending, keys.active, keys.schedule, keys.dead):
        assert raw.zcard(k) == 0
    assert raw.hget(keys.completed, "count") == b"1"
    assert client.counts(queue).completed == 1
    with pytest.raises(echomq.JobGoneError) as gone:
        client.complete(queue, job.id, job.token)
    assert gone.value.code == "EMQ_GONE"


def test_counts(client, queue):
    for i in range(3):
        client.enqueue(queue, str(i))
    client.claim(queue, 10_000)
    client.enqueue(queue, b"later", delay_ms=60_000)
    c = client.counts(queue)
    assert (c.pending, c.active, c.scheduled, c.dead, c.completed, c.failed) == (2, 1, 1, 0, 0, 0)
    assert repr(c) == "Counts(pending=2, active=1, scheduled=1, dead=0, completed=0, failed=0)"


def test_stale_token_is_refused(client, raw, queue, keys):
    e = client.enqueue(queue, b"job")
    job = client.claim(queue, 10_000)
    assert job is not None
    with pytest.raises(echomq.StaleTokenError) as info:
        client.complete(queue, job.id, 7)
    assert info.value.code == "EMQSTALE"
    assert raw.hget(keys.job(e.id), "state") == b"active"
    with pytest.raises(echomq.StaleTokenError):
        client.retry(queue, job.id, 9, 0, 5, "nope")
    with pytest.raises(echomq.StaleTokenError):
        client.extend(queue, job.id, 9, 1000)
    client.complete(queue, job.id, job.token)


def test_retry_promote_claim_mints_token_two(client, raw, queue, keys):
    e = client.enqueue(queue, b"job")
    job = client.claim(queue, 10_000)
    assert job is not None
    assert client.retry(queue, job.id, job.token, 60_000, 5, "boom") == "scheduled"
    r = row(raw, keys.job(e.id))
    assert r["state"] == b"scheduled" and r["last_error"] == b"boom"
    assert raw.zrange(keys.schedule, 0, -1) == [e.id.encode()]
    assert raw.zcard(keys.active) == 0
    # Not yet due (a minute away: no timing window to lose).
    assert client.promote(queue) == 0
    # Make it due by moving its run-at into the past, rather than sleeping.
    assert raw.zadd(keys.schedule, {e.id: 0}, xx=True, ch=True) == 1
    assert client.promote(queue, 100) == 1
    assert raw.zrange(keys.pending, 0, -1) == [e.id.encode()]
    again = client.claim(queue, 10_000)
    assert again is not None and again.token == 2
    with pytest.raises(echomq.StaleTokenError):
        client.complete(queue, e.id, 1)
    client.complete(queue, e.id, 2)


def test_dead_letter_with_last_error_then_requeue(client, raw, queue, keys):
    e = client.enqueue(queue, b"job")
    job = client.claim(queue, 10_000)
    assert job is not None
    assert client.retry(queue, job.id, job.token, 0, 1, "fatal: no such user") == "dead"
    r = row(raw, keys.job(e.id))
    assert r["state"] == b"dead" and r["last_error"] == b"fatal: no such user"
    assert raw.zscore(keys.dead, e.id) == 0.0
    assert raw.hget(keys.failed, "count") == b"1"
    assert client.browse(queue, "dead", newest_first=True) == [e.id]
    info = client.job(queue, e.id)
    assert info is not None
    assert (info.id, info.state, info.attempts, info.payload, info.last_error) == (
        e.id, "dead", 1, b"job", "fatal: no such user")
    assert "last_error='fatal: no such user'" in repr(info)

    client.requeue_dead(queue, e.id)
    r = row(raw, keys.job(e.id))
    # A requeued job starts afresh: attempts reset (the 2.1.0 claim caps them).
    assert r["state"] == b"pending" and r["attempts"] == b"0" and "last_error" not in r
    with pytest.raises(echomq.NotDeadError) as nd:
        client.requeue_dead(queue, e.id)
    assert nd.value.code == "EMQ_NOT_DEAD"
    job2 = client.claim(queue, 1000)
    assert job2 is not None and job2.token == 1


def test_reap_and_lease_lost(client, raw, queue, keys):
    e = client.enqueue(queue, b"job")
    job = client.claim(queue, 30)
    assert job is not None
    wait_lease_lapsed(raw, keys.active, e.id)
    assert client.reap(queue) == 1
    r = row(raw, keys.job(e.id))
    assert r["state"] == b"pending" and r["attempts"] == b"1"
    with pytest.raises(echomq.LeaseLostError) as lost:
        client.extend(queue, job.id, job.token, 10_000)
    assert lost.value.code == "EMQ_LEASE_LOST"
    assert raw.zcard(keys.active) == 0
    second = client.claim(queue, 10_000)
    assert second is not None and second.token == 2
    with pytest.raises(echomq.StaleTokenError):
        client.complete(queue, job.id, job.token)
    # extend re-scores the lease deadline (the score in active) to
    # server-now + lease: from a 10 s lease to a 10 min one moves it by more
    # than 9 min, however slowly the test runs.
    before = raw.zscore(keys.active, second.id)
    client.extend(queue, second.id, second.token, 600_000)
    assert raw.zscore(keys.active, second.id) >= before + 590_000
    client.complete(queue, second.id, second.token)


def test_many_verbs_give_one_verdict_per_item(client, raw, queue, keys):
    answers = client.enqueue_many(queue, [b"a", "b", bytearray(b"c")])
    assert [type(a) for a in answers] == [echomq.Enqueued] * 3
    assert raw.zcard(keys.pending) == 3
    jobs = client.claim_many(queue, 10, 10_000)
    assert len(jobs) == 3 and all(j.token == 1 for j in jobs)
    before = [raw.zscore(keys.active, j.id) for j in jobs]
    ext = client.extend_many(queue, jobs, 600_000)
    assert ext == [None, None, None]
    after = [raw.zscore(keys.active, j.id) for j in jobs]
    assert all(a >= b + 590_000 for a, b in zip(after, before)), (before, after)
    verdicts = client.complete_many(queue, [jobs[0], (jobs[1].id, 99), (jobs[2].id, jobs[2].token)])
    assert verdicts[0] is None and verdicts[2] is None
    assert isinstance(verdicts[1], echomq.StaleTokenError)
    assert raw.zrange(keys.active, 0, -1) == [jobs[1].id.encode()]


def test_schedule_pause_browse_remove(client, raw, queue, keys):
    now = int(raw.time()[0]) * 1000
    at = client.enqueue(queue, b"at", run_at_ms=now + 60_000)
    assert raw.zscore(keys.schedule, at.id) == now + 60_000
    assert raw.hget(keys.job(at.id), "state") == b"scheduled"
    later = client.enqueue(queue, b"in", delay_ms=30_000)
    assert client.browse(queue, "schedule") == [later.id, at.id]
    assert client.browse(queue, "schedule", range=(now, now + 45_000)) == [later.id]

    p = client.enqueue(queue, b"p")
    client.pause(queue)
    assert client.is_paused(queue) is True
    assert raw.hget(keys.meta, "paused") is not None
    assert client.claim(queue, 1000) is None
    client.resume(queue)
    assert client.is_paused(queue) is False
    job = client.claim(queue, 10_000)
    assert job is not None and job.id == p.id
    with pytest.raises(echomq.JobActiveError) as active:
        client.remove(queue, p.id)
    assert active.value.code == "EMQ_JOB_ACTIVE"
    client.remove(queue, at.id)
    assert not raw.exists(keys.job(at.id))
    assert raw.zscore(keys.schedule, at.id) is None
    with pytest.raises(echomq.JobGoneError):
        client.remove(queue, at.id)
    assert client.job(queue, at.id) is None


def test_browse_pending_orders_by_mint_time(client, queue):
    ids = [a.id for a in client.enqueue_many(queue, [str(i) for i in range(20)])]  # type: ignore[union-attr]
    assert client.browse(queue, "pending", limit=100) == sorted(ids)
    assert client.browse(queue, "pending", newest_first=True, limit=5) == sorted(ids, reverse=True)[:5]
    with pytest.raises(echomq.InvalidArgumentError):
        client.browse(queue, "nowhere")  # type: ignore[arg-type]


def test_version_fence_mismatch_carries_found(redis_url, raw):
    url = redis_url + "3"
    raw.execute_command("SELECT", 3)
    raw.set("{emq}:version", "echomq:9.9.9")
    try:
        with pytest.raises(echomq.VersionFenceError) as info:
            echomq.connect(url)
        assert info.value.found == "echomq:9.9.9"
        assert info.value.code == "EMQ_VERSION_FENCE"
        assert raw.get("{emq}:version") == b"echomq:9.9.9"
    finally:
        raw.flushdb()


def test_fresh_keyspace_is_fenced(redis_url, raw):
    raw.execute_command("SELECT", 4)
    raw.flushdb()
    try:
        c = echomq.connect(redis_url + "4")
        assert raw.get("{emq}:version") == echomq.PROTOCOL_VERSION.encode()
        assert raw.hget("{emq}:bundle", "bundle") is not None
        assert c.bundle_mismatches() == []
        c.close()
    finally:
        raw.flushdb()


def test_connection_refused_is_typed():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(echomq.ConnectionError) as info:
        echomq.connect(f"redis://127.0.0.1:{port}/", connect_timeout_ms=2000)
    assert isinstance(info.value, builtins.ConnectionError)
    assert isinstance(info.value, echomq.EchoMQError)
    assert info.value.code == "EMQ_CONNECTION"


def test_bad_url_is_invalid_argument():
    with pytest.raises(echomq.InvalidArgumentError) as info:
        echomq.connect("http://nowhere")
    assert isinstance(info.value, ValueError)


def test_close_then_calls_raise_closed(redis_url, queue):
    c = echomq.connect(redis_url)
    c.enqueue(queue, b"x")
    c.close()
    with pytest.raises(echomq.ClosedError) as info:
        c.enqueue(queue, b"y")
    assert info.value.code == "EMQ_CLOSED"
    with echomq.connect(redis_url) as c2:
        assert c2.counts(queue).pending == 1
    with pytest.raises(echomq.ClosedError):
        c2.counts(queue)


def test_connect_options(redis_url, raw, queue):
    c = echomq.connect(redis_url, node_id=7, client_name="opt-test", response_timeout_ms=0,
                       connect_timeout_ms=3000, max_payload=4, strict_bundle=True)
    assert c.node_id == 7
    e = c.enqueue(queue, b"1234")
    assert echomq.parse_id(e.id).snowflake >> 12 & 1023 == 7
    names = [cl.get("name") for cl in raw.client_list()]
    assert "opt-test" in names
    with pytest.raises(echomq.InvalidArgumentError):
        c.enqueue(queue, b"12345")
    with pytest.raises(echomq.InvalidArgumentError):
        echomq.connect(redis_url, node_id=1024)
    with pytest.raises(TypeError):
        echomq.connect(redis_url, no_such_option=1)  # type: ignore[call-arg]
    c.close()


def test_pure_helpers():
    p = echomq.parse_id("USR0KHTOWnGLuC")
    assert (p.namespace, p.snowflake) == ("USR", 274_557_032_793_636_864)
    assert echomq.parse_id("ORD0NgWEfAEJfs").minted_at_ms == 1_780_512_970_164
    assert echomq.encode_id("USR", 274_557_032_793_636_864) == "USR0KHTOWnGLuC"
    with pytest.raises(echomq.InvalidIdError):
        echomq.parse_id("USRzzzzzzzzzzz")
    assert echomq.is_valid_id("USR0KHTOWnGLuC") and not echomq.is_valid_id("nope")
    assert not echomq.is_valid_id(5)
    minted = echomq.mint_job_id()
    assert echomq.mint_job_id() > minted
    assert echomq.parse_id(echomq.mint_job_id(5)).snowflake >> 12 & 1023 == 5
    t = echomq.parse_id(minted).minted_at_ms
    assert echomq.lex_bound(t) <= minted < echomq.lex_bound(t + 1)
    assert echomq.is_valid_queue("a.b-c_1") and not echomq.is_valid_queue("emq")
    assert not echomq.is_valid_queue("a b") and not echomq.is_valid_queue("x" * 129)
    assert echomq.queue_key("q", "pending") == "emq:{q}:pending"
    assert echomq.job_key("q", "USR0KHTOWnGLuC") == "emq:{q}:job:USR0KHTOWnGLuC"
    with pytest.raises(echomq.InvalidQueueError):
        echomq.queue_key("emq", "pending")
    with pytest.raises(echomq.InvalidArgumentError):
        echomq.queue_key("q", "nope")  # type: ignore[arg-type]
    k = echomq.classify("emq:{orders}:job:JOB0SU7JgWjgW0")
    assert (k.class_, k.queue, k.id) == ("job", "orders", "JOB0SU7JgWjgW0")
    k = echomq.classify(b"emq:{orders}:schedule")
    assert (k.class_, k.queue, k.key_type) == ("queue", "orders", "schedule")
    k = echomq.classify("emq:{orders}:metrics:failed")
    assert (k.class_, k.queue, k.key_type) == ("metric", "orders", "metrics:failed")
    assert echomq.classify("{emq}:version").member == "version"
    k = echomq.classify("{emq}:migration:orders")
    assert (k.class_, k.queue, k.member) == ("reserve", "orders", "migration:orders")
    assert echomq.classify("something").class_ == "unclassified"
    assert echomq.slot("123456789") == 0x31C3
    assert echomq.slot("emq:{q}:pending") == echomq.slot(b"{q}")
    assert echomq.protocol_version() == echomq.PROTOCOL_VERSION == "echomq:2.1.0"


def test_error_classes_follow_the_table():
    table = {
        echomq.KindError: "EMQKIND",
        echomq.StaleTokenError: "EMQSTALE",
        echomq.JobGoneError: "EMQ_GONE",
        echomq.LeaseLostError: "EMQ_LEASE_LOST",
        echomq.NotDeadError: "EMQ_NOT_DEAD",
        echomq.VersionFenceError: "EMQ_VERSION_FENCE",
        echomq.InvalidIdError: "EMQ_INVALID_ID",
        echomq.InvalidQueueError: "EMQ_INVALID_QUEUE",
        echomq.InvalidArgumentError: "EMQ_INVALID_ARGUMENT",
        echomq.ConnectionError: "EMQ_CONNECTION",
        echomq.TimeoutError: "EMQ_TIMEOUT",
        echomq.ProtocolError: "EMQ_PROTOCOL",
        echomq.ServerError: "EMQ_SERVER",
        echomq.JobActiveError: "EMQ_JOB_ACTIVE",
        echomq.BundleMismatchError: "EMQ_BUNDLE_MISMATCH",
        echomq.ClosedError: "EMQ_CLOSED",
        echomq.UnsupportedError: "EMQ_UNSUPPORTED",
        echomq.RateLimitedError: "EMQRATE",
        echomq.UnavailableError: "EMQ_UNAVAILABLE",
        echomq.NotDurableError: "EMQ_NOT_DURABLE",
    }
    for cls, code in table.items():
        assert issubclass(cls, echomq.EchoMQError)
        assert cls.code == code
        assert cls("m").code == code
    assert issubclass(echomq.InvalidArgumentError, ValueError)
    assert issubclass(echomq.ConnectionError, builtins.ConnectionError)
    assert issubclass(echomq.TimeoutError, builtins.TimeoutError)
    assert echomq.ProtocolError("m", word="EMQNEW").word == "EMQNEW"
    assert echomq.VersionFenceError("m", found="x").found == "x"
    import pickle

    e = pickle.loads(pickle.dumps(echomq.VersionFenceError("m", found="v")))
    assert type(e) is echomq.VersionFenceError and e.found == "v" and str(e) == "m"
