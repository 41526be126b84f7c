/**
 * Mixed replication: a Spool broker (node 1, its own process) and an Apache
 * Kafka 4.4 broker (node 2) replicate the same partitions, under a Spool
 * controller (node 3000). Proves that
 * - a Kafka follower fetches from a Spool leader and a Spool follower from a
 *   Kafka leader, both join the ISR (acks=all with min.insync.replicas=2
 *   succeeds only then), learn the leader's high watermark, and keep log
 *   segment files identical byte for byte to the leader's (a follower appends
 *   the leader's batches as they are);
 * - elections work in both directions: when the leader of either kind stops
 *   (SIGTERM, a controlled shutdown, and kill -9) the other kind becomes
 *   leader with every acknowledged record, takes new writes, the stopped
 *   broker restarts, rejoins as a follower and re-enters the ISR, and a
 *   preferred election (ElectLeaders) moves leadership back;
 * - a leader of either kind killed with records only it has (written
 *   while its follower was stopped and out of the ISR), once the other kind
 *   is elected uncleanly, truncates them when it restarts as its follower
 *   (diverging epoch), ending byte-identical to the new leader.
 *
 * These tests watch real processes, so they poll observed state (the
 * controller's metadata image, Fetch answers, the files), each wait bounded.
 */
import { until as waitUntil } from './until.js';
import { send } from './send.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SpoolNode } from '../../../src/node/node.js';
import { Producer } from '../../../src/client/producer.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { CreateTopics } from '../../../src/protocol/schemas/19-create-topics.js';
import { ElectLeaders } from '../../../src/protocol/schemas/43-elect-leaders.js';
import { Fetch } from '../../../src/protocol/schemas/01-fetch.js';
import { iterateBatches } from '../../../src/protocol/records/batch.js';
import { decodeRecords } from '../../../src/protocol/records/records.js';
import { freePort, kafkaSkipReason, startKafkaNode, type RunningKafka } from '../kafka/kafka.js';
import { startSpool, type SpoolProcess } from '../clients/spool-process.js';
import { MIXED_CLUSTER_ID as CLUSTER_ID, brokerOfControllerProperties, kafkaBrokerProperties, startSpoolController } from './mixed-nodes.js';

process.env.KAFKA_TOOL_OPTS ??= '-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

const CONTROLLER_ID = 3000;
const SPOOL_ID = 1;
const KAFKA_ID = 2;
const WAIT_MS = 60_000;
const POLL_MS = 200;
/** A killed broker stops heartbeating; the controller fences it after this long, then elects the other replica. */
const BROKER_SESSION_TIMEOUT_MS = 4000;
const PREFERRED_ELECTION = 0;

const until = <T>(what: string, probe: () => Promise<T | null>): Promise<T> => waitUntil(what, probe, { waitMs: WAIT_MS, pollMs: POLL_MS });

interface Cluster {
  controller: SpoolNode;
  controllerPort: number;
  spool: SpoolProcess | null;
  spoolPort: number;
  spoolDir: string;
  kafka: RunningKafka | null;
  kafkaPort: number;
  kafkaDir: string;
  root: string;
}

async function startCluster(): Promise<Cluster> {
  const root = mkdtempSync(join(tmpdir(), 'spool-mixed-replication-'));
  const controllerPort = await freePort();
  const controller = await startSpoolController({ nodeId: CONTROLLER_ID, port: controllerPort, logDir: join(root, 'controller'), config: { 'broker.session.timeout.ms': BROKER_SESSION_TIMEOUT_MS } });
  const cluster: Cluster = {
    controller, controllerPort, root,
    spool: null, spoolPort: await freePort(), spoolDir: join(root, 'spool'),
    kafka: null, kafkaPort: await freePort(), kafkaDir: join(root, 'kafka'),
  };
  try {
    await startSpoolBroker(cluster);
    await startKafkaBroker(cluster);
    await until('both brokers unfenced', async () => ([SPOOL_ID, KAFKA_ID].every((id) => controller.metadata.image.brokers.get(id)?.fenced === false) ? true : null));
  } catch (error) {
    await stopCluster(cluster);
    throw error;
  }
  return cluster;
}

async function startSpoolBroker(cluster: Cluster): Promise<void> {
  cluster.spool = await startSpool({
    dir: cluster.spoolDir,
    port: cluster.spoolPort,
    listeners: `PLAINTEXT://127.0.0.1:${cluster.spoolPort}`,
    overrides: [`cluster.id=${CLUSTER_ID}`, ...brokerOfControllerProperties({ nodeId: SPOOL_ID, controllerId: CONTROLLER_ID, controllerPort: cluster.controllerPort })],
  });
}

