#!/usr/bin/env bash
# Called by .ci/run: installs kcat (librdkafka) and jq from Debian for
# test/interop/clients/kcat.test.ts.
set -euo pipefail
if command -v kcat >/dev/null && command -v jq >/dev/null; then exit 0; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq kcat jq >/dev/null
