#!/usr/bin/env bash
# kcat (librdkafka) driver for the client interop scenario
# (test/interop/clients/scenario.ts). Usage: driver.sh <spec.json>
#
# phase "run": kcat has no admin commands, so the topic is created by
# librdkafka's producer metadata request (auto.create.topics.enable with
# num.partitions=3 on the node under test). One `kcat -P` run per codec with
# idempotence on, murmur2_random (Java's partitioner for keyed records),
# "key<TAB>value" lines and the run's headers (-H applies to every record of a
# run). Then `kcat -C -J` per partition from the beginning (assignment, no
# group), and `kcat -Q` for offsets by timestamp: the spec's queries plus the
# time read between the second and third codec runs (kcat cannot set a
# record's timestamp, librdkafka stamps CreateTime). Prints one JSON object.
# phase "delete": kcat cannot delete topics; prints the topic list only.
set -euo pipefail
spec="$1"
bootstrap="$(jq -r .bootstrap "$spec")"
topic="$(jq -r .topic "$spec")"
partitions="$(jq -r .partitions "$spec")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

now_ms() { date +%s%3N; }

list_topics() { kcat -b "$bootstrap" -L -J | jq -c '[.topics[].topic]'; }

if [[ "$(jq -r .phase "$spec")" == "delete" ]]; then
  echo "{\"topicsBefore\":$(list_topics),\"describedPartitions\":$(kcat -b "$bootstrap" -L -J -t "$topic" | jq '.topics[0].partitions | length'),\"topicsAfter\":null}"
  exit 0
fi

produce_codec() {
  local index="$1" codec
  codec="$(jq -r ".batches[$index].codec" "$spec")"
  local headers=()
  while IFS=$'\t' read -r name value; do headers+=(-H "$name=$value"); done \
    < <(jq -r ".batches[$index].records[0].headers[] | @tsv" "$spec")
  jq -r ".batches[$index].records[] | [.key, .value] | @tsv" "$spec" > "$work/in-$index"
  kcat -b "$bootstrap" -P -t "$topic" -K $'\t' -z "$codec" "${headers[@]}" \
    -X enable.idempotence=true -X acks=all -X partitioner=murmur2_random -X linger.ms=5 \
    < "$work/in-$index" >&2
}

start_ms="$(now_ms)"
queries="$(jq -c '.timestampQueries' "$spec")"
batches="$(jq '.batches | length' "$spec")"
for (( i = 0; i < batches; i++ )); do
  if (( i == 2 )); then queries="$(jq -c ". + [$(now_ms)]" <<<"$queries")"; fi
  produce_codec "$i"
done
end_ms="$(now_ms)"

: > "$work/consumed"
for (( p = 0; p < partitions; p++ )); do
  kcat -b "$bootstrap" -C -t "$topic" -p "$p" -o beginning -e -J -q >> "$work/consumed"
done

: > "$work/offsets"
for ts in $(jq -r '.[]' <<<"$queries"); do
  args=()
  for (( p = 0; p < partitions; p++ )); do args+=(-t "$topic:$p:$ts"); done
  kcat -b "$bootstrap" -Q -J "${args[@]}" | jq -c --argjson ts "$ts" --arg t "$topic" \
    '.[$t] | to_entries[] | select(.key != "topic") | {timestamp: $ts, partition: .value.partition, offset: .value.offset}' >> "$work/offsets"
done

consumed="$(jq -s -c 'map({partition, offset, key, value: .payload, timestamp: .ts,
  timestampType: (if .tstype == "create" then "CreateTime" elif .tstype == "logappend" then "LogAppendTime" else .tstype end),
  headers: ((.headers // []) as $h | [range(0; $h | length; 2) as $i | [$h[$i], $h[$i + 1]]])})' "$work/consumed")"
offsets="$(jq -s -c . "$work/offsets")"
version="$(kcat -V 2>&1 | sed -n 's/^Version \([^ ]*\) .*librdkafka \([^ ]*\) .*/kcat \1, librdkafka \2/p')"
echo "{\"client\":\"$version\",\"consumed\":$consumed,\"offsetsForTimes\":$offsets,\"produceStartMs\":$start_ms,\"produceEndMs\":$end_ms}"
