#!/usr/bin/env bash
# Called by .ci/run: resolves the Apache Kafka 4.4.0 jars and compiles the
# Java helpers that the Kafka interop and storage-compatibility tests use.
set -euo pipefail
"$(dirname "${BASH_SOURCE[0]}")/setup.sh" >/dev/null
