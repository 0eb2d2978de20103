#!/usr/bin/env bash
# Stops the Redis Cluster nodes that start.sh started (only the PIDs in $TMPDIR/jfast-redis-cluster/<port>/redis.pid, or
# under $JFAST_REDIS_CLUSTER_STATE) and waits for them to exit. The data directories stay until the next start.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# One place per machine, not per checkout: the ports are the machine's, so any checkout finds (and may stop or
# restart) the cluster another one started.
state="${JFAST_REDIS_CLUSTER_STATE:-${TMPDIR:-/tmp}/jfast-redis-cluster}"

stopped=0
shopt -s nullglob
for pid_file in "$state"/*/redis.pid; do
  pid="$(cat "$pid_file")"
  if ! kill -0 "$pid" 2>/dev/null || ! grep -q 'redis-server' "/proc/$pid/cmdline" 2>/dev/null; then
    rm -f "$pid_file"
    continue
  fi
  # SIGTERM: the node exits at once (no persistence to write); after 10 s it gets SIGKILL.
  kill -TERM "$pid"
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pid_file"
  stopped=$((stopped + 1))
done
echo "redis-cluster: stopped $stopped node(s)"
