/**
 * A KRaft quorum of real Spool processes over Kafka's own RPCs, in both of
 * Kafka's shapes: three combined nodes (`process.roles=broker,controller`),
 * and three controller-only nodes with three broker-only nodes (observers of
 * the metadata log). Each scenario:
 *
 * - elects one leader (DescribeQuorum names it on every controller listener);
 * - a topic created on the active controller reaches every broker's metadata;
 * - kill -9 of the active controller: the others elect a new one in a later
 *   epoch, the topic is still there (no committed metadata record lost), a
 *   topic created on the new leader reaches every live broker (they follow
 *   the new leader), and the killed node restarts and catches up;
 * - SIGSTOP of the active controller (frozen, its sockets still open): the
 *   others elect a new one, a new topic reaches the live brokers; after
 *   SIGCONT the old leader follows the new epoch and catches up, and every
 *   broker has every topic.
 *
 * Every broker registers with the active controller over the RPC controller
 * channel. Topics are created on the active controller's controller
 * listener: brokers do not forward admin requests yet (docs/SKIPPED.md).
 * These tests watch real processes, so they poll; how long a failover takes
 * is measured by bench/controller-failover.ts, not asserted here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { Metadata } from '../../../src/protocol/schemas/03-metadata.js';
import { CreateTopics } from '../../../src/protocol/schemas/19-create-topics.js';
import { DescribeQuorum } from '../../../src/protocol/schemas/55-describe-quorum.js';
import { send } from './send.js';
import { freePort, startSpool, type SpoolProcess } from '../clients/spool-process.js';

const CLUSTER_ID = 'MkU3OEVBNTcwNTJENDM2Qg';
/** Well above a few election timeouts (controller.quorum.election.timeout.ms=1000, randomised up to 2000). */
const WAIT_MS = 60_000;
/** How often the test asks the nodes again. */
const POLL_MS = 100;

interface Node {
  id: number;
  roles: 'broker,controller' | 'controller' | 'broker';
  /** The PLAINTEXT port (brokers), 0 on a controller-only node. */
  port: number;
  /** The CONTROLLER port (controllers), 0 on a broker-only node. */
  controllerPort: number;
  dir: string;
  process: SpoolProcess | null;
  /** SIGSTOPped: alive but answering nothing. */
  frozen: boolean;
}

const isController = (node: Node) => node.roles !== 'broker';
const isBroker = (node: Node) => node.roles !== 'controller';

interface QuorumView {
  leaderId: number;
  epoch: number;
  highWatermark: number;
  voters: { replicaId: number; logEndOffset: number }[];
  observers: { replicaId: number; logEndOffset: number }[];
}

/**
 * The quorum as its leader describes it; null while no reachable controller
 * answers as leader. A resumed old leader may still answer for its old epoch
 * until it hears of the new one, so the latest epoch wins.
 */
async function describedLeader(nodes: readonly Node[]): Promise<QuorumView | null> {
  let latest: QuorumView | null = null;
  for (const node of nodes) {
    if (node.process === null || node.frozen || !isController(node)) continue;
    const described = await send(node.controllerPort, (c) => c.send(DescribeQuorum, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] })).catch(() => null);
    const partition = described?.topics[0]?.partitions[0];
    if (partition?.errorCode === ErrorCode.NONE && (latest === null || partition.leaderEpoch > latest.epoch)) {
      latest = { leaderId: partition.leaderId, epoch: partition.leaderEpoch, highWatermark: Number(partition.highWatermark), voters: partition.currentVoters.map(replica), observers: partition.observers.map(replica) };
    }
  }
  return latest;
}

const replica = (r: { replicaId: number; logEndOffset: bigint | number }) => ({ replicaId: r.replicaId, logEndOffset: Number(r.logEndOffset) });

