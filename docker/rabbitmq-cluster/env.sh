# Shared by the scripts of docker/rabbitmq-cluster (sourced, not run): where the cluster lives and how its
# nodes are named. One place per machine, not per checkout: the ports are the machine's, so any checkout finds
# (and may stop or restart) the cluster another one started.
state="${JFAST_RABBITMQ_CLUSTER_STATE:-${TMPDIR:-/tmp}/jfast-rabbitmq-cluster}"
first_port="${JFAST_RABBITMQ_CLUSTER_PORT:-5681}"
# Erlang distribution ports of the nodes: first_port + 20000 + i (25681-25683), far from the machine's node (25672).
dist_offset=20000
bin=/usr/lib/rabbitmq/bin

node_name() { echo "jfast-rmq-$1@localhost"; }
node_port() { echo $((first_port + $1 - 1)); }

# The environment every node and CLI call of this cluster runs with: its own HOME (so its own Erlang cookie,
# never the machine's /var/lib/rabbitmq/.erlang.cookie), its own data, logs and config, no plugins.
node_env() {
  local n="$1" dir="$state/$1"
  export HOME="$state/home"
  export RABBITMQ_NODENAME
  RABBITMQ_NODENAME="$(node_name "$n")"
  export RABBITMQ_NODE_PORT
  RABBITMQ_NODE_PORT="$(node_port "$n")"
  export RABBITMQ_DIST_PORT=$(( $(node_port "$n") + dist_offset ))
  export RABBITMQ_MNESIA_BASE="$dir/mnesia"
  export RABBITMQ_LOG_BASE="$dir/log"
  export RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf"
  export RABBITMQ_ADVANCED_CONFIG_FILE="$dir/advanced.config"
  export RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins"
  export RABBITMQ_PID_FILE="$dir/rabbitmq.pid"
}

# rabbitmqctl (or another CLI tool given as $2) against node n, with the cluster's cookie.
ctl() {
  local n="$1" tool="$2"
  shift 2
  # From the state directory: an Erlang VM that fails writes erl_crash.dump into its working directory.
  (node_env "$n" && cd "$state" && "$bin/$tool" -n "$(node_name "$n")" "$@")
}
