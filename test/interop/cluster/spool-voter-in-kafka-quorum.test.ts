/**
 * A Spool controller joins a dynamic KRaft quorum (KIP-853) that an Apache
 * Kafka 4.4 controller started, and takes it over:
 * - a controller-only Kafka process (node 3000) formatted with
 *   `kafka-storage format --standalone` leads the quorum, with a
 *   broker-only Kafka process (node 1) registered under it;
 * - a controller-only Spool node (3001), formatted with
 *   `spool storage format --no-initial-controllers` and pointed at the
 *   quorum by controller.quorum.bootstrap.servers, follows Kafka's
 *   `__cluster_metadata` as an observer and catches up;
 * - Kafka's own `kafka-metadata-quorum.sh add-controller`, its
 *   --command-config the Spool controller's properties, makes it a voter,
 *   as DescribeQuorum from either controller says;
 * - `remove-controller` then removes Kafka's controller, the leader: once
 *   the new voter set {3001} commits, Kafka's controller resigns and the
 *   Spool controller, now the only voter, is elected and becomes the
 *   active controller (no race: no other voter can win);
 * - under it Kafka's broker stays registered and unfenced, and a topic
 *   created through it with kafka-topics.sh is produced to and consumed
 *   from with Kafka's console clients; Kafka's removed controller keeps
 *   following Spool's log as an observer;
 * - Kafka's `add-controller`, sent to the Spool leader with Kafka's
 *   controller's properties, makes Kafka's controller a voter again: it
 *   follows the Spool leader as a voter, and metadata (a topic) commits
 *   with its acknowledgement;
 * - Kafka's controller logs no error about any Raft response of the Spool
 *   controller, up to and across the Spool controller's shutdown.
 * The second test adds two Spool controllers the same way and stops
 * Kafka's controller, the leader, with SIGTERM: it resigns (EndQuorumEpoch),
 * the two Spool voters are a majority of the three and elect one of them
 * (either may win; both are Spool), Kafka's broker works under it, and
 * Kafka's controller, started again on its log, follows the Spool leader as
 * a caught-up voter.
 * The cluster is formatted at metadata.version 4.0-IV3 (Spool's newest)
 * with transaction.version 0, as the other mixed-cluster tests are.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerConfig } from '../../../src/common/config.js';
import { createLogger } from '../../../src/common/logger.js';
import { realEnv } from '../../../src/io/env.js';
import { readMetaProperties } from '../../../src/metadata/meta-properties.js';
import { SpoolNode } from '../../../src/node/node.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { DescribeQuorum } from '../../../src/protocol/schemas/55-describe-quorum.js';
import { spool } from '../../cli/cli-io.js';
import { freePort, kafkaSkipReason, runKafkaTool, startKafkaNode, TOOL, type RunningKafka } from '../kafka/kafka.js';
import { MIXED_CLUSTER_ID as CLUSTER_ID } from './mixed-nodes.js';
import { send } from './send.js';
import { until as waitUntil } from './until.js';

process.env.KAFKA_TOOL_OPTS ??= '-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

const KAFKA_CONTROLLER_ID = 3000;
const SPOOL_CONTROLLER_ID = 3001;
const KAFKA_BROKER_ID = 1;
/** Features a Spool node supports (see the file comment). */
const SPOOL_COMPATIBLE_FORMAT = ['--release-version', '4.0-IV3', '--feature', 'transaction.version=0'];
/** Well above a few election timeouts and a catch-up of the metadata log. */
const WAIT_MS = 60_000;
const POLL_MS = 200;
/** The Spool controller's latest log lines, printed when the test fails. */
const LOG_LINES_KEPT = 400;
/** The tail of each Kafka process's server.log printed when the test fails. */
const KAFKA_LOG_LINES_SHOWN = 60;

const until = <T>(what: string, probe: () => Promise<T | null>): Promise<T> => waitUntil(what, () => probe().catch(() => null), { waitMs: WAIT_MS, pollMs: POLL_MS });

