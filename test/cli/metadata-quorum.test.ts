/**
 * `spool metadata-quorum describe --status | --replication` prints what
 * Kafka 4.4's kafka-metadata-quorum.sh prints, and Kafka's own tool works
 * against a Spool node: both run against the same node through its
 * controller listener (--bootstrap-controller) and their outputs are
 * compared line by line (timestamps, which move between the two calls,
 * masked). Kafka's tool is skipped (outside CI) when its jars are not set up.
 * add-controller and remove-controller refuse bad arguments with Kafka's
 * messages (their real runs are in test/node and test/interop/cluster).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { TOOL, kafkaSkipReason, runKafkaTool } from '../interop/kafka/kafka.js';
import { spool } from './cli-io.js';

const skip = kafkaSkipReason();

/** The replication table with the two timestamp columns masked (tabs separate the padded columns). */
function maskTimes(table: string): string {
  return table
    .split('\n')
    .map((line) => line.split('\t').map((cell, i) => (i === 4 || i === 5 ? cell.trim().replace(/^\d+$/, 'T') : cell.trim())).join('|'))
    .join('\n');
}

test('spool metadata-quorum describes the quorum in kafka-metadata-quorum.sh\'s format', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-metadata-quorum-'));
  const running = await startBroker({ config: { 'log.dirs': dir }, logger: silentLogger });
  const listener = running.broker.listeners.find((l) => l.name === 'CONTROLLER')!;
  const controller = `${listener.advertisedHost}:${listener.advertisedPort}`;
  const directoryId = running.broker.shared.raft.describeQuorum().topics![0]!.partitions![0]!.currentVoters![0]!.replicaDirectoryId;
  try {
    const status = await spool(['metadata-quorum', '--bootstrap-controller', controller, 'describe', '--status']);
    assert.equal(status.code, 0, status.err);
    const lines = status.out.split('\n');
    assert.equal(lines[0], `ClusterId:              ${running.broker.shared.clusterId}`);
    assert.equal(lines[1], 'LeaderId:               1');
    assert.match(lines[3]!, /^HighWatermark: {10}\d+$/);
    assert.equal(lines[4], 'MaxFollowerLag:         0');
    assert.equal(lines[6], `CurrentVoters:          [{"id": 1, "directoryId": "${directoryId}"}]`);
    assert.equal(lines[7], 'CurrentObservers:       []');
    const replication = await spool(['metadata-quorum', '--bootstrap-server', running.bootstrapServers, 'describe', '--replication']);
    assert.equal(replication.code, 0, replication.err);
    assert.match(replication.out, /^NodeId\tDirectoryId {11}\tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus\t\n1 {5}\t/);
    assert.match(replication.out, /\tLeader\t\n$/);
    const usage = await spool(['metadata-quorum', '--bootstrap-controller', controller, 'describe']);
    assert.notEqual(usage.code, 0);
  } finally {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Kafka\'s kafka-metadata-quorum.sh against Spool prints what spool metadata-quorum prints', { skip: skip ?? false, timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-metadata-quorum-kafka-'));
  const running = await startBroker({ config: { 'log.dirs': dir }, logger: silentLogger });
  const listener = running.broker.listeners.find((l) => l.name === 'CONTROLLER')!;
  const controller = `${listener.advertisedHost}:${listener.advertisedPort}`;
  try {
    for (const mode of ['--status', '--replication']) {
      const kafka = await runKafkaTool(TOOL.metadataQuorum, ['--bootstrap-controller', controller, 'describe', mode]);
      assert.equal(kafka.code, 0, kafka.stderr);
      const ours = await spool(['metadata-quorum', '--bootstrap-controller', controller, 'describe', mode]);
      assert.equal(ours.code, 0, ours.err);
      if (mode === '--status') assert.equal(ours.out, kafka.stdout);
      else assert.equal(maskTimes(ours.out), maskTimes(kafka.stdout));
    }
  } finally {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('add-controller and remove-controller check their arguments as kafka-metadata-quorum.sh does (--dry-run changes nothing)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-metadata-quorum-args-'));
  try {
    const noConfig = await spool(['metadata-quorum', '--bootstrap-controller', '127.0.0.1:1', 'add-controller']);
    assert.notEqual(noConfig.code, 0);
    assert.match(noConfig.err, /You must supply the configuration file of the controller you are adding when using add-controller\./);
    const properties = join(dir, 'broker.properties');
    writeFileSync(properties, 'node.id=5\nprocess.roles=broker\nlog.dirs=' + dir + '\n');
    const notController = await spool(['metadata-quorum', '--bootstrap-controller', '127.0.0.1:1', '--command-config', properties, 'add-controller']);
    assert.match(notController.err, /process\.roles did not contain 'controller' in configuration file\. Is this a valid controller configuration file\?/);
    writeFileSync(properties, 'node.id=5\nprocess.roles=controller\nlog.dirs=' + dir + '\ncontroller.listener.names=CONTROLLER\nlisteners=CONTROLLER://127.0.0.1:9093\n');
    const unformatted = await spool(['metadata-quorum', '--bootstrap-controller', '127.0.0.1:1', '--command-config', properties, 'add-controller', '--dry-run']);
    assert.match(unformatted.err, new RegExp(`Unable to read meta\\.properties from ${dir}`));
    const negative = await spool(['metadata-quorum', '--bootstrap-controller', '127.0.0.1:1', 'remove-controller', '--controller-id', '-1', '--controller-directory-id', 'AAAAAAAAAAAAAAAAAAAAAQ']);
    assert.match(negative.err, /Invalid negative --controller-id: -1/);
    const dryRun = await spool(['metadata-quorum', '--bootstrap-controller', '127.0.0.1:1', 'remove-controller', '--controller-id', '2', '--controller-directory-id', 'AAAAAAAAAAAAAAAAAAAAAQ', '--dry-run']);
    assert.equal(dryRun.code, 0, dryRun.err);
    assert.equal(dryRun.out, 'DRY RUN of removing KRaft controller 2 with directory id AAAAAAAAAAAAAAAAAAAAAQ\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
