#!/usr/bin/env bash
# Called by .ci/run: resolves kafka-streams 4.4.0 (with kafka-clients and
# RocksDB) and slf4j-nop from Maven into lib/ and compiles src/*.java into
# classes/, as java-client/ci-setup.sh does for its directory. Prints the
# classpath.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../java-client/ci-setup.sh" "$here"
