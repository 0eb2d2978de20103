#!/usr/bin/env bash
# Brings up what the test suites talk to, before `npm test` runs them (.ci/run goes through `npm test` too):
# PostgreSQL with database "test", Redis, RabbitMQ and a Kafka broker on 127.0.0.1, and Chromium for the
# dashboard's browser tests. What already runs is used as it is, so with everything up this takes well under a
# second; what this starts keeps running for the next run.
# A service that cannot be started stops the run here with the reason, rather than failing suites one by one.
# Chromium is installed from Debian's package only when running as root; otherwise one line says how.
set -euo pipefail

cd "$(dirname "$0")/.."
started_at=$(date +%s%N)

say() { echo "test-services: $*"; }
fail() {
  echo "test-services: $*" >&2
  exit 1
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") >/dev/null 2>&1; }

wait_for_port() {
  local name=$1 port=$2 seconds=$3
  for _ in $(seq 1 "$seconds"); do
    port_open "$port" && return 0
    sleep 1
  done
  fail "$name did not open 127.0.0.1:$port within ${seconds}s"
}

need() { command -v "$1" >/dev/null 2>&1 || fail "$2"; }

# --- PostgreSQL, and the database the tests use (trust auth, user postgres) ---------------------------------
if port_open 5432; then
  say "PostgreSQL: running"
else
  need pg_ctlcluster "PostgreSQL is not running on 127.0.0.1:5432 and pg_ctlcluster is not installed (apt-get install postgresql)"
  [ -d /etc/postgresql ] || fail "PostgreSQL is not running on 127.0.0.1:5432 and has no cluster in /etc/postgresql"
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  say "PostgreSQL: starting cluster $version/main"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start
  wait_for_port PostgreSQL 5432 60
fi
need psql "psql is not installed (apt-get install postgresql-client)"
if ! psql -h 127.0.0.1 -U postgres -d test -Atc 'select 1' >/dev/null 2>&1; then
  say "PostgreSQL: creating database test"
  psql -h 127.0.0.1 -U postgres -d postgres -qc 'CREATE DATABASE test'
fi

# --- Redis: no persistence, the tests' data is thrown away -------------------------------------------------
if port_open 6379; then
  say "Redis: running"
else
  need redis-server "Redis is not running on 127.0.0.1:6379 and redis-server is not installed (apt-get install redis-server)"
  say "Redis: starting"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
  wait_for_port Redis 6379 30
fi

# --- RabbitMQ (guest/guest) ----------------------------------------------------------------------------------
if port_open 5672; then
  say "RabbitMQ: running"
else
  need rabbitmq-server "RabbitMQ is not running on 127.0.0.1:5672 and rabbitmq-server is not installed (apt-get install rabbitmq-server)"
  say "RabbitMQ: starting"
  rabbitmq-server -detached
  wait_for_port RabbitMQ 5672 120
  # The port opens before the broker has finished booting.
  rabbitmqctl await_startup >/dev/null 2>&1 || true
fi

# --- Kafka: docker/kafka/start.sh runs a real broker (KRaft) and returns once it accepts connections --------
kafka_port="${JFAST_KAFKA_PORT:-9092}"
if port_open "$kafka_port"; then
  say "Kafka: running"
else
  say "Kafka: starting through docker/kafka/start.sh"
  bash docker/kafka/start.sh || fail "Kafka could not be started (see above); the Kafka suites need a broker on 127.0.0.1:$kafka_port"
fi

# --- Chromium for the dashboard's browser tests: Debian's package, never a downloaded browser ----------------
if [ -x /usr/bin/chromium ]; then
  say "Chromium: installed"
elif [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  say "Chromium: installing Debian's package"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  say "Chromium: /usr/bin/chromium is missing, so the dashboard's browser tests will fail; install it with: sudo apt-get install -y chromium"
fi

say "ready in $(( ($(date +%s%N) - started_at) / 1000000 ))ms"
