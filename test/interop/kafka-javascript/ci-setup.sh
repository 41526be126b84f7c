#!/usr/bin/env bash
# Called by .ci/run after `npm ci`: builds the native addon of
# @confluentinc/kafka-javascript (a devDependency; its librdkafka is bundled
# as C sources in the npm package) for test/interop/clients/kafka-javascript.test.ts
# and test/interop/groups/kafka-javascript.test.ts.
#
# Why here and not in npm's install step: the package's install script first
# downloads a prebuilt binary from outside the npm registry, then falls back to
# a static build whose configure (--install-deps --source-deps-only) downloads
# the sources of zlib, OpenSSL, zstd and curl; neither can be fetched on these
# machines, so `npm ci` would fail. package.json's allowScripts denies that
# script (npm skips it silently, `npm ci` and `npm install` always work), and
# this script builds the same sources with CKJS_LINKING=dynamic: librdkafka as
# a shared library in the package's build/deps/, against Debian's zlib and zstd
# (the gzip and zstd codecs; snappy and lz4 are built in).
# Skipped when the addon is newer than the package's package.json and loads.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
pkg="$root/node_modules/@confluentinc/kafka-javascript"
addon="$pkg/build/Release/confluent-kafka-javascript.node"
CODECS_CHECK="const k = require('$pkg'); for (const c of ['gzip', 'snappy', 'lz4', 'zstd']) if (!k.features.includes(c)) throw new Error('librdkafka ' + k.librdkafkaVersion + ' built without ' + c);"

[[ -f "$pkg/package.json" ]] || { echo "ci-setup.sh: $pkg missing: run npm ci first" >&2; exit 1; }
if [[ -f "$addon" && "$addon" -nt "$pkg/package.json" ]] && node -e "$CODECS_CHECK" 2>/dev/null; then exit 0; fi

if ! dpkg-query -W -f='${Status}\n' zlib1g-dev libzstd-dev pkg-config 2>/dev/null | grep -c 'install ok installed' | grep -qx 3; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq build-essential python3 pkg-config zlib1g-dev libzstd-dev >/dev/null
fi

rm -rf "$pkg/build"
log="$(mktemp)"
# The package's own node-gyp scripts; sequential (gyp's parallel make races librdkafka's configure step).
if ! (cd "$pkg" && export CKJS_LINKING=dynamic && npm run configure && npm run build) >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "ci-setup.sh: building $pkg failed (full log: $log)" >&2
  exit 1
fi
rm -f "$log"
node -e "$CODECS_CHECK"
