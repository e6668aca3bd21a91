"""Repeatable jobs (issue #13 §6) from Python: the scenario every binding runs
(core/tests/repeat.rs is the full one) — two pumps racing on one repeat make
exactly one job per slot, cron in a zone, bad input refused with nothing
written, and wire 2.0.0 refusing the verbs before any I/O."""

from __future__ import annotations

import asyncio

import pytest

import echomq


def test_two_pumps_racing_make_one_job_per_slot(redis_url, raw, queue, keys):
    async def scenario() -> None:
        a = await echomq.connect_async(redis_url)
        b = await echomq.connect_async(redis_url)
        r = await a.upsert_repeat(queue, "tick", every_ms=50, payload=b"r", limit=5)
        assert (r.name, r.every_ms, r.cron, r.limit, r.count) == ("tick", 50, None, 5, 0)
        record = f"emq:{{{queue}}}:repeat:tick"
        assert raw.hget(record, "every_ms") == b"50"
        assert raw.zscore(f"emq:{{{queue}}}:repeat", "tick") == r.next_run_ms
        fired = 0
        for _ in range(3000):  # bounded: ~5 slots of 50 ms
            got = await asyncio.gather(a.fire_repeats(queue), b.fire_repeats(queue, 10))
            fired += sum(got)
            if not raw.exists(record):
                break
            await asyncio.sleep(0.002)
        assert fired == 5
        ids = [i.decode() for i in raw.zrange(keys.pending, 0, -1)]
        assert len(ids) == 5
        slots = {echomq.parse_id(i).minted_at_ms for i in ids}
        assert len(slots) == 5 and all((s - r.next_run_ms) % 50 == 0 for s in slots)
        assert raw.hget(keys.job(ids[0]), "payload") == b"r"
        assert await a.list_repeats(queue) == []
        a.close()
        b.close()

    asyncio.run(scenario())


def test_cron_in_a_zone_list_and_remove(client, raw, queue):
    r = client.upsert_repeat(queue, "report", cron="*/5 * * * *", tz="Europe/Berlin", payload="{}")
    assert r.next_run_ms % 300_000 == 0 and r.tz == "Europe/Berlin" and r.every_ms is None
    assert raw.hget(f"emq:{{{queue}}}:repeat:report", "cron") == b"*/5 * * * *"
    # Upserting the same spec keeps the slot.
    again = client.upsert_repeat(queue, "report", cron="*/5 * * * *", tz="Europe/Berlin", payload="{}")
    assert again.next_run_ms == r.next_run_ms
    utc = client.upsert_repeat(queue, "nine", cron="0 9 * * 1-5")
    assert utc.tz == "UTC" and utc.payload == b""
    listed = client.list_repeats(queue)
    assert sorted(x.name for x in listed) == ["nine", "report"]
    assert all(isinstance(x, echomq.Repeat) for x in listed)
    assert client.fire_repeats(queue) == 0
    assert client.remove_repeat(queue, "report") is True
    assert client.remove_repeat(queue, "report") is False
    assert raw.exists(f"emq:{{{queue}}}:repeat:report") == 0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"cron": "not a cron"},
        {"cron": "* * * * *", "tz": "Mars/Olympus"},
        {"cron": "* * * * *", "every_ms": 1000},
        {},
        {"every_ms": 1000, "tz": "UTC"},
        {"every_ms": 0},
        {"every_ms": 1000, "limit": 0},
    ],
)
def test_bad_input_is_invalid_argument_and_writes_nothing(client, raw, queue, kwargs):
    with pytest.raises(echomq.InvalidArgumentError):
        client.upsert_repeat(queue, "x", **kwargs)
    with pytest.raises(echomq.InvalidArgumentError):
        client.upsert_repeat(queue, "bad name", every_ms=1000)
    assert raw.keys(f"emq:{{{queue}}}:*") == []


def test_wire_2_0_0_refuses_the_repeat_verbs(redis_url, raw):
    raw.execute_command("SELECT", 9)
    raw.flushdb()
    try:
        old = echomq.connect(redis_url + "9", wire_version="echomq:2.0.0")
        for call in (
            lambda: old.upsert_repeat("q", "r", every_ms=1000),
            lambda: old.remove_repeat("q", "r"),
            lambda: old.list_repeats("q"),
            lambda: old.fire_repeats("q"),
        ):
            with pytest.raises(echomq.UnsupportedError):
                call()
        assert raw.exists("emq:{q}:repeat") == 0
        old.close()
    finally:
        raw.flushdb()
