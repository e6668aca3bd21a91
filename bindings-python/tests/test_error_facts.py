"""Issue #33: an error's facts are attributes set from the native error (the
core declares which kind carries which), the same numbers and ids the other
runtimes report for the same refusal. Issue #39 item 7: -1 in any unsigned
integer parameter of any public callable is InvalidArgumentError, never the
builtin OverflowError."""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest

import echomq
from echomq import _errors, _native


# ---- the facts: one table in the core, attributes here -------------------------


def test_every_class_carries_exactly_the_facts_its_kind_declares():
    table = _native.error_kinds()
    assert len(table) == len(set(code for code, _, _ in table))
    for code, status, facts in table:
        cls = _errors._BY_CODE[code]
        assert cls.code == code
        assert list(cls.facts) == facts, code
        for name in facts:
            assert name in _native.error_facts()
            assert hasattr(cls, name), f"{cls.__name__}.{name} has no default"
    classes = {c for c in vars(_errors).values()
               if isinstance(c, type) and issubclass(c, echomq.EchoMQError) and "code" in vars(c)
               and c is not echomq.EchoMQError}
    assert {c.code for c in classes} == {code for code, _, _ in table}


def test_rate_limit_wait_and_job_ids_are_attributes(client, raw, queue, keys):
    # The same scenario as the C, C++ and Node suites: the wait lies between the
    # limiter's PTTL read just before and just after the refused claim.
    a = client.enqueue(queue, b"a").id
    b = client.enqueue(queue, b"b").id
    client.set_rate_limit(queue, 1, 600_000)
    job = client.claim(queue, 60_000)
    assert job is not None and job.id == a
    before = raw.pttl(f"emq:{{{queue}}}:limiter")
    with pytest.raises(echomq.RateLimitedError) as rate:
        client.claim(queue, 60_000)
    after = raw.pttl(f"emq:{{{queue}}}:limiter")
    assert 500_000 < after <= rate.value.retry_after_ms <= before
    assert isinstance(rate.value.retry_after_ms, int)
    assert "detail" not in vars(rate.value)
    client.set_rate_limit(queue, 0, 0)

    assert client.retry(queue, a, job.token, 0, 1, "boom") == "dead"
    assert raw.hget(keys.job(a), "state") == b"dead"
    with pytest.raises(echomq.JobDeadError) as dead:
        client.wait_for_result(queue, a, 20_000)
    assert (dead.value.job_id, dead.value.last_error) == (a, "boom")

    client.remove(queue, b)
    assert not raw.exists(keys.job(b))
    with pytest.raises(echomq.JobGoneError) as gone:
        client.wait_for_result(queue, b, 20_000)
    assert gone.value.job_id == b
    # A wire refusal (`EMQSTALE job gone`) names the job too.
    with pytest.raises(echomq.JobGoneError) as refused:
        client.update_progress(queue, b, 1, 1)
    assert refused.value.job_id == b


def test_async_client_errors_carry_the_same_facts(redis_url, raw, queue, keys):
    async def main() -> str:
        c = await echomq.connect_async(redis_url)
        try:
            a = (await c.enqueue(queue, b"a")).id
            await c.set_concurrency(queue, 1)
            job = await c.claim(queue, 60_000)
            assert job is not None
            with pytest.raises(echomq.RateLimitedError) as rate:
                await c.claim(queue, 60_000)
            assert rate.value.retry_after_ms == 0  # at the ceiling: when a slot frees
            await c.set_concurrency(queue, 0)
            await c.retry(queue, a, job.token, 0, 1, "boom")
            with pytest.raises(echomq.JobDeadError) as dead:
                await c.wait_for_result(queue, a, 20_000)
            assert (dead.value.job_id, dead.value.last_error) == (a, "boom")
            return a
        finally:
            c.close()

    a = asyncio.run(main())
    assert raw.hget(keys.job(a), "state") == b"dead"


def test_facts_survive_pickling_and_user_construction():
    import pickle

    e = echomq.RateLimitedError("m", retry_after_ms=5)
    assert pickle.loads(pickle.dumps(e)).retry_after_ms == 5
    d = echomq.JobDeadError("m", job_id="JOB00000000001", last_error=None)
    assert (d.job_id, d.last_error) == ("JOB00000000001", None)
    assert echomq.NotDurableError("m", job_id="x").id == "x"
    with pytest.raises(TypeError):
        echomq.KindError("m", job_id="x")


# ---- issue #39 item 7: -1 is InvalidArgumentError everywhere --------------------

INTLIKE = re.compile(r"\b(int|_?Duration|_?Time)\b")
# Parameters documented to take negative values: LRANGE indexes.
NEGATIVE_OK = {("logs", "start"), ("logs", "end")}


def _stub_params() -> Dict[Tuple[str, str], List[Tuple[str, str, bool]]]:
    """(owner, function) → [(param, annotation, keyword_only)] from _native.pyi:
    the native callables carry no annotations of their own."""
    stub = Path(_native.__file__).with_name("_native.pyi")
    if not stub.exists():
        stub = Path(echomq.__file__).with_name("_native.pyi")
    tree = ast.parse(stub.read_text())
    out: Dict[Tuple[str, str], List[Tuple[str, str, bool]]] = {}

    def add(owner: str, fn: ast.AST) -> None:
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = fn.args
            out[(owner, fn.name)] = [
                (p.arg, ast.unparse(p.annotation) if p.annotation else "", kw)
                for ps, kw in ((a.posonlyargs + a.args, False), (a.kwonlyargs, True))
                for p in ps
                if p.arg != "self"
            ]

    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for fn in node.body:
                add(node.name, fn)
        else:
            add("", node)
    return out


