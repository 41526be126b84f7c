#!/usr/bin/env bash
# Builds the golden-bytes generator (Maven; Apache Kafka's kafka-clients 4.4.0 on Java 17)
# and writes out/golden.jsonl: one JSON line per message body serialized by Kafka's own
# generated classes (see src/main/java/spool/golden/Main.java for the line format).
# test/protocol/golden-java.test.ts checks Spool's codec against that file.
#
# Idempotent: when pom.xml and the Java sources are unchanged since the last run and the
# golden file exists, it does nothing. The output is deterministic (fixed seed).
set -euo pipefail
cd "$(dirname "$0")"

out=out/golden.jsonl
stamp=out/inputs.sha256

for tool in java mvn; do
  command -v "$tool" >/dev/null || { echo "java-golden: '$tool' not found (needs a JDK 17+ and Maven)" >&2; exit 1; }
done

inputs=$({ cat pom.xml; find src -type f -name '*.java' | LC_ALL=C sort | while read -r f; do echo "$f"; cat "$f"; done; } | sha256sum | cut -d' ' -f1)
if [ -s "$out" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$inputs" ]; then
  echo "java-golden: $out is up to date ($(wc -l < "$out") entries)"
  exit 0
fi

echo "java-golden: building the generator"
mvn -q -B -Dstyle.color=never compile
mkdir -p out
rm -f "$stamp"
java -cp "target/classes:$(cat target/classpath.txt)" spool.golden.Main "$out"
echo "$inputs" > "$stamp"
