#!/usr/bin/env bash
# Called by .ci/run: builds the franz-go drivers (modules from the Go module
# proxy per go.mod/go.sum): main.go into bin/franz-driver for
# test/interop/clients/franz-go.test.ts, txn/main.go into bin/franz-txn
# for test/interop/clients/transactions.test.ts, and share/main.go into
# bin/franz-share for test/interop/clients/share-consumers.test.ts. Each build is skipped when
# its binary is newer than every source file.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v go >/dev/null || { echo "ci-setup.sh: go not found (this project's machines ship Go >= 1.26)" >&2; exit 1; }
cd "$here"
build() {
  local binary="$here/bin/$1" package="$2" source="$3"
  if [[ -x "$binary" && -z "$(find "$source" "$here/go.mod" "$here/go.sum" -newer "$binary")" ]]; then return 0; fi
  go build -o "$binary" "$package"
}
build franz-driver . "$here/main.go"
build franz-txn ./txn "$here/txn/main.go"
build franz-share ./share "$here/share/main.go"