async function startKafkaBroker(cluster: Cluster): Promise<void> {
  mkdirSync(cluster.kafkaDir, { recursive: true });
  cluster.kafka = await startKafkaNode({
    dir: cluster.kafkaDir,
    port: cluster.kafkaPort,
    clusterId: CLUSTER_ID,
    properties: kafkaBrokerProperties({ nodeId: KAFKA_ID, port: cluster.kafkaPort, controllerId: CONTROLLER_ID, controllerPort: cluster.controllerPort }),
  });
}

async function stopCluster(cluster: Cluster): Promise<void> {
  await cluster.spool?.stop({ keepDir: true });
  await cluster.kafka?.stop({ keepDir: true });
  await cluster.controller.stop();
  rmSync(cluster.root, { recursive: true, force: true });
}

/** kill -9 of the Kafka broker's JVM, resolved once the process is gone. */
async function kill9Kafka(cluster: Cluster): Promise<void> {
  const kafka = cluster.kafka!;
  process.kill(kafka.pid, 'SIGKILL');
  await until(`Kafka's pid ${kafka.pid} gone`, async () => (isAlive(kafka.pid) ? null : true));
  rmSync(join(cluster.kafkaDir, 'kafka.pid'), { force: true });
  cluster.kafka = null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const portOf = (cluster: Cluster, id: number): number => (id === SPOOL_ID ? cluster.spoolPort : cluster.kafkaPort);
const logDirOf = (cluster: Cluster, id: number): string => (id === SPOOL_ID ? cluster.spoolDir : join(cluster.kafkaDir, 'data'));
const nameOf = (id: number): string => (id === SPOOL_ID ? 'Spool' : 'Kafka');

async function createTopic(cluster: Cluster, topic: string, replicas: number[], minInsyncReplicas: number, configs: { name: string; value: string }[] = []): Promise<void> {
  const created = await send(cluster.spoolPort, (c) =>
    c.send(CreateTopics, {
      topics: [{ name: topic, numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: replicas }], configs: [{ name: 'min.insync.replicas', value: String(minInsyncReplicas) }, ...configs] }],
      timeoutMs: 30_000,
      validateOnly: false,
    }),
  );
  assert.equal(created.topics[0]!.errorCode, ErrorCode.NONE, `CreateTopics ${topic}: ${created.topics[0]!.errorMessage}`);
}

/** The partition as the controller's image has it. */
function partitionOf(cluster: Cluster, topic: string): { leader: number; isr: number[]; leaderEpoch: number } | null {
  const partition = cluster.controller.metadata.image.topicsByName.get(topic)?.partitions.get(0);
  return partition === undefined ? null : { leader: partition.leader, isr: [...partition.isr].sort(), leaderEpoch: partition.leaderEpoch };
}

async function untilLeaderWithFullIsr(cluster: Cluster, topic: string, leader: number): Promise<void> {
  await until(`${topic}: ${nameOf(leader)} leads with both brokers in the ISR (controller sees ${JSON.stringify(partitionOf(cluster, topic))})`, async () => {
    const partition = partitionOf(cluster, topic);
    return partition?.leader === leader && partition.isr.length === 2 ? true : null;
  });
}

/** Why the last fetchAll gave null, for failure messages. */
let lastFetchError = '';

interface Fetched {
  highWatermark: number;
  values: string[];
}

/**
 * A consumer Fetch (v12, by topic name) of partition 0 from offset 0 on one
 * broker; v11+ consumers may read from a follower (up to the high watermark
 * the follower learned from its leader), in Kafka and in Spool alike.
 */
async function fetchAll(port: number, topic: string): Promise<Fetched | null> {
  const response = await send(port, (c) =>
    c.send(Fetch, {
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 8 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, rackId: '', forgottenTopicsData: [],
      topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: 8 << 20 }] }],
    }, { versionMax: 12 }),
  ).catch(() => null);
  const partition = response?.responses[0]?.partitions[0];
  if (partition === undefined || partition.errorCode !== ErrorCode.NONE) {
    lastFetchError = partition === undefined ? 'no Fetch answer' : `Fetch error ${partition.errorCode}`;
    return null;
  }
  const records = Buffer.from(partition.records ?? Buffer.alloc(0));
  const values: string[] = [];
  for (const { position, header } of iterateBatches(records)) {
    const decoded = decodeRecords(records.subarray(position, position + header.sizeBytes));
    assert.equal(decoded.error, null);
    for (const record of decoded.records!) values.push(record.value!.toString());
  }
  return { highWatermark: Number(partition.highWatermark), values };
}

