#!/usr/bin/env bash
# Starts one node of the cluster (start.sh runs it six times; tests run it again to restart a node they killed).
# The node keeps its nodes.conf under $TMPDIR/jfast-redis-cluster/<port>, so a restarted node rejoins the cluster it left,
# as a replica when its replica was promoted meanwhile. Usage: node.sh <port>
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# One place per machine, not per checkout: the ports are the machine's, so any checkout finds (and may stop or
# restart) the cluster another one started.
state="${JFAST_REDIS_CLUSTER_STATE:-${TMPDIR:-/tmp}/jfast-redis-cluster}"
port="${1:?usage: node.sh <port>}"
node_timeout="${JFAST_REDIS_CLUSTER_NODE_TIMEOUT:-2000}"
dir="$state/$port"
mkdir -p "$dir"
# No persistence: a node restarted after a kill copies its data from the primary it now replicates.
redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --daemonize yes \
  --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
  --cluster-enabled yes --cluster-config-file "$dir/nodes.conf" --cluster-node-timeout "$node_timeout" \
  --save "" --appendonly no
