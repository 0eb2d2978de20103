#!/usr/bin/env bash
# Stops the RabbitMQ cluster nodes that start.sh started (only the PIDs in $TMPDIR/jfast-rabbitmq-cluster/<n>/
# rabbitmq.pid, or under $JFAST_RABBITMQ_CLUSTER_STATE) and waits for them to exit. The machine's own node is
# never touched. The data directories stay until the next fresh start.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/env.sh"

stopped=0
for n in 1 2 3; do
  pid_file="$state/$n/rabbitmq.pid"
  [[ -f "$pid_file" ]] || continue
  pid="$(cat "$pid_file")"
  if [[ -z "$pid" ]] || ! kill -0 "$pid" 2>/dev/null || ! grep -qa "RABBITMQ_NODENAME=$(node_name "$n")" "/proc/$pid/environ" 2>/dev/null; then
    rm -f "$pid_file"
    continue
  fi
  # SIGTERM: the node shuts down cleanly; after 30 s it gets SIGKILL.
  kill -TERM "$pid"
  for _ in $(seq 1 150); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pid_file"
  stopped=$((stopped + 1))
done
echo "rabbitmq-cluster: stopped $stopped node(s)"
