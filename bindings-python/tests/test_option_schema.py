"""Issue #33: the core's options schema (``echomq.option_schema()``) is the
one list of connect and worker options. These fail when Python accepts,
lacks or defaults an option differently (``defaults()``, the signatures of
``connect``, ``connect_async`` and ``Worker``, the stubs), or when a guide's
option table (docs/API.md, PYTHON.md, C.md) or the C header's option structs
document it differently. Node's side is bindings-node/test/option-schema.test.js."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

import echomq

ROOT = Path(__file__).resolve().parents[2]
SCHEMA: List[Dict[str, Any]] = echomq.option_schema()
GROUPS = ("connect", "worker")
# Keywords the Python layer adds to the core's options.
PYTHON_ONLY = {"connect": {"url"}, "worker": {"handle_signals", "events"}}


def names(group: str) -> List[str]:
    return [o["name"] for o in SCHEMA if o["group"] == group]


def spec(name: str) -> Dict[str, Any]:
    return next(o for o in SCHEMA if o["name"] == name)


def test_the_schema_has_connect_and_worker_options() -> None:
    assert len(names("connect")) >= 10 and len(names("worker")) >= 16
    assert {o["group"] for o in SCHEMA} == set(GROUPS)
    for o in SCHEMA:
        assert re.fullmatch(r"[a-z_]+", o["name"]), o
        assert o["type"] in ("int", "ms", "bytes", "bool", "string", "enum"), o
        assert (o["values"] is not None) == (o["type"] == "enum"), o


def test_defaults_are_the_schemas_plus_the_verb_limits() -> None:
    d = echomq.defaults()
    verbs = {k: d.pop(k) for k in ("browse_limit", "pump_limit")}
    assert d == {o["name"]: o["default"] for o in SCHEMA}
    assert all(isinstance(v, int) for v in verbs.values())
    assert d["prefetch"] is None and d["wake_fallback_ms"] == 5000


def keywords(fn: Callable[..., Any], positional: int) -> Dict[str, Any]:
    """A callable's parameters after the first ``positional``: name → default."""
    params = list(inspect.signature(fn).parameters.values())[positional:]
    return {p.name: p.default for p in params}


@pytest.mark.parametrize(
    "group,fn,positional",
    [
        ("connect", echomq.connect, 0),
        ("connect", echomq.connect_async, 0),
        ("worker", echomq.Worker.__init__, 4),
    ],
    ids=["connect", "connect_async", "Worker"],
)
def test_signatures_take_exactly_the_schema_options(
    group: str, fn: Callable[..., Any], positional: int
) -> None:
    params = keywords(fn, positional)
    assert set(params) - PYTHON_ONLY[group] == set(names(group))
    for name in names(group):
        # `None` takes the core's default; a literal must be that default.
        assert params[name] is None or params[name] == spec(name)["default"], name


def stub_parameters(function: str, cls: Optional[str] = None) -> List[str]:
    tree = ast.parse((ROOT / "bindings-python/python/echomq/_native.pyi").read_text())
    body = tree.body
    if cls is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
    fn = next(n for n in body if isinstance(n, ast.FunctionDef) and n.name == function)
    return [a.arg for a in fn.args.args + fn.args.kwonlyargs]


@pytest.mark.parametrize(
    "group,function,cls",
    [("connect", "connect", None), ("connect", "connect_async", None), ("worker", "__init__", "NativeWorker")],
)
def test_the_stubs_declare_exactly_the_schema_options(group: str, function: str, cls: Optional[str]) -> None:
    params = set(stub_parameters(function, cls)) - {"self", "client", "queue", "handler", "batched"}
    assert params - PYTHON_ONLY[group] == set(names(group))


def valid_value(o: Dict[str, Any]) -> Any:
    """A value the core accepts for ``o``: its default, else its range's bottom."""
    if o["default"] is not None:
        return o["default"]
    if o["type"] == "string":
        return "schema-test"
    return o["min"] if o["min"] is not None else 1


def test_every_worker_option_is_accepted(client: echomq.Client, queue: str) -> None:
    for name in names("worker"):
        echomq.Worker(client, queue, lambda job: None, **{name: valid_value(spec(name))})
    with pytest.raises(TypeError):
        echomq.Worker(client, queue, lambda job: None, lease_msec=1000)  # type: ignore[call-arg]


def test_every_connect_option_is_accepted(redis_url: str) -> None:
    for name in names("connect"):
        echomq.connect(redis_url, **{name: valid_value(spec(name))}).close()
    with pytest.raises(TypeError):
        echomq.connect(redis_url, connect_timeout=1000)  # type: ignore[call-arg]


Row = Tuple[str, Any, Optional[int], Optional[int]]


def parse_default(cell: str) -> Any:
    if re.match(r"none\b", cell, re.IGNORECASE):
        return None
    quoted = re.match(r"`([^`]*)`", cell)
    first = quoted.group(1) if quoted else cell.split()[0]
    if first.lower() in ("true", "false"):
        return first.lower() == "true"
    return int(first) if first.isdigit() else first


def option_tables(guide: str) -> Dict[str, List[Row]]:
    """A guide's ``<!-- option-table: GROUP ... -->`` tables: (name, default, min, max) per row."""
    lines = (ROOT / "docs" / guide).read_text().splitlines()
    tables: Dict[str, List[Row]] = {}
    for i, line in enumerate(lines):
        m = re.match(r"<!-- option-table: (\w+)", line)
        if not m:
            continue
        assert m.group(1) not in tables, f"{guide}: two {m.group(1)} tables"
        assert lines[i + 1] == "| option | default | range | meaning |", f"{guide}:{i + 2}"
        rows: List[Row] = []
        for row in lines[i + 3 :]:
            if not row.startswith("|"):
                break
            name, default, rng = [c.strip() for c in row.split("|")[1:-1]][:3]
            r = re.match(r"`(\d+)\.\.(?:=(\d+))?`", rng)
            rows.append((
                name.strip("`"),
                parse_default(default),
                int(r.group(1)) if r else None,
                int(r.group(2)) if r and r.group(2) else None,
            ))
        tables[m.group(1)] = rows
    return tables


@pytest.mark.parametrize("guide", ["API.md", "PYTHON.md", "C.md"])
def test_the_guides_option_tables_are_the_schema(guide: str) -> None:
    tables = option_tables(guide)
    assert sorted(tables) == list(GROUPS), guide
    for group in GROUPS:
        want = [(o["name"], o["default"], o["min"], o["max"]) for o in SCHEMA if o["group"] == group]
        assert tables[group] == want, f"docs/{guide} {group} table"


@pytest.mark.parametrize("group,struct", [("connect", "emq_connect_options"), ("worker", "emq_worker_options")])
def test_the_c_option_structs_are_the_schema(group: str, struct: str) -> None:
    header = (ROOT / "include" / "echomq.h").read_text()
    m = re.search(r"typedef struct %s \{(.*?)\} %s;" % (struct, struct), header, re.S)
    assert m, struct
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    fields = re.findall(r"(\w+);", body)
    assert fields[0] == "size"
    assert set(fields[1:]) == set(names(group)), struct
