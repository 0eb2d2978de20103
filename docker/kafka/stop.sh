#!/usr/bin/env bash
# Stops the broker that start.sh started (only that PID, from .ci/kafka/kafka.pid, or $JFAST_KAFKA_STATE/kafka.pid)
# and waits for it to exit.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pid_file="${JFAST_KAFKA_STATE:-$here/../../.ci/kafka}/kafka.pid"

if [[ ! -f "$pid_file" ]]; then
  echo "kafka: not running (no pid file)"
  exit 0
fi
pid="$(cat "$pid_file")"
if ! kill -0 "$pid" 2>/dev/null || ! grep -q 'kafka.Kafka' "/proc/$pid/cmdline" 2>/dev/null; then
  echo "kafka: pid $pid is not our broker any more; removing the stale pid file"
  rm -f "$pid_file"
  exit 0
fi

# SIGTERM lets the broker shut down cleanly; after 30 s it gets SIGKILL.
kill -TERM "$pid"
for _ in $(seq 1 150); do
  kill -0 "$pid" 2>/dev/null || { rm -f "$pid_file"; echo "kafka: stopped pid $pid"; exit 0; }
  sleep 0.2
done
kill -KILL "$pid" 2>/dev/null || true
rm -f "$pid_file"
echo "kafka: pid $pid did not stop within 30s; killed"
