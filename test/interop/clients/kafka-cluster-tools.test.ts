/**
 * kafka-features.sh (FeatureCommand) and kafka-cluster.sh (ClusterTool) of
 * Apache Kafka 4.4.0 against a Spool node, and `spool features describe` /
 * `spool cluster` against a real Kafka 4.4.0 node. Proves that each tool
 * prints the same lines as its counterpart on either server, through a
 * broker (--bootstrap-server) and a controller (--bootstrap-controller), and
 * that unregistering an unknown broker fails with Kafka's error and message;
 * and that kafka-features.sh upgrade / downgrade / disable (dry run, and a
 * refused level) change a Spool node's finalized features as `spool
 * features` does, with the same output.
 * Kafka writes a NoOpRecord every 500 ms, so on Kafka the feature epoch
 * (its metadata offset) is compared only as a number.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker } from '../../../src/node/embedded.js';
import { kafkaSkipReason, runKafkaTool, startKafka } from '../kafka/kafka.js';
import { spool } from '../../cli/cli-io.js';
import { until } from '../cluster/until.js';

process.env.KAFKA_TOOL_OPTS ??= '-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

const FEATURE_TOOL = 'org.apache.kafka.tools.FeatureCommand';
const CLUSTER_TOOL = 'org.apache.kafka.tools.ClusterTool';

async function kafkaTool(mainClass: string, args: readonly string[]): Promise<string> {
  const result = await runKafkaTool(mainClass, args);
  assert.equal(result.code, 0, `${mainClass} ${args.join(' ')} exited with ${result.code}:\n${result.stderr}`);
  return result.stdout;
}

async function spoolOut(args: readonly string[]): Promise<string> {
  const result = await spool(args);
  assert.equal(result.code, 0, `spool ${args.join(' ')} exited with ${result.code}:\n${result.err}`);
  return result.out;
}

const withoutEpoch = (text: string) => text.replace(/Epoch: \d+$/gm, 'Epoch: N');

test('Kafka\'s kafka-features.sh and kafka-cluster.sh print the same as spool features / spool cluster against a Spool node', { skip: kafkaSkipReason(), timeout: 240_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-cluster-tools-'));
  const node = await startBroker({ config: { 'log.dirs': dir } });
  try {
    const broker = ['--bootstrap-server', node.bootstrapServers];
    const controllerListener = node.broker.listeners.find((listener) => listener.name === 'CONTROLLER')!;
    const controller = ['--bootstrap-controller', `127.0.0.1:${controllerListener.port}`];
    const ours = await spoolOut(['features', 'describe', ...broker]);
    const epoch = node.broker.metadata.image.offset;
    assert.equal(
      ours,
      `Feature: eligible.leader.replicas.version${' '.repeat(8)}  SupportedMinVersion: 0${' '.repeat(14)}  SupportedMaxVersion: 1${' '.repeat(14)}  FinalizedVersionLevel: 0${' '.repeat(14)}  Epoch: ${epoch}
` +
        `Feature: group.version${' '.repeat(27)}  SupportedMinVersion: 0${' '.repeat(14)}  SupportedMaxVersion: 1${' '.repeat(14)}  FinalizedVersionLevel: 0${' '.repeat(14)}  Epoch: ${epoch}\n` +
        `Feature: kraft.version${' '.repeat(27)}  SupportedMinVersion: 0${' '.repeat(14)}  SupportedMaxVersion: 1${' '.repeat(14)}  FinalizedVersionLevel: 0${' '.repeat(14)}  Epoch: ${epoch}\n` +
        `Feature: metadata.version${' '.repeat(24)}  SupportedMinVersion: 3.3-IV3${' '.repeat(8)}  SupportedMaxVersion: 4.0-IV3${' '.repeat(8)}  FinalizedVersionLevel: 4.0-IV3${' '.repeat(8)}  Epoch: ${epoch}\n` +
        `Feature: share.version${' '.repeat(27)}  SupportedMinVersion: 0${' '.repeat(14)}  SupportedMaxVersion: 1${' '.repeat(14)}  FinalizedVersionLevel: 1${' '.repeat(14)}  Epoch: ${epoch}\n` +
        `Feature: transaction.version${' '.repeat(21)}  SupportedMinVersion: 0${' '.repeat(14)}  SupportedMaxVersion: 2${' '.repeat(14)}  FinalizedVersionLevel: 2${' '.repeat(14)}  Epoch: ${epoch}\n`,
    );
    assert.equal(await spoolOut(['features', ...controller, 'describe']), ours);
    assert.equal(await kafkaTool(FEATURE_TOOL, [...broker, 'describe']), ours);
    assert.equal(await kafkaTool(FEATURE_TOOL, [...controller, 'describe']), ours);

    const clusterId = `Cluster ID: ${node.broker.shared.clusterId}\n`;
    assert.equal(await spoolOut(['cluster', 'cluster-id', ...broker]), clusterId);
    assert.equal(await spoolOut(['cluster', 'cluster-id', ...controller]), clusterId);
    assert.equal(await kafkaTool(CLUSTER_TOOL, ['cluster-id', ...broker]), clusterId);
    assert.equal(await kafkaTool(CLUSTER_TOOL, ['cluster-id', ...controller]), clusterId);

    for (const target of [broker, controller]) {
      const theirs = await runKafkaTool(CLUSTER_TOOL, ['unregister', ...target, '--id', '7']);
      assert.equal(theirs.code, 1);
      assert.match(theirs.stdout + theirs.stderr, /BrokerIdNotRegisteredException: Broker ID 7 is not currently registered/);
      const mine = await spool(['cluster', 'unregister', ...target, '--id', '7']);
      assert.deepEqual([mine.code, mine.err], [1, 'BROKER_ID_NOT_REGISTERED: Broker ID 7 is not currently registered\n']);
    }
    const both = await spool(['features', 'describe', ...broker, ...controller]);
    assert.deepEqual([both.code, both.err], [1, 'You cannot specify both --bootstrap-controller and --bootstrap-server.\n']);
  } finally {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('spool features describe and spool cluster cluster-id print what Kafka\'s own tools print against Kafka 4.4', { skip: kafkaSkipReason(), timeout: 240_000 }, async () => {
  const kafka = await startKafka();
  try {
    const broker = ['--bootstrap-server', kafka.bootstrap];
    const controller = ['--bootstrap-controller', `127.0.0.1:${kafka.port + 1}`];
    for (const target of [broker, controller]) {
      const theirs = await kafkaTool(FEATURE_TOOL, [...target, 'describe']);
      const ours = await spoolOut(['features', 'describe', ...target]);
      assert.equal(withoutEpoch(ours), withoutEpoch(theirs));
      assert.match(ours, /^Feature: metadata\.version {24} {2}SupportedMinVersion: 3\.3-IV3 {8} {2}SupportedMaxVersion: 4\.4-IV2 /m);
      assert.equal(await spoolOut(['cluster', 'cluster-id', ...target]), await kafkaTool(CLUSTER_TOOL, ['cluster-id', ...target]));
    }
  } finally {
    await kafka.stop();
  }
});

test('kafka-features.sh upgrade, downgrade and disable change a Spool node\'s features and print what spool features prints', { skip: kafkaSkipReason(), timeout: 240_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-feature-updates-'));
  const node = await startBroker({ config: { 'log.dirs': dir } });
  const finalized = (name: string) => node.broker.metadata.image.features.get(name) ?? 0;
  // The tool returns once the controller committed the change; the broker's image applies it from the same log.
  const untilFinalized = (name: string, level: number) => until(`${name} finalized at ${level}`, async () => (finalized(name) === level ? true : null), { waitMs: 30_000, pollMs: 20 });
  try {
    const broker = ['--bootstrap-server', node.bootstrapServers];
    const dryRun = await kafkaTool(FEATURE_TOOL, [...broker, 'upgrade', '--feature', 'group.version=1', '--dry-run']);
    assert.equal(await spoolOut(['features', 'upgrade', ...broker, '--feature', 'group.version=1', '--dry-run']), dryRun);
    assert.equal(finalized('group.version'), 0, 'a dry run changes nothing');

    const upgraded = await kafkaTool(FEATURE_TOOL, [...broker, 'upgrade', '--feature', 'group.version=1']);
    assert.equal(upgraded, 'group.version was upgraded to 1.\n');
    await untilFinalized('group.version', 1);

    const downgraded = await kafkaTool(FEATURE_TOOL, [...broker, 'downgrade', '--feature', 'group.version=0']);
    await untilFinalized('group.version', 0);
    assert.equal(await spoolOut(['features', 'upgrade', ...broker, '--feature', 'group.version=1']), upgraded);
    assert.equal(await spoolOut(['features', 'downgrade', ...broker, '--feature', 'group.version=0']), downgraded);

    const disabled = await kafkaTool(FEATURE_TOOL, [...broker, 'disable', '--feature', 'share.version']);
    await untilFinalized('share.version', 0);
    assert.equal(await spoolOut(['features', 'upgrade', ...broker, '--feature', 'share.version=1']), 'share.version was upgraded to 1.\n');
    assert.equal(await spoolOut(['features', 'disable', ...broker, '--feature', 'share.version']), disabled);

    const refused = await runKafkaTool(FEATURE_TOOL, [...broker, 'upgrade', '--feature', 'group.version=9']);
    const ours = await spool(['features', 'upgrade', ...broker, '--feature', 'group.version=9']);
    assert.equal(refused.code, 1);
    assert.deepEqual([ours.code, ours.out], [1, refused.stdout]);
    await untilFinalized('group.version', 0);
  } finally {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