/** Produces `values` with acks=all through `port`, resolved once every one is acknowledged. */
async function produceAll(port: number, topic: string, values: readonly string[]): Promise<void> {
  // No auto-creation: a Kafka broker whose metadata does not show the new topic yet would try to create it and log a
  // warning that it exists, which the no-warning check would count.
  const producer = new Producer({ bootstrapServers: `127.0.0.1:${port}`, acks: 'all', lingerMs: 5, allowAutoTopicCreation: false });
  try {
    await Promise.all(values.map((value) => producer.send({ topic, partition: 0, value })));
  } finally {
    await producer.close();
  }
}

/** The partition's .log segment files of one broker, concatenated in offset order. */
function segmentBytes(cluster: Cluster, id: number, topic: string): Buffer {
  const dir = join(logDirOf(cluster, id), `${topic}-0`);
  if (!existsSync(dir)) return Buffer.alloc(0);
  const files = readdirSync(dir).filter((name) => name.endsWith('.log')).sort();
  return Buffer.concat(files.map((name) => readFileSync(join(dir, name))));
}

/**
 * Waits until the follower has the leader's high watermark (reading from it
 * returns every record the leader returns) and its segment files equal the
 * leader's byte for byte.
 */
async function untilFollowerCaughtUp(cluster: Cluster, topic: string, leader: number, follower: number, expected: readonly string[]): Promise<void> {
  let last = 'no answer';
  const caughtUp = until(`${topic}: the ${nameOf(follower)} follower catching up with the ${nameOf(leader)} leader (${expected.length} records)`, async () => {
    const fromLeader = await fetchAll(portOf(cluster, leader), topic);
    const fromFollower = await fetchAll(portOf(cluster, follower), topic);
    last = `leader HW ${fromLeader?.highWatermark}, follower HW ${fromFollower?.highWatermark} (${lastFetchError})`;
    if (fromLeader === null || fromFollower === null || fromLeader.highWatermark !== expected.length) return null;
    if (fromFollower.highWatermark !== fromLeader.highWatermark) return null;
    // Spool's producer appends concurrent sends in call order, so the log holds them as sent.
    assert.deepEqual(fromLeader.values, expected);
    assert.deepEqual(fromFollower.values, fromLeader.values);
    const leaderBytes = segmentBytes(cluster, leader, topic);
    const followerBytes = segmentBytes(cluster, follower, topic);
    last += `, segment bytes ${leaderBytes.length} and ${followerBytes.length}`;
    return leaderBytes.length > 0 && leaderBytes.equals(followerBytes) ? true : null;
  });
  await caughtUp.catch((error: Error) => {
    throw new Error(`${error.message}; last seen: ${last}`);
  });
}

/** The Kafka broker's server.log lines at `levels` (across its restarts: Kafka appends to it). */
function kafkaLogLines(cluster: Cluster, levels: RegExp): string[] {
  return readFileSync(join(cluster.kafkaDir, 'server.log'), 'utf8').split('\n').filter((line) => levels.test(line));
}

const batchOf = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

test('a Kafka 4.4 follower of a Spool leader, and a Spool follower of a Kafka leader, join the ISR and hold identical log segments', { skip: kafkaSkipReason(), timeout: 300_000 }, async () => {
  const cluster = await startCluster();
  try {
    for (const [topic, leader, follower] of [['led-by-spool', SPOOL_ID, KAFKA_ID], ['led-by-kafka', KAFKA_ID, SPOOL_ID]] as const) {
      await createTopic(cluster, topic, [leader, follower], 2);
      await untilLeaderWithFullIsr(cluster, topic, leader);
      // min.insync.replicas=2: each acks=all write is acknowledged only once the follower has it.
      const values = [...batchOf(`${topic}-a`, 50), ...batchOf(`${topic}-b`, 50)];
      await produceAll(portOf(cluster, leader), topic, values.slice(0, 50));
      await produceAll(portOf(cluster, follower), topic, values.slice(50));
      await untilFollowerCaughtUp(cluster, topic, leader, follower, values);
      assert.deepEqual(partitionOf(cluster, topic)?.isr, [SPOOL_ID, KAFKA_ID]);
    }
    // Nothing the Spool leader sent (or answered to Kafka's fetches) made Kafka's broker warn.
    assert.deepEqual(kafkaLogLines(cluster, /\] (?:ERROR|WARN) /), []);
  } finally {
    await stopCluster(cluster);
  }
});

