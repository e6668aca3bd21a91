# Shared by the scripts in this folder: the repository root, one cargo target
# directory for every build (core compiles once per run), and set-up helpers.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

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
# into VAR and its pid into ${VAR}_PID. stop_redis VAR stops it.
start_redis() {
  local port; port=$(free_port)
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
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
