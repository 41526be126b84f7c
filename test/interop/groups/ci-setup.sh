#!/usr/bin/env bash
# Called by .ci/run: installs and builds what the group interop tests
# (test/interop/groups/*.test.ts) run, then checks each is there:
#   - Debian's confluent-kafka-python and kafka-python (../python/ci-setup.sh)
#   - kafka-clients 4.4.0 jars (../java-client/ci-setup.sh), GroupConsumer.java compiled into java/classes/
#   - the Kafka 4.4.0 tools for kafka-consumer-groups.sh (../kafka/ci-setup.sh)
#   - franz-go's group driver (go/, modules from the Go module proxy) into go/bin/franz-group
#   - confluent-kafka from PyPI (pinned below: a librdkafka with KIP-848) in venv/
# Each step is skipped when its output is newer than its inputs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
interop="$(dirname "$here")"
CONFLUENT_KAFKA_PYPI=2.16.1

bash "$interop/python/ci-setup.sh"
bash "$interop/kafka/ci-setup.sh"
java_lib="$interop/java-client/lib"
bash "$interop/java-client/ci-setup.sh" >/dev/null

classes="$here/java/classes"
if [[ ! -f "$classes/GroupConsumer.class" || "$here/java/GroupConsumer.java" -nt "$classes/GroupConsumer.class" ]]; then
  command -v javac >/dev/null || { echo "ci-setup.sh: javac not found (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
  mkdir -p "$classes"
  javac -nowarn -d "$classes" -cp "$java_lib/*" "$here/java/GroupConsumer.java"
fi

franz="$here/go/bin/franz-group"
if [[ ! -x "$franz" || -n "$(find "$here/go/main.go" "$here/go/go.mod" "$here/go/go.sum" -newer "$franz")" ]]; then
  command -v go >/dev/null || { echo "ci-setup.sh: go not found" >&2; exit 1; }
  (cd "$here/go" && go build -o "$franz" .)
fi

venv="$here/venv"
if ! "$venv/bin/python3" -c "import importlib.metadata as m, sys; sys.exit(m.version('confluent-kafka') != '$CONFLUENT_KAFKA_PYPI')" 2>/dev/null; then
  rm -rf "$venv"
  if ! /usr/bin/python3 -m venv "$venv" 2>/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq python3-venv >/dev/null
    /usr/bin/python3 -m venv "$venv"
  fi
  "$venv/bin/pip" install --quiet --disable-pip-version-check "confluent-kafka==$CONFLUENT_KAFKA_PYPI"
fi

# With CI=true the tests fail on anything missing; say so here first.
"$venv/bin/python3" -c 'import confluent_kafka'
/usr/bin/python3 -c 'import confluent_kafka, kafka'
test -f "$classes/GroupConsumer.class"
test -x "$franz"
