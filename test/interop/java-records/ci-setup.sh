#!/usr/bin/env bash
# CI hook (.ci/run calls every test/interop/*/ci-setup.sh): writes the Java record-batch
# golden files that test/protocol/records/java-interop.test.ts requires when CI=true.
set -euo pipefail
bash "$(dirname "$0")/build.sh"
