#!/usr/bin/env bash
# Starts a real Apache Kafka broker (KRaft, one combined broker/controller node) on 127.0.0.1:9092 in the
# background, for the test suite and local development on a machine without Docker.
#
# - Resolves the broker jars from Maven Central with mvn (docker/kafka/pom.xml) into .ci/kafka/libs, once.
# - Formats fresh storage under .ci/kafka/data on every start: the broker holds test data only.
# - Writes .ci/kafka/kafka.pid and logs to .ci/kafka/kafka.log; waits until the port accepts connections.
# - Idempotent: when our broker is already running it does nothing and exits 0.
#
# Environment: JFAST_KAFKA_PORT (9092), JFAST_KAFKA_ADVERTISED_PORT (the port clients are told to use after
# their first metadata request; JFAST_KAFKA_PORT, or a proxy's in front of it), JFAST_KAFKA_CONTROLLER_PORT (9093),
# JFAST_KAFKA_JAVA (java), JFAST_KAFKA_START_TIMEOUT seconds (60), JFAST_KAFKA_STATE (.ci/kafka: data, pid file
# and log of this broker).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
state="${JFAST_KAFKA_STATE:-$repo/.ci/kafka}"
# The jars are shared by every broker started from this checkout (tests start a second one of their own).
libs="$repo/.ci/kafka/libs"
data="$state/data"
pid_file="$state/kafka.pid"
log_file="$state/kafka.log"
port="${JFAST_KAFKA_PORT:-9092}"
advertised_port="${JFAST_KAFKA_ADVERTISED_PORT:-$port}"
controller_port="${JFAST_KAFKA_CONTROLLER_PORT:-9093}"
java_bin="${JFAST_KAFKA_JAVA:-java}"
timeout="${JFAST_KAFKA_START_TIMEOUT:-60}"

say() { echo "kafka: $*"; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

our_pid_alive() {
  [[ -f "$pid_file" ]] || return 1
  local pid
  pid="$(cat "$pid_file")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && grep -q 'kafka.Kafka' "/proc/$pid/cmdline" 2>/dev/null
}

started_at=$(date +%s%N)

if our_pid_alive; then
  if port_open "$port"; then
    say "already running (pid $(cat "$pid_file")) on 127.0.0.1:$port"
    exit 0
  fi
  say "pid $(cat "$pid_file") is alive but 127.0.0.1:$port is closed; waiting for it"
else
  rm -f "$pid_file"
  if port_open "$port"; then
    say "127.0.0.1:$port is already taken by a process this script did not start:" >&2
    (ss -ltnp "sport = :$port" 2>/dev/null || true) >&2
    say "stop it, or run this script with JFAST_KAFKA_PORT set to a free port" >&2
    exit 1
  fi

  command -v "$java_bin" >/dev/null || { say "java not found (Kafka needs Java 17+); set JFAST_KAFKA_JAVA" >&2; exit 1; }

  # Resolve the jars once; re-resolve only when the pom changes (the stamp holds its checksum).
  stamp="$repo/.ci/kafka/libs.sha256"
  pom_sum="$(sha256sum "$here/pom.xml" | cut -d' ' -f1)"
  if [[ ! -d "$libs" || ! -f "$stamp" || "$(cat "$stamp")" != "$pom_sum" ]]; then
    command -v mvn >/dev/null || { say "mvn not found: it fetches the broker from Maven Central" >&2; exit 1; }
    say "resolving the broker from Maven Central into $libs"
    rm -rf "$libs"
    mkdir -p "$libs"
    t0=$(date +%s)
    mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies \
      -DoutputDirectory="$libs" -DincludeScope=runtime
    echo "$pom_sum" >"$stamp"
    say "resolved in $(( $(date +%s) - t0 ))s"
  fi

  rm -rf "$data"
  mkdir -p "$data"
  sed -e "s|@PORT@|$port|g" -e "s|@ADVERTISED_PORT@|$advertised_port|g" -e "s|@CONTROLLER_PORT@|$controller_port|g" -e "s|@DATA_DIR@|$data|g" \
    "$here/server.properties.template" >"$state/server.properties"

  # Start-up is mostly class loading and JIT warm-up on a machine that is busy running tests: C1 only and the
  # serial collector start a test broker markedly faster, and it never needs peak throughput.
  jvm_opts=(-Xms256m -Xmx768m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true
    "-Dlog4j2.configurationFile=$here/log4j2.properties")

  # A KRaft cluster id is 16 random bytes in URL-safe base64 without padding (what `random-uuid` prints);
  # made here to save a JVM start. Like `random-uuid`, never one that starts with '-': the storage tool would
  # read it as an option and refuse to format (one start in 64).
  cluster_id="-"
  while [[ "$cluster_id" == -* ]]; do
    cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
  done
  t0=$(date +%s%N)
  "$java_bin" "${jvm_opts[@]}" -cp "$libs/*" kafka.tools.StorageTool format \
    -t "$cluster_id" -c "$state/server.properties" >"$state/format.log" 2>&1 \
    || { say "formatting storage failed:" >&2; cat "$state/format.log" >&2; exit 1; }
  say "storage formatted in $(( ($(date +%s%N) - t0) / 1000000 ))ms"

  # setsid: the broker must outlive this script and the shell that ran it (CI steps, test runners).
  setsid nohup "$java_bin" "${jvm_opts[@]}" -cp "$libs/*" kafka.Kafka "$state/server.properties" \
    >"$log_file" 2>&1 </dev/null &
  echo $! >"$pid_file"
  say "started pid $(cat "$pid_file"), log $log_file"
fi

deadline=$(( $(date +%s) + timeout ))
until port_open "$port" && grep -q 'Kafka Server started\|\[BrokerServer id=[0-9]*\] Transition from STARTING to STARTED' "$log_file" 2>/dev/null; do
  if ! our_pid_alive; then
    say "the broker exited during start-up; last lines of $log_file:" >&2
    tail -n 40 "$log_file" >&2 || true
    rm -f "$pid_file"
    exit 1
  fi
  if (( $(date +%s) >= deadline )); then
    say "not accepting connections on 127.0.0.1:$port after ${timeout}s; last lines of $log_file:" >&2
    tail -n 40 "$log_file" >&2 || true
    exit 1
  fi
  sleep 0.2
done

say "ready on 127.0.0.1:$port in $(( ($(date +%s%N) - started_at) / 1000000 ))ms"