async function tool(mainClass: string, args: readonly string[], input?: string): Promise<string> {
  const result = await runKafkaTool(mainClass, args, input === undefined ? {} : { input });
  assert.equal(result.code, 0, `${mainClass} ${args.join(' ')} exited with ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

interface QuorumView {
  leaderId: number;
  epoch: number;
  voters: number[];
  observers: { replicaId: number; lastCaughtUpTimestamp: number }[];
}

/** DescribeQuorum sent to one controller: null unless it answers as the leader. */
async function describeQuorum(controllerPort: number): Promise<QuorumView | null> {
  const described = await send(controllerPort, (c) => c.send(DescribeQuorum, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] }));
  const partition = described.topics[0]?.partitions[0];
  if (partition === undefined || partition.errorCode !== ErrorCode.NONE) return null;
  return {
    leaderId: partition.leaderId,
    epoch: partition.leaderEpoch,
    voters: partition.currentVoters.map((v) => v.replicaId).sort((a, b) => a - b),
    observers: partition.observers.map((o) => ({ replicaId: o.replicaId, lastCaughtUpTimestamp: Number(o.lastCaughtUpTimestamp) })),
  };
}

test('a Spool controller added to a Kafka 4.4 quorum with add-controller becomes its leader once Kafka\'s controller is removed, and Kafka\'s broker works under it', { skip: kafkaSkipReason(), timeout: 420_000 }, async () => {
  const kafkaControllerPort = await freePort();
  const spoolControllerPort = await freePort();
  const brokerPort = await freePort();
  const bootstrapServers = `127.0.0.1:${kafkaControllerPort},127.0.0.1:${spoolControllerPort}`;
  const quorumLines = ['controller.listener.names=CONTROLLER', 'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT', `controller.quorum.bootstrap.servers=${bootstrapServers}`];
  let kafkaController: RunningKafka | null = null;
  let broker: RunningKafka | null = null;
  let spool: SpoolController | null = null;
  try {
    kafkaController = await startKafkaNode({
      port: kafkaControllerPort,
      clusterId: CLUSTER_ID,
      formatArgs: ['--standalone', ...SPOOL_COMPATIBLE_FORMAT],
      properties: ['process.roles=controller', `node.id=${KAFKA_CONTROLLER_ID}`, `listeners=CONTROLLER://127.0.0.1:${kafkaControllerPort}`, ...quorumLines],
    });
    const kafkaDirectoryId = (await readMetaProperties(realEnv.fs, kafkaController.dataDir))!.directoryId!;
    // Kafka's broker opens its client listener once its controller has unfenced it.
    broker = await startKafkaNode({
      port: brokerPort,
      clusterId: CLUSTER_ID,
      properties: kafkaBrokerLines(brokerPort, bootstrapServers),
    });
    const first = await until('Kafka\'s controller leads', () => describeQuorum(kafkaControllerPort));
    assert.equal(first.leaderId, KAFKA_CONTROLLER_ID);
    assert.deepEqual(first.voters, [KAFKA_CONTROLLER_ID]);

    // The Spool controller: its properties are what it starts with and what add-controller reads.
    spool = await startSpoolObserver(SPOOL_CONTROLLER_ID, spoolControllerPort, bootstrapServers);
    const { node, properties, directoryId: spoolDirectoryId } = spool;
    await until('the Spool controller caught up as an observer', async () => {
      const view = await describeQuorum(kafkaControllerPort);
      return view?.observers.some((o) => o.replicaId === SPOOL_CONTROLLER_ID && o.lastCaughtUpTimestamp > 0) === true ? true : null;
    });

    const added = await tool(TOOL.metadataQuorum, ['--bootstrap-controller', `127.0.0.1:${kafkaControllerPort}`, '--command-config', properties, 'add-controller']);
    assert.equal(added.trim().split('\n').at(-1), `Added controller ${SPOOL_CONTROLLER_ID} with directory id ${spoolDirectoryId} and endpoints: CONTROLLER://127.0.0.1:${spoolControllerPort}`);
    const twoVoters = await until('two voters', async () => {
      const view = await describeQuorum(kafkaControllerPort);
      return view?.voters.join() === `${KAFKA_CONTROLLER_ID},${SPOOL_CONTROLLER_ID}` ? view : null;
    });
    assert.equal(twoVoters.leaderId, KAFKA_CONTROLLER_ID);
    // Asked through the Spool controller, Kafka's tool finds the active controller and sees the same voters.
    const status = await until('the quorum described through the Spool controller', async () => {
      const out = await tool(TOOL.metadataQuorum, ['--bootstrap-controller', `127.0.0.1:${spoolControllerPort}`, 'describe', '--status']);
      return out.includes(`"id": ${SPOOL_CONTROLLER_ID}`) ? out : null;
    });
    assert.match(status, new RegExp(`LeaderId:\\s+${KAFKA_CONTROLLER_ID}\\n`));
    assert.match(status, new RegExp(`CurrentVoters:\\s+\\[\\{"id": ${KAFKA_CONTROLLER_ID}, .*\\{"id": ${SPOOL_CONTROLLER_ID}, "directoryId": "${spoolDirectoryId}"`));

    const removed = await tool(TOOL.metadataQuorum, ['--bootstrap-controller', `127.0.0.1:${kafkaControllerPort}`, 'remove-controller', '--controller-id', String(KAFKA_CONTROLLER_ID), '--controller-directory-id', kafkaDirectoryId]);
    assert.equal(removed.trim().split('\n').at(-1), `Removed KRaft controller ${KAFKA_CONTROLLER_ID} with directory id ${kafkaDirectoryId}`);
    const spoolLeads = await until('the Spool controller leads', () => describeQuorum(spoolControllerPort));
    assert.equal(spoolLeads.leaderId, SPOOL_CONTROLLER_ID);
    assert.deepEqual(spoolLeads.voters, [SPOOL_CONTROLLER_ID]);
    assert.ok(spoolLeads.epoch > first.epoch);
    const spool3001 = node;
    await until('the Spool controller active', async () => (spool3001.controllerServer?.controller.isActive === true ? true : null));
    // Kafka's broker and Kafka's removed controller both follow the Spool leader's log.
    await until('Kafka\'s broker and controller observe the Spool leader', async () => {
      const view = await describeQuorum(spoolControllerPort);
      const caughtUp = (id: number) => view?.observers.some((o) => o.replicaId === id && o.lastCaughtUpTimestamp > 0) === true;
      return caughtUp(KAFKA_BROKER_ID) && caughtUp(KAFKA_CONTROLLER_ID) ? true : null;
    });
    await until('Kafka\'s broker unfenced under the Spool controller', async () => (spool3001.metadata.image.brokers.get(KAFKA_BROKER_ID)?.fenced === false ? true : null));

    const bootstrap = broker.bootstrap;
    await tool(TOOL.topics, ['--bootstrap-server', bootstrap, '--create', '--topic', 'taken-over', '--partitions', '2', '--replication-factor', '1']);
    assert.ok(node.metadata.image.topicsByName.get('taken-over') !== undefined);
    await until('Kafka\'s broker leads both partitions', async () => {
      const out = await tool(TOOL.topics, ['--bootstrap-server', bootstrap, '--describe', '--topic', 'taken-over']);
      return (out.match(new RegExp(`Leader: ${KAFKA_BROKER_ID}\\s`, 'g')) ?? []).length === 2 ? out : null;
    });
    const lines = Array.from({ length: 20 }, (_, i) => `record-${i}`);
    await tool(TOOL.consoleProducer, ['--bootstrap-server', bootstrap, '--topic', 'taken-over', '--command-property', 'enable.idempotence=true'], lines.join('\n') + '\n');
    const consumed = await tool(TOOL.consoleConsumer, [
      '--bootstrap-server', bootstrap, '--topic', 'taken-over', '--group', 'taken-over-group', '--from-beginning',
      '--max-messages', String(lines.length), '--timeout-ms', '60000',
    ]);
    assert.deepEqual(consumed.trim().split('\n').sort(), [...lines].sort());
    assert.equal(spool3001.metadata.image.brokers.get(KAFKA_BROKER_ID)?.fenced, false);

    // Kafka's controller joins again, now added by the Spool leader (AddRaftVoter from Kafka's tool); with two voters
    // the Spool leader commits only what Kafka's controller has fetched, so a topic created after it proves Kafka follows.
    const readded = await tool(TOOL.metadataQuorum, ['--bootstrap-controller', `127.0.0.1:${spoolControllerPort}`, '--command-config', join(kafkaController.dir, 'server.properties'), 'add-controller']);
    assert.equal(readded.trim().split('\n').at(-1), `Added controller ${KAFKA_CONTROLLER_ID} with directory id ${kafkaDirectoryId} and endpoints: CONTROLLER://127.0.0.1:${kafkaControllerPort}`);
    const bothVoters = await until('Kafka\'s controller a voter again', async () => {
      const view = await describeQuorum(spoolControllerPort);
      return view?.voters.join() === `${KAFKA_CONTROLLER_ID},${SPOOL_CONTROLLER_ID}` ? view : null;
    });
    assert.equal(bothVoters.leaderId, SPOOL_CONTROLLER_ID);
    await tool(TOOL.topics, ['--bootstrap-server', bootstrap, '--create', '--topic', 'two-voters', '--partitions', '1', '--replication-factor', '1']);
    assert.ok(node.metadata.image.topicsByName.get('two-voters') !== undefined);
    const replication = await tool(TOOL.metadataQuorum, ['--bootstrap-controller', `127.0.0.1:${kafkaControllerPort}`, 'describe', '--replication']);
    assert.match(replication, new RegExp(`^${SPOOL_CONTROLLER_ID}\\s.*\\sLeader\\s*$`, 'm'), replication);
    assert.match(replication, new RegExp(`^${KAFKA_CONTROLLER_ID}\\s.*\\sFollower\\s*$`, 'm'), replication);

    // Kafka's controller found nothing to complain about in what the Spool controller answered, up to and across its
    // shutdown (a stopping Spool controller closes the connections of Raft requests it can no longer serve).
    await broker.stop({ keepDir: true });
    await node.stop();
    const kafkaLog = readFileSync(join(kafkaController.dir, 'server.log'), 'utf8');
    assert.doesNotMatch(kafkaLog, /Unexpected error \w+ in \w+ response/);
  } catch (error) {
    console.log(`---- the Spool controller's last log lines\n${spool?.log.join('\n') ?? ''}`);
    for (const kafka of [kafkaController, broker]) {
      const log = kafka === null ? '' : join(kafka.dir, 'server.log');
      if (log !== '' && existsSync(log)) console.log(`---- ${log}, last lines\n${readFileSync(log, 'utf8').split('\n').slice(-KAFKA_LOG_LINES_SHOWN).join('\n')}`);
    }
    throw error;
  } finally {
    await broker?.stop({ keepDir: true });
    await spool?.node.stop();
    await kafkaController?.stop({ keepDir: true });
    for (const dir of [broker?.dir, kafkaController?.dir, spool?.dir]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
});

