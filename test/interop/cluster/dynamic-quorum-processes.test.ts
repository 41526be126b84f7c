/**
 * A dynamic KRaft quorum (KIP-853) of real Spool processes, changed the way
 * a Kafka operator changes one: three combined nodes formatted with
 * `spool storage format --initial-controllers` and started with
 * controller.quorum.bootstrap.servers elect a leader; a fourth,
 * controller-only node formatted with `--no-initial-controllers` follows the
 * log as an observer; Kafka 4.4's own `kafka-metadata-quorum.sh
 * add-controller` (its --command-config the new controller's properties)
 * makes it a voter, and `remove-controller` removes the active controller;
 * a successor is elected and a topic created after each change reaches
 * every running broker. Where Kafka's jars are not set up (outside CI)
 * `spool metadata-quorum` runs the same two commands instead.
 * Real processes are watched, so the test polls with generous bounds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realEnv } from '../../../src/io/env.js';
import { randomUuid, readMetaProperties } from '../../../src/metadata/meta-properties.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { Metadata } from '../../../src/protocol/schemas/03-metadata.js';
import { CreateTopics } from '../../../src/protocol/schemas/19-create-topics.js';
import { DescribeQuorum } from '../../../src/protocol/schemas/55-describe-quorum.js';
import { spool } from '../../cli/cli-io.js';
import { send } from './send.js';
import { freePort, startSpool, type SpoolProcess } from '../clients/spool-process.js';
import { TOOL, kafkaLibReady, runKafkaTool } from '../kafka/kafka.js';
import { until as untilProbe } from './until.js';

const CLUSTER_ID = 'RHluYW1pY1F1b3J1bVRlcw';
/** Well above a few election timeouts and a catch-up of the metadata log. */
const WAIT_MS = 60_000;
const POLL_MS = 100;

interface Node {
  id: number;
  roles: 'broker,controller' | 'controller';
  port: number;
  controllerPort: number;
  dir: string;
  directoryId: string;
  properties: string;
  process: SpoolProcess | null;
}

const until = <T>(what: string, probe: () => Promise<T | null>): Promise<T> => untilProbe(what, () => probe().catch(() => null), { waitMs: WAIT_MS, pollMs: POLL_MS });

interface QuorumView {
  leaderId: number;
  epoch: number;
  voters: number[];
  observers: { replicaId: number; lastCaughtUpTimestamp: number }[];
}

/** The quorum as the leader of the latest epoch describes it. */
async function describedLeader(nodes: readonly Node[]): Promise<QuorumView | null> {
  let latest: QuorumView | null = null;
  for (const node of nodes.filter((n) => n.process !== null)) {
    const described = await send(node.controllerPort, (c) => c.send(DescribeQuorum, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] })).catch(() => null);
    const partition = described?.topics[0]?.partitions[0];
    if (partition?.errorCode !== ErrorCode.NONE || (latest !== null && partition.leaderEpoch <= latest.epoch)) continue;
    latest = {
      leaderId: partition.leaderId,
      epoch: partition.leaderEpoch,
      voters: partition.currentVoters.map((v) => v.replicaId),
      observers: partition.observers.map((o) => ({ replicaId: o.replicaId, lastCaughtUpTimestamp: Number(o.lastCaughtUpTimestamp) })),
    };
  }
  return latest;
}

async function createTopic(nodes: readonly Node[], name: string): Promise<void> {
  const errorCode = await until(`topic ${name} created`, async () => {
    const leader = await describedLeader(nodes);
    const node = nodes.find((n) => n.id === leader?.leaderId && n.process !== null);
    if (node === undefined) return null;
    const created = await send(node.controllerPort, (c) => c.send(CreateTopics, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }));
    const code = created.topics[0]!.errorCode;
    return code === ErrorCode.NOT_CONTROLLER ? null : code;
  });
  assert.equal(errorCode, ErrorCode.NONE);
  for (const node of nodes.filter((n) => n.roles === 'broker,controller' && n.process !== null)) {
    await until(`${name} on broker ${node.id}`, async () => {
      const metadata = await send(node.port, (c) => c.send(Metadata, { topics: null, allowAutoTopicCreation: false }));
      return metadata.topics.some((t) => t.name === name) ? true : null;
    });
  }
}

/** Runs kafka-metadata-quorum.sh (or, without Kafka's jars, spool metadata-quorum) and returns what it printed. */
async function metadataQuorum(args: readonly string[]): Promise<string> {
  if (kafkaLibReady()) {
    const kafka = await runKafkaTool(TOOL.metadataQuorum, args);
    assert.equal(kafka.code, 0, kafka.stderr);
    return kafka.stdout;
  }
  const ours = await spool(['metadata-quorum', ...args]);
  assert.equal(ours.code, 0, ours.err);
  return ours.out;
}

async function plan(id: number, roles: Node['roles']): Promise<Node> {
  const dir = mkdtempSync(join(tmpdir(), `spool-dynamic-${id}-`));
  const port = roles === 'controller' ? 0 : await freePort();
  return { id, roles, port, controllerPort: await freePort(), dir, directoryId: randomUuid(realEnv.random), properties: join(dir, 'server.properties'), process: null };
}