def _py_params(fn: Callable[..., Any]) -> List[Tuple[str, str, bool]]:
    sig = inspect.signature(fn)
    return [
        (p.name, str(p.annotation), p.kind == p.KEYWORD_ONLY)
        for p in sig.parameters.values()
        if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def _known(ctx: Dict[str, Any]) -> Dict[str, Any]:
    """A valid value for each parameter name the callables use."""
    return {
        "queue": ctx["queue"], "id": ctx["id"], "payload": b"x", "items": [b"x"],
        "jobs": [(ctx["id"], 1)], "name": "n", "line": "l", "error": "e", "set": "pending",
        "value": 1, "handler": lambda job: None, "client": ctx["client"], "text": "x",
        "namespace": "JOB", "key": "k", "url": ctx["url"], "queues": [ctx["queue"]],
        "names": ["n"], "type": "pending", "handle_signals": False,
    }


def _targets(fn_name: str, params: List[Tuple[str, str, bool]]) -> List[str]:
    """The unsigned integer parameters (and `jobs`, whose tokens are)."""
    return [n for n, ann, _ in params
            if (INTLIKE.search(ann) or n == "jobs") and "Tuple[" not in ann
            and (fn_name, n) not in NEGATIVE_OK]


def _call_with(fn: Callable[..., Any], params: List[Tuple[str, str, bool]], target: str,
               ctx: Dict[str, Any]) -> Any:
    """`fn` with -1 in `target` and valid values elsewhere (optional ones left out)."""
    known = _known(ctx)
    kwargs: Dict[str, Any] = {}
    for n, ann, _ in params:
        if n == target:
            kwargs[n] = [(ctx["id"], -1)] if n == "jobs" else -1
        elif n in known:
            kwargs[n] = known[n]
        elif "Optional" in ann:
            continue
        elif INTLIKE.search(ann):
            kwargs[n] = 1
        elif "bool" in ann:
            kwargs[n] = False
        else:
            kwargs[n] = "x"
    return fn(**kwargs)


def _callables(obj: Any, label: str, stub_owner: str,
               stubs: Dict[Tuple[str, str], List[Tuple[str, str, bool]]]) -> List[Any]:
    """(label, bound callable, params) for every public method of `obj`."""
    out = []
    for fn_name in dir(obj):
        fn = getattr(obj, fn_name, None)
        if fn_name.startswith("_") or not callable(fn) or isinstance(fn, type):
            continue
        params = stubs.get((stub_owner, fn_name))
        if params is None:
            try:
                params = _py_params(fn)
            except (TypeError, ValueError):
                continue
        out.append((f"{label}.{fn_name}", fn_name, fn, params))
    return out


async def _outcome(call: Callable[[], Any]) -> str:
    """'ok' when -1 was refused with InvalidArgumentError, else what happened."""
    try:
        out = call()
        if inspect.isawaitable(out):
            await out
        elif hasattr(out, "close"):
            out.close()
        return "no error"
    except echomq.InvalidArgumentError:
        return "ok"
    except BaseException as e:  # noqa: BLE001 - any other outcome is the failure
        return f"{type(e).__name__}: {e}"


def test_minus_one_in_every_unsigned_parameter_is_invalid_argument(client, redis_url, queue):
    stubs = _stub_params()
    ctx: Dict[str, Any] = {"queue": queue, "id": echomq.mint_job_id(), "client": client,
                           "url": redis_url}
    client.enqueue(queue, b"held")
    job = client.claim(queue, 60_000)
    assert job is not None
    swept: List[str] = []
    failures: List[str] = []

    async def main() -> None:
        aclient = await echomq.connect_async(redis_url)
        try:
            plan = [(f"echomq.{n}", n, getattr(echomq, n), p)
                    for (owner, n), p in stubs.items() if owner == "" and hasattr(echomq, n)]
            plan.append(("echomq.Worker", "Worker", echomq.Worker, _py_params(echomq.Worker)))
            plan += _callables(client, "Client", "Client", stubs)
            plan += _callables(client.queue(queue), "Queue", "NativeQueue", stubs)
            plan += _callables(job, "Job", "Job", stubs)
            plan += _callables(aclient, "AsyncClient", "NativeAsyncClient", stubs)
            plan += _callables(aclient.queue(queue), "AsyncQueue", "NativeAsyncQueue", stubs)
            for label, fn_name, fn, params in plan:
                c = aclient if label.startswith("Async") else client
                for target in _targets(fn_name, params):
                    name = f"{label}({target}=-1)"
                    outcome = await _outcome(
                        lambda: _call_with(fn, params, target, dict(ctx, client=c)))
                    if outcome == "ok":
                        swept.append(name)
                    else:
                        failures.append(f"{name}: {outcome}")
        finally:
            aclient.close()

    asyncio.run(main())
    client.complete(queue, job.id, job.token)
    assert not failures, "\n".join(failures)
    # The eight calls issue #39 named, among the others.
    for named in ("Client.log(max_lines=-1)", "Client.fire_repeats(limit=-1)",
                  "Client.update_progress(token=-1)", "Client.upsert_repeat(limit=-1)",
                  "Client.upsert_repeat(every_ms=-1)", "Client.upsert_repeat(start_at=-1)",
                  "echomq.lex_bound(unix_ms=-1)", "echomq.encode_id(snowflake=-1)",
                  "AsyncClient.log(max_lines=-1)", "Queue.claim(lease_ms=-1)",
                  "Job.log(max_lines=-1)", "echomq.Worker(concurrency=-1)",
                  "AsyncQueue.claim(lease_ms=-1)"):
        assert named in swept, f"{named} was not swept ({len(swept)} were)"
