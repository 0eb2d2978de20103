#!/usr/bin/env bash
# Starts one node of the loopback RabbitMQ cluster (start.sh runs it for each node; tests run it again to
# restart a node they killed). A restarted node keeps its data directory, so it rejoins the cluster it left and
# its quorum queue members catch up from the leader. Returns when the node is running (rabbitmqctl wait).
# Usage: node.sh <1|2|3>
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/env.sh"
n="${1:?usage: node.sh <1|2|3>}"
timeout="${JFAST_RABBITMQ_CLUSTER_START_TIMEOUT:-120}"
dir="$state/$n"
pid_file="$dir/rabbitmq.pid"
if [[ -f "$pid_file" ]] && kill -0 "$(cat "$pid_file")" 2>/dev/null \
  && grep -qa "RABBITMQ_NODENAME=$(node_name "$n")" "/proc/$(cat "$pid_file")/environ" 2>/dev/null; then
  # Already running: a second start of the same node would fail, and its exit would delete the pid file.
  exit 0
fi
mkdir -p "$dir/mnesia" "$dir/log" "$state/home"
if [[ ! -f "$state/home/.erlang.cookie" ]]; then
  # The cluster's own cookie: nodes of one cluster must share it, and the machine's node must not accept ours.
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr 'a-f' 'A-F' >"$state/home/.erlang.cookie"
  chmod 400 "$state/home/.erlang.cookie"
fi
node_env "$n"
# The VMs' working directory (an erl_crash.dump lands there, not in the caller's checkout).
cd "$state"
cat >"$RABBITMQ_CONFIG_FILE" <<CONF
listeners.tcp.local = 127.0.0.1:$RABBITMQ_NODE_PORT
CONF
echo "[]." >"$RABBITMQ_ENABLED_PLUGINS_FILE"
echo "[]." >"$RABBITMQ_ADVANCED_CONFIG_FILE"
# Run directly (not through /usr/sbin's wrapper, which switches to the rabbitmq user and its HOME, that is the
# machine's cookie); 9>&-: the daemon must not inherit start.sh's lock.
"$bin/rabbitmq-server" -detached 9>&- >"$dir/log/startup.log" 2>&1
"$bin/rabbitmqctl" -n "$RABBITMQ_NODENAME" wait "$RABBITMQ_PID_FILE" --timeout "$timeout" >/dev/null
