#!/usr/bin/env bash
# Called by .ci/run (and by the tests' README): resolves kafka-clients 4.4.0,
# Jackson and slf4j-nop from Maven into lib/ and compiles src/*.java into
# classes/. A stamp of pom.xml and the sources makes a second run a no-op.
# Prints the classpath. Given a directory, builds that one's pom.xml and
# src/*.java the same way (test/interop/streams/ci-setup.sh).
set -euo pipefail
here="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"
stamp="$here/classes/.stamp"
hash="$(cat "$here/pom.xml" "$here"/src/*.java | sha256sum | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$hash" ]]; then
  command -v mvn >/dev/null || { echo "ci-setup.sh: mvn not found (apt-get install maven)" >&2; exit 1; }
  command -v javac >/dev/null || { echo "ci-setup.sh: javac not found (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
  rm -rf "$here/lib" "$here/classes"
  mkdir -p "$here/lib" "$here/classes"
  mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies -DoutputDirectory="$here/lib" -DincludeScope=runtime >&2
  javac -nowarn -d "$here/classes" -cp "$here/lib/*" "$here"/src/*.java >&2
  echo "$hash" > "$stamp"
fi
echo "$here/lib/*:$here/classes"