/** A Kafka broker-only node's lines, finding the quorum by `bootstrapServers`. */
function kafkaBrokerLines(port: number, bootstrapServers: string): string[] {
  return [
    'process.roles=broker',
    `node.id=${KAFKA_BROKER_ID}`,
    `listeners=PLAINTEXT://127.0.0.1:${port}`,
    'inter.broker.listener.name=PLAINTEXT',
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    `controller.quorum.bootstrap.servers=${bootstrapServers}`,
    'offsets.topic.replication.factor=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
  ];
}

interface SpoolController {
  id: number;
  port: number;
  dir: string;
  properties: string;
  directoryId: string;
  node: SpoolNode;
  log: string[];
}

/** Formats (--no-initial-controllers) and starts a controller-only Spool node that finds the quorum by `bootstrapServers`. */
async function startSpoolObserver(id: number, port: number, bootstrapServers: string): Promise<SpoolController> {
  const dir = mkdtempSync(join(tmpdir(), `spool-voter-${id}-`));
  const settings: Record<string, string> = {
    'process.roles': 'controller',
    'node.id': String(id),
    'log.dirs': join(dir, 'data'),
    listeners: `CONTROLLER://127.0.0.1:${port}`,
    'controller.listener.names': 'CONTROLLER',
    'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'controller.quorum.bootstrap.servers': bootstrapServers,
  };
  const properties = join(dir, 'controller.properties');
  writeFileSync(properties, Object.entries(settings).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
  const formatted = await spool(['storage', 'format', '--cluster-id', CLUSTER_ID, '--config', properties, '--no-initial-controllers']);
  assert.equal(formatted.code, 0, formatted.err);
  const directoryId = (await readMetaProperties(realEnv.fs, join(dir, 'data')))!.directoryId!;
  const log: string[] = [];
  const sink = (line: string) => {
    log.push(line);
    if (log.length > LOG_LINES_KEPT) log.shift();
  };
  const node = new SpoolNode(BrokerConfig.fromObject(settings), realEnv, createLogger({ name: `spool[${id}]`, sink }));
  await node.start();
  return { id, port, dir, properties, directoryId, node, log };
}

test('Kafka\'s leader of a quorum with two Spool voters added by add-controller shuts down: a Spool controller is elected, Kafka\'s broker works under it, and Kafka\'s controller rejoins as its follower', { skip: kafkaSkipReason(), timeout: 420_000 }, async () => {
  const kafkaControllerPort = await freePort();
  const spoolPorts = [await freePort(), await freePort()];
  const brokerPort = await freePort();
  const spoolIds = [SPOOL_CONTROLLER_ID, SPOOL_CONTROLLER_ID + 1];
  const bootstrapServers = [kafkaControllerPort, ...spoolPorts].map((p) => `127.0.0.1:${p}`).join(',');
  const kafkaDir = mkdtempSync(join(tmpdir(), 'spool-voter-kafka-'));
  const kafkaControllerOptions = {
    port: kafkaControllerPort,
    clusterId: CLUSTER_ID,
    dir: kafkaDir,
    formatArgs: ['--standalone', ...SPOOL_COMPATIBLE_FORMAT],
    properties: [
      'process.roles=controller',
      `node.id=${KAFKA_CONTROLLER_ID}`,
      `listeners=CONTROLLER://127.0.0.1:${kafkaControllerPort}`,
      'controller.listener.names=CONTROLLER',
      'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      `controller.quorum.bootstrap.servers=${bootstrapServers}`,
    ],
  };
  let kafkaController: RunningKafka | null = null;
  let broker: RunningKafka | null = null;
  const spools: SpoolController[] = [];
  try {
    kafkaController = await startKafkaNode(kafkaControllerOptions);
    broker = await startKafkaNode({ port: brokerPort, clusterId: CLUSTER_ID, properties: kafkaBrokerLines(brokerPort, bootstrapServers) });
    const first = await until('Kafka\'s controller leads', () => describeQuorum(kafkaControllerPort));
    assert.equal(first.leaderId, KAFKA_CONTROLLER_ID);

    for (const [i, id] of spoolIds.entries()) {
      const controller = await startSpoolObserver(id, spoolPorts[i]!, bootstrapServers);
      spools.push(controller);
      await until(`Spool controller ${id} caught up as an observer`, async () => {
        const view = await describeQuorum(kafkaControllerPort);
        return view?.observers.some((o) => o.replicaId === id && o.lastCaughtUpTimestamp > 0) === true ? true : null;
      });
      await tool(TOOL.metadataQuorum, ['--bootstrap-controller', `127.0.0.1:${kafkaControllerPort}`, '--command-config', controller.properties, 'add-controller']);
    }
    const allVoters = [KAFKA_CONTROLLER_ID, ...spoolIds].join();
    await until('three voters', async () => ((await describeQuorum(kafkaControllerPort))?.voters.join() === allVoters ? true : null));

    // Kafka's controller resigns as it stops (EndQuorumEpoch to the Spool voters); the two of them are a majority.
    await kafkaController.stop({ keepDir: true });
    const successor = await until('a Spool leader', async () => {
      for (const controller of spools) {
        const view = await describeQuorum(controller.port);
        if (view !== null) return view;
      }
      return null;
    });
    assert.ok(spoolIds.includes(successor.leaderId));
    assert.equal(successor.voters.join(), allVoters);
    assert.ok(successor.epoch > first.epoch);
    const leader = spools.find((c) => c.id === successor.leaderId)!;
    await until('the Spool leader active', async () => (leader.node.controllerServer?.controller.isActive === true ? true : null));
    await until('Kafka\'s broker unfenced under the Spool leader', async () => (leader.node.metadata.image.brokers.get(KAFKA_BROKER_ID)?.fenced === false ? true : null));

    const bootstrap = broker.bootstrap;
    await tool(TOOL.topics, ['--bootstrap-server', bootstrap, '--create', '--topic', 'after-kafka-left', '--partitions', '1', '--replication-factor', '1']);
    const lines = Array.from({ length: 10 }, (_, i) => `record-${i}`);
    await tool(TOOL.consoleProducer, ['--bootstrap-server', bootstrap, '--topic', 'after-kafka-left', '--command-property', 'enable.idempotence=true'], lines.join('\n') + '\n');
    const consumed = await tool(TOOL.consoleConsumer, ['--bootstrap-server', bootstrap, '--topic', 'after-kafka-left', '--from-beginning', '--max-messages', String(lines.length), '--timeout-ms', '60000']);
    assert.deepEqual(consumed.trim().split('\n').sort(), [...lines].sort());

    // Kafka's controller, started again on its log, follows the Spool leader as a voter and catches up.
    kafkaController = await startKafkaNode(kafkaControllerOptions);
    const replication = await until('Kafka\'s controller a caught-up follower of the Spool leader', async () => {
      const out = await tool(TOOL.metadataQuorum, ['--bootstrap-controller', `127.0.0.1:${leader.port}`, 'describe', '--replication']);
      return new RegExp(`^${KAFKA_CONTROLLER_ID}\\s+\\S+\\s+\\d+\\s+0\\s.*\\sFollower\\s*$`, 'm').test(out) ? out : null;
    });
    assert.match(replication, new RegExp(`^${leader.id}\\s.*\\sLeader\\s*$`, 'm'), replication);
  } catch (error) {
    for (const controller of spools) console.log(`---- Spool controller ${controller.id}'s last log lines\n${controller.log.join('\n')}`);
    for (const kafka of [kafkaController, broker]) {
      const log = kafka === null ? '' : join(kafka.dir, 'server.log');
      if (log !== '' && existsSync(log)) console.log(`---- ${log}, last lines\n${readFileSync(log, 'utf8').split('\n').slice(-KAFKA_LOG_LINES_SHOWN).join('\n')}`);
    }
    throw error;
  } finally {
    await broker?.stop();
    for (const controller of spools) await controller.node.stop();
    await kafkaController?.stop();
    for (const dir of [kafkaDir, ...spools.map((c) => c.dir)]) rmSync(dir, { recursive: true, force: true });
  }
});
