/**
 * A mixed cluster: an Apache Kafka 4.4 broker (a broker-only Kafka process)
 * under a Spool controller quorum (a controller-only Spool node). Proves,
 * over Kafka's own inter-node protocol, that Kafka's broker
 * - follows Spool's `__cluster_metadata` as a Raft observer (Fetch) and
 *   reads every record Spool writes (Kafka's broker stops on a record it
 *   cannot read, and this test with it);
 * - registers with Spool's controller, catches up and is unfenced (Kafka
 *   opens its client listener only then; Spool's metadata image shows it
 *   unfenced);
 * - forwards admin requests to Spool's controller (kafka-topics.sh --create
 *   and kafka-configs.sh --alter sent to Kafka's broker), gets producer-id
 *   blocks from it (an idempotent console producer), and leads the
 *   partitions Spool's controller assigns it, serving Kafka's console
 *   clients and a consumer group;
 * - shuts down in a controlled way (Spool's controller lets it go).
 */
import { until as waitUntil } from './until.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, kafkaSkipReason, runKafkaTool, startKafkaNode, TOOL } from '../kafka/kafka.js';
import { MIXED_CLUSTER_ID as CLUSTER_ID, kafkaBrokerProperties, startSpoolController } from './mixed-nodes.js';

process.env.KAFKA_TOOL_OPTS ??= '-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

const SPOOL_CONTROLLER_ID = 3000;
const KAFKA_BROKER_ID = 1;
const WAIT_MS = 60_000;
const POLL_MS = 200;

async function tool(mainClass: string, args: readonly string[], input?: string): Promise<string> {
  const result = await runKafkaTool(mainClass, args, input === undefined ? {} : { input });
  assert.equal(result.code, 0, `${mainClass} ${args.join(' ')} exited with ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

const until = <T>(what: string, probe: () => Promise<T | null>): Promise<T> => waitUntil(what, probe, { waitMs: WAIT_MS, pollMs: POLL_MS });

test('a Kafka 4.4 broker registers with a Spool controller quorum, is unfenced, leads partitions and serves Kafka\'s clients', { skip: kafkaSkipReason(), timeout: 300_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-mixed-controller-'));
  const controllerPort = await freePort();
  const controller = await startSpoolController({ nodeId: SPOOL_CONTROLLER_ID, port: controllerPort, logDir: dir });
  const brokerPort = await freePort();
  let kafka: Awaited<ReturnType<typeof startKafkaNode>> | null = null;
  try {
    kafka = await startKafkaNode({
      port: brokerPort,
      clusterId: CLUSTER_ID,
      properties: kafkaBrokerProperties({ nodeId: KAFKA_BROKER_ID, port: brokerPort, controllerId: SPOOL_CONTROLLER_ID, controllerPort }),
    });
    // Kafka opens its client listener once its controller has unfenced it.
    assert.equal(controller.metadata.image.brokers.get(KAFKA_BROKER_ID)?.fenced, false);
    const bootstrap = kafka.bootstrap;

    await tool(TOOL.topics, ['--bootstrap-server', bootstrap, '--create', '--topic', 'mixed', '--partitions', '3', '--replication-factor', '1']);
    await tool(TOOL.configs, ['--bootstrap-server', bootstrap, '--alter', '--entity-type', 'topics', '--entity-name', 'mixed', '--add-config', 'retention.ms=86400000']);
    const topic = controller.metadata.image.topicsByName.get('mixed');
    assert.ok(topic !== undefined);
    assert.equal(topic.configs.get('retention.ms'), '86400000');
    const described = await until('Kafka\'s broker leads every partition', async () => {
      const out = await tool(TOOL.topics, ['--bootstrap-server', bootstrap, '--describe', '--topic', 'mixed']);
      return (out.match(new RegExp(`Leader: ${KAFKA_BROKER_ID}\\s`, 'g')) ?? []).length === 3 ? out : null;
    });
    assert.match(described, /Configs: retention\.ms=86400000/);

    const lines = Array.from({ length: 30 }, (_, i) => `record-${i}`);
    await tool(TOOL.consoleProducer, ['--bootstrap-server', bootstrap, '--topic', 'mixed', '--command-property', 'enable.idempotence=true'], lines.join('\n') + '\n');
    const consumed = await tool(TOOL.consoleConsumer, [
      '--bootstrap-server', bootstrap, '--topic', 'mixed', '--group', 'mixed-group', '--from-beginning',
      '--max-messages', String(lines.length), '--timeout-ms', '60000',
    ]);
    assert.deepEqual(consumed.trim().split('\n').sort(), [...lines].sort());

    // A controlled shutdown that Spool's controller grants; Kafka's broker logged no error or warning about anything Spool sent.
    await kafka.stop({ keepDir: true });
    const log = readFileSync(join(kafka.dir, 'server.log'), 'utf8');
    assert.match(log, /Transitioning from PENDING_CONTROLLED_SHUTDOWN to SHUTTING_DOWN/);
    assert.doesNotMatch(log, /\] (?:ERROR|WARN) /);
  } finally {
    await kafka?.stop();
    if (kafka !== null) rmSync(kafka.dir, { recursive: true, force: true });
    await controller.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
