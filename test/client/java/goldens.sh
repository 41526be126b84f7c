#!/usr/bin/env bash
# Regenerates test/client/fixtures/assignor-goldens.jsonl from kafka-clients 4.4.0
# (the jars test/interop/kafka/setup.sh resolves).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cp="$("$here/../../interop/kafka/setup.sh")"
out="$(mktemp -d)"
javac -d "$out" -cp "$cp" "$here/AssignorGoldens.java"
java -cp "$out:$cp" -Dlog4j2.level=OFF AssignorGoldens > "$here/../fixtures/assignor-goldens.jsonl"
rm -rf "$out"
wc -l "$here/../fixtures/assignor-goldens.jsonl"
