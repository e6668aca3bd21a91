"""Durable writes through Python (issue #15): a standalone server has no
replica, so `wait_replicas=1` answers NotDurableError carrying the job id,
after the write happened on the master."""

from __future__ import annotations

import pytest

import echomq


def test_not_durable_carries_the_id_and_the_job_exists(redis_url: str, queue: str) -> None:
    with echomq.connect(redis_url, wait_replicas=1, wait_timeout_ms=20) as client:
        with pytest.raises(echomq.NotDurableError) as info:
            client.enqueue(queue, b"unconfirmed")
        err = info.value
        assert err.code == "EMQ_NOT_DURABLE"
        assert err.id.startswith("JOB")
        job = client.job(queue, err.id)
        assert job is not None and job.payload == b"unconfirmed"


def test_unavailable_is_a_typed_retryable_class() -> None:
    assert issubclass(echomq.UnavailableError, echomq.EchoMQError)
    assert echomq.UnavailableError.code == "EMQ_UNAVAILABLE"