type Stop = 'SIGTERM' | 'kill -9';

async function stopBroker(cluster: Cluster, id: number, how: Stop): Promise<void> {
  if (id === SPOOL_ID) {
    if (how === 'SIGTERM') await cluster.spool!.stop({ keepDir: true });
    else await cluster.spool!.kill9();
    cluster.spool = null;
  } else if (how === 'SIGTERM') {
    await cluster.kafka!.stop({ keepDir: true });
    cluster.kafka = null;
  } else {
    await kill9Kafka(cluster);
  }
}

async function restartBroker(cluster: Cluster, id: number): Promise<void> {
  if (id === SPOOL_ID) await startSpoolBroker(cluster);
  else await startKafkaBroker(cluster);
}

async function electPreferred(cluster: Cluster, topic: string): Promise<void> {
  const elected = await send(cluster.spoolPort, (c) => c.send(ElectLeaders, { electionType: PREFERRED_ELECTION, topicPartitions: [{ topic, partitions: [0] }], timeoutMs: 30_000 }));
  assert.equal(elected.errorCode, ErrorCode.NONE);
  assert.equal(elected.replicaElectionResults[0]?.partitionResult[0]?.errorCode, ErrorCode.NONE, elected.replicaElectionResults[0]?.partitionResult[0]?.errorMessage ?? '');
}

/** Waits until reading from `id` returns exactly the acknowledged records, in the order they were sent. */
async function untilServesAcked(cluster: Cluster, topic: string, id: number, acked: readonly string[]): Promise<void> {
  const expected = [...acked];
  let last = 'no answer';
  const served = until(`${topic}: the new ${nameOf(id)} leader serving all ${acked.length} acknowledged records`, async () => {
    const fetched = await fetchAll(portOf(cluster, id), topic);
    last = fetched === null ? lastFetchError : `HW ${fetched.highWatermark}, ${fetched.values.length} records`;
    return fetched !== null && fetched.highWatermark === acked.length && JSON.stringify(fetched.values) === JSON.stringify(expected) ? true : null;
  });
  await served.catch((error: Error) => {
    throw new Error(`${error.message}; last seen: ${last}`);
  });
}

test('elections work both ways between Spool and Kafka 4.4 replicas: after SIGTERM and kill -9 of either leader, restart and preferred election', { skip: kafkaSkipReason(), timeout: 600_000 }, async () => {
  const cluster = await startCluster();
  const topics = new Map([[SPOOL_ID, 'preferred-spool'], [KAFKA_ID, 'preferred-kafka']]);
  const acked = new Map<string, string[]>();
  try {
    for (const [leader, topic] of topics) {
      // min.insync.replicas=1: the survivor alone takes acks=all writes while the other broker is down.
      await createTopic(cluster, topic, leader === SPOOL_ID ? [SPOOL_ID, KAFKA_ID] : [KAFKA_ID, SPOOL_ID], 1);
      await untilLeaderWithFullIsr(cluster, topic, leader);
      acked.set(topic, batchOf(`${topic}-initial`, 40));
      await produceAll(portOf(cluster, leader), topic, acked.get(topic)!);
    }
    const rounds: [number, Stop][] = [[SPOOL_ID, 'SIGTERM'], [KAFKA_ID, 'SIGTERM'], [SPOOL_ID, 'kill -9'], [KAFKA_ID, 'kill -9']];
    for (const [victim, how] of rounds) {
      const survivor = victim === SPOOL_ID ? KAFKA_ID : SPOOL_ID;
      const topic = topics.get(victim)!;
      const values = acked.get(topic)!;
      const round = `${how} of the ${nameOf(victim)} leader`;
      await untilLeaderWithFullIsr(cluster, topic, victim);
      const epochBefore = partitionOf(cluster, topic)!.leaderEpoch;

      await stopBroker(cluster, victim, how);
      await until(`${round}: the ${nameOf(survivor)} replica elected`, async () => (partitionOf(cluster, topic)?.leader === survivor ? true : null));
      assert.ok(partitionOf(cluster, topic)!.leaderEpoch > epochBefore);
      await untilServesAcked(cluster, topic, survivor, values);
      values.push(...batchOf(`${topic}-${how}-${nameOf(victim)}-down`, 30));
      await produceAll(portOf(cluster, survivor), topic, values.slice(-30));
      await untilServesAcked(cluster, topic, survivor, values);

      // The restarted broker follows the new leader, catches up and re-enters the ISR.
      await restartBroker(cluster, victim);
      await untilLeaderWithFullIsr(cluster, topic, survivor);
      await untilFollowerCaughtUp(cluster, topic, survivor, victim, values);

      // A preferred election gives leadership back; the old follower becomes follower again.
      await electPreferred(cluster, topic);
      await untilLeaderWithFullIsr(cluster, topic, victim);
      await untilServesAcked(cluster, topic, victim, values);
      values.push(...batchOf(`${topic}-${how}-${nameOf(victim)}-back`, 30));
      await produceAll(portOf(cluster, victim), topic, values.slice(-30));
      await untilFollowerCaughtUp(cluster, topic, victim, survivor, values);
    }
    // Kafka warns while its leader is gone (connection refused) or has just changed (FENCED_LEADER_EPOCH to a fetch
    // in flight across an election, as between Kafka brokers); no error about anything Spool sent.
    assert.deepEqual(kafkaLogLines(cluster, /\] ERROR /), []);
  } finally {
    await stopCluster(cluster);
  }
});