async function until<T>(what: string, probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${WAIT_MS} ms`);
    await sleep(POLL_MS);
  }
}

async function topicNames(node: Node): Promise<string[]> {
  const metadata = await send(node.port, (c) => c.send(Metadata, { topics: null, allowAutoTopicCreation: false }));
  return metadata.topics.map((t) => t.name ?? '');
}

/** Creates a topic on the active controller, retrying NOT_CONTROLLER (a new leader activates its controller once it caught up). */
async function createTopic(nodes: readonly Node[], name: string): Promise<number> {
  return until(`topic ${name} created`, async () => {
    const leader = await describedLeader(nodes);
    const node = nodes.find((n) => n.id === leader?.leaderId);
    if (node === undefined) return null;
    const created = await send(node.controllerPort, (c) => c.send(CreateTopics, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }));
    const errorCode = created.topics[0]!.errorCode;
    return errorCode === ErrorCode.NOT_CONTROLLER ? null : errorCode;
  });
}

/** Every live, running broker lists every one of `topics`. */
async function untilBrokersHave(nodes: readonly Node[], topics: readonly string[]): Promise<void> {
  for (const node of nodes.filter((n) => isBroker(n) && n.process !== null && !n.frozen)) {
    await until(`${topics.join(', ')} on broker ${node.id}`, async () => {
      const names = await topicNames(node);
      return topics.every((t) => names.includes(t)) ? true : null;
    });
  }
}

/** A new leader, other than `previous`, in a later epoch. */
async function untilNewLeader(nodes: readonly Node[], previous: QuorumView): Promise<QuorumView> {
  const next = await until('a new leader', async () => {
    const found = await describedLeader(nodes);
    return found !== null && found.leaderId !== previous.leaderId ? found : null;
  });
  assert.ok(next.epoch > previous.epoch, `epoch ${next.epoch} after ${previous.epoch}`);
  return next;
}

/** Every voter has replicated the leader's log up to its high watermark. */
async function untilVotersCaughtUp(nodes: readonly Node[]): Promise<QuorumView> {
  return until('every voter caught up', async () => {
    const view = await describedLeader(nodes);
    return view !== null && view.voters.every((v) => v.logEndOffset >= view.highWatermark) ? view : null;
  });
}

async function start(node: Node, voters: string): Promise<SpoolProcess> {
  const listeners = [
    ...(isBroker(node) ? [`PLAINTEXT://127.0.0.1:${node.port}`] : []),
    ...(isController(node) ? [`CONTROLLER://127.0.0.1:${node.controllerPort}`] : []),
  ].join(',');
  return startSpool({
    dir: node.dir,
    listeners,
    overrides: [`node.id=${node.id}`, `process.roles=${node.roles}`, `controller.quorum.voters=${voters}`, `cluster.id=${CLUSTER_ID}`, 'controller.listener.names=CONTROLLER'],
  });
}

async function scenario(shape: readonly Pick<Node, 'id' | 'roles'>[]): Promise<void> {
  const nodes: Node[] = [];
  for (const { id, roles } of shape) {
    const port = roles === 'controller' ? 0 : await freePort();
    const controllerPort = roles === 'broker' ? 0 : await freePort();
    nodes.push({ id, roles, port, controllerPort, dir: mkdtempSync(join(tmpdir(), `spool-quorum-${id}-`)), process: null, frozen: false });
  }
  const voters = nodes.filter(isController).map((n) => `${n.id}@127.0.0.1:${n.controllerPort}`).join(',');
  const byId = (id: number) => nodes.find((n) => n.id === id)!;
  try {
    // Each node waits for a quorum before it is ready, so all start together.
    const started = await Promise.all(nodes.map((node) => start(node, voters)));
    started.forEach((process, i) => (nodes[i]!.process = process));
    const first = await until('a leader', () => describedLeader(nodes));
    assert.equal(await createTopic(nodes, 'before-failover'), ErrorCode.NONE);
    await untilBrokersHave(nodes, ['before-failover']);
    const brokerIds = nodes.filter((n) => n.roles === 'broker').map((n) => n.id);
    const observers = (await untilVotersCaughtUp(nodes)).observers.map((o) => o.replicaId);
    assert.deepEqual(observers.filter((id) => brokerIds.includes(id)), brokerIds, 'broker-only nodes fetch the metadata log as observers');

    // kill -9 of the active controller.
    const killed = byId(first.leaderId);
    await killed.process!.kill9();
    killed.process = null;
    const second = await untilNewLeader(nodes, first);
    await untilBrokersHave(nodes, ['before-failover']);
    assert.equal(await createTopic(nodes, 'after-kill'), ErrorCode.NONE);
    await untilBrokersHave(nodes, ['before-failover', 'after-kill']);
    killed.process = await start(killed, voters);
    await untilVotersCaughtUp(nodes);
    await untilBrokersHave(nodes, ['before-failover', 'after-kill']);

    // SIGSTOP of the active controller.
    const frozen = byId(second.leaderId);
    frozen.process!.signal('SIGSTOP');
    frozen.frozen = true;
    const third = await untilNewLeader(nodes, second);
    assert.equal(await createTopic(nodes, 'after-stop'), ErrorCode.NONE);
    await untilBrokersHave(nodes, ['before-failover', 'after-kill', 'after-stop']);
    frozen.process!.signal('SIGCONT');
    frozen.frozen = false;
    const settled = await untilVotersCaughtUp(nodes);
    assert.ok(settled.epoch >= third.epoch);
    await untilBrokersHave(nodes, ['before-failover', 'after-kill', 'after-stop']);
  } catch (error) {
    for (const node of nodes) if (node.process !== null) console.log(`---- node ${node.id}\n${node.process.output()}`);
    throw error;
  } finally {
    // kill -9: the last survivor of a quorum cannot finish a controlled shutdown (no majority to commit it), as with Kafka.
    for (const node of nodes) await node.process?.kill9();
    for (const node of nodes) rmSync(node.dir, { recursive: true, force: true });
  }
}

test('three combined nodes: kill -9 and SIGSTOP of the active controller elect a new one, and no committed metadata record is lost', async () => {
  await scenario([1, 2, 3].map((id) => ({ id, roles: 'broker,controller' as const })));
});

test('three controllers and three brokers: kill -9 and SIGSTOP of the active controller elect a new one, the brokers follow it, and no committed metadata record is lost', async () => {
  await scenario([
    ...[1, 2, 3].map((id) => ({ id, roles: 'controller' as const })),
    ...[4, 5, 6].map((id) => ({ id, roles: 'broker' as const })),
  ]);
});
