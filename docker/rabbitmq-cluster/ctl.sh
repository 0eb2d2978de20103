#!/usr/bin/env bash
# Runs a RabbitMQ CLI tool against one node of the loopback cluster, with the cluster's own Erlang cookie.
# Usage: ctl.sh <1|2|3> <rabbitmqctl|rabbitmq-queues|rabbitmq-diagnostics> <command> [args...]
#   e.g. ctl.sh 1 rabbitmq-queues quorum_status jfast.jobs
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/env.sh"
ctl "$@"
