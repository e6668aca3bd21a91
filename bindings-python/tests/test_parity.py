"""API parity: every verb, helper, worker method and error class listed in
docs/API.md exists in the Python package (the table lines start with "| `")."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path
from typing import Dict, List, Set

import echomq
from echomq import _native

API = Path(__file__).resolve().parents[2] / "docs" / "API.md"


def tables() -> Dict[str, List[List[str]]]:
    """Section title → rows (cells) of the tables whose rows start with "| `"."""
    out: Dict[str, List[List[str]]] = {}
    section = ""
    in_options = False  # an option table lists options, not verbs (see option_rows)
    for line in API.read_text().splitlines():
        if line.startswith("| option | default | range | meaning |"):
            in_options = True
            continue
        if not line.startswith("|"):
            in_options = False
        if in_options:
            continue
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("| `") or (line.startswith("| ") and section == "Errors"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            out.setdefault(section, []).append(cells)
    return out


def name_of(cell: str) -> str:
    m = re.match(r"`(\w+)", cell)
    assert m, cell
    return m.group(1)


def test_the_api_doc_is_found_and_parsed():
    t = tables()
    assert len(t["Client verbs"]) >= 25
    assert len(t["Pure helpers (no server)"]) >= 11
    assert len(t["Worker"]) >= 4


# Issue #33: one enqueue with options; these verbs are gone (pre-1.0). Until
# docs/API.md drops their rows, the rows are checked to be absent instead.
GONE = {"enqueue_with_id", "enqueue_at", "enqueue_in", "enqueue_with"}
STUB = Path(echomq.__file__).with_name("_native.pyi")
# The stub's class of each runtime class (Python subclasses add their own).
CLASSES = {
    "Client": (echomq.Client, echomq.Client),
    "NativeAsyncClient": (_native.NativeAsyncClient, echomq.AsyncClient),
    "NativeQueue": (_native.NativeQueue, echomq.Queue),
    "NativeAsyncQueue": (_native.NativeAsyncQueue, echomq.AsyncQueue),
}


def stub_methods(cls: str) -> Dict[str, ast.AST]:
    """The public methods and properties of class `cls` in _native.pyi."""
    tree = ast.parse(STUB.read_text())
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    return {
        f.name: f
        for f in node.body
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and not f.name.startswith("_")
    }


def public(cls: type) -> Set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


def test_client_verbs_exist_on_both_clients():
    names = [name_of(row[0]) for row in tables()["Client verbs"]]
    assert "enqueue" in names and "close" in names
    for name in names:
        if name == "connect":
            assert callable(echomq.connect)
            assert inspect.iscoroutinefunction(echomq.connect_async)
            continue
        if name in GONE:
            assert not hasattr(echomq.Client, name) and not hasattr(echomq.AsyncClient, name)
            continue
        assert callable(getattr(echomq.Client, name, None)), f"Client.{name}"
        verb = getattr(echomq.AsyncClient, name, None)
        assert callable(verb), f"AsyncClient.{name}"
    for cls in (echomq.Client, echomq.AsyncClient, echomq.Queue, echomq.AsyncQueue):
        assert not (public(cls) & GONE), cls


def test_queue_handle_verbs_exist_on_both_handles():
    rows = tables()["Queue handles"]
    names = [name_of(row[0]) for row in rows]
    assert names[0] == "queue"
    assert callable(echomq.Client.queue) and callable(echomq.AsyncClient.queue)
    for name in names[1:]:
        assert callable(getattr(echomq.Queue, name, None)), f"Queue.{name}"
        assert callable(getattr(echomq.AsyncQueue, name, None)), f"AsyncQueue.{name}"
    # A handle carries every per-queue verb of the table (src/surface.rs), as
    # the core's does: each is in API.md's handle table, or at least among
    # its client verbs (the handle table may lag behind).
    client_verbs = {name_of(row[0]) for row in tables()["Client verbs"]}
    for cls in (echomq.Queue, echomq.AsyncQueue):
        extra = public(cls) - {"client", "name"} - set(names[1:])
        assert extra <= client_verbs, (cls, extra - client_verbs)


def test_the_stub_and_the_runtime_classes_agree():
    """Every public method or property of Client, AsyncClient, Queue and
    AsyncQueue is in _native.pyi (or defined in Python, which mypy reads),
    and every one the stub declares exists at runtime."""
    for stub_cls, (native, python) in CLASSES.items():
        declared = set(stub_methods(stub_cls))
        assert declared == public(native), (stub_cls, declared ^ public(native))
        own = {n for n in vars(python) if not n.startswith("_")} if python is not native else set()
        assert public(python) == declared | own, (python, (declared | own) ^ public(python))


def test_the_verb_table_is_the_stubs():
    """src/surface.rs's rows: the queue verbs on all four classes, the client
    verbs on the clients only; `async def` in the stub on the asyncio ones,
    with the same parameters as the runtime methods."""
    queue_verbs, client_verbs = _native.surface_verbs()
    assert "enqueue" in queue_verbs and "enqueue_many" in queue_verbs
    assert not (set(queue_verbs) & GONE)
    for stub_cls, (native, _python) in CLASSES.items():
        is_async = "Async" in stub_cls
        on_client = "Queue" not in stub_cls
        methods = stub_methods(stub_cls)
        expected = set(queue_verbs) | (set(client_verbs) if on_client else set())
        assert expected <= set(methods), (stub_cls, expected - set(methods))
        if not on_client:
            assert not (set(client_verbs) & set(methods)), stub_cls
        for verb in expected:
            node = methods[verb]
            assert isinstance(node, ast.AsyncFunctionDef) == is_async, f"{stub_cls}.{verb}"
            stub_params = [
                (a.arg, kind)
                for args, kind in ((node.args.args, "positional"), (node.args.kwonlyargs, "keyword"))
                for a in args
                if a.arg != "self"
            ]
            runtime = inspect.signature(getattr(native, verb))
            runtime_params = [
                (p.name, "keyword" if p.kind == p.KEYWORD_ONLY else "positional")
                for p in runtime.parameters.values()
                if p.name != "self"
            ]
            assert stub_params == runtime_params, f"{stub_cls}.{verb}"


def test_pure_helpers_exist():
    for row in tables()["Pure helpers (no server)"]:
        name = name_of(row[0])
        assert callable(getattr(echomq, name, None)), name
        assert name in echomq.__all__


def test_worker_surface_exists():
    rows = tables()["Worker"]
    names = [name_of(row[0]) for row in rows]
    assert names[0] == "Worker" and inspect.isclass(echomq.Worker)
    for name in names[1:]:
        assert callable(getattr(echomq.Worker, name, None)), f"Worker.{name}"
    assert callable(getattr(echomq.Worker, "run_async", None))
    assert issubclass(echomq.Unrecoverable, Exception)


def option_rows(group: str) -> List[str]:
    """The option names of API.md's marked option table of `group` (connect or
    worker); test_option_schema.py checks the tables against the core's schema."""
    lines = API.read_text().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(f"<!-- option-table: {group} "))
    names = []
    for row in lines[start + 3:]:
        if not row.startswith("|"):
            break
        names.append(name_of(row.strip("|").split("|")[0].strip()))
    return names


