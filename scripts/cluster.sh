#!/usr/bin/env bash
# A loopback Redis/Valkey Cluster for tests and demos: 3 masters + 3 replicas
# on 127.0.0.1, free ports, no persistence, a short cluster-node-timeout so a
# killed master's replica takes over within a few seconds.
#
#   scripts/cluster.sh start DIR [--server PATH]   start, print the cluster URL
#   scripts/cluster.sh stop DIR                    stop every node started in DIR
#   scripts/cluster.sh restart-node DIR PORT       start one node again (it
#                                                  rejoins, as a replica if its
#                                                  replica took over meanwhile)
#
# The server binary: --server PATH, else $EMQ_SERVER_BIN, else redis-server
# (Debian's; Valkey's valkey-server works the same). The cluster is created
# with $EMQ_CLI_BIN (default redis-cli, which also speaks to Valkey).
# DIR keeps one folder per node (config, nodes.conf, log), a pid file per node
# and `ports` (the six ports, one a line). Node timeout: $EMQ_CLUSTER_NODE_TIMEOUT_MS
# (default 1000).
set -euo pipefail

usage() { sed -n '2,18p' "$0" >&2; exit 2; }

SERVER="${EMQ_SERVER_BIN:-redis-server}"
CLI="${EMQ_CLI_BIN:-redis-cli}"
NODE_TIMEOUT="${EMQ_CLUSTER_NODE_TIMEOUT_MS:-1000}"

# Six consecutive ports whose cluster bus ports (+10000) are free too.
pick_ports() {
  python3 - <<'EOF'
import random, socket
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); return True
    except OSError:
        return False
    finally:
        s.close()
for _ in range(200):
    base = random.randrange(20000, 29000)
    ports = range(base, base + 6)
    if all(free(p) and free(p + 10000) for p in ports):
        print(" ".join(map(str, ports))); break
else:
    raise SystemExit("no six free ports found")
EOF
}

start_node() {  # start_node DIR PORT
  local dir="$1" port="$2"
  mkdir -p "$dir/$port"
  # A simple command in the background, so $! is the server itself, with no
  # descriptor of ours left open (callers may read our stdout to the end).
  (cd "$dir/$port" || exit 1
    "$SERVER" --port "$port" --bind 127.0.0.1 \
      --cluster-enabled yes --cluster-config-file nodes.conf \
      --cluster-node-timeout "$NODE_TIMEOUT" --cluster-replica-validity-factor 0 \
      --save "" --appendonly no --repl-diskless-sync-delay 0 \
      --daemonize no --loglevel warning \
      --logfile "$dir/$port/server.log" </dev/null >/dev/null 2>&1 &
    echo $! >"$dir/$port.pid")
  local pid; pid="$(cat "$dir/$port.pid")"
  # The port was free when picked; another engineer's server may have taken
  # it since. Only OUR process answering counts (INFO's process_id).
  for _ in $(seq 1 200); do
    kill -0 "$pid" 2>/dev/null || break
    if "$CLI" -p "$port" info server 2>/dev/null | tr -d '\r' | grep -qx "process_id:$pid"; then
      return 0
    fi
    sleep 0.05
  done
  kill "$pid" 2>/dev/null || true
  rm -f "$dir/$port.pid"
  echo "node on port $port did not start (see $dir/$port/server.log)" >&2
  return 1
}

stop_all() {  # stop_all DIR: every node started in DIR, waiting for each to exit
  local pidfile pid
  for pidfile in "$1"/*.pid; do
    [ -f "$pidfile" ] || continue
    pid="$(cat "$pidfile")"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  done
}

wait_ok() {  # wait_ok PORT...: every node reports cluster_state:ok
  for port in "$@"; do
    for i in $(seq 1 200); do
      "$CLI" -p "$port" cluster info 2>/dev/null | grep -q '^cluster_state:ok' && break
      [ "$i" = 200 ] && { echo "cluster not ok on $port" >&2; return 1; }
      sleep 0.05
    done
  done
}

cmd="${1:-}"; [ $# -ge 2 ] || usage
dir="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2
case "$cmd" in
  start)
    while [ $# -gt 0 ]; do
      case "$1" in
        --server) SERVER="$2"; shift 2 ;;
        *) usage ;;
      esac
    done
    command -v "$SERVER" >/dev/null || { echo "server binary $SERVER not found" >&2; exit 1; }
    echo "$SERVER" >"$dir/server"
    # A half-started cluster is stopped again, whatever failed.
    trap 'stop_all "$dir"' ERR
    # Ports are checked free, then bound: if someone took one in between,
    # stop what started and pick again.
    for attempt in 1 2 3 4 5; do
      read -r -a ports <<<"$(pick_ports)"
      started=yes
      for p in "${ports[@]}"; do
        start_node "$dir" "$p" 2>>"$dir/start.log" || { started=no; break; }
      done
      [ "$started" = yes ] && break
      stop_all "$dir"
      rm -rf "${ports[@]/#/$dir/}"
      [ "$attempt" = 5 ] && { cat "$dir/start.log" >&2; false; }
    done
    printf '%s\n' "${ports[@]}" >"$dir/ports"
    nodes=(); for p in "${ports[@]}"; do nodes+=("127.0.0.1:$p"); done
    "$CLI" --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"$dir/create.log" 2>&1 \
      || { cat "$dir/create.log" >&2; exit 1; }
    wait_ok "${ports[@]}"
    # Every replica in sync with its master (a WAIT counts it, a drill may
    # kill its master) before anyone uses the cluster.
    for p in "${ports[@]}"; do
      for i in $(seq 1 400); do
        info="$("$CLI" -p "$p" info replication)"
        grep -q '^role:master' <<<"$info" && grep -q 'state=online' <<<"$info" && break
        grep -q '^master_link_status:up' <<<"$info" && break
        [ "$i" = 400 ] && { echo "node $p: replication not up" >&2; exit 1; }
        sleep 0.05
      done
    done
    echo "redis+cluster://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}/"
    ;;
  stop)
    stop_all "$dir"
    ;;
  restart-node)
    [ $# = 1 ] || usage
    SERVER="$(cat "$dir/server")"
    start_node "$dir" "$1"
    ;;
  *) usage ;;
esac