const UNCLEAN_ELECTION = 1;

/** An unclean election (ElectLeaders UNCLEAN on the controller's listener), asked until `leader` leads `topic`. */
async function untilUncleanlyElected(cluster: Cluster, topic: string, leader: number): Promise<void> {
  await until(`${topic}: ${nameOf(leader)} elected uncleanly (controller sees ${JSON.stringify(partitionOf(cluster, topic))})`, async () => {
    if (partitionOf(cluster, topic)?.leader === leader) return true;
    if (partitionOf(cluster, topic)?.leader !== -1) return null;
    await send(cluster.controllerPort, (c) => c.send(ElectLeaders, { electionType: UNCLEAN_ELECTION, topicPartitions: [{ topic, partitions: [0] }], timeoutMs: 30_000 })).catch(() => null);
    return null;
  });
}

test('a restarted leader of either kind truncates the unreplicated tail it wrote before kill -9 and follows the other kind', { skip: kafkaSkipReason(), timeout: 600_000 }, async () => {
  const cluster = await startCluster();
  try {
    for (const [victim, survivor] of [[SPOOL_ID, KAFKA_ID], [KAFKA_ID, SPOOL_ID]] as const) {
      const topic = `diverging-${nameOf(victim).toLowerCase()}`;
      await createTopic(cluster, topic, [victim, survivor], 1, [{ name: 'unclean.leader.election.enable', value: 'true' }]);
      await untilLeaderWithFullIsr(cluster, topic, victim);
      const values = batchOf(`${topic}-replicated`, 30);
      await produceAll(portOf(cluster, victim), topic, values);
      await untilFollowerCaughtUp(cluster, topic, victim, survivor, values);

      // The follower stops and leaves the ISR; the leader alone takes more writes, then dies with them.
      await stopBroker(cluster, survivor, 'SIGTERM');
      await until(`${topic}: the ISR shrunk to the ${nameOf(victim)} leader`, async () => (partitionOf(cluster, topic)?.isr.join() === String(victim) ? true : null));
      await produceAll(portOf(cluster, victim), topic, batchOf(`${topic}-unreplicated`, 20));
      await stopBroker(cluster, victim, 'kill -9');

      // Only an unclean election (the topic allows it) makes the out-of-sync replica leader; the lone replica's tail is lost.
      await restartBroker(cluster, survivor);
      await untilUncleanlyElected(cluster, topic, survivor);
      await untilServesAcked(cluster, topic, survivor, values);
      values.push(...batchOf(`${topic}-new-leader`, 10));
      await produceAll(portOf(cluster, survivor), topic, values.slice(-10));

      // The old leader's tail diverges from the new leader's log at its last epoch: it truncates, then copies the new batches.
      await restartBroker(cluster, victim);
      await untilLeaderWithFullIsr(cluster, topic, survivor);
      await untilFollowerCaughtUp(cluster, topic, survivor, victim, values);
    }
  } finally {
    await stopCluster(cluster);
  }
});
