#!/usr/bin/env bash
# Starts a Redis Cluster of three primaries and three replicas on 127.0.0.1:7001-7006 in the background, for the
# test suite and local development, with Debian's redis-server (no Docker). The machine's own Redis (6379) is
# never touched: each node has its own port, directory, pid file and log under $TMPDIR/jfast-redis-cluster (/tmp when unset).
#
# - Fresh data on every start (the cluster holds test data only); `redis-cli --cluster create` assigns the slots
#   and pairs each primary with one replica.
# - Failure detection is fast (cluster-node-timeout 2000 ms, JFAST_REDIS_CLUSTER_NODE_TIMEOUT): a killed primary's
#   replica is promoted in about two to three seconds instead of the default fifteen.
# - Idempotent, and safe to run several times at once (a lock): when our six nodes are running and the cluster
#   state is ok it does nothing and exits 0.
# - Waits until every node reports cluster_state:ok. The last line printed is the `url` to configure:
#   [plugin.queue] backend = "redis", cluster = true, url = "<that line>".
#
# Environment: JFAST_REDIS_CLUSTER_PORT (7001, the first of six consecutive ports),
# JFAST_REDIS_CLUSTER_NODE_TIMEOUT ms (2000), JFAST_REDIS_CLUSTER_START_TIMEOUT seconds (60),
# JFAST_REDIS_CLUSTER_STATE ($TMPDIR/jfast-redis-cluster: data, pid files and logs of the nodes).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# One place per machine, not per checkout: the ports are the machine's, so any checkout finds (and may stop or
# restart) the cluster another one started.
state="${JFAST_REDIS_CLUSTER_STATE:-${TMPDIR:-/tmp}/jfast-redis-cluster}"
first_port="${JFAST_REDIS_CLUSTER_PORT:-7001}"

timeout="${JFAST_REDIS_CLUSTER_START_TIMEOUT:-60}"
ports=()
for i in 0 1 2 3 4 5; do ports+=($((first_port + i))); done

say() { echo "redis-cluster: $*"; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

our_pid_alive() {
  local pid_file="$state/$1/redis.pid"
  [[ -f "$pid_file" ]] || return 1
  local pid
  pid="$(cat "$pid_file")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && grep -q 'redis-server' "/proc/$pid/cmdline" 2>/dev/null
}

cluster_ok() { [[ "$(redis-cli -p "$1" cluster info 2>/dev/null | tr -d '\r' | grep '^cluster_state:')" == "cluster_state:ok" ]]; }

# Every node sees the cluster as ok and three replicas, each attached to a primary (so a killed primary fails over).
all_ok() {
  local port
  for port in "${ports[@]}"; do
    cluster_ok "$port" || return 1
    [[ "$(redis-cli -p "$port" cluster nodes 2>/dev/null | grep -cE '[ ,]slave [0-9a-f]{40}')" == 3 ]] || return 1
    # A replica counts once its link to the primary is up (its first sync done): before that a WAIT for one
    # replica times out, and a primary killed then has nothing to fail over to.
    local info
    info="$(redis-cli -p "$port" info replication 2>/dev/null | tr -d '\r')"
    if grep -q '^role:slave' <<<"$info"; then grep -q '^master_link_status:up' <<<"$info" || return 1; fi
  done
}

url() {
  local port urls=()
  for port in "${ports[@]:0:3}"; do urls+=("redis://127.0.0.1:$port"); done
  (IFS=,; echo "${urls[*]}")
}

started_at=$(date +%s%N)
# Test files running at once may all call this script: one starts the cluster, the others wait and find it running.
mkdir -p "$state"
exec 9>"$state/start.lock"
flock 9
command -v redis-server >/dev/null || { say "redis-server not found (apt-get install redis-server)" >&2; exit 1; }
command -v redis-cli >/dev/null || { say "redis-cli not found (apt-get install redis-tools)" >&2; exit 1; }

running=0
for port in "${ports[@]}"; do
  if our_pid_alive "$port"; then running=$((running + 1)); fi
done
if (( running == 6 )) && all_ok; then
  say "already running on 127.0.0.1:${ports[0]}-${ports[5]}"
  url
  exit 0
fi
if (( running > 0 )); then
  # A partial cluster (a node killed by a test and not restarted, a crashed start): start over from scratch.
  say "$running of 6 nodes running but the cluster is not whole; restarting it"
  "$here/stop.sh" >/dev/null
fi

for port in "${ports[@]}"; do
  if port_open "$port"; then
    say "127.0.0.1:$port is already taken by a process this script did not start:" >&2
    (ss -ltnp "sport = :$port" 2>/dev/null || true) >&2
    say "stop it, or run this script with JFAST_REDIS_CLUSTER_PORT set to the first of six free ports" >&2
    exit 1
  fi
done

for port in "${ports[@]}"; do
  rm -rf "${state:?}/$port"
  # 9>&-: the daemonized node must not inherit (and hold) the lock.
  "$here/node.sh" "$port" 9>&-
done

deadline=$(( $(date +%s) + timeout ))
for port in "${ports[@]}"; do
  until port_open "$port"; do
    if (( $(date +%s) >= deadline )); then
      say "node 127.0.0.1:$port is not accepting connections after ${timeout}s; last lines of its log:" >&2
      tail -n 20 "$state/$port/redis.log" >&2 || true
      exit 1
    fi
    sleep 0.1
  done
done

nodes=()
for port in "${ports[@]}"; do nodes+=("127.0.0.1:$port"); done
redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"$state/create.log" 2>&1 \
  || { say "redis-cli --cluster create failed:" >&2; cat "$state/create.log" >&2; exit 1; }

until all_ok; do
  if (( $(date +%s) >= deadline )); then
    say "cluster state is not ok after ${timeout}s:" >&2
    redis-cli -p "${ports[0]}" cluster nodes >&2 || true
    exit 1
  fi
  sleep 0.2
done

say "ready on 127.0.0.1:${ports[0]}-${ports[5]} in $(( ($(date +%s%N) - started_at) / 1000000 ))ms"
url
