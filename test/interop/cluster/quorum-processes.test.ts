/**
 * Three combined Spool processes (`process.roles=broker,controller`,
 * `controller.quorum.voters=1@...,2@...,3@...`) form one KRaft quorum over
 * Kafka's own RPCs: they elect one leader (DescribeQuorum names it on every
 * controller listener's answer); a topic created on the leader reaches every
 * node's metadata; after kill -9 of the leader the two others elect a new
 * one in a later epoch, the topic is still there (no committed metadata
 * record lost), and the new leader commits new metadata.
 *
 * Topics are created on the active controller's node directly: followers'
 * brokers do not register or forward yet (that needs the RPC controller
 * channel, docs/SKIPPED.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BrokerConnection } from '../../../src/client/connection.js';
import { realEnv } from '../../../src/io/env.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { Metadata } from '../../../src/protocol/schemas/03-metadata.js';
import { CreateTopics } from '../../../src/protocol/schemas/19-create-topics.js';
import { DescribeQuorum } from '../../../src/protocol/schemas/55-describe-quorum.js';
import { freePort, startSpool, type SpoolProcess } from '../clients/spool-process.js';

const NODES = [1, 2, 3];
const CLUSTER_ID = 'MkU3OEVBNTcwNTJENDM2Qg';
/** Well above a few election timeouts (controller.quorum.election.timeout.ms=1000, randomised up to 2000). */
const ELECTION_WAIT_MS = 30_000;
/** How often the test asks the nodes again: this test watches real processes, so it polls. */
const POLL_MS = 100;

interface Node {
  id: number;
  port: number;
  controllerPort: number;
  dir: string;
  process: SpoolProcess | null;
}

async function send<T>(port: number, operation: (connection: BrokerConnection) => Promise<T>): Promise<T> {
  const connection = await BrokerConnection.connect({ host: '127.0.0.1', port, env: realEnv, requestTimeoutMs: 5000 });
  try {
    return await operation(connection);
  } finally {
    await connection.close();
  }
}

/** The leader and epoch, from the node that answers DescribeQuorum as leader; null while none does. */
async function describedLeader(nodes: readonly Node[]): Promise<{ leaderId: number; epoch: number } | null> {
  for (const node of nodes) {
    if (node.process === null) continue;
    const described = await send(node.controllerPort, (c) => c.send(DescribeQuorum, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] })).catch(() => null);
    const partition = described?.topics[0]?.partitions[0];
    if (partition?.errorCode === ErrorCode.NONE) return { leaderId: partition.leaderId, epoch: partition.leaderEpoch };
  }
  return null;
}

async function until<T>(what: string, probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + ELECTION_WAIT_MS;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${ELECTION_WAIT_MS} ms`);
    await sleep(POLL_MS);
  }
}

async function topicNames(node: Node): Promise<string[]> {
  const metadata = await send(node.port, (c) => c.send(Metadata, { topics: null, allowAutoTopicCreation: false }));
  return metadata.topics.map((t) => t.name ?? '');
}

/** Creates a topic through `node`, retrying NOT_CONTROLLER as Kafka's clients do (a new leader activates its controller once it caught up). */
async function createTopic(node: Node, name: string): Promise<number> {
  return until(`topic ${name} created`, async () => {
    const created = await send(node.port, (c) => c.send(CreateTopics, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }));
    const errorCode = created.topics[0]!.errorCode;
    return errorCode === ErrorCode.NOT_CONTROLLER ? null : errorCode;
  });
}

test('three combined nodes elect one leader; after kill -9 of the leader a new one is elected and no committed metadata is lost', async () => {
  const nodes: Node[] = [];
  for (const id of NODES) nodes.push({ id, port: await freePort(), controllerPort: await freePort(), dir: mkdtempSync(join(tmpdir(), `spool-quorum-${id}-`)), process: null });
  const voters = nodes.map((n) => `${n.id}@127.0.0.1:${n.controllerPort}`).join(',');
  try {
    // Each node waits for a quorum before it is ready, so all three start together.
    const started = await Promise.all(nodes.map((node) =>
      startSpool({
        dir: node.dir,
        port: node.port,
        controllerPort: node.controllerPort,
        overrides: [`node.id=${node.id}`, 'process.roles=broker,controller', `controller.quorum.voters=${voters}`, `cluster.id=${CLUSTER_ID}`],
      }),
    ));
    started.forEach((process, i) => (nodes[i]!.process = process));
    const first = await until('a leader', () => describedLeader(nodes));
    const leader = nodes.find((n) => n.id === first.leaderId)!;
    assert.equal(await createTopic(leader, 'before-failover'), ErrorCode.NONE);
    for (const node of nodes) await until(`the topic on node ${node.id}`, async () => ((await topicNames(node)).includes('before-failover') ? true : null));

    await leader.process!.kill9();
    leader.process = null;
    const second = await until('a new leader', async () => {
      const found = await describedLeader(nodes);
      return found !== null && found.leaderId !== first.leaderId ? found : null;
    });
    assert.ok(second.epoch > first.epoch, `epoch ${second.epoch} after ${first.epoch}`);
    const successor = nodes.find((n) => n.id === second.leaderId)!;
    assert.ok((await topicNames(successor)).includes('before-failover'), 'the committed topic survived the failover');
    assert.equal(await createTopic(successor, 'after-failover'), ErrorCode.NONE);
    const survivor = nodes.find((n) => n.process !== null && n !== successor)!;
    await until('the new topic on the other survivor', async () => ((await topicNames(survivor)).includes('after-failover') ? true : null));
  } catch (error) {
    for (const node of nodes) if (node.process !== null) console.log(`---- node ${node.id}\n${node.process.output()}`);
    throw error;
  } finally {
    for (const node of nodes) await node.process?.stop({ keepDir: true });
    for (const node of nodes) rmSync(node.dir, { recursive: true, force: true });
  }
});
