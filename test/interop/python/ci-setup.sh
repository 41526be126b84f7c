#!/usr/bin/env bash
# Called by .ci/run: installs Debian's confluent-kafka-python (librdkafka) and
# kafka-python with its codec modules for /usr/bin/python3, used by
# test/interop/clients/confluent-kafka-python.test.ts and kafka-python.test.ts.
set -euo pipefail
if /usr/bin/python3 -c 'import confluent_kafka, kafka, snappy, lz4, zstandard' 2>/dev/null; then exit 0; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq python3-confluent-kafka python3-kafka python3-snappy python3-lz4 python3-zstandard >/dev/null
