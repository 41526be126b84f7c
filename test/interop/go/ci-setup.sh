#!/usr/bin/env bash
# Called by .ci/run: builds the franz-go driver (main.go, modules from the Go
# module proxy per go.mod/go.sum) into bin/franz-driver for
# test/interop/clients/franz-go.test.ts. Skips the build when the binary is
# newer than every source file.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v go >/dev/null || { echo "ci-setup.sh: go not found (this project's machines ship Go >= 1.26)" >&2; exit 1; }
binary="$here/bin/franz-driver"
if [[ -x "$binary" && -z "$(find "$here/main.go" "$here/go.mod" "$here/go.sum" -newer "$binary")" ]]; then exit 0; fi
cd "$here"
go build -o "$binary" .
