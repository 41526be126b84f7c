#!/usr/bin/env bash
# CI hook (.ci/run calls every test/interop/*/ci-setup.sh): writes the Java golden file,
# which test/protocol/golden-java.test.ts requires when CI=true.
set -euo pipefail
bash "$(dirname "$0")/run.sh"
