#!/usr/bin/env bash
# Starts a RabbitMQ cluster of three nodes on 127.0.0.1:5681-5683 in the background, for the test suite and local
# development, with Debian's rabbitmq-server (no Docker). The machine's own node (rabbit@<host> on 5672) is never
# touched: each node has its own name (jfast-rmq-1..3@localhost), AMQP and distribution ports (25681-25683), data,
# logs, config and Erlang cookie under $TMPDIR/jfast-rabbitmq-cluster (/tmp when unset); no plugins, so no
# management listener. The nodes register with the machine's epmd under their own names.
#
# - Fresh data on a fresh start (the cluster holds test data only); nodes 2 and 3 join node 1 with
#   `rabbitmqctl join_cluster`. Quorum queues declared on it get a member on every node.
# - Idempotent, and safe to run several times at once (a lock): when the three nodes run as one cluster it does
#   nothing and exits 0; a node a test killed and did not restart is started again (it rejoins from its data).
# - The last line printed is the `url` to configure:
#   [plugin.queue] backend = "rabbitmq", queue_type = "quorum", url = "<that line>".
#
# Environment: JFAST_RABBITMQ_CLUSTER_PORT (5681, the first of three consecutive ports),
# JFAST_RABBITMQ_CLUSTER_START_TIMEOUT seconds (120), JFAST_RABBITMQ_CLUSTER_STATE ($TMPDIR/jfast-rabbitmq-cluster).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/env.sh"
nodes=(1 2 3)

say() { echo "rabbitmq-cluster: $*"; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

our_pid_alive() {
  local pid_file="$state/$1/rabbitmq.pid"
  [[ -f "$pid_file" ]] || return 1
  local pid
  pid="$(cat "$pid_file")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && grep -qa "RABBITMQ_NODENAME=$(node_name "$1")" "/proc/$pid/environ" 2>/dev/null
}

# Node 1 sees all three nodes running in its cluster, and every node accepts AMQP connections. (One CLI call:
# each takes seconds on a busy machine.)
whole() {
  local n
  [[ "$(ctl 1 rabbitmqctl cluster_status --formatter json 2>/dev/null | sed -n 's/.*"running_nodes":\[\([^]]*\)\].*/\1/p' | grep -o 'jfast-rmq' | wc -l)" == 3 ]] || return 1
  for n in "${nodes[@]}"; do port_open "$(node_port "$n")" || return 1; done
}

# Cheap: the three nodes this script started run and listen, and they were joined into one cluster (the mark is
# written after a successful join and removed by a fresh start). A node restarted with node.sh rejoins by itself.
running_whole() {
  local n
  [[ -f "$state/joined" ]] || return 1
  for n in "${nodes[@]}"; do our_pid_alive "$n" && port_open "$(node_port "$n")" || return 1; done
}

url() {
  local n urls=()
  for n in "${nodes[@]}"; do urls+=("amqp://guest:guest@127.0.0.1:$(node_port "$n")"); done
  (IFS=,; echo "${urls[*]}")
}

started_at=$(date +%s%N)
mkdir -p "$state"
# Test files running at once may all call this script: one starts the cluster, the others wait and find it running.
exec 9>"$state/start.lock"
flock 9
[[ -x "$bin/rabbitmq-server" ]] || { say "$bin/rabbitmq-server not found (apt-get install rabbitmq-server)" >&2; exit 1; }

running=0
for n in "${nodes[@]}"; do
  if our_pid_alive "$n"; then running=$((running + 1)); fi
done
if (( running == 3 )) && running_whole; then
  say "already running on 127.0.0.1:$(node_port 1)-$(node_port 3)"
  url
  exit 0
fi
if (( running > 0 )); then
  # A node killed by a test and not restarted: start it again; it rejoins from its data directory.
  for n in "${nodes[@]}"; do
    our_pid_alive "$n" || { say "node $(node_name "$n") is down; starting it again"; "$here/node.sh" "$n" 9>&- || true; }
  done
  if whole; then
    say "whole again in $(( ($(date +%s%N) - started_at) / 1000000 ))ms"
    url
    exit 0
  fi
  say "the cluster is not whole; starting it over"
  "$here/stop.sh" >/dev/null
fi

for n in "${nodes[@]}"; do
  for port in "$(node_port "$n")" $(( $(node_port "$n") + dist_offset )); do
    if port_open "$port"; then
      say "127.0.0.1:$port is already taken by a process this script did not start:" >&2
      (ss -ltnp "sport = :$port" 2>/dev/null || true) >&2
      say "stop it, or run this script with JFAST_RABBITMQ_CLUSTER_PORT set to the first of three free ports" >&2
      exit 1
    fi
  done
done

rm -f "$state/joined"
for n in "${nodes[@]}"; do rm -rf "${state:?}/$n"; done
rm -rf "${state:?}/home"
for n in "${nodes[@]}"; do
  "$here/node.sh" "$n" 9>&- || { say "node $(node_name "$n") did not start; last lines of its log:" >&2; tail -n 30 "$state/$n/log/"*.log >&2 || true; exit 1; }
done
for n in 2 3; do
  ctl "$n" rabbitmqctl stop_app >/dev/null
  ctl "$n" rabbitmqctl join_cluster "$(node_name 1)" >/dev/null
  ctl "$n" rabbitmqctl start_app >/dev/null
done
whole || { say "the nodes did not form one cluster:" >&2; ctl 1 rabbitmqctl cluster_status >&2 || true; exit 1; }
touch "$state/joined"

say "ready on 127.0.0.1:$(node_port 1)-$(node_port 3) in $(( ($(date +%s%N) - started_at) / 1000000 ))ms"
url
