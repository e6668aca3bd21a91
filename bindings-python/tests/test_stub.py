"""The verbs of `_native.pyi` are rendered from src/surface.rs's rows (their
`py` clauses and doc lines, read from the extension): a verb is typed where
it is declared, once. This test fails when the committed stub differs from
the rendering; `EMQ_BLESS=1 pytest tests/test_stub.py` rewrites it."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import List, Tuple

from echomq import _native

STUB = Path(__file__).resolve().parents[1] / "python" / "echomq" / "_native.pyi"
BEGIN = "    # ---- the verbs: rendered from src/surface.rs (tests/test_stub.py) ----"
END = "    # ---- end of the rendered verbs ----"
# The stub's classes that carry the verbs: (name, asyncio, takes a queue).
CLASSES = [
    ("Client", False, True),
    ("NativeAsyncClient", True, True),
    ("NativeQueue", False, False),
    ("NativeAsyncQueue", True, False),
]
WIDTH = 100


def split_params(text: str) -> List[str]:
    """`a: X, b: Dict[str, int] = None` → its parameters (top-level commas)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch in "[("
        depth -= ch in "])"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def render_verb(row: Tuple[str, bool, str, str, List[str]], is_async: bool, on_client: bool) -> str:
    name, takes_queue, params, ret, doc = row
    head = "    async def " if is_async else "    def "
    args = ["self"] + (["queue: str"] if takes_queue and on_client else []) + split_params(params)
    one_line = f"{head}{name}({', '.join(args)}) -> {ret}:"
    if len(one_line) + 4 <= WIDTH:
        text = one_line
    else:
        body = "".join(f"        {a},\n" for a in args)
        text = f"{head}{name}(\n{body}    ) -> {ret}:"
    lines = [d[1:] if d.startswith(" ") else d for d in doc]
    if not lines:
        return text + " ..."
    doc_text = "\n        ".join(lines)
    return f'{text}\n        """{doc_text}"""'


def render_class(is_async: bool, on_client: bool) -> str:
    rows = _native.surface_stub_rows()
    verbs = [render_verb(r, is_async, on_client) for r in rows if on_client or r[1]]
    return "\n".join([BEGIN, *verbs, END])


def test_the_stub_verbs_are_rendered_from_the_table() -> None:
    text = STUB.read_text()
    rendered = text
    for cls, is_async, on_client in CLASSES:
        pattern = re.compile(
            rf"(^class {cls}\b.*?\n){re.escape(BEGIN)}\n.*?{re.escape(END)}", re.S | re.M
        )
        assert pattern.search(rendered), f"{cls}: no rendered-verbs section in {STUB}"
        block = render_class(is_async, on_client)
        rendered = pattern.sub(lambda m: m.group(1) + block, rendered, count=1)
    if os.environ.get("EMQ_BLESS"):
        STUB.write_text(rendered)
        return
    assert rendered == text, (
        "_native.pyi's verbs differ from src/surface.rs's rows: "
        "regenerate with EMQ_BLESS=1 pytest tests/test_stub.py"
    )


def test_a_verb_renders_with_its_queue_on_clients_only() -> None:
    row = ("exists", True, "id: str", "bool", [" Whether it exists."])
    assert render_verb(row, False, True) == (
        '    def exists(self, queue: str, id: str) -> bool:\n        """Whether it exists."""'
    )
    assert render_verb(row, True, False).startswith("    async def exists(self, id: str) -> bool:")
    long = ("v", True, ", ".join(f"a{i}: Optional[Dict[str, int]] = None" for i in range(4)), "int", [])
    assert render_verb(long, False, True).splitlines()[2] == "        queue: str,"
