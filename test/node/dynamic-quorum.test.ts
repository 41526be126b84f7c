/**
 * Proves a dynamic KRaft quorum (KIP-853) in an embedded cluster, driven the
 * way an operator drives Kafka's: startCluster({ combined: 3, dynamicQuorum:
 * true }) formats the controllers with --initial-controllers and elects one
 * (kraft.version 1, as `spool features describe` reports);
 * a fourth controller, formatted with --no-initial-controllers, follows the
 * log as an observer until `spool metadata-quorum add-controller` (with the
 * new controller's properties as --command-config) makes it a voter on every
 * node; `remove-controller` of the active controller removes it, a successor
 * is elected among the rest, and topic creations keep committing throughout.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Admin } from '../../src/client/admin.js';
import { startCluster, type RunningCluster } from '../../src/node/cluster.js';
import { spool } from '../cli/cli-io.js';
import { until as untilProbe } from '../interop/cluster/until.js';

/** Generous bound for a condition on real time (elections take ~100-300 ms here). */
const WAIT_MS = 30_000;
const POLL_MS = 10;

/** Waits for a condition on the running nodes, polling (the nodes change it on their own timers). */
async function until(condition: () => boolean, what: string): Promise<void> {
  await untilProbe(what, async () => (condition() ? true : null), { waitMs: WAIT_MS, pollMs: POLL_MS });
}

function voterIds(cluster: RunningCluster, nodeId: number): number[] {
  return cluster.node(nodeId).node.shared.raft.voterSet.ids;
}

function controllerAddress(cluster: RunningCluster, nodeId: number): string {
  const listener = cluster.node(nodeId).node.config.list('listeners').find((l) => l.startsWith('CONTROLLER://'))!;
  return listener.slice('CONTROLLER://'.length);
}

async function createTopic(cluster: RunningCluster, name: string): Promise<void> {
  const admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
  try {
    const [created] = await admin.createTopics([{ name, numPartitions: 1, replicationFactor: 1 }]);
    assert.equal(created!.name, name);
  } finally {
    await admin.close();
  }
  const brokers = cluster.nodes.filter((node) => node.running && node.roles.includes('broker'));
  await until(() => brokers.every((node) => node.node.metadata.image.topicsByName.has(name)), `topic ${name} on every broker`);
}

/** What an operator waits for before add-controller: the leader reports the new controller caught up (describe --replication). */
function caughtUp(cluster: RunningCluster, nodeId: number): boolean {
  const active = cluster.activeController();
  if (active === null) return false;
  const described = active.node.shared.raft.describeQuorum().topics?.[0]?.partitions?.[0];
  return (described?.observers ?? []).some((o) => o.replicaId === nodeId && (o.lastCaughtUpTimestamp ?? -1) > 0);
}


test('a fourth controller is added with add-controller and the active one removed with remove-controller; metadata keeps committing', { timeout: 120_000 }, async () => {
  // Spool's real timers are unref'd: the test holds its event loop open while the nodes' clients retry.
  const hold = setInterval(() => undefined, 1000);
  const cluster = await startCluster({ combined: 3, dynamicQuorum: true });
  const dir = mkdtempSync(join(tmpdir(), 'spool-dynamic-quorum-'));
  try {
    for (const id of [0, 1, 2]) assert.deepEqual(voterIds(cluster, id), [0, 1, 2]);
    const features = await spool(['features', '--bootstrap-controller', controllerAddress(cluster, 0), 'describe']);
    assert.equal(features.code, 0, features.err);
    assert.match(features.out, /Feature: kraft\.version +SupportedMinVersion: 0 +SupportedMaxVersion: 1 +FinalizedVersionLevel: 1 /);
    await createTopic(cluster, 'before-add');

    const added = await cluster.addController();
    assert.equal(voterIds(cluster, added.nodeId).includes(added.nodeId), false);
    await until(() => caughtUp(cluster, added.nodeId), 'the new controller caught up as an observer');
    const config = added.node.config;
    const properties = join(dir, 'controller.properties');
    writeFileSync(properties, [
      `node.id=${added.nodeId}`,
      'process.roles=controller',
      `log.dirs=${config.logDirs[0]}`,
      'controller.listener.names=CONTROLLER',
      `listeners=CONTROLLER://${controllerAddress(cluster, added.nodeId)}`,
    ].join('\n'));
    const bootstrap = controllerAddress(cluster, 1);
    const add = await spool(['metadata-quorum', '--bootstrap-controller', bootstrap, '--command-config', properties, 'add-controller']);
    assert.equal(add.code, 0, add.err);
    const directoryId = cluster.directoryId(added.nodeId);
    assert.equal(add.out, `Added controller ${added.nodeId} with directory id ${directoryId} and endpoints: CONTROLLER://${controllerAddress(cluster, added.nodeId)}\n`);
    await until(() => [0, 1, 2, added.nodeId].every((id) => voterIds(cluster, id).join() === `0,1,2,${added.nodeId}`), 'four voters everywhere');
    const again = await spool(['metadata-quorum', '--bootstrap-controller', bootstrap, '--command-config', properties, 'add-controller']);
    assert.notEqual(again.code, 0);
    assert.match(again.err, /already part of the set of voters/);
    await createTopic(cluster, 'after-add');

    const leader = cluster.activeController()!.nodeId;
    const remove = await spool(['metadata-quorum', '--bootstrap-controller', bootstrap, 'remove-controller', '--controller-id', String(leader), '--controller-directory-id', cluster.directoryId(leader)]);
    assert.equal(remove.code, 0, remove.err);
    assert.equal(remove.out, `Removed KRaft controller ${leader} with directory id ${cluster.directoryId(leader)}\n`);
    const rest = [0, 1, 2, added.nodeId].filter((id) => id !== leader);
    await until(() => {
      const active = cluster.activeController();
      return active !== null && active.nodeId !== leader && rest.every((id) => voterIds(cluster, id).join() === rest.join());
    }, 'a successor among the remaining voters');
    await createTopic(cluster, 'after-remove');
    const status = await spool(['metadata-quorum', '--bootstrap-controller', bootstrap, 'describe', '--status']);
    assert.equal(status.code, 0, status.err);
    assert.match(status.out, new RegExp(`CurrentVoters: +\\[${rest.map((id) => `\\{"id": ${id}, "directoryId": "${cluster.directoryId(id)}", "endpoints": \\["CONTROLLER://127\\.0\\.0\\.1:\\d+"\\]\\}`).join(', ')}\\]`));
  } finally {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
    clearInterval(hold);
  }
});
