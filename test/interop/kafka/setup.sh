#!/usr/bin/env bash
# Resolves Apache Kafka 4.4.0 (broker, CLI tools, storage, log4j2 backend) with
# all dependencies from Maven into test/interop/kafka/lib/ and compiles the
# Java helpers in java/ into lib/helpers/. Idempotent: stamp files record a
# hash of pom.xml (jars) and of the helper sources (classes), and a run with
# nothing changed does no Maven or javac work. Prints the classpath on stdout;
# progress and errors go to stderr.
#
# Usage: test/interop/kafka/setup.sh [--force]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
lib="$here/lib"
helpers="$lib/helpers"
force="${1:-}"

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }
fresh() { [[ "$force" != "--force" && -f "$1" && "$(cat "$1")" == "$2" ]]; }

jars_hash="$(hash_of "$here/pom.xml")"
if ! fresh "$lib/.jars.stamp" "$jars_hash"; then
  command -v mvn >/dev/null || { echo "setup.sh: mvn not found (apt-get install maven)" >&2; exit 1; }
  rm -rf "$lib"
  mkdir -p "$lib"
  echo "setup.sh: resolving Kafka jars with Maven into $lib" >&2
  if ! mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies \
      -DoutputDirectory="$lib" -DincludeScope=runtime >"$lib/.mvn.log" 2>&1; then
    cat "$lib/.mvn.log" >&2; exit 1
  fi
  echo "$jars_hash" > "$lib/.jars.stamp"
fi

helpers_hash="$(hash_of "$lib/.jars.stamp" "$here"/java/*.java)"
if ! fresh "$helpers/.stamp" "$helpers_hash"; then
  command -v javac >/dev/null || { echo "setup.sh: javac not found (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
  rm -rf "$helpers"
  mkdir -p "$helpers"
  echo "setup.sh: compiling Java helpers into $helpers" >&2
  javac -nowarn -d "$helpers" -cp "$lib/*" "$here"/java/*.java >&2
  echo "$helpers_hash" > "$helpers/.stamp"
fi

echo "$lib/*:$helpers"
