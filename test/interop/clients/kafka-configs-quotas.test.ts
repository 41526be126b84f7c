/**
 * Kafka 4.4's kafka-configs.sh (ConfigCommand) setting and describing client
 * quotas: the same commands against a Spool node and a real Kafka 4.4 node
 * print the same lines. Covers `--alter --add-config` on a named client
 * and on the default user, a user+client pair, `--delete-config`,
 * `--describe` of one entity, of the defaults and of every client, and a
 * value the controller refuses (its message as Kafka's). Also: `spool
 * configs` with one clients or users entity prints what kafka-configs.sh
 * prints.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker } from '../../../src/node/embedded.js';
import { kafkaSkipReason, runKafkaTool, startKafka } from '../kafka/kafka.js';
import { spool } from '../../cli/cli-io.js';

process.env.KAFKA_TOOL_OPTS ??= '-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

const CONFIG_TOOL = 'org.apache.kafka.tools.ConfigCommand';

const STEPS: readonly (readonly string[])[] = [
  ['--alter', '--add-config', 'producer_byte_rate=1024', '--entity-type', 'clients', '--entity-name', 'c1'],
  ['--alter', '--add-config', 'producer_byte_rate=4096,consumer_byte_rate=2048', '--entity-type', 'users', '--entity-default'],
  ['--alter', '--add-config', 'request_percentage=25', '--entity-type', 'users', '--entity-name', 'alice', '--entity-type', 'clients', '--entity-name', 'c1'],
  ['--describe', '--entity-type', 'clients', '--entity-name', 'c1'],
  ['--describe', '--entity-type', 'users', '--entity-default'],
  ['--describe', '--entity-type', 'users', '--entity-name', 'alice', '--entity-type', 'clients', '--entity-name', 'c1'],
  ['--describe', '--entity-type', 'clients'],
  ['--alter', '--delete-config', 'consumer_byte_rate', '--entity-type', 'users', '--entity-default'],
  ['--describe', '--entity-type', 'users', '--entity-default'],
  ['--alter', '--add-config', 'producer_byte_rate=10.5', '--entity-type', 'clients', '--entity-name', 'c2'],
];

/** Each step's exit code, stdout, and the stderr line naming the error (stack traces differ between runs). */
async function runSteps(bootstrap: string): Promise<string[]> {
  const outputs: string[] = [];
  for (const step of STEPS) {
    const result = await runKafkaTool(CONFIG_TOOL, ['--bootstrap-server', bootstrap, ...step]);
    const errorLine = result.stderr.split('\n').find((line) => line.includes('Exception: ')) ?? '';
    outputs.push(`${step.join(' ')}\n=> ${result.code}\n${result.stdout}${errorLine}`);
  }
  return outputs;
}

test("Kafka's kafka-configs.sh sets and describes client quotas on Spool as on Kafka 4.4", { skip: kafkaSkipReason(), timeout: 600_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-configs-quotas-'));
  const node = await startBroker({ config: { 'log.dirs': dir } });
  let ours: string[];
  try {
    ours = await runSteps(node.bootstrapServers);
  } finally {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  assert.match(ours[3]!, /producer_byte_rate=1024/);
  const kafka = await startKafka();
  try {
    const theirs = await runSteps(kafka.bootstrap);
    for (let i = 0; i < STEPS.length; i++) assert.equal(ours[i], theirs[i]);
  } finally {
    await kafka.stop();
  }
});

const SINGLE_ENTITY_STEPS: readonly (readonly string[])[] = [
  ['--alter', '--add-config', 'producer_byte_rate=1024', '--entity-type', 'clients', '--entity-name', 'c1'],
  ['--alter', '--add-config', 'producer_byte_rate=4096,consumer_byte_rate=2048,request_percentage=12.5', '--entity-type', 'users', '--entity-default'],
  ['--alter', '--add-config', 'consumer_byte_rate=30000000', '--entity-type', 'clients', '--entity-default'],
  ['--describe', '--entity-type', 'clients', '--entity-name', 'c1'],
  ['--describe', '--entity-type', 'users', '--entity-default'],
  ['--describe', '--entity-type', 'clients'],
  ['--alter', '--delete-config', 'consumer_byte_rate', '--entity-type', 'users', '--entity-default'],
  ['--describe', '--entity-type', 'users'],
];

test("spool configs sets and describes one clients or users entity's quotas as kafka-configs.sh prints them", { skip: kafkaSkipReason(), timeout: 600_000 }, async () => {
  const dirs = [mkdtempSync(join(tmpdir(), 'spool-configs-quotas-a-')), mkdtempSync(join(tmpdir(), 'spool-configs-quotas-b-'))];
  const [theirNode, ourNode] = await Promise.all(dirs.map((dir) => startBroker({ config: { 'log.dirs': dir } })));
  try {
    for (const step of SINGLE_ENTITY_STEPS) {
      const theirs = await runKafkaTool(CONFIG_TOOL, ['--bootstrap-server', theirNode!.bootstrapServers, ...step]);
      const ours = await spool(['configs', '--bootstrap-server', ourNode!.bootstrapServers, ...step]);
      assert.equal(ours.code, theirs.code, `${step.join(' ')}: ${ours.err}`);
      assert.equal(ours.out, theirs.stdout, step.join(' '));
    }
  } finally {
    await Promise.all([theirNode!.stop(), ourNode!.stop()]);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
});