def test_worker_stats_and_options_match_the_doc():
    text = API.read_text()
    stats = re.search(r"`stats\(\)` \| `stats\(\)` \| `\{([^}]*)\}`", text)
    assert stats, "stats row not found"
    fields = [f.strip() for f in stats.group(1).split(",")]
    for f in fields:
        assert isinstance(getattr(echomq.WorkerStats, f, None), property) or hasattr(
            echomq.WorkerStats, f), f
    params = inspect.signature(echomq.Worker.__init__).parameters
    options = option_rows("worker")
    assert "concurrency" in options and "backoff_cap_ms" in options
    for opt in options:
        assert opt in params, f"worker option {opt}"


def test_connect_options_match_the_doc():
    names = option_rows("connect")
    assert "node_id" in names and "strict_bundle" in names
    params = inspect.signature(echomq.connect_async).parameters
    for name in names:
        assert name in params, f"connect option {name}"
    # The native connect takes the same keywords (checked by calling it with
    # each option against an unreachable address would need I/O; the text
    # signature lists them instead).
    sig = echomq.connect.__text_signature__ or ""
    for name in names:
        assert name in sig, f"connect option {name}"


def test_error_table_matches_classes_and_codes():
    rows = tables()["Errors"]
    found = 0
    for row in rows:
        if len(row) < 4 or not row[2].startswith("`"):
            continue
        cls_name = name_of(row[2])
        code = name_of(row[3])
        cls = getattr(echomq, cls_name, None)
        assert isinstance(cls, type) and issubclass(cls, echomq.EchoMQError), cls_name
        assert cls.code == code, (cls_name, cls.code, code)
        found += 1
    assert found == len(echomq._errors._BY_CODE)
