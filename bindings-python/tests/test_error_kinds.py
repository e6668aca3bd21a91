"""Error kinds provoked for real against a real server (issue 41), not only
read from the mapping table: a key of the wrong type under the queue's name
(ServerError), a foreign script bundle with ``strict_bundle`` (BundleMismatchError),
a malformed job row (ProtocolError) and a server that is gone (UnavailableError)."""

from __future__ import annotations

import redis
import pytest

import echomq


def test_a_key_of_the_wrong_type_is_a_server_error(client, raw, queue, keys) -> None:  # type: ignore[no-untyped-def]
    # Someone else's string where the queue's pending ZSET lives: the server's
    # own WRONGTYPE refusal, before anything is written (decision W.1): no
    # job row is left behind.
    raw.set(keys.pending, "not a zset")
    with pytest.raises(echomq.ServerError) as caught:
        client.enqueue(queue, b"x")
    assert caught.value.code == "EMQ_SERVER"
    assert raw.get(keys.pending) == b"not a zset"
    assert list(raw.scan_iter(f"emq:{{{queue}}}:job:*")) == []


def test_strict_bundle_refuses_a_foreign_bundle_at_connect(own_server) -> None:  # type: ignore[no-untyped-def]
    url, _proc = own_server
    r = redis.Redis.from_url(url)
    # Another runtime recorded different scripts under the same version.
    r.hset("{emq}:bundle", "bundle", "0000")
    with pytest.raises(echomq.BundleMismatchError) as caught:
        echomq.connect(url, strict_bundle=True)
    assert caught.value.code == "EMQ_BUNDLE_MISMATCH"
    # Without the option the same server is only a warning.
    lenient = echomq.connect(url)
    assert [m.field for m in lenient.bundle_mismatches()] == ["bundle"]
    lenient.close()
    assert r.hget("{emq}:bundle", "bundle") == b"0000"


def test_a_malformed_row_is_a_protocol_error(client, raw, queue, keys) -> None:  # type: ignore[no-untyped-def]
    e = client.enqueue(queue, b"x")
    raw.hset(keys.job(e.id), "attempts", "two")
    with pytest.raises(echomq.ProtocolError) as caught:
        client.job(queue, e.id)
    assert caught.value.code == "EMQ_PROTOCOL"


def test_a_server_that_is_gone_is_unavailable(own_server, queue) -> None:  # type: ignore[no-untyped-def]
    url, proc = own_server
    c = echomq.connect(url, connect_timeout_ms=300, response_timeout_ms=500)
    c.enqueue(queue, b"x")
    proc.kill()
    proc.wait()
    # The first call may be the one that learns the socket is gone (a
    # connection error: it may have been sent); after that nothing can be
    # sent: reconnects are retried, then answered as Unavailable.
    with pytest.raises((echomq.ConnectionError, echomq.UnavailableError)):
        c.counts(queue)
    with pytest.raises(echomq.UnavailableError) as caught:
        c.counts(queue)
    assert caught.value.code == "EMQ_UNAVAILABLE"
    c.close()
