#!/usr/bin/env python3
"""Run every code block of the user-facing docs, so a snippet that fails breaks the build.

    python3 scripts/snippets.py [--list] [FILE.md ...]

Called by scripts/test-snippets.sh, which builds the bindings and sets the
environment below. The convention (docs/CONTRIBUTING.md, "Snippets"):

  ```python       run with $EMQ_SNIPPET_PYTHON (a venv with echomq installed)
  ```js / ```cjs  written to a .cjs file and run with node (CommonJS: no top-level await)
  ```mjs          written to a .mjs file and run with node (an ES module)
  ```c            compiled as C11 against include/echomq.h, linked with the built
                  libechomq, and run
  ```cpp          the same as C++17 (include/echomq.hpp)
  ```rust         a binary of a scratch crate depending on core/, built and run
  anything else   (sh, text, json, toml, an untagged fence) is not executed

A marker on the line before the fence (blank lines between are allowed) changes that:

  <!-- snippet: skip (why) -->       not run; the reason is required and printed
  <!-- snippet: compile-only (why) --> checked, not run: python compiles it, node
                                      --check parses it, C/C++/Rust compile and link it
  <!-- snippet: until-sigterm -->     a program that runs until stopped (a worker):
                                      after a few seconds it gets SIGTERM and must
                                      then exit 0 (or have exited 0 by itself)

Every block runs in a fresh scratch directory, against a throwaway redis-server
($EMQ_URL, FLUSHALL before each block), with a timeout. The literal URLs
redis://127.0.0.1:6379/ and redis://localhost:6379/ in a block are replaced by
$EMQ_URL before it runs, so a snippet can show the usual URL. Nothing else is
rewritten or wrapped: a block must be valid as written for the kind its fence names.

Beyond the docs (when no file is named) it runs every examples/*/quickstart* file
that exists, and the Rust quickstart core/examples/quickstart.rs with cargo run.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ["README.md", "docs/PYTHON.md", "docs/NODE.md", "docs/C.md", "docs/API.md",
        "docs/GETTING-STARTED.md", "bindings-node/README.md", "bindings-python/README.md"]
LANGS = {"python": "python", "py": "python", "js": "cjs", "cjs": "cjs", "javascript": "cjs",
         "mjs": "mjs", "c": "c", "cpp": "cpp", "c++": "cpp", "rust": "rust"}
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*([a-z-]+)\s*(.*?)\s*-->\s*$")
LITERAL_URLS = ("redis://127.0.0.1:6379/", "redis://localhost:6379/")
TIMEOUT_S = 60      # generous: a hung snippet fails, a slow machine does not
SIGTERM_AFTER_S = 3  # an until-sigterm program runs this long before it is stopped


@dataclass
class Block:
    where: str   # file:line of the opening fence
    lang: str    # python | cjs | mjs | c | cpp | rust
    code: str
    mode: str    # run | skip | compile-only | until-sigterm
    why: str = ""


def blocks_of(path: Path) -> list[Block]:
    out: list[Block] = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)```+\s*([A-Za-z0-9+_-]*)", lines[i])
        if not m:
            i += 1
            continue
        indent, tag = m.group(1), m.group(2).lower()
        start = i
        i += 1
        body = []
        while i < len(lines) and not re.match(r"^\s*```", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1  # the closing fence
        if tag not in LANGS:
            continue
        mode, why = "run", ""
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        if j >= 0 and (mk := MARKER.match(lines[j])):
            mode, why = mk.group(1), mk.group(2).strip("() ")
            if mode not in ("skip", "compile-only", "until-sigterm"):
                raise SystemExit(f"{path}:{j + 1}: unknown snippet marker {mode!r}")
            if mode == "skip" and not why:
                raise SystemExit(f"{path}:{j + 1}: a skip marker needs its reason: skip (why)")
        rel = path.relative_to(ROOT)
        out.append(Block(f"{rel}:{start + 1}", LANGS[tag], "\n".join(body) + "\n", mode, why))
    return out


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["EMQ_URL"] = os.environ["EMQ_URL"]
    return e


def flush() -> None:
    subprocess.run(["redis-cli", "-u", os.environ["EMQ_URL"], "FLUSHALL"], check=True,
                   stdout=subprocess.DEVNULL)


def run(cmd: list[str], cwd: Path, mode: str) -> tuple[bool, str]:
    """Run cmd; answer (passed, output)."""
    if mode != "until-sigterm":
        try:
            p = subprocess.run(cmd, cwd=cwd, env=env(), capture_output=True, text=True,
                               timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired as t:
            # TimeoutExpired carries bytes even in text mode.
            out = b"".join(x if isinstance(x, bytes) else (x or "").encode()
                           for x in (t.stdout, t.stderr))
            return False, f"timed out after {TIMEOUT_S}s\n{out.decode(errors='replace')}"
        return p.returncode == 0, f"exit {p.returncode}\n{p.stdout}{p.stderr}"
    p = subprocess.Popen(cmd, cwd=cwd, env=env(), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    try:
        p.wait(timeout=SIGTERM_AFTER_S)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGTERM)
    try:
        out, _ = p.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        return False, f"still running {TIMEOUT_S}s after SIGTERM\n{out}"
    return p.returncode == 0, f"exit {p.returncode} (SIGTERM after {SIGTERM_AFTER_S}s)\n{out}"


def compile_native(b: Block, src: Path, exe: Path, cwd: Path) -> tuple[bool, str]:
    # EMQ_C_LIBDIR: dist.sh's library under scripts/test.sh; else the cargo build.
    lib = Path(os.environ.get("EMQ_C_LIBDIR") or Path(os.environ["CARGO_TARGET_DIR"]) / "release")
    if b.lang == "c":
        cc = ["gcc", "-std=c11"]
    else:
        cc = ["g++", "-std=c++17"]
    cmd = cc + ["-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{ROOT / 'include'}",
                str(src), "-o", str(exe), f"-L{lib}", f"-Wl,-rpath,{lib}", "-lechomq",
                "-lpthread"]
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return p.returncode == 0, f"{' '.join(cmd)}\n{p.stdout}{p.stderr}"


def rust_crate(blocks: list[Block], work: Path) -> tuple[Path, str]:
    """One scratch crate, one binary per Rust block; built once."""
    crate = work / "rust"
    (crate / "src" / "bin").mkdir(parents=True)
    # Its own [workspace]: the crate lies outside ours. Our lock file pins the
    # same versions the core builds with, so the shared target dir is reused.
    (crate / "Cargo.toml").write_text(
        '[package]\nname = "snippets"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
        f'[dependencies]\nechomq = {{ path = "{ROOT / "core"}" }}\n'
        'tokio = { version = "1", features = ["macros", "rt-multi-thread", "time", "signal"] }\n'
        "\n[workspace]\n")
    shutil.copy(ROOT / "Cargo.lock", crate / "Cargo.lock")
    for n, b in enumerate(blocks):
        (crate / "src" / "bin" / f"emq_snippet_{n}.rs").write_text(b.code)
    p = subprocess.run(["cargo", "build", "--quiet", "--bins"], cwd=crate,
                       capture_output=True, text=True)
    return crate, (p.stdout + p.stderr) if p.returncode else ""


def check(b: Block, n: int, work: Path, rust_bins: dict[int, Path]) -> tuple[bool, str]:
    d = work / f"b{n}"
    d.mkdir()
    code = b.code
    for url in LITERAL_URLS:
        code = code.replace(url, os.environ["EMQ_URL"])
    if b.lang == "python":
        src = d / "snippet.py"
        src.write_text(code)
        py = os.environ["EMQ_SNIPPET_PYTHON"]
        if b.mode == "compile-only":
            return run([py, "-m", "py_compile", str(src)], d, "run")
        return run([py, str(src)], d, b.mode)
    if b.lang in ("cjs", "mjs"):
        (d / "node_modules").mkdir()
        (d / "node_modules" / "echomq").symlink_to(ROOT / "bindings-node")
        src = d / f"snippet.{b.lang}"
        src.write_text(code)
        if b.mode == "compile-only":
            return run(["node", "--check", str(src)], d, "run")
        return run(["node", str(src)], d, b.mode)
    if b.lang in ("c", "cpp"):
        src = d / ("snippet.c" if b.lang == "c" else "snippet.cpp")
        src.write_text(code)
        ok, out = compile_native(b, src, d / "snippet", d)
        if not ok or b.mode == "compile-only":
            return ok, out
        return run([str(d / "snippet")], d, b.mode)
    if b.lang == "rust-example":  # core/examples/<name>.rs, through cargo
        return run(["cargo", "run", "--quiet", "-p", "echomq", "--example", b.code.strip()],
                   ROOT, b.mode)
    if b.lang == "rust":
        exe = rust_bins[n]
        if not exe.exists():
            return False, "did not build (the cargo output is above)"
        if b.mode == "compile-only":
            return True, ""
        return run([str(exe)], d, b.mode)
    raise AssertionError(b.lang)


def quickstarts() -> list[Block]:
    """The example programs, run as they are (they read EMQ_URL)."""
    out = []
    kinds = {".py": "python", ".cjs": "cjs", ".js": "cjs", ".mjs": "mjs", ".c": "c", ".cpp": "cpp"}
    for f in sorted(ROOT.glob("examples/*/*quickstart*")):
        if f.suffix in kinds:
            out.append(Block(str(f.relative_to(ROOT)), kinds[f.suffix], f.read_text(), "run"))
    for f in sorted(ROOT.glob("core/examples/*quickstart*.rs")):
        out.append(Block(str(f.relative_to(ROOT)), "rust-example", f.stem, "run"))
    return out


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--list"]
    files = [ROOT / f for f in (args or DOCS)]
    blocks = [b for f in files if f.exists() for b in blocks_of(f)]
    if not args:  # named files: those alone
        blocks += quickstarts()
    if "--list" in sys.argv:
        for b in blocks:
            print(f"{b.where:32} {b.lang:7} {b.mode} {b.why}")
        return 0
    failed, passed, skipped = [], 0, []
    with tempfile.TemporaryDirectory(prefix="emq-snippets-") as tmp:
        work = Path(tmp)
        rust = {n: b for n, b in enumerate(blocks) if b.lang == "rust" and b.mode != "skip"}
        rust_bins: dict[int, Path] = {}
        if rust:
            crate, err = rust_crate(list(rust.values()), work)
            if err:
                print(f"rust snippets: cargo build failed\n{err}")
            target = Path(os.environ["CARGO_TARGET_DIR"]) / "debug"
            rust_bins = {n: target / f"emq_snippet_{i}" for i, n in enumerate(rust)}
        for n, b in enumerate(blocks):
            if b.mode == "skip":
                skipped.append(b)
                continue
            flush()
            t0 = time.monotonic()
            ok, out = check(b, n, work, rust_bins)
            print(f"{'ok  ' if ok else 'FAIL'} {b.where:32} {b.lang:6} {b.mode:13} "
                  f"{time.monotonic() - t0:5.1f}s", flush=True)
            if ok:
                passed += 1
            else:
                failed.append(b)
                print("     " + out.rstrip().replace("\n", "\n     "), flush=True)
    for b in skipped:
        print(f"skip {b.where:32} {b.lang:6} ({b.why})")
    print(f"snippets: {passed} passed, {len(failed)} failed, {len(skipped)} skipped")
    if failed:
        print("failed: " + ", ".join(b.where for b in failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
