/**
 * Apache Kafka 4.4.0's own command-line tools (the classes behind
 * kafka-topics.sh, kafka-console-producer.sh, kafka-console-consumer.sh and
 * kafka-get-offsets.sh, run with `java -cp` through test/interop/kafka/kafka.sh)
 * against a real Spool process: create the topic, one idempotent acks=all
 * console producer per codec with per-line headers and keys, one console
 * consumer per partition (--partition --offset earliest: assignment, no
 * group), offsets by timestamp with GetOffsetShell --time, then list,
 * describe, delete, list. The console producer cannot set timestamps, so the
 * records carry CreateTime from the producer; the time read between the
 * second and third codec runs is one of the timestamp queries.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { partitionForKey } from '../../../src/client/partitioner.js';
import { kafkaLibReady, KAFKA_INTEROP_DIR, runKafkaTool, TOOL } from '../kafka/kafka.js';
import { runClientScenario } from './harness.js';
import { CODECS, missingToolSkip, type ConsumedRecord, type DriverRun, type Header, type Spec } from './scenario.js';

// Short-lived tool JVMs start faster with C1 only and the serial collector.
process.env.KAFKA_TOOL_OPTS ??= '-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

async function tool(mainClass: string, args: readonly string[], input?: string): Promise<string> {
  const result = await runKafkaTool(mainClass, args, input === undefined ? {} : { input });
  assert.equal(result.code, 0, `${mainClass} ${args.join(' ')} exited with ${result.code}:\n${result.stderr}`);
  return result.stdout;
}

/** ConsoleProducer's line format with parse.headers and parse.key: "h1:v1,h2:v2<TAB>key<TAB>value". */
function producerLine(record: Spec['batches'][number]['records'][number]): string {
  return `${record.headers.map(([name, value]) => `${name}:${value}`).join(',')}\t${record.key}\t${record.value}`;
}

async function run(spec: Spec): Promise<DriverRun> {
  const server = ['--bootstrap-server', spec.bootstrap];
  await tool(TOOL.topics, [...server, '--create', '--topic', spec.topic, '--partitions', String(spec.partitions), '--replication-factor', '1']);
  const produceStartMs = Date.now();
  const queries = [...spec.timestampQueries];
  for (const [index, batch] of spec.batches.entries()) {
    if (index === 2) queries.push(Date.now());
    await tool(TOOL.consoleProducer, [
      ...server, '--topic', spec.topic, '--compression-codec', batch.codec,
      '--command-property', 'enable.idempotence=true', '--command-property', 'acks=all',
      '--reader-property', 'parse.key=true', '--reader-property', 'parse.headers=true',
    ], batch.records.map(producerLine).join('\n') + '\n');
  }
  const produceEndMs = Date.now();
  const perPartition = new Array<number>(spec.partitions).fill(0);
  for (const record of spec.batches.flatMap((batch) => batch.records)) perPartition[partitionForKey(Buffer.from(record.key), spec.partitions)]! += 1;
  const consumed = (await Promise.all(perPartition.map((count, partition) => consumePartition(spec, partition, count)))).flat();
  const offsetsForTimes: DriverRun['offsetsForTimes'] = [];
  for (const timestamp of queries) {
    // GetOffsetShell prints "topic:partition:offset" only for partitions with an answer.
    const out = await tool(TOOL.getOffsets, [...server, '--topic', spec.topic, '--time', String(timestamp)]);
    const found = new Map(out.trim().split('\n').filter((line) => line !== '').map((line) => {
      const [, partition, offset] = line.split(':');
      return [Number(partition), Number(offset)] as const;
    }));
    for (let partition = 0; partition < spec.partitions; partition++) offsetsForTimes.push({ timestamp, partition, offset: found.get(partition) ?? null });
  }
  return { client: 'Kafka 4.4.0 console tools', consumed, offsetsForTimes, produceStartMs, produceEndMs };
}

async function consumePartition(spec: Spec, partition: number, count: number): Promise<ConsumedRecord[]> {
  if (count === 0) return [];
  const out = await tool(TOOL.consoleConsumer, [
    '--bootstrap-server', spec.bootstrap, '--topic', spec.topic, '--partition', String(partition), '--offset', 'earliest',
    '--max-messages', String(count), '--timeout-ms', '20000',
    ...['print.timestamp', 'print.partition', 'print.offset', 'print.headers', 'print.key'].flatMap((name) => ['--formatter-property', `${name}=true`]),
  ]);
  return out.split('\n').filter((line) => line.includes('\t')).map(parseConsumerLine);
}

/** DefaultMessageFormatter: "CreateTime:ts<TAB>Partition:p<TAB>Offset:o<TAB>h:v,h:v<TAB>key<TAB>value". */
function parseConsumerLine(line: string): ConsumedRecord {
  const [time, partition, offset, headers, key, value] = line.split('\t');
  const [timestampType, timestamp] = time!.split(':');
  return {
    partition: Number(partition!.replace('Partition:', '')),
    offset: Number(offset!.replace('Offset:', '')),
    key: key!,
    value: value!,
    headers: headers === 'NO_HEADERS' ? [] : headers!.split(',').map((header): Header => {
      const at = header.indexOf(':');
      return [header.slice(0, at), header.slice(at + 1)];
    }),
    timestamp: Number(timestamp),
    timestampType: timestampType!,
  };
}

async function deleteTopic(spec: Spec): Promise<{ topicsBefore: string[]; describedPartitions: number; topicsAfter: string[] }> {
  const server = ['--bootstrap-server', spec.bootstrap];
  const list = async (): Promise<string[]> => (await tool(TOOL.topics, [...server, '--list'])).trim().split('\n').filter((name) => name !== '');
  const topicsBefore = await list();
  const described = await tool(TOOL.topics, [...server, '--describe', '--topic', spec.topic]);
  const match = /PartitionCount: (\d+)/.exec(described);
  assert.ok(match, described);
  await tool(TOOL.topics, [...server, '--delete', '--topic', spec.topic]);
  return { topicsBefore, describedPartitions: Number(match[1]), topicsAfter: await list() };
}

test('Kafka 4.4.0 tools: kafka-topics, console producer (idempotent, every codec), console consumer by partition, get-offsets by time', { timeout: 180_000 }, async (t) => {
  const skip = missingToolSkip(kafkaLibReady(), `Kafka jars missing: run ${KAFKA_INTEROP_DIR}/setup.sh`);
  if (skip !== undefined) return t.skip(skip);
  const client = await runClientScenario({
    client: 'kafka-tools',
    capabilities: { codecs: CODECS, idempotent: true, perRecordHeaders: true, explicitTimestamps: false },
    run: (spec) => run(spec),
    delete: (spec) => deleteTopic(spec),
  });
  assert.equal(client, 'Kafka 4.4.0 console tools');
});
