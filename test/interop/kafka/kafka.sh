#!/usr/bin/env bash
# Runs the real Apache Kafka 4.4.0 broker and its CLI tools from the jars that
# setup.sh resolves (no Docker, no tarball). See README.md for tool classes.
#
#   kafka.sh start <dir> <port>   KRaft combined broker+controller, node.id=1,
#                                 PLAINTEXT on 127.0.0.1:<port>, CONTROLLER on
#                                 <port+1>, data in <dir>/data, log in
#                                 <dir>/server.log; prints the pid once the
#                                 port answers. Formats <dir>/data on first use.
#   kafka.sh start-config <dir> <port>  the same with the caller's <dir>/server.properties
#                                 (any process.roles, node.id, quorum): formats
#                                 <dir>/data with --cluster-id=$KAFKA_CLUSTER_ID (or a
#                                 random one) and $KAFKA_FORMAT_ARGS (e.g. --release-version
#                                 4.0-IV3 --feature group.version=0 --no-initial-controllers),
#                                 then waits until <port> answers.
#   kafka.sh stop <dir>           SIGTERM, wait for a clean shutdown (SIGKILL
#                                 after KAFKA_STOP_TIMEOUT_S, default 30).
#   kafka.sh tool <Main> args...  runs any Kafka main class, e.g.
#                                 kafka.sh tool org.apache.kafka.tools.TopicCommand --list --bootstrap-server 127.0.0.1:9092
#   kafka.sh classpath            prints the classpath (runs setup.sh if needed)
#
# Environment: KAFKA_HEAP_OPTS (broker, default -Xms256m -Xmx1G),
# KAFKA_TOOL_OPTS (tools, default -Xmx512m), KAFKA_START_TIMEOUT_S (60),
# KAFKA_EXTRA_CONFIG (lines appended to server.properties).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

classpath() { "$here/setup.sh"; }

write_config() {
  local dir="$1" port="$2" controller_port=$(( $2 + 1 ))
  cat > "$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/data
num.partitions=1
offsets.topic.replication.factor=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
  if [[ -n "${KAFKA_EXTRA_CONFIG:-}" ]]; then
    printf '%s\n' "$KAFKA_EXTRA_CONFIG" >> "$dir/server.properties"
  fi
}

# A random cluster id in Kafka's form: 16 bytes, URL-safe base64, no padding. It may start
# with "-", so it is passed as --cluster-id=<id> (as a separate word it would read as an option).
cluster_id() { head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '='; }

format_storage() {
  local dir="$1" cp="$2"
  [[ -f "$dir/data/meta.properties" ]] && return 0
  # shellcheck disable=SC2086 # KAFKA_FORMAT_ARGS is a list of words
  java ${KAFKA_TOOL_OPTS:--Xmx512m} -Dlog4j2.configurationFile="$here/config/log4j2-tools.properties" \
    -cp "$cp" kafka.tools.StorageTool format --cluster-id="${KAFKA_CLUSTER_ID:-$(cluster_id)}" -c "$dir/server.properties" \
    ${KAFKA_FORMAT_ARGS:-} >"$dir/format.log" 2>&1 \
    || { cat "$dir/format.log" >&2; exit 1; }
}

port_answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start() {
  local dir="$1" port="$2" own_config="${3:-}"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if [[ -f "$dir/kafka.pid" ]] && kill -0 "$(cat "$dir/kafka.pid")" 2>/dev/null; then
    echo "kafka.sh: already running in $dir (pid $(cat "$dir/kafka.pid"))" >&2; exit 1
  fi
  if port_answers "$port"; then echo "kafka.sh: port $port is already in use" >&2; exit 1; fi
  local cp; cp="$(classpath)"
  if [[ -z "$own_config" ]]; then write_config "$dir" "$port"; fi
  format_storage "$dir" "$cp"
  # setsid: the broker outlives this script and is not hit by the caller's ^C.
  setsid java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx1G} -XX:+UseG1GC -Djava.awt.headless=true \
    -Dkafka.logs.dir="$dir" -Dlog4j2.configurationFile="$here/config/log4j2-broker.properties" \
    -cp "$cp" kafka.Kafka "$dir/server.properties" >"$dir/stdout.log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" > "$dir/kafka.pid"
  local deadline=$(( SECONDS + ${KAFKA_START_TIMEOUT_S:-60} ))
  until port_answers "$port"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "kafka.sh: broker exited during startup; last log lines:" >&2
      tail -n 40 "$dir/server.log" "$dir/stdout.log" >&2 2>/dev/null || true
      rm -f "$dir/kafka.pid"; exit 1
    fi
    if (( SECONDS >= deadline )); then
      echo "kafka.sh: port $port did not answer in time; stopping pid $pid" >&2
      kill -KILL "$pid" 2>/dev/null || true; rm -f "$dir/kafka.pid"; exit 1
    fi
    sleep 0.2
  done
  echo "$pid"
}

stop() {
  local dir="$1" pid
  [[ -f "$dir/kafka.pid" ]] || { echo "kafka.sh: no kafka.pid in $dir" >&2; return 0; }
  pid="$(cat "$dir/kafka.pid")"
  if kill -TERM "$pid" 2>/dev/null; then
    local deadline=$(( SECONDS + ${KAFKA_STOP_TIMEOUT_S:-30} ))
    while kill -0 "$pid" 2>/dev/null; do
      if (( SECONDS >= deadline )); then
        echo "kafka.sh: pid $pid ignored SIGTERM; killing" >&2
        kill -KILL "$pid" 2>/dev/null || true; break
      fi
      sleep 0.1
    done
  fi
  rm -f "$dir/kafka.pid"
}

tool() {
  local main="$1"; shift
  local cp; cp="$(classpath)"
  exec java ${KAFKA_TOOL_OPTS:--Xmx512m} -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$here/config/log4j2-tools.properties" -cp "$cp" "$main" "$@"
}

case "${1:-}" in
  start) [[ $# -eq 3 ]] || { echo "usage: kafka.sh start <dir> <port>" >&2; exit 2; }; start "$2" "$3" ;;
  start-config) [[ $# -eq 3 && -f "$2/server.properties" ]] || { echo "usage: kafka.sh start-config <dir> <port> (with <dir>/server.properties)" >&2; exit 2; }; start "$2" "$3" own ;;
  stop) [[ $# -eq 2 ]] || { echo "usage: kafka.sh stop <dir>" >&2; exit 2; }; stop "$2" ;;
  tool) [[ $# -ge 2 ]] || { echo "usage: kafka.sh tool <MainClass> args..." >&2; exit 2; }; shift; tool "$@" ;;
  classpath) classpath ;;
  *) sed -n '2,28p' "$0" >&2; exit 2 ;;
esac
