#!/usr/bin/env bash
# Builds the record-batch interop program (Maven; Apache Kafka's kafka-clients 4.4.0 on
# Java 17) and writes golden batches from Kafka's own MemoryRecordsBuilder into the
# directory given as the first argument (default: out/ beside this script):
# NAME.bin per case and cases.json with the headers and records Kafka reads back.
# test/protocol/records/java-interop.test.ts decodes them, and also runs
# `java ... spool.records.Main read` (classpath in target/) on batches Spool wrote.
#
# Idempotent: when pom.xml and the sources are unchanged and cases.json exists, it only
# reports. The output is deterministic.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${1:-$here/out}" && cd "${1:-$here/out}" && pwd)"
cd "$here"

for tool in java mvn; do
  command -v "$tool" >/dev/null || { echo "java-records: '$tool' not found (needs a JDK 17+ and Maven)" >&2; exit 1; }
done

inputs=$({ cat pom.xml; find src -type f -name '*.java' | LC_ALL=C sort | while read -r f; do echo "$f"; cat "$f"; done; } | sha256sum | cut -d' ' -f1)
stamp="$out/inputs.sha256"
if [ -s "$out/cases.json" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$inputs" ] && [ -s target/classpath.txt ]; then
  echo "java-records: $out is up to date"
  exit 0
fi

echo "java-records: building"
mvn -q -B -Dstyle.color=never compile
rm -f "$stamp"
java -cp "target/classes:$(cat target/classpath.txt)" spool.records.Main write "$out"
echo "$inputs" > "$stamp"