function listenersOf(node: Node): string {
  return [...(node.port === 0 ? [] : [`PLAINTEXT://127.0.0.1:${node.port}`]), `CONTROLLER://127.0.0.1:${node.controllerPort}`].join(',');
}

/** Writes the node's properties (what it starts with, and what add-controller reads) and formats its log directory. */
async function format(node: Node, bootstrapServers: string, initial: readonly Node[] | null): Promise<void> {
  const logDir = join(node.dir, 'data');
  const settings = [
    `node.id=${node.id}`,
    `process.roles=${node.roles}`,
    `log.dirs=${logDir}`,
    `listeners=${listenersOf(node)}`,
    'controller.listener.names=CONTROLLER',
    `controller.quorum.bootstrap.servers=${bootstrapServers}`,
    'controller.quorum.election.timeout.ms=1000',
  ];
  writeFileSync(node.properties, settings.join('\n') + '\n');
  const quorum = initial === null ? ['--no-initial-controllers'] : ['--initial-controllers', initial.map((n) => `${n.id}@127.0.0.1:${n.controllerPort}:${n.directoryId}`).join(',')];
  const formatted = await spool(['storage', 'format', '--cluster-id', CLUSTER_ID, '--config', node.properties, ...quorum]);
  assert.equal(formatted.code, 0, formatted.err);
}

async function start(node: Node, bootstrapServers: string): Promise<void> {
  node.process = await startSpool({
    dir: join(node.dir, 'data'),
    listeners: listenersOf(node),
    overrides: [`node.id=${node.id}`, `process.roles=${node.roles}`, `controller.quorum.bootstrap.servers=${bootstrapServers}`, 'controller.listener.names=CONTROLLER'],
  });
}

test('three combined nodes of a dynamic quorum: a fourth controller is added and the active one removed with kafka-metadata-quorum.sh, and metadata keeps committing', { timeout: 300_000 }, async () => {
  const initial = await Promise.all([1, 2, 3].map((id) => plan(id, 'broker,controller')));
  const added = await plan(4, 'controller');
  const nodes = [...initial, added];
  const bootstrapServers = initial.map((n) => `127.0.0.1:${n.controllerPort}`).join(',');
  const bootstrapController = `127.0.0.1:${initial[0]!.controllerPort}`;
  try {
    for (const node of initial) await format(node, bootstrapServers, initial);
    await format(added, bootstrapServers, null);
    // --no-initial-controllers gives the new controller a fresh directory id: its meta.properties names it.
    added.directoryId = (await readMetaProperties(realEnv.fs, join(added.dir, 'data')))!.directoryId;
    // Each initial node waits for a quorum before it is ready, so they start together.
    await Promise.all(initial.map((node) => start(node, bootstrapServers)));
    const first = await until('a leader', () => describedLeader(nodes));
    assert.deepEqual(first.voters, [1, 2, 3]);
    await createTopic(nodes, 'before-add');

    await start(added, bootstrapServers);
    await until('controller 4 caught up as an observer', async () => {
      const view = await describedLeader(nodes);
      return view?.observers.some((o) => o.replicaId === 4 && o.lastCaughtUpTimestamp > 0) === true ? true : null;
    });
    const addOutput = await metadataQuorum(['--bootstrap-controller', bootstrapController, '--command-config', added.properties, 'add-controller']);
    assert.equal(addOutput.trim().split('\n').at(-1), `Added controller 4 with directory id ${added.directoryId} and endpoints: CONTROLLER://127.0.0.1:${added.controllerPort}`);
    await until('four voters', async () => ((await describedLeader(nodes))?.voters.join() === '1,2,3,4' ? true : null));
    await createTopic(nodes, 'after-add');

    const leader = (await until('a leader', () => describedLeader(nodes))).leaderId;
    const removed = nodes.find((n) => n.id === leader)!;
    const removeOutput = await metadataQuorum(['--bootstrap-controller', bootstrapController, 'remove-controller', '--controller-id', String(leader), '--controller-directory-id', removed.directoryId]);
    assert.equal(removeOutput.trim().split('\n').at(-1), `Removed KRaft controller ${leader} with directory id ${removed.directoryId}`);
    const rest = [1, 2, 3, 4].filter((id) => id !== leader);
    const successor = await until('a successor among the remaining voters', async () => {
      const view = await describedLeader(nodes);
      return view !== null && view.leaderId !== leader && view.voters.join() === rest.join() ? view : null;
    });
    assert.ok(successor.epoch > first.epoch);
    await createTopic(nodes, 'after-remove');
  } catch (error) {
    for (const node of nodes) if (node.process !== null) console.log(`---- node ${node.id}\n${node.process.output()}`);
    throw error;
  } finally {
    for (const node of nodes) await node.process?.kill9();
    for (const node of nodes) rmSync(node.dir, { recursive: true, force: true });
  }
});
